/*
 * compare.c — two analyses side by side (FiLiP Tables 1–2): per class, the
 * change in mean relative lifetime (percentage points of the run) and its
 * z-score against sampling noise; overall, the Kolmogorov–Smirnov distance
 * between the two Kaplan–Meier lifetime distributions (% of run) with its
 * 5 % critical value.  A change is flagged when both the z-score exceeds the
 * threshold (3 by default) and the KS distance exceeds the critical value —
 * more than sampling noise explains.
 *
 * "% of run" is on the allocation clock by default (bytes allocated, the
 * means estimated from the intervals: eph_life_est), which the profiler's
 * own overhead does not move; on the wall clock on request.  Two profiles
 * whose deaths fall at the same points of the clock (merlin and brute;
 * gc and finalization modes) are "identical": no change, whatever the
 * estimates made of their brackets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

double eph_km_distance(const eph_km *x, const eph_km *y) {
  double d = 0;
  size_t i = 0, j = 0;
  double sx = 1, sy = 1;
  while (i < x->n || j < y->n) {
    double t = j >= y->n || (i < x->n && x->time[i] <= y->time[j]) ? x->time[i] : y->time[j];
    while (i < x->n && x->time[i] <= t) sx = x->surv[i++];
    while (j < y->n && y->time[j] <= t) sy = y->surv[j++];
    if (fabs(sx - sy) > d) d = fabs(sx - sy);
  }
  return d;
}

static double ks_critical(double n, double m) { return n > 0 && m > 0 ? 1.358 * sqrt((n + m) / (n * m)) : INFINITY; }

/* A record's lifetime in % of the run on the comparison's clock. */
static double rel(const eph_analysis *a, const eph_life *l, eph_clock clock) {
  if (clock == EPH_CLOCK_REL) return l->t[EPH_CLOCK_REL];
  return a->run_bytes > 0 ? 100 * l->t[EPH_CLOCK_BYTES] / a->run_bytes : 0;
}

static bool group_km(const eph_analysis *a, uint32_t g, eph_km *km, eph_clock clock) {
  eph_km_obs *obs = malloc((a->nrecords ? a->nrecords : 1) * sizeof *obs);
  if (!obs) return false;
  size_t n = 0;
  for (size_t i = 0; i < a->nrecords; i++)
    if (g == UINT32_MAX || a->lives[i].group == g)
      obs[n++] = (eph_km_obs){rel(a, &a->lives[i], clock), a->lives[i].weight, !a->lives[i].censored};
  km->group = g;
  bool ok = eph_km_compute(km, obs, n);
  free(obs);
  return ok;
}

static const eph_group_row *find_row(const eph_analysis *a, const char *name) {
  for (size_t i = 0; i < a->nrows; i++)
    if (!strcmp(a->rows[i].name, name)) return &a->rows[i];
  return NULL;
}

void eph_compare_free(eph_compare *c) {
  if (!c) return;
  free(c->rows);
  free(c);
}

/* Mean lifetime, % of run, and its s.e. on the clock: the estimate from the
 * intervals (allocation clock) or the mean at the chosen end (wall). */
static void mean_of(const eph_analysis *a, const eph_life_est *e, const double *mean, const double *se, eph_clock clock,
                    double *m, double *s) {
  if (clock == EPH_CLOCK_REL) {
    *m = mean[EPH_CLOCK_REL], *s = se[EPH_CLOCK_REL];
    return;
  }
  double pct = a->run_bytes > 0 ? 100 / a->run_bytes : NAN;
  *m = e->weight > 0 ? e->mean_pct : mean[EPH_CLOCK_BYTES] * pct;
  *s = e->weight > 0 && isfinite(e->mean_pct_se) ? e->mean_pct_se : se[EPH_CLOCK_BYTES] * pct;
}

eph_compare *eph_compare_run(const eph_analysis *a, const eph_analysis *b, double z_threshold) {
  return eph_compare_run_on(a, b, z_threshold, EPH_CLOCK_BYTES);
}

eph_compare *eph_compare_run_on(const eph_analysis *a, const eph_analysis *b, double z_threshold, eph_clock clock) {
  eph_compare *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (clock != EPH_CLOCK_REL) clock = EPH_CLOCK_BYTES;
  c->a = a;
  c->b = b;
  c->clock = clock;
  c->z_threshold = z_threshold > 0 ? z_threshold : 3;
  eph_km ka = {0}, kb = {0};
  if (!group_km(a, UINT32_MAX, &ka, clock) || !group_km(b, UINT32_MAX, &kb, clock)) goto fail;
  c->ks = eph_km_distance(&ka, &kb);
  c->ks_critical = ks_critical((double)a->nrecords, (double)b->nrecords);
  eph_km_free(&ka);
  eph_km_free(&kb);
  double ma, mb, sa, sb;
  mean_of(a, &a->est, a->mean, a->mean_se, clock, &ma, &sa);
  mean_of(b, &b->est, b->mean, b->mean_se, clock, &mb, &sb);
  c->mean_a = ma, c->mean_b = mb;
  c->mean_delta_pp = mb - ma;
  double se = hypot(sa, sb);
  c->mean_z = se > 0 ? c->mean_delta_pp / se : NAN;
  c->identical = c->ks == 0 && a->nrecords == b->nrecords;
  c->flagged = !c->identical && isfinite(c->mean_z) && fabs(c->mean_z) > c->z_threshold && c->ks > c->ks_critical;
  c->rows = calloc(a->nrows + b->nrows + 1, sizeof *c->rows);
  if (!c->rows) goto fail;
  for (int side = 0; side < 2; side++) {
    const eph_analysis *x = side ? b : a;
    for (size_t i = 0; i < x->nrows; i++) {
      const char *name = x->rows[i].name;
      if (side && find_row(a, name)) continue; /* already paired from A */
      const eph_group_row *ra = find_row(a, name), *rb = find_row(b, name);
      eph_compare_row *r = &c->rows[c->nrows++];
      r->name = name;
      r->in_a = ra != NULL;
      r->in_b = rb != NULL;
      r->pct_a = ra ? ra->pct_objects : 0;
      r->pct_b = rb ? rb->pct_objects : 0;
      r->mean_a = r->mean_b = r->se_a = r->se_b = NAN;
      if (ra) mean_of(a, &ra->est, ra->mean, ra->mean_se, clock, &r->mean_a, &r->se_a);
      if (rb) mean_of(b, &rb->est, rb->mean, rb->mean_se, clock, &r->mean_b, &r->se_b);
      r->short_a = ra && ra->short_lived;
      r->short_b = rb && rb->short_lived;
      r->delta_pp = r->mean_b - r->mean_a;
      r->ratio = r->mean_a > 0 ? r->mean_b / r->mean_a : NAN;
      double s = hypot(r->se_a, r->se_b);
      r->z = s > 0 ? r->delta_pp / s : NAN; /* no spread in either sample: no noise estimate */
      r->ks = NAN;
      if (ra && rb) {
        eph_km x1 = {0}, x2 = {0};
        if (!group_km(a, ra->id, &x1, clock) || !group_km(b, rb->id, &x2, clock)) {
          eph_km_free(&x1);
          eph_km_free(&x2);
          goto fail;
        }
        r->ks = eph_km_distance(&x1, &x2);
        r->identical = r->ks == 0 && ra->nrecords == rb->nrecords;
        r->flagged = !r->identical && isfinite(r->z) && fabs(r->z) > c->z_threshold &&
                     r->ks > ks_critical((double)ra->nrecords, (double)rb->nrecords);
        eph_km_free(&x1);
        eph_km_free(&x2);
      }
    }
  }
  return c;
fail:
  eph_km_free(&ka);
  eph_km_free(&kb);
  eph_compare_free(c);
  return NULL;
}
