/*
 * spur_space.h — spur's sizes and old-space accounting (src/heap's
 * newspace.c and oldspace.c rules), shared by the fast path (spur.c) and
 * the replay (spur_replay.c): bytes, and the old objects in address order.
 */
#ifndef EPH_SIM_SPUR_SPACE_H
#define EPH_SIM_SPUR_SPACE_H

#include "sim_run.h"

/* Where an object is (spur.c: 0 inside eden's range reads as SP_EDEN). */
enum { SP_DEAD = 0, SP_EDEN, SP_PAST, SP_FUTURE, SP_OLD };

typedef struct spur_space {
  const eph_gc_params *p;
  uint64_t page, eden_cap, surv_cap, new_bytes, large;
  uint64_t old_used, old_committed, old_reserved, full_threshold;
  bool over_max; /* old space grew past the maximum heap during a collection */
} spur_space;

/* Old space in address order (promotion and allocation order), each object
 * with what a full GC reads of it, so that the sweep reads memory in
 * order instead of missing the cache at every object. */
typedef struct sim_old_obj {
  uint64_t death; /* the run's (r->death) */
  uint32_t o, size, slots;
} sim_old_obj;
typedef struct sim_oldvec {
  sim_old_obj *v;
  size_t len, cap;
} sim_oldvec;
/* Makes room for one more (growth failure sets r->nomem and leaves none). */
void sim_space_old_grow(simrun *r, sim_oldvec *old);
/* Appends o (growth failure sets r->nomem).  Inline: a scavenge promotes
 * most of its survivors in some configurations. */
static inline void sim_space_old_push(simrun *r, sim_oldvec *old, uint32_t o) {
  if (old->len == old->cap) {
    sim_space_old_grow(r, old);
    if (old->len == old->cap) return; /* out of memory: the run stops */
  }
  const eph_sim_input *in = r->in;
  uint64_t slots = in->slot_start ? in->slot_start[o + 1] - in->slot_start[o] : 0;
  old->v[old->len++] = (sim_old_obj){r->death[o], o, in->size[o], slots > UINT32_MAX ? UINT32_MAX : (uint32_t)slots};
}

static inline uint64_t spur_round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

/* The sizes of new space for p on pages of `page` bytes (p is not copied:
 * it must outlive sp); old space empty and uncommitted. */
void sim_space_sizes(spur_space *sp, const eph_gc_params *p, uint64_t page);
/* The sizes and the first old space; records the committed heap in r. */
void sim_space_init(spur_space *sp, const eph_gc_params *p, simrun *r);
/* The most old space may commit under the maximum heap. */
uint64_t sim_space_old_limit(const spur_space *sp);
/* oldspace.c ephh_old_alloc_gc: `bytes` promoted during a collection
 * (never refused; past the reservation sets r->exhausted). */
void sim_space_alloc_gc_grow(spur_space *sp, simrun *r, uint64_t bytes);
static inline void sim_space_alloc_gc(spur_space *sp, simrun *r, uint64_t bytes) {
  if (sp->old_used + bytes > sp->old_committed) sim_space_alloc_gc_grow(sp, r, bytes); /* rarely */
  else sp->old_used += bytes;
}
/* oldspace.c ephh_old_alloc_mutator: false when the maximum heap refuses. */
bool sim_space_alloc_mutator(spur_space *sp, simrun *r, uint64_t bytes);
/* oldspace.c ephh_old_space_resize_after_full, with old_used the live bytes. */
void sim_space_resize_after_full(spur_space *sp, simrun *r);

/* fullgc.c's mark and slide over old space at r->clock: keeps in `old`,
 * in place and in order, the objects whose death is after it, marks the
 * others SP_DEAD and not remembered; old_used becomes the live bytes, and
 * r->cur counts them marked and what follows the first dead one compacted. */
void sim_space_sweep(spur_space *sp, simrun *r, sim_oldvec *old, uint8_t *space, uint8_t *remembered);

#endif
