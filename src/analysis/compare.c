/*
 * compare.c — two analyses side by side (FiLiP Tables 1–2): per class, the
 * change in mean relative lifetime (percentage points of the run) and its
 * z-score against sampling noise; overall, the Kolmogorov–Smirnov distance
 * between the two Kaplan–Meier lifetime distributions (% of run) with its
 * 5 % critical value.  A change is flagged when both the z-score exceeds the
 * threshold (3 by default) and the KS distance exceeds the critical value —
 * more than sampling noise explains.
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

static bool group_km(const eph_analysis *a, uint32_t g, eph_km *km) {
  eph_km_obs *obs = malloc((a->nrecords ? a->nrecords : 1) * sizeof *obs);
  if (!obs) return false;
  size_t n = 0;
  for (size_t i = 0; i < a->nrecords; i++)
    if (g == UINT32_MAX || a->lives[i].group == g)
      obs[n++] = (eph_km_obs){a->lives[i].t[EPH_CLOCK_REL], a->lives[i].weight, !a->lives[i].censored};
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

eph_compare *eph_compare_run(const eph_analysis *a, const eph_analysis *b, double z_threshold) {
  eph_compare *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->a = a;
  c->b = b;
  c->z_threshold = z_threshold > 0 ? z_threshold : 3;
  eph_km ka = {0}, kb = {0};
  if (!group_km(a, UINT32_MAX, &ka) || !group_km(b, UINT32_MAX, &kb)) goto fail;
  c->ks = eph_km_distance(&ka, &kb);
  c->ks_critical = ks_critical((double)a->nrecords, (double)b->nrecords);
  eph_km_free(&ka);
  eph_km_free(&kb);
  c->mean_delta_pp = b->mean[EPH_CLOCK_REL] - a->mean[EPH_CLOCK_REL];
  double se = hypot(a->mean_se[EPH_CLOCK_REL], b->mean_se[EPH_CLOCK_REL]);
  c->mean_z = se > 0 ? c->mean_delta_pp / se : NAN;
  c->flagged = isfinite(c->mean_z) && fabs(c->mean_z) > c->z_threshold && c->ks > c->ks_critical;
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
      r->mean_a = ra ? ra->mean[EPH_CLOCK_REL] : NAN;
      r->mean_b = rb ? rb->mean[EPH_CLOCK_REL] : NAN;
      r->se_a = ra ? ra->mean_se[EPH_CLOCK_REL] : NAN;
      r->se_b = rb ? rb->mean_se[EPH_CLOCK_REL] : NAN;
      r->short_a = ra && ra->short_lived;
      r->short_b = rb && rb->short_lived;
      r->delta_pp = r->mean_b - r->mean_a;
      r->ratio = r->mean_a > 0 ? r->mean_b / r->mean_a : NAN;
      double s = hypot(r->se_a, r->se_b);
      r->z = s > 0 ? r->delta_pp / s : NAN; /* no spread in either sample: no noise estimate */
      r->ks = NAN;
      if (ra && rb) {
        eph_km x1 = {0}, x2 = {0};
        if (!group_km(a, ra->id, &x1) || !group_km(b, rb->id, &x2)) {
          eph_km_free(&x1);
          eph_km_free(&x2);
          goto fail;
        }
        r->ks = eph_km_distance(&x1, &x2);
        r->flagged = isfinite(r->z) && fabs(r->z) > c->z_threshold && r->ks > ks_critical((double)ra->nrecords, (double)rb->nrecords);
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
