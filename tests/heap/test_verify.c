/* The heap verifier: passes on healthy heaps, catches deliberate corruption. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_test.h"

static eph_class_id P, B;

typedef struct fixture {
  eph_heap *h;
  err_log log;
} fixture;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return h;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->h = make("tenure=2,ratio=100");
  eph_heap_set_error_handler(f->h, err_log_fn, &f->log); /* never aborts */
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  eph_heap_free(f->h);
  free(f);
  return 0;
}

/* eph_heap_verify must report corruption, with a message, and not abort. */
static void expect_corrupt(fixture *f, const char *what) {
  eph_status s = eph_heap_verify(f->h);
  if (s != EPH_ERR_CORRUPT) fail_msg("%s: verifier returned %d, not EPH_ERR_CORRUPT", what, (int)s);
  if (strlen(eph_heap_error(f->h)) == 0) fail_msg("%s: no message", what);
  if (f->log.calls) assert_int_equal(f->log.last, EPH_ERR_CORRUPT);
}

static void test_healthy_heaps_pass(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  assert_verifies(h); /* empty */
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  EPH_LOCAL(h, old);
  old = eph_alloc_old(h, P, 10);
  for (int i = 0; i < 5000; i++) {
    eph_value n = eph_alloc(h, P, 3);
    eph_store(h, n, 0, list);
    eph_store(h, n, 1, eph_int(i));
    eph_store(h, n, 2, eph_alloc_bytes(h, B, (size_t)i % 17));
    list = n;
    if (i % 500 == 0) eph_store(h, old, (size_t)i / 500, list);
    if (i % 1000 == 0) assert_verifies(h);
  }
  assert_verifies(h);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_verifies(h);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_verifies(h);
  eph_collect(h, EPH_GC_FULL);
  assert_verifies(h);
  assert_int_equal(f->log.calls, 0);
  EPH_UNFRAME(h);
}

/* Three live objects: young a -> young b, old o. */
typedef struct graph {
  eph_value a, b, o;
} graph;

static void build(fixture *f, graph *g) {
  eph_heap *h = f->h;
  g->o = eph_alloc_old(h, P, 2);
  g->a = eph_alloc(h, P, 3);
  g->b = eph_alloc(h, P, 3);
  eph_store(h, g->a, 0, g->b);
  eph_store(h, g->a, 1, g->o);
  eph_store(h, g->b, 0, eph_int(5));
  eph_root_push(h, &g->a);
  eph_root_push(h, &g->o);
  assert_verifies(h);
}

static void test_bogus_pointer(void **state) {
  fixture *f = *state;
  graph g;
  build(f, &g);
  eph_value saved = eph_slot(g.a, 2);
  *raw_slot(g.a, 2) = (eph_value)0x1000;
  expect_corrupt(f, "0x1000 in a young slot");
  *raw_slot(g.a, 2) = saved;
  assert_verifies(f->h);
  *raw_slot(g.o, 1) = (eph_value)0x1000;
  expect_corrupt(f, "0x1000 in an old slot");
  *raw_slot(g.o, 1) = EPH_NIL;
  assert_verifies(f->h);
}

static void test_interior_pointer(void **state) {
  fixture *f = *state;
  graph g;
  build(f, &g);
  *raw_slot(g.a, 2) = g.b + 8; /* into b's payload */
  expect_corrupt(f, "interior young pointer");
  *raw_slot(g.a, 2) = g.o + 16; /* into o's payload */
  expect_corrupt(f, "interior old pointer");
  *raw_slot(g.a, 2) = EPH_NIL;
  assert_verifies(f->h);
}

static void test_invalid_tags(void **state) {
  fixture *f = *state;
  graph g;
  build(f, &g);
  const eph_value bad[] = {0x4, 0xA, 0xE, g.b | 4, g.b | 2};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    *raw_slot(g.a, 2) = bad[i];
    char what[64];
    snprintf(what, sizeof what, "tag pattern 0x%jx", (uintmax_t)bad[i]);
    expect_corrupt(f, what);
  }
  *raw_slot(g.a, 2) = EPH_TRUE;
  assert_verifies(f->h);
}

static void test_pointer_into_empty_survivor_space(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  graph g;
  build(f, &g);
  eph_collect(h, EPH_GC_SCAVENGE); /* a, b in one survivor space */
  eph_value stale = g.a;
  assert_true(eph_is_young(h, stale));
  eph_collect(h, EPH_GC_SCAVENGE); /* tenure=2: a, b now old; that space is empty */
  assert_false(eph_is_young(h, g.a));
  EPH_FRAME(h);
  EPH_LOCAL(h, y);
  y = eph_alloc(h, P, 1); /* a young holder, so no barrier is involved */
  assert_verifies(h);
  *raw_slot(y, 0) = stale;
  expect_corrupt(f, "pointer into the empty survivor space");
  *raw_slot(y, 0) = EPH_NIL;
  assert_verifies(h);
  EPH_UNFRAME(h);
}

static void test_pointer_into_free_eden_and_free_old_space(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  graph g;
  build(f, &g);
  eph_value dead_young = eph_alloc(h, P, 2); /* after a and b in eden */
  eph_alloc_old(h, P, 1000);                 /* old garbage, so that dead_old ends */
  eph_value dead_old = eph_alloc_old(h, P, 2); /* up above the compacted top */
  eph_collect(h, EPH_GC_FULL);                 /* both die; all live data is old */
  EPH_FRAME(h);
  EPH_LOCAL(h, y);
  y = eph_alloc(h, P, 1); /* a young holder at the bottom of eden */
  assert_true(dead_young >= y + eph_object_bytes(y));
  assert_verifies(h);
  *raw_slot(y, 0) = dead_young;
  expect_corrupt(f, "pointer into free eden");
  *raw_slot(y, 0) = dead_old;
  expect_corrupt(f, "pointer into free old space");
  *raw_slot(y, 0) = EPH_NIL;
  assert_verifies(h);
  EPH_UNFRAME(h);
}

static void test_missing_remembered_entry(void **state) {
  fixture *f = *state;
  graph g;
  build(f, &g);
  *raw_slot(g.o, 0) = g.b; /* old -> young without the barrier */
  expect_corrupt(f, "unremembered old-to-young pointer");
  eph_store(f->h, g.o, 0, g.b); /* through the barrier it is fine */
  assert_verifies(f->h);
  /* A young object flagged remembered. */
  *eph_header_of(g.a) |= EPH_HDR_REMEMBERED;
  expect_corrupt(f, "young object flagged remembered");
  *eph_header_of(g.a) &= ~EPH_HDR_REMEMBERED;
  assert_verifies(f->h);
}

static void test_bad_headers(void **state) {
  fixture *f = *state;
  graph g;
  build(f, &g);
  eph_header saved = *eph_header_of(g.b);
  *eph_header_of(g.b) = eph_make_header(EPH_MAX_CLASSES - 1, EPH_FORMAT_POINTERS, 24);
  expect_corrupt(f, "unknown class");
  *eph_header_of(g.b) = eph_make_header(0, EPH_FORMAT_POINTERS, 24);
  expect_corrupt(f, "class 0");
  *eph_header_of(g.b) = eph_make_header(P, EPH_FORMAT_BYTES, 24);
  expect_corrupt(f, "format other than the class's");
  *eph_header_of(g.b) = saved | EPH_HDR_FORWARDED;
  expect_corrupt(f, "forwarding header outside a collection");
  *eph_header_of(g.b) = saved;
  assert_verifies(f->h);
  saved = *eph_header_of(g.o);
  *eph_header_of(g.o) = eph_make_header(P, EPH_FORMAT_POINTERS, 64 * MiB); /* runs off old space */
  expect_corrupt(f, "object running past old space");
  *eph_header_of(g.o) = saved;
  assert_verifies(f->h);
}

static eph_value g_global;

static void test_bad_roots(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  graph g;
  build(f, &g);
  eph_value saved = g.a;
  g.a = (eph_value)0x1000;
  expect_corrupt(f, "bogus shadow-stack root");
  g.a = saved + 8;
  expect_corrupt(f, "interior shadow-stack root");
  g.a = saved;
  assert_verifies(h);
  assert_int_equal(eph_global_root_add(h, &g_global), EPH_OK);
  g_global = (eph_value)0x4;
  expect_corrupt(f, "invalid global root");
  g_global = g.b;
  assert_verifies(h);
  eph_global_root_remove(h, &g_global);
}

/* --- what happens with the default handler (in a child process) ----------- */

static int run_child(void (*body)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

/* eph_heap_verify on a corrupt heap with the default handler returns. */
static void child_verify_default_handler(void) {
  eph_heap *h = make(NULL);
  eph_value o = eph_alloc(h, P, 1);
  *raw_slot(o, 0) = (eph_value)0x1000;
  _exit(eph_heap_verify(h) == EPH_ERR_CORRUPT ? 0 : 3);
}

/* A collection's verify step finds corruption the collector survives: an
 * old-to-young pointer stored without the barrier goes stale. */
static void corrupt_and_collect(eph_heap *h) {
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  o = eph_alloc_old(h, P, 1);
  eph_value y = eph_alloc(h, P, 1);
  *raw_slot(o, 0) = y;
  eph_collect(h, EPH_GC_SCAVENGE);
  EPH_UNFRAME(h);
}

static void child_collect_default_handler(void) {
  eph_heap *h = make("verify=1");
  corrupt_and_collect(h);
  _exit(4); /* should not get here */
}

static void exit_on_corrupt(void *data, eph_heap *h, eph_status status, const char *message) {
  (void)data;
  (void)h;
  _exit(status == EPH_ERR_CORRUPT && message && *message ? 42 : 5);
}

static void child_collect_custom_handler(void) {
  eph_heap *h = make("verify=1");
  eph_heap_set_error_handler(h, exit_on_corrupt, NULL);
  corrupt_and_collect(h);
  _exit(4);
}

static void test_default_handler_behaviour(void **state) {
  (void)state;
  int st = run_child(child_verify_default_handler);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("eph_heap_verify with the default handler did not just return CORRUPT (status 0x%x)", st);

  st = run_child(child_collect_default_handler);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
    fail_msg("a collection's verify step with the default handler did not abort (status 0x%x)", st);

  st = run_child(child_collect_custom_handler);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 42)
    fail_msg("a collection's verify step did not call the handler with EPH_ERR_CORRUPT (status 0x%x)", st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_healthy_heaps_pass, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bogus_pointer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_interior_pointer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid_tags, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pointer_into_empty_survivor_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pointer_into_free_eden_and_free_old_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_remembered_entry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_headers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_roots, setup, teardown),
      cmocka_unit_test(test_default_handler_behaviour),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
