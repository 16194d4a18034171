/*
 * Pinned ephemerons (include/ephemera/ephemeron.h): made in the pinned
 * space, never moved or reclaimed by a collection, old to the collectors,
 * ephemerons by the usual rules, and freed only when their class is
 * dropped.  Every collection runs the verifier (verify=1), which walks the
 * pinned space too.  The random churn under stress mode is in
 * test_phantom.c (test_churn_pinned).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"
#include "heap_test.h"

typedef struct fixture {
  eph_heap *h;
  eph_class_id Box, Eph, Phantom, Other;
  eph_finalizer_id fin;
  eph_value seen[16];
  size_t nseen;
} fixture;

static fixture F;

static void record(eph_heap *h, eph_value e, void *data) {
  (void)h;
  fixture *f = data;
  assert_true(f->nseen < 16);
  f->seen[f->nseen++] = e;
}

static int setup(void **state) {
  memset(&F, 0, sizeof F);
  F.h = heap_with("eden=256K,headroom=256K,shrink=1M,verify=1");
  F.Box = eph_class_register(F.h, "Box", EPH_FORMAT_POINTERS);
  F.Eph = eph_class_register(F.h, "Eph", EPH_FORMAT_EPHEMERON);
  F.Phantom = eph_class_register(F.h, "Phantom", EPH_FORMAT_EPHEMERON);
  F.Other = eph_class_register(F.h, "Other", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_phantom(F.h, F.Phantom, true), EPH_OK);
  F.fin = eph_finalizer_register(F.h, record, &F);
  *state = &F;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  eph_heap_free(F.h);
  return 0;
}

static eph_value box(intptr_t tag) {
  eph_value b = eph_alloc(F.h, F.Box, 2);
  assert_true(b != EPH_NIL);
  eph_store(F.h, b, 0, eph_int(tag));
  return b;
}

static eph_value pinned(eph_class_id cls, eph_value key, eph_value value) {
  eph_value e = eph_ephemeron_new_pinned(F.h, cls, key, value, 0, F.fin);
  assert_true(e != EPH_NIL);
  return e;
}

static void collect(eph_gc_kind kind) { assert_int_equal(eph_collect(F.h, kind), EPH_OK); }

static bool in_pinned(eph_value v) {
  uintptr_t base, top;
  eph_pinned_range(F.h, &base, &top);
  return v >= base && v < top;
}

static size_t pinned_of(eph_class_id cls) {
  uintptr_t at, top;
  eph_pinned_range(F.h, &at, &top);
  size_t n = 0;
  for (; at < top; at += eph_object_bytes(at) + eph_heap_trailer_bytes(F.h)) n += eph_class_of(at) == cls;
  return n;
}

/* Held by nothing, a pinned ephemeron stays where it was made through
 * scavenges and full GCs; its key slot follows the key, and its value,
 * reachable only through it, lives while the key does. */
static void test_pinned_stays_and_traces(void **state) {
  (void)state;
  eph_heap *h = F.h;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, old_garbage); /* old objects below the key that die: the key slides */
  old_garbage = box(0);
  for (int i = 0; i < 100; i++) eph_store(h, old_garbage, 1, box(i));
  collect(EPH_GC_FULL);
  old_garbage = EPH_NIL;
  key = box(1);
  eph_value e = pinned(F.Eph, key, box(2)); /* the value: only e holds it */
  assert_true(in_pinned(e));
  assert_false(eph_is_young(h, e));
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  assert_int_equal(s.remembered, 1); /* old, with a young key and value */
  assert_true(s.pinned_used >= eph_object_bytes(e));
  for (int round = 0; round < 6; round++) {
    collect(round % 3 == 2 ? EPH_GC_FULL : EPH_GC_SCAVENGE);
    assert_true(in_pinned(e));
    assert_int_equal(eph_ephemeron_key(e), key);
    assert_int_equal(eph_int_value(eph_slot(key, 0)), 1);
    assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e), 0)), 2);
    assert_false(eph_ephemeron_is_mourned(e));
  }
  assert_int_equal(F.nseen, 0);
  EPH_UNFRAME(h);
}

/* The key's death mourns it once, at a scavenge or a full GC; re-armed,
 * it is mourned again for the new key.  A phantom's key slot then holds a
 * tombstone. */
static void test_pinned_mourned_and_rearmed(void **state) {
  (void)state;
  eph_heap *h = F.h;
  for (int k = 0; k < 2; k++) {
    eph_gc_kind kind = k ? EPH_GC_FULL : EPH_GC_SCAVENGE;
    F.nseen = 0;
    eph_value e = pinned(F.Phantom, box(7), eph_int(70));
    collect(kind);
    eph_run_finalizers(h);
    assert_int_equal(F.nseen, 1);
    assert_int_equal(F.seen[0], e);
    assert_true(eph_is_int(eph_ephemeron_key(e)));
    assert_int_equal(eph_tombstone_class(eph_ephemeron_key(e)), F.Box);
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    key = box(8);
    assert_int_equal(eph_ephemeron_rearm(h, e, key, eph_int(80)), EPH_OK);
    collect(EPH_GC_FULL);
    collect(EPH_GC_SCAVENGE);
    eph_run_finalizers(h);
    assert_int_equal(F.nseen, 1); /* the new key lives */
    assert_int_equal(eph_ephemeron_key(e), key);
    EPH_UNFRAME(h);
    collect(EPH_GC_FULL); /* the key is old by now */
    eph_run_finalizers(h);
    assert_int_equal(F.nseen, 2);
    assert_int_equal(F.seen[1], e);
  }
}

/* A dropped class's ephemerons: until the next full GC as before; that GC
 * frees them and forgets their pending finalisers; another class's pinned
 * ephemeron above them stays, with fillers below it that no walk shows. */
static void count_object(void *data, eph_value obj) {
  (void)obj;
  (*(size_t *)data)++;
}
static void test_pinned_drop(void **state) {
  (void)state;
  eph_heap *h = F.h;
  eph_heap_set_auto_finalize(h, false);
  EPH_FRAME(h);
  EPH_LOCAL(h, live);
  EPH_LOCAL(h, other_key);
  live = box(1);
  other_key = box(2);
  uintptr_t base, top;
  eph_value a_live = pinned(F.Eph, live, EPH_NIL);
  (void)pinned(F.Eph, box(3), EPH_NIL); /* dies: pending below */
  eph_value other = pinned(F.Other, other_key, eph_int(5));
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(eph_pending_finalizers(h), 1);
  size_t before = 0; /* 3 boxes (the dead key kept for its finaliser) and 3 pinned */
  eph_heap_each_object(h, count_object, &before);
  assert_int_equal(before, 6);
  assert_int_equal(eph_pinned_drop(h, F.Eph), EPH_OK);
  collect(EPH_GC_SCAVENGE); /* as before the drop */
  assert_int_equal(eph_ephemeron_key(a_live), live);
  collect(EPH_GC_FULL);
  assert_int_equal(eph_pending_finalizers(h), 0);
  assert_int_equal(pinned_of(F.Eph), 0);
  assert_int_equal(pinned_of(F.Other), 1);
  eph_pinned_range(h, &base, &top);
  assert_int_equal(top, other + eph_object_bytes(other) + eph_heap_trailer_bytes(h));
  size_t after = 0;
  eph_heap_each_object(h, count_object, &after);
  assert_int_equal(after, 3); /* two boxes and the other class's ephemeron */
  assert_int_equal(eph_ephemeron_key(other), other_key);
  assert_int_equal(eph_heap_verify(h), EPH_OK);
  /* new pinned ephemerons go above; dropping the rest empties the space */
  eph_value again = pinned(F.Eph, live, EPH_NIL);
  assert_true(again > other);
  assert_int_equal(eph_pinned_drop(h, F.Eph), EPH_OK);
  assert_int_equal(eph_pinned_drop(h, F.Other), EPH_OK);
  collect(EPH_GC_FULL);
  eph_pinned_range(h, &base, &top);
  assert_int_equal(top, base);
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  assert_int_equal(s.pinned_used, 0);
  assert_int_equal(s.pinned_committed, 0);
  assert_int_equal(F.nseen, 0); /* no finaliser of a dropped one ran */
  assert_true(pinned(F.Eph, live, EPH_NIL) == base); /* reused from the bottom */
  EPH_UNFRAME(h);
  eph_heap_set_auto_finalize(h, true);
}

/* The pinned space counts towards the maximum heap: when it has no more
 * room, pinned allocation fails with a clear error and the heap goes on. */
static void test_pinned_exhausted(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=64K,headroom=64K,max=2M");
  eph_class_id Eph = eph_class_register(h, "Eph", EPH_FORMAT_EPHEMERON);
  eph_value e;
  size_t made = 0;
  while ((e = eph_ephemeron_new_pinned(h, Eph, eph_int(1), EPH_NIL, 0, 0)) != EPH_NIL) made++;
  assert_true(made > 1000);
  assert_int_equal(eph_heap_status(h), EPH_ERR_HEAP_EXHAUSTED);
  assert_non_null(strstr(eph_heap_error(h), "pinned space"));
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  assert_true(s.heap_committed <= 2 * 1024 * 1024);
  eph_class_id Box = eph_class_register(h, "Box", EPH_FORMAT_POINTERS);
  assert_true(eph_alloc(h, Box, 1) != EPH_NIL);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(eph_heap_verify(h), EPH_OK);
  eph_heap_free(h);
}

/* Many pinned ephemerons of one compact class, no user slot (the quick
 * path after the first), on a heap whose objects carry a tool's trailer:
 * back to back at the same stride, trailers zero, keys followed. */
static void test_pinned_compact_with_trailer(void **state) {
  (void)state;
  eph_gc_params p = params_with("eden=64K,headroom=64K,verify=1");
  p.trailer_words = 2;
  eph_heap *h = NULL;
  eph_error err;
  assert_int_equal(eph_heap_new(&p, &h, &err), EPH_OK);
  eph_class_id Box = eph_class_register(h, "Box", EPH_FORMAT_POINTERS);
  eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_compact(h, C), EPH_OK);
  EPH_FRAME(h);
  EPH_LOCAL(h, keep);
  keep = eph_alloc(h, Box, 300);
  enum { N = 300 };
  eph_value e[N];
  for (int i = 0; i < N; i++) {
    eph_value key = eph_alloc(h, Box, 1);
    eph_store(h, key, 0, eph_int(i));
    eph_store(h, keep, (size_t)i, key);
    e[i] = eph_ephemeron_new_pinned(h, C, key, eph_int(-i), 0, 0);
    assert_true(e[i] != EPH_NIL);
    assert_int_equal(eph_size_bytes(e[i]), 2 * sizeof(eph_value));
    if (i) assert_int_equal(e[i] - e[i - 1], 3 * sizeof(eph_value) + 2 * sizeof(eph_value));
    assert_int_equal(eph_slot(e[i], 2), 0); /* the trailer */
    assert_int_equal(eph_slot(e[i], 3), 0);
  }
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  for (int i = 0; i < N; i++) {
    assert_int_equal(eph_ephemeron_key(e[i]), eph_slot(keep, (size_t)i));
    assert_int_equal(eph_ephemeron_value(e[i]), eph_int(-i));
  }
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_pinned_refusals(void **state) {
  (void)state;
  eph_heap *h = F.h;
  assert_int_equal(eph_ephemeron_new_pinned(h, F.Box, EPH_NIL, EPH_NIL, 0, 0), EPH_NIL);
  assert_int_equal(eph_heap_status(h), EPH_ERR_INVALID);
  assert_int_equal(eph_pinned_drop(h, F.Box), EPH_ERR_INVALID);
  eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_compact(h, C), EPH_OK);
  assert_int_equal(eph_ephemeron_new_pinned(h, C, EPH_NIL, EPH_NIL, 0, F.fin), EPH_NIL); /* compact: the class's */
  uintptr_t base, top;
  eph_pinned_range(h, &base, &top);
  assert_int_equal(top, base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pinned_stays_and_traces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pinned_mourned_and_rearmed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pinned_drop, setup, teardown),
      cmocka_unit_test(test_pinned_exhausted),
      cmocka_unit_test(test_pinned_compact_with_trailer),
      cmocka_unit_test_setup_teardown(test_pinned_refusals, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
