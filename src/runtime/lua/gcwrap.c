/*
 * gcwrap.c — `ephemera lua` only: the executable is linked with
 * --wrap=lua_gc, so every lua_gc call of the statically linked Lua
 * (collectgarbage() among them) comes here first.  After the call, the
 * profiler of the state looks at the collector's state (gcstate.c): two
 * collections made by back-to-back collectgarbage() calls that allocate
 * and free nothing would otherwise flip the white twice unseen.  The
 * arguments are forwarded as lua_gc takes them (lua.h, manual §4.6).
 */
#include <stdarg.h>

#include "runtime/lua/ephlua.h"

int __real_lua_gc(lua_State *L, int what, ...);
int __wrap_lua_gc(lua_State *L, int what, ...);

int __wrap_lua_gc(lua_State *L, int what, ...) {
  va_list ap;
  va_start(ap, what);
  int res;
  switch (what) {
    case LUA_GCSTEP:
    case LUA_GCSETPAUSE:
    case LUA_GCSETSTEPMUL: {
      int a = va_arg(ap, int);
      res = __real_lua_gc(L, what, a);
      break;
    }
    case LUA_GCGEN: {
      int a = va_arg(ap, int), b = va_arg(ap, int);
      res = __real_lua_gc(L, what, a, b);
      break;
    }
    case LUA_GCINC: {
      int a = va_arg(ap, int), b = va_arg(ap, int), c = va_arg(ap, int);
      res = __real_lua_gc(L, what, a, b, c);
      break;
    }
    default: res = __real_lua_gc(L, what); break;
  }
  va_end(ap);
  lt_tracker *t = lt_tracker_of(L);
  if (t) lt_gc_watch(t);
  return res;
}
