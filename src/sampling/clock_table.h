/*
 * clock_table.h — the clock tables shared by the heap's profiler
 * (src/profile/clocks.c) and the runtime adapters (src/runtime/clock.c): a stamp
 * in wall time and in collections for any past point of a runtime's byte
 * clock, without reading the wall clock per object.
 *
 * Two tables, both in byte-clock order:
 *   clock points  (bytes, wall ns): readings the runtime takes when its
 *                 clock passes next_point (and wherever else it wants, e.g.
 *                 around a collection's pause: a step, two points with one
 *                 byte count).  A past point gets its wall time interpolated
 *                 in the interval (a, b] of points that holds it.  Bounded:
 *                 past EPHS_CLOCK_POINTS_MAX points every other one is
 *                 dropped and the gap between readings doubles, so a long
 *                 run keeps a fixed-size table at a coarser grain.
 *   collection steps  (bytes, minor, major): one per collection, with the
 *                 counts of collections up to it.  Whether a point at a
 *                 step's own byte count is before or after that collection
 *                 is the runtime's choice (see ephs_step_rule).
 *
 * Memory comes through the runtime's allocator callback, so each keeps its
 * own growth and failure policy (the profiler's counted, aborting realloc;
 * the Lua adapter's own pages, which may fail).  Layer: sampling (needs
 * base only; docs/architecture.md).  Not thread-safe for writing; lookups
 * read the tables and write only the caller's cache.
 */
#ifndef EPH_SAMPLING_CLOCK_TABLE_H
#define EPH_SAMPLING_CLOCK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The allocator of a runtime: `grow` returns items with room for at least
 * `need` entries of `size` bytes (capacity in entries in *cap, updated),
 * or NULL leaving items and *cap as they were; `release` frees what grow
 * returned (cap entries of size bytes).  ctx is the runtime's. */
typedef struct ephs_clock_alloc {
  void *(*grow)(void *ctx, void *items, size_t *cap, size_t need, size_t size);
  void (*release)(void *ctx, void *items, size_t cap, size_t size);
  void *ctx;
} ephs_clock_alloc;

/* Which collections a point of the byte clock counts as completed. */
typedef enum ephs_step_rule {
  /* Those at a byte count strictly before it: the heap's collections run
   * inside an allocation, and the object whose allocation reached the
   * collection's byte count was allocated before it ran. */
  EPHS_STEPS_STRICTLY_BEFORE,
  /* Those at or before it: a Lua cycle ends in a finaliser, between two
   * allocations, so an object born at the cycle's byte count came after. */
  EPHS_STEPS_AT_OR_BEFORE,
} ephs_step_rule;

typedef struct ephs_clock_point { uint64_t bytes, wall_ns, slope; } ephs_clock_point; /* slope: to the next point, ns per byte, 32.32 fixed point */
typedef struct ephs_clock_step { uint64_t bytes; uint32_t minor, major; } ephs_clock_step;

/* The interval of each table last looked up, one per caller that stamps
 * points near each other (zero-initialised: empty). */
typedef struct ephs_clock_cache {
  uint64_t wall_lo, wall_span, wall_at_lo; /* the interval (wall_lo, wall_lo + wall_span] between clock points */
  uint64_t wall_slope;                     /* its ns per byte, 32.32 fixed point */
  uint64_t step_lo, step_span;             /* [step_lo, step_lo + step_span) between steps, and its counts */
  uint32_t minor, major;
  size_t step_hint; /* the last step looked up: stamps come in time order, mostly */
} ephs_clock_cache;

/* Callers that stamp points from different parts of the run keep a cache
 * each: the profiler's births and Merlin's deaths. */
#define EPHS_CLOCK_CACHES 2

typedef struct ephs_clocks {
  /* kept here so that a new step or a thinning drops what they cached; a
   * cache copied out (a second thread's) is valid while the tables stand
   * still.  First: the record paths address cache 0 and the tables alike. */
  ephs_clock_cache cache[EPHS_CLOCK_CACHES];
  ephs_clock_point *points;
  size_t npoints, points_cap;
  uint32_t *index; /* bucket of 2^shift bytes from the first point -> the last point at or before its start */
  size_t index_len, index_cap;
  unsigned shift;
  uint64_t gap;        /* bytes between regular readings */
  uint64_t next_point; /* the byte clock at which the runtime should take the next reading */
  ephs_clock_step *steps;
  size_t nsteps, steps_cap;
  uint32_t minor0, major0; /* collections before the first step */
  uint64_t step_after;     /* 1 for EPHS_STEPS_STRICTLY_BEFORE, else 0 */
  ephs_clock_alloc alloc;
} ephs_clocks;


/* A point of the byte clock, its wall time and the collections completed
 * at it (the layout of a record's stamp, so that a runtime copies it). */
typedef struct ephs_clock_stamp {
  uint64_t bytes, wall_ns;
  uint32_t minor, major;
} ephs_clock_stamp;

/* Starts empty tables with the first reading (bytes, wall_ns), readings
 * every 2^16 bytes at first, and the counts of collections before the
 * profile (minor0, major0).  Returns false when out of memory. */
bool ephs_clocks_init(ephs_clocks *c, ephs_clock_alloc alloc, ephs_step_rule rule, uint64_t bytes, uint64_t wall_ns,
                      uint32_t minor0, uint32_t major0);
/* A wall-clock reading at `bytes` (not before the last point's); sets
 * next_point.  Returns false when out of memory (the tables stay usable). */
bool ephs_clocks_point(ephs_clocks *c, uint64_t bytes, uint64_t wall_ns);
/* A collection at `bytes`: major or minor.  Returns false when out of
 * memory. */
bool ephs_clocks_step(ephs_clocks *c, uint64_t bytes, bool major);
/* Makes dst (empty, or made by an earlier call: its memory is reused) a
 * copy of what src holds for the points of the byte clock in (lo, hi]:
 * every stamp dst gives there is the one src gives, while src goes on
 * growing (or thins) on another thread.  dst's memory comes from src's
 * allocator.  Returns false when out of memory (dst is then empty). */
bool ephs_clocks_copy_range(ephs_clocks *dst, const ephs_clocks *src, uint64_t lo, uint64_t hi);
/* Frees the tables through the allocator; c is empty afterwards. */
void ephs_clocks_free(ephs_clocks *c);
/* Bytes the tables hold (not c itself). */
static inline size_t ephs_clocks_memory(const ephs_clocks *c) {
  return c->points_cap * sizeof *c->points + c->index_cap * sizeof *c->index + c->steps_cap * sizeof *c->steps;
}

static inline uint64_t ephs_clocks_last_bytes(const ephs_clocks *c) { return c->points[c->npoints - 1].bytes; }

/* The stamp of `bytes`, looking it up and keeping the intervals found in k. */
ephs_clock_stamp ephs_clocks_stamp_slow(const ephs_clocks *c, uint64_t bytes, ephs_clock_cache *k);

/* The wall time at `bytes` in k's interval: integer arithmetic, since a
 * double's conversions sat on the path of every record. */
static inline uint64_t ephs_clock_wall_in(const ephs_clock_cache *k, uint64_t bytes) {
  return k->wall_at_lo + (uint64_t)(((unsigned __int128)(bytes - k->wall_lo) * k->wall_slope) >> 32);
}

/* The stamp of a past point of the byte clock; the common case, a point in
 * the intervals last looked up with k, inline.  Records are written in
 * batches of nearby births (or deaths), so most stamps fall there. */
static inline ephs_clock_stamp ephs_clocks_stamp(const ephs_clocks *c, uint64_t bytes, ephs_clock_cache *k) {
  if (bytes - k->wall_lo - 1 < k->wall_span && bytes - k->step_lo < k->step_span)
    return (ephs_clock_stamp){bytes, ephs_clock_wall_in(k, bytes), k->minor, k->major};
  return ephs_clocks_stamp_slow(c, bytes, k);
}

#endif
