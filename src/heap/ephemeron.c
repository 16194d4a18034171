/*
 * ephemeron.c — ephemerons outside the collector: the finaliser table,
 * creating ephemerons, the mourn queue and running finalisers at safe
 * points.  How collections treat ephemerons is in scavenge.c and fullgc.c;
 * the rules are in include/ephemera/ephemeron.h.
 */
#include <stdlib.h>

#include "heap_internal.h"

void ephh_vec_grow(eph_heap *h, eph_value_vec *v) {
  size_t cap = v->cap ? v->cap * 2 : 256;
  eph_value *items = realloc(v->items, cap * sizeof *items);
  if (!items) ephh_fatal(h, "an ephemeron queue cannot grow");
  v->items = items;
  v->cap = cap;
}

eph_finalizer_id eph_finalizer_register(eph_heap *h, eph_finalizer_fn fn, void *data) {
  if (!fn) {
    ephh_set_error(h, EPH_ERR_INVALID, "finaliser function is NULL");
    return 0;
  }
  if (h->finalizers_len == 0) h->finalizers_len = 1; /* id 0 means "the class's" */
  if (h->finalizers_len >= h->finalizers_cap) {
    size_t cap = h->finalizers_cap ? h->finalizers_cap * 2 : 16;
    eph_finalizer_entry *f = realloc(h->finalizers, cap * sizeof *f);
    if (!f) {
      ephh_set_error(h, EPH_ERR_NOMEM, "cannot grow the finaliser table");
      return 0;
    }
    h->finalizers = f;
    h->finalizers_cap = cap;
  }
  h->finalizers[h->finalizers_len] = (eph_finalizer_entry){fn, data};
  return (eph_finalizer_id)h->finalizers_len++;
}

static bool finalizer_ok(const eph_heap *h, eph_finalizer_id fin) { return fin == 0 || fin < h->finalizers_len; }

eph_status eph_class_set_finalizer(eph_heap *h, eph_class_id cls, eph_finalizer_id fin) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not an ephemeron class", cls);
    return EPH_ERR_INVALID;
  }
  if (!finalizer_ok(h, fin)) {
    ephh_set_error(h, EPH_ERR_INVALID, "unknown finaliser id %u", fin);
    return EPH_ERR_INVALID;
  }
  h->classes[cls].finalizer = fin;
  return EPH_OK;
}

eph_status eph_class_set_compact(eph_heap *h, eph_class_id cls) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not an ephemeron class", cls);
    return EPH_ERR_INVALID;
  }
  eph_class_entry *c = &h->classes[cls];
  if (c->compact) return EPH_OK;
  if (c->has_ephemerons) {
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s' already has ephemerons: too late to make it compact", c->name);
    return EPH_ERR_INVALID;
  }
  c->compact = true;
  return EPH_OK;
}

eph_status eph_class_set_batch_finalizer(eph_heap *h, eph_class_id cls, eph_batch_finalizer_fn fn, void *data) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON || !h->classes[cls].compact) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not a compact ephemeron class", cls);
    return EPH_ERR_INVALID;
  }
  h->classes[cls].batch_finalizer = fn;
  h->classes[cls].batch_data = fn ? data : NULL;
  return EPH_OK;
}

eph_status eph_class_set_phantom(eph_heap *h, eph_class_id cls, bool phantom) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not an ephemeron class", cls);
    return EPH_ERR_INVALID;
  }
  if (!phantom && h->classes[cls].phantom) ephh_remset_plain_class(h, cls); /* no longer inert */
  h->classes[cls].phantom = phantom;
  return EPH_OK;
}

/* The write barrier for key and value stored into e at once (not
 * mourned: remset.c remembers an inert one as such), with remset.c's add
 * inline while the set has room: a profiler stores into an ephemeron per
 * sample, and the calls cost 20 instructions a sample on sph. */
static inline void remember_if_needed(eph_heap *h, eph_value e, eph_value key, eph_value value) {
  if (!(eph_is_young(h, key) || eph_is_young(h, value)) || eph_is_young(h, e)) return;
  eph_header hdr = *eph_header_of(e);
  if (hdr & EPH_HDR_REMEMBERED) return;
  if (EPH_LIKELY(!(hdr & EPH_HDR_REMEMBERED_INERT) && h->remset_len < h->remset_cap)) ephh_remember(h, e);
  else eph_remember_slow(h, e);
}

/*
 * A pretenured ephemeron in old space by a bump of old_top, when the
 * general slow path (alloc.c) would do nothing else: no collection, stress
 * mode, full-GC trigger, finaliser, poll or sample point due, no byte
 * sampling or eden walk to tell, and room in committed old space.  Same
 * effects as that path otherwise.  The general path cost 160 instructions
 * an ephemeron more than a young one in bench/ephemeron-cost, as much as
 * pretenuring saved the scavenger: pretenuring did not pay
 * (docs/heap.md, "What an ephemeron costs").  EPH_NIL: take the general path.
 */
static eph_value alloc_pretenured_quick(eph_heap *h, eph_class_id cls, size_t payload) {
  size_t total = ephh_object_total(h, payload);
  bool quiet = !h->in_gc && !h->requested_gc && !h->over_max && !h->params.stress && !h->params.stress_full_every &&
               h->sample_at_bytes == UINT64_MAX && !ephh_eden_walk_on(h) &&
               (h->in_observer || h->fast.alloc_countdown > 1) &&
               !(h->auto_finalize && h->mourn_head < h->mourn.len && !h->running_finalizers) &&
               !(h->poll_flag && *h->poll_flag) && ephh_old_counted(h) + total <= h->full_threshold &&
               ephh_old_used(h) + total <= h->old_committed;
  if (!quiet) return EPH_NIL;
  char *p = h->old_top;
  h->old_top += total;
  eph_value e = ephh_init_object(p, cls, EPH_FORMAT_EPHEMERON, payload, total);
  ephh_count_old_bytes(h, total);
  if (h->in_observer) h->objects_base++, h->unsampled_objects++; /* counted, no sample point (sample_point.c) */
  else h->fast.alloc_countdown--;
  h->fast.site = NULL;
  return e;
}

/* The payload of a new ephemeron of class cls, or 0 (the heap error set). */
static size_t ephemeron_payload(eph_heap *h, eph_class_id cls, size_t user_slots, eph_finalizer_id fin) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not an ephemeron class", cls);
    return 0;
  }
  if (!finalizer_ok(h, fin)) {
    ephh_set_error(h, EPH_ERR_INVALID, "unknown finaliser id %u", fin);
    return 0;
  }
  eph_class_entry *c = &h->classes[cls];
  if (c->compact && fin) {
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s' is compact: its ephemerons take the class's finaliser, not id %u",
                  c->name, fin);
    return 0;
  }
  size_t fixed = ephh_ephemeron_fixed_slots(c);
  if (user_slots > EPH_MAX_PAYLOAD_BYTES / EPH_WORD - fixed) {
    ephh_set_error(h, EPH_ERR_TOO_LARGE, "ephemeron with %zu user slots is too large", user_slots);
    return 0;
  }
  c->has_ephemerons = true;
  return (fixed + user_slots) * EPH_WORD;
}

/* Fills a new ephemeron's fixed slots, with one barrier for key and value. */
static void init_ephemeron(eph_heap *h, eph_value e, eph_value key, eph_value value, eph_finalizer_id fin) {
  bool with_fin = ephh_ephemeron_fixed_slots(&h->classes[eph_class_of(e)]) > EPH_EPHEMERON_FINALIZER;
  if (EPH_UNLIKELY(eph__fast(h)->store_hook)) { /* a tool watches stores */
    eph_store(h, e, EPH_EPHEMERON_KEY, key);
    eph_store(h, e, EPH_EPHEMERON_VALUE, value);
    if (with_fin) eph_store(h, e, EPH_EPHEMERON_FINALIZER, eph_int((intptr_t)fin));
  } else { /* a new object: one barrier for both slots */
    eph_value *slot = (eph_value *)(e + sizeof(eph_header));
    slot[EPH_EPHEMERON_KEY] = key;
    slot[EPH_EPHEMERON_VALUE] = value;
    if (with_fin) slot[EPH_EPHEMERON_FINALIZER] = eph_int((intptr_t)fin);
    remember_if_needed(h, e, key, value);
  }
}

eph_value eph_ephemeron_new(eph_heap *h, eph_class_id cls, eph_value key, eph_value value, size_t user_slots,
                            eph_finalizer_id fin, bool pretenure) {
  size_t payload = ephemeron_payload(h, cls, user_slots, fin);
  if (!payload) return EPH_NIL;
  EPH_FRAME(h);
  EPH_ROOT(h, key);
  EPH_ROOT(h, value);
  EPH_LOCAL(h, e);
  if (!pretenure) e = eph__alloc(h, cls, EPH_FORMAT_EPHEMERON, payload);
  else if ((e = alloc_pretenured_quick(h, cls, payload)) == EPH_NIL)
    e = eph_alloc_slow(h, cls, EPH_FORMAT_EPHEMERON, payload, true);
  if (e != EPH_NIL) init_ephemeron(h, e, key, value, fin);
  EPH_RETURN(h, e);
}

/*
 * The last class made pinned with no user slot and the class's finaliser
 * (a profiler's, one per sample while the samples alive grow: 10 M on
 * DataFrame at 100 %), again, when the committed space has room and no
 * tool watches stores: a bump and three stores.  The general path's
 * checks and calls cost 255 instructions an ephemeron.
 */
static inline eph_value pinned_quick(eph_heap *h, eph_class_id cls, eph_value key, eph_value value) {
  size_t total = h->pinned_quick_total;
  if (cls != h->pinned_quick_class || h->in_gc || eph__fast(h)->store_hook ||
      ephh_pinned_used(h) + total > h->pinned_committed)
    return EPH_NIL;
  char *p = ephh_pinned_take(h, cls, total);
  eph_value *slot = (eph_value *)(p + sizeof(eph_header));
  *(eph_header *)(void *)p = eph_make_header(cls, EPH_FORMAT_EPHEMERON, EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD);
  slot[EPH_EPHEMERON_KEY] = key;
  slot[EPH_EPHEMERON_VALUE] = value;
  if (EPH_UNLIKELY(total > sizeof(eph_header) + EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD)) /* a tool's trailer */
    memset(slot + EPH_EPHEMERON_COMPACT_FIXED_SLOTS, 0, h->fast.trailer_bytes);
  remember_if_needed(h, (eph_value)p, key, value);
  return (eph_value)p;
}

/* Never collects (pinned.c): key and value need no rooting. */
eph_value eph_ephemeron_new_pinned(eph_heap *h, eph_class_id cls, eph_value key, eph_value value, size_t user_slots,
                                   eph_finalizer_id fin) {
  if (user_slots == 0 && fin == 0) {
    eph_value e = pinned_quick(h, cls, key, value);
    if (e != EPH_NIL) return e;
  }
  size_t payload = ephemeron_payload(h, cls, user_slots, fin);
  if (!payload) return EPH_NIL;
  if (h->in_gc) {
    ephh_set_error(h, EPH_ERR_INVALID, "eph_ephemeron_new_pinned inside a collection");
    return EPH_NIL;
  }
  eph_value e = ephh_pinned_alloc(h, cls, EPH_FORMAT_EPHEMERON, payload);
  if (e == EPH_NIL) return EPH_NIL;
  init_ephemeron(h, e, key, value, fin);
  if (user_slots == 0 && fin == 0 && h->classes[cls].compact) {
    h->pinned_quick_class = cls;
    h->pinned_quick_total = ephh_object_total(h, payload);
  }
  return e;
}

/* Whether e waits in the mourn queue: O(pending), for checking only. */
static bool is_pending(const eph_heap *h, eph_value e) {
  for (size_t i = h->mourn_head; i < h->mourn.len; i++)
    if (h->mourn.items[i] == e) return true;
  return false;
}

eph_status eph_ephemeron_rearm(eph_heap *h, eph_value e, eph_value key, eph_value value) {
  if (h->in_gc || !eph_is_ptr(e) || eph_format_of(e) != EPH_FORMAT_EPHEMERON || !eph_ephemeron_is_mourned(e) ||
      (ephh_checking(h) && is_pending(h, e))) {
    ephh_set_error(h, EPH_ERR_INVALID, "eph_ephemeron_rearm: not a finalised ephemeron, or inside a collection");
    return EPH_ERR_INVALID;
  }
  /* The flag first (nothing collects before the slots are set), so that
   * the barrier sees an armed ephemeron.  One write barrier for both slots
   * (a profiler re-arms one per sample): e is remembered if it is old and
   * the new key or value is young. */
  *eph_header_of(e) &= ~EPH_HDR_MOURNED;
  if (EPH_UNLIKELY(eph__fast(h)->store_hook)) {
    eph_store(h, e, EPH_EPHEMERON_KEY, key);
    eph_store(h, e, EPH_EPHEMERON_VALUE, value);
  } else {
    eph_value *slot = (eph_value *)(e + sizeof(eph_header));
    slot[EPH_EPHEMERON_KEY] = key;
    slot[EPH_EPHEMERON_VALUE] = value;
    remember_if_needed(h, e, key, value);
  }
  return EPH_OK;
}

/* What eph_ephemerons_rearm_unchecked reads once for a run instead of
 * once an ephemeron: new space's range, and the class's kind.  Each
 * ephemeron then gets what remember_if_needed does, with the remembered
 * set's length in a local and its header written once. */
typedef struct rearm_ctx {
  uintptr_t young_lo, young_size;
  eph_class_id cls;  /* the class last looked at, */
  bool inert_kind;   /* and whether its ephemerons may be inert (phantom) */
} rearm_ctx;

static inline bool young_in(const rearm_ctx *c, eph_value v) { return (v & 7) == 0 && v - c->young_lo < c->young_size; }

void eph_ephemerons_rearm_unchecked(eph_heap *h, size_t n, const eph_value *es, const eph_value *keys,
                                    const eph_value *values) {
#ifndef EPH_CHECKED
  if (EPH_LIKELY(!eph__fast(h)->store_hook)) {
    while (h->remset_cap - h->remset_len < n) ephh_remset_grow(h); /* room for each to go in */
    ephh_vec_reserve(h, &h->remset_inert, n);
    rearm_ctx c = {eph__fast_const(h)->young_lo, eph__fast_const(h)->young_size, 0, false};
    eph_value *set = h->remset, *inert_set = h->remset_inert.items;
    size_t len = h->remset_len, inert_len = h->remset_inert.len;
    for (size_t i = 0; i < n; i++) {
      eph_value e = es[i], key = keys[i], value = values[i];
      eph_value *slot = (eph_value *)(e + sizeof(eph_header));
      eph_header *hp = eph_header_of(e), hdr = *hp & ~EPH_HDR_MOURNED;
      slot[EPH_EPHEMERON_KEY] = key;
      slot[EPH_EPHEMERON_VALUE] = value;
      if (!(young_in(&c, key) || young_in(&c, value)) || young_in(&c, e)) {
        *hp = hdr;
        continue;
      }
      if (EPH_UNLIKELY(hdr & (EPH_HDR_REMEMBERED | EPH_HDR_REMEMBERED_INERT))) { /* in already: the general way */
        *hp = hdr;
        h->remset_len = len;
        h->remset_inert.len = inert_len;
        eph_remember_slow(h, e);
        set = h->remset, len = h->remset_len;
        inert_set = h->remset_inert.items, inert_len = h->remset_inert.len;
        continue;
      }
      /* ephh_inert_candidate's test, the class's part once per class */
      eph_class_id cls = eph_class_of(e);
      if (EPH_UNLIKELY(cls != c.cls || i == 0)) {
        c.cls = cls;
        c.inert_kind = h->classes[cls].phantom && ((hdr >> EPH_HDR_FORMAT_SHIFT) & 0xF) == EPH_FORMAT_EPHEMERON;
      }
      bool inert = c.inert_kind && (size_t)(hdr >> EPH_HDR_SIZE_SHIFT) == EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD &&
                   young_in(&c, key) && !young_in(&c, value);
      /* ephh_remset_push's two writes */
      __atomic_store_n(hp, hdr | (inert ? EPH_HDR_REMEMBERED_INERT : EPH_HDR_REMEMBERED), __ATOMIC_RELAXED);
      if (inert) inert_set[inert_len++] = e | REMSET_INERT;
      else set[len++] = e;
    }
    h->remset_len = len;
    h->remset_inert.len = inert_len;
    return;
  }
#endif
  for (size_t i = 0; i < n; i++)
    if (eph_ephemeron_rearm(h, es[i], keys[i], values[i]) != EPH_OK) abort();
}

/* The tombstone of key; a scavenge may have copied it already (another
 * ephemeron mourned in the same batch keeps it alive): then from its copy. */
static eph_value tombstone(eph_value key) {
  eph_header hdr = *eph_header_of(key);
  if (hdr & EPH_HDR_FORWARDED) key = eph_forwarded_to(hdr);
  return eph_tombstone_of(key);
}

/* Called by the collectors: e's key died in this collection.  They trace
 * its key and value next; a phantom's key slot is a tombstone by then, so
 * its key is not kept alive. */
void ephh_mourn(eph_heap *h, eph_value e) {
  eph_value *key = (eph_value *)(e + sizeof(eph_header)) + EPH_EPHEMERON_KEY;
  if (h->classes[eph_class_of(e)].phantom && eph_is_ptr(*key)) *key = tombstone(*key);
  *eph_header_of(e) |= EPH_HDR_MOURNED;
  ephh_vec_push(h, &h->mourn, e);
  h->stats.ephemerons_mourned++;
  h->current.ephemerons_mourned++;
}

size_t eph_pending_finalizers(const eph_heap *h) { return h->mourn.len - h->mourn_head; }

static const eph_finalizer_entry *finalizer_of(const eph_heap *h, eph_value e) {
  const eph_class_entry *c = &h->classes[eph_class_of(e)];
  uint32_t fin = 0;
  if (!c->compact) {
    eph_value id = eph_slot(e, EPH_EPHEMERON_FINALIZER);
    fin = eph_is_int(id) ? (uint32_t)eph_int_value(id) : 0;
  }
  if (fin == 0) fin = c->finalizer;
  return fin && fin < h->finalizers_len ? &h->finalizers[fin] : NULL;
}

/* The queued ephemerons from mourn_head on that are of c's class, up to
 * BATCH_MAX (their headers, just read, stay in the cache for the batch
 * finaliser), to c's batch finaliser in one call; returns how many.  They
 * leave the queue first: no collection can run during the call, so they
 * need no rooting, and the queue is neither moved nor grown. */
#define BATCH_MAX 256
static size_t run_batch(eph_heap *h, const eph_class_entry *c) {
  size_t first = h->mourn_head, end = first + 1, len = h->mourn.len;
  eph_class_id cls = eph_class_of(h->mourn.items[first]);
  while (end < len && end - first < BATCH_MAX) {
    if (end + 8 < len) __builtin_prefetch((const void *)h->mourn.items[end + 8]);
    if (eph_class_of(h->mourn.items[end]) != cls) break;
    end++;
  }
  h->mourn_head = end;
  h->in_batch_finalizer = true;
  c->batch_finalizer(h, h->mourn.items + first, end - first, c->batch_data);
  h->in_batch_finalizer = false;
  return end - first;
}

size_t eph_run_finalizers(eph_heap *h) {
  if (h->running_finalizers || h->in_gc) return 0; /* the outer loop will get to them */
  h->running_finalizers = true;
  size_t ran = 0;
  uint64_t start = ephh_now_ns();
  /* One frame for the whole run: e, rooted during each call, and the
   * shadow stack's height restored after each (a finaliser may leave it
   * higher). */
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  size_t height = eph_roots_height(h);
  while (h->mourn_head < h->mourn.len) {
    if (h->mourn_head + 8 < h->mourn.len) __builtin_prefetch((const void *)h->mourn.items[h->mourn_head + 8]);
    e = h->mourn.items[h->mourn_head];
    const eph_class_entry *c = &h->classes[eph_class_of(e)];
    if (c->batch_finalizer) {
      ran += run_batch(h, c);
      eph_roots_reset(h, height);
      continue;
    }
    h->mourn_head++;
    const eph_finalizer_entry *f = finalizer_of(h, e);
    if (f) {
      f->fn(h, e, f->data);
      ran++;
      eph_roots_reset(h, height);
    }
  }
  EPH_UNFRAME(h);
  h->mourn.len = h->mourn_head = 0;
  h->stats.finalizers_run += ran;
  h->stats.finalize_ns += ephh_now_ns() - start;
  h->running_finalizers = false;
  return ran;
}

void ephh_safepoint(eph_heap *h) {
  if (h->auto_finalize && h->mourn_head < h->mourn.len && !h->running_finalizers) eph_run_finalizers(h);
  ephh_poll(h);
}

void eph_heap_set_auto_finalize(eph_heap *h, bool on) { h->auto_finalize = on; }

void eph_heap_set_exit_finalize(eph_heap *h, eph_exit_finalize mode) { h->exit_finalize = mode; }

/* At heap destruction: run what the embedder asked for. */
void ephh_exit_finalizers(eph_heap *h) {
  if (h->exit_finalize == EPH_EXIT_RUN_ALL) {
    h->mourn_all = true;
    ephh_full_gc(h);
    h->mourn_all = false;
  }
  if (h->exit_finalize != EPH_EXIT_DROP_PENDING) eph_run_finalizers(h);
}
