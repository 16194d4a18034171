/*
 * run_lua.c — a Lua 5.4 script's iterations, each on a fresh lua_State whose
 * allocator counts bytes and enforces the heap limit: above it the
 * allocator refuses, Lua runs its emergency collection and, if that frees
 * too little, raises "not enough memory" (the run then fails).  The script
 * marks latency events through the `ephemera` module (ephemera.event_begin()
 * / ephemera.event_end(), preloaded here).  Lua's collector is incremental,
 * so no stop-the-world GC time is reported.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"

#ifndef EPH_BENCH_HAVE_LUA
int eph_bench_run_lua(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err) {
  (void)t, (void)c, (void)warmup, (void)iterations, (void)run;
  eph_error_fill(err, EPH_ERR_INVALID, "this ephemera was built without Lua 5.4");
  return -1;
}
#else
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

typedef struct limited {
  size_t limit, in_use, peak;
  uint64_t allocated, objects;
  eph_bench_event *events;
  size_t nevents, cap;
  bool open; /* an event has begun */
  double t0;
} limited;

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  limited *l = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    l->in_use -= old;
    return NULL;
  }
  if (nsize > old && l->limit && l->in_use - old + nsize > l->limit) return NULL;
  void *p = realloc(ptr, nsize);
  if (!p) return NULL;
  l->in_use = l->in_use - old + nsize;
  if (l->in_use > l->peak) l->peak = l->in_use;
  if (nsize > old) l->allocated += nsize - old;
  if (!ptr) l->objects++;
  return p;
}

static const char LIMITED_KEY = 'l';

static limited *state_of(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &LIMITED_KEY);
  limited *l = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return l;
}

static uint64_t since(const limited *l) { return (uint64_t)((eph_bench_clock(CLOCK_MONOTONIC) - l->t0) * 1e9); }

static int l_event_begin(lua_State *L) {
  limited *l = state_of(L);
  if (l->nevents == l->cap) { /* grown outside Lua's heap: the limit is the script's */
    size_t cap = l->cap ? 2 * l->cap : 4096;
    eph_bench_event *e = realloc(l->events, cap * sizeof *e);
    if (!e) return luaL_error(L, "ephemera.event_begin: out of memory");
    l->events = e;
    l->cap = cap;
  }
  l->events[l->nevents].start_ns = since(l);
  l->events[l->nevents].end_ns = 0;
  l->open = true;
  return 0;
}

static int l_event_end(lua_State *L) {
  limited *l = state_of(L);
  if (!l->open) return luaL_error(L, "ephemera.event_end without event_begin");
  l->events[l->nevents++].end_ns = since(l);
  l->open = false;
  return 0;
}

static int l_noop(lua_State *L) {
  (void)L;
  return 0;
}

static int open_module(lua_State *L) {
  static const luaL_Reg funcs[] = {{"event_begin", l_event_begin}, {"event_end", l_event_end},
                                   {"start", l_noop},              {"stop", l_noop},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

/* Runs the script once; returns 0 if it finished, else -1 with why. */
static int run_script(lua_State *L, const eph_bench_target *t, const char *gcmode, char *why, size_t len) {
  luaL_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open_module);
  lua_setfield(L, -2, "ephemera");
  lua_pop(L, 1);
  if (!strcmp(gcmode, "incremental")) lua_gc(L, LUA_GCINC, 0, 0, 0);
  else lua_gc(L, LUA_GCGEN, 0, 0);
  lua_createtable(L, 8, 1); /* arg, as lua5.4 builds it */
  lua_pushstring(L, t->name);
  lua_rawseti(L, -2, 0);
  char args[sizeof t->args];
  snprintf(args, sizeof args, "%s", t->args);
  int nargs = 0;
  char *save = NULL;
  for (char *a = strtok_r(args, " \t", &save); a; a = strtok_r(NULL, " \t", &save)) {
    lua_pushstring(L, a);
    lua_rawseti(L, -2, ++nargs);
  }
  lua_setglobal(L, "arg");
  int rc = luaL_loadfile(L, t->name);
  if (rc == LUA_OK) {
    lua_getglobal(L, "arg");
    for (int i = 1; i <= nargs; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -nargs - 1);
    rc = lua_pcall(L, nargs, 0, 0);
  }
  if (rc != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    snprintf(why, len, "%s", msg ? msg : "error object is not a string");
    return -1;
  }
  return 0;
}

int eph_bench_run_lua(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err) {
  (void)warmup, (void)iterations;
  const char *gcmode = c->gc[0] ? c->gc : "generational";
  if (c->profile[0]) { /* `ephemera lua --profile` and bench/lua-overhead measure that */
    snprintf(run->error, sizeof run->error, "--profile does not apply to Lua scripts here (see 'ephemera lua')");
    run->niters = 0;
    return 0;
  }
  if (strcmp(gcmode, "generational") && strcmp(gcmode, "incremental")) {
    snprintf(run->error, sizeof run->error, "GC parameters '%s' do not apply to a Lua script (generational or incremental)",
             c->gc);
    run->niters = 0;
    return 0;
  }
  for (size_t i = 0; i < run->niters; i++) {
    eph_bench_iter *it = &run->iters[i];
    limited l = {.limit = (size_t)c->heap_bytes};
    lua_State *L = lua_newstate(limited_alloc, &l);
    if (!L) {
      snprintf(run->error, sizeof run->error, "iteration %zu: cannot create a Lua state%s", i + 1,
               l.limit ? " under the heap limit" : "");
      run->niters = i + 1;
      return 0;
    }
    lua_pushlightuserdata(L, &l);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &LIMITED_KEY);
    char why[400];
    double w0 = eph_bench_clock(CLOCK_MONOTONIC), c0 = eph_bench_clock(CLOCK_PROCESS_CPUTIME_ID);
    l.t0 = w0;
    int rc = run_script(L, t, gcmode, why, sizeof why);
    it->wall_s = eph_bench_clock(CLOCK_MONOTONIC) - w0;
    it->task_s = eph_bench_clock(CLOCK_PROCESS_CPUTIME_ID) - c0;
    lua_close(L);
    it->gc_s = it->gc_cpu_s = it->mutator_s = -1;
    it->gc_count = it->scavenges = it->full_gcs = it->peak_live_bytes = it->bytes_copied = -1;
    it->peak_bytes = (int64_t)l.peak;
    it->allocated_bytes = (int64_t)l.allocated;
    it->objects = (int64_t)l.objects;
    it->events = l.events;
    it->nevents = l.nevents;
    if (rc) {
      snprintf(run->error, sizeof run->error, "iteration %zu: %.400s", i + 1, why);
      run->niters = i + 1;
      return 0;
    }
  }
  (void)err;
  run->ok = true;
  return 0;
}
#endif
