/*
 * run_jvm.c — one invocation of a Java target, in this process (`ephemera
 * bench run-one`): jvm:NAME[:SIZE] runs the Java suite (workloads/jvm) in
 * one JVM, its warm-ups and timed iterations inside it as DaCapo does, and
 * takes each iteration's times from the driver and its stop-the-world
 * periods from the JVMTI agent; jcmd:COMMAND runs any Java command line
 * once per iteration with the agent, the collector and the heap in
 * JAVA_TOOL_OPTIONS.  The heap is fixed, -Xms = -Xmx.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "runtime/jvm/jvm.h"

typedef struct tmpfiles {
  char err[64], stats[64], iters[64];
  int errfd;
} tmpfiles;

static int make_tmp(char *path, size_t len, const char *what, eph_error *err) {
  snprintf(path, len, "/tmp/eph-bench-%s-XXXXXX", what);
  int fd = mkstemp(path);
  if (fd < 0) eph_error_fill(err, EPH_ERR_IO, "cannot make a temporary file: %s", strerror(errno));
  return fd;
}

static int open_tmp(tmpfiles *f, eph_error *err) {
  f->errfd = make_tmp(f->err, sizeof f->err, "stderr", err);
  if (f->errfd < 0) return -1;
  int a = make_tmp(f->stats, sizeof f->stats, "jvmstats", err);
  if (a < 0) return close(f->errfd), unlink(f->err), -1;
  close(a);
  int b = make_tmp(f->iters, sizeof f->iters, "jvmiters", err);
  if (b < 0) return close(f->errfd), unlink(f->err), unlink(f->stats), -1;
  close(b);
  return 0;
}

static void close_tmp(tmpfiles *f) {
  close(f->errfd);
  unlink(f->err), unlink(f->stats), unlink(f->iters);
}

static void reset_tmp(tmpfiles *f) {
  if (ftruncate(f->errfd, 0) != 0 || truncate(f->stats, 0) != 0 || truncate(f->iters, 0) != 0) {
  } /* best effort: a stale file fails the parse, it does not pass it */
}

/* The JVM options every Java run gets: the agent, the collector, the heap. */
static int jvm_options(const eph_bench_config *c, const char *stats, char opts[4][4200], eph_error *err) {
  const char *flag = eph_jvm_collector_flag(c->gc);
  if (!flag) {
    eph_error_fill(err, EPH_ERR_INVALID, "unknown collector '%s' (serial, parallel, g1, shenandoah, zgc)", c->gc);
    return -1;
  }
  snprintf(opts[0], sizeof opts[0], "-agentpath:%s=stats=%s", eph_jvm_agent_path(), stats);
  snprintf(opts[1], sizeof opts[1], "%s", flag);
  int n = 2;
  if (c->heap_bytes) {
    unsigned long long k = (c->heap_bytes + 1023) / 1024; /* the JVM rounds to its alignment anyway */
    snprintf(opts[2], sizeof opts[2], "-Xms%lluk", k);
    snprintf(opts[3], sizeof opts[3], "-Xmx%lluk", k);
    n = 4;
  }
  return n;
}

/* Runs argv (or sh -c cmd) with stdout to /dev/null and stderr to errfd;
 * waits; fills wall, task and peak of it; returns the wait status or -1. */
static int run_child(const char *const *argv, const char *shell_cmd, const char *tool_options, const char *iters_env,
                     int errfd, eph_bench_iter *it, eph_error *err) {
  double w0 = eph_bench_clock(CLOCK_MONOTONIC);
  pid_t pid = fork();
  if (pid < 0) {
    eph_error_fill(err, EPH_ERR_IO, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    if (tool_options) setenv("JAVA_TOOL_OPTIONS", tool_options, 1);
    if (iters_env) setenv("EPHEMERA_JVM_ITERS", iters_env, 1);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 0), dup2(null, 1);
    lseek(errfd, 0, SEEK_SET);
    dup2(errfd, 2);
    if (shell_cmd) execl("/bin/sh", "sh", "-c", shell_cmd, (char *)NULL);
    else execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "cannot run %s: %s\n", shell_cmd ? "/bin/sh" : argv[0], strerror(errno));
    _exit(127);
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  if (it) {
    it->wall_s = eph_bench_clock(CLOCK_MONOTONIC) - w0;
    it->task_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    it->peak_bytes = (int64_t)ru.ru_maxrss * 1024;
  }
  return status;
}

/* A failed child: the run's error from its status and its stderr. */
static void child_failed(eph_bench_run *run, size_t iteration, int status, const char *errpath) {
  char why[300];
  eph_bench_last_line(errpath, "Picked up JAVA_TOOL_OPTIONS", why, sizeof why); /* the JVM's own notice */
  if (WIFEXITED(status))
    snprintf(run->error, sizeof run->error, "iteration %zu: exit status %d%s%s", iteration, WEXITSTATUS(status),
             why[0] ? ": " : "", why);
  else snprintf(run->error, sizeof run->error, "iteration %zu: killed by signal %d", iteration, WTERMSIG(status));
}

static void unknown_gc_figures(eph_bench_iter *it) {
  it->gc_s = it->gc_cpu_s = it->mutator_s = -1;
  it->gc_count = it->scavenges = it->full_gcs = -1;
  it->peak_live_bytes = it->allocated_bytes = it->objects = it->bytes_copied = -1;
}

/* jvm:NAME[:SIZE]: the suite's driver, every iteration in one JVM. */
static int run_suite(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                     eph_bench_run *run, eph_error *err) {
  const char *cp = eph_jvm_suite_classpath(err);
  if (!cp) return -1;
  tmpfiles f;
  if (open_tmp(&f, err)) return -1;
  char opts[4][4200], w[16], n[16];
  int nopt = jvm_options(c, f.stats, opts, err);
  if (nopt < 0) return close_tmp(&f), -1;
  snprintf(w, sizeof w, "%u", warmup);
  snprintf(n, sizeof n, "%u", iterations);
  const char *argv[16];
  int a = 0;
  argv[a++] = eph_jvm_java();
  for (int i = 0; i < nopt; i++) argv[a++] = opts[i];
  argv[a++] = "-cp", argv[a++] = cp, argv[a++] = "org.ephemera.suite.Main";
  argv[a++] = t->name, argv[a++] = t->size, argv[a++] = w, argv[a++] = n, argv[a] = NULL;
  eph_bench_iter whole = {0};
  int status = run_child(argv, NULL, NULL, f.iters, f.errfd, &whole, err);
  if (status < 0) return close_tmp(&f), -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    child_failed(run, 1, status, f.err);
    run->niters = 0;
    close_tmp(&f);
    return 0;
  }
  eph_jvm_iteration *its = NULL;
  size_t nits = 0;
  eph_jvm_stats st;
  eph_error perr = {0};
  if (eph_jvm_iterations_read(f.iters, &its, &nits, &perr) || eph_jvm_stats_read(f.stats, &st, &perr)) {
    snprintf(run->error, sizeof run->error, "%.500s", perr.message);
    eph_jvm_iterations_free(its, nits);
    run->niters = 0;
    close_tmp(&f);
    return 0;
  }
  if (nits != run->niters || !st.jvms) {
    snprintf(run->error, sizeof run->error, "the driver reported %zu iterations of %zu%s", nits, run->niters,
             st.jvms ? "" : ", and the agent nothing (did it load?)");
    run->niters = 0;
  } else {
    for (size_t i = 0; i < nits; i++) {
      eph_bench_iter *it = &run->iters[i];
      const eph_jvm_iteration *x = &its[i];
      unknown_gc_figures(it);
      it->warmup = x->warmup;
      it->wall_s = (double)(x->end_ns - x->start_ns) / 1e9;
      it->task_s = (double)(x->cpu_end_ns - x->cpu_start_ns) / 1e9;
      eph_jvm_pauses_in(&st, x->start_ns, x->end_ns, &it->gc_s, &it->gc_cpu_s, &it->gc_count);
      it->mutator_s = it->wall_s - it->gc_s;
      it->peak_bytes = whole.peak_bytes; /* the process's, over all its iterations */
      if (x->nevents && (it->events = malloc(x->nevents * sizeof *it->events))) {
        for (size_t e = 0; e < x->nevents; e++) {
          it->events[e].start_ns = (uint64_t)(x->events[e].start_ns - x->start_ns);
          it->events[e].end_ns = (uint64_t)(x->events[e].end_ns - x->start_ns);
        }
        it->nevents = x->nevents;
      }
    }
    run->ok = !st.lost;
    if (st.lost) snprintf(run->error, sizeof run->error, "the agent lost pauses (out of memory)");
  }
  eph_jvm_iterations_free(its, nits);
  eph_jvm_stats_free(&st);
  close_tmp(&f);
  return 0;
}

/* jcmd:COMMAND: a fresh command per iteration, the JVM options in
 * JAVA_TOOL_OPTIONS (after any the environment has, so ours win; the
 * command line's own -Xmx would win over them). */
static int run_jcmd(const eph_bench_target *t, const eph_bench_config *c, eph_bench_run *run, eph_error *err) {
  tmpfiles f;
  if (open_tmp(&f, err)) return -1;
  char opts[4][4200];
  int nopt = jvm_options(c, f.stats, opts, err);
  if (nopt < 0) return close_tmp(&f), -1;
  char tool[20000];
  const char *prior = getenv("JAVA_TOOL_OPTIONS");
  int k = snprintf(tool, sizeof tool, "%s", prior ? prior : "");
  for (int i = 0; i < nopt; i++) k += snprintf(tool + k, sizeof tool - (size_t)k, "%s%s", k ? " " : "", opts[i]);
  for (size_t i = 0; i < run->niters; i++) {
    eph_bench_iter *it = &run->iters[i];
    reset_tmp(&f);
    unknown_gc_figures(it);
    int status = run_child(NULL, t->name, tool, NULL, f.errfd, it, err);
    if (status < 0) return close_tmp(&f), -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      child_failed(run, i + 1, status, f.err);
      run->niters = i + 1;
      close_tmp(&f);
      return 0;
    }
    eph_jvm_stats st;
    eph_error perr = {0};
    if (eph_jvm_stats_read(f.stats, &st, &perr) || !st.jvms) {
      snprintf(run->error, sizeof run->error, "iteration %zu: %.400s", i + 1,
               perr.message[0] ? perr.message : "no JVM ran with the agent (is it a Java command?)");
      run->niters = i + 1;
      close_tmp(&f);
      return 0;
    }
    eph_jvm_pauses_in(&st, INT64_MIN, INT64_MAX, &it->gc_s, &it->gc_cpu_s, &it->gc_count);
    it->mutator_s = it->wall_s - it->gc_s;
    eph_jvm_stats_free(&st);
  }
  close_tmp(&f);
  run->ok = true;
  return 0;
}

int eph_bench_run_jvm(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err) {
  if (!eph_jvm_agent_path()[0]) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s: this ephemera was built without the JVM agent (needs openjdk-17-jdk-headless)",
                   t->spec);
    return -1;
  }
  return t->kind == EPH_BENCH_JVM ? run_suite(t, c, warmup, iterations, run, err) : run_jcmd(t, c, run, err);
}
