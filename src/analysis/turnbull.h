/*
 * turnbull.h — lifetimes from interval-censored observations: Turnbull's
 * non-parametric maximum-likelihood estimator (the self-consistency EM),
 * with Poisson-bootstrap error bars.
 * Layer: analysis (internal; analysis.h includes it).
 *
 * A GC-found death says only that the object died in (lo, hi]: after the
 * last collection it survived, no later than the one that found it dead.
 * One class's objects are born at every point between two collections, so
 * their intervals differ, and the NPMLE of the lifetime distribution F
 * resolves lifetimes far shorter than a collection interval (an object
 * born just before a scavenge that it does not survive lived less than
 * the distance to it).  Exact deaths are points; objects alive at the end
 * are right-censored, (lo, inf): with points and censorings only, the
 * estimate is Kaplan–Meier's.
 *
 * The estimate lives on a grid of cells over lifetimes: cell 0 is
 * [0, edge[0]], cell c is (edge[c-1], edge[c]], the last (edge[n-2], inf).
 * An observation covers the cells its interval meets (rounded outwards),
 * so identical cell ranges are pooled: the fit's cost grows with distinct
 * ranges (a few thousand), not records.  Each EM step is O(ranges + cells).
 *
 * Means are restricted to the run, as for exact profiles: an object alive
 * at the end counts with its lifetime so far, an exact death with its own,
 * and an interval death with its expected lifetime given its interval
 * under the fitted F (the cells' midpoints, clipped to the interval).
 *
 * Memory: an eph_turnbull owns everything it points to except the edges,
 * which it borrows (keep them alive while it is used); eph_tb_free.
 */
#ifndef EPH_TURNBULL_H
#define EPH_TURNBULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum eph_tb_kind {
  EPH_TB_POINT = 0,    /* exact death at lo (= hi) */
  EPH_TB_INTERVAL = 1, /* died in (lo, hi] */
  EPH_TB_CENSORED = 2  /* alive at lo (the end of the run), death unseen */
} eph_tb_kind;

/* One pooled observation: records whose intervals cover the same cells. */
typedef struct eph_tb_obs {
  uint32_t a, b;        /* first and last cell covered */
  uint8_t kind;
  double w;             /* weight (objects) */
  double n;             /* sample records */
  double sum_lo, sum_hi; /* weighted sums of the interval ends (means) */
} eph_tb_obs;

typedef struct eph_turnbull {
  const double *edge;   /* borrowed, ncells - 1 ascending edges */
  size_t ncells;
  eph_tb_obs *obs;      /* pooled observations, hashed on (a, b, kind) */
  size_t nobs, cap;
  uint32_t *slot;       /* open-addressing table: obs index + 1, 0 empty */
  size_t nslots;
  double W, N;          /* total weight, records */
  double *p;            /* fitted cell masses (after eph_tb_fit) */
  int iterations;
  bool converged;
} eph_turnbull;

/* Estimates read off a fit. */
typedef struct eph_tb_est {
  double mean;          /* restricted mean lifetime */
  double share;         /* F(threshold): share of objects living <= threshold */
  double median;        /* F^-1(0.5), linear within a cell; NAN if not reached */
  double p90;           /* F^-1(0.9), the same */
} eph_tb_est;

/* A fit with bootstrap standard errors and a pointwise band on F. */
typedef struct eph_tb_result {
  eph_tb_est est, se;   /* se: bootstrap standard deviations (zeros when nboot = 0) */
  double *F;            /* F at each edge (ncells - 1), owned */
  double *F_lo, *F_hi;  /* pointwise 95 % band (est +- 1.96 se, clipped), owned; NULL without bootstrap */
  int iterations;
  bool converged;
  int nboot;
} eph_tb_result;

/* Starts an estimator on edges (ncells - 1 of them, ascending, > 0).
 * Returns false when out of memory. */
bool eph_tb_init(eph_turnbull *tb, const double *edges, size_t nedges);
/* Adds records: weight w (objects), one record.  lo/hi: lifetime bounds
 * (lo = hi for points; hi ignored for censored).  False: out of memory. */
bool eph_tb_add(eph_turnbull *tb, eph_tb_kind kind, double lo, double hi, double w);
/* The self-consistency EM from a uniform start (or p when warm), until the
 * largest change of F at an edge is below tol or max_iter steps. */
bool eph_tb_fit(eph_turnbull *tb, double tol, int max_iter);
/* Mean, F(threshold), median and 90th percentile of the current fit. */
eph_tb_est eph_tb_estimates(const eph_turnbull *tb, double threshold);
/* Fit, then nboot Poisson-bootstrap refits (records resampled, seed fixed,
 * each warm-started from the fit) for standard errors and F's band.
 * Returns false when out of memory (res then holds nothing to free). */
bool eph_tb_run(eph_turnbull *tb, double threshold, int nboot, uint64_t seed, eph_tb_result *res);
void eph_tb_result_free(eph_tb_result *res);
void eph_tb_free(eph_turnbull *tb);

/* A lifetime grid: `per_decade` log-spaced edges from `first` up to at
 * least `last`, with `extra` (e.g. the short-lived threshold) inserted when
 * positive.  Returns a malloc'd array and its length in *n, or NULL. */
double *eph_tb_grid(double first, double last, int per_decade, double extra, size_t *n);

#endif
