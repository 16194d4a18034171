/*
 * remset.c — the remembered set: old objects that may hold pointers into
 * new space.  The write barrier adds an object once (the header flag says
 * it is in); the scavenger rebuilds the set as it scans it.
 */
#include <stdlib.h>

#include "heap_internal.h"

void eph_remset_add(eph_heap *h, eph_value obj) {
  if (h->remset_len == h->remset_cap) {
    size_t cap = h->remset_cap ? h->remset_cap * 2 : 1024;
    eph_value *r = realloc(h->remset, cap * sizeof *r);
    if (!r) eph_fatal(h, "the remembered set cannot grow");
    h->remset = r;
    h->remset_cap = cap;
  }
  *eph_header_of(obj) |= EPH_HDR_REMEMBERED;
  h->remset[h->remset_len++] = obj;
}

void eph_remember_slow(eph_heap *h, eph_value obj) {
  if (!(*eph_header_of(obj) & EPH_HDR_REMEMBERED)) eph_remset_add(h, obj);
}

/* eph_store's slow path while a tool watches stores (observer.on_store). */
void eph_store_hooked(eph_heap *h, eph_value obj, size_t i, eph_value v) {
  eph_value *slot = (eph_value *)(obj + sizeof(eph_header)) + i;
  if (h->has_observer && h->observer.on_store) h->observer.on_store(h->observer.data, h, obj, i, *slot, v);
  *slot = v;
  if (eph_is_young(h, v) && !eph_is_young(h, obj)) eph_remember_slow(h, obj);
}
