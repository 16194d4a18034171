/*
 * render_csv.c — the report's tables as CSV: summary, histogram, classes,
 * survival (and heap for exact traces).  One file per table in a directory,
 * or all on one stream each after a "# table" line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

static void csv_str(FILE *o, const char *s) { eph_csv_field(o, s, EPH_CSV_QUOTE_ALWAYS); }

static void num(FILE *o, double v) {
  if (isfinite(v)) fprintf(o, "%.10g", v);
}

static void summary(FILE *o, const eph_analysis *a) {
  fprintf(o, "key,value\n");
  fputs("title,", o), csv_str(o, a->title), fputc('\n', o);
  fputs("mode,", o), csv_str(o, a->mode), fputc('\n', o);
  fputs("sample,", o), csv_str(o, a->sample ? a->sample : "all"), fputc('\n', o);
  const struct { const char *k; double v; } rows[] = {
      {"run_seconds", a->run_wall_s}, {"run_bytes", a->run_bytes}, {"gc_share", a->gc_share},
      {"records", (double)a->nrecords}, {"censored", (double)a->ncensored}, {"gc_found_deaths", (double)a->n_interval},
      {"objects_est", a->objects_est}, {"objects_se", a->objects_se}, {"bytes_est", a->bytes_est}, {"bytes_se", a->bytes_se},
      {"mean_rel_pct", a->mean[EPH_CLOCK_REL]}, {"mean_rel_pct_lower_end", a->mean_lo[EPH_CLOCK_REL]},
      {"mean_rel_pct_se", a->mean_se[EPH_CLOCK_REL]}, {"mean_bytes", a->mean[EPH_CLOCK_BYTES]},
      {"mean_seconds", a->mean[EPH_CLOCK_SECONDS]},
      {"mean_lifetime_pct_run", a->est.mean_pct}, {"mean_lifetime_pct_run_se", a->est.mean_pct_se},
      {"short_share", a->est.short_share}, {"short_share_se", a->est.short_share_se}, {"resolved", a->est.resolved},
      {"scavenges", (double)a->res.scavenges}, {"full_gcs", (double)a->res.full_gcs},
      {"scavenge_interval_bytes", a->res.scavenge_interval}, {"full_gc_interval_bytes", a->res.full_interval},
      {"too_few_collections", a->res.too_few}, {"nepotism_suspects", (double)a->res.nepotism_suspects}};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    fprintf(o, "%s,", rows[i].k);
    num(o, rows[i].v);
    fputc('\n', o);
  }
}

static void histograms(FILE *o, const eph_analysis *a) {
  fprintf(o, "clock,bin,lo,hi,objects,bytes,objects_censored,bytes_censored\n");
  static const char *const cn[] = {"bytes", "seconds", "rel_pct"};
  for (int c = 0; c < EPH_NCLOCKS; c++) {
    const eph_histogram *h = &a->hist[c];
    for (size_t i = 0; i < h->nbins; i++)
      fprintf(o, "%s,%zu,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n", cn[c], i, h->edges[i], h->edges[i + 1], h->count[i],
              h->bytes[i], h->count_cens[i], h->bytes_cens[i]);
  }
}

static void classes(FILE *o, const eph_analysis *a) {
  fprintf(o, "%s,records,censored,objects,objects_se,bytes,bytes_se,pct_objects,pct_bytes,"
             "mean_rel_pct,mean_rel_pct_lower_end,mean_rel_pct_se,median_rel_pct,p90_rel_pct,"
             "mean_bytes,median_bytes,p90_bytes,mean_seconds,median_seconds,p90_seconds,gcs_survived,lived,most_allocated,"
             "short_share,short_share_se,mean_pct_run,mean_pct_run_se,median_pct_run,p90_pct_run,"
             "est_mean_bytes,est_median_bytes,est_p90_bytes,found_by_full_gc,resolved,nepotism_sensitive\n",
          a->opts.by == EPH_BY_SITE ? "site" : "class");
  for (size_t i = 0; i < a->nrows; i++) {
    const eph_group_row *r = &a->rows[i];
    csv_str(o, r->name);
    fprintf(o, ",%zu,%zu", r->nrecords, r->ncensored);
    const double v[] = {r->objects, r->objects_se, r->bytes, r->bytes_se, r->pct_objects, r->pct_bytes,
                        r->mean[EPH_CLOCK_REL], r->mean_lo[EPH_CLOCK_REL], r->mean_se[EPH_CLOCK_REL],
                        r->median[EPH_CLOCK_REL], r->p90[EPH_CLOCK_REL], r->mean[EPH_CLOCK_BYTES],
                        r->median[EPH_CLOCK_BYTES], r->p90[EPH_CLOCK_BYTES], r->mean[EPH_CLOCK_SECONDS],
                        r->median[EPH_CLOCK_SECONDS], r->p90[EPH_CLOCK_SECONDS], r->gcs_survived};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) fputc(',', o), num(o, v[k]);
    fprintf(o, ",%s,%d", r->short_lived ? "short" : "long", r->most_allocated);
    const eph_life_est *e = &r->est; /* allocation clock: see eph_life_est */
    const double x[] = {e->short_share, e->short_share_se, e->mean_pct, e->mean_pct_se, e->median_pct, e->p90_pct,
                        e->mean_bytes, e->median_bytes, e->p90_bytes, e->found_by_full};
    for (size_t k = 0; k < sizeof x / sizeof *x; k++) fputc(',', o), num(o, x[k]);
    fprintf(o, ",%d,%d\n", e->resolved, e->nepotism_sensitive);
  }
}

static void survival(FILE *o, const eph_analysis *a) {
  fprintf(o, "group,time_%s,survival,lower95,upper95,at_risk\n", a->opts.km_clock == EPH_CLOCK_REL ? "rel_pct"
                                                                  : a->opts.km_clock == EPH_CLOCK_BYTES ? "bytes" : "seconds");
  for (size_t k = 0; k < a->nkm; k++) {
    const eph_km *km = &a->km[k];
    for (size_t i = 0; i < km->n; i++) {
      csv_str(o, km->group == UINT32_MAX ? "(all)" : eph_group_name(a, km->group));
      fprintf(o, ",%.10g,%.10g,%.10g,%.10g,%.0f\n", km->time[i], km->surv[i], km->lo[i], km->hi[i], km->at_risk[i]);
    }
  }
}

static void heap(FILE *o, const eph_analysis *a) {
  const eph_heapview *h = a->heap;
  fprintf(o, "time_bytes,segment,live_bytes\n");
  for (size_t c = 0; c < h->cols; c++)
    for (size_t s = 0; s < h->segs; s++) fprintf(o, "%.0f,%zu,%.0f\n", h->col_time[c], s, h->live[s * h->cols + c]);
}

/* The heap over time from the collection log (render_timeline.c). */
static void timeline(FILE *o, const eph_analysis *a) {
  eph_timeline t;
  if (eph_timeline_build(a->profile, &t)) eph_render_timeline_csv(o, &t);
  eph_timeline_free(&t);
}

bool eph_render_csv(FILE *out, const char *dir, const eph_analysis *a) {
  const struct { const char *name; void (*fn)(FILE *, const eph_analysis *); } tables[] = {
      {"summary", summary}, {"histogram", histograms}, {"classes", classes}, {"survival", survival}, {"heap", heap},
      {"timeline", timeline}};
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    if (tables[i].fn == heap && !a->heap) continue;
    if (tables[i].fn == timeline && !a->profile->ngcs) continue;
    if (!dir) {
      fprintf(out, "%s# %s\n", i ? "\n" : "", tables[i].name);
      tables[i].fn(out, a);
      continue;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", dir, tables[i].name);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    tables[i].fn(f, a);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) return false;
  }
  return !ferror(out);
}
