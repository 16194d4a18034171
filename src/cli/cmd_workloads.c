/*
 * cmd_workloads.c — `ephemera workloads`: the workload table.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "workload.h"

int cmd_workloads(int argc, char **argv) {
  bool verbose = argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose"));
  if (argc > 1 && !verbose) {
    if (strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
      cli_error("workloads: unknown option '%s'", argv[1]);
      return 2;
    }
    printf("usage: ephemera workloads [-v]   (-v: also classes and options)\n");
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
