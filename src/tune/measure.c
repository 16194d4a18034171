/*
 * measure.c — repeated invocations of one configuration through the
 * benchmark harness (src/harness), with the mean and the 95 % confidence
 * interval of wall time; and the plain child processes of the profiled
 * runs and of Lua's measured settings.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ephemera/bench.h"
#include "ephemera/tune.h"
#include "tune_internal.h"

void eph_tune_mean_ci(const double *x, int n, double *mean, double *ci95) {
  /* Student's t, two-sided 95 %, for 1..30 degrees of freedom. */
  static const double t[31] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                               2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  double m = 0, v = 0;
  for (int i = 0; i < n; i++) m += x[i];
  m = n > 0 ? m / n : 0;
  for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
  *mean = m;
  if (n < 2) {
    *ci95 = 0;
    return;
  }
  double sd = sqrt(v / (n - 1));
  *ci95 = (n - 1 <= 30 ? t[n - 1] : 1.96) * sd / sqrt((double)n);
}

double tune_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void describe_status(int status, char *buf, size_t len) {
  if (WIFSIGNALED(status)) snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
  else snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

/* The mean over a run's iterations of one counter (negative: not reported). */
static double iter_mean(const eph_bench_run *run, size_t field) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < run->niters; i++) {
    if (run->iters[i].warmup) continue;
    int64_t v = *(const int64_t *)((const char *)&run->iters[i] + field);
    if (v >= 0) sum += (double)v, n++;
  }
  return n ? sum / (double)n : 0;
}

eph_status eph_tune_measure(const eph_tune_target *t, const char *gc, int invocations, eph_tune_measurement *out,
                            eph_error *err) {
  memset(out, 0, sizeof *out);
  if (invocations < 1) invocations = 1;
  /* Through the benchmark harness (src/harness): each invocation a fresh
   * `ephemera bench run-one` child, one timed iteration, no warm-up (a GC
   * configuration is judged on a whole run from a fresh heap). */
  char spec[1200];
  if (t->workload) snprintf(spec, sizeof spec, "%s:%s", t->workload, t->size ? t->size : "default");
  else snprintf(spec, sizeof spec, "cmd:%s", t->command);
  eph_bench_target bt;
  if (eph_bench_target_parse(spec, &bt, err)) return EPH_ERR_INVALID;
  eph_bench_options o;
  eph_bench_options_init(&o);
  const char *gcs[1] = {gc ? gc : ""};
  o.targets = &bt;
  o.ntargets = 1;
  o.gcs = gcs;
  o.ngcs = 1;
  o.invocations = (unsigned)invocations;
  o.iterations = 1;
  o.warmup = 0;
  o.exe = t->ephemera;
  o.use_cache = false;
  eph_bench_results r = {0};
  eph_bench_report rep = {0};
  eph_status st = EPH_OK;
  if (eph_bench_sweep(&o, &r, err) || eph_bench_summarize(&r, &rep, err)) {
    st = EPH_ERR_INVALID;
  } else if (rep.nrows != 1 || rep.rows[0].failed || rep.rows[0].invocations == 0) {
    const char *why = rep.nrows ? rep.rows[0].first_error : "no result";
    if (t->workload)
      eph_error_fill(err, EPH_ERR_INVALID, "'ephemera run %s --size %s%s%s' failed: %s", t->workload,
                     t->size ? t->size : "default", gc ? " --gc " : "", gc ? gc : "", why);
    else
      eph_error_fill(err, EPH_ERR_INVALID, "command '%s'%s%s failed: %s", t->command, gc ? " with EPHEMERA_GC=" : "",
                     gc ? gc : "", why);
    st = EPH_ERR_INVALID;
  } else {
    const eph_bench_summary *row = &rep.rows[0];
    out->n = (int)row->invocations;
    out->mean_s = row->wall.mean;
    out->ci95_s = row->wall.ci;
    out->min_s = row->wall.min;
    out->max_s = row->wall.max;
    out->gc_s = row->have_gc ? row->gc.mean : 0;
    out->peak_heap = row->peak.max;
    for (size_t i = 0; i < r.nruns; i++) {
      out->full_gcs += iter_mean(&r.runs[i], offsetof(eph_bench_iter, full_gcs)) / (double)r.nruns;
      out->scavenges += iter_mean(&r.runs[i], offsetof(eph_bench_iter, scavenges)) / (double)r.nruns;
    }
  }
  eph_bench_report_free(&rep);
  eph_bench_results_free(&r);
  return st;
}

eph_status tune_spawn(char *const argv[], const char *env_key, const char *env_value, const char *what, eph_error *err) {
  return tune_spawn_timed(argv, env_key, env_value, what, NULL, NULL, err);
}

eph_status tune_spawn_timed(char *const argv[], const char *env_key, const char *env_value, const char *what,
                            double *wall_s, double *max_rss, eph_error *err) {
  fflush(NULL);
  double t0 = tune_now_s();
  pid_t pid = fork();
  if (pid < 0) {
    eph_error_fill(err, EPH_ERR_IO, "cannot fork: %s", strerror(errno));
    return EPH_ERR_IO;
  }
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 0), dup2(null, 1), dup2(null, 2);
    if (env_key) setenv(env_key, env_value, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  if (wall_s) *wall_s = tune_now_s() - t0;
  if (max_rss) *max_rss = (double)ru.ru_maxrss * 1024.0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[64];
    describe_status(status, why, sizeof why);
    eph_error_fill(err, EPH_ERR_INVALID, "%s failed (%s)", what, why);
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}

