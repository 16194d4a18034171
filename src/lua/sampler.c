/*
 * sampler.c — which Lua objects get a record, and what each stands for:
 * the gaps of the sampling core (src/sampling/sampling.h), the same as the
 * heap's profiler, on the object-byte clock of the Lua allocator.
 * The allocator decrements t->countdown (by 1 or by the size) and calls
 * lt_sampler_rearm only when it reaches zero; the weight is computed when
 * the record is written (weight_of in alloc.c).
 */
#include "ephlua.h"

static int64_t exponential_gap(lt_tracker *t) { return (int64_t)ephs_byte_gap(&t->rng, t->opt.sample_bytes); }

static int64_t count_gap(lt_tracker *t) {
  return (int64_t)ephs_count_gap(&t->rng, t->opt.sample_every, t->opt.sample_fixed);
}

void lt_sampler_init(lt_tracker *t) {
  ephs_rng_init(&t->rng, t->opt.seed ? t->opt.seed * UINT64_C(0x9E3779B97F4A7C15) : UINT64_C(0x9E3779B97F4A7C15));
  t->by_bytes = t->opt.sample_bytes != 0;
  uint64_t n = t->opt.sample_every;
  t->countdown = t->by_bytes ? exponential_gap(t) : count_gap(t);
  t->fixed_gap = !t->by_bytes && (n <= 1 || t->opt.sample_fixed) ? (n ? (int64_t)n : 1) : 0;
  t->count_weight = (double)n;
}

void lt_sampler_rearm(lt_tracker *t) { t->countdown = t->by_bytes ? exponential_gap(t) : count_gap(t); }
