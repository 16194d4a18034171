/*
 * common.h — timing, argument parsing and reporting shared by the
 * gc-throughput programs (GCBench and binary-trees, one file per allocator).
 *
 * Every program prints its own output, then one machine-readable line
 *
 *   time_s=<wall> cpu_s=<process cpu> maxrss_kb=<peak rss> gc=<collector info>
 *
 * which the `run` script parses.  Wall and CPU time cover the benchmark body,
 * including allocator set-up (eph_heap_new, GC_INIT) but not the final
 * statistics print or heap release.
 */
#ifndef GCT_COMMON_H
#define GCT_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double gct_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static inline double gct_wall(void) { return gct_clock(CLOCK_MONOTONIC); }
static inline double gct_cpu(void) { return gct_clock(CLOCK_PROCESS_CPUTIME_ID); }

static inline long gct_maxrss_kb(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return ru.ru_maxrss;
}

/* A stopwatch over wall and process CPU time. */
typedef struct gct_timer {
  double wall0, cpu0;
} gct_timer;

static inline gct_timer gct_timer_start(void) {
  gct_timer t;
  t.wall0 = gct_wall();
  t.cpu0 = gct_cpu();
  return t;
}

static inline void gct_report(const gct_timer *t, const char *gc_info) {
  double wall = gct_wall() - t->wall0;
  double cpu = gct_cpu() - t->cpu0;
  printf("time_s=%.6f cpu_s=%.6f maxrss_kb=%ld gc=%s\n", wall, cpu, gct_maxrss_kb(), gc_info);
  fflush(stdout);
}

/* Prints the failure and exits non-zero: a collector bug must fail loudly. */
static inline void gct_fail(const char *what) {
  fflush(stdout);
  fprintf(stderr, "FAILED: %s\n", what);
  exit(1);
}

/*
 * Command line: [-v] then up to `max` non-negative integers.  Fills args (left
 * untouched where not given) and returns the verbose flag; exits with the
 * usage on anything else.
 */
static inline int gct_parse_args(int argc, char **argv, long *args, int max, const char *usage) {
  int verbose = 0, n = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0) {
      verbose = 1;
      continue;
    }
    char *end;
    errno = 0;
    long v = strtol(argv[i], &end, 10);
    if (n >= max || errno != 0 || end == argv[i] || *end != '\0' || v < 0 || v > 100000000) {
      fprintf(stderr, "usage: %s %s\n", argv[0], usage);
      exit(2);
    }
    args[n++] = v;
  }
  return verbose;
}

/* --- GCBench (Ellis, Kovac, Boehm) ---------------------------------------- */

typedef struct gcbench_params {
  int stretch_depth;    /* kStretchTreeDepth, 18 */
  int long_lived_depth; /* kLongLivedTreeDepth, 16 */
  long array_size;      /* kArraySize, 500000 */
  int min_depth;        /* kMinTreeDepth, 4 */
  int max_depth;        /* kMaxTreeDepth, 16 */
} gcbench_params;

#define GCBENCH_USAGE "[-v] [stretch_depth=18 [long_lived_depth=16 [array_size=500000 [min_depth=4 [max_depth=16]]]]]"

static inline gcbench_params gcbench_parse(int argc, char **argv, int *verbose) {
  long a[5] = {18, 16, 500000, 4, 16};
  *verbose = gct_parse_args(argc, argv, a, 5, GCBENCH_USAGE);
  gcbench_params p = {(int)a[0], (int)a[1], a[2], (int)a[3], (int)a[4]};
  if (p.stretch_depth > 28 || p.long_lived_depth > 28 || p.max_depth > 28 || p.min_depth > p.max_depth ||
      p.max_depth > p.stretch_depth || p.array_size < 4) {
    fprintf(stderr, "usage: %s %s\n", argv[0], GCBENCH_USAGE);
    exit(2);
  }
  return p;
}

/* Nodes in a complete binary tree of the given depth. */
static inline long gct_tree_size(int depth) { return (1L << (depth + 1)) - 1; }

/* Trees to build at a depth: as many nodes as two stretch trees. */
static inline long gcbench_num_iters(const gcbench_params *p, int depth) {
  return 2 * gct_tree_size(p->stretch_depth) / gct_tree_size(depth);
}

/* The array element GCBench checks at the end (1000 in the original). */
static inline long gcbench_check_index(const gcbench_params *p) {
  return p->array_size / 2 > 1000 ? 1000 : p->array_size / 2 - 1;
}

static inline void gcbench_print_header(const gcbench_params *p, const char *allocator, long node_bytes) {
  printf("Garbage Collector Test (%s)\n", allocator);
  printf(" Live storage will peak at %ld bytes.\n\n",
         2 * node_bytes * gct_tree_size(p->long_lived_depth) + (long)sizeof(double) * p->array_size);
  printf(" Stretching memory with a binary tree of depth %d\n", p->stretch_depth);
}

static inline int gct_msec(double t0) { return (int)((gct_wall() - t0) * 1000.0 + 0.5); }

/* --- binary-trees (the Computer Language Benchmarks Game) ----------------- */

#define BINARYTREES_USAGE "[-v] [max_depth=10]"
#define BINARYTREES_MIN_DEPTH 4

static inline int binarytrees_parse(int argc, char **argv, int *verbose) {
  long a[1] = {10};
  *verbose = gct_parse_args(argc, argv, a, 1, BINARYTREES_USAGE);
  if (a[0] > 28) {
    fprintf(stderr, "usage: %s %s\n", argv[0], BINARYTREES_USAGE);
    exit(2);
  }
  int max_depth = (int)a[0];
  return max_depth < BINARYTREES_MIN_DEPTH + 2 ? BINARYTREES_MIN_DEPTH + 2 : max_depth;
}

/* Iterations at a depth, as in the Benchmarks Game program. */
static inline long binarytrees_iterations(int max_depth, int depth) {
  return 1L << (max_depth - depth + BINARYTREES_MIN_DEPTH);
}

/* The check of one tree is its node count; a wrong one means a broken heap. */
static inline void binarytrees_expect(long got, long want, const char *what) {
  if (got != want) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: check %ld, expected %ld", what, got, want);
    gct_fail(msg);
  }
}

#endif /* GCT_COMMON_H */
