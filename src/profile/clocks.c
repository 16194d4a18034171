/*
 * clocks.c — a stamp in all three clocks for any past point of the
 * allocation clock, without reading the wall clock per object.
 *
 * The profiler keeps two tables, both in allocation-clock order:
 *   clock points  (bytes, wall ns): one at start, one whenever the clock
 *                 passed the gap since the last (checked at sample points),
 *                 and one before and after every collection;
 *   gc clocks     (bytes, scavenges, full GCs): one per collection.
 * A birth or death at `bytes` gets its wall time interpolated between the
 * surrounding clock points (a collection is a step: its two points share
 * one byte count) and the collections completed strictly before it.
 *
 * Clock points are bounded: past CLOCK_POINTS_MAX every other one is
 * dropped and the gap doubles, so a long run keeps a fixed-size table at
 * a coarser grain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "profiler.h"

#define CLOCK_POINT_SHIFT 16
#define CLOCK_POINT_GAP ((uint64_t)1 << CLOCK_POINT_SHIFT) /* initial bytes between wall-clock samples */
#define CLOCK_POINTS_MAX (1u << 18)   /* 6 MiB of points */

uint64_t prof_wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The bucket index: bucket k covers the clock from first point + k << shift,
 * and holds the last point at or before its start, so that a lookup is a
 * shift and a short scan (a bucket holds about one regular point, plus the
 * two of each collection in it).  Births come in any order (Merlin writes
 * records by death), so the scan must not depend on the last lookup. */
static void index_point(eph_profiler *p, size_t i) {
  uint64_t base = p->clock_points[0].bytes, b = p->clock_points[i].bytes;
  size_t last_bucket = (size_t)((b - base) >> p->clock_shift);
  p->clock_index = prof_grow(p, p->clock_index, &p->clock_index_cap, last_bucket + 1, sizeof *p->clock_index);
  for (; p->clock_index_len <= last_bucket; p->clock_index_len++) {
    uint64_t start = base + ((uint64_t)p->clock_index_len << p->clock_shift);
    p->clock_index[p->clock_index_len] = (uint32_t)(b <= start ? i : i - 1);
  }
}

/* The slope from point a to b, kept in a: records come in any order of
 * birth (a finalization profile's stop writes them in the order of its
 * ephemerons, Merlin by death), and a 128-bit division per interval
 * looked up was a fifth of such a stop. */
static void set_slope(struct clock_point *a, const struct clock_point *b) {
  uint64_t bytes = b->bytes - a->bytes;
  unsigned __int128 slope = bytes ? ((unsigned __int128)(b->wall_ns - a->wall_ns) << 32) / bytes : 0;
  a->slope = slope > UINT64_MAX ? UINT64_MAX : (uint64_t)slope; /* over 4 s a byte: never */
}

/* Halves the table: keeps the even-numbered points and the last. */
static void thin(eph_profiler *p) {
  size_t n = p->nclock_points, k = 0;
  for (size_t i = 0; i < n; i++)
    if (i % 2 == 0 || i == n - 1) p->clock_points[k++] = p->clock_points[i];
  p->nclock_points = k;
  for (size_t i = 0; i + 1 < k; i++) set_slope(&p->clock_points[i], &p->clock_points[i + 1]);
  p->clock_gap *= 2;
  p->clock_shift++;
  p->clock_index_len = 0;
  for (size_t i = 0; i < k; i++) index_point(p, i);
  p->clock_cache[0].wall_span = p->clock_cache[1].wall_span = 0; /* the cached intervals may be gone */
}

void prof_clocks_point(eph_profiler *p, uint64_t bytes) {
  /* bounded: at most CLOCK_POINTS_MAX points, and 4x as many buckets */
  if (p->nclock_points >= CLOCK_POINTS_MAX) thin(p);
  while (p->nclock_points && bytes > p->clock_points[0].bytes && p->clock_shift < 48 &&
         (bytes - p->clock_points[0].bytes) >> p->clock_shift >= 4 * CLOCK_POINTS_MAX)
    thin(p);
  p->clock_points = prof_grow(p, p->clock_points, &p->clock_points_cap, p->nclock_points + 1, sizeof *p->clock_points);
  p->clock_points[p->nclock_points++] = (struct clock_point){bytes, prof_wall_ns() - p->start_ns, 0};
  if (p->nclock_points > 1) set_slope(&p->clock_points[p->nclock_points - 2], &p->clock_points[p->nclock_points - 1]);
  index_point(p, p->nclock_points - 1);
  p->next_clock_point = bytes + p->clock_gap;
}

void prof_clocks_start(eph_profiler *p) {
  p->clock_gap = CLOCK_POINT_GAP;
  p->clock_shift = CLOCK_POINT_SHIFT;
  prof_clocks_point(p, prof_clock(p));
}

void prof_clocks_note_gc(eph_profiler *p, eph_gc_kind kind, uint64_t bytes) {
  p->gc_clocks = prof_grow(p, p->gc_clocks, &p->gc_clocks_cap, p->ngc_clocks + 1, sizeof *p->gc_clocks);
  struct gc_clock c = {bytes, p->scavenges0, p->full_gcs0};
  if (p->ngc_clocks) c.scavenges = p->gc_clocks[p->ngc_clocks - 1].scavenges, c.full_gcs = p->gc_clocks[p->ngc_clocks - 1].full_gcs;
  if (kind == EPH_GC_SCAVENGE) c.scavenges++;
  else c.full_gcs++;
  p->gc_clocks[p->ngc_clocks++] = c;
  p->clock_cache[0].gc_span = p->clock_cache[1].gc_span = 0; /* the cached intervals may have been open-ended */
}

/* Index of the last entry whose key is <= x (or 0), trying the previous
 * answer and its successor first: lookups mostly come in time order. */
#define LOOKUP(array, n, key, x, hint)                                          \
  do {                                                                           \
    size_t h_ = (hint);                                                          \
    if (h_ < (n) && (array)[h_].key <= (x) && (h_ + 1 >= (n) || (array)[h_ + 1].key > (x))) break; \
    if (h_ + 1 < (n) && (array)[h_ + 1].key <= (x) && (h_ + 2 >= (n) || (array)[h_ + 2].key > (x))) { \
      (hint) = h_ + 1;                                                           \
      break;                                                                     \
    }                                                                            \
    size_t lo_ = 0, hi_ = (n);                                                   \
    while (hi_ - lo_ > 1) {                                                      \
      size_t mid_ = (lo_ + hi_) / 2;                                             \
      if ((array)[mid_].key <= (x)) lo_ = mid_;                                  \
      else hi_ = mid_;                                                           \
    }                                                                            \
    (hint) = lo_;                                                                \
  } while (0)

/* Both lookups keep the interval they found in the caller's entry:
 * records are written in batches of nearby births (or deaths), so most
 * stamps fall in the last one. */
eph_stamp prof_clocks_stamp_at_slow(eph_profiler *p, uint64_t bytes, struct clock_cache *c) {
  eph_stamp s = {.bytes = bytes};
  /* Interpolated in the interval (a, b] of clock points that holds bytes:
   * an object born when the clock reached a collection's byte count was
   * allocated before that collection, so it gets the wall time before the
   * pause, and one born just after gets the time after it. */
  if (bytes - c->wall_lo - 1 < c->wall_span) {
    s.wall_ns = prof_clocks_wall_in(c, bytes);
  } else if (bytes <= p->clock_points[0].bytes) {
    s.wall_ns = p->clock_points[0].wall_ns;
  } else {
    uint64_t y = bytes - 1; /* the last point strictly before bytes */
    size_t k = (size_t)((y - p->clock_points[0].bytes) >> p->clock_shift);
    size_t j = k < p->clock_index_len ? p->clock_index[k] : p->nclock_points - 1;
    while (j + 1 < p->nclock_points && p->clock_points[j + 1].bytes <= y) j++;
    const struct clock_point *a = &p->clock_points[j];
    s.wall_ns = a->wall_ns;
    if (j + 1 < p->nclock_points) { /* a->bytes < bytes <= next's */
      const struct clock_point *b = a + 1;
      c->wall_lo = a->bytes;
      c->wall_span = b->bytes - a->bytes;
      c->wall_at_lo = a->wall_ns;
      c->wall_slope = a->slope;
      s.wall_ns = prof_clocks_wall_in(c, bytes);
    }
  }
  if (bytes - c->gc_lo < c->gc_span) {
    s.scavenges = c->gc_scavenges;
    s.full_gcs = c->gc_full_gcs;
  } else if (p->ngc_clocks && p->gc_clocks[0].bytes < bytes) {
    /* the last collection strictly before `bytes` holds the counts */
    LOOKUP(p->gc_clocks, p->ngc_clocks, bytes, bytes - 1, c->gc_hint);
    const struct gc_clock *g = &p->gc_clocks[c->gc_hint];
    s.scavenges = g->scavenges;
    s.full_gcs = g->full_gcs;
    /* valid for (g, next g], or after g until the next collection */
    c->gc_lo = g->bytes + 1;
    c->gc_span = c->gc_hint + 1 < p->ngc_clocks ? g[1].bytes - g->bytes : UINT64_MAX - g->bytes;
    c->gc_scavenges = g->scavenges;
    c->gc_full_gcs = g->full_gcs;
  } else { /* before the first collection */
    s.scavenges = p->scavenges0;
    s.full_gcs = p->full_gcs0;
    c->gc_lo = 0;
    c->gc_span = p->ngc_clocks ? p->gc_clocks[0].bytes + 1 : UINT64_MAX;
    c->gc_scavenges = p->scavenges0;
    c->gc_full_gcs = p->full_gcs0;
  }
  return s;
}
