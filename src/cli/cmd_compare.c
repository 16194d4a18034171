/*
 * cmd_compare.c — `ephemera compare A B`: two profiles side by side (FiLiP
 * Tables 1–2), a distance between their lifetime distributions, and flags
 * on changes larger than sampling noise explains (src/analysis/compare.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "ephemera/format.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera compare A B [--format text|csv|json] [--z Z] [--end death|alive|mid]\n"
               "  A is the baseline, B the other run (actionable profiler, another sampling rate, other GC settings).\n"
               "  --z Z   a class's change is flagged when |z| > Z (default 3) and its KS distance exceeds the 5 %% level\n");
}

int cmd_compare(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL}, *format = "text";
  double z = 3;
  eph_analysis_opts o;
  eph_analysis_opts_default(&o);
  int npaths = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(arg, "--format") || !strcmp(arg, "--z") || !strcmp(arg, "--end")) {
      if (!val) {
        cli_error("compare: %s needs a value", arg);
        return 2;
      }
      i++;
      if (!strcmp(arg, "--format")) format = val;
      else if (!strcmp(arg, "--z")) z = strtod(val, NULL);
      else if (!strcmp(val, "death") || !strcmp(val, "alive") || !strcmp(val, "mid"))
        o.end = !strcmp(val, "death") ? EPH_END_DEATH : !strcmp(val, "alive") ? EPH_END_ALIVE : EPH_END_MID;
      else {
        cli_error("compare: --end takes death, alive or mid, not '%s'", val);
        return 2;
      }
    } else if (arg[0] == '-' && arg[1]) {
      cli_error("compare: unknown option '%s' (try 'ephemera compare --help')", arg);
      return 2;
    } else if (npaths < 2) paths[npaths++] = arg;
    else {
      cli_error("compare: two files only ('%s' is extra)", arg);
      return 2;
    }
  }
  if (npaths != 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json")) {
    cli_error("compare: --format takes text, csv or json, not '%s'", format);
    return 2;
  }
  eph_file *p[2] = {NULL, NULL};
  eph_analysis *an[2] = {NULL, NULL};
  int rc = 1;
  for (int k = 0; k < 2; k++) {
    eph_error err = {0};
    an[k] = eph_analysis_load(paths[k], &o, &p[k], &err);
    if (!an[k]) {
      cli_error("%s", err.message);
      goto done;
    }
    if (p[k]->warning[0]) cli_error("warning: %s: %s", paths[k], p[k]->warning);
  }
  eph_compare *c = eph_compare_run(an[0], an[1], z);
  if (!c) {
    cli_error("compare: out of memory");
    goto done;
  }
  if (!strcmp(format, "csv")) eph_compare_csv(stdout, c);
  else if (!strcmp(format, "json")) eph_compare_json(stdout, c);
  else eph_compare_text(stdout, c);
  eph_compare_free(c);
  rc = 0;
done:
  for (int k = 0; k < 2; k++) {
    eph_analysis_free(an[k]);
    eph_file_free(p[k]);
  }
  return rc;
}
