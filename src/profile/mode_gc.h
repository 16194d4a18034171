/*
 * mode_gc.h — gc mode's state and functions (mode_gc.c: the tracked
 * samples and their fates; gc_eden.c: the eden walk).  Brute mode
 * (mode_brute.c) tracks its samples the same way, in the same state.
 */
#ifndef EPHEMERA_PROFILE_MODE_GC_H
#define EPHEMERA_PROFILE_MODE_GC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"
#include "ephemera/observer.h"
#include "eden_log.h"

typedef struct eph_profiler eph_profiler;

/* A tracking entry: where a sampled object is now, and its birth. */
typedef struct tracked {
  eph_value addr;
  uint64_t birth; /* birth clock | site id << BIRTH_BITS */
} tracked;

/* Old-list entries [start, next span's start) were last known alive at
 * `until` (until.bytes == UINT64_MAX: at their birth). */
typedef struct span {
  size_t start;
  eph_stamp until;
} span;

typedef struct tracked_vec {
  tracked *items;
  size_t len, cap;
} tracked_vec;

/* An old-list entry, 12 bytes: the object's word offset in old space (35
 * bits), its birth clock in words (45 bits) and site id (16 bits).  Most
 * live samples are old, so the list is blocks (no slack beyond the last
 * block, no copying to grow) of packed entries (mode_gc.c). */
typedef struct old_entry {
  uint32_t w[3];
} old_entry;
#define OLD_BLOCK_BITS 14
#define OLD_BLOCK ((size_t)1 << OLD_BLOCK_BITS)

typedef struct old_block {
  old_entry *entries;
  uint64_t max_offset; /* the highest word offset of its entries: a full GC skips a block below its dense prefix */
} old_block;

/* Blocks faulted in ahead on the eden walk's second thread
 * (prof_gc_spare_blocks): fresh pages cost the thread that first writes
 * them, and the old list grows by about a block a collection, in bursts
 * (on DataFrame, 27 000 page faults of the main thread's run). */
#define OLD_SPARES 64

typedef struct old_list {
  old_block *blocks;
  size_t nblocks, blocks_cap, len;
  _Atomic(old_entry *) spares[OLD_SPARES]; /* NULL or a block to take (atomic_exchange) */
  atomic_size_t blocks_made;  /* blocks the main thread took, spare or new: its rate */
  size_t blocks_made_seen;    /* the second thread's: blocks_made when it last looked */
} old_list;

typedef struct prof_gc {
  /* young entries [0, young_settled) survived the last collection (at
   * young_until), the rest were born since; old entries by spans */
  tracked_vec young;
  old_list old;
  uintptr_t old_base;
  size_t young_settled;
  eph_stamp young_until;
  span *spans;
  size_t nspans, spans_cap;
  bool exact;                 /* brute mode: every death is exact (a full GC before each allocation) */
  uint64_t last_brute_gc;     /* brute mode: the clock of its last full GC request */
  /* the eden walk (the heap's eden-walk mode, gc_eden.c): old-space
   * allocations, at eden top `at`, move the clock */
  bool walks;
  eden_log eden;
  unsigned walk_threads;      /* 2: a scavenge's walk is shared with a second thread */
  uintptr_t walk_piece_min;   /* ... in pieces of at least this many bytes */
  unsigned walk_delay_us[2];  /* tests' adversarial orders: the main [0] or second [1] thread sleeps this long
                                 before each piece and before writing ahead (EPHEMERA_WALK_DELAY) */
  struct walk_split *split;   /* the second thread's state (gc_eden.c), once used */
} prof_gc;

/* mode_gc.c: the entries of gc mode's table that brute mode's shares */
eph_status prof_gc_track_start(eph_profiler *p, eph_error *err); /* the tracking lists, for either mode */
void prof_gc_mode_collect(eph_profiler *p, eph_gc_kind kind);
void prof_gc_mode_stop(eph_profiler *p);
void prof_gc_mode_free(eph_profiler *p);
size_t prof_gc_mode_memory(const eph_profiler *p);

void prof_gc_mode_track(eph_profiler *p, eph_value obj, uint64_t birth);
/* Tracked objects that survived this collection, now at t[i].addr: young
 * entries from `keep` on or, promoted, appended to the old list in this
 * collection's span.  Returns the young entries kept so far.  The single
 * one: prof_gc_keep_survivor. */
size_t prof_gc_keep_survivor(eph_profiler *p, eph_value to, uint64_t birth, size_t keep, bool *span_open,
                             const eph_stamp *now);
size_t prof_gc_keep_survivors(eph_profiler *p, const tracked *t, size_t n, size_t keep, bool *span_open,
                              const eph_stamp *now);
/* Makes sure the old list has spare blocks (pages written once) for
 * `entries` more entries, and at least as many as it took since the last
 * call, as far as its spare slots go; from the eden walk's second thread
 * while the mutator runs. */
void prof_gc_spare_blocks(eph_profiler *p, size_t entries);

/* gc_eden.c */
void prof_gc_walk_start(eph_profiler *p);
void prof_gc_walk_on_alloc(void *data, eph_heap *h, eph_value obj);
size_t prof_gc_settle_eden(eph_profiler *p, bool full, const eph_stamp *now, size_t keep, bool span_open);
/* Ends a walk of the last scavenge's eden still running on the second
 * thread (eden pairs): at the next collection's start and the stop. */
void prof_gc_walk_finish(eph_profiler *p);
/* The collection's end event is in the file: a walk running on may write
 * its records from now on (on_gc_end, after the event). */
void prof_gc_walk_note_gc_end(eph_profiler *p);
void prof_gc_eden_free(eph_profiler *p);
size_t prof_gc_eden_memory(const eph_profiler *p); /* bytes the split walk holds */

#endif
