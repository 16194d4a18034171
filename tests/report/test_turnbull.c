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

/* --- end to end: a simulated gc-mode run through eph_analysis_run ------------- */

#define D 1000000.0 /* bytes between collections; every 5th is a full GC */
#define NCOLL 100

static eph_stamp stamp_at(double bytes, uint32_t completed) {
  eph_stamp s = {(uint64_t)bytes, (uint64_t)bytes, 0, 0};
  s.full_gcs = completed / 5;
  s.scavenges = completed - s.full_gcs;
  return s;
}

/* Collection k (1-based) at k * D: a stamp taken as it starts. */
static eph_stamp at_collection(uint32_t k) { return stamp_at(k * D, k - 1); }
static bool is_full(uint32_t k) { return k % 5 == 0; }

/* "Short" objects die young and a scavenge (or the full GC next) finds
 * them; "Kept" ones die as young but a dead old object keeps them through
 * scavenges (nepotism): promoted by the scavenge after their death, found
 * by the next full GC.  Truth: both classes' lifetimes, 0.05 D on average. */
static void test_simulated_gc_run(void **state) {
  (void)state;
  rng_state = 11;
  enum { N = 40000 };
  eph_record *recs = calloc(N, sizeof *recs);
  eph_gc_event gcs[NCOLL];
  for (uint32_t k = 1; k <= NCOLL; k++)
    gcs[k - 1] = (eph_gc_event){.kind = is_full(k) ? EPH_GC_FULL : EPH_GC_SCAVENGE, .index = k, .allocated = (uint64_t)(k * D)};
  double truth[3] = {0}, count[3] = {0}, recorded_lo[3] = {0};
  size_t n = 0;
  for (int i = 0; i < N; i++) {
    double b = floor(unit() * (NCOLL - 10) * D), t = floor(expo(0.05 * D)) + 16;
    uint32_t born_after = (uint32_t)floor(b / D); /* collections completed before the birth */
    uint32_t cls = i % 4 == 0 ? 2 : 1;            /* a quarter are Kept */
    uint32_t k = (uint32_t)ceil((b + t) / D);     /* the first collection after the death */
    eph_record *r = &recs[n++];
    r->id = (uint64_t)b * 4 + (uint64_t)i % 4;
    r->class_id = cls;
    r->size = 32;
    r->weight = 1;
    r->birth = stamp_at(b, born_after);
    if (cls == 2 && k <= born_after + 1 && !is_full(k)) { /* kept: promoted at k, found at the next full GC */
      uint32_t f = k;
      while (!is_full(f)) f++;
      r->alive_until = at_collection(f - 1);
      r->death = at_collection(f);
      r->death_kind = EPH_DEATH_FULL_GC;
    } else {
      r->alive_until = k - 1 > born_after ? at_collection(k - 1) : r->birth;
      r->death = at_collection(k);
      r->death_kind = is_full(k) ? EPH_DEATH_FULL_GC : EPH_DEATH_SCAVENGE;
    }
    truth[cls] += t;
    count[cls] += 1;
    recorded_lo[cls] += (double)(r->alive_until.bytes - r->birth.bytes);
  }
  char *names[] = {NULL, "Short", "Kept"};
  eph_meta_pair meta[] = {{"mode", "gc"}, {"workload", "sim"}};
  eph_file p = {.meta = meta, .nmeta = 2, .class_names = names, .nclasses = 3, .records = recs, .nrecords = n,
                .gcs = gcs, .ngcs = NCOLL, .complete = true};
  p.totals.bytes_allocated = (uint64_t)(NCOLL * D);
  p.totals.wall_ns = p.totals.bytes_allocated;
  p.totals.scavenges = NCOLL - NCOLL / 5;
  p.totals.full_gcs = NCOLL / 5;
  eph_error err;
  eph_analysis *a = eph_analysis_run(&p, NULL, &err);
  assert_non_null(a);
  const eph_group_row *row[3] = {NULL};
  for (size_t i = 0; i < a->nrows; i++) row[a->rows[i].id] = &a->rows[i];
  assert_non_null(row[1]);
  assert_non_null(row[2]);
  double mean_short = truth[1] / count[1], mean_kept = truth[2] / count[2];
  /* Short: resolved, its mean within 15 % where the upper end is 10x off */
  assert_true(row[1]->mean[EPH_CLOCK_BYTES] > 5 * mean_short);
  assert_true(fabs(row[1]->est.mean_bytes - mean_short) < 0.15 * mean_short);
  assert_true(row[1]->est.resolved);
  assert_true(row[1]->est.short_share > 0.999);
  /* Kept: the recorded lower end is past the truth, the proven one is a bound */
  assert_true(recorded_lo[2] / count[2] > 2 * mean_kept);
  assert_true(row[2]->mean_lo[EPH_CLOCK_BYTES] <= mean_kept);
  assert_true(a->res.nepotism_suspects > 0);
  assert_true(row[2]->est.nepotism_sensitive);
  assert_false(row[2]->est.resolved);
  assert_false(a->est.resolved); /* a most-allocated class is not */
  /* the resolution: 80 scavenges one D apart, 20 full GCs */
  assert_true(fabs(a->res.scavenge_interval - D) < 0.3 * D);
  assert_false(a->res.too_few);
  eph_analysis_free(a);
  free(recs);
}

/* A finalization-mode death's interval is rebuilt from the GC log. */
static void test_finalized_brackets(void **state) {
  (void)state;
  eph_gc_event gcs[5];
  for (uint32_t k = 1; k <= 5; k++)
    gcs[k - 1] = (eph_gc_event){.kind = k == 3 || k == 5 ? EPH_GC_FULL : EPH_GC_SCAVENGE, .index = k, .allocated = 100 * k};
  eph_file p = {.gcs = gcs, .ngcs = 5};
  eph_gc_table t;
  assert_true(eph_gc_table_build(&t, &p));
  /* born at 50 (before collection 1), finalised after scavenge 2: (100, 200] */
  eph_iv v = {.lo = 0, .hi = 150, .gc = 2, .gc_birth = 0, .kind = EPH_IV_FINALIZED};
  eph_bracket b = eph_bracket_of(&v, &t);
  assert_true(b.kind == EPH_TB_INTERVAL && fabs(b.lo - 50) < 1e-9 && fabs(b.hi - 150) < 1e-9 && !b.by_full);
  /* born at 150, finalised after full GC 5: the last full GC before is 3 */
  v = (eph_iv){.lo = 0, .hi = 350, .gc = 5, .gc_birth = 1, .kind = EPH_IV_FINALIZED};
  b = eph_bracket_of(&v, &t);
  assert_true(fabs(b.lo - 150) < 1e-9 && b.by_full);
  /* born at 350: no full GC after its birth before 5: from its birth */
  v = (eph_iv){.lo = 0, .hi = 150, .gc = 5, .gc_birth = 3, .kind = EPH_IV_FINALIZED};
  assert_true(eph_bracket_of(&v, &t).lo == 0);
  /* gc mode, found by full GC 5, last seen at scavenge 4: proven at full GC 3 */
  v = (eph_iv){.lo = 250, .hi = 350, .gc = 4, .gc_birth = 1, .kind = EPH_IV_FULL};
  b = eph_bracket_of(&v, &t);
  assert_true(b.suspect && fabs(b.safe_lo - 150) < 1e-9 && fabs(b.lo - 250) < 1e-9);
  /* last seen at full GC 3: proven as recorded */
  v = (eph_iv){.lo = 150, .hi = 350, .gc = 3, .gc_birth = 1, .kind = EPH_IV_FULL};
  b = eph_bracket_of(&v, &t);
  assert_true(!b.suspect && b.safe_lo == b.lo);
  eph_gc_table_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_short_lifetimes_resolved),
      cmocka_unit_test(test_mixture_and_error_bars),
      cmocka_unit_test(test_exact_is_kaplan_meier),
      cmocka_unit_test(test_weights),
      cmocka_unit_test(test_simulated_gc_run),
      cmocka_unit_test(test_finalized_brackets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
