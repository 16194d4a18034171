/*
 * report.c — what `ephemera sim` computes: the configurations a command
 * asks for, each one simulated over one input (eph_sim_report), or the
 * granularity error table of each (eph_sim_granularity_report).  The
 * renderers (src/render/render_sim.c) print them.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

eph_status eph_sim_plan_configs(const eph_sim_plan *plan, eph_sim_config *cfgs, size_t cap, size_t *n,
                                eph_error *err) {
  *n = 0;
  bool spur = plan->collector == EPH_SIM_SPUR;
  if (spur ? plan->nheaps != 0 : plan->ngc != 0) {
    eph_error_fill(err, EPH_ERR_INVALID, spur ? "heap sizes are for ss, fg, vg and of; spur takes GC parameters"
                                              : "GC parameters are for spur; %s takes heap sizes",
                   eph_sim_collector_name(plan->collector));
    return EPH_ERR_INVALID;
  }
  size_t want = spur ? (plan->ngc ? plan->ngc : 1) : (plan->nheaps ? plan->nheaps : 1);
  if (want > cap) {
    eph_error_fill(err, EPH_ERR_INVALID, "at most %zu configurations", cap);
    return EPH_ERR_INVALID;
  }
  for (size_t i = 0; i < want; i++) {
    eph_sim_config *c = &cfgs[i];
    eph_sim_config_init(c);
    c->collector = plan->collector, c->keep_events = plan->keep_events, c->nursery_bytes = plan->nursery_bytes;
    c->granule = plan->granule, c->sync = plan->sync;
    if (spur && plan->ngc && eph_gc_params_parse(&c->params, plan->gc[i], err) != EPH_OK) return err->status;
    if (!spur && plan->nheaps) {
      c->heap_bytes = plan->heaps[i].bytes;
      if (!plan->heaps[i].bytes) c->heap_factor = plan->heaps[i].factor;
    }
  }
  *n = want;
  return EPH_OK;
}

eph_status eph_sim_run_all(const eph_sim_input *in, const char *input_name, const eph_sim_config *cfgs, size_t n,
                           const eph_sim_costmodel *cm, eph_sim_report *out, eph_error *err) {
  *out = (eph_sim_report){.input_name = input_name, .input = in, .configs = cfgs};
  if (cm) out->model = *cm;
  else eph_sim_costmodel_default(&out->model);
  out->results = calloc(n ? n : 1, sizeof *out->results);
  if (!out->results) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  eph_status st = EPH_OK;
  for (; out->n < n && st == EPH_OK; out->n++) st = eph_sim_run(in, &cfgs[out->n], &out->model, &out->results[out->n], err);
  if (st != EPH_OK) eph_sim_report_free(out); /* the failed one holds nothing */
  return st;
}

void eph_sim_report_free(eph_sim_report *r) {
  for (size_t i = 0; r && r->results && i < r->n; i++) eph_sim_result_free(&r->results[i]);
  if (r) free(r->results), r->results = NULL, r->n = 0;
}

eph_status eph_sim_granularity_all(const eph_sim_input *in, const eph_sim_config *cfgs, size_t n,
                                   const uint64_t *granules, size_t ngranules, eph_sim_granularity_report *out,
                                   eph_error *err) {
  memset(out, 0, sizeof *out);
  out->configs = cfgs;
  out->granules = granules;
  out->ngranules = ngranules;
  size_t per = ngranules * EPH_SIM_NSYNC * 2;
  size_t total = n * per;
  out->errors = malloc((total ? total : 1) * sizeof *out->errors);
  if (!out->errors) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  for (; out->n < n; out->n++) {
    eph_status st = eph_sim_granularity_table(in, &cfgs[out->n], granules, ngranules, out->errors + out->n * per, err);
    if (st != EPH_OK) return st; /* the tables done so far stay: out->n of them */
  }
  return EPH_OK;
}

void eph_sim_granularity_report_free(eph_sim_granularity_report *g) {
  if (g) free(g->errors), g->errors = NULL, g->n = 0;
}
