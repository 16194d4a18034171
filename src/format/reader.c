/*
 * reader.c — eph_file_load: the file header and the chunk framing.
 *
 * Walks the chunks in order, checking each header's CRC, its lengths
 * against the limits and the bytes left, the payload CRC, and the
 * decompressed size, before decode.c looks inside.  Unknown chunk types
 * are checked the same way and skipped.  The first problem ends the load
 * with one message naming the chunk's byte offset.  A file that ends in
 * the middle of a chunk, or without a CLOSE chunk, is a killed run: it
 * loads up to its last complete chunk with complete = false and a warning.
 */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L /* open flags, strdup */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "format_internal.h"

typedef struct reader {
  const uint8_t *data;
  size_t len;
  eph_error *err;
  z_stream z;
  bool z_ready;
  ephf_buf raw; /* decompressed payload */
} reader;

static eph_status fail(reader *r, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static eph_status fail(reader *r, eph_status st, const char *fmt, ...) {
  if (r->err) {
    r->err->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->message, sizeof r->err->message, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* Inflates a chunk's payload into r->raw (exactly raw_len bytes). */
static eph_status inflate_payload(reader *r, uint64_t off, const char *name, const uint8_t *in, uint32_t stored,
                                  uint32_t raw_len) {
  if ((uint64_t)raw_len > (uint64_t)stored * EPHF_DEFLATE_MAX_RATIO)
    return fail(r, EPH_ERR_INVALID, "impossible sizes in chunk at byte %llu (%s): %u bytes cannot inflate to %u",
                (unsigned long long)off, name, (unsigned)stored, (unsigned)raw_len);
  if (!r->z_ready) {
    if (inflateInit(&r->z) != Z_OK) return fail(r, EPH_ERR_NOMEM, "cannot initialise zlib");
    r->z_ready = true;
  } else if (inflateReset(&r->z) != Z_OK) {
    return fail(r, EPH_ERR_NOMEM, "cannot reset zlib");
  }
  r->raw.len = 0;
  if (!ephf_buf_reserve(&r->raw, (size_t)raw_len + 1))
    return fail(r, EPH_ERR_NOMEM, "out of memory inflating chunk at byte %llu", (unsigned long long)off);
  r->z.next_in = (Bytef *)(uintptr_t)in;
  r->z.avail_in = stored;
  r->z.next_out = r->raw.p;
  r->z.avail_out = raw_len;
  int rc = inflate(&r->z, Z_FINISH);
  if (rc == Z_MEM_ERROR)
    return fail(r, EPH_ERR_NOMEM, "out of memory inflating chunk at byte %llu", (unsigned long long)off);
  if (rc != Z_STREAM_END || r->z.total_out != raw_len || r->z.total_in != stored)
    return fail(r, EPH_ERR_INVALID, "bad compressed payload in chunk at byte %llu (%s): %s", (unsigned long long)off,
                name,
                rc == Z_DATA_ERROR ? "corrupt deflate stream"
                : rc == Z_STREAM_END && r->z.total_in != stored ? "data after the deflate stream"
                                                                : "size differs from the chunk header");
  r->raw.len = raw_len;
  return EPH_OK;
}

static eph_status load(reader *r, const eph_record_sink *sink, eph_file **out) {
  const uint8_t *data = r->data;
  size_t len = r->len;
  *out = NULL;
  if (len < EPHF_FILE_HEADER_LEN) {
    if (len == 0) return fail(r, EPH_ERR_INVALID, "empty file: no .eph header at byte 0");
    if (memcmp(data, EPHF_MAGIC, len < EPHF_MAGIC_LEN ? len : EPHF_MAGIC_LEN))
      return fail(r, EPH_ERR_INVALID, "not an .eph file: bad magic at byte 0");
    return fail(r, EPH_ERR_INVALID, "truncated in the file header at byte %zu", len);
  }
  if (memcmp(data, EPHF_MAGIC, EPHF_MAGIC_LEN)) return fail(r, EPH_ERR_INVALID, "not an .eph file: bad magic at byte 0");
  uint32_t version = ephf_load_u32(data + 8);
  /* One version per reader: a layout change bumps it (docs/eph-format.md §9). */
  if (version != EPH_FORMAT_VERSION)
    return fail(r, EPH_ERR_INVALID,
                "unsupported format version %u at byte 8: this reader reads only version %d%s", (unsigned)version,
                EPH_FORMAT_VERSION,
                version && version < EPH_FORMAT_VERSION ? " (an older Ephemera wrote it; profile the run again)" : "");
  /* Bytes 12..15 (flags) are informational; readers ignore them. */

  ephf_builder b;
  memset(&b, 0, sizeof b);
  b.sink = sink;
  if (!(b.p = calloc(1, sizeof *b.p))) return fail(r, EPH_ERR_NOMEM, "out of memory");
  eph_file *p = b.p;
  p->version = version;
  size_t off = EPHF_FILE_HEADER_LEN;
  p->valid_bytes = off;
  eph_status st = EPH_OK;
  char detail[192];
  while (off < len) {
    const uint8_t *h = data + off;
    size_t rest = len - off;
    if (p->complete) {
      st = fail(r, EPH_ERR_INVALID, "data after the closing chunk at byte %zu", off);
      break;
    }
    if (rest < EPHF_CHUNK_HEADER_LEN) {
      snprintf(p->warning, sizeof p->warning,
               "truncated at byte %zu: the file ends inside a chunk header; read up to the last complete chunk", off);
      break;
    }
    if (ephf_load_u32(h + 20) != ephf_crc32(h, 20)) {
      st = fail(r, EPH_ERR_INVALID, "bad chunk header checksum at byte %zu", off);
      break;
    }
    uint32_t type = ephf_load_u32(h), flags = ephf_load_u32(h + 4);
    uint32_t stored = ephf_load_u32(h + 8), raw_len = ephf_load_u32(h + 12);
    const char *known = ephf_chunk_name(type);
    char name[32];
    if (known) snprintf(name, sizeof name, "%s", known);
    else snprintf(name, sizeof name, "unknown type 0x%08x", (unsigned)type);
    if (stored > EPHF_CHUNK_MAX || raw_len > EPHF_CHUNK_MAX) {
      st = fail(r, EPH_ERR_INVALID, "chunk at byte %zu (%s) claims %u bytes, over the 16 MiB chunk limit", off, name,
                (unsigned)(stored > raw_len ? stored : raw_len));
      break;
    }
    if (stored > rest - EPHF_CHUNK_HEADER_LEN) {
      snprintf(p->warning, sizeof p->warning,
               "truncated at byte %zu: the file ends inside a %s chunk; read up to the last complete chunk", off, name);
      break;
    }
    const uint8_t *payload = h + EPHF_CHUNK_HEADER_LEN;
    if (ephf_load_u32(h + 16) != ephf_crc32(payload, stored)) {
      st = fail(r, EPH_ERR_INVALID, "bad checksum in chunk at byte %zu (%s)", off, name);
      break;
    }
    if (known) {
      if (flags & ~EPHF_CHUNK_FLAG_DEFLATE) {
        st = fail(r, EPH_ERR_INVALID, "unknown flags 0x%x in chunk at byte %zu (%s)", (unsigned)flags, off, name);
        break;
      }
      const uint8_t *body = payload;
      if (flags & EPHF_CHUNK_FLAG_DEFLATE) {
        if ((st = inflate_payload(r, off, name, payload, stored, raw_len)) != EPH_OK) break;
        body = r->raw.p;
      } else if (raw_len != stored) {
        st = fail(r, EPH_ERR_INVALID, "sizes differ in uncompressed chunk at byte %zu (%s): %u stored, %u raw", off,
                  name, (unsigned)stored, (unsigned)raw_len);
        break;
      }
      detail[0] = 0;
      st = ephf_decode_chunk(&b, type, body, raw_len, detail, sizeof detail);
      if (st == EPH_ERR_NOMEM) {
        fail(r, st, "out of memory reading chunk at byte %zu (%s)", off, name);
        break;
      }
      if (st != EPH_OK) {
        fail(r, st, "bad data in chunk at byte %zu (%s): %s", off, name, detail);
        break;
      }
      if (type == EPHF_CHUNK_CLOSE) p->complete = true;
    }
    off += EPHF_CHUNK_HEADER_LEN + (size_t)stored;
    p->valid_bytes = off;
  }
  if (r->z_ready) inflateEnd(&r->z);
  r->z_ready = false;
  ephf_buf_free(&r->raw);
  free(b.chunk_records);
  if (st != EPH_OK) {
    eph_file_free(p);
    return st;
  }
  if (!p->complete && !p->warning[0])
    snprintf(p->warning, sizeof p->warning,
             "no closing chunk: the file ends at byte %zu after its last complete chunk (the run did not finish)", off);
  if (r->err) {
    r->err->status = EPH_OK;
    r->err->message[0] = 0;
  }
  *out = p;
  return EPH_OK;
}

static eph_status load_buffer(const uint8_t *data, size_t len, const eph_record_sink *sink, eph_file **out,
                              eph_error *err) {
  reader r;
  memset(&r, 0, sizeof r);
  r.data = data;
  r.len = data ? len : 0;
  r.err = err;
  if (!out) return fail(&r, EPH_ERR_INVALID, "eph_file_load_buffer: no output pointer");
  return load(&r, sink, out);
}

eph_status eph_file_load_buffer(const uint8_t *data, size_t len, eph_file **out, eph_error *err) {
  return load_buffer(data, len, NULL, out, err);
}

eph_status eph_file_load_buffer_with(const uint8_t *data, size_t len, const eph_record_sink *sink, eph_file **out,
                                        eph_error *err) {
  return load_buffer(data, len, sink, out, err);
}

eph_status eph_file_load(const char *path, eph_file **out, eph_error *err) {
  return eph_file_load_with(path, NULL, out, err);
}

eph_status eph_file_load_with(const char *path, const eph_record_sink *sink, eph_file **out, eph_error *err) {
  if (out) *out = NULL;
  if (!path || !out) {
    if (err) {
      err->status = EPH_ERR_INVALID;
      snprintf(err->message, sizeof err->message, "eph_file_load: no path or no output pointer");
    }
    return EPH_ERR_INVALID;
  }
  eph_error local;
  if (!err) err = &local;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    err->status = EPH_ERR_INVALID;
    snprintf(err->message, sizeof err->message, "%s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return EPH_ERR_INVALID;
  }
  if (!S_ISREG(sb.st_mode)) {
    err->status = EPH_ERR_INVALID;
    snprintf(err->message, sizeof err->message, "%s: not a regular file", path);
    close(fd);
    return EPH_ERR_INVALID;
  }
  size_t size = (size_t)sb.st_size, got = 0;
  uint8_t *data = malloc(size ? size : 1);
  if (!data) {
    close(fd);
    err->status = EPH_ERR_NOMEM;
    snprintf(err->message, sizeof err->message, "%s: out of memory for %zu bytes", path, size);
    return EPH_ERR_NOMEM;
  }
  while (got < size) { /* a file still being written may grow or shrink meanwhile */
    ssize_t k = read(fd, data + got, size - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      free(data);
      close(fd);
      err->status = EPH_ERR_INVALID;
      snprintf(err->message, sizeof err->message, "%s: read: %s", path, strerror(e));
      return EPH_ERR_INVALID;
    }
    if (k == 0) break;
    got += (size_t)k;
  }
  close(fd);
  eph_status st = load_buffer(data, got, sink, out, err);
  free(data);
  if (st != EPH_OK) { /* "PATH: message", cut to fit */
    size_t cap = sizeof err->message, pl = strlen(path), ml = strlen(err->message);
    if (pl > cap / 2) pl = cap / 2;
    if (pl + 2 + ml >= cap) ml = cap - 1 - pl - 2;
    memmove(err->message + pl + 2, err->message, ml);
    memcpy(err->message, path, pl);
    memcpy(err->message + pl, ": ", 2);
    err->message[pl + 2 + ml] = 0;
  }
  return st;
}
