/*
 * sweep.c — runs a sweep: every invocation a fresh `ephemera bench run-one`
 * child (the same command line `plan` writes), live progress with an ETA,
 * --ci's extra invocations; and the job list of `plan`.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"

extern char **environ;

void eph_bench_options_init(eph_bench_options *o) {
  memset(o, 0, sizeof *o);
  o->invocations = 5;
  o->iterations = 1;
  o->warmup = 1;
  o->max_invocations = 30;
  o->use_cache = true;
}

enum { ARGV_MAX = 24 };

/* The child's command line; strings point into bufs (64 bytes each). */
static void child_argv(const char *exe, size_t ti, size_t ci, size_t inv, const eph_bench_target *t,
                       const eph_bench_config *c, unsigned warmup, unsigned iterations, const char *out,
                       const char *argv[ARGV_MAX], char bufs[5][64]) {
  snprintf(bufs[0], 64, "%zu,%zu,%zu", ti, ci, inv);
  snprintf(bufs[1], 64, "%.17g", c->factor);
  snprintf(bufs[2], 64, "%llu", (unsigned long long)c->heap_bytes);
  snprintf(bufs[3], 64, "%u", warmup);
  snprintf(bufs[4], 64, "%u", iterations);
  int n = 0;
  argv[n++] = exe;
  argv[n++] = "bench";
  argv[n++] = "run-one";
  argv[n++] = "--target";
  argv[n++] = t->spec;
  argv[n++] = "--gc";
  argv[n++] = c->gc;
  argv[n++] = "--factor";
  argv[n++] = bufs[1];
  argv[n++] = "--heap-bytes";
  argv[n++] = bufs[2];
  argv[n++] = "--warmup";
  argv[n++] = bufs[3];
  argv[n++] = "--iterations";
  argv[n++] = bufs[4];
  argv[n++] = "--index";
  argv[n++] = bufs[0];
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n] = NULL;
}

static void last_line(int fd, char *buf, size_t len) {
  buf[0] = 0;
  FILE *f = fdopen(dup(fd), "r");
  if (!f) return;
  rewind(f);
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0]) snprintf(buf, len, "%.*s", (int)(len - 1), line);
  }
  fclose(f);
}

int eph_bench_spawn(const char *exe, size_t ti, size_t ci, size_t inv, const eph_bench_target *t,
                    const eph_bench_config *c, unsigned warmup, unsigned iterations, eph_bench_run *run,
                    eph_error *err) {
  char out[] = "/tmp/eph-bench-run-XXXXXX", errp[] = "/tmp/eph-bench-err-XXXXXX";
  int ofd = mkstemp(out), efd = ofd >= 0 ? mkstemp(errp) : -1;
  if (ofd < 0 || efd < 0) {
    if (ofd >= 0) close(ofd), unlink(out);
    eph_error_fill(err, EPH_ERR_IO, "cannot make a temporary file: %s", strerror(errno));
    return -1;
  }
  close(ofd);
  const char *argv[ARGV_MAX];
  char bufs[5][64];
  child_argv(exe, ti, ci, inv, t, c, warmup, iterations, out, argv, bufs);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, efd, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  int result = -1;
  if (rc) {
    eph_error_fill(err, EPH_ERR_IO, "cannot run %s: %s", exe, strerror(rc));
  } else {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    eph_bench_results one = {0};
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && eph_bench_results_load(&one, out, err) == 0 &&
        one.nruns == 1) {
      *run = one.runs[0];
      one.nruns = 0;
      result = 0;
    } else {
      /* the child died before writing its result: a failed run, not an error */
      char why[400];
      last_line(efd, why, sizeof why);
      memset(run, 0, sizeof *run);
      run->target = *t;
      run->config = *c;
      run->target_index = ti, run->config_index = ci, run->invocation = inv;
      snprintf(run->version, sizeof run->version, "%s", EPH_BENCH_VERSION);
      if (WIFSIGNALED(status))
        snprintf(run->error, sizeof run->error, "killed by signal %d%s%s", WTERMSIG(status), why[0] ? ": " : "", why);
      else snprintf(run->error, sizeof run->error, "%s", why[0] ? why : "the child wrote no result");
      result = 0;
    }
    eph_bench_results_free(&one);
  }
  close(efd);
  unlink(out), unlink(errp);
  return result;
}

int eph_bench_configs(const eph_bench_options *o, size_t ti, eph_bench_config **configs, size_t *n, eph_error *err) {
  size_t ngc = o->ngcs ? o->ngcs : 1, nf = o->nfactors ? o->nfactors : 1;
  eph_bench_config *c = calloc(ngc * nf, sizeof *c);
  if (!c) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (size_t g = 0; g < ngc; g++) {
    const char *gc = o->ngcs ? o->gcs[g] : "";
    uint64_t minheap = 0;
    bool cached = false;
    if (o->nfactors && eph_bench_minheap(o, &o->targets[ti], gc, &minheap, &cached, err)) {
      free(c);
      return -1;
    }
    if (o->nfactors && o->log)
      fprintf(o->log, "minimum heap of %s%s%s: %.2f MiB%s\n", o->targets[ti].spec, gc[0] ? " with " : "", gc,
              (double)minheap / 1048576.0, cached ? " (cached)" : "");
    for (size_t f = 0; f < nf; f++) {
      eph_bench_config *x = &c[g * nf + f];
      snprintf(x->gc, sizeof x->gc, "%s", gc);
      if (o->nfactors) {
        x->factor = o->factors[f];
        x->heap_bytes = (uint64_t)ceil(o->factors[f] * (double)minheap);
      }
    }
  }
  *configs = c;
  *n = ngc * nf;
  return 0;
}

/* Mean timed wall time of a run, or NAN. */
static double run_wall(const eph_bench_run *run) {
  double s = 0;
  size_t n = 0;
  for (size_t i = 0; i < run->niters; i++)
    if (!run->iters[i].warmup) s += run->iters[i].wall_s, n++;
  return run->ok && n ? s / (double)n : NAN;
}

typedef struct progress {
  FILE *out;
  size_t done, total;
  double t0;
} progress;

static void show(progress *p, const eph_bench_run *next_t, const char *label, size_t inv) {
  if (!p->out) return;
  double el = eph_bench_clock(CLOCK_MONOTONIC) - p->t0;
  char eta[32] = "?";
  if (p->done) {
    double left = el / (double)p->done * (double)(p->total > p->done ? p->total - p->done : 0);
    snprintf(eta, sizeof eta, "%dm%02ds", (int)(left / 60), (int)fmod(left, 60));
  }
  fprintf(p->out, "\r\033[K[%zu/%zu] %s %s invocation %zu  ETA %s", p->done + 1, p->total, next_t->target.spec, label,
          inv + 1, eta);
  fflush(p->out);
}

int eph_bench_sweep(const eph_bench_options *o, eph_bench_results *r, eph_error *err) {
  r->ci_target = o->ci_target;
  eph_bench_config **cfg = calloc(o->ntargets, sizeof *cfg);
  size_t *ncfg = calloc(o->ntargets, sizeof *ncfg);
  int rc = -1;
  if (!cfg || !ncfg) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    goto out;
  }
  progress p = {.out = o->progress};
  for (size_t t = 0; t < o->ntargets; t++) {
    if (eph_bench_configs(o, t, &cfg[t], &ncfg[t], err)) goto out;
    p.total += ncfg[t] * o->invocations;
  }
  p.t0 = eph_bench_clock(CLOCK_MONOTONIC);
  for (size_t t = 0; t < o->ntargets; t++)
    for (size_t c = 0; c < ncfg[t]; c++) {
      char label[300];
      eph_bench_config_label(&cfg[t][c], label, sizeof label);
      double *walls = calloc(o->max_invocations + o->invocations + 1, sizeof *walls);
      size_t nw = 0;
      if (!walls) {
        eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
        goto out;
      }
      for (size_t inv = 0;; inv++) {
        if (inv >= o->invocations) { /* --ci: one more while too wide, up to the cap */
          eph_bench_stat s;
          eph_bench_stat_of(walls, nw, &s);
          if (!o->ci_target || inv >= o->max_invocations || nw < 2 || (s.mean > 0 && s.ci / s.mean <= o->ci_target))
            break;
          p.total++;
        }
        eph_bench_run tmp = {.target = o->targets[t]};
        show(&p, &tmp, label, inv);
        eph_bench_run run;
        if (eph_bench_spawn(o->exe, t, c, inv, &o->targets[t], &cfg[t][c], o->warmup, o->iterations, &run, err)) {
          free(walls);
          goto out;
        }
        p.done++;
        double w = run_wall(&run);
        if (!isnan(w)) walls[nw++] = w;
        if (eph_bench_results_add(r, &run, err)) {
          eph_bench_run_free(&run);
          free(walls);
          goto out;
        }
      }
      free(walls);
    }
  if (p.out) fprintf(p.out, "\r\033[K");
  rc = 0;
out:
  for (size_t t = 0; cfg && t < o->ntargets; t++) free(cfg[t]);
  free(cfg), free(ncfg);
  return rc;
}

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
        const char *argv[ARGV_MAX];
        char bufs[5][64];
        child_argv(o->exe, t, c, inv, &o->targets[t], &cfg[c], o->warmup, o->iterations, out, argv, bufs);
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
