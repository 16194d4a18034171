/* Stress mode and a randomised mutator checked against a model of the graph. */
#include "heap_test.h"

static eph_class_id Tree, Cell, Name;

static eph_heap *make(const char *spec, err_log *log) {
  eph_heap *h = heap_with(spec);
  Tree = eph_class_register(h, "Tree", EPH_FORMAT_POINTERS);
  Cell = eph_class_register(h, "Cell", EPH_FORMAT_POINTERS);
  Name = eph_class_register(h, "Name", EPH_FORMAT_BYTES);
  memset(log, 0, sizeof *log);
  eph_heap_set_error_handler(h, err_log_fn, log);
  return h;
}

static eph_value make_name(eph_heap *h, const char *prefix, long n) {
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%s-%ld", prefix, n);
  eph_value s = eph_alloc_bytes(h, Name, (size_t)len);
  memcpy(eph_bytes(s), buf, (size_t)len);
  return s;
}

static int name_is(eph_value s, const char *prefix, long n) {
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%s-%ld", prefix, n);
  return eph_class_of(s) == Name && eph_size_bytes(s) == (size_t)len && memcmp(eph_bytes(s), buf, (size_t)len) == 0;
}

/* Tree node: [left, right, value, name]; values numbered in preorder. */
static eph_value build_tree(eph_heap *h, int depth, long *counter) {
  EPH_FRAME(h);
  EPH_LOCAL(h, node);
  EPH_LOCAL(h, tmp);
  long value = (*counter)++;
  node = eph_alloc(h, Tree, 4);
  eph_store(h, node, 2, eph_int(value));
  tmp = make_name(h, "node", value);
  eph_store(h, node, 3, tmp);
  if (depth > 0) {
    tmp = build_tree(h, depth - 1, counter);
    eph_store(h, node, 0, tmp);
    tmp = build_tree(h, depth - 1, counter);
    eph_store(h, node, 1, tmp);
  }
  EPH_RETURN(h, node);
}

static void check_tree(eph_value node, int depth, long *counter) {
  assert_int_equal(eph_class_of(node), Tree);
  long value = (*counter)++;
  assert_true(eph_int_value(eph_slot(node, 2)) == value);
  assert_true(name_is(eph_slot(node, 3), "node", value));
  if (depth > 0) {
    check_tree(eph_slot(node, 0), depth - 1, counter);
    check_tree(eph_slot(node, 1), depth - 1, counter);
  } else {
    assert_int_equal(eph_slot(node, 0), EPH_NIL);
    assert_int_equal(eph_slot(node, 1), EPH_NIL);
  }
}

static void test_stress_tree_and_list(void **state) {
  (void)state;
  err_log log;
  eph_heap *h = make("stress=1,stress_full=7,verify=1,eden=64K,tenure=2", &log);
  EPH_FRAME(h);
  EPH_LOCAL(h, tree);
  EPH_LOCAL(h, list);
  EPH_LOCAL(h, cell);
  EPH_LOCAL(h, name);
  long counter = 0;
  tree = build_tree(h, 7, &counter); /* 255 nodes, 510 allocations */
  assert_int_equal(counter, 255);
  for (long i = 0; i < 400; i++) {
    name = make_name(h, "item", i);
    cell = eph_alloc(h, Cell, 2);
    eph_store(h, cell, 0, name);
    eph_store(h, cell, 1, list);
    list = cell;
  }
  uint64_t allocations = 510 + 800;
  eph_heap_stats s = stats_of(h);
  if (s.full_gcs < allocations / 7) fail_msg("%ju full GCs for %ju allocations, stress_full=7", (uintmax_t)s.full_gcs, (uintmax_t)allocations);
  if (s.scavenges + s.full_gcs < allocations)
    fail_msg("%ju collections for %ju allocations with stress=1", (uintmax_t)(s.scavenges + s.full_gcs), (uintmax_t)allocations);
  assert_int_equal(log.calls, 0); /* the per-collection verifier never complained */

  counter = 0;
  check_tree(tree, 7, &counter);
  long expect = 399;
  for (eph_value c = list; c != EPH_NIL; c = eph_slot(c, 1), expect--) assert_true(name_is(eph_slot(c, 0), "item", expect));
  assert_true(expect == -1);
  /* Exactly the live data is left after a full GC. */
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  s = stats_of(h);
  uint64_t live = 0;
  for (long i = 0; i < 255; i++) live += 40 + 8 + (size_t)(snprintf(NULL, 0, "node-%ld", i) + 7) / 8 * 8;
  for (long i = 0; i < 400; i++) live += 24 + 8 + (size_t)(snprintf(NULL, 0, "item-%ld", i) + 7) / 8 * 8;
  assert_int_equal(s.used, live);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

/* --- random mutator against a model ----------------------------------------- */

#define K 128      /* table entries */
#define EDGES 3    /* reference slots per node (slot 0 holds the id) */
#define MAX_IDS 200000

typedef struct model {
  int ids[K];                  /* id of the node in table slot i */
  int (*edges)[EDGES];         /* edges[id][k]: id referenced from slot k+1, or -1 */
  unsigned char *seen;         /* visited marks for the check */
  int next_id;
  uint64_t rng;
} model;

static unsigned rnd(model *m, unsigned n) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return (unsigned)(m->rng % n);
}

static eph_value new_node(eph_heap *h, model *m, int old) {
  eph_value n = old ? eph_alloc_old(h, Cell, 1 + EDGES) : eph_alloc(h, Cell, 1 + EDGES);
  assert_true(eph_is_ptr(n));
  int id = m->next_id++;
  assert_true(id < MAX_IDS);
  eph_store(h, n, 0, eph_int(id));
  for (int k = 0; k < EDGES; k++) m->edges[id][k] = -1;
  return n;
}

static void check_node(model *m, eph_value n, int depth) {
  assert_int_equal(eph_class_of(n), Cell);
  int id = (int)eph_int_value(eph_slot(n, 0));
  assert_true(id >= 0 && id < m->next_id);
  if (m->seen[id]) return;
  m->seen[id] = 1;
  for (int k = 0; k < EDGES; k++) {
    eph_value r = eph_slot(n, (size_t)k + 1);
    int want = m->edges[id][k];
    if (want < 0) {
      assert_int_equal(r, EPH_NIL);
    } else {
      assert_true(eph_is_ptr(r));
      if (eph_int_value(eph_slot(r, 0)) != want)
        fail_msg("node %d slot %d: id %jd, model says %d", id, k + 1, (intmax_t)eph_int_value(eph_slot(r, 0)), want);
      if (depth < 10000) check_node(m, r, depth + 1);
    }
  }
}

static void check_model(eph_heap *h, model *m, eph_value table) {
  memset(m->seen, 0, MAX_IDS);
  for (int i = 0; i < K; i++) {
    eph_value n = eph_slot(table, (size_t)i);
    if (eph_int_value(eph_slot(n, 0)) != m->ids[i]) fail_msg("table[%d] holds id %jd, model says %d", i, (intmax_t)eph_int_value(eph_slot(n, 0)), m->ids[i]);
    check_node(m, n, 0);
  }
  assert_verifies(h);
}

static void run_random(const char *spec, int ops, uint64_t seed) {
  err_log log;
  eph_heap *h = make(spec, &log);
  model m;
  memset(&m, 0, sizeof m);
  m.edges = malloc(sizeof(int[EDGES]) * MAX_IDS);
  m.seen = malloc(MAX_IDS);
  m.rng = seed;
  EPH_FRAME(h);
  EPH_LOCAL(h, table);
  EPH_LOCAL(h, n);
  table = eph_alloc(h, Cell, K);
  for (int i = 0; i < K; i++) {
    n = new_node(h, &m, 0);
    m.ids[i] = (int)eph_int_value(eph_slot(n, 0));
    eph_store(h, table, (size_t)i, n);
  }
  for (int op = 0; op < ops; op++) {
    unsigned r = rnd(&m, 100);
    if (r < 30) { /* replace a table entry by a new node (young, or old now and then) */
      unsigned i = rnd(&m, K);
      n = new_node(h, &m, rnd(&m, 10) == 0);
      m.ids[i] = (int)eph_int_value(eph_slot(n, 0));
      eph_store(h, table, i, n);
    } else if (r < 75) { /* link two table entries */
      unsigned i = rnd(&m, K), j = rnd(&m, K), k = rnd(&m, EDGES);
      eph_value from = eph_slot(table, i);
      int from_id = (int)eph_int_value(eph_slot(from, 0));
      eph_store(h, from, k + 1, eph_slot(table, j));
      m.edges[from_id][k] = m.ids[j];
    } else if (r < 80) { /* cut an edge */
      unsigned i = rnd(&m, K), k = rnd(&m, EDGES);
      eph_value from = eph_slot(table, i);
      eph_store(h, from, k + 1, EPH_NIL);
      m.edges[eph_int_value(eph_slot(from, 0))][k] = -1;
    } else if (r < 98) { /* garbage, now and then large */
      size_t size = rnd(&m, 50) == 0 ? 64 * KiB + rnd(&m, 4096) : rnd(&m, 600);
      eph_value g = eph_alloc_bytes(h, Name, size);
      assert_true(eph_is_ptr(g));
      assert_int_equal(eph_size_bytes(g), size);
    } else { /* an explicit collection */
      assert_int_equal(eph_collect(h, rnd(&m, 3) ? EPH_GC_SCAVENGE : EPH_GC_FULL), EPH_OK);
    }
    if (op % 2000 == 1999) check_model(h, &m, table);
  }
  check_model(h, &m, table);
  assert_int_equal(log.calls, 0);
  eph_heap_stats s = stats_of(h);
  assert_true(s.scavenges > 0);
  assert_true(s.full_gcs > 0);
  EPH_UNFRAME(h);
  eph_heap_free(h);
  free(m.edges);
  free(m.seen);
}

static void test_random_small_heap(void **state) {
  (void)state;
  run_random("eden=64K,tenure=2,headroom=64K,shrink=128K,ratio=0.2,verify=1", 60000, 0x9E3779B97F4A7C15u);
}

static void test_random_tenure_one(void **state) {
  (void)state;
  run_random("eden=32K,tenure=1,headroom=32K,shrink=64K,ratio=0.1", 60000, 12345);
}

static void test_random_stress(void **state) {
  (void)state;
  run_random("eden=64K,stress=1,stress_full=13,verify=1", 6000, 777);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stress_tree_and_list),
      cmocka_unit_test(test_random_small_heap),
      cmocka_unit_test(test_random_tenure_one),
      cmocka_unit_test(test_random_stress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
