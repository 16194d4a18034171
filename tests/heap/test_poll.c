/*
 * test_poll.c — eph_heap_set_poll (observer.h): the poll runs at a safe
 * point once its flag is set (after a collection an allocation or
 * eph_collect runs), may allocate and collect there without being called
 * again, is never called inside on_alloc, and stops when removed.
 */
#include "heap_test.h"

static eph_class_id P;

typedef struct poll_state {
  volatile sig_atomic_t flag;
  eph_heap *h;
  int calls;
  int nested_calls;     /* calls that began while one was running */
  bool running;
  bool in_on_alloc;     /* set by the observer while its on_alloc runs */
  int calls_in_on_alloc;
  bool clear;           /* clear the flag when called */
  bool remove;          /* remove the poll when called */
  bool allocate;        /* allocate and collect when called */
} poll_state;

static void on_poll(void *data, eph_heap *h) {
  poll_state *s = data;
  assert_ptr_equal(h, s->h);
  if (s->running) s->nested_calls++;
  s->calls++;
  if (s->in_on_alloc) s->calls_in_on_alloc++;
  s->running = true;
  if (s->allocate) {
    EPH_FRAME(h);
    EPH_LOCAL(h, o);
    for (int i = 0; i < 1000; i++) o = eph_alloc(h, P, 4);
    eph_collect(h, EPH_GC_FULL); /* its own safe point: no second call */
    assert_int_equal(eph_class_of(o), P);
    EPH_UNFRAME(h);
  }
  if (s->clear) s->flag = 0;
  if (s->remove) eph_heap_set_poll(h, NULL, NULL, NULL);
  s->running = false;
}

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "P", EPH_FORMAT_POINTERS);
  return h;
}

/* Allocates until at least one scavenge ran. */
static void allocate_through_a_scavenge(eph_heap *h) {
  uint64_t before = stats_of(h).scavenges;
  while (stats_of(h).scavenges == before) eph_alloc(h, P, 8);
}

static void test_runs_at_the_next_collection(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K");
  poll_state s = {.h = h, .clear = true, .allocate = true};
  eph_heap_set_poll(h, &s.flag, on_poll, &s);
  allocate_through_a_scavenge(h);
  assert_int_equal(s.calls, 0); /* flag not set: never called */
  s.flag = SIGINT;
  for (int i = 0; i < 100; i++) eph_alloc(h, P, 8); /* no collection: no safe point */
  assert_int_equal(s.calls, 0);
  allocate_through_a_scavenge(h);
  assert_int_equal(s.calls, 1);
  assert_int_equal(s.nested_calls, 0); /* its own collections did not call it again */
  assert_int_equal(s.flag, 0);
  allocate_through_a_scavenge(h);
  assert_int_equal(s.calls, 1); /* cleared: not again */
  s.flag = SIGTERM;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK); /* eph_collect is a safe point too */
  assert_int_equal(s.calls, 2);
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_removed(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K");
  poll_state s = {.h = h, .remove = true};
  eph_heap_set_poll(h, &s.flag, on_poll, &s);
  s.flag = 1;
  eph_collect(h, EPH_GC_FULL);
  assert_int_equal(s.calls, 1);
  allocate_through_a_scavenge(h); /* the flag is still set, but the poll is gone */
  eph_collect(h, EPH_GC_FULL);
  assert_int_equal(s.calls, 1);
  eph_heap_set_poll(h, &s.flag, on_poll, &s);
  eph_heap_set_poll(h, NULL, on_poll, &s); /* NULL flag: removed */
  eph_collect(h, EPH_GC_FULL);
  assert_int_equal(s.calls, 1);
  eph_heap_free(h);
}

/* An on_alloc that allocates (so that collections, hence safe points, run
 * inside it: stress mode scavenges before every allocation). */
static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  poll_state *s = data;
  (void)obj;
  s->in_on_alloc = true;
  eph_alloc(h, P, 1);
  s->in_on_alloc = false;
}

static void test_not_inside_on_alloc(void **state) {
  (void)state;
  eph_heap *h = make("stress=1");
  poll_state s = {.h = h}; /* the flag stays set: every safe point outside on_alloc calls it */
  eph_observer obs = {.data = &s, .on_alloc = on_alloc};
  eph_heap_set_observer(h, &obs);
  eph_heap_set_poll(h, &s.flag, on_poll, &s);
  s.flag = 1;
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  for (int i = 0; i < 10; i++) o = eph_alloc(h, P, 2); /* safe points before each (called), inside on_alloc (not) */
  assert_true(s.calls >= 10);
  assert_int_equal(s.calls_in_on_alloc, 0);
  assert_int_equal(eph_class_of(o), P);
  EPH_UNFRAME(h);
  eph_heap_set_observer(h, NULL);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runs_at_the_next_collection),
      cmocka_unit_test(test_removed),
      cmocka_unit_test(test_not_inside_on_alloc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
