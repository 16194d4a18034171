/*
 * render_json.c — the whole analysis as one JSON document.
 */
#include <math.h>
#include <stdio.h>

#include "render.h"

static void num(FILE *o, double v) {
  if (isfinite(v)) fprintf(o, "%.10g", v);
  else fputs("null", o);
}

/* A whole number (bytes); not finite as null. */
static void whole(FILE *o, double v) {
  if (isfinite(v)) fprintf(o, "%.0f", v);
  else fputs("null", o);
}

static void kv(FILE *o, const char *k, double v, bool comma) {
  fprintf(o, "\"%s\":", k);
  num(o, v);
  if (comma) fputc(',', o);
}

static void clocks(FILE *o, const char *k, const double *v) {
  fprintf(o, "\"%s\":{", k);
  kv(o, "bytes", v[EPH_CLOCK_BYTES], true);
  kv(o, "seconds", v[EPH_CLOCK_SECONDS], true);
  kv(o, "rel_pct", v[EPH_CLOCK_REL], false);
  fputs("},", o);
}

/* The estimates from the intervals (eph_life_est, allocation clock), as
 * members: mean_lifetime_pct_run and short_share are the names scripts use. */
static void est(FILE *o, const eph_life_est *e) {
  kv(o, "mean_lifetime_pct_run", e->mean_pct, true);
  kv(o, "mean_lifetime_pct_run_se", e->mean_pct_se, true);
  kv(o, "short_share", e->short_share, true);
  kv(o, "short_share_se", e->short_share_se, true);
  kv(o, "median_pct_run", e->median_pct, true);
  kv(o, "p90_pct_run", e->p90_pct, true);
  kv(o, "mean_lifetime_bytes", e->mean_bytes, true);
  kv(o, "found_by_full_gc", e->found_by_full, true);
  fprintf(o, "\"nepotism_sensitive\":%s,\"resolved\":%s", e->nepotism_sensitive ? "true" : "false", e->resolved ? "true" : "false");
}

void eph_render_json(FILE *o, const eph_analysis *a, const eph_tune_lua_advice *lua) {
  static const char *const cn[] = {"bytes", "seconds", "rel_pct"};
  static const char *const ends[] = {"death", "alive_until", "mid"};
  fputs("{\"summary\":{\"title\":", o);
  eph_json_string(o, a->title);
  fputs(",\"mode\":", o);
  eph_json_string(o, a->mode);
  fputs(",\"sample\":", o);
  eph_json_string(o, a->sample ? a->sample : "all");
  fprintf(o, ",\"death_end\":\"%s\",\"complete\":%s,", ends[a->opts.end], a->profile->complete ? "true" : "false");
  kv(o, "run_seconds", a->run_wall_s, true);
  kv(o, "run_bytes", a->run_bytes, true);
  kv(o, "gc_share", a->gc_share, true);
  kv(o, "records", (double)a->nrecords, true);
  kv(o, "censored", (double)a->ncensored, true);
  kv(o, "gc_found_deaths", (double)a->n_interval, true);
  kv(o, "objects_est", a->objects_est, true);
  kv(o, "objects_se", a->objects_se, true);
  kv(o, "bytes_est", a->bytes_est, true);
  kv(o, "bytes_se", a->bytes_se, true);
  clocks(o, "mean_lower_end", a->mean_lo);
  clocks(o, "mean_se", a->mean_se);
  est(o, &a->est);
  fputs(",\"resolution\":{", o);
  fprintf(o, "\"interval_deaths\":%s,\"gc_log\":%s,\"too_few_collections\":%s,", a->res.interval ? "true" : "false",
          a->res.have_gc_log ? "true" : "false", a->res.too_few ? "true" : "false");
  kv(o, "scavenges", (double)a->res.scavenges, true);
  kv(o, "full_gcs", (double)a->res.full_gcs, true);
  kv(o, "scavenge_interval_bytes", a->res.scavenge_interval, true);
  kv(o, "full_gc_interval_bytes", a->res.full_interval, true);
  kv(o, "scavenge_interval_pct_run", a->run_bytes > 0 ? 100 * a->res.scavenge_interval / a->run_bytes : NAN, true);
  kv(o, "full_gc_interval_pct_run", a->run_bytes > 0 ? 100 * a->res.full_interval / a->run_bytes : NAN, true);
  kv(o, "nepotism_suspects", (double)a->res.nepotism_suspects, true);
  kv(o, "nepotism_share", a->res.nepotism_share, false);
  fputs("},\"mean\":{", o);
  kv(o, "bytes", a->mean[EPH_CLOCK_BYTES], true);
  kv(o, "seconds", a->mean[EPH_CLOCK_SECONDS], true);
  kv(o, "rel_pct", a->mean[EPH_CLOCK_REL], false);
  fputs("}},\"histograms\":[", o);
  for (int c = 0; c < EPH_NCLOCKS; c++) {
    const eph_histogram *h = &a->hist[c];
    fprintf(o, "%s{\"clock\":\"%s\",\"log_bins\":%s,\"bins\":[", c ? "," : "", cn[c], h->log_bins ? "true" : "false");
    for (size_t i = 0; i < h->nbins; i++) { /* a weight can overflow to inf: null, never a bare inf */
      fputs(i ? ",{" : "{", o);
      kv(o, "lo", h->edges[i], true);
      kv(o, "hi", h->edges[i + 1], true);
      kv(o, "objects", h->count[i], true);
      kv(o, "bytes", h->bytes[i], true);
      kv(o, "objects_censored", h->count_cens[i], true);
      kv(o, "bytes_censored", h->bytes_cens[i], false);
      fputc('}', o);
    }
    fputs("]}", o);
  }
  fprintf(o, "],\"groups_by\":\"%s\",\"groups\":[", a->opts.by == EPH_BY_SITE ? "site" : "class");
  for (size_t i = 0; i < a->nrows; i++) {
    const eph_group_row *r = &a->rows[i];
    fputs(i ? ",{\"name\":" : "{\"name\":", o);
    eph_json_string(o, r->name);
    fprintf(o, ",\"records\":%zu,\"censored\":%zu,", r->nrecords, r->ncensored);
    kv(o, "objects", r->objects, true);
    kv(o, "objects_se", r->objects_se, true);
    kv(o, "bytes", r->bytes, true);
    kv(o, "bytes_se", r->bytes_se, true);
    kv(o, "pct_objects", r->pct_objects, true);
    kv(o, "pct_bytes", r->pct_bytes, true);
    kv(o, "gcs_survived", r->gcs_survived, true);
    clocks(o, "mean", r->mean);
    clocks(o, "mean_lower_end", r->mean_lo);
    clocks(o, "mean_se", r->mean_se);
    clocks(o, "median", r->median);
    clocks(o, "p90", r->p90);
    est(o, &r->est);
    fprintf(o, ",\"lived\":\"%s\",\"most_allocated\":%s}", r->short_lived ? "short" : "long", r->most_allocated ? "true" : "false");
  }
  fprintf(o, "],\"survival\":{\"clock\":\"%s\",\"curves\":[", cn[a->opts.km_clock]);
  for (size_t k = 0; k < a->nkm; k++) {
    const eph_km *km = &a->km[k];
    fputs(k ? ",{\"group\":" : "{\"group\":", o);
    if (km->group == UINT32_MAX) fputs("null", o);
    else eph_json_string(o, eph_group_name(a, km->group));
    fprintf(o, ",\"records\":%zu,\"deaths\":%zu,\"censored\":%zu,\"steps\":[", km->nrecords, km->ndeaths, km->ncensored);
    for (size_t i = 0; i < km->n; i++) {
      fputs(i ? ",[" : "[", o);
      num(o, km->time[i]), fputc(',', o), num(o, km->surv[i]), fputc(',', o);
      num(o, km->lo[i]), fputc(',', o), num(o, km->hi[i]), fputc(']', o);
    }
    fputs("]}", o);
  }
  fputs("]}", o);
  if (a->heap) {
    const eph_heapview *h = a->heap;
    fprintf(o, ",\"heap\":{\"columns\":%zu,\"segments\":%zu,\"t_max\":", h->cols, h->segs);
    whole(o, h->t_max);
    fputs(",\"live\":[", o);
    for (size_t s = 0; s < h->segs; s++) {
      fputs(s ? ",[" : "[", o);
      for (size_t c = 0; c < h->cols; c++) {
        if (c) fputc(',', o);
        whole(o, h->live[s * h->cols + c]);
      }
      fputc(']', o);
    }
    fputs("]}", o);
  }
  if (a->lua && lua) {
    const eph_tune_lua_advice *v = lua;
    fputs(",\"lua_advice\":{\"gc\":", o);
    if (a->lua_gc) eph_json_string(o, a->lua_gc);
    else fputs("null", o);
    fputs(",\"kind\":", o);
    eph_json_string(o, v->label);
    fputc(',', o);
    kv(o, "died_within_1_cycle", v->share0, true);
    kv(o, "died_within_2_cycles", v->share01, true);
    kv(o, "alive_at_end", v->censored, true);
    fputs("\"advice\":", o);
    const char *text = v->text;
    if (text) eph_json_string(o, text);
    else fputs("null", o);
    fputc('}', o);
  }
  fputs("}\n", o);
}
