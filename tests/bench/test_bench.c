/*
 * test_bench.c — the bench library's arithmetic against hand-computed
 * values: Student's t quantiles (printed tables), mean/median/CI, LBO on a
 * fixed result set, simple and metered latency on a hand-worked event
 * sequence, target and factor parsing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ephemera/bench.h"

static void t_quantiles(void **state) {
  (void)state;
  /* two-sided 95 % (p = 0.975), and others, from a printed t table */
  static const struct {
    double p, df, t;
  } table[] = {{0.975, 1, 12.7062}, {0.975, 2, 4.3027},  {0.975, 3, 3.1824},  {0.975, 4, 2.7764},
               {0.975, 5, 2.5706},  {0.975, 9, 2.2622},  {0.975, 10, 2.2281}, {0.975, 29, 2.0452},
               {0.975, 30, 2.0423}, {0.975, 100, 1.9840}, {0.95, 5, 2.0150},  {0.99, 10, 2.7638},
               {0.995, 1, 63.6567}, {0.9, 20, 1.3253}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    double t = eph_bench_t_quantile(table[i].p, table[i].df);
    if (fabs(t - table[i].t) > 5e-4) fail_msg("t(%g, %g) = %.5f, expected %.4f", table[i].p, table[i].df, t, table[i].t);
  }
  assert_true(fabs(eph_bench_t_quantile(0.975, 1e7) - 1.95996) < 1e-4); /* the normal's */
  assert_true(fabs(eph_bench_t_quantile(0.025, 4) + 2.7764) < 5e-4);
  assert_true(eph_bench_t_quantile(0.5, 3) == 0);
  assert_true(isnan(eph_bench_t_quantile(1.0, 3)));
  assert_true(isnan(eph_bench_t_quantile(0.975, 0.5)));
}

static void stats_by_hand(void **state) {
  (void)state;
  double x[] = {10, 12, 11, 13, 14};
  eph_bench_stat s;
  eph_bench_stat_of(x, 5, &s);
  assert_int_equal(s.n, 5);
  assert_true(fabs(s.mean - 12) < 1e-12);
  assert_true(fabs(s.median - 12) < 1e-12);
  assert_true(fabs(s.sd - sqrt(2.5)) < 1e-12);
  /* 2.7764 * sqrt(2.5) / sqrt(5) */
  assert_true(fabs(s.ci - 1.96320) < 1e-3);
  double y[] = {4, 1, 3, 2};
  eph_bench_stat_of(y, 4, &s);
  assert_true(fabs(s.median - 2.5) < 1e-12);
  eph_bench_stat_of(y, 1, &s);
  assert_true(s.ci == 0 && s.mean == 4);
  double sorted[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  assert_true(eph_bench_percentile(sorted, 10, 0.5) == 5);
  assert_true(eph_bench_percentile(sorted, 10, 0.9) == 9);
  assert_true(eph_bench_percentile(sorted, 10, 0.99) == 10);
  assert_true(eph_bench_percentile(sorted, 10, 1.0) == 10);
}

static void lbo_direct(void **state) {
  (void)state;
  double total[] = {10, 8, 7.5}, gc[] = {3, 1, 0.2}, lbo[3];
  double base = eph_bench_lbo(total, gc, 3, lbo);
  assert_true(fabs(base - 7) < 1e-12);
  assert_true(fabs(lbo[0] - 10.0 / 7) < 1e-12);
  assert_true(fabs(lbo[1] - 8.0 / 7) < 1e-12);
  assert_true(fabs(lbo[2] - 7.5 / 7) < 1e-12);
}

/* A run with one warm-up and one timed iteration. */
static void add_run(eph_bench_results *r, size_t ci, size_t inv, double factor, double wall, double gc, double task,
                    double gc_cpu) {
  eph_bench_run run = {0};
  assert_int_equal(eph_bench_target_parse("gcbench:small", &run.target, &(eph_error){0}), 0);
  run.config_index = ci;
  run.invocation = inv;
  run.config.factor = factor;
  run.ok = true;
  run.niters = 2;
  run.iters = calloc(2, sizeof *run.iters);
  run.iters[0] = (eph_bench_iter){.warmup = true, .wall_s = 100, .task_s = 100};
  run.iters[1] = (eph_bench_iter){.wall_s = wall, .gc_s = gc, .task_s = task, .gc_cpu_s = gc_cpu, .gc_count = 4};
  assert_int_equal(eph_bench_results_add(r, &run, &(eph_error){0}), 0);
}

static void lbo_and_ci_on_results(void **state) {
  (void)state;
  eph_bench_results r = {0};
  /* configurations 0..2 (factors 1.5, 2, 4), two invocations each, added out of order */
  add_run(&r, 2, 1, 4, 7.6, 0.2, 9.1, 0.5);
  add_run(&r, 0, 0, 1.5, 9.9, 2.9, 19.9, 9.9);
  add_run(&r, 0, 1, 1.5, 10.1, 3.1, 20.1, 10.1);
  add_run(&r, 1, 0, 2, 8, 1, 12, 2);
  add_run(&r, 1, 1, 2, 8, 1, 12, 2);
  add_run(&r, 2, 0, 4, 7.4, 0.2, 8.9, 0.5);
  eph_bench_report rep;
  assert_int_equal(eph_bench_summarize(&r, &rep, &(eph_error){0}), 0);
  assert_int_equal(rep.nrows, 3);
  /* wall: totals 10, 8, 7.5; GC 3, 1, 0.2; distilled 7, 7, 7.3: baseline 7 */
  assert_true(fabs(rep.rows[0].lbo_wall - 10.0 / 7) < 1e-9);
  assert_true(fabs(rep.rows[1].lbo_wall - 8.0 / 7) < 1e-9);
  assert_true(fabs(rep.rows[2].lbo_wall - 7.5 / 7) < 1e-9);
  /* task: 20, 12, 9 minus 10, 2, 0.5: distilled 10, 10, 8.5 */
  assert_true(fabs(rep.rows[0].lbo_task - 20 / 8.5) < 1e-9);
  assert_true(fabs(rep.rows[2].lbo_task - 9 / 8.5) < 1e-9);
  /* CI of {9.9, 10.1}: 12.7062 * 0.141421 / sqrt(2) = 1.27062; LBO bars are the time's bars over the baseline */
  assert_true(fabs(rep.rows[0].wall.ci - 1.27062) < 1e-4);
  assert_true(fabs(rep.rows[0].lbo_wall_lo - (10 - 1.27062) / 7) < 1e-4);
  assert_true(rep.rows[1].wall.ci == 0);
  /* warm-ups apart */
  assert_int_equal(rep.rows[0].warmups, 2);
  assert_true(fabs(rep.rows[0].warmup_wall - 100) < 1e-12);
  assert_true(fabs(rep.rows[0].wall.mean - 10) < 1e-12);
  assert_int_equal(rep.wide_ci, 2); /* 1.27 / 10 and 1.27 / 7.5 are above 3 %; configuration 1 has no spread */
  eph_bench_report_free(&rep);
  eph_bench_results_free(&r);
}

/* A run of target ti ("jvm:h2:small" or "jvm:fop:small") under a
 * collector at a heap factor, one timed iteration. */
static void add_java_run(eph_bench_results *r, size_t ti, size_t ci, const char *collector, double factor, double wall,
                         double gc) {
  eph_bench_run run = {0};
  assert_int_equal(eph_bench_target_parse(ti ? "jvm:fop:small" : "jvm:h2:small", &run.target, &(eph_error){0}), 0);
  run.target_index = ti;
  run.config_index = ci;
  snprintf(run.config.gc, sizeof run.config.gc, "%s", collector);
  run.config.factor = factor;
  run.ok = true;
  run.niters = 1;
  run.iters = calloc(1, sizeof *run.iters);
  run.iters[0] = (eph_bench_iter){.wall_s = wall, .gc_s = gc, .task_s = wall, .gc_cpu_s = gc, .gc_count = 3};
  assert_int_equal(eph_bench_results_add(r, &run, &(eph_error){0}), 0);
}

/* Figure 1's points: per collector and heap factor, the geometric mean of
 * the targets' LBO; a point some target lacks is not complete. */
static void geomean_lbo(void **state) {
  (void)state;
  eph_bench_results r = {0};
  /* h2: serial at 2x and 4x, g1 at 2x; distilled minimum 8 - 2 = 6 (serial 2x) */
  add_java_run(&r, 0, 0, "serial", 2, 8, 2);
  add_java_run(&r, 0, 1, "serial", 4, 7, 0.5);
  add_java_run(&r, 0, 2, "g1", 2, 9, 0.5);
  /* fop: serial at 2x and 4x only; distilled minimum 3 - 1 = 2 */
  add_java_run(&r, 1, 0, "serial", 2, 3, 1);
  add_java_run(&r, 1, 1, "serial", 4, 2.5, 0.2);
  eph_bench_report rep;
  assert_int_equal(eph_bench_summarize(&r, &rep, &(eph_error){0}), 0);
  assert_int_equal(rep.ntargets, 2);
  assert_int_equal(rep.ngeomean, 3);
  const eph_bench_geomean *s2 = NULL, *s4 = NULL, *g2 = NULL;
  for (size_t i = 0; i < rep.ngeomean; i++) {
    const eph_bench_geomean *g = &rep.geomean[i];
    if (!strcmp(g->gc, "serial") && g->factor == 2) s2 = g;
    if (!strcmp(g->gc, "serial") && g->factor == 4) s4 = g;
    if (!strcmp(g->gc, "g1") && g->factor == 2) g2 = g;
  }
  assert_non_null(s2), assert_non_null(s4), assert_non_null(g2);
  /* h2 serial 2x: 8 / 6; fop serial 2x: 3 / 2 */
  assert_true(fabs(s2->lbo_wall - sqrt(8.0 / 6 * 3.0 / 2)) < 1e-9);
  assert_true(fabs(s4->lbo_wall - sqrt(7.0 / 6 * 2.5 / 2)) < 1e-9);
  assert_true(s2->complete && s4->complete);
  assert_false(g2->complete); /* fop never ran g1 */
  assert_int_equal(g2->ntargets, 1);
  assert_true(fabs(g2->lbo_wall - 9.0 / 6) < 1e-9);
  eph_bench_report_free(&rep);
  eph_bench_results_free(&r);
}

/* Java targets and --collector lists parse; bad ones are refused. */
static void java_targets(void **state) {
  (void)state;
  eph_bench_target t;
  eph_error e = {0};
  assert_int_equal(eph_bench_target_parse("jvm:lusearch", &t, &e), 0);
  assert_int_equal(t.kind, EPH_BENCH_JVM);
  assert_string_equal(t.name, "lusearch");
  assert_string_equal(t.size, "default");
  assert_int_equal(eph_bench_target_parse("jvm:h2:small", &t, &e), 0);
  assert_string_equal(t.size, "small");
  assert_int_equal(eph_bench_target_parse("jcmd:java -jar x.jar", &t, &e), 0);
  assert_int_equal(t.kind, EPH_BENCH_JCMD);
  assert_string_equal(t.name, "java -jar x.jar");
  assert_int_equal(eph_bench_target_parse("jvm:tomcat", &t, &e), -1);
  assert_non_null(strstr(e.message, "fop, h2, jython"));
  assert_int_equal(eph_bench_target_parse("jvm:h2:large", &t, &e), -1);
  assert_int_equal(eph_bench_target_parse("jcmd:  ", &t, &e), -1);
  const char *names[8];
  size_t n;
  bool all;
  assert_int_equal(eph_bench_collectors_parse("serial,zgc", names, &n, &all, &e), 0);
  assert_int_equal(n, 2);
  assert_false(all);
  assert_string_equal(names[1], "zgc");
  assert_int_equal(eph_bench_collectors_parse("all", names, &n, &all, &e), 0);
  assert_int_equal(n, 5);
  assert_true(all);
  assert_int_equal(eph_bench_collectors_parse("g1,cms", names, &n, &all, &e), -1);
  assert_non_null(strstr(e.message, "'cms'"));
  assert_int_equal(eph_bench_collectors_parse("g1,g1", names, &n, &all, &e), -1);
}

#define MS 1000000u

static void metered_by_hand(void **state) {
  (void)state;
  /* a pause delays the third event; the next ones queue behind it */
  eph_bench_event ev[] = {{0, 1 * MS}, {1 * MS, 2 * MS}, {2 * MS, 10 * MS}, {10 * MS, 11 * MS}, {11 * MS, 12 * MS}};
  double out[5];
  eph_bench_metered(ev, 5, 0, out); /* no smoothing: simple latency */
  double simple[] = {1, 1, 8, 1, 1};
  for (int i = 0; i < 5; i++) assert_true(fabs(out[i] / MS - simple[i]) < 1e-9);
  /* the whole run: synthetic starts 0, 2.75, 5.5, 8.25, 11 ms */
  eph_bench_metered(ev, 5, UINT64_MAX, out);
  double full[] = {1, 1, 8, 2.75, 1};
  for (int i = 0; i < 5; i++)
    if (fabs(out[i] / MS - full[i]) > 1e-9) fail_msg("full: event %d: %g ms, expected %g", i, out[i] / MS, full[i]);
  /* 4 ms (half 2 ms): the pause's neighbours are out of reach: simple again */
  eph_bench_metered(ev, 5, 4 * MS, out);
  for (int i = 0; i < 5; i++) assert_true(fabs(out[i] / MS - simple[i]) < 1e-9);

  /* a partial window: 16 ms (half 8) */
  eph_bench_event e2[] = {{0, 1 * MS},        {1 * MS, 2 * MS},   {2 * MS, 3 * MS},   {3 * MS, 10 * MS}, {10 * MS, 11 * MS},
                          {11 * MS, 12 * MS}, {12 * MS, 13 * MS}, {13 * MS, 14 * MS}, {30 * MS, 31 * MS}};
  double o2[9];
  eph_bench_metered(e2, 9, 16 * MS, o2);
  /* event 4 (start 10): window [2, 18] = events 2..7, synthetic 2 + 11 * 2/5 = 6.4: 11 - 6.4 */
  assert_true(fabs(o2[4] / MS - 4.6) < 1e-9);
  /* event 5 (start 11): window [3, 19] = events 3..7, synthetic 3 + 10 * 2/4 = 8: 12 - 8 */
  assert_true(fabs(o2[5] / MS - 4.0) < 1e-9);
  /* event 8 (start 30): alone in [22, 38] */
  assert_true(fabs(o2[8] / MS - 1.0) < 1e-9);
  /* metered is never below simple */
  for (int i = 0; i < 9; i++) assert_true(o2[i] >= (double)(e2[i].end_ns - e2[i].start_ns) - 1e-6);
}

static void latency_in_summary(void **state) {
  (void)state;
  eph_bench_results r = {0};
  add_run(&r, 0, 0, 0, 1, 0, 1, 0);
  eph_bench_iter *it = &r.runs[0].iters[1];
  it->nevents = 5;
  it->events = malloc(5 * sizeof *it->events);
  eph_bench_event ev[] = {{0, 1 * MS}, {1 * MS, 2 * MS}, {2 * MS, 10 * MS}, {10 * MS, 11 * MS}, {11 * MS, 12 * MS}};
  memcpy(it->events, ev, sizeof ev);
  eph_bench_report rep;
  assert_int_equal(eph_bench_summarize(&r, &rep, &(eph_error){0}), 0);
  assert_int_equal(rep.rows[0].simple.n, 5);
  assert_true(fabs(rep.rows[0].simple.ms[0] - 1) < 1e-9);        /* p50 */
  assert_true(fabs(rep.rows[0].simple.ms[5] - 8) < 1e-9);        /* max */
  assert_true(fabs(rep.rows[0].metered_full.ms[1] - 8) < 1e-9);  /* p90: 5th of 5 */
  assert_true(fabs(rep.rows[0].metered_full.ms[0] - 1) < 1e-9);  /* p50: 3rd of 1, 1, 1, 2.75, 8 */
  eph_bench_report_free(&rep);
  eph_bench_results_free(&r);
}

static void parsing(void **state) {
  (void)state;
  eph_bench_target t;
  eph_error e;
  assert_int_equal(eph_bench_target_parse("dataframe:default", &t, &e), 0);
  assert_int_equal(t.kind, EPH_BENCH_WORKLOAD);
  assert_string_equal(t.size, "default");
  assert_int_equal(eph_bench_target_parse("gcbench", &t, &e), 0);
  assert_string_equal(t.size, "default");
  assert_int_equal(eph_bench_target_parse("cmd:  sleep 1", &t, &e), 0);
  assert_int_equal(t.kind, EPH_BENCH_CMD);
  assert_string_equal(t.name, "sleep 1");
  assert_int_equal(eph_bench_target_parse("nosuch:default", &t, &e), -1);
  assert_non_null(strstr(e.message, "no workload 'nosuch'"));
  assert_int_equal(eph_bench_target_parse("dataframe:huge", &t, &e), -1);
  assert_non_null(strstr(e.message, "bad size 'huge'"));
  assert_int_equal(eph_bench_target_parse("cmd:", &t, &e), -1);
  assert_int_equal(eph_bench_target_parse("lua:/nonexistent/x.lua", &t, &e), -1);
  assert_non_null(strstr(e.message, "cannot read /nonexistent/x.lua"));
  double f[8];
  assert_int_equal(eph_bench_factors_parse("1.5,2,3", f, 8, &e), 3);
  assert_true(f[0] == 1.5 && f[2] == 3);
  assert_int_equal(eph_bench_factors_parse("1.5,,3", f, 8, &e), -1);
  assert_int_equal(eph_bench_factors_parse("2,-1", f, 8, &e), -1);
  assert_non_null(strstr(e.message, "bad factor '-1'"));
  assert_int_equal(eph_bench_factors_parse("2x", f, 8, &e), -1);
  assert_int_equal(eph_bench_factors_parse("0", f, 8, &e), -1);
  assert_int_equal(eph_bench_factors_parse("1,2,3", f, 2, &e), -1);
}

/* The nominal statistics file read back: figures, a failed workload, one
 * without latency; a file that is not one. */
static void nominal_file(void **state) {
  (void)state;
  char path[] = "/tmp/ephemera-nominal-test-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("{\"ephemera_nominal\": 1, \"size\": \"small\", \"invocations\": 3, \"workloads\": ["
        "{\"workload\": \"kvstore\", \"minheap_bytes\": 1048576, \"gc_share_2x\": 0.25, \"latency_p50_ms\": 0.5,"
        " \"latency_p99_ms\": 2},"
        "{\"workload\": \"sph\", \"error\": \"iteration 1: boom\"},"
        "{\"workload\": \"boids\", \"alloc_rate_mb_s\": 10}]}\n",
        f);
  fclose(f);
  eph_bench_nominal_table t;
  eph_error e;
  assert_int_equal(eph_bench_nominal_load(path, &t, &e), 0);
  assert_string_equal(t.size, "small");
  assert_int_equal(t.invocations, 3);
  assert_int_equal(t.nrows, 3);
  assert_string_equal(t.rows[0].workload, "kvstore");
  assert_float_equal(t.rows[0].minheap_bytes, 1048576, 0);
  assert_float_equal(t.rows[0].gc_share_2x, 0.25, 0);
  assert_float_equal(t.rows[0].alloc_rate_mb_s, -1, 0); /* missing */
  assert_true(t.rows[0].have_latency);
  assert_float_equal(t.rows[0].latency_p99_ms, 2, 0);
  assert_string_equal(t.rows[1].error, "iteration 1: boom");
  assert_false(t.rows[2].have_latency);
  eph_bench_nominal_table_free(&t);
  f = fopen(path, "w");
  fputs("{\"ephemera_harness\": 1}\n", f);
  fclose(f);
  assert_int_equal(eph_bench_nominal_load(path, &t, &e), -1);
  assert_int_equal(e.status, EPH_ERR_INVALID);
  assert_non_null(strstr(e.message, "not a nominal statistics file"));
  remove(path);
  assert_int_equal(eph_bench_nominal_load(path, &t, &e), -1);
  assert_int_equal(e.status, EPH_ERR_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_quantiles),     cmocka_unit_test(stats_by_hand),      cmocka_unit_test(lbo_direct),
      cmocka_unit_test(lbo_and_ci_on_results), cmocka_unit_test(metered_by_hand), cmocka_unit_test(latency_in_summary),
      cmocka_unit_test(parsing),        cmocka_unit_test(nominal_file),       cmocka_unit_test(geomean_lbo),
      cmocka_unit_test(java_targets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
