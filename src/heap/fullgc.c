/*
 * fullgc.c — the full collection: tenure, mark, compact.
 *
 * 1. Evacuate new space completely into old space (a scavenge that tenures
 *    every survivor), so the rest of the collection sees one space.
 * 2. Mark from the roots with an explicit stack; ephemerons whose keys are
 *    not marked yet are deferred, then settled as in ephemeron.h.  The mark bitmap has one
 *    bit per old-space word and marking sets the bits of *every* word of a
 *    live object, so that the number of live words below any address is a
 *    popcount away (the Compressor's trick, Kermany & Petrank 2006).
 * 3. Prefix-sum the live words per 64-word chunk; an object's new address
 *    is then old_base + 8 * (live words before it): O(1), no header space.
 * 4. Update every pointer (roots, live objects) to the new addresses.
 * 5. Slide live objects down in address order from the end of the dense
 *    prefix on, a run of adjacent live objects at a time (memmove; nothing
 *    overwrites what has not moved yet).
 * 6. Give free memory above the shrink threshold back to the OS.
 *
 * Pinned objects (pinned.c) are roots in steps 2 and 4: their slots are
 * traced and updated, and they are neither marked nor moved.
 */
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"
#include "markbits.h"

bool ephh_full_is_marked(const eph_heap *h, eph_value obj) { return bit_is_set(h->mark_bits, word_index(h, obj)); }

eph_value ephh_full_forward(const eph_heap *h, eph_value obj) {
  if (obj < (eph_value)h->dense_end) return obj; /* nothing below moves */
  return forward_word(h, word_index(h, obj));
}

static void set_bit_range(uint64_t *bits, size_t from, size_t count) {
  size_t to = from + count; /* exclusive */
  size_t fw = from >> 6, tw = (to - 1) >> 6;
  uint64_t first = ~UINT64_C(0) << (from & 63);
  uint64_t last = ~UINT64_C(0) >> (63 - ((to - 1) & 63));
  if (fw == tw) {
    bits[fw] |= first & last;
    return;
  }
  bits[fw] |= first;
  for (size_t i = fw + 1; i < tw; i++) bits[i] = ~UINT64_C(0);
  bits[tw] |= last;
}

/* Index of the first set bit at or after w, or `limit`. */
static size_t next_set_bit(const uint64_t *bits, size_t w, size_t limit) {
  if (w >= limit) return limit;
  size_t i = w >> 6;
  uint64_t word = bits[i] & (~UINT64_C(0) << (w & 63));
  size_t nwords = (limit + 63) >> 6;
  while (!word) {
    if (++i >= nwords) return limit;
    word = bits[i];
  }
  size_t r = (i << 6) + (size_t)__builtin_ctzll(word);
  return r < limit ? r : limit;
}

/* Index of the first clear bit at or after w, or `limit`. */
static size_t next_clear_bit(const uint64_t *bits, size_t w, size_t limit) {
  if (w >= limit) return limit;
  size_t i = w >> 6;
  uint64_t word = ~bits[i] & (~UINT64_C(0) << (w & 63));
  size_t nwords = (limit + 63) >> 6;
  while (!word) {
    if (++i >= nwords) return limit;
    word = ~bits[i];
  }
  size_t r = (i << 6) + (size_t)__builtin_ctzll(word);
  return r < limit ? r : limit;
}

static void prepare_tables(eph_heap *h, size_t nwords) {
  size_t nchunks = (nwords + 63) / 64 + 1;
  if (nchunks > h->mark_bits_words) {
    free(h->mark_bits);
    free(h->chunk_live_before);
    h->mark_bits = malloc(nchunks * sizeof *h->mark_bits);
    h->chunk_live_before = malloc(nchunks * sizeof *h->chunk_live_before);
    if (!h->mark_bits || !h->chunk_live_before) ephh_fatal(h, "no memory for the full GC's mark bitmap");
    h->mark_bits_words = nchunks;
  }
  memset(h->mark_bits, 0, nchunks * sizeof *h->mark_bits);
}

static void push_mark(eph_heap *h, eph_value obj) {
  if (h->mark_len == h->mark_cap) {
    size_t cap = h->mark_cap ? h->mark_cap * 2 : 4096;
    eph_value *s = realloc(h->mark_stack, cap * sizeof *s);
    if (!s) ephh_fatal(h, "the mark stack cannot grow");
    h->mark_stack = s;
    h->mark_cap = cap;
  }
  h->mark_stack[h->mark_len++] = obj;
}

static inline void mark_value(eph_heap *h, eph_value v) {
  if (!ephh_in_old(h, v)) return;
  size_t w = word_index(h, v);
  if (bit_is_set(h->mark_bits, w)) return;
  set_bit_range(h->mark_bits, w, ephh_span(h, v) / EPH_WORD);
  if (eph_format_of(v) != EPH_FORMAT_BYTES && eph_size_bytes(v) != 0) push_mark(h, v);
}

/* Traces the slots of obj, deferring a live ephemeron whose key is
 * unmarked; returns the number of slots (the event log's slots_scanned). */
static inline __attribute__((always_inline)) size_t mark_slots(eph_heap *h, eph_value obj, uint64_t *ephemerons) {
  const eph_value *slot = (const eph_value *)(obj + sizeof(eph_header));
  size_t i = 0, n = eph_size_bytes(obj) / EPH_WORD;
  if (EPH_UNLIKELY(ephh_is_live_ephemeron(obj))) {
    (*ephemerons)++;
    eph_value key = slot[EPH_EPHEMERON_KEY];
    if (h->mourn_all || (ephh_in_old(h, key) && !ephh_full_is_marked(h, key))) {
      ephh_vec_push(h, &h->deferred, obj);
      i = EPH_EPHEMERON_VALUE + 1; /* skip key and value for now */
    }
  }
  for (; i < n; i++) mark_value(h, slot[i]);
  return n;
}

static void drain(eph_heap *h, uint64_t *ephemerons) {
  uint64_t slots = 0; /* counted here, not through h in the loop */
  while (h->mark_len) slots += mark_slots(h, h->mark_stack[--h->mark_len], ephemerons);
  h->current.slots_scanned += slots;
}

/* Deferred ephemerons whose keys got marked have their values traced, to
 * a fixpoint; then all remaining ones are mourned together. */
static void settle_ephemerons(eph_heap *h, uint64_t *ephemerons) {
  eph_value_vec *d = &h->deferred;
  while (d->len) {
    bool progress = false;
    size_t keep = 0;
    for (size_t i = 0; i < d->len; i++) {
      eph_value e = d->items[i];
      if (!h->mourn_all && ephh_full_is_marked(h, eph_slot(e, EPH_EPHEMERON_KEY))) {
        mark_value(h, eph_slot(e, EPH_EPHEMERON_VALUE));
        progress = true;
      } else {
        d->items[keep++] = e;
      }
    }
    d->len = keep;
    if (!progress) {
      size_t n = d->len;
      for (size_t i = 0; i < n; i++) {
        eph_value e = d->items[i];
        ephh_mourn(h, e);
        mark_value(h, eph_slot(e, EPH_EPHEMERON_KEY));
        mark_value(h, eph_slot(e, EPH_EPHEMERON_VALUE));
      }
      d->len = 0; /* nothing is deferred while mourning: drain comes after */
    }
    drain(h, ephemerons);
  }
}

/* Pinned objects (pinned.c) are roots that are never marked: their slots
 * are traced, a live ephemeron's by the ephemeron rules. */
static void mark_pinned(eph_heap *h, uint64_t *ephemerons) {
  for (char *p = h->pinned_base, *top = h->pinned_kept ? h->pinned_top : p; p < top; p = ephh_next_object(h, p)) {
    eph_value obj = (eph_value)p;
    if (!ephh_pinned_holds(h, obj)) continue;
    mark_slots(h, obj, ephemerons);
    drain(h, ephemerons);
  }
}

/* Roots are traced one at a time, in order: ephemerons held by a later
 * root (a profiler's registry, or its pinned ephemerons) then find the
 * keys that earlier roots reach already marked, instead of all being
 * deferred. */
static void mark_from_roots(eph_heap *h) {
  uint64_t ephemerons = 0;
  for (size_t i = 0; i < h->fast.roots_len; i++) {
    mark_value(h, *h->fast.roots[i]);
    drain(h, &ephemerons);
  }
  for (size_t i = 0; i < h->fast.globals_len; i++) {
    mark_value(h, *h->fast.globals[i]);
    drain(h, &ephemerons);
  }
  mark_pinned(h, &ephemerons);
  for (size_t i = h->mourn_head; i < h->mourn.len; i++) mark_value(h, h->mourn.items[i]);
  drain(h, &ephemerons);
  settle_ephemerons(h, &ephemerons);
  h->stats.ephemerons_traced += ephemerons;
}

/* Returns the total number of live words. */
static size_t compute_forwarding(eph_heap *h, size_t nwords) {
  size_t nchunks = (nwords + 63) / 64;
  size_t live = 0;
  for (size_t c = 0; c < nchunks; c++) {
    h->chunk_live_before[c] = live;
    live += popcount64(h->mark_bits[c]);
  }
  h->chunk_live_before[nchunks] = live;
  /* The dense prefix: everything below the first dead word stays put. */
  size_t first_dead = 0;
  while (first_dead < nchunks && h->mark_bits[first_dead] == ~UINT64_C(0)) first_dead++;
  size_t w = first_dead * 64;
  if (first_dead < nchunks) w += (size_t)__builtin_ctzll(~h->mark_bits[first_dead]);
  h->dense_end = h->old_base + (w < nwords ? w : nwords) * EPH_WORD;
  return live;
}

static inline void update_slot(eph_heap *h, eph_value *slot) {
  if (ephh_in_old(h, *slot)) *slot = ephh_full_forward(h, *slot);
}

/*
 * The same C variable may be registered as a root more than once (twice on
 * the shadow stack, or there and as a global), and forwarding is not
 * idempotent (a new address can be some other object's old one), so every
 * root's target is computed before any is written.  The (empty) mark stack
 * serves as scratch space.
 */
static void update_roots(eph_heap *h) {
  size_t nr = h->fast.roots_len, n = nr + h->fast.globals_len;
  while (h->mark_cap < n) push_mark(h, EPH_NIL);
  h->mark_len = 0;
  eph_value *target = h->mark_stack;
  for (size_t i = 0; i < n; i++) {
    eph_value v = i < nr ? *h->fast.roots[i] : *h->fast.globals[i - nr];
    target[i] = ephh_in_old(h, v) ? ephh_full_forward(h, v) : v;
  }
  for (size_t i = 0; i < n; i++) *(i < nr ? h->fast.roots[i] : h->fast.globals[i - nr]) = target[i];
}

static void update_slots(eph_heap *h, eph_value obj) {
  eph_value *slot = (eph_value *)(obj + sizeof(eph_header));
  size_t n = eph_size_bytes(obj) / EPH_WORD;
  for (size_t i = 0; i < n; i++) update_slot(h, &slot[i]);
}

static void update_pointers(eph_heap *h, size_t nwords) {
  update_roots(h);
  for (size_t i = h->mourn_head; i < h->mourn.len; i++) update_slot(h, &h->mourn.items[i]);
  for (char *p = h->pinned_base, *top = h->pinned_kept ? h->pinned_top : p; p < top; p = ephh_next_object(h, p))
    if (ephh_pinned_holds(h, (eph_value)p)) update_slots(h, (eph_value)p);
  for (size_t w = next_set_bit(h->mark_bits, 0, nwords); w < nwords;) {
    eph_value obj = (eph_value)(h->old_base + w * EPH_WORD);
    if (eph_format_of(obj) != EPH_FORMAT_BYTES) update_slots(h, obj);
    w = next_set_bit(h->mark_bits, w + ephh_span(h, obj) / EPH_WORD, nwords);
  }
}

/* Slides each run of live words (marked words are whole live objects, so a
 * run is a sequence of adjacent live objects) down in one memmove: no
 * header is read.  The dense prefix stays where it is. */
static uint64_t slide(eph_heap *h, size_t nwords) {
  char *old_top = h->old_top;
  uint64_t moved = 0;
  char *dest = h->dense_end;
  for (size_t w = next_set_bit(h->mark_bits, word_index(h, (eph_value)dest), nwords); w < nwords;) {
    size_t end = next_clear_bit(h->mark_bits, w, nwords);
    size_t bytes = (end - w) * EPH_WORD;
    char *src = h->old_base + w * EPH_WORD;
    if (src != dest) {
      memmove(dest, src, bytes);
      moved += bytes;
    }
    dest += bytes;
    w = next_set_bit(h->mark_bits, end, nwords);
  }
  h->old_top = dest;
  if (ephh_checking(h)) ephh_poison(dest, old_top);
  return moved;
}

void ephh_full_gc(eph_heap *h) {
  ephh_gc_begin(h, EPH_GC_FULL);
  ephh_evacuate_young(h, true);

  size_t nwords = ephh_old_used(h) / EPH_WORD;
  prepare_tables(h, nwords);
  /* A profile's stop drops all of the pinned space: no walk over it then */
  h->pinned_kept = ephh_pinned_kept(h);
  mark_from_roots(h);
  size_t live_words = compute_forwarding(h, nwords);

  h->phase = PHASE_MARKED;
  if (h->has_observer && h->observer.on_collect) h->observer.on_collect(h->observer.data, h, EPH_GC_FULL);
  h->phase = PHASE_NONE;

  update_pointers(h, nwords);
  h->current.bytes_compacted += slide(h, nwords);
  if ((size_t)(h->old_top - h->old_base) != live_words * EPH_WORD)
    ephh_fatal(h, "full GC: the compacted old space does not hold exactly the marked words");
  h->dense_end = h->old_base;
  if (h->pinned_drops) ephh_pinned_free_dropped(h);
  ephh_old_space_resize_after_full(h);
  ephh_gc_end(h);
}
