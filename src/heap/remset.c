/*
 * remset.c — the remembered set: old objects that may hold pointers into
 * new space.  The write barrier adds an object once (the header flag says
 * it is in); the scavenger rebuilds the set as it scans it.
 */
#include <stdlib.h>

#include "heap_internal.h"

static void remset_grow(eph_heap *h) {
  size_t cap = h->remset_cap ? h->remset_cap * 2 : EPH_REMSET_INITIAL;
  eph_value *r = realloc(h->remset, cap * sizeof *r);
  if (!r) ephh_fatal(h, "the remembered set cannot grow");
  h->remset = r;
  h->remset_cap = cap;
}

static inline void remset_add(eph_heap *h, eph_value obj) {
  if (EPH_UNLIKELY(h->remset_len == h->remset_cap)) remset_grow(h);
  /* one store, relaxed-atomic: a tool's thread may read the header meanwhile
   * (a profiler walking a retired eden, eph_gc_eden_walk_next) */
  eph_header *hdr = eph_header_of(obj);
  __atomic_store_n(hdr, *hdr | EPH_HDR_REMEMBERED, __ATOMIC_RELAXED);
  h->remset[h->remset_len++] = obj;
}

void ephh_remset_add(eph_heap *h, eph_value obj) { remset_add(h, obj); }

void eph_remember_slow(eph_heap *h, eph_value obj) {
  if (!(*eph_header_of(obj) & EPH_HDR_REMEMBERED)) remset_add(h, obj);
}

/* eph_store's slow path while a tool watches stores (observer.on_store or
 * observer.store_clock; store_hook is set only while there is one).  The
 * hook is called last, a tail call: Merlin's barrier runs at every pointer
 * store. */
void eph_store_hooked(eph_heap *h, eph_value obj, size_t i, eph_value v) {
  eph_value *slot = (eph_value *)(obj + sizeof(eph_header)) + i;
  eph_value old = *slot;
  *slot = v;
  if (eph_is_young(h, v) && !eph_is_young(h, obj)) eph_remember_slow(h, obj);
  if (h->observer.on_store) {
    h->observer.on_store(h->observer.data, h, obj, i, old, v);
  } else if (eph_is_ptr(old)) {
    uint64_t *stamp = eph_trailer(old) + h->observer.store_stamp_word, now = *h->observer.store_clock;
    if (*stamp < now) *stamp = now;
  }
}
