/*
 * ephlua.h — the Lua 5.4 adapter's internals: a profiler that wraps a
 * state's allocator (lua_Alloc) and writes an .eph profile of the objects
 * the collector creates and frees.  Used by `ephemera lua` (src/cli/cmd_lua.c)
 * and by the loadable module ephemera.so (module.c).  See docs/lua.md.
 *
 * One tracker per lua_State.  Files:
 *   table.c    the hash table of live sampled blocks
 *   sampler.c  1/N and bytes:B sampling
 *   alloc.c    the allocator wrapper: births, deaths, the byte clock
 *   gccount.c  GC cycles via a self-re-arming __gc sentinel; close detection
 *   site.c     allocation sites via lua_getinfo
 *   session.c  attach / detach, the SPEC, the .eph writer, the summary
 */
#ifndef EPHLUA_H
#define EPHLUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <lua.h>

#include "ephemera/format.h"

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

/* Base type tags as Lua passes them in osize (lua.h / lobject.h). */
#define LT_TAG_FIRST LUA_TSTRING /* 4 */
#define LT_TAG_LAST 10           /* LUA_TPROTO (LUA_NUMTYPES + 1) */

/* One live sampled object: the payload, kept apart from the hash table's
 * keys (48 bytes).  Its weight is not stored: it is a function of the
 * sampling options and the size (lt_weight). */
typedef struct lt_entry {
  uint64_t id;
  uint64_t size;
  uint64_t birth_bytes, birth_ns;
  uint32_t birth_cycles;
  uint32_t site;
  uint8_t tag; /* base type tag at birth */
} lt_entry;

/* A hash-table slot: the block's address (0: empty) and the index of its
 * payload in lt_table.recs. */
typedef struct lt_slot {
  uintptr_t key;
  uint32_t idx;
} lt_slot;

typedef struct lt_table {
  lt_slot *slots;
  size_t cap; /* power of two, or 0 */
  size_t count;
  lt_entry *recs;  /* payloads */
  uint32_t recs_cap, recs_used;
  uint32_t *free_idx; /* the free payloads' indices, a stack (not a list through the
                       * payloads: popping would read a payload that is rarely in cache) */
  uint32_t free_cap, nfree;
} lt_table;

typedef struct lt_site_slot {
  const char *source; /* Lua's string, used as a key only */
  char *file;         /* our copy of the name written to the file */
  int line, linedefined;
  uint32_t id;
} lt_site_slot;

typedef struct lt_tracker lt_tracker;

/* The counting filter over the live samples' addresses: one byte per
 * 64-byte line of addresses, modulo its size, counting the samples that
 * start in it; 255 sticks.  A line rather than a block's 16-byte granule: a
 * sweep freeing neighbouring blocks reads a quarter as many of the filter's
 * cache lines (at 1 % on binary-trees, 60 % fewer L1 misses on it), for a few
 * more false hits (blocks next to a sample), which only cost a table lookup.
 * It starts at LT_FILTER_MIN bytes and doubles (rebuilt from the table)
 * while the live samples exceed 1/LT_FILTER_LOAD of it, up to
 * LT_FILTER_MAX; beyond that it only gets less selective. */
#define LT_FILTER_MIN (1u << 14)
#define LT_FILTER_MAX (1u << 20)
#define LT_FILTER_LOAD 32
static inline size_t lt_filter_slot(size_t mask, const void *p) { return (size_t)((uintptr_t)p >> 6) & mask; }

#define LT_PC_CACHE_SIZE 1024u

typedef struct lt_options {
  uint64_t sample_every; /* 1 = every object */
  bool sample_fixed;     /* every:N: a fixed gap instead of geometric gaps */
  uint64_t sample_bytes; /* bytes:B; 0 = count sampling */
  uint64_t seed;
  bool compress;
  bool sites;
  bool summary;          /* print the summary and advice on stderr when finished */
  uint32_t class_mask;   /* bit per class id; 0 = all */
  bool fresh_state;      /* attached to a new state, before any Lua function exists (ephemera lua) */
  char out[1024];
} lt_options;

struct lt_tracker {
  /* --- read by every allocator call (alloc.c): kept together --- */
  uint8_t *filter;    /* the counting filter (see above): a free looks the table up only if its byte is non-zero */
  size_t filter_mask; /* its size - 1 */
  int64_t countdown;  /* sampler: objects (or bytes) until the next sample */
  uint64_t bytes;     /* bytes allocated by Lua since attach: new blocks + growth */
  int64_t heap;       /* bytes in use, as Lua counts them */
  int64_t peak_heap;  /* the largest heap seen before a decrease (lt_peak_heap adds the current one) */
  uint64_t objects;   /* objects allocated since attach */
  uint32_t tag_mask;  /* base tags that are sampled (from class_mask) */
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
  uint32_t cycles;  /* GC cycles completed (sentinel) */
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
  double log_keep;     /* count sampling: log(1 - 1/N), for the geometric gaps */
  uint64_t rng;

  /* state */
  bool closing;  /* lua_close is freeing everything: deaths are censored */
  bool detached; /* no more records */
  bool internal; /* the profiler is allocating its own Lua objects */
  uint32_t closer_gen;

  lt_options opt;
  lt_table live;

  /* sites */
  bool pc_cache_on; /* see site.c */
  struct lt_pc_slot {
    const void *pc;
    uint32_t site;
  } pc_cache[LT_PC_CACHE_SIZE];
  lt_site_slot *sites;
  size_t sites_cap, sites_count;

  /* output */
  eph_writer *w;
  bool write_failed;
  char error[1400];
  uint64_t next_id, records, censored, dropped, filtered;
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

/* --- table.c --- */
/* Memory of the profiler's own structures comes from the wrapped allocator,
 * outside Lua's accounting.  NULL on failure. */
void *lt_mem_alloc(lt_tracker *t, size_t size);
void lt_mem_free(lt_tracker *t, void *p, size_t size);
/* Inserts ptr (not present) and returns its payload for the caller to fill;
 * NULL if the table could not grow. */
lt_entry *lt_table_insert(lt_tracker *t, const void *ptr);
/* Removes ptr and returns its payload, which stays intact until the next
 * lt_table_insert; NULL if absent. */
const lt_entry *lt_table_remove(lt_tracker *t, const void *ptr);
/* Calls f on every live entry (the table must not change meanwhile). */
void lt_table_each(lt_tracker *t, void (*f)(lt_tracker *, const void *, const lt_entry *, void *), void *arg);
/* Frees the table; the filter is cleared (and shrunk). */
void lt_table_free(lt_tracker *t);
/* The filter: allocated at attach (a one-byte saturated filter if that
 * fails: correct, every free is looked up), freed with the tracker.  The
 * main block's slot is pinned at 255 so that its free (the end of
 * lua_close) reaches the slow path. */
void lt_filter_init(lt_tracker *t);
void lt_filter_free(lt_tracker *t);

/* --- sampler.c --- */
void lt_sampler_init(lt_tracker *t);
/* Called when the countdown ran out (the object is a sample): sets the
 * countdown to the next gap. */
void lt_sampler_rearm(lt_tracker *t);

/* --- alloc.c --- */
/* The allocator to install for t (t->direct and t->by_bytes set). */
lua_Alloc lt_alloc_for(const lt_tracker *t);
/* The peak heap so far (the current heap included). */
int64_t lt_peak_heap(const lt_tracker *t);
uint64_t lt_now_ns(void);
/* The wall clock for record stamps, ns since attach (see alloc.c): exact
 * at least every LT_FINE_EVERY stamps, otherwise the coarse clock. */
uint64_t lt_stamp_ns(lt_tracker *t);
#define LT_FINE_EVERY 64
/* What a sample of `size` bytes stands for. */
double lt_weight(const lt_tracker *t, uint64_t size);
/* The class of a live block with base tag `tag` (reads its type byte). */
uint32_t lt_class_of(const void *ptr, uint8_t tag, bool block_valid);
/* Writes the record of a finished entry. */
void lt_emit(lt_tracker *t, const void *ptr, const lt_entry *e, uint8_t death_kind, bool block_valid);

/* --- session.c, called by the allocator: the free of the main block, the
 * last thing lua_close does.  Finishes and frees t. --- */
void *lt_final_free(lt_tracker *t, void *ptr, size_t osize);

/* --- gccount.c --- */
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
/* How many profiles failed to be written in this process. */
int lt_failures(void);
/* Prints the lifetime summary and the collector advice. */
void lt_summary(const lt_tracker *t, const char *gcmode, FILE *out);

#endif
