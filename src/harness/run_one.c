/*
 * run_one.c — one invocation, in this process (`ephemera bench run-one`):
 * a workload's iterations each on a fresh heap, a command executed once
 * per iteration with EPHEMERA_GC set, a Lua script through run_lua.c, a
 * Java target through run_jvm.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_workload.h"

double eph_bench_clock(int clock_id) {
  struct timespec ts;
  clock_gettime((clockid_t)clock_id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void eph_bench_config_label(const eph_bench_config *c, char *buf, size_t len) {
  int n = 0;
  if (c->factor > 0) n = snprintf(buf, len, "heap=%gx", c->factor);
  if (c->gc[0]) n += snprintf(buf + n, len - (size_t)n, "%s%.200s", n ? " " : "", c->gc);
  if (c->profile[0] && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, "%sprofile:%.200s", n ? " " : "", c->profile);
  if (!n) snprintf(buf, len, "defaults");
}

/* GC parameters for a heap limit: a fixed heap, as a Java -Xmx is.  The
 * limit is max=, and the GC-ratio trigger is put out of the way
 * (FIXED_HEAP_RATIO) so that full GCs come when old space reaches the limit
 * rather than at a growth ratio far below it: otherwise every heap factor
 * collects at the same points and a sweep measures nothing.  The
 * configuration's own parameters come after, so a --gc ratio=... wins. */
#define FIXED_HEAP_RATIO "ratio=1000"
static void gc_with_limit(const eph_bench_config *c, char *buf, size_t len) {
  if (c->heap_bytes)
    snprintf(buf, len, FIXED_HEAP_RATIO ",%s%smax=%llu", c->gc, c->gc[0] ? "," : "", (unsigned long long)c->heap_bytes);
  else snprintf(buf, len, "%s", c->gc);
}

/* The iteration's latency events, copied at the end of its run. */
static int copy_events(wl_ctx *w, void *data) {
  eph_bench_iter *it = data;
  if (!w->nevents) return 0;
  it->events = malloc(w->nevents * sizeof *it->events);
  if (!it->events) return 0; /* events are best effort, like the workload's own */
  for (size_t i = 0; i < w->nevents; i++) {
    it->events[i].start_ns = w->events[i].start_ns;
    it->events[i].end_ns = w->events[i].end_ns;
  }
  it->nevents = w->nevents;
  return 0;
}

/* The profile's file: a temporary one unless the SPEC names one (then each
 * iteration overwrites it). */
static int profile_spec(const eph_bench_config *c, eph_profile_spec *spec, char *tmp, size_t tmplen, char *why,
                        size_t whylen) {
  eph_error e;
  eph_profile_spec_init(spec);
  if (eph_profile_spec_parse(spec, c->profile, &e) != EPH_OK) {
    snprintf(why, whylen, "--profile: %.400s", e.message);
    return -1;
  }
  if (!strstr(c->profile, "out=")) {
    snprintf(tmp, tmplen, "/tmp/eph-bench-profile-%ld.eph", (long)getpid());
    snprintf(spec->out, sizeof spec->out, "%s", tmp);
  }
  return 0;
}

static int run_workload(const eph_bench_target *t, const eph_bench_config *c, eph_bench_run *run) {
  const wl_workload *wl = wl_find(t->name);
  char gc[512], tmp[128] = "";
  gc_with_limit(c, gc, sizeof gc);
  eph_profile_spec spec;
  if (c->profile[0] && profile_spec(c, &spec, tmp, sizeof tmp, run->error, sizeof run->error)) {
    run->niters = 0;
    return 0;
  }
  for (size_t i = 0; i < run->niters; i++) {
    eph_bench_iter *it = &run->iters[i];
    /* the profiler (--profile) as `ephemera run` attaches it */
    eph_bench_profiling prof = {.spec = c->profile[0] ? &spec : NULL, .program = "ephemera bench",
                                .after = copy_events, .data = it};
    wl_run_options opt = {.size = t->size, .gc = gc[0] ? gc : NULL, .quiet = true};
    wl_result res;
    char why[512];
    int failed = eph_bench_workload_run(wl, &opt, &prof, &res, why, sizeof why);
    if (tmp[0]) unlink(tmp);
    if (failed) {
      if (prof.err.message[0])
        snprintf(run->error, sizeof run->error, "iteration %zu: --profile: %.250s", i + 1, prof.err.message);
      else snprintf(run->error, sizeof run->error, "iteration %zu: %.400s", i + 1, why);
      run->niters = i;
      return 0;
    }
    const eph_heap_stats *s = &res.stats;
    it->wall_s = res.wall_s;
    it->task_s = res.cpu_s;
    it->gc_s = (double)s->gc_wall_ns / 1e9;
    it->gc_cpu_s = (double)s->gc_cpu_ns / 1e9;
    it->mutator_s = it->wall_s - it->gc_s;
    it->scavenges = (int64_t)s->scavenges;
    it->full_gcs = (int64_t)s->full_gcs;
    it->gc_count = it->scavenges + it->full_gcs;
    it->peak_bytes = (int64_t)s->peak_committed;
    it->peak_live_bytes = (int64_t)s->peak_used;
    it->allocated_bytes = (int64_t)s->bytes_allocated;
    it->objects = (int64_t)s->objects_allocated;
    it->bytes_copied = (int64_t)(s->bytes_copied + s->bytes_promoted);
    if (!res.check_ok) {
      snprintf(run->error, sizeof run->error, "iteration %zu: self-check failed: %s", i + 1, res.check_message);
      run->niters = i + 1;
      return 0;
    }
  }
  run->ok = true;
  return 0;
}

void eph_bench_last_line(const char *path, const char *skip_prefix, char *buf, size_t len) {
  buf[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[512];
  size_t skip = skip_prefix ? strlen(skip_prefix) : 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] && (!skip || strncmp(line, skip_prefix, skip))) snprintf(buf, len, "%.*s", (int)(len - 1), line);
  }
  fclose(f);
}

static int run_command(const eph_bench_target *t, const eph_bench_config *c, eph_bench_run *run, eph_error *err) {
  char gc[512];
  gc_with_limit(c, gc, sizeof gc);
  char errpath[] = "/tmp/eph-bench-stderr-XXXXXX";
  int efd = mkstemp(errpath);
  if (efd < 0) {
    eph_error_fill(err, EPH_ERR_IO, "cannot make a temporary file: %s", strerror(errno));
    return -1;
  }
  /* The heaps of the command append their statistics here (EPHEMERA_STATS). */
  char statspath[] = "/tmp/eph-bench-stats-XXXXXX";
  int sfd = mkstemp(statspath);
  if (sfd < 0) {
    eph_error_fill(err, EPH_ERR_IO, "cannot make a temporary file: %s", strerror(errno));
    close(efd), unlink(errpath);
    return -1;
  }
  close(sfd);
  for (size_t i = 0; i < run->niters; i++) {
    eph_bench_iter *it = &run->iters[i];
    if (ftruncate(efd, 0) != 0) { /* only the last iteration's stderr is kept */
    }
    if (truncate(statspath, 0) != 0) {
    }
    double w0 = eph_bench_clock(CLOCK_MONOTONIC);
    pid_t pid = fork();
    if (pid < 0) {
      eph_error_fill(err, EPH_ERR_IO, "fork: %s", strerror(errno));
      close(efd), unlink(errpath), unlink(statspath);
      return -1;
    }
    if (pid == 0) {
      if (gc[0]) setenv("EPHEMERA_GC", gc, 1);
      if (c->profile[0]) setenv("EPHEMERA_PROFILE", c->profile, 1);
      setenv("EPHEMERA_STATS", statspath, 1);
      int null = open("/dev/null", O_RDWR);
      if (null >= 0) dup2(null, 0), dup2(null, 1);
      lseek(efd, 0, SEEK_SET);
      dup2(efd, 2);
      execl("/bin/sh", "sh", "-c", t->name, (char *)NULL);
      _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    it->wall_s = eph_bench_clock(CLOCK_MONOTONIC) - w0;
    it->task_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    it->gc_s = it->gc_cpu_s = it->mutator_s = -1;
    it->gc_count = it->scavenges = it->full_gcs = -1;
    it->peak_bytes = (int64_t)ru.ru_maxrss * 1024;
    it->peak_live_bytes = it->allocated_bytes = it->objects = it->bytes_copied = -1;
    eph_bench_read_cmd_stats(statspath, it);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      char why[300];
      eph_bench_last_line(errpath, NULL, why, sizeof why);
      if (WIFEXITED(status))
        snprintf(run->error, sizeof run->error, "iteration %zu: exit status %d%s%s", i + 1, WEXITSTATUS(status),
                 why[0] ? ": " : "", why);
      else
        snprintf(run->error, sizeof run->error, "iteration %zu: killed by signal %d", i + 1, WTERMSIG(status));
      run->niters = i + 1;
      close(efd), unlink(errpath), unlink(statspath);
      return 0;
    }
  }
  close(efd), unlink(errpath), unlink(statspath);
  run->ok = true;
  return 0;
}

int eph_bench_run_one(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err) {
  memset(run, 0, sizeof *run);
  run->target = *t;
  run->config = *c;
  snprintf(run->version, sizeof run->version, "%s", EPH_BENCH_VERSION);
  size_t n = (size_t)warmup + iterations;
  run->iters = calloc(n ? n : 1, sizeof *run->iters);
  if (!run->iters) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  run->niters = n;
  for (size_t i = 0; i < warmup; i++) run->iters[i].warmup = true;
  int rc = -1;
  switch (t->kind) {
  case EPH_BENCH_WORKLOAD: rc = run_workload(t, c, run); break;
  case EPH_BENCH_CMD: rc = run_command(t, c, run, err); break;
  case EPH_BENCH_LUA: rc = eph_bench_run_lua(t, c, warmup, iterations, run, err); break;
  case EPH_BENCH_JVM:
  case EPH_BENCH_JCMD: rc = eph_bench_run_jvm(t, c, warmup, iterations, run, err); break;
  }
  /* no statistic uses the warm-ups' latency events: they are not kept */
  for (size_t i = 0; i < run->niters; i++)
    if (run->iters[i].warmup) {
      free(run->iters[i].events);
      run->iters[i].events = NULL;
      run->iters[i].nevents = 0;
    }
  return rc;
}
