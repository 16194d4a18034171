/*
 * test_tune.c — the advisor's pieces: the grid, the EPHEMERA_GC string
 * through the heap's parser, objectives and ranking on fixed simulated
 * results, and the simulation on lifetimes whose outcome is known.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ephemera/tune.h"
#include "tune_internal.h"

#define MiB ((size_t)1 << 20)

static void grid_has_500_unique_with_default_and_illimani(void **state) {
  (void)state;
  eph_tune_config *g;
  size_t n = eph_tune_grid(&g);
  assert_true(n >= 500);
  eph_tune_config def = eph_tune_config_default();
  assert_true(eph_tune_config_equal(&g[0], &def));
  for (int k = 0; k < 5; k++) {
    eph_tune_config c = eph_tune_config_illimani(k);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) found = eph_tune_config_equal(&g[i], &c);
    assert_true(found);
  }
  size_t min_eden = SIZE_MAX, max_eden = 0;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) assert_false(eph_tune_config_equal(&g[i], &g[j]));
    if (g[i].eden < min_eden) min_eden = g[i].eden;
    if (g[i].eden > max_eden) max_eden = g[i].eden;
    assert_true(g[i].tenure >= 1 && g[i].tenure <= 15);
  }
  assert_true(max_eden / min_eden >= 32); /* spans orders of magnitude */
  free(g);
  n = eph_tune_grid_coarse(&g);
  assert_true(n >= 48);
  assert_true(eph_tune_config_equal(&g[0], &def));
  free(g);
}

static void gc_string_round_trips_through_the_heap_parser(void **state) {
  (void)state;
  eph_tune_config *g;
  size_t n = eph_tune_grid(&g);
  for (size_t i = 0; i < n; i++) {
    char s[160];
    eph_tune_config_format(&g[i], s, sizeof s);
    eph_gc_params p;
    eph_gc_params_init(&p);
    eph_error err;
    assert_int_equal(eph_gc_params_parse(&p, s, &err), EPH_OK);
    assert_int_equal(eph_gc_params_check(&p, &err), EPH_OK);
    eph_tune_config back = eph_tune_config_from_params(&p);
    assert_true(eph_tune_config_equal(&back, &g[i]));
  }
  free(g);
  char s[160];
  eph_tune_config c = eph_tune_config_illimani(0);
  eph_tune_config_format(&c, s, sizeof s);
  assert_string_equal(s, "eden=64M,headroom=64M,shrink=128M,ratio=2.5,tenure=3");
}

static eph_tune_sim sim(double time_s, double peak_mib) {
  eph_tune_sim s;
  memset(&s, 0, sizeof s);
  s.time_s = time_s;
  s.peak_heap = peak_mib * (double)MiB;
  return s;
}

static void ranking_under_each_objective(void **state) {
  (void)state;
  /* 0: fast and big, 1: slow and small, 2: middle, 3: fastest and huge. */
  eph_tune_sim s[4] = {sim(1.0, 400), sim(3.0, 50), sim(1.5, 100), sim(0.9, 2000)};
  size_t order[4];
  eph_tune_objective o;
  eph_error err;
  assert_int_equal(eph_tune_objective_parse("time", &o, &err), EPH_OK);
  assert_int_equal(eph_tune_rank(&o, s, 4, order), 4);
  assert_int_equal(order[0], 3);
  assert_int_equal(order[1], 0);
  assert_int_equal(order[2], 2);
  assert_int_equal(order[3], 1);
  assert_int_equal(eph_tune_objective_parse("time-within-heap=128M", &o, &err), EPH_OK);
  assert_int_equal(o.heap_limit, 128 * MiB);
  assert_int_equal(eph_tune_rank(&o, s, 4, order), 2);
  assert_int_equal(order[0], 2);
  assert_int_equal(order[1], 1);
  assert_int_equal(eph_tune_objective_parse("space-time", &o, &err), EPH_OK);
  eph_tune_rank(&o, s, 4, order);
  assert_int_equal(order[0], 1); /* 150 */
  assert_int_equal(order[1], 2); /* 150 too: the tie goes to the smaller heap */
  assert_int_equal(order[2], 0); /* 400 */
  assert_int_equal(order[3], 3); /* 1800 */
  /* Times within 0.2 %: the smaller peak heap first. */
  eph_tune_sim t[3] = {sim(1.0005, 500), sim(1.0, 900), sim(1.0002, 100)};
  assert_int_equal(eph_tune_objective_parse("time", &o, &err), EPH_OK);
  eph_tune_rank(&o, t, 3, order);
  assert_int_equal(order[0], 2);
  char buf[64];
  eph_tune_objective w = {EPH_TUNE_TIME_WITHIN_HEAP, 512 * MiB};
  eph_tune_objective_format(&w, buf, sizeof buf);
  assert_string_equal(buf, "time-within-heap=512M");
}

static void bad_objectives_are_refused_with_the_reason(void **state) {
  (void)state;
  eph_tune_objective o;
  eph_error err;
  const char *bad[] = {"fast", "time-within-heap=", "time-within-heap=0", "time-within-heap=12X", "space", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(eph_tune_objective_parse(bad[i], &o, &err), EPH_ERR_INVALID);
    assert_non_null(strstr(err.message, "objective"));
  }
}

/* n objects of `size` bytes born back to back, each living `life` bytes of
 * allocation (UINT64_MAX: to the end). */
static eph_tune_lives make_lives(size_t n, uint32_t size, uint64_t life) {
  eph_tune_lives l;
  memset(&l, 0, sizeof l);
  l.lives = calloc(n, sizeof *l.lives);
  assert_non_null(l.lives);
  l.n = n;
  for (size_t i = 0; i < n; i++) {
    l.lives[i].birth = (uint64_t)i * size;
    l.lives[i].death = life == UINT64_MAX ? UINT64_MAX : l.lives[i].birth + life;
    l.lives[i].size = size;
    l.lives[i].weight = 1;
  }
  l.end = (uint64_t)n * size;
  l.exact = true;
  return l;
}

static void simulation_of_known_lifetimes(void **state) {
  (void)state;
  eph_tune_config c[3] = {eph_tune_config_default(), eph_tune_config_default(), eph_tune_config_illimani(4)};
  c[1].eden = 4 * MiB;
  eph_tune_sim s[3];
  /* 100 MiB of objects dying at once: scavenges copy nothing, no full GC. */
  eph_tune_lives l = make_lives(100 * MiB / 64, 64, 32);
  assert_int_equal(eph_tune_simulate(&l, c, 3, s), EPH_OK);
  /* Every full eden, none at the very end: 6 at 15M, 24 at 4M. */
  assert_int_equal(s[0].scavenges, 6);
  assert_int_equal(s[1].scavenges, 24);
  assert_true(s[0].copied < 64 * 16);
  assert_int_equal(s[0].full_gcs, 0);
  assert_true(s[2].peak_heap > s[0].peak_heap); /* Illimani's 5 costs memory */
  eph_tune_lives_free(&l);
  /* 100 MiB that all live to the end: everything is copied and promoted,
   * the default's small ratio runs full GCs, configuration 5 avoids them. */
  l = make_lives(100 * MiB / 64, 64, UINT64_MAX);
  assert_int_equal(eph_tune_simulate(&l, c, 3, s), EPH_OK);
  assert_true(s[0].promoted > 80.0 * MiB);
  assert_true(s[0].full_gcs >= 2);
  assert_int_equal(s[2].full_gcs, 0);
  assert_true(s[0].copied >= s[0].promoted);
  /* Calibration: the default's predicted GC time equals the measured. */
  eph_tune_costs k = eph_tune_costs_nominal();
  eph_tune_calibrate(&k, &s[0], 2.0, 0.5, s, 3);
  assert_true(fabs(s[0].gc_s - 0.5) < 1e-9);
  assert_true(fabs(s[0].time_s - 2.0) < 1e-9);
  assert_true(s[2].gc_s < s[0].gc_s);
  eph_tune_lives_free(&l);
}

static void mean_and_confidence_interval(void **state) {
  (void)state;
  double x[4] = {1, 2, 3, 4}, m, ci;
  eph_tune_mean_ci(x, 4, &m, &ci);
  assert_true(fabs(m - 2.5) < 1e-12);
  /* sd = 1.29099, t(3) = 3.182: 3.182 * 1.29099 / 2 */
  assert_true(fabs(ci - 3.182 * 1.2909944 / 2) < 1e-4);
  eph_tune_mean_ci(x, 1, &m, &ci);
  assert_true(ci == 0);
}

/* A big sampled profile thinned for a prediction: large records all kept,
 * one small in k with weight k, totals about the same; exact profiles kept. */
static void thinning_keeps_large_records_and_the_weighted_total(void **state) {
  (void)state;
  enum { N = 100000 };
  eph_record *recs = calloc(N, sizeof *recs);
  assert_non_null(recs);
  double small_bytes = 0;
  size_t large = 0;
  for (size_t i = 0; i < N; i++) {
    recs[i] = (eph_record){.id = i * 48, .size = i % 100 == 7 ? 8192 : 32 + (i % 5) * 8, .weight = 1};
    if (recs[i].size >= 4096) large++;
    else small_bytes += (double)recs[i].size;
  }
  eph_meta_pair gc_mode = {"mode", "gc"}, merlin_mode = {"mode", "merlin"};
  eph_file f = {.meta = &merlin_mode, .nmeta = 1, .records = recs, .nrecords = N};
  assert_int_equal(tune_thin_records(&f, 10000), 1); /* exact deaths: never thinned */
  assert_int_equal(f.nrecords, N);
  f.meta = &gc_mode;
  assert_int_equal(tune_thin_records(&f, 200000), 1); /* already small enough */
  assert_int_equal(tune_thin_records(&f, 10000), 10);
  size_t kept_large = 0;
  double kept_small = 0;
  for (size_t i = 0; i < f.nrecords; i++) {
    if (f.records[i].size >= 4096) {
      kept_large++;
      assert_true(f.records[i].weight == 1);
    } else {
      assert_true(f.records[i].weight == 10);
      kept_small += (double)f.records[i].size * f.records[i].weight;
    }
  }
  assert_int_equal(kept_large, large);
  assert_true(f.nrecords < 12000 && f.nrecords > 9000);
  assert_true(fabs(kept_small / small_bytes - 1) < 0.05);
  free(recs);
}

/* The verification order: default's eden, the model's best, then a line
 * search over eden toward the fastest measured.  A grid of seven edens,
 * two configurations each (distinct outcomes), ranked by the model with
 * 64M first; the "measured" times make bigger edens faster up to 300M. */
static void verification_searches_eden_from_the_measurements(void **state) {
  (void)state;
  static const size_t mib = 1024 * 1024;
  static const size_t edens[] = {15, 4, 8, 32, 64, 150, 300}; /* element 0 the default's eden */
  eph_tune_config grid[14];
  eph_tune_sim sims[14];
  memset(sims, 0, sizeof sims);
  for (int i = 0; i < 14; i++) {
    grid[i] = eph_tune_config_default();
    grid[i].eden = edens[i / 2] * mib;
    grid[i].tenure = i % 2 ? 1 : 3;
    sims[i].scavenges = (uint64_t)i; /* every outcome distinct */
  }
  /* The model's order: 64M's two first, then 32M, 150M, 15M (not the
   * default itself), 8M, 300M, 4M. */
  size_t order[] = {8, 9, 6, 7, 10, 11, 1, 4, 5, 12, 13, 2, 3};
  size_t verified[5] = {0};
  double score[5];
  int nv = 1;
  score[0] = 10.0;
  size_t expect[] = {1, 8, 10, 12};
  for (int step = 0; step < 4; step++) {
    tune_verify_state v = {grid, sims, order, sizeof order / sizeof *order, verified, score, nv};
    size_t i = tune_next_to_verify(&v);
    assert_int_equal(i, expect[step]);
    verified[nv] = i;
    score[nv] = 10.0 - (double)(grid[i].eden / mib) / 100; /* bigger eden, faster */
    nv++;
  }
  /* When the fastest is inside the measured range, the neighbour the model
   * ranks higher: measured 15M (default), 15M/t1, 64M, 150M, with 64M fastest. */
  size_t ver2[5] = {0, 1, 8, 10};
  double sc2[5] = {10, 9.9, 9.0, 9.5};
  tune_verify_state v2 = {grid, sims, order, sizeof order / sizeof *order, ver2, sc2, 4};
  assert_int_equal(tune_next_to_verify(&v2), 6); /* 32M's best: the only neighbour left */
  /* Everything measured: none. */
  size_t all[14];
  double sc3[14];
  for (int i = 0; i < 14; i++) all[i] = (size_t)i, sc3[i] = 1;
  tune_verify_state v3 = {grid, sims, order, sizeof order / sizeof *order, all, sc3, 14};
  assert_true(tune_next_to_verify(&v3) == SIZE_MAX);
}

/* A pick must be clearly faster: by its interval from three invocations
 * on, by 5 % from one, and by 5 % with every invocation faster from two. */
static void clearly_faster_by_the_number_of_invocations(void **state) {
  (void)state;
  eph_tune_measurement def = {.n = 2, .mean_s = 70, .ci95_s = 31, .min_s = 68, .max_s = 72};
  eph_tune_measurement pick = {.n = 2, .mean_s = 24, .ci95_s = 8, .min_s = 23, .max_s = 25};
  assert_true(tune_clearly_faster(&def, &pick)); /* 2.9x, though t(1) makes the interval 1.3-4.5x wide */
  pick.max_s = 69; /* one invocation of the pick slower than one of the default */
  assert_false(tune_clearly_faster(&def, &pick));
  pick = (eph_tune_measurement){.n = 2, .mean_s = 68, .min_s = 67.5, .max_s = 67.9}; /* all faster, 3 % */
  assert_false(tune_clearly_faster(&def, &pick));
  def.n = pick.n = 1;
  def.mean_s = 1.0;
  pick.mean_s = 0.96;
  assert_false(tune_clearly_faster(&def, &pick));
  pick.mean_s = 0.9;
  assert_true(tune_clearly_faster(&def, &pick));
  def = (eph_tune_measurement){.n = 5, .mean_s = 1.0, .ci95_s = 0.05};
  pick = (eph_tune_measurement){.n = 5, .mean_s = 0.9, .ci95_s = 0.05};
  assert_true(tune_clearly_faster(&def, &pick)); /* 1.11x +- 0.08 */
  pick.ci95_s = 0.1;
  assert_false(tune_clearly_faster(&def, &pick)); /* 1.11x +- 0.12 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grid_has_500_unique_with_default_and_illimani),
      cmocka_unit_test(gc_string_round_trips_through_the_heap_parser),
      cmocka_unit_test(ranking_under_each_objective),
      cmocka_unit_test(bad_objectives_are_refused_with_the_reason),
      cmocka_unit_test(simulation_of_known_lifetimes),
      cmocka_unit_test(mean_and_confidence_interval),
      cmocka_unit_test(thinning_keeps_large_records_and_the_weighted_total),
      cmocka_unit_test(verification_searches_eden_from_the_measurements),
      cmocka_unit_test(clearly_faster_by_the_number_of_invocations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
