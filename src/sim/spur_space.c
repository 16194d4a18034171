/*
 * spur_space.c — spur's sizes and old-space accounting (spur_space.h).
 */
#include <stdlib.h>

#include "spur_space.h"

#define KiB ((uint64_t)1 << 10)
#define GiB ((uint64_t)1 << 30)
#define LARGE_OBJECT_CAP (256 * KiB) /* newspace.c: large = min(survivor / 2, 256K) */
#define UNLIMITED_RESERVATION (256 * GiB) /* oldspace.c's reservation without max_heap */

static void note_committed(const spur_space *sp, simrun *r) { sim_run_committed(r, sp->new_bytes + sp->old_committed); }

uint64_t sim_space_old_limit(const spur_space *sp) {
  if (!sp->p->max_heap) return sp->old_reserved;
  return sp->p->max_heap > sp->new_bytes ? (sp->p->max_heap - sp->new_bytes) / sp->page * sp->page : 0;
}

/* oldspace.c ephh_set_full_threshold */
static void set_full_threshold(spur_space *sp) {
  uint64_t base = sp->old_used > sp->p->growth_headroom ? sp->old_used : sp->p->growth_headroom;
  sp->full_threshold = (uint64_t)((double)base * (1.0 + sp->p->gc_ratio));
}

void sim_space_sizes(spur_space *sp, const eph_gc_params *p, uint64_t page) {
  *sp = (spur_space){.p = p, .page = page};
  sp->eden_cap = spur_round_up(p->eden_bytes, page);
  sp->surv_cap = spur_round_up(p->eden_bytes / 5, page);
  sp->new_bytes = sp->eden_cap + 2 * sp->surv_cap;
  sp->large = sp->surv_cap / 2 < LARGE_OBJECT_CAP ? sp->surv_cap / 2 : LARGE_OBJECT_CAP;
  sp->old_reserved = p->max_heap ? spur_round_up(p->max_heap + 4 * sp->new_bytes, page) : UNLIMITED_RESERVATION;
}

void sim_space_init(spur_space *sp, const eph_gc_params *p, simrun *r) {
  sim_space_sizes(sp, p, r->page);
  uint64_t first = spur_round_up(p->growth_headroom, sp->page);
  if (first > sim_space_old_limit(sp)) first = sim_space_old_limit(sp);
  sp->old_committed = first;
  sp->full_threshold = (uint64_t)((double)p->growth_headroom * (1.0 + p->gc_ratio));
  note_committed(sp, r);
}

/* sim_space_alloc_gc when old space must grow first. */
void sim_space_alloc_gc_grow(spur_space *sp, simrun *r, uint64_t bytes) {
  uint64_t need = sp->old_used + bytes;
  if (need > sp->old_committed) {
    uint64_t step = need - sp->old_committed;
    if (step < sp->p->growth_headroom) step = sp->p->growth_headroom;
    uint64_t target = spur_round_up(sp->old_committed + step, sp->page);
    if (target > sp->old_reserved) target = spur_round_up(need, sp->page);
    if (target > sp->old_reserved) r->exhausted = true;
    sp->old_committed = target;
    note_committed(sp, r);
    if (sp->old_committed > sim_space_old_limit(sp)) sp->over_max = true;
  }
  sp->old_used += bytes;
}

bool sim_space_alloc_mutator(spur_space *sp, simrun *r, uint64_t bytes) {
  uint64_t need = sp->old_used + bytes;
  if (need > sp->old_committed) {
    uint64_t limit = sim_space_old_limit(sp), step = need - sp->old_committed;
    if (step < sp->p->growth_headroom) step = sp->p->growth_headroom;
    uint64_t target = spur_round_up(sp->old_committed + step, sp->page);
    if (target > limit) target = limit;
    if (target < need) return false;
    sp->old_committed = target;
    note_committed(sp, r);
  }
  sp->old_used += bytes;
  return true;
}

void sim_space_resize_after_full(spur_space *sp, simrun *r) {
  uint64_t u = spur_round_up(sp->old_used, sp->page), target = sp->old_committed;
  if (sp->old_committed - u > sp->p->shrink_threshold) target = spur_round_up(u + sp->p->shrink_threshold, sp->page);
  uint64_t limit = sim_space_old_limit(sp);
  if (target > limit) target = u > limit ? u : limit;
  if (target < sp->old_committed) {
    sp->old_committed = target;
    note_committed(sp, r);
  }
  sp->over_max = sp->old_used > limit;
  set_full_threshold(sp);
}

void sim_space_old_grow(simrun *r, sim_oldvec *old) {
  size_t cap = old->cap ? 2 * old->cap : 1024;
  sim_old_obj *v = realloc(old->v, cap * sizeof *v);
  if (!v) {
    r->nomem = r->exhausted = true; /* stops the run; sim_run_finish reports it */
    return;
  }
  old->v = v;
  old->cap = cap;
}

void sim_space_sweep(spur_space *sp, simrun *r, sim_oldvec *old, uint8_t *space, uint8_t *remembered) {
  uint64_t t = r->clock, live = 0;
  bool moving = false;
  size_t keep = 0;
  for (size_t i = 0; i < old->len; i++) {
    sim_old_obj x = old->v[i];
    if (x.death > t) {
      live += x.size;
      r->cur.slots += x.slots; /* the mark */
      if (moving) r->cur.compacted += x.size;
      old->v[keep++] = x;
    } else {
      moving = true;
      space[x.o] = SP_DEAD;
      remembered[x.o] = 0;
    }
  }
  old->len = keep;
  sp->old_used = live;
  r->cur.marked = live;
}
