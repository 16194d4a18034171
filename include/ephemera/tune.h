/*
 * ephemera/tune.h — the GC advisor behind `ephemera tune` (docs/tune.md).
 * Layer: tune, above the simulator and the harness (docs/architecture.md).
 *
 * Profile once, simulate many, run a few, recommend one:
 *   1. lifetimes from one profiled run (eph_tune_lives_from_profile);
 *   2. a grid of GC configurations (eph_tune_grid) simulated over those
 *      lifetimes (eph_tune_simulate), turned into predicted time by a cost
 *      model calibrated on one measured run of the default (eph_tune_calibrate);
 *   3. the best predictions ranked under an objective (eph_tune_rank), the
 *      top few measured for real with repeated invocations (eph_tune_measure);
 *   4. the best MEASURED configuration recommended as an EPHEMERA_GC string.
 * eph_tune_run (src/tune/advisor.c) does the whole loop and returns what it
 * found; src/render/render_tune.c prints it.
 *
 * Memory: every array a function returns is owned by the caller and freed
 * with free() (or the matching _free function named below).
 */
#ifndef EPHEMERA_TUNE_H
#define EPHEMERA_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/format.h"
#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- configurations ------------------------------------------------------------ */

/* The four Pharo parameters plus the tenuring age: what the advisor varies. */
typedef struct eph_tune_config {
  size_t eden, headroom, shrink;
  double ratio;
  unsigned tenure;
} eph_tune_config;

/* The heap's defaults (Illimani's Table 2 plus tenure 3). */
eph_tune_config eph_tune_config_default(void);

/* Illimani et al.'s five configurations (Table 2), i = 0..4; tenure 3. */
eph_tune_config eph_tune_config_illimani(int i);

/* Writes c as "eden=64M,headroom=64M,shrink=128M,ratio=2.5,tenure=3", a
 * string eph_gc_params_parse accepts (EPHEMERA_GC, `ephemera run --gc`). */
void eph_tune_config_format(const eph_tune_config *c, char *buf, size_t len);

/* Reads c's fields from GC parameters (the inverse of applying the string). */
eph_tune_config eph_tune_config_from_params(const eph_gc_params *p);

bool eph_tune_config_equal(const eph_tune_config *a, const eph_tune_config *b);

/*
 * The search grid: log-spaced eden (4M..300M), headroom, shrink, GC ratio
 * (0.33..10) and tenure age (1, 3, 7), which contains the default and
 * Illimani's five.  Returns the number of configurations (≥ 500) and sets
 * *out to a malloc'd array; 0 (and *out NULL) when out of memory.
 * The default is always element 0.
 */
size_t eph_tune_grid(eph_tune_config **out);

/* A coarse grid of 48+ configurations for measuring by hand (bench/tune):
 * eden × ratio × tenure at Illimani-like headroom/shrink.  Same contract. */
size_t eph_tune_grid_coarse(eph_tune_config **out);

/* A grid by name, for `ephemera tune --list-grid`: "full" (eph_tune_grid),
 * "coarse" (eph_tune_grid_coarse) or "illimani" (Illimani's five).  Sets
 * *out (caller frees) and *n; EPH_ERR_INVALID for another name,
 * EPH_ERR_NOMEM when out of memory, each with a message in err. */
eph_status eph_tune_grid_named(const char *which, eph_tune_config **out, size_t *n, eph_error *err);

/* --- lifetimes ------------------------------------------------------------------ */

/* One object (or sample) as the simulator sees it, on the bytes clock. */
typedef struct eph_tune_life {
  uint64_t birth, death; /* death = UINT64_MAX: alive at the end */
  uint32_t size;         /* bytes, header included */
  uint32_t class_id;
  float weight;          /* objects it stands for (1 unsampled) */
} eph_tune_life;

typedef struct eph_tune_lives {
  eph_tune_life *lives; /* in birth order */
  size_t n;
  uint64_t end;         /* bytes allocated in the whole run */
  char **class_names;   /* by class id (owned copies; NULL where undefined) */
  size_t nclasses;
  bool exact;           /* every death is exact (merlin/brute) */
} eph_tune_lives;

/*
 * Loads a profile (.eph) into lifetimes.  Deaths a collector found (gc
 * mode) are placed in the middle of the interval the profile gives them.
 * On failure returns non-OK and fills err with a message naming the file.
 */
eph_status eph_tune_lives_load(const char *path, eph_tune_lives *out, eph_error *err);
/* The same from a profile already loaded with its records (eph_file_load);
 * name (the file's) is for messages. */
eph_status eph_tune_lives_from_file(const eph_file *p, const char *name, eph_tune_lives *out, eph_error *err);
void eph_tune_lives_free(eph_tune_lives *l);

/* --- simulation and cost model ------------------------------------------------- */

/* What one configuration does to one run, as simulated. */
typedef struct eph_tune_sim {
  eph_tune_config config;
  uint64_t scavenges, full_gcs;
  double copied;    /* bytes copied by scavenges (to survivor space or tenured) */
  double promoted;  /* bytes tenured */
  double marked;    /* live bytes the full GCs traced and compacted */
  double committed; /* bytes of memory first touched (page faults): new space, old growth */
  double peak_heap; /* peak committed bytes, new + old space */
  bool by_simulator; /* the figures are the GC simulator's (src/sim), else the fast model's */
  double gc_s;      /* predicted GC seconds, after calibration */
  double time_s;    /* predicted run time, after calibration */
} eph_tune_sim;

/*
 * Simulates the grid's configurations over lives (Spur's policy: eden
 * scavenges, survivor overflow and age tenuring, old space growing by the
 * headroom, a full GC when it grew by the ratio, shrinking above the
 * threshold).  out[i] corresponds to configs[i]; gc_s and time_s are left 0
 * until eph_tune_calibrate.  Returns EPH_ERR_NOMEM on allocation failure.
 */
eph_status eph_tune_simulate(const eph_tune_lives *lives, const eph_tune_config *configs, size_t n, eph_tune_sim *out);

/* The cost model: seconds per unit of each kind of simulated work. */
typedef struct eph_tune_costs {
  double per_copied_byte, per_marked_byte, per_committed_byte, per_scavenge, per_full_gc;
  double mutator_s; /* run time outside the modelled work */
  double scale;     /* the calibration's factor on the nominal GC costs (1/8..8) */
} eph_tune_costs;

/* The model's relative costs before calibration (a 64-bit x86 at ~3 GHz). */
eph_tune_costs eph_tune_costs_nominal(void);

/*
 * Calibrates costs on one measured run of the default configuration
 * (reference: its simulation; measured wall and GC seconds): scales the
 * GC costs so the default's predicted GC time equals the measured one
 * (the factor kept within 1/8..8 of nominal) and sets the mutator time to
 * the rest.  Then fills gc_s and time_s of every
 * sim.  When measured_gc_s is 0 the nominal costs are kept.
 */
void eph_tune_calibrate(eph_tune_costs *costs, const eph_tune_sim *reference, double measured_wall_s,
                        double measured_gc_s, eph_tune_sim *sims, size_t n);

/* --- objectives and ranking ---------------------------------------------------- */

typedef enum eph_tune_objective_kind {
  EPH_TUNE_TIME = 0,         /* shortest run time */
  EPH_TUNE_TIME_WITHIN_HEAP, /* shortest run time whose peak heap is ≤ heap_limit */
  EPH_TUNE_SPACE_TIME,       /* smallest run time × peak heap */
} eph_tune_objective_kind;

typedef struct eph_tune_objective {
  eph_tune_objective_kind kind;
  size_t heap_limit; /* bytes, for EPH_TUNE_TIME_WITHIN_HEAP */
} eph_tune_objective;

/* Parses "time", "time-within-heap=SIZE" (K/M/G) or "space-time".  On bad
 * input returns EPH_ERR_INVALID with a message naming the problem. */
eph_status eph_tune_objective_parse(const char *text, eph_tune_objective *out, eph_error *err);

/* Writes the objective as text ("time-within-heap=512M"). */
void eph_tune_objective_format(const eph_tune_objective *o, char *buf, size_t len);

/* The objective's score of a run (lower is better); INFINITY when the run
 * breaks the objective's constraint. */
double eph_tune_score(const eph_tune_objective *o, double time_s, double peak_heap);

/*
 * Ranks sims by score (best first; scores within 0.2 % are a tie, which
 * goes to the smaller peak heap, then the lower index) into order[0..n-1].
 * Returns how many are feasible (finite score); they come first.
 */
size_t eph_tune_rank(const eph_tune_objective *o, const eph_tune_sim *sims, size_t n, size_t *order);

/* --- measuring ------------------------------------------------------------------ */

/* What to run: a workload through `ephemera run`, or any command (sh -c)
 * that creates its heap with eph_heap_new(NULL, ...), through EPHEMERA_GC. */
typedef struct eph_tune_target {
  const char *ephemera; /* path of the ephemera executable */
  const char *workload; /* or NULL */
  const char *size;     /* workload size, or NULL */
  const char *command;  /* with workload NULL */
} eph_tune_target;

/* Repeated invocations of one configuration. */
typedef struct eph_tune_measurement {
  int n;                 /* invocations */
  double mean_s, ci95_s; /* wall time: mean and half-width of its 95 % CI */
  double min_s, max_s;   /* wall time: the fastest and the slowest invocation */
  double gc_s;           /* mean GC seconds (workloads; 0 for commands) */
  double peak_heap;      /* bytes: peak committed heap (workloads), max RSS (commands) */
  double full_gcs, scavenges;
} eph_tune_measurement;

/*
 * Runs target with GC parameters gc (an EPHEMERA_GC string, or NULL for the
 * defaults) `invocations` times, each in a fresh process, output discarded.
 * On a failing run returns EPH_ERR_INVALID with a message naming the run
 * and its exit status.
 */
eph_status eph_tune_measure(const eph_tune_target *t, const char *gc, int invocations, eph_tune_measurement *out,
                            eph_error *err);

/* Mean and 95 % confidence half-width (Student's t) of x[0..n-1]. */
void eph_tune_mean_ci(const double *x, int n, double *mean, double *ci95);

/* --- the whole loop ------------------------------------------------------------ */

typedef struct eph_tune_request {
  eph_tune_target target;
  eph_tune_objective objective;
  int invocations;   /* per verified configuration (default 5) */
  int verify;        /* configurations verified, the default included (≤ 5) */
  const char *profile_mode; /* "merlin", "gc" or NULL: merlin for --size small, gc sampled otherwise */
  const char *keep_profile; /* keep the profile at this path, or NULL */
  bool kv;           /* end with a key=value line */
} eph_tune_request;

/* The explanation of a recommendation (explain.c): the long-lived volume,
 * the classes that hold most of it, from the profile's lifetimes. */
typedef struct eph_tune_why {
  uint64_t threshold;     /* bytes: the default eden; longer-lived is "long-lived" */
  double all_bytes;       /* bytes allocated (weighted) */
  double longlived_bytes; /* of those, outliving one default eden */
  size_t nclasses;        /* classes below, ≤ 3, largest first */
  struct {
    char name[96];
    double bytes;
  } classes[3];
} eph_tune_why;

/* One verified configuration: its prediction and its measurement. */
typedef struct eph_tune_verified {
  eph_tune_sim sim;
  eph_tune_measurement meas;
} eph_tune_verified;

/* The loop's steps, in order; each is reported to the progress callback
 * when its part of eph_tune_result is filled. */
typedef enum eph_tune_step {
  EPH_TUNE_STARTED,   /* target, objective */
  EPH_TUNE_PROFILED,  /* profile_* */
  EPH_TUNE_SCREENED,  /* grid, feasible, the default measured, calibration */
  EPH_TUNE_SIMULATED, /* the simulator's pass (sim_*) */
  EPH_TUNE_DONE       /* verified, the recommendation, why */
} eph_tune_step;

/* What `ephemera tune` found. */
typedef struct eph_tune_result {
  const eph_tune_request *request;
  char objective[64];                     /* the objective as text */
  /* EPH_TUNE_PROFILED */
  char profile_spec[64];                  /* the profiled run's SPEC */
  size_t records;                         /* lifetimes read */
  uint64_t allocated;                     /* bytes allocated in the run */
  bool exact;                             /* deaths exact (Merlin) */
  /* EPH_TUNE_SCREENED */
  size_t grid, feasible;                  /* configurations screened; within the objective */
  double default_wall_s, gc_measured_s;   /* the default's measured mean wall and GC time */
  bool gc_assumed;                        /* GC time assumed at 30 % (a command whose heaps report none) */
  double scale;                           /* the model's calibration factor on nominal costs */
  /* EPH_TUNE_SIMULATED */
  bool sim_used;                          /* the simulator re-ranked the model's best */
  char sim_skipped[256];                  /* else why not */
  bool sim_all;                           /* it re-simulated all of the feasible grid */
  size_t sim_count;                       /* configurations re-simulated besides the default */
  const char *sim_input;                  /* the simulator's input kind (eph_sim_input_kind_name) */
  bool sim_fitted;                        /* with a fitted cost model (`ephemera sim calibrate`) */
  double sim_scale;                       /* the simulator's calibration factor */
  /* EPH_TUNE_DONE */
  int invocations;                        /* per verified configuration */
  eph_tune_verified *verified;            /* [0] the default */
  int nverified;
  int best;                               /* index into verified: the recommendation (0: keep the defaults) */
  int unclear;                            /* >0: the fastest, not clearly faster than the default */
  double unclear_speedup, unclear_ci;     /* its speed-up over the default and 95 % half-width */
  double speedup, speedup_ci;             /* best over the default, measured; 95 % half-width */
  double predicted;                       /* best over the default, predicted */
  bool has_why;                           /* why is filled (a recommendation other than the default) */
  eph_tune_why why;
} eph_tune_result;

/* Called after each step with the result so far (ctx is the caller's). */
typedef void (*eph_tune_progress)(void *ctx, eph_tune_step step, const eph_tune_result *so_far);

/*
 * Profiles the target once, simulates the grid, verifies the top few and
 * the default with real runs, and recommends the best measured, with its
 * explanation, in *out (free with eph_tune_result_free, also on failure).
 * progress (may be NULL) sees each step as it completes: `ephemera tune`
 * prints there (src/render/render_tune.c).  Returns non-OK with err filled
 * if a run fails or the profile cannot be read.
 */
eph_status eph_tune_run(const eph_tune_request *req, eph_tune_progress progress, void *ctx, eph_tune_result *out,
                        eph_error *err);
void eph_tune_result_free(eph_tune_result *r);

/* The advisor's prediction for a profile, for `ephemera report`. */
typedef enum eph_tune_suggestion_kind {
  EPH_SUGGEST_NONE = 0, /* nothing to say: another runtime's profile, or a run that never filled the default eden */
  EPH_SUGGEST_TOO_BIG,  /* a profile over 1 GiB: not simulated */
  EPH_SUGGEST_PREDICTED /* top and def hold the best predicted and the default */
} eph_tune_suggestion_kind;

typedef struct eph_tune_suggestion {
  eph_tune_suggestion_kind kind;
  size_t grid;          /* configurations simulated */
  size_t records;       /* lifetimes simulated */
  size_t thinned;       /* >1: one small object in thinned kept (weighted) */
  char sim_failed[256]; /* the simulator's failure ("" none): the fast model's ranking stands */
  eph_tune_sim def, top;
} eph_tune_suggestion;

/*
 * Simulates the grid over a profile's lifetimes and gives the top
 * predicted configuration under the time objective (nominal costs,
 * calibrated on the profile's own GC time when it has one).  Kind NONE for
 * profiles of other runtimes (Lua) or of runs that never filled the
 * default eden; TOO_BIG for profiles over 1 GiB.  Fails only when the
 * file cannot be read.
 */
eph_status eph_tune_suggest(const char *profile_path, eph_tune_suggestion *out, eph_error *err);

/* --- Lua ------------------------------------------------------------------------ */

/* A Lua profile's collector advice (docs/lua.md, "Collector advice"), as
 * `ephemera lua --summary` gives it: for `ephemera report`. */
typedef struct eph_tune_lua_advice {
  const char *label;              /* "generational", "incremental", "mixed" or "none" */
  const char *text;               /* lines of plain text joined by '\n'; NULL for "none" */
  double share0, share01;         /* of the freed objects: died within one, two GC cycles */
  double censored;                /* of all: alive at the end */
} eph_tune_lua_advice;

/* The advice from weighted object counts: freed objects that survived no
 * cycle and one cycle, all freed objects, objects alive at the end. */
eph_tune_lua_advice eph_tune_lua_advice_of(double survived0, double survived1, double freed, double censored);

typedef struct eph_tune_lua_request {
  const char *ephemera;   /* path of the ephemera executable */
  char **argv;            /* SCRIPT ARGS..., NULL-terminated */
  int invocations;        /* per setting (default 5) */
  int verify;             /* settings measured, Lua's default included (≤ 8) */
  bool kv;
} eph_tune_lua_request;

/* What `ephemera tune --lua` found. */
typedef struct eph_tune_lua_result {
  const eph_tune_lua_request *request;
  /* EPH_TUNE_PROFILED */
  double objects;               /* objects of the profiled run (freed + alive at the end) */
  double share0, share01;       /* of those freed: died before their first, second GC cycle ended */
  double censored;              /* of all: alive at the end */
  const char *advice;           /* which settings come first: "generational", "incremental" or "mixed" */
  const char *advice_label;     /* the advice itself (as `ephemera lua --summary`; "none" without objects) */
  /* EPH_TUNE_DONE */
  int n;                        /* settings measured, [0] Lua's default */
  const char *settings[8];      /* `ephemera lua --gc` strings */
  eph_tune_measurement meas[8];
  int best;                     /* the recommendation (0: keep the default) */
  int fastest;                  /* the fastest mean (0: the default) */
  double fastest_speedup, fastest_ci; /* its speed-up over the default and 95 % half-width */
  double speedup, speedup_ci;   /* best over the default */
} eph_tune_lua_result;

/*
 * Lua 5.4's collector: profiles the script once (`ephemera lua`), picks
 * candidate settings seeded by its lifetimes (generational vs incremental,
 * minormul/majormul or pause/stepmul), measures each with repeated runs of
 * `ephemera lua --no-profile --gc SETTING`, and recommends the best
 * measured in *out.  progress (may be NULL) sees EPH_TUNE_STARTED,
 * EPH_TUNE_PROFILED and EPH_TUNE_DONE, with the result so far.
 */
typedef void (*eph_tune_lua_progress)(void *ctx, eph_tune_step step, const eph_tune_lua_result *so_far);
eph_status eph_tune_lua_run(const eph_tune_lua_request *req, eph_tune_lua_progress progress, void *ctx,
                            eph_tune_lua_result *out, eph_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_TUNE_H */
