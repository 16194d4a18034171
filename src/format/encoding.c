/*
 * encoding.c — the .eph primitive encodings: little-endian integers, LEB128
 * varints, zigzag deltas, strings, growable buffers and the chunk header
 * with its two CRC-32s.
 */
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "format_internal.h"

const char *ephf_chunk_name(uint32_t type) {
  switch (type) {
    case EPHF_CHUNK_META: return "META";
    case EPHF_CHUNK_CLASSES: return "CLASSES";
    case EPHF_CHUNK_SITES: return "SITES";
    case EPHF_CHUNK_RECORDS: return "RECORDS";
    case EPHF_CHUNK_GCS: return "GCS";
    case EPHF_CHUNK_EVENTS: return "EVENTS";
    case EPHF_CHUNK_CLOSE: return "CLOSE";
    case EPHF_CHUNK_STACKS: return "STACKS";
  }
  return NULL;
}

/* --- buffers ---------------------------------------------------------------- */

bool ephf_buf_reserve(ephf_buf *b, size_t n) {
  if (b->cap - b->len >= n) return true;
  if (n > SIZE_MAX / 2 - b->len) return false;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) return false;
  b->p = p;
  b->cap = cap;
  return true;
}

void ephf_buf_free(ephf_buf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

void ephf_store_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

uint32_t ephf_load_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t ephf_load_u64(const uint8_t *p) { return (uint64_t)ephf_load_u32(p) | (uint64_t)ephf_load_u32(p + 4) << 32; }

void ephf_put_u32(ephf_buf *b, uint32_t v) {
  ephf_store_u32(b->p + b->len, v);
  b->len += 4;
}

void ephf_put_u64(ephf_buf *b, uint64_t v) {
  ephf_put_u32(b, (uint32_t)v);
  ephf_put_u32(b, (uint32_t)(v >> 32));
}

size_t ephf_uvarint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

void ephf_put_bytes(ephf_buf *b, const void *p, size_t n) {
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
}

void ephf_put_string(ephf_buf *b, const char *s, size_t n) {
  ephf_put_uvarint(b, n);
  ephf_put_bytes(b, s, n);
}

/* --- record context ------------------------------------------------------------ */

void ephf_rec_ctx_reset(ephf_rec_ctx *c) {
  memset(c, 0, sizeof *c);
  for (unsigned i = 0; i < EPHF_REC_CACHE_SIZE; i++) c->cache[i].class_id = EPHF_REC_CACHE_EMPTY;
}

/* --- cursors ------------------------------------------------------------------ */

bool ephf_get_u8(ephf_cursor *c, uint8_t *out) {
  if (c->pos >= c->len) {
    c->bad = "payload ends inside an item";
    return false;
  }
  *out = c->p[c->pos++];
  return true;
}

bool ephf_get_u64(ephf_cursor *c, uint64_t *out) {
  if (c->len - c->pos < 8) {
    c->bad = "payload ends inside an item";
    return false;
  }
  *out = ephf_load_u64(c->p + c->pos);
  c->pos += 8;
  return true;
}

bool ephf_get_uvarint(ephf_cursor *c, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned i = 0; i < EPHF_VARINT_MAX; i++) {
    if (c->pos >= c->len) {
      c->bad = "payload ends inside a varint";
      return false;
    }
    uint8_t byte = c->p[c->pos++];
    if (i == EPHF_VARINT_MAX - 1 && byte > 1) break;
    v |= (uint64_t)(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  c->bad = "varint overflows 64 bits";
  return false;
}

bool ephf_get_delta(ephf_cursor *c, uint64_t base, uint64_t *out) {
  uint64_t z;
  if (!ephf_get_uvarint(c, &z)) return false;
  *out = base + ((z >> 1) ^ (0 - (z & 1)));
  return true;
}

bool ephf_get_string(ephf_cursor *c, const char **s, size_t *n) {
  uint64_t len;
  if (!ephf_get_uvarint(c, &len)) return false;
  if (len > c->len - c->pos) {
    c->bad = "string longer than the rest of the payload";
    return false;
  }
  const uint8_t *p = c->p + c->pos;
  if (len && memchr(p, 0, (size_t)len)) {
    c->bad = "NUL byte inside a string";
    return false;
  }
  *s = (const char *)p;
  *n = (size_t)len;
  c->pos += (size_t)len;
  return true;
}

/* --- chunk header --------------------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
/* ISA-L's CRC runs AVX-512 code and returns with the upper halves of the
 * vector registers dirty.  The SSE code of the program around the profiler
 * (all scalar floating point in a baseline x86-64 build) then ran slower
 * until the process ended: the sph workload's plain-C part took 2.3x as
 * long after the first chunk was written.  VZEROUPPER clears that state. */
__attribute__((target("avx"))) static void clear_upper_vector_state(void) { __builtin_ia32_vzeroupper(); }
static inline void after_vector_code(void) {
  if (__builtin_cpu_supports("avx")) clear_upper_vector_state();
}
#else
static inline void after_vector_code(void) {}
#endif

uint32_t ephf_crc32(const void *data, size_t len) {
  uint32_t crc = crc32_gzip_refl(0, (const unsigned char *)data, len);
  after_vector_code();
  return crc;
}

void ephf_chunk_header(uint8_t *hdr, uint32_t type, uint32_t flags, const uint8_t *payload, uint32_t stored_len,
                       uint32_t raw_len) {
  ephf_store_u32(hdr, type);
  ephf_store_u32(hdr + 4, flags);
  ephf_store_u32(hdr + 8, stored_len);
  ephf_store_u32(hdr + 12, raw_len);
  ephf_store_u32(hdr + 16, ephf_crc32(payload, stored_len));
  ephf_store_u32(hdr + 20, ephf_crc32(hdr, 20));
}
