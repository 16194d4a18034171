/*
 * Phantom ephemerons and re-arming (include/ephemera/ephemeron.h), the two
 * heap features the finalization profiler is built on, and the permanent
 * bytes the full-GC trigger leaves out (observer.h).  Every collection runs
 * the verifier (verify=1), which also makes eph_ephemeron_rearm check that
 * the ephemeron is not pending.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"
#include "heap_test.h"

typedef struct fixture {
  eph_heap *h;
  eph_class_id Box, Bytes, Phantom, Eph;
  eph_finalizer_id fin;
  eph_value seen[64];
  eph_value seen_key[64]; /* the key slot as the finaliser saw it */
  size_t nseen;
} fixture;

static fixture F;

static void record(eph_heap *h, eph_value e, void *data) {
  fixture *f = data;
  assert_true(eph_ephemeron_is_mourned(e));
  assert_true(f->nseen < 64);
  f->seen[f->nseen] = e;
  f->seen_key[f->nseen] = eph_ephemeron_key(e);
  f->nseen++;
  assert_int_equal(eph_heap_verify(h), EPH_OK);
}

static int setup(void **state) {
  memset(&F, 0, sizeof F);
  F.h = heap_with("eden=256K,headroom=256K,shrink=1M,verify=1");
  F.Box = eph_class_register(F.h, "Box", EPH_FORMAT_POINTERS);
  F.Bytes = eph_class_register(F.h, "Bytes", EPH_FORMAT_BYTES);
  F.Phantom = eph_class_register(F.h, "Phantom", EPH_FORMAT_EPHEMERON);
  F.Eph = eph_class_register(F.h, "Eph", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_phantom(F.h, F.Phantom, true), EPH_OK);
  F.fin = eph_finalizer_register(F.h, record, &F);
  *state = &F;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  eph_heap_free(F.h);
  return 0;
}

static eph_value box(intptr_t tag) {
  eph_value b = eph_alloc(F.h, F.Box, 2);
  assert_true(b != EPH_NIL);
  eph_store(F.h, b, 0, eph_int(tag));
  return b;
}

static eph_value ephemeron(eph_class_id cls, eph_value key, eph_value value, bool old) {
  eph_value e = eph_ephemeron_new(F.h, cls, key, value, 0, F.fin, old);
  assert_true(e != EPH_NIL);
  return e;
}

static void collect(eph_gc_kind kind) { assert_int_equal(eph_collect(F.h, kind), EPH_OK); }

static const eph_gc_kind KINDS[] = {EPH_GC_SCAVENGE, EPH_GC_FULL};

static uint64_t bytes_kept(void) { /* copied + promoted so far */
  eph_heap_stats s;
  eph_heap_stats_get(F.h, &s);
  return s.bytes_copied + s.bytes_promoted;
}

/* A phantom's dead key leaves a tombstone with its class and size, and is
 * not kept: the scavenge that mourns a pretenured phantom copies nothing. */
static void test_phantom_leaves_tombstone(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = eph_alloc_bytes(h, F.Bytes, 13); /* an odd size: the tombstone keeps the exact payload */
    assert_true(key != EPH_NIL);
    size_t key_bytes = eph_object_bytes(key);
    e = ephemeron(F.Phantom, key, EPH_NIL, true);
    key = EPH_NIL;
    uint64_t kept = bytes_kept();
    collect(KINDS[k]);
    if (KINDS[k] == EPH_GC_SCAVENGE) assert_int_equal(bytes_kept(), kept);
    assert_int_equal(F.nseen, 1);
    assert_true(F.seen[0] == e);
    eph_value t = F.seen_key[0];
    assert_true(eph_is_int(t));
    assert_int_equal(eph_tombstone_class(t), F.Bytes);
    assert_int_equal(eph_tombstone_size_bytes(t), 13);
    assert_int_equal(eph_tombstone_object_bytes(t), key_bytes);
    collect(EPH_GC_FULL);
    assert_int_equal(F.nseen, 1); /* rule 3 still holds */
    EPH_UNFRAME(h);
  }
}

/* A compact phantom class with the fixture's finaliser. */
static eph_class_id compact_phantom_class(eph_heap *h, const char *name) {
  eph_class_id c = eph_class_register(h, name, EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_phantom(h, c, true), EPH_OK);
  assert_int_equal(eph_class_set_compact(h, c), EPH_OK);
  assert_int_equal(eph_class_set_finalizer(h, c, F.fin), EPH_OK);
  return c;
}

/* An old phantom mourned by a scavenge stays remembered while a user slot
 * holds a young object (the scavenger drops bare ones from the set at
 * once); the verifier checks it after each collection. */
static void test_phantom_user_slot_stays_remembered(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  EPH_LOCAL(h, user);
  eph_class_id CP = compact_phantom_class(h, "CompactPhantom");
  const size_t u = EPH_EPHEMERON_COMPACT_FIXED_SLOTS; /* the user slot */
  user = box(9);
  e = eph_ephemeron_new(h, CP, box(1), EPH_NIL, 1, 0, true);
  assert_true(e != EPH_NIL);
  eph_store(h, e, u, user);
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(F.nseen, 1);
  assert_true(eph_is_young(h, eph_slot(e, u)));
  assert_int_equal(eph_heap_verify(h), EPH_OK);
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(eph_int_value(eph_slot(eph_slot(e, u), 0)), 9);
  EPH_UNFRAME(h);
}

/* A bare old phantom whose young key is reached only after the remembered
 * set was scanned (through a young holder) is settled at the fixpoint: it
 * stays remembered while its key is young, so that each scavenge updates
 * its key slot, and leaves the set once the key is tenured.  The verifier
 * checks the remembered set after each collection. */
static void test_phantom_late_key_stays_remembered(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  EPH_LOCAL(h, holder);
  eph_class_id CP = compact_phantom_class(h, "BarePhantom");
  holder = box(1);
  eph_store(h, holder, 1, box(7)); /* the key: reached through the holder only */
  e = eph_ephemeron_new(h, CP, eph_slot(holder, 1), EPH_NIL, 0, 0, true);
  assert_true(e != EPH_NIL && !eph_is_young(h, e));
  for (int i = 0; i < 8; i++) {
    collect(EPH_GC_SCAVENGE);
    assert_int_equal(eph_heap_verify(h), EPH_OK);
    assert_true(eph_ephemeron_key(e) == eph_slot(holder, 1));
    assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_key(e), 0)), 7);
  }
  assert_false(eph_is_young(h, eph_ephemeron_key(e))); /* tenured by now */
  assert_int_equal(F.nseen, 0);
  EPH_UNFRAME(h);
}

/* Bare phantoms whose young keys the roots hold, so that each key is
 * copied before the scavenger meets its ephemeron: one young (it moves
 * with its key, and never enters the remembered set), one old (it stays
 * remembered while its key is young).  Both are settled at the fixpoint;
 * their key slots follow the keys, and they are mourned once the keys go.
 * The verifier checks the remembered set after each collection. */
static void test_phantom_key_copied_first(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, young);
  EPH_LOCAL(h, old);
  EPH_LOCAL(h, key_young);
  EPH_LOCAL(h, key_old);
  eph_class_id CP = compact_phantom_class(h, "RootedKeyPhantom");
  key_young = box(3);
  key_old = box(4);
  young = eph_ephemeron_new(h, CP, key_young, EPH_NIL, 0, 0, false);
  old = eph_ephemeron_new(h, CP, key_old, EPH_NIL, 0, 0, true);
  assert_true(young != EPH_NIL && old != EPH_NIL && eph_is_young(h, young) && !eph_is_young(h, old));
  for (int i = 0; i < 4; i++) {
    collect(EPH_GC_SCAVENGE);
    assert_int_equal(eph_heap_verify(h), EPH_OK);
    assert_true(eph_ephemeron_key(young) == key_young);
    assert_true(eph_ephemeron_key(old) == key_old);
    assert_int_equal(eph_int_value(eph_slot(key_young, 0)), 3);
    assert_int_equal(eph_int_value(eph_slot(key_old, 0)), 4);
  }
  assert_int_equal(F.nseen, 0);
  key_young = key_old = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  collect(EPH_GC_FULL); /* a key tenured by now dies in a full GC */
  assert_int_equal(F.nseen, 2);
  EPH_UNFRAME(h);
}

/* Old bare phantoms are remembered as inert ephemerons (remset.c), which
 * the scavenger settles without scanning them first; what may change
 * after one is remembered keeps every rule: a young value stored into it
 * (traced, and kept for its finaliser), its key replaced by an old object
 * or by another young one, its class made not phantom (its key is then
 * kept for the finaliser), and full GCs.  The verifier checks the
 * remembered set, inert entries included, after each collection. */
static void test_inert_entries(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, e_value);
  EPH_LOCAL(h, e_dead_value);
  EPH_LOCAL(h, e_old_key);
  EPH_LOCAL(h, e_new_key);
  EPH_LOCAL(h, e_unphantom);
  EPH_LOCAL(h, e_full);
  EPH_LOCAL(h, k_value);
  EPH_LOCAL(h, k_new);
  EPH_LOCAL(h, k_full);
  EPH_LOCAL(h, old_obj);
  eph_class_id CP = compact_phantom_class(h, "InertPhantom"), CQ = compact_phantom_class(h, "UnPhantom");
  k_value = box(1);
  e_value = eph_ephemeron_new(h, CP, k_value, EPH_NIL, 0, 0, true);
  eph_store(h, e_value, EPH_EPHEMERON_VALUE, box(5)); /* young: a plain entry too */
  e_dead_value = eph_ephemeron_new(h, CP, box(7), EPH_NIL, 0, 0, true); /* the same, its key dead */
  eph_store(h, e_dead_value, EPH_EPHEMERON_VALUE, box(8));
  old_obj = eph_alloc_old(h, F.Box, 2);
  assert_true(old_obj != EPH_NIL);
  e_old_key = eph_ephemeron_new(h, CP, box(2), EPH_NIL, 0, 0, true);
  eph_store(h, e_old_key, EPH_EPHEMERON_KEY, old_obj); /* no barrier: an old key */
  k_new = box(3);
  e_new_key = eph_ephemeron_new(h, CP, box(30), EPH_NIL, 0, 0, true);
  eph_store(h, e_new_key, EPH_EPHEMERON_KEY, k_new); /* another young key */
  e_unphantom = eph_ephemeron_new(h, CQ, box(4), EPH_NIL, 0, 0, true);
  assert_int_equal(eph_class_set_phantom(h, CQ, false), EPH_OK);
  k_full = box(6);
  e_full = eph_ephemeron_new(h, CP, k_full, EPH_NIL, 0, 0, true);
  assert_int_equal(eph_heap_verify(h), EPH_OK);

  collect(EPH_GC_SCAVENGE);
  /* mourned once each: the dead key's, its value kept for the finaliser,
   * and the one whose class stopped being phantom, its key kept */
  assert_int_equal(F.nseen, 2);
  assert_true(F.seen[0] == e_unphantom || F.seen[1] == e_unphantom);
  assert_true(F.seen[0] == e_dead_value || F.seen[1] == e_dead_value);
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e_dead_value), 0)), 8);
  assert_true(eph_is_ptr(eph_ephemeron_key(e_unphantom)));
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_key(e_unphantom), 0)), 4);
  assert_true(eph_ephemeron_key(e_value) == k_value);
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e_value), 0)), 5);
  assert_true(eph_ephemeron_key(e_old_key) == old_obj);
  assert_true(eph_ephemeron_key(e_new_key) == k_new);
  assert_true(eph_ephemeron_key(e_full) == k_full);

  collect(EPH_GC_FULL);
  assert_int_equal(F.nseen, 2);
  assert_true(eph_ephemeron_key(e_full) == k_full && eph_ephemeron_key(e_value) == k_value);
  k_value = k_new = k_full = EPH_NIL; /* their ephemerons are mourned */
  collect(EPH_GC_FULL);
  assert_int_equal(F.nseen, 5);
  assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e_value), 0)), 5); /* kept for the finaliser */
  assert_true(eph_is_int(eph_ephemeron_key(e_value)) && eph_is_int(eph_ephemeron_key(e_new_key)));
  EPH_UNFRAME(h);
}

/* A phantom's value is traced as in rule 2; a live key is kept as usual. */
static void test_phantom_value_kept_live_key_untouched(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    eph_heap *h = F.h;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = box(1);
    e = ephemeron(F.Phantom, key, box(2), false);
    for (int i = 0; i < 2; i++) collect(KINDS[k]); /* a scavenge finds only young keys dead: stay young */
    assert_int_equal(F.nseen, 0);
    assert_true(eph_ephemeron_key(e) == key);
    key = EPH_NIL;
    collect(KINDS[k]);
    assert_int_equal(F.nseen, 1);
    assert_int_equal(eph_tombstone_class(F.seen_key[0]), F.Box);
    assert_int_equal(eph_int_value(eph_slot(eph_ephemeron_value(e), 0)), 2);
    EPH_UNFRAME(h);
  }
}

/* A phantom and an ordinary ephemeron on one key, mourned in the same
 * collection in either order: the ordinary one keeps the key (the scavenge
 * may have copied it before the phantom is mourned), the phantom gets a
 * correct tombstone all the same. */
static void test_phantom_and_ordinary_on_one_key(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    for (int phantom_first = 0; phantom_first < 2; phantom_first++) {
      eph_heap *h = F.h;
      F.nseen = 0;
      EPH_FRAME(h);
      EPH_LOCAL(h, key);
      EPH_LOCAL(h, a);
      EPH_LOCAL(h, b);
      key = box(30);
      a = ephemeron(phantom_first ? F.Phantom : F.Eph, key, EPH_NIL, true);
      b = ephemeron(phantom_first ? F.Eph : F.Phantom, key, EPH_NIL, true);
      key = EPH_NIL;
      collect(KINDS[k]);
      assert_int_equal(F.nseen, 2);
      for (size_t i = 0; i < 2; i++) {
        bool is_phantom = eph_class_of(F.seen[i]) == F.Phantom;
        eph_value kv = F.seen_key[i];
        if (is_phantom) {
          assert_true(eph_is_int(kv));
          assert_int_equal(eph_tombstone_class(kv), F.Box);
          assert_int_equal(eph_tombstone_size_bytes(kv), 2 * sizeof(eph_value));
        } else {
          assert_true(eph_is_ptr(kv));
          assert_int_equal(eph_int_value(eph_slot(kv, 0)), 30);
        }
      }
      EPH_UNFRAME(h);
    }
  }
}

/* Re-arming: a finalised ephemeron takes a new key, is live again, and is
 * mourned once more when that key dies; young and pretenured, both kinds
 * of collection, phantom or not. */
static void test_rearm_cycles(void **state) {
  (void)state;
  for (int c = 0; c < 8; c++) {
    eph_heap *h = F.h;
    bool old = c & 1;
    eph_gc_kind kind = KINDS[(c >> 1) & 1];
    eph_class_id cls = c & 4 ? F.Phantom : F.Eph;
    F.nseen = 0;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    EPH_LOCAL(h, e);
    key = box(100);
    e = ephemeron(cls, key, eph_int(0), old);
    for (int round = 1; round <= 3; round++) {
      key = EPH_NIL;
      collect(kind);
      assert_int_equal(F.nseen, (size_t)round);
      assert_true(F.seen[round - 1] == e);
      key = box(100 + round);
      assert_int_equal(eph_ephemeron_rearm(h, e, key, eph_int(round)), EPH_OK);
      assert_false(eph_ephemeron_is_mourned(e));
      assert_int_equal(eph_heap_verify(h), EPH_OK); /* remembered if old with a young key */
      collect(kind);
      collect(kind); /* (a full GC tenures: scavenges keep the key young for the next round) */
      assert_int_equal(F.nseen, (size_t)round); /* the new key lives */
      assert_true(eph_ephemeron_key(e) == key);
      assert_int_equal(eph_int_value(eph_ephemeron_value(e)), round);
    }
    EPH_UNFRAME(h);
    collect(EPH_GC_FULL); /* e and its key go together, silently */
    assert_int_equal(F.nseen, 3);
  }
}

/* Re-arming is refused for a live ephemeron, a non-ephemeron, and one
 * whose finaliser is still pending. */
static void test_rearm_refused(void **state) {
  (void)state;
  eph_heap *h = F.h;
  F.nseen = 0;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, e);
  key = box(1);
  e = ephemeron(F.Phantom, key, EPH_NIL, false);
  assert_int_equal(eph_ephemeron_rearm(h, e, key, EPH_NIL), EPH_ERR_INVALID);
  assert_int_equal(eph_ephemeron_rearm(h, key, key, EPH_NIL), EPH_ERR_INVALID);
  assert_int_equal(eph_ephemeron_rearm(h, eph_int(3), key, EPH_NIL), EPH_ERR_INVALID);
  eph_heap_set_auto_finalize(h, false);
  key = EPH_NIL;
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(eph_pending_finalizers(h), 1);
  key = box(2);
  assert_int_equal(eph_ephemeron_rearm(h, e, key, EPH_NIL), EPH_ERR_INVALID); /* pending */
  assert_int_equal(eph_run_finalizers(h), 1);
  eph_heap_set_auto_finalize(h, true);
  assert_int_equal(eph_ephemeron_rearm(h, e, key, EPH_NIL), EPH_OK);
  assert_int_equal(eph_class_set_phantom(h, F.Box, true), EPH_ERR_INVALID);
  EPH_UNFRAME(h);
}

/* The profiler's pattern, at scale: many phantom ephemerons recycled
 * through a free list, keys dropped at random, under scavenges and full
 * GCs; every dropped key's death is seen exactly once, with its class and
 * size, and no live key is ever mourned.  Key number n (slot 0 of the key,
 * and with its slot in the ephemeron's value) lives in keys[n % SLOTS]. */
enum { SLOTS = 512, STEPS = 300000, MAXN = 4 * STEPS };
typedef struct churn {
  eph_value spare;    /* a global root: finalised ephemerons, chained by value */
  eph_value registry; /* a global root: every ephemeron made */
  eph_value keys;     /* a global root: the live keys, by slot */
  size_t made, bad;
  uint8_t deaths[MAXN]; /* per key number */
  eph_class_id Key;
} churn;

static void churn_fin(eph_heap *h, eph_value e, void *data) {
  churn *c = data;
  eph_value t = eph_ephemeron_key(e);
  size_t n = (size_t)eph_int_value(eph_ephemeron_value(e)), slot = n % SLOTS;
  eph_value now = eph_slot(c->keys, slot);
  if (!eph_is_int(t) || eph_tombstone_class(t) != c->Key || eph_tombstone_size_bytes(t) != (slot % 7 + 1) * 8 ||
      (now != EPH_NIL && (size_t)eph_int_value(eph_slot(now, 0)) == n))
    c->bad++;
  c->deaths[n]++;
  eph_store(h, e, EPH_EPHEMERON_KEY, EPH_NIL);
  eph_store(h, e, EPH_EPHEMERON_VALUE, c->spare);
  c->spare = e;
}

/* Where the churn's ephemerons are made. */
typedef enum where { YOUNG, PRETENURED, PINNED } where;

/* An ephemeron for key number n: a spare re-armed, or a new one (pinned
 * ones need no registry: nothing reclaims them). */
static void arm(eph_heap *h, churn *c, eph_value key, size_t n, eph_class_id Ph, eph_class_id List,
                eph_finalizer_id fin, where at) {
  if (c->spare != EPH_NIL) {
    eph_value e = c->spare;
    c->spare = eph_ephemeron_value(e);
    assert_int_equal(eph_ephemeron_rearm(h, e, key, eph_int((intptr_t)n)), EPH_OK);
    return;
  }
  if (at == PINNED) {
    eph_value e = eph_ephemeron_new_pinned(h, Ph, key, eph_int((intptr_t)n), 0, fin);
    assert_true(e != EPH_NIL);
    c->made++;
    return;
  }
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  e = eph_ephemeron_new(h, Ph, key, eph_int((intptr_t)n), 0, fin, at == PRETENURED);
  assert_true(e != EPH_NIL);
  assert_int_equal(eph_size_bytes(e), (fin ? 3 : 2) * sizeof(eph_value));
  eph_value cell = eph_alloc(h, List, 2); /* registry: a list of ephemerons */
  assert_true(cell != EPH_NIL);
  eph_store(h, cell, 0, e);
  eph_store(h, cell, 1, c->registry);
  c->registry = cell;
  c->made++;
  EPH_UNFRAME(h);
}

/* Keys waiting to be armed in one run (eph_ephemerons_rearm_unchecked),
 * by number: armed before anything that could drop one or collect. */
enum { RUN = 23 };
typedef struct pending {
  size_t n[RUN], len;
} pending;

/* Arms the pending keys: spares in one call, then new ephemerons (which
 * may collect: each key is read from its slot, a root, when its turn comes). */
static void arm_pending(eph_heap *h, churn *c, pending *q, eph_class_id Ph, eph_class_id List, eph_finalizer_id fin,
                        where at) {
  eph_value es[RUN], keys[RUN], values[RUN];
  size_t m = 0, i = 0;
  for (; i < q->len && c->spare != EPH_NIL; i++, m++) {
    es[m] = c->spare;
    c->spare = eph_ephemeron_value(es[m]);
    keys[m] = eph_slot(c->keys, q->n[i] % SLOTS);
    values[m] = eph_int((intptr_t)q->n[i]);
  }
  eph_ephemerons_rearm_unchecked(h, m, es, keys, values);
  for (; i < q->len; i++) arm(h, c, eph_slot(c->keys, q->n[i] % SLOTS), q->n[i], Ph, List, fin, at);
  q->len = 0;
}

/* The pinned space's objects of class cls, and whether each is where it
 * was at the last call (pinned objects never move). */
static size_t pinned_of(eph_heap *h, eph_class_id cls) {
  uintptr_t at, top;
  eph_pinned_range(h, &at, &top);
  size_t n = 0;
  for (; at < top; at += eph_object_bytes(at) + eph_heap_trailer_bytes(h)) n += eph_class_of(at) == cls;
  return n;
}

/* runs: re-arm spares RUN at a time (eph_ephemerons_rearm_unchecked), as
 * the profiler's eden walk does, instead of one call each. */
static void run_churn(const char *gc, where at, bool compact, bool runs) {
  eph_heap *h = heap_with(gc);
  static churn c;
  memset(&c, 0, sizeof c);
  c.Key = eph_class_register(h, "Key", EPH_FORMAT_POINTERS);
  eph_class_id Ph = eph_class_register(h, "Ph", EPH_FORMAT_EPHEMERON);
  eph_class_id List = eph_class_register(h, "List", EPH_FORMAT_POINTERS);
  assert_int_equal(eph_class_set_phantom(h, Ph, true), EPH_OK);
  eph_finalizer_id fin = eph_finalizer_register(h, churn_fin, &c);
  if (compact) { /* no finaliser slot: the class's finaliser for all */
    assert_int_equal(eph_class_set_compact(h, Ph), EPH_OK);
    assert_int_equal(eph_class_set_finalizer(h, Ph, fin), EPH_OK);
    fin = 0;
  }
  assert_int_equal(eph_global_root_add(h, &c.spare), EPH_OK);
  assert_int_equal(eph_global_root_add(h, &c.registry), EPH_OK);
  assert_int_equal(eph_global_root_add(h, &c.keys), EPH_OK);
  c.keys = eph_alloc(h, List, SLOTS);
  uint64_t rng = 12345;
  size_t made_keys = 0, live = 0;
  static size_t gen[SLOTS];
  memset(gen, 0, sizeof gen);
  static bool dropped[MAXN];
  memset(dropped, 0, sizeof dropped);
  pending q = {.len = 0};
  for (size_t step = 0; step < STEPS; step++) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    size_t slot = (size_t)(rng % SLOTS);
    eph_value k = eph_slot(c.keys, slot);
    if (k != EPH_NIL) {
      if ((rng >> 20) % 2) { /* drop the key */
        arm_pending(h, &c, &q, Ph, List, fin, at);
        k = eph_slot(c.keys, slot);
        dropped[eph_int_value(eph_slot(k, 0))] = true;
        eph_store(h, c.keys, slot, EPH_NIL);
        live--;
      }
      continue;
    }
    size_t n = gen[slot]++ * SLOTS + slot;
    if (n >= MAXN) continue;
    made_keys++;
    EPH_FRAME(h);
    EPH_LOCAL(h, key);
    key = eph_alloc(h, c.Key, slot % 7 + 1);
    assert_true(key != EPH_NIL);
    eph_store(h, key, 0, eph_int((intptr_t)n));
    eph_store(h, c.keys, slot, key);
    live++;
    if (runs) {
      q.n[q.len++] = n;
      if (q.len == RUN) arm_pending(h, &c, &q, Ph, List, fin, at);
    } else {
      arm(h, &c, key, n, Ph, List, fin, at);
    }
    EPH_UNFRAME(h);
    if (step % 5000 == 0) {
      arm_pending(h, &c, &q, Ph, List, fin, at);
      assert_int_equal(eph_collect(h, step % 15000 ? EPH_GC_SCAVENGE : EPH_GC_FULL), EPH_OK);
    }
  }
  arm_pending(h, &c, &q, Ph, List, fin, at);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  assert_int_equal(c.bad, 0);
  for (size_t n = 0; n < MAXN; n++) assert_int_equal(c.deaths[n], dropped[n] ? 1 : 0);
  /* every ephemeron made is either armed on a live key or spare */
  size_t spares = 0;
  for (eph_value s = c.spare; s != EPH_NIL; s = eph_ephemeron_value(s)) spares++;
  assert_int_equal(c.made, live + spares);
  assert_true(made_keys > STEPS / 4);
  assert_true(c.made < made_keys / 4); /* recycled: far fewer made than keys */
  assert_int_equal(pinned_of(h, Ph), at == PINNED ? c.made : 0);
  eph_heap_free(h);
}

static void test_churn_young(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,verify=1", YOUNG, false, false);
}
static void test_churn_pretenured(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,verify=1", PRETENURED, false, false);
}
static void test_churn_stress(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PRETENURED, false, false);
}
/* Pinned ephemerons (ephemeron.h): the same deaths, seen once each. */
static void test_churn_pinned(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,verify=1", PINNED, false, false);
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PINNED, false, false);
  run_churn("eden=64K,headroom=64K,verify=1", PINNED, true, false);
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PINNED, true, false);
}
/* Spares re-armed in runs of one call (eph_ephemerons_rearm_unchecked):
 * the same deaths, seen once each. */
static void test_churn_runs(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,verify=1", YOUNG, false, true);
  run_churn("eden=64K,headroom=64K,verify=1", PRETENURED, true, true);
  run_churn("eden=64K,headroom=64K,verify=1", PINNED, true, true);
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PINNED, true, true);
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PRETENURED, false, true);
}
/* The same with compact ephemerons (two slots, the class's finaliser). */
static void test_churn_compact(void **state) {
  (void)state;
  run_churn("eden=64K,headroom=64K,verify=1", YOUNG, true, false);
  run_churn("eden=64K,headroom=64K,verify=1", PRETENURED, true, false);
  run_churn("eden=64K,headroom=64K,stress=1,stress_full=97", PRETENURED, true, false);
}

/* Compact classes: a word smaller, the class's finaliser (changed for all
 * at once), no finaliser id of their own; too late once one exists. */
static void test_compact_class(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  eph_class_id C = eph_class_register(h, "Compact", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_compact(h, f->Box), EPH_ERR_INVALID); /* not an ephemeron class */
  assert_int_equal(eph_class_set_compact(h, C), EPH_OK);
  assert_int_equal(eph_class_set_compact(h, C), EPH_OK); /* again: a no-op */
  assert_int_equal(eph_class_set_finalizer(h, C, f->fin), EPH_OK);
  EPH_FRAME(h);
  EPH_LOCAL(h, k1);
  EPH_LOCAL(h, k2);
  EPH_LOCAL(h, e1);
  EPH_LOCAL(h, e2);
  k1 = box(1);
  k2 = box(2);
  assert_int_equal(eph_ephemeron_new(h, C, k1, EPH_NIL, 0, f->fin, false), EPH_NIL); /* an id of its own */
  e1 = eph_ephemeron_new(h, C, k1, eph_int(11), 1, 0, false);
  e2 = eph_ephemeron_new(h, C, k2, eph_int(22), 0, 0, true);
  assert_true(e1 != EPH_NIL && e2 != EPH_NIL);
  assert_int_equal(eph_size_bytes(e1), 3 * sizeof(eph_value)); /* key, value, one user slot */
  assert_int_equal(eph_size_bytes(e2), 2 * sizeof(eph_value));
  eph_store(h, e1, EPH_EPHEMERON_COMPACT_FIXED_SLOTS, k2); /* the user slot holds k2 strongly */
  /* a user slot where a finaliser id would be: it is not one */
  static fixture other;
  memset(&other, 0, sizeof other);
  eph_finalizer_id wrong = eph_finalizer_register(h, record, &other);
  EPH_LOCAL(h, e3);
  e3 = eph_ephemeron_new(h, C, box(3), EPH_NIL, 1, 0, false);
  eph_store(h, e3, EPH_EPHEMERON_COMPACT_FIXED_SLOTS, eph_int((intptr_t)wrong));
  assert_int_equal(eph_class_set_compact(h, F.Eph), EPH_OK); /* no ephemeron of Eph yet */
  EPH_LOCAL(h, plain);
  plain = eph_ephemeron_new(h, F.Phantom, k1, EPH_NIL, 0, f->fin, false);
  assert_true(plain != EPH_NIL);
  assert_int_equal(eph_class_set_compact(h, F.Phantom), EPH_ERR_INVALID); /* too late */
  k1 = EPH_NIL;
  collect(EPH_GC_FULL); /* one collection: the addresses the finaliser saw are current */
  eph_run_finalizers(h);
  /* k1 died: e1 and the phantom are mourned, and e3 (its box was never
   * held), by the class's finaliser; e2's key lives through e1's user slot */
  assert_int_equal(f->nseen, 3);
  assert_int_equal(other.nseen, 0);
  assert_true(f->seen[0] == e1 || f->seen[1] == e1 || f->seen[2] == e1);
  assert_true(f->seen[0] == e3 || f->seen[1] == e3 || f->seen[2] == e3);
  assert_false(eph_ephemeron_is_mourned(e2));
  /* the class's finaliser changes for all its ephemerons at once */
  eph_finalizer_id none = eph_finalizer_register(h, record, &(fixture){0});
  assert_int_equal(eph_class_set_finalizer(h, C, none), EPH_OK);
  e1 = EPH_NIL;
  k2 = EPH_NIL;
  collect(EPH_GC_FULL);
  eph_run_finalizers(h);
  assert_int_equal(f->nseen, 3); /* e2 went to the other finaliser */
  EPH_UNFRAME(h);
}

/* Batch finalisers (ephemeron.h): one call per run of a compact class's
 * queued ephemerons, in queue order, instead of the class's finaliser;
 * other classes' ephemerons between split the runs; the class's finaliser
 * comes back when the batch finaliser is removed; no collection inside. */
static struct {
  size_t calls, n;
  eph_value seen[64];
  eph_status collect_inside;
  bool alloc_inside_nil;
} Batch;

static void batch(eph_heap *h, const eph_value *es, size_t n, void *data) {
  assert_ptr_equal(data, &Batch);
  Batch.calls++;
  for (size_t i = 0; i < n; i++) {
    assert_true(eph_ephemeron_is_mourned(es[i]));
    assert_true(Batch.n < 64);
    Batch.seen[Batch.n++] = es[i];
  }
  Batch.collect_inside = eph_collect(h, EPH_GC_SCAVENGE);
  Batch.alloc_inside_nil = eph_alloc_old(h, F.Box, 1) == EPH_NIL;
}

static void test_batch_finalizer(void **state) {
  fixture *f = *state;
  eph_heap *h = f->h;
  eph_class_id C = eph_class_register(h, "BatchCompact", EPH_FORMAT_EPHEMERON);
  assert_int_equal(eph_class_set_batch_finalizer(h, F.Eph, batch, &Batch), EPH_ERR_INVALID); /* not compact */
  assert_int_equal(eph_class_set_batch_finalizer(h, F.Box, batch, &Batch), EPH_ERR_INVALID);
  assert_int_equal(eph_class_set_compact(h, C), EPH_OK);
  assert_int_equal(eph_class_set_finalizer(h, C, f->fin), EPH_OK);
  assert_int_equal(eph_class_set_batch_finalizer(h, C, batch, &Batch), EPH_OK);
  memset(&Batch, 0, sizeof Batch);
  EPH_FRAME(h);
  EPH_LOCAL(h, list); /* the ephemerons, kept in a chain of boxes */
  EPH_LOCAL(h, e);
  EPH_LOCAL(h, link);
  for (int i = 0; i < 6; i++) {
    /* five of the class, the fourth of another (ordinary) class */
    e = i == 3 ? ephemeron(F.Eph, box(i), EPH_NIL, true) : eph_ephemeron_new(h, C, box(i), eph_int(i), 0, 0, true);
    assert_true(e != EPH_NIL);
    link = eph_alloc(h, F.Box, 2);
    eph_store(h, link, 0, e);
    eph_store(h, link, 1, list);
    list = link;
  }
  collect(EPH_GC_SCAVENGE); /* all keys die: mourned in the remembered set's order */
  /* the batch finaliser saw the five of its class, in two runs around the other */
  assert_int_equal(Batch.n, 5);
  assert_int_equal(Batch.calls, 2);
  assert_int_equal(f->nseen, 1); /* the other, by its own finaliser */
  assert_int_equal(Batch.collect_inside, EPH_ERR_INVALID);
  assert_true(Batch.alloc_inside_nil);
  static const intptr_t order[] = {0, 1, 2, 4, 5}; /* made in that order, pretenured: remembered in it */
  for (size_t i = 0; i < Batch.n; i++) {
    assert_int_equal(eph_class_of(Batch.seen[i]), C);
    assert_int_equal(eph_int_value(eph_ephemeron_value(Batch.seen[i])), order[i]);
  }
  /* removed: the class's finaliser again */
  assert_int_equal(eph_class_set_batch_finalizer(h, C, NULL, NULL), EPH_OK);
  for (size_t i = 0; i < Batch.n; i++) assert_int_equal(eph_ephemeron_rearm(h, Batch.seen[i], box(9), eph_int(9)), EPH_OK);
  collect(EPH_GC_SCAVENGE);
  assert_int_equal(Batch.n, 5);
  assert_int_equal(f->nseen, 6);
  EPH_UNFRAME(h);
}

/* Permanent bytes are left out of the GC-ratio trigger: old objects
 * declared permanent cause no full GC, the same bytes undeclared do. */
static uint64_t full_gcs_for(bool declare) {
  eph_heap *h = heap_with("eden=64K,headroom=256K,ratio=0.5");
  eph_class_id B = eph_class_register(h, "B", EPH_FORMAT_POINTERS);
  static eph_value list;
  list = EPH_NIL;
  assert_int_equal(eph_global_root_add(h, &list), EPH_OK);
  size_t permanent = 0;
  for (int i = 0; i < 100000; i++) {
    eph_value b = eph_alloc_old(h, B, 2);
    assert_true(b != EPH_NIL);
    eph_store(h, b, 1, list);
    list = b;
    permanent += eph_object_bytes(b);
    if (declare) eph_heap_set_permanent_bytes(h, permanent);
  }
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  eph_heap_free(h);
  return s.full_gcs;
}

static void test_permanent_bytes_not_counted(void **state) {
  (void)state;
  assert_true(full_gcs_for(false) >= 2);
  assert_int_equal(full_gcs_for(true), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_phantom_leaves_tombstone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_phantom_late_key_stays_remembered, setup, teardown),
      cmocka_unit_test_setup_teardown(test_phantom_key_copied_first, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inert_entries, setup, teardown),
      cmocka_unit_test_setup_teardown(test_phantom_value_kept_live_key_untouched, setup, teardown),
      cmocka_unit_test_setup_teardown(test_phantom_and_ordinary_on_one_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rearm_cycles, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rearm_refused, setup, teardown),
      cmocka_unit_test(test_churn_young),
      cmocka_unit_test(test_churn_pretenured),
      cmocka_unit_test(test_churn_stress),
      cmocka_unit_test_setup_teardown(test_phantom_user_slot_stays_remembered, setup, teardown),
      cmocka_unit_test(test_churn_pinned),
      cmocka_unit_test(test_churn_compact),
      cmocka_unit_test(test_churn_runs),
      cmocka_unit_test_setup_teardown(test_compact_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_finalizer, setup, teardown),
      cmocka_unit_test(test_permanent_bytes_not_counted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
