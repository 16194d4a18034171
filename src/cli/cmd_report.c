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

#include "analysis.h"
#include "cli.h"
#include "ephemera/tune.h"
#include "ephemera/format.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera report FILE [--format text|csv|json|html] [-o DIR] [--by class|site]\n"
          "                       [--short PCT] [--most PCT] [--end death|alive|mid] [--survival-clock rel|bytes|seconds]\n"
          "  --format F   text (default), csv, json, or html (one self-contained page; plots need gnuplot)\n"
          "  -o DIR       write report.txt / *.csv / report.json / report.html (+ plot SVGs) into DIR\n"
          "  --by site    the table by allocation site instead of class\n"
          "  --short PCT  short-lived: mean lifetime <= PCT %% of the run (FiLiP: 5)\n"
          "  --most PCT   most allocated: >= PCT %% of allocations (FiLiP: 1)\n"
          "  --end E      GC-found deaths lie in (alive_until, death]: use death (default, upper end),\n"
          "               alive (lower end) or mid; the other end is shown where it differs\n"
          "  --survival-clock C  lifetime axis of the survival curves (default rel: %% of run)\n"
          "  --curves N   classes with their own survival curve (default 6)\n");
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

static bool parse_pct(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || (*end && strcmp(end, "%")) || !(v >= 0 && v <= 100)) return false;
  *out = v;
  return true;
}

/* The advisor's top predicted GC configuration for this profile (src/tune). */
static void report_gc_suggestion(FILE *out, const char *path) {
  eph_error err;
  if (eph_tune_report_suggestion(path, out, &err) != EPH_OK) cli_error("warning: GC suggestion: %s", err.message);
}

int cmd_report(int argc, char **argv) {
  const char *path = NULL, *format = "text", *dir = NULL;
  eph_analysis_opts o;
  eph_analysis_opts_default(&o);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    }
    bool takes = !strcmp(arg, "--format") || !strcmp(arg, "-o") || !strcmp(arg, "--by") || !strcmp(arg, "--short") ||
                 !strcmp(arg, "--most") || !strcmp(arg, "--end") || !strcmp(arg, "--survival-clock") || !strcmp(arg, "--curves");
    if (takes && !val) {
      cli_error("report: %s needs a value", arg);
      return 2;
    }
    if (!strcmp(arg, "--format")) format = val;
    else if (!strcmp(arg, "-o")) dir = val;
    else if (!strcmp(arg, "--by")) {
      if (!strcmp(val, "class")) o.by = EPH_BY_CLASS;
      else if (!strcmp(val, "site")) o.by = EPH_BY_SITE;
      else { cli_error("report: --by takes class or site, not '%s'", val); return 2; }
    } else if (!strcmp(arg, "--short") || !strcmp(arg, "--most")) {
      if (!parse_pct(val, !strcmp(arg, "--short") ? &o.short_threshold_pct : &o.most_allocated_pct)) {
        cli_error("report: %s takes a percentage 0..100, not '%s'", arg, val);
        return 2;
      }
    } else if (!strcmp(arg, "--end")) {
      if (!strcmp(val, "death")) o.end = EPH_END_DEATH;
      else if (!strcmp(val, "alive")) o.end = EPH_END_ALIVE;
      else if (!strcmp(val, "mid")) o.end = EPH_END_MID;
      else { cli_error("report: --end takes death, alive or mid, not '%s'", val); return 2; }
    } else if (!strcmp(arg, "--survival-clock")) {
      if (!strcmp(val, "rel")) o.km_clock = EPH_CLOCK_REL;
      else if (!strcmp(val, "bytes")) o.km_clock = EPH_CLOCK_BYTES;
      else if (!strcmp(val, "seconds")) o.km_clock = EPH_CLOCK_SECONDS;
      else { cli_error("report: --survival-clock takes rel, bytes or seconds, not '%s'", val); return 2; }
    } else if (!strcmp(arg, "--curves")) {
      o.km_groups = (size_t)strtoul(val, NULL, 10);
    } else if (arg[0] == '-' && arg[1]) {
      cli_error("report: unknown option '%s' (try 'ephemera report --help')", arg);
      return 2;
    } else if (!path) {
      path = arg;
      continue;
    } else {
      cli_error("report: one FILE only ('%s' is extra)", arg);
      return 2;
    }
    if (takes) i++;
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json") && strcmp(format, "html")) {
    cli_error("report: --format takes text, csv, json or html, not '%s'", format);
    return 2;
  }
  progress_state ps = {isatty(STDERR_FILENO) != 0, NULL};
  if (ps.on) {
    fprintf(stderr, "reading %s ...", path);
    fflush(stderr);
  }
  o.progress = progress;
  o.progress_ctx = &ps;
  o.drop_lives = true; /* rendering needs only the tables and curves */
  eph_profile *p = NULL;
  eph_error err = {0};
  eph_analysis *a = eph_analysis_load(path, &o, &p, &err);
  if (ps.on) fputs("\r\033[K", stderr);
  if (!a) {
    cli_error("%s", err.message);
    return 1;
  }
  if (p->warning[0]) cli_error("warning: %s: %s", path, p->warning);
  int rc = 0;
  if (dir && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    cli_error("report: cannot create %s: %s", dir, strerror(errno));
    rc = 1;
    goto done;
  }
  if (!strcmp(format, "csv")) {
    if (!eph_render_csv(stdout, dir, a)) {
      cli_error("report: writing CSV%s%s: %s", dir ? " into " : "", dir ? dir : "", strerror(errno));
      rc = 1;
    } else if (dir) printf("wrote %s/{summary,histogram,classes,survival%s}.csv\n", dir, a->heap ? ",heap" : "");
    goto done;
  }
  FILE *out = stdout;
  char file[4096];
  if (dir) {
    snprintf(file, sizeof file, "%s/report.%s", dir, !strcmp(format, "text") ? "txt" : format);
    out = fopen(file, "w");
    if (!out) {
      cli_error("report: cannot write %s: %s", file, strerror(errno));
      rc = 1;
      goto done;
    }
  }
  if (!strcmp(format, "text")) {
    eph_render_text(out, a, !dir && isatty(STDOUT_FILENO));
    report_gc_suggestion(out, path);
  }
  else if (!strcmp(format, "json")) eph_render_json(out, a);
  else eph_render_html(out, a, dir);
  if (dir) {
    if (fclose(out) != 0) {
      cli_error("report: writing %s: %s", file, strerror(errno));
      rc = 1;
    } else printf("wrote %s\n", file);
  } else if (fflush(stdout) != 0) rc = 1;
done:
  eph_analysis_free(a);
  eph_profile_free(p);
  return rc;
}
