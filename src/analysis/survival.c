/*
 * survival.c — Kaplan–Meier survival curves with Greenwood confidence bands.
 *
 * S(t) = prod over death times t_i <= t of (1 - d_i / n_i), with d_i and
 * n_i the weighted deaths at t_i and weighted records at risk just before.
 * Censored records leave the risk set after their time without counting as
 * deaths; at a tie, deaths come first (the usual convention).  The pointwise
 * 95 % band is S ± 1.96 sqrt(Var), Var = S^2 sum d_i / (n_i (n_i - d_i)),
 * clipped to [0, 1], with d_i and n_i the *sample* counts (weights say how
 * many objects a record stands for, not how much we know about them).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static int obs_cmp(const void *x, const void *y) {
  const eph_km_obs *a = x, *b = y;
  if (a->time != b->time) return a->time < b->time ? -1 : 1;
  return (int)b->died - (int)a->died; /* deaths first */
}

/* A double as an unsigned integer in the same order (IEEE 754: flip the
 * sign bit of positives, every bit of negatives); -0 is 0, as for ==. */
static inline uint64_t time_key(double t) {
  uint64_t u;
  if (t == 0) t = 0;
  memcpy(&u, &t, sizeof u);
  return u >> 63 ? ~u : u | UINT64_C(1) << 63;
}

/*
 * Sorts obs by time, deaths first at a tie (obs_cmp's order): a stable
 * pass that puts deaths first, then a stable LSD radix sort on the time's
 * bits, a byte at a time, skipping a byte all records share.  A report
 * sorts its records several times over (each class in three clocks, then
 * the curves): on the 45 M records of a profile at 100 %, qsort's sorts
 * were about 40 % of an 87 s report (perf).  tmp: room for n
 * records, or NULL to allocate it here.  Small inputs go to qsort, and so
 * does everything when there is no memory for tmp.
 */
#define RADIX_BITS 8
#define RADIX_DIGITS (64 / RADIX_BITS)
#define RADIX_BUCKETS ((size_t)1 << RADIX_BITS)
static void sort_obs(eph_km_obs *obs, size_t n, eph_km_obs *tmp) {
  eph_km_obs *own = NULL;
  if (n >= 1024 && !tmp) tmp = own = malloc(n * sizeof *tmp);
  if (n < 1024 || !tmp) {
    qsort(obs, n, sizeof *obs, obs_cmp);
    return;
  }
  size_t count[RADIX_DIGITS][RADIX_BUCKETS] = {{0}}, deaths = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t k = time_key(obs[i].time);
    for (int d = 0; d < RADIX_DIGITS; d++) count[d][k >> (d * RADIX_BITS) & (RADIX_BUCKETS - 1)]++;
    deaths += obs[i].died;
  }
  eph_km_obs *src = tmp, *dst = obs;
  for (size_t i = 0, a = 0, b = deaths; i < n; i++) src[obs[i].died ? a++ : b++] = obs[i];
  uint64_t first = time_key(src[0].time);
  for (int d = 0; d < RADIX_DIGITS; d++) {
    size_t *c = count[d];
    int shift = d * RADIX_BITS;
    if (c[first >> shift & (RADIX_BUCKETS - 1)] == n) continue; /* one value of this byte: nothing moves */
    for (size_t v = 0, sum = 0; v < RADIX_BUCKETS; v++) {
      size_t k = c[v];
      c[v] = sum;
      sum += k;
    }
    for (size_t i = 0; i < n; i++) dst[c[time_key(src[i].time) >> shift & (RADIX_BUCKETS - 1)]++] = src[i];
    eph_km_obs *t = src;
    src = dst;
    dst = t;
  }
  if (src != obs) memcpy(obs, src, n * sizeof *obs);
  free(own);
}

void eph_km_free(eph_km *km) {
  free(km->time);
  free(km->surv);
  free(km->lo);
  free(km->hi);
  free(km->at_risk);
  memset(km, 0, sizeof *km);
}

/* The records at one time, sorted obs[*i] on (a tie): how many, and how
 * many died, as counts and as weights; *i moves past them. */
typedef struct km_tie {
  double t, all, d, wall, wd;
} km_tie;
static inline km_tie next_tie(const eph_km_obs *obs, size_t n, size_t *i) {
  km_tie tie = {.t = obs[*i].time};
  for (; *i < n && obs[*i].time == tie.t; ++*i) {
    tie.all += 1;
    tie.wall += obs[*i].weight;
    if (obs[*i].died) {
      tie.d += 1;
      tie.wd += obs[*i].weight;
    }
  }
  return tie;
}

/* S after a tie with weighted deaths wd among wrisk at risk. */
static inline double surv_after(double s, double wd, double wrisk) {
  s *= wrisk > 0 ? 1 - wd / wrisk : 0;
  return s < 0 ? 0 : s;
}

/* Whether survival s has come down to quantile q. */
static inline bool at_quantile(double s, double q) { return s <= 1 - q + 1e-12; }

bool eph_km_compute(eph_km *km, eph_km_obs *obs, size_t n) { return eph_km_compute_with(km, obs, n, NULL); }

bool eph_km_compute_with(eph_km *km, eph_km_obs *obs, size_t n, eph_km_obs *tmp) {
  uint32_t group = km->group;
  memset(km, 0, sizeof *km);
  km->group = group;
  km->nrecords = n;
  sort_obs(obs, n, tmp);
  size_t cap = 1;
  double wrisk = 0;
  for (size_t i = 0; i < n; i++) {
    wrisk += obs[i].weight;
    if (obs[i].died) km->ndeaths++;
    else km->ncensored++;
    if (obs[i].time > km->max_time) km->max_time = obs[i].time;
  }
  /* distinct death times bound the steps */
  for (size_t i = 0; i < n; i++)
    if (obs[i].died && (i == 0 || obs[i].time != obs[i - 1].time || !obs[i - 1].died)) cap++;
  km->time = malloc(cap * sizeof(double));
  km->surv = malloc(cap * sizeof(double));
  km->lo = malloc(cap * sizeof(double));
  km->hi = malloc(cap * sizeof(double));
  km->at_risk = malloc(cap * sizeof(double));
  if (!km->time || !km->surv || !km->lo || !km->hi || !km->at_risk) return false;
  double s = 1, green = 0, nrisk = (double)n;
  for (size_t i = 0; i < n;) {
    km_tie tie = next_tie(obs, n, &i);
    double t = tie.t, d = tie.d;
    if (d > 0) {
      s = surv_after(s, tie.wd, wrisk);
      if (nrisk > d) green += d / (nrisk * (nrisk - d));
      double se = nrisk > d ? s * sqrt(green) : 0;
      size_t k = km->n++;
      km->time[k] = t;
      km->surv[k] = s;
      km->at_risk[k] = nrisk;
      km->lo[k] = s - 1.959964 * se < 0 ? 0 : s - 1.959964 * se;
      km->hi[k] = s + 1.959964 * se > 1 ? 1 : s + 1.959964 * se;
      if (nrisk <= d) km->lo[k] = km->hi[k] = s; /* everyone died: no variance left */
    }
    wrisk -= tie.wall;
    nrisk -= tie.all;
  }
  return true;
}

bool eph_km_quantiles(eph_km_obs *obs, size_t n, eph_km_obs *tmp, const double *q, size_t nq, double *out) {
  sort_obs(obs, n, tmp);
  double wrisk = 0, s = 1;
  for (size_t i = 0; i < n; i++) wrisk += obs[i].weight;
  for (size_t k = 0; k < nq; k++) out[k] = NAN;
  for (size_t i = 0; i < n;) { /* eph_km_compute's steps */
    km_tie tie = next_tie(obs, n, &i);
    if (tie.d > 0) {
      s = surv_after(s, tie.wd, wrisk);
      for (size_t k = 0; k < nq; k++)
        if (isnan(out[k]) && at_quantile(s, q[k])) out[k] = tie.t;
    }
    wrisk -= tie.wall;
  }
  return true;
}

double eph_km_at(const eph_km *km, double t) {
  double s = 1;
  for (size_t i = 0; i < km->n && km->time[i] <= t; i++) s = km->surv[i];
  return s;
}

double eph_km_quantile(const eph_km *km, double q) {
  for (size_t i = 0; i < km->n; i++)
    if (at_quantile(km->surv[i], q)) return km->time[i];
  return NAN;
}
