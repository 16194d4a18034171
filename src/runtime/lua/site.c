/*
 * site.c — where a sampled object was allocated: the source:line of the
 * innermost running Lua function of the main thread, found with
 * lua_getstack/lua_getinfo("Sl") from inside the allocator.
 *
 * Why this is safe: "S" and "l" only read the CallInfo chain and the
 * function's prototype (source, line info); they neither allocate nor push
 * anything, and the chain is consistent whenever an object is allocated
 * (a new CallInfo is linked only after its own allocation).  The line is
 * the one of the last instruction the VM saved; Lua saves the pc before
 * every instruction that may allocate except OP_NEWTABLE/OP_CONCAT-style
 * fast paths, where the line can be an earlier one of the same function.
 *
 * What is attributed (docs/lua.md):
 *   - objects made by Lua code, and by C functions it calls (string.rep,
 *     table.concat, setmetatable...): the calling Lua line (up to 3 C frames
 *     are skipped);
 *   - objects made inside a coroutine: the line that resumed it (the main
 *     thread's stack is the only one the allocator knows; it is stable
 *     while the coroutine runs);
 *   - objects made by finalisers (__gc) during a collection: the
 *     finaliser's line.
 * With stacks=N (stack.c) the callers' frames are found the same way.
 * Not attributed (site 0): objects made while no Lua function runs (state
 * creation, the host's C calls at top level, luaL_openlibs), during
 * lua_close, and the profiler's own objects.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "runtime/lua/ephlua.h"
#include "runtime/lua/lua54_layout.h"

const char *lt_frame_file(const lua_Debug *ar) {
  return ar->source[0] == '@' || ar->source[0] == '=' ? ar->source + 1 : ar->short_src;
}

void lt_frame_function(const lua_Debug *ar, char *buf, size_t len) {
  if (ar->what[0] == 'm')
    snprintf(buf, len, "main chunk");
  else
    snprintf(buf, len, "function <%s:%d>", ar->short_src, ar->linedefined);
}

/* The site of a Lua frame, interned by the core (rt_site_find/add) under
 * its source string (Lua's, used as a key only), line and first line. */
static uint32_t lookup(lt_tracker *t, const lua_Debug *ar) {
  rt_site_key k = {.key = ar->source, .line = ar->currentline, .aux = ar->linedefined, .file = lt_frame_file(ar)};
  uint32_t id = rt_site_find(&t->s, &k);
  if (id) return id;
  char fn[LT_FUNCTION_NAME_MAX];
  lt_frame_function(ar, fn, sizeof fn);
  return rt_site_add(&t->s, &k, fn);
}

/* The site cache.  lua_getinfo("Sl") costs about 300 instructions (the
 * chunk name is formatted, the line found by walking the line deltas), and
 * full tracking calls it for every object.  But the site is a function of
 * the saved pc of the innermost Lua frame alone (a pointer into its
 * prototype's code): a small direct-mapped cache from saved pc to site id
 * answers most calls.  It reads Lua 5.4's CallInfo (lua54_layout.h): the
 * running one from the state's `ci` field once the layout is confirmed
 * (else from lua_getstack's lua_Debug.i_ci), the same structure
 * lua_getstack walks.
 *
 * A cached pc is stale once its prototype is freed and another one's code
 * is allocated at that address: so the cache is enabled only when every
 * prototype's death is seen (every object sampled, prototypes among the
 * classes, attached to a fresh state: `ephemera lua`), is flushed when a
 * prototype dies, and is switched off for good if a sample is dropped.
 * Every miss takes the lua_getinfo path, which also checks that the frame
 * kinds agree (else the cache is switched off). */
/* The running CallInfo is the state's `ci` field (lua54_layout.h), read
 * only once lt_layout_global has confirmed the layout and a C function
 * has seen it equal lua_getstack's level 0. */
static _Thread_local bool probe_matched; /* per thread: states may attach in parallel */
static int probe_ci(lua_State *L) {
  lua_Debug ar;
  probe_matched = lua_getstack(L, 0, &ar) && ((const struct lt_state54 *)L)->ci == ar.i_ci;
  return 0;
}

void lt_site_cache_init(lt_tracker *t) {
  memset(t->pc_cache, 0, sizeof t->pc_cache);
  t->pc_gen = 1;
  t->pc_cache_on = LUA_VERSION_NUM == 504 && t->s.opt.sites && t->s.opt.fresh_state && !t->s.opt.sample_bytes &&
                   t->s.opt.sample_every == 1 && (t->tag_mask >> LT_TAG_PROTO & 1u);
  t->ci_known = false;
  if (t->pc_cache_on && lt_layout_global(t->L)) { /* before the wrapper is installed: the call is not profiled */
    probe_matched = false;
    lua_pushcfunction(t->L, probe_ci);
    if (lua_pcall(t->L, 0, 0, 0) != LUA_OK) lua_pop(t->L, 1);
    t->ci_known = probe_matched;
  }
}

void lt_site_cache_flush(lt_tracker *t, bool disable) {
  if (!t->pc_cache_on) return;
  /* a new generation empties every slot at once (clearing the 16 KiB
   * table at each prototype's death was a quarter of the instructions of
   * constructs.lua, which loads many small chunks) */
  if (++t->pc_gen == 0) {
    memset(t->pc_cache, 0, sizeof t->pc_cache);
    t->pc_gen = 1;
  }
  if (disable) t->pc_cache_on = false;
}

static inline size_t pc_slot(const void *pc) {
  return (size_t)(((uint64_t)(uintptr_t)pc * UINT64_C(0x9E3779B97F4A7C15)) >> 54) & (LT_PC_CACHE_SIZE - 1);
}

/* The site by lua_getinfo; if cached_level >= 0, the cache missed pc at
 * that level, and the answer is cached. */
static __attribute__((noinline)) uint32_t site_by_getinfo(lt_tracker *t, int cached_level, const void *pc) {
  lua_Debug ar;
  for (int level = 0; level < 4; level++) {
    if (!lua_getstack(t->L, level, &ar)) return 0;
    if (!lua_getinfo(t->L, "Sl", &ar)) return 0;
    if (ar.what[0] == 'C') {
      if (level == cached_level) t->pc_cache_on = false; /* the layout does not match: never again */
      continue;
    }
    uint32_t site = ar.currentline <= 0 ? 0 : lookup(t, &ar);
    if (cached_level >= 0) {
      if (level == cached_level) t->pc_cache[pc_slot(pc)] = (struct lt_pc_slot){.pc = pc, .site = site, .gen = t->pc_gen};
      else t->pc_cache_on = false;
    }
    return site;
  }
  return 0;
}

/* The running CallInfo, as lua_getstack(L, 0) finds it (NULL: none). */
static const struct lt_ci54 *running_ci(lt_tracker *t) {
  const struct lt_ci54 *ci;
  if (t->ci_known) {
    memcpy(&ci, (const char *)t->L + offsetof(struct lt_state54, ci), sizeof ci);
    return ci;
  }
  lua_Debug ar;
  return lua_getstack(t->L, 0, &ar) ? (const struct lt_ci54 *)ar.i_ci : NULL;
}

uint32_t lt_site_current(lt_tracker *t) {
  if (!t->pc_cache_on) return site_by_getinfo(t, -1, NULL);
  const struct lt_ci54 *ci = running_ci(t);
  if (!ci) return 0;
  for (int level = 0; level < 4; level++, ci = ci->previous) {
    if (!ci->previous) return 0; /* the base CallInfo: as lua_getstack failing */
    if (ci->callstatus & LT_CIST_C) continue;
    const void *pc = ci->u.l.savedpc;
    const struct lt_pc_slot *s = &t->pc_cache[pc_slot(pc)];
    if (s->pc == pc && s->gen == t->pc_gen && pc) return s->site;
    return site_by_getinfo(t, level, pc);
  }
  return 0; /* four C frames */
}

uint32_t lt_site_of(lt_tracker *t, const lua_Debug *ar) { return ar->currentline <= 0 ? 0 : lookup(t, ar); }
