/*
 * chain.c — several observers on one heap (observer.h), as Whippet's
 * event-listener chain: registrations in the heap's slots, in the order
 * they were added, and what the heap calls (h->observer).  With one
 * observer that is the observer's own hooks, so one tool costs what it
 * did alone; with several it is the chain below, which calls each in turn.
 *
 * Sample points: one observer's are the heap's own triggers
 * (sample_point.c).  With several, each registration keeps its gaps and
 * its next points on two clocks, sampled objects and bytes; the heap's
 * triggers are set at the nearest (arm), and at each sample point the
 * chain calls on_alloc of the observers whose point it is.
 */
#include <string.h>

#include "heap_internal.h"

#define NONE UINT64_MAX

eph_observer_reg *ephh_acting_observer(eph_heap *h) {
  if (h->acting && h->acting->seq) return h->acting;
  return h->nobservers ? h->observers[h->nobservers - 1] : NULL;
}

/* --- the chain ------------------------------------------------------------------ */

/* The registrations as a hook found them: one removed meanwhile is passed
 * over (its slot is free, or another's since: its seq differs). */
typedef struct snapshot {
  eph_observer_reg *reg[EPH_MAX_OBSERVERS];
  uint64_t seq[EPH_MAX_OBSERVERS];
  unsigned n;
} snapshot;

static void take_snapshot(const eph_heap *h, snapshot *s) {
  s->n = h->nobservers;
  for (unsigned i = 0; i < s->n; i++) s->reg[i] = h->observers[i], s->seq[i] = h->observers[i]->seq;
}

static inline bool still_there(const snapshot *s, unsigned i) { return s->reg[i]->seq == s->seq[i]; }

/* Sets the heap's triggers at the nearest of the observers' next points. */
static void arm(eph_heap *h) {
  uint64_t next_object = NONE, next_byte = NONE;
  for (unsigned i = 0; i < h->nobservers; i++) {
    const eph_observer_reg *r = h->observers[i];
    if (!r->obs.on_alloc) continue;
    if (r->next_object < next_object) next_object = r->next_object;
    if (r->next_byte < next_byte) next_byte = r->next_byte;
  }
  uint64_t objects = ephh_sampled_objects(h), bytes = eph_heap_allocated(h);
  uint64_t object_gap = next_object == NONE ? 0 : next_object > objects ? next_object - objects : 1;
  uint64_t byte_gap = next_byte == NONE ? 0 : next_byte > bytes ? next_byte - bytes : 1;
  ephh_sample_next(h, object_gap, byte_gap);
}

/* reg's next points, `objects` and `bytes` gaps from now. */
static void set_next(eph_heap *h, eph_observer_reg *r, uint64_t objects, uint64_t bytes) {
  r->sample_objects = objects;
  r->sample_bytes = bytes;
  r->next_object = objects ? ephh_sampled_objects(h) + objects : NONE;
  r->next_byte = bytes ? eph_heap_allocated(h) + bytes : NONE;
}

void ephh_chain_sample_next(eph_heap *h, eph_observer_reg *reg, uint64_t objects, uint64_t bytes) {
  if (!reg || !reg->seq) return; /* removed */
  set_next(h, reg, objects, bytes);
  if (!h->in_chain_alloc) arm(h); /* else once every observer due has run */
}

/* The one observer's sample points, the heap's, become its own as a
 * second joins (a count trigger that ran out is due at the next). */
static void keep_own_points(eph_heap *h, eph_observer_reg *r) {
  uint64_t left = h->fast.alloc_countdown;
  r->sample_objects = h->sample_objects;
  r->sample_bytes = h->sample_bytes;
  r->next_object = h->sample_objects ? ephh_sampled_objects(h) + (left ? left : 1) : NONE;
  r->next_byte = h->sample_at_bytes;
  h->points_per_observer = true;
}

/* After observers came or went: the heap's triggers at the nearest point,
 * and its own again for one observer, or none. */
static void settle_points(eph_heap *h) {
  if (h->nobservers > 1) {
    arm(h);
    return;
  }
  if (!h->points_per_observer) return;
  h->points_per_observer = false;
  if (!h->nobservers) {
    ephh_sample_next(h, 0, 0);
    return;
  }
  const eph_observer_reg *r = h->observers[0];
  uint64_t objects = ephh_sampled_objects(h);
  uint64_t countdown = r->next_object == NONE ? 0 : r->next_object > objects ? r->next_object - objects : 1;
  ephh_sample_resume(h, r->sample_objects, r->sample_bytes, countdown, r->next_byte);
}

/* A sample point: on_alloc of each observer whose point it is, re-armed
 * first with its gaps (it may choose others), the eden-walk mode's owner
 * at every old-space allocation; each finds the allocation's site.  obj
 * is rooted here unless every on_alloc is a leaf: one may move it before
 * the next sees it. */
static void chain_alloc(void *data, eph_heap *h, eph_value obj) {
  (void)data;
  uint64_t objects = ephh_sampled_objects(h), bytes = eph_heap_allocated(h);
  bool walked_old = ephh_eden_walk_on(h) && !eph_is_young(h, obj);
  eph_site *site = h->fast.site; /* an earlier one's allocation forgets it */
  bool leaf = h->observer.on_alloc_is_leaf;
  size_t height = eph_roots_height(h);
  if (!leaf) eph_root_push(h, &obj);
  snapshot s;
  take_snapshot(h, &s);
  eph_observer_reg *acting = h->acting;
  h->in_chain_alloc = true;
  for (unsigned i = 0; i < s.n; i++) {
    eph_observer_reg *r = s.reg[i];
    if (!still_there(&s, i) || !r->obs.on_alloc) continue;
    bool due = objects >= r->next_object || bytes > r->next_byte || (walked_old && r == h->eden_walk_owner);
    if (!due) continue;
    set_next(h, r, r->sample_objects, r->sample_bytes);
    h->acting = r;
    h->fast.site = site;
    r->obs.on_alloc(r->obs.data, h, obj);
  }
  h->acting = acting;
  h->in_chain_alloc = false;
  if (!leaf) eph_roots_reset(h, height);
  settle_points(h);
}

typedef enum chain_event { GC_START, COLLECT, GC_END, HEAP_FREE } chain_event;

/* One event, to every observer in turn. */
static void fan_out(eph_heap *h, chain_event e, eph_gc_kind kind, const eph_gc_event *ev) {
  snapshot s;
  take_snapshot(h, &s);
  eph_observer_reg *acting = h->acting;
  for (unsigned i = 0; i < s.n; i++) {
    if (!still_there(&s, i)) continue;
    const eph_observer *o = &s.reg[i]->obs;
    h->acting = s.reg[i];
    if (e == GC_START && o->on_gc_start) o->on_gc_start(o->data, h, kind);
    else if (e == COLLECT && o->on_collect) o->on_collect(o->data, h, kind);
    else if (e == GC_END && o->on_gc_end) o->on_gc_end(o->data, h, ev);
    else if (e == HEAP_FREE && o->on_heap_free) o->on_heap_free(o->data, h);
  }
  h->acting = acting;
}

static void chain_gc_start(void *data, eph_heap *h, eph_gc_kind kind) { (void)data, fan_out(h, GC_START, kind, NULL); }
static void chain_collect(void *data, eph_heap *h, eph_gc_kind kind) { (void)data, fan_out(h, COLLECT, kind, NULL); }
static void chain_gc_end(void *data, eph_heap *h, const eph_gc_event *ev) {
  (void)data, fan_out(h, GC_END, ev->kind, ev);
}
static void chain_heap_free(void *data, eph_heap *h) { (void)data, fan_out(h, HEAP_FREE, EPH_GC_SCAVENGE, NULL); }

/* A store, to each observer that watches stores: its hook, or its
 * stamping barrier. */
static void chain_store(void *data, eph_heap *h, eph_value obj, size_t i, eph_value old, eph_value v) {
  (void)data;
  for (unsigned k = 0; k < h->nobservers; k++) {
    const eph_observer *o = &h->observers[k]->obs;
    if (o->on_store) {
      o->on_store(o->data, h, obj, i, old, v);
    } else if (o->store_clock && eph_is_ptr(old)) {
      uint64_t *stamp = eph_trailer(old) + o->store_stamp_word, now = *o->store_clock;
      if (*stamp < now) *stamp = now;
    }
  }
}

/* --- what the heap calls --------------------------------------------------------- */

/* The chain's hooks, each set where some observer has one. */
static eph_observer chain_of(const eph_heap *h) {
  eph_observer c = {.on_alloc_is_leaf = true};
  for (unsigned i = 0; i < h->nobservers; i++) {
    const eph_observer *o = &h->observers[i]->obs;
    if (o->on_alloc) c.on_alloc = chain_alloc, c.on_alloc_is_leaf &= o->on_alloc_is_leaf;
    if (o->on_gc_start) c.on_gc_start = chain_gc_start;
    if (o->on_collect) c.on_collect = chain_collect;
    if (o->on_gc_end) c.on_gc_end = chain_gc_end;
    if (o->on_heap_free) c.on_heap_free = chain_heap_free;
    if (o->on_store || o->store_clock) c.on_store = chain_store;
  }
  return c;
}

static void set_hooks(eph_heap *h) {
  if (!h->nobservers) memset(&h->observer, 0, sizeof h->observer);
  else h->observer = h->nobservers > 1 ? chain_of(h) : h->observers[0]->obs;
  h->has_observer = h->nobservers > 0;
  h->fast.store_hook = h->has_observer && (h->observer.on_store || h->observer.store_clock);
}

eph_observer_reg *eph_heap_add_observer(eph_heap *h, const eph_observer *obs) {
  if (obs->store_clock && !obs->on_store && (obs->store_stamp_word + 1) * sizeof(uint64_t) > h->fast.trailer_bytes)
    ephh_fatal(h, "eph_heap_add_observer: store_stamp_word is past the heap's trailer words");
  if (h->nobservers == EPH_MAX_OBSERVERS) return NULL;
  eph_observer_reg *r = h->observer_slots;
  while (r->seq) r++;
  *r = (eph_observer_reg){.obs = *obs, .seq = ++h->observers_added};
  if (h->nobservers == 1 && !h->points_per_observer) keep_own_points(h, h->observers[0]);
  h->observers[h->nobservers++] = r;
  set_hooks(h);
  if (h->points_per_observer) ephh_chain_sample_next(h, r, obs->on_alloc ? 1 : 0, 0);
  else ephh_sample_next(h, obs->on_alloc ? 1 : 0, 0);
  return r;
}

void eph_heap_remove_observer(eph_heap *h, eph_observer_reg *reg) {
  unsigned i = 0;
  while (i < h->nobservers && h->observers[i] != reg) i++;
  if (i == h->nobservers) return;
  memmove(&h->observers[i], &h->observers[i + 1], (h->nobservers - i - 1) * sizeof *h->observers);
  h->nobservers--;
  reg->seq = 0;
  if (h->eden_walk_owner == reg || !h->nobservers) {
    h->eden_walk_owner = NULL;
    eph_heap_set_eden_walk(h, false);
  }
  set_hooks(h);
  if (!h->nobservers && !h->points_per_observer) ephh_sample_next(h, 0, 0);
  else if (!h->in_chain_alloc) settle_points(h); /* else as the chain's on_alloc ends */
}

void eph_heap_set_observer(eph_heap *h, const eph_observer *obs) {
  while (h->nobservers) eph_heap_remove_observer(h, h->observers[h->nobservers - 1]);
  if (obs) (void)eph_heap_add_observer(h, obs);
}

eph_observer_reg *eph_heap_find_observer(const eph_heap *h, const void *tool) {
  for (unsigned i = 0; i < h->nobservers; i++)
    if (h->observers[i]->obs.tool == tool) return h->observers[i];
  return NULL;
}

void *eph_observer_data(const eph_observer_reg *reg) { return reg->obs.data; }
