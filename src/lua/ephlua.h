/*
 * ephlua.h — the Lua 5.4 adapter's internals: a profiler that wraps a
 * state's allocator (lua_Alloc) and writes an .eph profile of the objects
 * the collector creates and frees.  Used by `ephemera lua` (interp.c)
 * and by the loadable module ephemera.so (module.c).  See docs/lua.md.
 * Layer: Lua adapter, above sampling and format, beside the profiler (docs/architecture.md).
 *
 * One tracker per lua_State.  Files:
 *   marks.c    which blocks are samples (and carry a header); own pages
 *   clock.c    births in wall time and GC cycles, from clock tables
 *   sampler.c  1/N and bytes:B sampling
 *   alloc.c    the allocator wrapper: births, deaths, the byte clock
 *   gcstate.c  GC cycles and lua_close, read from Lua's collector state
 *   gccount.c  the same via a __gc sentinel, where that layout is not confirmed
 *   gcwrap.c   `ephemera lua`: a look at the collector after every lua_gc call
 *   site.c     allocation sites via lua_getinfo
 *   session.c  attach / detach, the SPEC, the .eph writer, the summary
 *   interp.c   `ephemera lua`: lua.c's interpreter for one script (interp.h)
 */
#ifndef EPHLUA_H
#define EPHLUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lua.h>

#include "../sampling/sigstop.h"
#include "ephemera/format.h"
#include "format/writer_profiler.h"
#include "sampling/clock_table.h"
#include "sampling/sampling.h"

/* Class ids written to the file (1-based, dense). */
enum {
  LT_CLS_SHORT_STRING = 1,
  LT_CLS_LONG_STRING,
  LT_CLS_TABLE,
  LT_CLS_LUA_CLOSURE,
  LT_CLS_C_CLOSURE,
  LT_CLS_USERDATA,
  LT_CLS_THREAD,
  LT_CLS_UPVALUE,
  LT_CLS_PROTOTYPE,
  LT_CLS_STRING,   /* a string whose variant byte was not recognised */
  LT_CLS_FUNCTION, /* likewise for closures */
  LT_CLS_COUNT
};

/* Base type tags as Lua passes them in osize (lua.h / lobject.h), and the
 * type bytes of the objects that differ between 5.4 and 5.3 (the module
 * is also built for Lua 5.3 hosts, where upvalues are not objects). */
#define LT_TAG_FIRST LUA_TSTRING /* 4 */
#if LUA_VERSION_NUM >= 504
#define LT_TAG_UPVALUE 9
#define LT_TAG_PROTO 10 /* LUA_TPROTO (LUA_NUMTYPES + 1) */
#else
#define LT_TAG_UPVALUE 0 /* none */
#define LT_TAG_PROTO 9   /* LUA_TPROTO (LUA_NUMTAGS) */
#endif
#define LT_TAG_LAST LT_TAG_PROTO

/* The header in front of every sampled block: the profiler allocates a
 * sample 16 bytes larger (which keeps Lua's alignment) and gives Lua the
 * address after the header.  Its birth in the other clocks (wall time, GC
 * cycles) comes from the clock tables (clock.c); its class from its type
 * byte when it is freed (the block is intact then). */
typedef struct lt_header {
  uint64_t birth;     /* byte clock at its birth: also the record's id */
  uint64_t size_site; /* size (low 40 bits) | site id (high 24 bits; 0: none or too many sites) */
} lt_header;
#define LT_HEADER_SIZE sizeof(lt_header)
#define LT_SIZE_BITS 40
#define LT_SITE_MAX ((UINT32_C(1) << (64 - LT_SIZE_BITS)) - 1)
static inline lt_header *lt_header_of(void *obj) { return (lt_header *)obj - 1; }

/* Which blocks carry a header (marks.c): a bit per 8-byte granule of
 * address space, by 16 MiB region. */
#define LT_MARK_GRANULE_SHIFT 3
#define LT_MARK_REGION_SHIFT 24
#define LT_MARK_REGION_WORDS ((size_t)1 << (LT_MARK_REGION_SHIFT - LT_MARK_GRANULE_SHIFT - 6))
#define LT_MARK_TOP_LEN ((size_t)1 << (sizeof(void *) == 8 ? 47 - LT_MARK_REGION_SHIFT : 32 - LT_MARK_REGION_SHIFT))
typedef struct lt_marks { /* the top table (region -> bitmap or NULL) is t->marks_top */
  uint32_t *regions;  /* the regions that have a bitmap */
  size_t nregions, regions_cap;
} lt_marks;
static inline size_t lt_mark_word(uintptr_t a) {
  return (size_t)(a >> (LT_MARK_GRANULE_SHIFT + 6)) & (LT_MARK_REGION_WORDS - 1);
}
static inline unsigned lt_mark_bit(uintptr_t a) { return (unsigned)(a >> LT_MARK_GRANULE_SHIFT) & 63u; }


typedef struct lt_site_slot {
  const char *source; /* Lua's string, used as a key only */
  char *file;         /* our copy of the name written to the file */
  int line, linedefined;
  uint32_t id;
} lt_site_slot;

typedef struct lt_tracker lt_tracker;

#define LT_PC_CACHE_SIZE 1024u

typedef struct lt_options {
  uint64_t sample_every; /* 1 = every object */
  bool sample_fixed;     /* every:N: a fixed gap instead of geometric gaps */
  uint64_t sample_bytes; /* bytes:B; 0 = count sampling */
  uint64_t seed;
  bool compress;
  bool sites;
  unsigned stacks;       /* stacks=N: Lua frames kept at a sampled allocation (2..256); 0 = the site alone */
  bool summary;          /* print the summary and advice on stderr when finished */
  uint32_t class_mask;   /* bit per class id; 0 = all */
  bool fresh_state;      /* attached to a new state, before any Lua function exists (ephemera lua) */
  char out[1024];
} lt_options;

struct lt_tracker {
  /* --- read by every allocator call (alloc.c): kept together --- */
  uint64_t **marks_top; /* region -> its mark bitmap (marks.c): a free is a sample's if its mark is set */
  int64_t countdown;  /* sampler: objects (or bytes) until the next sample */
  uint64_t bytes;     /* bytes allocated by Lua since attach: new blocks + growth */
  int64_t heap;       /* bytes in use, as Lua counts them */
  int64_t peak_heap;  /* the largest heap seen before a decrease (lt_peak_heap adds the current one) */
  uint64_t objects;   /* objects allocated since attach */
  uint32_t tag_mask;  /* base tags that are sampled (from class_mask) */
  const uint8_t *gc_phase; /* Lua's currentwhite and gcstate (gcstate.c); or &gc_key */
  uint16_t gc_key;         /* those two bytes when last seen */
  size_t pending_osize, pending_nsize; /* the call in progress, to undo its counts if it fails */
  /* the allocator we wrap, and where our own memory comes from */
  lua_Alloc inner;
  void *inner_ud;
  lua_Alloc installed; /* our allocator installed on the state (lt_alloc_for) */
  bool direct;         /* inner is luaL_newstate's l_alloc: call free/malloc/realloc (alloc.c) */
  lua_State *L; /* the main thread */
  void *main_block; /* the block holding L and the global state: freed last by lua_close */
  void **sentinel_slot, **closer_slot; /* payloads of the live sentinel and closer (hold t) */

  /* clocks */
  uint64_t internal_objects; /* of the objects, the profiler's own */
  uint64_t internal_mark;    /* objects when the outermost lt_internal_begin ran */
  uint32_t cycles;  /* GC cycles completed (gcstate.c, or the sentinel) */
  const uint8_t *gc_stop; /* Lua's gcstp (gcstate.c; NULL: not read) */
  uint8_t gc_white;       /* currentwhite after the last atomic phase seen */
  bool gc_sweeping;       /* that collection's end not yet counted */
  uint64_t cycle_bytes, cycle_ns; /* clocks when the last cycle completed */
  uint64_t t0_ns, cpu0_ns;
  uint64_t fine_ns;     /* the last exact reading of CLOCK_MONOTONIC (absolute) */
  uint32_t fine_countdown; /* stamps until the next exact reading */
  bool summary;  /* print lt_summary when finishing */
  bool finished;
  char gcmode[64];

  /* sampler */
  bool by_bytes;
  int64_t fixed_gap; /* count sampling with a fixed gap (every:N, 1/1): the gap; else 0 */
  double count_weight; /* count sampling: what each sample stands for */
  ephs_rng rng; /* the sampling core's stream (src/sampling) */

  /* state */
  bool on_signals; /* holds SIGINT and SIGTERM until its profile is finished (lt_finish_on_signals) */
  bool closing;  /* lua_close is freeing everything: deaths are censored */
  bool detached; /* no more records */
  bool internal; /* the profiler is allocating its own Lua objects */
  uint32_t closer_gen;

  lt_options opt;
  lt_marks marks;   /* the sampled blocks */
  uint64_t live;    /* how many: the samples with a header still allocated */
  ephs_clocks clocks; /* clock.c */

  /* sites */
  bool pc_cache_on; /* see site.c */
  bool ci_known; /* the state's `ci` field is read directly (site.c) */
  uint32_t pc_gen; /* the cache's generation: a slot of another one is empty */
  struct lt_pc_slot {
    const void *pc;
    uint32_t site, gen;
  } pc_cache[LT_PC_CACHE_SIZE];
  lt_site_slot *sites;
  size_t sites_cap, sites_count;
  struct lt_stack_slot *stacks; /* stack.c: interned call stacks */
  size_t stacks_cap, stacks_count;

  /* output */
  eph_writer *w;
  /* the writer's current batch (alloc.c, emit): the death its records share */
  eph_stamp batch_death;
  uint8_t batch_kind; /* 0: no batch yet */
  uint32_t batch_reuse; /* deaths that may still take its stamp unread (0 after any clock reading) */
  bool write_failed;
  char error[1400];
  uint64_t records, censored, dropped, filtered;
  uint64_t deaths_by_class[LT_CLS_COUNT];
  double weight_by_class[LT_CLS_COUNT];
  /* for the summary: lifetimes of freed (not censored) objects, in bytes */
  double life_hist[64];    /* weighted, by floor(log2(lifetime bytes + 1)) */
  double survived_hist[8]; /* weighted, cycles survived: 0,1,2,3,4-7,8-15,16-63,64+ */
  double freed_weight, censored_weight;
};

/* The profiler's own Lua objects (sentinels, closers, their metatables):
 * made between lt_internal_begin and lt_internal_end, never sampled, left
 * out of the object count.  Nests. */
static inline bool lt_internal_begin(lt_tracker *t) {
  bool was = t->internal;
  if (!was) {
    t->internal = true;
    t->internal_mark = t->objects;
  }
  return was;
}
static inline void lt_internal_end(lt_tracker *t, bool was) {
  if (!was) {
    t->internal_objects += t->objects - t->internal_mark;
    t->internal = false;
  }
}

/* --- marks.c --- */
/* Memory of the profiler's own small structures comes from the wrapped
 * allocator, outside Lua's accounting.  NULL on failure. */
void *lt_mem_alloc(lt_tracker *t, size_t size);
void lt_mem_free(lt_tracker *t, void *p, size_t size);
/* Pages of its own (mmap), zero-filled; NULL on failure.  lt_pages_grow
 * keeps the contents (p unchanged on failure). */
void *lt_pages_alloc(size_t size);
void *lt_pages_grow(void *p, size_t old, size_t size);
void lt_pages_free(void *p, size_t size);
/* Reserves the top table; false if it cannot. */
bool lt_marks_init(lt_tracker *t);
/* Marks p as a block with a header; false if its bitmap cannot be mapped. */
bool lt_mark_slow(lt_tracker *t, const void *p);
static inline bool lt_mark(lt_tracker *t, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> LT_MARK_REGION_SHIFT);
  uint64_t *bits = r < LT_MARK_TOP_LEN ? t->marks_top[r] : NULL;
  if (!bits) return lt_mark_slow(t, p);
  bits[lt_mark_word(a)] |= UINT64_C(1) << lt_mark_bit(a);
  return true;
}
static inline void lt_unmark(lt_tracker *t, const void *p) {
  uintptr_t a = (uintptr_t)p;
  t->marks_top[a >> LT_MARK_REGION_SHIFT][lt_mark_word(a)] &= ~(UINT64_C(1) << lt_mark_bit(a));
}
/* Whether p is marked: the test every free makes. */
static inline bool lt_marked(const lt_tracker *t, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> LT_MARK_REGION_SHIFT);
  if (r >= LT_MARK_TOP_LEN) return false;
  const uint64_t *bits = t->marks_top[r];
  return bits && (bits[lt_mark_word(a)] >> lt_mark_bit(a) & 1u);
}
/* Calls f on every marked address (the marks must not change meanwhile). */
void lt_marks_each(lt_tracker *t, void (*f)(lt_tracker *, void *, void *), void *arg);
void lt_marks_free(lt_tracker *t);

/* --- clock.c --- */
/* Starts the tables with a reading at byte 0; fails the profile (t->error)
 * when out of memory, as the other two do. */
void lt_clock_init(lt_tracker *t);
/* Reads the clock at `bytes` (now): called at a sample's birth when
 * bytes >= t->clocks.next_point. */
void lt_clock_mark(lt_tracker *t, uint64_t bytes);
/* A GC cycle ended (now, at t->bytes): returns its wall stamp, an exact
 * reading, also a clock point. */
uint64_t lt_clock_cycle(lt_tracker *t);
/* The wall time (ns since attach) and the GC cycles completed (at or
 * before) at a past point of the byte clock (clock_table.h). */
static inline ephs_clock_stamp lt_clock_at(lt_tracker *t, uint64_t bytes) {
  return ephs_clocks_stamp(&t->clocks, bytes, &t->clocks.cache[0]);
}
void lt_clock_free(lt_tracker *t);

/* --- sampler.c --- */
void lt_sampler_init(lt_tracker *t);
/* Called when the countdown ran out (the object is a sample): sets the
 * countdown to the next gap. */
void lt_sampler_rearm(lt_tracker *t);

/* --- alloc.c --- */
/* The allocator to install for t (t->direct and t->by_bytes set). */
lua_Alloc lt_alloc_for(const lt_tracker *t);
/* The tracker whose allocator L uses, or NULL. */
lt_tracker *lt_tracker_of(lua_State *L);
/* The peak heap so far (the current heap included). */
int64_t lt_peak_heap(const lt_tracker *t);
uint64_t lt_now_ns(void);
/* The wall clock for record stamps, ns since attach (see alloc.c): exact
 * at least every LT_FINE_EVERY stamps, otherwise the coarse clock. */
uint64_t lt_stamp_ns(lt_tracker *t);
#define LT_FINE_EVERY 64
/* Deaths at one byte clock (a sweep step) share a clock reading: it is
 * read again after this many (alloc.c, emit). */
#define LT_DEATHS_PER_READING 16
/* Writes the record of sampled object obj (intact, with its header). */
void lt_emit(lt_tracker *t, void *obj, uint8_t death_kind);

/* --- session.c, called by the allocator: the free of the main block, the
 * last thing lua_close does.  Finishes and frees t. --- */
void *lt_final_free(lt_tracker *t, void *ptr, size_t osize);

/* --- gcstate.c --- */
struct lt_global54;
/* L's global state if its layout is Lua 5.4.4's (lua54_layout.h, checked
 * against the API); NULL otherwise. */
const struct lt_global54 *lt_layout_global(lua_State *L);
/* The collector's mode from its state: 0 incremental, 1 generational, -1
 * unknown layout. */
int lt_layout_gckind(lua_State *L);
/* Starts counting cycles from the collector's state; false (and the watch
 * below disabled) if the layout is not confirmed. */
bool lt_gcstate_attach(lt_tracker *t, lua_State *L);
/* The watched bytes changed: counts a collection whose sweep is over. */
void lt_gc_phase_changed(lt_tracker *t);
/* Called by the allocator before a birth or a death is stamped. */
static inline void lt_gc_watch(lt_tracker *t) {
  uint16_t k;
  memcpy(&k, t->gc_phase, sizeof k);
  if (__builtin_expect(k != t->gc_key, 0)) lt_gc_phase_changed(t);
}

/* --- gccount.c (only where lt_gcstate_attach failed) --- */
/* Creates the first sentinel and the closer (t->internal must be set). */
void lt_gccount_attach(lt_tracker *t, lua_State *L);
/* Makes the live sentinel and closer forget t (before t is freed with the
 * state still open). */
void lt_gccount_detach(lt_tracker *t, lua_State *L);

/* --- site.c --- */
uint32_t lt_site_current(lt_tracker *t);
/* Enables the site cache if every prototype's death will be seen. */
void lt_site_cache_init(lt_tracker *t);
/* A prototype died (or a sample was dropped): forget cached sites. */
void lt_site_cache_flush(lt_tracker *t, bool disable);
void lt_sites_free(lt_tracker *t);
/* The site of a Lua frame (0: no line information, or too many sites). */
uint32_t lt_site_of(lt_tracker *t, const lua_Debug *ar);
/* Declares id as a site named like frame ar (its file, line, function). */
bool lt_site_declare_as(lt_tracker *t, uint32_t id, const lua_Debug *ar);

/* --- stack.c --- */
/* With stacks=N: the site of the running allocation with its Lua callers
 * (up to N frames), one site id per distinct stack, its callers written
 * as a STAK entry (docs/eph-format.md 5.8); the site alone when no Lua
 * function called it.  0 as lt_site_current. */
uint32_t lt_stack_current(lt_tracker *t);
void lt_stacks_free(lt_tracker *t);

/* --- session.c --- */
/* Parses a SPEC (eph_profile_spec syntax; only mode=gc) into opt.  Keys
 * `sites=on|off` is handled here.  Returns false with msg filled. */
bool lt_options_parse(lt_options *opt, const char *spec, char *msg, size_t msglen);
void lt_options_init(lt_options *opt);
/* Attaches a tracker to L (chains onto its allocator).  meta: extra
 * metadata pairs (may be NULL).  NULL on failure with msg filled. */
lt_tracker *lt_attach(lua_State *L, const lt_options *opt, const char *gcmode, const eph_meta_pair *meta,
                      size_t nmeta, char *msg, size_t msglen);
/* Call before lua_close: frees from now on are censored, not deaths. */
void lt_begin_close(lt_tracker *t);
/* Finishes the profile: censors the live entries (their blocks are still
 * valid unless the state was closed), writes the totals, closes the file;
 * from then on t only passes calls through.  Returns 0, or -1 with the
 * error in msg.  Idempotent. */
int lt_finish(lt_tracker *t, bool state_closed, char *msg, size_t msglen);
/* Frees t.  state_open: L is still alive; t's allocator is taken out if it
 * is still the state's own (else t stays installed as a pass-through and is
 * not freed). */
void lt_release(lt_tracker *t, bool state_open);
/*
 * Makes SIGINT and SIGTERM finish the profile before they end the process
 * (src/sampling/sigstop.h): the handler records the signal; at the next
 * sample or GC cycle of any tracker holding them (allocator and __gc
 * sentinel, where the blocks are intact), those trackers are finished as
 * at exit (the live samples censored), then the signal is raised again and
 * ends the process (exit status 128 + N).  A second signal ends it at once.
 * over_handlers: also over a handler the host installed (else only signals
 * left at their default action are taken).  Returns false with msg filled
 * if a handler cannot be installed.  Released by lt_finish.
 */
bool lt_finish_on_signals(lt_tracker *t, bool over_handlers, char *msg, size_t msglen);
/* At a safe point with a signal pending: finishes every tracker holding
 * the signals; the last one ends the process. */
void lt_signal_stop(void);
/* Whether t should call lt_signal_stop at this safe point. */
static inline bool lt_signal_due(const lt_tracker *t) { return ephs_sigstop_pending() && t->on_signals; }

/* How many profiles failed to be written in this process. */
int lt_failures(void);
/* Prints the lifetime summary and the collector advice. */
void lt_summary(const lt_tracker *t, const char *gcmode, FILE *out);

#endif
