/*
 * cmd_workloads.c — `ephemera workloads`: the workload table.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ephemera/bench.h"
#include "workload.h"

int cmd_workloads(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--nominal")) { /* the table `ephemera bench nominal` measured */
    eph_error e;
    if (argc > 3) return cli_error("workloads: --nominal takes one file"), 2;
    if (eph_bench_nominal_print(argc > 2 ? argv[2] : "nominal.json", stdout, &e)) return cli_error("%s", e.message), 3;
    return 0;
  }
  bool verbose = argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose"));
  if (argc > 1 && !verbose) {
    if (strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
      cli_error("workloads: unknown option '%s'", argv[1]);
      return 2;
    }
    printf("usage: ephemera workloads [-v | --nominal [FILE]]   (-v: also classes and options; --nominal: the statistics\n"
           "       'ephemera bench nominal' wrote to FILE, default nominal.json)\n");
    return 0;
  }
  printf("%-12s %-10s %10s %10s %10s  %s\n", "workload", "unit", "small", "default", "large", "description");
  for (size_t i = 0; i < wl_count; i++) {
    const wl_workload *wl = wl_all[i];
    char large[32] = "-";
    if (wl->sizes.large) snprintf(large, sizeof large, "%llu", (unsigned long long)wl->sizes.large);
    printf("%-12s %-10s %10llu %10llu %10s  %s\n", wl->name, wl->unit, (unsigned long long)wl->sizes.small,
           (unsigned long long)wl->sizes.normal, large, wl->description);
    if (verbose) {
      printf("%12s classes:", "");
      for (size_t k = 0; k < wl->nclasses; k++) printf(" %s", wl->classes[k].name);
      printf("\n");
      if (wl->short_lived_class) printf("%12s short-lived: %s\n", "", wl->short_lived_class);
      if (wl->options_help) printf("%12s options: %s\n", "", wl->options_help);
    }
  }
  return 0;
}
