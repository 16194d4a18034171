/*
 * cmd_workloads.c — `ephemera workloads [-v]`: the workload table.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "render.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera workloads [-v]\n"
               "  -v, --verbose  also each workload's classes and options\n" CLI_EXIT_HELP);
}

int cmd_workloads(int argc, char **argv) {
  static const struct option longopts[] = {{"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, {0}};
  bool verbose = false;
  for (int c; (c = cli_getopt(argc, argv, ":vh", longopts)) != -1;) {
    if (c == 'v') verbose = true;
    else if (c == 'h') {
      usage(stdout);
      return cli_stdout_done("the help");
    } else return CLI_USAGE;
  }
  if (optind < argc) return cli_usage_error("unexpected argument '%s'", argv[optind]);
  eph_render_workloads(stdout, verbose);
  return cli_stdout_done("the table");
}
