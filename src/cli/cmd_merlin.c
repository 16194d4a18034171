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
#include "ephemera/format.h"
#include "trace.h"

#define MAX_SHOWN 10

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

/* "12345 (Class, 40 bytes)" for the shown differences: one pass over the ALLOC events. */
static void describe_objects(const eph_profile *p, const eph_trace_diff *d, size_t n, char (*out)[96]) {
  for (size_t k = 0; k < n; k++) snprintf(out[k], sizeof out[k], "%" PRIu64, d[k].id);
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ALLOC) continue;
    for (size_t k = 0; k < n; k++) {
      if (d[k].id != e->obj) continue;
      const char *cls = e->a < p->nclasses && p->class_names[e->a] ? p->class_names[e->a] : "?";
      snprintf(out[k], sizeof out[k], "%" PRIu64 " (%s, %" PRIu64 " bytes)", e->obj, cls, e->b);
    }
  }
}

static void print_diff(const eph_trace_diff *d, const char *what) {
  switch (d->kind) {
    case EPH_TRACE_DIFF_TIME:
      printf("  %s: offline dead at %" PRIu64 ", online dead at %" PRIu64 "\n", what, d->offline, d->online);
      break;
    case EPH_TRACE_DIFF_OFFLINE_DEAD:
      printf("  %s: offline dead at %" PRIu64 ", online alive at exit\n", what, d->offline);
      break;
    case EPH_TRACE_DIFF_OFFLINE_ALIVE:
      printf("  %s: offline alive at exit, online dead at %" PRIu64 "\n", what, d->online);
      break;
    case EPH_TRACE_DIFF_NO_ONLINE:
      printf("  %s: offline dead at %" PRIu64 ", the trace has no death or record for it\n", what, d->offline);
      break;
    case EPH_TRACE_DIFF_NO_ALLOC:
      printf("  %s: the trace has a death or record for it (at %" PRIu64 ") but no ALLOC event\n", what,
             d->online);
      break;
    case EPH_TRACE_DIFF_SELF:
      printf("  %s: the trace disagrees with itself: record %" PRIu64 ", DEATH event %" PRIu64 " (offline %" PRIu64
             ")\n",
             what, d->online, d->other, d->offline);
      break;
  }
}

static int check(const char *path, const eph_profile *p, const eph_trace_merlin *m) {
  eph_trace_diff diffs[MAX_SHOWN];
  size_t compared = 0, n = eph_trace_merlin_check(p, m, diffs, MAX_SHOWN, &compared);
  if (n == SIZE_MAX) {
    cli_error("%s: out of memory", path);
    return 1;
  }
  if (n == 0) {
    printf("%zu objects: all agree\n", compared);
    return 0;
  }
  size_t shown = n < MAX_SHOWN ? n : MAX_SHOWN;
  char what[MAX_SHOWN][96];
  describe_objects(p, diffs, shown, what);
  printf("%zu differences (%zu objects compared); the first %zu:\n", n, compared, shown);
  for (size_t i = 0; i < shown; i++) print_diff(&diffs[i], what[i]);
  return 1;
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
  eph_profile *p = NULL;
  eph_error err = {0};
  if (eph_profile_load(in, &p, &err) != EPH_OK) {
    cli_error("%s", err.message);
    return cli_load_failed(err.status);
  }
  double load = seconds_since(&t0);
  const char *why = eph_trace_unusable(p);
  if (why) {
    cli_error("%s: %s%s%s%s", in, why, p->warning[0] ? " (" : "", p->warning, p->warning[0] ? ")" : "");
    eph_profile_free(p);
    return CLI_BAD_INPUT;
  }
  eph_trace_merlin m;
  if (eph_trace_merlin_run(p, &m, &err) != EPH_OK) {
    cli_error("%s: %s", in, err.message);
    eph_trace_merlin_free(&m);
    eph_profile_free(p);
    return cli_load_failed(err.status);
  }
  const eph_trace_merlin_stats *s = &m.stats;
  printf("offline merlin: %s: %" PRIu64 " objects: %" PRIu64 " dead, %" PRIu64 " censored (alive at exit)\n", in,
         s->allocs, s->dead, s->censored);
  printf("  replayed %" PRIu64 " events: %" PRIu64 " stores, %" PRIu64 " root exits, %" PRIu64
         " final roots; %" PRIu64 " pointer slots; %" PRIu64 " stamps propagated; trace ends at %" PRIu64 "\n",
         s->events, s->stores, s->root_exits, s->final_roots, s->pointer_slots, s->propagations, m.end);
  printf("  time: %.3f s to load, %.3f s offline Merlin\n", load, s->seconds);
  if (s->unknown_ids || s->bad_slots || s->stale_stores) {
    fprintf(stderr,
            "ephemera: %s: warning: the trace is not a faithful replay: %" PRIu64 " references to ids with no ALLOC, %" PRIu64
            " stores to missing slots, %" PRIu64 " stores whose old value differs from the replayed slot",
            in, s->unknown_ids, s->bad_slots, s->stale_stores);
    if (s->stale_stores) fprintf(stderr, " (first: event %" PRIu64 ")", s->first_stale_event);
    fputc('\n', stderr);
  }

  int status = 0;
  if (do_check) status = check(in, p, &m);
  if (out) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (eph_trace_merlin_write(p, &m, out, compress, &err) != EPH_OK) {
      cli_error("%s: %s", out, err.message);
      status = 1;
    } else {
      printf("wrote %s: %zu records (%" PRIu64 " censored) in %.3f s\n", out, m.nobjects, s->censored,
             seconds_since(&t0));
    }
  }
  eph_trace_merlin_free(&m);
  eph_profile_free(p);
  int written = cli_stdout_done("the summary");
  return written != CLI_OK ? written : status;
}
