/*
 * clocks.c — the profiler's side of the clock tables (src/sampling/
 * clock_table.h): it reads the wall clock, takes a point at start, one
 * whenever the allocation clock passed the gap since the last (checked at
 * sample points) and one before and after every collection (a step: its
 * two points share one byte count), and a step per collection.  A birth
 * or death counts the collections completed strictly before it.  The
 * tables grow through prof_grow: counted against the profiler, aborting
 * when out of memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "profiler.h"

uint64_t prof_wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  return prof_grow_slow(ctx, items, cap, need, size);
}

static void release(void *ctx, void *items, size_t cap, size_t size) {
  (void)ctx, (void)cap, (void)size;
  free(items);
}

void prof_clocks_point(eph_profiler *p, uint64_t bytes) {
  ephs_clocks_point(&p->clocks, bytes, prof_wall_ns() - p->start_ns); /* prof_grow never fails */
}

void prof_clocks_start(eph_profiler *p) {
  ephs_clock_alloc alloc = {grow, release, p};
  ephs_clocks_init(&p->clocks, alloc, EPHS_STEPS_STRICTLY_BEFORE, prof_clock(p), prof_wall_ns() - p->start_ns,
                   p->scavenges0, p->full_gcs0);
}

void prof_clocks_note_gc(eph_profiler *p, eph_gc_kind kind, uint64_t bytes) {
  ephs_clocks_step(&p->clocks, bytes, kind != EPH_GC_SCAVENGE);
}

void prof_clocks_free(eph_profiler *p) { ephs_clocks_free(&p->clocks); }
