/* The scavenger: survival, moving, ageing, tenuring, reclaiming, overflow. */
#include "heap_test.h"

static eph_class_id P, B;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return h;
}

static void test_rooted_object_survives_moves_and_ages(void **state) {
  (void)state;
  eph_heap *h = make("tenure=3");
  EPH_FRAME(h);
  EPH_LOCAL(h, obj);
  EPH_LOCAL(h, child);
  obj = eph_alloc(h, P, 4);
  child = eph_alloc_bytes(h, B, 11);
  memcpy(eph_bytes(child), "hello world", 11);
  eph_store(h, obj, 0, eph_int(42));
  eph_store(h, obj, 1, EPH_TRUE);
  eph_store(h, obj, 2, child);
  eph_store(h, obj, 3, obj); /* self reference */
  child = EPH_NIL;            /* reachable only through obj */

  for (unsigned n = 1; n <= 2; n++) {
    eph_value before = obj;
    assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
    assert_int_not_equal(obj, before);  /* it moved */
    assert_true(eph_is_young(h, obj));  /* into a survivor space */
    assert_int_equal(eph_age_of(obj), n);
    assert_int_equal(eph_class_of(obj), P);
    assert_int_equal(eph_slot_count(obj), 4);
    assert_true(eph_int_value(eph_slot(obj, 0)) == 42);
    assert_int_equal(eph_slot(obj, 1), EPH_TRUE);
    eph_value c = eph_slot(obj, 2);
    assert_true(eph_is_young(h, c));
    assert_int_equal(eph_age_of(c), n);
    assert_int_equal(eph_size_bytes(c), 11);
    assert_memory_equal(eph_bytes(c), "hello world", 11);
    assert_int_equal(eph_slot(obj, 3), obj); /* the self reference was updated */
    assert_verifies(h);
  }
  /* The third scavenge reaches tenure=3: both are promoted. */
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_false(eph_is_young(h, obj));
  assert_false(eph_is_young(h, eph_slot(obj, 2)));
  assert_true(eph_int_value(eph_slot(obj, 0)) == 42);
  assert_memory_equal(eph_bytes(eph_slot(obj, 2)), "hello world", 11);
  assert_int_equal(eph_slot(obj, 3), obj);

  /* Old objects stay put during later scavenges. */
  eph_value tenured = obj;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(obj, tenured);
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.scavenges, 4);
  assert_int_equal(s.old_used, eph_object_bytes(obj) + eph_object_bytes(eph_slot(obj, 2)));
  assert_true(s.bytes_promoted >= s.old_used);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_tenure_age_parameter(void **state) {
  (void)state;
  for (unsigned tenure = 1; tenure <= 6; tenure++) {
    char spec[32];
    snprintf(spec, sizeof spec, "tenure=%u", tenure);
    eph_heap *h = make(spec);
    EPH_FRAME(h);
    EPH_LOCAL(h, obj);
    obj = eph_alloc(h, P, 1);
    eph_store(h, obj, 0, eph_int(7));
    for (unsigned n = 1; n < tenure; n++) {
      eph_collect(h, EPH_GC_SCAVENGE);
      if (!eph_is_young(h, obj)) fail_msg("tenure=%u: tenured after only %u scavenges", tenure, n);
    }
    eph_collect(h, EPH_GC_SCAVENGE);
    if (eph_is_young(h, obj)) fail_msg("tenure=%u: still young after %u scavenges", tenure, tenure);
    assert_true(eph_int_value(eph_slot(obj, 0)) == 7);
    EPH_UNFRAME(h);
    eph_heap_free(h);
  }
}

static void test_unrooted_objects_are_reclaimed(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, keep);
  keep = eph_alloc(h, P, 2);
  for (int i = 0; i < 10000; i++) {
    eph_value g = eph_alloc(h, P, 5);
    eph_store(h, g, 0, eph_int(i));
  }
  eph_heap_stats before = stats_of(h);
  assert_int_equal(before.scavenges, 0);
  assert_int_equal(before.used, eph_object_bytes(keep) + 10000 * 48);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  eph_heap_stats after = stats_of(h);
  assert_int_equal(after.used, eph_object_bytes(keep));
  assert_int_equal(after.bytes_reclaimed - before.bytes_reclaimed, 10000 * 48);
  assert_int_equal(after.bytes_copied - before.bytes_copied, eph_object_bytes(keep));

  size_t n = 0;
  const eph_gc_event *ev = eph_heap_events(h, &n);
  assert_int_equal(n, 1);
  assert_int_equal(ev[0].kind, EPH_GC_SCAVENGE);
  assert_int_equal(ev[0].used_before, before.used);
  assert_int_equal(ev[0].used_after, after.used);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_shared_and_cyclic_structure(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, a);
  EPH_LOCAL(h, b);
  EPH_LOCAL(h, alias);
  a = eph_alloc(h, P, 2);
  b = eph_alloc(h, P, 2);
  eph_store(h, a, 0, b);
  eph_store(h, b, 0, a);
  eph_store(h, a, 1, eph_int(1));
  eph_store(h, b, 1, eph_int(2));
  alias = a;
  for (int i = 0; i < 2; i++) {
    assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
    assert_int_equal(alias, a); /* copied once, not twice */
    assert_int_equal(eph_slot(a, 0), b);
    assert_int_equal(eph_slot(b, 0), a);
    assert_true(eph_int_value(eph_slot(a, 1)) == 1);
    assert_true(eph_int_value(eph_slot(b, 1)) == 2);
  }
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.used, eph_object_bytes(a) + eph_object_bytes(b));
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_eden_full_triggers_scavenge(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K,tenure=15");
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  /* A short live list among lots of garbage. */
  for (int i = 0; i < 200000; i++) { /* 4.8 MB through a 256K eden */
    eph_value node = eph_alloc(h, P, 2);
    assert_true(eph_is_ptr(node));
    if (i % 2000 == 0) {
      eph_store(h, node, 0, eph_int(i));
      eph_store(h, node, 1, list);
      list = node;
    }
  }
  eph_heap_stats s = stats_of(h);
  assert_true(s.scavenges >= 10);
  assert_true(s.used < MiB);
  int expect = 198000, count = 0;
  for (eph_value n = list; n != EPH_NIL; n = eph_slot(n, 1), expect -= 2000, count++)
    assert_true(eph_int_value(eph_slot(n, 0)) == expect);
  assert_int_equal(count, 100);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_survivor_overflow_tenures(void **state) {
  (void)state;
  /* eden=256K: each survivor space is about 52K; keep 120K alive. */
  eph_heap *h = make("eden=256K,tenure=15");
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  const int N = 3000; /* 3000 * 40 bytes = 120K: fits eden, not a survivor space */
  for (int i = 0; i < N; i++) {
    eph_value node = eph_alloc(h, P, 4);
    eph_store(h, node, 0, eph_int(i));
    eph_store(h, node, 1, list);
    list = node;
  }
  eph_heap_stats before = stats_of(h);
  assert_int_equal(before.scavenges, 0);
  assert_int_equal(before.old_used, 0);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  eph_heap_stats after = stats_of(h);
  assert_true(after.bytes_promoted > 0);
  assert_true(after.old_used > 0);
  assert_true(after.bytes_copied > 0);
  assert_true(after.bytes_copied <= 60 * KiB);
  assert_int_equal(after.used, (uint64_t)N * 40);
  assert_int_equal(after.bytes_copied + after.bytes_promoted, (uint64_t)N * 40);

  int young = 0, old = 0, expect = N - 1;
  for (eph_value n = list; n != EPH_NIL; n = eph_slot(n, 1), expect--) {
    assert_true(eph_int_value(eph_slot(n, 0)) == expect);
    if (eph_is_young(h, n)) young++;
    else old++;
  }
  assert_int_equal(expect, -1);
  assert_true(young > 0);
  assert_true(old > 0);
  assert_verifies(h); /* old nodes pointing at young ones are remembered */
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_old_objects_referenced_from_young(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, y);
  EPH_LOCAL(h, big);
  EPH_LOCAL(h, small_old);
  y = eph_alloc(h, P, 2);
  big = eph_alloc_bytes(h, B, MiB); /* large: old */
  assert_false(eph_is_young(h, big));
  eph_bytes(big)[12345] = 0x5A;
  small_old = eph_alloc_old(h, P, 1);
  assert_false(eph_is_young(h, small_old));
  eph_store(h, y, 0, big);
  eph_store(h, y, 1, small_old);
  eph_value big_at = big, small_at = small_old;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(big, big_at); /* old objects do not move in a scavenge */
  assert_int_equal(small_old, small_at);
  assert_int_equal(eph_slot(y, 0), big);
  assert_int_equal(eph_slot(y, 1), small_old);
  assert_int_equal(eph_bytes(eph_slot(y, 0))[12345], 0x5A);
  assert_int_equal(eph_class_of(eph_slot(y, 1)), P);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_age_saturates(void **state) {
  (void)state;
  eph_heap *h = make("tenure=15");
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  o = eph_alloc(h, P, 1);
  for (unsigned n = 1; n < 15; n++) {
    eph_collect(h, EPH_GC_SCAVENGE);
    assert_true(eph_is_young(h, o));
    assert_int_equal(eph_age_of(o), n);
  }
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_false(eph_is_young(h, o));
  assert_int_equal(eph_age_of(o), 15);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rooted_object_survives_moves_and_ages),
      cmocka_unit_test(test_tenure_age_parameter),
      cmocka_unit_test(test_unrooted_objects_are_reclaimed),
      cmocka_unit_test(test_shared_and_cyclic_structure),
      cmocka_unit_test(test_eden_full_triggers_scavenge),
      cmocka_unit_test(test_survivor_overflow_tenures),
      cmocka_unit_test(test_old_objects_referenced_from_young),
      cmocka_unit_test(test_age_saturates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
