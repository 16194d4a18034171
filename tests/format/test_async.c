/*
 * test_async.c — the writer's own thread (src/format/writer_async.c):
 * the file is byte for byte the one a writer without a thread writes, for
 * every kind of item, with table entries declared between records and
 * explicit flushes; errors of queued items come back at the next call
 * that waits; the queue's memory is counted; a thread started and
 * stopped mid-stream changes nothing in the file; a fork made before the
 * thread started joins in order; a malformed chunk is caught before it is
 * sealed (EPHEMERA_CHECK_CHUNKS).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format_test.h"
#include "format/writer_internal.h"
#include "format/writer_profiler.h"

#define NEVER SIZE_MAX

/* Writes one stream with every kind of queued item between declarations
 * and flushes: n rounds; a record per round of each profiler form.  The
 * writer has a thread from round `start` (0: from the open) to round
 * `stop` (eph_writer_stop_thread), NEVER for either: no start or stop. */
static void write_stream(const char *path, size_t start, size_t stop, bool compress, size_t n) {
  eph_error err;
  eph_meta_pair meta[] = {{"runtime", "ephemera"}};
  eph_writer *w = eph_writer_open(path, meta, 1, compress, &err);
  assert_non_null(w);
  uint64_t rng = 7;
  eph_stamp birth = {64, 100, 0, 0};
  uint32_t classes = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == start) assert_int_equal(eph_writer_start_thread(w), EPH_OK);
    if (i == stop) assert_int_equal(eph_writer_stop_thread(w), EPH_OK);
    assert_int_equal(eph_writer_has_thread(w), i >= start && i < stop);
    uint64_t y = sample_rand(&rng);
    if (i % 5000 == 0) { /* a new class and site mid-stream: declared after the queued records */
      char name[32];
      snprintf(name, sizeof name, "Class%u", (unsigned)classes + 1);
      assert_int_equal(eph_writer_class(w, ++classes, name), EPH_OK);
      assert_int_equal(eph_writer_site(w, classes, "async.c", (int)classes, "f"), EPH_OK);
    }
    uint32_t cls = 1 + (uint32_t)(y % classes), site = 1 + (uint32_t)((y >> 8) % classes);
    birth.bytes += 16 + (y >> 16) % 64;
    birth.wall_ns += (y >> 24) % 300;
    eph_stamp death = {birth.bytes + (y >> 32) % 100000, birth.wall_ns + 5000, birth.scavenges + 1, 0};
    if (i % 1000 == 0) {
      eph_writer_batch(w, &death, &birth, EPH_DEATH_SCAVENGE);
      eph_gc_event ev = {.kind = EPH_GC_SCAVENGE, .index = i / 1000 + 1, .start_ns = birth.wall_ns,
                         .duration_ns = 1000 + y % 99, .allocated = birth.bytes, .used_before = 4096,
                         .used_after = 1024};
      assert_int_equal(eph_writer_gc(w, &ev), EPH_OK);
      birth.scavenges++;
    }
    /* the queue's short form takes weight, full GCs and a small step of
     * scavenges from the record before: change each now and then, and
     * the size past 32 bits */
    eph_stamp b = birth;
    if (i % 3001 == 3000) b.full_gcs++;
    if (i % 4999 == 4998) b.scavenges += 70000;
    double weight = i % 2500 < 1250 ? 1.0 : 3.5;
    uint64_t size = i % 9973 == 9972 ? (UINT64_C(5) << 30) : 32;
    assert_int_equal(eph_writer_batch_record(w, cls, site, size, weight, &b, (y >> 40) & 1), EPH_OK);
    assert_int_equal(eph_writer_record_to_death(w, cls, site, 48, 1.0, &birth, &death, EPH_DEATH_EXACT), EPH_OK);
    eph_record r = {.id = birth.bytes + 1, .class_id = cls, .site_id = site, .size = 64, .weight = 2.5,
                    .birth = birth, .death = death, .alive_until = birth, .death_kind = EPH_DEATH_FINALIZED};
    assert_int_equal(eph_writer_record(w, &r), EPH_OK);
    eph_event e = {.kind = EPH_EV_ALLOC, .time = birth.bytes, .obj = birth.bytes, .a = cls, .b = 32, .c = site};
    assert_int_equal(eph_writer_event(w, &e), EPH_OK);
    if (i % 7000 == 6999) assert_int_equal(eph_writer_flush(w), EPH_OK);
  }
  assert_true(eph_writer_memory(w) > 0);
  eph_totals t = {.wall_ns = birth.wall_ns, .records = 3 * n};
  assert_int_equal(eph_writer_close(w, &t), EPH_OK);
}

static void same_bytes(bool compress) {
  size_t n = 60000;
  char a[512], b[512], c[512];
  snprintf(a, sizeof a, "%s", tmp_path(compress ? "sync-z.eph" : "sync.eph"));
  snprintf(b, sizeof b, "%s", tmp_path(compress ? "thread-z.eph" : "thread.eph"));
  snprintf(c, sizeof c, "%s", tmp_path(compress ? "thread-mid-z.eph" : "thread-mid.eph"));
  write_stream(a, NEVER, NEVER, compress, n);
  write_stream(b, 0, NEVER, compress, n);
  write_stream(c, n / 3 + 17, 2 * n / 3 + 5, compress, n); /* started and stopped mid-batch */
  assert_same_file(a, b);
  assert_same_file(a, c);
  eph_file *p = load_ok(b);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 3 * n);
  assert_int_equal(p->nevents, n);
  assert_int_equal(p->ngcs, n / 1000);
  eph_file_free(p);
}

static void test_same_bytes(void **state) {
  (void)state;
  same_bytes(false);
}

static void test_same_bytes_compressed(void **state) {
  (void)state;
  same_bytes(true);
}

/* A bad record is accepted by the queue; the writer's thread rejects it,
 * and the next call that waits (here the close) returns the error with
 * its message.  The other records are in the file. */
static void test_error_reported_at_wait(void **state) {
  (void)state;
  const char *path = tmp_path("bad.eph");
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_start_thread(w), EPH_OK);
  assert_int_equal(eph_writer_class(w, 1, "A"), EPH_OK);
  eph_stamp s = {64, 10, 0, 0}, d = {128, 20, 1, 0};
  assert_int_equal(eph_writer_record_to_death(w, 1, 0, 16, 1.0, &s, &d, EPH_DEATH_EXACT), EPH_OK);
  assert_int_equal(eph_writer_record_to_death(w, 7, 0, 16, 1.0, &s, &d, EPH_DEATH_EXACT), EPH_OK); /* class 7: undeclared */
  assert_int_equal(eph_writer_flush(w), EPH_ERR_INVALID);
  assert_non_null(strstr(eph_writer_error(w), "class 7 was not declared"));
  assert_int_equal(eph_writer_flush(w), EPH_OK); /* reported once */
  assert_int_equal(eph_writer_record_to_death(w, 9, 0, 16, 1.0, &s, &d, EPH_DEATH_EXACT), EPH_OK);
  assert_int_equal(eph_writer_close(w, NULL), EPH_ERR_INVALID);
  assert_non_null(strstr(eph_writer_error(NULL), "class 9 was not declared"));
  eph_file *p = load_ok(path);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 1);
  eph_file_free(p);
}

/* Starting the thread twice is harmless; a fork gets none; stopping a
 * thread that was forked from keeps it (the forks share its batches), and
 * stopping none is harmless. */
static void test_start_arguments(void **state) {
  (void)state;
  assert_int_equal(eph_writer_start_thread(NULL), EPH_ERR_INVALID);
  eph_error err;
  eph_writer *w = eph_writer_open(tmp_path("start.eph"), NULL, 0, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_start_thread(w), EPH_OK);
  assert_int_equal(eph_writer_start_thread(w), EPH_OK);
  eph_writer *f = eph_writer_fork(w);
  assert_non_null(f);
  assert_int_equal(eph_writer_start_thread(f), EPH_ERR_INVALID);
  assert_false(eph_writer_has_thread(f));
  assert_int_equal(eph_writer_stop_thread(f), EPH_OK);
  assert_int_equal(eph_writer_stop_thread(w), EPH_OK);
  assert_true(eph_writer_has_thread(w));
  assert_int_equal(eph_writer_close(f, NULL), EPH_OK);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  assert_int_equal(eph_writer_stop_thread(NULL), EPH_OK);
}

/* Parent records, a fork's, then the parent's again: the fork made before
 * the parent's thread starts (start_thread true) or with no thread at
 * all.  The parent's records before the join are still queued (most in
 * the batch being filled) when the fork joins. */
static void write_forked(const char *path, bool start_thread) {
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_class(w, 1, "A"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 1, "fork.c", 3, "f"), EPH_OK);
  eph_writer *f = eph_writer_fork(w);
  assert_non_null(f);
  if (start_thread) assert_int_equal(eph_writer_start_thread(w), EPH_OK);
  eph_stamp birth = {64, 10, 0, 0}, death = {1 << 20, 900, 3, 0};
  for (int round = 0; round < 3; round++) {
    eph_writer_fork_sync(f);
    for (int i = 0; i < 20000; i++, birth.bytes += 32, birth.wall_ns++)
      assert_int_equal(eph_writer_record_to_death(w, 1, 1, 32, 1.0, &birth, &death, EPH_DEATH_SCAVENGE), EPH_OK);
    for (int i = 0; i < 20000; i++, birth.bytes += 48, birth.wall_ns++) {
      eph_record r = {.id = birth.bytes, .class_id = 1, .site_id = 1, .size = 48, .weight = 1.0,
                      .birth = birth, .death = death, .alive_until = death, .death_kind = EPH_DEATH_FULL_GC};
      assert_int_equal(eph_writer_record(f, &r), EPH_OK);
    }
    assert_int_equal(eph_writer_join(f), EPH_OK);
  }
  assert_int_equal(eph_writer_close(f, NULL), EPH_OK);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
}

static void test_fork_before_thread(void **state) {
  (void)state;
  char a[512], b[512];
  snprintf(a, sizeof a, "%s", tmp_path("fork-sync.eph"));
  snprintf(b, sizeof b, "%s", tmp_path("fork-thread.eph"));
  write_forked(a, false);
  write_forked(b, true);
  assert_same_file(a, b);
  eph_file *p = load_ok(b);
  assert_int_equal(p->nrecords, 120000);
  eph_file_free(p);
}

/* A chunk whose records the writer built wrong stops the program before
 * it is sealed, naming the problem (here a death kind of 0 in the first
 * record: a reserved bit set instead of a kind). */
static void test_malformed_chunk_caught(void **state) {
  (void)state;
  char path[512], errors[512]; /* tmp_path's buffer is reused */
  snprintf(path, sizeof path, "%s", tmp_path("malformed.eph"));
  snprintf(errors, sizeof errors, "%s", tmp_path("malformed.err"));
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
    setenv("EPHEMERA_CHECK_CHUNKS", "1", 1);
    eph_error err;
    eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
    if (!w || eph_writer_class(w, 1, "A") != EPH_OK) _exit(4);
    eph_stamp s = {64, 10, 0, 0}, d = {128, 20, 1, 0};
    if (eph_writer_record_to_death(w, 1, 0, 16, 1.0, &s, &d, EPH_DEATH_EXACT) != EPH_OK) _exit(5);
    w->buf[B_RECORDS].p[EPHF_CHUNK_HEADER_LEN] |= EPHF_REC_EXT;       /* an extension byte follows */
    w->buf[B_RECORDS].p[EPHF_CHUNK_HEADER_LEN + 1] = EPHF_REC_EXT_RESERVED; /* ... with reserved bits */
    (void)eph_writer_flush(w);
    _exit(0); /* not reached with the check */
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGABRT);
  FILE *e = fopen(errors, "r");
  assert_non_null(e);
  char line[512] = "";
  assert_non_null(fgets(line, sizeof line, e));
  fclose(e);
  assert_non_null(strstr(line, "writer bug: a RECORDS chunk"));
  assert_non_null(strstr(line, "reserved bits"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_bytes),
      cmocka_unit_test(test_same_bytes_compressed),
      cmocka_unit_test(test_error_reported_at_wait),
      cmocka_unit_test(test_start_arguments),
      cmocka_unit_test(test_fork_before_thread),
      cmocka_unit_test(test_malformed_chunk_caught),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
