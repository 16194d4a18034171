/*
 * cmd_merlin.c — `ephemera merlin TRACE [--check] [-o OUT]`: offline Merlin
 * (TOPLAS 2006, §6.4).  Recomputes every object's last-reachable time from
 * a trace's ALLOC, STORE and ROOT events (src/trace/offline_merlin.c),
 * prints a summary, and optionally compares the result with the trace's
 * own (online) deaths or writes it as a profile.  docs/traces.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "render/render.h"
#include "render/render_written.h"
#include "ephemera/format.h"
#include "trace/trace.h"

#define MAX_SHOWN EPH_RENDER_MAX_DIFFS

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera merlin TRACE [--check] [-o OUT] [--compress]\n"
          "  Recomputes every object's last-reachable time from the trace's ALLOC, STORE\n"
          "  and ROOT events alone (offline Merlin); prints a summary.\n"
          "  --check     compare object by object with the trace's own DEATH events and\n"
          "              records; exit 1 on any difference (the first %d are shown)\n"
          "  -o OUT      write a profile with the recomputed records (EXACT or CENSORED)\n"
          "  --compress  deflate OUT's chunks\n"
          "  TRACE comes from `ephemera run WORKLOAD --trace -o TRACE`.\n" CLI_EXIT_HELP
          "  (--check: 1 when offline and online Merlin differ)\n",
          MAX_SHOWN);
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static int check(const char *path, const eph_file *p, const eph_trace_merlin *m) {
  eph_trace_diff diffs[MAX_SHOWN];
  size_t compared = 0, n = eph_trace_merlin_check(p, m, diffs, MAX_SHOWN, &compared);
  if (n == SIZE_MAX) {
    cli_error("%s: out of memory", path);
    return CLI_FAILED;
  }
  eph_render_merlin_diffs(stdout, p, diffs, n, MAX_SHOWN, compared);
  return n == 0 ? CLI_OK : CLI_FAILED;
}

int cmd_merlin(int argc, char **argv) {
  enum { OPT_CHECK = 256, OPT_COMPRESS };
  static const struct option longopts[] = {{"check", no_argument, NULL, OPT_CHECK},
                                           {"compress", no_argument, NULL, OPT_COMPRESS},
                                           {"out", required_argument, NULL, 'o'},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  const char *out = NULL;
  bool do_check = false, compress = false;
  for (int c; (c = cli_getopt(argc, argv, ":o:h", longopts)) != -1;) {
    switch (c) {
      case OPT_CHECK: do_check = true; break;
      case OPT_COMPRESS: compress = true; break;
      case 'o': out = optarg; break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("needs a TRACE");
  if (optind + 1 < argc) return cli_usage_error("one trace at a time ('%s' and '%s')", argv[optind], argv[optind + 1]);
  const char *in = argv[optind];

  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  eph_file *p = NULL;
  eph_error err = {0};
  if (eph_file_load(in, &p, &err) != EPH_OK) {
    cli_error("%s", err.message);
    return cli_load_failed(err.status);
  }
  double load = seconds_since(&t0);
  const char *why = eph_trace_unusable(p);
  if (why) {
    cli_error("%s: %s%s%s%s", in, why, p->warning[0] ? " (" : "", p->warning, p->warning[0] ? ")" : "");
    eph_file_free(p);
    return CLI_BAD_INPUT;
  }
  eph_trace_merlin m;
  if (eph_trace_merlin_run(p, &m, &err) != EPH_OK) {
    cli_error("%s: %s", in, err.message);
    eph_trace_merlin_free(&m);
    eph_file_free(p);
    return cli_load_failed(err.status);
  }
  const eph_trace_merlin_stats *s = &m.stats;
  eph_render_merlin_summary(stdout, in, &m, load);
  if (s->unknown_ids || s->bad_slots || s->stale_stores) {
    char first[64] = "";
    if (s->stale_stores) snprintf(first, sizeof first, " (first: event %" PRIu64 ")", s->first_stale_event);
    cli_error("%s: warning: the trace is not a faithful replay: %" PRIu64 " references to ids with no ALLOC, %" PRIu64
              " stores to missing slots, %" PRIu64 " stores whose old value differs from the replayed slot%s",
              in, s->unknown_ids, s->bad_slots, s->stale_stores, first);
  }

  int status = 0;
  if (do_check) status = check(in, p, &m);
  if (out) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (eph_trace_merlin_write(p, &m, out, compress, &err) != EPH_OK) {
      cli_error("%s: %s", out, err.message);
      status = 1;
    } else {
      eph_render_merlin_written(stdout, out, &m, seconds_since(&t0));
    }
  }
  eph_trace_merlin_free(&m);
  eph_file_free(p);
  int written = cli_stdout_done("the summary");
  return written != CLI_OK ? written : status;
}
