/*
 * writer_records.c — encoding records into the writer's records buffer
 * (docs/eph-format.md §5.4): eph_writer_record, and the profiler's cheaper
 * forms (writer_profiler.h) for records found dead together and for exact
 * lifetimes.  These are the `_now` forms: the public entry points
 * (writer_async.c) call them at once, or queue the record for the writer's
 * thread, which calls them.  Each record is coded against the chunk's record context
 * (the previous record, a small cache of class/site/size) so that the
 * usual record is a few bytes; the framing is writer.c's.  The mirror of
 * decode.c's record decoding.
 */
#include <math.h>
#include <string.h>

#include "format_internal.h"
#include "writer_internal.h"
#include "writer_profiler.h"

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
    return ephf_writer_fail(w, EPH_ERR_INVALID, "record %llu: bad death kind %u", (unsigned long long)r->id,
                (unsigned)r->death_kind);
  if (!ephf_class_declared(w, r->class_id))
    return ephf_writer_fail(w, EPH_ERR_INVALID, "record %llu: class %u was not declared (eph_writer_class)",
                (unsigned long long)r->id, (unsigned)r->class_id);
  return ephf_writer_fail(w, EPH_ERR_INVALID, "record %llu: site %u was not declared (eph_writer_site)",
              (unsigned long long)r->id, (unsigned)r->site_id);
}

/* Room for one more record in the records buffer (open sized it for a
 * chunk and a record: a safety net). */
static inline eph_status reserve_record(eph_writer *w) {
  ephf_buf *b = &w->buf[B_RECORDS];
  return b->cap - b->len >= EPHF_RECORD_MAX ? EPH_OK : ephf_writer_make_room(w, B_RECORDS, EPHF_RECORD_MAX);
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
__attribute__((noinline)) static eph_status write_records(eph_writer *w) { return ephf_writer_write_data(w, B_RECORDS); }

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
eph_status ephf_record_now(eph_writer *w, const eph_record *r) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  if (!r) return ephf_writer_fail(w, EPH_ERR_INVALID, "eph_writer_record: no record");
  unsigned kind = r->death_kind;
  uint32_t cls = r->class_id, site = r->site_id;
  ephf_rec_ctx *c = &w->rec;
  bool cached;
  ephf_rec_cache *e = cache_entry(c, cls, site, r->size, &cached);
  if (kind - EPH_DEATH_FINALIZED > (unsigned)(EPH_DEATH_FREED - EPH_DEATH_FINALIZED) ||
      (!cached && (!ephf_class_declared(w, cls) || !ephf_site_declared(w, site))))
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
      return ephf_writer_fail(w, EPH_ERR_INVALID, "record %llu: weight %g is not a finite non-negative number",
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
  return ephf_record_now(w, &r);
}

eph_status ephf_record_to_death_now(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size, double weight,
                                      const eph_stamp *birth, const eph_stamp *death, unsigned kind) {
  if (!w) return EPH_ERR_INVALID;
  if (w->failed) return w->failed;
  ephf_rec_ctx *c = &w->rec;
  uint64_t wbits;
  memcpy(&wbits, &weight, sizeof wbits);
  bool cached;
  ephf_rec_cache *e = cache_entry(c, cls, site, size, &cached);
  /* the general writer for a new kind or weight, an undeclared table entry */
  if (kind != c->kind || wbits != c->weight_bits || (!cached && (!ephf_class_declared(w, cls) || !ephf_site_declared(w, site))))
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
  ephf_copy_stamp(&c->birth, birth);
  ephf_copy_stamp(&c->death, death);
  w->batch.synced = w->batch.au_synced = false;
  return end_record(w, p0, p, head);
}

void ephf_batch_now(eph_writer *w, const eph_stamp *death, const eph_stamp *alive_until, unsigned death_kind) {
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
  eph_status st = ephf_record_now(w, &r);
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
eph_status ephf_batch_record_now(eph_writer *w, uint32_t cls, uint32_t site, uint64_t size, double weight,
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
      (!cached && (!ephf_class_declared(w, cls) || !ephf_site_declared(w, site))) || b->cap - b->len < EPHF_RECORD_MAX)
    return batch_record_slow(w, cls, site, size, weight, birth, until_birth);
  unsigned head = EPHF_REC_ID_BIRTH;
  if (until_birth) head |= EPHF_REC_AU_BIRTH;
  else if (!w->batch.au_is_death) head |= EPHF_REC_AU_BASE;
  uint8_t *p0 = b->p + b->len, *p = p0 + 1;
  p = w_class(p, &head, e, cached, cls, site, size);
  p = w_birth(p, &head, birth, &c->birth);
  c->id = birth->bytes;
  ephf_copy_stamp(&c->birth, birth);
  return end_record(w, p0, p, head);
}
