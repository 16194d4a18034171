/*
 * module_host.c — an unmodified-style host embedding Lua 5.4: makes a
 * state, allocates, then runs a script that requires the ephemera module
 * (found through package.cpath = argv[1]), attaches, detaches, and goes on;
 * closes the state.  Exit 0 if the script ran.
 */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: module_host CPATH SCRIPT OUT\n");
    return 2;
  }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushstring(L, argv[1]);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  lua_createtable(L, 1, 0);
  lua_pushstring(L, argv[3]);
  lua_rawseti(L, -2, 1);
  lua_setglobal(L, "arg");
  /* state that exists before the profiler attaches */
  for (int i = 0; i < 100; i++) {
    lua_newtable(L);
    lua_pushfstring(L, "before %d", i);
    lua_setfield(L, -2, "name");
    lua_pop(L, 1);
  }
  int rc = luaL_dofile(L, argv[2]);
  if (rc != LUA_OK) fprintf(stderr, "module_host: %s\n", lua_tostring(L, -1));
  lua_close(L);
  return rc == LUA_OK ? 0 : 1;
}
