/*
 * analysis.h — lifetime analysis of an .eph profile.
 * Layer: analysis, above the format (docs/architecture.md).
 *
 * eph_analysis_run turns a loaded profile (format.h) into an eph_analysis:
 * per-record lifetimes on three clocks (bytes allocated, wall seconds, % of
 * the run: FiLiP's normalisation), weighted histograms, a per-class or
 * per-site table, Kaplan–Meier survival curves with Greenwood bands, and for
 * exact traces Merlin's heap views.  eph_compare_run sets two analyses side
 * by side.  The renderers (text, CSV, JSON, HTML) are in src/render/render.h.
 *
 * Conventions:
 *  - Weights: a sampled record stands for `weight` objects.  Totals and
 *    shares are Horvitz–Thompson estimates; their standard errors assume
 *    independent (Bernoulli) sampling: Var = sum w(w-1) x^2.
 *  - Censored records (alive at exit) have a lifetime that is a lower bound.
 *    They are never dropped and never counted as deaths: the survival curves
 *    are Kaplan–Meier, medians and p90 are read off those curves, and means
 *    are restricted to the run (marked as lower bounds where censoring exists).
 *  - GC-found deaths lie in (alive_until, death].  `end` picks which end a
 *    lifetime uses (default: death, the upper end — the collection that found
 *    it dead, which is also what finalization sees); the other end is always
 *    computed too and shown where it differs.
 *
 * Memory: everything an eph_analysis points to is owned by it; free it with
 * eph_analysis_free.  It borrows the profile (names, metadata): keep the
 * profile alive until the analysis is freed.
 */
#ifndef EPH_ANALYSIS_H
#define EPH_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/format.h"
#include "turnbull.h"
#include "lua/lua_advice.h" /* header-only: the Lua adapter's advice, for runtime=lua profiles */

/* Lifetime clocks. */
typedef enum eph_clock { EPH_CLOCK_BYTES = 0, EPH_CLOCK_SECONDS = 1, EPH_CLOCK_REL = 2, EPH_NCLOCKS = 3 } eph_clock;

/* Which end of a GC-found death interval (alive_until, death] to use. */
typedef enum eph_death_end { EPH_END_DEATH = 0, EPH_END_ALIVE = 1, EPH_END_MID = 2 } eph_death_end;

typedef enum eph_group_by { EPH_BY_CLASS = 0, EPH_BY_SITE = 1 } eph_group_by;

typedef struct eph_analysis_opts {
  double short_threshold_pct;  /* FiLiP: mean lifetime <= this % of the run is short-lived (5) */
  double most_allocated_pct;   /* FiLiP/Shuf: >= this % of allocations is "most allocated" (1) */
  eph_death_end end;
  eph_group_by by;
  eph_clock km_clock;          /* clock of the survival curves (EPH_CLOCK_REL) */
  size_t km_groups;            /* classes with their own survival curve (6) */
  size_t hist_bins;            /* linear bins (10); log bins: per decade (2) */
  size_t heap_cols, heap_segments; /* heap view grid (200 x 24) */
  bool drop_lives;             /* free a->lives once the curves have what they need (a tool that only
                                  renders: 56 bytes a record; eph_compare_run needs them) */
  void (*progress)(const char *stage, double fraction, void *ctx); /* may be NULL */
  void *progress_ctx;
} eph_analysis_opts;

void eph_analysis_opts_default(eph_analysis_opts *o);

/* One record's lifetime: 56 bytes, and a profile may hold tens of millions
 * (its lifetime at alive_until only enters means: see eph_analysis.lo_sum). */
typedef struct eph_life {
  uint32_t group;       /* class or site id */
  uint32_t gcs_survived;
  double weight;
  double size;
  double t[EPH_NCLOCKS]; /* lifetime at the chosen end */
  bool censored;
} eph_life;

/* A histogram of lifetimes on one clock. */
typedef struct eph_histogram {
  eph_clock clock;
  bool log_bins;        /* edges are powers of 10^(1/k); bin 0 is [0, edges[1]) */
  size_t nbins;
  double *edges;        /* nbins + 1 */
  double *count, *bytes;            /* weighted, records that died */
  double *count_cens, *bytes_cens;  /* weighted, censored (at their lower bound) */
  double total_count, total_bytes;
} eph_histogram;

/* A Kaplan–Meier curve: a step function, S(t) for t >= time[i]. */
typedef struct eph_km {
  uint32_t group;       /* UINT32_MAX: all objects */
  size_t n;             /* steps */
  double *time, *surv, *lo, *hi; /* lo/hi: pointwise 95 % Greenwood band */
  double *at_risk;      /* sample records at risk just before time[i] */
  size_t nrecords, ndeaths, ncensored;
  double max_time;      /* largest lifetime observed (death or censoring) */
} eph_km;

/* One row of the class (or site) table. */
typedef struct eph_group_row {
  uint32_t id;
  const char *name;     /* borrowed from the profile, or owned label for sites */
  size_t nrecords, ncensored;
  double objects, objects_se;  /* estimated allocations (weighted) and s.e. */
  double bytes, bytes_se;
  double pct_objects, pct_bytes;
  double mean[EPH_NCLOCKS], mean_lo[EPH_NCLOCKS]; /* restricted means at chosen end / at alive_until */
  double mean_se[EPH_NCLOCKS];
  double median[EPH_NCLOCKS], p90[EPH_NCLOCKS];   /* from Kaplan–Meier; NAN: beyond the run (too many alive at exit) */
  double gcs_survived;  /* weighted mean */
  bool short_lived, most_allocated;
} eph_group_row;

/* Merlin Fig. 12: heap profile, inverted heap profile and demise map. */
typedef struct eph_heapview {
  size_t cols, segs;    /* time columns, birth segments */
  double t_max;         /* bytes allocated at the end */
  double *col_time;     /* cols: time (bytes allocated) of each column */
  double *live;         /* segs x cols: live bytes at col_time[c] of objects born in segment s */
  size_t ybins;
  double y_max;
  double *demise;       /* cols x ybins: bytes dying in column c at age-ordered heap position y (oldest at 0) */
} eph_heapview;

typedef struct eph_analysis {
  const eph_file *profile;
  eph_analysis_opts opts;
  /* summary */
  const char *title, *mode, *sample;
  double run_wall_s, run_bytes;     /* the run's length on each clock */
  double gc_share;                  /* gc wall / run wall, NAN if unknown */
  size_t nrecords, ncensored;
  size_t n_interval;                /* GC-found deaths (interval-censored) */
  double objects_est, objects_se, bytes_est, bytes_se;
  bool sampled;                     /* some weight != 1 */
  bool exact;                       /* all deaths exact (merlin/brute) */
  double mean[EPH_NCLOCKS], mean_lo[EPH_NCLOCKS], mean_se[EPH_NCLOCKS];
  eph_life *lives;
  /* Per group id (nlo_sum of them): the weighted sum of lifetimes at
   * alive_until, for the table's mean_lo (lifetimes.c adds them up). */
  double (*lo_sum)[EPH_NCLOCKS];
  size_t nlo_sum;
  /* histograms: bytes, seconds, relative */
  eph_histogram hist[EPH_NCLOCKS];
  /* groups, sorted by share of allocations */
  eph_group_row *rows;
  size_t nrows;
  char **site_labels;               /* owned, for --by site */
  /* survival: km[0] overall, then the top groups */
  eph_km *km;
  size_t nkm;
  eph_heapview *heap;               /* NULL unless exact */
  /* Lua profiles (metadata runtime=lua): the collector advice (lua_advice.h),
   * from cycles survived (death - birth full_gcs) of the freed records */
  bool lua;
  const char *lua_gc;               /* metadata gc: the mode the run used, or NULL */
  eph_lua_advice lua_advice;
} eph_analysis;

/* Runs the analysis.  Returns NULL and fills err (EPH_ERR_INVALID, ENOMEM as
 * EPH_ERR_NOMEM) on failure, e.g. a profile without records. */
eph_analysis *eph_analysis_run(const eph_file *p, const eph_analysis_opts *o, eph_error *err);
/*
 * Loads path (eph_file_load_with) and analyses it, each record turned
 * into its lifetime as it is read: a loaded record takes 112 bytes, its
 * lifetime 56 (and 24 more until the file is read), so a large profile
 * needs less than half the memory.  *profile gets the profile's tables and
 * metadata without its records (p->records NULL, p->nrecords their
 * count); the analysis borrows it, free it after.  Returns NULL and fills
 * err, with a message that names path, if the file does not load or has
 * no records (*profile NULL then), or on running out of memory.
 */
eph_analysis *eph_analysis_load(const char *path, const eph_analysis_opts *o, eph_file **profile, eph_error *err);
void eph_analysis_free(eph_analysis *a);

/* --- pieces (each in its own file; exposed for tests) -------------------------- */

/* lifetimes.c: lifetimes of every record, fed a batch at a time (as a
 * file is read: eph_record_sink), into a->lives and the summary.  The
 * relative clock needs the run's length, known once every record is in:
 * eph_lifetimes_finish takes it, with a->profile set. */
typedef struct eph_lifetimes {
  eph_analysis *a;
  size_t cap;                 /* of a->lives and walls */
  uint64_t (*walls)[3];       /* each record's birth, death and alive_until wall_ns */
  double max_wall, max_bytes; /* the latest death seen */
  double wsum, var_n, bsum, var_b;
  double sum[EPH_NCLOCKS], sum_lo[EPH_NCLOCKS], sum2[EPH_NCLOCKS];
  bool exact;                 /* every death so far exact */
  bool keeping;               /* keep the records while every one is exact or censored (heap views) */
  eph_record *kept;
  size_t nkept, cap_kept;
} eph_lifetimes;
void eph_lifetimes_begin(eph_lifetimes *lt, eph_analysis *a, bool keep_records);
bool eph_lifetimes_add(eph_lifetimes *lt, const eph_record *r, size_t n); /* false: out of memory */
void eph_lifetimes_finish(eph_lifetimes *lt);
void eph_lifetimes_free(eph_lifetimes *lt);
/* Lifetime of one record on clock c at the given end. */
double eph_lifetime_of(const eph_record *r, eph_clock c, eph_death_end end, double run_wall_ns);

/* histogram.c */
bool eph_histogram_build(eph_histogram *h, const eph_life *lives, size_t n, eph_clock c, size_t linear_bins);
void eph_histogram_free(eph_histogram *h);

/* survival.c: Kaplan–Meier over (time, died, weight).  Weighted S(t);
 * Greenwood variance from the sample counts.  Ties: deaths before censorings. */
typedef struct eph_km_obs {
  double time;
  double weight;
  bool died;
} eph_km_obs;
bool eph_km_compute(eph_km *km, eph_km_obs *obs, size_t n); /* sorts obs */
/* The same with tmp, room for n records that the sort may use (callers
 * that compute many curves allocate it once); NULL: as eph_km_compute. */
bool eph_km_compute_with(eph_km *km, eph_km_obs *obs, size_t n, eph_km_obs *tmp);
/* Only quantiles: out[k] = eph_km_quantile of the curve at q[k], without
 * keeping the curve (the class table asks for two in each of its rows,
 * and a large class's curve has a step per record).  Sorts obs. */
bool eph_km_quantiles(eph_km_obs *obs, size_t n, eph_km_obs *tmp, const double *q, size_t nq, double *out);
double eph_km_at(const eph_km *km, double t);
/* Smallest t with S(t) <= 1 - q, or NAN if the curve never gets there. */
double eph_km_quantile(const eph_km *km, double q);
void eph_km_free(eph_km *km);

/* classtable.c */
/* scratch: room for 2 * a->nrecords observations (its sorts').  It also
 * makes a->km: the survival curves on km_clock of the km_groups largest
 * groups, at km[1..] (from the sorts it makes anyway), and room for the
 * overall one at km[0]. */
bool eph_classtable_build(eph_analysis *a, eph_km_obs *scratch);
const char *eph_group_name(const eph_analysis *a, uint32_t id);

/* heapview.c */
eph_heapview *eph_heapview_build(const eph_file *p, size_t cols, size_t segs);
void eph_heapview_free(eph_heapview *h);

/* --- compare ------------------------------------------------------------------------ */

typedef struct eph_compare_row {
  const char *name;
  bool in_a, in_b;
  double pct_a, pct_b;           /* share of allocations */
  double mean_a, mean_b;         /* mean relative lifetime, % of run */
  double se_a, se_b;
  double delta_pp;               /* mean_b - mean_a, percentage points */
  double ratio;                  /* mean_b / mean_a */
  double z;                      /* delta / sqrt(se_a^2 + se_b^2) */
  double ks;                     /* KS distance of the class's relative lifetimes */
  bool flagged;                  /* beyond sampling noise */
  bool short_a, short_b;
} eph_compare_row;

typedef struct eph_compare {
  const eph_analysis *a, *b;
  double ks;                     /* sup |F_A - F_B| on relative lifetime (KM-based) */
  double ks_critical;            /* 5 % critical value for the sample sizes */
  double mean_delta_pp, mean_z;
  bool flagged;
  eph_compare_row *rows;
  size_t nrows;
  double z_threshold;
} eph_compare;

/* KS distance between two KM curves (as CDFs 1 - S). */
double eph_km_distance(const eph_km *x, const eph_km *y);
eph_compare *eph_compare_run(const eph_analysis *a, const eph_analysis *b, double z_threshold);
void eph_compare_free(eph_compare *c);

#endif
