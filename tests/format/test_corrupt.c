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

/* One record: flags byte, id, class, site, size, weight, three stamps. */
static void put_record(img *r, uint8_t flags, uint64_t cls, uint64_t site) {
  img_u8(r, flags);
  img_delta(r, 1, 0);
  img_uv(r, cls);
  img_uv(r, site);
  img_uv(r, 32);
  if (flags & 0x08) img_uv(r, 1);
  else img_u64(r, 0x3ff0000000000000u); /* 1.0 */
  for (int s = 0; s < 2; s++) {
    img_delta(r, 100, 0);
    img_delta(r, 1000, 0);
    img_delta(r, 0, 0);
    img_delta(r, 0, 0);
  }
  if (!(flags & 0x10))
    for (int i = 0; i < 4; i++) img_delta(r, 0, 0);
}

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
  put_record(&r, EPH_DEATH_EXACT | 0x08 | 0x10, 1, 1);
  put_record(&r, EPH_DEATH_SCAVENGE, 0, 0);
  img_chunk(&m, "RECS", &r);
  img_free(&r);
  put_close(&m);
  eph_profile *p = expect_loads(&m);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 2);
  assert_int_equal(p->records[0].class_id, 1);
  assert_true(p->records[1].weight == 1.0);
  assert_int_equal(p->records[0].birth.bytes, 100);
  assert_int_equal(p->records[0].death.bytes, 200);
  assert_int_equal(p->totals.peak_heap, 9);
  eph_profile_free(p);
  img_free(&m);
}

static void test_bad_records(void **state) {
  (void)state;
  img r = {0};
  put_record(&r, EPH_DEATH_EXACT, 2, 0);
  expect_bad_chunk("RECS", &r, "class 2 is not defined");
  put_record(&r, EPH_DEATH_EXACT, 1, 3);
  expect_bad_chunk("RECS", &r, "site 3 is not defined");
  put_record(&r, EPH_DEATH_EXACT, (uint64_t)UINT32_MAX + 1, 0);
  expect_bad_chunk("RECS", &r, "is not defined");
  put_record(&r, 0, 1, 1);
  expect_bad_chunk("RECS", &r, "death kind 0");
  put_record(&r, 7, 1, 1);
  expect_bad_chunk("RECS", &r, "death kind 7");
  put_record(&r, EPH_DEATH_EXACT | 0x20, 1, 1);
  expect_bad_chunk("RECS", &r, "reserved flag");
  /* NaN and negative weights */
  img_u8(&r, EPH_DEATH_EXACT | 0x10);
  img_delta(&r, 1, 0);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  img_u64(&r, 0x7ff8000000000000u);
  expect_bad_chunk("RECS", &r, "weight");
  img_u8(&r, EPH_DEATH_EXACT | 0x10);
  img_delta(&r, 1, 0);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  img_u64(&r, 0xbff0000000000000u); /* -1.0 */
  expect_bad_chunk("RECS", &r, "weight");
  /* A record cut short, then one whole record and a stray byte. */
  put_record(&r, EPH_DEATH_EXACT, 1, 1);
  r.len -= 3;
  expect_bad_chunk("RECS", &r, "payload ends inside");
  put_record(&r, EPH_DEATH_EXACT | 0x10, 1, 1);
  img_u8(&r, EPH_DEATH_EXACT);
  expect_bad_chunk("RECS", &r, "record 1 of the chunk");
  /* A varint of 11 bytes; a 10-byte varint over 64 bits. */
  img_u8(&r, EPH_DEATH_EXACT);
  for (int i = 0; i < 11; i++) img_u8(&r, 0xff);
  expect_bad_chunk("RECS", &r, "varint overflows");
  img_u8(&r, EPH_DEATH_EXACT);
  for (int i = 0; i < 9; i++) img_u8(&r, 0xff);
  img_u8(&r, 0x02);
  expect_bad_chunk("RECS", &r, "varint overflows");
  /* A collection count past 2^32 - 1. */
  img_u8(&r, EPH_DEATH_EXACT | 0x08 | 0x10);
  img_delta(&r, 1, 0);
  img_uv(&r, 1);
  img_uv(&r, 1);
  img_uv(&r, 8);
  img_uv(&r, 1);
  img_delta(&r, 0, 0);
  img_delta(&r, 0, 0);
  img_delta(&r, (uint64_t)UINT32_MAX + 1, 0);
  img_delta(&r, 0, 0);
  expect_bad_chunk("RECS", &r, "collection count");
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
  img_header(&m, 2, 0);
  expect_invalid(&m, 8, "unsupported format version 2");
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
  eph_profile *p = expect_loads(&m);
  assert_string_equal(p->class_names[2], "B");
  eph_profile_free(p);
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
  put_record(&r, EPH_DEATH_FREED | 0x10, 1, 0);
  img_chunk(&m, "RECS", &r);
  img_chunk(&m, "ZZZZ", &junk);
  eph_profile *p = expect_loads(&m); /* no CLOSE yet */
  assert_false(p->complete);
  assert_non_null(strstr(p->warning, "no closing chunk"));
  assert_int_equal(p->nrecords, 1);
  eph_profile_free(p);
  put_close(&m);
  p = expect_loads(&m);
  assert_true(p->complete);
  assert_int_equal(p->nrecords, 1);
  assert_int_equal(p->records[0].death_kind, EPH_DEATH_FREED);
  eph_profile_free(p);
  /* Non-minimal varints are accepted. */
  img_free(&r);
  img_u8(&r, EPH_DEATH_FREED | 0x08 | 0x10);
  img_bytes(&r, "\x82\x80\x00", 3); /* id delta: zigzag 2 = +1 */
  img_bytes(&r, "\x81\x00", 2);     /* class 1 */
  for (int i = 0; i < 11; i++) img_u8(&r, 0);
  img_free(&m);
  base_image(&m);
  img_chunk(&m, "RECS", &r);
  p = expect_loads(&m);
  assert_int_equal(p->nrecords, 1);
  assert_int_equal(p->records[0].id, 1);
  assert_int_equal(p->records[0].class_id, 1);
  eph_profile_free(p);
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
      eph_profile *p = NULL;
      eph_error err;
      memset(&err, 0, sizeof err);
      eph_status st = eph_profile_load_buffer(d, n, &p, &err);
      if (st == EPH_OK) {
        /* Only the header's reserved flags may change without notice. */
        if (pos < 12 || pos >= 16) fail_msg("flip at byte %zu went unnoticed", pos);
        const char *diff = sample_check(&s, p, false);
        if (diff) fail_msg("flip at byte %zu: loads but %s", pos, diff);
        eph_profile_free(p);
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
    eph_profile *p = NULL;
    eph_error err;
    if (eph_profile_load_buffer(d, len, &p, &err) == EPH_OK) ok++;
    else bad++;
    eph_profile_free(p);
  }
  assert_true(ok > 0 && bad > 0);
  free(d);
  free(orig);
  sample_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base_image_loads),
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
