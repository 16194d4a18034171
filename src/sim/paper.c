/*
 * paper.c — the Merlin paper's collectors (TOPLAS 2006 §7), in a heap of
 * a fixed size H (absolute, or a multiple of the input's maximum live
 * bytes, the minimum heap):
 *   ss  semispace: two halves; a collection copies every live object.
 *   fg  fixed nursery of N bytes (default H/4); a nursery collection
 *       promotes its live objects into a mark-compact mature space of H - N,
 *       collected in full when a promotion would not fit.
 *   vg  Appel's variable nursery: half of what the mature space leaves
 *       free; a full collection when that half falls below H/16.
 *   of  older-first: objects kept in allocation order; when the heap is
 *       full a window of W bytes (default H/3) is collected, starting at
 *       the oldest end and moving towards the young end, survivors copied
 *       in place; the window goes back to the oldest end when it reaches
 *       the allocation end.
 * Liveness is exact (an object is live iff its death is after the
 * collection's clock); unlike spur these do not model nepotism.  With a
 * trace, fg and vg count write-barrier insertions: a store of a nursery
 * object into a mature one, once per source between nursery collections.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

#define APPEL_MIN_NURSERY_DIVISOR 16 /* vg: full GC when the nursery would be below H/16 */
#define FG_NURSERY_DIVISOR 4         /* fg: default nursery H/4 */
#define OF_WINDOW_DIVISOR 3          /* of: default window H/3 */

enum { P_DEAD = 0, P_NURSERY, P_MATURE };

typedef struct paper {
  simrun r;
  uint64_t heap, nursery_cap, window;
  simvec nursery, mature, remset;
  uint64_t nursery_used, mature_used;
  uint8_t *space, *remembered;
  size_t of_pos; /* of: index in `mature` (allocation order) where the next window starts */
} paper;

static bool live(const paper *p, uint32_t o) { return p->r.death[o] > p->r.clock; }

static void begin(paper *p, eph_gc_kind kind) { sim_run_begin(&p->r, kind, p->nursery_used + p->mature_used); }
static void end(paper *p) { sim_run_end(&p->r, p->nursery_used + p->mature_used, p->heap); }

/* Mark-compact of the mature space: live bytes are marked, those after the first dead object slide. */
static void collect_mature(paper *p, size_t from, size_t to, bool count_as_copy) {
  bool moving = false;
  size_t keep = from;
  uint64_t freed = 0;
  for (size_t i = from; i < to; i++) {
    uint32_t o = p->mature.v[i];
    uint32_t bytes = p->r.in->size[o];
    if (live(p, o)) {
      if (count_as_copy) p->r.cur.copied += bytes, p->r.cur.objects += sim_run_weight(&p->r, o);
      else {
        p->r.cur.marked += bytes;
        if (moving) p->r.cur.compacted += bytes;
      }
      p->mature.v[keep++] = o;
    } else {
      moving = true;
      freed += bytes;
      p->space[o] = P_DEAD;
    }
  }
  memmove(p->mature.v + keep, p->mature.v + to, (p->mature.len - to) * sizeof *p->mature.v);
  p->mature.len -= to - keep;
  p->mature_used -= freed;
}

/* Promotes the nursery's live objects into the mature space. */
static void collect_nursery(paper *p) {
  begin(p, EPH_GC_SCAVENGE);
  p->r.cur.remembered_scanned = p->remset.len;
  for (size_t i = 0; i < p->nursery.len; i++) {
    uint32_t o = p->nursery.v[i];
    if (live(p, o)) {
      p->space[o] = P_MATURE;
      p->mature_used += p->r.in->size[o];
      p->r.cur.promoted += p->r.in->size[o];
      p->r.cur.objects += sim_run_weight(&p->r, o);
      simvec_push(&p->r, &p->mature, o);
    } else {
      p->space[o] = P_DEAD;
    }
  }
  for (size_t i = 0; i < p->remset.len; i++) p->remembered[p->remset.v[i]] = 0;
  p->remset.len = 0;
  p->nursery.len = 0;
  p->nursery_used = 0;
  end(p);
}

static void full(paper *p) {
  begin(p, EPH_GC_FULL);
  collect_mature(p, 0, p->mature.len, false);
  end(p);
}

static uint64_t nursery_cap(const paper *p) {
  if (p->r.cfg->collector != EPH_SIM_VG) return p->nursery_cap;
  return p->heap > p->mature_used ? (p->heap - p->mature_used) / 2 : 0;
}

static void collect_window(paper *p);

/* At a point of perfect knowledge (granulated input): the scheme decides. */
static void at_point(paper *p) {
  const eph_sim_config *cfg = p->r.cfg;
  if (cfg->collector == EPH_SIM_FG || cfg->collector == EPH_SIM_VG) {
    if (!sim_run_sync_collect(&p->r, p->nursery_used, nursery_cap(p))) return;
    collect_nursery(p);
    uint64_t mature_cap = cfg->collector == EPH_SIM_VG ? p->heap : p->heap - p->nursery_cap;
    if (cfg->collector == EPH_SIM_VG ? nursery_cap(p) < p->heap / APPEL_MIN_NURSERY_DIVISOR
                                     : p->mature_used + p->nursery_cap > mature_cap)
      full(p);
  } else if (cfg->collector == EPH_SIM_SS) {
    if (!sim_run_sync_collect(&p->r, p->mature_used, p->heap / 2)) return;
    begin(p, EPH_GC_FULL);
    collect_mature(p, 0, p->mature.len, true);
    end(p);
  } else if (sim_run_sync_collect(&p->r, p->mature_used, p->heap)) {
    collect_window(p);
  }
}

/* Makes room for `bytes` in the nursery (fg, vg); false if the heap cannot hold the program. */
static bool room_generational(paper *p, uint64_t bytes) {
  const eph_sim_config *cfg = p->r.cfg;
  if (p->r.hold_natural) return true; /* granulated: collections wait for a point */
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t cap = p->nursery_cap;
    if (cfg->collector == EPH_SIM_VG) cap = p->heap > p->mature_used ? (p->heap - p->mature_used) / 2 : 0;
    if (p->nursery_used + bytes <= cap) return true;
    if (p->nursery_used) collect_nursery(p);
    uint64_t mature_cap = cfg->collector == EPH_SIM_VG ? p->heap : p->heap - p->nursery_cap;
    bool need_full = cfg->collector == EPH_SIM_VG
                         ? (p->heap > p->mature_used ? (p->heap - p->mature_used) / 2 : 0) <
                               p->heap / APPEL_MIN_NURSERY_DIVISOR
                         : p->mature_used + cap > mature_cap;
    if (need_full) full(p);
    if (p->mature_used > mature_cap) return false;
  }
  uint64_t cap = p->r.cfg->collector == EPH_SIM_VG ? (p->heap - p->mature_used) / 2 : p->nursery_cap;
  return p->nursery_used + bytes <= cap;
}

/* of: one window from of_pos (back to the oldest end past the youngest). */
static void collect_window(paper *p) {
  if (p->of_pos >= p->mature.len) p->of_pos = 0;
  size_t to = p->of_pos;
  uint64_t w = 0;
  while (to < p->mature.len && w < p->window) w += p->r.in->size[p->mature.v[to++]];
  begin(p, EPH_GC_SCAVENGE);
  size_t before = p->mature.len;
  collect_mature(p, p->of_pos, to, true);
  p->of_pos = to - (before - p->mature.len);
  end(p);
}

/* ss and of: one space in allocation order; false if it cannot hold the program. */
static bool room_single(paper *p, uint64_t bytes) {
  if (p->r.hold_natural) return true; /* granulated: collections wait for a point */
  uint64_t cap = p->r.cfg->collector == EPH_SIM_SS ? p->heap / 2 : p->heap;
  if (p->mature_used + bytes <= cap) return true;
  if (p->r.cfg->collector == EPH_SIM_SS) {
    begin(p, EPH_GC_FULL);
    collect_mature(p, 0, p->mature.len, true);
    end(p);
    return p->mature_used + bytes <= cap;
  }
  /* of: windows from of_pos until the object fits or a whole lap freed too little. */
  size_t laps = 0;
  while (p->mature_used + bytes > cap && laps < 2) {
    if (p->of_pos >= p->mature.len) laps++;
    collect_window(p);
  }
  return p->mature_used + bytes <= cap;
}

static void store(paper *p, const sim_op *op) {
  p->r.slots[p->r.in->slot_start[op->src] + op->slot] = op->target;
  uint32_t t = op->target;
  if (t != SIM_NONE && p->space[t] == P_NURSERY && p->space[op->src] == P_MATURE && !p->remembered[op->src]) {
    p->remembered[op->src] = 1;
    simvec_push(&p->r, &p->remset, op->src);
    p->r.res->remembered++;
  }
}

eph_status sim_paper(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death, eph_sim_result *res,
                     eph_error *err) {
  paper p = {0};
  eph_status st = sim_run_init(&p.r, in, cfg, death, res, true, err);
  if (st != EPH_OK) return st;
  p.heap = cfg->heap_bytes ? cfg->heap_bytes : (uint64_t)((double)in->max_live * (cfg->heap_factor > 0 ? cfg->heap_factor : 2));
  if (p.heap < p.r.page) p.heap = p.r.page;
  res->heap_bytes = p.heap;
  p.nursery_cap = cfg->nursery_bytes ? cfg->nursery_bytes : p.heap / FG_NURSERY_DIVISOR;
  p.window = cfg->nursery_bytes ? cfg->nursery_bytes : p.heap / OF_WINDOW_DIVISOR;
  if (cfg->collector == EPH_SIM_FG && p.nursery_cap >= p.heap) {
    sim_run_free(&p.r);
    eph_error_fill(err, EPH_ERR_INVALID, "fg: the nursery (%llu bytes) must be smaller than the heap (%llu bytes)",
                   (unsigned long long)p.nursery_cap, (unsigned long long)p.heap);
    return EPH_ERR_INVALID;
  }
  p.space = calloc(in->n ? in->n : 1, 1);
  p.remembered = calloc(in->n ? in->n : 1, 1);
  if (!p.space || !p.remembered) {
    free(p.space);
    free(p.remembered);
    sim_run_free(&p.r);
    return sim_run_nomem(err);
  }
  sim_run_committed(&p.r, p.heap);
  bool generational = cfg->collector == EPH_SIM_FG || cfg->collector == EPH_SIM_VG;
  size_t next = 0;
  for (size_t i = 0; i < sim_run_nops(&p.r) && !p.r.exhausted; i++) {
    sim_op op = sim_run_op(&p.r, i);
    if (op.src != SIM_NONE) {
      store(&p, &op);
      continue;
    }
    uint32_t o = (uint32_t)next++;
    uint32_t bytes = in->size[o];
    p.r.clock = in->birth[o] > bytes ? in->birth[o] - bytes : 0; /* samples: a weighed size may exceed the clock */
    uint64_t point, t = p.r.clock;
    while (sim_run_tick(&p.r, t, &point)) {
      p.r.clock = point;
      at_point(&p);
    }
    p.r.clock = t;
    if (!(generational ? room_generational(&p, bytes) : room_single(&p, bytes))) {
      p.r.exhausted = true;
      break;
    }
    if (generational) {
      p.space[o] = P_NURSERY;
      p.nursery_used += bytes;
      simvec_push(&p.r, &p.nursery, o);
    } else {
      p.space[o] = P_MATURE;
      p.mature_used += bytes;
      simvec_push(&p.r, &p.mature, o);
    }
    p.r.clock = in->birth[o];
    uint64_t u = p.nursery_used + p.mature_used;
    if (u > res->peak_used) res->peak_used = u;
  }
  st = sim_run_finish(&p.r, err);
  free(p.space);
  free(p.remembered);
  free(p.nursery.v);
  free(p.mature.v);
  free(p.remset.v);
  sim_run_free(&p.r);
  return st;
}
