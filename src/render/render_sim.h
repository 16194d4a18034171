/*
 * render_sim.h — the simulator's results (include/ephemera/sim.h) as
 * text, CSV or JSON: `ephemera sim` and the cost model `ephemera sim
 * calibrate` fitted.
 * Layer: renderers, above the simulator (docs/architecture.md).
 *
 * As the other renderers (render.h): they write to a FILE the caller
 * owns, never flush or close it, and return false when its error flag is
 * set (the caller reports the error with its errno).
 */
#ifndef EPH_RENDER_SIM_H
#define EPH_RENDER_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "ephemera/sim.h"

typedef enum eph_sim_format { EPH_SIM_TEXT = 0, EPH_SIM_CSV, EPH_SIM_JSON } eph_sim_format;

/*
 * A simulation (eph_sim_run_all): a header with the input (its kind and
 * caveats) and the cost model, then each configuration's result; with
 * events kept, the per-collection lists.
 */
bool eph_render_sim(FILE *out, eph_sim_format fmt, const eph_sim_report *rep);

/* The granularity error tables (eph_sim_granularity_all), one per
 * configuration: a row per granule, a column pair per scheme. */
bool eph_render_sim_granularity(FILE *out, eph_sim_format fmt, const eph_sim_granularity_report *g);

/* A fitted cost model's coefficients and fit, the median per-run error of
 * the calibration, and where the model was written. */
bool eph_render_sim_costmodel(FILE *out, const eph_sim_costmodel *cm, double run_error_median, const char *path);

#endif
