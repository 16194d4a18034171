/*
 * test_corrupt.c — malformed input: hand-made files that break one rule
 * each (with valid CRCs, so the decoders see them), unknown chunks that
 * must be skipped, and every byte of a real file flipped in turn.
 */
#include <limits.h>

#include "format_test.h"
#include "fuzz_common.h"

/* A file with one class (1 "A") and one site (1), ready for a test chunk. */
static void base_image(img *m) {
  img_header(m, EPH_FORMAT_VERSION, 0);
  img meta = {0};
  img_str(&meta, "runtime", 7);
  img_str(&meta, "ephemera", 8);
  img_chunk(m, "META", &meta);
  img_free(&meta);
  img cls = {0};
  img_uv(&cls, 1);
  img_str(&cls, "A", 1);
  img_chunk(m, "CLAS", &cls);
  img_free(&cls);
  img site = {0};
  img_uv(&site, 1);
  img_str(&site, "a.c", 3);
  img_delta(&site, 10, 0);
  img_str(&site, "f", 1);
  img_chunk(m, "SITE", &site);
  img_free(&site);
}

/* Record head and extension bits of version 2, written out from the spec
 * (docs/eph-format.md §5.4) rather than taken from the implementation. */
enum {
  H_DEATH_SAME = 0x00, H_DEATH_WALL = 0x01, H_DEATH_BIRTH = 0x02, H_DEATH_PREV = 0x03,
  H_AU_DEATH = 0x00, H_AU_BIRTH = 0x04, H_AU_BASE = 0x08, H_AU_STORED = 0x0c,
  H_ID_BIRTH = 0x10, H_CACHED = 0x20, H_BIRTH_GCS = 0x40, H_EXT = 0x80,
  X_WEIGHT = 0x08, X_WEIGHT_INT = 0x10,
};

/*
 * One record, fields as head and ext say: weight 1 (uvarint or f64),
 * class, site, size 32, birth +100 bytes +1000 ns (counts +0), id +1,
 * death +100 bytes +1000 ns from its base (WALL: +1000 ns), alive_until
 * (STORED) = birth.
 */
static void put_record(img *r, uint8_t head, uint8_t ext, uint64_t cls, uint64_t site) {
  img_u8(r, head);
  if (head & H_EXT) img_u8(r, ext);
  if (ext & X_WEIGHT) {
    if (ext & X_WEIGHT_INT) img_uv(r, 1);
    else img_u64(r, 0x3ff0000000000000u); /* 1.0 */
  }
  img_uv(r, cls);
  if (!(head & H_CACHED)) {
    img_uv(r, site);
    img_uv(r, 32);
  }
  img_delta(r, 100, 0);
  img_delta(r, 1000, 0);
  if (head & H_BIRTH_GCS) {
    img_delta(r, 0, 0);
    img_delta(r, 0, 0);
  }
  if (!(head & H_ID_BIRTH)) img_delta(r, 1, 0);
  switch (head & 3) {
    case H_DEATH_WALL: img_delta(r, 1000, 0); break;
    case H_DEATH_BIRTH:
    case H_DEATH_PREV:
      img_delta(r, 100, 0);
      img_delta(r, 1000, 0);
      img_delta(r, 0, 0);
      img_delta(r, 0, 0);
      break;
    default: break;
  }
  if ((head & 0x0c) == H_AU_STORED)
    for (int i = 0; i < 4; i++) img_delta(r, 0, 0);
}

/* The usual first record of a chunk: kind and an integer weight given. */
#define FIRST_HEAD (H_EXT | H_DEATH_BIRTH)
#define FIRST_EXT(kind) ((kind) | X_WEIGHT | X_WEIGHT_INT)

static void put_close(img *m) {
  img t = {0};
  for (int i = 0; i < 10; i++) img_uv(&t, (uint64_t)i);
  img_chunk(m, "CLOS", &t);
  img_free(&t);
}

/* base + one chunk of type fourcc with payload; expects `what` at that chunk. */
static void expect_bad_chunk(const char *fourcc, img *payload, const char *what) {
  img m = {0};
  base_image(&m);
  size_t off = img_chunk(&m, fourcc, payload);
  put_close(&m);
  expect_invalid(&m, off, what);
  img_free(&m);
  img_free(payload);
}

static void test_base_image_loads(void **state) {
  (void)state;
  img m = {0};
  base_image(&m);
  img r = {0};
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
  put_record(&r, H_EXT | H_DEATH_BIRTH | H_AU_STORED, EPH_DEATH_SCAVENGE | X_WEIGHT, 0, 0);
  img_chunk(&m, "RECS", &r);
  img_free(&r);
  put_close(&m);
  eph_file *p = expect_loads(&m);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 2);
  assert_int_equal(p->records[0].class_id, 1);
  assert_true(p->records[1].weight == 1.0);
  assert_int_equal(p->records[0].birth.bytes, 100);
  assert_int_equal(p->records[0].death.bytes, 200);
  assert_int_equal(p->totals.peak_heap, 9);
  eph_file_free(p);
  img_free(&m);
}

/* Every shortcut of the record encoding, decoded from hand-made bytes. */
static void test_record_shortcuts(void **state) {
  (void)state;
  img m = {0};
  base_image(&m);
  img cls = {0};
  img_uv(&cls, 257); /* shares cache entry 1 with class 1 */
  img_str(&cls, "B", 1);
  img_chunk(&m, "CLAS", &cls);
  img_free(&cls);
  img r = {0};
  /* 0: everything stored; kind 2, weight 1; birth (100, 1000, 3, 1); id 7;
   * death from birth (500, 9000, 4, 1); alive_until stored (300, 5000, 4, 1). */
  img_u8(&r, H_EXT | H_DEATH_BIRTH | H_AU_STORED | H_BIRTH_GCS);
  img_u8(&r, EPH_DEATH_SCAVENGE | X_WEIGHT | X_WEIGHT_INT);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 48);
  img_delta(&r, 100, 0);
  img_delta(&r, 1000, 0);
  img_delta(&r, 3, 0);
  img_delta(&r, 1, 0);
  img_delta(&r, 7, 0);
  img_delta(&r, 400, 0);
  img_delta(&r, 8000, 0);
  img_delta(&r, 1, 0);
  img_delta(&r, 0, 0);
  img_delta(&r, 200, 0);
  img_delta(&r, 4000, 0);
  img_delta(&r, 1, 0);
  img_delta(&r, 0, 0);
  /* 1: the same kind, weight, death; class 1 cached; id == birth.bytes
   * (150); alive_until the base (record 0's). */
  img_u8(&r, H_DEATH_SAME | H_AU_BASE | H_ID_BIRTH | H_CACHED);
  img_uv(&r, 1);
  img_delta(&r, 150, 100);
  img_delta(&r, 1100, 1000);
  /* 2: class 257 (entry 1 now 257, 0, 16), weight 2.5, kind 1; id 8
   * (+1 from 150 would be 151: -142 instead); death: record 1's but
   * wall + 50; alive_until == birth. */
  img_u8(&r, H_EXT | H_DEATH_WALL | H_AU_BIRTH);
  img_u8(&r, EPH_DEATH_FINALIZED | X_WEIGHT);
  img_u64(&r, 0x4004000000000000u); /* 2.5 */
  img_uv(&r, 257);
  img_uv(&r, 0);
  img_uv(&r, 16);
  img_delta(&r, 160, 150);
  img_delta(&r, 1200, 1100);
  img_delta(&r, 8, 150);
  img_delta(&r, 9050, 9000);
  /* 3: class 257 cached; death from record 2's (+10 bytes, +1 scavenge);
   * alive_until == death; the kind given again (as 0: the previous). */
  img_u8(&r, H_EXT | H_DEATH_PREV | H_AU_DEATH | H_CACHED);
  img_u8(&r, 0);
  img_uv(&r, 257);
  img_delta(&r, 170, 160);
  img_delta(&r, 1300, 1200);
  img_delta(&r, 9, 8);
  img_delta(&r, 510, 500);
  img_delta(&r, 9050, 9050);
  img_delta(&r, 5, 4);
  img_delta(&r, 1, 1);
  img_chunk(&m, "RECS", &r);
  /* A new chunk starts from zero: kind, weight, cache and bases. */
  img_free(&r);
  img_u8(&r, H_EXT | H_DEATH_SAME | H_AU_BASE);
  img_u8(&r, EPH_DEATH_CENSORED);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  img_delta(&r, 5, 0);
  img_delta(&r, 6, 0);
  img_delta(&r, 7, 0);
  img_chunk(&m, "RECS", &r);
  img_free(&r);
  put_close(&m);
  eph_file *p = expect_loads(&m);
  assert_int_equal(p->nrecords, 5);
  const eph_stamp b0 = {100, 1000, 3, 1}, d0 = {500, 9000, 4, 1}, a0 = {300, 5000, 4, 1};
  const eph_record want[5] = {
      {7, 1, 1, 48, 1.0, b0, d0, a0, EPH_DEATH_SCAVENGE},
      {150, 1, 1, 48, 1.0, {150, 1100, 3, 1}, d0, a0, EPH_DEATH_SCAVENGE},
      {8, 257, 0, 16, 2.5, {160, 1200, 3, 1}, {500, 9050, 4, 1}, {160, 1200, 3, 1}, EPH_DEATH_FINALIZED},
      {9, 257, 0, 16, 2.5, {170, 1300, 3, 1}, {510, 9050, 5, 1}, {510, 9050, 5, 1}, EPH_DEATH_FINALIZED},
      {7, 1, 1, 8, 0.0, {5, 6, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, EPH_DEATH_CENSORED},
  };
  for (size_t i = 0; i < 5; i++)
    if (!sample_record_eq(&p->records[i], &want[i])) fail_msg("record %zu decoded wrong", i);
  eph_file_free(p);
  img_free(&m);
}

static void test_bad_records(void **state) {
  (void)state;
  img r = {0};
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 2, 0);
  expect_bad_chunk("RECS", &r, "class 2 is not defined");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 1, 3);
  expect_bad_chunk("RECS", &r, "site 3 is not defined");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), (uint64_t)UINT32_MAX + 1, 0);
  expect_bad_chunk("RECS", &r, "is not defined");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), (uint64_t)UINT32_MAX + 2, 1);
  expect_bad_chunk("RECS", &r, "is not defined");
  /* Death kinds: none in a chunk's first record, 7, reserved bits. */
  put_record(&r, H_DEATH_BIRTH, 0, 1, 1);
  expect_bad_chunk("RECS", &r, "death kind 0");
  put_record(&r, H_EXT | H_DEATH_BIRTH, 0, 1, 1);
  expect_bad_chunk("RECS", &r, "death kind 0");
  put_record(&r, FIRST_HEAD, FIRST_EXT(7), 1, 1);
  expect_bad_chunk("RECS", &r, "death kind 7");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT) | 0x20, 1, 1);
  expect_bad_chunk("RECS", &r, "reserved bits 0x3d");
  put_record(&r, FIRST_HEAD, EPH_DEATH_EXACT | X_WEIGHT_INT, 1, 1);
  expect_bad_chunk("RECS", &r, "integer-weight bit without a weight");
  /* The cache: empty at the start of a chunk; an entry holds one class. */
  put_record(&r, FIRST_HEAD | H_CACHED, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
  expect_bad_chunk("RECS", &r, "cached site and size of class 1,");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
  put_record(&r, H_DEATH_BIRTH | H_CACHED, 0, 257, 0);
  expect_bad_chunk("RECS", &r, "record 1 of the chunk: cached site and size of class 257");
  /* NaN and negative weights */
  put_record(&r, FIRST_HEAD, EPH_DEATH_EXACT, 1, 1);
  r.p[1] |= X_WEIGHT; /* put_record wrote 1.0: patch in NaN */
  r.len = 2;
  img_u64(&r, 0x7ff8000000000000u);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  for (int i = 0; i < 7; i++) img_delta(&r, 0, 0);
  expect_bad_chunk("RECS", &r, "weight is not a finite");
  img_u8(&r, FIRST_HEAD);
  img_u8(&r, EPH_DEATH_EXACT | X_WEIGHT);
  img_u64(&r, 0xbff0000000000000u); /* -1.0 */
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  for (int i = 0; i < 7; i++) img_delta(&r, 0, 0);
  expect_bad_chunk("RECS", &r, "weight is not a finite");
  /* A record cut short (at every field), then one whole record and a stray byte. */
  for (size_t cut = 1; cut < 12; cut++) {
    put_record(&r, FIRST_HEAD | H_AU_STORED | H_BIRTH_GCS, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
    r.len -= cut;
    expect_bad_chunk("RECS", &r, "payload ends inside");
  }
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
  img_u8(&r, EPH_DEATH_EXACT);
  expect_bad_chunk("RECS", &r, "record 1 of the chunk");
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_EXACT), 1, 1);
  img_u8(&r, H_EXT);
  expect_bad_chunk("RECS", &r, "record 1 of the chunk: payload ends inside an item");
  /* A varint of 11 bytes; a 10-byte varint over 64 bits. */
  img_u8(&r, H_EXT);
  img_u8(&r, EPH_DEATH_EXACT);
  for (int i = 0; i < 11; i++) img_u8(&r, 0xff);
  expect_bad_chunk("RECS", &r, "varint overflows");
  img_u8(&r, H_EXT);
  img_u8(&r, EPH_DEATH_EXACT);
  for (int i = 0; i < 9; i++) img_u8(&r, 0xff);
  img_u8(&r, 0x02);
  expect_bad_chunk("RECS", &r, "varint overflows");
  /* A collection count past 2^32 - 1: in a birth, a death, an alive_until. */
  for (int where = 0; where < 3; where++) {
    img_u8(&r, H_EXT | H_DEATH_BIRTH | H_AU_STORED | H_BIRTH_GCS);
    img_u8(&r, EPH_DEATH_EXACT);
    img_uv(&r, 1);
    img_uv(&r, 1);
    img_uv(&r, 8);
    for (int stamp = 0; stamp < 3; stamp++) {
      img_delta(&r, 0, 0);
      img_delta(&r, 0, 0);
      img_delta(&r, stamp == where ? (uint64_t)UINT32_MAX + 1 : 0, 0);
      img_delta(&r, 0, 0);
      if (stamp == 0) img_delta(&r, 1, 0); /* the id, after the birth */
    }
    expect_bad_chunk("RECS", &r, "collection count");
  }
}

static void test_bad_tables(void **state) {
  (void)state;
  img c = {0};
  img_uv(&c, 0);
  img_str(&c, "Zero", 4);
  expect_bad_chunk("CLAS", &c, "id 0 out of range");
  img_uv(&c, EPH_FORMAT_MAX_ID + 1);
  img_str(&c, "Big", 3);
  expect_bad_chunk("CLAS", &c, "out of range");
  img_uv(&c, 1);
  img_str(&c, "B", 1);
  expect_bad_chunk("CLAS", &c, "class 1 defined again");
  img_uv(&c, 2);
  img_str(&c, "a\0b", 3);
  expect_bad_chunk("CLAS", &c, "NUL byte");
  img_uv(&c, 2);
  img_uv(&c, 50);
  img_bytes(&c, "short", 5);
  expect_bad_chunk("CLAS", &c, "string longer");
  img_uv(&c, 2);
  img_str(&c, "x.c", 3);
  img_delta(&c, (uint64_t)INT_MAX + 1, 0);
  img_str(&c, "f", 1);
  expect_bad_chunk("SITE", &c, "line");
  img_uv(&c, 1);
  img_str(&c, "a.c", 3);
  img_delta(&c, 11, 0);
  img_str(&c, "f", 1);
  expect_bad_chunk("SITE", &c, "site 1 defined again");
  img_str(&c, "key", 3);
  expect_bad_chunk("META", &c, "payload ends inside");
}

static void test_bad_gcs_events_close(void **state) {
  (void)state;
  img g = {0};
  img_u8(&g, 2);
  for (int i = 0; i < 12; i++) img_uv(&g, 0);
  expect_bad_chunk("GCEV", &g, "kind 2");
  img_u8(&g, 1);
  for (int i = 0; i < 11; i++) img_uv(&g, 0);
  expect_bad_chunk("GCEV", &g, "payload ends inside");
  img e = {0};
  img_u8(&e, 7);
  img_delta(&e, 0, 0);
  expect_bad_chunk("EVTS", &e, "kind 7");
  img_u8(&e, 0);
  img_delta(&e, 0, 0);
  expect_bad_chunk("EVTS", &e, "kind 0");
  img_u8(&e, EPH_EV_ALLOC | 0x10 | 0x20);
  img_delta(&e, 0, 0);
  img_delta(&e, 1, 0);
  img_uv(&e, 5);
  expect_bad_chunk("EVTS", &e, "class 5");
  img_u8(&e, EPH_EV_ALLOC | 0x80);
  img_delta(&e, 0, 0);
  img_uv(&e, 9);
  expect_bad_chunk("EVTS", &e, "site 9");
  img_u8(&e, EPH_EV_GC | 0x20);
  img_delta(&e, 0, 0);
  img_uv(&e, 2);
  expect_bad_chunk("EVTS", &e, "gc event");
  img t = {0};
  for (int i = 0; i < 9; i++) img_uv(&t, 1);
  expect_bad_chunk("CLOS", &t, "totals field 9");
  for (int i = 0; i < 11; i++) img_uv(&t, 1);
  expect_bad_chunk("CLOS", &t, "bytes after the totals");
}

static void test_bad_framing(void **state) {
  (void)state;
  img m = {0};
  /* magic and version */
  img_bytes(&m, "EPHEMERX", 8);
  img_u32(&m, 1);
  img_u32(&m, 0);
  expect_invalid(&m, 0, "bad magic");
  img_free(&m);
  img_header(&m, 1, 0); /* the first layout of records: no longer read */
  expect_invalid(&m, 8, "unsupported format version 1 at byte 8: this reader reads only version 2");
  img_free(&m);
  img_header(&m, 3, 0);
  expect_invalid(&m, 8, "unsupported format version 3");
  img_free(&m);
  img_header(&m, 0, 0);
  expect_invalid(&m, 8, "unsupported format version 0");
  img_free(&m);
  img_bytes(&m, "GIF89a", 6);
  expect_invalid(&m, 0, "bad magic");
  img_free(&m);
  img_bytes(&m, "EPHEM", 5);
  expect_invalid(&m, 5, "truncated in the file header");
  img_free(&m);
  img_bytes(&m, "", 0);
  expect_invalid(&m, 0, "empty file");
  img_free(&m);

  img pay = {0};
  img_uv(&pay, 2);
  img_str(&pay, "B", 1);
  /* data after CLOSE */
  base_image(&m);
  put_close(&m);
  size_t off = img_chunk(&m, "CLAS", &pay);
  expect_invalid(&m, off, "data after the closing chunk");
  img_free(&m);
  /* stored != raw without compression */
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 0, &pay, (uint32_t)pay.len, (uint32_t)pay.len + 1);
  expect_invalid(&m, off, "sizes differ");
  img_free(&m);
  /* unknown flags on a known chunk */
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 4, &pay, (uint32_t)pay.len, (uint32_t)pay.len);
  expect_invalid(&m, off, "unknown flags 0x4");
  img_free(&m);
  /* a length over the 16 MiB limit (header CRC valid) */
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 0, &pay, (1u << 24) + 1, (1u << 24) + 1);
  expect_invalid(&m, off, "16 MiB");
  img_free(&m);
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 1, &pay, (uint32_t)pay.len, 0xffffffffu);
  expect_invalid(&m, off, "16 MiB");
  img_free(&m);
  /* deflate: wrong raw size, impossible ratio, garbage stream */
  base_image(&m);
  off = img_chunk_z(&m, "CLAS", &pay, (uint32_t)pay.len + 1);
  expect_invalid(&m, off, "bad compressed payload");
  img_free(&m);
  base_image(&m);
  off = img_chunk_z(&m, "CLAS", &pay, (uint32_t)pay.len - 1);
  expect_invalid(&m, off, "bad compressed payload");
  img_free(&m);
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 1, &pay, (uint32_t)pay.len, 1u << 23);
  expect_invalid(&m, off, "impossible sizes");
  img_free(&m);
  base_image(&m);
  off = img_chunk_raw(&m, "CLAS", 1, &pay, (uint32_t)pay.len, (uint32_t)pay.len);
  expect_invalid(&m, off, "corrupt deflate stream");
  img_free(&m);
  /* a compressed chunk that decodes fine */
  base_image(&m);
  img_chunk_z(&m, "CLAS", &pay, (uint32_t)pay.len);
  put_close(&m);
  eph_file *p = expect_loads(&m);
  assert_string_equal(p->class_names[2], "B");
  eph_file_free(p);
  img_free(&m);
  /* checksums */
  base_image(&m);
  off = img_chunk(&m, "CLAS", &pay);
  m.p[m.len - 1] ^= 1;
  expect_invalid(&m, off, "bad checksum in chunk at byte");
  expect_invalid(&m, off, "(CLASSES)");
  m.p[m.len - 1] ^= 1;
  m.p[off + 8] ^= 1;
  expect_invalid(&m, off, "bad chunk header checksum");
  img_free(&m);
  img_free(&pay);
}

static void test_unknown_chunks_skipped(void **state) {
  (void)state;
  img m = {0};
  img_header(&m, EPH_FORMAT_VERSION, 0xfffffffeu); /* reserved header flags: ignored */
  img junk = {0};
  img_bytes(&junk, "\xff\xff\xff\xff anything at all", 20);
  img_chunk_raw(&m, "ZZZZ", 0xdeadbeefu, &junk, (uint32_t)junk.len, 7); /* flags and raw size unchecked */
  img empty = {0};
  img_chunk(&m, "RECS", &empty); /* empty chunks are fine */
  img cls = {0};
  img_uv(&cls, 1);
  img_str(&cls, "A", 1);
  img_uv(&cls, 1); /* the same definition twice: fine */
  img_str(&cls, "A", 1);
  img_chunk(&m, "CLAS", &cls);
  img_chunk(&m, "XTRA", &empty);
  img r = {0};
  put_record(&r, FIRST_HEAD, FIRST_EXT(EPH_DEATH_FREED), 1, 0);
  img_chunk(&m, "RECS", &r);
  img_chunk(&m, "ZZZZ", &junk);
  eph_file *p = expect_loads(&m); /* no CLOSE yet */
  assert_false(p->complete);
  assert_non_null(strstr(p->warning, "no closing chunk"));
  assert_int_equal(p->nrecords, 1);
  eph_file_free(p);
  put_close(&m);
  p = expect_loads(&m);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 1);
  assert_int_equal(p->records[0].death_kind, EPH_DEATH_FREED);
  eph_file_free(p);
  /* Non-minimal varints are accepted. */
  img_free(&r);
  img_u8(&r, FIRST_HEAD);
  img_u8(&r, FIRST_EXT(EPH_DEATH_FREED));
  img_bytes(&r, "\x81\x00", 2); /* weight 1 */
  img_bytes(&r, "\x81\x00", 2); /* class 1 */
  img_u8(&r, 0);                 /* site */
  img_bytes(&r, "\x80\x00", 2); /* size 0 */
  img_u8(&r, 0);                 /* birth */
  img_u8(&r, 0);
  img_bytes(&r, "\x82\x80\x00", 3); /* id delta: zigzag 2 = +1 */
  for (int i = 0; i < 4; i++) img_u8(&r, 0); /* death */
  img_free(&m);
  base_image(&m);
  img_chunk(&m, "RECS", &r);
  p = expect_loads(&m);
  assert_int_equal(p->nrecords, 1);
  assert_int_equal(p->records[0].id, 1);
  assert_int_equal(p->records[0].class_id, 1);
  eph_file_free(p);
  img_free(&m);
  img_free(&r);
  img_free(&cls);
  img_free(&junk);
}

/* Offsets where each chunk starts (and the file's end). */
static size_t chunk_starts(const uint8_t *d, size_t n, size_t *starts, size_t max) {
  size_t k = 0;
  for (size_t off = 16; off + 24 <= n && k < max;) {
    starts[k++] = off;
    off += 24 + read_u32(d + off + 8);
  }
  return k;
}

static size_t chunk_of(const size_t *starts, size_t k, size_t pos) {
  size_t c = 0;
  for (size_t i = 0; i < k; i++)
    if (starts[i] <= pos) c = starts[i];
  return c;
}

static void flip_every_byte(bool compress) {
  sample_spec spec = {.nrecords = 40, .ngcs = 4, .nevents = 50, .extreme = true, .small_ids = true, .seed = 5};
  sample s;
  sample_build(&s, &spec);
  /* Keep it small: cut the long strings. */
  for (size_t i = 0; i < s.nmeta; i++)
    if (strlen(s.meta[i].value) > 30) ((char *)s.meta[i].value)[30] = 0;
  for (size_t i = 0; i < s.nclasses; i++)
    if (strlen(s.classes[i].name) > 30) s.classes[i].name[30] = 0;
  for (size_t i = 0; i < s.nsites; i++)
    if (strlen(s.sites[i].function) > 30) s.sites[i].function[30] = 0;
  const char *path = tmp_path("flip.eph");
  write_sample(&s, path, compress, 9, true);
  size_t n;
  uint8_t *orig = sample_read_file(path, &n);
  assert_non_null(orig);
  size_t starts[256];
  size_t k = chunk_starts(orig, n, starts, 256);
  assert_true(k > 5);
  uint8_t *d = malloc(n);
  assert_non_null(d);
  static const uint8_t masks[] = {0x01, 0x80, 0xff, 0x10};
  size_t loaded = 0;
  for (size_t pos = 0; pos < n; pos++) {
    for (size_t mi = 0; mi < sizeof masks; mi++) {
      memcpy(d, orig, n);
      d[pos] ^= masks[mi];
      eph_file *p = NULL;
      eph_error err;
      memset(&err, 0, sizeof err);
      eph_status st = eph_file_load_buffer(d, n, &p, &err);
      if (st == EPH_OK) {
        /* Only the header's reserved flags may change without notice. */
        if (pos < 12 || pos >= 16) fail_msg("flip at byte %zu went unnoticed", pos);
        const char *diff = sample_check(&s, p, false);
        if (diff) fail_msg("flip at byte %zu: loads but %s", pos, diff);
        eph_file_free(p);
        loaded++;
        continue;
      }
      assert_int_equal(st, EPH_ERR_INVALID);
      assert_null(p);
      size_t want = pos < 8 ? 0 : pos < 12 ? 8 : chunk_of(starts, k, pos);
      char at[64];
      snprintf(at, sizeof at, "at byte %zu", want);
      if (!strstr(err.message, at)) fail_msg("flip at byte %zu: \"%s\" should say '%s'", pos, err.message, at);
    }
  }
  assert_int_equal(loaded, 4 * sizeof masks);
  free(d);
  free(orig);
  sample_free(&s);
}

static void test_flip_every_byte_plain(void **state) {
  (void)state;
  flip_every_byte(false);
}

static void test_flip_every_byte_compressed(void **state) {
  (void)state;
  flip_every_byte(true);
}

/* Mutations with CRCs repaired reach the decoders: never a crash. */
static void test_mutations_with_fixed_crcs(void **state) {
  (void)state;
  sample_spec spec = {.nrecords = 30, .ngcs = 3, .nevents = 30, .seed = 6};
  sample s;
  sample_build(&s, &spec);
  const char *path = tmp_path("mut.eph");
  write_sample(&s, path, false, 6, true);
  size_t n;
  uint8_t *orig = sample_read_file(path, &n);
  assert_non_null(orig);
  size_t max = n + 2048;
  uint8_t *d = malloc(max);
  assert_non_null(d);
  uint64_t rng = 42;
  size_t ok = 0, bad = 0;
  for (int i = 0; i < 20000; i++) {
    memcpy(d, orig, n);
    size_t len = fuzz_mutate(d, n, max, orig, n, &rng);
    LLVMFuzzerTestOneInput(d, len); /* checks the invariants, aborts if broken */
    eph_file *p = NULL;
    eph_error err;
    if (eph_file_load_buffer(d, len, &p, &err) == EPH_OK) ok++;
    else bad++;
    eph_file_free(p);
  }
  assert_true(ok > 0 && bad > 0);
  free(d);
  free(orig);
  sample_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base_image_loads),
      cmocka_unit_test(test_record_shortcuts),
      cmocka_unit_test(test_bad_records),
      cmocka_unit_test(test_bad_tables),
      cmocka_unit_test(test_bad_gcs_events_close),
      cmocka_unit_test(test_bad_framing),
      cmocka_unit_test(test_unknown_chunks_skipped),
      cmocka_unit_test(test_flip_every_byte_plain),
      cmocka_unit_test(test_flip_every_byte_compressed),
      cmocka_unit_test(test_mutations_with_fixed_crcs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
