/*
 * module_host.c — an unmodified-style host embedding Lua 5.4: makes a
 * state, allocates, then runs a script that requires the ephemera module
 * (found through package.cpath = argv[1]), attaches, detaches, and goes on;
 * closes the state.  Exit 0 if the script ran.
 *
 *   module_host [--own-alloc] CPATH SCRIPT OUT [ARG...]
 *
 * --own-alloc makes the state with an allocator of the host's own instead of
 * luaL_newstate's, so the profiler takes its general path (not the direct
 * free/malloc calls it uses for luaL_newstate's allocator).  That allocator
 * keeps each block's size in a header and checks the size it is given for
 * every block it frees or reallocates (Lua's and the profiler's own), and
 * that nothing is left after lua_close; it prints
 *   own allocator: N blocks live, M size mismatches
 * and the host fails if either is non-zero.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

typedef struct own_state {
  long live;
  long mismatches;
} own_state;

#define HDR 16 /* keeps Lua's blocks 16-byte aligned */

static void *own_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  own_state *s = ud;
  char *block = ptr ? (char *)ptr - HDR : NULL;
  if (block && *(size_t *)block != osize) s->mismatches++;
  if (nsize == 0) {
    if (block) {
      s->live--;
      free(block);
    }
    return NULL;
  }
  char *nb = realloc(block, nsize + HDR);
  if (!nb) return NULL;
  if (!block) s->live++;
  *(size_t *)nb = nsize;
  return nb + HDR;
}

int main(int argc, char **argv) {
  own_state own = {0, 0};
  int a = 1;
  bool use_own = argc > 1 && !strcmp(argv[1], "--own-alloc");
  if (use_own) a++;
  if (argc - a < 3) {
    fprintf(stderr, "usage: module_host [--own-alloc] CPATH SCRIPT OUT [ARG...]\n");
    return 2;
  }
  lua_State *L = use_own ? lua_newstate(own_alloc, &own) : luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushstring(L, argv[a]);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  lua_createtable(L, argc - a - 2, 0);
  for (int i = a + 2; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - a - 1);
  }
  lua_setglobal(L, "arg");
  /* state that exists before the profiler attaches */
  for (int i = 0; i < 100; i++) {
    lua_newtable(L);
    lua_pushfstring(L, "before %d", i);
    lua_setfield(L, -2, "name");
    lua_pop(L, 1);
  }
  int rc = luaL_dofile(L, argv[a + 1]);
  if (rc != LUA_OK) fprintf(stderr, "module_host: %s\n", lua_tostring(L, -1));
  lua_close(L);
  if (use_own) {
    printf("own allocator: %ld blocks live, %ld size mismatches\n", own.live, own.mismatches);
    if (own.live || own.mismatches) return 1;
  }
  return rc == LUA_OK ? 0 : 1;
}
