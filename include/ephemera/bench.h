/*
 * ephemera/bench.h — the benchmark harness behind `ephemera bench`
 * (docs/bench.md), after DaCapo Chopin's methodology: every invocation a
 * fresh process with iterations inside it, 95 % confidence intervals
 * (Student's t), heap sizes as multiples of a measured minimum heap, the
 * lower-bound overhead (LBO) for wall and task clock, simple and metered
 * latency.
 * Layer: bench, above the heap's parameters and the workloads (docs/architecture.md).
 *
 * Targets: a workload ("dataframe:default"), a Lua 5.4 script
 * ("lua:script.lua ARGS") or any command ("cmd:prog args", configured through
 * EPHEMERA_GC).  One invocation is run by `ephemera bench run-one`, which
 * writes one JSON file (a "run"); a local sweep spawns those children one
 * after another, `plan` writes their command lines for GNU parallel or
 * Slurm, `merge` reads the files back.  Everything below that can fail
 * returns -1 (or NULL) and fills an eph_error with one line.  Memory: the
 * caller frees what it gets with the matching *_free call.  The harness
 * prints nothing: it returns results (src/render/render_bench.h renders
 * them) and tells long work's progress to the caller's callback
 * (eph_bench_options.progress).
 */
#ifndef EPHEMERA_BENCH_H
#define EPHEMERA_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- targets ------------------------------------------------------------- */

/* jvm: the Java suite (workloads/jvm) in one JVM per invocation; jcmd: any
 * Java command line, run once per iteration.  Both run under OpenJDK's
 * collectors (eph_bench_options.collectors) with the JVMTI agent. */
typedef enum eph_bench_kind { EPH_BENCH_WORKLOAD, EPH_BENCH_LUA, EPH_BENCH_CMD, EPH_BENCH_JVM, EPH_BENCH_JCMD } eph_bench_kind;

typedef struct eph_bench_target {
  eph_bench_kind kind;
  char spec[1024]; /* as given, e.g. "dataframe:default", "lua:fib.lua 20", "cmd:./prog -n 3", "jvm:h2:small" */
  char name[512];  /* workload name (Ephemera's or the Java suite's), script path, or the command line */
  char size[64];   /* workloads: small, default, large or a number; the Java suite: small or default */
  char args[512];  /* Lua: the script's arguments, separated by spaces */
} eph_bench_target;

/* Parses "KIND:..." (a bare workload name means its default size) and checks
 * that the workload exists, the script is readable, the command is not
 * empty.  Returns 0, or -1 with a message naming the target. */
/* Whether targets of this kind run on the JVM (configurations are collectors). */
bool eph_bench_kind_is_java(eph_bench_kind k);
int eph_bench_target_parse(const char *text, eph_bench_target *t, eph_error *err);

/* Parses "1.5,2,3": positive factors, at most max of them.  Returns how many,
 * or -1 with a message naming the bad factor. */
int eph_bench_factors_parse(const char *text, double *out, size_t max, eph_error *err);

/* --- one invocation ------------------------------------------------------- */

typedef struct eph_bench_event {
  uint64_t start_ns, end_ns; /* since the iteration started */
} eph_bench_event;

/* One iteration.  A quantity the target cannot report is negative (-1):
 * commands report no GC figures, Lua reports no GC time. */
typedef struct eph_bench_iter {
  bool warmup;
  double wall_s, task_s;          /* wall clock, process CPU (task clock) */
  double gc_s, gc_cpu_s;          /* stop-the-world collection time, wall and CPU */
  double mutator_s;               /* wall - gc */
  int64_t gc_count, scavenges, full_gcs;
  int64_t peak_bytes;             /* peak heap (committed; Lua: bytes in use; commands: max RSS) */
  int64_t peak_live_bytes;        /* peak bytes in objects seen at a collection */
  int64_t allocated_bytes, objects;
  int64_t bytes_copied;           /* scavenges' survivors copied and promoted */
  eph_bench_event *events;
  size_t nevents;
} eph_bench_iter;

/* A configuration of a sweep: GC parameters and a heap factor. */
typedef struct eph_bench_config {
  char gc[256];          /* GC parameters ("" = defaults); for Lua targets, Lua's collector (see docs);
                            for Java targets, OpenJDK's collector ("g1", ...) */
  double factor;         /* heap size as a multiple of the minimum heap (Java: G1's); 0 = no limit */
  uint64_t heap_bytes;   /* the limit in bytes (factor x minimum heap), 0 = none; Java: -Xms = -Xmx */
  char profile[256];     /* profile SPEC (include/ephemera/profile.h) the target runs under; "" = none */
} eph_bench_config;

typedef struct eph_bench_run {
  size_t target_index, config_index, invocation;
  eph_bench_target target;
  eph_bench_config config;
  char version[32];
  bool ok;
  char error[512];       /* why not ok */
  eph_bench_iter *iters;
  size_t niters;
} eph_bench_run;

/* Runs one invocation in this process (`ephemera bench run-one`): a
 * workload or Lua script runs warmup + iterations times inside it, a command
 * is executed once per iteration.  Fills *run (ok false with the reason if
 * the target failed: heap exhausted, self-check, exit status).  Returns -1
 * only if nothing could be measured at all. */
int eph_bench_run_one(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err);
void eph_bench_run_free(eph_bench_run *run);

/* --- results ---------------------------------------------------------------- */

typedef struct eph_bench_results {
  eph_bench_run *runs;
  size_t nruns, cap;
  double ci_target;      /* --ci, or 0 */
} eph_bench_results;

/* Appends a copy of run (takes over its iterations; *run is emptied). */
int eph_bench_results_add(eph_bench_results *r, eph_bench_run *run, eph_error *err);
void eph_bench_results_free(eph_bench_results *r);

/* Writes one run as JSON (the file `run-one -o` writes). */
int eph_bench_run_write_json(const eph_bench_run *run, FILE *out, eph_error *err);
/* Reads a run file or a results file (-o results.json) into r, appending.
 * -1 with "FILE: ..." naming what is wrong. */
int eph_bench_results_load(eph_bench_results *r, const char *path, eph_error *err);
/* Loads every *.json file in dir (merge).  -1 if none or one is bad. */
int eph_bench_results_load_dir(eph_bench_results *r, const char *dir, eph_error *err);

/* --- statistics --------------------------------------------------------------- */

/* The p-quantile (0 < p < 1) of Student's t distribution with df degrees of
 * freedom (df >= 1); NAN if out of range. */
double eph_bench_t_quantile(double p, double df);

typedef struct eph_bench_stat {
  size_t n;
  double mean, median, sd, min, max;
  double ci;           /* 95 % CI half-width (Student's t, n-1 df); 0 when n < 2 */
} eph_bench_stat;

/* Statistics of x[0..n) (n may be 0: all zero).  x is not changed. */
void eph_bench_stat_of(const double *x, size_t n, eph_bench_stat *out);

/* Nearest-rank percentile of sorted x[0..n), 0 < p <= 1. */
double eph_bench_percentile(const double *sorted, size_t n, double p);

/* --- latency -------------------------------------------------------------------- */

#define EPH_BENCH_NPCT 6 /* 50, 90, 99, 99.9, 99.99 %, max */
extern const double eph_bench_pcts[EPH_BENCH_NPCT];

/* Metered latency (DaCapo Chopin, section 4.4): every event gets a synthetic
 * start time, the arrival schedule smoothed over a window of window_ns
 * (0 = none, UINT64_MAX = the whole run): inside the window around its own
 * start, events arrive at uniform intervals between the first start and the
 * last.  Its latency is end - min(actual start, synthetic start).  ev must
 * be in order of start; out[i] gets event i's latency in ns. */
void eph_bench_metered(const eph_bench_event *ev, size_t n, uint64_t window_ns, double *out);

typedef struct eph_bench_latency {
  size_t n;
  double ms[EPH_BENCH_NPCT]; /* at eph_bench_pcts */
} eph_bench_latency;

/* --- summaries: one per target and configuration ----------------------------- */

typedef struct eph_bench_summary {
  size_t target_index, config_index;
  eph_bench_target target;
  eph_bench_config config;
  size_t invocations, failed;
  char first_error[512];
  /* over invocations, each invocation's mean over its timed iterations */
  eph_bench_stat wall, task, gc, gc_cpu, mutator, gc_count, peak, allocated;
  bool have_gc; /* the target reports GC time */
  /* LBO: total / min over the target's configurations of (total - GC) */
  double lbo_wall, lbo_wall_lo, lbo_wall_hi, lbo_task, lbo_task_lo, lbo_task_hi;
  /* timed iterations pooled; warm-ups apart */
  double warmup_wall;   /* mean wall of warm-up iterations, 0 if none */
  size_t warmups;
  eph_bench_latency simple, metered_100ms, metered_full;
} eph_bench_summary;

/* The DaCapo Chopin paper's Figure 1: one configuration (a collector, or a
 * set of GC parameters, at one heap factor) across the targets, its LBO's
 * geometric mean over them.  A point stands only when every target ran
 * that configuration (complete); lo and hi are the geometric means of the
 * targets' CI bounds, an interval for the figure's shading, not a CI of
 * the mean. */
typedef struct eph_bench_geomean {
  char gc[256];     /* the configuration's GC parameters or collector */
  char profile[256];
  double factor;
  size_t ntargets;  /* targets with a successful run of it */
  bool complete;    /* ntargets == every target of the sweep */
  double lbo_wall, lbo_wall_lo, lbo_wall_hi, lbo_task, lbo_task_lo, lbo_task_hi;
} eph_bench_geomean;

typedef struct eph_bench_report {
  eph_bench_summary *rows;
  size_t nrows;
  double ci_target;
  size_t wide_ci; /* rows whose wall CI is wider than 3 % of the mean */
  eph_bench_geomean *geomean; /* one per configuration (gc, profile, factor), in the rows' order */
  size_t ngeomean;
  size_t ntargets;            /* distinct targets among the rows */
} eph_bench_report;

/* Groups r's runs by target and configuration (in order of their indices)
 * and computes the statistics, LBO and latency.  -1 only out of memory. */
int eph_bench_summarize(const eph_bench_results *r, eph_bench_report *out, eph_error *err);
void eph_bench_report_free(eph_bench_report *rep);

/* Writes the results file (`-o results.json`, also `--format json`):
 * every run, then the summaries of rep (eph_bench_summarize of r).
 * eph_bench_results_load reads its runs back. */
int eph_bench_results_write_json(const eph_bench_results *r, const eph_bench_report *rep, FILE *out, eph_error *err);

/* LBO over n configurations of one target: total[i] and gc[i] are mean
 * costs; lbo[i] = total[i] / min_j(total[j] - gc[j]).  Returns the baseline
 * (0 if n == 0 or the baseline is not positive, then lbo[] is 0). */
double eph_bench_lbo(const double *total, const double *gc, size_t n, double *lbo);

/* --- sweeps, minimum heap, plans ------------------------------------------------- */

/* Progress of long work (a sweep, a calibration), for the caller to show:
 * the library prints nothing. */
typedef enum eph_bench_progress_kind {
  EPH_BENCH_PROGRESS_STEP,     /* step done + 1 of total starts: target, config, invocation, eta_s */
  EPH_BENCH_PROGRESS_MINHEAP,  /* a configuration's minimum heap is known: target, gc, minheap_bytes, cached */
  EPH_BENCH_PROGRESS_FINISHED, /* the steps are over, done or failed (a live display clears its line) */
} eph_bench_progress_kind;

typedef struct eph_bench_progress {
  eph_bench_progress_kind kind;
  size_t done, total;     /* steps finished, steps in all (a sweep's total grows with --ci) */
  const char *target;     /* the target's spec ("gcbench:small") */
  const char *config;     /* STEP: the configuration's label (eph_bench_config_label) */
  size_t invocation;      /* STEP: which invocation of it, from 0 */
  double eta_s;           /* STEP: seconds left, estimated from the steps done; negative before the first */
  const char *gc;         /* MINHEAP: the GC parameters ("" = defaults) */
  uint64_t minheap_bytes; /* MINHEAP */
  bool cached;            /* MINHEAP: read from the cache, not measured */
} eph_bench_progress;

typedef void (*eph_bench_progress_fn)(const eph_bench_progress *p, void *ctx);

/* A configuration's label: "heap=2x eden=64M", "defaults". */
void eph_bench_config_label(const eph_bench_config *c, char *buf, size_t len);

typedef struct eph_bench_options {
  eph_bench_target *targets;
  size_t ntargets;
  const char *const *gcs; /* GC parameter sets; none = the defaults */
  size_t ngcs;
  const char *const *collectors; /* Java targets: OpenJDK's collectors (eph_jvm_collectors); none = g1 */
  size_t ncollectors;
  const double *factors;  /* heap factors; none = no limit */
  const char *profile;    /* run every configuration under this profile SPEC (NULL = none) */
  size_t nfactors;
  unsigned invocations;   /* per configuration (default 5) */
  unsigned iterations;    /* timed iterations per invocation (default 1) */
  unsigned warmup;        /* warm-up iterations per invocation (default 1) */
  double ci_target;       /* --ci: add invocations until the wall CI half-width is this fraction; 0 = off */
  unsigned max_invocations; /* cap for --ci (default 30) */
  const char *exe;        /* the ephemera executable the children run */
  bool use_cache;         /* minimum heaps from the cache */
  bool skip_own_minheap;  /* Java targets: measure G1's minimum heap only (the base), not each collector's own */
  eph_bench_progress_fn progress; /* told of each invocation and minimum heap (a renderer shows them); NULL: none */
  void *progress_ctx;     /* progress's ctx */
} eph_bench_options;

/* Parses --collector's "serial,g1,..." or "all" into names (static
 * strings, at most 5), *all telling which.  -1 with a message on an unknown
 * name or a repeat. */
int eph_bench_collectors_parse(const char *text, const char **names, size_t *n, bool *all, eph_error *err);
/* Checks the collectors against the targets once they are parsed: none
 * for Java targets means g1; collectors without a Java target, or --gc
 * with only Java targets, are errors; collectors this JDK lacks are left
 * out with `all` (named in left_out, comma-separated) and an error without
 * it.  names is compacted in place. */
int eph_bench_collectors_check(const eph_bench_options *o, const char **names, size_t *n, bool all, char *left_out,
                               size_t len, eph_error *err);

/* Fills the defaults (5 invocations, 1 iteration, 1 warm-up, cap 30, cache on). */
void eph_bench_options_init(eph_bench_options *o);

/* The configurations of target ti (minimum heaps measured or read from the
 * cache when there are factors): *configs is malloc'd, *n its length. */
int eph_bench_configs(const eph_bench_options *o, size_t ti, eph_bench_config **configs, size_t *n, eph_error *err);

/* Runs the whole sweep, each invocation a fresh `exe bench run-one` child. */
int eph_bench_sweep(const eph_bench_options *o, eph_bench_results *r, eph_error *err);

/* Runs one invocation as a child process and reads its result into *run. */
int eph_bench_spawn(const char *exe, size_t ti, size_t ci, size_t inv, const eph_bench_target *t,
                    const eph_bench_config *c, unsigned warmup, unsigned iterations, eph_bench_run *run,
                    eph_error *err);

/* The smallest heap limit (bytes, to 1 %) at which target t with GC
 * parameters gc (Java targets: the collector) completes warmup + iterations with its self-check, by
 * bisection over fresh child processes; cached under
 * $XDG_CACHE_HOME/ephemera/minheap (or ~/.cache/...) by target, GC
 * parameters, iterations and version unless use_cache is false.
 * *cached tells whether it came from the cache. */
int eph_bench_minheap(const eph_bench_options *o, const eph_bench_target *t, const char *gc, uint64_t *bytes,
                      bool *cached, eph_error *err);

/* Writes one self-contained command line per run of the sweep to jobs,
 * each writing DIR/run-T-C-I.json.  Returns the number of jobs, -1 on error. */
long eph_bench_plan(const eph_bench_options *o, const char *dir, FILE *jobs, eph_error *err);

/* --- nominal statistics ---------------------------------------------------------- */

/* Measures DaCapo Chopin's nominal statistics of every workload at size
 * (minimum heap, then `invocations` runs at 2x and 6x it) and writes them as
 * JSON to out: the nominal statistics file, which eph_bench_nominal_load
 * reads back. */
int eph_bench_nominal(const eph_bench_options *o, const char *size, FILE *out, eph_error *err);

/* One workload's row of a nominal statistics file; a figure the file
 * lacks is -1. */
typedef struct eph_bench_nominal_row {
  char workload[64];
  char error[512];          /* "" unless the workload failed (then no figures) */
  double minheap_bytes, alloc_rate_mb_s, mean_object_bytes, gc_share_2x, gc_count_2x, scavenge_survival,
      peak_live_bytes, heap_sensitivity;
  bool have_latency;        /* the workload marks events */
  double latency_p50_ms, latency_p99_ms;
} eph_bench_nominal_row;

typedef struct eph_bench_nominal_table {
  char size[64];            /* the size measured ("?" if the file does not say) */
  long long invocations;    /* -1 if the file does not say */
  eph_bench_nominal_row *rows;
  size_t nrows;
} eph_bench_nominal_table;

/* Reads a nominal statistics file into *out (free with
 * eph_bench_nominal_table_free).  -1 with "PATH: ..." if it cannot be read
 * (EPH_ERR_IO) or is not one (EPH_ERR_INVALID). */
int eph_bench_nominal_load(const char *path, eph_bench_nominal_table *out, eph_error *err);
void eph_bench_nominal_table_free(eph_bench_nominal_table *t);

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_BENCH_H */
