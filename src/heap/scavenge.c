/*
 * scavenge.c — the young-generation collector (Cheney copying).
 *
 * From-space is eden plus the `past` survivor space; survivors are copied
 * into the `future` survivor space, or tenured into old space when their
 * age reaches the tenuring threshold or `future` is full (Pharo tenures on
 * survivor overflow too).  Roots are the shadow stack, the global roots and
 * the remembered set.  Two Cheney queues are scanned until both are empty:
 * `future` from its start, and old space from where it stood when the
 * scavenge began (promoted objects are appended there contiguously).
 *
 * A copied object's old header becomes its forwarding address | 1.
 *
 * Ephemerons (rules in ephemeron.h): an ephemeron whose key is young and
 * not yet copied is deferred: its key and value slots are left alone (an
 * inert one, a phantom whose value needs no copy, whenever its key is
 * young: it is settled at the fixpoint, which reads its key once).
 * When the queues are empty, deferred ephemerons whose keys have since been
 * copied get their values scavenged; when that makes no more progress, the
 * rest are mourned and their keys and values copied.  Repeat until nothing
 * is deferred.  The remembered set is rebuilt at the very end, because a
 * deferred old ephemeron's key slot is only settled then; an entry whose
 * fate is known earlier (scanned and not deferred) is decided there and
 * then, while its line is in the cache, and an inert ephemeron without
 * user slots leaves the set at its scan, to come back at the fixpoint if
 * its key lives on young.
 */
#include <string.h>

#include "heap_internal.h"

/* A remembered-set entry already known to stay (objects are 8-aligned):
 * rebuild_remembered_set keeps it without reading the object again. */
#define REMSET_KEEP ((eph_value)1)

typedef struct scavenger {
  eph_heap *h;
  uintptr_t from_lo, from_size;  /* eden and past are adjacent or not: test both */
  uintptr_t past_lo, past_size;
  unsigned tenure_age;           /* 0: tenure everything */
  bool full_gc_step;             /* evacuating for a full GC: never mourn */
  char *young_scan;              /* Cheney scan pointer in `future` */
  uint64_t copied, promoted, ephemerons;
  uint64_t objects; /* copied or promoted */
  uint64_t slots;   /* pointer slots scanned */
} scavenger;

static inline bool in_from_space(const scavenger *s, eph_value v) {
  return (v & 7) == 0 && v != 0 && (v - s->from_lo < s->from_size || v - s->past_lo < s->past_size);
}

/* Promotion's bump allocation, inline; ephh_old_alloc_gc grows old space. */
static inline char *promote_alloc(eph_heap *h, size_t bytes) {
  if (EPH_UNLIKELY(ephh_old_used(h) + bytes > h->old_committed)) return ephh_old_alloc_gc(h, bytes);
  char *p = h->old_top;
  h->old_top = p + bytes;
  return p;
}

/* Copies an object's words.  Most objects are a few words, for which a call
 * to memcpy costs more than the copy: constant-size copies are inlined. */
static inline void copy_words(char *dest, const char *src, size_t bytes) {
  if (EPH_UNLIKELY(bytes > 64)) {
    memcpy(dest, src, bytes);
    return;
  }
  for (; bytes >= 16; bytes -= 16, dest += 16, src += 16) memcpy(dest, src, 16);
  if (bytes) memcpy(dest, src, 8);
}

/* Copies obj out of from-space (once) and returns its new address.
 * Inlined into the scan loops: as a call, saving and restoring registers
 * cost as much as the copy of a small object. */
static inline __attribute__((always_inline)) eph_value copy_object(scavenger *s, eph_value obj) {
  eph_header hdr = *eph_header_of(obj);
  if (hdr & EPH_HDR_FORWARDED) return eph_forwarded_to(hdr);
  eph_heap *h = s->h;
  /* eph_object_bytes from the header already read */
  size_t bytes = sizeof(eph_header) + (((size_t)(hdr >> EPH_HDR_SIZE_SHIFT) + 7u) & ~(size_t)7u) + h->fast.trailer_bytes;
  unsigned age = (unsigned)((hdr & EPH_HDR_AGE_MASK) >> EPH_HDR_AGE_SHIFT);
  if (age < 15) age++;
  char *dest;
  if (age >= s->tenure_age || (size_t)(h->future.end - h->future.top) < bytes) {
    dest = promote_alloc(h, bytes);
    s->promoted += bytes;
  } else {
    dest = h->future.top;
    h->future.top += bytes;
    s->copied += bytes;
  }
  s->objects++;
  *(eph_header *)(void *)dest = (hdr & ~EPH_HDR_AGE_MASK) | ((eph_header)age << EPH_HDR_AGE_SHIFT);
  copy_words(dest + sizeof(eph_header), (const char *)obj + sizeof(eph_header), bytes - sizeof(eph_header));
  *eph_header_of(obj) = eph_make_forwarding((uintptr_t)dest, bytes);
  return (eph_value)dest;
}

static inline void scavenge_slot(scavenger *s, eph_value *slot) {
  eph_value v = *slot;
  if (in_from_space(s, v)) *slot = copy_object(s, v);
}

static inline bool is_forwarded(eph_value v) { return (*eph_header_of(v) & EPH_HDR_FORWARDED) != 0; }

/* An ephemeron's key counts as reachable unless it is a young object that
 * has not been copied (yet). */
static inline bool key_reached(const scavenger *s, eph_value key) {
  return !in_from_space(s, key) || is_forwarded(key);
}

/* Scans the pointer slots of obj.  With track_young (old objects: the
 * remembered set and the promoted queue), returns true if a slot still
 * points young; objects in `future` need not know, and skip the test.
 * always_inline: the two callers pass a constant. */
static inline __attribute__((always_inline)) bool scan_slots(scavenger *s, eph_value obj, bool track_young) {
  eph_header hdr = *eph_header_of(obj);
  eph_format fmt = (eph_format)((hdr >> EPH_HDR_FORMAT_SHIFT) & 0xF);
  if (fmt == EPH_FORMAT_BYTES) return false;
  /* in the remembered set as an inert ephemeron too: this scan settles it,
   * settle_inert passes its inert entry over */
  if (EPH_UNLIKELY(hdr & EPH_HDR_REMEMBERED_INERT)) *eph_header_of(obj) = hdr & ~EPH_HDR_REMEMBERED_INERT;
  eph_value *slot = (eph_value *)(obj + sizeof(eph_header));
  eph_value *end = slot + (size_t)(hdr >> EPH_HDR_SIZE_SHIFT) / sizeof(eph_value);
  s->slots += (uint64_t)(end - slot);
  bool young = false;
  if (EPH_UNLIKELY(fmt == EPH_FORMAT_EPHEMERON && !(hdr & EPH_HDR_MOURNED))) {
    s->ephemerons++;
    eph_value key = slot[EPH_EPHEMERON_KEY];
    /* A phantom's key is not traced when it is mourned: with a value that
     * needs no copy either, settling it can reach nothing, and waits for
     * the fixpoint.  Its young key is read there, once: not here too. */
    bool inert = in_from_space(s, key) && !s->full_gc_step && s->h->classes[eph_class_of(obj)].phantom &&
                 !in_from_space(s, slot[EPH_EPHEMERON_VALUE]);
    if (inert || !key_reached(s, key)) {
      ephh_vec_push(s->h, inert ? &s->h->deferred_inert : &s->h->deferred, obj);
      young = true; /* the key is young whatever becomes of it */
      slot += EPH_EPHEMERON_VALUE + 1; /* skip key and value */
    }
  }
  for (; slot < end; slot++) {
    scavenge_slot(s, slot);
    if (track_young) young |= eph_is_young(s->h, *slot);
  }
  return young;
}

static bool scan_object(scavenger *s, eph_value obj) { return scan_slots(s, obj, true); }

/* An object in `future`: its young pointers need no record. */
static void scan_young_object(scavenger *s, eph_value obj) { (void)scan_slots(s, obj, false); }

/* Walks over the deferred ephemerons (hundreds of
 * thousands of old ephemerons when a profiler pretenures one per young
 * object) miss the cache at every entry and at its key's header; fetching
 * entries 16 ahead, and their keys 8 ahead, hides most of it.  (Against
 * 8 and 4, with finalization mode's 24-byte ephemerons at 100 %: 0.2-0.3 s
 * less GC time on DataFrame in three pairs of runs, 0.2-0.4 s on sph in
 * two; 32 and 16 gained nothing more.)  (A macro: GCC takes a function
 * that only prefetches for pure, and drops its calls.) */
#define PREFETCH_AHEAD(items, i, len)                                                                  \
  do {                                                                                                 \
    if ((i) + 16 < (len)) __builtin_prefetch((const void *)(items)[(i) + 16]);                         \
    if ((i) + 8 < (len)) __builtin_prefetch((const void *)eph_slot((items)[(i) + 8], 0));              \
  } while (0)

/* The remembered set's inert part, unread: it becomes, whole, the list of
 * inert ephemerons that settle_inert takes at the fixpoint, where the
 * scan copied them there one by one (this and settle_inert's fetch
 * distances took sph's scavenges at 100 % in finalization mode from
 * 1.60 s to 1.12 s).  When tenuring everything its entries join the
 * plain part and are scanned as any entry. */
static void take_inert_entries(scavenger *s) {
  eph_heap *h = s->h;
  eph_value_vec *inert = &h->remset_inert, *deferred = &h->deferred_inert;
  if (s->full_gc_step) { /* tenuring everything: scanned (and counted) as any entry */
    for (size_t i = 0; i < inert->len; i++)
      ephh_remset_add(h, inert->items[i] & ~REMSET_INERT); /* both flags: the scan clears the inert one */
    inert->len = 0;
  } else { /* settled at the fixpoint, unread till then */
    h->current.remembered_scanned += inert->len;
    /* empty: each scavenge's settle_inert empties it, and nothing is
     * deferred before the set's scan */
    if (deferred->len) ephh_fatal(h, "scavenge: inert ephemerons deferred before the remembered set's scan");
    eph_value_vec empty = *deferred;
    *deferred = *inert;
    *inert = empty;
  }
}

/* Scans each entry and compacts the set as it goes.  An entry's fate is
 * known at once unless it deferred an ephemeron: then it stays in the set
 * and rebuild_remembered_set decides (a deferred ephemeron's key slot is
 * settled only at the fixpoint).  But an inert ephemeron without user
 * slots (finalization mode's, one per sample) leaves the set now, its
 * REMEMBERED flag cleared while its line is in the cache: mourned, it
 * holds nothing young, and settle_inert puts it back if its key lives on
 * young.  The entries known to stay are tagged REMSET_KEEP: the rebuild
 * keeps them without reading them again.  Entries are fetched ahead,
 * their keys not: an inert ephemeron's young key is read at the fixpoint
 * only (scan_slots), and a line fetched here for it was gone by then.
 * (Fetching them as PREFETCH_AHEAD does cost finalization mode at 100 %:
 * scavenges 0.871 s against 0.795 s on sph at `--size 2000`, medians of 11
 * interleaved pairs, and 1.90 s against 1.61 s on DataFrame in 3; the
 * unprofiled sph and GCBench unchanged.) */
static void scan_remembered_set(scavenger *s) {
  eph_heap *h = s->h;
  take_inert_entries(s);
  h->current.remembered_scanned += h->remset_len;
  uint64_t slots_before = s->slots;
  size_t keep = 0, n = h->remset_len;
  for (size_t i = 0; i < n; i++) {
    eph_value obj = h->remset[i];
    if (i + 16 < n) __builtin_prefetch((const void *)h->remset[i + 16]);
    size_t deferred = h->deferred.len, inert = h->deferred_inert.len;
    bool young = scan_object(s, obj);
    if (h->deferred.len != deferred) {
      h->remset[keep++] = obj; /* the rebuild decides */
    } else if (h->deferred_inert.len != inert) {
      if (eph_size_bytes(obj) == EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD) *eph_header_of(obj) &= ~EPH_HDR_REMEMBERED;
      else h->remset[keep++] = obj; /* user slots: the rebuild decides */
    } else if (young) {
      h->remset[keep++] = obj | REMSET_KEEP;
    } else {
      *eph_header_of(obj) &= ~EPH_HDR_REMEMBERED;
    }
  }
  h->remset_len = keep;
  h->current.remembered_slots += s->slots - slots_before;
}

static bool holds_young(const eph_heap *h, eph_value obj) {
  size_t n = eph_slot_count(obj);
  for (size_t i = 0; i < n; i++)
    if (eph_is_young(h, eph_slot(obj, i))) return true;
  return false;
}

/* Keeps only the entries that still point into new space (REMSET_KEEP:
 * one known to stay). */
static void rebuild_remembered_set(eph_heap *h) {
  size_t keep = 0;
  for (size_t i = 0; i < h->remset_len; i++) {
    eph_value obj = h->remset[i];
    if (obj & REMSET_KEEP) { /* known to stay */
      h->remset[keep++] = obj & ~REMSET_KEEP;
      continue;
    }
    if (i + 8 < h->remset_len) __builtin_prefetch((const void *)(h->remset[i + 8] & ~REMSET_KEEP));
    if (holds_young(h, obj))
      h->remset[keep++] = obj;
    else
      *eph_header_of(obj) &= ~EPH_HDR_REMEMBERED;
  }
  h->remset_len = keep;
}

static void scan_roots(scavenger *s) {
  eph_heap *h = s->h;
  for (size_t i = 0; i < h->fast.roots_len; i++) scavenge_slot(s, h->fast.roots[i]);
  for (size_t i = 0; i < h->fast.globals_len; i++) scavenge_slot(s, h->fast.globals[i]);
  for (size_t i = h->mourn_head; i < h->mourn.len; i++) scavenge_slot(s, &h->mourn.items[i]);
}

/* How far ahead of a Cheney scan pointer the objects the queue's slots
 * point to are fetched: a from-space object's header is read (forwarded?)
 * and its words copied soon after the scan reaches the slot, and from-space
 * is larger than the cache.  A few small objects' worth.  (Measured under
 * load, GC CPU medians of interleaved runs: binary-trees at depth 19
 * 442 ms against 475 without; GCBench 19.6 ms against 21.4 with only the
 * header's line fetched.) */
#define SCAN_PREFETCH_BYTES 256

/* Moves pf (a cursor in a Cheney queue) to about SCAN_PREFETCH_BYTES past
 * scan, prefetching the from-space objects that the slots it passes point
 * to; returns the new cursor.  A hint only: nothing is read but the queue. */
static inline char *prefetch_queue(const scavenger *s, char *pf, const char *scan, const char *top) {
  if (pf < scan) pf = (char *)scan;
  const char *goal = scan + SCAN_PREFETCH_BYTES < top ? scan + SCAN_PREFETCH_BYTES : top;
  while (pf < goal) {
    eph_header hdr = *(const eph_header *)(const void *)pf;
    if (((hdr >> EPH_HDR_FORMAT_SHIFT) & 0xF) != EPH_FORMAT_BYTES) {
      const eph_value *slot = (const eph_value *)(const void *)(pf + sizeof(eph_header));
      size_t n = (size_t)(hdr >> EPH_HDR_SIZE_SHIFT) / sizeof(eph_value);
      for (size_t i = 0; i < n; i++)
        if (in_from_space(s, slot[i])) {
          /* and the next line: a 40-byte object straddles two half the time */
          __builtin_prefetch((const void *)slot[i]);
          __builtin_prefetch((const void *)(slot[i] + 32));
        }
    }
    pf += sizeof(eph_header) + (((size_t)(hdr >> EPH_HDR_SIZE_SHIFT) + 7u) & ~(size_t)7u) + s->h->fast.trailer_bytes;
  }
  return pf;
}

/* Drains both Cheney queues; returns where the old-space scan stopped. */
static char *scan_to_completion(scavenger *s, char *old_scan) {
  eph_heap *h = s->h;
  char *young_scan = s->young_scan;
  char *young_pf = young_scan, *old_pf = old_scan;
  while (young_scan < h->future.top || old_scan < h->old_top) {
    while (young_scan < h->future.top) {
      young_pf = prefetch_queue(s, young_pf, young_scan, h->future.top);
      scan_young_object(s, (eph_value)young_scan);
      young_scan = ephh_next_object(h, young_scan);
    }
    while (old_scan < h->old_top) {
      old_pf = prefetch_queue(s, old_pf, old_scan, h->old_top);
      eph_value obj = (eph_value)old_scan;
      if (scan_object(s, obj) && !(*eph_header_of(obj) & EPH_HDR_REMEMBERED)) ephh_remset_add(h, obj);
      old_scan = ephh_next_object(h, old_scan);
    }
  }
  s->young_scan = young_scan;
  return old_scan;
}

/* An inert entry of the remembered set (remset.c), unread until now: it
 * is still an inert ephemeron unless a scan of its plain entry settled it
 * (then that scan cleared its flag).  Its key may have changed since it
 * was remembered: an old or immediate one leaves it holding nothing young
 * (a young value would have made it a plain entry). */
static inline bool settle_inert_entry(scavenger *s, eph_value e) {
  eph_heap *h = s->h;
  eph_header *hp = eph_header_of(e), hdr = *hp;
  if (!(hdr & EPH_HDR_REMEMBERED_INERT)) return false;
  hdr &= ~EPH_HDR_REMEMBERED_INERT;
  eph_value *key = (eph_value *)(e + sizeof(eph_header)) + EPH_EPHEMERON_KEY;
  if (in_from_space(s, *key) && !is_forwarded(*key)) {
    ephh_mourn_phantom(h, e, hdr);
    return true;
  }
  *hp = hdr;
  if (!in_from_space(s, *key)) return false;
  scavenge_slot(s, key);
  if (eph_is_young(h, *key)) ephh_remset_push(h, e, true); /* still inert, for the next scavenge */
  return false;
}

/* The inert deferred ephemerons at the fixpoint, in one pass: a key
 * reached by now gets its new address, the others are mourned (their key
 * slots become tombstones).  Nothing is copied: the others' mourning,
 * which traces keys and values, comes after, as in rule 2.  An old one
 * whose key lives on young goes back into the remembered set if the set's
 * scan took it out (its value is no young object, and it has no other
 * slot, or it stayed in the set; a promoted one was added by the scan of
 * the promoted).  The remembered set's inert entries come tagged.  Entries
 * are fetched 32 ahead and their keys 16: at 16 and 8 the key's load
 * stalled on its ephemeron's line (sph at 100 % in finalization mode,
 * 5 interleaved pairs: scavenges 1.67 -> 1.49 s). */
static void settle_inert(scavenger *s) {
  eph_heap *h = s->h;
  eph_value_vec *v = &h->deferred_inert;
  ephh_vec_reserve(h, &h->mourn, v->len); /* each is mourned at most once */
  uint64_t mourned = 0;
  for (size_t i = 0; i < v->len; i++) {
    if (i + 32 < v->len) __builtin_prefetch((const void *)(v->items[i + 32] & ~REMSET_INERT));
    if (i + 16 < v->len) __builtin_prefetch((const void *)eph_slot(v->items[i + 16] & ~REMSET_INERT, 0));
    eph_value e = v->items[i];
    if (e & REMSET_INERT) {
      mourned += settle_inert_entry(s, e & ~REMSET_INERT);
      continue;
    }
    eph_value *key = (eph_value *)(e + sizeof(eph_header)) + EPH_EPHEMERON_KEY;
    if (key_reached(s, *key)) {
      scavenge_slot(s, key);
      if (eph_is_young(h, *key) && !eph_is_young(h, e) && !(*eph_header_of(e) & EPH_HDR_REMEMBERED)) {
        ephh_remset_add(h, e);
        h->remset[h->remset_len - 1] |= REMSET_KEEP;
      }
    } else {
      ephh_mourn_phantom(h, e, *eph_header_of(e)); /* inert ones are phantoms with a young key */
      mourned++;
    }
  }
  ephh_count_mourned(h, mourned);
  v->len = 0;
}

/*
 * Settles the deferred ephemerons: values of those whose keys were reached
 * are scavenged (to a fixpoint); then all the others are mourned at once.
 * Both steps can reach new objects and defer new ephemerons, so loop.
 * Inert ones (phantoms whose value needs no copy: finalization mode's)
 * wait for the fixpoint and are settled in one pass, not two.
 *
 * When this scavenge is the first step of a full GC (tenure everything),
 * nothing is mourned here: the scavenge takes all old objects for live, so
 * it would mourn on behalf of dead old ephemerons.  Their keys and values
 * are promoted instead and the full GC's exact mark decides.
 */
static void settle_ephemerons(scavenger *s, char **old_scan) {
  eph_heap *h = s->h;
  eph_value_vec *d = &h->deferred;
  while (d->len || h->deferred_inert.len) {
    bool progress = false;
    size_t keep = 0;
    char *young_top = h->future.top, *old_top = h->old_top; /* the queues are empty here */
    for (size_t i = 0; i < d->len; i++) {
      PREFETCH_AHEAD(d->items, i, d->len);
      eph_value e = d->items[i];
      eph_value *slot = (eph_value *)(e + sizeof(eph_header));
      if (key_reached(s, slot[EPH_EPHEMERON_KEY])) {
        scavenge_slot(s, &slot[EPH_EPHEMERON_KEY]);
        scavenge_slot(s, &slot[EPH_EPHEMERON_VALUE]);
        progress = true;
      } else {
        d->items[keep++] = e;
      }
    }
    d->len = keep;
    /* If that pass copied nothing (the values it traced were immediates or
     * already copied), no remaining key can be reached any more: mourn now
     * rather than after one more pass over them all. */
    bool copied = h->future.top != young_top || h->old_top != old_top;
    if (!progress || !copied) {
      settle_inert(s);
      size_t n = d->len;
      for (size_t i = 0; i < n; i++) {
        PREFETCH_AHEAD(d->items, i, n);
        eph_value e = d->items[i];
        eph_value *slot = (eph_value *)(e + sizeof(eph_header));
        if (!s->full_gc_step) ephh_mourn(h, e);
        scavenge_slot(s, &slot[EPH_EPHEMERON_KEY]);
        scavenge_slot(s, &slot[EPH_EPHEMERON_VALUE]);
      }
      /* Anything deferred while copying those keys and values was appended. */
      if (d->len > n) memmove(d->items, d->items + n, (d->len - n) * sizeof *d->items);
      d->len -= n;
    }
    *old_scan = scan_to_completion(s, *old_scan);
  }
}

/*
 * Moves every live young object to `future` or old space and empties eden
 * and `past`.  With tenure_all (the first step of a full GC), everything
 * goes to old space and new space ends empty.
 */
void ephh_evacuate_young(eph_heap *h, bool tenure_all) {
  scavenger s = {
      .h = h,
      .from_lo = (uintptr_t)h->eden.start,
      .from_size = (uintptr_t)(h->fast.alloc_top - h->eden.start),
      .past_lo = (uintptr_t)h->past.start,
      .past_size = (uintptr_t)(h->past.top - h->past.start),
      .tenure_age = tenure_all ? 0 : (unsigned)h->params.tenure_age,
      .full_gc_step = tenure_all,
  };
  uint64_t eden_used = (uint64_t)(h->fast.alloc_top - h->eden.start);
  h->future.top = h->future.start;
  s.young_scan = h->future.start;
  char *old_scan = h->old_top;

  scan_roots(&s);
  scan_remembered_set(&s);
  old_scan = scan_to_completion(&s, old_scan);
  settle_ephemerons(&s, &old_scan);
  rebuild_remembered_set(h);

  /* Their forwarding headers stay readable until the mutator allocates:
   * eph_gc_fate uses them, in this scavenge or the full GC it belongs to. */
  h->evacuated[0] = (eph_space){h->eden.start, h->fast.alloc_top, h->eden.end};
  h->evacuated[1] = h->past;
  if (!tenure_all) {
    h->phase = PHASE_EVACUATED;
    if (h->has_observer && h->observer.on_collect) h->observer.on_collect(h->observer.data, h, EPH_GC_SCAVENGE);
    h->phase = PHASE_NONE;
  }

  /* Flip: future becomes past; eden and the old past are free again. */
  eph_space old_past = h->past;
  h->past = h->future;
  h->future = old_past;
  h->future.top = h->future.start;
  h->eden_retired += eden_used;
  if (h->eden_pair && !tenure_all) ephh_new_space_swap_eden(h); /* the evacuated eden stays as it is */
  h->fast.alloc_top = h->eden.start;
  ephh_clock_rebase(h);
  ephh_update_alloc_limit(h);

  h->current.bytes_copied += s.copied;
  h->current.bytes_promoted += s.promoted;
  h->current.objects_moved += s.objects;
  h->current.slots_scanned += s.slots;
  h->stats.ephemerons_traced += s.ephemerons;
}

void ephh_scavenge(eph_heap *h) {
  ephh_gc_begin(h, EPH_GC_SCAVENGE);
  ephh_evacuate_young(h, false);
  ephh_gc_end(h);
}
