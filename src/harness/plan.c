/*
 * plan.c — `ephemera bench plan`: one self-contained shell command per run
 * of a sweep, for GNU parallel, --sshlogin hosts or a Slurm array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"

/* Writes s quoted for the shell. */
static void shell_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputs("'\\''", f);
    else fputc(*s, f);
  }
  fputc('\'', f);
}

long eph_bench_plan(const eph_bench_options *o, const char *dir, FILE *jobs, eph_error *err) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", dir, strerror(errno));
    return -1;
  }
  char absdir[4096];
  if (!realpath(dir, absdir)) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", dir, strerror(errno));
    return -1;
  }
  long n = 0;
  for (size_t t = 0; t < o->ntargets; t++) {
    eph_bench_config *cfg;
    size_t ncfg;
    if (eph_bench_configs(o, t, &cfg, &ncfg, err)) return -1;
    for (size_t c = 0; c < ncfg; c++)
      for (size_t inv = 0; inv < o->invocations; inv++) {
        char out[4200];
        snprintf(out, sizeof out, "%s/run-%03zu-%03zu-%03zu.json", absdir, t, c, inv);
        const char *argv[EPH_BENCH_ARGV_MAX];
        char bufs[5][64];
        eph_bench_child_argv(o->exe, t, c, inv, &o->targets[t], &cfg[c], o->warmup, o->iterations, out, argv, bufs);
        for (int a = 0; argv[a]; a++) {
          if (a) fputc(' ', jobs);
          shell_quote(jobs, argv[a]);
        }
        fputc('\n', jobs);
        n++;
      }
    free(cfg);
  }
  if (ferror(jobs)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write the job list: %s", strerror(errno));
    return -1;
  }
  return n;
}
