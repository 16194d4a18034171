/*
 * render_compare.c — `ephemera compare` as text, CSV or JSON: two analyses
 * side by side (the numbers come from src/analysis/compare.c).
 */
#include <math.h>
#include <stdio.h>

#include "render.h"

void eph_compare_text(FILE *o, const eph_compare *c) {
  char b1[32], b2[32];
  fprintf(o, "A: %s  (mode %s, sampling %s, %zu records, run %s)\n", c->a->title, c->a->mode, c->a->sample ? c->a->sample : "all",
          c->a->nrecords, eph_fmt_life(b1, sizeof b1, c->a->run_wall_s, EPH_CLOCK_SECONDS));
  fprintf(o, "B: %s  (mode %s, sampling %s, %zu records, run %s)\n", c->b->title, c->b->mode, c->b->sample ? c->b->sample : "all",
          c->b->nrecords, eph_fmt_life(b2, sizeof b2, c->b->run_wall_s, EPH_CLOCK_SECONDS));
  bool alloc = c->clock != EPH_CLOCK_REL;
  if (alloc)
    fprintf(o, "\nLifetimes in %% of the bytes each run allocated (the allocation clock, which the profiler's overhead does\n"
               "not move; --wall: of wall time); means estimated from the death intervals\n");
  else fprintf(o, "\nLifetimes in %% of each run's wall time (--wall); means at the chosen end of the death intervals\n");
  fprintf(o, "Overall mean lifetime: %s -> %s of run (%+.2f pp, z = %.1f)\n", eph_fmt_life(b1, sizeof b1, c->mean_a, EPH_CLOCK_REL),
          eph_fmt_life(b2, sizeof b2, c->mean_b, EPH_CLOCK_REL), c->mean_delta_pp, c->mean_z);
  fprintf(o, "Distance between the lifetime distributions (KS, Kaplan-Meier, %% of run): %.3f (5 %% noise level %.3f)%s\n",
          c->ks, c->ks_critical,
          c->identical ? "  no change: the deaths are identical"
          : c->flagged ? "  ** CHANGED beyond sampling noise"
                       : "  (within sampling noise)");
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
      fprintf(o, " %+8.2fpp %8.1f %7.3f %6s  %s -> %s\n", r->delta_pp, r->z, r->ks, r->flagged ? "!" : r->identical ? "same" : "",
              r->short_a ? "short" : "long", r->short_b ? "short" : "long");
    else fprintf(o, " %10s\n", r->in_a ? "(only in A)" : "(only in B)");
  }
}

void eph_compare_csv(FILE *o, const eph_compare *c) {
  fprintf(o, "class,in_a,in_b,pct_objects_a,pct_objects_b,mean_rel_pct_a,mean_rel_pct_b,se_a,se_b,delta_pp,ratio,z,ks,flagged,"
             "identical\n");
  fprintf(o, "\"(all)\",1,1,100,100,%.10g,%.10g,", c->mean_a, c->mean_b);
  const double se[] = {c->clock == EPH_CLOCK_REL ? c->a->mean_se[EPH_CLOCK_REL] : c->a->est.mean_pct_se,
                       c->clock == EPH_CLOCK_REL ? c->b->mean_se[EPH_CLOCK_REL] : c->b->est.mean_pct_se};
  for (int k = 0; k < 2; k++)
    if (isfinite(se[k])) fprintf(o, "%.10g,", se[k]);
    else fputc(',', o);
  fprintf(o, "%.10g,,%.10g,%.10g,%d,%d\n", c->mean_delta_pp, c->mean_z, c->ks, c->flagged, c->identical);
  for (size_t i = 0; i < c->nrows; i++) {
    const eph_compare_row *r = &c->rows[i];
    eph_csv_field(o, r->name, EPH_CSV_QUOTE_ALWAYS);
    fprintf(o, ",%d,%d,%.10g,%.10g", r->in_a, r->in_b, r->pct_a, r->pct_b);
    const double v[] = {r->mean_a, r->mean_b, r->se_a, r->se_b, r->delta_pp, r->ratio, r->z, r->ks};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
      fputc(',', o);
      if (isfinite(v[k])) fprintf(o, "%.10g", v[k]);
    }
    fprintf(o, ",%d,%d\n", r->flagged, r->identical);
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
  fprintf(o, ",\"clock\":\"%s\"", c->clock == EPH_CLOCK_REL ? "wall" : "allocation");
  fputs(",\"mean_a\":", o), jnum(o, c->mean_a);
  fputs(",\"mean_b\":", o), jnum(o, c->mean_b);
  fputs(",\"delta_pp\":", o), jnum(o, c->mean_delta_pp);
  fputs(",\"z\":", o), jnum(o, c->mean_z);
  fputs(",\"ks\":", o), jnum(o, c->ks);
  fputs(",\"ks_critical\":", o), jnum(o, c->ks_critical);
  fprintf(o, ",\"flagged\":%s,\"identical\":%s,\"classes\":[", c->flagged ? "true" : "false", c->identical ? "true" : "false");
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
    fprintf(o, ",\"flagged\":%s,\"identical\":%s}", r->flagged ? "true" : "false", r->identical ? "true" : "false");
  }
  fputs("]}\n", o);
}
