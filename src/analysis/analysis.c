/*
 * analysis.c — eph_analysis_run: the pipeline (lifetimes, histograms, class
 * table, survival curves, heap views) and its teardown.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

void eph_analysis_opts_default(eph_analysis_opts *o) {
  memset(o, 0, sizeof *o);
  o->short_threshold_pct = 5;
  o->most_allocated_pct = 1;
  o->end = EPH_END_DEATH;
  o->by = EPH_BY_CLASS;
  o->km_clock = EPH_CLOCK_REL;
  o->km_groups = 6;
  o->hist_bins = 10;
  o->heap_cols = 200;
  o->heap_segments = 24;
}

void eph_analysis_free(eph_analysis *a) {
  if (!a) return;
  free(a->lives);
  free(a->lo_sum);
  for (int c = 0; c < EPH_NCLOCKS; c++) eph_histogram_free(&a->hist[c]);
  free(a->rows);
  if (a->site_labels)
    for (size_t i = 0; i < a->profile->nsites; i++) free(a->site_labels[i]);
  free(a->site_labels);
  for (size_t i = 0; i < a->nkm; i++) eph_km_free(&a->km[i]);
  free(a->km);
  eph_heapview_free(a->heap);
  free(a);
}

/* scratch: room for 2 * nrecords observations (the curve's, the sort's). */
static bool build_km(eph_analysis *a, eph_km_obs *scratch) {
  size_t groups = 0;
  for (size_t i = 0; i < a->nrows && groups < a->opts.km_groups; i++) groups++;
  a->km = calloc(groups + 1, sizeof *a->km);
  if (!a->km) return false;
  eph_km_obs *obs = scratch, *tmp = scratch + a->nrecords;
  eph_clock c = a->opts.km_clock;
  for (size_t k = 0; k <= groups; k++) {
    if (a->opts.progress) a->opts.progress("survival curves", (double)k / (double)(groups + 1), a->opts.progress_ctx);
    uint32_t g = k == 0 ? UINT32_MAX : a->rows[k - 1].id;
    size_t n = 0;
    for (size_t i = 0; i < a->nrecords; i++)
      if (g == UINT32_MAX || a->lives[i].group == g)
        obs[n++] = (eph_km_obs){a->lives[i].t[c], a->lives[i].weight, !a->lives[i].censored};
    a->km[k].group = g;
    a->nkm = k + 1;
    if (!eph_km_compute_with(&a->km[k], obs, n, tmp)) return false;
  }
  return true;
}

/* Lua profiles: the collector advice shared with `ephemera lua --summary`. */
static void lua_advice(eph_analysis *a) {
  const char *rt = eph_profile_meta(a->profile, "runtime");
  if (!rt || strcmp(rt, "lua")) return;
  a->lua = true;
  a->lua_gc = eph_profile_meta(a->profile, "gc");
  double s0 = 0, s1 = 0, freed = 0, cens = 0;
  for (size_t i = 0; i < a->nrecords; i++) {
    const eph_life *l = &a->lives[i];
    if (l->censored) {
      cens += l->weight;
      continue;
    }
    freed += l->weight;
    if (l->gcs_survived == 0) s0 += l->weight;
    else if (l->gcs_survived == 1) s1 += l->weight;
  }
  a->lua_advice = eph_lua_advice_compute(s0, s1, freed, cens);
}

/* The pipeline; with `consume` (p itself), the records are freed once the
 * lifetimes and heap views are taken, before the tables and curves. */
static eph_analysis *run(const eph_profile *p, eph_profile *consume, const eph_analysis_opts *o, eph_error *err) {
  if (!p->nrecords) {
    eph_error_fill(err, EPH_ERR_INVALID, "the profile has no records to analyse");
    return NULL;
  }
  eph_km_obs *scratch = NULL;
  eph_analysis *a = calloc(1, sizeof *a);
  if (!a) goto nomem;
  a->profile = p;
  if (o) a->opts = *o;
  else eph_analysis_opts_default(&a->opts);
  const char *title = eph_profile_meta(p, "workload");
  if (!title) title = eph_profile_meta(p, "program");
  a->title = title ? title : "(unnamed run)";
  a->mode = eph_profile_meta(p, "mode");
  if (!a->mode) a->mode = "?";
  a->sample = eph_profile_meta(p, "sample");
  if (a->opts.progress) a->opts.progress("lifetimes", 0, a->opts.progress_ctx);
  if (!eph_lifetimes_compute(a)) goto nomem;
  if (a->exact) {
    if (a->opts.progress) a->opts.progress("heap views", 0, a->opts.progress_ctx);
    a->heap = eph_heapview_build(p, a->opts.heap_cols, a->opts.heap_segments);
    if (!a->heap) goto nomem;
  }
  /* The class table's and the curves' sorts share one scratch.  Consuming,
   * it is the records' memory, shrunk in place: the pages are the loaded
   * records', already there (a fresh block's pages cost the kernel's
   * zeroing, 40 % of a large report's time). */
  size_t nscratch = 2 * a->nrecords;
  if (consume) {
    scratch = realloc(consume->records, nscratch * sizeof *scratch);
    if (!scratch) free(consume->records);
    consume->records = NULL;
  }
  if (!scratch && !(scratch = malloc(nscratch * sizeof *scratch))) goto nomem;
  for (int c = 0; c < EPH_NCLOCKS; c++) {
    if (a->opts.progress) a->opts.progress("histograms", c / 3.0, a->opts.progress_ctx);
    if (!eph_histogram_build(&a->hist[c], a->lives, a->nrecords, (eph_clock)c, a->opts.hist_bins)) goto nomem;
  }
  if (!eph_classtable_build(a, scratch)) goto nomem;
  if (!build_km(a, scratch)) goto nomem;
  free(scratch);
  lua_advice(a);
  if (a->opts.progress) a->opts.progress(NULL, 1, a->opts.progress_ctx);
  return a;
nomem:
  free(scratch);
  eph_analysis_free(a);
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory analysing %zu records", p->nrecords);
  return NULL;
}

eph_analysis *eph_analysis_run(const eph_profile *p, const eph_analysis_opts *o, eph_error *err) {
  return run(p, NULL, o, err);
}

eph_analysis *eph_analysis_run_consuming(eph_profile *p, const eph_analysis_opts *o, eph_error *err) {
  return run(p, p, o, err);
}
