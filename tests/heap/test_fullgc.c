/* The full GC: reclaiming old garbage, compaction, the GC ratio, shrink, growth. */
#include "heap_test.h"

static eph_class_id P, B;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return h;
}

static void test_old_garbage_reclaimed(void **state) {
  (void)state;
  eph_heap *h = make("ratio=100"); /* no automatic full GC */
  EPH_FRAME(h);
  EPH_LOCAL(h, keep);
  const size_t N = 1000;
  keep = eph_alloc_old(h, P, N / 4);
  for (size_t i = 0; i < N; i++) {
    eph_value o = eph_alloc_old(h, P, 3);
    eph_store(h, o, 0, eph_int((intptr_t)i));
    if (i % 4 == 0) eph_store(h, keep, i / 4, o);
  }
  uint64_t live = eph_object_bytes(keep) + (N / 4) * 32;
  eph_heap_stats before = stats_of(h);
  assert_int_equal(before.full_gcs, 0);
  assert_int_equal(before.old_used, eph_object_bytes(keep) + N * 32);

  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  eph_heap_stats after = stats_of(h);
  assert_int_equal(after.full_gcs, 1);
  assert_int_equal(after.used, live);
  assert_int_equal(after.old_used, live);
  assert_int_equal(after.bytes_reclaimed - before.bytes_reclaimed, before.used - live);
  size_t n = 0;
  const eph_gc_event *ev = eph_heap_events(h, &n);
  assert_true(n >= 1);
  assert_int_equal(ev[n - 1].kind, EPH_GC_FULL);
  assert_int_equal(ev[n - 1].used_before, before.used);
  assert_int_equal(ev[n - 1].used_after, live);
  for (size_t j = 0; j < N / 4; j++) {
    eph_value o = eph_slot(keep, j);
    assert_false(eph_is_young(h, o));
    assert_true(eph_int_value(eph_slot(o, 0)) == (intptr_t)(4 * j));
  }
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_compaction_moves_down_and_preserves(void **state) {
  (void)state;
  eph_heap *h = make("ratio=100");
  EPH_FRAME(h);
  EPH_LOCAL(h, a);
  EPH_LOCAL(h, b);
  EPH_LOCAL(h, name);
  for (int i = 0; i < 500; i++) eph_alloc_old(h, P, 7); /* garbage below */
  a = eph_alloc_old(h, P, 3);
  eph_alloc_old(h, P, 20); /* garbage between */
  b = eph_alloc_old(h, P, 3);
  name = eph_alloc_bytes_old(h, B, 21);
  memcpy(eph_bytes(name), "a cycle of two points", 21);
  eph_store(h, a, 0, b);
  eph_store(h, b, 0, a);
  eph_store(h, a, 1, name);
  eph_store(h, b, 1, name);
  eph_store(h, a, 2, eph_int(-1));
  eph_store(h, b, 2, eph_int(EPH_INT_MAX));
  eph_value a0 = a, b0 = b, n0 = name;

  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_true(a < a0);
  assert_true(b < b0);
  assert_true(name < n0);
  assert_true(a < b && b < name); /* sliding keeps address order */
  assert_int_equal(b, a + eph_object_bytes(a)); /* and leaves no gaps */
  assert_int_equal(name, b + eph_object_bytes(b));
  assert_int_equal(eph_slot(a, 0), b);
  assert_int_equal(eph_slot(b, 0), a);
  assert_int_equal(eph_slot(a, 1), name);
  assert_int_equal(eph_slot(b, 1), name);
  assert_true(eph_int_value(eph_slot(a, 2)) == -1);
  assert_true(eph_int_value(eph_slot(b, 2)) == EPH_INT_MAX);
  assert_int_equal(eph_size_bytes(name), 21);
  assert_memory_equal(eph_bytes(name), "a cycle of two points", 21);
  assert_int_equal(eph_class_of(a), P);
  assert_int_equal(eph_class_of(name), B);

  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.used, eph_object_bytes(a) + eph_object_bytes(b) + eph_object_bytes(name));
  assert_int_equal(s.bytes_compacted, s.used);
  size_t n = 0;
  const eph_gc_event *ev = eph_heap_events(h, &n);
  assert_int_equal(ev[n - 1].bytes_compacted, s.used);
  assert_verifies(h);

  /* A second full GC has nothing to move. */
  a0 = a;
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(a, a0);
  ev = eph_heap_events(h, &n);
  assert_int_equal(ev[n - 1].bytes_compacted, 0);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_new_space_empty_after_full_gc(void **state) {
  (void)state;
  eph_heap *h = make("tenure=15");
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  EPH_LOCAL(h, old);
  old = eph_alloc_old(h, P, 1);
  for (int i = 0; i < 1000; i++) {
    eph_value node = eph_alloc(h, P, 2);
    eph_store(h, node, 0, eph_int(i));
    eph_store(h, node, 1, list);
    list = node;
    eph_alloc(h, P, 5); /* garbage */
  }
  eph_store(h, old, 0, list); /* old -> young, remembered */
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK); /* some in a survivor space */
  for (int i = 1000; i < 1100; i++) {
    eph_value node = eph_alloc(h, P, 2);
    eph_store(h, node, 0, eph_int(i));
    eph_store(h, node, 1, list);
    list = node;
  }
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.used, s.old_used);
  assert_int_equal(s.used, eph_object_bytes(old) + 1100 * 24);
  assert_int_equal(s.remembered, 0);
  int expect = 1099;
  for (eph_value n = list; n != EPH_NIL; n = eph_slot(n, 1), expect--) {
    assert_false(eph_is_young(h, n));
    assert_true(eph_int_value(eph_slot(n, 0)) == expect);
  }
  assert_int_equal(expect, -1);
  assert_int_equal(eph_int_value(eph_slot(eph_slot(old, 0), 0)), 999);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

/* Builds and drops lists, never calling eph_collect; returns full_gcs. */
static uint64_t churn(const char *spec, uint64_t *max_old_committed) {
  eph_heap *h = make(spec);
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  *max_old_committed = 0;
  for (int i = 0; i < 400000; i++) {
    eph_value node = eph_alloc(h, P, 3);
    assert_true(eph_is_ptr(node));
    eph_store(h, node, 0, eph_int(i));
    eph_store(h, node, 1, list);
    list = node;
    if (i % 5000 == 4999) {
      int expect = i, count = 0;
      for (eph_value n = list; n != EPH_NIL; n = eph_slot(n, 1), expect--, count++)
        assert_true(eph_int_value(eph_slot(n, 0)) == expect);
      assert_int_equal(count, 5000);
      list = EPH_NIL; /* the tenured part becomes old garbage */
      eph_heap_stats s = stats_of(h);
      if (s.old_committed > *max_old_committed) *max_old_committed = s.old_committed;
    }
  }
  assert_verifies(h);
  uint64_t full = stats_of(h).full_gcs;
  EPH_UNFRAME(h);
  eph_heap_free(h);
  return full;
}

static void test_gc_ratio_triggers_full_gc(void **state) {
  (void)state;
  /* 400000 nodes of 32 bytes, about 12.8 MB, mostly tenured (tenure=1). */
  uint64_t committed_low = 0, committed_high = 0;
  uint64_t low = churn("eden=256K,tenure=1,headroom=256K,shrink=1M,ratio=0.5", &committed_low);
  uint64_t high = churn("eden=256K,tenure=1,headroom=256K,shrink=1M,ratio=8", &committed_high);
  if (low < 3) fail_msg("ratio=0.5 ran only %ju full GCs", (uintmax_t)low);
  if (!(high < low)) fail_msg("ratio=8 ran %ju full GCs, ratio=0.5 ran %ju", (uintmax_t)high, (uintmax_t)low);
  /* Live data stays below 200K, so with frequent full GCs old space stays small. */
  if (committed_low > 4 * MiB) fail_msg("old space grew to %ju bytes with ratio=0.5", (uintmax_t)committed_low);
}

static void test_gc_ratio_with_pretenured_garbage(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K,headroom=1M,shrink=1M,ratio=0.5");
  for (int i = 0; i < 100000; i++) assert_true(eph_is_ptr(eph_alloc_old(h, P, 8))); /* 7.2 MB */
  eph_heap_stats s = stats_of(h);
  assert_true(s.full_gcs >= 2);
  assert_true(s.old_committed <= 4 * MiB);
  assert_verifies(h);
  eph_heap_free(h);
}

static void test_shrink_after_freeing(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K,headroom=1M,shrink=2M,ratio=100");
  EPH_FRAME(h);
  EPH_LOCAL(h, table);
  const size_t N = 400;
  table = eph_alloc_old(h, P, N);
  for (size_t i = 0; i < N; i++) {
    eph_value chunk = eph_alloc_bytes(h, B, 64 * KiB); /* large: allocated old */
    assert_false(eph_is_young(h, chunk));
    eph_bytes(chunk)[0] = (uint8_t)i;
    eph_store(h, table, i, chunk);
  }
  eph_heap_stats grown = stats_of(h);
  assert_true(grown.old_committed >= N * 64 * KiB);
  assert_int_equal(grown.full_gcs, 0);
  assert_int_equal(grown.heap_committed, grown.new_space_bytes + grown.old_committed);

  /* Keep every tenth chunk. */
  for (size_t i = 0; i < N; i++)
    if (i % 10) eph_store(h, table, i, EPH_NIL);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.old_used, eph_object_bytes(table) + (N / 10) * (8 + 64 * KiB));
  if (s.old_committed >= grown.old_committed / 4)
    fail_msg("old space did not shrink: %ju -> %ju", (uintmax_t)grown.old_committed, (uintmax_t)s.old_committed);
  if (s.old_committed - s.old_used > 2 * MiB + 64 * KiB)
    fail_msg("%ju bytes free after shrinking, threshold 2M", (uintmax_t)(s.old_committed - s.old_used));
  assert_int_equal(s.heap_committed, s.new_space_bytes + s.old_committed);
  assert_true(s.peak_committed >= grown.heap_committed);
  for (size_t i = 0; i < N; i += 10) assert_int_equal(eph_bytes(eph_slot(table, i))[0], (uint8_t)i);
  assert_verifies(h);

  /* Freeing the rest and growing again works. */
  table = EPH_NIL;
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(stats_of(h).old_used, 0);
  assert_true(stats_of(h).old_committed <= 2 * MiB + 64 * KiB);
  for (int i = 0; i < 100; i++) assert_true(eph_is_ptr(eph_alloc_bytes(h, B, 64 * KiB)));
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_no_shrink_below_threshold(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K,headroom=1M,shrink=1G,ratio=100");
  for (int i = 0; i < 200; i++) eph_alloc_bytes(h, B, 64 * KiB);
  uint64_t committed = stats_of(h).old_committed;
  assert_true(committed >= 200 * 64 * KiB);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(stats_of(h).old_used, 0);
  assert_int_equal(stats_of(h).old_committed, committed);
  eph_heap_free(h);
}

static void test_growth_in_headroom_steps(void **state) {
  (void)state;
  const size_t headroom = 4 * MiB;
  eph_heap *h = make("eden=256K,headroom=4M,ratio=100");
  EPH_FRAME(h);
  EPH_LOCAL(h, list);
  uint64_t committed = stats_of(h).old_committed;
  int steps = 0;
  for (int i = 0; i < 20000; i++) { /* 20000 * 1 KiB, all kept */
    eph_value node = eph_alloc_old(h, P, 127);
    eph_store(h, node, 0, list);
    eph_store(h, node, 1, eph_int(i));
    list = node;
    uint64_t now = stats_of(h).old_committed;
    if (now > committed) {
      if (now - committed < headroom)
        fail_msg("old space grew by %ju bytes, headroom is %zu", (uintmax_t)(now - committed), headroom);
      steps++;
    }
    committed = now;
  }
  assert_true(steps >= 3);
  assert_true(committed >= 20000 * KiB);
  assert_true(committed < 20000 * KiB + 2 * headroom);

  /* One object larger than the headroom grows old space by at least its size. */
  uint64_t before = stats_of(h).old_committed;
  uint64_t free_before = before - stats_of(h).old_used;
  eph_value big = eph_alloc_bytes(h, B, 10 * MiB);
  assert_true(eph_is_ptr(big));
  uint64_t after = stats_of(h).old_committed;
  assert_true(after >= before + 10 * MiB - free_before);
  int expect = 19999;
  for (eph_value n = list; n != EPH_NIL; n = eph_slot(n, 0), expect--)
    assert_true(eph_int_value(eph_slot(n, 1)) == expect);
  assert_int_equal(expect, -1);
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_old_garbage_reclaimed),
      cmocka_unit_test(test_compaction_moves_down_and_preserves),
      cmocka_unit_test(test_new_space_empty_after_full_gc),
      cmocka_unit_test(test_gc_ratio_triggers_full_gc),
      cmocka_unit_test(test_gc_ratio_with_pretenured_garbage),
      cmocka_unit_test(test_shrink_after_freeing),
      cmocka_unit_test(test_no_shrink_below_threshold),
      cmocka_unit_test(test_growth_in_headroom_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
