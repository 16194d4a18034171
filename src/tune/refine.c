/*
 * refine.c — the GC simulator (src/sim, `spur`: the heap's own rules,
 * validated against real runs) re-simulates the configurations the fast
 * model (model.c) ranks best.  The model shares its young-generation walk
 * across the grid and screens all of it in about the time the simulator
 * takes for a handful; the simulator models what the model leaves out
 * (a full GC tenures the young generation, the exact trigger points).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/sim.h"
#include "tune_internal.h"

eph_status tune_refine(const eph_sim_input *in, const eph_sim_costmodel *cm, eph_tune_sim *sims, const size_t *which,
                       size_t n, double *sim_gc_s, eph_error *err) {
  for (size_t k = 0; k < n; k++) {
    eph_tune_sim *s = &sims[which[k]];
    eph_sim_config cfg;
    eph_sim_config_init(&cfg);
    char gc[160];
    eph_tune_config_format(&s->config, gc, sizeof gc);
    if (eph_gc_params_parse(&cfg.params, gc, err) != EPH_OK) return EPH_ERR_INVALID;
    eph_sim_result r;
    eph_status st = eph_sim_run(in, &cfg, cm, &r, err);
    if (st != EPH_OK) return st;
    /* A sampled input is simulated with every death at its earliest and
     * at its latest (r.early and r): the middle of the two.  Exact inputs
     * give the same figures twice. */
    s->scavenges = (r.scavenges + r.early.scavenges + 1) / 2;
    s->full_gcs = (r.full_gcs + r.early.full_gcs + 1) / 2;
    s->copied = ((double)(r.bytes_copied + r.bytes_promoted) + (double)(r.early.bytes_copied + r.early.bytes_promoted)) / 2;
    s->promoted = ((double)r.bytes_promoted + (double)r.early.bytes_promoted) / 2;
    s->marked = (double)r.bytes_marked;
    s->peak_heap = ((double)r.peak_committed + (double)r.early.peak_committed) / 2;
    s->by_simulator = true;
    /* A sampled input gives a range: its middle. */
    sim_gc_s[k] = (r.gc_seconds_low + r.gc_seconds_high) / 2;
    eph_sim_result_free(&r);
  }
  return EPH_OK;
}
