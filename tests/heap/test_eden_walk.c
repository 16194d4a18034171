/*
 * Eden-walk mode (observer.h): after every collection the walk must visit
 * exactly the young objects allocated since the last one, in allocation
 * order, each with the site its EPH_AT gave it (or none), dead exactly when
 * eph_gc_fate says so; old-space allocations must reach on_alloc instead.
 * A random mutator checks it against its own list of allocations, with
 * the collections eden's size brings, stress modes and the verifier.
 * With eden pairs the walk a scavenge began is walked again just before
 * the next collection, after the mutator went on in the other eden: it
 * must see the same objects, fates and sites.  Before each collection, and
 * now and then between, a walk of eden as it is (eph_eden_walk_begin) must
 * visit the young allocations made since the last one, in order, with
 * their sites; inside a collection that walk is empty.  One ended with
 * eph_eden_walk_end leaves the objects it visited out of the walks after
 * it, the collection's too.
 */
#include "heap_test.h"

#define MAX_YOUNG 500000
#define NROOTS 64

typedef struct allocation {
  eph_value addr;
  eph_site *site;
} allocation;

typedef struct walked_object {
  eph_value was, now;
  bool dead;
  eph_site *site;
} walked_object;

typedef struct walk_check {
  eph_heap *h;
  bool pair;                   /* eden pairs: walk the retired eden again before the next collection */
  eph_eden_walk retired;
  bool retired_pending;
  walked_object seen[MAX_YOUNG]; /* what the walk in on_collect saw, to compare */
  size_t rewalks;
  allocation young[MAX_YOUNG]; /* young allocations since the last collection */
  size_t nyoung;
  size_t walked;               /* in the walk under way */
  size_t old_expected, old_seen;
  eph_site *old_site;          /* the site of the old allocation under way */
  size_t walks, dead_seen, live_seen;
  size_t live_walks;           /* walks of eden as it is, outside a collection */
  size_t ended;                /* ... that ended with eph_eden_walk_end */
} walk_check;

static eph_class_id P, B;

static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  walk_check *c = data;
  assert_false(eph_is_young(h, obj)); /* young objects are no sample points here */
  assert_ptr_equal(eph_heap_site(h), c->old_site);
  c->old_seen++;
}

static void on_eden_object(walk_check *c, eph_value was, eph_value now, bool dead, eph_site *site) {
  assert_true(c->walked < c->nyoung);
  c->seen[c->walked] = (walked_object){was, now, dead, site};
  const allocation *a = &c->young[c->walked++];
  assert_int_equal(was, a->addr);
  assert_ptr_equal(site, a->site);
  assert_int_equal(dead, eph_gc_fate(c->h, was) == EPH_NIL);
  bool where_dead;
  assert_int_equal(now, eph_gc_where(c->h, was, &where_dead));
  assert_int_equal(dead, where_dead);
  if (dead) c->dead_seen++;
  else c->live_seen++;
}

/* A walk of eden as it is, outside a collection: the young allocations
 * since the last collection (or the last walk ended), in order, with
 * their sites.  end: eph_eden_walk_end, after which the next walks start
 * after them (not with eden pairs). */
static void walk_live(walk_check *c, bool end) {
  eph_eden_walk live;
  eph_eden_walk_begin(c->h, &live);
  eph_value obj;
  eph_site *site;
  size_t n = 0;
  while (eph_eden_walk_next_live(&live, &obj, &site)) {
    assert_true(n < c->nyoung);
    assert_int_equal(obj, c->young[n].addr);
    assert_ptr_equal(site, c->young[n].site);
    n++;
  }
  assert_int_equal(n, c->nyoung);
  c->live_walks++;
  if (!end) return;
  eph_eden_walk_end(c->h, &live);
  if (!c->pair) c->nyoung = 0, c->ended++;
}

/* Before a collection, a walk of eden as it is.  Pair mode: the last
 * scavenge's eden, walked again now that the mutator has allocated in the
 * other one, shows what it showed then. */
static void on_gc_start(void *data, eph_heap *h, eph_gc_kind kind) {
  (void)kind;
  walk_check *c = data;
  walk_live(c, false);
  if (!c->retired_pending) return;
  c->retired_pending = false;
  eph_value was, now;
  bool dead;
  eph_site *site;
  size_t i = 0;
  while (eph_gc_eden_walk_next(&c->retired, &was, &now, &dead, &site)) {
    assert_true(i < c->walked);
    assert_int_equal(was, c->seen[i].was);
    assert_int_equal(now, c->seen[i].now);
    assert_int_equal(dead, c->seen[i].dead);
    assert_ptr_equal(site, c->seen[i].site);
    assert_false(eph_is_ptr(was) && was - (eph_value)eph__fast(h)->alloc_top < 64); /* not the eden in use */
    i++;
  }
  assert_int_equal(i, c->walked);
  c->rewalks++;
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  walk_check *c = data;
  c->walked = 0;
  eph_eden_walk w;
  eph_eden_walk_begin(h, &w); /* inside a collection: empty */
  eph_value obj;
  eph_site *site;
  assert_false(eph_eden_walk_next_live(&w, &obj, &site));
  eph_gc_eden_walk_begin(h, &w);
  c->retired = w;
  c->retired_pending = c->pair && kind == EPH_GC_SCAVENGE;
  eph_value was, now;
  bool dead;
  while (eph_gc_eden_walk_next(&w, &was, &now, &dead, &site)) on_eden_object(c, was, now, dead, site);
  assert_int_equal(c->walked, c->nyoung); /* none missed */
  c->nyoung = 0;
  c->walks++;
}

/* Watches h in eden-walk mode, from now on; pair: with eden pairs. */
static walk_check *watch(eph_heap *h, bool pair) {
  walk_check *c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->h = h;
  c->pair = pair;
  eph_observer obs = {
      .data = c, .on_alloc = on_alloc, .on_gc_start = on_gc_start, .on_collect = on_collect, .on_alloc_is_leaf = true};
  eph_heap_set_observer(h, &obs);
  eph_heap_sample_next(h, 0, 0);
  assert_false(eph_heap_set_eden_pair(h, true)); /* not in eden-walk mode yet */
  eph_heap_set_eden_walk(h, true);
  assert_true(eph_heap_eden_walk(h));
  if (pair) {
    eph_heap_stats before, after;
    eph_heap_stats_get(h, &before);
    assert_true(eph_heap_set_eden_pair(h, true));
    assert_true(eph_heap_eden_pair(h));
    eph_heap_stats_get(h, &after);
    assert_true(after.heap_committed > before.heap_committed); /* the second eden counts */
  }
  return c;
}

static walk_check *start_with(const char *spec, bool pair) {
  eph_heap *h = heap_with(spec);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  B = eph_class_register(h, "Bytes", EPH_FORMAT_BYTES);
  return watch(h, pair);
}

static void finish(walk_check *c) {
  eph_collect(c->h, EPH_GC_FULL); /* walks the last allocations */
  assert_int_equal(c->nyoung, 0);
  assert_int_equal(c->old_seen, c->old_expected);
  if (c->pair) assert_true(c->rewalks > 0);
  assert_true(c->live_walks > 0);
  if (!c->pair && c->walks > 2) assert_true(c->ended > 0);
  eph_heap_set_observer(c->h, NULL);
  assert_false(eph_heap_eden_walk(c->h)); /* removing the observer ends the mode */
  assert_false(eph_heap_eden_pair(c->h));
  eph_heap_free(c->h);
  free(c);
}

/* Notes an allocation made with site s (NULL: no EPH_AT). */
static void note(walk_check *c, eph_value obj, eph_site *s) {
  assert_true(obj != EPH_NIL);
  if (!eph_is_young(c->h, obj)) return;
  assert_true(c->nyoung < MAX_YOUNG);
  c->young[c->nyoung++] = (allocation){obj, s};
}

static uint64_t rng_next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* One random allocation: three sites, none, pretenured or large objects
 * (old space, whose EPH_AT must not pass to the next young object), and an
 * EPH_AT that no allocation follows before the next one's. */
static eph_value random_alloc(walk_check *c, uint64_t *rng) {
  eph_heap *h = c->h;
  eph_site *s = NULL;
  eph_value obj;
  unsigned what = (unsigned)(rng_next(rng) % 20);
  size_t n = (size_t)(rng_next(rng) % 6);
  if (what == 0) { /* pretenured */
    EPH_AT(h);
    c->old_site = eph__fast(h)->site;
    c->old_expected++;
    obj = eph_alloc_old(h, P, n);
    c->old_site = NULL;
    assert_false(eph_is_young(h, obj));
    return obj;
  }
  if (what == 3 && rng_next(rng) % 4 == 0) { /* pretenured without a site: not the last young one's */
    c->old_expected++;
    obj = eph_alloc_old(h, P, n); /* on_alloc expects old_site, NULL */
    assert_false(eph_is_young(h, obj));
    return obj;
  }
  if (what == 1 && rng_next(rng) % 8 == 0) { /* large: old space too */
    EPH_AT(h);
    c->old_site = eph__fast(h)->site;
    c->old_expected++;
    obj = eph_alloc_bytes(h, B, 300 * KiB);
    c->old_site = NULL;
    assert_false(eph_is_young(h, obj));
    return obj;
  }
  if (what == 2) EPH_AT(h); /* overridden by the EPH_AT below */
  switch (what % 4) {
    case 0: EPH_AT(h); s = eph__fast(h)->site; obj = eph_alloc(h, P, n); break;
    case 1: EPH_AT(h); s = eph__fast(h)->site; obj = eph_alloc_bytes(h, B, n * 5); break;
    case 2: EPH_AT(h); s = eph__fast(h)->site; obj = eph_alloc(h, P, n + 2); break;
    default: obj = eph_alloc(h, P, n); break; /* no site */
  }
  note(c, obj, s);
  return obj;
}

static void random_mutator_with(const char *spec, int steps, uint64_t seed, bool pair) {
  walk_check *c = start_with(spec, pair);
  eph_heap *h = c->h;
  eph_value roots[NROOTS];
  EPH_FRAME(h);
  for (int i = 0; i < NROOTS; i++) {
    roots[i] = EPH_NIL;
    eph_root_push(h, &roots[i]);
  }
  uint64_t rng = seed;
  for (int step = 0; step < steps; step++) {
    eph_value obj = random_alloc(c, &rng);
    unsigned r = (unsigned)(rng_next(&rng) % 100);
    if (r < 30) roots[rng_next(&rng) % NROOTS] = obj;
    else if (r < 50) { /* link it from a kept object */
      eph_value holder = roots[rng_next(&rng) % NROOTS];
      if (holder != EPH_NIL && eph_format_of(holder) == EPH_FORMAT_POINTERS && eph_slot_count(holder) > 0)
        eph_store(h, holder, rng_next(&rng) % eph_slot_count(holder), obj);
    } else if (r == 50 && rng_next(&rng) % 16 == 0) eph_collect(h, EPH_GC_SCAVENGE);
    else if (r == 51 && rng_next(&rng) % 64 == 0) eph_collect(h, EPH_GC_FULL);
    else if (r == 52) roots[rng_next(&rng) % NROOTS] = EPH_NIL;
    else if (r == 53 && rng_next(&rng) % 4 == 0) walk_live(c, true);
  }
  EPH_UNFRAME(h);
  assert_true(c->walks > 0);
  assert_true(c->dead_seen > 0 && c->live_seen > 0);
  finish(c);
}

static void random_mutator(const char *spec, int steps, uint64_t seed) {
  random_mutator_with(spec, steps, seed, false);
  random_mutator_with(spec, steps, seed, true);
}

/* Pair mode across a change of eden's size (a new mapping, pair kept). */
static void test_pair_across_resize(void **state) {
  (void)state;
  walk_check *c = start_with("eden=64K,verify=1", true);
  eph_heap *h = c->h;
  for (int i = 0; i < 20000; i++) note(c, eph_alloc(h, P, 3), NULL);
  eph_gc_params p = *eph_heap_params(h);
  p.eden_bytes = 128 * KiB;
  assert_int_equal(eph_heap_set_params(h, &p), EPH_OK);
  assert_true(eph_heap_eden_pair(h));
  for (int i = 0; i < 20000; i++) note(c, eph_alloc(h, P, 3), NULL);
  finish(c);
}

static void test_random_small_eden(void **state) {
  (void)state;
  random_mutator("eden=64K,verify=1", 60000, 0x9E3779B97F4A7C15u);
}

static void test_random_default(void **state) {
  (void)state;
  random_mutator(NULL, 400000, 12345);
}

static void test_random_stress(void **state) {
  (void)state; /* a scavenge before every allocation: each EPH_AT is pending across one */
  random_mutator("stress=1,eden=256K", 3000, 777);
}

static void test_random_stress_full(void **state) {
  (void)state;
  random_mutator("stress_full=5,eden=256K", 3000, 4242);
}

/* Objects allocated before the mode was set are not walked. */
static void test_starts_at_mode(void **state) {
  (void)state;
  eph_heap *h = heap_with(NULL);
  P = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  for (int i = 0; i < 100; i++) eph_alloc(h, P, 2);
  walk_check *c = watch(h, false);
  EPH_AT(h);
  eph_site *s = eph__fast(h)->site;
  note(c, eph_alloc(h, P, 1), s);
  note(c, eph_alloc(h, P, 1), NULL);
  eph_collect(h, EPH_GC_SCAVENGE);
  assert_int_equal(c->walks, 1);
  assert_int_equal(c->dead_seen, 2);
  finish(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_small_eden), cmocka_unit_test(test_random_default),
      cmocka_unit_test(test_random_stress),     cmocka_unit_test(test_random_stress_full),
      cmocka_unit_test(test_starts_at_mode),    cmocka_unit_test(test_pair_across_resize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
