/*
 * Merlin's backward pass goes through the dead newest address first and
 * falls back to the paper's order (latest stamp first) when that would
 * search too much.  Here a chain built oldest to newest (each node points
 * to the next, newer one) whose nodes were last reachable newest first:
 * every source raises the whole rest of the chain, so the pass must fall
 * back; and on it and on ordinary garbage, merlin's death times equal
 * brute force's (a full GC before every allocation), object by object.
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

#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/profile.h"
#include "profile_test.h"

/* Runs the chain program of `length` nodes profiled with spec_text;
 * returns the profile and, in *stats, the profiler's last statistics. */
static eph_file *run_chain(const char *spec_text, size_t length, eph_profile_stats *stats) {
  eph_profile_spec spec = test_spec(spec_text, "merlin-order");
  eph_error err;
  eph_gc_params params = params_with("eden=4M");
  eph_profile_prepare_params(&spec, &params);
  eph_heap *h = NULL;
  assert_int_equal(eph_heap_new(&params, &h, &err), EPH_OK);
  eph_class_id Node = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  eph_class_id Index = eph_class_register(h, "Index", EPH_FORMAT_POINTERS);
  eph_class_id Tick = eph_class_register(h, "Tick", EPH_FORMAT_BYTES);
  test_profile_start(h, &spec);
  EPH_FRAME(h);
  EPH_LOCAL(h, index);
  EPH_LOCAL(h, prev);
  EPH_LOCAL(h, node);
  index = eph_alloc(h, Index, length);
  for (size_t i = 0; i < length; i++) {
    node = eph_alloc(h, Node, 2);
    eph_store(h, node, 1, eph_int((intptr_t)i));
    if (prev != EPH_NIL) eph_store(h, prev, 0, node); /* older -> newer */
    eph_store(h, index, i, node);
    prev = node;
  }
  prev = node = EPH_NIL;
  /* Last reachable newest first: each leaves the index at a later time. */
  for (size_t i = length; i-- > 0;) {
    eph_store(h, index, i, EPH_NIL);
    (void)eph_alloc_bytes(h, Tick, 8); /* time moves at allocations */
  }
  /* Some ordinary garbage too: short lists, newest pointing to oldest. */
  for (size_t i = 0; i < 2000; i++) {
    node = eph_alloc(h, Node, 2);
    eph_store(h, node, 0, i % 5 ? prev : EPH_NIL);
    prev = node;
  }
  index = prev = node = EPH_NIL;
  EPH_UNFRAME(h);
  eph_file *prof = test_profile_finish(h, spec.out, stats);
  eph_heap_free(h);
  return prof;
}

static int by_id(const void *a, const void *b) {
  uint64_t x = ((const eph_record *)a)->id, y = ((const eph_record *)b)->id;
  return x < y ? -1 : x > y;
}

static void test_chain_falls_back_and_stays_exact(void **state) {
  (void)state;
  size_t length = 3000;
  eph_profile_stats ms, bs;
  eph_file *m = run_chain("mode=merlin", length, &ms);
  eph_file *b = run_chain("mode=brute", length, &bs);
  /* The chain made the sweep give up at least once. */
  assert_true(ms.merlin_resorts >= 1);
  assert_int_equal(m->nrecords, b->nrecords);
  assert_true(m->nrecords > 2 * length);
  qsort(m->records, m->nrecords, sizeof *m->records, by_id);
  qsort(b->records, b->nrecords, sizeof *b->records, by_id);
  size_t chain_deaths = 0;
  for (size_t i = 0; i < m->nrecords; i++) {
    const eph_record *x = &m->records[i], *y = &b->records[i];
    assert_int_equal(x->id, y->id);
    if (x->death.bytes != y->death.bytes || x->death_kind != y->death_kind)
      fail_msg("object born at %llu: merlin says death %llu (kind %u), brute force %llu (kind %u)",
               (unsigned long long)x->id, (unsigned long long)x->death.bytes, x->death_kind,
               (unsigned long long)y->death.bytes, y->death_kind);
    chain_deaths += x->death.bytes > x->birth.bytes;
  }
  assert_true(chain_deaths > length);
  eph_file_free(m);
  eph_file_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_falls_back_and_stays_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
