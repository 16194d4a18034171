/*
 * cmd_compare.c — `ephemera compare A B`: two profiles side by side (FiLiP
 * Tables 1–2), a distance between their lifetime distributions, and flags
 * on changes larger than sampling noise explains (src/analysis/compare.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "render/render.h"
#include "ephemera/format.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera compare A B [--format text|csv|json] [--z Z] [--end death|alive|mid] [--wall]\n"
               "       ephemera compare --exact EXACT OTHER [--format text|csv|json]\n"
               "  A is the baseline, B the other run (actionable profiler, another sampling rate, other GC settings).\n"
               "  --z Z   a class's change is flagged when |z| > Z (default 3) and its KS distance exceeds the 5 %% level\n"
               "  --lower recorded|proven  as for ephemera report\n"
               "  --wall  lifetimes in %% of the run's wall time (default: of the bytes it allocated, which the\n"
               "          profiler's own overhead does not move)\n"
               "  --exact EXACT: OTHER's lifetime estimates against EXACT's (a merlin or brute profile of the same\n"
               "          run), class by class, and OTHER's death brackets object by object\n"
               CLI_EXIT_HELP);
}

/* --exact: the calibration table and the brackets. */
static int calibrate(const char *const paths[2], eph_analysis *const an[2], int format) {
  if (!an[0]->exact) {
    cli_error("%s: not an exact profile (mode %s): --exact needs one made with mode=merlin or mode=brute", paths[0], an[0]->mode);
    return CLI_FAILED;
  }
  eph_bracket_stats bs;
  eph_error err = {0};
  if (eph_bracket_check(paths[0], paths[1], &bs, &err) != EPH_OK) {
    cli_error("%s", err.message);
    return cli_load_failed(err.status);
  }
  eph_calibration *c = eph_calibrate(an[0], an[1]);
  if (!c) {
    cli_error("compare: out of memory");
    return CLI_FAILED;
  }
  if (format == 1) eph_calibration_csv(stdout, c, &bs);
  else if (format == 2) eph_calibration_json(stdout, c, &bs);
  else eph_calibration_text(stdout, c, &bs);
  eph_calibration_free(c);
  return cli_stdout_done("the comparison");
}

int cmd_compare(int argc, char **argv) {
  enum { OPT_FORMAT = 256, OPT_Z, OPT_END, OPT_WALL, OPT_EXACT, OPT_LOWER };
  static const struct option longopts[] = {{"format", required_argument, NULL, OPT_FORMAT},
                                           {"z", required_argument, NULL, OPT_Z},
                                           {"end", required_argument, NULL, OPT_END},
                                           {"wall", no_argument, NULL, OPT_WALL},
                                           {"exact", required_argument, NULL, OPT_EXACT},
                                           {"lower", required_argument, NULL, OPT_LOWER}, {"help", no_argument, NULL, 'h'},
                                           {0}};
  static const char *const formats[] = {"text", "csv", "json", NULL};
  int format = 0;
  bool wall = false;
  const char *exact = NULL;
  double z = 3;
  eph_analysis_opts o;
  eph_analysis_opts_default(&o);
  for (int c; (c = cli_getopt(argc, argv, ":h", longopts)) != -1;) {
    switch (c) {
      case OPT_FORMAT:
        if ((format = cli_opt_choice("--format", optarg, formats)) < 0) return CLI_USAGE;
        break;
      case OPT_Z:
        if (!cli_opt_double("--z", optarg, 0, 1e9, false, &z)) return CLI_USAGE;
        break;
      case OPT_END:
        if (!cli_opt_end(optarg, &o)) return CLI_USAGE;
        break;
      case OPT_WALL: wall = true; break;
      case OPT_EXACT: exact = optarg; break;
      case OPT_LOWER:
        if (!cli_opt_lower(optarg, &o)) return CLI_USAGE;
        break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  int want = exact ? 1 : 2;
  if (argc - optind < want) return cli_usage_error(exact ? "--exact EXACT needs the other file, OTHER" : "needs two files, A and B");
  if (argc - optind > want) return cli_usage_error("%s ('%s' is extra)", exact ? "--exact EXACT OTHER: two files only" : "two files only",
                                                   argv[optind + want]);
  if (exact && wall) return cli_usage_error("--exact compares on the allocation clock only (no --wall)");
  const char *paths[2] = {exact ? exact : argv[optind], exact ? argv[optind] : argv[optind + 1]};
  o.drop_lives = exact != NULL; /* the calibration reads the estimates only */
  eph_file *p[2] = {NULL, NULL};
  eph_analysis *an[2] = {NULL, NULL};
  int rc = CLI_FAILED;
  for (int i = 0; i < 2; i++) {
    eph_error err = {0};
    an[i] = eph_analysis_load(paths[i], &o, &p[i], &err);
    if (!an[i]) {
      cli_error("%s", err.message);
      rc = cli_load_failed(err.status);
      goto done;
    }
    if (p[i]->warning[0]) cli_error("warning: %s: %s", paths[i], p[i]->warning);
  }
  if (exact) {
    rc = calibrate(paths, an, format);
    goto done;
  }
  eph_compare *c = eph_compare_run_on(an[0], an[1], z, wall ? EPH_CLOCK_REL : EPH_CLOCK_BYTES);
  if (!c) {
    cli_error("compare: out of memory");
    goto done;
  }
  if (format == 1) eph_compare_csv(stdout, c);
  else if (format == 2) eph_compare_json(stdout, c);
  else eph_compare_text(stdout, c);
  eph_compare_free(c);
  rc = cli_stdout_done("the comparison");
done:
  for (int i = 0; i < 2; i++) {
    eph_analysis_free(an[i]);
    eph_file_free(p[i]);
  }
  return rc;
}
