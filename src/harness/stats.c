/*
 * stats.c — mean, median, Student's t confidence intervals, percentiles.
 *
 * The t quantile inverts the t distribution's CDF, written with the
 * regularized incomplete beta function (continued fraction, modified Lentz),
 * by bisection: exact to ~1e-10, and it needs nothing but libm's lgamma.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/bench.h"

/* Continued fraction of the incomplete beta function (Numerical Recipes' betacf). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; m++) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < eps) break;
  }
  return h;
}

/* Regularized incomplete beta I_x(a, b). */
static double beta_inc(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* P(T <= t) for t >= 0. */
static double t_cdf(double t, double df) { return 1 - 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t)); }

double eph_bench_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df >= 1)) return NAN;
  if (p == 0.5) return 0;
  if (p < 0.5) return -eph_bench_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (t_cdf(hi, df) < p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e12) return INFINITY;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double mid = (lo + hi) / 2;
    if (t_cdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double eph_bench_percentile(const double *sorted, size_t n, double p) {
  if (!n) return 0;
  double r = ceil(p * (double)n - 1e-9);
  size_t i = r < 1 ? 0 : (size_t)r - 1;
  return sorted[i < n ? i : n - 1];
}

void eph_bench_stat_of(const double *x, size_t n, eph_bench_stat *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  if (!n) return;
  double sum = 0;
  out->min = out->max = x[0];
  for (size_t i = 0; i < n; i++) {
    sum += x[i];
    if (x[i] < out->min) out->min = x[i];
    if (x[i] > out->max) out->max = x[i];
  }
  out->mean = sum / (double)n;
  double *s = malloc(n * sizeof *s);
  if (s) {
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
  }
  if (n < 2) return;
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (x[i] - out->mean) * (x[i] - out->mean);
  out->sd = sqrt(ss / (double)(n - 1));
  out->ci = eph_bench_t_quantile(0.975, (double)(n - 1)) * out->sd / sqrt((double)n);
}
