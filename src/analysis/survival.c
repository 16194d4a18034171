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
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static int obs_cmp(const void *x, const void *y) {
  const eph_km_obs *a = x, *b = y;
  if (a->time != b->time) return a->time < b->time ? -1 : 1;
  return (int)b->died - (int)a->died; /* deaths first */
}

void eph_km_free(eph_km *km) {
  free(km->time);
  free(km->surv);
  free(km->lo);
  free(km->hi);
  free(km->at_risk);
  memset(km, 0, sizeof *km);
}

bool eph_km_compute(eph_km *km, eph_km_obs *obs, size_t n) {
  uint32_t group = km->group;
  memset(km, 0, sizeof *km);
  km->group = group;
  km->nrecords = n;
  qsort(obs, n, sizeof *obs, obs_cmp);
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
  size_t i = 0;
  while (i < n) {
    double t = obs[i].time, wd = 0, d = 0, wall = 0, all = 0;
    size_t j = i;
    for (; j < n && obs[j].time == t; j++) {
      all += 1;
      wall += obs[j].weight;
      if (obs[j].died) {
        d += 1;
        wd += obs[j].weight;
      }
    }
    if (d > 0) {
      s *= wrisk > 0 ? 1 - wd / wrisk : 0;
      if (s < 0) s = 0;
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
    wrisk -= wall;
    nrisk -= all;
    i = j;
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
    if (km->surv[i] <= 1 - q + 1e-12) return km->time[i];
  return NAN;
}
