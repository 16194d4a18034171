/*
 * remset.c — the remembered set: old objects that may hold pointers into
 * new space.  The write barrier adds an object once (the header flag says
 * it is in); the scavenger rebuilds the set as it scans it.
 *
 * An inert ephemeron (heap_internal.h, ephh_inert_candidate: a profiler's,
 * one per sample) goes in as one, in the set's inert part: the scavenger
 * settles it at its fixpoint without scanning it first, which saves
 * reading each of them once more per scavenge, and takes that part whole
 * as its list of inert ephemerons to settle (scavenge.c), without a pass
 * over the entries to sort them out.  A young value stored into it later
 * makes it a plain entry too (both flags set), and the scavenger's scan
 * of that entry clears the inert flag: the inert entry is then passed
 * over.
 */
#include <stdlib.h>

#include "heap_internal.h"

void ephh_remset_grow(eph_heap *h) {
  size_t cap = h->remset_cap ? h->remset_cap * 2 : EPH_REMSET_INITIAL;
  eph_value *r = realloc(h->remset, cap * sizeof *r);
  if (!r) ephh_fatal(h, "the remembered set cannot grow");
  h->remset = r;
  h->remset_cap = cap;
}

static inline void remset_add(eph_heap *h, eph_value obj) {
  if (EPH_UNLIKELY(h->remset_len == h->remset_cap)) ephh_remset_grow(h);
  ephh_remset_push(h, obj, false);
}

void ephh_remset_add(eph_heap *h, eph_value obj) { remset_add(h, obj); }

void eph_remember_slow(eph_heap *h, eph_value obj) {
  eph_header hdr = *eph_header_of(obj);
  if (hdr & EPH_HDR_REMEMBERED) return;
  if (hdr & EPH_HDR_REMEMBERED_INERT) {
    /* in as an inert ephemeron: still one unless its value is young now */
    if (!eph_is_young(h, eph_slot(obj, EPH_EPHEMERON_VALUE))) return;
    remset_add(h, obj);
    return;
  }
  if (EPH_UNLIKELY(h->remset_len == h->remset_cap)) ephh_remset_grow(h);
  ephh_remember(h, obj);
}

void ephh_remset_plain_class(eph_heap *h, eph_class_id cls) {
  eph_value_vec *v = &h->remset_inert;
  size_t keep = 0;
  for (size_t i = 0; i < v->len; i++) {
    eph_value obj = v->items[i] & ~REMSET_INERT;
    if (eph_class_of(obj) != cls) {
      v->items[keep++] = v->items[i];
      continue;
    }
    eph_header *hdr = eph_header_of(obj);
    *hdr &= ~EPH_HDR_REMEMBERED_INERT;
    if (!(*hdr & EPH_HDR_REMEMBERED)) remset_add(h, obj); /* else in plainly already */
  }
  v->len = keep;
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
