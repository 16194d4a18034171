/*
 * sim_calibrate.h — fitting the simulator's cost model on this machine:
 * runs the workloads on the real heap (unprofiled), takes every
 * collection of their event logs as one observation, and fits
 * eph_sim_costmodel_fit over them.  A separate library from
 * libephemera_sim because it runs the collector (the simulator never does).
 */
#ifndef EPH_SIM_CALIBRATE_H
#define EPH_SIM_CALIBRATE_H

#include <stdio.h>

#include "ephemera/sim.h"

/*
 * Runs every workload at each size of `sizes` (comma-separated: "small",
 * "middle", "default", a number; the command's default is "small,middle")
 * with each of the nspecs GC settings (NULL: a built-in set per size,
 * spanning eden sizes and tenure ages), fits the model into *cm, and writes
 * to log (if not NULL) one line per run: measured GC seconds against the
 * fitted model's prediction for that run's collections.  *run_error_median
 * gets the median relative error of those per-run totals (runs with enough
 * GC to be fitted).  EPH_ERR_INVALID with a message if a run fails or the
 * fit is impossible.
 */
eph_status eph_sim_calibrate(const char *sizes, const char *const *specs, size_t nspecs, eph_sim_costmodel *cm,
                             double *run_error_median, FILE *log, eph_error *err);

#endif
