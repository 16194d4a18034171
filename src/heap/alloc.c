/*
 * alloc.c — the allocation slow path: stress collections, refilling eden
 * by scavenging, old-space allocation for large and pretenured objects,
 * the GC-ratio trigger and heap exhaustion.  Where the observer sees an
 * allocation (the sample points) is sample_point.c.
 */
#include <string.h>

#include "heap_internal.h"

/* A full GC runs when old space has grown by `gc ratio` since the last one. */
static void maybe_full_gc(eph_heap *h, size_t about_to_add) {
  if (ephh_old_counted(h) + about_to_add > h->full_threshold) ephh_full_gc(h);
}

static bool class_ok(eph_heap *h, eph_class_id cls, eph_format fmt) {
  if (ephh_class_matches(h, cls, fmt)) return true;
  if (cls < 1 || cls >= h->classes_len)
    ephh_set_error(h, EPH_ERR_INVALID, "allocation with unknown class index %u", cls);
  else
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s' has another format than the allocation asked for",
                  h->classes[cls].name);
  return false;
}

static eph_value exhausted(eph_heap *h, size_t total) {
  ephh_raise(h, EPH_ERR_HEAP_EXHAUSTED,
            "heap exhausted: cannot allocate %zu bytes within the maximum heap of %zu bytes (%zu bytes live in old space after a full GC)",
            total, h->params.max_heap, ephh_old_used(h));
  return EPH_NIL;
}

static char *alloc_old(eph_heap *h, size_t total) {
  maybe_full_gc(h, total);
  ephh_safepoint(h);
  char *p = h->over_max ? NULL : ephh_old_alloc_mutator(h, total);
  if (!p) {
    ephh_full_gc(h);
    ephh_safepoint(h);
    p = h->over_max ? NULL : ephh_old_alloc_mutator(h, total);
  }
  return p;
}

/* Finalisers run after a collection may allocate and fill eden again: loop. */
static char *alloc_young(eph_heap *h, size_t total) {
  for (;;) {
    if (h->over_max) {
      /* A scavenge had to borrow beyond the maximum: give the full GC a chance. */
      ephh_full_gc(h);
      ephh_safepoint(h);
      if (h->over_max) return NULL;
    }
    if ((size_t)(h->eden.end - h->fast.alloc_top) >= total) break;
    ephh_scavenge(h);
    maybe_full_gc(h, 0);
    ephh_safepoint(h);
  }
  char *p = h->fast.alloc_top;
  h->fast.alloc_top = p + total;
  return p;
}

static void stress_collect(eph_heap *h) {
  h->alloc_count++;
  if (h->params.stress_full_every && h->alloc_count % h->params.stress_full_every == 0)
    ephh_full_gc(h);
  else if (h->params.stress)
    ephh_scavenge(h);
  ephh_safepoint(h);
}

/* The general slow path: everything but the plain sample point
 * (sample_point.c, which comes here for the rest). */
__attribute__((noinline)) eph_value ephh_alloc_general(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload,
                                                      bool pretenure) {
  if (h->in_gc) {
    ephh_set_error(h, EPH_ERR_INVALID, "allocation inside the collector (from an observer's on_collect?)");
    return EPH_NIL;
  }
  if (h->in_batch_finalizer) { /* it could collect, and the batch's ephemerons are not rooted */
    ephh_set_error(h, EPH_ERR_INVALID, "allocation on the slow path inside a batch finaliser (it may collect)");
    return EPH_NIL;
  }
  if (!class_ok(h, cls, fmt)) return EPH_NIL;
  if (payload > EPH_MAX_PAYLOAD_BYTES) {
    ephh_raise(h, EPH_ERR_TOO_LARGE, "object of class '%s' too large: %zu bytes (at most %zu)", h->classes[cls].name,
              payload, (size_t)EPH_MAX_PAYLOAD_BYTES);
    return EPH_NIL;
  }
  size_t total = ephh_object_total(h, payload);
  /* If the fast path used up the countdown, make "the next allocation" the
   * sample point again while collections run: finalisers run at the safe
   * points below and may allocate (and take the point themselves). */
  if (h->fast.alloc_countdown == 0) h->fast.alloc_countdown = 1;
  if (h->params.stress || h->params.stress_full_every) stress_collect(h);
  if (h->requested_gc && !h->in_observer) {
    eph_gc_kind kind = (eph_gc_kind)(h->requested_gc - 1);
    h->requested_gc = 0;
    if (kind == EPH_GC_FULL) ephh_full_gc(h);
    else ephh_scavenge(h);
    ephh_safepoint(h);
  }

  bool old = pretenure || payload >= h->fast.large_object_bytes;
  char *p = old ? alloc_old(h, total) : alloc_young(h, total);
  if (!p) {
    ephh_update_alloc_limit(h);
    return exhausted(h, total); /* not allocated: the countdown is untouched */
  }
  eph_value obj = ephh_init_object(p, cls, fmt, payload, total);
  if (old) ephh_count_old_bytes(h, total);
  ephh_sample_point_slow(h, &obj, old); /* this allocation's turn on the countdown */
  h->fast.site = NULL;
  return obj;
}
