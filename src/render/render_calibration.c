/*
 * render_calibration.c — `ephemera compare --exact EXACT OTHER` as text,
 * CSV or JSON: OTHER's lifetime estimates against the exact ones, class by
 * class (src/analysis/calibrate.c), and its brackets object by object.
 */
#include <math.h>
#include <stdio.h>

#include "render.h"

static void pct(FILE *o, double v, int width) {
  if (isfinite(v)) fprintf(o, " %*.3f", width, v);
  else fprintf(o, " %*s", width, "-");
}

static void text_row(FILE *o, const eph_calib_row *r, bool most) {
  fprintf(o, "  %-24.24s %6.1f%%", r->name, r->pct_objects);
  pct(o, r->mean_exact, 8);
  pct(o, r->mean_est, 8);
  pct(o, r->mean_err_pp, 8);
  fprintf(o, "  ");
  pct(o, r->short_exact, 6);
  pct(o, r->short_est, 6);
  pct(o, r->short_err_pp, 7);
  pct(o, r->median_exact, 8);
  pct(o, r->median_est, 8);
  pct(o, r->curve_dist, 6);
  fprintf(o, "  %s%s\n", !r->in_other ? "(not in OTHER)" : r->resolved ? "resolved" : "UNRESOLVED",
          !r->in_other || r->resolved || !most ? "" : r->nepotism_sensitive ? " (nepotism)" : "");
}

void eph_calibration_text(FILE *o, const eph_calibration *c, const eph_bracket_stats *b) {
  const eph_analysis *x = c->exact, *y = c->other;
  fprintf(o, "EXACT: %s  (mode %s, %zu records)\n", x->title, x->mode, x->nrecords);
  fprintf(o, "OTHER: %s  (mode %s, sampling %s, %zu records)\n", y->title, y->mode, y->sample ? y->sample : "all", y->nrecords);
  fprintf(o, "\nOTHER's estimates against the exact lifetimes (allocation clock: %% of the bytes each run allocated;\n"
             "err = estimate - exact, percentage points; dist = sup |F_exact - F_other|, the survival curves' distance)\n");
  fprintf(o, "  %-24s %7s %8s %8s %8s   %6s %6s %7s %8s %8s %6s\n", "class", "%objs", "mean", "mean", "err", "short", "short",
          "err", "median", "median", "dist");
  fprintf(o, "  %-24s %7s %8s %8s %8s   %6s %6s %7s %8s %8s %6s\n", "", "", "exact", "est.", "pp", "exact", "est.", "pp",
          "exact", "est.", "");
  text_row(o, &c->all, true);
  for (size_t i = 0; i < c->nrows; i++) {
    const eph_calib_row *r = &c->rows[i];
    if (r->pct_objects < 0.1 && i >= 25) continue;
    text_row(o, r, r->pct_objects >= x->opts.most_allocated_pct);
  }
  fprintf(o, "\nClasses with >= %g %% of allocations: %zu resolved, %zu unresolved by OTHER's collections\n",
          x->opts.most_allocated_pct, c->nresolved, c->nunresolved);
  fprintf(o, "  resolved: largest error of the short-lived share %.2f pp, of the mean lifetime %.3f pp of run\n",
          c->short_err_max_pp, c->mean_err_max_pp);
  fprintf(o, "Brackets, object by object: %zu deaths joined (%zu without an exact counterpart);\n"
             "  %zu exact deaths outside (proven lower end, upper end]; %zu before the recorded lower end (nepotism:\n"
             "  a scavenge kept them through a dead old object), %zu after the upper end\n",
          b->joined, b->unmatched, b->violations, b->below_recorded, b->late_upper);
}

static void csv_num(FILE *o, double v) {
  fputc(',', o);
  if (isfinite(v)) fprintf(o, "%.10g", v);
}

static void csv_row(FILE *o, const eph_calib_row *r) {
  eph_csv_field(o, r->name, EPH_CSV_QUOTE_ALWAYS);
  const double v[] = {r->pct_objects, r->mean_exact, r->mean_est, r->mean_se, r->mean_err_pp, r->short_exact, r->short_est,
                      r->short_se, r->short_err_pp, r->median_exact, r->median_est, r->curve_dist, r->found_by_full};
  for (size_t k = 0; k < sizeof v / sizeof *v; k++) csv_num(o, v[k]);
  fprintf(o, ",%d,%d,%d\n", r->in_other, r->resolved, r->nepotism_sensitive);
}

void eph_calibration_csv(FILE *o, const eph_calibration *c, const eph_bracket_stats *b) {
  fprintf(o, "class,pct_objects,mean_pct_run_exact,mean_pct_run_est,mean_pct_run_se,mean_err_pp,short_share_exact_pct,"
             "short_share_est_pct,short_share_se_pct,short_err_pp,median_pct_run_exact,median_pct_run_est,curve_distance,"
             "found_by_full_gc,in_other,resolved,nepotism_sensitive\n");
  csv_row(o, &c->all);
  for (size_t i = 0; i < c->nrows; i++) csv_row(o, &c->rows[i]);
  fprintf(o, "# brackets joined=%zu unmatched=%zu violations=%zu below_recorded=%zu late_upper=%zu\n", b->joined,
          b->unmatched, b->violations, b->below_recorded, b->late_upper);
}

static void jnum(FILE *o, const char *k, double v, bool comma) {
  fprintf(o, "\"%s\":", k);
  if (isfinite(v)) fprintf(o, "%.10g", v);
  else fputs("null", o);
  if (comma) fputc(',', o);
}

static void json_row(FILE *o, const eph_calib_row *r) {
  fputs("{\"class\":", o);
  eph_json_string(o, r->name);
  fputc(',', o);
  jnum(o, "pct_objects", r->pct_objects, true);
  jnum(o, "mean_pct_run_exact", r->mean_exact, true);
  jnum(o, "mean_pct_run_est", r->mean_est, true);
  jnum(o, "mean_pct_run_se", r->mean_se, true);
  jnum(o, "mean_err_pp", r->mean_err_pp, true);
  jnum(o, "short_share_exact_pct", r->short_exact, true);
  jnum(o, "short_share_est_pct", r->short_est, true);
  jnum(o, "short_share_se_pct", r->short_se, true);
  jnum(o, "short_err_pp", r->short_err_pp, true);
  jnum(o, "median_pct_run_exact", r->median_exact, true);
  jnum(o, "median_pct_run_est", r->median_est, true);
  jnum(o, "curve_distance", r->curve_dist, true);
  jnum(o, "found_by_full_gc", r->found_by_full, true);
  fprintf(o, "\"in_other\":%s,\"resolved\":%s,\"nepotism_sensitive\":%s}", r->in_other ? "true" : "false",
          r->resolved ? "true" : "false", r->nepotism_sensitive ? "true" : "false");
}

void eph_calibration_json(FILE *o, const eph_calibration *c, const eph_bracket_stats *b) {
  fputs("{\"exact\":", o);
  eph_json_string(o, c->exact->title);
  fputs(",\"other\":", o);
  eph_json_string(o, c->other->title);
  fputs(",\"all\":", o);
  json_row(o, &c->all);
  fputs(",\"classes\":[", o);
  for (size_t i = 0; i < c->nrows; i++) {
    if (i) fputc(',', o);
    json_row(o, &c->rows[i]);
  }
  fprintf(o, "],\"resolved\":%zu,\"unresolved\":%zu,", c->nresolved, c->nunresolved);
  jnum(o, "short_err_max_pp", c->short_err_max_pp, true);
  jnum(o, "mean_err_max_pp", c->mean_err_max_pp, true);
  fprintf(o, "\"brackets\":{\"joined\":%zu,\"unmatched\":%zu,\"violations\":%zu,\"below_recorded\":%zu,\"late_upper\":%zu}}\n",
          b->joined, b->unmatched, b->violations, b->below_recorded, b->late_upper);
}
