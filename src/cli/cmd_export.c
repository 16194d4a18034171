/*
 * cmd_export.c — `ephemera export FILE --pprof OUT.pb.gz`: a profile in
 * other tools' formats (src/render/export.h; docs/viewing.md).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "render/export.h"
#include "render/render_written.h"
#include "ephemera/format.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera export FILE [--pprof OUT.pb.gz] [--chrome-trace OUT.json] [--end death|alive|mid]\n"
          "  --pprof OUT    a gzipped pprof profile (go tool pprof, speedscope, Pyroscope): sample types\n"
          "                 objects, bytes, space_time (bytes x lifetime in bytes allocated, the default),\n"
          "                 space_time_wall (byte-microseconds), alive_at_exit; labels class and lifetime\n"
          "  --chrome-trace OUT  the heap timeline as Chrome trace-event JSON (Perfetto, chrome://tracing):\n"
          "                 each collection as a slice, heap used and committed bytes as counters\n"
          "  --end E        GC-found deaths lie in (alive_until, death]: lifetimes at death (default),\n"
          "                 alive or mid, as in 'ephemera report'\n"
          "at least one output is needed.\n" CLI_EXIT_HELP);
}

static int export_pprof(const eph_file *p, const char *path, const char *out, eph_death_end end) {
  eph_error err = {0};
  eph_spacetime *s = eph_spacetime_build(p, end, &err);
  int rc = CLI_OK;
  if (!s) {
    cli_error("%s: %s", path, err.message);
    rc = err.status == EPH_ERR_NOMEM ? CLI_FAILED : CLI_BAD_INPUT;
  } else if (eph_export_pprof(s, out, &err) != EPH_OK) {
    cli_error("%s", err.message);
    rc = CLI_FAILED;
  } else {
    eph_render_pprof_written(stdout, out, s);
  }
  eph_spacetime_free(s);
  return rc;
}

static int export_chrome(const eph_file *p, const char *path, const char *out) {
  eph_timeline t;
  eph_error err = {0};
  if (!eph_timeline_build(p, &t)) {
    cli_error("%s: out of memory building the timeline", path);
    return CLI_FAILED;
  }
  if (!t.ngcs) cli_error("warning: %s has no collection events: the trace is empty", path);
  int rc = CLI_OK;
  if (eph_export_chrome_trace(p, &t, out, &err) != EPH_OK) {
    cli_error("%s", err.message);
    rc = CLI_FAILED;
  } else {
    eph_render_chrome_written(stdout, out, &t);
  }
  eph_timeline_free(&t);
  return rc;
}

int cmd_export(int argc, char **argv) {
  enum { OPT_PPROF = 256, OPT_CHROME, OPT_END };
  static const struct option longopts[] = {{"pprof", required_argument, NULL, OPT_PPROF},
                                           {"chrome-trace", required_argument, NULL, OPT_CHROME},
                                           {"end", required_argument, NULL, OPT_END},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  static const char *const ends[] = {"death", "alive", "mid", NULL};
  const char *pprof = NULL, *chrome = NULL;
  eph_death_end end = EPH_END_DEATH;
  int k;
  for (int c; (c = cli_getopt(argc, argv, ":h", longopts)) != -1;) {
    switch (c) {
      case OPT_PPROF: pprof = optarg; break;
      case OPT_CHROME: chrome = optarg; break;
      case OPT_END:
        if ((k = cli_opt_choice("--end", optarg, ends)) < 0) return CLI_USAGE;
        end = k == 0 ? EPH_END_DEATH : k == 1 ? EPH_END_ALIVE : EPH_END_MID;
        break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("needs a FILE");
  if (optind + 1 < argc) return cli_usage_error("one FILE only ('%s' is extra)", argv[optind + 1]);
  if (!pprof && !chrome) return cli_usage_error("needs an output (--pprof OUT.pb.gz or --chrome-trace OUT.json)");
  const char *path = argv[optind];
  eph_file *p = NULL;
  eph_error err = {0};
  eph_status st = eph_file_load(path, &p, &err);
  if (st != EPH_OK) {
    cli_error("%s", err.message);
    return cli_load_failed(st);
  }
  if (p->warning[0]) cli_error("warning: %s: %s", path, p->warning);
  int rc = pprof ? export_pprof(p, path, pprof, end) : CLI_OK;
  if (rc == CLI_OK && chrome) rc = export_chrome(p, path, chrome);
  eph_file_free(p);
  if (rc == CLI_OK) rc = cli_stdout_done("the list of files written");
  return rc;
}
