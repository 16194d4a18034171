/*
 * clock.c — the adapters' side of the clock tables (src/sampling/
 * clock_table.h): a sample's birth in wall time and in GC cycles, found
 * when its record is written instead of being read and stored per object.
 *
 * A clock point is read at the first sample born after the byte clock
 * passed the table's next point (a regular gap, 64 KiB at first) and at
 * every cycle end; a cycle end is also a step.  A birth counts the cycle
 * ends at or before it: an adapter reports a cycle's end between two
 * allocations (Lua's: in a finaliser, or at the allocator call after it),
 * so an object born at a cycle's byte clock came after it.  The tables live
 * in pages of their own (marks.c); if they cannot grow the profile stops
 * with an error, never a wrong stamp.
 */
#include <stdio.h>

#include "runtime/internal.h"

static void fail(rt_session *s) {
  if (!s->error[0]) snprintf(s->error, sizeof s->error, "out of memory for the clock tables");
  s->write_failed = true;
  s->detached = true;
  s->countdown = INT64_MAX;
}

/* Grows to at least `need` items, doubling from 1024. */
static void *grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  (void)ctx;
  size_t ncap = *cap ? *cap : 1024;
  while (ncap < need) ncap *= 2;
  void *n = rt_pages_grow(items, *cap * size, ncap * size);
  if (n) *cap = ncap;
  return n;
}

static void release(void *ctx, void *items, size_t cap, size_t size) {
  (void)ctx;
  rt_pages_free(items, cap * size);
}

/* A reading of the wall clock: an exact one. */
static uint64_t exact_ns(rt_session *s) {
  s->fine_countdown = 0;
  s->batch_reuse = 0; /* the next death reads the clock too (record.c) */
  return rt_stamp_ns(s);
}

void rt_clock_init(rt_session *s) {
  ephs_clock_alloc alloc = {grow, release, s};
  if (!ephs_clocks_init(&s->clocks, alloc, EPHS_STEPS_AT_OR_BEFORE, 0, exact_ns(s), 0, 0)) fail(s);
}

void rt_clock_mark(rt_session *s, uint64_t bytes) {
  if (!ephs_clocks_point(&s->clocks, bytes, exact_ns(s))) fail(s);
}

uint64_t rt_clock_cycle(rt_session *s) {
  uint64_t now = exact_ns(s);
  if (!ephs_clocks_step(&s->clocks, s->bytes, true) || !ephs_clocks_point(&s->clocks, s->bytes, now)) fail(s);
  return now;
}

void rt_clock_free(rt_session *s) { ephs_clocks_free(&s->clocks); }
