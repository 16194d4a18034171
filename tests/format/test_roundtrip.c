/*
 * test_roundtrip.c — write, read back, compare field by field; the
 * writer's argument checks and write errors; chunk sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "format_test.h"
#include "format/writer_profiler.h" /* the profiler-only calls are tested here too */

/* A sink that gathers what it is handed. */
typedef struct gathered {
  eph_record *r;
  size_t n, calls;
} gathered;

static bool gather(void *ctx, const eph_record *r, size_t n) {
  gathered *g = ctx;
  assert_true(n > 0);
  g->r = realloc(g->r, (g->n + n) * sizeof *g->r);
  assert_non_null(g->r);
  memcpy(g->r + g->n, r, n * sizeof *r);
  g->n += n;
  g->calls++;
  return true;
}

/* eph_file_load_with hands over exactly the records eph_file_load
 * keeps, in order, a chunk at a time, and keeps none; the same for the
 * file cut at `cut` bytes (a killed run's). */
static void check_sink(const char *path, size_t cut) {
  const char *at = path;
  if (cut) {
    size_t len;
    uint8_t *data = sample_read_file(path, &len);
    assert_non_null(data);
    at = tmp_path("rt-cut.eph");
    FILE *f = fopen(at, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, cut < len ? cut : len, f), cut < len ? cut : len);
    fclose(f);
    free(data);
  }
  eph_file *p = NULL, *q = NULL;
  eph_error err;
  assert_int_equal(eph_file_load(at, &p, &err), EPH_OK);
  gathered g = {0};
  eph_record_sink sink = {gather, &g};
  assert_int_equal(eph_file_load_with(at, &sink, &q, &err), EPH_OK);
  assert_null(q->records);
  assert_int_equal(q->nrecords, p->nrecords);
  assert_int_equal(g.n, p->nrecords);
  if (p->nrecords) assert_memory_equal(g.r, p->records, p->nrecords * sizeof *p->records);
  assert_int_equal(q->ngcs, p->ngcs);
  assert_int_equal(q->complete, p->complete);
  assert_string_equal(q->warning, p->warning);
  if (p->nrecords > 10000) assert_true(g.calls > 1); /* chunk by chunk, not all at the end */
  free(g.r);
  eph_file_free(p);
  eph_file_free(q);
}

static void roundtrip(const sample_spec *spec, bool compress, size_t flush_every) {
  sample s;
  sample_build(&s, spec);
  const char *path = tmp_path(compress ? "rt-z.eph" : "rt.eph");
  write_sample(&s, path, compress, flush_every, true);
  eph_file *p = load_ok(path);
  assert_true(p->complete);
  assert_string_equal(p->warning, "");
  const char *diff = sample_check(&s, p, false);
  if (diff) fail_msg("round trip (compress=%d): %s", compress, diff);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(p->valid_bytes, (uint64_t)sb.st_size);
  /* The buffer loader reads the same. */
  size_t len;
  uint8_t *data = sample_read_file(path, &len);
  assert_non_null(data);
  eph_file *q = NULL;
  eph_error err;
  assert_int_equal(eph_file_load_buffer(data, len, &q, &err), EPH_OK);
  assert_null(sample_check(&s, q, false));
  eph_file_free(q);
  check_sink(path, 0);
  check_sink(path, len / 2);
  free(data);
  eph_file_free(p);
  sample_free(&s);
}

static void test_roundtrip_plain(void **state) {
  (void)state;
  sample_spec spec = {.nrecords = 20000, .ngcs = 300, .nevents = 50000, .seed = 1};
  roundtrip(&spec, false, 0);
}

static void test_roundtrip_compressed(void **state) {
  (void)state;
  sample_spec spec = {.nrecords = 20000, .ngcs = 300, .nevents = 50000, .seed = 2};
  roundtrip(&spec, true, 0);
}

static void test_roundtrip_extreme(void **state) {
  (void)state;
  sample_spec spec = {.nrecords = 500, .ngcs = 20, .nevents = 600, .extreme = true, .seed = 3};
  roundtrip(&spec, false, 0);
  roundtrip(&spec, true, 0);
  roundtrip(&spec, false, 7); /* many small chunks */
  roundtrip(&spec, true, 7);
}

/* --- record streams like the profiler's ------------------------------------------------ */

/* Payload bytes of the RECS chunks of a file. */
static size_t recs_payload_bytes(const char *path) {
  size_t n, total = 0;
  uint8_t *d = sample_read_file(path, &n);
  assert_non_null(d);
  for (size_t off = 16; off + 24 <= n; off += 24 + read_u32(d + off + 8))
    if (!memcmp(d + off, "RECS", 4)) total += read_u32(d + off + 12);
  free(d);
  return total;
}

/* Whether open_declared gives the writer its own thread (the *_threaded tests). */
static bool threaded;

/* A writer on path with classes 1..300 and sites 1..3 declared. */
static eph_writer *open_declared(const char *path) {
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  if (threaded) {
    assert_int_equal(eph_writer_start_thread(w), EPH_OK);
    assert_true(eph_writer_has_thread(w));
  }
  char cname[16];
  for (uint32_t c = 1; c <= 300; c++) {
    snprintf(cname, sizeof cname, "C%u", (unsigned)c);
    assert_int_equal(eph_writer_class(w, c, cname), EPH_OK);
  }
  for (uint32_t i = 1; i <= 3; i++) assert_int_equal(eph_writer_site(w, i, "s.c", (int)i, "f"), EPH_OK);
  return w;
}

/* Closes w, reads path back and compares its records with recs[0..n). */
static void close_and_compare(eph_writer *w, const char *path, const eph_record *recs, size_t n) {
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  eph_file *p = load_ok(path);
  assert_int_equal(p->nrecords, n);
  for (size_t i = 0; i < n; i++)
    if (!sample_record_eq(&p->records[i], &recs[i])) fail_msg("%s: record %zu differs after reading back", path, i);
  eph_file_free(p);
}

/* Writes recs with eph_writer_record, reads them back, compares; returns
 * the RECS payload bytes. */
static size_t write_and_compare(const eph_record *recs, size_t n, const char *name) {
  const char *path = tmp_path(name);
  eph_writer *w = open_declared(path);
  for (size_t i = 0; i < n; i++)
    if (eph_writer_record(w, &recs[i]) != EPH_OK) fail_msg("record %zu: %s", i, eph_writer_error(w));
  close_and_compare(w, path, recs, n);
  return recs_payload_bytes(path);
}

/*
 * gc mode: batches of deaths at each collection, one death stamp per batch,
 * alive_until the previous collection or the birth; finalization mode:
 * deaths one after the other.  Ids: birth.bytes or a counter.
 */
static eph_record *profiler_stream(size_t n, bool fin, bool byteids) {
  eph_record *v = calloc(n, sizeof *v);
  assert_non_null(v);
  uint64_t rng = 99, bytes = 4096, wall = 1000;
  uint32_t scav = 0;
  eph_stamp prev_gc = {0, 0, 0, 0};
  size_t i = 0;
  while (i < n) {
    /* 2000 allocations, 1700 of which die by the next collection */
    size_t born = i, batch = n - i < 1700 ? n - i : 1700;
    for (size_t j = 0; j < batch; j++) {
      uint64_t x = sample_rand(&rng);
      eph_record *r = &v[i + j];
      uint32_t k = (uint32_t)(j % 6);
      r->class_id = 1 + k;
      r->site_id = 1 + k % 3;
      r->size = 24 + 8 * k;
      r->weight = 1;
      wall += 20 + x % 50;
      bytes += r->size + (x >> 8) % 3 * 32; /* survivors in between */
      r->birth = (eph_stamp){bytes, wall, scav, 0};
      r->id = byteids ? bytes : i + j + 1;
    }
    wall += 1000000;
    scav++;
    eph_stamp now = {bytes, wall, scav, 0};
    for (size_t j = 0; j < batch; j++) {
      eph_record *r = &v[born + j];
      if (fin) {
        wall += 100 + sample_rand(&rng) % 300;
        r->death = r->alive_until = (eph_stamp){bytes, wall, scav, 0};
        r->death_kind = EPH_DEATH_FINALIZED;
      } else {
        r->death = now;
        r->alive_until = j % 5 == 0 ? prev_gc : r->birth;
        r->death_kind = EPH_DEATH_SCAVENGE;
      }
    }
    prev_gc = now;
    i += batch;
  }
  return v;
}

static void test_profiler_streams_are_small(void **state) {
  (void)state;
  size_t n = 60000; /* several chunks */
  struct {
    bool fin, byteids;
    double max_bytes; /* per record; version 1 took 21..27 */
  } cases[] = {{false, true, 7}, {false, false, 8}, {true, false, 11}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    eph_record *v = profiler_stream(n, cases[c].fin, cases[c].byteids);
    double per = (double)write_and_compare(v, n, "stream.eph") / (double)n;
    if (per > cases[c].max_bytes)
      fail_msg("stream %zu: %.2f bytes per record, expected at most %.0f", c, per, cases[c].max_bytes);
    free(v);
  }
}

/* Every choice of the record encoding, and the context across chunks. */
static void test_record_encoding_cases(void **state) {
  (void)state;
  size_t n = 40000;
  eph_record *v = calloc(n, sizeof *v);
  assert_non_null(v);
  uint64_t rng = 7;
  static const double weights[] = {1, 1, 1, 64, 64, 0.5, -0.0, 0, 9007199254740992.0, 9007199254740994.0};
  for (size_t i = 0; i < n; i++) {
    eph_record *r = &v[i];
    const eph_record *q = i ? &v[i - 1] : r;
    uint64_t x = sample_rand(&rng);
    /* classes 1 and 257, 2 and 258 share cache entries */
    r->class_id = (uint32_t)(x % 4 == 0 ? 0 : 1 + (x >> 4) % 2 + ((x >> 6) % 2) * 256);
    r->site_id = (uint32_t)((x >> 8) % 4);
    r->size = (x >> 10) % 3 == 0 ? (x >> 12) % 100000 : 16 * (1 + r->class_id % 4);
    r->weight = weights[(x >> 20) % (sizeof weights / sizeof weights[0])];
    unsigned prev_kind = q->death_kind ? q->death_kind : EPH_DEATH_SCAVENGE;
    r->death_kind = (uint8_t)((x >> 24) % 5 == 0 ? EPH_DEATH_FINALIZED + (x >> 27) % 6 : prev_kind);
    r->birth = q->birth;
    r->birth.bytes += (x >> 30) % 500;
    r->birth.wall_ns += (x >> 32) % 3000;
    if ((x >> 40) % 7 == 0) r->birth.scavenges++;
    if ((x >> 40) % 61 == 0) r->birth.full_gcs++;
    r->id = (x >> 43) % 3 == 0 ? r->birth.bytes : (x >> 43) % 3 == 1 ? q->id + 1 : x;
    switch ((x >> 45) % 6) {
      case 0: r->death = q->death; break;
      case 1: r->death = q->death, r->death.wall_ns += (x >> 48) % 1000; break;
      case 2: r->death = r->birth, r->death.bytes += (x >> 48), r->death.scavenges += 2; break;
      case 3: r->death = q->death, r->death.bytes -= 5, r->death.full_gcs += 1; break;
      case 4: r->death = (eph_stamp){UINT64_MAX - (x >> 50), x, UINT32_MAX, 0}; break;
      default: r->death = r->birth; break;
    }
    switch ((x >> 53) % 5) {
      case 0: r->alive_until = r->death; break;
      case 1: r->alive_until = r->birth; break;
      case 2: r->alive_until = i > 3 ? v[i - 3].alive_until : r->birth; break;
      case 3: r->alive_until = q->alive_until; break;
      default: r->alive_until = (eph_stamp){r->birth.bytes + 7, x >> 1, r->birth.scavenges + 1, 3}; break;
    }
  }
  write_and_compare(v, n, "cases.eph");
  free(v);
}

/*
 * eph_writer_batch_record writes what eph_writer_record would: batches
 * with every alive_until (the death, a stamp, the births), weights that
 * change inside a batch, cache misses, records written the general way in
 * the middle of a batch, and chunk boundaries; read back record by record.
 */
static void test_batches_decode_as_records(void **state) {
  (void)state;
  size_t n = 50000, i = 0;
  eph_record *v = calloc(n, sizeof *v);
  assert_non_null(v);
  const char *path = tmp_path("batch.eph");
  eph_writer *w = open_declared(path);
  uint64_t rng = 11;
  eph_stamp birth = {4096, 1000, 0, 0};
  size_t general = 0;
  while (i < n) {
    uint64_t x = sample_rand(&rng);
    eph_stamp death = {birth.bytes + 5000, birth.wall_ns + 7000, birth.scavenges + 1, birth.full_gcs};
    eph_stamp until = (x % 3 == 0) ? death : (eph_stamp){birth.bytes - 100, birth.wall_ns - 50, birth.scavenges, birth.full_gcs};
    unsigned kind = x % 4 == 0 ? EPH_DEATH_CENSORED : x % 4 == 1 ? EPH_DEATH_EXACT : EPH_DEATH_SCAVENGE;
    eph_writer_batch(w, &death, &until, kind);
    size_t len = 1 + (x >> 8) % 700;
    for (size_t j = 0; j < len && i < n; j++, i++) {
      uint64_t y = sample_rand(&rng);
      eph_record *r = &v[i];
      birth.bytes += 8 + (y % 5) * 8;
      birth.wall_ns += (y >> 3) % 200;
      r->birth = birth;
      r->id = birth.bytes;
      r->class_id = (uint32_t)(1 + (y >> 10) % 3 + ((y >> 12) % 2) * 256); /* 1/257 share an entry */
      r->site_id = (uint32_t)((y >> 14) % 4);
      r->size = (y >> 16) % 4 == 0 ? (y >> 18) % 5000 : 24;
      r->weight = (y >> 30) % 50 == 0 ? 3.5 : 1.0;
      r->death_kind = (uint8_t)kind;
      if ((y >> 40) % 97 == 0) { /* a record of another death, the general way */
        r->death = (eph_stamp){birth.bytes + 1, birth.wall_ns + 1, birth.scavenges, birth.full_gcs};
        r->alive_until = r->death;
        r->death_kind = EPH_DEATH_FINALIZED;
        assert_int_equal(eph_writer_record(w, r), EPH_OK);
        general++;
        continue;
      }
      bool until_birth = (y >> 50) % 3 == 0;
      r->death = death;
      r->alive_until = until_birth ? birth : until;
      if (eph_writer_batch_record(w, r->class_id, r->site_id, r->size, r->weight, &r->birth, until_birth) != EPH_OK)
        fail_msg("record %zu: %s", i, eph_writer_error(w));
    }
    birth.bytes = death.bytes;
    birth.wall_ns = death.wall_ns + 3000;
    birth.scavenges = death.scavenges;
    if (x % 17 == 0) birth.full_gcs++;
  }
  assert_true(general > 100);
  close_and_compare(w, path, v, n);
  free(v);
}

/* A fork's records land after the parent's so far, in order, whichever
 * thread wrote them; a fork declares nothing; it is reusable after a join
 * (sync first), and one never joined leaves nothing in the file.  The
 * fork's records have another weight and scavenge count than the
 * parent's (the writer's thread queues records against the one before). */
static void test_fork_join_order(void **state) {
  (void)state;
  size_t n = 30000, made = 0, done = 0, nf = 0;
  eph_record *v = calloc(n, sizeof *v), *fork_recs = calloc(n, sizeof *fork_recs);
  assert_non_null(v);
  assert_non_null(fork_recs);
  const char *path = tmp_path("fork.eph");
  eph_writer *w = open_declared(path);
  eph_writer *f = eph_writer_fork(w), *unused = eph_writer_fork(w);
  assert_non_null(f);
  assert_non_null(unused);
  assert_null(eph_writer_fork(f)); /* no fork of a fork */
  assert_int_equal(eph_writer_class(f, 9, "Nine"), EPH_ERR_INVALID);
  eph_stamp birth = {4096, 1000, 0, 0}, death = {900000000, 5000000, 3, 1};
  /* {parent, fork} records, {0, 0}: join; the parent's records written
   * while the fork is open come before the fork's */
  size_t plan[][2] = {{700, 0}, {0, 9000}, {300, 0}, {0, 0}, {50, 0}, {0, 12000}, {0, 0}, {7950, 0}};
  eph_writer_batch(w, &death, &death, EPH_DEATH_SCAVENGE);
  eph_writer_fork_sync(f);
  eph_writer_fork_sync(unused);
  for (size_t step = 0; step < sizeof plan / sizeof plan[0]; step++) {
    if (!plan[step][0] && !plan[step][1]) {
      assert_int_equal(eph_writer_join(f), EPH_OK);
      eph_writer_fork_sync(f);
      done = made; /* the parent's so far are in order in v; the fork's follow */
      memcpy(v + done, fork_recs, nf * sizeof *v);
      done += nf;
      made = done;
      nf = 0;
      continue;
    }
    bool to_fork = plan[step][1] != 0;
    size_t len = plan[step][0] + plan[step][1];
    for (size_t j = 0; j < len; j++) {
      assert_true(made + nf < n);
      eph_record *r = to_fork ? &fork_recs[nf++] : &v[made++];
      birth.bytes += 16 + (j % 7) * 8;
      birth.wall_ns += j % 13;
      eph_stamp b = birth;
      b.scavenges += to_fork ? 2 : 0;
      *r = (eph_record){.id = birth.bytes, .class_id = (uint32_t)(1 + j % 3), .site_id = (uint32_t)(j % 4),
                        .size = 16 + (j % 7) * 8, .weight = to_fork ? 2.0 : 1.0, .birth = b, .death = death,
                        .alive_until = death, .death_kind = EPH_DEATH_SCAVENGE};
      eph_writer *to = to_fork ? f : w;
      if (eph_writer_batch_record(to, r->class_id, r->site_id, r->size, r->weight, &r->birth, false) != EPH_OK)
        fail_msg("record %zu: %s", made + nf, eph_writer_error(to));
    }
  }
  assert_int_equal(made, n);
  eph_stamp early = {1, 1, 0, 0};
  assert_int_equal(eph_writer_batch_record(unused, 1, 0, 16, 1.0, &early, false), EPH_OK);
  assert_int_equal(eph_writer_close(unused, NULL), EPH_OK); /* dropped: never joined */
  assert_int_equal(eph_writer_close(f, NULL), EPH_OK);
  close_and_compare(w, path, v, n);
  free(v);
  free(fork_recs);
}

/* eph_writer_record_to_death writes what eph_writer_record would, for
 * records alive until their death with id = birth.bytes: kinds and weights
 * that change now and then, deaths equal to the previous one, differing in
 * wall time only, or anywhere; cache misses; chunk boundaries. */
static void test_records_to_death(void **state) {
  (void)state;
  size_t n = 50000;
  eph_record *v = calloc(n, sizeof *v);
  assert_non_null(v);
  const char *path = tmp_path("to-death.eph");
  eph_writer *w = open_declared(path);
  uint64_t rng = 5;
  eph_stamp birth = {4096, 1000, 0, 0}, death = {9000, 5000, 1, 0};
  for (size_t i = 0; i < n; i++) {
    uint64_t y = sample_rand(&rng);
    eph_record *r = &v[i];
    birth.bytes += 8 + (y % 5) * 8;
    birth.wall_ns += (y >> 3) % 200;
    if ((y >> 6) % 50 == 0) birth.scavenges++;
    switch ((y >> 8) % 4) {
      case 0: break;                                      /* the previous death */
      case 1: death.wall_ns += (y >> 10) % 90; break;     /* its wall time only */
      case 2: death = birth; break;                       /* died at birth */
      default: death = (eph_stamp){birth.bytes + (y >> 12) % 100000, birth.wall_ns + (y >> 20) % 9000,
                                   birth.scavenges + (y >> 30) % 3, birth.full_gcs + (y >> 32) % 2};
    }
    r->birth = birth;
    r->death = death;
    r->alive_until = death;
    r->id = birth.bytes;
    r->class_id = (uint32_t)(1 + (y >> 34) % 3 + ((y >> 36) % 2) * 256);
    r->site_id = (uint32_t)((y >> 38) % 4);
    r->size = (y >> 40) % 4 == 0 ? (y >> 42) % 5000 : 24;
    r->weight = (y >> 50) % 97 == 0 ? 2.0 : 1.0;
    r->death_kind = (uint8_t)((y >> 58) % 89 == 0 ? EPH_DEATH_CENSORED : EPH_DEATH_EXACT);
    if (eph_writer_record_to_death(w, r->class_id, r->site_id, r->size, r->weight, &r->birth, &r->death,
                                   r->death_kind) != EPH_OK)
      fail_msg("record %zu: %s", i, eph_writer_error(w));
  }
  close_and_compare(w, path, v, n);
  free(v);
}

static void test_roundtrip_empty(void **state) {
  (void)state;
  const char *path = tmp_path("empty.eph");
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  eph_file *p = load_ok(path);
  assert_true(p->complete);
  assert_int_equal(p->nmeta + p->nclasses + p->nsites + p->nrecords + p->ngcs + p->nevents, 0);
  assert_int_equal(p->totals.records, 0);
  assert_null(eph_file_meta(p, "runtime"));
  eph_file_free(p);
  eph_file_free(NULL);
  assert_int_equal(eph_writer_close(NULL, NULL), EPH_OK);
}

static void test_meta_lookup(void **state) {
  (void)state;
  eph_meta_pair meta[] = {{"runtime", "lua"}, {"workload", "binarytrees"}, {"empty", NULL}};
  const char *path = tmp_path("meta.eph");
  eph_error err;
  eph_writer *w = eph_writer_open(path, meta, 3, true, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  eph_file *p = load_ok(path);
  assert_string_equal(eph_file_meta(p, "runtime"), "lua");
  assert_string_equal(eph_file_meta(p, "workload"), "binarytrees");
  assert_string_equal(eph_file_meta(p, "empty"), "");
  assert_null(eph_file_meta(p, "nope"));
  assert_null(eph_file_meta(p, NULL));
  assert_null(eph_file_meta(NULL, "runtime"));
  eph_file_free(p);
}

static eph_record good_record(uint32_t cls, uint32_t site) {
  eph_record r;
  memset(&r, 0, sizeof r);
  r.id = 1;
  r.class_id = cls;
  r.site_id = site;
  r.size = 32;
  r.weight = 1;
  r.death_kind = EPH_DEATH_SCAVENGE;
  return r;
}

static void expect_rejected(eph_writer *w, eph_status got, eph_status want, const char *what) {
  if (got != want) fail_msg("expected status %d for %s, got %d", (int)want, what, (int)got);
  if (!strstr(eph_writer_error(w), what)) fail_msg("message \"%s\" should mention '%s'", eph_writer_error(w), what);
}

static void test_writer_arguments(void **state) {
  (void)state;
  const char *path = tmp_path("args.eph");
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  assert_string_equal(eph_writer_error(w), "");
  expect_rejected(w, eph_writer_class(w, 0, "X"), EPH_ERR_INVALID, "out of range");
  expect_rejected(w, eph_writer_class(w, EPH_FORMAT_MAX_ID + 1, "X"), EPH_ERR_INVALID, "out of range");
  expect_rejected(w, eph_writer_class(w, 3, NULL), EPH_ERR_INVALID, "no name");
  assert_int_equal(eph_writer_class(w, 3, "Point"), EPH_OK);
  assert_int_equal(eph_writer_class(w, 3, "Point"), EPH_OK); /* the same again: fine */
  expect_rejected(w, eph_writer_class(w, 3, "Other"), EPH_ERR_INVALID, "already declared");
  expect_rejected(w, eph_writer_site(w, 0, "f.c", 1, "f"), EPH_ERR_INVALID, "out of range");
  assert_int_equal(eph_writer_site(w, 2, "f.c", 10, "f"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 2, "f.c", 10, "f"), EPH_OK);
  expect_rejected(w, eph_writer_site(w, 2, "f.c", 11, "f"), EPH_ERR_INVALID, "already declared");
  assert_int_equal(eph_writer_site(w, 4, NULL, -5, NULL), EPH_OK);

  eph_record r = good_record(3, 2);
  assert_int_equal(eph_writer_record(w, &r), EPH_OK);
  r = good_record(4, 2);
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "class 4 was not declared");
  r = good_record(3, 5);
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "site 5 was not declared");
  r = good_record(0, 0); /* 0: unknown, always allowed */
  assert_int_equal(eph_writer_record(w, &r), EPH_OK);
  r.death_kind = 0;
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "death kind");
  r.death_kind = 7;
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "death kind");
  r = good_record(3, 2);
  r.weight = NAN;
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "weight");
  r.weight = INFINITY;
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "weight");
  r.weight = -1;
  expect_rejected(w, eph_writer_record(w, &r), EPH_ERR_INVALID, "weight");
  expect_rejected(w, eph_writer_record(w, NULL), EPH_ERR_INVALID, "no record");

  eph_gc_event g;
  memset(&g, 0, sizeof g);
  g.kind = (eph_gc_kind)2;
  expect_rejected(w, eph_writer_gc(w, &g), EPH_ERR_INVALID, "bad kind");
  g.kind = EPH_GC_FULL;
  assert_int_equal(eph_writer_gc(w, &g), EPH_OK);

  eph_event e = {.kind = 0};
  expect_rejected(w, eph_writer_event(w, &e), EPH_ERR_INVALID, "bad kind");
  e.kind = 7;
  expect_rejected(w, eph_writer_event(w, &e), EPH_ERR_INVALID, "bad kind");
  e = (eph_event){.kind = EPH_EV_ALLOC, .obj = 1, .a = 9, .b = 16, .c = 2};
  expect_rejected(w, eph_writer_event(w, &e), EPH_ERR_INVALID, "not declared");
  e.a = 3;
  assert_int_equal(eph_writer_event(w, &e), EPH_OK);
  e = (eph_event){.kind = EPH_EV_GC, .a = 2};
  expect_rejected(w, eph_writer_event(w, &e), EPH_ERR_INVALID, "gc kind");
  e = (eph_event){.kind = EPH_EV_GC, .a = 1, .b = 1};
  assert_int_equal(eph_writer_event(w, &e), EPH_OK);

  /* The rejected calls left no trace: the file holds exactly the accepted items. */
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  eph_file *p = load_ok(path);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 2);
  assert_int_equal(p->ngcs, 1);
  assert_int_equal(p->nevents, 2);
  assert_int_equal(p->nclasses, 4);
  assert_string_equal(p->class_names[3], "Point");
  assert_null(p->class_names[1]);
  assert_int_equal(p->nsites, 5);
  assert_string_equal(p->sites[2].file, "f.c");
  assert_int_equal(p->sites[2].line, 10);
  assert_string_equal(p->sites[4].file, "");
  assert_string_equal(p->sites[4].function, "");
  assert_int_equal(p->sites[4].line, -5);
  assert_null(p->sites[3].file);
  eph_file_free(p);

  /* NULL writers and open arguments. */
  assert_int_equal(eph_writer_record(NULL, &r), EPH_ERR_INVALID);
  assert_int_equal(eph_writer_flush(NULL), EPH_ERR_INVALID);
  assert_null(eph_writer_open(NULL, NULL, 0, false, &err));
  assert_int_equal(err.status, EPH_ERR_INVALID);
  eph_meta_pair bad = {NULL, "x"};
  assert_null(eph_writer_open(path, &bad, 1, false, &err));
}

/* The descriptor the writer holds for path (found through /proc/self/fd). */
static int writer_fd(const char *path) {
  char real[PATH_MAX];
  if (!realpath(path, real)) return -1;
  for (int fd = 3; fd < 1024; fd++) {
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (!strcmp(target, real)) return fd;
  }
  return -1;
}

static void test_write_errors(void **state) {
  (void)state;
  eph_error err;
  memset(&err, 0, sizeof err);
  /* Disk full at once: the header cannot be written. */
  assert_null(eph_writer_open("/dev/full", NULL, 0, false, &err));
  assert_int_not_equal(err.status, EPH_OK);
  if (!strstr(err.message, "/dev/full") || !strstr(err.message, strerror(ENOSPC)))
    fail_msg("unexpected message: %s", err.message);
  assert_null(eph_writer_open("/nonexistent-dir/x.eph", NULL, 0, false, &err));
  assert_non_null(strstr(err.message, "cannot create /nonexistent-dir/x.eph"));

  /* Disk full in the middle of a run: swap /dev/full in under the writer. */
  const char *path = tmp_path("full.eph");
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_class(w, 1, "A"), EPH_OK);
  eph_record r = good_record(1, 0);
  for (int i = 0; i < 100; i++) assert_int_equal(eph_writer_record(w, &r), EPH_OK);
  assert_int_equal(eph_writer_flush(w), EPH_OK);
  int fd = writer_fd(path), full = open("/dev/full", O_WRONLY);
  assert_true(fd >= 0 && full >= 0);
  assert_true(dup2(full, fd) == fd);
  close(full);
  eph_status st = EPH_OK;
  for (int i = 0; i < 100000 && st == EPH_OK; i++) st = eph_writer_record(w, &r);
  assert_int_not_equal(st, EPH_OK);
  assert_non_null(strstr(eph_writer_error(w), strerror(ENOSPC)));
  /* The failure sticks. */
  assert_int_equal(eph_writer_record(w, &r), st);
  assert_int_equal(eph_writer_flush(w), st);
  assert_int_equal(eph_writer_close(w, NULL), st);
  assert_non_null(strstr(eph_writer_error(NULL), strerror(ENOSPC)));
  /* What reached the file before the failure still reads. */
  eph_file *p = load_ok(path);
  assert_false(p->complete);
  assert_int_equal(p->nrecords, 100);
  eph_file_free(p);

  /* A bad descriptor (EBADF) at close time. */
  w = eph_writer_open(path, NULL, 0, true, &err);
  assert_non_null(w);
  fd = writer_fd(path);
  assert_true(fd >= 0);
  close(fd);
  st = eph_writer_close(w, NULL);
  assert_int_not_equal(st, EPH_OK);
  assert_non_null(strstr(eph_writer_error(NULL), strerror(EBADF)));
}

/* Walks the chunk framing: number of chunks of each size class. */
static void chunk_sizes(const uint8_t *d, size_t n, size_t *count, uint32_t *max_raw, uint32_t *compressed) {
  *count = 0;
  *max_raw = 0;
  *compressed = 0;
  for (size_t off = 16; off + 24 <= n;) {
    uint32_t stored = read_u32(d + off + 8), raw = read_u32(d + off + 12);
    if (memcmp(d + off, "META", 4) && raw > *max_raw) *max_raw = raw;
    if (read_u32(d + off + 4) & 1) (*compressed)++;
    (*count)++;
    off += 24 + stored;
  }
}

static void test_chunks_bounded_and_compressed(void **state) {
  (void)state;
  sample_spec spec = {.nrecords = 30000, .ngcs = 100, .nevents = 100000, .seed = 4};
  sample s;
  sample_build(&s, &spec);
  size_t plain_len, z_len, count;
  uint32_t max_raw, compressed;
  write_sample(&s, tmp_path("big.eph"), false, 0, true);
  uint8_t *plain = sample_read_file(tmp_path("big.eph"), &plain_len);
  write_sample(&s, tmp_path("big-z.eph"), true, 0, true);
  uint8_t *z = sample_read_file(tmp_path("big-z.eph"), &z_len);
  assert_non_null(plain);
  assert_non_null(z);
  chunk_sizes(plain, plain_len, &count, &max_raw, &compressed);
  assert_true(count > 10);
  assert_true(max_raw <= 64 * 1024 + 256); /* chunks flush at 64 KiB */
  assert_int_equal(compressed, 0);
  chunk_sizes(z, z_len, &count, &max_raw, &compressed);
  assert_true(compressed > 10);
  /* (4/5: version 2 records are already dense, deflate finds less in them.) */
  assert_true(z_len < plain_len * 4 / 5);
  /* Records are compact: a few bytes each even uncompressed. */
  assert_true(plain_len < (spec.nrecords * 40 + spec.nevents * 12));
  free(plain);
  free(z);
  sample_free(&s);
}

static void test_flush_empty_is_noop(void **state) {
  (void)state;
  const char *path = tmp_path("flush.eph");
  eph_error err;
  eph_writer *w = eph_writer_open(path, NULL, 0, false, &err);
  assert_non_null(w);
  struct stat a, b;
  assert_int_equal(eph_writer_flush(w), EPH_OK);
  assert_int_equal(stat(path, &a), 0);
  assert_int_equal(eph_writer_flush(w), EPH_OK);
  assert_int_equal(stat(path, &b), 0);
  assert_int_equal(a.st_size, 16);
  assert_int_equal(a.st_size, b.st_size);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* XINUSE (XGETBV with ECX = 1): which parts of the register state are in
 * use; false where the CPU cannot tell. */
static bool xinuse(uint64_t *bits) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return false;
  if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || !(a & (1u << 2))) return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  *bits = (uint64_t)hi << 32 | lo;
  return true;
}
#define XINUSE_YMM_HI (UINT64_C(1) << 2) /* the upper halves of YMM0-15 */
#define XINUSE_ZMM_HI (UINT64_C(1) << 6) /* bits 256-511 of ZMM0-15 */
#endif

/* Writing chunks (their CRCs run vector code) leaves no dirty upper vector
 * state behind: with it, the program's own SSE code ran up to 2.3x slower
 * for the rest of the process. */
static void test_writer_leaves_vector_state_clean(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__GNUC__)
  uint64_t in_use = 0;
  if (!xinuse(&in_use)) skip();
  eph_error err;
  eph_writer *w = eph_writer_open(tmp_path("vector-state.eph"), NULL, 0, false, &err);
  assert_non_null(w);
  for (uint64_t i = 0; i < 20000; i++) { /* more than a chunk */
    eph_gc_event ev = {.kind = EPH_GC_SCAVENGE, .index = i, .allocated = i * 4096};
    assert_int_equal(eph_writer_gc(w, &ev), EPH_OK);
  }
  assert_int_equal(eph_writer_flush(w), EPH_OK);
  assert_true(xinuse(&in_use));
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  if (in_use & (XINUSE_YMM_HI | XINUSE_ZMM_HI))
    fail_msg("the writer returned with upper vector state in use (XINUSE 0x%llx)", (unsigned long long)in_use);
#else
  skip();
#endif
}

/* The same record streams through the writer's own thread
 * (writer_async.c): the records read back are the same. */
static void run_threaded(void (*test)(void **), void **state) {
  threaded = true;
  test(state);
  threaded = false;
}
static void test_batches_threaded(void **state) { run_threaded(test_batches_decode_as_records, state); }
static void test_records_to_death_threaded(void **state) { run_threaded(test_records_to_death, state); }
static void test_fork_join_order_threaded(void **state) { run_threaded(test_fork_join_order, state); }
static void test_record_encoding_cases_threaded(void **state) { run_threaded(test_record_encoding_cases, state); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_plain),
      cmocka_unit_test(test_writer_leaves_vector_state_clean),
      cmocka_unit_test(test_batches_decode_as_records),
      cmocka_unit_test(test_records_to_death),
      cmocka_unit_test(test_fork_join_order),
      cmocka_unit_test(test_batches_threaded),
      cmocka_unit_test(test_records_to_death_threaded),
      cmocka_unit_test(test_fork_join_order_threaded),
      cmocka_unit_test(test_record_encoding_cases_threaded),
      cmocka_unit_test(test_roundtrip_compressed),
      cmocka_unit_test(test_roundtrip_extreme),
      cmocka_unit_test(test_profiler_streams_are_small),
      cmocka_unit_test(test_record_encoding_cases),
      cmocka_unit_test(test_roundtrip_empty),
      cmocka_unit_test(test_meta_lookup),
      cmocka_unit_test(test_writer_arguments),
      cmocka_unit_test(test_write_errors),
      cmocka_unit_test(test_chunks_bounded_and_compressed),
      cmocka_unit_test(test_flush_empty_is_noop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
