/*
 * tests/fuzz/rng.h — the fuzzer's PRNG: xoshiro256** seeded by splitmix64.
 *
 * Self-contained on purpose: a seed must replay exactly on every machine and
 * libc, so nothing here calls rand() or reads the clock.
 */
#ifndef EPH_FUZZ_RNG_H
#define EPH_FUZZ_RNG_H

#include <stdbool.h>
#include <stdint.h>

typedef struct fz_rng {
  uint64_t s[4];
} fz_rng;

static inline uint64_t fz_splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

static inline void fz_rng_seed(fz_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = fz_splitmix64(&x);
}

static inline uint64_t fz_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t fz_next(fz_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = fz_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = fz_rotl(s[3], 45);
  return result;
}

/* Uniform in [0, n); 0 when n == 0.  (Modulo bias is irrelevant here.) */
static inline uint64_t fz_below(fz_rng *r, uint64_t n) { return n ? fz_next(r) % n : 0; }

/* True with probability num/den. */
static inline bool fz_chance(fz_rng *r, uint64_t num, uint64_t den) { return fz_below(r, den) < num; }

#endif /* EPH_FUZZ_RNG_H */
