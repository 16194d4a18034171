/*
 * cmd_lua.c — `ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] SCRIPT [ARGS...]`:
 * parses the options and runs the script with eph_lua_run (src/runtime/lua/interp.c:
 * lua5.4's interpreter with the adapter attached).  See docs/lua.md.
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
  return CLI_FAILED;
}

#else

#include "runtime/lua/interp.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] [--summary] [--no-profile] SCRIPT [ARGS...]\n"
          "  runs SCRIPT like `lua5.4 SCRIPT ARGS...` (SCRIPT '-' reads stdin) and profiles its objects\n"
          "  --profile SPEC  sample=1/N | N | all | bytes:B (K/M/G), out=FILE, seed=N, compress=on|off,\n"
          "                  classes=A,B (string, short string, long string, table, function, Lua closure,\n"
          "                  C closure, userdata, thread, upvalue, prototype), sites=on|off, summary=on|off,\n"
          "                  stacks=N (the Lua call stack, N frames, at each sampled allocation);\n"
          "                  mode=gc or no mode (Lua's collector reports deaths itself).  Default: sample=1/1\n"
          "  -o FILE         the profile (default ephemera.eph)\n"
          "  --gc LUAGC      the collector before the script starts (default: generational, like lua5.4):\n"
          "                  incremental[,pause=P,stepmul=M,stepsize=S]   (Lua defaults 200, 100, 13)\n"
          "                  generational[,minormul=m,majormul=M]          (Lua defaults 20, 100)\n"
          "  --summary       print a lifetime summary and collector advice on stderr at the end\n"
          "  --no-profile    run the script without the profiler\n" CLI_EXIT_HELP
          "  (1 also when the script raises an error, as lua5.4 exits 1)\n");
}

int cmd_lua(int argc, char **argv) {
  enum { OPT_PROFILE = 256, OPT_GC, OPT_SUMMARY, OPT_NO_PROFILE };
  static const struct option longopts[] = {{"profile", required_argument, NULL, OPT_PROFILE},
                                           {"output", required_argument, NULL, 'o'},
                                           {"gc", required_argument, NULL, OPT_GC},
                                           {"summary", no_argument, NULL, OPT_SUMMARY},
                                           {"no-profile", no_argument, NULL, OPT_NO_PROFILE},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  const char *spec = NULL, *out = NULL, *gctext = NULL;
  bool summary = false, profile = true;
  /* "+": options end at the script; what follows is the script's. */
  for (int c; (c = cli_getopt(argc, argv, "+:o:h", longopts)) != -1;) {
    switch (c) {
      case OPT_PROFILE: spec = optarg; break;
      case 'o': out = optarg; break;
      case OPT_GC: gctext = optarg; break;
      case OPT_SUMMARY: summary = true; break;
      case OPT_NO_PROFILE: profile = false; break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("no script given");
  lt_options opt;
  lt_options_init(&opt);
  char msg[1600];
  if (spec && !lt_options_parse(&opt, spec, msg, sizeof msg)) {
    cli_error("lua: --profile: %s", msg);
    return CLI_USAGE;
  }
  if (out) snprintf(opt.out, sizeof opt.out, "%s", out);
  if (summary) opt.summary = true;
  eph_lua_gc gc;
  if (gctext && !eph_lua_gc_parse(gctext, &gc, msg, sizeof msg)) {
    cli_error("lua: --gc: %s", msg);
    return CLI_USAGE;
  }
  /* main passes argv + 1 (from the command's name): argv[-1] is the process's argv[0] */
  eph_lua_run_opts run = {.interpreter = argv[-1], .argv = argv, .argc = argc, .script = optind, .gc = gctext ? &gc : NULL,
                          .gc_desc = gctext ? gctext : "generational (lua5.4 default)",
                          .profile = profile ? &opt : NULL};
  eph_lua_outcome outcome = eph_lua_run(&run, msg, sizeof msg);
  if (outcome == EPH_LUA_NOT_STARTED) {
    cli_error("lua: %s", msg);
    return CLI_FAILED;
  }
  /* The script's own output: a failed write is a failed run, even where
   * lua5.4 would say nothing. */
  int rc = cli_stdout_done("the script's output");
  return rc != CLI_OK || outcome != EPH_LUA_OK ? CLI_FAILED : CLI_OK;
}

#endif
