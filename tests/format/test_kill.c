/*
 * test_kill.c — a writer killed mid-run (SIGKILL, _exit, or killed from
 * outside at a random moment) leaves a file that loads up to its last
 * complete chunk, holding exactly the records written before it —
 * also when the writer has its own thread (the *_threaded tests).
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "format_test.h"
#include "format/writer_profiler.h"

/* The child's writer has its own thread (writer_async.c). */
static bool threaded;

/* The i-th record of the child's run. */
static eph_record nth_record(uint64_t i) {
  eph_record r;
  memset(&r, 0, sizeof r);
  r.id = i + 1;
  r.class_id = (uint32_t)(1 + i % 3);
  r.site_id = (uint32_t)(i % 4);
  r.size = 16 + (i * 7919) % 300;
  r.weight = i % 5 ? 1.0 : 2.5;
  r.birth = (eph_stamp){i * 64, i * 1000, (uint32_t)(i / 100), (uint32_t)(i / 1000)};
  r.death = (eph_stamp){i * 64 + (i * 31) % 5000, i * 1000 + 77, (uint32_t)(i / 100 + 1), (uint32_t)(i / 1000)};
  r.alive_until = i % 2 ? r.death : r.birth;
  r.death_kind = (uint8_t)(1 + i % 6);
  return r;
}

static eph_event nth_event(uint64_t i) {
  eph_event e = {.kind = EPH_EV_ALLOC, .time = i * 64, .obj = i + 1, .a = 1 + i % 3, .b = 64, .c = i % 4};
  if (i % 3 == 1) e = (eph_event){.kind = EPH_EV_STORE, .time = i * 64, .obj = i, .a = i % 5, .b = i / 2, .c = i};
  return e;
}

typedef enum how { KILL_AFTER_FLUSHES, KILL_AFTER_AUTO, EXIT_AFTER_FLUSHES, RUN_FOREVER } how;

/* The child: writes records (and events) and dies as told.  Never returns. */
static void child(const char *path, how h, bool compress) {
  eph_error err;
  eph_meta_pair meta[] = {{"runtime", "ephemera"}, {"workload", "kill-test"}};
  eph_writer *w = eph_writer_open(path, meta, 2, compress, &err);
  if (!w) _exit(3);
  if (threaded && eph_writer_start_thread(w) != EPH_OK) _exit(3);
  if (eph_writer_class(w, 1, "A") || eph_writer_class(w, 2, "B") || eph_writer_class(w, 3, "C")) _exit(4);
  for (uint32_t s = 1; s < 4; s++)
    if (eph_writer_site(w, s, "kill.c", (int)s * 10, "child")) _exit(4);
  struct stat sb;
  for (uint64_t i = 0;; i++) {
    eph_record r = nth_record(i);
    eph_event e = nth_event(i);
    if (eph_writer_record(w, &r) != EPH_OK || eph_writer_event(w, &e) != EPH_OK) _exit(5);
    switch (h) {
      case KILL_AFTER_FLUSHES:
      case EXIT_AFTER_FLUSHES:
        if ((i + 1) % 1000 == 0 && eph_writer_flush(w) != EPH_OK) _exit(5);
        if (i + 1 == 5500) {
          if (h == EXIT_AFTER_FLUSHES) _exit(0);
          raise(SIGKILL);
        }
        break;
      case KILL_AFTER_AUTO:
        if (i % 64 == 0 && stat(path, &sb) == 0 && sb.st_size > 300 * 1024) {
          for (uint64_t j = 1; j <= 10; j++) {
            eph_record more = nth_record(i + j);
            eph_writer_record(w, &more);
          }
          raise(SIGKILL);
        }
        break;
      case RUN_FOREVER: break;
    }
  }
}

static void check_prefix(const eph_file *p) {
  assert_false(p->complete);
  assert_true(p->warning[0] != 0);
  assert_string_equal(eph_file_meta(p, "workload"), "kill-test");
  for (size_t i = 0; i < p->nrecords; i++) {
    eph_record want = nth_record(i);
    if (!sample_record_eq(&p->records[i], &want)) fail_msg("record %zu differs", i);
  }
  for (size_t i = 0; i < p->nevents; i++) {
    eph_event want = nth_event(i);
    if (!sample_event_eq(&p->events[i], &want)) fail_msg("event %zu differs", i);
  }
}

static int run_child(const char *path, how h, bool compress, int kill_after_ms) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) child(path, h, compress);
  if (kill_after_ms >= 0) {
    struct timespec ts = {kill_after_ms / 1000, (long)(kill_after_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

static void killed_after_flushes(bool compress, how h) {
  const char *path = tmp_path(compress ? "kill-z.eph" : "kill.eph");
  int status = run_child(path, h, compress, -1);
  if (h == EXIT_AFTER_FLUSHES) assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  else assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  eph_file *p = load_ok(path);
  check_prefix(p);
  /* Five explicit flushes of 1000 records each; the last 500 were only buffered. */
  assert_int_equal(p->nrecords, 5000);
  assert_int_equal(p->nevents, 5000);
  assert_int_equal(p->nclasses, 4);
  assert_int_equal(p->nsites, 4);
  assert_non_null(strstr(p->warning, "no closing chunk"));
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(p->valid_bytes, (uint64_t)sb.st_size);
  eph_file_free(p);
}

static void test_sigkill_after_flushes(void **state) {
  (void)state;
  killed_after_flushes(false, KILL_AFTER_FLUSHES);
  killed_after_flushes(true, KILL_AFTER_FLUSHES);
}

static void test_exit_after_flushes(void **state) {
  (void)state;
  killed_after_flushes(false, EXIT_AFTER_FLUSHES);
  killed_after_flushes(true, EXIT_AFTER_FLUSHES);
}

static void test_sigkill_after_automatic_flushes(void **state) {
  (void)state;
  for (int z = 0; z < 2; z++) {
    const char *path = tmp_path("kill-auto.eph");
    int status = run_child(path, KILL_AFTER_AUTO, z, -1);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    eph_file *p = load_ok(path);
    check_prefix(p);
    assert_true(p->nrecords > 1000);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    /* Without a thread the kill comes between two write(2)s.  With one, the
     * writer's thread may be inside a chunk's write(2), which SIGKILL can cut
     * short: the file then ends in part of a chunk, which the reader drops. */
    if (threaded) assert_true(p->valid_bytes <= (uint64_t)sb.st_size);
    else assert_int_equal(p->valid_bytes, (uint64_t)sb.st_size);
    eph_file_free(p);
  }
}

/* Killed from outside at an arbitrary moment: always loads, a prefix. */
static void test_killed_at_random_moments(void **state) {
  (void)state;
  uint64_t rng = 99;
  for (int round = 0; round < 16; round++) {
    const char *path = tmp_path("kill-random.eph");
    unlink(path);
    int ms = 5 + (int)(sample_rand(&rng) % 60);
    int status = run_child(path, RUN_FOREVER, round % 2, ms);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    struct stat sb;
    if (stat(path, &sb) != 0) continue; /* killed before it even created the file */
    eph_file *p = NULL;
    eph_error err;
    eph_status st = eph_file_load(path, &p, &err);
    if (sb.st_size < 16) { /* killed before the header was out */
      assert_int_equal(st, EPH_ERR_INVALID);
      continue;
    }
    if (st != EPH_OK) fail_msg("round %d: %s", round, err.message);
    check_prefix(p);
    eph_file_free(p);
  }
}

static void run_threaded(void (*test)(void **), void **state) {
  threaded = true;
  test(state);
  threaded = false;
}
static void test_sigkill_after_flushes_threaded(void **state) { run_threaded(test_sigkill_after_flushes, state); }
static void test_sigkill_after_automatic_flushes_threaded(void **state) {
  run_threaded(test_sigkill_after_automatic_flushes, state);
}
static void test_killed_at_random_moments_threaded(void **state) { run_threaded(test_killed_at_random_moments, state); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sigkill_after_flushes),
      cmocka_unit_test(test_exit_after_flushes),
      cmocka_unit_test(test_sigkill_after_automatic_flushes),
      cmocka_unit_test(test_killed_at_random_moments),
      cmocka_unit_test(test_sigkill_after_flushes_threaded),
      cmocka_unit_test(test_sigkill_after_automatic_flushes_threaded),
      cmocka_unit_test(test_killed_at_random_moments_threaded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
