/*
 * decode.c — decoding the payload of each known chunk type into an
 * eph_file, checking every value: lengths against the payload, enum
 * values, u32 ranges, finite weights, and that every class or site a
 * record or event names was defined by an earlier chunk.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"

typedef struct dec {
  ephf_builder *b;
  ephf_cursor c;
  char *detail;
  size_t detail_len;
} dec;

static eph_status bad(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static eph_status bad(dec *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->detail, d->detail_len, fmt, ap);
  va_end(ap);
  return EPH_ERR_INVALID;
}

/* The cursor failed while reading item `index` of kind `what`. */
static eph_status bad_read(dec *d, const char *what, size_t index) {
  return bad(d, "%s %zu of the chunk: %s (payload byte %zu)", what, index, d->c.bad, d->c.pos);
}

static char *dup_n(const char *s, size_t n) {
  char *r = malloc(n + 1);
  if (!r) return NULL;
  if (n) memcpy(r, s, n);
  r[n] = 0;
  return r;
}

static bool same(const char *a, const char *s, size_t n) { return strlen(a) == n && !memcmp(a, s, n); }

/* --- META, CLASSES, SITES -------------------------------------------------------- */

static eph_status dec_meta(dec *d) {
  eph_file *p = d->b->p;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    const char *k, *v;
    size_t kn, vn;
    if (!ephf_get_string(&d->c, &k, &kn) || !ephf_get_string(&d->c, &v, &vn)) return bad_read(d, "pair", i);
    if (!ephf_grow((void **)&p->meta, &d->b->cap_meta, sizeof *p->meta, p->nmeta + 1)) return EPH_ERR_NOMEM;
    char *key = dup_n(k, kn), *value = dup_n(v, vn);
    if (!key || !value) {
      free(key);
      free(value);
      return EPH_ERR_NOMEM;
    }
    p->meta[p->nmeta].key = key;
    p->meta[p->nmeta].value = value;
    p->nmeta++;
  }
  return EPH_OK;
}

static eph_status get_id(dec *d, const char *what, size_t i, uint64_t *id) {
  if (!ephf_get_uvarint(&d->c, id)) return bad_read(d, what, i);
  if (*id == 0 || *id > EPH_FORMAT_MAX_ID)
    return bad(d, "%s %zu of the chunk: id %llu out of range 1..%u", what, i, (unsigned long long)*id,
               (unsigned)EPH_FORMAT_MAX_ID);
  return EPH_OK;
}

static eph_status dec_classes(dec *d) {
  eph_file *p = d->b->p;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    uint64_t id;
    const char *s;
    size_t n;
    eph_status st = get_id(d, "class", i, &id);
    if (st != EPH_OK) return st;
    if (!ephf_get_string(&d->c, &s, &n)) return bad_read(d, "class", i);
    if (id < p->nclasses && p->class_names[id]) {
      if (same(p->class_names[id], s, n)) continue;
      return bad(d, "class %llu defined again with another name", (unsigned long long)id);
    }
    if (!ephf_grow_table((void **)&p->class_names, &d->b->cap_classes, sizeof *p->class_names, (size_t)id + 1))
      return EPH_ERR_NOMEM;
    if (!(p->class_names[id] = dup_n(s, n))) return EPH_ERR_NOMEM;
    if (p->nclasses <= id) p->nclasses = (size_t)id + 1;
  }
  return EPH_OK;
}

static eph_status dec_sites(dec *d) {
  eph_file *p = d->b->p;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    uint64_t id, zline;
    const char *f, *fn;
    size_t fl, fnl;
    eph_status st = get_id(d, "site", i, &id);
    if (st != EPH_OK) return st;
    if (!ephf_get_string(&d->c, &f, &fl) || !ephf_get_uvarint(&d->c, &zline) || !ephf_get_string(&d->c, &fn, &fnl))
      return bad_read(d, "site", i);
    /* zigzag: 0, -1, 1, -2, ... */
    int64_t line = (zline & 1) ? -(int64_t)(zline >> 1) - 1 : (int64_t)(zline >> 1);
    if (line < INT_MIN || line > INT_MAX)
      return bad(d, "site %llu: line %lld out of range", (unsigned long long)id, (long long)line);
    if (id < p->nsites && p->sites[id].file) {
      eph_site_entry *e = &p->sites[id];
      if (same(e->file, f, fl) && same(e->function, fn, fnl) && e->line == (int)line) continue;
      return bad(d, "site %llu defined again differently", (unsigned long long)id);
    }
    if (!ephf_grow_table((void **)&p->sites, &d->b->cap_sites, sizeof *p->sites, (size_t)id + 1)) return EPH_ERR_NOMEM;
    char *file = dup_n(f, fl), *function = dup_n(fn, fnl);
    if (!file || !function) {
      free(file);
      free(function);
      return EPH_ERR_NOMEM;
    }
    p->sites[id].file = file;
    p->sites[id].function = function;
    p->sites[id].line = (int)line;
    if (p->nsites <= id) p->nsites = (size_t)id + 1;
  }
  return EPH_OK;
}

static bool site_defined(const ephf_builder *b, uint64_t id);

/* STAK (docs/eph-format.md §5.7): a site id, the number of its callers,
 * the callers' site ids, innermost first; every site defined before. */
static eph_status dec_stacks(dec *d) {
  eph_file *p = d->b->p;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    uint64_t id, n;
    eph_status st = get_id(d, "stack", i, &id);
    if (st != EPH_OK) return st;
    if (!site_defined(d->b, id)) return bad(d, "stack %zu of the chunk: site %llu is not defined", i, (unsigned long long)id);
    if (!ephf_get_uvarint(&d->c, &n)) return bad_read(d, "stack", i);
    if (n == 0 || n > EPH_FORMAT_MAX_STACK)
      return bad(d, "stack of site %llu: %llu callers (1..%d)", (unsigned long long)id, (unsigned long long)n,
                 EPH_FORMAT_MAX_STACK);
    uint32_t callers[EPH_FORMAT_MAX_STACK];
    for (uint64_t k = 0; k < n; k++) {
      uint64_t c;
      if (!ephf_get_uvarint(&d->c, &c)) return bad_read(d, "stack", i);
      if (c == 0 || !site_defined(d->b, c))
        return bad(d, "stack of site %llu: caller %llu, site %llu, is not defined", (unsigned long long)id,
                   (unsigned long long)k, (unsigned long long)c);
      callers[k] = (uint32_t)c;
    }
    if (id < p->nstacks && p->stacks[id].ncallers) {
      eph_stack_entry *e = &p->stacks[id];
      if (e->ncallers == n && !memcmp(e->callers, callers, n * sizeof *callers)) continue;
      return bad(d, "stack of site %llu defined again differently", (unsigned long long)id);
    }
    if (!ephf_grow_table((void **)&p->stacks, &d->b->cap_stacks, sizeof *p->stacks, (size_t)id + 1)) return EPH_ERR_NOMEM;
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!copy) return EPH_ERR_NOMEM;
    memcpy(copy, callers, n * sizeof *copy);
    p->stacks[id].callers = copy;
    p->stacks[id].ncallers = (uint32_t)n;
    if (p->nstacks <= id) p->nstacks = (size_t)id + 1;
  }
  return EPH_OK;
}

static bool bit_set(const uint64_t *bits, size_t words, uint64_t id) {
  return id / 64 < words && (bits[id / 64] >> (id % 64) & 1);
}

static bool class_defined(const ephf_builder *b, uint64_t id) {
  if (b->class_bits) return id == 0 || bit_set(b->class_bits, b->class_words, id);
  const eph_file *p = b->p;
  return id == 0 || (id < p->nclasses && p->class_names[id] != NULL);
}

static bool site_defined(const ephf_builder *b, uint64_t id) {
  if (b->site_bits) return id == 0 || bit_set(b->site_bits, b->site_words, id);
  const eph_file *p = b->p;
  return id == 0 || (id < p->nsites && p->sites[id].file != NULL);
}

/* --- RECORDS ---------------------------------------------------------------------- */

static bool get_u32_delta(ephf_cursor *c, uint32_t base, uint32_t *out) {
  uint64_t v;
  if (!ephf_get_delta(c, base, &v)) return false;
  if (v > UINT32_MAX) {
    c->bad = "a collection count outside 0..2^32-1";
    return false;
  }
  *out = (uint32_t)v;
  return true;
}

static bool get_stamp(ephf_cursor *c, const eph_stamp *base, eph_stamp *s) {
  return ephf_get_delta(c, base->bytes, &s->bytes) && ephf_get_delta(c, base->wall_ns, &s->wall_ns) &&
         get_u32_delta(c, base->scavenges, &s->scavenges) && get_u32_delta(c, base->full_gcs, &s->full_gcs);
}

/* The two collection counts of a stamp, as deltas from base's. */
static bool get_counts(ephf_cursor *c, const eph_stamp *base, eph_stamp *s) {
  return get_u32_delta(c, base->scavenges, &s->scavenges) && get_u32_delta(c, base->full_gcs, &s->full_gcs);
}

/* Version 2 records (docs/eph-format.md §5.4), each against the previous one of the chunk. */
static eph_status dec_records(dec *d) {
  eph_file *p = d->b->p;
  ephf_builder *b = d->b;
  /* With a sink, the chunk's records are gathered apart and handed over. */
  eph_record **out = b->sink ? &b->chunk_records : &p->records;
  size_t nout = b->sink ? 0 : p->nrecords;
  ephf_cursor *cur = &d->c;
  ephf_rec_ctx ctx;
  ephf_rec_ctx_reset(&ctx);
  for (size_t i = 0; cur->pos < cur->len; i++) {
    eph_record r;
    memset(&r, 0, sizeof r);
    uint8_t head, ext = 0;
    uint64_t cls, site, wbits = ctx.weight_bits;
    if (!ephf_get_u8(cur, &head)) return bad_read(d, "record", i);
    if ((head & EPHF_REC_EXT) && !ephf_get_u8(cur, &ext)) return bad_read(d, "record", i);
    if (ext & EPHF_REC_EXT_RESERVED)
      return bad(d, "record %zu of the chunk: reserved bits 0x%02x in the extension byte", i, ext);
    unsigned kind = ext & EPHF_REC_EXT_KIND_MASK ? ext & EPHF_REC_EXT_KIND_MASK : ctx.kind;
    if (kind < EPH_DEATH_FINALIZED || kind > EPH_DEATH_FREED)
      return bad(d, "record %zu of the chunk: death kind %u is not one of 1..6%s", i, kind,
                 kind ? "" : " (the chunk's first record must give one)");
    r.death_kind = (uint8_t)kind;
    if (ext & EPHF_REC_EXT_WEIGHT_INT) {
      uint64_t wi;
      if (!(ext & EPHF_REC_EXT_WEIGHT))
        return bad(d, "record %zu of the chunk: integer-weight bit without a weight (extension byte 0x%02x)", i, ext);
      if (!ephf_get_uvarint(cur, &wi)) return bad_read(d, "record", i);
      double wt = (double)wi;
      memcpy(&wbits, &wt, sizeof wbits);
    } else if ((ext & EPHF_REC_EXT_WEIGHT) && !ephf_get_u64(cur, &wbits)) {
      return bad_read(d, "record", i);
    }
    memcpy(&r.weight, &wbits, sizeof r.weight);
    if (!ephf_get_uvarint(cur, &cls)) return bad_read(d, "record", i);
    ephf_rec_cache *e = &ctx.cache[cls % EPHF_REC_CACHE_SIZE];
    if (head & EPHF_REC_CACHED) {
      if (e->class_id != cls)
        return bad(d, "record %zu of the chunk: cached site and size of class %llu, which no earlier record of the "
                   "chunk has", i, (unsigned long long)cls);
      site = e->site_id;
      r.size = e->size;
    } else if (!ephf_get_uvarint(cur, &site) || !ephf_get_uvarint(cur, &r.size)) {
      return bad_read(d, "record", i);
    }
    if (!ephf_get_delta(cur, ctx.birth.bytes, &r.birth.bytes) ||
        !ephf_get_delta(cur, ctx.birth.wall_ns, &r.birth.wall_ns))
      return bad_read(d, "record", i);
    if (head & EPHF_REC_BIRTH_GCS) {
      if (!get_counts(cur, &ctx.birth, &r.birth)) return bad_read(d, "record", i);
    } else {
      r.birth.scavenges = ctx.birth.scavenges;
      r.birth.full_gcs = ctx.birth.full_gcs;
    }
    if (head & EPHF_REC_ID_BIRTH) r.id = r.birth.bytes;
    else if (!ephf_get_delta(cur, ctx.id, &r.id)) return bad_read(d, "record", i);
    switch (head & EPHF_REC_DEATH_MASK) {
      case EPHF_REC_DEATH_SAME: r.death = ctx.death; break;
      case EPHF_REC_DEATH_WALL:
        r.death = ctx.death;
        if (!ephf_get_delta(cur, ctx.death.wall_ns, &r.death.wall_ns)) return bad_read(d, "record", i);
        break;
      case EPHF_REC_DEATH_BIRTH:
        if (!get_stamp(cur, &r.birth, &r.death)) return bad_read(d, "record", i);
        break;
      default:
        if (!get_stamp(cur, &ctx.death, &r.death)) return bad_read(d, "record", i);
        break;
    }
    switch (head & EPHF_REC_AU_MASK) {
      case EPHF_REC_AU_DEATH: r.alive_until = r.death; break;
      case EPHF_REC_AU_BIRTH: r.alive_until = r.birth; break;
      case EPHF_REC_AU_BASE: r.alive_until = ctx.au_base; break;
      default:
        if (!get_stamp(cur, &r.birth, &r.alive_until)) return bad_read(d, "record", i);
        ctx.au_base = r.alive_until;
        break;
    }
    /* The whole item is read: check it, naming its id. */
    if (!class_defined(b, cls))
      return bad(d, "record %zu of the chunk (id %llu): class %llu is not defined", i, (unsigned long long)r.id,
                 (unsigned long long)cls);
    if (!site_defined(b, site))
      return bad(d, "record %zu of the chunk (id %llu): site %llu is not defined", i, (unsigned long long)r.id,
                 (unsigned long long)site);
    if (!isfinite(r.weight) || r.weight < 0)
      return bad(d, "record %zu of the chunk (id %llu): weight is not a finite non-negative number", i,
                 (unsigned long long)r.id);
    r.class_id = (uint32_t)cls;
    r.site_id = (uint32_t)site;
    if (!(head & EPHF_REC_CACHED)) {
      e->class_id = r.class_id;
      e->site_id = r.site_id;
      e->size = r.size;
    }
    if (!ephf_grow((void **)out, &b->cap_records, sizeof **out, nout + 1)) return EPH_ERR_NOMEM;
    (*out)[nout++] = r;
    ctx.id = r.id;
    ctx.birth = r.birth;
    ctx.death = r.death;
    ctx.weight_bits = wbits;
    ctx.kind = kind;
  }
  if (!b->sink) {
    p->nrecords = nout;
  } else {
    if (nout && !b->sink->fn(b->sink->ctx, b->chunk_records, nout)) return EPH_ERR_NOMEM;
    p->nrecords += nout;
  }
  return EPH_OK;
}

/* --- GCS and EVENTS ------------------------------------------------------------------- */

static eph_status dec_gcs(dec *d) {
  eph_file *p = d->b->p;
  uint64_t prev_index = 0, prev_start = 0, prev_alloc = 0;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    eph_gc_event g;
    memset(&g, 0, sizeof g);
    uint8_t kind;
    if (!ephf_get_u8(&d->c, &kind)) return bad_read(d, "gc", i);
    if (kind > EPH_GC_FULL) return bad(d, "gc %zu of the chunk: kind %u is not 0 (scavenge) or 1 (full)", i, kind);
    g.kind = kind == EPH_GC_FULL ? EPH_GC_FULL : EPH_GC_SCAVENGE;
    if (!ephf_get_delta(&d->c, prev_index, &g.index) || !ephf_get_delta(&d->c, prev_start, &g.start_ns) ||
        !ephf_get_uvarint(&d->c, &g.duration_ns) || !ephf_get_uvarint(&d->c, &g.cpu_ns) ||
        !ephf_get_delta(&d->c, prev_alloc, &g.allocated) || !ephf_get_uvarint(&d->c, &g.used_before) ||
        !ephf_get_uvarint(&d->c, &g.used_after) || !ephf_get_uvarint(&d->c, &g.bytes_copied) ||
        !ephf_get_uvarint(&d->c, &g.bytes_promoted) || !ephf_get_uvarint(&d->c, &g.bytes_compacted) ||
        !ephf_get_uvarint(&d->c, &g.old_committed) || !ephf_get_uvarint(&d->c, &g.ephemerons_mourned))
      return bad_read(d, "gc", i);
    if (!ephf_grow((void **)&p->gcs, &d->b->cap_gcs, sizeof *p->gcs, p->ngcs + 1)) return EPH_ERR_NOMEM;
    p->gcs[p->ngcs++] = g;
    prev_index = g.index;
    prev_start = g.start_ns;
    prev_alloc = g.allocated;
  }
  return EPH_OK;
}

static eph_status dec_events(dec *d) {
  eph_file *p = d->b->p;
  uint64_t prev_time = 0, prev_obj = 0;
  for (size_t i = 0; d->c.pos < d->c.len; i++) {
    eph_event e;
    memset(&e, 0, sizeof e);
    uint8_t head;
    if (!ephf_get_u8(&d->c, &head)) return bad_read(d, "event", i);
    unsigned kind = head & EPHF_EV_KIND_MASK;
    if (kind < EPH_EV_ALLOC || kind > EPH_EV_TICK)
      return bad(d, "event %zu of the chunk: kind %u is not one of 1..6", i, kind);
    e.kind = (uint8_t)kind;
    if (!ephf_get_delta(&d->c, prev_time, &e.time)) return bad_read(d, "event", i);
    if (head & EPHF_EV_HAS_OBJ) {
      if (!ephf_get_delta(&d->c, prev_obj, &e.obj)) return bad_read(d, "event", i);
      prev_obj = e.obj;
    }
    if (((head & EPHF_EV_HAS_A) && !ephf_get_uvarint(&d->c, &e.a)) ||
        ((head & EPHF_EV_HAS_B) && !ephf_get_uvarint(&d->c, &e.b)) ||
        ((head & EPHF_EV_HAS_C) && !ephf_get_uvarint(&d->c, &e.c)))
      return bad_read(d, "event", i);
    if (kind == EPH_EV_ALLOC && !class_defined(d->b, e.a))
      return bad(d, "event %zu of the chunk: alloc of class %llu, which is not defined", i, (unsigned long long)e.a);
    if (kind == EPH_EV_ALLOC && !site_defined(d->b, (uint32_t)e.c)) /* c = site | format << 32 */
      return bad(d, "event %zu of the chunk: alloc at site %llu, which is not defined", i, (unsigned long long)e.c);
    if (kind == EPH_EV_GC && (e.a > EPH_GC_FULL || e.b > 1))
      return bad(d, "event %zu of the chunk: gc event with kind %llu and phase %llu (both must be 0 or 1)", i,
                 (unsigned long long)e.a, (unsigned long long)e.b);
    if (!ephf_grow((void **)&p->events, &d->b->cap_events, sizeof *p->events, p->nevents + 1))
      return EPH_ERR_NOMEM;
    p->events[p->nevents++] = e;
    prev_time = e.time;
  }
  return EPH_OK;
}

/* --- CLOSE ------------------------------------------------------------------------------ */

static eph_status dec_close(dec *d) {
  eph_totals *t = &d->b->p->totals;
  uint64_t *fields[] = {&t->wall_ns,   &t->cpu_ns,  &t->gc_wall_ns, &t->bytes_allocated, &t->objects_allocated,
                        &t->records,   &t->censored, &t->scavenges, &t->full_gcs,        &t->peak_heap};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (!ephf_get_uvarint(&d->c, fields[i])) return bad(d, "totals field %zu: %s", i, d->c.bad);
  if (d->c.pos != d->c.len) return bad(d, "%zu bytes after the totals", d->c.len - d->c.pos);
  return EPH_OK;
}

eph_status ephf_decode_chunk(ephf_builder *b, uint32_t type, const uint8_t *payload, size_t len, char *detail,
                             size_t detail_len) {
  dec d = {b, {payload, len, 0, NULL}, detail, detail_len};
  switch (type) {
    case EPHF_CHUNK_META: return dec_meta(&d);
    case EPHF_CHUNK_CLASSES: return dec_classes(&d);
    case EPHF_CHUNK_SITES: return dec_sites(&d);
    case EPHF_CHUNK_RECORDS: return dec_records(&d);
    case EPHF_CHUNK_GCS: return dec_gcs(&d);
    case EPHF_CHUNK_EVENTS: return dec_events(&d);
    case EPHF_CHUNK_CLOSE: return dec_close(&d);
    case EPHF_CHUNK_STACKS: return dec_stacks(&d);
  }
  return EPH_OK;
}

/* --- checking a chunk before it is written ------------------------------------------- */

static bool drop_records(void *ctx, const eph_record *records, size_t n) {
  (void)ctx, (void)records, (void)n;
  return true;
}

eph_status ephf_check_chunk(ephf_builder *b, uint32_t type, const uint8_t *payload, size_t len, char *detail,
                            size_t detail_len) {
  static const eph_record_sink drop = {drop_records, NULL};
  if (!b->p && !(b->p = calloc(1, sizeof *b->p))) return EPH_ERR_NOMEM;
  b->sink = &drop;
  eph_status st = ephf_decode_chunk(b, type, payload, len, detail, detail_len);
  b->p->nrecords = b->p->ngcs = b->p->nevents = 0; /* the arrays stay, for the next chunk */
  return st;
}

void ephf_check_free(ephf_builder *b) {
  if (b->p) {
    free(b->p->gcs);
    free(b->p->events);
    free(b->p);
  }
  free(b->chunk_records);
  *b = (ephf_builder){0};
}
