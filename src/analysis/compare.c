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

void eph_compare_text(FILE *o, const eph_compare *c) {
  char b1[32], b2[32];
  fprintf(o, "A: %s  (mode %s, sampling %s, %zu records, run %s)\n", c->a->title, c->a->mode, c->a->sample ? c->a->sample : "all",
          c->a->nrecords, eph_fmt_life(b1, sizeof b1, c->a->run_wall_s, EPH_CLOCK_SECONDS));
  fprintf(o, "B: %s  (mode %s, sampling %s, %zu records, run %s)\n", c->b->title, c->b->mode, c->b->sample ? c->b->sample : "all",
          c->b->nrecords, eph_fmt_life(b2, sizeof b2, c->b->run_wall_s, EPH_CLOCK_SECONDS));
  fprintf(o, "\nOverall mean lifetime: %s -> %s of run (%+.2f pp, z = %.1f)\n",
          eph_fmt_life(b1, sizeof b1, c->a->mean[EPH_CLOCK_REL], EPH_CLOCK_REL),
          eph_fmt_life(b2, sizeof b2, c->b->mean[EPH_CLOCK_REL], EPH_CLOCK_REL), c->mean_delta_pp, c->mean_z);
  fprintf(o, "Distance between the lifetime distributions (KS, Kaplan-Meier, %% of run): %.3f (5 %% noise level %.3f)%s\n",
          c->ks, c->ks_critical, c->flagged ? "  ** CHANGED beyond sampling noise" : "  (within sampling noise)");
  fprintf(o, "\nPer class (FiLiP Tables 1-2: change in mean lifetime, percentage points of the run; ! = beyond noise: |z| > %g and KS > 5 %% level)\n",
          c->z_threshold);
  fprintf(o, "  %-26s %7s %7s %10s %10s %10s %8s %7s %6s  %s\n", "class", "%objs A", "%objs B", "mean A", "mean B", "change",
          "z", "KS", "", "lived A -> B");
  for (size_t i = 0; i < c->nrows; i++) {
    const eph_compare_row *r = &c->rows[i];
    if (r->pct_a < 0.1 && r->pct_b < 0.1 && !r->flagged && i >= 25) continue;
    fprintf(o, "  %-26.26s %6.1f%% %6.1f%% %10s %10s", r->name, r->pct_a, r->pct_b,
            eph_fmt_life(b1, sizeof b1, r->mean_a, EPH_CLOCK_REL), eph_fmt_life(b2, sizeof b2, r->mean_b, EPH_CLOCK_REL));
    if (r->in_a && r->in_b)
      fprintf(o, " %+8.2fpp %8.1f %7.3f %6s  %s -> %s\n", r->delta_pp, r->z, r->ks, r->flagged ? "!" : "",
              r->short_a ? "short" : "long", r->short_b ? "short" : "long");
    else fprintf(o, " %10s\n", r->in_a ? "(only in A)" : "(only in B)");
  }
}

void eph_compare_csv(FILE *o, const eph_compare *c) {
  fprintf(o, "class,in_a,in_b,pct_objects_a,pct_objects_b,mean_rel_pct_a,mean_rel_pct_b,se_a,se_b,delta_pp,ratio,z,ks,flagged\n");
  fprintf(o, "\"(all)\",1,1,100,100,%.10g,%.10g,%.10g,%.10g,%.10g,,%.10g,%.10g,%d\n", c->a->mean[EPH_CLOCK_REL],
          c->b->mean[EPH_CLOCK_REL], c->a->mean_se[EPH_CLOCK_REL], c->b->mean_se[EPH_CLOCK_REL], c->mean_delta_pp, c->mean_z,
          c->ks, c->flagged);
  for (size_t i = 0; i < c->nrows; i++) {
    const eph_compare_row *r = &c->rows[i];
    fputc('"', o);
    for (const char *s = r->name; *s; s++) fprintf(o, *s == '"' ? "\"\"" : "%c", *s);
    fprintf(o, "\",%d,%d,%.10g,%.10g", r->in_a, r->in_b, r->pct_a, r->pct_b);
    const double v[] = {r->mean_a, r->mean_b, r->se_a, r->se_b, r->delta_pp, r->ratio, r->z, r->ks};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
      fputc(',', o);
      if (isfinite(v[k])) fprintf(o, "%.10g", v[k]);
    }
    fprintf(o, ",%d\n", r->flagged);
  }
}

static void jnum(FILE *o, double v) {
  if (isfinite(v)) fprintf(o, "%.10g", v);
  else fputs("null", o);
}

void eph_compare_json(FILE *o, const eph_compare *c) {
  fputs("{\"a\":", o);
  eph_json_string(o, c->a->title);
  fputs(",\"b\":", o);
  eph_json_string(o, c->b->title);
  fputs(",\"mean_a\":", o), jnum(o, c->a->mean[EPH_CLOCK_REL]);
  fputs(",\"mean_b\":", o), jnum(o, c->b->mean[EPH_CLOCK_REL]);
  fputs(",\"delta_pp\":", o), jnum(o, c->mean_delta_pp);
  fputs(",\"z\":", o), jnum(o, c->mean_z);
  fputs(",\"ks\":", o), jnum(o, c->ks);
  fputs(",\"ks_critical\":", o), jnum(o, c->ks_critical);
  fprintf(o, ",\"flagged\":%s,\"classes\":[", c->flagged ? "true" : "false");
  for (size_t i = 0; i < c->nrows; i++) {
    const eph_compare_row *r = &c->rows[i];
    fputs(i ? ",{\"name\":" : "{\"name\":", o);
    eph_json_string(o, r->name);
    fputs(",\"pct_objects_a\":", o), jnum(o, r->pct_a);
    fputs(",\"pct_objects_b\":", o), jnum(o, r->pct_b);
    fputs(",\"mean_a\":", o), jnum(o, r->mean_a);
    fputs(",\"mean_b\":", o), jnum(o, r->mean_b);
    fputs(",\"delta_pp\":", o), jnum(o, r->delta_pp);
    fputs(",\"z\":", o), jnum(o, r->z);
    fputs(",\"ks\":", o), jnum(o, r->ks);
    fprintf(o, ",\"flagged\":%s}", r->flagged ? "true" : "false");
  }
  fputs("]}\n", o);
}
