/*
 * cmd_workloads.c — `ephemera workloads [-v | --nominal [FILE]]`: the
 * workload table, or the nominal statistics `ephemera bench nominal` measured.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ephemera/bench.h"
#include "render/render.h"
#include "render/render_bench.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera workloads [-v | --nominal [FILE]]\n"
               "  -v, --verbose  also each workload's classes and options\n"
               "  --nominal      the statistics 'ephemera bench nominal' wrote to FILE (default nominal.json)\n"
               CLI_EXIT_HELP);
}

int cmd_workloads(int argc, char **argv) {
  static const struct option longopts[] = {{"verbose", no_argument, NULL, 'v'},
                                           {"nominal", no_argument, NULL, 'n'},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  bool verbose = false, nominal = false;
  for (int c; (c = cli_getopt(argc, argv, ":vh", longopts)) != -1;) {
    if (c == 'v') verbose = true;
    else if (c == 'n') nominal = true;
    else if (c == 'h') {
      usage(stdout);
      return cli_stdout_done("the help");
    } else return CLI_USAGE;
  }
  if (nominal) {
    if (verbose) return cli_usage_error("-v and --nominal do not go together");
    if (argc - optind > 1) return cli_usage_error("unexpected argument '%s'", argv[optind + 1]);
    eph_error e;
    eph_bench_nominal_table t;
    if (eph_bench_nominal_load(optind < argc ? argv[optind] : "nominal.json", &t, &e)) {
      cli_error("%s", e.message);
      return e.status == EPH_ERR_NOMEM ? CLI_FAILED : CLI_BAD_INPUT;
    }
    eph_render_bench_nominal(stdout, &t);
    eph_bench_nominal_table_free(&t);
    return cli_stdout_done("the nominal statistics");
  }
  if (optind < argc) return cli_usage_error("unexpected argument '%s'", argv[optind]);
  eph_render_workloads(stdout, verbose);
  return cli_stdout_done("the table");
}
