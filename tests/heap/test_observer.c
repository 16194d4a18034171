/* Statistics, the event log and the observer hooks (including eph_gc_fate). */
#include "heap_test.h"

static eph_class_id P, B;

static eph_heap *make(const char *spec) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return h;
}

/* --- statistics and events ------------------------------------------------ */

static void test_counts_and_events(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  EPH_FRAME(h);
  EPH_LOCAL(h, keep);
  keep = eph_alloc(h, P, 3);
  eph_heap_stats s0 = stats_of(h);
  assert_int_equal(s0.scavenges, 0);
  assert_int_equal(s0.full_gcs, 0);
  size_t n = 99;
  eph_heap_events(h, &n);
  assert_int_equal(n, 0);

  const eph_gc_kind kinds[] = {EPH_GC_SCAVENGE, EPH_GC_SCAVENGE, EPH_GC_FULL, EPH_GC_SCAVENGE, EPH_GC_FULL};
  uint64_t allocated_at[5];
  uint64_t used_before[5];
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 100; j++) eph_alloc(h, P, 4); /* 40 bytes of garbage each */
    allocated_at[i] = eph_heap_allocated(h);
    used_before[i] = stats_of(h).used;
    assert_int_equal(eph_collect(h, kinds[i]), EPH_OK);
  }
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.scavenges, 3);
  assert_int_equal(s.full_gcs, 2);
  const eph_gc_event *ev = eph_heap_events(h, &n);
  assert_int_equal(n, 5);
  for (int i = 0; i < 5; i++) {
    assert_int_equal(ev[i].kind, kinds[i]);
    assert_int_equal(ev[i].index, (uint64_t)i + 1);
    assert_int_equal(ev[i].allocated, allocated_at[i]);
    assert_int_equal(ev[i].used_before, used_before[i]);
    assert_int_equal(ev[i].used_before - ev[i].used_after, 100 * 40);
    assert_int_equal(ev[i].used_after, eph_object_bytes(keep));
    if (i > 0) assert_true(ev[i].start_ns >= ev[i - 1].start_ns + ev[i - 1].duration_ns);
  }
  /* The first scavenge copied keep; the full GC compacted nothing, tenured it. */
  assert_int_equal(ev[0].bytes_copied, eph_object_bytes(keep));
  assert_int_equal(ev[0].bytes_promoted, 0);
  assert_int_equal(ev[2].bytes_promoted, eph_object_bytes(keep));
  assert_int_equal(ev[4].old_committed, s.old_committed);
  assert_int_equal(s.bytes_reclaimed, 5 * 100 * 40);
  assert_int_equal(s.bytes_allocated, eph_heap_allocated(h));
  assert_int_equal(s.used, eph_object_bytes(keep));
  assert_int_equal(s.old_used, eph_object_bytes(keep));
  assert_true(s.peak_used >= used_before[0]);
  assert_int_equal(s.heap_committed, s.new_space_bytes + s.old_committed);
  assert_true(s.peak_committed >= s.heap_committed);
  assert_true(s.new_space_bytes >= 15 * MiB);
  assert_true(s.max_pause_ns >= ev[0].duration_ns);
  assert_true(s.scavenge_ns + s.full_ns >= s.max_pause_ns);
  assert_true(s.wall_ns >= s.gc_wall_ns);
  assert_true(s.gc_wall_ns >= s.max_pause_ns);
  uint64_t sum = s.mutator_wall_ns + s.gc_wall_ns;
  assert_true(sum <= s.wall_ns + 1000000 && sum + 1000000 >= s.wall_ns);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_events_off(void **state) {
  (void)state;
  eph_heap *h = make("events=0");
  for (int i = 0; i < 3; i++) eph_collect(h, EPH_GC_SCAVENGE);
  eph_collect(h, EPH_GC_FULL);
  size_t n = 99;
  eph_heap_events(h, &n);
  assert_int_equal(n, 0);
  eph_heap_stats s = stats_of(h);
  assert_int_equal(s.scavenges, 3);
  assert_int_equal(s.full_gcs, 1);
  eph_heap_free(h);
}

static void test_stats_print(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  for (int i = 0; i < 1000; i++) eph_alloc(h, P, 2);
  eph_collect(h, EPH_GC_SCAVENGE);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  eph_heap_stats_print(h, f);
  fclose(f);
  assert_true(len > 40);
  assert_contains(text, "scaveng");
  free(text);
  eph_heap_free(h);
}

/* --- observer --------------------------------------------------------------- */

typedef struct trace {
  char log[256];
  size_t len;
  eph_gc_kind start_kinds[64], collect_kinds[64], end_kinds[64];
  size_t starts, collects;
  uint64_t end_index[64];
  size_t ends;
  size_t allocs;
  eph_value last_alloc;
  int nested;         /* allocate inside on_alloc */
  eph_value nested_seen; /* obj as on_alloc's root saw it after the nested allocation */
} trace;

static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  trace *t = data;
  t->allocs++;
  t->last_alloc = obj;
  assert_true(eph_is_ptr(obj));
  if (t->nested) {
    EPH_FRAME(h);
    EPH_ROOT(h, obj);
    eph_value extra = eph_alloc(h, P, 1); /* not reported again */
    assert_true(eph_is_ptr(extra));
    t->nested_seen = obj;
    EPH_UNFRAME(h);
  }
}

static void on_gc_start(void *data, eph_heap *h, eph_gc_kind kind) {
  trace *t = data;
  (void)h;
  if (t->len < sizeof t->log - 1) t->log[t->len++] = 'S';
  if (t->starts < 64) t->start_kinds[t->starts] = kind;
  t->starts++;
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  trace *t = data;
  (void)h;
  if (t->len < sizeof t->log - 1) t->log[t->len++] = 'C';
  if (t->collects < 64) t->collect_kinds[t->collects] = kind;
  t->collects++;
}

static void on_gc_end(void *data, eph_heap *h, const eph_gc_event *ev) {
  trace *t = data;
  (void)h;
  if (t->len < sizeof t->log - 1) t->log[t->len++] = 'E';
  if (t->ends < 64) {
    t->end_kinds[t->ends] = ev->kind;
    t->end_index[t->ends] = ev->index;
  }
  t->ends++;
}

static void test_gc_hooks_in_order(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K");
  trace t;
  memset(&t, 0, sizeof t);
  eph_observer obs = {.data = &t, .on_gc_start = on_gc_start, .on_collect = on_collect, .on_gc_end = on_gc_end};
  eph_heap_set_observer(h, &obs);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_string_equal(t.log, "SCE");
  eph_collect(h, EPH_GC_FULL);
  assert_string_equal(t.log, "SCESCE");
  assert_int_equal(t.start_kinds[0], EPH_GC_SCAVENGE);
  assert_int_equal(t.start_kinds[1], EPH_GC_FULL);
  assert_int_equal(t.collect_kinds[0], EPH_GC_SCAVENGE);
  assert_int_equal(t.collect_kinds[1], EPH_GC_FULL);
  assert_int_equal(t.end_kinds[0], EPH_GC_SCAVENGE);
  assert_int_equal(t.end_kinds[1], EPH_GC_FULL);
  assert_int_equal(t.end_index[0], 1);
  assert_int_equal(t.end_index[1], 2);
  assert_int_equal(t.allocs, 0); /* no on_alloc installed */

  /* Collections caused by allocation report too: one triple each. */
  for (int i = 0; i < 50000; i++) eph_alloc(h, P, 3);
  eph_heap_stats s = stats_of(h);
  assert_true(s.scavenges >= 3);
  assert_int_equal(t.ends, s.scavenges + s.full_gcs);
  assert_int_equal(t.starts, t.ends);
  assert_int_equal(t.len, 3 * t.ends);
  for (size_t i = 0; i < t.len; i += 3) assert_memory_equal(t.log + i, "SCE", 3);

  /* Removing the observer stops the calls. */
  eph_heap_set_observer(h, NULL);
  size_t len = t.len;
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_int_equal(t.len, len);
  eph_heap_free(h);
}

static void test_on_alloc_every_allocation(void **state) {
  (void)state;
  eph_heap *h = make(NULL);
  trace t;
  memset(&t, 0, sizeof t);
  eph_observer obs = {.data = &t, .on_alloc = on_alloc};
  eph_heap_set_observer(h, &obs);
  eph_value o;
  o = eph_alloc(h, P, 2);
  assert_int_equal(t.allocs, 1);
  assert_int_equal(t.last_alloc, o);
  o = eph_alloc_bytes(h, B, 3);
  assert_int_equal(t.allocs, 2);
  assert_int_equal(t.last_alloc, o);
  o = eph_alloc_old(h, P, 2);
  assert_int_equal(t.allocs, 3);
  assert_int_equal(t.last_alloc, o);
  o = eph_alloc_bytes_old(h, B, 3);
  assert_int_equal(t.allocs, 4);
  o = eph_alloc_bytes(h, B, MiB); /* large */
  assert_int_equal(t.allocs, 5);
  assert_int_equal(t.last_alloc, o);
  for (int i = 0; i < 10000; i++) {
    o = eph_alloc(h, P, 1);
    assert_int_equal(t.last_alloc, o);
  }
  assert_int_equal(t.allocs, 10005);
  /* Failed allocations are not reported. */
  assert_int_equal(eph_alloc_bytes(h, B, EPH_MAX_PAYLOAD_BYTES + 1), EPH_NIL);
  assert_int_equal(t.allocs, 10005);
  eph_heap_set_observer(h, NULL);
  eph_alloc(h, P, 1);
  assert_int_equal(t.allocs, 10005);
  eph_heap_free(h);
}

static void test_on_alloc_may_allocate(void **state) {
  (void)state;
  /* stress=1: the nested allocation scavenges and moves obj. */
  eph_heap *h = make("stress=1,verify=1");
  trace t;
  memset(&t, 0, sizeof t);
  t.nested = 1;
  eph_observer obs = {.data = &t, .on_alloc = on_alloc};
  eph_heap_set_observer(h, &obs);
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  o = eph_alloc(h, P, 2);
  assert_int_equal(t.allocs, 1); /* the nested allocation is not reported */
  assert_int_not_equal(t.last_alloc, t.nested_seen); /* it moved */
  assert_int_equal(o, t.nested_seen);                /* and the caller got the new address */
  assert_int_equal(eph_class_of(o), P);
  assert_int_equal(eph_slot_count(o), 2);
  eph_store(h, o, 0, eph_int(1));
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_set_observer(h, NULL);
  eph_heap_free(h);
}

/* --- eph_gc_fate ------------------------------------------------------------ */

typedef struct fates {
  eph_value live, dead, old_live, old_dead;
  eph_value fate_live, fate_dead, fate_old_live, fate_old_dead;
  eph_class_id dead_class;
  intptr_t dead_slot;
  int calls;
} fates;

static void fate_on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  fates *f = data;
  (void)kind;
  f->calls++;
  f->fate_live = eph_gc_fate(h, f->live);
  f->fate_dead = eph_gc_fate(h, f->dead);
  f->fate_old_live = eph_gc_fate(h, f->old_live);
  f->fate_old_dead = eph_gc_fate(h, f->old_dead);
  /* Dead objects are still readable here. */
  f->dead_class = eph_class_of(f->dead);
  f->dead_slot = eph_int_value(eph_slot(f->dead, 0));
}

/* --- the stamping barrier (observer.store_clock) -------------------------- */

static int stores_seen;
static void count_store(void *data, eph_heap *h, eph_value obj, size_t i, eph_value old, eph_value v) {
  (void)data, (void)h, (void)obj, (void)i, (void)old, (void)v;
  stores_seen++;
}

static void test_store_clock(void **state) {
  (void)state;
  eph_gc_params params = params_with("verify=1");
  params.trailer_words = 2;
  eph_error err;
  eph_heap *h = NULL;
  assert_int_equal(eph_heap_new(&params, &h, &err), EPH_OK);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  uint64_t clock = 100;
  eph_observer obs = {.store_clock = &clock, .store_stamp_word = 1};
  eph_heap_set_observer(h, &obs);
  EPH_FRAME(h);
  EPH_LOCAL(h, holder);
  EPH_LOCAL(h, a);
  EPH_LOCAL(h, b);
  holder = eph_alloc(h, P, 2);
  a = eph_alloc(h, P, 1);
  b = eph_alloc(h, P, 1);
  eph_store(h, holder, 0, a); /* overwrites nil: nothing stamped */
  assert_int_equal(eph_trailer(a)[1], 0);
  clock = 250;
  eph_store(h, holder, 0, b); /* a leaves the slot at 250 */
  assert_int_equal(eph_trailer(a)[1], 250);
  assert_int_equal(eph_trailer(a)[0], 0); /* only the word asked for */
  assert_int_equal(eph_trailer(b)[1], 0);
  clock = 200; /* an earlier clock never lowers a stamp */
  eph_store(h, holder, 0, a);
  assert_int_equal(eph_trailer(b)[1], 200);
  eph_store(h, holder, 0, eph_int(7));
  assert_int_equal(eph_trailer(a)[1], 250);
  eph_store(h, holder, 1, a); /* an integer overwritten: nothing to stamp */
  /* The old-to-young barrier still runs: an old holder remembers a young value. */
  eph_collect(h, EPH_GC_FULL);
  assert_false(eph_is_young(h, holder));
  b = eph_alloc(h, P, 1);
  eph_store(h, holder, 1, b);
  assert_true(eph_trailer(a)[1] == 250 || eph_trailer(a)[1] == 200); /* a moved with its trailer */
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_ptr_equal((void *)eph_slot(holder, 1), (void *)b);
  assert_int_equal(eph_heap_verify(h), EPH_OK);
  /* on_store, when set, is called instead. */
  stores_seen = 0;
  obs.on_store = count_store;
  eph_heap_set_observer(h, &obs);
  uint64_t before = eph_trailer(b)[1];
  clock = 999;
  eph_store(h, holder, 1, eph_int(1));
  assert_int_equal(stores_seen, 1);
  assert_int_equal(eph_trailer(b)[1], before);
  eph_store_immediate(h, holder, 1, EPH_NIL); /* watched too */
  assert_int_equal(stores_seen, 2);
  assert_true(eph_slot(holder, 1) == EPH_NIL);
  eph_heap_set_observer(h, NULL);
  clock = 5000;
  eph_store(h, holder, 0, b); /* no observer: no stamp */
  eph_store(h, holder, 0, eph_int(0));
  assert_int_equal(eph_trailer(b)[1], before);
  /* eph_store_immediate given a reference takes the barrier: the old
   * holder remembers the young value, which the scavenge then updates. */
  eph_store_immediate(h, holder, 1, eph_int(3));
  assert_true(eph_slot(holder, 1) == eph_int(3));
  EPH_LOCAL(h, old_holder);
  old_holder = eph_alloc_old(h, P, 1); /* old, and not remembered yet */
  b = eph_alloc(h, P, 1);
  eph_value young_b = b;
  eph_store_immediate(h, old_holder, 0, b);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_true(b != young_b);
  assert_ptr_equal((void *)eph_slot(old_holder, 0), (void *)b);
  assert_int_equal(eph_heap_verify(h), EPH_OK);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

static void test_gc_fate(void **state) {
  (void)state;
  eph_heap *h = make("ratio=100");
  fates f;
  memset(&f, 0, sizeof f);
  eph_observer obs = {.data = &f, .on_collect = fate_on_collect};
  eph_heap_set_observer(h, &obs);
  EPH_FRAME(h);
  EPH_LOCAL(h, live);
  EPH_LOCAL(h, old_live);

  /* A scavenge. */
  eph_value garbage_old = eph_alloc_old(h, P, 1);
  old_live = eph_alloc_old(h, P, 1);
  live = eph_alloc(h, P, 1);
  eph_value dead = eph_alloc(h, P, 1);
  eph_store(h, dead, 0, eph_int(66));
  f.live = live;
  f.dead = dead;
  f.old_live = old_live;
  f.old_dead = garbage_old;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK);
  assert_int_equal(f.calls, 1);
  assert_int_not_equal(live, f.live);
  assert_int_equal(f.fate_live, live);      /* the new address */
  assert_int_equal(f.fate_dead, EPH_NIL);   /* dead */
  assert_int_equal(f.dead_class, P);
  assert_true(f.dead_slot == 66);
  assert_int_equal(f.fate_old_live, old_live); /* not collected: unchanged */
  assert_int_equal(f.fate_old_dead, garbage_old);

  /* A full GC: garbage_old dies, old_live slides down over it. */
  dead = eph_alloc(h, P, 1);
  eph_store(h, dead, 0, eph_int(77));
  f.live = live;
  f.dead = dead;
  f.old_live = old_live;
  f.old_dead = garbage_old;
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(f.calls, 2);
  assert_int_equal(f.fate_live, live);
  assert_false(eph_is_young(h, live));
  assert_int_equal(f.fate_dead, EPH_NIL);
  assert_true(f.dead_slot == 77);
  assert_int_equal(f.fate_old_dead, EPH_NIL);
  assert_int_equal(f.fate_old_live, old_live);
  assert_true(old_live < f.old_live); /* it moved down */
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_set_observer(h, NULL);
  eph_heap_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_and_events),
      cmocka_unit_test(test_events_off),
      cmocka_unit_test(test_stats_print),
      cmocka_unit_test(test_gc_hooks_in_order),
      cmocka_unit_test(test_on_alloc_every_allocation),
      cmocka_unit_test(test_on_alloc_may_allocate),
      cmocka_unit_test(test_gc_fate),
      cmocka_unit_test(test_store_clock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
