/* Allocation: zeroed objects, header fields, byte objects, large and old objects. */
#include "heap_test.h"

typedef struct fixture {
  eph_heap *h;
  eph_class_id P, B;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->h = heap_with(NULL);
  f->P = eph_class_register(f->h, "Ptrs", EPH_FORMAT_POINTERS);
  f->B = eph_class_register(f->h, "Bytes", EPH_FORMAT_BYTES);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  eph_heap_free(f->h);
  free(f);
  return 0;
}

static void test_pointer_object_header_and_nil_slots(void **state) {
  fixture *f = *state;
  for (size_t n = 0; n < 40; n++) {
    eph_value o = eph_alloc(f->h, f->P, n);
    assert_true(eph_is_ptr(o));
    assert_true(eph_is_young(f->h, o));
    assert_int_equal(eph_class_of(o), f->P);
    assert_int_equal(eph_format_of(o), EPH_FORMAT_POINTERS);
    assert_int_equal(eph_size_bytes(o), n * sizeof(eph_value));
    assert_int_equal(eph_slot_count(o), n);
    assert_int_equal(eph_age_of(o), 0);
    assert_int_equal(*eph_header_of(o) & (EPH_HDR_FORWARDED | EPH_HDR_REMEMBERED), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(eph_slot(o, i), EPH_NIL);
  }
  assert_verifies(f->h);
}

/* Memory reused after a scavenge must come back zeroed, not just fresh pages. */
static void test_reused_memory_is_zeroed(void **state) {
  fixture *f = *state;
  eph_value first = eph_alloc(f->h, f->P, 100);
  for (size_t i = 0; i < 100; i++) eph_store(f->h, first, i, eph_int((intptr_t)i + 1000));
  eph_value bytes = eph_alloc_bytes(f->h, f->B, 333);
  memset(eph_bytes(bytes), 0xFF, 333);
  assert_int_equal(eph_collect(f->h, EPH_GC_SCAVENGE), EPH_OK); /* both are garbage */

  int overlapped = 0;
  for (int round = 0; round < 4; round++) {
    eph_value o = eph_alloc(f->h, f->P, 100);
    eph_value b = eph_alloc_bytes(f->h, f->B, 333);
    if (o == first || b == bytes) overlapped = 1;
    for (size_t i = 0; i < 100; i++) assert_int_equal(eph_slot(o, i), EPH_NIL);
    for (size_t i = 0; i < 333; i++) assert_int_equal(eph_bytes(b)[i], 0);
  }
  /* Bump allocation restarts at the bottom of eden, so the dirty memory was reused. */
  assert_true(overlapped);
}

static void test_byte_objects_odd_sizes(void **state) {
  fixture *f = *state;
  static const size_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 9, 13, 15, 16, 17, 255, 1000, 4097};
  enum { N = sizeof sizes / sizeof sizes[0] };
  eph_value objs[N];
  for (size_t k = 0; k < N; k++) {
    objs[k] = eph_alloc_bytes(f->h, f->B, sizes[k]);
    eph_value o = objs[k];
    assert_true(eph_is_ptr(o));
    assert_true(eph_is_young(f->h, o));
    assert_int_equal(eph_class_of(o), f->B);
    assert_int_equal(eph_format_of(o), EPH_FORMAT_BYTES);
    assert_int_equal(eph_size_bytes(o), sizes[k]);
    assert_int_equal(eph_slot_count(o), 0);
    assert_int_equal(eph_age_of(o), 0);
    assert_int_equal(eph_object_bytes(o), 8 + (sizes[k] + 7) / 8 * 8);
    for (size_t i = 0; i < sizes[k]; i++) assert_int_equal(eph_bytes(o)[i], 0);
    memset(eph_bytes(o), (int)(0x40 + k), sizes[k]);
  }
  /* No object overlaps another: every payload still holds its own fill. */
  for (size_t k = 0; k < N; k++) {
    for (size_t i = 0; i < sizes[k]; i++) assert_int_equal(eph_bytes(objs[k])[i], 0x40 + k);
    assert_int_equal(eph_size_bytes(objs[k]), sizes[k]);
    if (k > 0) assert_true(objs[k] >= objs[k - 1] + eph_object_bytes(objs[k - 1]));
  }
  assert_verifies(f->h);
}

static void test_large_objects_go_old(void **state) {
  fixture *f = *state;
  /* Default eden (15 MiB): small objects young, payloads from 256 KiB on old. */
  eph_value small = eph_alloc_bytes(f->h, f->B, 1000);
  assert_true(eph_is_young(f->h, small));

  eph_value big_bytes = eph_alloc_bytes(f->h, f->B, 256 * KiB + 3);
  assert_true(eph_is_ptr(big_bytes));
  assert_false(eph_is_young(f->h, big_bytes));
  assert_int_equal(eph_size_bytes(big_bytes), 256 * KiB + 3);
  assert_int_equal(eph_format_of(big_bytes), EPH_FORMAT_BYTES);
  for (size_t i = 0; i < 256 * KiB + 3; i += 511) assert_int_equal(eph_bytes(big_bytes)[i], 0);

  size_t nslots = 4 * MiB / sizeof(eph_value);
  eph_value big_ptrs = eph_alloc(f->h, f->P, nslots);
  assert_true(eph_is_ptr(big_ptrs));
  assert_false(eph_is_young(f->h, big_ptrs));
  assert_int_equal(eph_slot_count(big_ptrs), nslots);
  assert_int_equal(eph_class_of(big_ptrs), f->P);
  for (size_t i = 0; i < nslots; i += 97) assert_int_equal(eph_slot(big_ptrs, i), EPH_NIL);
  assert_int_equal(eph_slot(big_ptrs, nslots - 1), EPH_NIL);

  eph_heap_stats s = stats_of(f->h);
  assert_true(s.old_used >= eph_object_bytes(big_bytes) + eph_object_bytes(big_ptrs));
  assert_true(s.bytes_allocated_old >= eph_object_bytes(big_bytes) + eph_object_bytes(big_ptrs));
  assert_verifies(f->h);
}

static void test_alloc_old(void **state) {
  fixture *f = *state;
  eph_value a = eph_alloc_old(f->h, f->P, 3);
  eph_value b = eph_alloc_bytes_old(f->h, f->B, 11);
  eph_value c = eph_alloc(f->h, f->P, 3);
  eph_value z = eph_alloc_old(f->h, f->P, 0);
  assert_true(eph_is_ptr(a) && eph_is_ptr(b) && eph_is_ptr(z));
  assert_false(eph_is_young(f->h, a));
  assert_false(eph_is_young(f->h, b));
  assert_false(eph_is_young(f->h, z));
  assert_true(eph_is_young(f->h, c));
  assert_int_equal(eph_slot_count(a), 3);
  assert_int_equal(eph_class_of(a), f->P);
  assert_int_equal(eph_age_of(a), 0);
  assert_int_equal(eph_size_bytes(b), 11);
  assert_int_equal(eph_format_of(b), EPH_FORMAT_BYTES);
  for (size_t i = 0; i < 3; i++) assert_int_equal(eph_slot(a, i), EPH_NIL);
  for (size_t i = 0; i < 11; i++) assert_int_equal(eph_bytes(b)[i], 0);
  assert_int_equal(eph_slot_count(z), 0);
  assert_verifies(f->h);
}

static void test_allocated_counter(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, y);
  EPH_LOCAL(h, b);
  EPH_LOCAL(h, o);
  EPH_LOCAL(h, l);
  uint64_t a0 = eph_heap_allocated(h);
  eph_heap_stats s0 = stats_of(h);
  assert_int_equal(s0.bytes_allocated, a0);

  y = eph_alloc(h, f->P, 3);
  uint64_t a1 = eph_heap_allocated(h);
  assert_int_equal(a1 - a0, eph_object_bytes(y));

  b = eph_alloc_bytes(h, f->B, 13);
  uint64_t a2 = eph_heap_allocated(h);
  assert_int_equal(a2 - a1, eph_object_bytes(b));

  o = eph_alloc_old(h, f->P, 5);
  uint64_t a3 = eph_heap_allocated(h);
  assert_int_equal(a3 - a2, eph_object_bytes(o));

  l = eph_alloc_bytes(h, f->B, MiB);
  uint64_t a4 = eph_heap_allocated(h);
  assert_int_equal(a4 - a3, eph_object_bytes(l));

  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.bytes_allocated, a4);
  assert_int_equal(s.bytes_allocated_old - s0.bytes_allocated_old, eph_object_bytes(o) + eph_object_bytes(l));
  /* All four are rooted, so this holds even if a collection ran meanwhile. */
  assert_int_equal(s.used - s0.used, a4 - a0);
  assert_true(s.old_used - s0.old_used >= eph_object_bytes(o) + eph_object_bytes(l));

  /* The clock keeps running across collections, used does not. */
  EPH_UNFRAME(h);
  for (int i = 0; i < 1000; i++) eph_alloc(h, f->P, 7);
  assert_int_equal(eph_heap_allocated(h) - a4, 1000 * 64);
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(eph_heap_allocated(h) - a4, 1000 * 64);
  s = stats_of(h);
  assert_int_equal(s.used, s.old_used); /* nothing young is rooted */
}

static void test_many_allocations_fill_eden(void **state) {
  fixture *f = *state;
  /* Allocating several times eden's size of garbage scavenges and keeps working. */
  size_t total = 0;
  while (total < 64 * MiB) {
    eph_value o = eph_alloc(f->h, f->P, 15);
    assert_true(eph_is_ptr(o));
    assert_true(eph_is_young(f->h, o));
    total += eph_object_bytes(o);
  }
  eph_heap_stats s = stats_of(f->h);
  assert_true(s.scavenges >= 3);
  assert_true(s.used < 16 * MiB);
  assert_verifies(f->h);
}

static void test_two_heaps(void **state) {
  fixture *f = *state;
  eph_heap *g = heap_with("eden=1M");
  eph_class_id Q = eph_class_register(g, "Q", EPH_FORMAT_POINTERS);
  eph_value a = eph_alloc(f->h, f->P, 2);
  eph_value b = eph_alloc(g, Q, 2);
  assert_true(eph_is_young(f->h, a));
  assert_true(eph_is_young(g, b));
  assert_false(eph_is_young(f->h, b));
  assert_false(eph_is_young(g, a));
  assert_verifies(g);
  eph_heap_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pointer_object_header_and_nil_slots, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reused_memory_is_zeroed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_byte_objects_odd_sizes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_large_objects_go_old, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alloc_old, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocated_counter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_many_allocations_fill_eden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_heaps, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
