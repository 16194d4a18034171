/*
 * edenwalk.c — eden-walk mode: how a tool sees every allocation without a
 * call per allocation.  Eden is a bump region, so after a collection its
 * objects can be walked in allocation order; all the walk cannot recover
 * is each object's site, which EPH_AT logs as (eden's top, site) while the
 * mode is on.  Old-space allocations, made by the slow path anyway, stay
 * sample points.  The log is emptied after each collection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

void eph_site_log_grow(eph_heap *h) {
  size_t len = (size_t)(h->fast.site_log - h->site_log_base);
  size_t cap = h->site_log_cap ? h->site_log_cap * 2 : 4096;
  eph_site_mark *log = realloc(h->site_log_base, cap * sizeof *log);
  if (!log) {
    fprintf(stderr, "ephemera: out of memory for the allocation-site log (%zu entries)\n", cap);
    abort();
  }
  h->site_log_base = log;
  h->site_log_cap = cap;
  h->fast.site_log = log + len;
  h->fast.site_log_end = log + cap;
}

void eph_heap_set_eden_walk(eph_heap *h, bool on) {
  if (!on) eph_heap_set_eden_pair(h, false);
  h->eden_walk_owner = on ? ephh_acting_observer(h) : NULL;
  h->eden_walk_from = on ? h->fast.alloc_top : NULL;
  if (on) {
    if (!h->site_log_base) eph_site_log_grow(h);
    h->fast.site_log = h->site_log_base;
    h->fast.site_log_end = h->site_log_base + h->site_log_cap;
  } else {
    h->fast.site_log = h->fast.site_log_end = NULL;
  }
}

bool eph_heap_eden_walk(const eph_heap *h) { return ephh_eden_walk_on(h); }

size_t eph_heap_site_log_bytes(const eph_heap *h) {
  return (h->site_log_cap + h->spare_log_cap) * sizeof *h->site_log_base;
}

/* An old-space allocation: an EPH_AT just logged for it must not pass to
 * the next young object, which would be allocated at the same top.  Its
 * site is that EPH_AT's, or none: the inline path leaves the site of the
 * last young allocation in fast.site, and the observer must not take it
 * for this one's. */
void ephh_eden_walk_note_old(eph_heap *h) {
  eph_site *site = NULL;
  if (h->fast.site_log > h->site_log_base && h->fast.site_log[-1].at == (uintptr_t)h->fast.alloc_top)
    site = (--h->fast.site_log)->site;
  h->fast.site = site;
}

/* A walk over eden from `start` (or where the last ended walk stopped) to
 * `top`, with the whole site log. */
static void walk_range(const eph_heap *h, eph_eden_walk *w, char *start, char *top) {
  char *from = h->eden_walk_from && h->eden_walk_from > start ? h->eden_walk_from : start;
  w->next = (uintptr_t)from;
  w->top = (uintptr_t)top;
  w->mark = h->site_log_base;
  w->marks_end = h->fast.site_log;
}

void eph_gc_eden_walk_begin(eph_heap *h, eph_eden_walk *w) {
  *w = (eph_eden_walk){.h = h, .trailer_bytes = h->fast.trailer_bytes, .full = h->phase == PHASE_MARKED};
  if (!ephh_eden_walk_on(h) || h->phase == PHASE_NONE) return;
  walk_range(h, w, h->evacuated[0].start, h->evacuated[0].top);
}

void eph_eden_walk_begin(eph_heap *h, eph_eden_walk *w) {
  *w = (eph_eden_walk){.h = h, .trailer_bytes = h->fast.trailer_bytes};
  if (!ephh_eden_walk_on(h) || h->in_gc) return;
  walk_range(h, w, h->eden.start, h->fast.alloc_top);
}

void eph_eden_walk_end(eph_heap *h, const eph_eden_walk *w) {
  if (!ephh_eden_walk_on(h) || h->in_gc || h->eden_pair || !w->top || w->top != (uintptr_t)h->fast.alloc_top) return;
  h->eden_walk_from = h->fast.alloc_top;
  /* Marks at the top are EPH_ATs made for the next allocation: they stay. */
  eph_site_mark *keep = h->fast.site_log;
  while (keep > h->site_log_base && keep[-1].at >= w->top) keep--;
  size_t n = (size_t)(h->fast.site_log - keep);
  memmove(h->site_log_base, keep, n * sizeof *keep);
  h->fast.site_log = h->site_log_base + n;
}

/* After a collection: eden is empty, so is the log, but for an EPH_AT made
 * for the allocation that triggered the collection (its top was eden's
 * top before it; the object goes where eden starts now). */
void ephh_eden_walk_after_gc(eph_heap *h) {
  if (!ephh_eden_walk_on(h)) return;
  eph_site *pending = NULL;
  if (h->fast.site_log > h->site_log_base && h->fast.site_log[-1].at == (uintptr_t)h->evacuated[0].top)
    pending = h->fast.site_log[-1].site;
  if (ephh_eden_retired(h)) { /* the retired eden keeps its log for the walk; the other is emptied */
    eph_site_mark *base = h->site_log_base;
    size_t cap = h->site_log_cap;
    h->site_log_base = h->spare_log_base, h->site_log_cap = h->spare_log_cap;
    h->spare_log_base = base, h->spare_log_cap = cap;
    h->fast.site_log_end = h->site_log_base + h->site_log_cap;
  }
  h->fast.site_log = h->site_log_base;
  h->eden_walk_from = NULL;
  if (pending) *h->fast.site_log++ = (eph_site_mark){(uintptr_t)h->fast.alloc_top, pending};
}

/* Pair mode's second log, before its first swap. */
bool ephh_eden_walk_spare_log(eph_heap *h) {
  if (h->spare_log_base) return true;
  size_t cap = h->site_log_cap ? h->site_log_cap : 4096;
  h->spare_log_base = malloc(cap * sizeof *h->spare_log_base);
  h->spare_log_cap = h->spare_log_base ? cap : 0;
  return h->spare_log_base != NULL;
}

void ephh_eden_walk_free(eph_heap *h) {
  free(h->site_log_base);
  free(h->spare_log_base);
  h->spare_log_base = NULL;
  h->spare_log_cap = 0;
  h->site_log_base = NULL;
  h->fast.site_log = h->fast.site_log_end = NULL;
}
