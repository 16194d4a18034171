/*
 * intervals.c — lifetimes estimated from what each death really tells
 * (turnbull.h), per group and overall, and the run's resolution.
 *
 * A death found at a collection lies in (the last point the object was
 * seen alive, that collection].  gc mode records the lower end; for
 * finalization mode it is rebuilt from the run's collections: a scavenge
 * that finds an object dead examined it at the collection before (if it
 * came after the birth); a full GC, at the last full GC before it (an old
 * object is not examined by scavenges, and a young one may have survived
 * them dead, kept by its pretenured ephemeron).
 *
 * Nepotism: a scavenge treats old objects as roots, dead ones too, so a
 * young object only a dead old object refers to survives it (and is often
 * promoted) although dead.  A lower end at a scavenge is therefore not a
 * bound for a death that only a full GC found; a full GC marks from the
 * roots alone, so surviving one is proof of life.  The means at the lower
 * end (a->mean_lo, rows' mean_lo) use such proof only: the last full GC
 * survived after the birth, else the birth.  The estimator uses either
 * (opts.nepotism_safe).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

void eph_gc_table_free(eph_gc_table *t) {
  free(t->alloc);
  free(t->full);
  free(t->last_full);
}

bool eph_gc_table_build(eph_gc_table *t, const eph_file *p) {
  memset(t, 0, sizeof *t);
  size_t n = 0;
  for (size_t i = 0; i < p->ngcs; i++)
    if (p->gcs[i].index > n && p->gcs[i].index < ((uint64_t)1 << 31)) n = (size_t)p->gcs[i].index;
  t->n = n;
  t->alloc = calloc(n + 1, sizeof *t->alloc);
  t->full = calloc(n + 1, sizeof *t->full);
  t->last_full = calloc(n + 1, sizeof *t->last_full);
  if (!t->alloc || !t->full || !t->last_full) return false;
  for (size_t i = 0; i < p->ngcs; i++) {
    uint64_t k = p->gcs[i].index;
    if (k < 1 || k > n) continue;
    t->alloc[k] = p->gcs[i].allocated;
    t->full[k] = p->gcs[i].kind == EPH_GC_FULL;
  }
  for (size_t k = 1; k <= n; k++) t->last_full[k] = t->full[k] ? (uint32_t)k : t->last_full[k - 1];
  return true;
}

eph_bracket eph_bracket_of(const eph_iv *v, const eph_gc_table *t) {
  eph_bracket b = {.kind = EPH_TB_INTERVAL, .lo = v->lo, .hi = v->hi, .safe_lo = v->lo};
  switch (v->kind) {
  case EPH_IV_POINT: b.kind = EPH_TB_POINT; break;
  case EPH_IV_CENSORED: b.kind = EPH_TB_CENSORED; break;
  case EPH_IV_TRUSTED: break;
  case EPH_IV_FULL: {
    b.by_full = true;
    if (v->gc == 0 || v->gc > t->n || t->full[v->gc]) break; /* at birth, at a full GC, or no log: as recorded */
    uint32_t f = t->last_full[v->gc];
    double back = f > v->gc_birth ? (double)(t->alloc[v->gc] - t->alloc[f]) : INFINITY;
    b.safe_lo = b.lo - back > 0 ? b.lo - back : 0;
    b.suspect = b.safe_lo < b.lo;
    break;
  }
  case EPH_IV_FINALIZED: {
    uint32_t k = v->gc;
    if (k == 0 || k > t->n) { /* no log to rebuild it from: the death as seen */
      b.kind = EPH_TB_POINT, b.lo = b.safe_lo = b.hi;
      break;
    }
    /* back from the finding collection k to collection j, on the allocation clock */
#define BACK(j) ((j) > v->gc_birth && (j) < k && (double)(t->alloc[k] - t->alloc[j]) < b.hi ? b.hi - (double)(t->alloc[k] - t->alloc[j]) : 0)
    b.by_full = t->full[k];
    if (!t->full[k]) { /* a scavenge found it: young, so the collection before examined it too */
      b.lo = b.safe_lo = BACK(k - 1);
      break;
    }
    /* a full GC found it: proven alive at the last full GC before only.  A
     * scavenge treats a pretenured ephemeron as a root, so its young key
     * survives scavenges dead and is promoted (agents: 886 K of 6.9 M
     * objects died before the first collection after their birth that
     * they "survived"): no scavenge is a lower end here */
    b.lo = b.safe_lo = BACK(t->last_full[k - 1]);
#undef BACK
    break;
  }
  }
  if (b.lo > b.hi) b.lo = b.hi;
  if (b.safe_lo > b.lo) b.safe_lo = b.lo;
  return b;
}

static void resolution(eph_analysis *a, const eph_gc_table *t) {
  const eph_file *p = a->profile;
  eph_resolution *r = &a->res;
  r->have_gc_log = t->n > 0;
  r->scavenges = p->complete ? p->totals.scavenges : 0;
  r->full_gcs = p->complete ? p->totals.full_gcs : 0;
  uint64_t ns = 0, nf = 0, prev_s = 0, prev_f = 0;
  double ds = 0, df = 0;
  for (size_t k = 1; k <= t->n; k++) {
    if (t->full[k]) {
      df += (double)(t->alloc[k] - prev_f), prev_f = t->alloc[k], nf++;
    } else {
      if (ns) ds += (double)(t->alloc[k] - prev_s);
      prev_s = t->alloc[k], ns++;
    }
  }
  if (ns > r->scavenges) r->scavenges = ns;
  if (nf > r->full_gcs) r->full_gcs = nf;
  r->scavenge_interval = ns >= 2 ? ds / (double)(ns - 1) : ns == 1 ? (double)prev_s : NAN;
  r->full_interval = nf >= 1 ? df / (double)nf : NAN;
  r->too_few = r->interval && r->scavenges < 3;
}

/* est's figures from a fit's result on a run of run_bytes. */
static void fill(eph_life_est *e, eph_tb_result *res, double run_bytes, double W) {
  double pct = run_bytes > 0 ? 100 / run_bytes : NAN;
  e->weight = W;
  /* a quantile read in the cell that holds the run's end may pass it */
  if (res->est.median > run_bytes) res->est.median = run_bytes;
  if (res->est.p90 > run_bytes) res->est.p90 = run_bytes;
  e->mean_bytes = res->est.mean;
  e->median_bytes = res->est.median;
  e->p90_bytes = res->est.p90;
  e->mean_pct = res->est.mean * pct;
  e->median_pct = res->est.median * pct;
  e->p90_pct = res->est.p90 * pct;
  e->short_share = res->est.share;
  e->mean_pct_se = res->nboot ? res->se.mean * pct : NAN;
  e->short_share_se = res->nboot ? res->se.share : NAN;
  e->converged = res->converged;
  e->nboot = res->nboot;
}

/* Resolution, against the report's targets (5 points of short-lived share,
 * 0.5 points of % of run in the mean).  A class is resolved when the run
 * had collections enough, when the deaths only full GCs found (their
 * brackets span a full-GC interval, which the spread of births cannot
 * narrow) could move neither figure by that much (e->full_gc_mean_pp,
 * e->full_gc_short), and when the choice of lower end for nepotism
 * suspects does not either: */
static bool sensitive(const eph_tb_est *x, const eph_tb_est *y, double run) {
  return fabs(x->share - y->share) > 0.05 || fabs(x->mean - y->mean) / run * 100 > 0.5;
}

/* Fits group g (UINT32_MAX-free index; `alt` the fit with the other lower
 * end, or NULL when no record of the group is a nepotism suspect). */
static bool estimate_one(eph_analysis *a, eph_turnbull *tb, eph_turnbull *alt, double threshold, int nboot, uint64_t seed,
                         double run, double full_share, eph_life_est *e, size_t g) {
  eph_tb_result res;
  if (!eph_tb_run(tb, threshold, nboot, seed, &res)) return false;
  fill(e, &res, run, tb->W);
  e->F = a->est_F[g] = res.F;
  a->est_Flo[g] = res.F_lo;
  a->est_Fhi[g] = res.F_hi;
  res.F = res.F_lo = res.F_hi = NULL;
  e->found_by_full = full_share;
  e->last_death_bytes = 0;
  for (size_t u = 0; u < tb->nobs; u++) {
    const eph_tb_obs *o = &tb->obs[u];
    double up = o->b < a->nest_edges ? a->est_edges[o->b] : INFINITY;
    if (o->kind != EPH_TB_CENSORED && up > e->last_death_bytes) e->last_death_bytes = up;
  }
  e->alt_mean_pct = e->mean_pct, e->alt_short_share = e->short_share;
  if (alt && alt->nobs) {
    eph_tb_result r2;
    if (!eph_tb_run(alt, threshold, 0, seed, &r2)) {
      eph_tb_result_free(&res);
      return false;
    }
    e->alt_mean_pct = r2.est.mean / run * 100;
    e->alt_short_share = r2.est.share;
    e->nepotism_sensitive = sensitive(&res.est, &r2.est, run);
    eph_tb_result_free(&r2);
  }
  eph_tb_result_free(&res);
  return true;
}

bool eph_intervals_estimate(eph_analysis *a, eph_lifetimes *lt) {
  eph_gc_table t;
  size_t ngroups = 0, ne = 0;
  eph_turnbull *tb = NULL; /* [0, ngroups]: the estimate's (ngroups: all objects); then the other lower end's */
  double *edges = NULL, *fullw = NULL, *deathw = NULL, *wide_mean = NULL, *wide_short = NULL;
  bool *suspects = NULL;
  bool ok = eph_gc_table_build(&t, a->profile);
  for (size_t i = 0; i < a->nrecords; i++)
    if (a->lives[i].group + (size_t)1 > ngroups) ngroups = a->lives[i].group + (size_t)1;
  size_t nt = ngroups + 1;
  double run = a->run_bytes > 0 ? a->run_bytes : 1;
  double threshold = a->opts.short_threshold_pct / 100 * run;
  if (ok) ok = (edges = eph_tb_grid(16, run, 32, threshold, &ne)) != NULL;
  a->est_edges = edges; /* the analysis owns the grid from here */
  a->nest_edges = ne;
  if (ok) ok = (tb = calloc(2 * nt, sizeof *tb)) && (a->group_est = calloc(nt, sizeof *a->group_est)) &&
               (fullw = calloc(nt, sizeof *fullw)) && (deathw = calloc(nt, sizeof *deathw)) &&
               (suspects = calloc(nt, sizeof *suspects)) && (a->est_F = calloc(nt, sizeof *a->est_F)) &&
               (wide_mean = calloc(nt, sizeof *wide_mean)) && (wide_short = calloc(nt, sizeof *wide_short)) &&
               (a->est_Flo = calloc(nt, sizeof *a->est_Flo)) && (a->est_Fhi = calloc(nt, sizeof *a->est_Fhi));
  a->ngroup_est = ngroups;
  double suspect_w = 0, interval_w = 0;
  bool any_interval = false;
  for (size_t i = 0; ok && i < a->nrecords; i++) {
    const eph_life *l = &a->lives[i];
    eph_bracket b = eph_bracket_of(&lt->iv[i], &t);
    const size_t gs[2] = {l->group, ngroups};
    double lo = a->opts.nepotism_safe ? b.safe_lo : b.lo, other = a->opts.nepotism_safe ? b.lo : b.safe_lo;
    for (int k = 0; ok && k < 2; k++) {
      size_t g = gs[k];
      eph_turnbull *x = &tb[g], *y = &tb[nt + g];
      if (!x->slot) ok = eph_tb_init(x, edges, ne) && eph_tb_init(y, edges, ne);
      ok = ok && eph_tb_add(x, b.kind, lo, b.hi, l->weight) && eph_tb_add(y, b.kind, other, b.hi, l->weight);
      if (b.kind != EPH_TB_CENSORED) {
        deathw[g] += l->weight;
        if (b.by_full) {
          fullw[g] += l->weight;
          /* what only a full GC saw, the births' spread cannot narrow:
           * its share of the mean and of the short-lived share */
          wide_mean[g] += l->weight * (b.hi - b.safe_lo);
          if (b.safe_lo < threshold && b.hi > threshold) wide_short[g] += l->weight;
        }
      }
      suspects[g] |= b.suspect;
    }
    if (b.kind == EPH_TB_INTERVAL) {
      any_interval = true;
      interval_w += l->weight;
      if (b.suspect) suspect_w += l->weight, a->res.nepotism_suspects++;
    }
    /* the means at the lower end: proven bounds only (wall clocks scaled
     * like the allocation clock between birth and the recorded lower end) */
    if (b.suspect && b.lo > 0) {
      double f = b.safe_lo / b.lo - 1, w = l->weight;
      double lo_s = (double)(lt->walls[i][2] > lt->walls[i][0] ? lt->walls[i][2] - lt->walls[i][0] : 0);
      double d[EPH_NCLOCKS] = {f * b.lo, f * lo_s / 1e9, a->run_wall_s > 0 ? f * lo_s / (a->run_wall_s * 1e9) * 100 : 0};
      for (int c = 0; c < EPH_NCLOCKS; c++) {
        lt->sum_lo[c] += w * d[c];
        a->lo_sum[l->group][c] += w * d[c];
      }
    }
  }
  free(lt->iv); /* the largest thing here: gone before the fits */
  lt->iv = NULL;
  a->res.interval = any_interval;
  a->res.nepotism_share = interval_w > 0 ? suspect_w / interval_w : 0;
  resolution(a, &t);
  for (int c = 0; c < EPH_NCLOCKS; c++) a->mean_lo[c] = lt->wsum > 0 ? lt->sum_lo[c] / lt->wsum : NAN;
  /* the fits: bootstrap for groups of at least the "most allocated" share */
  double total = ok ? tb[ngroups].W : 0;
  for (size_t g = 0; ok && g < nt; g++) {
    if (!tb[g].slot) continue;
    if (a->opts.progress) a->opts.progress("lifetime estimates", (double)g / (double)nt, a->opts.progress_ctx);
    bool big = g == ngroups || (total > 0 && 100 * tb[g].W / total >= a->opts.most_allocated_pct);
    eph_life_est *e = g == ngroups ? &a->est : &a->group_est[g];
    ok = estimate_one(a, &tb[g], suspects[g] ? &tb[nt + g] : NULL, threshold, big ? a->opts.nboot : 0, 1000 + g, run,
                      deathw[g] > 0 ? fullw[g] / deathw[g] : 0, e, g);
    if (ok) {
      e->full_gc_mean_pp = tb[g].W > 0 ? wide_mean[g] / tb[g].W / run * 100 : 0;
      e->full_gc_short = tb[g].W > 0 ? wide_short[g] / tb[g].W : 0;
      e->resolved = !a->res.too_few && !e->nepotism_sensitive && e->full_gc_mean_pp <= 0.5 && e->full_gc_short <= 0.05;
    }
    eph_tb_free(&tb[g]);
    eph_tb_free(&tb[nt + g]);
  }
  /* all objects are resolved only when every class of the "most allocated"
   * share is: a mixture's error is its unresolved classes' */
  for (size_t g = 0; ok && g < ngroups; g++)
    if (a->group_est[g].weight > 0 && total > 0 && 100 * a->group_est[g].weight / total >= a->opts.most_allocated_pct &&
        !a->group_est[g].resolved)
      a->est.resolved = false;
  for (size_t g = 0; tb && g < 2 * nt; g++) eph_tb_free(&tb[g]);
  free(tb);
  free(fullw);
  free(deathw);
  free(wide_mean);
  free(wide_short);
  free(suspects);
  eph_gc_table_free(&t);
  return ok;
}

/* One curve from the estimates of group index g (ngroup_est: all objects). */
static bool curve(eph_analysis *a, eph_km *km, size_t g, double last_death) {
  const double *F = a->est_F[g], *lo = a->est_Flo[g], *hi = a->est_Fhi[g];
  size_t nrec = km->nrecords;
  uint32_t group = km->group;
  eph_km_free(km);
  km->group = group;
  km->nrecords = nrec;
  if (!F) return true;
  size_t n = 0, cap = a->nest_edges ? a->nest_edges : 1;
  km->time = malloc(cap * sizeof(double));
  km->surv = malloc(cap * sizeof(double));
  km->lo = malloc(cap * sizeof(double));
  km->hi = malloc(cap * sizeof(double));
  km->at_risk = malloc(cap * sizeof(double));
  if (!km->time || !km->surv || !km->lo || !km->hi || !km->at_risk) return false;
  bool rel = a->opts.km_clock == EPH_CLOCK_REL;
  double prev = 0;
  for (size_t i = 0; i < a->nest_edges && a->est_edges[i] <= a->run_bytes * 1.000001 && a->est_edges[i] <= last_death; i++) {
    if (F[i] <= prev + 1e-12) continue; /* a step only where mass is */
    prev = F[i];
    km->time[n] = rel ? 100 * a->est_edges[i] / a->run_bytes : a->est_edges[i];
    km->surv[n] = 1 - F[i] < 0 ? 0 : 1 - F[i];
    km->lo[n] = hi ? 1 - hi[i] : km->surv[n];
    km->hi[n] = lo ? 1 - lo[i] : km->surv[n];
    km->at_risk[n] = km->surv[n] * (double)nrec;
    km->max_time = km->time[n];
    n++;
  }
  km->n = n;
  return true;
}

bool eph_intervals_curves(eph_analysis *a) {
  if (!a->res.interval || !a->est_F || (a->opts.km_clock != EPH_CLOCK_REL && a->opts.km_clock != EPH_CLOCK_BYTES)) return true;
  a->km_estimated = true;
  for (size_t k = 0; k < a->nkm; k++) {
    eph_km *km = &a->km[k];
    size_t g = km->group == UINT32_MAX ? a->ngroup_est : km->group;
    if (g > a->ngroup_est) return false;
    const eph_life_est *e = g == a->ngroup_est ? &a->est : &a->group_est[g];
    if (!curve(a, km, g, e->last_death_bytes)) return false;
  }
  return true;
}
