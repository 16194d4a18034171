/*
 * format_internal.h — shared pieces of the .eph writer and reader:
 * constants of the byte layout (docs/eph-format.md), growable byte buffers,
 * little-endian integers, LEB128 varints and the chunk framing.
 *
 * Internal names start with `ephf_` (the library also holds the heap and
 * the profiler).
 */
#ifndef EPH_FORMAT_INTERNAL_H
#define EPH_FORMAT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"

/* The chunks' CRC-32 (zlib's, PNG's: docs/eph-format.md), computed with
 * ISA-L, which gives the same value as zlib's crc32 many times faster. */
uint32_t ephf_crc32(const void *data, size_t len);

/* --- the byte layout ------------------------------------------------------- */

#define EPHF_MAGIC "EPHEMERA"
#define EPHF_MAGIC_LEN 8
#define EPHF_FILE_HEADER_LEN 16  /* magic, version u32, flags u32 */
#define EPHF_FILE_FLAG_COMPRESS 1u /* informational: the writer deflated its chunks */

#define EPHF_CHUNK_HEADER_LEN 24 /* type, flags, stored, raw, payload crc, header crc */
#define EPHF_CHUNK_FLAG_DEFLATE 1u
#define EPHF_CHUNK_MAX ((uint32_t)1 << 24) /* 16 MiB: stored and raw payload limit */
#define EPHF_CHUNK_TARGET ((size_t)64 << 10) /* writers flush a chunk at 64 KiB */
/* deflate cannot expand more than 1032:1; a larger claimed raw size is a lie. */
#define EPHF_DEFLATE_MAX_RATIO 1032u

/* Chunk types: four ASCII bytes, read as a little-endian u32. */
#define EPHF_FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define EPHF_CHUNK_META EPHF_FOURCC('M', 'E', 'T', 'A')
#define EPHF_CHUNK_CLASSES EPHF_FOURCC('C', 'L', 'A', 'S')
#define EPHF_CHUNK_SITES EPHF_FOURCC('S', 'I', 'T', 'E')
#define EPHF_CHUNK_RECORDS EPHF_FOURCC('R', 'E', 'C', 'S')
#define EPHF_CHUNK_GCS EPHF_FOURCC('G', 'C', 'E', 'V')
#define EPHF_CHUNK_EVENTS EPHF_FOURCC('E', 'V', 'T', 'S')
#define EPHF_CHUNK_CLOSE EPHF_FOURCC('C', 'L', 'O', 'S')
#define EPHF_CHUNK_STACKS EPHF_FOURCC('S', 'T', 'A', 'K') /* call stacks of sites (a table, like SITE) */

/*
 * Records (version 2, docs/eph-format.md §5.4): a head byte, an optional
 * extension byte, then the fields the head does not make implicit.  Each
 * item is coded against the previous record of its chunk (ephf_rec_ctx).
 */
#define EPHF_REC_DEATH_MASK 0x03u  /* how death is stored: */
#define EPHF_REC_DEATH_SAME 0x00u  /*   = the previous record's death */
#define EPHF_REC_DEATH_WALL 0x01u  /*   the previous death but wall_ns: delta */
#define EPHF_REC_DEATH_BIRTH 0x02u /*   stamp delta from this record's birth */
#define EPHF_REC_DEATH_PREV 0x03u  /*   stamp delta from the previous death */
#define EPHF_REC_AU_MASK 0x0cu     /* how alive_until is stored: */
#define EPHF_REC_AU_DEATH 0x00u    /*   = death */
#define EPHF_REC_AU_BIRTH 0x04u    /*   = birth */
#define EPHF_REC_AU_BASE 0x08u     /*   = the last stored alive_until of the chunk */
#define EPHF_REC_AU_STORED 0x0cu   /*   stamp delta from birth (becomes the base) */
#define EPHF_REC_ID_BIRTH 0x10u    /* id == birth.bytes, not stored */
#define EPHF_REC_CACHED 0x20u      /* site and size from the class's cache entry */
#define EPHF_REC_BIRTH_GCS 0x40u   /* birth's two collection counts are stored */
#define EPHF_REC_EXT 0x80u         /* an extension byte follows */
/* Extension byte. */
#define EPHF_REC_EXT_KIND_MASK 0x07u /* 1..6: the death kind; 0: the previous record's */
#define EPHF_REC_EXT_WEIGHT 0x08u    /* a weight is stored (else the previous record's) */
#define EPHF_REC_EXT_WEIGHT_INT 0x10u /* ... as a uvarint, not 8 raw bytes */
#define EPHF_REC_EXT_RESERVED 0xe0u

/* The site and size cache: entry class_id % EPHF_REC_CACHE_SIZE. */
#define EPHF_REC_CACHE_SIZE 256u
#define EPHF_REC_CACHE_EMPTY UINT32_MAX /* never a valid class id */

typedef struct ephf_rec_cache {
  uint32_t class_id, site_id;
  uint64_t size;
} ephf_rec_cache;

/* What a record is coded against: the previous record of the chunk. */
typedef struct ephf_rec_ctx {
  uint64_t id;
  eph_stamp birth, death;
  eph_stamp au_base;    /* the last alive_until stored explicitly */
  uint64_t weight_bits; /* the previous weight, bit for bit */
  unsigned kind;        /* 0 before the first record */
  ephf_rec_cache cache[EPHF_REC_CACHE_SIZE];
} ephf_rec_ctx;

/* The context at the start of a chunk: all zero, the cache empty. */
void ephf_rec_ctx_reset(ephf_rec_ctx *c);

/* Event head byte. */
#define EPHF_EV_KIND_MASK 0x0fu
#define EPHF_EV_HAS_OBJ 0x10u
#define EPHF_EV_HAS_A 0x20u
#define EPHF_EV_HAS_B 0x40u
#define EPHF_EV_HAS_C 0x80u

/* Largest encodings of one item (for reserving buffer space). */
#define EPHF_VARINT_MAX 10
/* head, ext, weight, class, site, size, birth, id, death, alive_until */
#define EPHF_RECORD_MAX (2 + EPHF_VARINT_MAX + 5 + 5 + EPHF_VARINT_MAX + 4 * EPHF_VARINT_MAX + EPHF_VARINT_MAX + \
                         2 * 4 * EPHF_VARINT_MAX)
#define EPHF_GC_MAX (1 + 12 * EPHF_VARINT_MAX)
#define EPHF_EVENT_MAX (1 + 5 * EPHF_VARINT_MAX)

/* Name of a chunk type for messages ("RECORDS"), or NULL if unknown. */
const char *ephf_chunk_name(uint32_t type);

/* --- growable byte buffers (plain malloc) ------------------------------------ */

typedef struct ephf_buf {
  uint8_t *p;
  size_t len, cap;
} ephf_buf;

/* Makes room for n more bytes; false if memory ran out. */
bool ephf_buf_reserve(ephf_buf *b, size_t n);
void ephf_buf_free(ephf_buf *b);

/* Appends without checking capacity (reserve first).  Inline: the writer's hot path. */
static inline void ephf_put_u8(ephf_buf *b, uint8_t v) { b->p[b->len++] = v; }

static inline void ephf_put_uvarint(ephf_buf *b, uint64_t v) {
  uint8_t *p = b->p + b->len;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  b->len = (size_t)(p - b->p);
}

/* *to = *from, a word at a time.  The profiler stores a stamp a word at a
 * time just before handing it over, and a 16-byte load over two 8-byte
 * stores still in the store buffer cannot be forwarded from them: it waits
 * for them to retire (a tenth of the program's thread on sph in
 * finalization mode, where the records are queued for the writer thread). */
static inline void ephf_copy_stamp(eph_stamp *to, const eph_stamp *from) {
  uint64_t bytes = from->bytes, wall_ns = from->wall_ns;
  uint32_t scavenges = from->scavenges, full_gcs = from->full_gcs;
  __asm__("" : "+r"(bytes), "+r"(wall_ns)); /* keeps the compiler from merging the loads again */
  *to = (eph_stamp){.bytes = bytes, .wall_ns = wall_ns, .scavenges = scavenges, .full_gcs = full_gcs};
}

/* Zigzag code of the wrapping difference v - base: small for v near base. */
static inline uint64_t ephf_zigzag(uint64_t v, uint64_t base) {
  uint64_t d = v - base;
  return (d << 1) ^ (0 - (d >> 63));
}

/* Zigzag varint of the wrapping difference v - base. */
static inline void ephf_put_delta(ephf_buf *b, uint64_t v, uint64_t base) { ephf_put_uvarint(b, ephf_zigzag(v, base)); }

/*
 * The same into a raw pointer, returning the end: the record writer keeps
 * its position in a register instead of storing b->len after every byte
 * (byte stores may alias it).  The caller has reserved the room.
 */
static inline uint8_t *ephf_w_uvarint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline uint8_t *ephf_w_delta(uint8_t *p, uint64_t v, uint64_t base) {
  return ephf_w_uvarint(p, ephf_zigzag(v, base));
}

/* Bytes in the uvarint of v (1..10): a table by leading zeros, since the
 * record writer sizes four of them for every death it must store. */
static inline unsigned ephf_uvarint_size(uint64_t v) {
  static const uint8_t by_clz[64] = {10, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
  return by_clz[__builtin_clzll(v | 1)];
}

void ephf_put_u32(ephf_buf *b, uint32_t v);
void ephf_put_u64(ephf_buf *b, uint64_t v);
void ephf_put_bytes(ephf_buf *b, const void *p, size_t n);
/* uvarint length + bytes. */
void ephf_put_string(ephf_buf *b, const char *s, size_t n);
size_t ephf_uvarint_len(uint64_t v);

void ephf_store_u32(uint8_t *p, uint32_t v);
uint32_t ephf_load_u32(const uint8_t *p);
uint64_t ephf_load_u64(const uint8_t *p);

/* --- bounded reading ------------------------------------------------------------ */

/*
 * A cursor over one payload.  Every get checks the remaining length and
 * returns false (with `bad` describing the problem) rather than read past it.
 */
typedef struct ephf_cursor {
  const uint8_t *p;
  size_t len, pos;
  const char *bad; /* static text: what went wrong */
} ephf_cursor;

bool ephf_get_u8(ephf_cursor *c, uint8_t *out);
bool ephf_get_u64(ephf_cursor *c, uint64_t *out);
bool ephf_get_uvarint(ephf_cursor *c, uint64_t *out);
/* The inverse of ephf_put_delta. */
bool ephf_get_delta(ephf_cursor *c, uint64_t base, uint64_t *out);
/* A string: points into the payload (not NUL-terminated); rejects NUL bytes. */
bool ephf_get_string(ephf_cursor *c, const char **s, size_t *n);

/* --- chunk framing ---------------------------------------------------------------- */

/*
 * Fills the 24-byte chunk header at hdr for a payload of stored_len bytes at
 * payload (raw_len before compression).
 */
void ephf_chunk_header(uint8_t *hdr, uint32_t type, uint32_t flags, const uint8_t *payload, uint32_t stored_len,
                       uint32_t raw_len);

/* --- reading into an eph_file ---------------------------------------------- */

/* A profile being read, with the capacities of its growing arrays. */
typedef struct ephf_builder {
  eph_file *p;
  size_t cap_meta, cap_classes, cap_sites, cap_records, cap_gcs, cap_events, cap_stacks;
  const eph_record_sink *sink; /* records go there, a chunk at a time, through chunk_records */
  eph_record *chunk_records;
  /* Not NULL: the classes and sites declared, as the writer's bitmaps (bit
   * id set: declared), in place of p's tables (a writer checking a chunk
   * before it seals it: ephf_check_chunk). */
  const uint64_t *class_bits, *site_bits;
  size_t class_words, site_words;
} ephf_builder;

/*
 * Decodes one known chunk's (decompressed) payload into b->p.  Returns
 * EPH_OK, EPH_ERR_NOMEM, or EPH_ERR_INVALID with what is wrong in detail.
 */
eph_status ephf_decode_chunk(ephf_builder *b, uint32_t type, const uint8_t *payload, size_t len, char *detail,
                             size_t detail_len);

/*
 * Checks a data chunk's payload (RECORDS, GCS or EVENTS) as the reader will,
 * against the classes and sites of the bitmaps: the same decoder, its
 * items dropped.  b is kept between calls (its arrays reused; zero it
 * first, free it with ephf_check_free).  Returns EPH_OK, EPH_ERR_NOMEM, or
 * EPH_ERR_INVALID with what is wrong in detail.
 */
eph_status ephf_check_chunk(ephf_builder *b, uint32_t type, const uint8_t *payload, size_t len, char *detail,
                            size_t detail_len);
void ephf_check_free(ephf_builder *b);

/* Grows *arr (elements of elem bytes, capacity *cap) to hold n; false if out of memory. */
bool ephf_grow(void **arr, size_t *cap, size_t elem, size_t n);
/* The same for tables indexed by id (sparse ones stay cheap). */
bool ephf_grow_table(void **arr, size_t *cap, size_t elem, size_t n);

#endif
