/*
 * spur.c — `spur`: Ephemera's own heap, rule for rule, over a prepared input.
 *
 * Each rule names the code of src/heap/ it copies (docs/sim.md keeps the
 * list); a change there must change this file, and the agreement test
 * (tests/sim/sim-agree) catches drift:
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
 *
 * Speed: a configuration does not replay the program (spur_replay.c does,
 * and is the reference this file must equal bit for bit).  A scavenge that
 * tenures nothing is computed from survivor sets (spur_sets.c), without a
 * Cheney scan; the others scan as below.  Young
 * allocations that fit eden are one binary search over the input's byte
 * prefix sums; eden is the birth-order range [eden_lo, next) and its
 * objects are SP_EDEN implicitly (space 0 inside the range); a scavenge
 * finds eden's survivors by the input's block maxima of death; a slot's
 * value when its object is scanned is a binary search in the slot's stores
 * (prepare.c); the write barrier looks only at the stores that can make an
 * old object point into new space (write_barrier).  The per-object state
 * arrays come zeroed from the input's cache and go back to it zeroed
 * (scratch_take, scratch_give): a configuration costs its collections, not
 * the size of the trace.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spur_state.h"

static void heap_push(spur *s, pending x) {
  if (s->nheap == s->heap_cap) {
    size_t cap = s->heap_cap ? 2 * s->heap_cap : 1024;
    pending *h = realloc(s->heap, cap * sizeof *h);
    if (!h) {
      s->r.nomem = s->r.exhausted = true;
      return;
    }
    s->heap = h;
    s->heap_cap = cap;
  }
  size_t i = s->nheap++;
  while (i > 0 && s->heap[(i - 1) / 2].seq > x.seq) {
    s->heap[i] = s->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  s->heap[i] = x;
}

static pending heap_pop(spur *s) {
  pending top = s->heap[0], x = s->heap[--s->nheap];
  size_t i = 0, n = s->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && s->heap[c + 1].seq < s->heap[c].seq) c++;
    if (s->heap[c].seq >= x.seq) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (n) s->heap[i] = x;
  return top;
}

/* The first of o's stores from index k on made at or after store_bound. */
static uint64_t stores_from_bound(const spur *s, uint32_t o, uint64_t k) {
  const eph_sim_input *in = s->r.in;
  uint64_t hi = in->store_start[o + 1];
  while (k < hi) {
    uint64_t mid = k + (hi - k) / 2;
    if (in->stores[mid].seq < s->store_bound) k = mid + 1;
    else hi = mid;
  }
  return k;
}

/* The first of o's stores from index k on whose target can be young
 * (in->store_young_bytes), skipping whole blocks that cannot. */
static uint64_t next_candidate(const spur *s, uint32_t o, uint64_t k) {
  const eph_sim_input *in = s->r.in;
  uint64_t end = in->store_start[o + 1];
  while (k < end) {
    if (k % SIM_STORE_BLOCK == 0 && k + SIM_STORE_BLOCK <= end &&
        in->store_young_bytes_min[k / SIM_STORE_BLOCK] > s->young_max)
      k += SIM_STORE_BLOCK;
    else if (in->store_young_bytes[k] <= s->young_max)
      return k;
    else
      k++;
  }
  return end;
}

/* o is now in old space: its stores from now on pass the write barrier. */
static void became_old(spur *s, uint32_t o) {
  const eph_sim_input *in = s->r.in;
  if (!in->stores || !is_special(s, o)) return; /* the others' stores: in->fwd (write_barrier) */
  if (in->obj_young_bytes_min[o] > s->young_max) return; /* none of its stores can name a young object */
  uint64_t k = next_candidate(s, o, stores_from_bound(s, o, in->store_start[o]));
  if (k < in->store_start[o + 1]) heap_push(s, (pending){in->stores[k].seq, o, k});
}

/* An allocation in old space; false when the maximum heap says no. */
static bool old_alloc_mutator(spur *s, uint32_t o) {
  if (!sim_space_alloc_mutator(&s->sp, &s->r, s->r.in->size[o])) return false;
  set_space(s, o, SP_OLD);
  sim_space_old_push(&s->r, &s->old, o);
  s->space[o] |= SPECIAL;
  became_old(s, o);
  return true;
}

/* scavenge.c copy_object.  Eden's objects read as space 0, age 0; none of
 * the objects it copies is special yet. */
static inline void copy_object(spur *s, uint32_t o, unsigned tenure_age) {
  uint8_t b = s->space[o];
  unsigned age = (b & SPACE_MASK) == SP_DEAD ? 0 : (b & AGE_MASK) >> AGE_SHIFT;
  if (age < MAX_AGE) age++;
  uint32_t bytes = s->r.in->size[o];
  s->r.cur.objects++;
  if (age >= tenure_age || s->sp.surv_cap - s->future_used < bytes) {
    bool special = age < tenure_age; /* tenured by overflow */
    s->space[o] = (uint8_t)((b & SPECIAL) | (special ? SPECIAL : 0) | age << AGE_SHIFT | SP_OLD);
    sim_space_alloc_gc(&s->sp, &s->r, bytes);
    sim_space_old_push(&s->r, &s->old, o);
    /* became_old() if special: after the scan (promoted_stores). */
    s->r.cur.promoted += bytes;
    if (special) s->r.res->bytes_overflowed += bytes;
  } else {
    s->space[o] = (uint8_t)((b & SPECIAL) | age << AGE_SHIFT | SP_FUTURE);
    s->future_used += bytes;
    simvec_push(&s->r, &s->future, o);
    s->r.cur.copied += bytes;
  }
}


/* slot_value for a slot stored into several times: the last store below
 * store_bound (the first is below it).  store_bound only grows during a
 * run, so the search gallops on from where the slot's last one ended
 * (s->cursor, when there is one): a slot stored into at every step of the
 * program costs a few probes per scan, not a search over all its stores. */
uint32_t spur_slot_value_multi(spur *s, uint64_t g) {
  const eph_sim_input *in = s->r.in;
  const sim_store *st = in->slot_stores;
  uint64_t first = in->slot_store_start[g], b = in->slot_store_start[g + 1];
  if (st[b - 1].seq < s->store_bound) return st[b - 1].target;
  uint64_t a = first; /* st[a] made, st[b - 1] not yet */
  if (s->cursor) {
    if (s->cursor[g]) a = first + s->cursor[g] - 1;
    else simvec_push(&s->r, &s->cursored, (uint32_t)g);
  }
  uint64_t step = 1; /* gallop: st[a] made; find a b with st[b] not made */
  while (a + step < b - 1 && st[a + step].seq < s->store_bound) {
    a += step;
    step *= 2;
  }
  if (a + step < b) b = a + step;
  else b--;
  while (b - a > 1) {
    uint64_t mid = a + (b - a) / 2;
    if (st[mid].seq < s->store_bound) a = mid;
    else b = mid;
  }
  if (s->cursor) s->cursor[g] = (uint32_t)(a - first + 1);
  return st[a].target;
}

/* scavenge.c scan_object: copies o's young targets; true if one is young
 * after.  The loop every survivor takes: one load of the slot's store,
 * one of the target's state byte. */
static bool scan_object(spur *s, uint32_t o, unsigned tenure_age) {
  if (!s->graph) return false;
  const eph_sim_input *in = s->r.in;
  const sim_store *one = in->slot_one;
  const uint8_t *space = s->space;
  uint64_t g = in->slot_start[o], end = in->slot_start[o + 1];
  uint64_t bound = s->store_bound;
  uint32_t eden_lo = (uint32_t)s->eden_lo, eden_n = (uint32_t)(s->next - s->eden_lo);
  bool young = false;
  s->r.cur.slots += end - g;
  for (; g < end; g++) {
    sim_store x = one[g];
    if (x.seq >= bound) continue; /* not stored into yet */
    uint32_t t = x.target != SIM_MULTI ? x.target : spur_slot_value_multi(s, g);
    if (t == SIM_NONE) continue;
    unsigned sp = space[t] & SPACE_MASK;
    if (sp == SP_PAST || sp == SP_EDEN || (sp == SP_DEAD && t - eden_lo < eden_n)) {
      copy_object(s, t, tenure_age);
      sp = space[t] & SPACE_MASK;
    }
    young |= sp == SP_FUTURE;
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
static void mark_targets(spur *s, uint32_t o) {
  for (uint64_t g = s->r.in->slot_start[o]; g < s->r.in->slot_start[o + 1]; g++) {
    uint32_t t = slot_value(s, g);
    if (in_from_space(s, t) && !s->mark[t]) {
      s->mark[t] = 1;
      simvec_push(&s->r, &s->marked, t);
    }
  }
}

static void mark_young_targets(spur *s) {
  uint64_t t = s->r.clock;
  for (size_t i = 0; i < s->past.len; i++)
    if (s->r.death[s->past.v[i]] > t) mark_targets(s, s->past.v[i]);
  for (size_t i = 0; i < s->live.len; i++) mark_targets(s, s->live.v[i]);
  for (size_t i = 0; i < s->remset.len; i++) mark_targets(s, s->remset.v[i]);
}

/* s->live: eden's objects whose death is after the clock, in birth order;
 * whole blocks that died before it are skipped. */
static void find_live_eden(spur *s) {
  uint64_t bytes = 0;
  s->live.len = 0;
  spur_eden_live(s, s->eden_lo, s->next, &s->live, &bytes, UINT64_MAX);
}

/* became_old() for the objects this collection tenured by overflow, old
 * space's entries from `from` on.  Done after the scan, in one pass that
 * fetches each object's store tables ahead: they miss the cache, and the
 * barrier's heap does not depend on the order of its pushes. */
static void promoted_stores(spur *s, size_t from) {
  const eph_sim_input *in = s->r.in;
  if (!in->stores) return;
  enum { AHEAD = 8 };
  for (size_t i = from; i < s->old.len; i++) {
    if (i + AHEAD < s->old.len) {
      uint32_t next = s->old.v[i + AHEAD].o;
      __builtin_prefetch(&in->obj_young_bytes_min[next]);
      __builtin_prefetch(&in->store_start[next]);
    }
    uint32_t o = s->old.v[i].o;
    if (is_special(s, o)) became_old(s, o);
  }
}

/* scavenge.c ephh_evacuate_young */
static void evacuate_young(spur *s, bool tenure_all) {
  unsigned tenure_age = tenure_all ? 0 : (unsigned)s->p->tenure_age;
  uint64_t t = s->r.clock;
  s->future.len = 0;
  s->future_used = 0;
  size_t old_scan = s->old.len, old_scan_from = old_scan;
  s->r.cur.remembered_scanned = s->remset.len;
  if (s->r.in->root_start) {
    /* Roots, in the scavenger's order (roots.c). */
    for (size_t k = 0; k < s->r.in->nroots; k++) {
      uint32_t o = sim_root_at_from(s->r.in, k, s->root_time, &s->root_seen[k]);
      if (in_from_space(s, o)) copy_object(s, o, tenure_age);
    }
  } else {
    /* Roots unknown (an older trace): live young objects no scanned object
     * points to, oldest first. */
    find_live_eden(s);
    if (s->graph) mark_young_targets(s);
    for (size_t i = 0; i < s->past.len; i++) {
      uint32_t o = s->past.v[i];
      if (s->r.death[o] > t && in_from_space(s, o) && !s->mark[o]) copy_object(s, o, tenure_age);
    }
    for (size_t i = 0; i < s->live.len; i++) {
      uint32_t o = s->live.v[i];
      if (in_from_space(s, o) && !s->mark[o]) copy_object(s, o, tenure_age);
    }
    for (size_t i = 0; i < s->marked.len; i++) s->mark[s->marked.v[i]] = 0;
    s->marked.len = 0;
  }
  if (s->graph) {
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
  promoted_stores(s, old_scan_from);
  (void)spur_rebuild_remset(s, SP_FUTURE); /* its slots: counted by the scan */
  /* The flip: what was not copied is garbage (eden's implicitly, as the
   * range moves on); future becomes past. */
  for (size_t i = 0; i < s->past.len; i++) {
    uint32_t o = s->past.v[i];
    if (space_bits(s, o) == SP_PAST) s->space[o] = 0; /* dead: all bits clear (scratch_give) */
  }
  for (size_t i = 0; i < s->future.len; i++) set_space(s, s->future.v[i], SP_PAST);
  spur_flip(s, s->future_used);
}

uint64_t spur_rebuild_remset(spur *s, unsigned young_space) {
  size_t keep = 0;
  uint64_t slots = 0;
  for (size_t i = 0; i < s->remset.len; i++) {
    uint32_t o = s->remset.v[i];
    uint64_t g = s->r.in->slot_start[o], end = s->r.in->slot_start[o + 1];
    bool young = false;
    slots += end - g;
    for (; g < end && !young; g++) {
      uint32_t x = slot_value(s, g);
      young = x != SIM_NONE && space_bits(s, x) == young_space;
    }
    if (young) s->remset.v[keep++] = o;
    else s->remembered[o] = 0;
  }
  s->remset.len = keep;
  return slots;
}

void spur_flip(spur *s, uint64_t survivor_bytes) {
  simvec tmp = s->past;
  s->past = s->future;
  s->future = tmp;
  s->future.len = 0;
  s->past_used = survivor_bytes;
  s->future_used = 0;
  s->eden_lo = s->next;
  s->eden_used = 0;
}

static int by_seq(const void *a, const void *b) {
  uint32_t x = ((const pending *)a)->seq, y = ((const pending *)b)->seq;
  return x < y ? -1 : x > y;
}

static void add_candidate(spur *s, uint32_t seq, uint32_t o) {
  if (s->nadded == s->added_cap) {
    size_t cap = s->added_cap ? 2 * s->added_cap : 256;
    pending *v = realloc(s->added, cap * sizeof *v);
    if (!v) {
      s->r.nomem = s->r.exhausted = true;
      return;
    }
    s->added = v;
    s->added_cap = cap;
  }
  s->added[s->nadded++] = (pending){seq, o, 0};
}

/* heap.h eph_store, for the stores made since the last collection: an old
 * object getting a young pointer is remembered once.  Spaces do not change
 * between collections (but for new objects, which no earlier store names),
 * so the window's stores are judged now, and the objects are remembered in
 * the order of their first young store.  Which stores can qualify:
 *   - into an object tenured by age (or by a full GC), only one of a
 *     younger object: an older one was copied at every scavenge the
 *     younger survived, so its age was never lower and it was tenured no
 *     later (or died, and is no young pointer); and the object stored into
 *     was born before this window.  Those are a range of in->fwd.
 *   - into a special object (allocated old, tenured by overflow): any
 *     whose target can still be young (after j scavenges at most (j + 1)
 *     x eden bytes were allocated young, and a target young after j has
 *     j < tenure), from the object's own store list, visited through the
 *     heap at the next such store. */
static void write_barrier(spur *s) {
  const eph_sim_input *in = s->r.in;
  s->nadded = 0;
  size_t lo = s->fwd_pos, hi = in->nfwd; /* the window's forward stores: [fwd_pos, hi) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (in->fwd[mid].seq < s->store_bound) lo = mid + 1;
    else hi = mid;
  }
  for (size_t k = s->fwd_pos; k < hi; k++) {
    /* Most are stores into objects of this window: whole blocks of them skipped. */
    if (k % SIM_FWD_BLOCK1 == 0) {
      if (k % SIM_FWD_BLOCK2 == 0 && k + SIM_FWD_BLOCK2 <= hi && in->fwd_src_min2[k / SIM_FWD_BLOCK2] >= s->eden_lo) {
        k += SIM_FWD_BLOCK2 - 1;
        continue;
      }
      if (k + SIM_FWD_BLOCK1 <= hi && in->fwd_src_min1[k / SIM_FWD_BLOCK1] >= s->eden_lo) {
        k += SIM_FWD_BLOCK1 - 1;
        continue;
      }
    }
    uint32_t o = in->fwd_src[k];
    if (o >= s->eden_lo) continue;
    if (is_special(s, o) || s->remembered[o] || space_bits(s, o) != SP_OLD) continue;
    const sim_fwd_store *f = &in->fwd[k];
    if (in_from_space(s, f->target)) {
      s->remembered[o] = 2; /* a candidate already: its first young store is this one */
      add_candidate(s, f->seq, o);
    }
  }
  s->fwd_pos = hi;
  while (s->nheap && s->heap[0].seq < s->store_bound) {
    pending x = heap_pop(s);
    uint32_t o = x.o;
    if (space_bits(s, o) != SP_OLD) continue; /* freed by a full GC: the program stores into it no more */
    uint64_t k = x.k, end = in->store_start[o + 1];
    if (!s->remembered[o])
      for (; k < end && in->stores[k].seq < s->store_bound; k = next_candidate(s, o, k + 1)) {
        uint32_t t = in->stores[k].target;
        if (t != SIM_NONE && in_from_space(s, t)) {
          add_candidate(s, in->stores[k].seq, o);
          break;
        }
      }
    k = next_candidate(s, o, stores_from_bound(s, o, k));
    if (k < end) heap_push(s, (pending){in->stores[k].seq, o, k});
  }
  if (s->nadded > 1) qsort(s->added, s->nadded, sizeof *s->added, by_seq);
  for (size_t i = 0; i < s->nadded; i++) {
    s->remembered[s->added[i].o] = 0;
    remset_add(s, s->added[i].o);
  }
}

static void begin(spur *s, eph_gc_kind kind) {
  sim_run_begin(&s->r, kind, used(s));
}

static void end(spur *s) { sim_run_end(&s->r, used(s), s->sp.new_bytes + s->sp.old_committed); }

static void scavenge(spur *s) {
  write_barrier(s);
  begin(s, EPH_GC_SCAVENGE);
  bool tenures = false;
  if (s->sets_wait) {
    s->sets_wait--;
    evacuate_young(s, false);
  } else if (spur_evacuate_by_sets(s, &tenures)) {
    s->sets_backoff = 1;
  } else {
    if (!tenures) { /* overflow: likely again next time */
      s->sets_wait = s->sets_backoff;
      if (s->sets_backoff < 64) s->sets_backoff *= 2;
    }
    evacuate_young(s, false);
  }
  end(s);
}

/* fullgc.c ephh_full_gc: evacuate, mark, slide from the first dead object on. */
static void full_gc(spur *s) {
  write_barrier(s);
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

/* alloc.c alloc_young / alloc_old, for an allocation that is not a quiet
 * young one (see run_program); false when the heap is exhausted. */
static bool allocate(spur *s, uint32_t o) {
  const eph_sim_input *in = s->r.in;
  uint32_t bytes = in->size[o];
  s->r.clock = in->birth[o] > bytes ? in->birth[o] - bytes : 0;
  s->store_bound = in->store_before ? in->store_before[o] : 0;
  s->root_time = in->birth[o];
  bool old = (in->flags[o] & SIM_PRETENURED) || bytes - 8 >= s->sp.large || bytes > s->sp.eden_cap;
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
      if (s->eden_used + bytes <= s->sp.eden_cap) break;
      scavenge(s);
      maybe_full_gc(s, 0);
    }
    s->eden_used += bytes; /* in eden: space 0 inside [eden_lo, next), age 0 */
  }
  s->next = o + 1;
  s->r.clock = in->birth[o];
  return !s->r.exhausted;
}

/* The program's allocations.  A quiet allocation (young, fits eden, the
 * heap not over its maximum) only adds its bytes to eden, so a run of them
 * up to the next object that may go old is one binary search over the
 * byte prefix sums; the others go through allocate().  Returns the number
 * of objects allocated before the heap was exhausted (in->n if never). */
static size_t run_program(spur *s) {
  const eph_sim_input *in = s->r.in;
  const uint64_t *prefix = in->size_prefix;
  size_t big = 0;
  size_t i = 0;
  while (i < in->n) {
    if (!s->sp.over_max) {
      while (big < in->nbig &&
             (in->big[big] < i || !((in->flags[in->big[big]] & SIM_PRETENURED) || in->size[in->big[big]] - 8 >= s->sp.large)))
        big++;
      size_t lim = big < in->nbig ? in->big[big] : in->n;
      uint64_t room = s->sp.eden_cap - s->eden_used;
      size_t lo = i, hi = lim; /* the last j in [i, lim] with prefix[j] - prefix[i] <= room */
      while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (prefix[mid] - prefix[i] <= room) lo = mid;
        else hi = mid - 1;
      }
      s->eden_used += prefix[lo] - prefix[i];
      s->next = i = lo;
      if (i == in->n) break;
    }
    if (!allocate(s, (uint32_t)i)) return i;
    i++;
  }
  return in->n;
}

/* The per-object state arrays.  Zeroing two bytes per object of the whole
 * trace for every configuration costs more than a configuration with few
 * collections, so a run leaves them zeroed in the input's cache for the
 * next (sim_internal.h). */
struct spur_scratch {
  uint8_t *space, *remembered;
  uint32_t *cursor; /* NULL when the trace has too many slots to number in 32 bits */
};

void sim_spur_scratch_free(struct spur_scratch *x) {
  if (!x) return;
  free(x->space);
  free(x->remembered);
  free(x->cursor);
  free(x);
}

/* The input's cached pair if no other run holds it, else a new one; NULL
 * when out of memory. */
static struct spur_scratch *scratch_take(const eph_sim_input *in) {
  eph_sim_input *cache = (eph_sim_input *)in; /* only its cache is written (sim_internal.h) */
  struct spur_scratch *x = atomic_exchange(&cache->spur_scratch, NULL);
  if (x) return x;
  size_t n = in->n ? in->n : 1;
  x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->space = calloc(n, 1);
  x->remembered = calloc(n, 1);
  bool cursors = in->slot_one && in->nslots < UINT32_MAX;
  if (cursors) x->cursor = calloc(in->nslots, sizeof *x->cursor); /* pages touched only by multi-store slots */
  if (!x->space || !x->remembered || (cursors && !x->cursor)) {
    sim_spur_scratch_free(x);
    return NULL;
  }
  return x;
}

/* Gives x back to the input's cache, or frees it if another run's is there. */
static void scratch_put(const eph_sim_input *in, struct spur_scratch *x) {
  struct spur_scratch *none = NULL;
  eph_sim_input *cache = (eph_sim_input *)in;
  if (!atomic_compare_exchange_strong(&cache->spur_scratch, &none, x)) sim_spur_scratch_free(x);
}

/* Zeroes what the run set and gives the pair back.  Every object with a
 * non-zero state is in past, future or old space's list (a dead one is
 * zeroed when it leaves them: the flip, the sweep), every remembered one
 * in the remembered set or, inside write_barrier only, in `added`.  After
 * running out of memory the lists may be short: the pair is freed. */
static void scratch_give(spur *s, struct spur_scratch *x) {
  if (!x) return;
  if (s->r.nomem) {
    sim_spur_scratch_free(x);
    return;
  }
  for (size_t i = 0; i < s->past.len; i++) x->space[s->past.v[i]] = 0;
  for (size_t i = 0; i < s->future.len; i++) x->space[s->future.v[i]] = 0;
  for (size_t i = 0; i < s->old.len; i++) x->space[s->old.v[i].o] = 0;
  for (size_t i = 0; i < s->remset.len; i++) x->remembered[s->remset.v[i]] = 0;
  for (size_t i = 0; i < s->nadded; i++) x->remembered[s->added[i].o] = 0;
  for (size_t i = 0; i < s->cursored.len; i++) x->cursor[s->cursored.v[i]] = 0;
  scratch_put(s->r.in, x);
}

bool sim_spur_scratch_clean(const eph_sim_input *in) {
  eph_sim_input *cache = (eph_sim_input *)in;
  struct spur_scratch *x = atomic_exchange(&cache->spur_scratch, NULL);
  if (!x) return true;
  bool clean = true;
  for (size_t i = 0; i < in->n && clean; i++) clean = !x->space[i] && !x->remembered[i];
  for (uint64_t g = 0; x->cursor && g < in->nslots && clean; g++) clean = !x->cursor[g];
  scratch_put(in, x);
  return clean;
}

static void spur_free(spur *s, struct spur_scratch *x) {
  scratch_give(s, x);
  free(s->mark);
  free(s->root_seen);
  free(s->past.v);
  free(s->future.v);
  free(s->old.v);
  free(s->remset.v);
  free(s->live.v);
  free(s->marked.v);
  free(s->cursored.v);
  free(s->heap);
  free(s->added);
  sim_run_free(&s->r);
}

bool sim_spur_fast_applies(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death) {
  if (!in->size_prefix || (in->ops && !in->stores) || death != in->death || cfg->granule) return false;
  if (in->granule && cfg->sync != EPH_SIM_UNSYNC) return false; /* collections at points: replayed */
  long page = sysconf(_SC_PAGESIZE); /* as sim_run_init */
  spur_space sp;
  sim_space_sizes(&sp, &cfg->params, page > 0 ? (uint64_t)page : 4096);
  /* Objects outside in->big must be young under this configuration. */
  return sp.large >= SIM_BIG_PAYLOAD && sp.eden_cap >= SIM_BIG_PAYLOAD + 8;
}

eph_status sim_spur(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death, eph_sim_result *res,
                    eph_error *err) {
  if (!sim_spur_fast_applies(in, cfg, death)) return sim_spur_replay(in, cfg, death, res, err);
  spur s = {.p = &cfg->params, .sets_backoff = 1};
  eph_status st = sim_run_init(&s.r, in, cfg, death, res, false, err);
  if (st != EPH_OK) return st;
  struct spur_scratch *x = scratch_take(in);
  if (x) {
    s.space = x->space;
    s.remembered = x->remembered;
    s.cursor = x->cursor;
  }
  s.mark = in->root_start ? NULL : calloc(in->n ? in->n : 1, 1);
  s.root_seen = in->root_start ? calloc(in->nroots ? in->nroots : 1, sizeof *s.root_seen) : NULL;
  s.graph = in->ops != NULL;
  if (!x || (in->root_start ? !s.root_seen : !s.mark)) {
    s.r.nomem = true;
    spur_free(&s, x);
    return sim_run_nomem(err);
  }
  sim_space_init(&s.sp, &cfg->params, &s.r);
  s.young_max = cfg->params.tenure_age <= MAX_AGE ? cfg->params.tenure_age * s.sp.eden_cap : UINT64_MAX;

  size_t done = run_program(&s);
  if (!s.r.exhausted) s.r.exhausted = done < in->n;
  /* The stores made before the run ended pass the barrier (remembered counts). */
  if (in->stores) {
    s.store_bound = done < in->n ? in->store_before[done] : in->nstores;
    write_barrier(&s);
  }
  uint64_t u = used(&s);
  if (u > res->peak_used) res->peak_used = u;
  st = sim_run_finish(&s.r, err);
  spur_free(&s, x);
  return st;
}
