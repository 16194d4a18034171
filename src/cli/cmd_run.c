/*
 * cmd_run.c — `ephemera run WORKLOAD [options] [workload options]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ephemera/profile.h"
#include "workload.h"

/* The profiler rides on the runner's hooks: started once the heap and the
 * workload's classes exist, stopped (censoring what is alive) before the
 * heap goes away. */
typedef struct profiling {
  eph_profile_spec spec;
  const char *command;
  char size[32];
  eph_profile_stats stats;
  eph_error err;
} profiling;

static void profile_configure(eph_gc_params *p, void *data) {
  profiling *pr = data;
  eph_profile_prepare_params(&pr->spec, p);
}

static int profile_before(wl_ctx *w, void *data) {
  profiling *pr = data;
  snprintf(pr->size, sizeof pr->size, "%llu", (unsigned long long)w->size);
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)w->seed);
  eph_meta_pair meta[] = {{"program", "ephemera run"}, {"workload", w->workload->name}, {"size", pr->size},
                          {"unit", w->workload->unit}, {"seed", seed}, {"command", pr->command}};
  if (eph_profile_start(w->h, &pr->spec, meta, sizeof meta / sizeof meta[0], &pr->err) != EPH_OK ||
      eph_profile_stop_on_signals(w->h, &pr->err) != EPH_OK) {
    cli_error("%s", pr->err.message);
    return 1;
  }
  return 0;
}

static int profile_after(wl_ctx *w, void *data) {
  profiling *pr = data;
  if (eph_profile_stop(w->h, &pr->stats, &pr->err) != EPH_OK) {
    cli_error("%s", pr->err.message);
    return 1;
  }
  return 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera run WORKLOAD [--size S] [--gc PARAMS] [--retain CLASS[,CLASS]] [--seed N] [--quiet]\n"
          "                    [workload options]\n"
          "  --size S       small, default, large, or a number in the workload's unit\n"
          "  --gc PARAMS    GC parameters, e.g. eden=64M,headroom=64M,shrink=128M,ratio=2.5\n"
          "  --retain C,..  keep every instance of these classes alive until the end\n"
          "  --seed N       input generator seed (default 42)\n"
          "  --profile SPEC profile lifetimes: mode=gc|finalization|merlin|brute,sample=1/N|bytes:B,classes=A,B,\n"
          "                 pretenure=on|off (finalization), threads=1|2|auto (gc), granule=K (brute)\n"
          "  -o FILE        where the profile goes (default ephemera.eph)\n"
          "  --trace        with mode=merlin: also write the full event trace (allocations, stores, roots, deaths)\n"
          "  --kv           end with one line of key=value pairs (for scripts)\n"
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
  const char *profile_spec = NULL, *out = NULL;
  bool kv = false, trace = false;
  char **rest = calloc((size_t)argc, sizeof *rest);
  int nrest = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char **target = NULL;
    if (!strcmp(a, "--profile")) target = &profile_spec;
    else if (!strcmp(a, "-o") || !strcmp(a, "--output")) target = &out;
    else if (!strcmp(a, "--size")) target = &opt.size;
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
    } else if (!strcmp(a, "--trace")) {
      trace = true;
    } else if (!strcmp(a, "--kv")) {
      kv = true;
    } else {
      rest[nrest++] = argv[i];
    }
  }
  opt.argc = nrest;
  opt.argv = rest;
  profiling pr = {.command = argv[1]};
  eph_profile_spec_init(&pr.spec);
  if (trace && !profile_spec) profile_spec = "mode=merlin";
  if (profile_spec || out) {
    eph_error e;
    if (profile_spec && eph_profile_spec_parse(&pr.spec, profile_spec, &e) != EPH_OK) {
      cli_error("--profile: %s", e.message);
      free(rest);
      return 2;
    }
    char cerr[512];
    if (pr.spec.classes[0] && wl_class_list(wl, pr.spec.classes, "--profile classes", NULL, cerr, sizeof cerr)) {
      cli_error("%s", cerr);
      free(rest);
      return 2;
    }
    if (out) snprintf(pr.spec.out, sizeof pr.spec.out, "%s", out);
    if (trace) pr.spec.trace = true;
    opt.configure = profile_configure;
    opt.before = profile_before;
    opt.after = profile_after;
    opt.data = &pr;
  }
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
  if (opt.before) {
    printf("  profile    %s: %llu records (%llu deaths, %llu censored), profiler memory peak %.1f MiB\n", pr.spec.out,
           (unsigned long long)pr.stats.samples, (unsigned long long)pr.stats.deaths,
           (unsigned long long)pr.stats.censored, mib(pr.stats.peak_memory_bytes));
    printf("  stop       %.3f s wall, %.3f s CPU after the run: the last full GC, the deaths it finds, the censored "
           "records\n",
           res.after_wall_s, res.after_cpu_s);
  }
  if (kv)
    printf("kv workload=%s size=%llu check=%s wall_s=%.6f cpu_s=%.6f gc_s=%.6f scavenges=%llu full_gcs=%llu "
           "allocated=%llu objects=%llu peak_committed=%llu peak_used=%llu max_pause_ms=%.3f events=%zu "
           "p50_ms=%.3f p99_ms=%.3f samples=%llu censored=%llu profiler_peak=%llu own_bytes=%llu stop_s=%.6f "
           "stop_cpu_s=%.6f\n",
           wl->name, (unsigned long long)res.size, res.check_ok ? "ok" : "failed", res.wall_s, res.cpu_s,
           (double)s->gc_wall_ns / 1e9, (unsigned long long)s->scavenges, (unsigned long long)s->full_gcs,
           (unsigned long long)s->bytes_allocated, (unsigned long long)s->objects_allocated,
           (unsigned long long)s->peak_committed, (unsigned long long)s->peak_used, (double)s->max_pause_ns / 1e6,
           res.nevents, res.event_p50_ms, res.event_p99_ms, (unsigned long long)pr.stats.samples,
           (unsigned long long)pr.stats.censored, (unsigned long long)pr.stats.peak_memory_bytes,
           (unsigned long long)pr.stats.own_bytes, res.after_wall_s, res.after_cpu_s);
  return res.check_ok ? 0 : 1;
}
