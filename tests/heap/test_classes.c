/* The class table: register, find, name, format, errors, reserved index 0. */
#include "heap_test.h"

static int setup(void **state) {
  *state = heap_with(NULL);
  return 0;
}

static int teardown(void **state) {
  eph_heap_free((eph_heap *)*state);
  return 0;
}

static void test_register_find_name_format(void **state) {
  eph_heap *h = *state;
  size_t count0 = eph_class_count(h);
  assert_true(count0 >= 1); /* index 0 is reserved */

  eph_class_id point = eph_class_register(h, "Point", EPH_FORMAT_POINTERS);
  eph_class_id name = eph_class_register(h, "Name", EPH_FORMAT_BYTES);
  assert_true(point >= 1);
  assert_true(name >= 1);
  assert_int_not_equal(point, name);
  assert_int_equal(eph_class_count(h), count0 + 2);

  assert_int_equal(eph_class_find(h, "Point"), point);
  assert_int_equal(eph_class_find(h, "Name"), name);
  assert_string_equal(eph_class_name(h, point), "Point");
  assert_string_equal(eph_class_name(h, name), "Name");
  assert_int_equal(eph_class_format(h, point), EPH_FORMAT_POINTERS);
  assert_int_equal(eph_class_format(h, name), EPH_FORMAT_BYTES);

  /* Names are case sensitive and compared whole. */
  assert_int_equal(eph_class_find(h, "point"), 0);
  assert_int_equal(eph_class_find(h, "Poin"), 0);
  assert_int_equal(eph_class_find(h, "PointX"), 0);
  assert_int_equal(eph_class_find(h, "Nope"), 0);
}

static void test_name_is_copied(void **state) {
  eph_heap *h = *state;
  char buf[32];
  snprintf(buf, sizeof buf, "Transient");
  eph_class_id c = eph_class_register(h, buf, EPH_FORMAT_POINTERS);
  assert_true(c >= 1);
  memset(buf, 'x', sizeof buf - 1);
  assert_string_equal(eph_class_name(h, c), "Transient");
  assert_int_equal(eph_class_find(h, "Transient"), c);
}

static void test_same_name_same_format_same_id(void **state) {
  eph_heap *h = *state;
  eph_class_id a = eph_class_register(h, "Pair", EPH_FORMAT_POINTERS);
  size_t count = eph_class_count(h);
  eph_class_id b = eph_class_register(h, "Pair", EPH_FORMAT_POINTERS);
  assert_true(a >= 1);
  assert_int_equal(a, b);
  assert_int_equal(eph_class_count(h), count);
}

static void test_same_name_other_format_rejected(void **state) {
  eph_heap *h = *state;
  eph_class_id a = eph_class_register(h, "String", EPH_FORMAT_BYTES);
  assert_true(a >= 1);
  size_t count = eph_class_count(h);
  assert_string_equal(eph_heap_error(h), "");
  assert_int_equal(eph_class_register(h, "String", EPH_FORMAT_POINTERS), 0);
  assert_true(strlen(eph_heap_error(h)) > 0);
  /* The original registration is untouched. */
  assert_int_equal(eph_class_count(h), count);
  assert_int_equal(eph_class_find(h, "String"), a);
  assert_int_equal(eph_class_format(h, a), EPH_FORMAT_BYTES);
}

static void test_empty_name_and_bad_format_rejected(void **state) {
  eph_heap *h = *state;
  size_t count = eph_class_count(h);
  assert_int_equal(eph_class_register(h, "", EPH_FORMAT_POINTERS), 0);
  assert_true(strlen(eph_heap_error(h)) > 0);
  assert_int_equal(eph_class_register(h, "Bad", EPH_FORMAT_COUNT_), 0);
  assert_int_equal(eph_class_register(h, "Bad2", (eph_format)99), 0);
  assert_int_equal(eph_class_count(h), count);
  assert_int_equal(eph_class_find(h, "Bad"), 0);
  assert_int_equal(eph_class_find(h, ""), 0);
}

static void test_index_zero_reserved(void **state) {
  eph_heap *h = *state;
  assert_null(eph_class_name(h, 0));
  assert_null(eph_class_name(h, 4711));
  assert_null(eph_class_name(h, EPH_MAX_CLASSES - 1));
  for (int i = 0; i < 100; i++) {
    char name[16];
    snprintf(name, sizeof name, "C%d", i);
    eph_class_id c = eph_class_register(h, name, i % 2 ? EPH_FORMAT_BYTES : EPH_FORMAT_POINTERS);
    assert_true(c >= 1);
    assert_true(c < eph_class_count(h));
    assert_string_equal(eph_class_name(h, c), name);
  }
  for (int i = 0; i < 100; i++) {
    char name[16];
    snprintf(name, sizeof name, "C%d", i);
    eph_class_id c = eph_class_find(h, name);
    assert_true(c >= 1);
    assert_int_equal(eph_class_format(h, c), i % 2 ? EPH_FORMAT_BYTES : EPH_FORMAT_POINTERS);
  }
}

static void test_objects_carry_class(void **state) {
  eph_heap *h = *state;
  eph_class_id p = eph_class_register(h, "Point", EPH_FORMAT_POINTERS);
  eph_class_id n = eph_class_register(h, "Name", EPH_FORMAT_BYTES);
  eph_value a = eph_alloc(h, p, 2);
  eph_value b = eph_alloc_bytes(h, n, 5);
  assert_int_equal(eph_class_of(a), p);
  assert_int_equal(eph_class_of(b), n);
  assert_string_equal(eph_class_name(h, eph_class_of(a)), "Point");
}

static void test_heaps_have_separate_tables(void **state) {
  eph_heap *h = *state;
  eph_heap *other = heap_with(NULL);
  eph_class_id x = eph_class_register(h, "OnlyHere", EPH_FORMAT_POINTERS);
  assert_true(x >= 1);
  assert_int_equal(eph_class_find(other, "OnlyHere"), 0);
  /* The same name may have another format in another heap. */
  assert_true(eph_class_register(other, "OnlyHere", EPH_FORMAT_BYTES) >= 1);
  assert_int_equal(eph_class_format(h, x), EPH_FORMAT_POINTERS);
  eph_heap_free(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_register_find_name_format, setup, teardown),
      cmocka_unit_test_setup_teardown(test_name_is_copied, setup, teardown),
      cmocka_unit_test_setup_teardown(test_same_name_same_format_same_id, setup, teardown),
      cmocka_unit_test_setup_teardown(test_same_name_other_format_rejected, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_name_and_bad_format_rejected, setup, teardown),
      cmocka_unit_test_setup_teardown(test_index_zero_reserved, setup, teardown),
      cmocka_unit_test_setup_teardown(test_objects_carry_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_heaps_have_separate_tables, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
