/*
 * sampler.c — which Lua objects get a record, and what each stands for;
 * the same rules as the heap's profiler (src/profile/sampler.c):
 *   1/N      count sampling with geometric gaps of mean N between samples
 *            (a plain counter would alias with periodic allocation), each
 *            sample standing for N objects; every:N uses the fixed gap;
 *   bytes:B  points on the object-byte clock with exponential gaps of mean
 *            B: an object of s bytes is hit with probability 1-exp(-s/B)
 *            and stands for 1/(1-exp(-s/B)) objects (tcmalloc).
 * The allocator decrements t->countdown (by 1 or by the size) and calls
 * lt_sampler_rearm only when it reaches zero; the weight is computed when
 * the record is written (weight_of in alloc.c).
 */
#include <math.h>

#include "ephlua.h"

static double next_unit(lt_tracker *t) {
  uint64_t x = t->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  t->rng = x;
  return ((double)(x >> 11) + 0.5) * 0x1.0p-53; /* (0, 1) */
}

static int64_t exponential_gap(lt_tracker *t) {
  double gap = -log(next_unit(t)) * (double)t->opt.sample_bytes;
  if (gap < 1.0) return 1;
  if (gap > 9.0e18) return INT64_MAX;
  return (int64_t)gap;
}

/* Object allocations until the next count sample: geometric with mean N. */
static int64_t count_gap(lt_tracker *t) {
  uint64_t n = t->opt.sample_every;
  if (n <= 1 || t->opt.sample_fixed) return n ? (int64_t)n : 1;
  double gap = 1.0 + floor(log(next_unit(t)) / t->log_keep);
  return gap < 1.0 ? 1 : gap > 1e18 ? INT64_C(1000000000000000000) : (int64_t)gap;
}

void lt_sampler_init(lt_tracker *t) {
  t->rng = t->opt.seed ? t->opt.seed * UINT64_C(0x9E3779B97F4A7C15) : UINT64_C(0x9E3779B97F4A7C15);
  t->by_bytes = t->opt.sample_bytes != 0;
  uint64_t n = t->opt.sample_every;
  t->log_keep = n > 1 ? log1p(-1.0 / (double)n) : 0;
  t->countdown = t->by_bytes ? exponential_gap(t) : count_gap(t);
  t->fixed_gap = !t->by_bytes && (n <= 1 || t->opt.sample_fixed) ? (n ? (int64_t)n : 1) : 0;
  t->count_weight = (double)n;
}

void lt_sampler_rearm(lt_tracker *t) { t->countdown = t->by_bytes ? exponential_gap(t) : count_gap(t); }
