/*
 * cmd_lua.c — `ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] SCRIPT [ARGS...]`:
 * runs a Lua 5.4 script in the system's liblua5.4, as the lua5.4 command
 * would (its lua.c: standard libraries, `arg`, LUA_INIT, generational
 * collector, error messages with a traceback, exit status), while the
 * adapter in src/lua profiles every object the collector creates.
 * See docs/lua.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef EPH_HAVE_LUA

int cmd_lua(int argc, char **argv) {
  (void)argc;
  (void)argv;
  cli_error("lua: this ephemera was built without Lua 5.4 (pkg-config found no lua5.4 at configure time); "
            "install Debian's liblua5.4-dev and re-run cmake");
  return 2;
}

#else

#include <signal.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ephlua.h"

static const char *progname = "ephemera";

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] [--summary] [--no-profile] SCRIPT [ARGS...]\n"
          "  runs SCRIPT like `lua5.4 SCRIPT ARGS...` (SCRIPT '-' reads stdin) and profiles its objects\n"
          "  --profile SPEC  sample=1/N | N | all | bytes:B (K/M/G), out=FILE, seed=N, compress=on|off,\n"
          "                  classes=A,B (string, short string, long string, table, function, Lua closure,\n"
          "                  C closure, userdata, thread, upvalue, prototype), sites=on|off, summary=on|off;\n"
          "                  mode=gc or no mode (Lua's collector reports deaths itself).  Default: sample=1/1\n"
          "  -o FILE         the profile (default ephemera.eph)\n"
          "  --gc LUAGC      the collector before the script starts (default: generational, like lua5.4):\n"
          "                  incremental[,pause=P,stepmul=M,stepsize=S]   (Lua defaults 200, 100, 13)\n"
          "                  generational[,minormul=m,majormul=M]          (Lua defaults 20, 100)\n"
          "  --summary       print a lifetime summary and collector advice on stderr at the end\n"
          "  --no-profile    run the script without the profiler\n");
}

/* --- --gc ------------------------------------------------------------------------ */

typedef struct gc_setting {
  bool incremental;
  int pause, stepmul, stepsize; /* 0: Lua's current value */
  int minormul, majormul;
} gc_setting;

static bool parse_gc(const char *text, gc_setting *g, char *desc, size_t desclen) {
  memset(g, 0, sizeof *g);
  char buf[256];
  if (strlen(text) >= sizeof buf) return cli_error("lua: --gc: too long"), false;
  strcpy(buf, text);
  char *save = NULL;
  char *mode = strtok_r(buf, ",", &save);
  if (!mode || (strcmp(mode, "incremental") && strcmp(mode, "generational"))) {
    cli_error("lua: --gc: '%s': expected incremental[,pause=P,stepmul=M,stepsize=S] or "
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
      {"pause", true, 1023, offsetof(gc_setting, pause)},
      {"stepmul", true, 1023, offsetof(gc_setting, stepmul)},
      {"stepsize", true, 62, offsetof(gc_setting, stepsize)},
      {"minormul", false, 255, offsetof(gc_setting, minormul)},
      {"majormul", false, 1023, offsetof(gc_setting, majormul)},
  };
  for (char *item = strtok_r(NULL, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    bool found = false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && eq; k++) {
      if ((size_t)(eq - item) != strlen(keys[k].key) || strncmp(item, keys[k].key, (size_t)(eq - item))) continue;
      found = true;
      if (keys[k].inc != g->incremental) {
        cli_error("lua: --gc: %s applies to %s mode only", keys[k].key, keys[k].inc ? "incremental" : "generational");
        return false;
      }
      char *end;
      long v = strtol(eq + 1, &end, 10);
      if (!eq[1] || *end || v < 1 || v > keys[k].max) {
        cli_error("lua: --gc: %s: bad value '%s' (an integer from 1 to %d)", keys[k].key, eq + 1, keys[k].max);
        return false;
      }
      *(int *)((char *)g + keys[k].off) = (int)v;
    }
    if (!found) {
      cli_error("lua: --gc: unknown parameter '%s' (%s)", item,
                g->incremental ? "pause, stepmul, stepsize" : "minormul, majormul");
      return false;
    }
  }
  snprintf(desc, desclen, "%s", text);
  return true;
}

/* --- lua.c, Lua 5.4.4's stand-alone interpreter, for one script ------------------- */

static lua_State *globalL;
static bool profile_holds_signals; /* SIGINT finishes the profile (lt_finish_on_signals), not lua.c's laction */

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

static void createargtable(lua_State *L, char **argv, int argc, int script) {
  int narg = argc - (script + 1);
  lua_createtable(L, narg, script + 1);
  for (int i = 0; i < argc; i++) {
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
  int argc, script;
  char **argv;
  const gc_setting *gc; /* NULL: lua5.4's generational default */
} run_args;

static int pmain(lua_State *L) {
  run_args *a = lua_touserdata(L, 1);
  luaL_checkversion(L);
  luaL_openlibs(L);
  createargtable(L, a->argv, a->argc, a->script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0); /* lua5.4's default */
  if (a->gc) {
    const gc_setting *g = a->gc;
    if (g->incremental) lua_gc(L, LUA_GCINC, g->pause, g->stepmul, g->stepsize);
    else lua_gc(L, LUA_GCGEN, g->minormul, g->majormul);
  }
  if (handle_luainit(L) != LUA_OK) return 0;
  if (handle_script(L, a->argv + a->script) != LUA_OK) return 0;
  lua_pushboolean(L, 1);
  return 1;
}

int cmd_lua(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *spec = NULL, *out = NULL, *gctext = NULL;
  bool summary = false, profile = true;
  int script = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      script = i + 1;
      break;
    }
    if (!strcmp(a, "--profile") || !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--gc")) {
      if (i + 1 >= argc) {
        cli_error("lua: %s needs a value", a);
        return 2;
      }
      const char **target = !strcmp(a, "--profile") ? &spec : !strcmp(a, "--gc") ? &gctext : &out;
      *target = argv[++i];
    } else if (!strcmp(a, "--summary")) {
      summary = true;
    } else if (!strcmp(a, "--no-profile")) {
      profile = false;
    } else if (a[0] == '-' && a[1]) {
      cli_error("lua: unknown option '%s' (try 'ephemera lua --help')", a);
      return 2;
    } else {
      script = i;
      break;
    }
  }
  if (script < 0 || script >= argc) {
    cli_error("lua: no script given (try 'ephemera lua --help')");
    return 2;
  }
  lt_options opt;
  lt_options_init(&opt);
  char msg[1600];
  if (spec && !lt_options_parse(&opt, spec, msg, sizeof msg)) {
    cli_error("lua: --profile: %s", msg);
    return 2;
  }
  if (out) snprintf(opt.out, sizeof opt.out, "%s", out);
  if (summary) opt.summary = true;
  gc_setting gc;
  char gcdesc[300] = "generational (lua5.4 default)";
  if (gctext && !parse_gc(gctext, &gc, gcdesc, sizeof gcdesc)) return 2;

  lua_State *L = luaL_newstate();
  if (L == NULL) {
    l_message(progname, "cannot create state: not enough memory");
    return 1;
  }
  lt_tracker *tracker = NULL;
  if (profile) {
    char command[1024] = "";
    for (int i = script; i < argc; i++) {
      size_t n = strlen(command);
      snprintf(command + n, sizeof command - n, "%s%s", i > script ? " " : "", argv[i]);
    }
    eph_meta_pair meta[] = {{"program", "ephemera lua"}, {"workload", argv[script]}, {"command", command}};
    opt.fresh_state = true; /* no Lua function exists yet (see src/lua/site.c) */
    tracker = lt_attach(L, &opt, gcdesc, meta, sizeof meta / sizeof meta[0], msg, sizeof msg);
    if (!tracker) {
      cli_error("lua: %s", msg);
      lua_close(L);
      return 1;
    }
    profile_holds_signals = lt_finish_on_signals(tracker, true, msg, sizeof msg);
  }
  lua_gc(L, LUA_GCSTOP); /* as lua.c: no collection while the libraries load */
  run_args ra = {.argc = argc, .script = script, .argv = argv, .gc = gctext ? &gc : NULL};
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &ra);
  int status = lua_pcall(L, 1, 1, 0);
  int result = lua_toboolean(L, -1);
  report(L, status);
  if (tracker) lt_begin_close(tracker); /* frees from now on are not collector deaths */
  lua_close(L); /* the tracker writes the profile as lua_close ends (censoring what was alive) */
  if (profile && lt_failures()) return 1;
  return (result && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
