/*
 * mode_gc.c — the collector-hook mode: the collector itself says when a
 * sampled object dies.  Sampled objects are tracked by address in two
 * lists, young and old, so that a scavenge looks only at the young ones;
 * in on_collect, eph_gc_fate gives each its new address or EPH_NIL.  A
 * death lies between the last collection the object survived (alive_until)
 * and the one that found it dead.  No heap objects are added.
 */
#include <stdio.h>
#include <stdlib.h>

#include "profiler.h"

static void push(eph_profiler *p, tracked_vec *v, eph_value addr, uint32_t rec) {
  if (v->len == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 4096;
    tracked *items = realloc(v->items, cap * sizeof *items);
    if (!items) {
      fprintf(stderr, "ephemera: profiler: out of memory for tracked objects\n");
      abort();
    }
    v->items = items;
    v->cap = cap;
    prof_note_memory(p);
  }
  v->items[v->len++] = (tracked){addr, rec};
}

void gc_mode_track(eph_profiler *p, eph_value obj, uint32_t rec) {
  push(p, eph_is_young(p->h, obj) ? &p->young : &p->old, obj, rec);
}

/* Settles every entry of v: dead ones finish their record, survivors move
 * to their new address (and to the old list once tenured). */
static void settle(eph_profiler *p, tracked_vec *v, bool young_list, eph_gc_kind kind, const eph_stamp *now) {
  eph_death_kind how = p->spec.mode == EPH_MODE_BRUTE ? EPH_DEATH_EXACT
                       : kind == EPH_GC_SCAVENGE     ? EPH_DEATH_SCAVENGE
                                                     : EPH_DEATH_FULL_GC;
  size_t keep = 0;
  for (size_t i = 0; i < v->len; i++) {
    tracked t = v->items[i];
    eph_value to = eph_gc_fate(p->h, t.addr);
    eph_record *r = &p->pool[t.rec];
    if (to == EPH_NIL) {
      eph_stamp until = how == EPH_DEATH_EXACT ? *now : r->alive_until;
      prof_finish_record(p, t.rec, now, &until, how);
      continue;
    }
    r->alive_until = *now; /* survived this collection */
    if (young_list && !eph_is_young(p->h, to)) push(p, &p->old, to, t.rec);
    else v->items[keep++] = (tracked){to, t.rec};
  }
  v->len = keep;
}

void gc_mode_collect(eph_profiler *p, eph_gc_kind kind) {
  eph_stamp now = prof_now(p);
  /* Old first: eph_gc_fate maps pre-collection addresses, and settling the
   * young list appends promoted survivors, with their final addresses, to
   * the old list, which must not be asked about them again. */
  if (kind == EPH_GC_FULL) settle(p, &p->old, false, kind, &now);
  settle(p, &p->young, true, kind, &now);
}

void gc_mode_stop(eph_profiler *p) {
  eph_stamp end = prof_now(p);
  tracked_vec *lists[2] = {&p->young, &p->old};
  for (int l = 0; l < 2; l++) {
    for (size_t i = 0; i < lists[l]->len; i++) prof_finish_record(p, lists[l]->items[i].rec, &end, &end, EPH_DEATH_CENSORED);
    lists[l]->len = 0;
  }
}
