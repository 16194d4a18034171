/*
 * measure.c — repeated invocations of one configuration, each in a fresh
 * process, with the mean and the 95 % confidence interval of wall time.
 * A small stand-in for the benchmark harness (src/bench, issue 25), which
 * the advisor calls through eph_tune_measure only.
 */
#include <errno.h>
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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run's numbers. */
typedef struct one_run {
  double wall_s, gc_s, peak, full_gcs, scavenges;
} one_run;

/* Picks "key=number" out of a `--kv` line. */
static double kv_get(const char *line, const char *key) {
  size_t k = strlen(key);
  for (const char *p = line; (p = strstr(p, key)); p += k)
    if ((p == line || p[-1] == ' ') && p[k] == '=') return strtod(p + k + 1, NULL);
  return 0;
}

static void describe_status(int status, char *buf, size_t len) {
  if (WIFSIGNALED(status)) snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
  else snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

static eph_status run_once(const eph_tune_target *t, const char *gc, one_run *r, eph_error *err) {
  int pipefd[2];
  if (pipe(pipefd)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot create a pipe: %s", strerror(errno));
    return EPH_ERR_IO;
  }
  fflush(NULL);
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    eph_error_fill(err, EPH_ERR_IO, "cannot fork: %s", strerror(errno));
    return EPH_ERR_IO;
  }
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(pipefd[1], 1);
    if (null >= 0) dup2(null, 2), dup2(null, 0);
    close(pipefd[0]);
    if (t->workload) {
      const char *argv[12];
      int a = 0;
      argv[a++] = t->ephemera;
      argv[a++] = "run";
      argv[a++] = t->workload;
      if (t->size) argv[a++] = "--size", argv[a++] = t->size;
      if (gc) argv[a++] = "--gc", argv[a++] = gc;
      argv[a++] = "--quiet";
      argv[a++] = "--kv";
      argv[a] = NULL;
      unsetenv("EPHEMERA_GC");
      unsetenv("EPHEMERA_PROFILE");
      execv(t->ephemera, (char **)argv);
    } else {
      if (gc) setenv("EPHEMERA_GC", gc, 1);
      else unsetenv("EPHEMERA_GC");
      unsetenv("EPHEMERA_PROFILE");
      execl("/bin/sh", "sh", "-c", t->command, (char *)NULL);
    }
    _exit(127);
  }
  close(pipefd[1]);
  /* Read everything (the kv line is the last one) so the child never blocks. */
  char buf[4096], last[4096] = "";
  size_t fill = 0;
  ssize_t got;
  while ((got = read(pipefd[0], buf + fill, sizeof buf - 1 - fill)) > 0 || (got < 0 && errno == EINTR)) {
    if (got < 0) continue;
    fill += (size_t)got;
    buf[fill] = 0;
    char *nl;
    while ((nl = strchr(buf, '\n'))) {
      *nl = 0;
      if (!strncmp(buf, "kv ", 3)) snprintf(last, sizeof last, "%s", buf);
      fill -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, fill + 1);
    }
    if (fill == sizeof buf - 1) fill = 0; /* a very long line: not the kv one */
  }
  close(pipefd[0]);
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  r->wall_s = now_s() - t0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[64];
    describe_status(status, why, sizeof why);
    if (t->workload)
      eph_error_fill(err, EPH_ERR_INVALID, "'ephemera run %s%s%s%s%s' failed (%s)", t->workload, t->size ? " --size " : "",
                     t->size ? t->size : "", gc ? " --gc " : "", gc ? gc : "", why);
    else
      eph_error_fill(err, EPH_ERR_INVALID, "command '%s'%s%s failed (%s)", t->command, gc ? " with EPHEMERA_GC=" : "",
                     gc ? gc : "", why);
    return EPH_ERR_INVALID;
  }
  if (t->workload && last[0]) {
    r->wall_s = kv_get(last, "wall_s"); /* the workload's own time, without process start-up */
    r->gc_s = kv_get(last, "gc_s");
    r->peak = kv_get(last, "peak_committed");
    r->full_gcs = kv_get(last, "full_gcs");
    r->scavenges = kv_get(last, "scavenges");
  } else {
    r->gc_s = r->full_gcs = r->scavenges = 0;
    r->peak = (double)ru.ru_maxrss * 1024.0;
  }
  return EPH_OK;
}

eph_status eph_tune_measure(const eph_tune_target *t, const char *gc, int invocations, eph_tune_measurement *out,
                            eph_error *err) {
  memset(out, 0, sizeof *out);
  if (invocations < 1) invocations = 1;
  double *wall = malloc((size_t)invocations * sizeof *wall);
  if (!wall) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  for (int i = 0; i < invocations; i++) {
    one_run r;
    eph_status st = run_once(t, gc, &r, err);
    if (st != EPH_OK) {
      free(wall);
      return st;
    }
    wall[i] = r.wall_s;
    out->gc_s += r.gc_s / invocations;
    out->full_gcs += r.full_gcs / invocations;
    out->scavenges += r.scavenges / invocations;
    if (r.peak > out->peak_heap) out->peak_heap = r.peak;
  }
  out->n = invocations;
  eph_tune_mean_ci(wall, invocations, &out->mean_s, &out->ci95_s);
  free(wall);
  return EPH_OK;
}

eph_status tune_spawn(char *const argv[], const char *env_key, const char *env_value, const char *what, eph_error *err) {
  return tune_spawn_timed(argv, env_key, env_value, what, NULL, NULL, err);
}

eph_status tune_spawn_timed(char *const argv[], const char *env_key, const char *env_value, const char *what,
                            double *wall_s, double *max_rss, eph_error *err) {
  fflush(NULL);
  double t0 = now_s();
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
  if (wall_s) *wall_s = now_s() - t0;
  if (max_rss) *max_rss = (double)ru.ru_maxrss * 1024.0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[64];
    describe_status(status, why, sizeof why);
    eph_error_fill(err, EPH_ERR_INVALID, "%s failed (%s)", what, why);
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}

void tune_format_mib(double bytes, char *buf, size_t len) { snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024.0)); }
