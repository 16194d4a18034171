/*
 * sampling.h — the runtime-neutral sampling core shared by the heap's
 * profiler (src/profile/sampler.c) and the runtime adapters (src/runtime/sampler.c):
 * which allocation is the next sample, and what a sample stands for.
 *
 *   1/N      count sampling: geometric gaps of mean N between samples (each
 *            allocation kept with probability 1/N), so that periodic
 *            allocation sequences do not alias with the sampler; each sample
 *            stands for N objects.  every:N uses the fixed gap N (FiLiP).
 *   bytes:B  points on the byte clock with exponential gaps of mean B (a
 *            Poisson process): an object of s bytes is hit with probability
 *            1 - exp(-s/B) and stands for the inverse (tcmalloc's unbiased
 *            estimator).
 *
 * A runtime keeps one ephs_rng per profile and asks it for gaps;
 * what a gap counts down (the heap's allocation countdown, the Lua
 * allocator's) is the runtime's business.  Layer: sampling (needs base
 * only; docs/architecture.md).  Nothing here allocates.
 */
#ifndef EPH_SAMPLING_H
#define EPH_SAMPLING_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* A xorshift64 stream and the count sampler's log(1 - 1/N). */
typedef struct ephs_rng {
  uint64_t state;  /* never 0 */
  double log_keep; /* log(1 - 1/N); 0 until the first geometric gap */
} ephs_rng;

/* Starts a stream at state (the caller's own derivation of its seed, never
 * 0: each runtime keeps the streams its files were written with). */
static inline void ephs_rng_init(ephs_rng *r, uint64_t state) {
  r->state = state;
  r->log_keep = 0.0;
}

static inline uint64_t ephs_next_u64(ephs_rng *r) {
  uint64_t x = r->state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  r->state = x;
  return x;
}

/* A uniform draw in (0, 1). */
static inline double ephs_unit(ephs_rng *r) {
  return ((double)(ephs_next_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Allocations until the next count sample: geometric with mean n, or
 * exactly n when fixed (n <= 1: every allocation).  At least 1. */
uint64_t ephs_count_gap(ephs_rng *r, uint64_t n, bool fixed);

/* Bytes until the next byte sample: exponential with mean `mean`; at least
 * 1, at most 9e18 (a gap no run reaches). */
uint64_t ephs_byte_gap(ephs_rng *r, uint64_t mean);

/* What an object of `size` bytes stands for under bytes:mean sampling:
 * 1 / (1 - exp(-size/mean)). */
static inline double ephs_byte_weight(uint64_t size, uint64_t mean) {
  return 1.0 / -expm1(-(double)size / (double)mean);
}

#endif /* EPH_SAMPLING_H */
