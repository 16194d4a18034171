/*
 * summarize.c — from runs to one row per target and configuration:
 * statistics over invocations, LBO over the target's configurations,
 * simple and metered latency over its timed iterations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

double eph_bench_lbo(const double *total, const double *gc, size_t n, double *lbo) {
  double base = INFINITY;
  for (size_t i = 0; i < n; i++) {
    double distilled = total[i] - (gc[i] > 0 ? gc[i] : 0);
    if (distilled < base) base = distilled;
  }
  if (!n || !(base > 0) || isinf(base)) {
    for (size_t i = 0; i < n; i++) lbo[i] = 0;
    return 0;
  }
  for (size_t i = 0; i < n; i++) lbo[i] = total[i] / base;
  return base;
}

void eph_bench_report_free(eph_bench_report *rep) {
  free(rep->rows);
  free(rep->geomean);
  memset(rep, 0, sizeof *rep);
}

static int cmp_run(const void *a, const void *b) {
  const eph_bench_run *x = *(eph_bench_run *const *)a, *y = *(eph_bench_run *const *)b;
  if (x->target_index != y->target_index) return x->target_index < y->target_index ? -1 : 1;
  if (x->config_index != y->config_index) return x->config_index < y->config_index ? -1 : 1;
  return (x->invocation > y->invocation) - (x->invocation < y->invocation);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void latency_of(double *v, size_t n, eph_bench_latency *out) {
  out->n = n;
  qsort(v, n, sizeof *v, cmp_double);
  for (int p = 0; p < EPH_BENCH_NPCT; p++) out->ms[p] = eph_bench_percentile(v, n, eph_bench_pcts[p]) / 1e6;
}

/* Latency of the timed iterations of the successful runs among runs[0..n). */
static int latencies(eph_bench_run **runs, size_t n, eph_bench_summary *row) {
  size_t total = 0;
  for (size_t r = 0; r < n; r++)
    for (size_t i = 0; runs[r]->ok && i < runs[r]->niters; i++)
      if (!runs[r]->iters[i].warmup) total += runs[r]->iters[i].nevents;
  if (!total) return 0;
  double *v[3];
  for (int k = 0; k < 3; k++) v[k] = malloc(total * sizeof(double));
  if (!v[0] || !v[1] || !v[2]) {
    for (int k = 0; k < 3; k++) free(v[k]);
    return -1;
  }
  size_t at = 0;
  for (size_t r = 0; r < n; r++)
    for (size_t i = 0; runs[r]->ok && i < runs[r]->niters; i++) {
      const eph_bench_iter *it = &runs[r]->iters[i];
      if (it->warmup || !it->nevents) continue;
      for (size_t e = 0; e < it->nevents; e++) v[0][at + e] = (double)(it->events[e].end_ns - it->events[e].start_ns);
      eph_bench_metered(it->events, it->nevents, 100000000u, v[1] + at);
      eph_bench_metered(it->events, it->nevents, UINT64_MAX, v[2] + at);
      at += it->nevents;
    }
  latency_of(v[0], total, &row->simple);
  latency_of(v[1], total, &row->metered_100ms);
  latency_of(v[2], total, &row->metered_full);
  for (int k = 0; k < 3; k++) free(v[k]);
  return 0;
}

/* Fills the row's statistics from its successful runs. */
static int row_stats(eph_bench_run **runs, size_t n, eph_bench_summary *row) {
  enum { WALL, TASK, GC, GCCPU, MUT, COUNT, PEAK, ALLOC, NQ };
  double *q[NQ];
  bool nomem = false;
  for (int k = 0; k < NQ; k++) nomem |= !(q[k] = calloc(n ? n : 1, sizeof(double)));
  if (nomem) {
    for (int k = 0; k < NQ; k++) free(q[k]);
    return -1;
  }
  size_t m = 0;
  double warm = 0;
  row->have_gc = true;
  for (size_t r = 0; r < n; r++) {
    const eph_bench_run *run = runs[r];
    if (!run->ok) {
      if (!row->failed++) snprintf(row->first_error, sizeof row->first_error, "%s", run->error);
      continue;
    }
    double sum[NQ] = {0};
    size_t timed = 0;
    for (size_t i = 0; i < run->niters; i++) {
      const eph_bench_iter *it = &run->iters[i];
      if (it->warmup) {
        warm += it->wall_s;
        row->warmups++;
        continue;
      }
      timed++;
      double vals[NQ] = {it->wall_s,           it->task_s,           it->gc_s,
                         it->gc_cpu_s,         it->mutator_s,        (double)it->gc_count,
                         (double)it->peak_bytes, (double)it->allocated_bytes};
      for (int k = 0; k < NQ; k++) sum[k] += vals[k];
      if (it->gc_s < 0) row->have_gc = false;
    }
    if (!timed) continue;
    for (int k = 0; k < NQ; k++) q[k][m] = sum[k] / (double)timed;
    m++;
  }
  row->invocations = m;
  eph_bench_stat *dst[NQ] = {&row->wall,    &row->task,     &row->gc,   &row->gc_cpu,
                             &row->mutator, &row->gc_count, &row->peak, &row->allocated};
  for (int k = 0; k < NQ; k++) eph_bench_stat_of(q[k], m, dst[k]);
  if (!m) row->have_gc = false;
  row->warmup_wall = row->warmups ? warm / (double)row->warmups : 0;
  for (int k = 0; k < NQ; k++) free(q[k]);
  return latencies(runs, n, row);
}

/* LBO of rows[0..n), one target's configurations. */
static int lbo_rows(eph_bench_summary *rows, size_t n) {
  double *t = malloc(2 * n * sizeof *t), *g = malloc(2 * n * sizeof *g), *l = malloc(2 * n * sizeof *l);
  if (!t || !g || !l) {
    free(t), free(g), free(l);
    return -1;
  }
  for (int clock = 0; clock < 2; clock++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (!rows[i].invocations) continue;
      t[m] = clock ? rows[i].task.mean : rows[i].wall.mean;
      g[m] = !rows[i].have_gc ? 0 : clock ? rows[i].gc_cpu.mean : rows[i].gc.mean;
      m++;
    }
    double base = eph_bench_lbo(t, g, m, l);
    m = 0;
    for (size_t i = 0; i < n; i++) {
      if (!rows[i].invocations) continue;
      const eph_bench_stat *s = clock ? &rows[i].task : &rows[i].wall;
      double v = l[m++], lo = base > 0 ? (s->mean - s->ci) / base : 0, hi = base > 0 ? (s->mean + s->ci) / base : 0;
      if (clock) rows[i].lbo_task = v, rows[i].lbo_task_lo = lo, rows[i].lbo_task_hi = hi;
      else rows[i].lbo_wall = v, rows[i].lbo_wall_lo = lo, rows[i].lbo_wall_hi = hi;
    }
  }
  free(t), free(g), free(l);
  return 0;
}

static bool same_config(const eph_bench_config *a, const eph_bench_geomean *g) {
  return a->factor == g->factor && !strcmp(a->gc, g->gc) && !strcmp(a->profile, g->profile);
}

/* Figure 1's points: per configuration, the geometric mean of the LBOs of
 * the targets that ran it (log-space means). */
static int geomeans(eph_bench_report *out) {
  out->geomean = calloc(out->nrows ? out->nrows : 1, sizeof *out->geomean);
  if (!out->geomean) return -1;
  for (size_t i = 0; i < out->nrows; i++)
    if (!i || out->rows[i].target_index != out->rows[i - 1].target_index) out->ntargets++;
  for (size_t i = 0; i < out->nrows; i++) {
    const eph_bench_summary *r = &out->rows[i];
    size_t g = 0;
    while (g < out->ngeomean && !same_config(&r->config, &out->geomean[g])) g++;
    if (g < out->ngeomean) continue; /* done with its first row */
    eph_bench_geomean *m = &out->geomean[out->ngeomean++];
    snprintf(m->gc, sizeof m->gc, "%s", r->config.gc);
    snprintf(m->profile, sizeof m->profile, "%s", r->config.profile);
    m->factor = r->config.factor;
    double sum[6] = {0};
    for (size_t k = i; k < out->nrows; k++) {
      const eph_bench_summary *x = &out->rows[k];
      if (!same_config(&x->config, m) || !x->invocations || !(x->lbo_wall > 0) || !(x->lbo_task > 0)) continue;
      const double v[6] = {x->lbo_wall, x->lbo_wall_lo, x->lbo_wall_hi, x->lbo_task, x->lbo_task_lo, x->lbo_task_hi};
      for (int q = 0; q < 6; q++) sum[q] += log(v[q] > 1e-9 ? v[q] : 1e-9);
      m->ntargets++;
    }
    m->complete = m->ntargets == out->ntargets;
    if (m->ntargets) {
      double *dst[6] = {&m->lbo_wall, &m->lbo_wall_lo, &m->lbo_wall_hi, &m->lbo_task, &m->lbo_task_lo, &m->lbo_task_hi};
      for (int q = 0; q < 6; q++) *dst[q] = exp(sum[q] / (double)m->ntargets);
    }
  }
  return 0;
}

int eph_bench_summarize(const eph_bench_results *r, eph_bench_report *out, eph_error *err) {
  memset(out, 0, sizeof *out);
  out->ci_target = r->ci_target;
  eph_bench_run **sorted = malloc((r->nruns ? r->nruns : 1) * sizeof *sorted);
  out->rows = calloc(r->nruns ? r->nruns : 1, sizeof *out->rows);
  if (!sorted || !out->rows) goto nomem;
  for (size_t i = 0; i < r->nruns; i++) sorted[i] = &r->runs[i];
  qsort(sorted, r->nruns, sizeof *sorted, cmp_run);
  for (size_t i = 0; i < r->nruns;) {
    size_t j = i;
    while (j < r->nruns && sorted[j]->target_index == sorted[i]->target_index &&
           sorted[j]->config_index == sorted[i]->config_index)
      j++;
    eph_bench_summary *row = &out->rows[out->nrows++];
    row->target_index = sorted[i]->target_index;
    row->config_index = sorted[i]->config_index;
    row->target = sorted[i]->target;
    row->config = sorted[i]->config;
    if (row_stats(sorted + i, j - i, row)) goto nomem;
    if (row->invocations && row->wall.mean > 0 && row->wall.ci / row->wall.mean > 0.03) out->wide_ci++;
    i = j;
  }
  for (size_t i = 0; i < out->nrows;) {
    size_t j = i;
    while (j < out->nrows && out->rows[j].target_index == out->rows[i].target_index) j++;
    if (lbo_rows(out->rows + i, j - i)) goto nomem;
    i = j;
  }
  if (geomeans(out)) goto nomem;
  free(sorted);
  return 0;
nomem:
  free(sorted);
  eph_bench_report_free(out);
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
  return -1;
}
