/*
 * Ephemeron rules (include/ephemera/ephemeron.h), one test per rule or
 * case, each in a scavenge and in a full GC where both apply.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"

typedef struct fixture {
  eph_heap *h;
  eph_class_id Box, Eph;
  eph_finalizer_id fin;
  /* what the finaliser saw, in order */
  eph_value seen[64];
  intptr_t seen_key_tag[64];
  size_t nseen;
  eph_value resurrected; /* a global root a finaliser may store into */
} fixture;

static fixture F;

static void record(eph_heap *h, eph_value e, void *data) {
  fixture *f = data;
  assert_true(eph_ephemeron_is_mourned(e));
  assert_true(f->nseen < 64);
  f->seen[f->nseen] = e;
  eph_value key = eph_ephemeron_key(e);
  /* the key is alive and intact while the finaliser runs */
  f->seen_key_tag[f->nseen] = eph_is_ptr(key) ? eph_int_value(eph_slot(key, 0)) : -1;
  f->nseen++;
  assert_int_equal(eph_heap_verify(h), EPH_OK);
}

static int setup(void **state) {
  eph_gc_params p;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "eden=256K,headroom=256K,shrink=1M,verify=1", NULL), EPH_OK);
  memset(&F, 0, sizeof F);
  assert_int_equal(eph_heap_new(&p, &F.h, NULL), EPH_OK);
  F.Box = eph_class_register(F.h, "Box", EPH_FORMAT_POINTERS);
  F.Eph = eph_class_register(F.h, "Eph", EPH_FORMAT_EPHEMERON);
  F.fin = eph_finalizer_register(F.h, record, &F);
  assert_true(F.fin >= 1);
  assert_int_equal(eph_global_root_add(F.h, &F.resurrected), EPH_OK);
  *state = &F;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  eph_heap_free(F.h);
  return 0;
}

/* A Box with slot 0 = tag, slot 1 = link. */
static eph_value box(intptr_t tag, eph_value link) {
  eph_heap *h = F.h;
  EPH_FRAME(h);
  EPH_ROOT(h, link);
  EPH_LOCAL(h, b);
  b = eph_alloc(h, F.Box, 2);
  assert_true(b != EPH_NIL);
  eph_store(h, b, 0, eph_int(tag));
  eph_store(h, b, 1, link);
  EPH_RETURN(h, b);
}

static eph_value ephemeron(eph_value key, eph_value value, bool old) {
  eph_value e = eph_ephemeron_new(F.h, F.Eph, key, value, 1, F.fin, old);
  assert_true(e != EPH_NIL);
  return e;
}

static void collect(eph_gc_kind kind) { assert_int_equal(eph_collect(F.h, kind), EPH_OK); }

static const eph_gc_kind KINDS[] = {EPH_GC_SCAVENGE, EPH_GC_FULL};

/* Rule 2 + safe point: a dropped key mourns its ephemeron; the finaliser
 * runs once, after the collection, and sees key and value alive. */
static void test_dropped_key_is_mourned_once(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = box(7, EPH_NIL);
    e = ephemeron(key, box(8, EPH_NIL), false);
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 0); /* key still reachable */
    key = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 1);
    assert_true(F.seen[0] == e);
    assert_int_equal(F.seen_key_tag[0], 7);
    assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e), 0)), 8);
    collect(EPH_GC_FULL);
    collect(EPH_GC_SCAVENGE);
    assert_int_equal(F.nseen, 1); /* never twice */
    assert_int_equal(eph_pending_finalizers(h), 0);
    EPH_UNFRAME(h);
  }
}

/* Rule 1: a reachable key keeps the value alive, across both kinds of GC. */
static void test_live_key_keeps_value(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(1, EPH_NIL);
  e = ephemeron(key, box(2, EPH_NIL), false);
  for (int i = 0; i < 6; i++) collect(KINDS[i % 2]);
  assert_int_equal(F.nseen, 0);
  assert_true(eph_ephemeron_key(e) == key);
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e), 0)), 2);
  EPH_UNFRAME(h);
}

/* A young key held by a pretenured ephemeron: the barrier remembers it, the
 * scavenger keeps the key while it lives and mourns when it dies. */
static void test_pretenured_ephemeron_young_key(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(5, EPH_NIL);
  e = ephemeron(key, EPH_NIL, true);
  assert_false(eph_is_young(h, e));
  assert_true(eph_is_young(h, key));
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  assert_true(s.remembered >= 1);
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 0);
  assert_true(eph_ephemeron_key(e) == key);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 1);
  assert_int_equal(F.seen_key_tag[0], 5);
  EPH_UNFRAME(h);
}

/* Pretenured ephemerons take a quick bump in old space when nothing else
 * is due (ephemeron.c): they must still count as allocations, reach the
 * observer at their sample points, and trip the full-GC trigger. */
static size_t allocs_seen;
static void count_alloc(void *data, eph_heap *h, eph_value obj) {
  (void)data;
  (void)h;
  if (eph_format_of(obj) == EPH_FORMAT_EPHEMERON) allocs_seen++;
}

static void test_pretenured_counts_like_any_allocation(void **state) {
  (void)state;
  eph_heap *h = F.h;
  eph_observer obs = {.on_alloc = count_alloc};
  eph_heap_set_observer(h, &obs);
  eph_heap_sample_next(h, 3, 0); /* every third allocation is a sample point */
  allocs_seen = 0;
  eph_heap_stats before, after;
  eph_heap_stats_get(h, &before);
  for (int i = 0; i < 9; i++) ephemeron(eph_int(i), EPH_NIL, true);
  eph_heap_stats_get(h, &after);
  assert_int_equal(allocs_seen, 3);
  assert_int_equal(after.objects_allocated - before.objects_allocated, 9);
  assert_int_equal(after.bytes_allocated_old - before.bytes_allocated_old, 9 * eph_object_bytes(ephemeron(eph_int(9), EPH_NIL, true)));
  eph_heap_set_observer(h, NULL);

  /* 40 000 dropped ephemerons (1.6 MB) grow old space well past the
   * trigger (headroom 256K, ratio 0.33): full GCs must come. */
  for (int i = 0; i < 40000; i++) ephemeron(eph_int(i), EPH_NIL, true);
  eph_heap_stats_get(h, &after);
  assert_true(after.full_gcs >= before.full_gcs + 3);
  assert_true(after.used < 1024 * 1024);
}

/* Chains: E1 = (A -> B), E2 = (B -> C).  Dropping A mourns both in the
 * same collection (B is reached only through E1's value). */
static void test_chain_mourned_together(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, a);
    EPH_LOCAL(h, b);
    EPH_LOCAL(h, e1);
    EPH_LOCAL(h, e2);
    a = box(10, EPH_NIL);
    b = box(11, EPH_NIL);
    e1 = ephemeron(a, b, false);
    e2 = ephemeron(b, box(12, EPH_NIL), false);
    b = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 0);
    a = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 2);
    assert_true(eph_ephemeron_is_mourned(e1) && eph_ephemeron_is_mourned(e2));
    EPH_UNFRAME(h);
  }
}

/* Key<->value cycle: the value refers back to the key; that must not keep
 * the key alive. */
static void test_key_value_cycle(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = box(20, EPH_NIL);
    e = ephemeron(key, box(21, key), false);
    key = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 1);
    assert_int_equal(F.seen_key_tag[0], 20);
    eph_value v = eph_ephemeron_value(e);
    assert_true(eph_slot(v, 1) == eph_ephemeron_key(e));
    EPH_UNFRAME(h);
  }
}

/* Many ephemerons on one key are all mourned together. */
static void test_many_on_one_key(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, list);
    key = box(30, EPH_NIL);
    for (int i = 0; i < 10; i++) {
      eph_value e = ephemeron(key, eph_int(i), i % 2 == 0);
      list = box(i, list);
      eph_store(h, list, 0, e); /* keep the ephemerons reachable */
    }
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 0);
    key = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 10);
    for (size_t i = 0; i < F.nseen; i++) assert_int_equal(F.seen_key_tag[i], 30);
    EPH_UNFRAME(h);
  }
}

/* Rule 4: an unreachable ephemeron is reclaimed without a finaliser —
 * young ones by either collection, old ones by a full GC. */
static void test_unreachable_ephemeron_is_silent(void **state) {
  (void)state;
  const struct { bool old; eph_gc_kind kind; } cases[] = {
      {false, EPH_GC_SCAVENGE}, {false, EPH_GC_FULL}, {true, EPH_GC_FULL}};
  for (size_t k = 0; k < 3; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    key = box(40, EPH_NIL);
    ephemeron(key, EPH_NIL, cases[k].old);
    key = EPH_NIL;
    collect(cases[k].kind);
    collect(EPH_GC_FULL);
    assert_int_equal(F.nseen, 0);
    EPH_UNFRAME(h);
  }
}

/* Rule 4's caveat: a scavenge counts old space as reachable, so a dead old
 * ephemeron whose young key dies is mourned (tenured garbage). */
static void test_dead_old_ephemeron_mourned_by_scavenge(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  key = box(41, EPH_NIL);
  ephemeron(key, EPH_NIL, true);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 1);
  assert_int_equal(F.seen_key_tag[0], 41);
  EPH_UNFRAME(h);
}

/* Rule 5: immediate keys never die; their values are strong. */
static void test_immediate_key(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  e = ephemeron(eph_int(99), box(50, EPH_NIL), false);
  collect(EPH_GC_SCAVENGE);
  collect(EPH_GC_FULL);
  assert_int_equal(F.nseen, 0);
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e), 0)), 50);
  EPH_UNFRAME(h);
}

/* An ephemeron reached only through a mourned ephemeron's value, with a
 * dead key of its own, is mourned in the same collection. */
static void test_ephemeron_inside_mourned_value(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, outer);
    EPH_LOCAL(h, inner);
    EPH_LOCAL(h, key1);
    key1 = box(60, EPH_NIL);
    inner = ephemeron(box(61, EPH_NIL), EPH_NIL, false);
    outer = ephemeron(key1, inner, false);
    inner = key1 = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 2);
    EPH_UNFRAME(h);
  }
}

static void resurrect(eph_heap *h, eph_value e, void *data) {
  fixture *f = data;
  record(h, e, data);
  /* allocate, store, collect and resurrect the key from a finaliser */
  eph_value b = box(77, eph_ephemeron_key(e));
  f->resurrected = b;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
}

/* Finalisers may allocate, store, collect and resurrect. */
static void test_finaliser_resurrects(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  eph_finalizer_id fin = eph_finalizer_register(h, resurrect, &F);
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(70, EPH_NIL);
  e = eph_ephemeron_new(h, F.Eph, key, EPH_NIL, 0, fin, false);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 1);
  for (int i = 0; i < 4; i++) collect(KINDS[i % 2]);
  assert_int_equal(F.nseen, 1);
  eph_value saved = eph_slot(F.resurrected, 1);
  assert_int_equal(eph_int_value(eph_slot(saved, 0)), 70);
  assert_true(saved == eph_ephemeron_key(e));
  F.resurrected = EPH_NIL;
  EPH_UNFRAME(h);
}

/* Class finalisers apply when the ephemeron's own id is 0. */
static void test_class_finaliser(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  eph_class_id Cls = eph_class_register(h, "ClassFinalized", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_finalizer(h, Cls, F.fin), EPH_OK);
  assert_int_equal(eph_class_set_finalizer(h, F.Box, F.fin), EPH_ERR_INVALID);
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(80, EPH_NIL);
  e = eph_ephemeron_new(h, Cls, key, EPH_NIL, 0, 0, false);
  key = EPH_NIL;
  collect(EPH_GC_FULL);
  assert_int_equal(F.nseen, 1);
  assert_true(F.seen[0] == e);
  EPH_UNFRAME(h);
}

static size_t exit_runs;
static void count_exit(eph_heap *h, eph_value e, void *data) {
  (void)h;
  (void)e;
  (void)data;
  exit_runs++;
}

/* Builds 5 reachable ephemerons on dead keys and 3 on live keys (kept by
 * the global root), with automatic finalisation off, then frees the heap in
 * the given exit mode; returns how many finalisers ran in all. */
static size_t run_exit_scenario(eph_exit_finalize mode, size_t *ran_before_free) {
  eph_heap *h;
  eph_gc_params p;
  eph_gc_params_init(&p);
  p.eden_bytes = 64 * 1024;
  assert_int_equal(eph_heap_new(&p, &h, NULL), EPH_OK);
  eph_class_id E = eph_class_register(h, "E", EPH_FORMAT_EPHEMERON);
  eph_class_id B = eph_class_register(h, "B", EPH_FORMAT_POINTERS);
  eph_finalizer_id fin = eph_finalizer_register(h, count_exit, NULL);
  eph_heap_set_auto_finalize(h, false);
  eph_heap_set_exit_finalize(h, mode);
  static eph_value keep;
  keep = EPH_NIL;
  assert_int_equal(eph_global_root_add(h, &keep), EPH_OK);
  for (int i = 0; i < 8; i++) {
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = eph_alloc(h, B, 2);
    e = eph_ephemeron_new(h, E, key, EPH_NIL, 0, fin, false);
    eph_value cell = eph_alloc(h, B, 2);
    eph_store(h, cell, 0, e);
    eph_store(h, cell, 1, i < 3 ? key : EPH_NIL); /* the first 3 keep their keys */
    eph_value link = eph_alloc(h, B, 2);
    EPH_LOCAL(h, c);
    c = cell;
    eph_store(h, link, 0, c);
    eph_store(h, link, 1, keep);
    keep = link;
    EPH_UNFRAME(h);
  }
  exit_runs = 0;
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  *ran_before_free = exit_runs;
  assert_int_equal(eph_pending_finalizers(h), 5);
  eph_heap_free(h);
  return exit_runs;
}

/* Pending finalisers at destruction run only if the embedder asks; with
 * EPH_EXIT_RUN_ALL live ephemerons are finalised too. */
static void test_exit_finalize(void **state) {
  (void)state;
  size_t before;
  assert_int_equal(run_exit_scenario(EPH_EXIT_DROP_PENDING, &before), 0);
  assert_int_equal(before, 0);
  assert_int_equal(run_exit_scenario(EPH_EXIT_RUN_PENDING, &before), 5);
  assert_int_equal(before, 0);
  assert_int_equal(run_exit_scenario(EPH_EXIT_RUN_ALL, &before), 8);
}

/* eph_run_finalizers on demand, with automatic finalisation off. */
static void test_on_demand(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  eph_heap_set_auto_finalize(h, false);
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(95, EPH_NIL);
  e = ephemeron(key, EPH_NIL, false);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 0);
  assert_int_equal(eph_pending_finalizers(h), 1);
  collect(EPH_GC_FULL); /* pending ones stay alive and are not mourned again */
  assert_int_equal(eph_pending_finalizers(h), 1);
  assert_int_equal(eph_run_finalizers(h), 1);
  assert_int_equal(F.nseen, 1);
  assert_true(F.seen[0] == e);
  assert_int_equal(F.seen_key_tag[0], 95);
  assert_int_equal(eph_pending_finalizers(h), 0);
  eph_heap_set_auto_finalize(h, true);
  EPH_UNFRAME(h);
}

/* Statistics count what happened. */
static void test_statistics(void **state) {
  (void)state;
  eph_heap *h = F.h;
  eph_heap_stats before, after;
  eph_heap_stats_get(h, &before);
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(90, EPH_NIL);
  e = ephemeron(key, EPH_NIL, false);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  eph_heap_stats_get(h, &after);
  assert_int_equal(after.ephemerons_mourned - before.ephemerons_mourned, 1);
  assert_int_equal(after.finalizers_run - before.finalizers_run, 1);
  assert_true(after.ephemerons_traced > before.ephemerons_traced);
  EPH_UNFRAME(h);
}

/* Many ephemerons under stress: every collection at every allocation. */
static void test_stress_mode(void **state) {
  (void)state;
  eph_heap *h;
  eph_gc_params p;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "eden=16K,headroom=16K,stress=1,stress_full=13,verify=1", NULL), EPH_OK);
  assert_int_equal(eph_heap_new(&p, &h, NULL), EPH_OK);
  eph_class_id E = eph_class_register(h, "E", EPH_FORMAT_EPHEMERON);
  eph_class_id B = eph_class_register(h, "B", EPH_FORMAT_POINTERS);
  exit_runs = 0;
  eph_finalizer_id fin = eph_finalizer_register(h, count_exit, NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, keys);
  EPH_LOCAL(h, ephs);
  keys = eph_alloc(h, B, 100);
  ephs = eph_alloc(h, B, 100);
  for (int i = 0; i < 100; i++) {
    size_t height = eph_roots_height(h); /* a frame per iteration */
    EPH_LOCAL(h, k);
    k = eph_alloc(h, B, 1);
    eph_store(h, keys, (size_t)i, k);
    eph_value e = eph_ephemeron_new(h, E, k, eph_int(i), 0, fin, i % 3 == 0);
    eph_store(h, ephs, (size_t)i, e);
    eph_roots_reset(h, height);
  }
  for (int i = 0; i < 100; i += 2) eph_store(h, keys, (size_t)i, EPH_NIL);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(exit_runs, 50);
  for (int i = 0; i < 100; i++) {
    eph_value e = eph_slot(ephs, (size_t)i);
    assert_int_equal(eph_ephemeron_is_mourned(e), i % 2 == 0);
    assert_int_equal(eph_int_value(eph_ephemeron_value(e)), i);
  }
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dropped_key_is_mourned_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_key_keeps_value, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pretenured_ephemeron_young_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pretenured_counts_like_any_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_chain_mourned_together, setup, teardown),
      cmocka_unit_test_setup_teardown(test_key_value_cycle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_many_on_one_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreachable_ephemeron_is_silent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dead_old_ephemeron_mourned_by_scavenge, setup, teardown),
      cmocka_unit_test_setup_teardown(test_immediate_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ephemeron_inside_mourned_value, setup, teardown),
      cmocka_unit_test_setup_teardown(test_finaliser_resurrects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_class_finaliser, setup, teardown),
      cmocka_unit_test(test_exit_finalize),
      cmocka_unit_test_setup_teardown(test_on_demand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_statistics, setup, teardown),
      cmocka_unit_test(test_stress_mode),
  };
  return cmocka_run_group_tests_name("ephemeron", tests, NULL, NULL);
}
