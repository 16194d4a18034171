/*
 * writer.c — eph_writer: appends an .eph file chunk by chunk.
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

enum { B_META, B_CLASSES, B_SITES, B_GCS, B_RECORDS, B_EVENTS, B_CLOSE, NBUF };

static const uint32_t BUF_TYPE[NBUF] = {EPHF_CHUNK_META,    EPHF_CHUNK_CLASSES, EPHF_CHUNK_SITES, EPHF_CHUNK_GCS,
                                        EPHF_CHUNK_RECORDS, EPHF_CHUNK_EVENTS,  EPHF_CHUNK_CLOSE};

typedef struct site_def {
  char *file, *function; /* file != NULL: declared */
  int line;
} site_def;

struct eph_writer {
  int fd;
  char *path;
  bool compress;
  eph_status failed; /* sticky: a write failed */
  char error[256];
  z_stream z;
  bool z_ready;
  ephf_buf zout;
  ephf_buf buf[NBUF]; /* each starts with EPHF_CHUNK_HEADER_LEN reserved bytes */
  /* Delta bases, reset with each chunk (chunks decode on their own). */
  ephf_rec_ctx rec;
  /* The current batch (eph_writer_batch).  synced: the record context's
   * death and kind are the batch's; au_synced: so is its alive_until (the
   * context's au_base, or the death).  Records then need not code them. */
  struct {
    eph_stamp death, alive_until;
    unsigned kind;
    bool au_is_death;
    bool synced, au_synced;
  } batch;
  uint64_t gc_prev_index, gc_prev_start, gc_prev_allocated;
  uint64_t ev_prev_time, ev_prev_obj;
  /* Declared ids as bitmaps (bit 0, "unknown", always set): the per-record check. */
  uint64_t *class_bits, *site_bits;
  size_t class_words, site_words;
  /* A fork (eph_writer_fork): no file; its chunks go to `spool` until
   * eph_writer_join appends them to the parent's.  The bitmaps above are
   * the parent's, borrowed. */
  eph_writer *parent;
  ephf_buf spool;
  /* Declared tables, indexed by id. */
  char **classes;
  size_t classes_cap;
  site_def *sites;
  size_t sites_cap;
};

/* Message of the last failed close on this thread: eph_writer_error(NULL). */
static _Thread_local char close_error[256];

static eph_status fail(eph_writer *w, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static eph_status fail(eph_writer *w, eph_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
  return st;
}

static eph_status io_fail(eph_writer *w, const char *what, int errnum) {
  w->failed = EPH_ERR_IO;
  return fail(w, w->failed, "%s %s: %s", what, w->path, strerror(errnum));
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
        return fail(w, w->failed, "out of memory holding a forked record stream of %s", w->path);
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

/* Writes buffer `which` as one chunk if it holds anything (or always, for CLOSE). */
static eph_status write_buf(eph_writer *w, int which) {
  ephf_buf *b = &w->buf[which];
  size_t raw = b->len - EPHF_CHUNK_HEADER_LEN;
  if (raw == 0 && which != B_CLOSE) return EPH_OK;
  if (w->failed) return w->failed;
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
static eph_status write_data(eph_writer *w, int which) {
  eph_status st = write_buf(w, B_CLASSES);
  if (st == EPH_OK) st = write_buf(w, B_SITES);
  if (st == EPH_OK) st = write_buf(w, which);
  return st;
}

/*
 * Makes room for an item of at most n bytes in buffer `which`.  A full
 * buffer is written first (tables alone; data after the tables).
 */
static eph_status make_room(eph_writer *w, int which, size_t n) {
  if (w->failed) return w->failed;
  ephf_buf *b = &w->buf[which];
  if (n > EPHF_CHUNK_MAX) return fail(w, EPH_ERR_TOO_LARGE, "an entry of %zu bytes exceeds the chunk limit", n);
  size_t raw = b->len - EPHF_CHUNK_HEADER_LEN;
  if (raw > 0 && (raw >= EPHF_CHUNK_TARGET || n > EPHF_CHUNK_MAX - raw)) {
    eph_status st = which <= B_SITES ? write_buf(w, which) : write_data(w, which);
    if (st != EPH_OK) return st;
  }
  if (!ephf_buf_reserve(b, n)) return fail(w, EPH_ERR_NOMEM, "out of memory buffering a chunk of %s", w->path);
  return EPH_OK;
}

/* After an item: write the buffer once it reached the target size. */
static eph_status item_done(eph_writer *w, int which) {
  if (w->buf[which].len - EPHF_CHUNK_HEADER_LEN < EPHF_CHUNK_TARGET) return EPH_OK;
  return which <= B_SITES ? write_buf(w, which) : write_data(w, which);
}

static eph_status put_strings(eph_writer *w, int which, const char *s1, const char *s2, uint64_t id, bool has_id,
                              const int *line, const char *s3) {
  size_t n1 = strlen(s1), n2 = s2 ? strlen(s2) : 0, n3 = s3 ? strlen(s3) : 0;
  if (n1 > EPHF_CHUNK_MAX || n2 > EPHF_CHUNK_MAX || n3 > EPHF_CHUNK_MAX)
    return fail(w, EPH_ERR_TOO_LARGE, "a string of more than %u bytes", (unsigned)EPHF_CHUNK_MAX);
  size_t need = 4 * EPHF_VARINT_MAX + n1 + n2 + n3;
  eph_status st = make_room(w, which, need);
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
  if (!w->parent) {
    free(w->class_bits);
    free(w->site_bits);
  }
  ephf_buf_free(&w->spool);
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

eph_status eph_writer_class(eph_writer *w, uint32_t id, const char *name) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (w->parent) return fail(w, EPH_ERR_INVALID, "a forked writer declares no %s (its parent does)", "classes");
  if (id == 0 || id > EPH_FORMAT_MAX_ID)
    return fail(w, EPH_ERR_INVALID, "class id %u out of range 1..%u", (unsigned)id, (unsigned)EPH_FORMAT_MAX_ID);
  if (!name) return fail(w, EPH_ERR_INVALID, "class %u has no name", (unsigned)id);
  if (!ephf_grow_table((void **)&w->classes, &w->classes_cap, sizeof *w->classes, (size_t)id + 1))
    return fail(w, EPH_ERR_NOMEM, "out of memory in the class table");
  if (w->classes[id]) {
    if (!strcmp(w->classes[id], name)) return EPH_OK;
    return fail(w, EPH_ERR_INVALID, "class %u is already declared as '%s'", (unsigned)id, w->classes[id]);
  }
  char *copy = strdup(name);
  if (!copy || !set_bit(&w->class_bits, &w->class_words, id)) {
    free(copy);
    return fail(w, EPH_ERR_NOMEM, "out of memory in the class table");
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

eph_status eph_writer_site(eph_writer *w, uint32_t id, const char *file, int line, const char *function) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (w->parent) return fail(w, EPH_ERR_INVALID, "a forked writer declares no %s (its parent does)", "sites");
  if (id == 0 || id > EPH_FORMAT_MAX_ID)
    return fail(w, EPH_ERR_INVALID, "site id %u out of range 1..%u", (unsigned)id, (unsigned)EPH_FORMAT_MAX_ID);
  if (!file) file = "";
  if (!function) function = "";
  if (!ephf_grow_table((void **)&w->sites, &w->sites_cap, sizeof *w->sites, (size_t)id + 1))
    return fail(w, EPH_ERR_NOMEM, "out of memory in the site table");
  site_def *s = &w->sites[id];
  if (s->file) {
    if (!strcmp(s->file, file) && !strcmp(s->function, function) && s->line == line) return EPH_OK;
    return fail(w, EPH_ERR_INVALID, "site %u is already declared as %s:%d:%s", (unsigned)id, s->file, s->line,
                s->function);
  }
  char *f = strdup(file), *fn = strdup(function);
  if (!f || !fn || !set_bit(&w->site_bits, &w->site_words, id)) {
    free(f);
    free(fn);
    return fail(w, EPH_ERR_NOMEM, "out of memory in the site table");
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

static inline bool bit_set(const uint64_t *bits, size_t words, uint64_t id) {
  return (id >> 6) < words && ((bits[id >> 6] >> (id & 63)) & 1);
}

static bool class_declared(const eph_writer *w, uint64_t id) { return bit_set(w->class_bits, w->class_words, id); }

static bool site_declared(const eph_writer *w, uint64_t id) { return bit_set(w->site_bits, w->site_words, id); }

/* Stamp s as four deltas from base. */
static inline uint8_t *w_stamp(uint8_t *p, const eph_stamp *s, const eph_stamp *base) {
  p = ephf_w_delta(p, s->bytes, base->bytes);
  p = ephf_w_delta(p, s->wall_ns, base->wall_ns);
  p = ephf_w_delta(p, s->scavenges, base->scavenges);
  return ephf_w_delta(p, s->full_gcs, base->full_gcs);
}

static inline bool stamp_eq(const eph_stamp *a, const eph_stamp *b) {
  return a->bytes == b->bytes && a->wall_ns == b->wall_ns && a->scavenges == b->scavenges &&
         a->full_gcs == b->full_gcs;
}

static eph_status bad_record(eph_writer *w, const eph_record *r) {
  if (r->death_kind < EPH_DEATH_FINALIZED || r->death_kind > EPH_DEATH_FREED)
    return fail(w, EPH_ERR_INVALID, "record %llu: bad death kind %u", (unsigned long long)r->id,
                (unsigned)r->death_kind);
  if (!class_declared(w, r->class_id))
    return fail(w, EPH_ERR_INVALID, "record %llu: class %u was not declared (eph_writer_class)",
                (unsigned long long)r->id, (unsigned)r->class_id);
  return fail(w, EPH_ERR_INVALID, "record %llu: site %u was not declared (eph_writer_site)",
              (unsigned long long)r->id, (unsigned)r->site_id);
}

/* Room for one more record in the records buffer (open sized it for a
 * chunk and a record: a safety net). */
static inline eph_status reserve_record(eph_writer *w) {
  ephf_buf *b = &w->buf[B_RECORDS];
  return b->cap - b->len >= EPHF_RECORD_MAX ? EPH_OK : make_room(w, B_RECORDS, EPHF_RECORD_MAX);
}

/* The cache entry of class cls; *cached: it holds this site and size (a
 * cached pair was declared when it was cached). */
static inline ephf_rec_cache *cache_entry(ephf_rec_ctx *c, uint32_t cls, uint32_t site, uint64_t size, bool *cached) {
  ephf_rec_cache *e = &c->cache[cls % EPHF_REC_CACHE_SIZE];
  /* one test, no branch between the three compares */
  *cached = ((e->class_id ^ cls) | (e->site_id ^ site) | (e->size ^ size)) == 0;
  return e;
}

/* The class, then site and size unless cache entry e holds them (CACHED);
 * otherwise they go into e. */
static inline __attribute__((always_inline)) uint8_t *w_class(uint8_t *p, unsigned *head, ephf_rec_cache *e,
                                                              bool cached, uint32_t cls, uint32_t site, uint64_t size) {
  p = ephf_w_uvarint(p, cls);
  if (cached) {
    *head |= EPHF_REC_CACHED;
    return p;
  }
  p = ephf_w_uvarint(p, site);
  p = ephf_w_uvarint(p, size);
  e->class_id = cls;
  e->site_id = site;
  e->size = size;
  return p;
}

/* Ends the record begun at p0 (its head byte) and written up to p; the
 * chunk goes out once it reaches its target (which resets the context:
 * update it first). */
/* The records' chunk, out of line, so that end_record's call to it is a
 * tail call and a record path saves no registers for it. */
__attribute__((noinline)) static eph_status write_records(eph_writer *w) { return write_data(w, B_RECORDS); }

static inline eph_status end_record(eph_writer *w, uint8_t *p0, uint8_t *p, unsigned head) {
  ephf_buf *b = &w->buf[B_RECORDS];
  *p0 = (uint8_t)head;
  b->len = (size_t)(p - b->p);
  if (b->len - EPHF_CHUNK_HEADER_LEN < EPHF_CHUNK_TARGET) return EPH_OK;
  return write_records(w);
}

/* Codes birth against the previous record's: bytes and wall deltas, the
 * collection counts only when they differ (BIRTH_GCS). */
static inline __attribute__((always_inline)) uint8_t *w_birth(uint8_t *p, unsigned *head, const eph_stamp *birth, const eph_stamp *prev) {
  p = ephf_w_delta(p, birth->bytes, prev->bytes);
  p = ephf_w_delta(p, birth->wall_ns, prev->wall_ns);
  if (birth->scavenges != prev->scavenges || birth->full_gcs != prev->full_gcs) {
    *head |= EPHF_REC_BIRTH_GCS;
    p = ephf_w_delta(p, birth->scavenges, prev->scavenges);
    p = ephf_w_delta(p, birth->full_gcs, prev->full_gcs);
  }
  return p;
}

/* Codes death against the context: DEATH 0 or 1 when only wall time (or
 * nothing) differs from the previous death, else 2 or 3 as in
 * eph_writer_record. */
static inline __attribute__((always_inline)) uint8_t *w_death(uint8_t *p, unsigned *head, const eph_stamp *death, const eph_stamp *birth,
                               const eph_stamp *prev) {
  if (death->bytes == prev->bytes && death->scavenges == prev->scavenges && death->full_gcs == prev->full_gcs) {
    if (death->wall_ns != prev->wall_ns) {
      *head |= EPHF_REC_DEATH_WALL;
      p = ephf_w_delta(p, death->wall_ns, prev->wall_ns);
    }
    return p;
  }
  uint64_t zb_bytes = ephf_zigzag(death->bytes, birth->bytes), zb_wall = ephf_zigzag(death->wall_ns, birth->wall_ns);
  uint64_t zp_bytes = ephf_zigzag(death->bytes, prev->bytes), zp_wall = ephf_zigzag(death->wall_ns, prev->wall_ns);
  const eph_stamp *base = birth;
  if (ephf_uvarint_size(zb_bytes) + ephf_uvarint_size(zb_wall) <= ephf_uvarint_size(zp_bytes) + ephf_uvarint_size(zp_wall)) {
    *head |= EPHF_REC_DEATH_BIRTH;
  } else {
    *head |= EPHF_REC_DEATH_PREV;
    base = prev;
    zb_bytes = zp_bytes;
    zb_wall = zp_wall;
  }
  p = ephf_w_uvarint(p, zb_bytes);
  p = ephf_w_uvarint(p, zb_wall);
  p = ephf_w_delta(p, death->scavenges, base->scavenges);
  return ephf_w_delta(p, death->full_gcs, base->full_gcs);
}

/*
 * The hot path of every profiler: checks that need no table walk (kind
 * range, two bitmap bits, the weight only when it changed), one room check
 * (the buffer always has room for a record below the chunk target), then
 * the fields written through a local pointer.  Each record is coded against
 * the context (the previous record of the chunk, reset with each chunk):
 * docs/eph-format.md §5.4 has the layout and the writer's choices.
 */
eph_status eph_writer_record(eph_writer *w, const eph_record *r) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!r) return fail(w, EPH_ERR_INVALID, "eph_writer_record: no record");
  unsigned kind = r->death_kind;
  uint32_t cls = r->class_id, site = r->site_id;
  ephf_rec_ctx *c = &w->rec;
  bool cached;
  ephf_rec_cache *e = cache_entry(c, cls, site, r->size, &cached);
  if (kind - EPH_DEATH_FINALIZED > (unsigned)(EPH_DEATH_FREED - EPH_DEATH_FINALIZED) ||
      (!cached && (!class_declared(w, cls) || !site_declared(w, site))))
    return bad_record(w, r);
  eph_status st = reserve_record(w);
  if (st != EPH_OK) return st;
  ephf_buf *b = &w->buf[B_RECORDS];
  uint64_t wbits;
  memcpy(&wbits, &r->weight, sizeof wbits);
  unsigned head = 0, ext = kind != c->kind ? kind : 0;
  if (wbits != c->weight_bits) {
    double wt = r->weight;
    if (!isfinite(wt) || wt < 0)
      return fail(w, EPH_ERR_INVALID, "record %llu: weight %g is not a finite non-negative number",
                  (unsigned long long)r->id, wt);
    /* Integral weights (the usual 1 or a sampling rate) as a varint; -0.0 stays raw. */
    bool wint = wt <= 9007199254740992.0 && wt == (double)(uint64_t)wt && !signbit(wt);
    ext |= EPHF_REC_EXT_WEIGHT | (wint ? EPHF_REC_EXT_WEIGHT_INT : 0);
  }
  uint8_t *p0 = b->p + b->len, *p = p0 + 1;
  if (ext) {
    head = EPHF_REC_EXT;
    *p++ = (uint8_t)ext;
    if (ext & EPHF_REC_EXT_WEIGHT_INT) {
      p = ephf_w_uvarint(p, (uint64_t)r->weight);
    } else if (ext & EPHF_REC_EXT_WEIGHT) {
      ephf_store_u32(p, (uint32_t)wbits);
      ephf_store_u32(p + 4, (uint32_t)(wbits >> 32));
      p += 8;
    }
  }
  p = w_class(p, &head, e, cached, cls, site, r->size);
  const eph_stamp *birth = &r->birth, *death = &r->death, *au = &r->alive_until;
  p = w_birth(p, &head, birth, &c->birth);
  if (r->id == birth->bytes) head |= EPHF_REC_ID_BIRTH;
  else p = ephf_w_delta(p, r->id, c->id);
  p = w_death(p, &head, death, birth, &c->death);
  if (stamp_eq(au, death)) {
    /* EPHF_REC_AU_DEATH */
  } else if (stamp_eq(au, birth)) {
    head |= EPHF_REC_AU_BIRTH;
  } else if (stamp_eq(au, &c->au_base)) {
    head |= EPHF_REC_AU_BASE;
  } else {
    head |= EPHF_REC_AU_STORED;
    p = w_stamp(p, au, birth);
    c->au_base = *au;
  }
  c->id = r->id;
  c->birth = *birth;
  c->death = *death;
  c->weight_bits = wbits;
  c->kind = kind;
  w->batch.synced = w->batch.au_synced = false;
  return end_record(w, p0, p, head);
}

/* The record the fast paths below write, id = birth, for the general
 * writer when they cannot take it. */
static eph_record record_of(uint32_t cls, uint32_t site, uint64_t size, double weight, const eph_stamp *birth,
                            const eph_stamp *death, const eph_stamp *alive_until, unsigned kind) {
  return (eph_record){.id = birth->bytes, .class_id = cls, .site_id = site, .size = size, .weight = weight,
                      .birth = *birth, .death = *death, .alive_until = *alive_until, .death_kind = (uint8_t)kind};
}

__attribute__((noinline)) static eph_status to_death_slow(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size,
                                                          double weight, const eph_stamp *birth,
                                                          const eph_stamp *death, unsigned kind) {
  eph_record r = record_of(cls, site, size, weight, birth, death, death, kind);
  return eph_writer_record(w, &r);
}

eph_status eph_writer_record_to_death(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size, double weight,
                                      const eph_stamp *birth, const eph_stamp *death, unsigned kind) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  ephf_rec_ctx *c = &w->rec;
  uint64_t wbits;
  memcpy(&wbits, &weight, sizeof wbits);
  bool cached;
  ephf_rec_cache *e = cache_entry(c, cls, site, size, &cached);
  /* the general writer for a new kind or weight, an undeclared table entry */
  if (kind != c->kind || wbits != c->weight_bits || (!cached && (!class_declared(w, cls) || !site_declared(w, site))))
    return to_death_slow(w, cls, site, size, weight, birth, death, kind);
  eph_status st = reserve_record(w);
  if (st != EPH_OK) return st;
  ephf_buf *b = &w->buf[B_RECORDS];
  unsigned head = EPHF_REC_ID_BIRTH; /* AU 0: alive until the death */
  uint8_t *p0 = b->p + b->len, *p = p0 + 1;
  p = w_class(p, &head, e, cached, cls, site, size);
  p = w_birth(p, &head, birth, &c->birth);
  p = w_death(p, &head, death, birth, &c->death);
  c->id = birth->bytes;
  c->birth = *birth;
  c->death = *death;
  w->batch.synced = w->batch.au_synced = false;
  return end_record(w, p0, p, head);
}

void eph_writer_batch(eph_writer *w, const eph_stamp *death, const eph_stamp *alive_until, unsigned death_kind) {
  if (!w) return;
  w->batch.death = *death;
  w->batch.alive_until = *alive_until;
  w->batch.kind = death_kind;
  w->batch.au_is_death = stamp_eq(alive_until, death);
  w->batch.synced = w->batch.au_synced = false;
}

/* The general writer for a batch's record, which leaves the context synced
 * with the batch when it stored (or already had) the batch's alive_until. */
__attribute__((noinline)) static eph_status batch_record_slow(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size, double weight,
                                    const eph_stamp *birth, bool until_birth) {
  eph_record r = record_of(cls, site, size, weight, birth, &w->batch.death,
                           until_birth ? birth : &w->batch.alive_until, w->batch.kind);
  eph_status st = eph_writer_record(w, &r);
  if (st == EPH_OK && w->rec.kind == r.death_kind) { /* still in the chunk it went to */
    w->batch.synced = true;
    w->batch.au_synced = w->batch.au_is_death || stamp_eq(&w->rec.au_base, &w->batch.alive_until);
  }
  return st;
}

/*
 * With the context synced, a record is: head (DEATH 0, ID_BIRTH, AU 0 if
 * the batch's alive_until is its death, 1 when until_birth, else 2), the
 * class, site and size unless cached (then cached), the birth deltas.  The same choices
 * eph_writer_record makes but for AU 2 over 1 when the birth equals the
 * batch's alive_until, both valid.
 */
eph_status eph_writer_batch_record(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size, double weight,
                                   const eph_stamp *birth, bool until_birth) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  ephf_rec_ctx *c = &w->rec;
  uint64_t wbits;
  memcpy(&wbits, &weight, sizeof wbits);
  bool cached;
  ephf_rec_cache *e = cache_entry(c, cls, site, size, &cached);
  ephf_buf *b = &w->buf[B_RECORDS];
  /* Calls only in tail position (a full buffer, never met in practice,
   * goes the general way too): the common path saves no registers. */
  if (!w->batch.synced || (!until_birth && !w->batch.au_synced) || wbits != c->weight_bits ||
      (!cached && (!class_declared(w, cls) || !site_declared(w, site))) || b->cap - b->len < EPHF_RECORD_MAX)
    return batch_record_slow(w, cls, site, size, weight, birth, until_birth);
  unsigned head = EPHF_REC_ID_BIRTH;
  if (until_birth) head |= EPHF_REC_AU_BIRTH;
  else if (!w->batch.au_is_death) head |= EPHF_REC_AU_BASE;
  uint8_t *p0 = b->p + b->len, *p = p0 + 1;
  p = w_class(p, &head, e, cached, cls, site, size);
  p = w_birth(p, &head, birth, &c->birth);
  c->id = birth->bytes;
  c->birth = *birth;
  return end_record(w, p0, p, head);
}

eph_status eph_writer_gc(eph_writer *w, const eph_gc_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!ev) return fail(w, EPH_ERR_INVALID, "eph_writer_gc: no event");
  if (ev->kind != EPH_GC_SCAVENGE && ev->kind != EPH_GC_FULL)
    return fail(w, EPH_ERR_INVALID, "gc %llu: bad kind %d", (unsigned long long)ev->index, (int)ev->kind);
  eph_status st = make_room(w, B_GCS, EPHF_GC_MAX);
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

eph_status eph_writer_event(eph_writer *w, const eph_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!ev) return fail(w, EPH_ERR_INVALID, "eph_writer_event: no event");
  if (ev->kind < EPH_EV_ALLOC || ev->kind > EPH_EV_TICK)
    return fail(w, EPH_ERR_INVALID, "event at time %llu: bad kind %u", (unsigned long long)ev->time,
                (unsigned)ev->kind);
  if (ev->kind == EPH_EV_ALLOC && (!class_declared(w, ev->a) || !site_declared(w, (uint32_t)ev->c)))
    return fail(w, EPH_ERR_INVALID, "alloc event of object %llu: class %llu or site %llu was not declared",
                (unsigned long long)ev->obj, (unsigned long long)ev->a, (unsigned long long)ev->c);
  if (ev->kind == EPH_EV_GC && (ev->a > EPH_GC_FULL || ev->b > 1))
    return fail(w, EPH_ERR_INVALID, "gc event at time %llu: bad gc kind %llu or phase %llu",
                (unsigned long long)ev->time, (unsigned long long)ev->a, (unsigned long long)ev->b);
  eph_status st = make_room(w, B_EVENTS, EPHF_EVENT_MAX);
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
  if (w->failed) return w->failed;
  eph_status st = write_buf(w, B_CLASSES);
  if (st == EPH_OK) st = write_buf(w, B_SITES);
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
  close_error[0] = 0;
  if (st != EPH_OK) snprintf(close_error, sizeof close_error, "%s", w->error);
  free_writer(w);
  return st;
}

const char *eph_writer_error(const eph_writer *w) { return w ? w->error : close_error; }

size_t eph_writer_memory(const eph_writer *w) {
  if (!w) return 0;
  size_t n = sizeof *w + w->zout.cap + w->spool.cap;
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
  ephf_rec_ctx_reset(&f->rec);
  if (!(f->path = strdup(parent->path)) || init_buffers(f)) {
    free_writer(f);
    return NULL;
  }
  eph_writer_fork_sync(f);
  return f;
}

void eph_writer_fork_sync(eph_writer *f) {
  if (!f || !f->parent) return;
  const eph_writer *w = f->parent;
  f->class_bits = w->class_bits;
  f->class_words = w->class_words;
  f->site_bits = w->site_bits;
  f->site_words = w->site_words;
  f->batch = w->batch;
  f->batch.synced = f->batch.au_synced = false; /* f's record context is its own */
}

eph_status eph_writer_join(eph_writer *f) {
  if (!f || !f->parent) return EPH_ERR_INVALID;
  eph_writer *w = f->parent;
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
  st = write_data(w, B_RECORDS); /* the parent's records so far, and the tables the fork's records name */
  if (st == EPH_OK) st = write_all(w, f->spool.p, f->spool.len);
  f->spool.len = 0;
  return st;
}
