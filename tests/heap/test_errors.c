/* Errors: heap exhaustion under a maximum, too-large objects, bad arguments. */
#include "heap_test.h"

static eph_class_id P, B;

static eph_heap *make(const char *spec, err_log *log) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  if (log) {
    memset(log, 0, sizeof *log);
    eph_heap_set_error_handler(h, err_log_fn, log);
  }
  return h;
}

/* Pushes 1 KiB nodes numbered start, start+1, ... on a rooted list until
 * allocation fails or limit nodes were added; returns how many were added. */
static int fill(eph_heap *h, eph_value *list, int start, int limit) {
  int n = 0;
  while (n < limit) {
    eph_value node = eph_alloc(h, P, 127);
    if (node == EPH_NIL) break;
    eph_store(h, node, 0, *list);
    eph_store(h, node, 1, eph_int(start + n));
    *list = node;
    n++;
  }
  return n;
}

static void check_list(eph_value list, int n) {
  int expect = n - 1;
  for (eph_value p = list; p != EPH_NIL; p = eph_slot(p, 0), expect--)
    assert_true(eph_int_value(eph_slot(p, 1)) == expect);
  assert_int_equal(expect, -1);
}

static void test_exhaustion_young(void **state) {
  (void)state;
  err_log log;
  eph_heap *h = make("eden=256K,headroom=256K,shrink=1M,max=4M", &log);
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  int n = fill(h, &list, 0, 100000); /* up to 100 MB: far beyond the maximum */
  assert_true(n < 100000);
  assert_true(n > 1000);                 /* well over a megabyte fitted */
  assert_true((size_t)n * 1024 <= 4 * MiB); /* but not more than the maximum */
  assert_int_equal(log.calls, 1);
  assert_int_equal(log.per_status[EPH_ERR_HEAP_EXHAUSTED], 1);
  assert_int_equal(log.last, EPH_ERR_HEAP_EXHAUSTED);
  assert_true(strlen(log.message) > 0);
  assert_true(strlen(eph_heap_error(h)) > 0);
  check_list(list, n); /* what was kept is intact */
  assert_verifies(h);

  /* Every failure calls the handler once.  (Eden may still take a few
   * objects: new space is fixed, so filling it does not grow the heap.) */
  int more = fill(h, &list, n, 100000);
  assert_true(more < 1000);
  assert_int_equal(log.calls, 2);
  check_list(list, n + more);
  assert_int_equal(eph_alloc_old(h, P, 127), EPH_NIL);
  assert_int_equal(log.calls, 3);
  assert_int_equal(log.per_status[EPH_ERR_HEAP_EXHAUSTED], 3);
  eph_heap_stats s = stats_of(h);
  /* Promotion may borrow past the maximum, by at most new space. */
  assert_true(s.heap_committed <= 4 * MiB + s.new_space_bytes);

  /* Dropping the roots makes room again. */
  list = EPH_NIL;
  int again = fill(h, &list, 0, 1000);
  assert_int_equal(again, 1000);
  check_list(list, again);
  assert_int_equal(log.calls, 3);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_exhaustion_old(void **state) {
  (void)state;
  err_log log;
  eph_heap *h = make("eden=256K,headroom=256K,shrink=1M,max=4M", &log);
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  int n = 0;
  for (; n < 100000; n++) {
    eph_value node = eph_alloc_old(h, P, 127);
    if (node == EPH_NIL) break;
    eph_store(h, node, 0, list);
    eph_store(h, node, 1, eph_int(n));
    list = node;
  }
  assert_true(n > 1000 && n < 100000);
  assert_int_equal(log.calls, 1);
  assert_int_equal(log.last, EPH_ERR_HEAP_EXHAUSTED);
  check_list(list, n);
  /* Large objects fail the same way. */
  assert_int_equal(eph_alloc_bytes(h, B, MiB), EPH_NIL);
  assert_int_equal(log.calls, 2);
  list = EPH_NIL;
  assert_true(eph_is_ptr(eph_alloc_bytes(h, B, MiB)));
  assert_true(eph_is_ptr(eph_alloc_old(h, P, 127)));
  assert_int_equal(log.calls, 2);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_single_object_above_maximum(void **state) {
  (void)state;
  err_log log;
  eph_heap *h = make("eden=256K,max=4M", &log);
  assert_int_equal(eph_alloc_bytes(h, B, 8 * MiB), EPH_NIL);
  assert_int_equal(log.calls, 1);
  assert_int_equal(log.last, EPH_ERR_HEAP_EXHAUSTED);
  /* Nothing else is affected. */
  assert_true(eph_is_ptr(eph_alloc_bytes(h, B, MiB)));
  assert_true(eph_is_ptr(eph_alloc(h, P, 3)));
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_exhaustion_without_handler_returns_nil(void **state) {
  (void)state;
  /* The default handler prints and returns: the library never exits. */
  eph_heap *h = make("eden=256K,headroom=256K,max=2M", NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  int n = fill(h, &list, 0, 100000);
  assert_true(n > 100 && n < 100000);
  assert_true(strlen(eph_heap_error(h)) > 0);
  list = EPH_NIL;
  assert_int_equal(fill(h, &list, 0, 500), 500);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_too_large(void **state) {
  (void)state;
  err_log log;
  eph_heap *h = make(NULL, &log);
  assert_int_equal(eph_alloc_bytes(h, B, EPH_MAX_PAYLOAD_BYTES + 1), EPH_NIL);
  assert_true(strlen(eph_heap_error(h)) > 0);
  /* If the handler hears about it, it hears the right status. */
  if (log.calls) assert_int_equal(log.last, EPH_ERR_TOO_LARGE);
  int calls = log.calls;
  assert_int_equal(eph_alloc(h, P, SIZE_MAX / 8), EPH_NIL);
  assert_int_equal(eph_alloc(h, P, EPH_MAX_PAYLOAD_BYTES / 8 + 1), EPH_NIL);
  assert_int_equal(eph_alloc_old(h, P, SIZE_MAX), EPH_NIL);
  assert_int_equal(eph_alloc_bytes_old(h, B, (size_t)EPH_MAX_PAYLOAD_BYTES + 8), EPH_NIL);
  assert_int_equal(eph_alloc_bytes(h, B, SIZE_MAX), EPH_NIL);
  if (log.calls) {
    assert_int_equal(log.calls, calls + 5);
    assert_int_equal(log.per_status[EPH_ERR_TOO_LARGE], log.calls);
  }
  assert_int_equal(log.per_status[EPH_ERR_HEAP_EXHAUSTED], 0);
  /* The heap is fine afterwards. */
  eph_value o = eph_alloc(h, P, 2);
  assert_true(eph_is_ptr(o));
  assert_true(eph_is_young(h, o));
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_bad_heap_arguments(void **state) {
  (void)state;
  eph_gc_params p = params_with(NULL);
  p.tenure_age = 0;
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_heap *h = (eph_heap *)&p;
  assert_int_equal(eph_heap_new(&p, &h, &err), EPH_ERR_INVALID);
  assert_null(h);
  assert_int_equal(err.status, EPH_ERR_INVALID);
  assert_true(strlen(err.message) > 0);
  /* err may be NULL. */
  h = (eph_heap *)&p;
  assert_int_equal(eph_heap_new(&p, &h, NULL), EPH_ERR_INVALID);
  assert_null(h);
  eph_heap_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exhaustion_young),
      cmocka_unit_test(test_exhaustion_old),
      cmocka_unit_test(test_single_object_above_maximum),
      cmocka_unit_test(test_exhaustion_without_handler_returns_nil),
      cmocka_unit_test(test_too_large),
      cmocka_unit_test(test_bad_heap_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
