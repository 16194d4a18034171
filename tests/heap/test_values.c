/* Tagged values: small integers, nil/true/false, pointers, header fields. */
#include "heap_test.h"

static void test_int_basics(void **state) {
  (void)state;
  assert_true(eph_is_int(eph_int(0)));
  assert_int_equal(eph_int(0), 1);
  assert_int_equal(eph_int_value(eph_int(0)), 0);
  assert_int_equal(eph_int(1), 3);
  assert_int_equal(eph_int_value(eph_int(1)), 1);
  assert_int_equal(eph_int(-1), UINTPTR_MAX);
  assert_true(eph_int_value(eph_int(-1)) == -1);
  assert_false(eph_is_nil(eph_int(0)));
  assert_false(eph_is_ptr(eph_int(0)));
  assert_false(eph_is_bool(eph_int(0)));
}

static void test_int_limits(void **state) {
  (void)state;
  assert_true(EPH_INT_MAX == ((intptr_t)1 << 62) - 1);
  assert_true(EPH_INT_MIN == -((intptr_t)1 << 62));
  assert_true(eph_int_value(eph_int(EPH_INT_MAX)) == EPH_INT_MAX);
  assert_true(eph_int_value(eph_int(EPH_INT_MIN)) == EPH_INT_MIN);
  assert_true(eph_is_int(eph_int(EPH_INT_MAX)));
  assert_true(eph_is_int(eph_int(EPH_INT_MIN)));

  assert_true(eph_int_fits(0));
  assert_true(eph_int_fits(EPH_INT_MAX));
  assert_true(eph_int_fits(EPH_INT_MIN));
  assert_false(eph_int_fits(EPH_INT_MAX + 1));
  assert_false(eph_int_fits(EPH_INT_MIN - 1));
  assert_false(eph_int_fits(INTPTR_MAX));
  assert_false(eph_int_fits(INTPTR_MIN));
  /* Out of range values lose their top bit: that is why callers check. */
  assert_true(eph_int_value(eph_int(EPH_INT_MAX + 1)) != EPH_INT_MAX + 1);
}

static void test_int_round_trip(void **state) {
  (void)state;
  for (int shift = 0; shift < 62; shift++) {
    intptr_t v = (intptr_t)1 << shift;
    intptr_t samples[] = {v, -v, v - 1, -(v - 1), v + 1, -v - 1};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
      intptr_t x = samples[i];
      assert_true(eph_int_fits(x));
      eph_value t = eph_int(x);
      assert_true(eph_is_int(t));
      assert_false(eph_is_ptr(t));
      if (eph_int_value(t) != x) fail_msg("round trip of %jd gave %jd", (intmax_t)x, (intmax_t)eph_int_value(t));
    }
  }
  for (intptr_t x = -1000; x <= 1000; x++) assert_true(eph_int_value(eph_int(x)) == x);
}

static void test_nil_true_false(void **state) {
  (void)state;
  assert_int_equal(EPH_NIL, 0);
  assert_true(eph_is_nil(EPH_NIL));
  assert_false(eph_is_nil(EPH_FALSE));
  assert_false(eph_is_nil(EPH_TRUE));

  assert_true(eph_is_bool(EPH_TRUE));
  assert_true(eph_is_bool(EPH_FALSE));
  assert_false(eph_is_bool(EPH_NIL));
  assert_false(eph_is_bool((eph_value)0x4));
  assert_false(eph_is_bool((eph_value)0xA));

  assert_int_equal(eph_bool(1), EPH_TRUE);
  assert_int_equal(eph_bool(42), EPH_TRUE);
  assert_int_equal(eph_bool(-1), EPH_TRUE);
  assert_int_equal(eph_bool(0), EPH_FALSE);

  assert_false(eph_is_int(EPH_NIL));
  assert_false(eph_is_int(EPH_TRUE));
  assert_false(eph_is_int(EPH_FALSE));
}

static void test_is_ptr_all_kinds(void **state) {
  (void)state;
  assert_false(eph_is_ptr(EPH_NIL));
  assert_false(eph_is_ptr(EPH_TRUE));
  assert_false(eph_is_ptr(EPH_FALSE));
  assert_false(eph_is_ptr(eph_int(0)));
  assert_false(eph_is_ptr(eph_int(8)));
  assert_false(eph_is_ptr(eph_int(EPH_INT_MAX)));
  assert_false(eph_is_ptr(eph_int(EPH_INT_MIN)));
  assert_false(eph_is_ptr((eph_value)0x4)); /* invalid tags */
  assert_false(eph_is_ptr((eph_value)0x1004));
  assert_false(eph_is_ptr((eph_value)0x1002));
  assert_true(eph_is_ptr((eph_value)0x8));
  assert_true(eph_is_ptr((eph_value)0x1000));

  /* Real objects, young, old and bytes. */
  eph_heap *h = heap_with(NULL);
  eph_class_id P = eph_class_register(h, "P", EPH_FORMAT_POINTERS);
  eph_class_id B = eph_class_register(h, "B", EPH_FORMAT_BYTES);
  eph_value objs[] = {eph_alloc(h, P, 0), eph_alloc(h, P, 3), eph_alloc_bytes(h, B, 5), eph_alloc_old(h, P, 2),
                      eph_alloc_bytes_old(h, B, 1)};
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
    assert_true(eph_is_ptr(objs[i]));
    assert_false(eph_is_int(objs[i]));
    assert_false(eph_is_nil(objs[i]));
    assert_false(eph_is_bool(objs[i]));
    assert_int_equal(objs[i] & 7, 0);
  }
  eph_heap_free(h);
}

static void test_header_fields(void **state) {
  (void)state;
  uint64_t buf[8];
  memset(buf, 0, sizeof buf);
  eph_value obj = (eph_value)buf;

  buf[0] = eph_make_header(12345, EPH_FORMAT_POINTERS, 3 * sizeof(eph_value));
  assert_int_equal(eph_class_of(obj), 12345);
  assert_int_equal(eph_format_of(obj), EPH_FORMAT_POINTERS);
  assert_int_equal(eph_size_bytes(obj), 24);
  assert_int_equal(eph_slot_count(obj), 3);
  assert_int_equal(eph_object_bytes(obj), 32);
  assert_int_equal(eph_age_of(obj), 0);
  assert_int_equal(buf[0] & (EPH_HDR_FORWARDED | EPH_HDR_REMEMBERED), 0);

  buf[0] = eph_make_header(EPH_MAX_CLASSES - 1, EPH_FORMAT_BYTES, 13);
  assert_int_equal(eph_class_of(obj), EPH_MAX_CLASSES - 1);
  assert_int_equal(eph_format_of(obj), EPH_FORMAT_BYTES);
  assert_int_equal(eph_size_bytes(obj), 13);
  assert_int_equal(eph_slot_count(obj), 0);
  assert_int_equal(eph_object_bytes(obj), 8 + 16);

  buf[0] |= (eph_header)15 << EPH_HDR_AGE_SHIFT;
  assert_int_equal(eph_age_of(obj), 15);
  assert_int_equal(eph_class_of(obj), EPH_MAX_CLASSES - 1);
  assert_int_equal(eph_format_of(obj), EPH_FORMAT_BYTES);

  buf[0] = eph_make_header(1, EPH_FORMAT_BYTES, EPH_MAX_PAYLOAD_BYTES);
  assert_int_equal(eph_size_bytes(obj), EPH_MAX_PAYLOAD_BYTES);
  assert_int_equal(eph_class_of(obj), 1);

  buf[0] = eph_make_header(7, EPH_FORMAT_POINTERS, 2 * sizeof(eph_value));
  buf[1] = eph_int(-5);
  buf[2] = EPH_TRUE;
  assert_true(eph_int_value(eph_slot(obj, 0)) == -5);
  assert_int_equal(eph_slot(obj, 1), EPH_TRUE);
  assert_ptr_equal(eph_bytes(obj), (uint8_t *)&buf[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_basics),     cmocka_unit_test(test_int_limits),
      cmocka_unit_test(test_int_round_trip), cmocka_unit_test(test_nil_true_false),
      cmocka_unit_test(test_is_ptr_all_kinds), cmocka_unit_test(test_header_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
