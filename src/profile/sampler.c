/*
 * sampler.c — which allocations get a record, and what each stands for:
 * the gaps of src/sampling/sampling.h applied to the heap.
 *
 * The heap calls on_alloc only at sample points (observer.h), so unsampled
 * allocations keep the inline fast path: for 1/N and every:N the heap
 * counts a gap of allocations down, for bytes:B a gap of bytes.  With a
 * class filter the profiler sees every allocation and applies the gaps to
 * the filtered classes only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

static uint64_t exponential_gap(eph_profiler *p) { return ephs_byte_gap(&p->rng, p->spec.sample_bytes); }

static uint64_t count_gap(eph_profiler *p) {
  return ephs_count_gap(&p->rng, p->spec.sample_every, p->spec.sample_fixed);
}

void prof_sampler_arm(eph_profiler *p) {
  if (p->spec.sample_bytes)
    eph_observer_sample_next(p->h, p->obs, 0, exponential_gap(p));
  else if (p->spec.classes[0]) {
    eph_observer_sample_next(p->h, p->obs, 1, 0);
    p->filtered_count = count_gap(p);
  } else
    eph_observer_sample_next(p->h, p->obs, count_gap(p), 0);
}

/* The exact modes (merlin, brute) see every allocation, whatever the spec's rate. */
void prof_sampler_arm_every(eph_profiler *p) { eph_observer_sample_next(p->h, p->obs, 1, 0); }

/* Resolves cls against the filter by name and caches the answer: classes
 * may be registered after the profiler starts. */
static __attribute__((noinline)) bool class_lookup(eph_profiler *p, eph_class_id cls) {
  if (cls >= p->class_state_len) {
    size_t len = (size_t)cls * 2 + 16;
    uint8_t *st = realloc(p->class_state, len);
    if (!st) return false;
    memset(st + p->class_state_len, 0, len - p->class_state_len);
    p->class_state = st;
    p->class_state_len = len;
  }
  const char *name = eph_class_name(p->h, cls);
  size_t n = name ? strlen(name) : 0;
  bool found = false;
  for (const char *c = p->spec.classes, *at; name && *c && !found;) {
    size_t len;
    at = c, c = prof_class_list_next(c, &len);
    found = len == n && !strncmp(at, name, n);
  }
  p->class_state[cls] = found ? 1 : 2;
  return found;
}

/* Is class cls in the filter?  Inline for the common cases (no filter, a
 * class seen before): at 100 % sampling it runs at every allocation, and
 * the lookup's frame cost 19 instructions a call on sph. */
static inline bool class_selected(eph_profiler *p, eph_class_id cls) {
  int known = prof_sampler_class_state(p, cls);
  return known ? known == 1 : class_lookup(p, cls);
}

/* A count sample among the allocations that count: the selected ones
 * (with a class filter, the gaps run over the filtered classes only). */
static bool take_counted(eph_profiler *p, bool selected) {
  if (!selected || --p->filtered_count != 0) return false;
  p->filtered_count = count_gap(p);
  return true;
}

bool prof_sampler_take(eph_profiler *p, eph_value obj) {
  bool selected = class_selected(p, eph_class_of(obj));
  if (p->spec.sample_bytes) {
    eph_observer_sample_next(p->h, p->obs, 0, exponential_gap(p));
    return selected;
  }
  if (p->spec.classes[0]) return take_counted(p, selected);
  /* 1/1 keeps the heap's countdown at 1: nothing to re-arm */
  if (p->spec.sample_every > 1) eph_observer_sample_next(p->h, p->obs, count_gap(p), 0);
  return selected;
}

#define WALK_MAX_N 8 /* 1/N with N up to this: most allocations are samples */

/* Should gc mode walk eden (gc_eden.c) instead of taking sample points?
 * When every allocation would be one anyway (1/1, or a class filter,
 * which sees every allocation), or most would: gaps of WALK_MAX_N or less.
 * Not for fixed gaps (every:N keeps exactly every N-th allocation, and
 * the walk meets old-space allocations out of order; every:1 is how to
 * ask for sample points at 100 %) nor byte sampling. */
bool prof_sampler_walks(const eph_profiler *p) {
  const eph_profile_spec *s = &p->spec;
  return !s->sample_bytes && !s->sample_fixed && (s->sample_every <= WALK_MAX_N || s->classes[0]);
}

/* The walk's sampler: the same process as the sample points' (each
 * allocation of a selected class kept with probability 1/N), drawn per
 * object by prof_sampler_walk_draw.  A draw per object, not a geometric gap
 * per sample: a gap costs a log(), which at 1/2 made the walk dearer than
 * at 1/1; and a hash, not a stream, so that two threads can share the
 * walk (gc_eden.c). */
void prof_sampler_walk_arm(eph_profiler *p) {
  uint64_t n = p->spec.sample_every;
  p->walk_threshold = n > 1 ? UINT64_MAX / n : UINT64_MAX;
  p->walk_salt = ephs_next_u64(&p->rng);
}

bool prof_sampler_take_walked(eph_profiler *p, eph_class_id cls, uint64_t clock) {
  return p->take_all || (class_selected(p, cls) && prof_sampler_walk_draw(p, clock));
}

