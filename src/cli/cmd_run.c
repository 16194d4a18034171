/*
 * cmd_run.c — `ephemera run WORKLOAD [options] [workload options]`: the
 * run (with the profiler on it) is the harness's (src/harness/bench_workload.h),
 * its results the renderer's (render_run.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render/render.h"
#include "harness/bench_workload.h"
#include "ephemera/profile.h"
#include "workloads/workload.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera run WORKLOAD [--size S] [--gc PARAMS] [--retain CLASS[,CLASS]] [--seed N] [--quiet]\n"
          "                    [workload options]\n"
          "  --size S       small, middle, default, large, or a number in the workload's unit\n"
          "  --gc PARAMS    GC parameters, e.g. eden=64M,headroom=64M,shrink=128M,ratio=2.5\n"
          "  --retain C,..  keep every instance of these classes alive until the end\n"
          "  --seed N       input generator seed (default 42)\n"
          "  --profile SPEC profile lifetimes: mode=gc|finalization|merlin|brute,sample=1/N|bytes:B,classes=A,B,\n"
          "                 pretenure=on|off (finalization), threads=1|2|auto (gc), granule=K (brute)\n"
          "  -o FILE        where the profile goes (default ephemera.eph)\n"
          "  --trace        with mode=merlin: also write the full event trace (allocations, stores, roots, deaths)\n"
          "  --kv           end with one line of key=value pairs (for scripts)\n"
          "  workload options: see 'ephemera workloads -v' (e.g. ephemera run boids --frames 100)\n"
          CLI_EXIT_HELP
          "'ephemera workloads -v' lists workloads, classes and options.  GC parameters:\n");
  eph_gc_params_describe(out);
}

/* What the runner would refuse as bad usage, checked before the run so
 * that the runner's own failures mean a failed run (exit 1). */
static bool check_usage(const wl_workload *wl, const wl_run_options *opt) {
  char err[512];
  uint64_t size;
  if (wl_parse_size(wl, opt->size, &size, err, sizeof err)) {
    cli_error("run: --size: %s", err);
    return false;
  }
  eph_gc_params p;
  eph_error e;
  eph_gc_params_init(&p);
  if (opt->gc && eph_gc_params_parse(&p, opt->gc, &e) != EPH_OK) {
    cli_error("run: --gc: %s", e.message);
    return false;
  }
  if (opt->retain && wl_class_list(wl, opt->retain, "--retain", NULL, err, sizeof err)) {
    cli_error("run: %s", err);
    return false;
  }
  return true;
}

/* A workload option's value, through the one number parser. */
static bool workload_option_ok(const wl_option *wo, const char *flag, const char *value) {
  uint64_t n;
  double d;
  switch (wo->kind) {
    case WL_OPT_FLAG: return true;
    case WL_OPT_COUNT: return cli_opt_u64(flag, value, CLI_COUNT, (uint64_t)wo->min, (uint64_t)wo->max, &n);
    case WL_OPT_WORD: return cli_opt_choice(flag, value, wo->words) >= 0;
    case WL_OPT_REAL:
      if (!cli_opt_double(flag, value, wo->min, wo->max, false, &d)) return false;
      if (d > wo->min && d < wo->max) return true;
      cli_error("run: %s: bad value '%s' (expected a number between %g and %g, both excluded)", flag, value, wo->min,
                wo->max);
      return false;
  }
  return false;
}

int cmd_run(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    usage(stdout);
    return cli_stdout_done("the help");
  }
  if (argc < 2 || argv[1][0] == '-') return cli_usage_error("needs a WORKLOAD (see 'ephemera workloads')");
  const wl_workload *wl = wl_find(argv[1]);
  if (!wl) {
    cli_error("run: unknown workload '%s' (see 'ephemera workloads')", argv[1]);
    return CLI_USAGE;
  }
  enum { OPT_SIZE = 256, OPT_GC, OPT_RETAIN, OPT_SEED, OPT_QUIET, OPT_PROFILE, OPT_TRACE, OPT_KV, OPT_WORKLOAD };
  static const struct option common[] = {
      {"size", required_argument, NULL, OPT_SIZE},     {"gc", required_argument, NULL, OPT_GC},
      {"retain", required_argument, NULL, OPT_RETAIN}, {"seed", required_argument, NULL, OPT_SEED},
      {"quiet", no_argument, NULL, OPT_QUIET},         {"profile", required_argument, NULL, OPT_PROFILE},
      {"output", required_argument, NULL, 'o'},        {"trace", no_argument, NULL, OPT_TRACE},
      {"kv", no_argument, NULL, OPT_KV},               {"help", no_argument, NULL, 'h'}};
  enum { NCOMMON = sizeof common / sizeof common[0], MAX_WL_OPTIONS = 16 };
  /* The common options, then the workload's own (OPT_WORKLOAD + index). */
  struct option longopts[NCOMMON + MAX_WL_OPTIONS + 1];
  memcpy(longopts, common, sizeof common);
  size_t nwl = 0;
  for (; wl->options && wl->options[nwl].name && nwl < MAX_WL_OPTIONS; nwl++)
    longopts[NCOMMON + nwl] = (struct option){wl->options[nwl].name,
                                              wl->options[nwl].kind == WL_OPT_FLAG ? no_argument : required_argument,
                                              NULL, OPT_WORKLOAD + (int)nwl};
  longopts[NCOMMON + nwl] = (struct option){0};
  wl_run_options opt = {0};
  const char *profile_spec = NULL, *out = NULL;
  bool kv = false, trace = false;
  /* The workload's options, checked, as "--name" [value] pairs for its parse_options. */
  char **rest = calloc(2 * (size_t)argc + 1, sizeof *rest);
  char (*flags)[64] = calloc((size_t)argc + 1, sizeof *flags);
  int nrest = 0, nflags = 0, rc = CLI_USAGE;
  if (!rest || !flags) {
    cli_error("run: out of memory");
    rc = CLI_FAILED;
    goto out;
  }
  /* argv[1] (the workload) stands in for the program name. */
  for (int c; (c = cli_getopt(argc - 1, argv + 1, ":o:h", longopts)) != -1;) {
    if (c >= OPT_WORKLOAD) {
      const wl_option *wo = &wl->options[c - OPT_WORKLOAD];
      char *flag = flags[nflags++];
      snprintf(flag, sizeof flags[0], "--%s", wo->name);
      if (!workload_option_ok(wo, flag, optarg)) goto out;
      rest[nrest++] = flag;
      if (wo->kind != WL_OPT_FLAG) rest[nrest++] = optarg;
      continue;
    }
    switch (c) {
      case OPT_SIZE: opt.size = optarg; break;
      case OPT_GC: opt.gc = optarg; break;
      case OPT_RETAIN: opt.retain = optarg; break;
      case OPT_SEED:
        if (!cli_opt_u64("--seed", optarg, CLI_COUNT, 1, UINT64_MAX, &opt.seed)) goto out;
        break;
      case OPT_QUIET: opt.quiet = true; break;
      case OPT_PROFILE: profile_spec = optarg; break;
      case 'o': out = optarg; break;
      case OPT_TRACE: trace = true; break;
      case OPT_KV: kv = true; break;
      case 'h':
        usage(stdout);
        rc = cli_stdout_done("the help");
        goto out;
      default: goto out;
    }
  }
  if (optind < argc - 1) {
    cli_usage_error("unexpected argument '%s'", argv[1 + optind]);
    goto out;
  }
  opt.argc = nrest;
  opt.argv = rest;
  if (!check_usage(wl, &opt)) goto out;
  eph_profile_spec spec;
  eph_profile_spec_init(&spec);
  eph_bench_profiling pr = {.program = "ephemera run", .command = argv[1], .stop_on_signals = true};
  if (trace && !profile_spec) profile_spec = "mode=merlin";
  if (profile_spec || out) {
    eph_error e;
    if (profile_spec && eph_profile_spec_parse(&spec, profile_spec, &e) != EPH_OK) {
      cli_error("run: --profile: %s", e.message);
      goto out;
    }
    char cerr[512];
    if (spec.classes[0] && wl_class_list(wl, spec.classes, "--profile classes", NULL, cerr, sizeof cerr)) {
      cli_error("run: %s", cerr);
      goto out;
    }
    if (out) snprintf(spec.out, sizeof spec.out, "%s", out);
    if (trace) spec.trace = true;
    pr.spec = &spec;
  }
  wl_result res;
  char err[512];
  if (eph_bench_workload_run(wl, &opt, &pr, &res, err, sizeof err)) {
    cli_error("run: %s", pr.err.message[0] ? pr.err.message : err);
    rc = CLI_FAILED;
    goto out;
  }
  eph_render_run(stdout, wl, &res, opt.retain, pr.spec ? spec.out : NULL, &pr.stats);
  if (kv) eph_render_run_kv(stdout, wl, &res, &pr.stats);
  rc = cli_stdout_done("the results");
  if (rc == CLI_OK && !res.check_ok) rc = CLI_FAILED;
out:
  free(rest);
  free(flags);
  return rc;
}
