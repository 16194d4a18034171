/*
 * interp.c — `ephemera lua`'s interpreter (interp.h): lua.c, Lua 5.4.4's
 * stand-alone interpreter, cut down to running one script, with the
 * adapter attached to the state before the script starts.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "runtime/lua/interp.h"

static const char *progname = "ephemera";

/* --- --gc ------------------------------------------------------------------------ */

bool eph_lua_gc_parse(const char *text, eph_lua_gc *g, char *why, size_t whylen) {
  memset(g, 0, sizeof *g);
  char buf[256];
  if (strlen(text) >= sizeof buf) return snprintf(why, whylen, "too long"), false;
  strcpy(buf, text);
  char *save = NULL;
  char *mode = strtok_r(buf, ",", &save);
  if (!mode || (strcmp(mode, "incremental") && strcmp(mode, "generational"))) {
    snprintf(why, whylen, "'%s': expected incremental[,pause=P,stepmul=M,stepsize=S] or "
             "generational[,minormul=m,majormul=M]",
             text);
    return false;
  }
  g->incremental = !strcmp(mode, "incremental");
  static const struct {
    const char *key;
    bool inc;
    int max;
    size_t off;
  } keys[] = {
      {"pause", true, 1023, offsetof(eph_lua_gc, pause)},
      {"stepmul", true, 1023, offsetof(eph_lua_gc, stepmul)},
      {"stepsize", true, 62, offsetof(eph_lua_gc, stepsize)},
      {"minormul", false, 255, offsetof(eph_lua_gc, minormul)},
      {"majormul", false, 1023, offsetof(eph_lua_gc, majormul)},
  };
  for (char *item = strtok_r(NULL, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    bool found = false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && eq; k++) {
      if ((size_t)(eq - item) != strlen(keys[k].key) || strncmp(item, keys[k].key, (size_t)(eq - item))) continue;
      found = true;
      if (keys[k].inc != g->incremental) {
        snprintf(why, whylen, "%s applies to %s mode only", keys[k].key, keys[k].inc ? "incremental" : "generational");
        return false;
      }
      char *end;
      long v = strtol(eq + 1, &end, 10);
      if (!eq[1] || *end || v < 1 || v > keys[k].max) {
        snprintf(why, whylen, "%s: bad value '%s' (an integer from 1 to %d)", keys[k].key, eq + 1, keys[k].max);
        return false;
      }
      *(int *)((char *)g + keys[k].off) = (int)v;
    }
    if (!found) {
      snprintf(why, whylen, "unknown parameter '%s' (%s)", item,
               g->incremental ? "pause, stepmul, stepsize" : "minormul, majormul");
      return false;
    }
  }
  return true;
}

/* --- lua.c, Lua 5.4.4's stand-alone interpreter, for one script ------------------- */

static lua_State *globalL;
static bool profile_holds_signals; /* SIGINT finishes the profile (rt_finish_on_signals), not lua.c's laction */

static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void laction(int i) {
  int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
  signal(i, SIG_DFL);
  lua_sethook(globalL, lstop, flag, 1);
}

static void l_message(const char *pname, const char *msg) {
  if (pname) fprintf(stderr, "%s: ", pname);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    l_message(progname, msg);
    lua_pop(L, 1);
  }
  return status;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  globalL = L;
  if (!profile_holds_signals) signal(SIGINT, laction);
  int status = lua_pcall(L, narg, nres, base);
  if (!profile_holds_signals) signal(SIGINT, SIG_DFL);
  lua_remove(L, base);
  return status;
}

/* lua.c's arg table: arg[0] the script, arg[1..] its arguments, and
 * below them the interpreter's command line: here only arg[-1], the
 * interpreter as the process was started (its argv[0]); ephemera's own
 * words and options stay out. */
static void createargtable(lua_State *L, const char *interpreter, char **argv, int argc, int script) {
  int narg = argc - (script + 1);
  lua_createtable(L, narg, 2);
  lua_pushstring(L, interpreter);
  lua_rawseti(L, -2, -1);
  for (int i = script; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dochunk(L, luaL_loadbuffer(L, init, strlen(init), name));
}

static int pushargs(lua_State *L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  int n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  int i;
  for (i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -i);
  return n;
}

static int handle_script(lua_State *L, char **argv) {
  const char *fname = argv[0];
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL; /* stdin */
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = pushargs(L);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

typedef struct run_args {
  const char *interpreter;
  int argc, script;
  char **argv;
  const eph_lua_gc *gc; /* NULL: lua5.4's generational default */
} run_args;

static int pmain(lua_State *L) {
  run_args *a = lua_touserdata(L, 2);
  luaL_checkversion(L);
  luaL_openlibs(L);
  createargtable(L, a->interpreter, a->argv, a->argc, a->script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0); /* lua5.4's default */
  if (a->gc) {
    const eph_lua_gc *g = a->gc;
    if (g->incremental) lua_gc(L, LUA_GCINC, g->pause, g->stepmul, g->stepsize);
    else lua_gc(L, LUA_GCGEN, g->minormul, g->majormul);
  }
  if (handle_luainit(L) != LUA_OK) return 0;
  if (handle_script(L, a->argv + a->script) != LUA_OK) return 0;
  lua_pushboolean(L, 1);
  return 1;
}

eph_lua_outcome eph_lua_run(const eph_lua_run_opts *o, char *msg, size_t msglen) {
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    snprintf(msg, msglen, "cannot create state: not enough memory");
    return EPH_LUA_NOT_STARTED;
  }
  /* as lua.c, right away: no collection while the state is built, nor while
   * the profiler attaches (its probe calls a C function, where Lua would
   * otherwise take a collector step that lua5.4 does not take) */
  lua_gc(L, LUA_GCSTOP);
  lt_tracker *tracker = NULL;
  if (o->profile) {
    char command[1024] = "";
    for (int i = o->script; i < o->argc; i++) {
      size_t n = strlen(command);
      snprintf(command + n, sizeof command - n, "%s%s", i > o->script ? " " : "", o->argv[i]);
    }
    eph_meta_pair meta[] = {{"program", "ephemera lua"}, {"workload", o->argv[o->script]}, {"command", command}};
    o->profile->fresh_state = true; /* no Lua function exists yet (see site.c) */
    tracker = lt_attach(L, o->profile, o->gc_desc, meta, sizeof meta / sizeof meta[0], msg, msglen);
    if (!tracker) {
      lua_close(L);
      return EPH_LUA_NOT_STARTED;
    }
    profile_holds_signals = rt_finish_on_signals(&tracker->s, true, msg, msglen);
  }
  run_args ra = {.interpreter = o->interpreter ? o->interpreter : "ephemera", .argc = o->argc,
                 .script = o->script, .argv = o->argv, .gc = o->gc};
  /* as lua.c: two values below pmain's frame (argc, argv), so that the
   * script has the same stack to overflow */
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, o->argc);
  lua_pushlightuserdata(L, &ra);
  int status = lua_pcall(L, 2, 1, 0);
  int result = lua_toboolean(L, -1);
  report(L, status);
  if (tracker) lt_begin_close(tracker); /* frees from now on are not collector deaths */
  lua_close(L); /* the tracker writes the profile as lua_close ends (censoring what was alive) */
  if (o->profile && rt_failures()) return EPH_LUA_PROFILE_FAILED;
  return result && status == LUA_OK ? EPH_LUA_OK : EPH_LUA_SCRIPT_FAILED;
}
