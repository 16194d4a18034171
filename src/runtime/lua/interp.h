/*
 * interp.h — `ephemera lua`'s interpreter: Lua 5.4's stand-alone lua.c
 * for one script (standard libraries, `arg`, LUA_INIT, the generational
 * collector, error messages with a traceback), with the adapter attached
 * to profile every object the collector creates.  The CLI parses the
 * command line and calls eph_lua_run.  See docs/lua.md.
 */
#ifndef EPH_LUA_INTERP_H
#define EPH_LUA_INTERP_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/lua/ephlua.h"

/* The collector a script starts with (--gc). */
typedef struct eph_lua_gc {
  bool incremental;
  int pause, stepmul, stepsize; /* 0: Lua's current value */
  int minormul, majormul;
} eph_lua_gc;

/*
 * Parses "incremental[,pause=P,stepmul=M,stepsize=S]" or
 * "generational[,minormul=m,majormul=M]".  Returns true, or false with
 * a one-line reason in why (the text is bad).
 */
bool eph_lua_gc_parse(const char *text, eph_lua_gc *g, char *why, size_t whylen);

typedef struct eph_lua_run_opts {
  const char *interpreter; /* arg[-1], as lua.c's argv[0] (NULL: "ephemera") */
  char **argv;           /* the command line: argv[script] is the script, then its arguments */
  int argc, script;      /* (what comes before the script is not the script's: not in arg) */
  const eph_lua_gc *gc;  /* NULL: lua5.4's generational default */
  const char *gc_desc;   /* the collector as written to the profile's metadata */
  lt_options *profile;   /* NULL: run without the profiler */
} eph_lua_run_opts;

typedef enum eph_lua_outcome {
  EPH_LUA_OK,             /* the script ran to its end and the profile was written */
  EPH_LUA_SCRIPT_FAILED,  /* the script raised an error (printed on stderr as lua5.4 does) */
  EPH_LUA_NOT_STARTED,    /* no Lua state or no profiler: msg says why */
  EPH_LUA_PROFILE_FAILED, /* the profile could not be written (the adapter said why on stderr) */
} eph_lua_outcome;

/* Runs the script; msg gets a one-line reason for EPH_LUA_NOT_STARTED. */
eph_lua_outcome eph_lua_run(const eph_lua_run_opts *o, char *msg, size_t msglen);

#endif
