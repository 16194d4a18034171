/* Statistics, the event log and the observer hooks (including eph_gc_fate);
 * several observers on one heap, a profile among them. */
#include <unistd.h>

#include "ephemera/format.h"
#include "ephemera/profile.h"
#include "heap_test.h"

static eph_class_id P, B;

static eph_heap *with_classes(eph_heap *h) {
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return h;
}

static eph_heap *make(const char *spec) { return with_classes(heap_with(spec)); }

/* A heap of these parameters (trailer words, which a spec does not set). */
static eph_heap *make_with(const eph_gc_params *params) {
  eph_error err;
  eph_heap *h = NULL;
  if (eph_heap_new(params, &h, &err) != EPH_OK) fail_msg("eph_heap_new: %s", err.message);
  return with_classes(h);
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
  const eph_site *last_site; /* eph_heap_site at the last on_alloc */
  int nested;         /* allocate inside on_alloc */
  eph_value nested_seen; /* obj as on_alloc's root saw it after the nested allocation */
  char name;          /* several observers: each notes its hooks in `order` too */
  eph_observer_reg *reg;
  bool leave_at_gc_start; /* removes itself in on_gc_start */
  size_t frees;
} trace;

/* The hooks of all observers, in the order they ran: letter, then name. */
static char order[512];
static size_t order_len;

static void note_order(const trace *t, char what) {
  if (!t->name || order_len + 2 >= sizeof order) return;
  order[order_len++] = what;
  order[order_len++] = t->name;
  order[order_len] = 0;
}

static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  trace *t = data;
  note_order(t, 'A');
  t->allocs++;
  t->last_alloc = obj;
  t->last_site = eph_heap_site(h);
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
  note_order(t, 'S');
  if (t->leave_at_gc_start) eph_heap_remove_observer(h, t->reg);
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  trace *t = data;
  (void)h;
  if (t->len < sizeof t->log - 1) t->log[t->len++] = 'C';
  if (t->collects < 64) t->collect_kinds[t->collects] = kind;
  t->collects++;
  note_order(t, 'C');
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
  note_order(t, 'E');
}

static void on_heap_free(void *data, eph_heap *h) {
  trace *t = data;
  (void)h;
  t->frees++;
  note_order(t, 'F');
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
  eph_heap *h = make_with(&params);
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

/* --- several observers ------------------------------------------------------- */

static trace *new_trace(char name) {
  trace *t = calloc(1, sizeof *t);
  t->name = name;
  return t;
}

static eph_observer_reg *add_trace(eph_heap *h, trace *t) {
  eph_observer obs = {.data = t,
                      .tool = t,
                      .on_alloc = on_alloc,
                      .on_gc_start = on_gc_start,
                      .on_collect = on_collect,
                      .on_gc_end = on_gc_end,
                      .on_heap_free = on_heap_free};
  t->reg = eph_heap_add_observer(h, &obs);
  assert_non_null(t->reg);
  return t->reg;
}

static void alloc_n(eph_heap *h, int n) {
  for (int i = 0; i < n; i++) eph_alloc(h, P, 1); /* 16 bytes each */
}

static void test_two_observers(void **state) {
  (void)state;
  eph_heap *h = make("eden=256K");
  trace *a = new_trace('a'), *b = new_trace('b');
  eph_observer_reg *ra = add_trace(h, a), *rb = add_trace(h, b);
  assert_ptr_equal(eph_heap_find_observer(h, a), ra);
  assert_ptr_equal(eph_heap_find_observer(h, b), rb);
  assert_null(eph_heap_find_observer(h, &order));
  assert_ptr_equal(eph_observer_data(rb), b);

  /* Every hook of each, in the order they were added. */
  order_len = 0;
  eph_collect(h, EPH_GC_SCAVENGE);
  eph_collect(h, EPH_GC_FULL);
  assert_string_equal(order, "SaSbCaCbEaEbSaSbCaCbEaEb");
  assert_string_equal(a->log, "SCESCE");
  assert_string_equal(b->log, "SCESCE");
  assert_int_equal(a->end_index[1], 2);
  assert_int_equal(b->end_index[1], 2);

  /* Both see every allocation (the default), the same object. */
  order_len = 0;
  eph_value o = eph_alloc(h, P, 2);
  assert_string_equal(order, "AaAb");
  assert_int_equal(a->last_alloc, o);
  assert_int_equal(b->last_alloc, o);
  o = eph_alloc_old(h, P, 1);
  assert_int_equal(b->last_alloc, o);
  o = eph_alloc_bytes(h, B, MiB); /* large */
  assert_int_equal(a->last_alloc, o);
  assert_int_equal(b->last_alloc, o);
  assert_int_equal(a->allocs, 3);
  assert_int_equal(b->allocs, 3);

  /* Each its own sample points: every 3rd object for a, every 5th for b,
   * then every 400 bytes for b: each 16-byte object is a sample point for
   * the observers whose point it is, and no other. */
  eph_observer_sample_next(h, ra, 3, 0);
  eph_observer_sample_next(h, rb, 5, 0);
  a->allocs = b->allocs = 0;
  alloc_n(h, 30000);
  assert_int_equal(a->allocs, 10000);
  assert_int_equal(b->allocs, 6000);
  eph_observer_sample_next(h, rb, 0, 400);
  a->allocs = b->allocs = 0;
  alloc_n(h, 26000);
  assert_true(a->allocs == 8666 || a->allocs == 8667);
  assert_int_equal(b->allocs, 1000); /* the 26th object of each 400 bytes ends past them */
  assert_true(stats_of(h).scavenges > 3);

  /* b leaves; a goes on at its own points, through the heap's switch back
   * to calling one observer directly, and is alone in every hook. */
  eph_heap_remove_observer(h, rb);
  assert_null(eph_heap_find_observer(h, b));
  eph_observer_sample_next(h, ra, 3, 0);
  a->allocs = b->allocs = 0;
  alloc_n(h, 30000);
  assert_int_equal(a->allocs, 10000);
  assert_int_equal(b->allocs, 0);
  order_len = 0;
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_string_equal(order, "SaCaEa");

  /* b again, last; a leaves from its own on_gc_start: b sees that
   * collection whole, a nothing of it after its start. */
  rb = add_trace(h, b);
  a->leave_at_gc_start = true;
  order_len = 0;
  eph_collect(h, EPH_GC_FULL);
  assert_string_equal(order, "SaSbCbEb");
  assert_null(eph_heap_find_observer(h, a));
  b->allocs = 0;
  alloc_n(h, 10);
  assert_int_equal(b->allocs, 10); /* every allocation since it was added */

  /* Both get on_heap_free. */
  add_trace(h, a);
  a->leave_at_gc_start = false;
  order_len = 0;
  eph_heap_free(h);
  assert_string_equal(order, "FbFa");
  free(a);
  free(b);
}

/* An observer that allocates in on_alloc moves obj (stress=1): the next
 * one sees it where it is, with its site, and nobody sees the nested
 * allocation. */
static void test_chain_on_alloc_may_allocate(void **state) {
  (void)state;
  eph_heap *h = make("stress=1,verify=1");
  trace *a = new_trace('a'), *b = new_trace('b');
  a->nested = 1;
  add_trace(h, a);
  add_trace(h, b);
  EPH_FRAME(h);
  EPH_LOCAL(h, o);
  EPH_AT(h);
  o = eph_alloc(h, P, 2);
  assert_int_equal(a->allocs, 1);
  assert_int_equal(b->allocs, 1);
  assert_int_not_equal(a->last_alloc, a->nested_seen); /* it moved */
  assert_int_equal(b->last_alloc, o);
  assert_int_equal(a->nested_seen, o);
  assert_non_null(a->last_site);
  assert_ptr_equal(b->last_site, a->last_site); /* though a allocated since */
  assert_verifies(h);
  EPH_UNFRAME(h);
  eph_heap_set_observer(h, NULL);
  eph_heap_free(h);
  free(a);
  free(b);
}

/* Stores to two observers: one's stamping barrier, the other's on_store. */
static void test_chain_stores(void **state) {
  (void)state;
  eph_gc_params params = params_with(NULL);
  params.trailer_words = 2;
  eph_heap *h = make_with(&params);
  uint64_t clock = 70;
  eph_observer stamping = {.store_clock = &clock, .store_stamp_word = 1};
  eph_observer counting = {.on_store = count_store};
  eph_observer_reg *r = eph_heap_add_observer(h, &stamping);
  eph_heap_add_observer(h, &counting);
  stores_seen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, holder);
  EPH_LOCAL(h, a);
  holder = eph_alloc(h, P, 1);
  a = eph_alloc(h, P, 1);
  eph_store(h, holder, 0, a);
  eph_store(h, holder, 0, eph_int(1)); /* a leaves the slot at 70 */
  assert_int_equal(eph_trailer(a)[1], 70);
  assert_int_equal(stores_seen, 2);
  eph_heap_remove_observer(h, r); /* counting alone, called directly */
  clock = 90;
  eph_store(h, holder, 0, a);
  eph_store(h, holder, 0, eph_int(2));
  assert_int_equal(eph_trailer(a)[1], 70);
  assert_int_equal(stores_seen, 4);
  EPH_UNFRAME(h);
  eph_heap_free(h);
}

/* A program with a known shape for the profile: a ring of slots in an old
 * object (*ring, a root of the caller's), each allocation a random slot's
 * (most die young, some live long), one in sixteen in old space. */
static void run_program(eph_heap *h, int n, eph_value *ring) {
  *ring = eph_alloc_old(h, P, 64);
  uint64_t x = 12345;
  for (int i = 0; i < n; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    eph_value o = (x >> 60) == 0 ? eph_alloc_old(h, P, 2) : eph_alloc(h, P, 1 + (size_t)(x >> 62));
    eph_store(h, o, 0, eph_int(i));
    if ((x >> 40) % 4 == 0) eph_store(h, *ring, (size_t)(x >> 20) % 64, o);
  }
}

/* The profile of run_program under spec, with a counting observer beside
 * the profile (added before it or after it) or none; the observer's
 * sample points are every 7th allocation. */
static eph_file *profile_of(const char *spec_text, int beside, trace *t) {
  eph_profile_spec spec;
  eph_error err;
  eph_profile_spec_init(&spec);
  assert_int_equal(eph_profile_spec_parse(&spec, spec_text, &err), EPH_OK);
  snprintf(spec.out, sizeof spec.out, "/tmp/eph-test-observers-%d.eph", (int)getpid());
  eph_gc_params params = params_with("eden=256K");
  eph_profile_prepare_params(&spec, &params);
  eph_heap *h = make_with(&params);
  if (beside == 1) eph_observer_sample_next(h, add_trace(h, t), 7, 0);
  if (eph_profile_start(h, &spec, NULL, 0, &err) != EPH_OK) fail_msg("start: %s", err.message);
  assert_int_equal(eph_profile_start(h, &spec, NULL, 0, &err), EPH_ERR_INVALID); /* one profile a heap */
  if (beside == 2) eph_observer_sample_next(h, add_trace(h, t), 7, 0);
  EPH_FRAME(h);
  EPH_LOCAL(h, ring); /* alive at the stop: its slots' objects are censored */
  run_program(h, 40000, &ring);
  if (eph_profile_stop(h, NULL, &err) != EPH_OK) fail_msg("stop: %s", err.message);
  EPH_UNFRAME(h);
  eph_heap_free(h);
  eph_file *prof;
  if (eph_file_load(spec.out, &prof, &err) != EPH_OK) fail_msg("load: %s", err.message);
  unlink(spec.out);
  return prof;
}

static void assert_same_stamp(const eph_stamp *a, const eph_stamp *b) {
  assert_int_equal(a->bytes, b->bytes);
  assert_int_equal(a->scavenges, b->scavenges);
  assert_int_equal(a->full_gcs, b->full_gcs);
}

/* A profile beside another observer holds the records it holds alone
 * (all but their wall-clock times), and the observer sees its own sample
 * points and every collection: in gc mode walking eden (old-space
 * allocations are sample points for the profile only) and at sample
 * points, in finalization mode (whose on_alloc allocates) and in Merlin's
 * (every allocation, stores stamped). */
static void test_profile_beside_observer(void **state) {
  (void)state;
  static const char *const specs[] = {"mode=gc,sample=1/1,threads=1", "mode=gc,sample=1/10,seed=3,threads=1",
                                      "mode=finalization,sample=1/10,seed=5,threads=1", "mode=merlin,threads=1"};
  for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
    eph_file *alone = profile_of(specs[k], 0, NULL);
    assert_true(alone->nrecords > 1000);
    size_t censored = 0;
    for (size_t i = 0; i < alone->nrecords; i++) censored += alone->records[i].death_kind == EPH_DEATH_CENSORED;
    assert_true(censored > 0 && censored < 66); /* the ring and what it holds, sampled */
    for (int beside = 1; beside <= 2; beside++) {
      trace *t = new_trace(0);
      eph_file *with = profile_of(specs[k], beside, t);
      if (with->nrecords != alone->nrecords)
        fail_msg("%s, observer added %s: %zu records, %zu alone", specs[k], beside == 1 ? "first" : "second",
                 with->nrecords, alone->nrecords);
      for (size_t i = 0; i < alone->nrecords; i++) {
        const eph_record *x = &alone->records[i], *y = &with->records[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->class_id, y->class_id);
        assert_int_equal(x->size, y->size);
        assert_true(x->weight == y->weight);
        assert_int_equal(x->death_kind, y->death_kind);
        assert_same_stamp(&x->birth, &y->birth);
        assert_same_stamp(&x->death, &y->death);
        assert_same_stamp(&x->alive_until, &y->alive_until);
      }
      assert_int_equal(with->ngcs, alone->ngcs);
      /* the program's 40 001 allocations (the profile's own count for none) */
      assert_int_equal(t->allocs, 40001 / 7);
      assert_int_equal(t->ends, alone->ngcs);
      assert_int_equal(t->starts, t->ends);
      eph_file_free(with);
      free(t);
    }
    eph_file_free(alone);
  }
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
      cmocka_unit_test(test_two_observers),
      cmocka_unit_test(test_chain_on_alloc_may_allocate),
      cmocka_unit_test(test_chain_stores),
      cmocka_unit_test(test_profile_beside_observer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
