/*
 * gccount.c — GC cycles, counted without touching the VM: a full userdata
 * with a __gc metamethod (the sentinel) is garbage as soon as it is made;
 * when a collection finds it dead its finaliser runs, counts one cycle and
 * makes a new sentinel.  Finalisers run after each incremental cycle and
 * after each minor or major generational collection, so the count is the
 * number of collections (of either kind) completed.  (Emergency collections
 * run no finalisers: their count is delayed to the next normal one.)
 *
 * Each re-arm also makes a new "closer": a userdata with __gc anchored in
 * the registry, so it is only finalised by lua_close.  lua_close runs the
 * pending finalisers newest first, so the closer (always newer than the
 * sentinel) runs first and marks the tracker closing: the sentinel's
 * finaliser then does not count a cycle, and the frees lua_close makes are
 * recorded as censored, not as collector deaths.  The closer it replaces
 * is disarmed (its payload cleared) and dies quietly.
 *
 * The payloads hold the tracker; lt_gccount_detach clears the live ones, so
 * a detached tracker can be freed while the state goes on.
 */
#include <lauxlib.h>

#include "runtime/lua/ephlua.h"

static const char SENTINEL_MT = 's', CLOSER_MT = 'c', CLOSER_ANCHOR = 'a';

static void arm(lt_tracker *t, lua_State *L);

static int sentinel_gc(lua_State *L) {
  void **slot = lua_touserdata(L, 1);
  lt_tracker *t = slot ? *slot : NULL;
  if (!t) return 0;
  *slot = NULL;
  if (t->sentinel_slot == slot) t->sentinel_slot = NULL;
  /* not counted when closing or detached, or when a pending signal made
   * this the stop (rt_signal_stop returns only if some other holder waits
   * for its own safe point) */
  if (rt_cycle_end(&t->s)) arm(t, L);
  return 0;
}

static int closer_gc(lua_State *L) {
  void **slot = lua_touserdata(L, 1);
  lt_tracker *t = slot ? *slot : NULL;
  if (!t) return 0; /* superseded or detached */
  *slot = NULL;
  if (t->closer_slot == slot) t->closer_slot = NULL;
  rt_begin_close(&t->s);
  return 0;
}

static void **new_payload(lua_State *L, const char *mt_key, lt_tracker *t) {
#if LUA_VERSION_NUM >= 504
  void **slot = lua_newuserdatauv(L, sizeof(void *), 0);
#else
  void **slot = lua_newuserdata(L, sizeof(void *));
#endif
  *slot = t;
  lua_rawgetp(L, LUA_REGISTRYINDEX, mt_key);
  lua_setmetatable(L, -2);
  return slot;
}

static void arm(lt_tracker *t, lua_State *L) {
  bool was = rt_internal_begin(&t->s);
  lua_checkstack(L, 4);
  t->sentinel_slot = new_payload(L, &SENTINEL_MT, t);
  lua_pop(L, 1); /* garbage from birth */
  if (t->closer_slot) *t->closer_slot = NULL;
  t->closer_slot = new_payload(L, &CLOSER_MT, t);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &CLOSER_ANCHOR); /* replaces the old closer */
  rt_internal_end(&t->s, was);
}

static void make_mt(lua_State *L, const char *key, lua_CFunction gc) {
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "ephemera");
  lua_setfield(L, -2, "__metatable");
  lua_rawsetp(L, LUA_REGISTRYINDEX, key);
}

void lt_gccount_attach(lt_tracker *t, lua_State *L) {
  bool was = rt_internal_begin(&t->s);
  lua_checkstack(L, 4);
  make_mt(L, &SENTINEL_MT, sentinel_gc);
  make_mt(L, &CLOSER_MT, closer_gc);
  arm(t, L);
  rt_internal_end(&t->s, was);
}

void lt_gccount_detach(lt_tracker *t, lua_State *L) {
  if (t->sentinel_slot) *t->sentinel_slot = NULL;
  if (t->closer_slot) *t->closer_slot = NULL;
  t->sentinel_slot = t->closer_slot = NULL;
  if (L) {
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &CLOSER_ANCHOR);
  }
}
