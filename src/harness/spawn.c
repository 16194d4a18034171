/*
 * spawn.c — one invocation as a child process: the `ephemera bench run-one`
 * command line (the one `plan` writes too), its result read back; a child
 * that dies without one is a failed run with its last line of stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_internal.h"

extern char **environ;

void eph_bench_child_argv(const char *exe, size_t ti, size_t ci, size_t inv, const eph_bench_target *t,
                          const eph_bench_config *c, unsigned warmup, unsigned iterations, const char *out,
                          const char *argv[EPH_BENCH_ARGV_MAX], char bufs[5][64]) {
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
  if (c->profile[0]) {
    argv[n++] = "--profile";
    argv[n++] = c->profile;
  }
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
  const char *argv[EPH_BENCH_ARGV_MAX];
  char bufs[5][64];
  eph_bench_child_argv(exe, ti, ci, inv, t, c, warmup, iterations, out, argv, bufs);
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

