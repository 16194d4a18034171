/*
 * cmd_report.c — `ephemera report FILE`: lifetime histograms, the class (or
 * site) table, Kaplan–Meier survival and, for exact traces, Merlin's heap
 * views, as text, CSV, JSON or one HTML page (src/analysis/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "render.h"
#include "ephemera/format.h"
#include "ephemera/tune.h"

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

typedef struct progress_state {
  bool on;
  const char *last;
} progress_state;

static void progress(const char *stage, double f, void *ctx) {
  progress_state *ps = ctx;
  if (!ps->on) return;
  if (!stage) {
    fputs("\r\033[K", stderr);
    return;
  }
  fprintf(stderr, "\r\033[Kanalysing: %s %3.0f%%", stage, 100 * f);
  fflush(stderr);
}

/* The advisor's top predicted GC configuration for this profile (src/tune),
 * after the text report; a profile it cannot judge gets a one-line warning. */
static void report_gc_suggestion(FILE *out, const char *path) {
  eph_error err;
  if (eph_tune_report_suggestion(path, out, &err) != EPH_OK) cli_error("warning: GC suggestion: %s", err.message);
}

/* Writes the report of path in format to stdout or into dir; returns the exit status. */
static int render(const eph_analysis *a, const char *path, const char *format, const char *dir) {
  if (dir && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    cli_error("report: cannot create %s: %s", dir, strerror(errno));
    return CLI_FAILED;
  }
  if (!strcmp(format, "csv")) {
    errno = 0;
    bool ok = eph_render_csv(stdout, dir, a);
    if (dir && !ok) {
      cli_error("report: writing CSV into %s: %s", dir, errno ? strerror(errno) : "write error");
      return CLI_FAILED;
    }
    if (dir)
      printf("wrote %s/{summary,histogram,classes,survival%s%s}.csv\n", dir, a->heap ? ",heap" : "",
             a->profile->ngcs ? ",timeline" : "");
    return cli_stdout_done(dir ? "the list of files written" : "the report");
  }
  FILE *out = stdout;
  char file[4096];
  if (dir) {
    snprintf(file, sizeof file, "%s/report.%s", dir, !strcmp(format, "text") ? "txt" : format);
    out = fopen(file, "w");
    if (!out) {
      cli_error("report: cannot write %s: %s", file, strerror(errno));
      return CLI_FAILED;
    }
  }
  bool plots_ok = true;
  char failed[4096] = "";
  int plot_errno = 0;
  if (!strcmp(format, "text")) {
    eph_render_text(out, a, !dir && isatty(STDOUT_FILENO));
    report_gc_suggestion(out, path);
  }
  else if (!strcmp(format, "json")) eph_render_json(out, a);
  else {
    /* The flame graph's space-time by stack: the file read once more, whole. */
    eph_file *whole = NULL;
    eph_error err;
    eph_spacetime *flame = eph_spacetime_load(path, a->opts.end, &whole, &err);
    if (!flame) cli_error("warning: no flame graph: %s", err.message);
    if (!(plots_ok = eph_render_html_with(out, a, flame, dir, failed, sizeof failed))) plot_errno = errno;
    eph_spacetime_free(flame);
    eph_file_free(whole);
  }
  if (!cli_output_done(out, dir ? file : "the report", dir != NULL)) return CLI_FAILED;
  if (!plots_ok) {
    cli_error("report: writing %s: %s", failed, strerror(plot_errno));
    return CLI_FAILED;
  }
  if (!dir) return CLI_OK;
  printf("wrote %s\n", file);
  return cli_stdout_done("the list of files written");
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
  static const char *const ends[] = {"death", "alive", "mid", NULL};
  static const char *const clocks[] = {"rel", "bytes", "seconds", NULL};
  static const eph_clock clock_of[] = {EPH_CLOCK_REL, EPH_CLOCK_BYTES, EPH_CLOCK_SECONDS};
  enum { TEXT, CSV, JSON, HTML } format = TEXT;
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
        if ((k = cli_opt_choice("--end", optarg, ends)) < 0) return CLI_USAGE;
        o.end = k == 0 ? EPH_END_DEATH : k == 1 ? EPH_END_ALIVE : EPH_END_MID;
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
      case OPT_LOWER: {
        static const char *const lowers[] = {"recorded", "proven", NULL};
        if ((k = cli_opt_choice("--lower", optarg, lowers)) < 0) return CLI_USAGE;
        o.nepotism_safe = k == 1;
        break;
      }
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("needs a FILE");
  if (optind + 1 < argc) return cli_usage_error("one FILE only ('%s' is extra)", argv[optind + 1]);
  const char *path = argv[optind];
  progress_state ps = {isatty(STDERR_FILENO) != 0, NULL};
  if (ps.on) {
    fprintf(stderr, "reading %s ...", path);
    fflush(stderr);
  }
  o.progress = progress;
  o.progress_ctx = &ps;
  o.drop_lives = true; /* rendering needs only the tables and curves */
  eph_file *p = NULL;
  eph_error err = {0};
  eph_analysis *a = eph_analysis_load(path, &o, &p, &err);
  if (ps.on) fputs("\r\033[K", stderr);
  if (!a) {
    cli_error("%s", err.message);
    return cli_load_failed(err.status);
  }
  if (p->warning[0]) cli_error("warning: %s: %s", path, p->warning);
  int rc = render(a, path, format == TEXT ? "text" : format == CSV ? "csv" : format == JSON ? "json" : "html", dir);
  eph_analysis_free(a);
  eph_file_free(p);
  return rc;
}
