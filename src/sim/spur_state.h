/*
 * spur_state.h — spur's state during one configuration (spur.c), shared
 * with its scavenge by survivor sets (spur_sets.c).
 */
#ifndef EPH_SIM_SPUR_STATE_H
#define EPH_SIM_SPUR_STATE_H

#include "spur_space.h"

#define MAX_AGE 15 /* the header's age field saturates here (scavenge.c) */

/* An object's state, one byte (a per-configuration array of one byte per
 * object is cleared at every run: the fewer, the faster): its space, its
 * age, and whether it is special (old, but not tenured by age). */
#define SPACE_MASK 7u
#define AGE_SHIFT 3
#define AGE_MASK (15u << AGE_SHIFT)
#define SPECIAL 0x80u

/* A store into an old object: its rank, the object, its index in in->stores. */
typedef struct pending {
  uint32_t seq, o;
  uint64_t k;
} pending;

typedef struct spur {
  simrun r;
  const eph_gc_params *p;
  uint8_t *space;          /* space | age << AGE_SHIFT | SPECIAL (above) */
  uint8_t *mark;           /* without the trace's roots only */
  uint8_t *remembered;     /* 1: in the remembered set; 2: only inside write_barrier, a candidate */
  size_t fwd_pos;          /* in->fwd: the first store not yet through the barrier */
  simvec past, future, remset, live, marked;
  uint64_t *root_seen;     /* per root slot: sim_root_at_from's count */
  uint32_t *cursor;        /* per slot: 1 + where slot_value_multi last found its value; 0 unknown */
  simvec cursored;         /* the slots whose cursor is set (zeroed again by scratch_give) */
  sim_oldvec old;
  size_t eden_lo, next;    /* eden is objects [eden_lo, next) not in old space */
  uint64_t store_bound;    /* the stores made so far: ranks below this */
  bool graph;              /* the input has the object graph (a trace) */
  uint64_t root_time;      /* the clock of the allocation under way: the roots' state (roots.c) */
  uint64_t young_max;      /* a target with more young bytes after it is not young (tenure x eden) */
  pending *heap;           /* per old object, its next store not yet through the barrier */
  size_t nheap, heap_cap;
  pending *added;          /* write_barrier: objects to remember, with their first young store */
  size_t nadded, added_cap;
  /* evacuate_young_by_sets is not tried for sets_wait more scavenges
   * after it found one it cannot do; the wait doubles while it keeps
   * failing (sets_backoff), so a configuration that always overflows
   * wastes little on it. */
  unsigned sets_wait, sets_backoff;
  spur_space sp; /* sizes, old-space accounting */
  uint64_t eden_used, past_used, future_used;
} spur;

static inline unsigned space_bits(const spur *s, uint32_t o) { return s->space[o] & SPACE_MASK; }
static inline void set_space(spur *s, uint32_t o, unsigned sp) {
  s->space[o] = (uint8_t)((s->space[o] & ~SPACE_MASK) | sp);
}
static inline bool is_special(const spur *s, uint32_t o) { return s->space[o] & SPECIAL; }

static inline uint64_t used(const spur *s) { return s->eden_used + s->past_used + s->sp.old_used; }

static inline unsigned space_of(const spur *s, uint32_t o) {
  unsigned sp = space_bits(s, o);
  return sp == SP_DEAD && o >= s->eden_lo && o < s->next ? SP_EDEN : sp;
}

static inline bool in_from_space(const spur *s, uint32_t o) {
  if (o == SIM_NONE) return false;
  unsigned sp = space_of(s, o);
  return sp == SP_EDEN || sp == SP_PAST;
}

/* slot_value for a slot stored into several times (spur.c). */
uint32_t spur_slot_value_multi(spur *s, uint64_t g);

/* Slot g's value now: the last store into it below store_bound.  Most
 * slots are stored into once (in->slot_one says so, and with what). */
static inline uint32_t slot_value(spur *s, uint64_t g) {
  sim_store one = s->r.in->slot_one[g];
  if (one.seq >= s->store_bound) return SIM_NONE; /* not stored into yet */
  return one.target != SIM_MULTI ? one.target : spur_slot_value_multi(s, g);
}

/* Pushes eden's objects in [i, hi) whose death is after the clock onto
 * out, in birth order, adding their bytes to *bytes; skips blocks that
 * died whole (the input's death maxima).  False once *bytes passes cap
 * (spur_sets.c). */
bool spur_eden_live(spur *s, size_t i, size_t hi, simvec *out, uint64_t *bytes, uint64_t cap);

/* scavenge.c rebuild_remembered_set: keeps the remembered objects with a
 * slot naming an object in space young_space (where the survivors are
 * now), forgets the others; returns the slots the remembered objects had
 * between them (spur.c). */
uint64_t spur_rebuild_remset(spur *s, unsigned young_space);

/* The end of a scavenge: future becomes past, holding survivor_bytes, and
 * eden starts empty after the last allocation (spur.c). */
void spur_flip(spur *s, uint64_t survivor_bytes);

/* Pushes o onto out, adding its bytes to *bytes, if its death is after t
 * (the clock; a parameter, so that a caller's loop keeps it in a register)
 * and it is still in eden (not allocated old); false once *bytes passes cap. */
static inline bool spur_take_if_live(spur *s, uint64_t t, uint32_t o, simvec *out, uint64_t *bytes, uint64_t cap) {
  if (s->r.death[o] <= t || space_bits(s, o) != SP_DEAD) return true;
  *bytes += s->r.in->size[o];
  if (*bytes > cap) return false;
  simvec_push(&s->r, out, o);
  return true;
}

/* A scavenge by survivor sets (spur_sets.c): true if done; false, having
 * changed nothing, when a survivor would be tenured, by age (*tenures
 * set) or by overflow, and the Cheney scan must decide. */
bool spur_evacuate_by_sets(spur *s, bool *tenures);

#endif
