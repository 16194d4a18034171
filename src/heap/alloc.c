/*
 * alloc.c — the allocation slow path: stress collections, refilling eden
 * by scavenging, old-space allocation for large and pretenured objects,
 * the GC-ratio trigger, heap exhaustion, and the allocation observer.
 */
#include <string.h>

#include "heap_internal.h"

/* A full GC runs when old space has grown by `gc ratio` since the last one. */
static void maybe_full_gc(eph_heap *h, size_t about_to_add) {
  if (eph_old_counted(h) + about_to_add > h->full_threshold) eph_full_gc(h);
}

static inline bool class_matches(const eph_heap *h, eph_class_id cls, eph_format fmt) {
  return cls >= 1 && cls < h->classes_len && h->classes[cls].format == fmt;
}

static bool class_ok(eph_heap *h, eph_class_id cls, eph_format fmt) {
  if (class_matches(h, cls, fmt)) return true;
  if (cls < 1 || cls >= h->classes_len)
    eph_set_error(h, EPH_ERR_INVALID, "allocation with unknown class index %u", cls);
  else
    eph_set_error(h, EPH_ERR_INVALID, "class '%s' has another format than the allocation asked for",
                  h->classes[cls].name);
  return false;
}

static eph_value exhausted(eph_heap *h, size_t total) {
  eph_raise(h, EPH_ERR_HEAP_EXHAUSTED,
            "heap exhausted: cannot allocate %zu bytes within the maximum heap of %zu bytes (%zu bytes live in old space after a full GC)",
            total, h->params.max_heap, eph_old_used(h));
  return EPH_NIL;
}

static char *alloc_old(eph_heap *h, size_t total) {
  maybe_full_gc(h, total);
  eph_safepoint(h);
  char *p = h->over_max ? NULL : eph_old_alloc_mutator(h, total);
  if (!p) {
    eph_full_gc(h);
    eph_safepoint(h);
    p = h->over_max ? NULL : eph_old_alloc_mutator(h, total);
  }
  return p;
}

/* Finalisers run after a collection may allocate and fill eden again: loop. */
static char *alloc_young(eph_heap *h, size_t total) {
  for (;;) {
    if (h->over_max) {
      /* A scavenge had to borrow beyond the maximum: give the full GC a chance. */
      eph_full_gc(h);
      eph_safepoint(h);
      if (h->over_max) return NULL;
    }
    if ((size_t)(h->eden.end - h->fast.alloc_top) >= total) break;
    eph_scavenge(h);
    maybe_full_gc(h, 0);
    eph_safepoint(h);
  }
  char *p = h->fast.alloc_top;
  h->fast.alloc_top = p + total;
  return p;
}

static void stress_collect(eph_heap *h) {
  h->alloc_count++;
  if (h->params.stress_full_every && h->alloc_count % h->params.stress_full_every == 0)
    eph_full_gc(h);
  else if (h->params.stress)
    eph_scavenge(h);
  eph_safepoint(h);
}

/* The common sample point, kept short because a profile that samples
 * every allocation comes here each time: the inline path ran the countdown
 * out, and the object fits in eden with no collection, stress mode, byte
 * sampling or observer allocation in the way.  Same effects as below. */
static bool plain_sample_point(const eph_heap *h, size_t total, bool pretenure) {
  return h->fast.alloc_countdown == 0 && !pretenure && !h->in_gc && !h->in_observer && !h->requested_gc &&
         !h->params.stress && !h->params.stress_full_every && !h->over_max && h->sample_at_bytes == UINT64_MAX &&
         h->has_observer && h->observer.on_alloc && (size_t)(h->eden.end - h->fast.alloc_top) >= total;
}

static inline size_t object_total(const eph_heap *h, size_t payload) {
  return sizeof(eph_header) + eph_round_up(payload, EPH_WORD) + h->fast.trailer_bytes;
}

static inline eph_value init_object(char *p, eph_class_id cls, eph_format fmt, size_t payload, size_t total) {
  *(eph_header *)(void *)p = eph_make_header(cls, fmt, payload);
  memset(p + sizeof(eph_header), 0, total - sizeof(eph_header));
  return (eph_value)p;
}

/* Calls on_alloc for *obj, rooted during the call (the observer may
 * collect: *obj is then updated); in_observer is set, so the observer's own
 * allocations take the slow path and are no samples. */
static void notify_observer(eph_heap *h, eph_value *obj) {
  eph_root_push(h, obj);
  size_t height = eph_roots_height(h) - 1;
  h->observer.on_alloc(h->observer.data, h, *obj);
  eph_roots_reset(h, height);
  h->in_observer = false;
  eph_update_alloc_limit(h);
}

__attribute__((noinline)) static eph_value alloc_at_sample_point(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, size_t total) {
  char *p = h->fast.alloc_top;
  h->fast.alloc_top = p + total;
  eph_value obj = init_object(p, cls, fmt, payload, total);
  /* eph_sample_arm, without the byte trigger (off here) */
  h->objects_base += h->countdown_start;
  h->fast.alloc_countdown = h->countdown_start = h->sample_objects ? h->sample_objects : EPH_NO_COUNTDOWN;
  h->in_observer = true;
  if (h->observer.on_alloc_is_leaf) {
    /* Nothing to root, and the limit stays unless on_alloc re-armed the
     * sampling (eph_heap_sample_next, which sets it at the top while
     * in_observer). */
    char *limit = h->fast.alloc_limit;
    h->observer.on_alloc(h->observer.data, h, obj);
    h->in_observer = false;
    if (h->fast.alloc_limit != limit) eph_update_alloc_limit(h);
  } else {
    h->fast.alloc_limit = h->fast.alloc_top; /* the observer's own allocations take the slow path */
    notify_observer(h, &obj);
  }
  h->fast.site = NULL;
  return obj;
}

static eph_value alloc_slow(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, bool pretenure);

/* The plain sample point first, in a small function: a profile that sees
 * every allocation should not pay for the general path's frame. */
eph_value eph_alloc_slow(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, bool pretenure) {
  if (payload < h->fast.large_object_bytes) {
    size_t total = object_total(h, payload);
    if (plain_sample_point(h, total, pretenure) && class_matches(h, cls, fmt))
      return alloc_at_sample_point(h, cls, fmt, payload, total);
  }
  return alloc_slow(h, cls, fmt, payload, pretenure);
}

__attribute__((noinline)) static eph_value alloc_slow(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload,
                                                      bool pretenure) {
  if (h->in_gc) {
    eph_set_error(h, EPH_ERR_INVALID, "allocation inside the collector (from an observer's on_collect?)");
    return EPH_NIL;
  }
  if (!class_ok(h, cls, fmt)) return EPH_NIL;
  if (payload > EPH_MAX_PAYLOAD_BYTES) {
    eph_raise(h, EPH_ERR_TOO_LARGE, "object of class '%s' too large: %zu bytes (at most %zu)", h->classes[cls].name,
              payload, (size_t)EPH_MAX_PAYLOAD_BYTES);
    return EPH_NIL;
  }
  size_t total = object_total(h, payload);
  /* If the fast path used up the countdown, make "the next allocation" the
   * sample point again while collections run: finalisers run at the safe
   * points below and may allocate (and take the point themselves). */
  if (h->fast.alloc_countdown == 0) h->fast.alloc_countdown = 1;
  if (h->params.stress || h->params.stress_full_every) stress_collect(h);
  if (h->requested_gc && !h->in_observer) {
    eph_gc_kind kind = (eph_gc_kind)(h->requested_gc - 1);
    h->requested_gc = 0;
    if (kind == EPH_GC_FULL) eph_full_gc(h);
    else eph_scavenge(h);
    eph_safepoint(h);
  }

  bool old = pretenure || payload >= h->fast.large_object_bytes;
  char *p = old ? alloc_old(h, total) : alloc_young(h, total);
  if (!p) {
    eph_update_alloc_limit(h);
    return exhausted(h, total); /* not allocated: the countdown is untouched */
  }
  /* This allocation's turn on the countdown.  An observer's own allocations
   * (inside on_alloc) are counted but are no sample points. */
  bool count_point = false;
  if (h->in_observer) h->objects_base++;
  else count_point = --h->fast.alloc_countdown == 0;
  eph_value obj = init_object(p, cls, fmt, payload, total);
  if (old) h->stats.bytes_allocated_old += total;

  bool sample_point = count_point || (!h->in_observer && eph_heap_allocated(h) > h->sample_at_bytes);
  if (old && eph_eden_walk_on(h) && !h->in_observer) {
    sample_point = true; /* eden walks see young objects only */
    eph_eden_walk_note_old(h);
  }
  bool notify = sample_point && h->has_observer && h->observer.on_alloc && !h->in_observer;
  if (notify) h->in_observer = true; /* before arming: the limit then stays at the top */
  if (sample_point) eph_sample_arm(h); /* on_alloc may choose the next gap */
  else eph_update_alloc_limit(h);
  if (notify) notify_observer(h, &obj);
  h->fast.site = NULL;
  return obj;
}

eph_site *eph_heap_site(eph_heap *h) { return h->fast.site; }
