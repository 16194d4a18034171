/*
 * adapter.h — the runtime adapter core: what every adapter that profiles
 * the objects of a language runtime needs besides the hooks of its runtime.
 * Lua's adapter (src/runtime/lua/) uses it; a JVMTI agent and a Ruby adapter
 * are meant to.  docs/runtime.md describes the contract: what an adapter
 * supplies (births, deaths, cycle ends, sites) and what the core does (the
 * SPEC, the sampler, the byte, wall and cycle clocks, the records, the
 * file, the summary, SIGINT/SIGTERM, the stop).
 * Layer: runtime adapters, above sampling and format, beside the profiler
 * (docs/architecture.md).  Nothing here names a runtime: no lua_Alloc, no
 * object layout, no header in front of objects.
 *
 * One rt_session per profiled runtime instance (a Lua state, a JVM),
 * embedded in the adapter's own structure, zero-filled.  Its calls are not
 * thread-safe: an adapter whose runtime calls it from several threads
 * serialises them.  Files:
 *   options.c  the SPEC (the heap profiler's syntax, mode=gc only)
 *   session.c  open, finish, the sessions of the process (finished at
 *              exit), SIGINT/SIGTERM, the summary, cycle ends
 *   record.c   a record written when a sample dies (or is censored)
 *   sampler.c  1/N, every:N and bytes:B gaps (src/sampling)
 *   clock.c    births in wall time and cycles, from the clock tables
 *   marks.c    a bitmap of addresses (which blocks are samples), own pages
 *   sites.c    site and call-stack interning, written to the file
 */
#ifndef EPH_RUNTIME_ADAPTER_H
#define EPH_RUNTIME_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ephemera/format.h"
#include "format/writer_profiler.h"
#include "sampling/clock_table.h"
#include "sampling/sampling.h"
#include "sampling/sigstop.h"

#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT_ALWAYS_INLINE static inline __attribute__((always_inline))

typedef struct rt_session rt_session;

/* Where the core's small structures (sites, stacks) come from: realloc-like
 * (ptr NULL: a new block; nsize 0: a free; osize the block's size).  Lua's
 * is the allocator it wraps: lua_Alloc has this very signature. */
typedef void *rt_mem_fn(void *ud, void *ptr, size_t osize, size_t nsize);

/* --- options ------------------------------------------------------------------- */

typedef struct rt_options {
  uint64_t sample_every; /* 1 = every object */
  bool sample_fixed;     /* every:N: a fixed gap instead of geometric gaps */
  uint64_t sample_bytes; /* bytes:B; 0 = count sampling */
  uint64_t seed;
  bool compress;
  bool sites;
  unsigned stacks;       /* stacks=N: frames kept at a sampled allocation (2..256); 0 = the site alone */
  bool summary;          /* print the summary (and the runtime's advice) on stderr when finished */
  uint32_t class_mask;   /* bit per class id of the runtime's table; 0 = all */
  bool fresh_state;      /* attached before the program ran: every death of what it makes is seen */
  char out[1024];
} rt_options;

/* --- the runtime ------------------------------------------------------------------ */

/* What the core knows of the runtime it profiles: names, a fixed table of
 * classes (a runtime with open-ended classes declares more with
 * rt_class_declare; the classes= filter covers the table only), and two
 * calls back. */
typedef struct rt_runtime {
  const char *name;  /* "lua": messages say "lua profile" */
  const char *title; /* "Lua": "does not apply to Lua", "unknown Lua class" */
  const char *const *class_names; /* by class id; [0] unused; declared to the file when it opens */
  uint32_t nclasses;              /* ids 1 .. nclasses - 1 (at most 31) */
  const uint32_t *class_also;     /* by class id: more classes classes= selects with it (NULL: none) */
  const char *classes_known;      /* the class names an error about classes= lists */
  const char *mode_note;          /* why only mode=gc applies (after "does not apply to TITLE: ") */
  /* At rt_finish, while the samples are intact: writes a censored record
   * for every sample still alive (rt_emit with EPH_DEATH_CENSORED). */
  void (*censor_live)(rt_session *s);
  /* After the summary's lifetimes (when there are objects): the runtime's
   * own lines, e.g. its collector advice.  NULL: none. */
  void (*summary_tail)(const rt_session *s, FILE *out);
} rt_runtime;
#define RT_CLASSES_MAX 32

/* --- a sample's birth ---------------------------------------------------------- */

/* What a sample carries from its birth to its death: 16 bytes, kept where
 * the adapter likes (Lua: in a header in front of the object; a JVM agent:
 * behind the object's tag).  Its birth in wall time and cycles comes from
 * the clock tables when its record is written. */
typedef struct rt_sample {
  uint64_t birth;     /* byte clock at its birth: also the record's id */
  uint64_t size_site; /* size (low 40 bits) | site id (high 24 bits; 0: none or too many sites) */
} rt_sample;
#define RT_SIZE_BITS 40
#define RT_SIZE_MASK ((UINT64_C(1) << RT_SIZE_BITS) - 1)
#define RT_SITE_MAX ((UINT32_C(1) << (64 - RT_SIZE_BITS)) - 1)
static inline void rt_sample_set(rt_sample *h, uint64_t birth, uint64_t size, uint32_t site) {
  h->birth = birth;
  h->size_site = size | (uint64_t)(site <= RT_SITE_MAX ? site : 0) << RT_SIZE_BITS;
}
static inline uint64_t rt_sample_size(const rt_sample *h) { return h->size_site & RT_SIZE_MASK; }
static inline uint32_t rt_sample_site(const rt_sample *h) { return (uint32_t)(h->size_site >> RT_SIZE_BITS); }

/* --- marks: a bitmap of addresses ------------------------------------------------- */

/* Which addresses are samples (marks.c): a bit per 8-byte granule of
 * address space, by 16 MiB region, in pages of its own.  For runtimes whose
 * objects do not move (Lua's blocks; Ruby's slots, unless compacted). */
#define RT_MARK_GRANULE_SHIFT 3
#define RT_MARK_REGION_SHIFT 24
#define RT_MARK_REGION_WORDS ((size_t)1 << (RT_MARK_REGION_SHIFT - RT_MARK_GRANULE_SHIFT - 6))
#define RT_MARK_TOP_LEN ((size_t)1 << (sizeof(void *) == 8 ? 47 - RT_MARK_REGION_SHIFT : 32 - RT_MARK_REGION_SHIFT))
typedef struct rt_marks { /* the top table (region -> bitmap or NULL) is s->marks_top */
  uint32_t *regions;      /* the regions that have a bitmap */
  size_t nregions, regions_cap;
} rt_marks;
static inline size_t rt_mark_word(uintptr_t a) {
  return (size_t)(a >> (RT_MARK_GRANULE_SHIFT + 6)) & (RT_MARK_REGION_WORDS - 1);
}
static inline unsigned rt_mark_bit(uintptr_t a) { return (unsigned)(a >> RT_MARK_GRANULE_SHIFT) & 63u; }

/* --- sites ------------------------------------------------------------------------ */

typedef struct rt_site_slot {
  const void *key;  /* the runtime's identity of the code (Lua: its source string): a key only */
  char *file;       /* our copy of the name written to the file */
  int line, aux;
  uint32_t id;
} rt_site_slot;

/* A site as the runtime finds it: a key, a line and one more number (Lua:
 * the source string, the line, the function's first line; a JVM: the
 * method, the line, 0) and the file named in the profile, also compared
 * (it guards against a key freed and another made at its address). */
typedef struct rt_site_key {
  const void *key;
  int line, aux;
  const char *file;
} rt_site_key;

/* --- the session ---------------------------------------------------------------------- */

struct rt_session {
  /* --- read by every allocation: kept together, first --- */
  uint64_t **marks_top; /* region -> its mark bitmap (marks.c) */
  int64_t countdown;    /* sampler: objects (or bytes) until the next sample */
  uint64_t bytes;       /* the byte clock: bytes allocated since attach (the adapter advances it) */
  int64_t heap;         /* bytes in use, as the runtime counts them */
  int64_t peak_heap;    /* the largest heap seen before a decrease (rt_peak_heap adds the current one) */
  uint64_t objects;     /* objects allocated since attach */

  /* clocks */
  uint64_t internal_objects; /* of the objects, the adapter's own */
  uint64_t internal_mark;    /* objects when the outermost rt_internal_begin ran */
  uint32_t cycles;           /* GC cycles completed (rt_cycle_end) */
  uint64_t cycle_bytes, cycle_ns; /* clocks when the last cycle completed */
  uint64_t t0_ns, cpu0_ns;
  uint64_t fine_ns;          /* the last exact reading of CLOCK_MONOTONIC (absolute) */
  uint32_t fine_countdown;   /* stamps until the next exact reading */
  bool summary;              /* print rt_summary when finishing */
  bool finished;
  char gcmode[64];           /* the collector's configuration, for the metadata and the summary */

  /* sampler */
  bool by_bytes;
  int64_t fixed_gap;   /* count sampling with a fixed gap (every:N, 1/1): the gap; else 0 */
  double count_weight; /* count sampling: what each sample stands for */
  ephs_rng rng;        /* the sampling core's stream (src/sampling) */

  /* state */
  bool on_signals; /* holds SIGINT and SIGTERM until its profile is finished (rt_finish_on_signals) */
  bool closing;    /* the runtime is tearing down: deaths are censored */
  bool detached;   /* no more records */
  bool internal;   /* the adapter is allocating its own objects */

  const rt_runtime *rt;
  rt_options opt;
  rt_marks marks;     /* the sampled blocks (adapters that mark addresses) */
  uint64_t live;      /* samples alive (the adapter counts them) */
  ephs_clocks clocks; /* clock.c */
  rt_mem_fn *mem; /* where the core's own small structures come from */
  void *mem_ud;

  /* sites and stacks (sites.c) */
  rt_site_slot *sites;
  size_t sites_cap, sites_count;
  struct rt_stack_slot *stacks;
  size_t stacks_cap, stacks_count;

  /* output */
  eph_writer *w;
  /* the writer's current batch (record.c): the death its records share */
  eph_stamp batch_death;
  uint8_t batch_kind;   /* 0: no batch yet */
  uint32_t batch_reuse; /* deaths that may still take its stamp unread (0 after any clock reading) */
  bool write_failed;
  char error[1400];
  uint64_t records, censored, dropped, filtered;
  uint64_t deaths_by_class[RT_CLASSES_MAX];
  double weight_by_class[RT_CLASSES_MAX];
  /* for the summary: lifetimes of freed (not censored) objects, in bytes */
  double life_hist[64];    /* weighted, by floor(log2(lifetime bytes + 1)) */
  double survived_hist[8]; /* weighted, cycles survived: 0,1,2,3,4-7,8-15,16-63,64+ */
  double freed_weight, censored_weight;
};

/* --- options.c ------------------------------------------------------------------------ */

void rt_options_init(rt_options *opt);
/* Parses a SPEC (eph_profile_spec's syntax; only mode=gc, no trace or
 * granule) into opt, plus sites=on|off, summary=on|off, stacks=N and
 * classes= over rt's class table.  Returns false with msg filled. */
bool rt_options_parse(rt_options *opt, const rt_runtime *rt, const char *spec, char *msg, size_t msglen);

/* --- session.c: a session's life ------------------------------------------------------- */

/* The metadata values every runtime's profile carries, from the options:
 * sample ("1/N", "every:N", "bytes:B"), spec (the canonical SPEC) and
 * stacks (N; the pair is written only when stacks are on). */
typedef struct rt_spec_text {
  char sample[64], spec[200], stacks[16];
} rt_spec_text;
void rt_spec_text_of(const rt_options *opt, rt_spec_text *out);

/* Fills a zero-filled s (no I/O): the runtime, the options, the collector's
 * label (NULL: "unknown"), and the allocator of the core's small
 * structures (sites, stacks). */
void rt_session_init(rt_session *s, const rt_runtime *rt, const rt_options *opt, const char *gc_label,
                     rt_mem_fn *mem, void *mem_ud);
/* Opens the profile (opt.out) with these metadata pairs, declares the
 * runtime's classes, maps the marks' top table, starts the clocks (wall
 * time 0 and byte clock 0 now) and the sampler.  False with msg filled
 * (nothing left open). */
bool rt_session_open(rt_session *s, const eph_meta_pair *meta, size_t nmeta, char *msg, size_t msglen);
/* Undoes rt_session_open when the adapter fails to attach after it. */
void rt_session_abort(rt_session *s);
/* The sessions of the process (finished at exit, and on SIGINT/SIGTERM):
 * whether one more fits (at most RT_MAX_SESSIONS), and adding s. */
#define RT_MAX_SESSIONS 64
bool rt_session_room(void);
void rt_session_register(rt_session *s);
/* The runtime is tearing down: deaths from now on are censored. */
static inline void rt_begin_close(rt_session *s) { s->closing = true; }
/* Finishes the profile: censors the live samples (runtime->censor_live)
 * unless samples_gone (their memory was given back), writes the totals,
 * closes the file, prints the summary if asked; from then on the session
 * records nothing (the countdown never runs out).  Returns 0, or -1 with
 * the error in msg.  Idempotent. */
int rt_finish(rt_session *s, bool samples_gone, char *msg, size_t msglen);
/* Takes s out of the sessions of the process and frees the marks (after
 * rt_finish; the adapter then frees the memory holding s). */
void rt_session_release(rt_session *s);
/* How many profiles failed to be written in this process. */
int rt_failures(void);
/* The peak heap so far (the current heap included). */
int64_t rt_peak_heap(const rt_session *s);
/* Prints the lifetime summary (and runtime->summary_tail). */
void rt_summary(const rt_session *s, FILE *out);
/* Declares a class beyond the runtime's table (a name the runtime met). */
bool rt_class_declare(rt_session *s, uint32_t id, const char *name);

/*
 * SIGINT and SIGTERM finish the profile before they end the process
 * (src/sampling/sigstop.h): the handler records the signal; at the next
 * safe point of any session holding them (where the adapter can censor:
 * a sample's birth, a cycle's end), the adapter calls rt_signal_stop,
 * which finishes those sessions as at exit, then raises the signal again
 * and ends the process (exit status 128 + N).  A second signal ends it at
 * once.  over_handlers: also over a handler the host installed.  Returns
 * false with msg filled if a handler cannot be installed.  Released by
 * rt_finish.
 */
bool rt_finish_on_signals(rt_session *s, bool over_handlers, char *msg, size_t msglen);
/* At a safe point with a signal pending: finishes every session holding
 * the signals; the last one ends the process. */
void rt_signal_stop(void);
static inline bool rt_signal_due(const rt_session *s) { return ephs_sigstop_pending() && s->on_signals; }

/* A GC cycle ended (now, at s->bytes): counts it and reads the clocks.
 * False if not counted (closing, detached, or a pending signal made this
 * the stop: rt_signal_stop ran). */
bool rt_cycle_end(rt_session *s);

/* The adapter's own objects in the runtime's heap (made between
 * rt_internal_begin and rt_internal_end): never sampled, left out of the
 * object count.  Nests. */
static inline bool rt_internal_begin(rt_session *s) {
  bool was = s->internal;
  if (!was) {
    s->internal = true;
    s->internal_mark = s->objects;
  }
  return was;
}
static inline void rt_internal_end(rt_session *s, bool was) {
  if (!was) {
    s->internal_objects += s->objects - s->internal_mark;
    s->internal = false;
  }
}

/* --- counts and the sampler (sampler.c) ----------------------------------------------- */

/* A new object or block of n bytes was made: the byte clock, the heap and
 * (for objects) the object count. */
static inline void rt_count_new(rt_session *s, size_t n) {
  s->bytes += n;
  s->heap += (int64_t)n;
  s->objects++;
}
/* The heap decreased by n bytes (the peak is taken before: a maximum is
 * always followed by a decrease or by the end). */
static inline void rt_heap_decrease(rt_session *s, size_t n) {
  int64_t h = s->heap;
  if (h > s->peak_heap) s->peak_heap = h;
  s->heap = h - (int64_t)n;
}
/* Whether an allocation of `step` (1, or its size with bytes:B) is a
 * sample; counts it down if not.  After a sample, rt_sampler_next. */
static inline bool rt_sample_due(rt_session *s, int64_t step) {
  if (RT_UNLIKELY(s->countdown <= step)) return true;
  s->countdown -= step;
  return false;
}
void rt_sampler_init(rt_session *s);
/* Sets the countdown to the next gap (the countdown ran out). */
void rt_sampler_rearm(rt_session *s);
static inline void rt_sampler_next(rt_session *s) {
  if (s->fixed_gap) s->countdown = s->fixed_gap;
  else rt_sampler_rearm(s);
}
/* What a sample of `size` bytes stands for. */
static inline double rt_weight(const rt_session *s, uint64_t size) {
  if (s->by_bytes) return ephs_byte_weight(size, s->opt.sample_bytes);
  return s->count_weight;
}

/* --- the wall clock -------------------------------------------------------------------- */

static inline uint64_t rt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* Record stamps, ns since the session opened: CLOCK_MONOTONIC exactly once
 * every RT_FINE_EVERY stamps (and at every clock point and cycle end); in
 * between, CLOCK_MONOTONIC_COARSE (the same clock as of the last timer
 * tick, read without the TSC: a fifth of the cost).  A stamp is the later
 * of the two readings, so stamps never go backwards and are late by at
 * most min(one tick, the time since the last exact reading): a few
 * microseconds while a program allocates quickly, at most a tick (1-4 ms)
 * after a pause. */
#define RT_FINE_EVERY 64
static inline uint64_t rt_stamp_ns(rt_session *s) {
  uint64_t now;
  if (s->fine_countdown) {
    s->fine_countdown--;
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now < s->fine_ns) now = s->fine_ns;
#else
    now = s->fine_ns = rt_now_ns();
#endif
  } else {
    s->fine_countdown = RT_FINE_EVERY - 1;
    now = rt_now_ns();
    if (now < s->fine_ns) now = s->fine_ns;
    s->fine_ns = now;
  }
  return now - s->t0_ns;
}

/* --- clock.c: the clock tables ---------------------------------------------------------- */

/* Reads the clock at `bytes` (now): called at a sample's birth when
 * bytes >= s->clocks.next_point. */
void rt_clock_mark(rt_session *s, uint64_t bytes);
/* A GC cycle ended (now, at s->bytes): returns its wall stamp, an exact
 * reading, also a clock point (rt_cycle_end calls it). */
uint64_t rt_clock_cycle(rt_session *s);
/* The wall time (ns since attach) and the GC cycles completed (at or
 * before) at a past point of the byte clock (clock_table.h). */
static inline ephs_clock_stamp rt_clock_at(rt_session *s, uint64_t bytes) {
  return ephs_clocks_stamp(&s->clocks, bytes, &s->clocks.cache[0]);
}

/* --- record.c: a sample's record ------------------------------------------------------ */

/* Deaths at one byte clock (a sweep step) share a clock reading: it is
 * read again after this many (rt_emit_inline). */
#define RT_DEATHS_PER_READING 16
/* rt_emit_inline's out-of-line parts (record.c), not for adapters to call. */
void rt_batch_begin(rt_session *s, uint64_t death_ns, uint8_t death_kind);
void rt_tally(rt_session *s, uint32_t cls, double weight, uint8_t death_kind, uint64_t lifetime,
              uint32_t cycles_survived);
void rt_write_failed(rt_session *s);

/*
 * Writes the record of a sample of class cls that died now (death_kind
 * EPH_DEATH_FREED: the collector freed it, alive until the last cycle's
 * end; EPH_DEATH_CENSORED: alive at the end).  Records go to the writer in
 * batches (writer_profiler.h): the deaths of one sweep step share their
 * stamp (no allocation moves the byte clock in between, and the coarse
 * clock moves once a tick), so each record carries only what is its own:
 * class, site, size and birth.  A new batch starts whenever the death
 * stamp or kind changes.  The clock is read for one death in
 * RT_DEATHS_PER_READING of a sweep step, and again after any other
 * reading (a clock point, a cycle's end: clock.c), so no death is stamped
 * before a reading its birth may be placed after.  Inline for the
 * adapters' free paths; rt_emit is the same out of line.
 */
RT_ALWAYS_INLINE void rt_emit_inline(rt_session *s, uint32_t cls, const rt_sample *h, uint8_t death_kind) {
  if (s->opt.class_mask && !(s->opt.class_mask & (1u << cls))) {
    s->filtered++;
    return;
  }
  if (s->write_failed) return;
  uint64_t birth = h->birth, size = h->size_site & RT_SIZE_MASK;
  double weight = rt_weight(s, size);
  ephs_clock_stamp born = rt_clock_at(s, birth);
  uint32_t birth_cycles = born.major;
  eph_stamp b = {.bytes = birth, .wall_ns = born.wall_ns, .full_gcs = birth_cycles};
  bool same =
      death_kind == s->batch_kind && s->bytes == s->batch_death.bytes && s->cycles == s->batch_death.full_gcs;
  if (RT_LIKELY(same && s->batch_reuse)) {
    s->batch_reuse--;
  } else {
    uint64_t death_ns = rt_stamp_ns(s);
    if (!same || death_ns != s->batch_death.wall_ns) rt_batch_begin(s, death_ns, death_kind);
    s->batch_reuse = RT_DEATHS_PER_READING - 1;
  }
  /* alive until its birth if no cycle ended since; else until the batch's
   * alive_until, the last cycle's end (a censored record's: its death) */
  bool freed = death_kind == EPH_DEATH_FREED, until_birth = freed && s->cycles == birth_cycles;
  /* interpolation spreads a pause across its bucket: the birth was before the cycle's end */
  if (freed && !until_birth && b.wall_ns > s->cycle_ns) b.wall_ns = s->cycle_ns;
  eph_status st = eph_writer_batch_record(s->w, cls, (uint32_t)(h->size_site >> RT_SIZE_BITS), size, weight, &b,
                                          until_birth);
  if (RT_UNLIKELY(st != EPH_OK)) {
    rt_write_failed(s);
    return;
  }
  s->records++;
  if (death_kind == EPH_DEATH_CENSORED) s->censored++;
  if (s->summary) rt_tally(s, cls, weight, death_kind, s->bytes - birth, s->cycles - birth_cycles);
}
void rt_emit(rt_session *s, uint32_t cls, const rt_sample *h, uint8_t death_kind);

/* --- marks.c --------------------------------------------------------------------------- */

/* The core's small structures, from the session's allocator.  NULL on failure. */
void *rt_mem_alloc(rt_session *s, size_t size);
void rt_mem_free(rt_session *s, void *p, size_t size);
/* Pages of its own (mmap), zero-filled; NULL on failure.  rt_pages_grow
 * keeps the contents (p unchanged on failure). */
void *rt_pages_alloc(size_t size);
void *rt_pages_grow(void *p, size_t old, size_t size);
void rt_pages_free(void *p, size_t size);
/* Reserves the top table (rt_session_open does); false if it cannot. */
bool rt_marks_init(rt_session *s);
/* Marks p; false if its bitmap cannot be mapped. */
bool rt_mark_slow(rt_session *s, const void *p);
static inline bool rt_mark(rt_session *s, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> RT_MARK_REGION_SHIFT);
  uint64_t *bits = r < RT_MARK_TOP_LEN ? s->marks_top[r] : NULL;
  if (!bits) return rt_mark_slow(s, p);
  bits[rt_mark_word(a)] |= UINT64_C(1) << rt_mark_bit(a);
  return true;
}
static inline void rt_unmark(rt_session *s, const void *p) {
  uintptr_t a = (uintptr_t)p;
  s->marks_top[a >> RT_MARK_REGION_SHIFT][rt_mark_word(a)] &= ~(UINT64_C(1) << rt_mark_bit(a));
}
/* Whether p is marked: the test every free makes (two loads and a bit test). */
static inline bool rt_marked(const rt_session *s, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> RT_MARK_REGION_SHIFT);
  if (r >= RT_MARK_TOP_LEN) return false;
  const uint64_t *bits = s->marks_top[r];
  return bits && (bits[rt_mark_word(a)] >> rt_mark_bit(a) & 1u);
}
/* Calls f on every marked address (the marks must not change meanwhile). */
void rt_marks_each(rt_session *s, void (*f)(rt_session *, void *, void *), void *arg);
void rt_marks_free(rt_session *s);

/* --- sites.c ----------------------------------------------------------------------------- */

/* The site id of k, 0 if it has none yet. */
uint32_t rt_site_find(rt_session *s, const rt_site_key *k);
/* Makes k a new site, named in the file by its file, line and function;
 * 0 when out of ids or memory (the record then has no site). */
uint32_t rt_site_add(rt_session *s, const rt_site_key *k, const char *function);
/* Writes site id's name to the file (a stack's id takes its leaf's name). */
bool rt_site_declare(rt_session *s, uint32_t id, const char *file, int line, const char *function);
/* With stacks=N: the site id of the call stack frames[0..n) (site ids,
 * the allocating frame first; n >= 2), 0 if it has none yet. */
uint32_t rt_stack_find(rt_session *s, const uint32_t *frames, size_t n);
/* Makes it a new site (ids are shared with the sites), named as its leaf,
 * its callers written as a STAK entry (docs/eph-format.md 5.8); 0 when out
 * of ids or memory. */
uint32_t rt_stack_add(rt_session *s, const uint32_t *frames, size_t n, const char *file, int line,
                      const char *function);
/* Frees the tables (rt_finish does). */
void rt_sites_free(rt_session *s);

#endif
