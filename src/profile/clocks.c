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

/* The writer's replica of the tables (eph_writer_clock_ops), for
 * Merlin's clocked records: the same code on tables of its own, grown with
 * plain realloc (the writer's thread calls these; prof_grow counts the
 * profiler's memory on the program's thread). */

static void *replica_grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  (void)ctx;
  size_t c = *cap ? *cap : 256;
  while (c < need) c += c / 2 + 1;
  void *n = realloc(items, c * size);
  if (n) *cap = c;
  return n;
}

static void *replica_start(uint64_t bytes, uint64_t wall_ns, uint32_t minor0, uint32_t major0) {
  ephs_clocks *c = calloc(1, sizeof *c);
  if (c && !ephs_clocks_init(c, (ephs_clock_alloc){replica_grow, release, NULL}, EPHS_STEPS_STRICTLY_BEFORE, bytes,
                             wall_ns, minor0, major0)) {
    free(c);
    return NULL;
  }
  return c;
}

static bool replica_point(void *c, uint64_t bytes, uint64_t wall_ns) { return ephs_clocks_point(c, bytes, wall_ns); }
static bool replica_step(void *c, uint64_t bytes, bool major) { return ephs_clocks_step(c, bytes, major); }

static eph_stamp replica_stamp(void *tables, uint64_t bytes, unsigned cache) {
  ephs_clocks *c = tables;
  return prof_stamp_in(c, bytes, &c->cache[cache]);
}

static size_t replica_memory(const void *tables) { return sizeof(ephs_clocks) + ephs_clocks_memory(tables); }

static void replica_free(void *c) {
  ephs_clocks_free(c);
  free(c);
}

static const eph_writer_clock_ops replica_ops = {replica_start, replica_point, replica_step,
                                                 replica_stamp, replica_memory, replica_free};

/* Each change to the tables goes to the writer's replica too, when it
 * keeps one, right after. */

void prof_clocks_point(eph_profiler *p, uint64_t bytes) {
  uint64_t wall = prof_wall_ns() - p->start_ns;
  ephs_clocks_point(&p->clocks, bytes, wall); /* prof_grow never fails */
  if (p->clocks_in_writer) prof_write_error(p, eph_writer_clock_point(p->out, bytes, wall));
}

void prof_clocks_start(eph_profiler *p) {
  ephs_clock_alloc alloc = {grow, release, p};
  uint64_t bytes = prof_clock(p), wall = prof_wall_ns() - p->start_ns;
  ephs_clocks_init(&p->clocks, alloc, EPHS_STEPS_STRICTLY_BEFORE, bytes, wall, p->scavenges0, p->full_gcs0);
  if (p->clocks_in_writer)
    prof_write_error(p, eph_writer_clock_start(p->out, &replica_ops, bytes, wall, p->scavenges0,
                                               p->full_gcs0));
}

void prof_clocks_note_gc(eph_profiler *p, eph_gc_kind kind, uint64_t bytes) {
  ephs_clocks_step(&p->clocks, bytes, kind != EPH_GC_SCAVENGE);
  if (p->clocks_in_writer) prof_write_error(p, eph_writer_clock_step(p->out, bytes, kind != EPH_GC_SCAVENGE));
}

void prof_clocks_before_pause(eph_profiler *p) {
  uint64_t now = prof_clock(p);
  if (now > ephs_clocks_last_bytes(&p->clocks)) prof_clocks_point(p, now);
}

void prof_clocks_after_pause(eph_profiler *p, eph_gc_kind kind) {
  uint64_t now = prof_clock(p);
  prof_clocks_note_gc(p, kind, now);
  prof_clocks_point(p, now);
}

void prof_clocks_free(eph_profiler *p) { ephs_clocks_free(&p->clocks); }
