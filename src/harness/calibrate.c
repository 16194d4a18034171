/*
 * calibrate.c — `ephemera sim calibrate`: the simulator's cost model fitted
 * on the real heap's per-collection statistics (src/heap/stats.c's event
 * log), run by run (bench_calibrate.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_calibrate.h"
#include "bench_internal.h"
#include "workloads/workload.h"

/* Settings that make the workloads collect often and in different ways:
 * small and large edens, early and late tenuring, frequent full GCs.  At
 * `small` (about 1 MB allocated) the edens must be tiny to collect at all;
 * other sizes take the larger set.  None of them is one of
 * bench/sim-accuracy's settings, which validate the fit. */
static const char *const SMALL_SPECS[] = {
    "eden=64K,headroom=64K",
    "eden=256K,headroom=128K,tenure=1,ratio=0.2",
    "eden=1M,headroom=1M,tenure=8",
    "eden=32K,headroom=16K,ratio=0.5,tenure=15",
    "eden=24K,headroom=8K,ratio=0.3,tenure=2",
    "eden=96K,headroom=256K,ratio=2,tenure=3",
};
static const char *const LARGER_SPECS[] = {
    "eden=256K,headroom=256K",
    "eden=768K,headroom=512K,tenure=1,ratio=0.3",
    "eden=3M,headroom=2M,tenure=6",
    "eden=6M,headroom=1M,ratio=0.6,tenure=15",
    "eden=24M,tenure=2",
    "eden=128K,headroom=64K,ratio=0.2,tenure=2",
    "eden=1536K,headroom=3M,ratio=1,tenure=3",
    "eden=12M,headroom=4M,tenure=4",
};

#define REPS 3 /* runs of each setting */

typedef struct obs_vec {
  eph_sim_observation *v;
  size_t len, cap;
  unsigned run; /* the run under way */
  double eden_bytes; /* its eden */
  bool nomem;
} obs_vec;

static int collect_events(wl_ctx *w, void *data) {
  obs_vec *o = data;
  size_t n;
  const eph_gc_event *ev = eph_heap_events(w->h, &n);
  eph_heap_stats s;
  eph_heap_stats_get(w->h, &s);
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
        .run = o->run,
        .kind = e->kind,
        .eden_bytes = o->eden_bytes,
        .seconds = (double)e->cpu_ns / 1e9, /* CPU: robust to other processes taking the core */
        .copied = (double)e->bytes_copied,
        .promoted = (double)e->bytes_promoted,
        .objects = (double)e->objects_moved,
        .slots = (double)e->slots_scanned,
        .remembered_slots = (double)e->remembered_slots,
        .marked = e->kind == EPH_GC_FULL ? (double)e->used_after : 0,
        .compacted = (double)e->bytes_compacted,
        .remembered = (double)e->remembered_scanned,
        .mib_committed = (double)(s.new_space_bytes + e->old_committed) / (1024.0 * 1024.0),
    };
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The model's prediction for one observation: a one-observation result. */
static double predict(const eph_sim_costmodel *cm, const eph_sim_observation *o) {
  bool full = o->kind == EPH_GC_FULL;
  eph_sim_result r = {
      .collector = EPH_SIM_SPUR,
      .input = EPH_SIM_INPUT_TRACE,
      .scavenges = !full,
      .full_gcs = full,
      .bytes_copied = (uint64_t)o->copied,
      .bytes_promoted = (uint64_t)o->promoted,
      .objects_moved = (uint64_t)o->objects,
      .objects_far = full ? 0 : o->objects * eph_sim_eden_distance((uint64_t)o->eden_bytes),
      .bytes_far = full ? 0 : (o->copied + o->promoted) * eph_sim_eden_distance((uint64_t)o->eden_bytes),
      .slots_scanned = full ? 0 : (uint64_t)(o->slots - o->remembered_slots),
      .remembered_slots = full ? 0 : (uint64_t)o->remembered_slots,
      .slots_traced = full ? (uint64_t)o->slots : 0,
      .bytes_marked = (uint64_t)o->marked,
      .bytes_compacted = (uint64_t)o->compacted,
      .remembered_scanned = (uint64_t)o->remembered,
      .collection_mib = o->mib_committed,
  };
  return eph_sim_predict(cm, &r);
}

/* One calibration run to make: a workload, a size, a setting. */
typedef struct plan_run {
  const wl_workload *wl;
  char size[32];
  const char *spec;
} plan_run;

/* The runs: every workload at each size of the comma-separated list. */
static size_t plan(const char *sizes, const char *const *specs, size_t nspecs, plan_run *out, size_t cap) {
  size_t n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", sizes);
  char *save = NULL;
  for (char *size = strtok_r(buf, ",", &save); size; size = strtok_r(NULL, ",", &save)) {
    const char *const *sp = specs;
    size_t ns = nspecs;
    if (!sp) {
      bool small = !strcmp(size, "small");
      sp = small ? SMALL_SPECS : LARGER_SPECS;
      ns = small ? sizeof SMALL_SPECS / sizeof *SMALL_SPECS : sizeof LARGER_SPECS / sizeof *LARGER_SPECS;
    }
    for (size_t w = 0; w < wl_count; w++)
      for (size_t k = 0; k < ns; k++) {
        if (n < cap) {
          out[n].wl = wl_all[w];
          snprintf(out[n].size, sizeof out[n].size, "%s", size);
          out[n].spec = sp[k];
        }
        n++;
      }
  }
  return n;
}

/* Tells progress that run r's repetition k starts. */
static void step(eph_bench_progress_fn progress, void *ctx, const plan_run *run, size_t r, size_t nruns, int k,
                 double t0) {
  if (!progress) return;
  size_t done = r * REPS + (size_t)k, total = nruns * REPS;
  double el = eph_bench_clock(CLOCK_MONOTONIC) - t0;
  char target[64];
  snprintf(target, sizeof target, "%s:%s", run->wl->name, run->size);
  progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_STEP, .done = done, .total = total, .target = target,
                                 .config = run->spec, .invocation = (size_t)k,
                                 .eta_s = done ? el / (double)done * (double)(total - done) : -1},
           ctx);
}

eph_status eph_bench_calibrate(const char *sizes, const char *const *specs, size_t nspecs,
                               eph_bench_progress_fn progress, void *progress_ctx, eph_bench_calibration *out,
                               eph_error *err) {
  memset(out, 0, sizeof *out);
  size_t nruns = plan(sizes, specs, nspecs, NULL, 0);
  plan_run *runs = calloc(nruns + 1, sizeof *runs);
  size_t *run_end = calloc(nruns + 1, sizeof *run_end);
  double *errors = calloc(nruns + 1, sizeof *errors);
  eph_bench_calibration_run *rows = calloc(nruns + 1, sizeof *rows);
  obs_vec o = {0};
  if (!runs || !run_end || !errors || !rows) {
    free(runs);
    free(run_end);
    free(errors);
    free(rows);
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  plan(sizes, specs, nspecs, runs, nruns);
  eph_status st = EPH_OK;
  double t0 = eph_bench_clock(CLOCK_MONOTONIC);
  for (size_t r = 0; r < nruns && st == EPH_OK; r++) {
    /* Each setting runs REPS times; the run with the median GC time is
     * kept (one-off costs, such as the kernel reclaiming memory during a
     * collection, would otherwise bend the fit). */
    size_t start[REPS], end[REPS];
    double total[REPS];
    o.run = (unsigned)r;
    eph_gc_params params;
    eph_gc_params_init(&params);
    eph_error perr;
    if (eph_gc_params_parse(&params, runs[r].spec, &perr) != EPH_OK) {
      eph_error_fill(err, EPH_ERR_INVALID, "calibration setting %s: %s", runs[r].spec, perr.message);
      st = EPH_ERR_INVALID;
      break;
    }
    o.eden_bytes = (double)params.eden_bytes;
    for (int k = 0; k < REPS && st == EPH_OK; k++) {
      step(progress, progress_ctx, &runs[r], r, nruns, k, t0);
      wl_run_options opt = {.size = runs[r].size, .gc = runs[r].spec, .quiet = true, .after = collect_events, .data = &o};
      wl_result res;
      char msg[256];
      start[k] = o.len;
      if (wl_run(runs[r].wl, &opt, &res, msg, sizeof msg) != 0 || o.nomem) {
        eph_error_fill(err, EPH_ERR_INVALID, "calibration run %s --size %s --gc %s failed: %s", runs[r].wl->name,
                       runs[r].size, runs[r].spec, o.nomem ? "out of memory" : msg);
        st = EPH_ERR_INVALID;
      }
      end[k] = o.len;
      total[k] = 0;
      for (size_t i = start[k]; i < end[k]; i++) total[k] += o.v[i].seconds;
    }
    if (st != EPH_OK) break;
    int med = 0; /* the median of three */
    for (int k = 0; k < REPS; k++) {
      int below = 0, above = 0;
      for (int j = 0; j < REPS; j++) below += j != k && total[j] < total[k], above += j != k && total[j] > total[k];
      if (below <= REPS / 2 && above <= REPS / 2) med = k;
    }
    size_t keep = end[med] - start[med];
    memmove(o.v + start[0], o.v + start[med], keep * sizeof *o.v);
    o.len = start[0] + keep;
    run_end[r] = o.len;
  }
  if (progress) /* the runs are over, done or failed */
    progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_FINISHED, .total = nruns * REPS}, progress_ctx);
  if (st == EPH_OK) st = eph_sim_costmodel_fit(o.v, o.len, &out->model, err);
  if (st == EPH_OK) {
    size_t nerr = 0, begin = 0;
    for (size_t r = 0; r < nruns; r++) {
      double measured = 0, predicted = 0;
      for (size_t k = begin; k < run_end[r]; k++) {
        measured += o.v[k].seconds;
        predicted += predict(&out->model, &o.v[k]);
      }
      double e = measured > 0 ? fabs(predicted - measured) / measured : 0;
      bool fitted = measured >= EPH_SIM_FIT_MIN_SECONDS;
      if (fitted) errors[nerr++] = e;
      rows[r] = (eph_bench_calibration_run){.workload = runs[r].wl->name, .gc = runs[r].spec,
                                            .collections = run_end[r] - begin, .measured_s = measured,
                                            .predicted_s = predicted, .error = e, .fitted = fitted};
      snprintf(rows[r].size, sizeof rows[r].size, "%s", runs[r].size);
      begin = run_end[r];
    }
    qsort(errors, nerr, sizeof *errors, cmp_double);
    out->run_error_median = nerr ? (nerr % 2 ? errors[nerr / 2] : (errors[nerr / 2 - 1] + errors[nerr / 2]) / 2) : 0;
    out->runs = rows;
    out->nruns = nruns;
    rows = NULL;
  }
  free(o.v);
  free(runs);
  free(run_end);
  free(errors);
  free(rows);
  return st;
}

void eph_bench_calibration_free(eph_bench_calibration *c) {
  if (c) free(c->runs), c->runs = NULL, c->nruns = 0;
}
