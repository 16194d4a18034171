/*
 * ephemera/value.h — one-word values and the object header.
 *
 * A value is one machine word:
 *
 *   ...xxxxxxx1   small integer (63 bits, two's complement, shifted left by one)
 *   0000...0000   nil (all-zero memory is a heap of nils)
 *   0000...0010   false
 *   0000...0110   true
 *   ...xxxxx000   pointer to an object header (8-byte aligned, never zero)
 *
 * Every other bit pattern is invalid; the verifier rejects it in a slot.
 *
 * An object is a one-word header followed by its payload: pointer slots
 * (each a value) or raw bytes.  Header layout, low bit first:
 *
 *   bit  0      forwarded (only during a collection: then the whole word is
 *               the new address | 1)
 *   bit  1      remembered (old object in the remembered set)
 *   bit  2      mourned (ephemerons: the key died; now an ordinary strong object)
 *   bit  3      reserved for the collector
 *   bits 4-7    age: scavenges survived, saturating at 15
 *   bits 8-11   format (eph_format)
 *   bits 12-31  class index (20 bits)
 *   bits 32-63  payload size in bytes
 */
#ifndef EPHEMERA_VALUE_H
#define EPHEMERA_VALUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define EPH_LIKELY(x) __builtin_expect(!!(x), 1)
#define EPH_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define EPH_LIKELY(x) (x)
#define EPH_UNLIKELY(x) (x)
#endif

typedef uintptr_t eph_value;
typedef uint64_t eph_header;
typedef uint32_t eph_class_id;

#define EPH_NIL ((eph_value)0)
#define EPH_FALSE ((eph_value)0x2)
#define EPH_TRUE ((eph_value)0x6)

#define EPH_INT_MAX (INTPTR_MAX >> 1)
#define EPH_INT_MIN (INTPTR_MIN >> 1)

/* Object formats.  The format is fixed per class at registration. */
typedef enum eph_format {
  EPH_FORMAT_POINTERS = 0,  /* payload is eph_value slots, traced */
  EPH_FORMAT_BYTES = 1,     /* payload is raw bytes, never traced */
  EPH_FORMAT_EPHEMERON = 2, /* key, value, finaliser id, user slots (ephemeron.h) */
  EPH_FORMAT_COUNT_
} eph_format;

static inline int eph_is_int(eph_value v) { return (int)(v & 1); }
static inline int eph_is_ptr(eph_value v) { return v != 0 && (v & 7) == 0; }
static inline int eph_is_nil(eph_value v) { return v == EPH_NIL; }
static inline int eph_is_bool(eph_value v) { return v == EPH_TRUE || v == EPH_FALSE; }

/* True when i is representable as a small integer. */
static inline int eph_int_fits(intptr_t i) { return i >= EPH_INT_MIN && i <= EPH_INT_MAX; }
/* Tags i; the caller checks eph_int_fits (high bits are lost otherwise). */
static inline eph_value eph_int(intptr_t i) { return ((uintptr_t)i << 1) | 1u; }
static inline intptr_t eph_int_value(eph_value v) { return (intptr_t)v >> 1; }
static inline eph_value eph_bool(int b) { return b ? EPH_TRUE : EPH_FALSE; }

/* --- header fields ------------------------------------------------------ */

#define EPH_HDR_FORWARDED ((eph_header)1u)
#define EPH_HDR_REMEMBERED ((eph_header)2u)
#define EPH_HDR_MOURNED ((eph_header)4u)
/* In the remembered set as an inert ephemeron (the heap's, src/heap/remset.c) */
#define EPH_HDR_REMEMBERED_INERT ((eph_header)8u)
#define EPH_HDR_AGE_SHIFT 4
#define EPH_HDR_AGE_MASK ((eph_header)0xFu << EPH_HDR_AGE_SHIFT)
#define EPH_HDR_FORMAT_SHIFT 8
#define EPH_HDR_CLASS_SHIFT 12
#define EPH_HDR_SIZE_SHIFT 32
#define EPH_MAX_CLASSES (1u << 20)
#define EPH_MAX_PAYLOAD_BYTES ((size_t)UINT32_MAX - 7)

static inline eph_header eph_make_header(eph_class_id cls, eph_format fmt, size_t payload_bytes) {
  return ((eph_header)payload_bytes << EPH_HDR_SIZE_SHIFT) | ((eph_header)cls << EPH_HDR_CLASS_SHIFT) |
         ((eph_header)fmt << EPH_HDR_FORMAT_SHIFT);
}

static inline eph_header *eph_header_of(eph_value obj) { return (eph_header *)obj; }

/*
 * A forwarding header (EPH_HDR_FORWARDED set: the object was copied during
 * the collection now running) holds the copy's address and, in its top 16
 * bits, the words the object occupies with its trailer: a walk over an
 * evacuated space skips a survivor without reading its copy.  Only young
 * objects are copied, smaller than 256 KiB (EPH_LARGE_OBJECT_MAX), and
 * heap addresses lie below 2^48 (the heap reserves none above).
 */
#define EPH_FWD_WORDS_SHIFT 48
static inline eph_header eph_make_forwarding(uintptr_t copy, size_t bytes) { /* bytes: a multiple of 8 */
  return (eph_header)copy | EPH_HDR_FORWARDED | (eph_header)bytes << (EPH_FWD_WORDS_SHIFT - 3);
}
static inline eph_value eph_forwarded_to(eph_header hdr) {
  return (eph_value)(hdr & ((UINT64_C(1) << EPH_FWD_WORDS_SHIFT) - 1) & ~(eph_header)7);
}
/* The bytes the object occupies with its trailer, from its forwarding
 * header alone. */
static inline size_t eph_forwarded_bytes(eph_header hdr) { return (size_t)(hdr >> EPH_FWD_WORDS_SHIFT) * 8; }
static inline eph_class_id eph_class_of(eph_value obj) {
  return (eph_class_id)((*eph_header_of(obj) >> EPH_HDR_CLASS_SHIFT) & (EPH_MAX_CLASSES - 1));
}
static inline eph_format eph_format_of(eph_value obj) {
  return (eph_format)((*eph_header_of(obj) >> EPH_HDR_FORMAT_SHIFT) & 0xF);
}
static inline unsigned eph_age_of(eph_value obj) {
  return (unsigned)((*eph_header_of(obj) & EPH_HDR_AGE_MASK) >> EPH_HDR_AGE_SHIFT);
}
/* Payload size in bytes (exact for byte objects; 8 * slots otherwise). */
static inline size_t eph_size_bytes(eph_value obj) { return (size_t)(*eph_header_of(obj) >> EPH_HDR_SIZE_SHIFT); }
/* Number of pointer slots (0 for byte objects). */
static inline size_t eph_slot_count(eph_value obj) {
  return eph_format_of(obj) == EPH_FORMAT_BYTES ? 0 : eph_size_bytes(obj) / sizeof(eph_value);
}
/* Header plus payload rounded up to a word: the bytes the object occupies
 * (from its header, or from a header already read). */
static inline size_t eph_header_object_bytes(eph_header hdr) {
  return sizeof(eph_header) + (((size_t)(hdr >> EPH_HDR_SIZE_SHIFT) + 7u) & ~(size_t)7u);
}
static inline size_t eph_object_bytes(eph_value obj) { return eph_header_object_bytes(*eph_header_of(obj)); }

/* Read slot i of a pointer object.  Stores go through eph_store (heap.h). */
static inline eph_value eph_slot(eph_value obj, size_t i) { return ((const eph_value *)(obj + sizeof(eph_header)))[i]; }
/* Payload of a byte object; valid until the next allocation or collection. */
static inline uint8_t *eph_bytes(eph_value obj) { return (uint8_t *)(obj + sizeof(eph_header)); }

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_VALUE_H */
