/*
 * profiler.h — the profiler's private state, shared by the files of src/profile.
 *
 * A live sampled object costs the profiler one word of "birth" (its birth
 * on the allocation clock, 48 bits, and its site id, 16 bits) kept where the
 * mode tracks it: next to its address in gc mode (16 bytes a sample, off
 * the heap), in its ephemeron in finalization mode, in its trailer in
 * merlin mode.  Everything else a record holds is found when it is written:
 * class and size from the object (dead objects are intact until the
 * collector is done), weight from the size and the sampling rate, and the
 * birth's wall time and collection counts from the clock tables (clocks.c).
 * How a mode learns of deaths differs (mode_*.c); sampling, stamps, the
 * tables and the file are shared (profiler.c).
 */
#ifndef EPH_PROFILER_H
#define EPH_PROFILER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ephemera/ephemeron.h"
#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"
#include "ephemera/profile.h"
#include "format/writer_profiler.h"
#include "sampling/clock_table.h"
#include "sampling/sampling.h"

#define BIRTH_BITS 48
#define BIRTH_MASK ((UINT64_C(1) << BIRTH_BITS) - 1)
#define SITE_MAX 0xFFFFu /* site ids beyond 16 bits are recorded as unknown (0) */

/* A gc-mode tracking entry: where a sampled object is now, and its birth. */
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

/* Blocks faulted in ahead on gc mode's second thread (prof_gc_spare_blocks):
 * fresh pages cost the thread that first writes them, and the old list
 * grows by about a block a collection, in bursts (on DataFrame, 27 000
 * page faults of the main thread's run). */
#define OLD_SPARES 64

typedef struct old_list {
  old_block *blocks;
  size_t nblocks, blocks_cap, len;
  _Atomic(old_entry *) spares[OLD_SPARES]; /* NULL or a block to take (atomic_exchange) */
  atomic_size_t blocks_made;  /* blocks the main thread took, spare or new: its rate */
  size_t blocks_made_seen;    /* the second thread's: blocks_made when it last looked */
} old_list;

/* Pointer -> id map for allocation sites (open addressing). */
typedef struct site_map {
  const eph_site **keys;
  uint32_t *ids;
  size_t cap, len;
} site_map;

typedef struct eph_profiler {
  eph_heap *h;
  eph_profile_spec spec;
  eph_writer *out;
  uint64_t start_ns;

  /* sampling */
  ephs_rng rng;       /* the sampler's stream (src/sampling) */
  double count_weight;        /* spec.sample_every as a double: converted at every record, it cost 7 instructions */
  uint8_t *class_state;       /* per heap class: 0 unknown, 1 sampled, 2 filtered out */
  size_t class_state_len;
  uint8_t *class_written;     /* class entry already in the file */
  size_t class_written_len;
  uint64_t filtered_count;    /* allocations of filtered classes seen (count sampling with a filter) */
  uint64_t walk_threshold;    /* the eden walk at 1/N: keep when the draw is below it (UINT64_MAX: every object) */
  uint64_t walk_salt;         /* the walk's draws differ with the profile's seed */
  eph_death_kind batch_kind;  /* of the current prof_batch */
  bool take_all;              /* 1/1 or every:1 without a class filter: every sample point is a sample */

  /* clocks the profiler keeps itself */
  uint32_t scavenges, full_gcs;
  uint32_t scavenges0, full_gcs0; /* at start */
  /* bytes -> wall and collections (clocks.c, over src/sampling's tables):
   * cache 0 for births and most stamps, cache 1 for Merlin's deaths, which
   * lie anywhere after the births they are written with */
  ephs_clocks clocks;
  /* The writer keeps a replica of the tables (eph_writer_clock_start):
   * Merlin's records and finalization mode's finalisers' go to it as
   * clocked records, stamped there, until the stop (eph_profile_stop). */
  bool clocks_in_writer;

  /* gc mode: young entries [0, young_settled) survived the last collection
   * (at young_until), the rest were born since; old entries by spans */
  tracked_vec young;
  old_list old;
  uintptr_t old_base;
  size_t young_settled;
  eph_stamp young_until;
  span *spans;
  size_t nspans, spans_cap;
  /* gc mode walking eden (the heap's eden-walk mode, mode_gc.c):
   * old-space allocations, at eden top `at`, move the clock */
  uint64_t eden_clock;        /* the clock when eden was last empty */
  struct old_alloc { uintptr_t at; uint64_t bytes; } *old_allocs;
  size_t nold_allocs, old_allocs_cap;
  unsigned walk_threads;      /* 2: a scavenge's walk is shared with a second thread */
  uintptr_t walk_piece_min;   /* ... in pieces of at least this many bytes */
  unsigned walk_delay_us[2];  /* tests' adversarial orders: the main [0] or second [1] thread sleeps this long
                                 before each piece and before writing ahead (EPHEMERA_WALK_DELAY) */
  struct walk_split *split;   /* the second thread's state (gc_eden.c), once used */

  /* finalization mode */
  eph_class_id eph_class;
  eph_finalizer_id noop_fin;  /* the class's finaliser: its batch finaliser does the work */
  size_t spares;              /* finalised ephemerons not re-armed yet */
  /* Not pretenured: a registry of young-allocated ephemerons */
  eph_value *chunks;          /* registry chunks, each cell a global root */
  size_t nchunks, chunks_cap;
  size_t cells_used;          /* cells [0, cells_used) hold an ephemeron each */
  size_t permanent_bytes;     /* registry chunks (made in old space): kept until stop */
  size_t spare_cursor;        /* the search for a spare (finalised ephemeron) goes on from this cell */
  /* Pretenured: pinned ephemerons (ephemeron.h), and the spares among
   * them as one bit per word of the pinned space from pinned_base
   * (mode_finalization.c); fresh_count bits are set. */
  uintptr_t pinned_base;
  uintptr_t pinned_cursor;    /* a spare the bitmap could not mark is searched for from here */
  uint64_t *fresh_bits, *fresh_summary; /* summary: a bit per nonzero word of fresh_bits */
  size_t fresh_words, fresh_count, fresh_cursor;
  eph_stamp fin_stamp;        /* the last death stamp, for up to 32 finalisers of one batch */
  bool writer_thread_due;     /* the writer's thread starts at the first collection */
  bool stopping;              /* the last GC is the stop's (prof_fin_mode_before_stop) */
  bool fin_walk;              /* young samples' ephemerons armed in runs (mode_finalization.c) */
  bool on_signals;            /* SIGINT and SIGTERM stop this profile (signals.c) */

  /* merlin mode */
  eph_value *seen;            /* root slot values at the last check: globals then shadow stack */
  size_t seen_len, seen_cap, seen_globals;
  uint64_t last_check;        /* application clock at the last root check */
  eph_value *dead;            /* a collection's dead objects that hold pointers: the backward pass's sources */
  size_t ndead, dead_cap;
  struct dead { eph_value obj; uint64_t stamp; } *resort, *resort_tmp; /* sources left to the paper's order */
  size_t nresort, resort_cap, resort_tmp_cap;
  eph_value *stack;
  size_t stack_cap;
  struct prof_stop_records *stop_records; /* the stop's records (stop_records.c), while it writes them */

  /* brute mode */
  uint64_t last_brute_gc;     /* clock of the last requested full GC */

  site_map sites;
  uint32_t next_site_id;
  pthread_mutex_t sites_lock; /* taken to change `sites`, and by gc mode's walk thread to read it */
  /* Call stacks (spec.stacks, stacks.c): the calls EPH_CALLER marked,
   * outermost first (ncallers counts past the array; those are not kept),
   * and the stacks met so far. */
#define PROF_MAX_CALLERS 255
  const eph_site *callers[PROF_MAX_CALLERS];
  unsigned ncallers;
  struct prof_stack *stacks;
  size_t stacks_cap, stacks_len;
#define SITE_CACHE 256
  struct prof_site_cache_entry { const eph_site *site; uint32_t id; } site_cache[SITE_CACHE];
  eph_profile_stats stats;
  eph_status error;           /* first write error, reported at stop */
  char error_message[256];
} eph_profiler;

#define REGISTRY_CHUNK 1024

/* profiler.c */
/* The application's allocation clock: the heap's, less the trailer words a
 * Merlin heap adds to every object and the profiler's own objects
 * (finalization mode's ephemerons and registry), so that all modes keep
 * the same time. */
static inline uint64_t prof_clock(eph_profiler *p) {
  size_t trailer = eph__fast(p->h)->trailer_bytes;
  return eph_heap_allocated(p->h) - (trailer ? trailer * eph_heap_objects_allocated(p->h) : 0) - p->stats.own_bytes;
}
eph_stamp prof_now(eph_profiler *p);
/* Writes the record of sampled object obj (intact: class and size are read
 * from it) with birth word `birth`.  alive_until NULL: the same as death;
 * alive_until->bytes == UINT64_MAX: its birth. */
void prof_write_record_of(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth, const eph_stamp *death,
                          const eph_stamp *alive_until, eph_death_kind kind);
static inline void prof_write_record(eph_profiler *p, eph_value obj, uint64_t birth, const eph_stamp *death,
                                     const eph_stamp *alive_until, eph_death_kind kind) {
  prof_write_record_of(p, eph_class_of(obj), eph_object_bytes(obj), birth, death, alive_until, kind);
}
/* The same for records found dead together (eph_writer_batch): prof_batch
 * sets the death, kind and alive_until (NULL: the death) they share;
 * until_birth: this one was alive only until its birth. */
void prof_batch(eph_profiler *p, const eph_stamp *death, const eph_stamp *alive_until, eph_death_kind kind);
static inline void prof_batch_record_of(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth,
                                        bool until_birth);
static inline void prof_batch_record(eph_profiler *p, eph_value obj, uint64_t birth, bool until_birth) {
  prof_batch_record_of(p, eph_class_of(obj), eph_object_bytes(obj), birth, until_birth);
}
/* A record's fields for the current batch as prof_batch_record_of writes
 * them (its class declared in the file first). */
static inline eph_batch_clocked_record prof_batch_entry(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth);
/*
 * A run of records for the current batch, all !until_birth, each filled
 * in its place (prof_batch_place, with prof_batch_entry's fields): in the
 * writer's queue where the writer stamps them (p->clocks_in_writer), else
 * in the run's own array, written by prof_batch_flush.  Anything that
 * talks to the writer (prof_batch, a clock point, declaring a class: see
 * prof_class_written) needs the run flushed first.
 */
typedef struct prof_batch_run {
  eph_batch_clocked_record *r;
  size_t room, n;
  eph_batch_clocked_record own[32];
} prof_batch_run;
void prof_batch_room(eph_profiler *p, prof_batch_run *run); /* flushes, then a new room */
/* Counts n records of the current batch in the profile's stats. */
static inline void prof_count_batch(eph_profiler *p, size_t n) {
  if (p->batch_kind == EPH_DEATH_CENSORED) p->stats.censored += n;
  else p->stats.deaths += n;
}
void prof_batch_flush(eph_profiler *p, prof_batch_run *run);
static inline eph_batch_clocked_record *prof_batch_place(eph_profiler *p, prof_batch_run *run) {
  if (EPH_UNLIKELY(run->n == run->room)) prof_batch_room(p, run);
  return &run->r[run->n++];
}
void prof_note_memory(eph_profiler *p);
void prof_write_error(eph_profiler *p, eph_status st);
void *prof_grow_slow(eph_profiler *p, void *items, size_t *cap, size_t need, size_t size);
/* items, with room for at least `need` entries of `size` bytes: grows 1.5x
 * (the profiler's memory is counted against it), aborts when out of memory. */
static inline void *prof_grow(eph_profiler *p, void *items, size_t *cap, size_t need, size_t size) {
  return need <= *cap ? items : prof_grow_slow(p, items, cap, need, size);
}

/* clocks.c */
uint64_t prof_wall_ns(void);
void prof_clocks_start(eph_profiler *p);
void prof_clocks_point(eph_profiler *p, uint64_t bytes); /* a wall-clock sample at `bytes` (now) */
static inline void prof_clocks_tick(eph_profiler *p, uint64_t bytes) {
  if (bytes >= p->clocks.next_point) prof_clocks_point(p, bytes);
}
void prof_clocks_note_gc(eph_profiler *p, eph_gc_kind kind, uint64_t bytes);
void prof_clocks_free(eph_profiler *p);

/* The stamp of a past point of the allocation clock (collections strictly
 * before it), with cache c: it reads p's tables and writes only c, so a
 * thread with a cache of its own may take stamps while the tables stand
 * still (in on_collect). */
/* The same from tables t (p->clocks, or a copy of a range of them). */
static inline eph_stamp prof_stamp_in(const ephs_clocks *t, uint64_t bytes, ephs_clock_cache *c) {
  ephs_clock_stamp s = ephs_clocks_stamp(t, bytes, c);
  return (eph_stamp){.bytes = bytes, .wall_ns = s.wall_ns, .scavenges = s.minor, .full_gcs = s.major};
}
static inline eph_stamp prof_clocks_stamp_in(eph_profiler *p, uint64_t bytes, ephs_clock_cache *c) {
  return prof_stamp_in(&p->clocks, bytes, c);
}
static inline eph_stamp prof_clocks_stamp_with(eph_profiler *p, uint64_t bytes, unsigned k) {
  return prof_clocks_stamp_in(p, bytes, &p->clocks.cache[k]);
}
static inline eph_stamp prof_clocks_stamp_at(eph_profiler *p, uint64_t bytes) { return prof_clocks_stamp_with(p, bytes, 0); }

/* sampler.c */
void prof_sampler_arm(eph_profiler *p);
bool prof_sampler_take(eph_profiler *p, eph_value obj);
bool prof_sampler_walks(const eph_profiler *p);
void prof_sampler_walk_arm(eph_profiler *p);
bool prof_sampler_take_walked(eph_profiler *p, eph_class_id cls, uint64_t clock);

/* The eden walk's draw for the object whose allocation ended at `clock`:
 * kept with probability 1/N.  A hash of the clock, not a random stream,
 * so that any thread can draw for any object: no two objects share a
 * clock, and splitmix64's finaliser spreads clocks that differ in a few
 * low bits over all 64, so the draws are independent Bernoulli trials
 * as the sample points' geometric gaps are. */
static inline bool prof_sampler_walk_draw(const eph_profiler *p, uint64_t clock) {
  if (p->walk_threshold == UINT64_MAX) return true;
  uint64_t x = clock ^ p->walk_salt;
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return (x ^ (x >> 31)) < p->walk_threshold;
}

/* The name at c of a comma-separated class list (spec.classes): its length
 * in *len; returns where the next one starts ("" after the last). */
static inline const char *prof_class_list_next(const char *c, size_t *len) {
  const char *end = strchr(c, ',');
  *len = end ? (size_t)(end - c) : strlen(c);
  return c + *len + (end ? 1 : 0);
}

/* With a class filter, whether cls is in it, as far as known: 1 yes, 2
 * no, 0 not looked up yet (a class registered since; class_selected in
 * sampler.c resolves it, on the main thread). */
static inline int prof_sampler_class_state(const eph_profiler *p, eph_class_id cls) {
  if (!p->spec.classes[0]) return 1;
  return cls < p->class_state_len ? p->class_state[cls] : 0;
}
/* How many allocated objects a sample of this size stands for. */
static inline double prof_sampler_weight(const eph_profiler *p, uint64_t size) {
  return p->spec.sample_bytes ? ephs_byte_weight(size, p->spec.sample_bytes) : p->count_weight;
}

/* mode_gc.c */
eph_status prof_gc_mode_start(eph_profiler *p, eph_error *err);
void prof_gc_mode_free(eph_profiler *p);
void prof_gc_mode_track(eph_profiler *p, eph_value obj, uint64_t birth);
void prof_gc_mode_collect(eph_profiler *p, eph_gc_kind kind);
void prof_gc_mode_stop(eph_profiler *p);
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
 * call, as far as its spare slots go; from gc mode's second thread while
 * the mutator runs. */
void prof_gc_spare_blocks(eph_profiler *p, size_t entries);
size_t prof_gc_spare_memory(eph_profiler *p);

/* gc_eden.c */
/* CPUs this process may run on (its affinity mask, which taskset and
 * container cpusets narrow), or those online if that is unknown. */
long prof_usable_cpus(void);
void prof_gc_walk_start(eph_profiler *p);
void prof_gc_walk_on_alloc(void *data, eph_heap *h, eph_value obj);
size_t prof_gc_settle_eden(eph_profiler *p, bool full, const eph_stamp *now, size_t keep, bool span_open);
/* Ends a walk of the last scavenge's eden still running on the second
 * thread (eden pairs): at the next collection's start and the stop. */
void prof_gc_walk_finish(eph_profiler *p);
/* The collection's end event is in the file: a walk running on may write
 * its records from now on (on_gc_end, after the event). */
void prof_gc_walk_note_gc_end(eph_profiler *p);
/* The writer's memory, as the main thread may read it while a walk runs on. */
size_t prof_writer_memory(eph_profiler *p);
void prof_gc_eden_free(eph_profiler *p);
size_t prof_gc_eden_memory(const eph_profiler *p); /* bytes the split walk holds */

/* mode_merlin.c */
eph_status prof_merlin_mode_start(eph_profiler *p, eph_error *err);
/* observer.on_alloc and on_store, installed directly (data: the profiler) */
void prof_merlin_on_alloc(void *data, eph_heap *h, eph_value obj);
void prof_merlin_on_store(void *data, eph_heap *h, eph_value obj, size_t i, eph_value old, eph_value new_value);
void prof_merlin_on_gc_start(eph_profiler *p);
void prof_merlin_on_collect(eph_profiler *p, eph_gc_kind kind);
void prof_merlin_note_gc(eph_profiler *p, eph_gc_kind kind);
void prof_merlin_mode_stop(eph_profiler *p);
void prof_merlin_before_stop(eph_profiler *p);

/* stop_records.c: Merlin's records at the stop, filled here and stamped and
 * encoded on this thread and a helper's.  begin: false with threads=1 (by
 * default on one CPU) or when out of memory (the records are then written
 * one at a time); room and filled give places for the next records, in
 * order, and count them; flush writes all taken (before the clock tables
 * change); end flushes and ends the helper. */
typedef struct prof_stop_records prof_stop_records;
bool prof_stop_records_begin(eph_profiler *p);
/* Room for records of kind `kind` in the block being filled: where the
 * next goes, and in *room how many fit there (at least one).  The caller
 * fills some of them in place (not copied from its stack: a copy of a
 * record just written field by field stalls on store forwarding), then
 * tells prof_stop_records_filled how many, before it asks again; between
 * the two, a record costs the caller no call. */
eph_clocked_record *prof_stop_records_room(eph_profiler *p, eph_death_kind kind, size_t *room);
void prof_stop_records_filled(eph_profiler *p, eph_death_kind kind, size_t n);
void prof_stop_records_flush(eph_profiler *p);
void prof_stop_records_end(eph_profiler *p);
size_t prof_stop_records_memory(const eph_profiler *p); /* its blocks and the helper's fork */
uint32_t prof_site_id_slow(eph_profiler *p, const eph_site *s);
uint32_t prof_class_id_slow(eph_profiler *p, eph_class_id cls);
/* The profile's id of site s, or 0 if it has none yet (changes nothing). */
uint32_t prof_site_find(const eph_profiler *p, const eph_site *s);
/* The same from another thread while this one runs (sites_lock). */
uint32_t prof_site_find_shared(eph_profiler *p, const eph_site *s);

/* Whether class cls is declared in the file (its id is then cls). */
static inline bool prof_class_written(const eph_profiler *p, eph_class_id cls) {
  return cls < p->class_written_len && p->class_written[cls];
}

/* The file's id of a class, declaring it in the file on first use. */
static inline uint32_t prof_class_id(eph_profiler *p, eph_class_id cls) {
  if (prof_class_written(p, cls)) return cls;
  return prof_class_id_slow(p, cls);
}

/* The profile's id of a site (0: none); a direct-mapped cache in front of
 * the site map, since every sample asks. */
static inline struct prof_site_cache_entry *prof_site_cache_entry(struct prof_site_cache_entry *cache, const eph_site *s) {
  return &cache[((uintptr_t)s >> 4) & (SITE_CACHE - 1)];
}
static inline uint32_t prof_site_id(eph_profiler *p, const eph_site *s) {
  if (!s) return 0;
  struct prof_site_cache_entry *c = prof_site_cache_entry(p->site_cache, s);
  if (c->site == s) return c->id;
  uint32_t id = prof_site_id_slow(p, s);
  c->site = s;
  c->id = id;
  return id;
}

/* stacks.c: the site id of site s (id `site`) reached through the marked
 * calls, a stack of its own; `site` itself when that fails. */
uint32_t prof_stack_site(eph_profiler *p, const eph_site *s, uint32_t site);
void prof_stacks_free(eph_profiler *p);

/* The birth word (clock t | the allocation's site id) of a new sample,
 * counted.  A site id beyond 16 bits is stored as 0, unknown.  With calls
 * marked (EPH_CALLER, stacks=N), the site is the site's stack. */
static inline uint64_t prof_birth_at(eph_profiler *p, uint64_t t) {
  const eph_site *s = eph_heap_site(p->h);
  uint32_t site = prof_site_id(p, s);
  if (EPH_UNLIKELY(p->ncallers != 0) && site) site = prof_stack_site(p, s, site);
  p->stats.samples++;
  return (t & BIRTH_MASK) | (uint64_t)(site > SITE_MAX ? 0 : site) << BIRTH_BITS;
}

/* The same at the clock now, which may take a clock point. */
static inline uint64_t prof_birth(eph_profiler *p) {
  uint64_t t = prof_clock(p);
  uint64_t birth = prof_birth_at(p, t);
  prof_clocks_tick(p, t);
  return birth;
}

/* A record's fields as the file has them: the profile's class id, the
 * site and clock of the birth word, the sampler's weight. */
static inline eph_batch_clocked_record prof_batch_entry(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth) {
  return (eph_batch_clocked_record){.class_id = prof_class_id(p, cls), .site_id = (uint32_t)(birth >> BIRTH_BITS),
                                    .size = size, .weight = prof_sampler_weight(p, size), .birth = birth & BIRTH_MASK};
}

/* Inline: gc mode writes a record for every object it sees die.  Where
 * the writer keeps a replica of the clock tables (finalization mode's
 * finalisers), the birth goes as a point of the byte clock, stamped on
 * the writer's thread. */
static inline void prof_batch_record_of(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth,
                                        bool until_birth) {
  eph_batch_clocked_record r = prof_batch_entry(p, cls, size, birth);
  eph_status st;
  if (p->clocks_in_writer) {
    st = eph_writer_batch_record_clocked(p->out, r.class_id, r.site_id, r.size, r.weight, r.birth, until_birth);
  } else {
    eph_stamp b = prof_clocks_stamp_at(p, r.birth);
    st = eph_writer_batch_record(p->out, r.class_id, r.site_id, r.size, r.weight, &b, until_birth);
  }
  if (EPH_UNLIKELY(st != EPH_OK)) prof_write_error(p, st);
  prof_count_batch(p, 1);
}

/* signals.c: eph_profile_stop calls prof_signals_detach first (true if the
 * profile held the signals), and prof_signals_release last, once the file is
 * closed and p freed (it may end the process: sigstop.h). */
eph_status prof_signals_attach(eph_profiler *p, eph_error *err); /* eph_profile_stop_on_signals */
bool prof_signals_detach(eph_profiler *p);
void prof_signals_release(const char *out, const eph_profile_stats *final);

/* mode_finalization.c */
eph_status prof_fin_mode_start(eph_profiler *p, eph_error *err);
void prof_fin_mode_track(eph_profiler *p, eph_value obj, uint64_t birth);
void prof_fin_mode_before_stop(eph_profiler *p);
void prof_fin_mode_collect_at_stop(eph_profiler *p);
void prof_fin_mode_stop(eph_profiler *p);
/* At 100 % with pretenuring, young samples are armed in runs: at sample
 * points (prof_fin_walk_on_alloc) and when a collection begins
 * (on_gc_start calls prof_fin_walk_arm). */
void prof_fin_walk_start(eph_profiler *p);
void prof_fin_walk_on_alloc(void *data, eph_heap *h, eph_value obj);
void prof_fin_walk_arm(eph_profiler *p);

#endif
