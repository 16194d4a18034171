/* Roots: the shadow-stack macros and global roots. */
#include "heap_test.h"

static eph_class_id Pair, Box;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  Pair = eph_class_register(h, "Pair", EPH_FORMAT_POINTERS);
  Box = eph_class_register(h, "Box", EPH_FORMAT_POINTERS);
  return h;
}

/* The example from heap.h. */
static eph_value make_pair(eph_heap *h, eph_value a, eph_value b) {
  EPH_FRAME(h);
  EPH_ROOT(h, a);
  EPH_ROOT(h, b);
  EPH_LOCAL(h, pair);
  pair = eph_alloc(h, Pair, 2);
  eph_store(h, pair, 0, a);
  eph_store(h, pair, 1, b);
  EPH_RETURN(h, pair);
}

static eph_value make_box(eph_heap *h, intptr_t n) {
  EPH_FRAME(h);
  EPH_LOCAL(h, box);
  box = eph_alloc(h, Box, 1);
  eph_store(h, box, 0, eph_int(n));
  EPH_RETURN(h, box);
}

/* A list (n-1 .. 0) of pairs (box, rest), built with nested frames. */
static eph_value build_list(eph_heap *h, intptr_t n) {
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  EPH_LOCAL(h, box);
  for (intptr_t i = 0; i < n; i++) {
    box = make_box(h, i);
    list = make_pair(h, box, list);
  }
  EPH_RETURN(h, list);
}

static void check_list(eph_value list, intptr_t n) {
  intptr_t expect = n - 1;
  for (eph_value p = list; p != EPH_NIL; p = eph_slot(p, 1), expect--) {
    assert_int_equal(eph_class_of(p), Pair);
    eph_value box = eph_slot(p, 0);
    assert_int_equal(eph_class_of(box), Box);
    assert_true(eph_int_value(eph_slot(box, 0)) == expect);
  }
  assert_true(expect == -1);
}

static void test_frames_keep_values_and_restore_height(void **state) {
  (void)state;
  /* Scavenge before every allocation: any unrooted value would be stale. */
  eph_heap *h = make("stress=1,verify=1");
  size_t h0 = eph_roots_height(h);
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  assert_int_equal(eph_roots_height(h), h0 + 1);
  list = build_list(h, 300);
  assert_int_equal(eph_roots_height(h), h0 + 1);
  check_list(list, 300);
  eph_heap_stats s = stats_of(h);
  assert_true(s.scavenges >= 600); /* one per allocation */
  eph_value before = list;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_not_equal(list, before); /* the root was updated */
  check_list(list, 300);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  check_list(list, 300);
  assert_verifies(h);
  EPH_UNFRAME(h);
  assert_int_equal(eph_roots_height(h), h0);
  eph_heap_free(h);
}

static void root_param_moves(eph_heap *h, eph_value obj, eph_value *seen_after) {
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  eph_value before = obj;
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_int_not_equal(obj, before);
  *seen_after = obj;
  EPH_RETURN_VOID(h);
}

static void test_root_parameter_and_return_void(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  size_t h0 = eph_roots_height(h);
  EPH_FRAME(h);
  EPH_LOCAL(h, box);
  box = make_box(h, 17);
  eph_value seen = EPH_NIL;
  root_param_moves(h, box, &seen);
  assert_int_equal(eph_roots_height(h), h0 + 1);
  assert_int_equal(seen, box); /* both roots were updated to the same copy */
  assert_true(eph_int_value(eph_slot(box, 0)) == 17);
  EPH_UNFRAME(h);
  assert_int_equal(eph_roots_height(h), h0);
  eph_heap_free(h);
}

static void test_immediates_in_roots_unchanged(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, nil);
  EPH_LOCAL(h, t);
  EPH_LOCAL(h, f);
  EPH_LOCAL(h, i);
  EPH_LOCAL(h, old);
  t = EPH_TRUE;
  f = EPH_FALSE;
  i = eph_int(-123456789);
  old = eph_alloc_old(h, Box, 1);
  eph_value old0 = old;
  eph_collect(h, EPH_GC_SCAVENGE);
  eph_collect(h, EPH_GC_FULL);
  assert_int_equal(nil, EPH_NIL);
  assert_int_equal(t, EPH_TRUE);
  assert_int_equal(f, EPH_FALSE);
  assert_true(eph_int_value(i) == -123456789);
  assert_int_equal(old, old0); /* the only old object does not move */
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_many_roots_grow_the_stack(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  enum { N = 20000 };
  eph_value *locals = calloc(N, sizeof *locals);
  size_t h0 = eph_roots_height(h);
  for (size_t i = 0; i < N; i++) {
    eph_root_push(h, &locals[i]);
    locals[i] = make_box(h, (intptr_t)i);
  }
  assert_int_equal(eph_roots_height(h), h0 + N);
  eph_value first = locals[0];
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_int_not_equal(locals[0], first);
  for (size_t i = 0; i < N; i++) assert_true(eph_int_value(eph_slot(locals[i], 0)) == (intptr_t)i);
  assert_int_equal(stats_of(h).used, (uint64_t)N * 16);
  assert_verifies(h);
  eph_roots_reset(h, h0);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_int_equal(stats_of(h).used, 0);
  free(locals);
  eph_heap_free(h);
}

static eph_value g_a, g_b, g_c;

static void test_global_roots(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  assert_int_equal(eph_global_root_add(h, &g_a), EPH_OK);
  assert_int_equal(eph_global_root_add(h, &g_b), EPH_OK);
  assert_int_equal(eph_global_root_add(h, &g_c), EPH_OK);
  eph_value *heap_slot = malloc(sizeof *heap_slot);
  *heap_slot = EPH_NIL;
  assert_int_equal(eph_global_root_add(h, heap_slot), EPH_OK);
  g_a = make_box(h, 1);
  g_b = make_box(h, 2);
  g_c = make_box(h, 3);
  *heap_slot = make_box(h, 4);
  eph_value a0 = g_a;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_not_equal(g_a, a0);
  assert_true(eph_int_value(eph_slot(g_a, 0)) == 1);
  assert_true(eph_int_value(eph_slot(g_b, 0)) == 2);
  assert_true(eph_int_value(eph_slot(g_c, 0)) == 3);
  assert_true(eph_int_value(eph_slot(*heap_slot, 0)) == 4);
  assert_int_equal(stats_of(h).used, 4 * 16);

  /* Removing one from the middle leaves the others working. */
  eph_global_root_remove(h, &g_b);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(stats_of(h).used, 3 * 16);
  assert_false(eph_is_young(h, g_a));
  assert_true(eph_int_value(eph_slot(g_a, 0)) == 1);
  assert_true(eph_int_value(eph_slot(g_c, 0)) == 3);
  assert_true(eph_int_value(eph_slot(*heap_slot, 0)) == 4);
  assert_verifies(h);

  eph_global_root_remove(h, heap_slot);
  free(heap_slot);
  eph_global_root_remove(h, &g_a);
  eph_global_root_remove(h, &g_c);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(stats_of(h).used, 0);
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_global_and_local_same_object(void **state) {
  (void)state;
  eph_heap *h = make("stress=1");
  static eph_value global;
  assert_int_equal(eph_global_root_add(h, &global), EPH_OK);
  EPH_FRAME(h);
  EPH_LOCAL(h, local);
  local = make_box(h, 5);
  global = local;
  for (int i = 0; i < 10; i++) eph_alloc(h, Box, 1); /* each scavenges */
  assert_int_equal(global, local);
  assert_true(eph_int_value(eph_slot(global, 0)) == 5);
  EPH_UNFRAME(h);
  eph_global_root_remove(h, &global);
  eph_heap_free(h);
}

/* One C variable registered several times (twice on the shadow stack and as
 * a global) must still end up at its object's new address. */
static void test_same_variable_rooted_twice(void **state) {
  (void)state;
  eph_heap *h = make("ratio=100");
  EPH_FRAME(h);
  for (int i = 0; i < 100; i++) eph_alloc_old(h, Box, (size_t)i % 7); /* garbage below */
  EPH_LOCAL(h, x);
  EPH_LOCAL(h, y);
  x = eph_alloc_old(h, Box, 1);
  eph_store(h, x, 0, eph_int(9));
  y = make_box(h, 10); /* young */
  EPH_ROOT(h, x);
  EPH_ROOT(h, y);
  assert_int_equal(eph_global_root_add(h, &x), EPH_OK);
  assert_int_equal(eph_global_root_add(h, &y), EPH_OK);
  eph_value x0 = x, y0 = y;
  for (int round = 0; round < 3; round++) {
    assert_int_equal(eph_collect(h, round == 1 ? EPH_GC_SCAVENGE : EPH_GC_FULL), EPH_OK);
    assert_int_equal(eph_class_of(x), Box);
    assert_true(eph_int_value(eph_slot(x, 0)) == 9);
    assert_int_equal(eph_class_of(y), Box);
    assert_true(eph_int_value(eph_slot(y, 0)) == 10);
    assert_int_equal(stats_of(h).used, 2 * 16);
    assert_verifies(h);
  }
  assert_true(x < x0); /* it did move */
  assert_int_not_equal(y, y0);
  eph_global_root_remove(h, &x);
  eph_global_root_remove(h, &y);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frames_keep_values_and_restore_height),
      cmocka_unit_test(test_root_parameter_and_return_void),
      cmocka_unit_test(test_immediates_in_roots_unchanged),
      cmocka_unit_test(test_many_roots_grow_the_stack),
      cmocka_unit_test(test_global_roots),
      cmocka_unit_test(test_global_and_local_same_object),
      cmocka_unit_test(test_same_variable_rooted_twice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
