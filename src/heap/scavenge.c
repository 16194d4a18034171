/*
 * scavenge.c — the young-generation collector (Cheney copying).
 *
 * From-space is eden plus the `past` survivor space; survivors are copied
 * into the `future` survivor space, or tenured into old space when their
 * age reaches the tenuring threshold or `future` is full (Pharo tenures on
 * survivor overflow too).  Roots are the shadow stack, the global roots and
 * the remembered set.  Two Cheney queues are scanned until both are empty:
 * `future` from its start, and old space from where it stood when the
 * scavenge began (promoted objects are appended there contiguously).
 *
 * A copied object's old header becomes its forwarding address | 1.
 */
#include <string.h>

#include "heap_internal.h"

typedef struct scavenger {
  eph_heap *h;
  uintptr_t from_lo, from_size;  /* eden and past are adjacent or not: test both */
  uintptr_t past_lo, past_size;
  unsigned tenure_age;           /* 0: tenure everything */
  uint64_t copied, promoted;
} scavenger;

static inline bool in_from_space(const scavenger *s, eph_value v) {
  return (v & 7) == 0 && v != 0 && (v - s->from_lo < s->from_size || v - s->past_lo < s->past_size);
}

/* Copies obj out of from-space (once) and returns its new address. */
static eph_value copy_object(scavenger *s, eph_value obj) {
  eph_header hdr = *eph_header_of(obj);
  if (hdr & EPH_HDR_FORWARDED) return (eph_value)(hdr & ~EPH_HDR_FORWARDED);
  eph_heap *h = s->h;
  size_t bytes = eph_object_bytes(obj);
  unsigned age = (unsigned)((hdr & EPH_HDR_AGE_MASK) >> EPH_HDR_AGE_SHIFT);
  if (age < 15) age++;
  char *dest;
  if (age >= s->tenure_age || (size_t)(h->future.end - h->future.top) < bytes) {
    dest = eph_old_alloc_gc(h, bytes);
    s->promoted += bytes;
  } else {
    dest = h->future.top;
    h->future.top += bytes;
    s->copied += bytes;
  }
  memcpy(dest, (const void *)obj, bytes);
  *(eph_header *)(void *)dest = (hdr & ~EPH_HDR_AGE_MASK) | ((eph_header)age << EPH_HDR_AGE_SHIFT);
  *eph_header_of(obj) = (eph_header)(uintptr_t)dest | EPH_HDR_FORWARDED;
  return (eph_value)dest;
}

static inline void scavenge_slot(scavenger *s, eph_value *slot) {
  eph_value v = *slot;
  if (in_from_space(s, v)) *slot = copy_object(s, v);
}

/* Scans the pointer slots of obj; returns true if one still points young. */
static bool scan_object(scavenger *s, eph_value obj) {
  if (eph_format_of(obj) == EPH_FORMAT_BYTES) return false;
  eph_value *slot = (eph_value *)(obj + sizeof(eph_header));
  eph_value *end = slot + eph_size_bytes(obj) / sizeof(eph_value);
  bool young = false;
  for (; slot < end; slot++) {
    scavenge_slot(s, slot);
    young |= eph_is_young(s->h, *slot);
  }
  return young;
}

/* The remembered set is rebuilt as it is scanned: an entry stays only if
 * it still points into new space afterwards. */
static void scan_remembered_set(scavenger *s) {
  eph_heap *h = s->h;
  size_t keep = 0;
  for (size_t i = 0; i < h->remset_len; i++) {
    eph_value obj = h->remset[i];
    if (scan_object(s, obj)) {
      h->remset[keep++] = obj;
    } else {
      *eph_header_of(obj) &= ~EPH_HDR_REMEMBERED;
    }
  }
  h->remset_len = keep;
}

static void scan_roots(scavenger *s) {
  eph_heap *h = s->h;
  for (size_t i = 0; i < h->fast.roots_len; i++) scavenge_slot(s, h->fast.roots[i]);
  for (size_t i = 0; i < h->globals_len; i++) scavenge_slot(s, h->globals[i]);
}

/* Drains both Cheney queues. */
static void scan_to_completion(scavenger *s, char *old_scan) {
  eph_heap *h = s->h;
  char *young_scan = h->future.start;
  while (young_scan < h->future.top || old_scan < h->old_top) {
    while (young_scan < h->future.top) {
      scan_object(s, (eph_value)young_scan);
      young_scan = eph_next_object(young_scan);
    }
    while (old_scan < h->old_top) {
      eph_value obj = (eph_value)old_scan;
      if (scan_object(s, obj) && !(*eph_header_of(obj) & EPH_HDR_REMEMBERED)) eph_remset_add(h, obj);
      old_scan = eph_next_object(old_scan);
    }
  }
}

/*
 * Moves every live young object to `future` or old space and empties eden
 * and `past`.  With tenure_all (the first step of a full GC), everything
 * goes to old space and new space ends empty.
 */
void eph_evacuate_young(eph_heap *h, bool tenure_all) {
  scavenger s = {
      .h = h,
      .from_lo = (uintptr_t)h->eden.start,
      .from_size = (uintptr_t)(h->fast.alloc_top - h->eden.start),
      .past_lo = (uintptr_t)h->past.start,
      .past_size = (uintptr_t)(h->past.top - h->past.start),
      .tenure_age = tenure_all ? 0 : (unsigned)h->params.tenure_age,
  };
  uint64_t eden_used = (uint64_t)(h->fast.alloc_top - h->eden.start);
  h->future.top = h->future.start;
  char *old_scan = h->old_top;

  scan_roots(&s);
  scan_remembered_set(&s);
  scan_to_completion(&s, old_scan);

  h->phase = PHASE_EVACUATED;
  if (h->has_observer && h->observer.on_collect) h->observer.on_collect(h->observer.data, h, h->current.kind);
  h->phase = PHASE_NONE;

  /* Flip: future becomes past; eden and the old past are free again. */
  eph_space old_past = h->past;
  h->past = h->future;
  h->future = old_past;
  h->future.top = h->future.start;
  h->eden_retired += eden_used;
  h->fast.alloc_top = h->eden.start;
  eph_update_alloc_limit(h);

  h->current.bytes_copied += s.copied;
  h->current.bytes_promoted += s.promoted;
}

void eph_scavenge(eph_heap *h) {
  eph_gc_begin(h, EPH_GC_SCAVENGE);
  eph_evacuate_young(h, false);
  eph_gc_end(h);
}
