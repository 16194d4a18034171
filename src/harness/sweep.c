/*
 * sweep.c — runs a sweep: the configurations of each target (minimum heaps
 * measured or cached), every invocation a fresh child (spawn.c), progress
 * with an ETA told to the caller's callback, --ci's extra invocations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"

void eph_bench_options_init(eph_bench_options *o) {
  memset(o, 0, sizeof *o);
  o->invocations = 5;
  o->iterations = 1;
  o->warmup = 1;
  o->max_invocations = 30;
  o->use_cache = true;
}

/* Java targets: one configuration per collector and heap factor; the heap
 * sizes are multiples of G1's minimum heap for every collector (the DaCapo
 * Chopin paper's base), and each collector's own minimum is measured and
 * told too (a run below it fails, and its point drops out of the LBO). */
static int java_configs(const eph_bench_options *o, size_t ti, eph_bench_config *c, size_t nf, eph_error *err) {
  static const char *const g1_only[] = {"g1"};
  const char *const *cols = o->ncollectors ? o->collectors : g1_only;
  size_t ncol = o->ncollectors ? o->ncollectors : 1;
  uint64_t base = 0;
  for (size_t g = 0; o->nfactors && g <= ncol; g++) {
    const char *col = g == ncol ? "g1" : cols[g];
    if (g == ncol && base) break;                          /* g1 was among them */
    if (g < ncol && o->skip_own_minheap && strcmp(col, "g1")) continue; /* the base alone */
    uint64_t minheap = 0;
    bool cached = false;
    if (eph_bench_minheap(o, &o->targets[ti], col, &minheap, &cached, err)) return -1;
    if (!strcmp(col, "g1")) base = minheap;
    if (o->progress)
      o->progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_MINHEAP, .target = o->targets[ti].spec, .gc = col,
                                        .minheap_bytes = minheap, .cached = cached},
                  o->progress_ctx);
  }
  for (size_t g = 0; g < ncol; g++)
    for (size_t f = 0; f < nf; f++) {
      eph_bench_config *x = &c[g * nf + f];
      snprintf(x->gc, sizeof x->gc, "%s", cols[g]);
      snprintf(x->profile, sizeof x->profile, "%s", o->profile ? o->profile : "");
      if (o->nfactors) {
        x->factor = o->factors[f];
        x->heap_bytes = (uint64_t)ceil(o->factors[f] * (double)base);
      }
    }
  return 0;
}

int eph_bench_configs(const eph_bench_options *o, size_t ti, eph_bench_config **configs, size_t *n, eph_error *err) {
  bool java = eph_bench_kind_is_java(o->targets[ti].kind);
  size_t ngc = java ? (o->ncollectors ? o->ncollectors : 1) : o->ngcs ? o->ngcs : 1, nf = o->nfactors ? o->nfactors : 1;
  eph_bench_config *c = calloc(ngc * nf, sizeof *c);
  if (!c) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  if (java) {
    if (java_configs(o, ti, c, nf, err)) {
      free(c);
      return -1;
    }
    *configs = c;
    *n = ngc * nf;
    return 0;
  }
  for (size_t g = 0; g < ngc; g++) {
    const char *gc = o->ngcs ? o->gcs[g] : "";
    uint64_t minheap = 0;
    bool cached = false;
    if (o->nfactors && eph_bench_minheap(o, &o->targets[ti], gc, &minheap, &cached, err)) {
      free(c);
      return -1;
    }
    if (o->nfactors && o->progress)
      o->progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_MINHEAP, .target = o->targets[ti].spec, .gc = gc,
                                        .minheap_bytes = minheap, .cached = cached},
                  o->progress_ctx);
    for (size_t f = 0; f < nf; f++) {
      eph_bench_config *x = &c[g * nf + f];
      snprintf(x->gc, sizeof x->gc, "%s", gc);
      snprintf(x->profile, sizeof x->profile, "%s", o->profile ? o->profile : "");
      if (o->nfactors) {
        x->factor = o->factors[f];
        x->heap_bytes = (uint64_t)ceil(o->factors[f] * (double)minheap);
      }
    }
  }
  *configs = c;
  *n = ngc * nf;
  return 0;
}

/* Mean timed wall time of a run, or NAN. */
static double run_wall(const eph_bench_run *run) {
  double s = 0;
  size_t n = 0;
  for (size_t i = 0; i < run->niters; i++)
    if (!run->iters[i].warmup) s += run->iters[i].wall_s, n++;
  return run->ok && n ? s / (double)n : NAN;
}

typedef struct progress {
  const eph_bench_options *o;
  size_t done, total;
  double t0;
} progress;

static void show(progress *p, const char *target, const char *label, size_t inv) {
  if (!p->o->progress) return;
  double el = eph_bench_clock(CLOCK_MONOTONIC) - p->t0;
  double left = -1;
  if (p->done) left = el / (double)p->done * (double)(p->total > p->done ? p->total - p->done : 0);
  p->o->progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_STEP, .done = p->done, .total = p->total,
                                       .target = target, .config = label, .invocation = inv, .eta_s = left},
                 p->o->progress_ctx);
}

int eph_bench_sweep(const eph_bench_options *o, eph_bench_results *r, eph_error *err) {
  r->ci_target = o->ci_target;
  eph_bench_config **cfg = calloc(o->ntargets, sizeof *cfg);
  size_t *ncfg = calloc(o->ntargets, sizeof *ncfg);
  int rc = -1;
  progress p = {.o = o};
  if (!cfg || !ncfg) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (size_t t = 0; t < o->ntargets; t++) {
    if (eph_bench_configs(o, t, &cfg[t], &ncfg[t], err)) goto out;
    p.total += ncfg[t] * o->invocations;
  }
  p.t0 = eph_bench_clock(CLOCK_MONOTONIC);
  for (size_t t = 0; t < o->ntargets; t++)
    for (size_t c = 0; c < ncfg[t]; c++) {
      char label[300];
      eph_bench_config_label(&cfg[t][c], label, sizeof label);
      double *walls = calloc(o->max_invocations + o->invocations + 1, sizeof *walls);
      size_t nw = 0;
      if (!walls) {
        eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
        goto out;
      }
      for (size_t inv = 0;; inv++) {
        if (inv >= o->invocations) { /* --ci: one more while too wide, up to the cap */
          eph_bench_stat s;
          eph_bench_stat_of(walls, nw, &s);
          if (!o->ci_target || inv >= o->max_invocations || nw < 2 || (s.mean > 0 && s.ci / s.mean <= o->ci_target))
            break;
          p.total++;
        }
        show(&p, o->targets[t].spec, label, inv);
        eph_bench_run run;
        if (eph_bench_spawn(o->exe, t, c, inv, &o->targets[t], &cfg[t][c], o->warmup, o->iterations, &run, err)) {
          free(walls);
          goto out;
        }
        p.done++;
        double w = run_wall(&run);
        if (!isnan(w)) walls[nw++] = w;
        if (eph_bench_results_add(r, &run, err)) {
          eph_bench_run_free(&run);
          free(walls);
          goto out;
        }
      }
      free(walls);
    }
  rc = 0;
out:
  if (o->progress) /* the steps are over, done or failed */
    o->progress(&(eph_bench_progress){.kind = EPH_BENCH_PROGRESS_FINISHED, .done = p.done, .total = p.total},
                o->progress_ctx);
  for (size_t t = 0; cfg && t < o->ntargets; t++) free(cfg[t]);
  free(cfg), free(ncfg);
  return rc;
}

