/*
 * cmd_report.c — `ephemera report FILE`: lifetime histograms, the class (or
 * site) table, Kaplan–Meier survival and, for exact traces, Merlin's heap
 * views, as text, CSV, JSON or one HTML page (src/analysis/).
 */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "render/report.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera report FILE [--format text|csv|json|html] [-o DIR] [--by class|site]\n"
          "                       [--short PCT] [--most PCT] [--end death|alive|mid] [--survival-clock rel|bytes|seconds]\n"
          "                       [--curves N] [--lower recorded|proven] [--stack-depth N]\n"
          "  --format F   text (default), csv, json, or html (one self-contained page; plots need gnuplot)\n"
          "  -o DIR       write report.txt / *.csv / report.json / report.html (+ plot SVGs) into DIR\n"
          "  --by site    the table by allocation site instead of class\n"
          "  --stack-depth N  with --by site on a profile with call stacks: one row per distinct first N\n"
          "               frames (1, the default: per allocation point)\n"
          "  --short PCT  short-lived: mean lifetime <= PCT %% of the run (FiLiP: 5)\n"
          "  --most PCT   most allocated: >= PCT %% of allocations (FiLiP: 1)\n"
          "  --end E      GC-found deaths lie in (alive_until, death]: use death (default, upper end),\n"
          "               alive (lower end) or mid; the other end is shown where it differs\n"
          "  --survival-clock C  lifetime axis of the survival curves (default rel: %% of run)\n"
          "  --curves N   classes with their own survival curve (default 6)\n"
          "  --lower L    the estimates' lower end of a death only a full GC found: recorded (default, the last\n"
          "               collection it survived) or proven (the last full GC it survived: safe from nepotism)\n" CLI_EXIT_HELP);
}

/* A warning that does not stop the report, on stderr. */
static void warn(void *ctx, const char *line) {
  (void)ctx;
  cli_error("warning: %s", line);
}

int cmd_report(int argc, char **argv) {
  enum { OPT_FORMAT = 256, OPT_BY, OPT_SHORT, OPT_MOST, OPT_END, OPT_KM_CLOCK, OPT_CURVES, OPT_STACK_DEPTH, OPT_LOWER };
  static const struct option longopts[] = {
      {"format", required_argument, NULL, OPT_FORMAT}, {"output", required_argument, NULL, 'o'},
      {"by", required_argument, NULL, OPT_BY},         {"short", required_argument, NULL, OPT_SHORT},
      {"most", required_argument, NULL, OPT_MOST},     {"end", required_argument, NULL, OPT_END},
      {"survival-clock", required_argument, NULL, OPT_KM_CLOCK},
      {"curves", required_argument, NULL, OPT_CURVES}, {"help", no_argument, NULL, 'h'},
      {"stack-depth", required_argument, NULL, OPT_STACK_DEPTH}, {"lower", required_argument, NULL, OPT_LOWER},
      {0}};
  static const char *const formats[] = {"text", "csv", "json", "html", NULL};
  static const char *const bys[] = {"class", "site", NULL};
  static const char *const clocks[] = {"rel", "bytes", "seconds", NULL};
  static const eph_clock clock_of[] = {EPH_CLOCK_REL, EPH_CLOCK_BYTES, EPH_CLOCK_SECONDS};
  int format = EPH_REPORT_TEXT; /* formats[] in eph_report_format's order */
  const char *dir = NULL;
  eph_analysis_opts o;
  eph_analysis_opts_default(&o);
  uint64_t curves;
  int k;
  for (int c; (c = cli_getopt(argc, argv, ":o:h", longopts)) != -1;) {
    switch (c) {
      case OPT_FORMAT:
        if ((k = cli_opt_choice("--format", optarg, formats)) < 0) return CLI_USAGE;
        format = k;
        break;
      case 'o': dir = optarg; break;
      case OPT_BY:
        if ((k = cli_opt_choice("--by", optarg, bys)) < 0) return CLI_USAGE;
        o.by = k ? EPH_BY_SITE : EPH_BY_CLASS;
        break;
      case OPT_SHORT:
        if (!cli_opt_double("--short", optarg, 0, 100, true, &o.short_threshold_pct)) return CLI_USAGE;
        break;
      case OPT_MOST:
        if (!cli_opt_double("--most", optarg, 0, 100, true, &o.most_allocated_pct)) return CLI_USAGE;
        break;
      case OPT_END:
        if (!cli_opt_end(optarg, &o)) return CLI_USAGE;
        break;
      case OPT_KM_CLOCK:
        if ((k = cli_opt_choice("--survival-clock", optarg, clocks)) < 0) return CLI_USAGE;
        o.km_clock = clock_of[k];
        break;
      case OPT_CURVES:
        if (!cli_opt_u64("--curves", optarg, CLI_COUNT, 0, 1000000, &curves)) return CLI_USAGE;
        o.km_groups = (size_t)curves;
        break;
      case OPT_STACK_DEPTH:
        if (!cli_opt_u64("--stack-depth", optarg, CLI_COUNT, 1, EPH_FORMAT_MAX_STACK + 1, &curves)) return CLI_USAGE;
        o.stack_depth = (unsigned)curves;
        break;
      case OPT_LOWER:
        if (!cli_opt_lower(optarg, &o)) return CLI_USAGE;
        break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("needs a FILE");
  if (optind + 1 < argc) return cli_usage_error("one FILE only ('%s' is extra)", argv[optind + 1]);
  eph_report_request req = {.path = argv[optind], .format = (eph_report_format)format, .dir = dir, .opts = o,
                            .color = !dir && isatty(STDOUT_FILENO), .progress = isatty(STDERR_FILENO) ? stderr : NULL,
                            .warn = warn};
  eph_error err = {0};
  eph_status st = eph_report_write(&req, &err);
  if (st == EPH_OK) return CLI_OK;
  cli_error("%s", err.message);
  return st == EPH_ERR_IO ? CLI_FAILED : cli_load_failed(st);
}
