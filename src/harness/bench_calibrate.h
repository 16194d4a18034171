/*
 * bench_calibrate.h — fitting the simulator's cost model on this machine
 * (`ephemera sim calibrate`): runs the workloads on the real heap
 * (unprofiled), takes every collection of their event logs as one
 * observation, and fits eph_sim_costmodel_fit over them.  It measures real
 * runs, so it is the harness's; the model, its file and its fit are the
 * simulator's (include/ephemera/sim.h).
 * Layer: bench, above the simulator and the workloads (docs/architecture.md).
 */
#ifndef EPH_BENCH_CALIBRATE_H
#define EPH_BENCH_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "ephemera/bench.h"
#include "ephemera/sim.h"

/* One calibration run: a workload at a size with a GC setting (the run
 * with the median GC time of its repetitions). */
typedef struct eph_bench_calibration_run {
  const char *workload;  /* static */
  char size[32];
  const char *gc;        /* the GC setting (static, or the caller's specs[k]) */
  size_t collections;
  double measured_s;     /* GC seconds measured (CPU) */
  double predicted_s;    /* the fitted model's prediction for its collections */
  double error;          /* |predicted - measured| / measured (0 if nothing was measured) */
  bool fitted;           /* enough GC to be fitted (EPH_SIM_FIT_MIN_SECONDS) */
} eph_bench_calibration_run;

typedef struct eph_bench_calibration {
  eph_sim_costmodel model;         /* the fitted model */
  double run_error_median;         /* the median of the fitted runs' errors */
  eph_bench_calibration_run *runs; /* owned (eph_bench_calibration_free) */
  size_t nruns;
} eph_bench_calibration;

/*
 * Runs every workload at each size of `sizes` (comma-separated: "small",
 * "middle", "default", a number; the command's default is "small,middle")
 * with each of the nspecs GC settings (NULL: a built-in set per size,
 * spanning eden sizes and tenure ages), and fits the model into *out with
 * one row per run: measured GC seconds against the fitted model's
 * prediction for that run's collections.  progress (may be NULL) is told
 * of each run as it starts (a STEP: target "workload:size", config the
 * setting, invocation the repetition) and of the end.  EPH_ERR_INVALID with
 * a message if a run fails or the fit is impossible (nothing to free then).
 */
eph_status eph_bench_calibrate(const char *sizes, const char *const *specs, size_t nspecs,
                               eph_bench_progress_fn progress, void *progress_ctx, eph_bench_calibration *out,
                               eph_error *err);
void eph_bench_calibration_free(eph_bench_calibration *c); /* NULL allowed */

#endif
