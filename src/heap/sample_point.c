/*
 * sample_point.c — where the allocation observer sees allocations: the
 * sample points (observer.h).  The inline fast path counts
 * fast.alloc_countdown down and takes the slow path when it reaches 0, or
 * when alloc_top reaches alloc_limit, which the byte trigger pulls down;
 * the slow path comes here first.
 */
#include <string.h>

#include "heap_internal.h"

/* The inline allocator takes the slow path whenever alloc_top reaches
 * alloc_limit; pulling the limit down to the top sends every allocation
 * there (stress mode, allocation observers) at no cost to the fast path. */
void ephh_update_alloc_limit(eph_heap *h) {
  /* Allocations made by an observer inside on_alloc take the slow path,
   * which leaves them out of the sample countdown. */
  if (h->params.stress || h->params.stress_full_every || h->in_observer || h->requested_gc) {
    h->fast.alloc_limit = h->fast.alloc_top;
    return;
  }
  h->fast.alloc_limit = h->eden.end;
  if (h->sample_at_bytes != UINT64_MAX) {
    uint64_t now = eph_heap_allocated(h);
    uint64_t gap = h->sample_at_bytes > now ? h->sample_at_bytes - now : 0;
    if (gap < (uint64_t)(h->eden.end - h->fast.alloc_top)) h->fast.alloc_limit = h->fast.alloc_top + gap;
  }
}

/* Re-arms both sample triggers from the current clocks. */
void ephh_sample_arm(eph_heap *h) {
  h->objects_base += h->countdown_start - h->fast.alloc_countdown;
  h->fast.alloc_countdown = h->sample_objects ? h->sample_objects : EPH_NO_COUNTDOWN;
  h->countdown_start = h->fast.alloc_countdown;
  h->sample_at_bytes = h->sample_bytes ? eph_heap_allocated(h) + h->sample_bytes : UINT64_MAX;
  ephh_update_alloc_limit(h);
}

void ephh_sample_next(eph_heap *h, uint64_t objects, uint64_t bytes) {
  h->sample_objects = objects;
  h->sample_bytes = bytes;
  ephh_sample_arm(h);
}

void ephh_sample_resume(eph_heap *h, uint64_t objects, uint64_t bytes, uint64_t countdown, uint64_t at_bytes) {
  h->sample_objects = objects;
  h->sample_bytes = bytes;
  h->objects_base += h->countdown_start - h->fast.alloc_countdown;
  h->fast.alloc_countdown = h->countdown_start = countdown ? countdown : EPH_NO_COUNTDOWN;
  h->sample_at_bytes = at_bytes;
  ephh_update_alloc_limit(h);
}

/* One observer's are the heap's (a test of one flag more than setting
 * them: a profile sets them at every sample); several observers' go
 * through the chain (chain.c). */
void eph_observer_sample_next(eph_heap *h, eph_observer_reg *reg, uint64_t objects, uint64_t bytes) {
  if (EPH_UNLIKELY(h->points_per_observer)) ephh_chain_sample_next(h, reg, objects, bytes);
  else ephh_sample_next(h, objects, bytes);
}

void eph_heap_sample_next(eph_heap *h, uint64_t objects, uint64_t bytes) {
  if (EPH_UNLIKELY(h->points_per_observer)) ephh_chain_sample_next(h, ephh_acting_observer(h), objects, bytes);
  else ephh_sample_next(h, objects, bytes);
}

uint64_t eph_heap_objects_allocated(const eph_heap *h) {
  return h->objects_base + (h->countdown_start - h->fast.alloc_countdown);
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

/* Calls on_alloc for *obj, rooted during the call (the observer may
 * collect: *obj is then updated); in_observer is set, so the observer's own
 * allocations take the slow path and are no samples. */
void ephh_notify_alloc_observer(eph_heap *h, eph_value *obj) {
  eph_root_push(h, obj);
  size_t height = eph_roots_height(h) - 1;
  h->observer.on_alloc(h->observer.data, h, *obj);
  eph_roots_reset(h, height);
  h->in_observer = false;
  ephh_update_alloc_limit(h);
}

__attribute__((noinline)) static eph_value alloc_at_sample_point(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, size_t total) {
  char *p = h->fast.alloc_top;
  h->fast.alloc_top = p + total;
  eph_value obj = ephh_init_object(p, cls, fmt, payload, total);
  /* ephh_sample_arm, without the byte trigger (off here) */
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
    if (h->fast.alloc_limit != limit) ephh_update_alloc_limit(h);
  } else {
    h->fast.alloc_limit = h->fast.alloc_top; /* the observer's own allocations take the slow path */
    ephh_notify_alloc_observer(h, &obj);
  }
  h->fast.site = NULL;
  return obj;
}

/* The plain sample point first, in a small function: a profile that sees
 * every allocation should not pay for the general path's frame. */
eph_value eph_alloc_slow(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, bool pretenure) {
  if (payload < h->fast.large_object_bytes) {
    size_t total = ephh_object_total(h, payload);
    if (plain_sample_point(h, total, pretenure) && ephh_class_matches(h, cls, fmt))
      return alloc_at_sample_point(h, cls, fmt, payload, total);
  }
  return ephh_alloc_general(h, cls, fmt, payload, pretenure);
}

/* The general path's sample point (alloc.c, after a collection or for an
 * old-space object): this allocation's turn on the countdown.  An
 * observer's own allocations (inside on_alloc) are counted but are no
 * sample points. */
void ephh_sample_point_slow(eph_heap *h, eph_value *obj, bool old) {
  bool count_point = false;
  if (h->in_observer) h->objects_base++, h->unsampled_objects++;
  else count_point = --h->fast.alloc_countdown == 0;
  bool sample_point = count_point || (!h->in_observer && eph_heap_allocated(h) > h->sample_at_bytes);
  if (old && ephh_eden_walk_on(h) && !h->in_observer) {
    sample_point = true; /* eden walks see young objects only */
    ephh_eden_walk_note_old(h);
  }
  bool notify = sample_point && h->has_observer && h->observer.on_alloc && !h->in_observer;
  if (notify) h->in_observer = true; /* before arming: the limit then stays at the top */
  if (sample_point) ephh_sample_arm(h); /* on_alloc may choose the next gap */
  else ephh_update_alloc_limit(h);
  if (notify) ephh_notify_alloc_observer(h, obj);
}

