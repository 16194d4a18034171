/*
 * test_turnbull.c — the interval-censored lifetime estimator (src/analysis/
 * turnbull.c) on synthetic runs whose true lifetimes are known: objects born
 * uniformly over a run, inspected by "collections" every D bytes, each death
 * seen only as (last inspection survived, inspection that found it dead].
 * The estimator must recover the true mean and short-lived share where the
 * naive upper end (what a GC-found death reports) is far off, agree with
 * Kaplan–Meier on exact data, and its error bars must cover the truth.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis.h"

static uint64_t rng_state;
static double unit(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double expo(double mean) { return -mean * log(unit()); }

typedef struct sim {
  double truth_mean, truth_short, naive_mean; /* restricted to the run, as the estimator */
  eph_tb_result res;
} sim;

/* n objects born uniformly over [0, ncoll * D), lifetimes from draw(),
 * inspected at D, 2D, ...; alive at the end (ncoll * D) are censored. */
static void run_sim(sim *s, size_t n, double D, int ncoll, double (*draw)(void), double threshold, int nboot) {
  double end = ncoll * D;
  size_t ne;
  double *edges = eph_tb_grid(D * 1e-4, end, 40, threshold, &ne);
  assert_non_null(edges);
  eph_turnbull tb;
  assert_true(eph_tb_init(&tb, edges, ne));
  double sum = 0, shorts = 0, naive = 0;
  for (size_t i = 0; i < n; i++) {
    double b = unit() * end, t = draw();
    double restricted = b + t > end ? end - b : t;
    sum += restricted;
    shorts += t <= threshold;
    if (b + t > end) {
      naive += end - b;
      assert_true(eph_tb_add(&tb, EPH_TB_CENSORED, end - b, end - b, 1));
      continue;
    }
    double k = ceil((b + t) / D); /* the inspection that finds it dead */
    double prev = (k - 1) * D;    /* the last it survived, if after its birth */
    double lo = prev > b ? prev - b : 0, hi = k * D - b;
    naive += hi;
    assert_true(eph_tb_add(&tb, EPH_TB_INTERVAL, lo, hi, 1));
  }
  s->truth_mean = sum / (double)n;
  s->truth_short = shorts / (double)n;
  s->naive_mean = naive / (double)n;
  assert_true(eph_tb_run(&tb, threshold, nboot, 7, &s->res));
  eph_tb_free(&tb);
  free(edges);
}

static double short_mean_draw(void) { return expo(0.05); }            /* D = 1: 5 % of an interval */
static double mixture_draw(void) { return unit() < 0.7 ? expo(0.02) : expo(4); }

/* Lifetimes a twentieth of the collection interval: the upper end says
 * ~0.5 interval, the estimator must say 0.05 (within 15 %). */
static void test_short_lifetimes_resolved(void **state) {
  (void)state;
  rng_state = 1;
  sim s;
  run_sim(&s, 200000, 1.0, 100, short_mean_draw, 0.05, 20);
  assert_true(s.res.converged);
  assert_true(s.naive_mean > 5 * s.truth_mean); /* the problem is real */
  assert_true(fabs(s.res.est.mean - s.truth_mean) < 0.15 * s.truth_mean);
  assert_true(fabs(s.res.est.share - s.truth_short) < 0.03);
  assert_true(fabs(s.res.est.median - 0.05 * log(2)) < 0.15 * 0.05 * log(2));
  eph_tb_result_free(&s.res);
}

/* Short and long lifetimes mixed: the share below half an interval and the
 * mean; the bootstrap error bars must be positive and cover the truth. */
static void test_mixture_and_error_bars(void **state) {
  (void)state;
  rng_state = 2;
  sim s;
  run_sim(&s, 100000, 1.0, 50, mixture_draw, 0.5, 30);
  assert_true(fabs(s.res.est.share - s.truth_short) < 0.03);
  assert_true(fabs(s.res.est.mean - s.truth_mean) < 0.05 * s.truth_mean);
  assert_true(s.res.se.share > 0 && s.res.se.share < 0.02);
  assert_true(s.res.se.mean > 0);
  assert_true(fabs(s.res.est.mean - s.truth_mean) < 4 * s.res.se.mean + 0.02 * s.truth_mean);
  assert_non_null(s.res.F_lo);
  eph_tb_result_free(&s.res);
}

/* Exact deaths and censorings: the estimate is Kaplan–Meier's, and the
 * restricted mean is the plain mean of the lifetimes. */
static void test_exact_is_kaplan_meier(void **state) {
  (void)state;
  rng_state = 3;
  enum { N = 5000 };
  size_t ne;
  double *edges = eph_tb_grid(1e-3, 100, 40, 0, &ne);
  eph_turnbull tb;
  assert_true(eph_tb_init(&tb, edges, ne));
  eph_km_obs *obs = malloc(N * sizeof *obs);
  double sum = 0;
  for (int i = 0; i < N; i++) {
    /* times on the grid's edges: KM and the cells then see the same steps */
    double t = edges[(size_t)(unit() * (double)(ne - 1))];
    bool cens = unit() < 0.2;
    obs[i] = (eph_km_obs){t, 1, !cens};
    sum += t;
    assert_true(eph_tb_add(&tb, cens ? EPH_TB_CENSORED : EPH_TB_POINT, t, t, 1));
  }
  eph_tb_result res;
  assert_true(eph_tb_run(&tb, 0, 0, 1, &res));
  eph_km km = {0};
  assert_true(eph_km_compute(&km, obs, N));
  double worst = 0, last_death = 0;
  for (int i = 0; i < N; i++)
    if (obs[i].died && obs[i].time > last_death) last_death = obs[i].time;
  /* beyond the last death only censorings remain: the NPMLE may put their
   * mass anywhere after them, Kaplan–Meier leaves it undefined */
  for (size_t c = 0; c < ne && edges[c] < last_death; c++) {
    double d = fabs((1 - eph_km_at(&km, edges[c])) - res.F[c]);
    if (d > worst) worst = d;
  }
  assert_true(worst < 1e-4);
  assert_true(fabs(res.est.mean - sum / N) < 1e-9 * sum);
  eph_km_free(&km);
  eph_tb_result_free(&res);
  eph_tb_free(&tb);
  free(obs);
  free(edges);
}

/* Weights count objects: one record of weight 3 is three of weight 1. */
static void test_weights(void **state) {
  (void)state;
  size_t ne;
  double *edges = eph_tb_grid(0.01, 10, 20, 0, &ne);
  eph_turnbull a, b;
  assert_true(eph_tb_init(&a, edges, ne) && eph_tb_init(&b, edges, ne));
  const double iv[][2] = {{0, 1}, {0.5, 2}, {1, 3}, {0, 0.2}};
  for (int i = 0; i < 4; i++) {
    assert_true(eph_tb_add(&a, EPH_TB_INTERVAL, iv[i][0], iv[i][1], i + 1));
    for (int k = 0; k <= i; k++) assert_true(eph_tb_add(&b, EPH_TB_INTERVAL, iv[i][0], iv[i][1], 1));
  }
  assert_int_equal(a.nobs, 4);
  assert_true(eph_tb_fit(&a, 1e-10, 10000) && eph_tb_fit(&b, 1e-10, 10000));
  eph_tb_est ea = eph_tb_estimates(&a, 1), eb = eph_tb_estimates(&b, 1);
  assert_true(fabs(ea.mean - eb.mean) < 1e-9 && fabs(ea.share - eb.share) < 1e-9);
  assert_true(ea.mean > 0 && ea.mean < 3);
  eph_tb_free(&a);
  eph_tb_free(&b);
  free(edges);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_short_lifetimes_resolved),
      cmocka_unit_test(test_mixture_and_error_bars),
      cmocka_unit_test(test_exact_is_kaplan_meier),
      cmocka_unit_test(test_weights),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
