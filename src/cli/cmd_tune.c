/*
 * cmd_tune.c — `ephemera tune`: parses the options and hands over to the
 * advisor (src/tune, include/ephemera/tune.h).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ephemera/tune.h"
#include "render/render_tune.h"
#include "workloads/workload.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera tune WORKLOAD [--size S] [options]\n"
          "       ephemera tune --cmd 'PROGRAM ARGS' [options]\n"
          "       ephemera tune --lua SCRIPT [ARGS...]\n"
          "  profiles once, simulates a grid of GC configurations, runs the best few and the default for real,\n"
          "  and recommends the best measured as an EPHEMERA_GC string (docs/tune.md)\n"
          "  --size S            workload size: small, middle, default, large or a number\n"
          "  --cmd 'PROG ARGS'   any program embedding the heap (run by sh -c, through EPHEMERA_GC/EPHEMERA_PROFILE)\n"
          "  --lua SCRIPT        Lua 5.4's collector for SCRIPT: the rest of the line is its arguments,\n"
          "                      so the options above go before --lua\n"
          "  --objective O       time (default), time-within-heap=SIZE, or space-time\n"
          "  --invocations N     runs per verified configuration (default 5)\n"
          "  --verify N          configurations run for real, the default included (default 5, at most 5; Lua 8)\n"
          "  --profile-mode M    merlin or gc (default: merlin for --size small or a number, 1-in-32 gc otherwise)\n"
          "  --keep-profile FILE keep the profile of the profiled run\n"
          "  --kv                end with one line of key=value pairs\n"
          "  --list-grid G       print the configurations of grid G (full, coarse, illimani) and exit\n");
}

static bool parse_count(const char *opt, const char *s, int max, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < 1 || v > max) {
    cli_error("tune: %s: bad number '%s' (an integer from 1 to %d)", opt, s, max);
    return false;
  }
  *out = (int)v;
  return true;
}

static const char *self_path(void) {
  static char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return NULL;
  buf[n] = 0;
  return buf;
}

/* --list-grid full|coarse|illimani: the configurations, one EPHEMERA_GC string a line (bench/tune). */
static int list_grid(const char *which) {
  eph_tune_config *g;
  size_t n;
  eph_error err;
  eph_status st = eph_tune_grid_named(which, &g, &n, &err);
  if (st != EPH_OK) {
    cli_error("tune: %s", err.message);
    return st == EPH_ERR_INVALID ? CLI_USAGE : CLI_FAILED;
  }
  eph_render_tune_grid(stdout, g, n);
  free(g);
  return cli_stdout_done("the grid");
}

int cmd_tune(int argc, char **argv) {
  static const struct option opts[] = {
      {"size", required_argument, 0, 's'},        {"cmd", required_argument, 0, 'c'},
      {"lua", required_argument, 0, 'l'},         {"objective", required_argument, 0, 'O'},
      {"invocations", required_argument, 0, 'n'}, {"verify", required_argument, 0, 'v'},
      {"profile-mode", required_argument, 0, 'm'}, {"keep-profile", required_argument, 0, 'k'},
      {"kv", no_argument, 0, 'K'},                {"help", no_argument, 0, 'h'},
      {"list-grid", required_argument, 0, 'G'},
      {0, 0, 0, 0}};
  eph_tune_request req = {0};
  const char *objective = "time", *lua = NULL;
  int c;
  opterr = 0;
  optind = 1;
  /* Whatever follows --lua SCRIPT is the script's own arguments: options
   * are parsed only up to there. */
  int nopts = argc, script_args = argc;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--lua")) {
      nopts = script_args = i + 2 <= argc ? i + 2 : argc;
      break;
    }
  while ((c = getopt_long(nopts, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 's': req.target.size = optarg; break;
      case 'c': req.target.command = optarg; break;
      case 'l': lua = optarg; break;
      case 'O': objective = optarg; break;
      case 'n':
        if (!parse_count("--invocations", optarg, 1000, &req.invocations)) return 2;
        break;
      case 'v':
        if (!parse_count("--verify", optarg, 8, &req.verify)) return 2;
        break;
      case 'm':
        if (strcmp(optarg, "merlin") && strcmp(optarg, "gc")) {
          cli_error("tune: --profile-mode: '%s' is not merlin or gc", optarg);
          return 2;
        }
        req.profile_mode = optarg;
        break;
      case 'k': req.keep_profile = optarg; break;
      case 'K': req.kv = true; break;
      case 'G': return list_grid(optarg);
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default:
        if (optopt) cli_error("tune: option '-%c' needs a value or is unknown (see 'ephemera tune --help')", optopt);
        else cli_error("tune: unknown option '%s' or missing value (see 'ephemera tune --help')", argv[optind - 1]);
        return 2;
    }
  }
  const char *self = self_path();
  if (!self) {
    cli_error("tune: cannot find the ephemera executable (/proc/self/exe)");
    return 1;
  }
  eph_error err;
  if (lua) {
    if (req.target.command || req.target.size) {
      cli_error("tune: --lua does not take --cmd or --size");
      return 2;
    }
    if (req.verify > 8) {
      cli_error("tune: --verify: at most 8 with --lua");
      return 2;
    }
    if (optind < nopts) {
      cli_error("tune: unexpected argument '%s' before --lua SCRIPT", argv[optind]);
      return 2;
    }
    int nargs = argc - script_args;
    char **script = calloc((size_t)nargs + 2, sizeof *script);
    if (!script) return 1;
    script[0] = (char *)lua;
    for (int i = 0; i < nargs; i++) script[i + 1] = argv[script_args + i];
    eph_tune_lua_request lr = {self, script, req.invocations, req.verify, req.kv};
    eph_tune_lua_result res;
    eph_status st = eph_tune_lua_run(&lr, eph_render_tune_lua_progress, stdout, &res, &err);
    free(script);
    if (st != EPH_OK) {
      cli_error("tune: %s", err.message);
      return 1;
    }
    return 0;
  }
  if (eph_tune_objective_parse(objective, &req.objective, &err) != EPH_OK) {
    cli_error("tune: --objective: %s", err.message);
    return 2;
  }
  if (req.verify > 5) {
    cli_error("tune: --verify: at most 5 configurations (the default included)");
    return 2;
  }
  if (req.target.command) {
    if (optind < argc) {
      cli_error("tune: --cmd takes no WORKLOAD (got '%s')", argv[optind]);
      return 2;
    }
    if (req.target.size) {
      cli_error("tune: --size is for workloads; put the size in the --cmd line");
      return 2;
    }
  } else {
    if (optind >= argc) {
      cli_error("tune: name a WORKLOAD, --cmd 'PROGRAM ARGS' or --lua SCRIPT (see 'ephemera tune --help')");
      return 2;
    }
    if (optind + 1 < argc) {
      cli_error("tune: unexpected argument '%s'", argv[optind + 1]);
      return 2;
    }
    if (!wl_find(argv[optind])) {
      cli_error("tune: unknown workload '%s' (see 'ephemera workloads')", argv[optind]);
      return 2;
    }
    if (req.target.size) { /* refused here, in one line, rather than by the profiled run */
      uint64_t n;
      char why[256];
      if (wl_parse_size(wl_find(argv[optind]), req.target.size, &n, why, sizeof why)) {
        cli_error("tune: --size: %s", why);
        return 2;
      }
    }
    req.target.workload = argv[optind];
  }
  req.target.ephemera = self;
  eph_tune_result res;
  eph_status st = eph_tune_run(&req, eph_render_tune_progress, stdout, &res, &err);
  eph_tune_result_free(&res);
  if (st != EPH_OK) {
    cli_error("tune: %s", err.message);
    return 1;
  }
  return 0;
}
