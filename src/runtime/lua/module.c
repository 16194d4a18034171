/*
 * module.c — the loadable module ephemera.so, for hosts nobody changed:
 *
 *   EPHEMERA_PROFILE="sample=1/100,out=run.eph" lua5.4 -l ephemera script.lua
 *   local eph = require "ephemera"; eph.start{sample = "1/100", out = "run.eph"}
 *   ...; eph.stop()
 *
 * Loading it with EPHEMERA_PROFILE set starts profiling the loading state.
 * start{} chains onto the state's allocator (lua_getallocf/lua_setallocf),
 * so blocks allocated before it are freed by their own allocator; the
 * profile is written when the state closes (the free of its main block,
 * the last thing lua_close does), when stop() is called, or at process
 * exit, whichever comes first.  The module pins itself in memory
 * (RTLD_NODELETE): its allocator must outlive package's unloading of C
 * libraries during lua_close.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "runtime/lua/ephlua.h"

static const char TRACKER_KEY = 't';

EPH_API int luaopen_ephemera(lua_State *L); /* the only symbol the module exports */

static lt_tracker *current(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &TRACKER_KEY);
  lt_tracker *t = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return t;
}

static const char *gc_mode(lua_State *L) {
#if LUA_VERSION_NUM < 504
  (void)L;
  return "incremental"; /* Lua 5.3 has no other */
#else
  int kind = lt_layout_gckind(L); /* read from the collector's state: no side effect */
  if (kind >= 0) return kind ? "generational" : "incremental";
  /* else: switching to incremental returns the previous mode; switch back
   * (which costs a full collection) */
  int prev = lua_gc(L, LUA_GCINC, 0, 0, 0);
  if (prev == LUA_GCGEN) {
    lua_gc(L, LUA_GCGEN, 0, 0);
    return "generational";
  }
  return prev == LUA_GCINC ? "incremental" : "unknown";
#endif
}

/* _G.collectgarbage, watched: the base library's function called in this
 * same frame (its arguments, results and error messages are unchanged),
 * then a look at the collector (gcstate.c), which would otherwise miss
 * collections made by back-to-back collectgarbage() calls that allocate
 * and free nothing (`ephemera lua` sees them by --wrap=lua_gc instead). */
static lua_CFunction base_collectgarbage;
static int watched_collectgarbage(lua_State *L) {
  int n = base_collectgarbage(L);
  lt_tracker *t = lt_tracker_of(L);
  if (t) lt_gc_watch(t);
  return n;
}

/* Puts watched_collectgarbage in place of _G.collectgarbage if that is a C
 * function (a light one: no allocation). */
static void watch_collectgarbage(lua_State *L) {
  lua_pushglobaltable(L);
  lua_getfield(L, -1, "collectgarbage");
  lua_CFunction f = lua_iscfunction(L, -1) ? lua_tocfunction(L, -1) : NULL;
  lua_pop(L, 1);
  if (f && f != watched_collectgarbage && (!base_collectgarbage || f == base_collectgarbage)) {
    base_collectgarbage = f;
    lua_pushcfunction(L, watched_collectgarbage);
    lua_setfield(L, -2, "collectgarbage");
  }
  lua_pop(L, 1);
}

static int start_spec(lua_State *L, const char *spec, const char *from) {
  if (current(L)) return luaL_error(L, "ephemera: already profiling this Lua state");
  lt_options opt;
  lt_options_init(&opt);
  char msg[1600];
  if (!lt_options_parse(&opt, spec, msg, sizeof msg)) return luaL_error(L, "ephemera: %s: %s", from, msg);
  eph_meta_pair meta[] = {{"program", "lua module ephemera"}, {"command", spec}};
  lt_tracker *t = lt_attach(L, &opt, gc_mode(L), meta, 2, msg, sizeof msg);
  if (!t) return luaL_error(L, "ephemera: %s", msg);
  if (t->gc_stop) watch_collectgarbage(L); /* cycles are read from the collector's state */
  /* SIGINT and SIGTERM left at their default action finish the profile
   * first (the host's own handlers, such as lua5.4's SIGINT, stay its own) */
  if (!rt_finish_on_signals(&t->s, false, msg, sizeof msg)) fprintf(stderr, "ephemera: warning: %s\n", msg);
  lua_pushlightuserdata(L, t);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &TRACKER_KEY);
  lua_pushstring(L, opt.out);
  return 1;
}

/* start([spec | {sample=, out=, seed=, classes=, compress=, sites=, summary=}]) -> out */
static int l_start(lua_State *L) {
  if (lua_isnoneornil(L, 1)) return start_spec(L, "", "start");
  if (lua_type(L, 1) == LUA_TSTRING) return start_spec(L, lua_tostring(L, 1), "start");
  luaL_checktype(L, 1, LUA_TTABLE);
  static const char *const keys[] = {"sample", "out", "seed", "classes", "compress", "sites", "summary", "mode", NULL};
  char spec[2048] = "";
  size_t len = 0;
  lua_settop(L, 1);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "ephemera.start: option keys must be strings");
    const char *k = lua_tostring(L, -2);
    bool known = false;
    for (int i = 0; keys[i]; i++) known |= !strcmp(k, keys[i]);
    if (!known)
      return luaL_error(L, "ephemera.start: unknown option '%s' (sample, out, seed, classes, compress, sites, summary)",
                        k);
    const char *v;
    int ty = lua_type(L, -1);
    if (ty == LUA_TBOOLEAN) v = lua_toboolean(L, -1) ? "on" : "off";
    else if (ty == LUA_TSTRING) v = lua_tostring(L, -1);
    else if (ty == LUA_TNUMBER) v = lua_tostring(L, -1); /* converts the value in place, not the key */
    else return luaL_error(L, "ephemera.start: option '%s' must be a string, number or boolean", k);
    int n = snprintf(spec + len, sizeof spec - len, "%s%s=%s", len ? "," : "", k, v);
    if (n < 0 || (size_t)n >= sizeof spec - len) return luaL_error(L, "ephemera.start: options too long");
    len += (size_t)n;
    lua_pop(L, 1);
  }
  return start_spec(L, spec, "start");
}

static int l_stop(lua_State *L) {
  lt_tracker *t = current(L);
  if (!t) return 0;
  lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &TRACKER_KEY);
  char msg[1600];
  int rc = lt_finish(t, false, msg, sizeof msg);
  uint64_t records = t->s.records;
  lt_release(t, true);
  if (rc) return luaL_error(L, "ephemera: %s", msg);
  lua_pushinteger(L, (lua_Integer)records);
  return 1;
}

static int l_stats(lua_State *L) {
  lt_tracker *t = current(L);
  if (!t) return 0;
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, (lua_Integer)t->s.objects);
  lua_setfield(L, -2, "objects");
  lua_pushinteger(L, (lua_Integer)t->s.bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushinteger(L, (lua_Integer)t->s.cycles);
  lua_setfield(L, -2, "cycles");
  lua_pushinteger(L, (lua_Integer)t->s.records);
  lua_setfield(L, -2, "records");
  lua_pushinteger(L, (lua_Integer)t->s.live);
  lua_setfield(L, -2, "live");
  lua_pushstring(L, t->s.opt.out);
  lua_setfield(L, -2, "out");
  return 1;
}

static void pin_self(void) {
  Dl_info info;
  if (dladdr((void *)(uintptr_t)&pin_self, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
}

/* event_begin() / event_end(): latency events for `ephemera bench`, which
 * preloads its own `ephemera` module that records them; here they do
 * nothing, so a marked script runs unchanged anywhere. */
static int l_event_mark(lua_State *L) {
  (void)L;
  return 0;
}

int luaopen_ephemera(lua_State *L) {
  pin_self();
  static const luaL_Reg funcs[] = {{"start", l_start},
                                   {"stop", l_stop},
                                   {"stats", l_stats},
                                   {"event_begin", l_event_mark},
                                   {"event_end", l_event_mark},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  const char *env = getenv("EPHEMERA_PROFILE");
  if (env && !current(L)) {
    lua_pushcfunction(L, l_start);
    lua_pushstring(L, env);
    lua_call(L, 1, 0);
  }
  return 1;
}
