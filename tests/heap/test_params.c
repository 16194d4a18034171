/* GC parameters: defaults, parsing, rejection, EPHEMERA_GC, format round trip. */
#include <math.h>

#include "heap_test.h"

/* Field-by-field equality, generated from the parameter table. */
static void assert_params_equal(const eph_gc_params *a, const eph_gc_params *b) {
#define EPH_T_CMP(key, field, kind, def, help)                                      \
  if (fabs((double)a->field - (double)b->field) > 1e-9)                             \
    fail_msg("parameter %s differs: %.17g vs %.17g", #key, (double)a->field, (double)b->field);
  EPH_GC_PARAM_TABLE(EPH_T_CMP)
#undef EPH_T_CMP
}

static int clear_env(void **state) {
  (void)state;
  unsetenv("EPHEMERA_GC");
  return 0;
}

static void test_defaults(void **state) {
  (void)state;
  eph_gc_params p;
  memset(&p, 0xFF, sizeof p);
  eph_gc_params_init(&p);
  /* Illimani's Table 2. */
  assert_int_equal(p.eden_bytes, 15 * MiB);
  assert_int_equal(p.growth_headroom, 16 * MiB);
  assert_int_equal(p.shrink_threshold, 32 * MiB);
  assert_float_equal(p.gc_ratio, 0.33, 1e-12);
  /* Ours. */
  assert_int_equal(p.tenure_age, 3);
  assert_int_equal(p.max_heap, 0);
  assert_int_equal(p.stress, 0);
  assert_int_equal(p.stress_full_every, 0);
  assert_int_equal(p.verify, 0);
  assert_int_equal(p.record_events, 1);
  assert_int_equal(p.huge_pages, 1);
  eph_error err;
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_OK);
}

static void test_parse_illimani_spec(void **state) {
  (void)state;
  eph_gc_params p;
  eph_error err;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "eden=64M,headroom=64M,shrink=128M,ratio=2.5", &err), EPH_OK);
  assert_int_equal(p.eden_bytes, 64 * MiB);
  assert_int_equal(p.growth_headroom, 64 * MiB);
  assert_int_equal(p.shrink_threshold, 128 * MiB);
  assert_float_equal(p.gc_ratio, 2.5, 1e-12);
  /* Untouched keys keep their values. */
  assert_int_equal(p.tenure_age, 3);
  assert_int_equal(p.record_events, 1);
}

static void test_parse_suffixes_and_counts(void **state) {
  (void)state;
  eph_gc_params p;
  eph_error err;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "eden=512K", &err), EPH_OK);
  assert_int_equal(p.eden_bytes, 512 * KiB);
  assert_int_equal(eph_gc_params_parse(&p, "max=2G", &err), EPH_OK);
  assert_int_equal(p.max_heap, (size_t)2 << 30);
  assert_int_equal(eph_gc_params_parse(&p, "headroom=1048576", &err), EPH_OK);
  assert_int_equal(p.growth_headroom, MiB);
  assert_int_equal(eph_gc_params_parse(&p, "shrink=3M", &err), EPH_OK);
  assert_int_equal(p.shrink_threshold, 3 * MiB);
  assert_int_equal(eph_gc_params_parse(&p, "tenure=7,stress=1,stress_full=9,verify=1,events=0", &err), EPH_OK);
  assert_int_equal(p.tenure_age, 7);
  assert_int_equal(p.stress, 1);
  assert_int_equal(p.stress_full_every, 9);
  assert_int_equal(p.verify, 1);
  assert_int_equal(p.record_events, 0);
  /* Later keys win. */
  assert_int_equal(eph_gc_params_parse(&p, "tenure=2,tenure=5", &err), EPH_OK);
  assert_int_equal(p.tenure_age, 5);
}

static void test_parse_ratios(void **state) {
  (void)state;
  eph_gc_params p;
  eph_error err;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "ratio=33%", &err), EPH_OK);
  assert_float_equal(p.gc_ratio, 0.33, 1e-12);
  assert_int_equal(eph_gc_params_parse(&p, "ratio=250%", &err), EPH_OK);
  assert_float_equal(p.gc_ratio, 2.5, 1e-12);
  assert_int_equal(eph_gc_params_parse(&p, "ratio=0.5", &err), EPH_OK);
  assert_float_equal(p.gc_ratio, 0.5, 1e-12);
  assert_int_equal(eph_gc_params_parse(&p, "ratio=1", &err), EPH_OK);
  assert_float_equal(p.gc_ratio, 1.0, 1e-12);
}

/* spec must be rejected, naming `key`, with p unchanged. */
static void expect_rejected(const char *spec, const char *key) {
  eph_gc_params p, before;
  eph_error err;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "eden=1M,tenure=4", &err), EPH_OK);
  before = p;
  memset(&err, 0, sizeof err);
  eph_status s = eph_gc_params_parse(&p, spec, &err);
  if (s != EPH_ERR_INVALID) fail_msg("spec \"%s\" gave status %d, not EPH_ERR_INVALID", spec, (int)s);
  assert_int_equal(err.status, EPH_ERR_INVALID);
  if (strstr(err.message, key) == NULL) fail_msg("message for \"%s\" does not name \"%s\": \"%s\"", spec, key, err.message);
  assert_params_equal(&p, &before);
  /* err may be NULL. */
  assert_int_equal(eph_gc_params_parse(&p, spec, NULL), EPH_ERR_INVALID);
  assert_params_equal(&p, &before);
}

static void test_reject_unknown_key(void **state) {
  (void)state;
  expect_rejected("bogus=1", "bogus");
  expect_rejected("edenn=1M", "edenn");
  expect_rejected("EDEN=1M", "EDEN");
}

static void test_reject_bad_numbers(void **state) {
  (void)state;
  expect_rejected("eden=abc", "eden");
  expect_rejected("eden=12Q", "eden");
  expect_rejected("eden=1MM", "eden");
  expect_rejected("headroom=1.5.5M", "headroom");
  expect_rejected("ratio=abc", "ratio");
  expect_rejected("ratio=0.3x", "ratio");
  expect_rejected("tenure=x", "tenure");
  expect_rejected("tenure=3K5", "tenure");
  expect_rejected("max=99999999999999999999999G", "max");
}

static void test_reject_negative_and_empty(void **state) {
  (void)state;
  expect_rejected("eden=-1", "eden");
  expect_rejected("shrink=-32M", "shrink");
  expect_rejected("ratio=-0.5", "ratio");
  expect_rejected("ratio=-10%", "ratio");
  expect_rejected("tenure=-1", "tenure");
  expect_rejected("eden=", "eden");
  expect_rejected("ratio=", "ratio");
  expect_rejected("verify=", "verify");
}

static void test_reject_missing_equals(void **state) {
  (void)state;
  expect_rejected("eden", "eden");
  expect_rejected("eden64M", "eden64M");
  expect_rejected("tenure=2,verify", "verify");
}

static void test_reject_is_atomic(void **state) {
  (void)state;
  /* A valid key before the bad one must not be applied either. */
  expect_rejected("eden=64M,bogus=1", "bogus");
  expect_rejected("eden=64M,tenure=5,ratio=zz", "ratio");
}

static void test_check(void **state) {
  (void)state;
  eph_error err;
  eph_gc_params p;

  eph_gc_params_init(&p);
  p.tenure_age = 0;
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_ERR_INVALID);
  assert_contains(err.message, "tenure");

  eph_gc_params_init(&p);
  p.tenure_age = 16;
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_ERR_INVALID);

  eph_gc_params_init(&p);
  p.eden_bytes = 16;
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_ERR_INVALID);
  assert_contains(err.message, "eden");

  eph_gc_params_init(&p);
  p.max_heap = p.eden_bytes / 2;
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_ERR_INVALID);
  assert_true(strlen(err.message) > 0);

  eph_gc_params_init(&p);
  p.tenure_age = 15;
  p.max_heap = 64 * MiB;
  assert_int_equal(eph_gc_params_check(&p, &err), EPH_OK);

  /* eph_heap_new checks too. */
  eph_gc_params_init(&p);
  p.tenure_age = 0;
  eph_heap *h = (eph_heap *)&err; /* must be overwritten with NULL */
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_heap_new(&p, &h, &err), EPH_ERR_INVALID);
  assert_null(h);
  assert_int_equal(err.status, EPH_ERR_INVALID);
  assert_true(strlen(err.message) > 0);
}

static void test_env(void **state) {
  (void)state;
  eph_gc_params p, def;
  eph_error err;
  eph_gc_params_init(&def);

  unsetenv("EPHEMERA_GC");
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_apply_env(&p, &err), EPH_OK);
  assert_params_equal(&p, &def);

  setenv("EPHEMERA_GC", "eden=1M,tenure=2,ratio=50%", 1);
  assert_int_equal(eph_gc_params_apply_env(&p, &err), EPH_OK);
  assert_int_equal(p.eden_bytes, MiB);
  assert_int_equal(p.tenure_age, 2);
  assert_float_equal(p.gc_ratio, 0.5, 1e-12);
  assert_int_equal(p.growth_headroom, 16 * MiB);

  eph_gc_params before = p;
  setenv("EPHEMERA_GC", "eden=2M,nonsense=3", 1);
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_gc_params_apply_env(&p, &err), EPH_ERR_INVALID);
  assert_contains(err.message, "nonsense");
  assert_params_equal(&p, &before);
  unsetenv("EPHEMERA_GC");
}

static void test_heap_new_reads_env(void **state) {
  (void)state;
  eph_error err;
  eph_heap *h = NULL;

  setenv("EPHEMERA_GC", "eden=2M,tenure=5,verify=1", 1);
  assert_int_equal(eph_heap_new(NULL, &h, &err), EPH_OK);
  assert_non_null(h);
  assert_int_equal(eph_heap_params(h)->eden_bytes, 2 * MiB);
  assert_int_equal(eph_heap_params(h)->tenure_age, 5);
  assert_int_equal(eph_heap_params(h)->verify, 1);
  assert_int_equal(eph_heap_params(h)->growth_headroom, 16 * MiB);
  eph_heap_free(h);

  /* Explicit parameters are used exactly: the environment is ignored. */
  eph_gc_params p;
  eph_gc_params_init(&p);
  h = NULL;
  assert_int_equal(eph_heap_new(&p, &h, &err), EPH_OK);
  assert_int_equal(eph_heap_params(h)->eden_bytes, 15 * MiB);
  assert_int_equal(eph_heap_params(h)->tenure_age, 3);
  eph_heap_free(h);

  setenv("EPHEMERA_GC", "eden=zz", 1);
  h = (eph_heap *)&err;
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_heap_new(NULL, &h, &err), EPH_ERR_INVALID);
  assert_null(h);
  assert_int_equal(err.status, EPH_ERR_INVALID);
  assert_contains(err.message, "eden");

  /* Parsable but inconsistent. */
  setenv("EPHEMERA_GC", "tenure=99", 1);
  h = (eph_heap *)&err;
  memset(&err, 0, sizeof err);
  assert_int_equal(eph_heap_new(NULL, &h, &err), EPH_ERR_INVALID);
  assert_null(h);
  assert_contains(err.message, "tenure");
  unsetenv("EPHEMERA_GC");
}

static void test_format_round_trip(void **state) {
  (void)state;
  const char *specs[] = {
      NULL,
      "eden=64M,headroom=64M,shrink=128M,ratio=2.5",
      "eden=777K,headroom=12345,shrink=1G,ratio=0.4,tenure=15,max=3G,stress=1,stress_full=7,verify=1,events=0",
      "ratio=0.333,eden=1048584",
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    eph_gc_params p = params_with(specs[i]), q;
    char buf[1024];
    eph_error err;
    memset(buf, 0, sizeof buf);
    eph_gc_params_format(&p, buf, sizeof buf);
    assert_true(strlen(buf) > 0);
    eph_gc_params_init(&q);
    q.eden_bytes = 1; /* every key must be written, not just non-defaults */
    q.tenure_age = 9;
    q.record_events = 7;
    if (eph_gc_params_parse(&q, buf, &err) != EPH_OK) fail_msg("format gave \"%s\" which parse rejects: %s", buf, err.message);
    /* Formatting a default p must still reset q's odd fields to the default. */
    if (specs[i] == NULL && (q.eden_bytes == 1 || q.tenure_age == 9 || q.record_events == 7))
      fail_msg("format \"%s\" omits keys", buf);
    assert_params_equal(&p, &q);
  }
  /* A short buffer is never overrun and stays terminated. */
  char small[8];
  memset(small, 'Z', sizeof small);
  eph_gc_params p = params_with(NULL);
  eph_gc_params_format(&p, small, 5);
  assert_true(memchr(small, '\0', 5) != NULL);
  assert_int_equal(small[5], 'Z');
}

static void test_describe(void **state) {
  (void)state;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  eph_gc_params_describe(f);
  fclose(f);
  const char *keys[] = {"eden", "headroom", "shrink", "ratio", "tenure", "max", "stress", "stress_full", "verify", "events"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_contains(text, keys[i]);
  free(text);
}

static void test_status_names(void **state) {
  (void)state;
  for (int a = EPH_OK; a <= EPH_ERR_CORRUPT; a++) {
    const char *na = eph_status_name((eph_status)a);
    assert_non_null(na);
    assert_true(strlen(na) > 0);
    for (int b = a + 1; b <= EPH_ERR_CORRUPT; b++) assert_string_not_equal(na, eph_status_name((eph_status)b));
  }
  assert_contains(eph_status_name(EPH_ERR_HEAP_EXHAUSTED), "exhausted");
}

/* huge=0|1 parse and check; both heaps work, and new space starts on a
 * huge-page boundary (else its first 2 MiB could never be a huge page). */
static void test_huge_pages(void **state) {
  (void)state;
  eph_gc_params p;
  eph_error err;
  eph_gc_params_init(&p);
  assert_int_equal(eph_gc_params_parse(&p, "huge=0", &err), EPH_OK);
  assert_int_equal(p.huge_pages, 0);
  assert_int_equal(eph_gc_params_parse(&p, "huge=2", &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "'huge'"));
  assert_int_equal(p.huge_pages, 0);
  const char *specs[] = {"huge=1,eden=4M,verify=1", "huge=0,eden=4M,verify=1"};
  for (size_t k = 0; k < 2; k++) {
    eph_heap *h = heap_with(specs[k]);
    eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_POINTERS);
    assert_int_equal(eph__fast(h)->young_lo % (2u << 20), 0); /* new space */
    EPH_FRAME(h);
    EPH_LOCAL(h, list);
    for (int i = 0; i < 200000; i++) {
      eph_value cell = eph_alloc(h, C, 2);
      assert_true(cell != EPH_NIL);
      eph_store(h, cell, 0, i % 7 ? list : EPH_NIL); /* chains of up to 7 */
      eph_store(h, cell, 1, eph_int(i));
      list = cell;
    }
    assert_int_equal(eph_int_value(eph_slot(list, 1)), 199999);
    eph_collect(h, EPH_GC_FULL);
    assert_verifies(h);
    EPH_UNFRAME(h);
    eph_heap_free(h);
  }
}

static void test_set_params_on_live_heap(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=1M");
  eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_POINTERS);
  EPH_FRAME(h);
  EPH_LOCAL(h, keep);
  keep = eph_alloc(h, C, 4);
  eph_store(h, keep, 0, eph_int(99));

  eph_gc_params bad = *eph_heap_params(h);
  bad.tenure_age = 0;
  assert_int_equal(eph_heap_set_params(h, &bad), EPH_ERR_INVALID);
  assert_int_equal(eph_heap_params(h)->tenure_age, 3);
  assert_int_equal(eph_heap_params(h)->eden_bytes, MiB);

  eph_gc_params p = *eph_heap_params(h);
  p.tenure_age = 6;
  p.eden_bytes = 2 * MiB;
  uint64_t full0 = stats_of(h).full_gcs;
  assert_int_equal(eph_heap_set_params(h, &p), EPH_OK);
  assert_int_equal(eph_heap_params(h)->tenure_age, 6);
  assert_int_equal(eph_heap_params(h)->eden_bytes, 2 * MiB);
  /* The eden change ran a full GC; the rooted object survived it. */
  assert_true(stats_of(h).full_gcs > full0);
  assert_true(eph_int_value(eph_slot(keep, 0)) == 99);
  for (int i = 0; i < 100000; i++) assert_true(eph_alloc(h, C, 3) != EPH_NIL);
  assert_true(eph_int_value(eph_slot(keep, 0)) == 99);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_parse_illimani_spec),
      cmocka_unit_test(test_parse_suffixes_and_counts),
      cmocka_unit_test(test_parse_ratios),
      cmocka_unit_test(test_reject_unknown_key),
      cmocka_unit_test(test_reject_bad_numbers),
      cmocka_unit_test(test_reject_negative_and_empty),
      cmocka_unit_test(test_reject_missing_equals),
      cmocka_unit_test(test_reject_is_atomic),
      cmocka_unit_test(test_check),
      cmocka_unit_test_teardown(test_env, clear_env),
      cmocka_unit_test_teardown(test_heap_new_reads_env, clear_env),
      cmocka_unit_test(test_format_round_trip),
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_status_names),
      cmocka_unit_test(test_huge_pages),
      cmocka_unit_test(test_set_params_on_live_heap),
  };
  return cmocka_run_group_tests(tests, clear_env, NULL);
}
