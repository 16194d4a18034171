/*
 * mode_brute.c — brute force: a full GC before every allocation (or
 * whenever the allocation clock crosses a multiple of granule=), so that
 * each object found dead died at the last allocation: exact deaths, at a
 * collection's cost per allocation.  The samples are tracked as in gc
 * mode, in its state (mode_gc.c); only the allocation hook differs.
 * Merlin is checked against it (tests/merlin).
 */
#include "profiler.h"

static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  eph_profiler *p = data;
  if (!prof_sampler_take(p, obj)) return;
  prof_gc_mode_track(p, obj, prof_birth(p));
  uint64_t now = prof_clock(p), g = p->spec.granule;
  if (!g || now / g != p->gc.last_brute_gc / g) {
    eph_heap_request_gc(h, EPH_GC_FULL);
    p->gc.last_brute_gc = now;
  }
}

static eph_status start(eph_profiler *p, eph_observer *obs, eph_error *err) {
  p->gc.exact = true;
  obs->on_alloc = on_alloc;
  return prof_gc_track_start(p, err);
}

/* gc mode's table but for start: no eden walk, every allocation a sample
 * point, and exact deaths. */
const prof_mode prof_mode_brute = {
    .name = "brute", .stamping = PROF_STAMP_HERE, .start = start, .arm = prof_sampler_arm_every,
    .on_gc_start = prof_clocks_before_pause, .on_collect = prof_gc_mode_collect, .on_gc_end = prof_clocks_after_pause,
    .stop = prof_gc_mode_stop, .free = prof_gc_mode_free, .memory = prof_gc_mode_memory,
};
