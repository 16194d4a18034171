/*
 * calibrate.c — `ephemera sim calibrate`: the cost model fitted on the real
 * heap's per-collection statistics (src/heap/stats.c's event log).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_calibrate.h"
#include "workload.h"

/* Settings that make the workloads collect often and in different ways:
 * small and large edens, early and late tenuring, frequent full GCs. */
static const char *const DEFAULT_SPECS[] = {
    "eden=64K,headroom=64K",
    "eden=256K,headroom=128K,tenure=1,ratio=0.2",
    "eden=1M,headroom=1M,tenure=8",
    "eden=32K,headroom=16K,ratio=0.5,tenure=15",
};

typedef struct obs_vec {
  eph_sim_observation *v;
  size_t len, cap;
  size_t run_start; /* first observation of the run under way */
  bool nomem;
} obs_vec;

static int collect_events(wl_ctx *w, void *data) {
  obs_vec *o = data;
  size_t n;
  const eph_gc_event *ev = eph_heap_events(w->h, &n);
  eph_heap_stats s;
  eph_heap_stats_get(w->h, &s);
  o->run_start = o->len;
  for (size_t i = 0; i < n; i++) {
    if (o->len == o->cap) {
      size_t cap = o->cap ? 2 * o->cap : 1024;
      eph_sim_observation *nv = realloc(o->v, cap * sizeof *nv);
      if (!nv) {
        o->nomem = true;
        return 0;
      }
      o->v = nv;
      o->cap = cap;
    }
    const eph_gc_event *e = &ev[i];
    /* A full GC's live old bytes are what it marked: new space is empty after it. */
    o->v[o->len++] = (eph_sim_observation){
        .seconds = (double)e->cpu_ns / 1e9, /* CPU: robust to other processes taking the core */
        .copied = (double)e->bytes_copied,
        .promoted = (double)e->bytes_promoted,
        .marked = e->kind == EPH_GC_FULL ? (double)e->used_after : 0,
        .compacted = (double)e->bytes_compacted,
        .remembered = 0, /* the event log does not count them */
        .mib_committed = (double)(s.new_space_bytes + e->old_committed) / (1024.0 * 1024.0),
    };
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double predict(const eph_sim_costmodel *cm, const eph_sim_observation *o) {
  return cm->per_collection + cm->per_byte_copied * o->copied + cm->per_byte_promoted * o->promoted +
         cm->per_byte_marked * o->marked + cm->per_byte_compacted * o->compacted + cm->per_remembered * o->remembered +
         cm->per_mib_committed * o->mib_committed;
}

eph_status eph_sim_calibrate(const char *size, const char *const *specs, size_t nspecs, eph_sim_costmodel *cm,
                             double *run_error_median, FILE *log, eph_error *err) {
  if (!specs) {
    specs = DEFAULT_SPECS;
    nspecs = sizeof DEFAULT_SPECS / sizeof DEFAULT_SPECS[0];
  }
  size_t nruns = wl_count * nspecs;
  obs_vec o = {0};
  size_t *run_end = calloc(nruns + 1, sizeof *run_end);
  double *errors = calloc(nruns + 1, sizeof *errors);
  if (!run_end || !errors) {
    free(run_end);
    free(errors);
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  eph_status st = EPH_OK;
  for (size_t w = 0; w < wl_count && st == EPH_OK; w++)
    for (size_t s = 0; s < nspecs; s++) {
      wl_run_options opt = {.size = size, .gc = specs[s], .quiet = true, .after = collect_events, .data = &o};
      wl_result res;
      char msg[256];
      if (wl_run(wl_all[w], &opt, &res, msg, sizeof msg) != 0 || o.nomem) {
        eph_error_fill(err, EPH_ERR_INVALID, "calibration run %s --gc %s failed: %s", wl_all[w]->name, specs[s],
                       o.nomem ? "out of memory" : msg);
        st = EPH_ERR_INVALID;
        break;
      }
      run_end[w * nspecs + s] = o.len;
    }
  if (st == EPH_OK) st = eph_sim_costmodel_fit(o.v, o.len, cm, err);
  if (st == EPH_OK) {
    size_t nerr = 0, begin = 0;
    if (log) fprintf(log, "%-12s %-44s %6s %12s %12s %8s\n", "workload", "gc", "GCs", "measured s", "predicted s", "error");
    for (size_t r = 0; r < nruns; r++) {
      double measured = 0, predicted = 0;
      for (size_t k = begin; k < run_end[r]; k++) {
        measured += o.v[k].seconds;
        predicted += predict(cm, &o.v[k]);
      }
      double e = measured > 0 ? fabs(predicted - measured) / measured : 0;
      if (run_end[r] > begin) errors[nerr++] = e;
      if (log)
        fprintf(log, "%-12s %-44s %6zu %12.6f %12.6f %7.1f%%\n", wl_all[r / nspecs]->name, specs[r % nspecs],
                run_end[r] - begin, measured, predicted, 100 * e);
      begin = run_end[r];
    }
    qsort(errors, nerr, sizeof *errors, cmp_double);
    *run_error_median = nerr ? (nerr % 2 ? errors[nerr / 2] : (errors[nerr / 2 - 1] + errors[nerr / 2]) / 2) : 0;
  }
  free(o.v);
  free(run_end);
  free(errors);
  return st;
}
