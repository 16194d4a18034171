/*
 * workload_run.c — a workload run with the profiler on the runner's hooks
 * (bench_workload.h): `ephemera run` and `ephemera bench run-one`.
 */
#include <stdio.h>
#include <string.h>

#include "bench_workload.h"

typedef struct ride {
  eph_bench_profiling *p;
  char size[32];
} ride;

static void profile_configure(eph_gc_params *params, void *data) {
  ride *r = data;
  eph_profile_prepare_params(r->p->spec, params);
}

static int profile_before(wl_ctx *w, void *data) {
  ride *r = data;
  eph_bench_profiling *p = r->p;
  snprintf(r->size, sizeof r->size, "%llu", (unsigned long long)w->size);
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)w->seed);
  eph_meta_pair meta[] = {{"program", p->program}, {"workload", w->workload->name}, {"size", r->size},
                          {"unit", w->workload->unit}, {"seed", seed}, {"command", p->command}};
  size_t nmeta = sizeof meta / sizeof meta[0] - (p->command ? 0 : 1);
  /* A failure's message waits in p->err for the caller. */
  if (eph_profile_start(w->h, p->spec, meta, nmeta, &p->err) != EPH_OK) return 1;
  return p->stop_on_signals && eph_profile_stop_on_signals(w->h, &p->err) != EPH_OK;
}

static int profile_after(wl_ctx *w, void *data) {
  ride *r = data;
  eph_bench_profiling *p = r->p;
  if (p->spec && eph_profile_stop(w->h, &p->stats, &p->err) != EPH_OK) return 1;
  return p->after ? p->after(w, p->data) : 0;
}

int eph_bench_workload_run(const wl_workload *wl, const wl_run_options *opt, eph_bench_profiling *p, wl_result *res,
                           char *why, size_t whylen) {
  memset(&p->stats, 0, sizeof p->stats);
  memset(&p->err, 0, sizeof p->err);
  ride r = {.p = p};
  wl_run_options o = *opt;
  o.configure = p->spec ? profile_configure : NULL;
  o.before = p->spec ? profile_before : NULL;
  o.after = p->spec || p->after ? profile_after : NULL;
  o.data = &r;
  return wl_run(wl, &o, res, why, whylen);
}
