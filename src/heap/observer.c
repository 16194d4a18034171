/*
 * observer.c — the heap's side of the observer interface (observer.h):
 * the queries a tool makes from its hooks (where an object went, which
 * died, the roots, the spaces), the allocation site, and the few settings
 * a tool may change.  Adding and removing observers is chain.c; the
 * sample points that call on_alloc are sample_point.c; the eden walk
 * edenwalk.c.
 */
#include <string.h>

#include "heap_internal.h"
#include "markbits.h"

/* Where obj's bytes are now: a young object evacuated by this collection
 * is at its copy; nothing is compacted yet. */
eph_value eph_gc_locate(eph_heap *h, eph_value obj) {
  if (!eph_is_ptr(obj) || h->phase == PHASE_NONE) return obj;
  if (ephh_in_space(&h->evacuated[0], obj) || ephh_in_space(&h->evacuated[1], obj)) {
    eph_header hdr = *eph_header_of(obj);
    if (hdr & EPH_HDR_FORWARDED) return eph_forwarded_to(hdr);
  }
  return obj;
}

/* The answer behind eph_gc_where and eph_gc_fate: eph_gc_locate, and
 * whether obj was found dead; compacted: for a survivor of a full GC,
 * where compaction will put it instead. */
static inline eph_value where(const eph_heap *h, eph_value obj, bool *dead, bool compacted) {
  *dead = false;
  if (!eph_is_ptr(obj) || h->phase == PHASE_NONE) return obj;
  if (ephh_in_space(&h->evacuated[0], obj) || ephh_in_space(&h->evacuated[1], obj)) {
    eph_header hdr = *eph_header_of(obj);
    if (!(hdr & EPH_HDR_FORWARDED)) {
      *dead = true;
      return obj;
    }
    obj = eph_forwarded_to(hdr);
    if (h->phase == PHASE_EVACUATED) return obj;
  }
  if (h->phase == PHASE_MARKED && ephh_in_old(h, obj)) {
    *dead = !ephh_full_is_marked(h, obj);
    if (compacted && !*dead) return ephh_full_forward(h, obj);
  }
  return obj;
}

void eph_heap_request_gc(eph_heap *h, eph_gc_kind kind) {
  h->requested_gc = 1 + (int)kind;
  ephh_update_alloc_limit(h);
}

/* The same walk as a tool's inline one (observer.h eph_gc_view_next_dead). */
void eph_gc_each_dead(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data) {
  eph_gc_view v;
  eph_gc_view_begin(h, &v);
  int space = 0;
  uintptr_t at = 0;
  for (eph_value o; (o = eph_gc_view_next_dead(&v, &space, &at));) fn(data, o);
}

eph_value eph_gc_where(eph_heap *h, eph_value obj, bool *dead) { return where(h, obj, dead, false); }

void eph_gc_view_begin(const eph_heap *h, eph_gc_view *v) {
  *v = (eph_gc_view){.trailer_bytes = h->fast.trailer_bytes};
  if (h->phase == PHASE_NONE) return;
  for (int i = 0; i < 2; i++) {
    v->start[i] = (uintptr_t)h->evacuated[i].start;
    v->top[i] = (uintptr_t)h->evacuated[i].top;
  }
  if (h->phase == PHASE_MARKED) {
    v->old_base = (uintptr_t)h->old_base;
    v->old_top = (uintptr_t)h->old_top;
    v->mark_bits = h->mark_bits;
  }
}

uintptr_t eph_gc_dense_end(const eph_heap *h) {
  return (uintptr_t)(h->phase == PHASE_MARKED ? h->dense_end : h->old_base);
}

eph_value eph_gc_fate(eph_heap *h, eph_value obj) {
  bool dead;
  obj = where(h, obj, &dead, true);
  return dead ? EPH_NIL : obj;
}

void eph_heap_old_range(const eph_heap *h, uintptr_t *base, size_t *reserved) {
  *base = (uintptr_t)h->old_base;
  *reserved = h->old_reserved;
}

/* fn on each object of [p, top), in order. */
static void each_in(eph_heap *h, char *p, char *top, void (*fn)(void *data, eph_value obj), void *data) {
  for (; p < top; p = ephh_next_object(h, p)) {
    eph__walk_ahead((uintptr_t)p);
    fn(data, (eph_value)p);
  }
}

void eph_heap_each_object(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data) {
  each_in(h, h->eden.start, h->fast.alloc_top, fn, data);
  each_in(h, h->past.start, h->past.top, fn, data);
  each_in(h, h->old_base, h->old_top, fn, data);
  for (char *p = h->pinned_base; p < h->pinned_top; p = ephh_next_object(h, p))
    if (eph_class_of((eph_value)p) != 0) fn(data, (eph_value)p); /* not a filler */
}

size_t eph_heap_trailer_bytes(const eph_heap *h) { return h->fast.trailer_bytes; }

void eph_heap_set_permanent_bytes(eph_heap *h, size_t bytes) { h->permanent_bytes = bytes; }

void eph_gc_old_fates(eph_heap *h, const eph_value *objs, eph_value *to, size_t n) {
  if (h->phase != PHASE_MARKED) ephh_fatal(h, "eph_gc_old_fates outside a full GC's on_collect");
  for (size_t i = 0; i < n; i++) {
    eph_value obj = objs[i];
    if (ephh_checking(h) && !ephh_in_old(h, obj)) ephh_fatal(h, "eph_gc_old_fates: an object outside old space");
    size_t w = word_index(h, obj);
    /* below the dense prefix: alive and unmoved */
    to[i] = obj < (eph_value)h->dense_end ? obj : bit_is_set(h->mark_bits, w) ? forward_word(h, w) : EPH_NIL;
  }
}
