/* The write barrier and the remembered set. */
#include "heap_test.h"

static eph_class_id P;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  return h;
}

static int remembered(eph_value obj) { return (*eph_header_of(obj) & EPH_HDR_REMEMBERED) != 0; }

static void test_old_to_young_keeps_young_alive(void **state) {
  (void)state;
  eph_heap *h = make("tenure=3");
  EPH_FRAME(h);
  EPH_LOCAL(h, old);
  old = eph_alloc_old(h, P, 2);
  assert_false(eph_is_young(h, old));
  assert_int_equal(stats_of(h).remembered, 0);

  {
    eph_value young = eph_alloc(h, P, 2); /* not rooted: only `old` holds it */
    assert_true(eph_is_young(h, young));
    eph_store(h, young, 0, eph_int(1234));
    eph_store(h, young, 1, EPH_FALSE);
    eph_store(h, old, 0, young);
  }
  assert_true(remembered(old));
  assert_int_equal(stats_of(h).remembered, 1);
  assert_verifies(h);

  for (unsigned n = 1; n <= 2; n++) {
    assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
    eph_value y = eph_slot(old, 0);
    assert_true(eph_is_young(h, y));
    assert_int_equal(eph_age_of(y), n);
    assert_true(eph_int_value(eph_slot(y, 0)) == 1234);
    assert_int_equal(eph_slot(y, 1), EPH_FALSE);
    assert_int_equal(stats_of(h).remembered, 1);
    assert_true(remembered(old));
    assert_verifies(h);
  }
  /* Tenured at the third: old no longer points young and leaves the set. */
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  eph_value y = eph_slot(old, 0);
  assert_false(eph_is_young(h, y));
  assert_true(eph_int_value(eph_slot(y, 0)) == 1234);
  assert_int_equal(stats_of(h).remembered, 0);
  assert_false(remembered(old));
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_unrooted_old_keeps_young_alive(void **state) {
  (void)state;
  /* The remembered set is a root for scavenges even when the old object is
   * itself unreachable (it dies only at the next full GC). */
  eph_heap *h = make(NULL);
  eph_value old = eph_alloc_old(h, P, 1);
  eph_value young = eph_alloc(h, P, 1);
  eph_store(h, young, 0, eph_int(5));
  eph_store(h, old, 0, young);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_true(eph_is_young(h, eph_slot(old, 0)));
  assert_int_not_equal(eph_slot(old, 0), young);
  assert_true(eph_int_value(eph_slot(eph_slot(old, 0), 0)) == 5);
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_many_remembered(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, table); /* old array of old holders */
  const size_t N = 300;
  table = eph_alloc_old(h, P, N);
  for (size_t i = 0; i < N; i++) {
    eph_value holder = eph_alloc_old(h, P, 1);
    eph_store(h, table, i, holder); /* old -> old: not remembered */
  }
  assert_int_equal(stats_of(h).remembered, 0);
  for (size_t i = 0; i < N; i++) {
    eph_value y = eph_alloc(h, P, 1);
    eph_store(h, y, 0, eph_int((intptr_t)i));
    eph_store(h, eph_slot(table, i), 0, y);
    eph_store(h, eph_slot(table, i), 0, y); /* storing twice remembers once */
  }
  assert_int_equal(stats_of(h).remembered, N);
  assert_false(remembered(table));
  assert_verifies(h);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(stats_of(h).remembered, N);
  for (size_t i = 0; i < N; i++) {
    eph_value y = eph_slot(eph_slot(table, i), 0);
    assert_true(eph_is_young(h, y));
    assert_true(eph_int_value(eph_slot(y, 0)) == (intptr_t)i);
  }
  assert_verifies(h);
  /* Overwriting with immediates: the entries go at the next scavenge. */
  for (size_t i = 0; i < N; i += 2) eph_store(h, eph_slot(table, i), 0, EPH_NIL);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(stats_of(h).remembered, N / 2);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_stores_that_are_not_remembered(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, old);
  EPH_LOCAL(h, old2);
  EPH_LOCAL(h, y1);
  EPH_LOCAL(h, y2);
  old = eph_alloc_old(h, P, 3);
  old2 = eph_alloc_old(h, P, 1);
  y1 = eph_alloc(h, P, 1);
  y2 = eph_alloc(h, P, 1);
  eph_store(h, old, 0, eph_int(3));
  eph_store(h, old, 1, EPH_TRUE);
  eph_store(h, old, 2, old2);
  eph_store(h, y1, 0, y2);   /* young -> young */
  eph_store(h, y2, 0, old);  /* young -> old */
  assert_int_equal(stats_of(h).remembered, 0);
  assert_false(remembered(old));
  assert_false(remembered(y1));
  assert_verifies(h);
  eph_store(h, old2, 0, y1);
  assert_int_equal(stats_of(h).remembered, 1);
  assert_true(remembered(old2));
  assert_false(remembered(old));
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_tenured_object_storing_young(void **state) {
  (void)state;
  eph_heap *h = make("tenure=1");
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  o = eph_alloc(h, P, 1);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_false(eph_is_young(h, o)); /* tenured, not pretenured */
  {
    eph_value y = eph_alloc(h, P, 1);
    eph_store(h, y, 0, eph_int(77));
    eph_store(h, o, 0, y);
  }
  assert_int_equal(stats_of(h).remembered, 1);
  /* Deep young structure hanging from the old object, with tenure=1 it is
   * promoted in one scavenge and the set empties. */
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_false(eph_is_young(h, eph_slot(o, 0)));
  assert_true(eph_int_value(eph_slot(eph_slot(o, 0), 0)) == 77);
  assert_int_equal(stats_of(h).remembered, 0);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_promoted_object_pointing_young_is_remembered(void **state) {
  (void)state;
  /* An object tenured by age that points at a younger object still in new
   * space must enter the remembered set during the scavenge. */
  eph_heap *h = make("tenure=2");
  EPH_FRAME(h);
  EPH_LOCAL(h, parent);
  parent = eph_alloc(h, P, 1);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK); /* parent age 1 */
  {
    eph_value kid = eph_alloc(h, P, 1);
    eph_store(h, kid, 0, eph_int(9));
    eph_store(h, parent, 0, kid); /* young -> young: no barrier work */
  }
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK); /* parent tenured, kid age 1 */
  assert_false(eph_is_young(h, parent));
  assert_true(eph_is_young(h, eph_slot(parent, 0)));
  assert_true(remembered(parent));
  assert_int_equal(stats_of(h).remembered, 1);
  assert_verifies(h);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_true(eph_int_value(eph_slot(eph_slot(parent, 0), 0)) == 9);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_full_gc_empties_remembered_set(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, old);
  old = eph_alloc_old(h, P, 1);
  {
    eph_value y = eph_alloc(h, P, 1);
    eph_store(h, y, 0, eph_int(31));
    eph_store(h, old, 0, y);
  }
  assert_int_equal(stats_of(h).remembered, 1);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(stats_of(h).remembered, 0);
  assert_false(remembered(old));
  assert_false(eph_is_young(h, eph_slot(old, 0)));
  assert_true(eph_int_value(eph_slot(eph_slot(old, 0), 0)) == 31);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_old_to_young_keeps_young_alive),
      cmocka_unit_test(test_unrooted_old_keeps_young_alive),
      cmocka_unit_test(test_many_remembered),
      cmocka_unit_test(test_stores_that_are_not_remembered),
      cmocka_unit_test(test_tenured_object_storing_young),
      cmocka_unit_test(test_promoted_object_pointing_young_is_remembered),
      cmocka_unit_test(test_full_gc_empties_remembered_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
