/*
 * test_sim.c — unit tests of libephemera_sim: every GC parameter of the
 * heap's table has a role in the simulator; spur's rules on hand-made
 * traces (scavenge counts, nepotism through the remembered set, tenuring,
 * survivor overflow, pretenuring); what a lifetimes-only input cannot see;
 * the cost model's fit, file round trip and malformed files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "ephemera/sim.h"

/* --- hand-made traces --------------------------------------------------------- */

#define MAXEV 256
#define OBJ 1024 /* bytes per object: 127 slots, below spur's large threshold at eden=16K */
#define PRETENURED (UINT64_C(1) << 40)

typedef struct tb {
  eph_event ev[MAXEV];
  eph_record rec[MAXEV];
  size_t nev, nrec;
  uint64_t clock;
} tb;

/* An object that dies at `death` (0: right at its birth; UINT64_MAX: censored). */
static uint64_t alloc(tb *t, uint64_t flags, uint64_t death) {
  t->clock += OBJ;
  t->ev[t->nev++] = (eph_event){.kind = EPH_EV_ALLOC, .time = t->clock, .obj = t->clock, .a = 1, .b = OBJ, .c = flags};
  eph_record *r = &t->rec[t->nrec++];
  *r = (eph_record){.id = t->clock, .class_id = 1, .size = OBJ, .weight = 1, .birth = {.bytes = t->clock}};
  r->death_kind = death == UINT64_MAX ? EPH_DEATH_CENSORED : EPH_DEATH_EXACT;
  r->death.bytes = death == 0 ? t->clock : death;
  r->alive_until = r->death;
  return t->clock;
}

static void store(tb *t, uint64_t src, uint64_t slot, uint64_t target) {
  t->ev[t->nev++] = (eph_event){.kind = EPH_EV_STORE, .time = t->clock, .obj = src, .a = slot, .c = target};
}

static eph_sim_input *input(tb *t, bool with_events) {
  static char *classes[2] = {NULL, "Obj"};
  eph_meta_pair meta[] = {{"mode", "merlin"}};
  eph_file p = {.meta = meta, .nmeta = 1, .class_names = classes, .nclasses = 2, .records = t->rec,
                   .nrecords = t->nrec, .events = with_events ? t->ev : NULL, .nevents = with_events ? t->nev : 0,
                   .complete = true};
  eph_sim_input *in = NULL;
  eph_error err;
  assert_int_equal(eph_sim_input_from_profile(&p, &in, &err), EPH_OK);
  return in;
}

static eph_sim_result simulate(eph_sim_input *in, const char *gc) {
  eph_sim_config cfg;
  eph_sim_config_init(&cfg);
  eph_error err;
  assert_int_equal(eph_gc_params_parse(&cfg.params, gc, &err), EPH_OK);
  eph_sim_result r;
  assert_int_equal(eph_sim_run(in, &cfg, NULL, &r, &err), EPH_OK);
  return r;
}

/* A dead pretenured object points to a young one that is dead too: the
 * scavenger still copies it (the remembered set is a root), and a
 * lifetimes-only input, with no graph, cannot see that. */
static void test_nepotism(void **state) {
  (void)state;
  for (int linked = 0; linked < 2; linked++) {
    tb *t = calloc(1, sizeof *t);
    uint64_t p = alloc(t, PRETENURED, 0);
    uint64_t y = alloc(t, 0, 0);
    if (linked) store(t, p, 0, y);
    for (int i = 0; i < 16; i++) alloc(t, 0, 0); /* eden (16K) fills with the 16th object after y */
    eph_sim_input *in = input(t, true);
    eph_sim_result r = simulate(in, "eden=16K,headroom=16K");
    assert_int_equal(r.scavenges, 1);
    assert_int_equal(r.full_gcs, 0);
    assert_int_equal(r.bytes_copied, linked ? OBJ : 0);
    assert_int_equal(r.remembered, linked ? 1 : 0);
    assert_int_equal(r.bytes_allocated_old, OBJ);
    eph_sim_input_free(in);
    in = input(t, false);
    assert_int_equal(eph_sim_input_kind_of(in), EPH_SIM_INPUT_LIFETIMES);
    r = simulate(in, "eden=16K,headroom=16K");
    assert_int_equal(r.scavenges, 1);
    assert_int_equal(r.bytes_copied, 0); /* no graph: no nepotism */
    assert_int_equal(r.bytes_allocated_old, 0); /* and no pretenuring */
    eph_sim_input_free(in);
    free(t);
  }
}

/* Live young objects: copied at tenure > 1, promoted at tenure = 1; when
 * more survive than a survivor space (4K) holds, the rest overflow. */
static void test_tenure_and_overflow(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof *t);
  for (int i = 0; i < 6; i++) alloc(t, 0, UINT64_MAX);
  for (int i = 0; i < 11; i++) alloc(t, 0, 0);
  eph_sim_input *in = input(t, true);
  eph_sim_result r = simulate(in, "eden=16K,tenure=3");
  assert_int_equal(r.scavenges, 1);
  assert_int_equal(r.bytes_copied, 4 * OBJ); /* the survivor space is 4K */
  assert_int_equal(r.bytes_promoted, 2 * OBJ);
  assert_int_equal(r.bytes_overflowed, 2 * OBJ);
  r = simulate(in, "eden=16K,tenure=1");
  assert_int_equal(r.bytes_copied, 0);
  assert_int_equal(r.bytes_promoted, 6 * OBJ);
  assert_int_equal(r.bytes_overflowed, 0);
  r = simulate(in, "eden=32K");
  assert_int_equal(r.scavenges, 0);
  eph_sim_input_free(in);
  free(t);
}

/* Old space fills with promoted survivors until the GC ratio triggers a
 * full GC; with every object dead by then, it marks nothing. */
static void test_full_gc_trigger(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof *t);
  /* 40 objects that live for 20 allocations each, eden 16K, tenure 1:
   * every scavenge promotes what is still live. */
  for (int i = 0; i < 200; i++) alloc(t, 0, t->clock + OBJ + 20 * OBJ);
  eph_sim_input *in = input(t, true);
  eph_sim_result r = simulate(in, "eden=16K,tenure=1,headroom=4K,ratio=0.5");
  assert_true(r.scavenges >= 10);
  assert_true(r.full_gcs >= 1);
  assert_true(r.bytes_promoted > 0);
  assert_true(r.mark_cons > 0);
  eph_sim_result r2 = simulate(in, "eden=16K,tenure=1,headroom=4K,ratio=4");
  assert_true(r2.full_gcs < r.full_gcs); /* a larger ratio, fewer full GCs */
  eph_sim_input_free(in);
  free(t);
}

/* Granularity: deaths in this trace are multiples of 8 bytes, so a granule
 * of 8 changes nothing unsynchronised; coarse granules do. */
static void test_granularity(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof *t);
  for (int i = 0; i < 200; i++) alloc(t, 0, t->clock + OBJ + (uint64_t)(i % 7) * 3 * OBJ);
  eph_sim_input *in = input(t, true);
  eph_sim_config cfg;
  eph_sim_config_init(&cfg);
  eph_error err;
  assert_int_equal(eph_gc_params_parse(&cfg.params, "eden=16K,tenure=2", &err), EPH_OK);
  uint64_t granules[2] = {8, 64 * 1024};
  double e[2 * 2 * EPH_SIM_NSYNC];
  assert_int_equal(eph_sim_granularity_table(in, &cfg, granules, 2, e, &err), EPH_OK);
  assert_float_equal(e[0], 0, 1e-12); /* granule 8, unsync: mark/cons */
  assert_float_equal(e[1], 0, 1e-12); /* and count */
  double coarse = 0;
  for (unsigned k = 0; k < EPH_SIM_NSYNC; k++) coarse += fabs(e[2 * (EPH_SIM_NSYNC + k)]);
  assert_true(coarse > 0.01);
  eph_sim_input_free(in);
  free(t);
}

/* --- the parameter table --------------------------------------------------- */

static void test_every_parameter_has_a_role(void **state) {
  (void)state;
#define CHECK_ROLE(key, field, kind, def, help)                                                   \
  if (!eph_sim_param_role(#key)) fail_msg("GC parameter '%s' has no role in the simulator", #key);
  EPH_GC_PARAM_TABLE(CHECK_ROLE)
#undef CHECK_ROLE
  assert_null(eph_sim_param_role("no_such_parameter"));
}

static void test_stress_refused(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof *t);
  alloc(t, 0, 0);
  eph_sim_input *in = input(t, true);
  eph_sim_config cfg;
  eph_sim_config_init(&cfg);
  cfg.params.stress = 1;
  eph_sim_result r;
  eph_error err;
  assert_int_equal(eph_sim_run(in, &cfg, NULL, &r, &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "stress"));
  eph_sim_input_free(in);
  free(t);
}

/* A root slot's new value (ROOT a = 2) from the allocation ending at `when` on. */
static void root_slot(tb *t, uint64_t when, uint64_t slot, uint64_t obj) {
  t->ev[t->nev++] = (eph_event){.kind = EPH_EV_ROOT, .time = when, .obj = obj, .a = 2, .b = slot, .c = 0};
}

/* Six live objects held by six root slots in reverse birth order, a
 * survivor space for four: the scavenger copies the first four roots it
 * meets (F E D C) and promotes B and A, which then die; the next scavenge
 * copies F E D C again.  Copying oldest first (the order without the
 * trace's roots) would promote E and F instead and copy only C and D
 * again.  Root events out of time order are refused with a caveat. */
static void test_root_order(void **state) {
  (void)state;
  for (int disordered = 0; disordered < 2; disordered++) {
    tb *t = calloc(1, sizeof *t);
    uint64_t id[6];
    for (int i = 0; i < 6; i++) id[i] = alloc(t, 0, UINT64_MAX);
    for (int i = 0; i < 6; i++) root_slot(t, t->clock, (uint64_t)i, id[5 - i]);
    for (int i = 0; i < 10; i++) alloc(t, 0, 0); /* eden (16K) is full */
    uint64_t gone = t->clock + OBJ;               /* the 17th allocation: the first scavenge */
    t->rec[0].death.bytes = t->rec[0].alive_until.bytes = gone; /* A and B die after it */
    t->rec[1].death.bytes = t->rec[1].alive_until.bytes = gone;
    t->rec[0].death_kind = t->rec[1].death_kind = EPH_DEATH_EXACT;
    alloc(t, 0, 0);
    root_slot(t, disordered ? 1 : gone + OBJ, 4, 0);
    root_slot(t, gone + OBJ, 5, 0);
    for (int i = 0; i < 17; i++) alloc(t, 0, 0); /* the second scavenge */
    eph_sim_input *in = input(t, true);
    bool caveat = strstr(eph_sim_input_caveats(in), "out of time order") != NULL;
    assert_true(caveat == (disordered == 1));
    eph_sim_result r = simulate(in, "eden=16K,tenure=3");
    assert_int_equal(r.scavenges, 2);
    assert_int_equal(r.bytes_promoted, 2 * OBJ);
    assert_int_equal(r.bytes_copied, (disordered ? 6 : 8) * OBJ);
    eph_sim_input_free(in);
    free(t);
  }
}

/* --- the cost model -------------------------------------------------------- */

static void test_fit_recovers_coefficients(void **state) {
  (void)state;
  /* 64 runs of two collections each (a scavenge and, every third run, a
   * full GC), timed by a known model: the fit must find it again. */
  eph_sim_observation obs[128];
  size_t n = 0;
  for (unsigned i = 0; i < 64; i++) {
    obs[n++] = (eph_sim_observation){.run = i, .kind = EPH_GC_SCAVENGE, .copied = (i * 7919) % 1000 * 1000.0 + 1000,
                                     .promoted = (i * 104729) % 500 * 1000.0, .objects = (i * 31) % 97 * 100.0,
                                     .slots = (i * 13) % 51 * 300.0};
    if (i % 3 == 0)
      obs[n++] = (eph_sim_observation){.run = i, .kind = EPH_GC_FULL, .marked = i * 50000.0 + 1e4,
                                       .compacted = i % 5 ? 0 : i * 20000.0, .slots = (i * 37) % 41 * 500.0};
  }
  for (size_t k = 0; k < n; k++) {
    const eph_sim_observation *o = &obs[k];
    bool full = o->kind == EPH_GC_FULL;
    obs[k].seconds = (full ? 1e-4 : 1e-5) + 1e-9 * o->copied + 2e-9 * o->promoted + 4e-9 * o->objects +
                     (full ? 3e-9 : 1.5e-9) * o->slots + 5e-10 * o->marked + 3e-10 * o->compacted;
  }
  double run_s[64] = {0};
  for (size_t k = 0; k < n; k++) run_s[obs[k].run] += obs[k].seconds;
  unsigned timed = 0; /* runs with enough GC to be fitted */
  for (int i = 0; i < 64; i++) timed += run_s[i] >= EPH_SIM_FIT_MIN_SECONDS;
  assert_true(timed >= 32 && timed < 64); /* some runs are left out */
  eph_sim_costmodel cm;
  eph_error err;
  assert_int_equal(eph_sim_costmodel_fit(obs, n, &cm, &err), EPH_OK);
  assert_float_equal(cm.per_scavenge, 1e-5, 1e-9);
  assert_float_equal(cm.per_full_gc, 1e-4, 1e-9);
  assert_float_equal(cm.per_byte_copied, 1e-9, 1e-12);
  assert_float_equal(cm.per_byte_promoted, 2e-9, 1e-12);
  assert_float_equal(cm.per_object_moved, 4e-9, 1e-12);
  assert_float_equal(cm.per_slot_scanned, 1.5e-9, 1e-12);
  assert_float_equal(cm.per_slot_traced, 3e-9, 1e-12);
  assert_float_equal(cm.per_byte_marked, 5e-10, 1e-12);
  assert_float_equal(cm.per_byte_compacted, 3e-10, 1e-12);
  assert_true(cm.fit_error < 1e-6);
  assert_int_equal(cm.samples, timed);
  /* Too few runs to fit: an error, whatever the number of collections. */
  for (size_t k = 0; k < n; k++) obs[k].run %= 3;
  assert_int_equal(eph_sim_costmodel_fit(obs, n, &cm, &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "runs"));
}

static void test_model_file(void **state) {
  (void)state;
  char path[] = "/tmp/ephemera-sim-test-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  eph_sim_costmodel cm, back;
  eph_sim_costmodel_default(&cm);
  cm.fit_error = 0.125;
  cm.samples = 42;
  eph_error err;
  assert_int_equal(eph_sim_costmodel_save(path, &cm, &err), EPH_OK);
  assert_int_equal(eph_sim_costmodel_load(path, &back, &err), EPH_OK);
  assert_float_equal(back.per_byte_copied, cm.per_byte_copied, 1e-18);
  assert_float_equal(back.fit_error, 0.125, 1e-12);
  assert_int_equal(back.samples, 42);
  FILE *f = fopen(path, "w");
  fputs("per_scavenge fast\n", f);
  fclose(f);
  assert_int_equal(eph_sim_costmodel_load(path, &back, &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "line 1"));
  f = fopen(path, "w");
  fputs("per_scavenge 1e-5\n", f);
  fclose(f);
  assert_int_equal(eph_sim_costmodel_load(path, &back, &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "missing"));
  remove(path);
}

/* --- what `ephemera sim` asks for: configurations, the model, the report --- */

static void test_plan_configs(void **state) {
  (void)state;
  eph_sim_config cfgs[4];
  size_t n;
  eph_error err;
  const char *gc[2] = {"eden=1M,tenure=1", "eden=4M"};
  eph_sim_plan spur = {.collector = EPH_SIM_SPUR, .gc = gc, .ngc = 2, .granule = 4096, .sync = EPH_SIM_SYNC_MID};
  assert_int_equal(eph_sim_plan_configs(&spur, cfgs, 4, &n, &err), EPH_OK);
  assert_int_equal(n, 2);
  assert_int_equal(cfgs[0].params.eden_bytes, 1 << 20);
  assert_int_equal(cfgs[0].params.tenure_age, 1);
  assert_int_equal(cfgs[1].params.eden_bytes, 4 << 20);
  assert_int_equal(cfgs[1].granule, 4096);
  assert_int_equal(cfgs[1].sync, EPH_SIM_SYNC_MID);
  spur.ngc = 0; /* none: the defaults */
  assert_int_equal(eph_sim_plan_configs(&spur, cfgs, 4, &n, &err), EPH_OK);
  assert_int_equal(n, 1);
  const char *bad[1] = {"eden=lots"};
  spur.gc = bad, spur.ngc = 1;
  assert_int_equal(eph_sim_plan_configs(&spur, cfgs, 4, &n, &err), EPH_ERR_INVALID);
  eph_sim_heap_size heaps[2] = {{.factor = 3}, {.bytes = 4 << 20}};
  eph_sim_plan ss = {.collector = EPH_SIM_SS, .heaps = heaps, .nheaps = 2};
  assert_int_equal(eph_sim_plan_configs(&ss, cfgs, 4, &n, &err), EPH_OK);
  assert_int_equal(n, 2);
  assert_int_equal(cfgs[0].heap_bytes, 0);
  assert_float_equal(cfgs[0].heap_factor, 3, 0);
  assert_int_equal(cfgs[1].heap_bytes, 4 << 20);
  char label[256];
  eph_sim_config_label(&cfgs[1], NULL, label, sizeof label);
  assert_string_equal(label, "ss heap=4M");
  ss.nheaps = 0; /* none: 2x */
  assert_int_equal(eph_sim_plan_configs(&ss, cfgs, 4, &n, &err), EPH_OK);
  assert_float_equal(cfgs[0].heap_factor, 2, 0);
  ss.gc = gc, ss.ngc = 1; /* GC parameters are spur's */
  assert_int_equal(eph_sim_plan_configs(&ss, cfgs, 4, &n, &err), EPH_ERR_INVALID);
  spur.gc = gc, spur.ngc = 2;
  assert_int_equal(eph_sim_plan_configs(&spur, cfgs, 1, &n, &err), EPH_ERR_INVALID); /* over cap */
}

static void test_report(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof *t);
  for (int i = 0; i < 200; i++) alloc(t, 0, t->clock + OBJ + (uint64_t)(i % 7) * 3 * OBJ);
  eph_sim_input *in = input(t, true);
  eph_sim_config cfgs[2];
  size_t n;
  eph_error err;
  const char *gc[2] = {"eden=16K", "eden=64K"};
  eph_sim_plan plan = {.collector = EPH_SIM_SPUR, .gc = gc, .ngc = 2};
  assert_int_equal(eph_sim_plan_configs(&plan, cfgs, 2, &n, &err), EPH_OK);
  eph_sim_report rep;
  assert_int_equal(eph_sim_run_all(in, "t.eph", cfgs, n, NULL, &rep, &err), EPH_OK);
  assert_int_equal(rep.n, 2);
  assert_string_equal(rep.input_name, "t.eph");
  for (size_t i = 0; i < n; i++) { /* each result is eph_sim_run's */
    eph_sim_result one;
    assert_int_equal(eph_sim_run(in, &cfgs[i], &rep.model, &one, &err), EPH_OK);
    assert_int_equal(one.scavenges, rep.results[i].scavenges);
    assert_int_equal(one.bytes_copied, rep.results[i].bytes_copied);
    eph_sim_result_free(&one);
  }
  assert_true(rep.results[0].scavenges > rep.results[1].scavenges);
  eph_sim_report_free(&rep);
  uint64_t granules[2] = {8, 64 * 1024};
  eph_sim_granularity_report g;
  assert_int_equal(eph_sim_granularity_all(in, cfgs, n, granules, 2, &g, &err), EPH_OK);
  assert_int_equal(g.n, 2);
  double e[2 * 2 * EPH_SIM_NSYNC];
  assert_int_equal(eph_sim_granularity_table(in, &cfgs[1], granules, 2, e, &err), EPH_OK);
  assert_memory_equal(e, g.errors + 2 * EPH_SIM_NSYNC * 2, sizeof e);
  eph_sim_granularity_report_free(&g);
  eph_sim_input_free(in);
  free(t);
}

static void test_model_resolve(void **state) {
  (void)state;
  eph_sim_costmodel cm, def;
  eph_sim_costmodel_default(&def);
  eph_error err;
  assert_int_equal(eph_sim_costmodel_resolve("/nonexistent/costmodel", &cm, &err), EPH_ERR_IO);
  setenv("XDG_CONFIG_HOME", "/nonexistent", 1); /* no default file: the built-in model */
  memset(&cm, 0, sizeof cm);
  assert_int_equal(eph_sim_costmodel_resolve(NULL, &cm, &err), EPH_OK);
  assert_float_equal(cm.per_scavenge, def.per_scavenge, 0);
  assert_int_equal(cm.samples, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nepotism),
      cmocka_unit_test(test_tenure_and_overflow),
      cmocka_unit_test(test_root_order),
      cmocka_unit_test(test_full_gc_trigger),
      cmocka_unit_test(test_granularity),
      cmocka_unit_test(test_every_parameter_has_a_role),
      cmocka_unit_test(test_stress_refused),
      cmocka_unit_test(test_fit_recovers_coefficients),
      cmocka_unit_test(test_model_file),
      cmocka_unit_test(test_plan_configs),
      cmocka_unit_test(test_report),
      cmocka_unit_test(test_model_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
