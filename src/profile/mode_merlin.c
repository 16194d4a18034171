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
 *   - when a store overwrites a pointer to it (the write barrier: the
 *     heap's stamping barrier, observer.store_clock, or on_store when
 *     tracing);
 *   - when it leaves a root: roots are checked at every allocation, and a
 *     slot whose value changed since the last check stamps the old value
 *     with the time of that check — the same stamps as Merlin's root scan
 *     at every allocation, at the cost of one compare per root slot.
 * After each collection, before any dead object's memory is reused, the
 * dead objects that hold a pointer pass their stamps on: a dead source
 * with a later stamp than a target it points to gives the target its
 * stamp, and the target passes it on in turn.  The paper takes the sources
 * latest stamp first, depth first; any order gives the same stamps, and
 * this file's is one sweep, newest address first (see propagate).
 * (Targets that survive a scavenge receive the stamp too — old
 * objects, and young ones kept only by old garbage through the remembered
 * set: the scavenge cannot tell them from live ones; harmless if alive,
 * needed if they die later.)  The result is each object's last-reachable
 * time, recorded as an EXACT death by a second walk over the dead, in
 * address order.
 *
 * Ephemerons are not modelled: Merlin's reachability is strong reachability.
 * Checked against brute force (a full GC before every allocation) object by
 * object in tests/merlin, tests/profile/test_merlin_order.c and the heap
 * fuzzer's --merlin-check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profiler.h"

/* Set in a dead source's stamp word once the backward pass's sweep has
 * passed it (propagate); stamps are 48-bit clocks. */
#define VISITED (UINT64_C(1) << 63)

static inline uint64_t birth_of(eph_value o) { return eph_trailer(o)[0] & BIRTH_MASK; }
static inline uint64_t stamp_of(eph_value o) { return eph_trailer(o)[1] & ~VISITED; }
static inline void stamp_max(eph_value o, uint64_t t) {
  uint64_t *w = &eph_trailer(o)[1];
  if (*w < t) *w = t;
}

/* Callers on the allocation path test p->spec.trace first: the arguments
 * (ids read from trailers) cost more than the test when tracing is off. */
static void trace(eph_profiler *p, eph_event_kind kind, uint64_t time, uint64_t obj, uint64_t a, uint64_t b,
                  uint64_t c) {
  if (!p->spec.trace) return;
  eph_event ev = {.kind = (uint8_t)kind, .time = time, .obj = obj, .a = a, .b = b, .c = c};
  prof_write_error(p, eph_writer_event(p->out, &ev));
}

static uint64_t id_of(eph_value v) { return eph_is_ptr(v) ? birth_of(v) : 0; }

static inline void left_root(eph_profiler *p, eph_value was) {
  if (!eph_is_ptr(was)) return;
  stamp_max(was, p->merlin.last_check);
  if (EPH_UNLIKELY(p->spec.trace)) trace(p, EPH_EV_ROOT, p->merlin.last_check, birth_of(was), 0, 0, 0);
}

/* A root slot's new value, for a simulator that needs the scavenger's root
 * order (ROOT a = 2; b = the slot's index, c = 0 in the shadow stack, 1
 * among the globals; obj = 0 when the slot holds no object or is gone).
 * `when` is the clock of the allocation that follows (docs/traces.md). */
static inline void root_slot(eph_profiler *p, uint64_t when, size_t index, unsigned global, eph_value v) {
  if (EPH_UNLIKELY(p->spec.trace)) trace(p, EPH_EV_ROOT, when, id_of(v), 2, index, global);
}

/* Compares n root slots with the values they held at the last check. */
static inline void compare_slots(eph_profiler *p, eph_value **slots, eph_value *seen, size_t n, uint64_t when,
                                 unsigned global) {
  for (size_t i = 0; i < n; i++) {
    eph_value v = *slots[i];
    if (EPH_UNLIKELY(v != seen[i])) {
      left_root(p, seen[i]);
      seen[i] = v;
      root_slot(p, when, i, global, v);
    }
  }
}

/* The global roots were added or removed: every value the root slots held
 * at the last check was reachable then, so stamping them all with that
 * time is right, and the slots are read afresh. */
static void roots_regrouped(eph_profiler *p, size_t nglobals, uint64_t when) {
  for (size_t i = 0; i < p->merlin.seen_len; i++) left_root(p, p->merlin.seen[i]);
  for (size_t i = nglobals; i < p->merlin.seen_globals; i++) root_slot(p, when, i, 1, 0); /* globals that are gone */
  p->merlin.seen_len = 0;
  p->merlin.seen_globals = nglobals;
}

/* check_roots when the number of slots changed: globals were added or
 * removed, or the shadow stack grew or shrank. */
__attribute__((noinline)) static void check_reshaped_roots(eph_profiler *p, uint64_t now, uint64_t when,
                                                          eph_value **shadow, size_t nshadow, eph_value **globals,
                                                          size_t nglobals) {
  if (nglobals != p->merlin.seen_globals) roots_regrouped(p, nglobals, when);
  size_t n = nglobals + nshadow, old_len = p->merlin.seen_len;
  p->merlin.seen = prof_grow(p, p->merlin.seen, &p->merlin.seen_cap, n, sizeof *p->merlin.seen);
  eph_value *seen = p->merlin.seen;
  if (EPH_UNLIKELY(old_len < nglobals)) { /* first check after a regrouping: nothing to compare */
    for (size_t i = 0; i < nglobals; i++) {
      seen[i] = *globals[i];
      root_slot(p, when, i, 1, seen[i]);
    }
    old_len = nglobals;
  } else {
    compare_slots(p, globals, seen, nglobals, when, 1);
  }
  size_t old_shadow = old_len - nglobals, both = nshadow < old_shadow ? nshadow : old_shadow;
  compare_slots(p, shadow, seen + nglobals, both, when, 0);
  for (size_t i = both; i < nshadow; i++) { /* new slots */
    seen[nglobals + i] = *shadow[i];
    root_slot(p, when, i, 0, seen[nglobals + i]);
  }
  for (size_t i = nshadow; i < old_shadow; i++) { /* slots that are gone */
    left_root(p, seen[nglobals + i]);
    root_slot(p, when, i, 0, 0);
  }
  p->merlin.seen_len = n;
  p->merlin.last_check = now;
}

/* Stamps every value that left a root slot since the last check with the
 * time of that check, and remembers the slots' values now.  Runs at every
 * allocation: the common case, as many slots as last time and nothing
 * changed but a few near the top of the shadow stack, is a load and a
 * compare per slot.  seen[] holds the globals first (their number rarely
 * changes), then the stack.  `when` stamps the slots' new values (ROOT
 * a = 2): the allocation's own clock, or the last one's plus one at a
 * collection's start, so that they apply to collections from the next
 * allocation on. */
static inline void check_roots(eph_profiler *p, uint64_t now, uint64_t when) {
  eph_value **shadow, **globals;
  size_t nglobals, nshadow = eph_heap_root_slots(p->h, &shadow, &globals, &nglobals);
  if (EPH_UNLIKELY(nglobals != p->merlin.seen_globals || nglobals + nshadow != p->merlin.seen_len)) {
    check_reshaped_roots(p, now, when, shadow, nshadow, globals, nglobals);
    return;
  }
  compare_slots(p, globals, p->merlin.seen, nglobals, when, 1);
  compare_slots(p, shadow, p->merlin.seen + nglobals, nshadow, when, 0);
  p->merlin.last_check = now;
}

/* Bit 40 of an ALLOC event's c: the program asked for this object in old
 * space (eph_alloc_old) though it is not large, so a simulator replaying
 * the trace puts it there too (docs/traces.md). */
static inline uint64_t pretenured_bit(eph_heap *h, eph_value obj) {
  return !eph_is_young(h, obj) && eph_size_bytes(obj) < eph_heap_large_object_bytes(h) ? UINT64_C(1) << 40 : 0;
}

/* Slot i changed since the last check (untraced). */
static inline void compare_slot_quietly(eph_value **slots, eph_value *seen, size_t i, uint64_t last_check) {
  eph_value v = *slots[i];
  if (EPH_UNLIKELY(v != seen[i])) {
    if (eph_is_ptr(seen[i])) stamp_max(seen[i], last_check);
    seen[i] = v;
  }
}

/* compare_slots without trace events, the check's time in a register:
 * what runs at every allocation of an untraced profile. */
static inline void compare_slots_quietly(eph_value **slots, eph_value *seen, size_t n, uint64_t last_check) {
  for (size_t i = 0; i < n; i++) compare_slot_quietly(slots, seen, i, last_check);
}

#define TOP_SLOTS 8 /* the slots at the top of the shadow stack, compared one at a time */

/* The same for a deep stack whose height changed (a call or a return, as
 * in binarytrees' recursion at every allocation): the slots that change
 * are the running function's, at the top; below TOP_SLOTS from the top,
 * four slots are told unchanged with one branch, their differences or-ed.
 * (Where the height stays, as on lambda, the top is most of the stack and
 * the groups only cost.) */
static inline void compare_deep_slots_quietly(eph_value **slots, eph_value *seen, size_t n, uint64_t last_check) {
  size_t i = 0;
  for (; i + 4 + TOP_SLOTS <= n; i += 4) {
    eph_value d = (*slots[i] ^ seen[i]) | (*slots[i + 1] ^ seen[i + 1]) | (*slots[i + 2] ^ seen[i + 2]) |
                  (*slots[i + 3] ^ seen[i + 3]);
    if (EPH_LIKELY(d == 0)) continue;
    for (size_t k = i; k < i + 4; k++) compare_slot_quietly(slots, seen, k, last_check);
  }
  for (; i < n; i++) compare_slot_quietly(slots, seen, i, last_check);
}

/* check_reshaped_roots without trace events, when only the shadow stack's
 * height changed (the common case: a call or a return between two
 * allocations); anything else takes the general path. */
static void check_reshaped_quietly(eph_profiler *p, uint64_t now, eph_value **shadow, size_t nshadow,
                                   eph_value **globals, size_t nglobals) {
  if (EPH_UNLIKELY(nglobals != p->merlin.seen_globals || p->merlin.seen_len < nglobals)) {
    check_reshaped_roots(p, now, now, shadow, nshadow, globals, nglobals);
    return;
  }
  size_t n = nglobals + nshadow, old_shadow = p->merlin.seen_len - nglobals;
  size_t both = nshadow < old_shadow ? nshadow : old_shadow;
  eph_value *seen = p->merlin.seen = prof_grow(p, p->merlin.seen, &p->merlin.seen_cap, n, sizeof *p->merlin.seen);
  uint64_t last = p->merlin.last_check;
  compare_slots_quietly(globals, seen, nglobals, last);
  compare_deep_slots_quietly(shadow, seen + nglobals, both, last);
  for (size_t i = both; i < nshadow; i++) seen[nglobals + i] = *shadow[i]; /* new slots */
  for (size_t i = nshadow; i < old_shadow; i++) /* slots that are gone */
    if (eph_is_ptr(seen[nglobals + i])) stamp_max(seen[nglobals + i], last);
  p->merlin.seen_len = n;
  p->merlin.last_check = now;
}

static void on_alloc_traced(eph_profiler *p, eph_heap *h, eph_value obj);

/* Checked builds: the clock kept here is the heap's. */
static inline void check_clock(eph_profiler *p, uint64_t t) {
#ifdef EPH_CHECKED
  if (t != prof_clock(p)) {
    fprintf(stderr, "ephemera: merlin: clock %llu, heap says %llu\n", (unsigned long long)t,
            (unsigned long long)prof_clock(p));
    abort();
  }
#else
  (void)p, (void)t;
#endif
}

/* obj's trailer at its birth, at clock t: birth and site, and its first stamp. */
static inline void born(eph_profiler *p, eph_value obj, uint64_t t) {
  check_clock(p, t);
  uint64_t *tr = eph_trailer(obj);
  tr[0] = prof_birth_at(p, t);
  tr[1] = t;
}

/* The application clock advances only at allocations, and in this mode
 * every allocation comes here (the profiler allocates nothing): the clock
 * is the last check's plus this object's bytes, without asking the heap.
 * The untraced path is check_roots with nothing to trace, inline. */
static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  eph_profiler *p = data;
  if (EPH_UNLIKELY(p->spec.trace)) {
    on_alloc_traced(p, h, obj);
    return;
  }
  uint64_t last = p->merlin.last_check, t = last + eph_object_bytes(obj);
  born(p, obj, t);
  eph_value **shadow, **globals;
  size_t nglobals, nshadow = eph_heap_root_slots(h, &shadow, &globals, &nglobals);
  if (EPH_UNLIKELY(nglobals != p->merlin.seen_globals || nglobals + nshadow != p->merlin.seen_len)) {
    check_reshaped_quietly(p, t, shadow, nshadow, globals, nglobals);
  } else {
    compare_slots_quietly(globals, p->merlin.seen, nglobals, last);
    compare_slots_quietly(shadow, p->merlin.seen + nglobals, nshadow, last);
    p->merlin.last_check = t;
  }
  prof_clocks_tick(p, t);
}

/* on_alloc with trace events (ALLOC, ROOT). */
static void on_alloc_traced(eph_profiler *p, eph_heap *h, eph_value obj) {
  uint64_t t = p->merlin.last_check + eph_object_bytes(obj);
  born(p, obj, t);
  trace(p, EPH_EV_ALLOC, t, t, prof_class_id(p, eph_class_of(obj)), eph_object_bytes(obj),
        (eph_trailer(obj)[0] >> BIRTH_BITS) | (uint64_t)eph_format_of(obj) << 32 | pretenured_bit(h, obj));
  check_roots(p, t, t);
  prof_clocks_tick(p, t);
}

/* The write barrier (observer.on_store) of a traced profile; untraced, the
 * heap's own stamping barrier (observer.store_clock, set to &last_check)
 * does the same without a call.  Stores do not move the clock: now is the
 * last allocation's time, that of the last root check. */
static void on_store(void *data, eph_heap *h, eph_value obj, size_t i, eph_value old, eph_value new_value) {
  (void)h;
  eph_profiler *p = data;
  if (eph_is_ptr(old)) stamp_max(old, p->merlin.last_check);
  if (p->spec.trace) trace(p, EPH_EV_STORE, p->merlin.last_check, birth_of(obj), i, id_of(old), id_of(new_value));
}

static void on_gc_start(eph_profiler *p) { check_roots(p, p->merlin.last_check, p->merlin.last_check + 1); }

static void note_gc(eph_profiler *p, eph_gc_kind kind) {
  uint64_t now = prof_clock(p);
  prof_clocks_note_gc(p, kind, now);
  trace(p, EPH_EV_GC, now, 0, kind, 1, 0);
}

/* Whether obj was allocated since the profiler started (has a birth): an
 * object from before has no record, and its class need not be declared. */
static inline bool has_birth(eph_value obj) { return eph_trailer(obj)[0] & BIRTH_MASK; }

/* obj's record, dying at `death`; false for an object without a birth. */
static inline bool record_of(eph_profiler *p, eph_value obj, uint64_t death, eph_clocked_record *r) {
  uint64_t word = eph_trailer(obj)[0];
  if (!(word & BIRTH_MASK)) return false;
  *r = (eph_clocked_record){.class_id = prof_class_id(p, eph_class_of(obj)),
                            .site_id = (uint32_t)(word >> BIRTH_BITS),
                            .size = eph_object_bytes(obj),
                            .birth = word & BIRTH_MASK,
                            .death = death};
  return true;
}

static void write_record(eph_profiler *p, eph_value obj, uint64_t death, eph_death_kind kind) {
  eph_clocked_record r;
  if (!record_of(p, obj, death, &r)) return;
  eph_status st;
  if (p->clocks_in_writer) { /* stamped by the writer, on its thread (prof_clocks_start) */
    st = eph_writer_record_clocked(p->out, r.class_id, r.site_id, r.size, r.birth, death, kind);
  } else { /* at the stop (eph_profile_stop) */
    eph_stamp b = prof_clocks_stamp_at(p, r.birth);
    eph_stamp d = death == r.birth ? b : prof_clocks_stamp_with(p, death, 1); /* own cache entry */
    st = eph_writer_record_to_death(p->out, r.class_id, r.site_id, r.size, 1.0, &b, &d, kind);
  }
  if (EPH_UNLIKELY(st != EPH_OK)) prof_write_error(p, st);
  if (kind == EPH_DEATH_CENSORED) {
    p->stats.censored++;
  } else {
    p->stats.deaths++;
    if (p->spec.trace) trace(p, EPH_EV_DEATH, death, r.birth, 0, 0, 0);
  }
}

/* A dead object's stamp can pass on only through a pointer it holds (to a
 * dead target, or to a survivor of a scavenge); dead objects without one
 * need no place in the backward pass, only their record. */
static bool holds_pointer(eph_value obj) {
  if (eph_format_of(obj) == EPH_FORMAT_BYTES) return false;
  size_t n = eph_size_bytes(obj) / sizeof(eph_value);
  for (size_t i = 0; i < n; i++)
    if (eph_is_ptr(eph_slot(obj, i))) return true;
  return false;
}

static void collect_source(void *data, eph_value obj) {
  eph_profiler *p = data;
  if (!holds_pointer(obj)) return;
  p->merlin.dead = prof_grow(p, p->merlin.dead, &p->merlin.dead_cap, p->merlin.ndead + 1, sizeof *p->merlin.dead);
  p->merlin.dead[p->merlin.ndead++] = obj;
}

/* LSD radix sort of the sources left (p->merlin.resort) by stamp (48-bit
 * clock): O(n), stable. */
static void sort_resort(eph_profiler *p) {
  size_t n = p->merlin.nresort;
  p->merlin.resort_tmp = prof_grow(p, p->merlin.resort_tmp, &p->merlin.resort_tmp_cap, n, sizeof *p->merlin.resort_tmp);
  struct dead *src = p->merlin.resort, *dst = p->merlin.resort_tmp;
  /* Only the bits that vary within this collection's dead set. */
  uint64_t min = UINT64_MAX, all = 0;
  for (size_t i = 0; i < n; i++) min = src[i].stamp < min ? src[i].stamp : min;
  for (size_t i = 0; i < n; i++) all |= src[i].stamp - min;
  /* 11-bit digits from the lowest bit that varies (stamps are byte clocks,
   * mostly multiples of 8): a scavenge's stamps span eden, two passes. */
  for (int shift = all ? __builtin_ctzll(all) : 0; shift < 64 && (all >> shift); shift += 11) {
    size_t count[2049] = {0};
    for (size_t i = 0; i < n; i++) count[(((src[i].stamp - min) >> shift) & 0x7FF) + 1]++;
    for (int b = 0; b < 2048; b++) count[b + 1] += count[b];
    for (size_t i = 0; i < n; i++) dst[count[((src[i].stamp - min) >> shift) & 0x7FF]++] = src[i];
    struct dead *t = src;
    src = dst;
    dst = t;
  }
  if (src != p->merlin.resort) memcpy(p->merlin.resort, src, n * sizeof *p->merlin.resort);
}

/* Passes stamp ts of source s on to the targets of its pointer slots.  A
 * dead target it raises is pushed only if the sweep has passed it already
 * (VISITED): one it has not reached yet passes on its stamp, raised or
 * not, when the sweep gets there. */
static size_t pass_on(eph_profiler *p, const eph_gc_view *view, eph_value s, uint64_t ts, eph_gc_kind kind, size_t top) {
  size_t n = eph_size_bytes(s) / sizeof(eph_value);
  for (size_t i = 0; i < n; i++) {
    eph_value t = eph_slot(s, i);
    if (!eph_is_ptr(t)) continue;
    bool dead;
    /* Where t is now: a full GC's evacuation may have promoted it before
     * the mark found it dead; its bytes (and trailer) are then at the copy. */
    t = eph_gc_view_where(view, t, &dead);
    if (dead) {
      uint64_t *w = &eph_trailer(t)[1], was = *w;
      if ((was & ~VISITED) < ts) {
        *w = ts | (was & VISITED);
        if (!(was & VISITED) || eph_format_of(t) == EPH_FORMAT_BYTES) continue;
        p->merlin.stack = prof_grow(p, p->merlin.stack, &p->merlin.stack_cap, top + 1, sizeof *p->merlin.stack);
        p->merlin.stack[top++] = t;
      }
    } else if (kind == EPH_GC_SCAVENGE) {
      /* A scavenge does not know whether old objects, or young ones kept
       * by old garbage in the remembered set (nepotism), really live:
       * give them the stamp where they are now — harmless if they do. */
      stamp_max(t, ts);
    }
  }
  return top;
}

/* Passes on the stamps of the objects pushed, and of whatever that raises
 * among the visited; returns how many it passed on from. */
static size_t search(eph_profiler *p, const eph_gc_view *view, eph_gc_kind kind, size_t top) {
  size_t searched = 0;
  while (top) {
    eph_value s = p->merlin.stack[--top];
    top = pass_on(p, view, s, stamp_of(s), kind, top);
    searched++;
  }
  return searched;
}

/* Sources between a prefetch and its use, and between prefetching their
 * targets and their use.  (The targets' header and stamp loads were half
 * of pass_on's time on lambda with 16 and 8; with 32 and 16, lambda n=8's
 * GC time 0.93-0.94 of that, binarytrees and boids unchanged; 64 and 32
 * gained nothing more.) */
#define PREFETCH_AHEAD 32
#define TARGETS_AHEAD 16

/* The targets of source s, whose header and slots a prefetch brought in
 * PREFETCH_AHEAD - TARGETS_AHEAD sources ago: pass_on reads and may raise
 * each target's stamp, and young garbage is scattered over eden. */
static inline void prefetch_targets(eph_value s) {
  size_t n = eph_size_bytes(s) / sizeof(eph_value);
  for (size_t k = 0; k < n; k++) {
    eph_value t = eph_slot(s, k);
    if (eph_is_ptr(t)) {
      __builtin_prefetch((const void *)t, 1);
      __builtin_prefetch((const void *)(t + 40), 1); /* the stamp of a small object, often the next line */
    }
  }
}

/* Prefetches for source i of a sweep down the sources. */
static inline void prefetch_sources(const eph_profiler *p, size_t i) {
  if (i >= PREFETCH_AHEAD) __builtin_prefetch((const void *)p->merlin.dead[i - PREFETCH_AHEAD]);
  if (i >= TARGETS_AHEAD) prefetch_targets(p->merlin.dead[i - TARGETS_AHEAD]);
}

/*
 * Merlin's backward pass (the paper's Figure 8) computes, for each dead
 * object, the latest stamp of the dead objects that reach it (itself
 * included).  Any order of sources gives that, as long as every object
 * passes its stamp on after its last raise; the order decides only how
 * often an object is raised.  The paper's, latest stamp first, raises
 * each at most once, but needs the sources sorted, and then visits them,
 * and their targets, in no order memory likes.
 *
 * Here one sweep goes down the sources, newest address first, and passes
 * each one's stamp on when it gets there, raised or not.  Young garbage
 * points mostly from newer objects to older ones, at lower addresses: a
 * target raised before the sweep reaches it needs nothing more, and the
 * sweep reads the sources in order while the targets' stamps are
 * prefetched.  Only a raise behind the sweep (a pointer to a newer
 * object) is searched from at once, depth first.  Should that search more
 * than four times as many objects as there are sources (stamps rising
 * against the pointers, say a long chain whose newest end died last), the
 * sources left go in the paper's order, each visited before it starts.
 */
static void propagate(eph_profiler *p, const eph_gc_view *view, eph_gc_kind kind) {
  size_t budget = 4 * p->merlin.ndead + 1024, searched = 0, i = p->merlin.ndead;
  while (i-- > 0) {
    prefetch_sources(p, i);
    eph_value s = p->merlin.dead[i];
    uint64_t *w = &eph_trailer(s)[1], ts = *w;
    *w = ts | VISITED;
    searched += 1 + search(p, view, kind, pass_on(p, view, s, ts, kind, 0));
    if (EPH_UNLIKELY(searched > budget)) break;
  }
  if (i == SIZE_MAX) return;
  p->stats.merlin_resorts++;
  p->merlin.nresort = i; /* sources [0, i) are left */
  p->merlin.resort = prof_grow(p, p->merlin.resort, &p->merlin.resort_cap, i, sizeof *p->merlin.resort);
  for (size_t k = 0; k < i; k++) { /* visited from here on: each raise is searched from at once */
    uint64_t *w = &eph_trailer(p->merlin.dead[k])[1];
    p->merlin.resort[k] = (struct dead){p->merlin.dead[k], *w};
    *w |= VISITED;
  }
  sort_resort(p);
  for (i = p->merlin.nresort; i-- > 0;) {
    if (i >= PREFETCH_AHEAD) __builtin_prefetch((const void *)p->merlin.resort[i - PREFETCH_AHEAD].obj);
    eph_value s = p->merlin.resort[i].obj;
    if (stamp_of(s) != p->merlin.resort[i].stamp) continue; /* raised since the sort: searched from then */
    search(p, view, kind, pass_on(p, view, s, p->merlin.resort[i].stamp, kind, 0));
  }
}

/* Places for the stop's records (stop_records.c), a block's room at a time. */
typedef struct stop_filler {
  eph_profiler *p;
  eph_death_kind kind;
  eph_clocked_record *r; /* the room, of which `used` are filled */
  size_t room, used;
} stop_filler;

static inline eph_clocked_record *stop_place(stop_filler *f) {
  if (EPH_UNLIKELY(f->used == f->room)) {
    if (f->used) prof_stop_records_filled(f->p, f->kind, f->used);
    f->r = prof_stop_records_room(f->p, f->kind, &f->room);
    f->used = 0;
  }
  return &f->r[f->used++];
}

static void stop_filled(stop_filler *f) {
  if (f->used) prof_stop_records_filled(f->p, f->kind, f->used);
  f->used = f->room = 0;
}

static void write_dead(void *data, eph_value obj) {
  eph_profiler *p = data;
  write_record(p, obj, stamp_of(obj), EPH_DEATH_EXACT);
}

/* The records of a collection's dead when the writer stamps them and
 * nothing is traced: filled in place in the writer's queue, a batch's
 * room at a time (copying them into the queue took about 9 % of boids'
 * program thread).  Declaring a class waits on the queue, so
 * what is filled is handed over first. */
static void write_dead_in_queue(eph_profiler *p, eph_gc_view *view) {
  eph_clocked_record *r = NULL;
  size_t room = 0, n = 0;
  uint64_t deaths = 0;
  int space = 0;
  uintptr_t at = 0;
  for (eph_value o; (o = eph_gc_view_next_dead(view, &space, &at));) {
    uint64_t word = eph_trailer(o)[0]; /* record_of's fields, the trailer read once */
    if (!(word & BIRTH_MASK)) continue;
    eph_class_id cls = eph_class_of(o);
    if (EPH_UNLIKELY(!prof_class_written(p, cls))) {
      prof_write_error(p, eph_writer_clocked_filled(p->out, n, EPH_DEATH_EXACT));
      deaths += n, n = room = 0;
      (void)prof_class_id_slow(p, cls);
    }
    if (EPH_UNLIKELY(n == room)) {
      prof_write_error(p, eph_writer_clocked_filled(p->out, n, EPH_DEATH_EXACT));
      deaths += n, n = 0;
      if (!(r = eph_writer_clocked_room(p->out, &room))) {
        prof_write_error(p, EPH_ERR_NOMEM);
        break;
      }
    }
    r[n++] = (eph_clocked_record){.class_id = cls,
                                  .site_id = (uint32_t)(word >> BIRTH_BITS),
                                  .size = eph_object_bytes(o),
                                  .birth = word & BIRTH_MASK,
                                  .death = stamp_of(o)};
  }
  prof_write_error(p, eph_writer_clocked_filled(p->out, n, EPH_DEATH_EXACT));
  p->stats.deaths += deaths + n;
}

static void on_collect(eph_profiler *p, eph_gc_kind kind) {
  /* A clock sample now, so that every time written below lies within the
   * samples and gets the same interpolated wall time whenever it is written. */
  uint64_t now = prof_clock(p);
  if (!p->clocks.npoints || now > ephs_clocks_last_bytes(&p->clocks)) prof_clocks_point(p, now);
  for (size_t i = 0; i < p->merlin.seen_len; i++)
    if (eph_is_ptr(p->merlin.seen[i])) p->merlin.seen[i] = eph_gc_fate(p->h, p->merlin.seen[i]);
  p->merlin.ndead = 0;
  /* Fates and the dead are read inline (a call per pointer followed and
   * per dead object was a fifth of lambda's time). */
  eph_gc_view view;
  eph_gc_view_begin(p->h, &view);
  int space = 0;
  uintptr_t at = 0;
  for (eph_value o; (o = eph_gc_view_next_dead(&view, &space, &at));) collect_source(p, o);
  propagate(p, &view, kind);
  /* Records in address order (allocation order, for young objects): births
   * then come in order, which the file codes in fewer bytes. */
  if (p->clocks_in_writer && !p->spec.trace) {
    write_dead_in_queue(p, &view);
    return;
  }
  space = 0, at = 0;
  if (p->merlin.stop_records) { /* the stop's: on two threads (stop_records.c) */
    stop_filler f = {.p = p, .kind = EPH_DEATH_EXACT};
    for (eph_value o; (o = eph_gc_view_next_dead(&view, &space, &at));)
      if (has_birth(o)) record_of(p, o, stamp_of(o), stop_place(&f));
    stop_filled(&f);
    prof_stop_records_flush(p); /* the stop takes a clock point next */
    return;
  }
  for (eph_value o; (o = eph_gc_view_next_dead(&view, &space, &at));) write_dead(p, o);
}

static void censor(void *data, eph_value obj) {
  eph_profiler *p = data;
  write_record(p, obj, prof_clock(p), EPH_DEATH_CENSORED);
}

/* censor's, with the stop's records on two threads. */
static void censor_in_place(void *data, eph_value obj) {
  stop_filler *f = data;
  if (has_birth(obj)) record_of(f->p, obj, prof_clock(f->p), stop_place(f));
}

/* Before the stop's last full GC: the last root check, and the records
 * from here on stamped and encoded on two threads where that can be
 * (not when tracing: each record then has its DEATH event beside it). */
static void before_stop(eph_profiler *p) {
  on_gc_start(p);
  if (!p->spec.trace) (void)prof_stop_records_begin(p);
}

/* After the last full GC (eph_profile_stop): what is left is reachable. */
static void stop(eph_profiler *p) {
  uint64_t end = prof_clock(p);
  if (end >= p->clocks.next_point || p->clocks.npoints < 2) prof_clocks_point(p, end);
  if (p->spec.trace)
    for (size_t i = 0; i < p->merlin.seen_len; i++)
      if (eph_is_ptr(p->merlin.seen[i])) trace(p, EPH_EV_ROOT, end, birth_of(p->merlin.seen[i]), 1, 0, 0);
  if (p->merlin.stop_records) {
    stop_filler f = {.p = p, .kind = EPH_DEATH_CENSORED};
    eph_heap_each_object(p->h, censor_in_place, &f);
    stop_filled(&f);
  } else {
    eph_heap_each_object(p->h, censor, p);
  }
  prof_stop_records_end(p);
}

/* --- the mode ------------------------------------------------------------------ */

static eph_status start(eph_profiler *p, eph_observer *obs, eph_error *err) {
  if (eph_heap_trailer_bytes(p->h) != 2 * sizeof(uint64_t)) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "mode=merlin needs a heap created for it (two trailer words per object): start it with "
                   "EPHEMERA_PROFILE or `ephemera run`, or call eph_profile_prepare_params before eph_heap_new");
    return EPH_ERR_INVALID;
  }
  /* the clock at start (see on_alloc), where profiler.c took the first clock point */
  p->merlin.last_check = prof_clock(p);
  obs->on_alloc = on_alloc;
  if (p->spec.trace) { /* STORE events */
    obs->on_store = on_store;
  } else {
    obs->store_clock = &p->merlin.last_check;
    obs->store_stamp_word = 1;
  }
  return EPH_OK;
}

static void free_mode(eph_profiler *p) {
  free(p->merlin.seen);
  free(p->merlin.dead);
  free(p->merlin.resort);
  free(p->merlin.resort_tmp);
  free(p->merlin.stack);
}

static size_t memory(const eph_profiler *p) {
  const prof_merlin *m = &p->merlin;
  return (m->seen_cap + m->stack_cap + m->dead_cap) * sizeof(eph_value) +
         (m->resort_cap + m->resort_tmp_cap) * sizeof *m->resort + prof_stop_records_memory(p);
}

const prof_mode prof_mode_merlin = {
    .name = "merlin", .trailer_words = 2, .traces = true, .writer_thread = true, .stamping = PROF_STAMP_IN_WRITER,
    .start = start, .arm = prof_sampler_arm_every, .on_gc_start = on_gc_start, .on_collect = on_collect,
    .on_gc_end = note_gc, .before_stop = before_stop, .stop = stop, .free = free_mode, .memory = memory,
};
