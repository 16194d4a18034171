/*
 * sampler.c — which objects get a record, and what each stands for: the
 * gaps of the sampling core (src/sampling/sampling.h), the same as the
 * heap's profiler, on the byte clock of the runtime's allocations.  The
 * adapter counts the countdown down (rt_sample_due: by 1 or by the size)
 * and calls rt_sampler_next only when it runs out (the object is a
 * sample); the weight is computed when the record is written (rt_weight).
 */
#include "runtime/adapter.h"

static int64_t exponential_gap(rt_session *s) { return (int64_t)ephs_byte_gap(&s->rng, s->opt.sample_bytes); }

static int64_t count_gap(rt_session *s) {
  return (int64_t)ephs_count_gap(&s->rng, s->opt.sample_every, s->opt.sample_fixed);
}

void rt_sampler_init(rt_session *s) {
  ephs_rng_init(&s->rng, s->opt.seed ? s->opt.seed * UINT64_C(0x9E3779B97F4A7C15) : UINT64_C(0x9E3779B97F4A7C15));
  s->by_bytes = s->opt.sample_bytes != 0;
  uint64_t n = s->opt.sample_every;
  s->countdown = s->by_bytes ? exponential_gap(s) : count_gap(s);
  s->fixed_gap = !s->by_bytes && (n <= 1 || s->opt.sample_fixed) ? (n ? (int64_t)n : 1) : 0;
  s->count_weight = (double)n;
}

void rt_sampler_rearm(rt_session *s) { s->countdown = s->by_bytes ? exponential_gap(s) : count_gap(s); }
