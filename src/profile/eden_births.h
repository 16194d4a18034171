/*
 * eden_births.h — births of the objects an eden walk visits, for the
 * profile's modes that see young allocations without a call for each
 * (gc mode's eden walk, gc_eden.c; finalization mode's arming in runs, mode_finalization.c).
 * Eden is a bump region: an object's birth is the clock when eden was last
 * empty, plus the bytes allocated before it in eden, plus the old-space
 * allocations made meanwhile (each noted with eden's top at the time:
 * prof_note_old_alloc, in the mode's eden_log), plus its own bytes.
 */
#ifndef EPHEMERA_PROFILE_EDEN_BIRTHS_H
#define EPHEMERA_PROFILE_EDEN_BIRTHS_H

#include "profiler.h"

/* Where a walk over eden stands: the heap's iterator, the clock before the
 * next object, and the old-space allocations counted into it so far. */
typedef struct walk_pos {
  eph_eden_walk w;
  uint64_t clock;
  size_t next_old;
} walk_pos;

/* The old-space allocations since eden was last empty, as a walk reads
 * them: a copy, since the profiler's fields beside them change while
 * another thread walks. */
typedef struct eden_olds {
  const struct old_alloc *at;
  size_t n;
  uint64_t eden_clock;
} eden_olds;

static inline eden_olds eden_olds_of(const eden_log *e) {
  return (eden_olds){e->old_allocs, e->nold_allocs, e->eden_clock};
}

/* Notes in e an old-space allocation made at clock t, for the walk's births. */
static inline void prof_note_old_alloc(eph_profiler *p, eden_log *e, uint64_t t) {
  e->old_allocs = prof_grow(p, e->old_allocs, &e->old_allocs_cap, e->nold_allocs + 1, sizeof *e->old_allocs);
  e->old_allocs[e->nold_allocs++] = (struct old_alloc){eph_heap_eden_top(p->h), t - e->eden_clock};
}

/* The next sample point for a clock point (a wall-clock sample) only. */
static inline void prof_arm_clock_point(eph_profiler *p, uint64_t now) {
  eph_observer_sample_next(p->h, p->obs, 0, p->clocks.next_point > now ? p->clocks.next_point - now : 1);
}

/* The birth word of an object whose allocation ended at `clock`. */
static inline uint64_t birth_word(uint64_t clock, uint32_t site_id) {
  return (clock & BIRTH_MASK) | (uint64_t)(site_id > SITE_MAX ? 0 : site_id) << BIRTH_BITS;
}

/* Counts into pos's clock the old-space allocations made when eden's top
 * was at or below `top`: they came before the young object there. */
static inline void count_olds(const eden_olds *olds, walk_pos *pos, uintptr_t top) {
  while (pos->next_old < olds->n && olds->at[pos->next_old].at <= top)
    pos->clock = olds->eden_clock + olds->at[pos->next_old++].bytes;
}

/* The clock after the object the walk just visited at `at`: the old-space
 * allocations before it, then its bytes, as the walk read them. */
static inline void clock_past(const eden_olds *olds, walk_pos *pos, eph_value at) {
  count_olds(olds, pos, (uintptr_t)at);
  pos->clock += pos->w.next - (uintptr_t)at - pos->w.trailer_bytes;
}

/* Moves the walk to the next object; false at the end of its range. */
static inline bool next_object(const eden_olds *olds, walk_pos *pos, eph_value *was, eph_value *at, bool *dead,
                               eph_site **site) {
  if (!eph_gc_eden_walk_next(&pos->w, was, at, dead, site)) return false;
  clock_past(olds, pos, *was);
  return true;
}

/* next_object for a walk outside a collection (eph_eden_walk_begin). */
static inline bool next_live_object(const eden_olds *olds, walk_pos *pos, eph_value *obj, eph_site **site) {
  if (!eph_eden_walk_next_live(&pos->w, obj, site)) return false;
  clock_past(olds, pos, *obj);
  return true;
}

#endif
