/*
 * workloads/workload.h — the workload suite's contract.
 *
 * A workload is a C program against the public heap API, modelled on a
 * program the papers measure.  It declares its classes up front (so that
 * `--retain` can be checked before it runs and reports can name them), has
 * sizes, a deterministic input, a self-check, and marks its allocation
 * sites.  It allocates through WL_NEW / WL_NEW_BYTES so that the runner can
 * keep every instance of the `--retain` classes alive (FiLiP's RQ1
 * actionability knob), and reports each frame or request as a latency
 * event with wl_event_begin / wl_event_end.
 *
 * Writing one:
 *
 *   enum { C_POINT, C_NAME, NCLASSES };
 *   static const wl_class classes[] = {
 *     [C_POINT] = {"Point", EPH_FORMAT_POINTERS},
 *     [C_NAME] = {"Name", EPH_FORMAT_BYTES},
 *   };
 *   static int run(wl_ctx *w) {
 *     EPH_FRAME(w->h);
 *     EPH_LOCAL(w->h, p);
 *     p = WL_NEW(w, C_POINT, 2);          // site recorded, may collect
 *     ...
 *     return wl_check(w, sum == expected, "sum %ld, expected %ld", sum, expected);
 *   }
 *   const wl_workload wl_example = {
 *     .name = "example", .description = "...", .classes = classes,
 *     .nclasses = NCLASSES, .unit = "points",
 *     .sizes = {.small = 1000, .normal = 1000000, .large = 10000000},
 *     .run = run,
 *   };
 *
 * and add it to the table in registry.c.  Memory off the heap that lives
 * while the workload allocates on the heap comes from wl_malloc and friends
 * (below): heap exhaustion leaves the workload through a longjmp.
 */
#ifndef EPH_WORKLOAD_H
#define EPH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"

#define WL_MAX_CLASSES 32

typedef struct wl_class {
  const char *name;
  eph_format format;
} wl_class;

typedef struct wl_sizes {
  uint64_t small;  /* for tests: well under a second, also in stress mode */
  uint64_t middle; /* tens of milliseconds, a 10-100 MB Merlin trace: the simulator's
                      validation and calibration size */
  uint64_t normal; /* the `default` size: roughly 1–5 s on the reference machine */
  uint64_t large;  /* GC-bound; 0 if the workload has none */
} wl_sizes;

/* One latency event: a frame or a request. */
typedef struct wl_event {
  uint64_t start_ns, end_ns; /* monotonic, since the run started */
} wl_event;

typedef struct wl_ctx wl_ctx;

/* One of a workload's own options, as the command line takes it: `ephemera
 * run` parses and checks the value before parse_options sees it. */
typedef enum wl_option_kind {
  WL_OPT_FLAG,  /* no value */
  WL_OPT_COUNT, /* an integer in [min, max] */
  WL_OPT_REAL,  /* a number in (min, max): the bounds themselves excluded */
  WL_OPT_WORD,  /* one of words */
} wl_option_kind;
typedef struct wl_option {
  const char *name; /* without the dashes: "frames" is --frames */
  wl_option_kind kind;
  double min, max;
  const char *const *words; /* WL_OPT_WORD: NULL-terminated */
} wl_option;

typedef struct wl_workload {
  const char *name;
  const char *description; /* one line */
  const char *unit;        /* what the size counts: "rows", "particles" */
  wl_sizes sizes;
  const wl_class *classes;
  size_t nclasses;
  /* A class whose instances mostly die young: the --retain test keeps it
   * alive and expects the peak heap to rise. */
  const char *short_lived_class;
  /* Workload options beyond the common ones: "--steps N  simulation steps". */
  const char *options_help;
  /* Those options, for the command line (name NULL ends the table); NULL: none. */
  const wl_option *options;
  /*
   * Parses the workload's own options (argv holds only those); returns 0,
   * or -1 after printing one line naming the bad option.  NULL: none.
   */
  int (*parse_options)(wl_ctx *w, int argc, char **argv);
  /* Runs the workload; returns 0 if the self-check passed (see wl_check). */
  int (*run)(wl_ctx *w);
} wl_workload;

struct wl_ctx {
  eph_heap *h;
  const wl_workload *workload;
  uint64_t size;              /* resolved size, in the workload's unit */
  uint64_t seed;              /* input generator seed (default 42) */
  eph_class_id cls[WL_MAX_CLASSES]; /* ids of the declared classes, by index */
  bool retain[WL_MAX_CLASSES];
  void *options;              /* the workload's parsed options, if any */
  bool quiet;

  /* filled by the runner and the workload */
  char check_message[256];
  bool check_ok;
  uint64_t retained;          /* objects kept alive by --retain */
  wl_event *events;
  size_t nevents, events_cap;
  uint64_t start_ns;
  eph_value retain_chunk;     /* global root: chain of chunks of retained objects */
  size_t retain_fill;
  union wl_block *blocks;     /* the workload's memory off the heap (memory.c) */
};

/* Slow path of WL_NEW for retained classes; may collect, so it returns
 * obj's address afterwards. */
eph_value wl_retain(wl_ctx *w, eph_value obj);

static inline eph_value wl__kept(wl_ctx *w, size_t cls, eph_value obj) {
  if (EPH_UNLIKELY(w->retain[cls]) && obj != EPH_NIL) return wl_retain(w, obj);
  return obj;
}

/* Allocation with the caller's site recorded; honours --retain. */
/* ci is the index of the class in the workload's class table. */
#define WL_NEW(w, ci, nslots) (EPH_AT((w)->h), wl__kept((w), (ci), eph_alloc((w)->h, (w)->cls[ci], (nslots))))
#define WL_NEW_BYTES(w, ci, nbytes) \
  (EPH_AT((w)->h), wl__kept((w), (ci), eph_alloc_bytes((w)->h, (w)->cls[ci], (nbytes))))
#define WL_NEW_OLD(w, ci, nslots) \
  (EPH_AT((w)->h), wl__kept((w), (ci), eph_alloc_old((w)->h, (w)->cls[ci], (nslots))))

/* Latency events (frames, requests). */
void wl_event_begin(wl_ctx *w);
void wl_event_end(wl_ctx *w);

/* Records the self-check result; returns 0 if ok, 1 otherwise. */
int wl_check(wl_ctx *w, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Deterministic pseudo-random numbers (splitmix64 seeded, xoshiro256**). */
typedef struct wl_rng {
  uint64_t s[4];
} wl_rng;
void wl_rng_seed(wl_rng *r, uint64_t seed);
uint64_t wl_rng_next(wl_rng *r);
static inline uint64_t wl_rng_below(wl_rng *r, uint64_t n) { return n ? wl_rng_next(r) % n : 0; }
double wl_rng_unit(wl_rng *r); /* [0, 1) */
double wl_rng_normal(wl_rng *r); /* standard normal */

/*
 * Memory off the heap that is alive while the workload allocates on the
 * heap must come from these (memory.c): heap exhaustion leaves the
 * workload through the runner's longjmp, past its own frees, and the
 * runner then frees these blocks itself.  As malloc, calloc, realloc and
 * free (NULL when out of memory; a failed wl_realloc leaves p as it was);
 * a block belongs to the run and must be given back with wl_free, never
 * free().
 */
void *wl_malloc(wl_ctx *w, size_t size);
void *wl_calloc(wl_ctx *w, size_t n, size_t size);
void *wl_realloc(wl_ctx *w, void *p, size_t size);
void wl_free(wl_ctx *w, void *p);
/* The runner's: frees every block still allocated. */
void wl_free_all(wl_ctx *w);

/* Heap byte strings: a copy of s (len bytes) in a new byte object. */
eph_value wl_string(wl_ctx *w, size_t cls, const char *s, size_t len);

/* The registry (registry.c). */
extern const wl_workload *const wl_all[];
extern const size_t wl_count;
const wl_workload *wl_find(const char *name);

/* --- the runner (runner.c) ---------------------------------------------- */

typedef struct wl_run_options {
  const char *size;      /* "small", "default", "large" or a number; NULL = default */
  const char *gc;        /* GC parameter spec, applied over defaults + EPHEMERA_GC */
  const char *retain;    /* "Class,Class" */
  uint64_t seed;
  bool quiet;
  int argc;              /* the workload's own options */
  char **argv;
  /* Called on the parameters before the heap is created (may be NULL). */
  void (*configure)(eph_gc_params *p, void *data);
  /* Called after the heap exists and classes are registered, before the
   * workload runs (the profiler attaches here); and after it ran. */
  int (*before)(wl_ctx *w, void *data);
  int (*after)(wl_ctx *w, void *data);
  void *data;
} wl_run_options;

typedef struct wl_result {
  bool check_ok;
  char check_message[256];
  uint64_t size;
  double wall_s, cpu_s;
  double after_wall_s, after_cpu_s; /* the `after` hook's time (a profile's stop), outside wall_s and cpu_s */
  eph_heap_stats stats;
  uint64_t retained;
  size_t nevents;
  double event_p50_ms, event_p99_ms, event_max_ms;
} wl_result;

/*
 * Creates a heap, registers the workload's classes, resolves options, runs
 * it and fills *res.  Returns 0 on success (even if the self-check failed:
 * see res->check_ok), or -1 after writing a one-line error to err.
 */
int wl_run(const wl_workload *wl, const wl_run_options *opt, wl_result *res, char *err, size_t errlen);

/* Checks a comma-separated list of wl's class names (what: the option, for
 * the message) and sets found[i] for class i named (found may be NULL);
 * -1 with a message naming the unknown class and the known ones. */
int wl_class_list(const wl_workload *wl, const char *list, const char *what, bool *found, char *err, size_t errlen);

/* Parses a size for wl: returns 0 and sets *out, or -1 with a message. */
int wl_parse_size(const wl_workload *wl, const char *text, uint64_t *out, char *err, size_t errlen);

#endif /* EPH_WORKLOAD_H */
