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
  lt_entry *recs;  /* payloads; free ones are chained through birth_bytes */
  uint32_t recs_cap, recs_used;
  uint32_t free_head; /* 1 + index of the first free payload, 0: none */
} lt_table;

typedef struct lt_site_slot {
  const char *source; /* Lua's string, used as a key only */
  char *file;         /* our copy of the name written to the file */
  int line, linedefined;
  uint32_t id;
} lt_site_slot;

typedef struct lt_tracker lt_tracker;

#define LT_FILTER_SIZE (1u << 14)
static inline size_t lt_filter_slot(const void *p) {
  uintptr_t x = (uintptr_t)p;
  return (size_t)((x >> 4) ^ (x >> 18)) & (LT_FILTER_SIZE - 1);
}

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
  /* the allocator we wrap, and where our own memory comes from */
  lua_Alloc inner;
  void *inner_ud;
  lua_State *L; /* the main thread */
  void *main_block; /* the block holding L and the global state: freed last by lua_close */
  void **sentinel_slot, **closer_slot; /* payloads of the live sentinel and closer (hold t) */

  /* clocks */
  uint64_t bytes;   /* bytes allocated by Lua since attach: new blocks + growth */
  uint64_t objects; /* objects allocated since attach */
  uint64_t internal_objects; /* of which the profiler's own */
  uint32_t cycles;  /* GC cycles completed (sentinel) */
  uint64_t cycle_bytes, cycle_ns; /* clocks when the last cycle completed */
  uint64_t t0_ns, cpu0_ns;
  uint64_t fine_ns;     /* the last exact reading of CLOCK_MONOTONIC (absolute) */
  uint32_t fine_countdown; /* stamps until the next exact reading */
  bool summary;  /* print lt_summary when finishing */
  bool finished;
  char gcmode[64];
  uint64_t heap, peak_heap; /* bytes in use, as Lua counts them */

  /* sampler */
  int64_t countdown;
  bool by_bytes;
  uint64_t rng;

  /* state */
  bool closing;  /* lua_close is freeing everything: deaths are censored */
  bool detached; /* no more records */
  bool internal; /* the profiler is allocating its own Lua objects */
  uint32_t closer_gen;

  lt_options opt;
  lt_table live;
  /* counting filter over the live samples' addresses (in L1): a free looks
   * the table up only if its counter is non-zero; 255 sticks */
  uint8_t filter[LT_FILTER_SIZE];

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
  uint32_t tag_mask; /* base tags that are sampled (from class_mask) */
};

/* --- table.c --- */
/* Memory of the profiler's own structures comes from the wrapped allocator,
 * outside Lua's accounting.  NULL on failure. */
void *lt_mem_alloc(lt_tracker *t, size_t size);
void lt_mem_free(lt_tracker *t, void *p, size_t size);
/* Inserts e (e->ptr not present); false if the table could not grow. */
bool lt_table_insert(lt_tracker *t, const void *ptr, const lt_entry *e);
/* Removes ptr into *out; false if absent. */
bool lt_table_remove(lt_tracker *t, const void *ptr, lt_entry *out);
/* Calls f on every live entry (the table must not change meanwhile). */
void lt_table_each(lt_tracker *t, void (*f)(lt_tracker *, const void *, const lt_entry *, void *), void *arg);
void lt_table_free(lt_tracker *t);

/* --- sampler.c --- */
void lt_sampler_init(lt_tracker *t);
/* Called when the countdown ran out on an object of `size` bytes: true if
 * this object is a sample (then *weight is what it stands for); re-arms. */
bool lt_sampler_take(lt_tracker *t, size_t size, double *weight);

/* --- alloc.c --- */
void *lt_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
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
