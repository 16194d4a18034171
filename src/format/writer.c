/*
 * writer.c — eph_writer: appends an .eph file chunk by chunk — the
 * framing (buffers, chunks, write(2), compression), the tables, GC and
 * trace events, and forks.  How a record is encoded: writer_records.c.
 *
 * Items are encoded into one buffer per chunk type as they come; a buffer
 * becomes a chunk (one write(2): header + payload) when it reaches
 * EPHF_CHUNK_TARGET, on eph_writer_flush and on close.  The class and site
 * buffers are always written before any data chunk, and every record or
 * event may only name a class or site declared earlier, so each data chunk
 * in the file follows the table entries it uses: a process killed between
 * two writes leaves a file that reads up to its last chunk.
 *
 * Memory is plain malloc (never an Ephemera heap); the writer never exits.
 * Argument errors reject one call (EPH_ERR_INVALID); a failed write(2)
 * fails the writer for good, since the file may end in a partial chunk.
 */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L /* open flags, strdup */
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "format_internal.h"
#include "writer_internal.h"
#include "writer_profiler.h"

/* Message of the last failed close on this thread: eph_writer_error(NULL). */
static _Thread_local char close_error[256];

eph_status ephf_writer_fail(eph_writer *w, eph_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
  return st;
}

static eph_status io_fail(eph_writer *w, const char *what, int errnum) {
  w->failed = EPH_ERR_IO;
  return ephf_writer_fail(w, w->failed, "%s %s: %s", what, w->path, strerror(errnum));
}

static eph_status write_all(eph_writer *w, const uint8_t *p, size_t n) {
  if (w->parent) {
    /* Grown by what a chunk needs, not doubled: the spool holds a piece of
     * a collection's records until the join, and its size is the memory
     * it costs (realloc of a block this large remaps, it does not copy). */
    ephf_buf *b = &w->spool;
    if (b->cap - b->len < n) {
      size_t cap = b->len + ((n + 0xFFFF) & ~(size_t)0xFFFF);
      uint8_t *np = cap > b->len ? realloc(b->p, cap) : NULL;
      if (!np) {
        w->failed = EPH_ERR_NOMEM;
        return ephf_writer_fail(w, w->failed, "out of memory holding a forked record stream of %s", w->path);
      }
      b->p = np;
      b->cap = cap;
    }
    memcpy(w->spool.p + w->spool.len, p, n);
    w->spool.len += n;
    return EPH_OK;
  }
  while (n) {
    ssize_t k = write(w->fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return io_fail(w, "write", errno);
    }
    if (k == 0) return io_fail(w, "write", ENOSPC);
    p += k;
    n -= (size_t)k;
  }
  return EPH_OK;
}

static void reset_bases(eph_writer *w, int which) {
  switch (which) {
    case B_RECORDS:
      ephf_rec_ctx_reset(&w->rec);
      w->batch.synced = w->batch.au_synced = false;
      break;
    case B_GCS: w->gc_prev_index = w->gc_prev_start = w->gc_prev_allocated = 0; break;
    case B_EVENTS: w->ev_prev_time = w->ev_prev_obj = 0; break;
    default: break;
  }
}

/*
 * Whether each data chunk is decoded, as the reader will, before it is
 * checksummed: a writer bug that builds wrong records (a race, a stale
 * delta base) then stops the program where it happens, instead of
 * sealing bad content under a good checksum.  On in checked builds (the
 * sanitizers') and with EPHEMERA_CHECK_CHUNKS=1 (the tests set it).
 */
static bool chunk_checks_wanted(void) {
#ifdef EPH_CHECKED
  return true;
#else
  const char *e = getenv("EPHEMERA_CHECK_CHUNKS");
  return e && *e && strcmp(e, "0") != 0;
#endif
}

static void check_before_sealing(eph_writer *w, int which, const uint8_t *payload, size_t len) {
  w->check.class_bits = w->class_bits, w->check.class_words = w->class_words;
  w->check.site_bits = w->site_bits, w->check.site_words = w->site_words;
  char detail[256];
  eph_status st = ephf_check_chunk(&w->check, BUF_TYPE[which], payload, len, detail, sizeof detail);
  if (st == EPH_OK || st == EPH_ERR_NOMEM) return; /* out of memory: the chunk goes unchecked */
  fprintf(stderr, "ephemera: writer bug: a %s chunk of %zu bytes %s %s is malformed: %s\n",
          ephf_chunk_name(BUF_TYPE[which]), len, w->parent ? "for a fork of" : "about to be written to", w->path,
          detail);
  abort();
}

/* Writes buffer `which` as one chunk if it holds anything (or always, for CLOSE). */
static eph_status write_buf(eph_writer *w, int which) {
  ephf_buf *b = &w->buf[which];
  size_t raw = b->len - EPHF_CHUNK_HEADER_LEN;
  if (raw == 0 && which != B_CLOSE) return EPH_OK;
  if (w->failed) return w->failed;
  if (w->check_chunks && (which == B_RECORDS || which == B_GCS || which == B_EVENTS))
    check_before_sealing(w, which, b->p + EPHF_CHUNK_HEADER_LEN, raw);
  uint8_t *out = b->p;
  uint32_t stored = (uint32_t)raw, flags = 0;
  if (w->compress && raw > 0) {
    uLong bound = deflateBound(&w->z, (uLong)raw);
    w->zout.len = 0;
    if (deflateReset(&w->z) == Z_OK && ephf_buf_reserve(&w->zout, EPHF_CHUNK_HEADER_LEN + (size_t)bound)) {
      w->z.next_in = b->p + EPHF_CHUNK_HEADER_LEN;
      w->z.avail_in = (uInt)raw;
      w->z.next_out = w->zout.p + EPHF_CHUNK_HEADER_LEN;
      w->z.avail_out = (uInt)bound;
      if (deflate(&w->z, Z_FINISH) == Z_STREAM_END && w->z.total_out < raw) {
        out = w->zout.p;
        stored = (uint32_t)w->z.total_out;
        flags = EPHF_CHUNK_FLAG_DEFLATE;
      }
    } /* otherwise (out of memory): store the chunk uncompressed */
  }
  ephf_chunk_header(out, BUF_TYPE[which], flags, out + EPHF_CHUNK_HEADER_LEN, stored, (uint32_t)raw);
  eph_status st = write_all(w, out, EPHF_CHUNK_HEADER_LEN + (size_t)stored);
  b->len = EPHF_CHUNK_HEADER_LEN;
  reset_bases(w, which);
  return st;
}

/* Writes data buffer `which`, after the table entries it may use. */
eph_status ephf_writer_write_data(eph_writer *w, int which) {
  eph_status st = write_buf(w, B_CLASSES);
  if (st == EPH_OK) st = write_buf(w, B_SITES);
  if (st == EPH_OK) st = write_buf(w, B_STACKS);
  if (st == EPH_OK) st = write_buf(w, which);
  return st;
}

/*
 * Makes room for an item of at most n bytes in buffer `which`.  A full
 * buffer is written first (tables alone; data after the tables).
 */
eph_status ephf_writer_make_room(eph_writer *w, int which, size_t n) {
  if (w->failed) return w->failed;
  ephf_buf *b = &w->buf[which];
  if (n > EPHF_CHUNK_MAX) return ephf_writer_fail(w, EPH_ERR_TOO_LARGE, "an entry of %zu bytes exceeds the chunk limit", n);
  size_t raw = b->len - EPHF_CHUNK_HEADER_LEN;
  if (raw > 0 && (raw >= EPHF_CHUNK_TARGET || n > EPHF_CHUNK_MAX - raw)) {
    eph_status st = which <= B_LAST_TABLE ? write_buf(w, which) : ephf_writer_write_data(w, which);
    if (st != EPH_OK) return st;
  }
  if (!ephf_buf_reserve(b, n)) return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory buffering a chunk of %s", w->path);
  return EPH_OK;
}

/* After an item: write the buffer once it reached the target size. */
static eph_status item_done(eph_writer *w, int which) {
  if (w->buf[which].len - EPHF_CHUNK_HEADER_LEN < EPHF_CHUNK_TARGET) return EPH_OK;
  return which <= B_LAST_TABLE ? write_buf(w, which) : ephf_writer_write_data(w, which);
}

static eph_status put_strings(eph_writer *w, int which, const char *s1, const char *s2, uint64_t id, bool has_id,
                              const int *line, const char *s3) {
  size_t n1 = strlen(s1), n2 = s2 ? strlen(s2) : 0, n3 = s3 ? strlen(s3) : 0;
  if (n1 > EPHF_CHUNK_MAX || n2 > EPHF_CHUNK_MAX || n3 > EPHF_CHUNK_MAX)
    return ephf_writer_fail(w, EPH_ERR_TOO_LARGE, "a string of more than %u bytes", (unsigned)EPHF_CHUNK_MAX);
  size_t need = 4 * EPHF_VARINT_MAX + n1 + n2 + n3;
  eph_status st = ephf_writer_make_room(w, which, need);
  if (st != EPH_OK) return st;
  ephf_buf *b = &w->buf[which];
  if (has_id) ephf_put_uvarint(b, id);
  ephf_put_string(b, s1, n1);
  if (line) ephf_put_delta(b, (uint64_t)(int64_t)*line, 0);
  if (s2) ephf_put_string(b, s2, n2);
  if (s3) ephf_put_string(b, s3, n3);
  return item_done(w, which);
}

static void free_writer(eph_writer *w) {
  ephf_async_free(w);
  if (w->z_ready) deflateEnd(&w->z);
  ephf_buf_free(&w->zout);
  for (int i = 0; i < NBUF; i++) ephf_buf_free(&w->buf[i]);
  for (size_t i = 0; i < w->classes_cap; i++) free(w->classes[i]);
  free(w->classes);
  for (size_t i = 0; i < w->sites_cap; i++) {
    free(w->sites[i].file);
    free(w->sites[i].function);
  }
  free(w->sites);
  for (size_t i = 0; i < w->stacks_cap; i++) free(w->stacks[i].callers);
  free(w->stacks);
  free(w->class_bits);
  free(w->site_bits);
  ephf_check_free(&w->check);
  ephf_buf_free(&w->spool);
  ephf_clock_free(w);
  free(w->path);
  free(w);
}

static void set_err(eph_error *err, eph_status st, const char *msg) {
  if (!err) return;
  err->status = st;
  snprintf(err->message, sizeof err->message, "%s", msg);
}

/* The chunk buffers, each with room for its header, and zlib's stream if
 * compressing; NULL, or what ran out.  A fork writes records only: its
 * other buffers get no more than their headers until something is put. */
static const char *init_buffers(eph_writer *w) {
  for (int i = 0; i < NBUF; i++) {
    /* Records: a whole chunk and one more record, so that the record path never grows it. */
    size_t cap = i == B_RECORDS ? EPHF_CHUNK_HEADER_LEN + EPHF_CHUNK_TARGET + EPHF_RECORD_MAX
                 : w->parent    ? EPHF_CHUNK_HEADER_LEN
                 : i == B_CLOSE ? 128
                                : 4096;
    if (!ephf_buf_reserve(&w->buf[i], cap)) return "out of memory opening an .eph writer";
    w->buf[i].len = EPHF_CHUNK_HEADER_LEN;
  }
  if (w->compress) {
    if (deflateInit(&w->z, Z_BEST_SPEED) != Z_OK) return "cannot initialise zlib";
    w->z_ready = true;
  }
  return NULL;
}

/*
 * Opens path for a new profile.  An existing regular file that may be
 * written is unlinked first and a new one made, not truncated: ext4
 * (auto_da_alloc) writes back a truncated file's data synchronously when
 * it is closed, which made the end of a profile written over the last
 * one 0.2 s instead of 0.02 s (sph, gc mode at 100 %, 150 MB).  A
 * symbolic link is written through and a device (/dev/null) opened as it
 * is, as before; a read-only file still refuses.
 */
static int create_output(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, W_OK) == 0) (void)unlink(path);
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

eph_writer *eph_writer_open(const char *path, const eph_meta_pair *meta, size_t nmeta, bool compress, eph_error *err) {
  if (!path || (nmeta && !meta)) {
    set_err(err, EPH_ERR_INVALID, "eph_writer_open: no path or no metadata array");
    return NULL;
  }
  for (size_t i = 0; i < nmeta; i++)
    if (!meta[i].key) {
      set_err(err, EPH_ERR_INVALID, "eph_writer_open: metadata pair without a key");
      return NULL;
    }
  eph_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    set_err(err, EPH_ERR_NOMEM, "out of memory opening an .eph writer");
    return NULL;
  }
  w->fd = -1;
  w->compress = compress;
  w->check_chunks = chunk_checks_wanted();
  ephf_rec_ctx_reset(&w->rec);
  w->class_bits = calloc(1, sizeof *w->class_bits);
  w->site_bits = calloc(1, sizeof *w->site_bits);
  if (!w->class_bits || !w->site_bits) {
    free_writer(w);
    set_err(err, EPH_ERR_NOMEM, "out of memory opening an .eph writer");
    return NULL;
  }
  w->class_bits[0] = w->site_bits[0] = 1; /* id 0: unknown, always allowed */
  w->class_words = w->site_words = 1;
  const char *why = init_buffers(w);
  if (why) {
    free_writer(w);
    set_err(err, EPH_ERR_NOMEM, why);
    return NULL;
  }
  w->fd = create_output(path);
  if (w->fd < 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot create %s: %s", path, strerror(errno));
    free_writer(w);
    set_err(err, EPH_ERR_IO, msg);
    return NULL;
  }
  uint8_t hdr[EPHF_FILE_HEADER_LEN];
  memcpy(hdr, EPHF_MAGIC, EPHF_MAGIC_LEN);
  ephf_store_u32(hdr + 8, EPH_FORMAT_VERSION);
  ephf_store_u32(hdr + 12, compress ? EPHF_FILE_FLAG_COMPRESS : 0);
  eph_status st = write_all(w, hdr, sizeof hdr);
  for (size_t i = 0; i < nmeta && st == EPH_OK; i++)
    st = put_strings(w, B_META, meta[i].key, meta[i].value ? meta[i].value : "", 0, false, NULL, NULL);
  if (st == EPH_OK) st = write_buf(w, B_META);
  if (st != EPH_OK) {
    set_err(err, st, w->error);
    close(w->fd);
    free_writer(w);
    return NULL;
  }
  if (err) {
    err->status = EPH_OK;
    err->message[0] = 0;
  }
  return w;
}

/* Sets bit id of a growable bitmap; false if out of memory. */
static bool set_bit(uint64_t **bits, size_t *words, uint32_t id) {
  size_t need = ((size_t)id >> 6) + 1;
  if (need > *words) {
    size_t n = *words;
    while (n < need) n *= 2;
    uint64_t *nb = realloc(*bits, n * sizeof *nb);
    if (!nb) return false;
    memset(nb + *words, 0, (n - *words) * sizeof *nb);
    *bits = nb;
    *words = n;
  }
  (*bits)[id >> 6] |= (uint64_t)1 << (id & 63);
  return true;
}

static void clear_bit(uint64_t *bits, uint32_t id) { bits[id >> 6] &= ~((uint64_t)1 << (id & 63)); }

/* After the writer's thread is done with what was queued before (if it
 * has one): a table entry goes before the records that name it. */
static eph_status class_now(eph_writer *w, uint32_t id, const char *name);

eph_status eph_writer_class(eph_writer *w, uint32_t id, const char *name) {
  eph_status pending = w ? ephf_async_wait(w) : EPH_OK;
  eph_status st = class_now(w, id, name);
  return st != EPH_OK ? st : pending;
}

static eph_status class_now(eph_writer *w, uint32_t id, const char *name) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (w->parent) return ephf_writer_fail(w, EPH_ERR_INVALID, "a forked writer declares no %s (its parent does)", "classes");
  if (id == 0 || id > EPH_FORMAT_MAX_ID)
    return ephf_writer_fail(w, EPH_ERR_INVALID, "class id %u out of range 1..%u", (unsigned)id, (unsigned)EPH_FORMAT_MAX_ID);
  if (!name) return ephf_writer_fail(w, EPH_ERR_INVALID, "class %u has no name", (unsigned)id);
  if (!ephf_grow_table((void **)&w->classes, &w->classes_cap, sizeof *w->classes, (size_t)id + 1))
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the class table");
  if (w->classes[id]) {
    if (!strcmp(w->classes[id], name)) return EPH_OK;
    return ephf_writer_fail(w, EPH_ERR_INVALID, "class %u is already declared as '%s'", (unsigned)id, w->classes[id]);
  }
  char *copy = strdup(name);
  if (!copy || !set_bit(&w->class_bits, &w->class_words, id)) {
    free(copy);
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the class table");
  }
  eph_status st = put_strings(w, B_CLASSES, name, NULL, id, true, NULL, NULL);
  if (st != EPH_OK) {
    clear_bit(w->class_bits, id);
    free(copy);
    return st;
  }
  w->classes[id] = copy;
  return EPH_OK;
}

/* After the writer's thread is done with what was queued before (if it
 * has one): a table entry goes before the records that name it. */
static eph_status site_now(eph_writer *w, uint32_t id, const char *file, int line, const char *function);

eph_status eph_writer_site(eph_writer *w, uint32_t id, const char *file, int line, const char *function) {
  eph_status pending = w ? ephf_async_wait(w) : EPH_OK;
  eph_status st = site_now(w, id, file, line, function);
  return st != EPH_OK ? st : pending;
}

static eph_status site_now(eph_writer *w, uint32_t id, const char *file, int line, const char *function) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (w->parent) return ephf_writer_fail(w, EPH_ERR_INVALID, "a forked writer declares no %s (its parent does)", "sites");
  if (id == 0 || id > EPH_FORMAT_MAX_ID)
    return ephf_writer_fail(w, EPH_ERR_INVALID, "site id %u out of range 1..%u", (unsigned)id, (unsigned)EPH_FORMAT_MAX_ID);
  if (!file) file = "";
  if (!function) function = "";
  if (!ephf_grow_table((void **)&w->sites, &w->sites_cap, sizeof *w->sites, (size_t)id + 1))
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the site table");
  site_def *s = &w->sites[id];
  if (s->file) {
    if (!strcmp(s->file, file) && !strcmp(s->function, function) && s->line == line) return EPH_OK;
    return ephf_writer_fail(w, EPH_ERR_INVALID, "site %u is already declared as %s:%d:%s", (unsigned)id, s->file, s->line,
                s->function);
  }
  char *f = strdup(file), *fn = strdup(function);
  if (!f || !fn || !set_bit(&w->site_bits, &w->site_words, id)) {
    free(f);
    free(fn);
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the site table");
  }
  eph_status st = put_strings(w, B_SITES, file, NULL, id, true, &line, function);
  if (st != EPH_OK) {
    clear_bit(w->site_bits, id);
    free(f);
    free(fn);
    return st;
  }
  s->file = f;
  s->function = fn;
  s->line = line;
  return EPH_OK;
}

/* After the writer's thread is done with what was queued before (if it
 * has one): a table entry goes before the records that name it. */
static eph_status stack_now(eph_writer *w, uint32_t site_id, const uint32_t *callers, size_t ncallers);

eph_status eph_writer_stack(eph_writer *w, uint32_t site_id, const uint32_t *callers, size_t ncallers) {
  eph_status pending = w ? ephf_async_wait(w) : EPH_OK;
  eph_status st = stack_now(w, site_id, callers, ncallers);
  return st != EPH_OK ? st : pending;
}

static eph_status stack_now(eph_writer *w, uint32_t site_id, const uint32_t *callers, size_t ncallers) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (w->parent) return ephf_writer_fail(w, EPH_ERR_INVALID, "a forked writer declares no %s (its parent does)", "stacks");
  if (site_id == 0 || !ephf_site_declared(w, site_id))
    return ephf_writer_fail(w, EPH_ERR_INVALID, "stack of site %u: the site was not declared", (unsigned)site_id);
  if (ncallers == 0 || ncallers > EPH_FORMAT_MAX_STACK || !callers)
    return ephf_writer_fail(w, EPH_ERR_INVALID, "stack of site %u: %zu callers (1..%d)", (unsigned)site_id, ncallers,
                            EPH_FORMAT_MAX_STACK);
  for (size_t i = 0; i < ncallers; i++)
    if (callers[i] == 0 || !ephf_site_declared(w, callers[i]))
      return ephf_writer_fail(w, EPH_ERR_INVALID, "stack of site %u: caller %zu, site %u, was not declared",
                              (unsigned)site_id, i, (unsigned)callers[i]);
  if (!ephf_grow_table((void **)&w->stacks, &w->stacks_cap, sizeof *w->stacks, (size_t)site_id + 1))
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the stack table");
  eph_stack_entry *e = &w->stacks[site_id];
  if (e->ncallers) {
    if (e->ncallers == ncallers && !memcmp(e->callers, callers, ncallers * sizeof *callers)) return EPH_OK;
    return ephf_writer_fail(w, EPH_ERR_INVALID, "site %u already has another stack", (unsigned)site_id);
  }
  uint32_t *copy = malloc(ncallers * sizeof *copy);
  if (!copy) return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory in the stack table");
  memcpy(copy, callers, ncallers * sizeof *copy);
  eph_status st = ephf_writer_make_room(w, B_STACKS, (2 + ncallers) * EPHF_VARINT_MAX);
  if (st != EPH_OK) {
    free(copy);
    return st;
  }
  ephf_buf *b = &w->buf[B_STACKS];
  ephf_put_uvarint(b, site_id);
  ephf_put_uvarint(b, ncallers);
  for (size_t i = 0; i < ncallers; i++) ephf_put_uvarint(b, callers[i]);
  e->callers = copy;
  e->ncallers = (uint32_t)ncallers;
  return item_done(w, B_STACKS);
}

eph_status ephf_gc_now(eph_writer *w, const eph_gc_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!ev) return ephf_writer_fail(w, EPH_ERR_INVALID, "eph_writer_gc: no event");
  if (ev->kind != EPH_GC_SCAVENGE && ev->kind != EPH_GC_FULL)
    return ephf_writer_fail(w, EPH_ERR_INVALID, "gc %llu: bad kind %d", (unsigned long long)ev->index, (int)ev->kind);
  eph_status st = ephf_writer_make_room(w, B_GCS, EPHF_GC_MAX);
  if (st != EPH_OK) return st;
  ephf_buf *b = &w->buf[B_GCS];
  ephf_put_u8(b, (uint8_t)ev->kind);
  ephf_put_delta(b, ev->index, w->gc_prev_index);
  ephf_put_delta(b, ev->start_ns, w->gc_prev_start);
  ephf_put_uvarint(b, ev->duration_ns);
  ephf_put_uvarint(b, ev->cpu_ns);
  ephf_put_delta(b, ev->allocated, w->gc_prev_allocated);
  ephf_put_uvarint(b, ev->used_before);
  ephf_put_uvarint(b, ev->used_after);
  ephf_put_uvarint(b, ev->bytes_copied);
  ephf_put_uvarint(b, ev->bytes_promoted);
  ephf_put_uvarint(b, ev->bytes_compacted);
  ephf_put_uvarint(b, ev->old_committed);
  ephf_put_uvarint(b, ev->ephemerons_mourned);
  w->gc_prev_index = ev->index;
  w->gc_prev_start = ev->start_ns;
  w->gc_prev_allocated = ev->allocated;
  return item_done(w, B_GCS);
}

eph_status ephf_event_now(eph_writer *w, const eph_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!ev) return ephf_writer_fail(w, EPH_ERR_INVALID, "eph_writer_event: no event");
  if (ev->kind < EPH_EV_ALLOC || ev->kind > EPH_EV_TICK)
    return ephf_writer_fail(w, EPH_ERR_INVALID, "event at time %llu: bad kind %u", (unsigned long long)ev->time,
                (unsigned)ev->kind);
  if (ev->kind == EPH_EV_ALLOC && (!ephf_class_declared(w, ev->a) || !ephf_site_declared(w, (uint32_t)ev->c)))
    return ephf_writer_fail(w, EPH_ERR_INVALID, "alloc event of object %llu: class %llu or site %llu was not declared",
                (unsigned long long)ev->obj, (unsigned long long)ev->a, (unsigned long long)ev->c);
  if (ev->kind == EPH_EV_GC && (ev->a > EPH_GC_FULL || ev->b > 1))
    return ephf_writer_fail(w, EPH_ERR_INVALID, "gc event at time %llu: bad gc kind %llu or phase %llu",
                (unsigned long long)ev->time, (unsigned long long)ev->a, (unsigned long long)ev->b);
  eph_status st = ephf_writer_make_room(w, B_EVENTS, EPHF_EVENT_MAX);
  if (st != EPH_OK) return st;
  ephf_buf *b = &w->buf[B_EVENTS];
  uint8_t head = ev->kind;
  if (ev->obj) head |= EPHF_EV_HAS_OBJ;
  if (ev->a) head |= EPHF_EV_HAS_A;
  if (ev->b) head |= EPHF_EV_HAS_B;
  if (ev->c) head |= EPHF_EV_HAS_C;
  ephf_put_u8(b, head);
  ephf_put_delta(b, ev->time, w->ev_prev_time);
  if (ev->obj) {
    ephf_put_delta(b, ev->obj, w->ev_prev_obj);
    w->ev_prev_obj = ev->obj;
  }
  if (ev->a) ephf_put_uvarint(b, ev->a);
  if (ev->b) ephf_put_uvarint(b, ev->b);
  if (ev->c) ephf_put_uvarint(b, ev->c);
  w->ev_prev_time = ev->time;
  return item_done(w, B_EVENTS);
}

eph_status eph_writer_flush(eph_writer *w) {
  if (!w) return EPH_ERR_INVALID;
  eph_status pending = ephf_async_wait(w);
  if (w->failed) return w->failed;
  if (pending != EPH_OK) return pending;
  eph_status st = write_buf(w, B_CLASSES);
  if (st == EPH_OK) st = write_buf(w, B_SITES);
  if (st == EPH_OK) st = write_buf(w, B_STACKS);
  if (st == EPH_OK) st = write_buf(w, B_GCS);
  if (st == EPH_OK) st = write_buf(w, B_RECORDS);
  if (st == EPH_OK) st = write_buf(w, B_EVENTS);
  return st;
}

eph_status eph_writer_close(eph_writer *w, const eph_totals *totals) {
  if (!w) return EPH_OK;
  if (w->parent) { /* a fork: what was not joined is dropped */
    free_writer(w);
    return EPH_OK;
  }
  eph_status pending = ephf_async_wait(w); /* the first error the writer's thread met, not yet reported */
  ephf_async_free(w);                     /* the thread ends: what follows is this thread's */
  eph_totals zero;
  if (!totals) {
    memset(&zero, 0, sizeof zero);
    totals = &zero;
  }
  eph_status st = eph_writer_flush(w);
  if (st == EPH_OK) {
    ephf_buf *b = &w->buf[B_CLOSE];
    const uint64_t fields[] = {totals->wall_ns,  totals->cpu_ns,  totals->gc_wall_ns,        totals->bytes_allocated,
                               totals->objects_allocated, totals->records, totals->censored, totals->scavenges,
                               totals->full_gcs, totals->peak_heap};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) ephf_put_uvarint(b, fields[i]);
    st = write_buf(w, B_CLOSE);
  }
  if (close(w->fd) != 0 && st == EPH_OK) st = io_fail(w, "close", errno);
  if (st == EPH_OK) st = pending;
  close_error[0] = 0;
  if (st != EPH_OK) snprintf(close_error, sizeof close_error, "%s", w->error);
  free_writer(w);
  return st;
}

const char *eph_writer_error(const eph_writer *w) { return w ? w->error : close_error; }

size_t eph_writer_memory(const eph_writer *w) {
  if (!w) return 0;
  if (w->q) return ephf_async_memory(w);
  size_t n = sizeof *w + w->zout.cap + w->spool.cap + ephf_clock_memory(w);
  for (int i = 0; i < NBUF; i++) n += w->buf[i].cap;
  return n;
}

/* --- forks: a second record stream for another thread --------------------------- */

eph_writer *eph_writer_fork(eph_writer *parent) {
  if (!parent || parent->parent) return NULL;
  eph_writer *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->fd = -1;
  f->parent = parent;
  f->compress = parent->compress;
  f->check_chunks = parent->check_chunks;
  ephf_rec_ctx_reset(&f->rec);
  if (!(f->path = strdup(parent->path)) || init_buffers(f)) {
    free_writer(f);
    return NULL;
  }
  if (parent->q && !ephf_async_fork(f)) {
    free_writer(f);
    return NULL;
  }
  eph_writer_fork_sync(f);
  return f;
}

static bool copy_bits(uint64_t **bits, size_t *words, const uint64_t *from, size_t from_words) {
  if (*words != from_words) {
    uint64_t *nb = realloc(*bits, from_words * sizeof *nb);
    if (!nb) return false;
    *bits = nb;
    *words = from_words;
  }
  memcpy(*bits, from, from_words * sizeof *from);
  return true;
}

void eph_writer_fork_sync(eph_writer *f) {
  if (!f || !f->parent || f->q) return; /* a queued fork checks nothing: the writer's thread does */
  const eph_writer *w = f->parent;
  /* copies, not the parent's: the parent may declare (and grow them) while
   * the fork's thread checks against them */
  if (!copy_bits(&f->class_bits, &f->class_words, w->class_bits, w->class_words) ||
      !copy_bits(&f->site_bits, &f->site_words, w->site_bits, w->site_words))
    f->class_words = f->site_words = 0; /* out of memory: every record fails, and its thread gives it back */
  f->batch = w->batch;
  f->batch.synced = f->batch.au_synced = false; /* f's record context is its own */
}

eph_status eph_writer_join(eph_writer *f) {
  if (!f || !f->parent) return EPH_ERR_INVALID;
  if (f->q) return ephf_async_join(f);
  eph_writer *w = f->parent;
  /* A fork made before its parent's thread started spools encoded chunks
   * and appends them here, on the caller's thread: the parent's thread
   * first writes all it was handed, and its state is then the caller's
   * (ephf_async_wait; a no-op without a thread). */
  eph_status waited = ephf_async_wait(w);
  if (waited != EPH_OK) {
    f->spool.len = 0;
    return waited;
  }
  eph_status st = f->failed ? f->failed : write_buf(f, B_RECORDS); /* the last chunk, into the spool */
  if (st != EPH_OK) {
    /* the fork's records are lost: the file would lack them */
    if (!w->failed) {
      w->failed = st;
      snprintf(w->error, sizeof w->error, "%s", f->error);
    }
    f->spool.len = 0;
    return st;
  }
  if (!f->spool.len) return EPH_OK; /* nothing to put after the parent's: its chunk may go on */
  st = ephf_writer_write_data(w, B_RECORDS); /* the parent's records so far, and the tables the fork's records name */
  if (st == EPH_OK) st = write_all(w, f->spool.p, f->spool.len);
  f->spool.len = 0;
  return st;
}
