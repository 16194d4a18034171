/*
 * cmd_run.c — `ephemera run WORKLOAD [options] [workload options]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "workload.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera run WORKLOAD [--size S] [--gc PARAMS] [--retain CLASS[,CLASS]] [--seed N] [--quiet]\n"
          "                    [workload options]\n"
          "  --size S       small, default, large, or a number in the workload's unit\n"
          "  --gc PARAMS    GC parameters, e.g. eden=64M,headroom=64M,shrink=128M,ratio=2.5\n"
          "  --retain C,..  keep every instance of these classes alive until the end\n"
          "  --seed N       input generator seed (default 42)\n"
          "'ephemera workloads -v' lists workloads, classes and options.  GC parameters:\n");
  eph_gc_params_describe(out);
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

int cmd_run(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const wl_workload *wl = wl_find(argv[1]);
  if (!wl) {
    cli_error("unknown workload '%s' (see 'ephemera workloads')", argv[1]);
    return 2;
  }
  wl_run_options opt = {0};
  char **rest = calloc((size_t)argc, sizeof *rest);
  int nrest = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char **target = NULL;
    if (!strcmp(a, "--size")) target = &opt.size;
    else if (!strcmp(a, "--gc")) target = &opt.gc;
    else if (!strcmp(a, "--retain")) target = &opt.retain;
    if (target || !strcmp(a, "--seed")) {
      if (i + 1 >= argc) {
        cli_error("run: %s needs a value", a);
        free(rest);
        return 2;
      }
      if (target) {
        *target = argv[++i];
      } else {
        char *end;
        opt.seed = strtoull(argv[++i], &end, 10);
        if (*end || !opt.seed) {
          cli_error("run: bad seed '%s' (a positive integer)", argv[i]);
          free(rest);
          return 2;
        }
      }
    } else if (!strcmp(a, "--quiet")) {
      opt.quiet = true;
    } else {
      rest[nrest++] = argv[i];
    }
  }
  opt.argc = nrest;
  opt.argv = rest;
  wl_result res;
  char err[512];
  int rc = wl_run(wl, &opt, &res, err, sizeof err);
  free(rest);
  if (rc) {
    cli_error("%s", err);
    return 2;
  }
  const eph_heap_stats *s = &res.stats;
  printf("%s (%llu %s): self-check %s: %s\n", wl->name, (unsigned long long)res.size, wl->unit,
         res.check_ok ? "ok" : "FAILED", res.check_message);
  printf("  time       %.3f s wall, %.3f s CPU; GC %.3f s (%.1f%%): %llu scavenges, %llu full GCs, max pause %.2f ms\n",
         res.wall_s, res.cpu_s, (double)s->gc_wall_ns / 1e9,
         res.wall_s > 0 ? 100.0 * (double)s->gc_wall_ns / 1e9 / res.wall_s : 0.0, (unsigned long long)s->scavenges,
         (unsigned long long)s->full_gcs, (double)s->max_pause_ns / 1e6);
  printf("  memory     %.1f MiB allocated, peak heap %.1f MiB committed (%.1f MiB in objects)\n",
         mib(s->bytes_allocated), mib(s->peak_committed), mib(s->peak_used));
  if (opt.retain) printf("  retained   %llu objects (%s)\n", (unsigned long long)res.retained, opt.retain);
  if (res.nevents)
    printf("  latency    %zu events: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", res.nevents, res.event_p50_ms,
           res.event_p99_ms, res.event_max_ms);
  return res.check_ok ? 0 : 1;
}
