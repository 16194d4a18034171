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
  o->nboot = 40;
}

void eph_analysis_free(eph_analysis *a) {
  if (!a) return;
  free(a->lives);
  free(a->lo_sum);
  free(a->group_est);
  for (size_t g = 0; a->est_F && g <= a->ngroup_est; g++) free(a->est_F[g]);
  for (size_t g = 0; a->est_Flo && g <= a->ngroup_est; g++) free(a->est_Flo[g]);
  for (size_t g = 0; a->est_Fhi && g <= a->ngroup_est; g++) free(a->est_Fhi[g]);
  free(a->est_F);
  free(a->est_Flo);
  free(a->est_Fhi);
  free(a->est_edges);
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

/* The overall survival curve; the class table made the largest groups'.
 * scratch: room for 2 * nrecords observations (the curve's, the sort's). */
static bool build_km(eph_analysis *a, eph_km_obs *scratch) {
  if (a->opts.progress) a->opts.progress("survival curves", 0, a->opts.progress_ctx);
  eph_km_obs *obs = scratch, *tmp = scratch + a->nrecords;
  eph_clock c = a->opts.km_clock;
  for (size_t i = 0; i < a->nrecords; i++) obs[i] = (eph_km_obs){a->lives[i].t[c], a->lives[i].weight, !a->lives[i].censored};
  if (a->opts.drop_lives) { /* before the largest curve is made: the report's peak */
    free(a->lives);
    a->lives = NULL;
  }
  return eph_km_compute_with(&a->km[0], obs, a->nrecords, tmp);
}

/* Lua profiles: objects by collector cycles survived, for the collector
 * advice that `ephemera lua --summary` also gives. */
static void lua_cycles(eph_analysis *a) {
  const char *rt = eph_file_meta(a->profile, "runtime");
  if (!rt || strcmp(rt, "lua")) return;
  a->lua = true;
  a->lua_gc = eph_file_meta(a->profile, "gc");
  /* The adapter counts Lua's GC cycles but does not time its collector
   * (it runs inside the allocations): no share, rather than 0 %. */
  if (a->profile->totals.gc_wall_ns == 0) a->gc_share = NAN;
  for (size_t i = 0; i < a->nrecords; i++) {
    const eph_life *l = &a->lives[i];
    if (l->censored) {
      a->cycles.censored += l->weight;
      continue;
    }
    a->cycles.freed += l->weight;
    if (l->gcs_survived == 0) a->cycles.survived0 += l->weight;
    else if (l->gcs_survived == 1) a->cycles.survived1 += l->weight;
  }
}

static eph_analysis *analysis_new(const eph_analysis_opts *o) {
  eph_analysis *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (o) a->opts = *o;
  else eph_analysis_opts_default(&a->opts);
  return a;
}

static void describe(eph_analysis *a, const eph_file *p) {
  a->profile = p;
  const char *title = eph_file_meta(p, "workload");
  if (!title) title = eph_file_meta(p, "program");
  a->title = title ? title : "(unnamed run)";
  a->mode = eph_file_meta(p, "mode");
  if (!a->mode) a->mode = "?";
  a->sample = eph_file_meta(p, "sample");
}

/* The pipeline once every record is in lt: the relative clock, heap views
 * (of `records`, exact profiles only), histograms, class table, curves.
 * Frees lt and, on failure, a. */
static eph_analysis *finish(eph_analysis *a, eph_lifetimes *lt, const eph_file *records, eph_error *err) {
  eph_km_obs *scratch = NULL;
  eph_lifetimes_finish(lt);
  if (!eph_intervals_estimate(a, lt)) goto nomem;
  if (a->exact) {
    if (a->opts.progress) a->opts.progress("heap views", 0, a->opts.progress_ctx);
    a->heap = eph_heapview_build(records, a->opts.heap_cols, a->opts.heap_segments);
    if (!a->heap) goto nomem;
  }
  /* The class table's and the curves' sorts share one scratch, grown from
   * the wall stamps' memory: its pages are there already (a fresh block's
   * cost the kernel's zeroing, 40 % of a large report's time). */
  scratch = realloc(lt->walls, 2 * a->nrecords * sizeof *scratch);
  if (!scratch) goto nomem;
  lt->walls = NULL;
  eph_lifetimes_free(lt);
  for (int c = 0; c < EPH_NCLOCKS; c++) {
    if (a->opts.progress) a->opts.progress("histograms", c / 3.0, a->opts.progress_ctx);
    if (!eph_histogram_build(&a->hist[c], a->lives, a->nrecords, (eph_clock)c, a->opts.hist_bins)) goto nomem;
  }
  if (!eph_analysis_fold_sites(a) || !eph_classtable_build(a, scratch)) goto nomem;
  lua_cycles(a);
  if (!build_km(a, scratch) || !eph_intervals_curves(a)) goto nomem;
  free(scratch);
  if (a->opts.progress) a->opts.progress(NULL, 1, a->opts.progress_ctx);
  return a;
nomem:
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory analysing %zu records", a->nrecords);
  free(scratch);
  eph_lifetimes_free(lt);
  eph_analysis_free(a);
  return NULL;
}

eph_analysis *eph_analysis_run(const eph_file *p, const eph_analysis_opts *o, eph_error *err) {
  if (!p->nrecords) {
    eph_error_fill(err, EPH_ERR_INVALID, "the profile has no records to analyse");
    return NULL;
  }
  eph_analysis *a = analysis_new(o);
  eph_lifetimes lt;
  if (!a) goto nomem;
  describe(a, p);
  if (a->opts.progress) a->opts.progress("lifetimes", 0, a->opts.progress_ctx);
  eph_lifetimes_begin(&lt, a, false);
  if (!eph_lifetimes_add(&lt, p->records, p->nrecords)) {
    eph_lifetimes_free(&lt);
    eph_analysis_free(a);
    goto nomem;
  }
  return finish(a, &lt, p, err);
nomem:
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory analysing %zu records", p->nrecords);
  return NULL;
}

static bool sink_records(void *ctx, const eph_record *r, size_t n) { return eph_lifetimes_add(ctx, r, n); }

eph_analysis *eph_analysis_load(const char *path, const eph_analysis_opts *o, eph_file **profile, eph_error *err) {
  *profile = NULL;
  eph_analysis *a = analysis_new(o);
  if (!a) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return NULL;
  }
  eph_lifetimes lt;
  eph_lifetimes_begin(&lt, a, true);
  eph_record_sink sink = {sink_records, &lt};
  eph_file *p = NULL;
  if (eph_file_load_with(path, &sink, &p, err) != EPH_OK || !p->nrecords) { /* the loader's message names path */
    if (p) /* a cut file: why there are none */
      eph_error_fill(err, EPH_ERR_INVALID, "%s: the profile has no records to analyse%s%s%s", path,
                     p->warning[0] ? " (" : "", p->warning, p->warning[0] ? ")" : "");
    eph_lifetimes_free(&lt);
    eph_analysis_free(a);
    eph_file_free(p);
    return NULL;
  }
  *profile = p;
  describe(a, p);
  eph_file kept = *p; /* the same tables, and the records if they are all exact or censored */
  kept.records = lt.kept;
  kept.nrecords = lt.nkept;
  size_t n = a->nrecords;
  a = finish(a, &lt, &kept, err);
  if (!a) { /* finish fails only for memory */
    eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory analysing %zu records", path, n);
    eph_file_free(p);
    *profile = NULL;
  }
  return a;
}
