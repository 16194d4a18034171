/*
 * mode_finalization.c — FiLiP's mode (ISMM'24 §3): one ephemeron per
 * sampled object, keyed by the object, which is its own finaliser (one
 * heap object per sample, and nothing off the heap: the value slot holds
 * the birth word).  Ephemerons are pretenured unless pretenure=off:
 * made in the heap's pinned space (ephemeron.h), old and never moved, which
 * keeps them without a reference; young ones are kept reachable by a
 * registry of chunks made in old space, each held by a global root.  The
 * finaliser records the death.  Their class is
 * compact (ephemeron.h): no finaliser slot, the class's finaliser runs, as
 * in Pharo, where an ephemeron's class defines its mourning; 24 bytes an
 * ephemeron (key, value, header).
 * Death = when the finaliser runs: after the collection that found the key
 * dead, which is FiLiP's *delayed observation*.  At 100 % with pretenuring
 * young samples' ephemerons are armed in runs before the next collection
 * (walk_arm, below): the same records, without a call per
 * allocation.
 *
 * Two deviations from FiLiP, both to keep the ephemerons from filling old
 * space (docs/finalization.md has the measurements):
 *  - The ephemerons are *phantom* (ephemeron.h): a mourned one keeps a
 *    tombstone (the dead object's class and size) instead of its key, so
 *    the collection that finds a sampled object dead reclaims it.  Pharo
 *    keeps the key for the finaliser: a scavenge then copies every dead
 *    sample once more, and at 100 % sampling overflows the survivor space
 *    and tenures them.
 *  - A finalised ephemeron is recycled.  FiLiP drops it, and it is dead
 *    weight in old space until the next full GC.  Here the finaliser clears
 *    its key: it is a *spare*, and the next sample re-arms a spare
 *    (eph_ephemeron_rearm) before allocating a new one.  Each sample still
 *    has its own ephemeron, keyed by it, from its birth to its finaliser;
 *    the heap holds as many ephemerons as samples were ever alive (or
 *    awaiting their finaliser) at once.
 *
 * Spares are taken in address order: pinned, from a bitmap of the spares
 * over the pinned space; young, by a cursor that sweeps the registry in
 * cell order, which is address order once they are promoted (a full GC
 * slides them without reordering).  So re-arming,
 * the remembered set, the scavenger's deferred and mourned lists and the
 * finalisers all walk the ephemerons in address order.  A LIFO chain of
 * spares (the first version) scrambled them a little more at every
 * scavenge (a sample that outlives one is mourned at a later one, in
 * another place in the chain), until every step of every one of those
 * walks missed the cache: on sph at 100 % that was 12x the unprofiled
 * time, and half of it stalls.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eden_births.h"

/* The registry (not pretenured): p->fin.chunks, each a global root while
 * used.  A spare is a mourned ephemeron whose key slot is nil: armed ones
 * hold their sample, mourned ones awaiting their finaliser a tombstone. */
#define REGISTRY_CHUNKS_CAP ((size_t)1 << 16) /* 2^26 ephemerons */
static inline eph_value cell_at(const eph_profiler *p, size_t cell) {
  return eph_slot(p->fin.chunks[cell / REGISTRY_CHUNK], cell % REGISTRY_CHUNK);
}

static void on_finalize_batch(eph_heap *h, const eph_value *es, size_t n, void *data);
static void unpack_deaths(const void *ctx, const eph_packed_record *in, size_t n, eph_batch_clocked_record *out);
static void on_finalize_nothing(eph_heap *h, eph_value e, void *data) {
  (void)h;
  (void)e;
  (void)data;
}

static eph_status register_class(eph_profiler *p, eph_error *err) {
  p->fin.eph_class = eph_class_register(p->h, "ProfilerEphemeron", EPH_FORMAT_EPHEMERON);
  eph_class_register(p->h, "ProfilerRegistryChunk", EPH_FORMAT_POINTERS);
  p->fin.noop_fin = eph_finalizer_register(p->h, on_finalize_nothing, NULL);
  /* Compact: 24 bytes an ephemeron, and the class's batch finaliser is
   * this profile's; its per-ephemeron finaliser is a no-op (the class
   * outlives a profile; see stop, below). */
  if (!p->fin.eph_class || !p->fin.noop_fin || eph_class_set_phantom(p->h, p->fin.eph_class, true) != EPH_OK ||
      eph_class_set_compact(p->h, p->fin.eph_class) != EPH_OK ||
      eph_class_set_finalizer(p->h, p->fin.eph_class, p->fin.noop_fin) != EPH_OK ||
      eph_class_set_batch_finalizer(p->h, p->fin.eph_class, on_finalize_batch, p) != EPH_OK) {
    eph_error_fill(err, EPH_ERR_NOMEM, "finalization mode: %s", eph_heap_error(p->h));
    return EPH_ERR_NOMEM;
  }
  eph_writer_set_unpacker(p->out, unpack_deaths, p);
  return EPH_OK;
}

/* Counts one of the profiler's own objects: they are off the application's
 * clock, and those made in old space (registry chunks) stay there until
 * stop, so the full-GC trigger leaves them out (pinned ephemerons are not
 * in old space). */
static void note_own(eph_profiler *p, eph_value obj) {
  p->stats.own_objects++;
  p->stats.own_bytes += eph_object_bytes(obj);
  if (eph_is_young(p->h, obj) || p->spec.pretenure) return;
  p->fin.permanent_bytes += eph_object_bytes(obj);
  eph_heap_set_permanent_bytes(p->h, p->fin.permanent_bytes);
}

/* A new registry cell, growing the registry if needed.  May collect. */
static size_t new_cell(eph_profiler *p) {
  if (p->fin.cells_used == p->fin.nchunks * REGISTRY_CHUNK) {
    /* Cells are global roots: they must not move, so the table is
     * allocated once, large enough for 2^26 ephemerons. */
    if (p->fin.nchunks == p->fin.chunks_cap) {
      if (p->fin.chunks_cap) {
        fprintf(stderr, "ephemera: profiler: more than %zu live samples\n", p->fin.chunks_cap * REGISTRY_CHUNK);
        abort();
      }
      p->fin.chunks = calloc(REGISTRY_CHUNKS_CAP, sizeof *p->fin.chunks);
      if (!p->fin.chunks) abort();
      p->fin.chunks_cap = REGISTRY_CHUNKS_CAP;
      prof_note_memory(p);
    }
    eph_value *chunk = &p->fin.chunks[p->fin.nchunks];
    if (eph_global_root_add(p->h, chunk) != EPH_OK) abort();
    *chunk = eph_alloc_old(p->h, eph_class_find(p->h, "ProfilerRegistryChunk"), REGISTRY_CHUNK);
    if (*chunk == EPH_NIL) {
      fprintf(stderr, "ephemera: profiler: heap exhausted growing the sample registry\n");
      abort();
    }
    p->fin.nchunks++;
    note_own(p, *chunk);
  }
  return p->fin.cells_used++;
}

/* The value slot of an ephemeron tracking a sample: its birth word, the
 * clock in words (births are word multiples) and the site id, 61 bits. */
#define WORD_CLOCK_BITS (BIRTH_BITS - 3)
static inline eph_value packed_birth(uint64_t birth) {
  return eph_int((intptr_t)((birth & BIRTH_MASK) >> 3 | (birth >> BIRTH_BITS) << WORD_CLOCK_BITS));
}
static inline uint64_t birth_of_value(eph_value value) {
  uint64_t v = (uint64_t)eph_int_value(value);
  return (v & ((UINT64_C(1) << WORD_CLOCK_BITS) - 1)) << 3 | (v >> WORD_CLOCK_BITS & SITE_MAX) << BIRTH_BITS;
}
static inline uint64_t birth_of(eph_value e) { return birth_of_value(eph_ephemeron_value(e)); }

/* Grows the bitmap to cover bitmap word w; on failure leaves it as it was
 * (the pinned cursor will find the spares it cannot mark).  Out of line:
 * inlined, its calls made every finaliser save and restore more registers
 * (18 instructions a sample on sph). */
static __attribute__((noinline)) void grow_fresh(eph_profiler *p, size_t w) {
  size_t words = p->fin.fresh_words ? p->fin.fresh_words : 4096; /* a multiple of 64 */
  while (words <= w) words *= 2;
  uint64_t *bits = realloc(p->fin.fresh_bits, words * sizeof *bits);
  if (!bits) return;
  p->fin.fresh_bits = bits;
  uint64_t *summary = realloc(p->fin.fresh_summary, words / 64 * sizeof *summary);
  if (!summary) return; /* fresh_words still says what both hold */
  p->fin.fresh_summary = summary;
  memset(bits + p->fin.fresh_words, 0, (words - p->fin.fresh_words) * sizeof *bits);
  memset(summary + p->fin.fresh_words / 64, 0, (words - p->fin.fresh_words) / 64 * sizeof *summary);
  p->fin.fresh_words = words;
  prof_note_memory(p);
}

/* Marks the spares `bits` of bitmap word w (pinned: they stay put). */
static void note_fresh_word(eph_profiler *p, size_t w, uint64_t bits) {
  if (EPH_UNLIKELY(w >= p->fin.fresh_words)) {
    grow_fresh(p, w);
    if (w >= p->fin.fresh_words) return;
  }
  uint64_t added = bits & ~p->fin.fresh_bits[w];
  p->fin.fresh_bits[w] |= bits;
  p->fin.fresh_summary[w / 64] |= UINT64_C(1) << (w % 64);
  p->fin.fresh_count += (size_t)__builtin_popcountll(added);
}

/* Spares to mark, gathered a bitmap word at a time: the finalisers come
 * in address order, mostly, so most marks are a bit set in a register. */
typedef struct fresh_marks {
  size_t w; /* SIZE_MAX: none yet */
  uint64_t bits;
} fresh_marks;

static inline void note_fresh(eph_profiler *p, fresh_marks *m, eph_value e) {
  size_t word = (size_t)((e - p->fin.pinned_base) >> 3), w = word / 64;
  if (EPH_UNLIKELY(w != m->w)) {
    if (m->bits) note_fresh_word(p, m->w, m->bits);
    m->w = w;
    m->bits = 0;
  }
  m->bits |= UINT64_C(1) << (word % 64);
}

/* The next marked spare at or after the fresh cursor's word, wrapping
 * (there is one): the summary skips 4 KiB of old space a load. */
static eph_value take_fresh(eph_profiler *p) {
  size_t w = p->fin.fresh_cursor;
  if (w >= p->fin.fresh_words || !p->fin.fresh_bits[w]) {
    size_t nsum = p->fin.fresh_words / 64, s = w / 64;
    uint64_t m = s < nsum ? p->fin.fresh_summary[s] & (~UINT64_C(0) << (w % 64)) : 0;
    while (!m) {
      s = s + 1 < nsum ? s + 1 : 0;
      m = p->fin.fresh_summary[s];
    }
    w = s * 64 + (size_t)__builtin_ctzll(m);
  }
  uint64_t x = p->fin.fresh_bits[w];
  p->fin.fresh_bits[w] = x & (x - 1);
  if (!p->fin.fresh_bits[w]) p->fin.fresh_summary[w / 64] &= ~(UINT64_C(1) << (w % 64));
  p->fin.fresh_count--;
  p->fin.fresh_cursor = w;
  eph_value e = p->fin.pinned_base + (((uint64_t)w * 64 + (uint64_t)__builtin_ctzll(x)) << 3);
  /* Re-arming misses the cache at each spare unless fetched ahead; spares
   * are mostly dense (most samples die young), so the one 16 on is most
   * likely 16 ephemerons on. */
  __builtin_prefetch((const void *)(e + 16 * (sizeof(eph_header) + EPH_EPHEMERON_COMPACT_FIXED_SLOTS * sizeof(eph_value))), 1);
  return e;
}

/* A spare the bitmap could not mark (it failed to grow): the next one in
 * the pinned space from the pinned cursor on, wrapping (there is one). */
static __attribute__((noinline)) eph_value pinned_spare(eph_profiler *p) {
  uintptr_t base, top;
  eph_pinned_range(p->h, &base, &top);
  size_t trailer = eph_heap_trailer_bytes(p->h);
  uintptr_t at = p->fin.pinned_cursor;
  for (;;) {
    if (at < base || at >= top) at = base;
    eph_value e = at;
    at += eph_object_bytes(e) + trailer;
    if (eph_class_of(e) == p->fin.eph_class && eph_ephemeron_key(e) == EPH_NIL) {
      p->fin.pinned_cursor = at;
      return e;
    }
  }
}

/* The next spare from the registry cursor on (not pretenured).  Cells
 * between are armed or pending ephemerons, next in memory once promoted:
 * each costs a load that the hardware has mostly fetched already; the
 * ephemeron 16 cells on is prefetched. */
static eph_value registry_spare(eph_profiler *p) {
  size_t c = p->fin.spare_cursor, n = p->fin.cells_used;
  eph_value e;
  for (;;) {
    if (c == n) c = 0;
    if (c + 16 < n) __builtin_prefetch((const void *)cell_at(p, c + 16));
    e = cell_at(p, c++);
    if (eph_ephemeron_key(e) == EPH_NIL) break;
  }
  p->fin.spare_cursor = c;
  return e;
}

/* The next spare marked in the bitmap, or EPH_NIL. */
static inline eph_value marked_spare(eph_profiler *p) {
  while (p->fin.fresh_count) {
    eph_value f = take_fresh(p);
    if (EPH_LIKELY(eph_ephemeron_key(f) == EPH_NIL)) return f; /* else re-armed by the pinned cursor since */
  }
  return EPH_NIL;
}

/* The next spare, re-armed for obj: no allocation, so nothing moves.
 * Pinned, the spares are marked in a bitmap over the pinned space and
 * taken in address order (a cursor sweeping past armed ephemerons was dear
 * on dataframe, where most samples live: the bitmap skips 64 words a
 * load); young, the first spare from the registry cursor on. */
static inline void track_with_spare(eph_profiler *p, eph_value obj, uint64_t birth) {
  eph_value e = marked_spare(p);
  if (e == EPH_NIL) e = p->spec.pretenure ? pinned_spare(p) : registry_spare(p);
  p->fin.spares--;
  eph_ephemeron_rearm_unchecked(p->h, e, obj, packed_birth(birth));
}

/* Forgets the marks: the spares stay spares, the registry cursor finds them. */
static void clear_fresh(eph_profiler *p) {
  if (p->fin.fresh_count) {
    memset(p->fin.fresh_bits, 0, p->fin.fresh_words * sizeof *p->fin.fresh_bits);
    memset(p->fin.fresh_summary, 0, p->fin.fresh_words / 64 * sizeof *p->fin.fresh_summary);
  }
  p->fin.fresh_count = p->fin.fresh_cursor = 0;
}

static void track_with_new(eph_profiler *p, eph_value obj, uint64_t birth);

static void track(eph_profiler *p, eph_value obj, uint64_t birth) {
  if (EPH_LIKELY(p->fin.spares)) track_with_spare(p, obj, birth);
  else track_with_new(p, obj, birth);
}

/* --- arming in runs (100 %, pretenured) ------------------------------------- */

/*
 * At 100 % with pretenuring, young samples' ephemerons are armed a run at a
 * time, each before the next collection, not at its allocation.  An
 * ephemeron does nothing between collections: only the collection that
 * finds its key dead reads it, and the finaliser after that.  So arming a
 * young sample's ephemeron at any time before the collection moves
 * anything gives each sample the same ephemeron, mourning and finaliser
 * as arming it at the allocation, and the same records (births are exact
 * either way: eden_births.h).  What it saves is a call per allocation: the
 * heap's eden-walk mode keeps the inline allocation path, and one loop
 * walks what eden took since the last run.  EPHEMERA_FIN_WALK=0 arms every
 * sample at its allocation.
 */
static void walk_start(eph_profiler *p) {
  p->fin.eden.eden_clock = prof_clock(p);
  eph_heap_set_eden_walk(p->h, true);
  prof_arm_clock_point(p, p->fin.eden.eden_clock);
}

/* Old-space allocations, and the byte trigger's wall-clock points (every
 * 64 KiB at first): each arms what eden took since the last arming first,
 * so the samples are armed in allocation order, while eden's new objects
 * are still in the cache, and the site log stays short. */
static void walk_arm(eph_profiler *p);

static void walk_on_alloc(void *data, eph_heap *h, eph_value obj) {
  eph_profiler *p = data;
  walk_arm(p);
  uint64_t t = prof_clock(p);
  if (!eph_is_young(h, obj)) {
    prof_note_old_alloc(p, &p->fin.eden, t);
    track(p, obj, prof_birth_at(p, t));
  }
  prof_clocks_tick(p, t);
  prof_arm_clock_point(p, t);
}

/* Marked spares taken and their samples, re-armed together in one call
 * (eph_ephemerons_rearm_unchecked): until then their key slots are still
 * nil, so nothing that looks for a spare by its key (the pinned cursor)
 * and nothing that may collect (a new ephemeron) runs before the run is
 * armed. */
#define ARM_RUN 64
typedef struct arm_run {
  eph_value e[ARM_RUN], key[ARM_RUN], value[ARM_RUN];
} arm_run;

/* Re-arms the run's first n; returns 0, the run's new length. */
static size_t arm_run_flush(eph_profiler *p, arm_run *r, size_t n) {
  if (n) eph_ephemerons_rearm_unchecked(p->h, n, r->e, r->key, r->value);
  return 0;
}

/* Arms an ephemeron for each object eden took since the last arming: at
 * sample points (above), in on_gc_start, and before the stop lets the
 * ephemerons go. */
static void walk_arm(eph_profiler *p) {
  walk_pos start = {.clock = p->fin.eden.eden_clock};
  eph_eden_walk_begin(p->h, &start.w);
  /* The walk's position in a copy whose address no call sees, so that
   * the calls in the loop (taking a spare, re-arming a run) do not make
   * the compiler keep it in memory. */
  walk_pos q = start;
  eden_olds olds = eden_olds_of(&p->fin.eden);
  eph_value obj;
  eph_site *site;
  uint64_t samples = 0;
  arm_run run;
  size_t n = 0;
  while (next_live_object(&olds, &q, &obj, &site)) {
    uint64_t birth = birth_word(q.clock, prof_site_id(p, site));
    samples++;
    eph_value e = EPH_LIKELY(p->fin.spares) ? marked_spare(p) : EPH_NIL;
    if (EPH_LIKELY(e != EPH_NIL)) {
      p->fin.spares--;
      run.e[n] = e;
      run.key[n] = obj;
      run.value[n] = packed_birth(birth);
      if (++n == ARM_RUN) n = arm_run_flush(p, &run, n);
      continue;
    }
    n = arm_run_flush(p, &run, n);
    if (p->fin.spares) track_with_spare(p, obj, birth);
    else track_with_new(p, obj, birth);
  }
  arm_run_flush(p, &run, n);
  count_olds(&olds, &q, q.w.top); /* old-space allocations since the last young one */
  p->stats.samples += samples;
  p->fin.eden.nold_allocs = 0;
  p->fin.eden.eden_clock = q.clock; /* the clock where the next walk begins */
  start.w = q.w;
  eph_eden_walk_end(p->h, &start.w);
}

/* The heap could not make an ephemeron for obj: it goes unobserved, say so. */
static void untracked(eph_profiler *p, eph_value obj, uint64_t birth) {
  eph_stamp now = prof_now(p);
  prof_write_record(p, obj, birth, &now, NULL, EPH_DEATH_CENSORED);
}

/* A new ephemeron for obj: pinned, or young in a new registry cell (may
 * collect). */
static __attribute__((noinline)) void track_with_new(eph_profiler *p, eph_value obj, uint64_t birth) {
  eph_heap *h = p->h;
  if (p->spec.pretenure) {
    eph_value e = eph_ephemeron_new_pinned(h, p->fin.eph_class, obj, packed_birth(birth), 0, 0 /* the class's */);
    if (e == EPH_NIL) return untracked(p, obj, birth);
    if (!p->fin.pinned_base) {
      uintptr_t top;
      eph_pinned_range(h, &p->fin.pinned_base, &top);
    }
    note_own(p, e);
    return;
  }
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  EPH_LOCAL(h, e);
  e = eph_ephemeron_new(h, p->fin.eph_class, obj, packed_birth(birth), 0, 0 /* the class's */, false);
  if (e == EPH_NIL) {
    untracked(p, obj, birth);
    EPH_UNFRAME(h);
    return;
  }
  size_t cell = new_cell(p);
  eph_store(h, p->fin.chunks[cell / REGISTRY_CHUNK], cell % REGISTRY_CHUNK, e);
  note_own(p, e);
  EPH_UNFRAME(h);
}

/* Class and size of e's sample: its key is the object, or once mourned
 * its tombstone. */
static inline void sample_of(eph_value e, eph_class_id *cls, size_t *size) {
  eph_value key = eph_ephemeron_key(e);
  if (EPH_LIKELY(eph_is_int(key))) {
    *cls = eph_tombstone_class(key);
    *size = eph_tombstone_object_bytes(key);
  } else {
    *cls = eph_class_of(key);
    *size = eph_object_bytes(key);
  }
}

/* The records of the finalisers' deaths, each packed as the sample's
 * tombstone (a) and its ephemeron's value (b, the birth word): the
 * finaliser copies two words, and the writer's thread decodes them
 * (unpack_deaths) as it encodes.  In the writer's queue when the writer
 * stamps records (p->clocks_in_writer), else in `own`, unpacked and
 * written at the flush. */
typedef struct packed_run {
  eph_packed_record *r;
  size_t room, n;
  eph_packed_record own[32];
} packed_run;

/* eph_record_unpacker: reads only p's sampler settings, fixed while the
 * profile runs.  The finaliser declared each record's class first, so
 * the file's id of a class is its own (prof_class_id). */
static void unpack_deaths(const void *ctx, const eph_packed_record *in, size_t n, eph_batch_clocked_record *out) {
  const eph_profiler *p = ctx;
  for (size_t i = 0; i < n; i++) {
    eph_value t = (eph_value)in[i].a;
    size_t size = eph_tombstone_object_bytes(t);
    uint64_t birth = birth_of_value((eph_value)in[i].b);
    out[i] = (eph_batch_clocked_record){.class_id = eph_tombstone_class(t), .site_id = (uint32_t)(birth >> BIRTH_BITS),
                                        .size = size, .weight = prof_sampler_weight(p, size),
                                        .birth = birth & BIRTH_MASK};
  }
}

static void packed_flush(eph_profiler *p, packed_run *run) {
  size_t n = run->n;
  run->n = run->room = 0;
  if (!n) return;
  if (run->r != run->own) {
    prof_write_error(p, eph_writer_batch_packed_filled(p->out, n));
    prof_count_batch(p, n);
    return;
  }
  prof_batch_run b; /* unpacked into b.own, written as records */
  b.r = b.own;
  b.room = b.n = n;
  unpack_deaths(p, run->own, n, b.own);
  prof_batch_flush(p, &b);
}

static inline eph_packed_record *packed_place(eph_profiler *p, packed_run *run) {
  if (EPH_UNLIKELY(run->n == run->room)) {
    packed_flush(p, run);
    if (!p->clocks_in_writer || !(run->r = eph_writer_batch_packed_room(p->out, &run->room))) {
      run->r = run->own; /* stamped here (no writer thread) */
      run->room = sizeof run->own / sizeof *run->own;
    }
  }
  return &run->r[run->n++];
}

/* A run of the class's finalisers, in one call (ephemeron.h's batch
 * finaliser: 43 instructions a sample less than one call each on sph).  Each
 * records its sample's death (in the batch of its death stamp, packed in
 * the writer's queue, one hand-over per stamp), then makes its ephemeron
 * a spare: key slot nil.  They run after the
 * collection that mourned them, so the keys are tombstones.
 * The wall clock costs as much as the rest of a finaliser, so it is read
 * at the start of a call and every FIN_CLOCK_EVERY ephemerons: a death is
 * stamped at most that many finalisers early, a few microseconds.  Nothing
 * else runs during the call, so the allocation clock has not moved (the
 * profile's own allocations are off it) and the stamp holds for all. */
#define FIN_CLOCK_EVERY 32
static void on_finalize_batch(eph_heap *h, const eph_value *es, size_t n, void *data) {
  eph_profiler *p = data;
  packed_run run; /* the deaths under the current stamp */
  run.n = run.room = 0; /* (own[] needs no clearing) */
  size_t m = 0;         /* how many */
  size_t freed = 0;
  bool stamped = false;
  fresh_marks marks = {SIZE_MAX, 0};
  for (size_t i = 0; i < n; i++) {
    eph_value e = es[i], value = eph_ephemeron_value(e);
    if (EPH_UNLIKELY(!eph_is_int(value))) continue; /* an earlier profile's, disarmed by its stop */
    if (!stamped || m == FIN_CLOCK_EVERY) {
      packed_flush(p, &run);
      stamped = true;
      p->fin.fin_stamp = prof_now(p);
      prof_batch(p, &p->fin.fin_stamp, NULL, EPH_DEATH_FINALIZED); /* the deaths stamped with it */
      m = 0;
    }
    eph_value key = eph_ephemeron_key(e);
    if (EPH_UNLIKELY(!eph_is_int(key))) key = eph_tombstone_of(key); /* not phantom: the dead key itself */
    if (EPH_UNLIKELY(!prof_class_written(p, eph_tombstone_class(key)))) { /* declaring it waits for the writer */
      packed_flush(p, &run);
      (void)prof_class_id_slow(p, eph_tombstone_class(key));
    }
    eph_packed_record *r = packed_place(p, &run);
    r->a = key;
    r->b = value;
    m++;
    eph_store_immediate(h, e, EPH_EPHEMERON_KEY, EPH_NIL);
    freed++;
    if (p->spec.pretenure) note_fresh(p, &marks, e);
  }
  packed_flush(p, &run);
  if (marks.bits) note_fresh_word(p, marks.w, marks.bits);
  p->fin.spares += freed;
}

/*
 * The stop, around the profile's last full GC.  That GC is to say which
 * samples are dead and which alive (censored), not to mourn them: at
 * 100 % on dataframe mourning and finalising the 10 M samples that die with
 * the workload, and sliding their ephemerons, took 1 s, five times the
 * stop of gc mode.  So the ephemerons are let go first
 * (before_stop): pinned ones dropped (eph_pinned_drop), the
 * registry of young ones unrooted.  To that GC the armed ephemerons are then
 * garbage: it neither marks, moves nor mourns them; but in its on_collect,
 * before the compaction, they are still readable, and eph_gc_where tells
 * each key's fate (collect_at_stop).  (Its first step, the
 * scavenge that tenures everything, takes the ephemerons and registry
 * chunks in the remembered set for live: it promotes the young ephemerons
 * and keys they hold and updates their slots, so every key read there is
 * an address the GC knows.)  The dead are recorded as finalised, the others
 * censored, at the end of the profile: the stamp counts this GC, as the
 * finalisers would have run after it.  Ephemerons already mourned, whose
 * finaliser had not run, are recorded the same way; the GC forgets the
 * pinned ones, and the young ones are disarmed (nil key and value) and
 * stay queued.  The class outlives the profile and loses its batch
 * finaliser (stop), leaving the no-op; a later profile makes
 * its own batch finaliser the class's again, and that passes over the
 * disarmed ones still queued (their value is nil, never a birth word).
 */
static void before_stop(eph_profiler *p) {
  if (p->fin.fin_walk) walk_arm(p); /* eden's samples, before their ephemerons are let go */
  if (p->spec.pretenure) eph_pinned_drop(p->h, p->fin.eph_class);
  for (size_t c = 0; c < p->fin.nchunks; c++) eph_global_root_remove(p->h, &p->fin.chunks[c]);
  p->fin.stopping = true;
}

typedef struct stop_walk {
  eph_stamp end; /* the stamp of every record */
  int batch;     /* the death kind of the batch open, or -1 */
} stop_walk;

/* One ephemeron's record at the stop (above). */
static void record_at_stop(eph_profiler *p, stop_walk *w, eph_value e) {
  eph_value key = eph_ephemeron_key(e);
  if (key == EPH_NIL) return; /* a spare */
  eph_death_kind kind = EPH_DEATH_FINALIZED;
  eph_class_id cls;
  size_t size;
  bool pending = eph_is_int(key); /* mourned: a tombstone, the finaliser pending */
  if (pending) {
    sample_of(e, &cls, &size);
  } else {
    bool dead;
    eph_value at = eph_gc_where(p->h, key, &dead);
    if (!dead) kind = EPH_DEATH_CENSORED;
    cls = eph_class_of(at);
    size = eph_object_bytes(at);
  }
  if ((int)kind != w->batch) prof_batch(p, &w->end, NULL, kind), w->batch = (int)kind;
  prof_batch_record_of(p, cls, size, birth_of(e), false);
  if (pending && !p->spec.pretenure) { /* disarmed: it stays queued */
    eph_store(p->h, e, EPH_EPHEMERON_KEY, EPH_NIL);
    eph_store(p->h, e, EPH_EPHEMERON_VALUE, EPH_NIL);
  }
}

/* The walks miss the cache at each key's header: keys are fetched 8
 * ephemerons ahead, and registry cells' ephemerons 16 ahead. */
static void collect_at_stop(eph_profiler *p) {
  stop_walk w = {.end = prof_now(p), .batch = -1};
  w.end.full_gcs++; /* this one */
  if (p->spec.pretenure) {
    uintptr_t at, top;
    eph_pinned_range(p->h, &at, &top);
    size_t trailer = eph_heap_trailer_bytes(p->h);
    /* the profile's ephemerons are all of one size: 8 of them on is most
     * likely one too (a prefetch reads nothing it relies on) */
    size_t ahead = 8 * (3 * sizeof(eph_value) + trailer);
    while (at < top) {
      eph_value e = at;
      if (at + ahead + 2 * sizeof(eph_value) <= top) __builtin_prefetch((const void *)eph_ephemeron_key(at + ahead));
      at += eph_object_bytes(e) + trailer;
      if (eph_class_of(e) == p->fin.eph_class) record_at_stop(p, &w, e);
    }
    return;
  }
  for (size_t cell = 0, n = p->fin.cells_used; cell < n; cell++) {
    if (cell + 16 < n) __builtin_prefetch((const void *)cell_at(p, cell + 16));
    if (cell + 8 < n && eph_is_ptr(cell_at(p, cell + 8)))
      __builtin_prefetch((const void *)eph_ephemeron_key(cell_at(p, cell + 8)));
    eph_value e = cell_at(p, cell);
    if (eph_is_ptr(e)) record_at_stop(p, &w, e);
  }
}

/* After that GC the pinned ephemerons and the registry's chunks are gone:
 * forget them. */
static void stop(eph_profiler *p) {
  eph_heap *h = p->h;
  eph_class_set_batch_finalizer(h, p->fin.eph_class, NULL, NULL);
  p->fin.spare_cursor = p->fin.spares = 0;
  p->fin.pinned_cursor = 0;
  clear_fresh(p);
  p->fin.nchunks = p->fin.cells_used = p->fin.permanent_bytes = 0;
  eph_heap_set_permanent_bytes(h, 0);
  p->fin.stopping = false;
  p->fin.fin_walk = false; /* eden-walk mode ends with the observer (eph_profile_stop) */
}

/* --- the mode ------------------------------------------------------------------ */

/* on_alloc at sample points: with every allocation sampled (take_all)
 * nothing for the sampler to do (at 100 % on sph a dispatch and the
 * sampler cost 20 instructions a sample). */
static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  (void)h;
  eph_profiler *p = data;
  if (EPH_LIKELY(p->take_all) || prof_sampler_take(p, obj)) track(p, obj, prof_birth(p));
}

/* Arming in runs at 100 % with pretenuring (EPHEMERA_FIN_WALK=0: not). */
static eph_status start(eph_profiler *p, eph_observer *obs, eph_error *err) {
  const char *env = getenv("EPHEMERA_FIN_WALK");
  p->fin.fin_walk = p->take_all && p->spec.pretenure && !(env && strcmp(env, "0") == 0);
  obs->on_alloc = p->fin.fin_walk ? walk_on_alloc : on_alloc;
  obs->on_alloc_is_leaf = p->spec.pretenure; /* young ephemerons are allocated in on_alloc; pinned ones never collect */
  return register_class(p, err);
}

static void arm(eph_profiler *p) {
  if (p->fin.fin_walk) walk_start(p);
  else prof_sampler_arm(p);
}

static void on_gc_start(eph_profiler *p) {
  if (p->fin.fin_walk && !p->fin.stopping) walk_arm(p); /* eden's last run, before the collection reads any ephemeron */
  prof_clocks_before_pause(p);
}

static void on_collect(eph_profiler *p, eph_gc_kind kind) {
  if (p->fin.stopping && kind == EPH_GC_FULL) collect_at_stop(p);
}

static void free_mode(eph_profiler *p) {
  if (p->fin.eph_class) eph_class_set_batch_finalizer(p->h, p->fin.eph_class, NULL, NULL); /* p's: also without a stop */
  free(p->fin.chunks);
  free(p->fin.fresh_bits);
  free(p->fin.fresh_summary);
  free(p->fin.eden.old_allocs);
}

static size_t memory(const eph_profiler *p) {
  const prof_fin *f = &p->fin;
  return f->chunks_cap * sizeof *f->chunks + (f->fresh_words + f->fresh_words / 64) * sizeof *f->fresh_bits +
         f->eden.old_allocs_cap * sizeof *f->eden.old_allocs;
}

const prof_mode prof_mode_finalization = {
    .name = "finalization", .writer_thread = true, .stop_on_writer_thread = true,
    .stamping = PROF_STAMP_ON_WRITER_THREAD, .start = start, .arm = arm,
    .on_gc_start = on_gc_start, .on_collect = on_collect, .on_gc_end = prof_clocks_after_pause,
    .before_stop = before_stop, .stop = stop, .free = free_mode, .memory = memory,
};
