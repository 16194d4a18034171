/*
 * cmd_compare.c — `ephemera compare A B`: two profiles side by side (FiLiP
 * Tables 1–2), a distance between their lifetime distributions, and flags
 * on changes larger than sampling noise explains (src/analysis/compare.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "render/compare_report.h"

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

/* A warning that does not stop the comparison, on stderr. */
static void warn(void *ctx, const char *line) {
  (void)ctx;
  cli_error("warning: %s", line);
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
  static const char *const formats[] = {"text", "csv", "json", NULL}; /* eph_compare_format's order */
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
  eph_compare_request req = {.paths = {exact ? exact : argv[optind], exact ? argv[optind] : argv[optind + 1]},
                             .exact = exact != NULL, .format = (eph_compare_format)format, .opts = o, .z = z,
                             .wall = wall, .warn = warn};
  eph_error err = {0};
  bool bad_input;
  if (eph_compare_write(&req, &bad_input, &err) == EPH_OK) return CLI_OK;
  cli_error("%s", err.message);
  return bad_input ? CLI_BAD_INPUT : CLI_FAILED;
}
