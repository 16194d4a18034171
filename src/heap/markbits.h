/*
 * markbits.h — the full GC's mark bitmap and forwarding by prefix sums,
 * inline for the compactor (fullgc.c) and the observer's old-space fates
 * (observer.c).  One bit per old-space word; chunk_live_before[c] counts
 * the live words below chunk c of 64 words.
 */
#ifndef EPH_MARKBITS_H
#define EPH_MARKBITS_H

#include "heap_internal.h"

/* Baseline x86-64 has no POPCNT, and __builtin_popcountll then calls a
 * table-driven libgcc routine; this inline SWAR count is faster there. */
static inline size_t popcount64(uint64_t x) {
#if defined(__POPCNT__)
  return (size_t)__builtin_popcountll(x);
#else
  x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
  x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
  x = (x + (x >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
  return (size_t)((x * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

static inline size_t word_index(const eph_heap *h, eph_value obj) {
  return (size_t)(obj - (uintptr_t)h->old_base) / EPH_WORD;
}

static inline bool bit_is_set(const uint64_t *bits, size_t w) { return (bits[w >> 6] >> (w & 63)) & 1u; }

/* Where the live object at old-space word w goes: after the live words below it. */
static inline eph_value forward_word(const eph_heap *h, size_t w) {
  size_t chunk = w >> 6;
  uint64_t below = h->mark_bits[chunk] & ((UINT64_C(1) << (w & 63)) - 1);
  size_t live = h->chunk_live_before[chunk] + popcount64(below);
  return (eph_value)(h->old_base + live * EPH_WORD);
}

#endif /* EPH_MARKBITS_H */
