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
 * How a mode learns of deaths differs: each is a table of hooks (prof_mode,
 * below) over a state of its own (mode_*.h); sampling, stamps, the tables
 * and the file are shared (profiler.c).
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
#include "mode_finalization.h"
#include "mode_gc.h"
#include "mode_merlin.h"

#define BIRTH_BITS 48
#define BIRTH_MASK ((UINT64_C(1) << BIRTH_BITS) - 1)
#define SITE_MAX 0xFFFFu /* site ids beyond 16 bits are recorded as unknown (0) */

/* Pointer -> id map for allocation sites (open addressing). */
typedef struct site_map {
  const eph_site **keys;
  uint32_t *ids;
  size_t cap, len;
} site_map;

/* Where records are stamped with the clock tables: here (clocks.c), or by
 * the writer's replica of them (eph_writer_clock_start), always or when
 * the writer has a thread of its own. */
typedef enum prof_stamping {
  PROF_STAMP_HERE,
  PROF_STAMP_IN_WRITER,
  PROF_STAMP_ON_WRITER_THREAD,
} prof_stamping;

/*
 * A mode (mode_*.c): how the profile learns of deaths.  One const table
 * per mode, found once at the start (prof_mode_of); profiler.c does what
 * is common and calls the mode through it.  A NULL hook does nothing.
 */
typedef struct prof_mode {
  const char *name;          /* as in the spec (mode=) and the file's metadata */
  unsigned trailer_words;    /* trailer words the heap needs for it (eph_profile_prepare_params) */
  bool traces;               /* may write a trace (trace=on) */
  bool writer_thread;        /* the writer has a thread by default, where a second CPU is usable */
  bool stop_on_writer_thread; /* the stop's records may be encoded there (stop_on_writer_thread) */
  prof_stamping stamping;
  /* Before the observer is added: the mode's state, and its hooks in obs:
   * on_alloc, chosen for the spec and called by the heap directly (the
   * hot path); on_store or store_clock; on_alloc_is_leaf.  Not EPH_OK: no
   * profile. */
  eph_status (*start)(eph_profiler *p, eph_observer *obs, eph_error *err);
  void (*arm)(eph_profiler *p); /* once it is added: the sample points or the eden walk */
  /* Ends what threads of the mode's own write to the file: before the
   * writer's thread starts or stops (a collection's start, the stop). */
  void (*finish_writes)(eph_profiler *p);
  void (*on_gc_start)(eph_profiler *p);
  void (*on_collect)(eph_profiler *p, eph_gc_kind kind);
  void (*on_gc_end)(eph_profiler *p, eph_gc_kind kind); /* before the collection's event is written */
  void (*gc_written)(eph_profiler *p);                  /* after it */
  void (*before_stop)(eph_profiler *p); /* before the stop's last full GC */
  void (*stop)(eph_profiler *p);        /* after it: the records left */
  void (*free)(eph_profiler *p);
  size_t (*memory)(const eph_profiler *p); /* the mode's own memory */
} prof_mode;

extern const prof_mode prof_mode_gc, prof_mode_finalization, prof_mode_merlin, prof_mode_brute;
const prof_mode *prof_mode_of(eph_profile_mode mode);

typedef struct eph_profiler {
  eph_heap *h;
  eph_profile_spec spec;
  const prof_mode *mode;
  eph_observer_reg *obs;      /* the profile's observer on h: profiler.c's hooks, which call the mode's */
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
  bool writer_thread_due;     /* the writer's thread starts at the first collection */
  /* A thread of the mode's writes the file (gc mode's walk running on,
   * gc_eden.c): only it may look at the writer, whose memory is counted
   * as it was when lent. */
  bool out_lent;
  size_t out_lent_memory;
  bool on_signals;            /* SIGINT and SIGTERM stop this profile (signals.c) */

  /* the mode's own state: brute mode's is gc mode's */
  union {
    prof_gc gc;
    prof_fin fin;
    prof_merlin merlin;
  };

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
/* Around a collection's pause (the modes' on_gc_start and on_gc_end):
 * a wall-clock sample before it, so that births just before it are
 * interpolated up to there, not into the pause; and after it, with the
 * collection counted. */
void prof_clocks_before_pause(eph_profiler *p);
void prof_clocks_after_pause(eph_profiler *p, eph_gc_kind kind);
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
void prof_sampler_arm_every(eph_profiler *p);
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

/* CPUs this process may run on (its affinity mask, which taskset and
 * container cpusets narrow), or those online if that is unknown. */
long prof_usable_cpus(void);
/* The writer's memory, as this thread may read it (out_lent). */
size_t prof_writer_memory(const eph_profiler *p);

/* profiler.c: the file's class and site tables */
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

#endif
