/*
 * cmd_workloads.c — `ephemera workloads [-v]`: the workload table.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "workload.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera workloads [-v]\n"
               "  -v, --verbose  also each workload's classes and options\n" CLI_EXIT_HELP);
}

static void print_table(FILE *out, bool verbose) {
  fprintf(out, "%-12s %-10s %10s %10s %10s  %s\n", "workload", "unit", "small", "default", "large", "description");
  for (size_t i = 0; i < wl_count; i++) {
    const wl_workload *wl = wl_all[i];
    char large[32] = "-";
    if (wl->sizes.large) snprintf(large, sizeof large, "%llu", (unsigned long long)wl->sizes.large);
    fprintf(out, "%-12s %-10s %10llu %10llu %10s  %s\n", wl->name, wl->unit, (unsigned long long)wl->sizes.small,
            (unsigned long long)wl->sizes.normal, large, wl->description);
    if (verbose) {
      fprintf(out, "%12s classes:", "");
      for (size_t k = 0; k < wl->nclasses; k++) fprintf(out, " %s", wl->classes[k].name);
      fprintf(out, "\n");
      if (wl->short_lived_class) fprintf(out, "%12s short-lived: %s\n", "", wl->short_lived_class);
      if (wl->options_help) fprintf(out, "%12s options: %s\n", "", wl->options_help);
    }
  }
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
  print_table(stdout, verbose);
  return cli_stdout_done("the table");
}
