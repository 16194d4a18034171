/*
 * ephlua.h — the Lua 5.4 adapter's internals: a profiler that wraps a
 * state's allocator (lua_Alloc) and writes an .eph profile of the objects
 * the collector creates and frees.  Used by `ephemera lua` (interp.c)
 * and by the loadable module ephemera.so (module.c).  See docs/lua.md.
 * What is not Lua's (the SPEC, the sampler, the clocks, the records and
 * the file, the marks, site interning, the stop) is the runtime adapter
 * core's (src/runtime/adapter.h, docs/runtime.md); this folder holds
 * what reads Lua.
 * Layer: runtime adapters, above sampling and format, beside the profiler
 * (docs/architecture.md).
 *
 * One tracker per lua_State, embedding the core's session.  Files:
 *   alloc.c    the allocator wrapper: births, deaths, the byte clock, the header
 *   gcstate.c  GC cycles and lua_close, read from Lua's collector state
 *   gccount.c  the same via a __gc sentinel, where that layout is not confirmed
 *   gcwrap.c   `ephemera lua`: a look at the collector after every lua_gc call
 *   site.c     allocation sites via lua_getinfo, the pc cache
 *   stack.c    call stacks via lua_getinfo (stacks=N)
 *   session.c  Lua's classes and SPEC, attach / release, the collector advice
 *   interp.c   `ephemera lua`: lua.c's interpreter for one script (interp.h)
 *   module.c   the module ephemera.so
 */
#ifndef EPHLUA_H
#define EPHLUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lua.h>

#include "runtime/adapter.h"

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

/* The header in front of every sampled block: the adapter allocates a
 * sample 16 bytes larger (which keeps Lua's alignment) and gives Lua the
 * address after the header, where the core's mark (rt_mark) is set.  The
 * header is the sample's birth (rt_sample: its byte clock, size and site);
 * its birth in the other clocks (wall time, GC cycles) comes from the
 * clock tables; its class from its type byte when it is freed (the block
 * is intact then). */
typedef rt_sample lt_header;
#define LT_HEADER_SIZE sizeof(lt_header)
static inline lt_header *lt_header_of(void *obj) { return (lt_header *)obj - 1; }

#define LT_PC_CACHE_SIZE 1024u

/* The options: the core's (the SPEC, src/runtime/adapter.h).  fresh_state:
 * attached to a new state, before any Lua function exists (ephemera lua). */
typedef rt_options lt_options;

typedef struct lt_tracker {
  /* the core, first (the core's calls take t itself): the byte clock,
   * counts, sampler, marks, records, file; its first fields are read by
   * every allocator call, with these: */
  rt_session s;
  /* --- read by every allocator call (alloc.c) --- */
  uint32_t tag_mask;  /* base tags that are sampled (from class_mask) */
  const uint8_t *gc_phase; /* Lua's currentwhite and gcstate (gcstate.c); or &gc_key */
  uint16_t gc_key;         /* those two bytes when last seen */
  size_t pending_osize, pending_nsize; /* the call in progress, to undo its counts if it fails */
  /* the allocator we wrap, and where the core's own memory comes from */
  lua_Alloc inner;
  void *inner_ud;
  bool direct;         /* inner is luaL_newstate's l_alloc: call free/malloc/realloc (alloc.c) */

  lua_Alloc installed; /* our allocator installed on the state (lt_alloc_for) */
  lua_State *L; /* the main thread */
  void *main_block; /* the block holding L and the global state: freed last by lua_close */
  void **sentinel_slot, **closer_slot; /* payloads of the live sentinel and closer (hold t) */
  const uint8_t *gc_stop; /* Lua's gcstp (gcstate.c; NULL: not read) */
  uint8_t gc_white;       /* currentwhite after the last atomic phase seen */
  bool gc_sweeping;       /* that collection's end not yet counted */

  /* the site cache (site.c) */
  bool pc_cache_on;
  bool ci_known; /* the state's `ci` field is read directly */
  uint32_t pc_gen; /* the cache's generation: a slot of another one is empty */
  struct lt_pc_slot {
    const void *pc;
    uint32_t site, gen;
  } pc_cache[LT_PC_CACHE_SIZE];
} lt_tracker;

/* The tracker a session of the core belongs to. */
static inline lt_tracker *lt_of(rt_session *s) { return (lt_tracker *)s; }
_Static_assert(offsetof(lt_tracker, s) == 0, "the session is the tracker's first field");

/* --- alloc.c --- */
/* The allocator to install for t (t->direct and t->s.by_bytes set). */
lua_Alloc lt_alloc_for(const lt_tracker *t);
/* The tracker whose allocator L uses, or NULL. */
lt_tracker *lt_tracker_of(lua_State *L);
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
/* Creates the first sentinel and the closer (t->s.internal must be set). */
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
/* The site of a Lua frame (0: no line information, or too many sites). */
uint32_t lt_site_of(lt_tracker *t, const lua_Debug *ar);
/* A frame's name in the file: its file (the script's path, or Lua's
 * short_src for chunks loaded from strings) and its function ("main chunk",
 * "function <file:line>"). */
const char *lt_frame_file(const lua_Debug *ar);
void lt_frame_function(const lua_Debug *ar, char *buf, size_t len);
#define LT_FUNCTION_NAME_MAX (LUA_IDSIZE + 48)

/* --- stack.c --- */
/* With stacks=N: the site of the running allocation with its Lua callers
 * (up to N frames), one site id per distinct stack (rt_stack_find/add);
 * the site alone when no Lua function called it.  0 as lt_site_current. */
uint32_t lt_stack_current(lt_tracker *t);

/* --- session.c --- */
/* Parses a SPEC (rt_options_parse over Lua's classes).  Returns false with
 * msg filled. */
bool lt_options_parse(lt_options *opt, const char *spec, char *msg, size_t msglen);
static inline void lt_options_init(lt_options *opt) { rt_options_init(opt); }
/* Attaches a tracker to L (chains onto its allocator).  meta: extra
 * metadata pairs (may be NULL).  NULL on failure with msg filled. */
lt_tracker *lt_attach(lua_State *L, const lt_options *opt, const char *gcmode, const eph_meta_pair *meta,
                      size_t nmeta, char *msg, size_t msglen);
/* Call before lua_close: frees from now on are censored, not deaths. */
static inline void lt_begin_close(lt_tracker *t) { rt_begin_close(&t->s); }
/* Finishes the profile (rt_finish): censors the live samples (their blocks
 * are still valid unless the state was closed), writes the totals, closes
 * the file; from then on t only passes calls through.  Returns 0, or -1
 * with the error in msg.  Idempotent. */
static inline int lt_finish(lt_tracker *t, bool state_closed, char *msg, size_t msglen) {
  return rt_finish(&t->s, state_closed, msg, msglen);
}
/* Frees t.  state_open: L is still alive; t's allocator is taken out if it
 * is still the state's own (else t stays installed as a pass-through and is
 * not freed). */
void lt_release(lt_tracker *t, bool state_open);

#endif
