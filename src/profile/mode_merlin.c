/*
 * mode_merlin.c — exact last-reachable times for every object: the Merlin
 * algorithm (Hertz et al., TOPLAS 2006, §6).
 *
 * Time is the application's allocation clock (bytes, trailers excluded),
 * advancing at each allocation.  Each object carries two trailer words:
 *   [0] birth time (48 bits) | site id (16 bits)
 *   [1] its timestamp: the latest time it is known to have been reachable
 * and gets a timestamp
 *   - at birth (the clock after its own allocation);
 *   - when a store overwrites a pointer to it (the write barrier, on_store);
 *   - when it leaves a root: roots are checked at every allocation, and a
 *     slot whose value changed since the last check stamps the old value
 *     with the time of that check — the same stamps as Merlin's root scan
 *     at every allocation, at the cost of one compare per root slot.
 * After each collection, before any dead object's memory is reused, the
 * dead objects are processed latest-timestamp-first with a depth-first
 * propagation: a dead source with a later stamp than a target it points to
 * gives the target its stamp; dead targets so updated are pushed.  (Targets
 * that survive a scavenge receive the stamp too — old objects, and young
 * ones kept only by old garbage through the remembered set: the scavenge
 * cannot tell them from live ones; harmless if alive, needed if they die
 * later.)  The result is
 * each object's last-reachable time, recorded as an EXACT death.
 *
 * Ephemerons are not modelled: Merlin's reachability is strong reachability.
 * Checked against brute force (a full GC before every allocation) object by
 * object in tests/merlin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profiler.h"

static inline uint64_t birth_of(eph_value o) { return eph_trailer(o)[0] & BIRTH_MASK; }
static inline uint64_t stamp_of(eph_value o) { return eph_trailer(o)[1]; }
static inline void stamp_max(eph_value o, uint64_t t) {
  uint64_t *w = &eph_trailer(o)[1];
  if (*w < t) *w = t;
}

static void trace(eph_profiler *p, eph_event_kind kind, uint64_t time, uint64_t obj, uint64_t a, uint64_t b,
                  uint64_t c) {
  if (!p->spec.trace) return;
  eph_event ev = {.kind = (uint8_t)kind, .time = time, .obj = obj, .a = a, .b = b, .c = c};
  prof_write_error(p, eph_writer_event(p->out, &ev));
}

static uint64_t id_of(eph_value v) { return eph_is_ptr(v) ? birth_of(v) : 0; }

eph_status merlin_mode_start(eph_profiler *p, eph_error *err) {
  if (eph__fast(p->h)->trailer_bytes != 2 * sizeof(uint64_t)) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "mode=merlin needs a heap created for it (two trailer words per object): start it with "
                   "EPHEMERA_PROFILE or `ephemera run`, or call eph_profile_prepare_params before eph_heap_new");
    return EPH_ERR_INVALID;
  }
  return EPH_OK; /* profiler.c took the first clock point */
}

static inline void left_root(eph_profiler *p, eph_value was) {
  if (!eph_is_ptr(was)) return;
  stamp_max(was, p->last_check);
  trace(p, EPH_EV_ROOT, p->last_check, birth_of(was), 0, 0, 0);
}

/* Stamps every value that left a root slot since the last check with the
 * time of that check, and remembers the slots' values now.  Runs at every
 * allocation: the common case, nothing changed but a few slots near the
 * top of the shadow stack, is a load and a compare per slot. */
static void check_roots(eph_profiler *p, uint64_t now) {
  eph_value **shadow, **globals;
  size_t nglobals, nshadow = eph_heap_root_slots(p->h, &shadow, &globals, &nglobals), n = nshadow + nglobals;
  p->seen = prof_grow(p, p->seen, &p->seen_cap, n, sizeof *p->seen);
  eph_value *seen = p->seen;
  size_t old_len = p->seen_len;
  /* slots that existed at the last check: compare */
  size_t both = nshadow < old_len ? nshadow : old_len;
  for (size_t i = 0; i < both; i++) {
    eph_value v = *shadow[i];
    if (EPH_UNLIKELY(v != seen[i])) {
      left_root(p, seen[i]);
      seen[i] = v;
    }
  }
  /* the rest (new stack slots, the globals after the stack): the same,
   * slot by slot, with nil where there was no slot */
  for (size_t i = both; i < n; i++) {
    eph_value v = i < nshadow ? *shadow[i] : *globals[i - nshadow];
    eph_value was = i < old_len ? seen[i] : EPH_NIL;
    if (v != was) left_root(p, was);
    seen[i] = v;
  }
  for (size_t i = n; i < old_len; i++) left_root(p, seen[i]); /* slots that are gone */
  p->seen_len = n;
  p->last_check = now;
}

void merlin_on_alloc(eph_profiler *p, eph_value obj) {
  uint64_t t = prof_clock(p);
  uint32_t site = prof_site_id(p, eph_heap_site(p->h));
  if (site > SITE_MAX) site = 0; /* beyond 16 bits: unknown */
  uint32_t cls = prof_class_id(p, eph_class_of(obj));
  uint64_t *tr = eph_trailer(obj);
  tr[0] = t | (uint64_t)site << BIRTH_BITS;
  tr[1] = t;
  p->stats.samples++;
  trace(p, EPH_EV_ALLOC, t, t, cls, eph_object_bytes(obj), site | (uint64_t)eph_format_of(obj) << 32);
  check_roots(p, t);
  clocks_tick(p, t);
}

void merlin_on_store(eph_profiler *p, eph_value obj, size_t i, eph_value old, eph_value new_value) {
  uint64_t now = prof_clock(p);
  if (eph_is_ptr(old)) stamp_max(old, now);
  trace(p, EPH_EV_STORE, now, birth_of(obj), i, id_of(old), id_of(new_value));
}

void merlin_on_gc_start(eph_profiler *p) { check_roots(p, prof_clock(p)); }

void merlin_note_gc(eph_profiler *p, eph_gc_kind kind) {
  uint64_t now = prof_clock(p);
  clocks_note_gc(p, kind, now);
  trace(p, EPH_EV_GC, now, 0, kind, 1, 0);
}

static void write_record(eph_profiler *p, eph_value obj, uint64_t death, eph_death_kind kind) {
  uint64_t birth = birth_of(obj);
  if (!birth) return; /* allocated before the profiler started */
  eph_record r = {
      .id = birth,
      .class_id = prof_class_id(p, eph_class_of(obj)),
      .site_id = (uint32_t)(eph_trailer(obj)[0] >> BIRTH_BITS),
      .size = eph_object_bytes(obj),
      .weight = 1.0,
      .birth = clocks_stamp_at(p, birth),
      .death = clocks_stamp_at(p, death),
      .death_kind = (uint8_t)kind,
  };
  r.alive_until = r.death;
  prof_write_error(p, eph_writer_record(p->out, &r));
  if (kind == EPH_DEATH_CENSORED) p->stats.censored++;
  else p->stats.deaths++;
  if (kind != EPH_DEATH_CENSORED) trace(p, EPH_EV_DEATH, death, birth, 0, 0, 0);
}

static void collect_dead(void *data, eph_value obj) {
  eph_profiler *p = data;
  p->dead = prof_grow(p, p->dead, &p->dead_cap, p->ndead + 1, sizeof *p->dead);
  p->dead[p->ndead++] = (struct dead){obj, stamp_of(obj)};
}

/* LSD radix sort of the dead by stamp (48-bit clock): O(n), stable. */
static void sort_dead(eph_profiler *p) {
  p->dead_tmp = prof_grow(p, p->dead_tmp, &p->dead_tmp_cap, p->ndead, sizeof *p->dead_tmp);
  struct dead *src = p->dead, *dst = p->dead_tmp;
  /* Only the bits that vary within this collection's dead set. */
  uint64_t min = UINT64_MAX, all = 0;
  for (size_t i = 0; i < p->ndead; i++) min = src[i].stamp < min ? src[i].stamp : min;
  for (size_t i = 0; i < p->ndead; i++) all |= src[i].stamp - min;
  for (int shift = 0; shift < 64 && (all >> shift); shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < p->ndead; i++) count[(((src[i].stamp - min) >> shift) & 0xFF) + 1]++;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (size_t i = 0; i < p->ndead; i++) dst[count[((src[i].stamp - min) >> shift) & 0xFF]++] = src[i];
    struct dead *t = src;
    src = dst;
    dst = t;
  }
  if (src != p->dead) memcpy(p->dead, src, p->ndead * sizeof *p->dead);
}

/* Merlin's backward pass (the paper's Figure 8). */
static void propagate(eph_profiler *p, eph_gc_kind kind) {
  eph_heap *h = p->h;
  sort_dead(p);
  p->stack = prof_grow(p, p->stack, &p->stack_cap, p->ndead, sizeof *p->stack);
  size_t top = 0;
  for (size_t i = 0; i < p->ndead; i++) p->stack[top++] = p->dead[i].obj; /* latest on top */
  while (top) {
    eph_value s = p->stack[--top];
    if (eph_format_of(s) == EPH_FORMAT_BYTES) continue;
    uint64_t ts = stamp_of(s);
    size_t n = eph_size_bytes(s) / sizeof(eph_value);
    for (size_t i = 0; i < n; i++) {
      eph_value t = eph_slot(s, i);
      if (!eph_is_ptr(t)) continue;
      if (eph_gc_fate(h, t) == EPH_NIL) {
        /* A full GC's evacuation may have promoted t before the mark found
         * it dead: its bytes (and trailer) are then at the copy. */
        t = eph_gc_locate(h, t);
        if (stamp_of(t) < ts) {
          eph_trailer(t)[1] = ts;
          p->stack = prof_grow(p, p->stack, &p->stack_cap, top + 1, sizeof *p->stack);
          p->stack[top++] = t;
        }
      } else if (kind == EPH_GC_SCAVENGE) {
        /* A scavenge does not know whether old objects, or young ones kept
         * by old garbage in the remembered set (nepotism), really live:
         * give them the stamp where they are now — harmless if they do. */
        stamp_max(eph_gc_locate(h, t), ts);
      }
    }
  }
}

void merlin_on_collect(eph_profiler *p, eph_gc_kind kind) {
  /* A clock sample now, so that every time written below lies within the
   * samples and gets the same interpolated wall time whenever it is written. */
  uint64_t now = prof_clock(p);
  if (!p->nclock_points || now > p->clock_points[p->nclock_points - 1].bytes) clocks_point(p, now);
  for (size_t i = 0; i < p->seen_len; i++)
    if (eph_is_ptr(p->seen[i])) p->seen[i] = eph_gc_fate(p->h, p->seen[i]);
  p->ndead = 0;
  eph_gc_each_dead(p->h, collect_dead, p);
  propagate(p, kind);
  for (size_t i = 0; i < p->ndead; i++) write_record(p, p->dead[i].obj, stamp_of(p->dead[i].obj), EPH_DEATH_EXACT);
}

static void censor(void *data, eph_value obj) {
  eph_profiler *p = data;
  write_record(p, obj, prof_clock(p), EPH_DEATH_CENSORED);
}

/* After the last full GC (eph_profile_stop): what is left is reachable. */
void merlin_mode_stop(eph_profiler *p) {
  uint64_t end = prof_clock(p);
  if (end >= p->next_clock_point || p->nclock_points < 2) clocks_point(p, end);
  if (p->spec.trace)
    for (size_t i = 0; i < p->seen_len; i++)
      if (eph_is_ptr(p->seen[i])) trace(p, EPH_EV_ROOT, end, birth_of(p->seen[i]), 1, 0, 0);
  eph_heap_each_object(p->h, censor, p);
}
