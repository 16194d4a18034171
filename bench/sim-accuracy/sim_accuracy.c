/*
 * sim_accuracy.c — one workload of bench/sim-accuracy: for each GC setting,
 * an unprofiled real run (median of REPS by GC time) against `spur` over
 * TRACE, with the simulator's time per configuration.
 *
 *   sim-accuracy TRACE WORKLOAD SIZE REPS MODEL|- SPEC...
 *
 * One line per setting, whitespace-separated:
 *   workload spec real_scav sim_scav real_full sim_full copied_err promoted_err
 *   peak_err real_gc_s predicted_gc_s real_wall_s sim_s
 * (GC seconds are CPU seconds inside collections, as `ephemera sim calibrate` fits them.)
 * (errors relative, 0..1; MODEL "-": the default cost model path or the built-in).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ephemera/sim.h"
#include "workload.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rel(uint64_t real, uint64_t sim) {
  if (real == sim) return 0;
  return fabs((double)sim - (double)real) / (double)(real ? real : 1);
}

static int cmp_result(const void *a, const void *b) {
  double x = (double)((const wl_result *)a)->stats.gc_cpu_ns, y = (double)((const wl_result *)b)->stats.gc_cpu_ns;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: sim-accuracy TRACE WORKLOAD SIZE REPS MODEL|- SPEC...\n");
    return 2;
  }
  const wl_workload *wl = wl_find(argv[2]);
  int reps = atoi(argv[4]);
  if (!wl || reps < 1 || reps > 99) {
    fprintf(stderr, "sim-accuracy: bad workload or REPS\n");
    return 2;
  }
  unsetenv("EPHEMERA_GC");
  eph_error err;
  eph_sim_costmodel cm;
  char path[4096];
  if (strcmp(argv[5], "-")) {
    if (eph_sim_costmodel_load(argv[5], &cm, &err) != EPH_OK) {
      fprintf(stderr, "sim-accuracy: %s\n", err.message);
      return 2;
    }
  } else if (!eph_sim_costmodel_default_path(path, sizeof path) || eph_sim_costmodel_load(path, &cm, &err) != EPH_OK) {
    eph_sim_costmodel_default(&cm);
  }
  eph_sim_input *in;
  if (eph_sim_input_load(argv[1], &in, &err) != EPH_OK) {
    fprintf(stderr, "sim-accuracy: %s: %s\n", argv[1], err.message);
    return 2;
  }
  wl_result *runs = calloc((size_t)reps, sizeof *runs);
  for (int i = 6; i < argc; i++) {
    wl_run_options opt = {.size = argv[3], .gc = argv[i], .quiet = true};
    char msg[256];
    for (int r = 0; r < reps; r++)
      if (wl_run(wl, &opt, &runs[r], msg, sizeof msg) != 0) {
        fprintf(stderr, "sim-accuracy: %s --gc %s: %s\n", wl->name, argv[i], msg);
        return 1;
      }
    qsort(runs, (size_t)reps, sizeof *runs, cmp_result);
    const wl_result *real = &runs[reps / 2];
    eph_sim_config cfg;
    eph_sim_config_init(&cfg);
    if (eph_gc_params_parse(&cfg.params, argv[i], &err) != EPH_OK) {
      fprintf(stderr, "sim-accuracy: %s\n", err.message);
      return 2;
    }
    /* The simulation's time: the best of three, as configurations of a
     * grid run one after another over the loaded input. */
    eph_sim_result sim;
    double sim_s = 0;
    for (int k = 0; k < 3; k++) {
      if (k) eph_sim_result_free(&sim);
      double t0 = now();
      if (eph_sim_run(in, &cfg, &cm, &sim, &err) != EPH_OK) {
        fprintf(stderr, "sim-accuracy: %s\n", err.message);
        return 1;
      }
      double t = now() - t0;
      if (k == 0 || t < sim_s) sim_s = t;
    }
    const eph_heap_stats *s = &real->stats;
    /* sim_s to the nanosecond: a configuration without collections takes
     * well under a microsecond, and a 0 would drop its row from the median. */
    printf("%s %s %llu %llu %llu %llu %.6f %.6f %.6f %.6f %.6f %.6f %.9f\n", wl->name, argv[i],
           (unsigned long long)s->scavenges, (unsigned long long)sim.scavenges, (unsigned long long)s->full_gcs,
           (unsigned long long)sim.full_gcs, rel(s->bytes_copied, sim.bytes_copied),
           rel(s->bytes_promoted, sim.bytes_promoted), rel(s->peak_committed, sim.peak_committed),
           (double)s->gc_cpu_ns / 1e9, sim.gc_seconds, real->wall_s, sim_s);
    fflush(stdout);
    eph_sim_result_free(&sim);
  }
  free(runs);
  eph_sim_input_free(in);
  return 0;
}
