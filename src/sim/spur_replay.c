/*
 * spur_replay.c — `spur` by replaying every allocation and store: the reference
 * for spur.c's fast path (tests/sim/fast_check.c compares them bit for bit)
 * and the path for inputs it does not take (samples, granulated deaths).
 *
 * Each rule names the code of src/heap/ it copies (docs/sim.md keeps the
 * list); a change there must change this file, and the agreement test
 * (tests/sim/agree_check.c, ctest sim.agree.*) catches drift:
 *   - new space: eden = round_up(eden, page), survivors = round_up(eden/5, page)
 *     each; large objects: payload >= min(survivor/2, 256K) go old (newspace.c)
 *   - allocation: young objects scavenge when eden cannot take them, then the
 *     GC-ratio check; old objects check the ratio first, grow, else full GC
 *     and retry, else exhaustion (alloc.c)
 *   - scavenge: Cheney from roots, the remembered set, then the two queues;
 *     age + 1, tenured at `tenure` or when `future` cannot take it; the
 *     remembered set rebuilt (scavenge.c, remset.c)
 *   - full GC: evacuate all of new space into old space, mark, slide from
 *     the first dead word on (fullgc.c)
 *   - old space: grows by at least headroom (not past max when the mutator
 *     allocates, past it during a collection: over_max); after a full GC
 *     free space above shrink goes back; next full GC when old space has
 *     grown by `ratio` from max(live, headroom) (oldspace.c)
 * Reachability at a collection at clock t: an object is live iff its Merlin
 * death is after t (a collection runs inside the allocation that follows
 * clock t; what a root still holds then is stamped at that allocation's
 * check, after t).  The scavenger also keeps what old garbage points to
 * through the remembered set (nepotism), as the real one does.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spur_space.h"

#define MAX_AGE 15 /* the header's age field saturates here (scavenge.c) */

typedef struct spur {
  simrun r;
  const eph_gc_params *p;
  uint8_t *space, *age, *remembered, *mark;
  simvec eden, past, future, remset;
  sim_oldvec old;
  spur_space sp; /* sizes, old-space accounting */
  uint64_t eden_used, past_used, future_used;
  uint64_t root_time; /* the clock of the allocation under way: the roots' state (roots.c) */
} spur;

static uint64_t used(const spur *s) { return s->eden_used + s->past_used + s->sp.old_used; }

/* A promotion (spur_space.c accounts for it). */
static void old_alloc_gc(spur *s, uint32_t o) {
  sim_space_alloc_gc(&s->sp, &s->r, s->r.in->size[o]);
  s->space[o] = SP_OLD;
  sim_space_old_push(&s->r, &s->old, o);
}

/* An allocation in old space; false when the maximum heap says no. */
static bool old_alloc_mutator(spur *s, uint32_t o) {
  if (!sim_space_alloc_mutator(&s->sp, &s->r, s->r.in->size[o])) return false;
  s->space[o] = SP_OLD;
  sim_space_old_push(&s->r, &s->old, o);
  return true;
}

static inline bool in_from_space(const spur *s, uint32_t o) {
  return o != SIM_NONE && (s->space[o] == SP_EDEN || s->space[o] == SP_PAST);
}

/* scavenge.c copy_object */
static void copy_object(spur *s, uint32_t o, unsigned tenure_age) {
  unsigned age = s->age[o];
  if (age < MAX_AGE) age++;
  s->age[o] = (uint8_t)age;
  uint32_t bytes = s->r.in->size[o];
  s->r.cur.objects += sim_run_weight(&s->r, o);
  if (age >= tenure_age || s->sp.surv_cap - s->future_used < bytes) {
    old_alloc_gc(s, o);
    s->r.cur.promoted += bytes;
    if (age < tenure_age) s->r.res->bytes_overflowed += bytes;
  } else {
    s->future_used += bytes;
    s->space[o] = SP_FUTURE;
    simvec_push(&s->r, &s->future, o);
    s->r.cur.copied += bytes;
  }
}

/* scavenge.c scan_object: copies o's young targets; true if one is young after. */
static bool scan_object(spur *s, uint32_t o, unsigned tenure_age) {
  if (!s->r.slots) return false;
  const eph_sim_input *in = s->r.in;
  bool young = false;
  s->r.cur.slots += in->slot_start[o + 1] - in->slot_start[o];
  for (uint64_t k = in->slot_start[o]; k < in->slot_start[o + 1]; k++) {
    uint32_t t = s->r.slots[k];
    if (in_from_space(s, t)) copy_object(s, t, tenure_age);
    if (t != SIM_NONE && s->space[t] == SP_FUTURE) young = true;
  }
  return young;
}

static void remset_add(spur *s, uint32_t o) {
  s->remembered[o] = 1;
  simvec_push(&s->r, &s->remset, o);
  s->r.res->remembered++;
  s->r.cur.remembered++;
}

/* Marks the young objects some scanned object points to: the others that
 * are live can only be held by roots, which the scavenger copies first. */
static void mark_targets(spur *s, uint32_t o, uint8_t v) {
  const eph_sim_input *in = s->r.in;
  for (uint64_t k = in->slot_start[o]; k < in->slot_start[o + 1]; k++) {
    uint32_t t = s->r.slots[k];
    if (in_from_space(s, t)) s->mark[t] = v;
  }
}

static void mark_young_targets(spur *s, uint8_t v) {
  uint64_t t = s->r.clock;
  const simvec *lists[2] = {&s->past, &s->eden};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < lists[l]->len; i++) {
      uint32_t o = lists[l]->v[i];
      if (s->r.death[o] > t) mark_targets(s, o, v);
    }
  for (size_t i = 0; i < s->remset.len; i++) mark_targets(s, s->remset.v[i], v);
}

/* scavenge.c ephh_evacuate_young */
static void evacuate_young(spur *s, bool tenure_all) {
  unsigned tenure_age = tenure_all ? 0 : (unsigned)s->p->tenure_age;
  uint64_t t = s->r.clock;
  s->future.len = 0;
  s->future_used = 0;
  size_t old_scan = s->old.len;
  s->r.cur.remembered_scanned = s->remset.len;
  const simvec *lists[2] = {&s->past, &s->eden};
  if (s->r.in->root_start) {
    /* Roots, in the scavenger's order (roots.c). */
    for (size_t k = 0; k < s->r.in->nroots; k++) {
      uint32_t o = sim_root_at(s->r.in, k, s->root_time);
      if (in_from_space(s, o)) copy_object(s, o, tenure_age);
    }
  } else {
    /* Roots unknown (an older trace): live young objects no scanned object
     * points to, oldest first. */
    if (s->r.slots) mark_young_targets(s, 1);
    for (int l = 0; l < 2; l++)
      for (size_t i = 0; i < lists[l]->len; i++) {
        uint32_t o = lists[l]->v[i];
        if (s->r.death[o] > t && in_from_space(s, o) && !s->mark[o]) copy_object(s, o, tenure_age);
      }
    if (s->r.slots)
      for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->len; i++) s->mark[lists[l]->v[i]] = 0;
  }
  if (s->r.slots) {
    /* The remembered set: old objects, live or not, holding young pointers. */
    uint64_t slots_before = s->r.cur.slots;
    for (size_t i = 0; i < s->remset.len; i++) scan_object(s, s->remset.v[i], tenure_age);
    s->r.cur.remembered_slots += s->r.cur.slots - slots_before; /* counted apart: scanned in place */
    s->r.cur.slots = slots_before;
  }
  /* scan_to_completion: the survivor queue, then the promoted queue, again. */
  size_t young_scan = 0;
  while (young_scan < s->future.len || old_scan < s->old.len) {
    while (young_scan < s->future.len) scan_object(s, s->future.v[young_scan++], tenure_age);
    while (old_scan < s->old.len) {
      uint32_t o = s->old.v[old_scan++].o;
      if (scan_object(s, o, tenure_age) && !s->remembered[o]) remset_add(s, o);
    }
  }
  /* rebuild_remembered_set: keep those still pointing into new space. */
  size_t keep = 0;
  for (size_t i = 0; i < s->remset.len; i++) {
    uint32_t o = s->remset.v[i];
    bool young = false;
    for (uint64_t k = s->r.in->slot_start[o]; k < s->r.in->slot_start[o + 1] && !young; k++) {
      uint32_t x = s->r.slots[k];
      young = x != SIM_NONE && s->space[x] == SP_FUTURE;
    }
    if (young) s->remset.v[keep++] = o;
    else s->remembered[o] = 0;
  }
  s->remset.len = keep;
  /* The flip: what was not copied is garbage; future becomes past. */
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < lists[l]->len; i++) {
      uint32_t o = lists[l]->v[i];
      if (in_from_space(s, o)) s->space[o] = SP_DEAD;
    }
  for (size_t i = 0; i < s->future.len; i++) s->space[s->future.v[i]] = SP_PAST;
  simvec tmp = s->past;
  s->past = s->future;
  s->future = tmp;
  s->future.len = 0;
  s->past_used = s->future_used;
  s->future_used = 0;
  s->eden.len = 0;
  s->eden_used = 0;
}

static void begin(spur *s, eph_gc_kind kind) {
  sim_run_begin(&s->r, kind, used(s));
}

static void end(spur *s) { sim_run_end(&s->r, used(s), s->sp.new_bytes + s->sp.old_committed); }

static void scavenge(spur *s) {
  begin(s, EPH_GC_SCAVENGE);
  evacuate_young(s, false);
  end(s);
}

/* fullgc.c ephh_full_gc: evacuate, mark, slide from the first dead object on. */
static void full_gc(spur *s) {
  begin(s, EPH_GC_FULL);
  evacuate_young(s, true);
  sim_space_sweep(&s->sp, &s->r, &s->old, s->space, s->remembered);
  sim_space_resize_after_full(&s->sp, &s->r);
  end(s);
}

/* alloc.c maybe_full_gc */
static void maybe_full_gc(spur *s, uint64_t about_to_add) {
  if (s->sp.old_used + about_to_add > s->sp.full_threshold) full_gc(s);
}

/* alloc.c alloc_young / alloc_old; false when the heap is exhausted. */
static bool allocate(spur *s, uint32_t o) {
  const eph_sim_input *in = s->r.in;
  uint32_t bytes = in->size[o];
  s->r.clock = in->birth[o] > bytes ? in->birth[o] - bytes : 0; /* samples: a weighed size may exceed the clock */
  /* Granulated input: collections at points of perfect knowledge (run.c). */
  uint64_t point;
  while (sim_run_tick(&s->r, s->r.clock, &point)) {
    uint64_t t = s->r.clock;
    s->r.clock = s->root_time = point;
    if (sim_run_sync_collect(&s->r, s->eden_used, s->sp.eden_cap)) {
      scavenge(s);
      maybe_full_gc(s, 0);
    }
    s->r.clock = t;
  }
  s->root_time = in->birth[o];
  uint32_t unit = in->unit_size ? in->unit_size[o] : bytes; /* a sample's weight makes no large object */
  /* A sample weighing more than eden holds goes to old space: it could
   * never fit eden, though its objects each would. */
  bool old = (in->flags[o] & SIM_PRETENURED) || unit - 8 >= s->sp.large || bytes > s->sp.eden_cap;
  if (old) {
    maybe_full_gc(s, bytes);
    if (s->sp.over_max || !old_alloc_mutator(s, o)) {
      full_gc(s);
      if (s->sp.over_max || !old_alloc_mutator(s, o)) return false;
    }
    s->r.res->bytes_allocated_old += bytes;
  } else {
    for (;;) {
      if (s->sp.over_max) {
        full_gc(s);
        if (s->sp.over_max) return false;
      }
      if (s->r.hold_natural || s->eden_used + bytes <= s->sp.eden_cap) break; /* held: eden may overflow until a point */
      scavenge(s);
      maybe_full_gc(s, 0);
    }
    s->eden_used += bytes;
    s->space[o] = SP_EDEN;
    simvec_push(&s->r, &s->eden, o);
  }
  s->age[o] = 0;
  s->r.clock = in->birth[o];
  return !s->r.exhausted;
}

static void store(spur *s, const sim_op *op) {
  s->r.slots[s->r.in->slot_start[op->src] + op->slot] = op->target;
  /* heap.h eph_store: an old object getting a young pointer is remembered once. */
  uint32_t t = op->target;
  if (t != SIM_NONE && (s->space[t] == SP_EDEN || s->space[t] == SP_PAST) && s->space[op->src] == SP_OLD &&
      !s->remembered[op->src])
    remset_add(s, op->src);
}

static void spur_free(spur *s) {
  free(s->space);
  free(s->age);
  free(s->remembered);
  free(s->mark);
  free(s->eden.v);
  free(s->past.v);
  free(s->future.v);
  free(s->old.v);
  free(s->remset.v);
  sim_run_free(&s->r);
}

eph_status sim_spur_replay(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death,
                           eph_sim_result *res,
                    eph_error *err) {
  spur s = {.p = &cfg->params};
  eph_status st = sim_run_init(&s.r, in, cfg, death, res, true, err);
  if (st != EPH_OK) return st;
  size_t n = in->n ? in->n : 1;
  s.space = calloc(n, 1);
  s.age = calloc(n, 1);
  s.remembered = calloc(n, 1);
  s.mark = calloc(n, 1);
  if (!s.space || !s.age || !s.remembered || !s.mark) {
    spur_free(&s);
    return sim_run_nomem(err);
  }
  sim_space_init(&s.sp, &cfg->params, &s.r);

  size_t next = 0;
  for (size_t i = 0; i < sim_run_nops(&s.r) && !s.r.exhausted; i++) {
    sim_op op = sim_run_op(&s.r, i);
    if (op.src == SIM_NONE) {
      if (!allocate(&s, (uint32_t)next++)) s.r.exhausted = true;
    } else {
      store(&s, &op);
    }
  }
  uint64_t u = used(&s);
  if (u > res->peak_used) res->peak_used = u;
  st = sim_run_finish(&s.r, err);
  spur_free(&s);
  return st;
}
