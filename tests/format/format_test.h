/*
 * format_test.h — helpers for the .eph format tests (cmocka): temporary
 * files, loading with a message on failure, and hand-made file images for
 * inputs the writer never produces.  Static inline, so each test file uses
 * what it needs.
 */
#ifndef EPH_FORMAT_TEST_H
#define EPH_FORMAT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "ephemera/format.h"
#include "sample.h"

/* A fresh temporary directory for this process; files go inside it. */
static inline const char *tmp_path(const char *name) {
  static char dir[256];
  static char path[512];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/eph-format-test-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

/* Writes sample s to path; fails the test on error. */
static inline void write_sample(const sample *s, const char *path, bool compress, size_t flush_every, bool close) {
  char msg[256] = "";
  eph_status st = sample_write(s, path, compress, flush_every, close, msg, sizeof msg);
  if (st != EPH_OK) fail_msg("writing %s: %s", path, msg);
}

/* Loads path; fails the test on error. */
/* Files a and b hold the same bytes. */
static inline void assert_same_file(const char *a, const char *b) {
  size_t na, nb;
  uint8_t *da = sample_read_file(a, &na), *db = sample_read_file(b, &nb);
  assert_non_null(da);
  assert_non_null(db);
  assert_int_equal(na, nb);
  assert_memory_equal(da, db, na);
  free(da);
  free(db);
}

static inline eph_file *load_ok(const char *path) {
  eph_file *p = NULL;
  eph_error err;
  memset(&err, 0, sizeof err);
  if (eph_file_load(path, &p, &err) != EPH_OK) fail_msg("loading %s: %s", path, err.message);
  assert_non_null(p);
  return p;
}

/* --- hand-made images ---------------------------------------------------------------- */

typedef struct img {
  uint8_t *p;
  size_t len, cap;
} img;

static inline void img_bytes(img *m, const void *d, size_t n) {
  if (m->len + n > m->cap) {
    m->cap = (m->len + n) * 2 + 64;
    m->p = realloc(m->p, m->cap);
    assert_non_null(m->p);
  }
  if (n) memcpy(m->p + m->len, d, n);
  m->len += n;
}

static inline void img_u8(img *m, uint8_t v) { img_bytes(m, &v, 1); }

static inline void img_u32(img *m, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  img_bytes(m, b, 4);
}

static inline void img_u64(img *m, uint64_t v) {
  img_u32(m, (uint32_t)v);
  img_u32(m, (uint32_t)(v >> 32));
}

static inline void img_uv(img *m, uint64_t v) {
  while (v >= 0x80) {
    img_u8(m, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  img_u8(m, (uint8_t)v);
}

/* Zigzag of v - base. */
static inline void img_delta(img *m, uint64_t v, uint64_t base) {
  uint64_t d = v - base;
  img_uv(m, (d << 1) ^ (0 - (d >> 63)));
}

static inline void img_str(img *m, const char *s, size_t n) {
  img_uv(m, n);
  img_bytes(m, s, n);
}

static inline void img_header(img *m, uint32_t version, uint32_t flags) {
  img_bytes(m, "EPHEMERA", 8);
  img_u32(m, version);
  img_u32(m, flags);
}

static inline void store_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Appends a chunk with correct CRCs; returns its offset. */
static inline size_t img_chunk_raw(img *m, const char *fourcc, uint32_t flags, const img *payload, uint32_t stored_len,
                                   uint32_t raw_len) {
  size_t off = m->len;
  uint8_t h[24];
  memcpy(h, fourcc, 4);
  store_u32(h + 4, flags);
  store_u32(h + 8, stored_len);
  store_u32(h + 12, raw_len);
  store_u32(h + 16, (uint32_t)crc32(0L, payload->p, (uInt)payload->len));
  store_u32(h + 20, (uint32_t)crc32(0L, h, 20));
  img_bytes(m, h, 24);
  img_bytes(m, payload->p, payload->len);
  return off;
}

static inline size_t img_chunk(img *m, const char *fourcc, const img *payload) {
  return img_chunk_raw(m, fourcc, 0, payload, (uint32_t)payload->len, (uint32_t)payload->len);
}

/* A deflated chunk; raw_len as given (to lie about it). */
static inline size_t img_chunk_z(img *m, const char *fourcc, const img *payload, uint32_t raw_len) {
  uLongf n = compressBound((uLong)payload->len);
  img z = {malloc(n), 0, n};
  assert_non_null(z.p);
  assert_int_equal(compress2(z.p, &n, payload->p, (uLong)payload->len, 6), Z_OK);
  z.len = n;
  size_t off = img_chunk_raw(m, fourcc, 1, &z, (uint32_t)n, raw_len);
  free(z.p);
  return off;
}

static inline void img_free(img *m) {
  free(m->p);
  memset(m, 0, sizeof *m);
}

/* Loads an image expecting failure; the message must name `off` and contain `what`. */
static inline void expect_invalid(const img *m, size_t off, const char *what) {
  eph_file *p = (eph_file *)1;
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_status st = eph_file_load_buffer(m->p, m->len, &p, &err);
  if (st != EPH_ERR_INVALID) fail_msg("expected a failure about '%s', got status %d (%s)", what, (int)st, err.message);
  assert_null(p);
  char at[64];
  snprintf(at, sizeof at, "at byte %zu", off);
  if (!strstr(err.message, at) || !strstr(err.message, what))
    fail_msg("message \"%s\" should name '%s' and '%s'", err.message, at, what);
}

static inline eph_file *expect_loads(const img *m) {
  eph_file *p = NULL;
  eph_error err;
  memset(&err, 0, sizeof err);
  if (eph_file_load_buffer(m->p, m->len, &p, &err) != EPH_OK) fail_msg("expected to load: %s", err.message);
  return p;
}

#endif
