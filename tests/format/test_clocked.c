/*
 * test_clocked.c — clocked records (src/format/writer_clock.c): a stream
 * whose records carry only byte-clock points, stamped by the writer's
 * replica of the clock tables, is byte for byte the stream of the same
 * records stamped by the caller's own tables and written with
 * eph_writer_record_to_death — with and without the writer's thread,
 * across a thinning of the tables, with collections between records and
 * a record too large for the compact queued item; and the same for
 * records found dead together (eph_writer_batch).  Misuse fails the
 * writer with a message.
 */
#include <stdlib.h>

#include "format_test.h"
#include "format/writer_profiler.h"
#include "sampling/clock_table.h"

static void *grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  (void)ctx;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *n = realloc(items, c * size);
  assert_non_null(n);
  *cap = c;
  return n;
}

static void release(void *ctx, void *items, size_t cap, size_t size) {
  (void)ctx, (void)cap, (void)size;
  free(items);
}

static eph_stamp stamp(ephs_clocks *c, uint64_t bytes, unsigned k) {
  ephs_clock_stamp s = ephs_clocks_stamp(c, bytes, &c->cache[k]);
  return (eph_stamp){bytes, s.wall_ns, s.minor, s.major};
}

/* The writer's replica: tables of its own, as the profiler's are. */
static void *replica_start(uint64_t bytes, uint64_t wall_ns, uint32_t minor0, uint32_t major0) {
  ephs_clocks *c = calloc(1, sizeof *c);
  assert_non_null(c);
  assert_true(ephs_clocks_init(c, (ephs_clock_alloc){grow, release, NULL}, EPHS_STEPS_STRICTLY_BEFORE, bytes, wall_ns,
                               minor0, major0));
  return c;
}
static bool replica_point(void *c, uint64_t bytes, uint64_t wall_ns) { return ephs_clocks_point(c, bytes, wall_ns); }
static bool replica_step(void *c, uint64_t bytes, bool major) { return ephs_clocks_step(c, bytes, major); }
static eph_stamp replica_stamp(void *c, uint64_t bytes, unsigned cache) { return stamp(c, bytes, cache); }
static size_t replica_memory(const void *c) { return sizeof(ephs_clocks) + ((const ephs_clocks *)c)->points_cap; }
static void replica_free(void *c) {
  ephs_clocks_free(c);
  free(c);
}
static const eph_writer_clock_ops replica = {replica_start, replica_point, replica_step,
                                             replica_stamp, replica_memory, replica_free};

enum how { STAMPED, CLOCKED, CLOCKED_RUNS, PACKED_RUNS };

/* A run of clocked records being filled in the writer's room. */
typedef struct clocked_run {
  eph_clocked_record *r;
  size_t room, n;
  unsigned kind;
} clocked_run;

/* Hands the records filled so far to the writer (and the room back). */
static void flush_run(eph_writer *w, clocked_run *run) {
  assert_int_equal(eph_writer_clocked_filled(w, run->n, run->kind), EPH_OK);
  run->n = run->room = 0;
}

/* The place of the next record of the run, of death kind `kind`. */
static eph_clocked_record *run_place(eph_writer *w, clocked_run *run, unsigned kind) {
  if (kind != run->kind || run->n == run->room) {
    flush_run(w, run);
    run->kind = kind;
    assert_non_null(run->r = eph_writer_clocked_room(w, &run->room));
    assert_true(run->room >= 1);
  }
  return &run->r[run->n++];
}

/* A writer at path with two classes and a site, its clock started at
 * (now, wall) unless STAMPED, and tables c of the caller's own. */
static eph_writer *open_stream(const char *path, enum how how, bool thread, ephs_clocks *c, uint64_t now,
                               uint64_t wall) {
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  if (thread) assert_int_equal(eph_writer_start_thread(w), EPH_OK);
  assert_int_equal(eph_writer_class(w, 1, "Pair"), EPH_OK);
  assert_int_equal(eph_writer_class(w, 2, "Blob"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 1, "clocked.c", 10, "make"), EPH_OK);
  assert_true(ephs_clocks_init(c, (ephs_clock_alloc){grow, release, NULL}, EPHS_STEPS_STRICTLY_BEFORE, now, wall, 3, 1));
  if (how != STAMPED) assert_int_equal(eph_writer_clock_start(w, &replica, now, wall, 3, 1), EPH_OK);
  return w;
}

/* n records: clocked through the writer's replica, one call each or in
 * runs filled in place (eph_writer_clocked_room, runs of one death kind
 * between clock points), or stamped here.  A clock point every `every` records, 64 bytes
 * a record, so that 300 000 records thin the tables once (past 2^18
 * points); a collection every 5000 records. */
static void write_stream(const char *path, enum how how, bool thread, size_t n, size_t every) {
  ephs_clocks c;
  uint64_t now = 1000, wall = 50;
  eph_writer *w = open_stream(path, how, thread, &c, now, wall);
  clocked_run run = {.kind = EPH_DEATH_EXACT};
  uint64_t rng = 11;
  for (size_t i = 0; i < n; i++) {
    uint64_t y = sample_rand(&rng);
    uint64_t size = i == n / 2 ? (UINT64_C(5) << 30) : 16 + 8 * (y % 6); /* one of 5 GiB: the wide item */
    now += 64;
    wall += 100 + (y >> 8) % 200;
    if (i % every == 0) {
      assert_true(ephs_clocks_point(&c, now, wall));
      flush_run(w, &run);
      if (how != STAMPED) assert_int_equal(eph_writer_clock_point(w, now, wall), EPH_OK);
    }
    if (i % 5000 == 4999) {
      bool major = (y >> 20) % 4 == 0;
      assert_true(ephs_clocks_step(&c, now, major));
      flush_run(w, &run);
      if (how != STAMPED) assert_int_equal(eph_writer_clock_step(w, now, major), EPH_OK);
    }
    /* a birth up to 20 000 records back, a death between it and now (or at it) */
    uint64_t back = 64 * ((y >> 32) % 20000), birth = now > 1000 + back ? now - back : now;
    uint64_t death = (y >> 40) % 3 == 0 ? birth : birth + (now - birth) / 2;
    uint32_t cls = 1 + (uint32_t)(y % 2), site = (uint32_t)((y >> 4) % 2);
    unsigned kind = (y >> 50) % 5 == 0 ? EPH_DEATH_CENSORED : EPH_DEATH_EXACT;
    if (how == CLOCKED_RUNS) {
      *run_place(w, &run, kind) =
          (eph_clocked_record){.class_id = cls, .site_id = site, .size = size, .birth = birth, .death = death};
    } else if (how == CLOCKED) {
      assert_int_equal(eph_writer_record_clocked(w, cls, site, size, birth, death, kind), EPH_OK);
    } else {
      eph_stamp b = stamp(&c, birth, 0), d = death == birth ? b : stamp(&c, death, 1);
      assert_int_equal(eph_writer_record_to_death(w, cls, site, size, 1.0, &b, &d, kind), EPH_OK);
    }
  }
  flush_run(w, &run);
  assert_true(c.gap > 64); /* the tables thinned */
  if (how != STAMPED) assert_true(eph_writer_memory(w) > sizeof(ephs_clocks));
  ephs_clocks_free(&c);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
}

/* The clocked stream (how) is byte for byte the stamped one. */
static void same_bytes(enum how how, bool thread, size_t every) {
  size_t n = 300000;
  char a[512], b[512];
  snprintf(a, sizeof a, "%s", tmp_path("stamped.eph"));
  snprintf(b, sizeof b, "%s", tmp_path(thread ? "clocked-thread.eph" : "clocked.eph"));
  write_stream(a, STAMPED, false, n, every);
  write_stream(b, how, thread, n, every);
  assert_same_file(a, b);
  eph_file *p = load_ok(b);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, n);
  eph_file_free(p);
}

static void test_same_bytes_without_thread(void **state) {
  (void)state;
  same_bytes(CLOCKED, false, 1);
}

static void test_same_bytes_with_thread(void **state) {
  (void)state;
  same_bytes(CLOCKED, true, 1);
}

/* Runs of records in one call: up to 512 between points every 700
 * records, cut by the death kind; the wide record within a run. */
static void test_runs_same_bytes(void **state) {
  (void)state;
  same_bytes(CLOCKED_RUNS, false, 700);
  same_bytes(CLOCKED_RUNS, true, 700);
}

/* PACKED_RUNS' packing: class, site and size in a, the birth in b, and
 * the weight's odd value as a's top bit; the writer unpacks them. */
static int unpack_ctx;
static eph_packed_record pack(const eph_batch_clocked_record *r) {
  return (eph_packed_record){.a = r->class_id | (uint64_t)r->site_id << 8 | r->size << 16 | (uint64_t)(r->weight != 1.0) << 63,
                             .b = r->birth};
}
static void unpack(const void *ctx, const eph_packed_record *in, size_t n, eph_batch_clocked_record *out) {
  assert_ptr_equal(ctx, &unpack_ctx);
  for (size_t i = 0; i < n; i++)
    out[i] = (eph_batch_clocked_record){.class_id = (uint32_t)(in[i].a & 0xFF), .site_id = (uint32_t)(in[i].a >> 8 & 0xFF),
                                        .size = in[i].a >> 16 & 0xFFFFFF, .weight = in[i].a >> 63 ? 2.5 : 1.0,
                                        .birth = in[i].b};
}

/* Batches of records found dead together (eph_writer_batch), n records
 * in batches of 1 to 80: births clocked through the replica, one call each
 * (eph_writer_batch_record_clocked) or a batch's filled in place
 * (eph_writer_batch_clocked_room) or packed (eph_writer_batch_packed_room), or stamped here.  A clock point
 * every 300 records, a collection every 5000; weights change now and then. */
static void write_batches(const char *path, enum how how, bool thread, size_t n) {
  ephs_clocks c;
  uint64_t now = 1000, wall = 50;
  eph_writer *w = open_stream(path, how, thread, &c, now, wall);
  if (how == PACKED_RUNS) eph_writer_set_unpacker(w, unpack, &unpack_ctx);
  eph_batch_clocked_record run[80];
  uint64_t rng = 17;
  for (size_t i = 0; i < n;) {
    uint64_t y = sample_rand(&rng);
    now += 64 * 80;
    wall += 10000 + (y >> 8) % 2000;
    if (i % 300 < 80) {
      assert_true(ephs_clocks_point(&c, now, wall));
      if (how != STAMPED) assert_int_equal(eph_writer_clock_point(w, now, wall), EPH_OK);
    }
    if (i % 5000 < 80) {
      bool major = (y >> 20) % 4 == 0;
      assert_true(ephs_clocks_step(&c, now, major));
      if (how != STAMPED) assert_int_equal(eph_writer_clock_step(w, now, major), EPH_OK);
    }
    eph_stamp death = stamp(&c, now, 1);
    eph_writer_batch(w, &death, &death, EPH_DEATH_FINALIZED);
    size_t k = 1 + (size_t)((y >> 30) % 80);
    if (k > n - i) k = n - i;
    for (size_t j = 0; j < k; j++) {
      uint64_t z = sample_rand(&rng);
      uint64_t back = 64 * ((z >> 32) % 20000), birth = now > 1000 + back ? now - back : now;
      run[j] = (eph_batch_clocked_record){.class_id = 1 + (uint32_t)(z % 2), .site_id = (uint32_t)((z >> 4) % 2),
                                          .size = 16 + 8 * (z % 6), .weight = (z >> 50) % 97 == 0 ? 2.5 : 1.0,
                                          .birth = birth};
    }
    if (how == PACKED_RUNS) {
      for (size_t j = 0; j < k;) { /* the same, packed */
        size_t room;
        eph_packed_record *r = eph_writer_batch_packed_room(w, &room);
        assert_non_null(r);
        assert_true(room >= 1);
        size_t fill = k - j < room ? k - j : room;
        for (size_t f = 0; f < fill; f++) r[f] = pack(&run[j + f]);
        assert_int_equal(eph_writer_batch_packed_filled(w, fill), EPH_OK);
        j += fill;
      }
    } else if (how == CLOCKED_RUNS) {
      for (size_t j = 0; j < k;) { /* a room at a time, as much of the run as it holds */
        size_t room;
        eph_batch_clocked_record *r = eph_writer_batch_clocked_room(w, &room);
        assert_non_null(r);
        assert_true(room >= 1);
        size_t fill = k - j < room ? k - j : room;
        memcpy(r, &run[j], fill * sizeof *r);
        assert_int_equal(eph_writer_batch_clocked_filled(w, fill), EPH_OK);
        j += fill;
      }
    } else {
      for (size_t j = 0; j < k; j++) {
        const eph_batch_clocked_record *r = &run[j];
        if (how == CLOCKED) {
          assert_int_equal(eph_writer_batch_record_clocked(w, r->class_id, r->site_id, r->size, r->weight, r->birth, false),
                           EPH_OK);
        } else {
          eph_stamp b = stamp(&c, r->birth, 0);
          assert_int_equal(eph_writer_batch_record(w, r->class_id, r->site_id, r->size, r->weight, &b, false), EPH_OK);
        }
      }
    }
    i += k;
  }
  ephs_clocks_free(&c);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
}

/* Batch records clocked, one call each or a batch at a time, filled in
 * place or packed, with and without the writer's thread, are byte for
 * byte the stamped stream. */
static void test_batch_records_same_bytes(void **state) {
  (void)state;
  size_t n = 200000;
  char a[512], b[512];
  snprintf(a, sizeof a, "%s", tmp_path("batch-stamped.eph"));
  write_batches(a, STAMPED, false, n);
  for (int how = CLOCKED; how <= PACKED_RUNS; how++)
    for (int thread = 0; thread < 2; thread++) {
      snprintf(b, sizeof b, "%s", tmp_path("batch-clocked.eph"));
      write_batches(b, (enum how)how, thread, n);
      assert_same_file(a, b);
      eph_file *p = load_ok(b);
      assert_true(p->complete);
      assert_int_equal(p->nrecords, n);
      eph_file_free(p);
    }
}

/* A clocked record before the clock started fails the writer, with a
 * message, at once or at the next wait. */
static void test_record_before_start(void **state) {
  (void)state;
  for (int thread = 0; thread < 2; thread++) {
    eph_error err;
    eph_writer *w = eph_writer_open(tmp_path("unclocked.eph"), NULL, 0, false, &err);
    assert_non_null(w);
    if (thread) assert_int_equal(eph_writer_start_thread(w), EPH_OK);
    assert_int_equal(eph_writer_class(w, 1, "A"), EPH_OK);
    eph_status st = eph_writer_record_clocked(w, 1, 0, 16, 64, 128, EPH_DEATH_EXACT);
    if (st == EPH_OK) st = eph_writer_flush(w);
    assert_int_equal(st, EPH_ERR_INVALID);
    assert_non_null(strstr(eph_writer_error(w), "before the writer's clock started"));
    eph_writer_close(w, NULL);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_bytes_without_thread),
      cmocka_unit_test(test_same_bytes_with_thread),
      cmocka_unit_test(test_runs_same_bytes),
      cmocka_unit_test(test_batch_records_same_bytes),
      cmocka_unit_test(test_record_before_start),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
