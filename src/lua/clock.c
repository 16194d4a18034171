/*
 * clock.c — the Lua adapter's side of the clock tables (src/sampling/
 * clock_table.h): a sample's birth in wall time and in GC cycles, found
 * when its record is written instead of being read and stored per object.
 *
 * A clock point is read at the first sample born after the byte clock
 * passed the table's next point (a regular gap, 64 KiB at first) and at
 * every cycle end; a cycle end is also a step.  A birth counts the cycle
 * ends at or before it: a cycle ends in a finaliser, between allocations,
 * so an object born at a cycle's byte clock came after it.  The tables live
 * in pages of their own (marks.c); if they cannot grow the profile stops
 * with an error, never a wrong stamp.
 */
#include <stdio.h>

#include "ephlua.h"

static void fail(lt_tracker *t) {
  if (!t->error[0]) snprintf(t->error, sizeof t->error, "out of memory for the clock tables");
  t->write_failed = true;
  t->detached = true;
  t->countdown = INT64_MAX;
}

/* Grows to at least `need` items, doubling from 1024. */
static void *grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  (void)ctx;
  size_t ncap = *cap ? *cap : 1024;
  while (ncap < need) ncap *= 2;
  void *n = lt_pages_grow(items, *cap * size, ncap * size);
  if (n) *cap = ncap;
  return n;
}

static void release(void *ctx, void *items, size_t cap, size_t size) {
  (void)ctx;
  lt_pages_free(items, cap * size);
}

/* A reading of the wall clock: an exact one. */
static uint64_t exact_ns(lt_tracker *t) {
  t->fine_countdown = 0;
  t->batch_reuse = 0; /* the next death reads the clock too (alloc.c, emit) */
  return lt_stamp_ns(t);
}

void lt_clock_init(lt_tracker *t) {
  ephs_clock_alloc alloc = {grow, release, t};
  if (!ephs_clocks_init(&t->clocks, alloc, EPHS_STEPS_AT_OR_BEFORE, 0, exact_ns(t), 0, 0)) fail(t);
}

void lt_clock_mark(lt_tracker *t, uint64_t bytes) {
  if (!ephs_clocks_point(&t->clocks, bytes, exact_ns(t))) fail(t);
}

uint64_t lt_clock_cycle(lt_tracker *t) {
  uint64_t now = exact_ns(t);
  if (!ephs_clocks_step(&t->clocks, t->bytes, true) || !ephs_clocks_point(&t->clocks, t->bytes, now)) fail(t);
  return now;
}

void lt_clock_free(lt_tracker *t) { ephs_clocks_free(&t->clocks); }
