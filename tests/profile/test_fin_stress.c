/*
 * Finalization mode under a random mutator, with the heap verifier after
 * every collection and in stress mode (a scavenge before every allocation,
 * full GCs every N allocations).  Every sample is profiled (sample=1/1):
 * the registry's spares are re-armed over and over, by a cursor that
 * wraps around the registry many times, while samples die young, survive
 * scavenges, get promoted, or live to the end.
 *
 * The mutator keeps objects in a holder and links them to each other, so
 * deaths come in groups and in any order.  It also has ephemerons of its
 * own, whose finaliser allocates (and sometimes collects): those run
 * between the profiler's finalisers, in the same runs.
 *
 * Checked: every object has exactly one record, with its class, size and
 * birth; each one dropped before the end is finalised (never censored), at
 * or after the drop; and no death is stamped before an allocation that an
 * earlier finaliser made (the profiler reuses a death stamp only within a
 * run of its own finalisers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemera/ephemeron.h"
#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/profile.h"
#include "profile_test.h"

static uint64_t app_clock(eph_heap *h) {
  eph_profile_stats ps;
  assert_true(eph_profile_stats_get(h, &ps));
  return eph_heap_allocated(h) - ps.own_bytes;
}

/* What the application's finaliser saw: records completed before it ran,
 * and the clock after its allocation. */
typedef struct fin_log {
  eph_heap *h;
  eph_class_id junk;
  uint64_t *deaths_before, *clock_after;
  size_t n, cap, calls;
} fin_log;

static void app_finalizer(eph_heap *h, eph_value e, void *data) {
  (void)e;
  fin_log *l = data;
  eph_profile_stats ps;
  assert_true(eph_profile_stats_get(h, &ps));
  l->calls++;
  eph_alloc(h, l->junk, 3 + l->calls % 5);
  if (l->calls % 61 == 0) eph_collect(h, EPH_GC_SCAVENGE);
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->deaths_before = realloc(l->deaths_before, l->cap * sizeof *l->deaths_before);
    l->clock_after = realloc(l->clock_after, l->cap * sizeof *l->clock_after);
  }
  l->deaths_before[l->n] = ps.deaths;
  l->clock_after[l->n] = app_clock(h);
  l->n++;
}

#define SLOTS 256
static void run(const char *gc, const char *spec_text, int nobjects, uint64_t seed) {
  eph_heap *h = heap_with(gc);
  eph_class_id Holder = eph_class_register(h, "Holder", EPH_FORMAT_POINTERS);
  eph_class_id Node = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  eph_class_id Blob = eph_class_register(h, "Blob", EPH_FORMAT_BYTES);
  eph_class_id AppEph = eph_class_register(h, "AppEphemeron", EPH_FORMAT_EPHEMERON);
  fin_log log = {.h = h, .junk = eph_class_register(h, "Junk", EPH_FORMAT_POINTERS)};
  eph_finalizer_id fin = eph_finalizer_register(h, app_finalizer, &log);
  assert_int_not_equal(fin, 0);

  EPH_FRAME(h);
  EPH_LOCAL(h, holder);
  EPH_LOCAL(h, v);
  holder = eph_alloc(h, Holder, SLOTS);

  eph_profile_spec spec = test_spec(spec_text, "fin-stress");
  test_profile_start(h, &spec);

  struct obj { uint64_t before, birth, dropped, size; eph_class_id cls; } *objs = calloc((size_t)nobjects, sizeof *objs);
  int in_slot[SLOTS];
  for (int i = 0; i < SLOTS; i++) in_slot[i] = -1;
  /* objects reachable only through another (a node's slot 0): dropped with it */
  int *child = malloc((size_t)nobjects * sizeof *child);
  uint64_t x = seed;
  for (int i = 0; i < nobjects; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    int slot = (int)((x >> 33) % SLOTS);
    if (slot < 32 && (x >> 20) % 8 != 0) slot += 32; /* slots 0-31: long-lived */
    child[i] = -1;
    uint64_t before = app_clock(h);
    unsigned kind = (unsigned)((x >> 40) % 8);
    if (kind == 0) {
      v = eph_alloc_bytes(h, Blob, (size_t)((x >> 45) % 200));
    } else if (kind == 1 && in_slot[slot] >= 0) {
      /* an ephemeron of the application's on the slot's occupant, which it
       * replaces: the occupant is dropped (held weakly from now on) */
      v = eph_ephemeron_new(h, AppEph, eph_slot(holder, (size_t)slot), EPH_NIL, 0, fin, (x >> 50) & 1);
      assert_int_not_equal(v, EPH_NIL);
    } else {
      v = eph_alloc(h, Node, (size_t)((x >> 45) % 4) + 1);
      /* link the occupant under the new node: it dies with it */
      if (in_slot[slot] >= 0 && (x >> 52) % 3 == 0 && child[in_slot[slot]] < 0) {
        eph_store(h, v, 0, eph_slot(holder, (size_t)slot));
        child[i] = in_slot[slot];
        in_slot[slot] = -1;
      }
    }
    objs[i] = (struct obj){before, app_clock(h), 0, eph_object_bytes(v), eph_class_of(v)};
    if (objs[i].birth < before) fail_msg("clock went back");
    if (in_slot[slot] >= 0) {
      uint64_t now = objs[i].birth;
      for (int d = in_slot[slot]; d >= 0; d = child[d]) objs[d].dropped = now;
    }
    eph_store(h, holder, (size_t)slot, v);
    in_slot[slot] = i;
  }
  uint64_t end = app_clock(h);
  for (int i = 0; i < SLOTS; i++)
    for (int d = in_slot[i]; d >= 0; d = child[d]) objs[d].dropped = end;
  holder = v = EPH_NIL;
  EPH_UNFRAME(h);

  eph_profile_stats final;
  eph_file *p = test_profile_finish(h, spec.out, &final);
  assert_true(p->complete);

  char *seen = calloc((size_t)nobjects, 1);
  size_t matched = 0;
  for (size_t k = 0; k < p->nrecords; k++) {
    const eph_record *r = &p->records[k];
    /* no death stamped before an allocation made by an earlier finaliser */
    for (size_t f = 0; f < log.n; f++)
      if (log.deaths_before[f] <= k && r->death_kind != EPH_DEATH_CENSORED && r->death.bytes < log.clock_after[f])
        fail_msg("%s %s: record %zu died at %llu, before finaliser %zu's allocation (clock %llu)", gc, spec_text, k,
                 (unsigned long long)r->death.bytes, f, (unsigned long long)log.clock_after[f]);
    const char *cname = r->class_id < p->nclasses ? p->class_names[r->class_id] : NULL;
    if (!cname || (strcmp(cname, "Node") && strcmp(cname, "Blob"))) continue; /* holder, junk, app ephemerons */
    /* the object whose allocation call took the clock from `before` to
     * `birth` (finalisers that ran inside it allocated too) */
    size_t lo = 0, hi = (size_t)nobjects;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (objs[mid].birth < r->id) lo = mid + 1;
      else hi = mid;
    }
    while (lo < (size_t)nobjects && objs[lo].cls == AppEph) lo++;
    if (lo == (size_t)nobjects || objs[lo].before > r->id || objs[lo].birth < r->id)
      fail_msg("record %zu: no object born at %llu", k, (unsigned long long)r->id);
    const struct obj *o = &objs[lo];
    if (seen[lo]++) fail_msg("%s: object %zu has two records", spec_text, lo);
    matched++;
    assert_int_equal(r->size, o->size);
    assert_string_equal(cname, eph_class_name(h, o->cls));
    assert_int_equal(r->death_kind, EPH_DEATH_FINALIZED); /* everything was dropped before stop */
    if (r->death.bytes < o->dropped)
      fail_msg("%s: object %zu died at %llu, dropped at %llu", spec_text, lo, (unsigned long long)r->death.bytes,
               (unsigned long long)o->dropped);
  }
  size_t expected = 0;
  for (int i = 0; i < nobjects; i++) expected += objs[i].cls != AppEph;
  if (matched != expected) fail_msg("%s %s: %zu of %zu objects have a record", gc, spec_text, matched, expected);
  assert_int_equal(final.samples, final.deaths + final.censored);
  assert_true(log.n > 0);
  free(seen);
  free(child);
  free(objs);
  free(log.deaths_before);
  free(log.clock_after);
  eph_file_free(p);
  eph_heap_free(h);
}

static void test_verify(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 2; seed++) {
    run("eden=32K,headroom=64K,ratio=0.5,verify=1", "mode=finalization,sample=1/1,pretenure=on", 60000, seed);
    run("eden=32K,headroom=64K,ratio=0.5,verify=1", "mode=finalization,sample=1/1,pretenure=off", 60000, seed);
  }
}

static void test_stress(void **state) {
  (void)state;
  run("eden=32K,headroom=64K,stress=1,stress_full=211,verify=1", "mode=finalization,sample=1/1,pretenure=on", 4000, 7);
  run("eden=32K,headroom=64K,stress=1,stress_full=97,verify=1", "mode=finalization,sample=1/1,pretenure=off", 4000, 8);
}

/* Many more samples, no verifier: the cursor wraps the registry often. */
static void test_churn(void **state) {
  (void)state;
  run("eden=64K,headroom=128K", "mode=finalization,sample=1/1,pretenure=on", 400000, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_verify),
      cmocka_unit_test(test_stress),
      cmocka_unit_test(test_churn),
  };
  return cmocka_run_group_tests_name("fin_stress", tests, NULL, NULL);
}
