/*
 * test_report.c — the analysis library: Kaplan–Meier against hand-computed
 * values, Greenwood bands, quantiles, the KS distance, lifetimes and the
 * class table on a tiny exact profile, and compare's flags.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis.h"
#include "tiny.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-4)

/* times 1d 2c 3d 3d 4c 5d: by hand
 *   t=1: n=6 d=1  S=5/6            Greenwood sum 1/30
 *   t=3: n=4 d=2  S=5/6*2/4=5/12   sum 1/30 + 2/(4*2) = 0.283333
 *   t=5: n=1 d=1  S=0 */
static void km_hand(void **state) {
  (void)state;
  eph_km_obs obs[] = {{3, 1, true}, {1, 1, true}, {4, 1, false}, {2, 1, false}, {5, 1, true}, {3, 1, true}};
  eph_km km = {0};
  assert_true(eph_km_compute(&km, obs, 6));
  assert_int_equal(km.n, 3);
  assert_int_equal(km.ndeaths, 4);
  assert_int_equal(km.ncensored, 2);
  NEAR(km.time[0], 1);
  NEAR(km.surv[0], 5.0 / 6);
  NEAR(km.time[1], 3);
  NEAR(km.surv[1], 5.0 / 12);
  NEAR(km.surv[2], 0);
  NEAR(km.at_risk[1], 4);
  double se0 = 5.0 / 6 * sqrt(1.0 / 30), se1 = 5.0 / 12 * sqrt(1.0 / 30 + 0.25);
  NEAR(km.lo[0], 5.0 / 6 - 1.959964 * se0);
  NEAR(km.hi[0], 1); /* clipped */
  NEAR(km.lo[1], 0); /* 5/12 - 1.96 * 0.2218 < 0: clipped */
  NEAR(km.hi[1], 5.0 / 12 + 1.959964 * se1);
  NEAR(eph_km_at(&km, 0.5), 1);
  NEAR(eph_km_at(&km, 2.9), 5.0 / 6);
  NEAR(eph_km_quantile(&km, 0.5), 3);
  NEAR(eph_km_quantile(&km, 0.9), 5);
  eph_km_free(&km);
}

/* A death and a censoring at the same time: the death counts first. */
static void km_ties_and_weights(void **state) {
  (void)state;
  eph_km_obs obs[] = {{2, 10, false}, {2, 10, true}, {1, 10, true}, {7, 10, false}};
  eph_km km = {0};
  assert_true(eph_km_compute(&km, obs, 4));
  assert_int_equal(km.n, 2);
  NEAR(km.surv[0], 0.75);      /* 1 - 1/4 */
  NEAR(km.surv[1], 0.75 * 2 / 3); /* 3 at risk at t=2, the censored one still in */
  assert_true(isnan(eph_km_quantile(&km, 0.9))); /* never reaches 0.1 */
  eph_km_free(&km);
  /* all censored: S stays 1, no steps, nothing counted as a death */
  eph_km_obs cens[] = {{5, 1, false}, {6, 1, false}};
  assert_true(eph_km_compute(&km, cens, 2));
  assert_int_equal(km.n, 0);
  assert_int_equal(km.ndeaths, 0);
  NEAR(eph_km_at(&km, 100), 1);
  assert_true(isnan(eph_km_quantile(&km, 0.5)));
  eph_km_free(&km);
}

/* Orders obs fully (time, deaths first, weight): to compare two orderings
 * of the same records, whatever each did with equal ones. */
static int obs_total_cmp(const void *x, const void *y) {
  const eph_km_obs *a = x, *b = y;
  if (a->time != b->time) return a->time < b->time ? -1 : 1;
  if (a->died != b->died) return a->died ? -1 : 1;
  return (a->weight > b->weight) - (a->weight < b->weight);
}

/* Large inputs take a radix sort: the same order as the comparison sort
 * (time ascending, deaths first at a tie), the same records, the same
 * curve.  Times with many ties, negatives, zeros of both signs, huge
 * values; sizes around the radix cut-over. */
static void km_large_sorted(void **state) {
  (void)state;
  const size_t sizes[] = {1023, 1024, 50000};
  uint64_t rng = 12345;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = sizes[s];
    eph_km_obs *obs = malloc(n * sizeof *obs), *ref = malloc(n * sizeof *ref);
    assert_non_null(obs);
    assert_non_null(ref);
    for (size_t i = 0; i < n; i++) {
      rng = rng * 6364136223846793005u + 1442695040888963407u;
      uint64_t r = rng >> 11;
      double t = (double)(r % 997) * 0.125; /* ties */
      if (r % 13 == 0) t = -t;
      if (r % 17 == 0) t = (r & 1) ? 0.0 : -0.0;
      if (r % 19 == 0) t = (double)r * 1e9;
      obs[i] = (eph_km_obs){t, (double)(1 + r % 5), (r >> 20) % 3 != 0};
    }
    memcpy(ref, obs, n * sizeof *obs);
    /* quantiles alone (the class table's) are the curve's */
    eph_km_obs *copy = malloc(n * sizeof *copy);
    assert_non_null(copy);
    memcpy(copy, obs, n * sizeof *obs);
    const double q[3] = {0.1, 0.5, 0.9};
    double at[3];
    assert_true(eph_km_quantiles(copy, n, NULL, q, 3, at));
    free(copy);
    eph_km km = {0};
    assert_true(eph_km_compute(&km, obs, n));
    for (int k = 0; k < 3; k++) {
      double want = eph_km_quantile(&km, q[k]);
      assert_true(isnan(want) ? isnan(at[k]) : at[k] == want);
    }
    for (size_t i = 1; i < n; i++) {
      assert_false(obs[i - 1].time > obs[i].time);
      if (obs[i - 1].time == obs[i].time) assert_false(!obs[i - 1].died && obs[i].died);
    }
    eph_km_obs *got = malloc(n * sizeof *got);
    assert_non_null(got);
    memcpy(got, obs, n * sizeof *obs);
    qsort(got, n, sizeof *got, obs_total_cmp);
    qsort(ref, n, sizeof *ref, obs_total_cmp);
    for (size_t i = 0; i < n; i++) {
      assert_true(got[i].time == ref[i].time);
      assert_true(got[i].died == ref[i].died);
      assert_true(got[i].weight == ref[i].weight);
    }
    /* the curve from an input already in order, which no sort reorders */
    eph_km again = {0};
    assert_true(eph_km_compute(&again, ref, n));
    assert_int_equal(again.n, km.n);
    for (size_t k = 0; k < km.n; k++) {
      assert_true(again.time[k] == km.time[k]);
      NEAR(again.surv[k], km.surv[k]);
    }
    eph_km_free(&km);
    eph_km_free(&again);
    free(obs);
    free(ref);
    free(got);
  }
}

static void km_distance(void **state) {
  (void)state;
  eph_km_obs x[] = {{1, 1, true}, {2, 1, true}}, y[] = {{2, 1, true}, {3, 1, true}};
  eph_km kx = {0}, ky = {0};
  assert_true(eph_km_compute(&kx, x, 2));
  assert_true(eph_km_compute(&ky, y, 2));
  NEAR(eph_km_distance(&kx, &ky), 0.5);
  NEAR(eph_km_distance(&kx, &kx), 0);
  eph_km_free(&kx);
  eph_km_free(&ky);
}

static eph_analysis *load(int variant, eph_file **p, const eph_analysis_opts *o) {
  char path[] = "/tmp/eph-report-test-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(tiny_write(path, variant), 0);
  eph_error err;
  assert_int_equal(eph_file_load(path, p, &err), EPH_OK);
  unlink(path);
  eph_analysis *a = eph_analysis_run(*p, o, &err);
  assert_non_null(a);
  return a;
}

static const eph_group_row *row(const eph_analysis *a, const char *name) {
  for (size_t i = 0; i < a->nrows; i++)
    if (!strcmp(a->rows[i].name, name)) return &a->rows[i];
  fail_msg("no row %s", name);
  return NULL;
}

static void exact_profile(void **state) {
  (void)state;
  eph_file *p;
  eph_analysis *a = load(2, &p, NULL);
  assert_true(a->exact);
  assert_non_null(a->heap);
  assert_int_equal(a->nrecords, 20);
  /* Table objects (4 of them, life 2000 ms) are all alive at exit; Str i=10..15: 100+50i ms from 10+40i */
  const eph_group_row *t = row(a, "Table");
  assert_int_equal(t->ncensored, 4);
  assert_true(isnan(t->median[EPH_CLOCK_REL])); /* never half dead within the run */
  const eph_group_row *ps = row(a, "Parser");
  NEAR(ps->pct_objects, 50);
  NEAR(ps->pct_bytes, 640.0 * 100 / (640 + 6 * 32 + 4 * 256));
  /* Parser i lives 10+2i ms = (1+0.2i) % of the 1000 ms run; mean over i=0..9 = 1.9 % */
  NEAR(ps->mean[EPH_CLOCK_REL], 1.9);
  NEAR(ps->mean[EPH_CLOCK_SECONDS], 0.019);
  NEAR(ps->mean[EPH_CLOCK_BYTES], 1900);
  NEAR(ps->median[EPH_CLOCK_REL], 1.8); /* 5th of 10 deaths: i=4 */
  NEAR(ps->p90[EPH_CLOCK_REL], 2.6);    /* 9th: i=8 */
  assert_true(ps->short_lived);
  assert_true(ps->most_allocated);
  assert_false(t->short_lived);
  assert_string_equal(a->rows[0].name, "Parser"); /* sorted by share of allocations */
  /* the heap view conserves bytes: at the end only the censored are live */
  double live_end = 0;
  for (size_t s = 0; s < a->heap->segs; s++) live_end += a->heap->live[s * a->heap->cols + a->heap->cols - 1];
  double cens = 0;
  for (size_t i = 0; i < p->nrecords; i++)
    if (p->records[i].death_kind == EPH_DEATH_CENSORED) cens += (double)p->records[i].size;
  NEAR(live_end, cens);
  eph_analysis_free(a);
  eph_file_free(p);
}

static void gc_profile_interval(void **state) {
  (void)state;
  eph_file *p;
  eph_analysis_opts o;
  eph_analysis_opts_default(&o);
  eph_analysis *a = load(0, &p, &o);
  assert_false(a->exact);
  assert_null(a->heap);
  assert_true(a->n_interval > 0);
  for (int c = 0; c < EPH_NCLOCKS; c++) assert_true(a->mean_lo[c] <= a->mean[c]);
  double hi = a->mean[EPH_CLOCK_BYTES];
  eph_analysis_free(a);
  eph_file_free(p);
  o.end = EPH_END_ALIVE;
  a = load(0, &p, &o);
  assert_true(a->mean[EPH_CLOCK_BYTES] < hi);
  eph_analysis_free(a);
  eph_file_free(p);
}

static void sampled_weights(void **state) {
  (void)state;
  eph_file *p;
  eph_analysis *a = load(3, &p, NULL);
  assert_true(a->sampled);
  NEAR(a->objects_est, 200);
  NEAR(a->objects_se, sqrt(20 * 10 * 9.0)); /* sum w(w-1) */
  NEAR(row(a, "Parser")->pct_objects, 50);
  eph_analysis_free(a);
  eph_file_free(p);
}

static void compare_flags(void **state) {
  (void)state;
  eph_file *pa, *pb;
  eph_analysis *a = load(0, &pa, NULL), *b = load(1, &pb, NULL);
  eph_compare *c = eph_compare_run(a, b, 3);
  assert_non_null(c);
  const eph_compare_row *parser = NULL, *str = NULL;
  for (size_t i = 0; i < c->nrows; i++) {
    if (!strcmp(c->rows[i].name, "Parser")) parser = &c->rows[i];
    if (!strcmp(c->rows[i].name, "Str")) str = &c->rows[i];
  }
  assert_non_null(parser);
  assert_non_null(str);
  assert_true(parser->delta_pp > 0);
  assert_true(parser->flagged);   /* ten times longer: far beyond noise */
  assert_false(str->flagged);     /* unchanged */
  NEAR(str->delta_pp, 0);
  assert_true(c->ks > 0 && c->ks <= 1);
  eph_compare_free(c);
  /* a profile against itself: distance 0, nothing flagged */
  c = eph_compare_run(a, a, 3);
  NEAR(c->ks, 0);
  assert_false(c->flagged);
  for (size_t i = 0; i < c->nrows; i++) assert_false(c->rows[i].flagged);
  eph_compare_free(c);
  eph_analysis_free(a);
  eph_analysis_free(b);
  eph_file_free(pa);
  eph_file_free(pb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(km_hand),       cmocka_unit_test(km_ties_and_weights), cmocka_unit_test(km_distance),
      cmocka_unit_test(km_large_sorted),
      cmocka_unit_test(exact_profile), cmocka_unit_test(gc_profile_interval), cmocka_unit_test(sampled_weights),
      cmocka_unit_test(compare_flags),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
