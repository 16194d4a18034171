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
#include "runtime/lua/lua_advice.h" /* header-only: the Lua adapter's advice, for runtime=lua profiles */

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
  unsigned stack_depth;        /* --by site on a profile with call stacks: fold sites by their first
                                  N frames (stacks.h); 0 or 1: by the allocation point alone */
  eph_clock km_clock;          /* clock of the survival curves (EPH_CLOCK_REL) */
  size_t km_groups;            /* classes with their own survival curve (6) */
  size_t hist_bins;            /* linear bins (10); log bins: per decade (2) */
  size_t heap_cols, heap_segments; /* heap view grid (200 x 24) */
  bool nepotism_safe;          /* estimator: a full-GC-found death's lower end only at a full GC it survived
                                  (true), or as recorded, the scavenge that promoted it (false, the default;
                                  nepotism can make that late: both are fitted, see eph_life_est) */
  int nboot;                   /* bootstrap replicates for the estimates' error bars (40) */
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
/* Lifetimes estimated from what each death tells (intervals.c): Turnbull's
 * NPMLE over the interval-censored deaths, exact deaths and censorings, on
 * the allocation clock (bytes, and % of the bytes the run allocated, so
 * that two runs compare whatever the profiler's overhead did to the wall
 * clock).  For exact profiles it is Kaplan–Meier's estimate. */
typedef struct eph_life_est {
  double mean_pct, mean_pct_se;     /* restricted mean lifetime, % of run (allocation clock), and its s.e. */
  double short_share, short_share_se; /* share of objects living <= the short threshold */
  double median_pct, p90_pct;       /* NAN: not reached within the run */
  double mean_bytes, median_bytes, p90_bytes;
  double weight;                    /* objects (weighted) */
  double found_by_full;             /* share of its deaths (weighted) only a full GC found: their bracket spans a
                                       full-GC interval */
  double alt_mean_pct, alt_short_share; /* the same with the other choice of lower end for nepotism suspects
                                       (opts.nepotism_safe); equal when the group has none */
  bool nepotism_sensitive;          /* the two differ by > 5 points of share or 0.5 points of % of run */
  double full_gc_mean_pp;           /* how far the deaths only a full GC found could move the mean: their
                                       brackets' widths (proven lower end to upper end), points of % of run */
  double full_gc_short;             /* their share of objects whose bracket straddles the short threshold */
  bool resolved;                    /* the run's collections resolve it: >= 3 scavenges, full_gc_mean_pp <= 0.5,
                                       full_gc_short <= 0.05, not nepotism-sensitive */
  bool converged;                   /* the EM converged */
  const double *F;                  /* F at each of the analysis's est_edges (owned by the analysis; NULL if none) */
  double last_death_bytes;          /* the upper end of the latest death: F beyond it is only censored objects'
                                       mass, which the estimate may put anywhere after them (curves stop there) */
  int nboot;                        /* bootstrap replicates behind the s.e. (0: none) */
} eph_life_est;

/* What the run's collections can resolve (intervals.c). */
typedef struct eph_resolution {
  bool interval;                    /* deaths are brackets (gc, finalization) rather than exact */
  bool have_gc_log;                 /* the file has its collections (their kinds and clocks) */
  uint64_t scavenges, full_gcs;
  double scavenge_interval;         /* mean bytes allocated between scavenges (NAN: fewer than two) */
  double full_interval;             /* mean bytes between full GCs, run start counted (NAN: none) */
  bool too_few;                     /* fewer than 3 scavenges: lifetimes below a run's length are not resolved */
  size_t nepotism_suspects;         /* full-GC-found deaths whose lower end is a scavenge (nepotism can make it late) */
  double nepotism_share;            /* their share of GC-found deaths (weighted) */
} eph_resolution;

typedef struct eph_group_row {
  uint32_t id;
  const char *name;     /* borrowed from the profile, or owned label for sites */
  size_t nrecords, ncensored;
  double objects, objects_se;  /* estimated allocations (weighted) and s.e. */
  double bytes, bytes_se;
  double pct_objects, pct_bytes;
  double mean[EPH_NCLOCKS], mean_lo[EPH_NCLOCKS]; /* restricted means at chosen end / at the lower end (a bound:
                                                     nepotism-safe, intervals.c) */
  double mean_se[EPH_NCLOCKS];
  double median[EPH_NCLOCKS], p90[EPH_NCLOCKS];   /* from Kaplan–Meier; NAN: beyond the run (too many alive at exit) */
  double gcs_survived;  /* weighted mean */
  bool short_lived, most_allocated;
  eph_life_est est;                 /* Turnbull estimates, allocation clock */
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
  /* estimates from the intervals (intervals.c): overall, and per group id */
  eph_life_est est;
  eph_life_est *group_est;
  size_t ngroup_est;
  double *est_edges;                /* the estimates' grid (bytes), nest_edges of them, and the F arrays */
  size_t nest_edges;
  double **est_F;                   /* owned: ngroup_est + 1 (the last is overall's), NULL where none */
  double **est_Flo, **est_Fhi;      /* owned, the same: F's 95 % bootstrap band (NULL where not bootstrapped) */
  bool km_estimated;                /* the survival curves are the estimates' (interval deaths; rel/bytes clock,
                                       rel then in % of the bytes allocated), not Kaplan–Meier's at --end */
  eph_resolution res;
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
/* What one record's death tells, kept from its stamps until the run's
 * collections are known (the file may hold them after the records). */
typedef enum eph_iv_kind {
  EPH_IV_POINT = 0,    /* exact (merlin, brute) */
  EPH_IV_CENSORED = 1, /* alive at the end */
  EPH_IV_TRUSTED = 2,  /* (lo, hi] as recorded: a scavenge found it dead, or an allocator hook saw it freed */
  EPH_IV_FULL = 3,     /* gc mode, a full GC found it dead: lo at collection `gc` (0: its birth) */
  EPH_IV_FINALIZED = 4 /* finalization mode: collection `gc` found it dead; lo to be rebuilt */
} eph_iv_kind;
typedef struct eph_iv {
  float lo, hi;        /* lifetime bounds on the allocation clock (bytes) */
  uint32_t gc;         /* a 1-based collection index, see the kinds */
  uint32_t gc_birth;   /* collections completed before its birth */
  uint8_t kind;
} eph_iv;

typedef struct eph_lifetimes {
  eph_analysis *a;
  eph_iv *iv;                 /* per record, until the estimates are made */
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
/* What r's death tells (its stamps; no run-wide facts yet). */
eph_iv eph_iv_of(const eph_record *r);

/* intervals.c: the run's collections by 1-based index (the file's GC log):
 * allocation clock, kind, the last full GC at or before each. */
typedef struct eph_gc_table {
  size_t n;
  uint64_t *alloc;
  bool *full;
  uint32_t *last_full; /* largest full-GC index <= i, 0 if none */
} eph_gc_table;
bool eph_gc_table_build(eph_gc_table *t, const eph_file *p); /* false: out of memory (free it anyway) */
void eph_gc_table_free(eph_gc_table *t);
/* A record's bracket: the estimator's lower end as recorded (or rebuilt,
 * finalization), the proven one (safe_lo: nepotism), the upper end. */
typedef struct eph_bracket {
  eph_tb_kind kind;
  double lo, hi, safe_lo;   /* lifetimes, bytes */
  bool suspect;             /* safe_lo < lo: a lower end nepotism may have moved */
  bool by_full;             /* a full GC found the death */
} eph_bracket;
eph_bracket eph_bracket_of(const eph_iv *v, const eph_gc_table *t);

/* intervals.c: the estimates (a->est, a->group_est, a->res) from lt->iv,
 * and the means at the lower end made safe from nepotism (a lower end at a
 * scavenge, for a death only a full GC found, is replaced by the last full
 * GC it survived or its birth).  Call after eph_lifetimes_finish, while
 * lt->walls is there.  False: out of memory. */
bool eph_intervals_estimate(eph_analysis *a, eph_lifetimes *lt);
/* For profiles with interval deaths and km_clock rel or bytes: replaces the
 * survival curves (a->km) by the estimates' (1 - F at the grid's edges up
 * to the run's end, the bootstrap band, at_risk the expected sample
 * records still alive).  False: out of memory. */
bool eph_intervals_curves(eph_analysis *a);
/* The estimate's group figures, for rows: a->group_est[id] or zeros. */
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

/* sitefold.c: for --by site on a profile with call stacks, regroups
 * a->lives and a->lo_sum by stack prefix (opts.stack_depth frames) and
 * labels the groups; a no-op for other profiles.  false: out of memory. */
bool eph_analysis_fold_sites(eph_analysis *a);

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
  bool identical;                /* the same deaths on the clock (KS 0, as many records): no change */
  bool short_a, short_b;
} eph_compare_row;

typedef struct eph_compare {
  const eph_analysis *a, *b;
  eph_clock clock;               /* EPH_CLOCK_BYTES: % of the bytes allocated (default); EPH_CLOCK_REL: of wall time */
  double mean_a, mean_b;         /* overall mean lifetime, % of run on that clock */
  bool identical;                /* the same deaths: no change */
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
/* Compares on the allocation clock: eph_compare_run_on(a, b, z, EPH_CLOCK_BYTES). */
eph_compare *eph_compare_run(const eph_analysis *a, const eph_analysis *b, double z_threshold);
/* clock: EPH_CLOCK_BYTES (the means estimated from the intervals, % of the
 * bytes allocated) or EPH_CLOCK_REL (% of wall time, means at the chosen end).
 * NULL when out of memory; free with eph_compare_free. */
eph_compare *eph_compare_run_on(const eph_analysis *a, const eph_analysis *b, double z_threshold, eph_clock clock);
void eph_compare_free(eph_compare *c);

/* --- calibration: `ephemera compare --exact` (calibrate.c) ------------------------- */

typedef struct eph_calib_row {
  const char *name;
  double pct_objects;            /* share of allocations (exact side) */
  bool in_other;                 /* the other profile has the class */
  double mean_exact, mean_est, mean_se, mean_err_pp;      /* mean lifetime, % of run (allocation clock) */
  double short_exact, short_est, short_se, short_err_pp;  /* short-lived share, % of the class's objects */
  double median_exact, median_est;                        /* % of run; NAN: not reached */
  double curve_dist;             /* sup |F_exact - F_est| (survival curves' distance) */
  double found_by_full;          /* the other's share of deaths only a full GC found */
  bool nepotism_sensitive;       /* the other's estimate depends on which lower end nepotism suspects take */
  bool resolved;                 /* the other's report calls the class resolved */
} eph_calib_row;

typedef struct eph_calibration {
  const eph_analysis *exact, *other;
  eph_calib_row all;             /* all objects */
  eph_calib_row *rows;           /* the exact side's classes, its order */
  size_t nrows;
  /* over classes of >= most_allocated_pct % of allocations the other calls resolved: */
  double short_err_max_pp, mean_err_max_pp;
  size_t nresolved, nunresolved;
} eph_calibration;

/* The other's estimates against the exact ones, per class.  NULL: out of memory. */
eph_calibration *eph_calibrate(const eph_analysis *exact, const eph_analysis *other);
void eph_calibration_free(eph_calibration *c);

/* Brackets object by object: the other's records joined to the exact
 * profile's by id (the birth clock; both runs of one deterministic
 * program).  Each joined death must lie in (proven lower end, upper end]. */
typedef struct eph_bracket_stats {
  size_t joined, unmatched;      /* deaths of the other's with and without an exact counterpart */
  size_t violations;             /* exact death outside (proven lower end, upper end]: must be 0 */
  size_t below_recorded;         /* exact death before the recorded lower end (nepotism) */
  size_t late_upper;             /* exact death after the upper end */
} eph_bracket_stats;
/* Reads both files (the other twice: its GC log, then its records).
 * Returns EPH_OK, or the loader's error (naming the file) in err. */
eph_status eph_bracket_check(const char *exact_path, const char *other_path, eph_bracket_stats *s, eph_error *err);

#endif
