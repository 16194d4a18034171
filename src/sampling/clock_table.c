/*
 * clock_table.c — clock points over the byte clock and collection steps,
 * with a bucket index and bounded thinning (see clock_table.h).
 */
#include "clock_table.h"

#include <string.h>

#define CLOCK_POINT_SHIFT 16                 /* initial bytes between readings: 64 KiB */
#define CLOCK_POINTS_MAX ((size_t)1 << 18)   /* 6 MiB of points */
#define CLOCK_BUCKETS_PER_POINT 4            /* the index may hold 4x as many buckets as points */
#define CLOCK_SHIFT_MAX 48                   /* buckets of 256 TiB: no run gets there */

static bool reserve(ephs_clocks *c, void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  void *n = c->alloc.grow(c->alloc.ctx, *items, cap, need, size);
  if (!n) return false;
  *items = n;
  return true;
}

/* The bucket index: bucket k covers the clock from the first point + k <<
 * shift, and holds the last point at or before its start, so that a lookup
 * is a shift and a short scan (a bucket holds about one regular point,
 * plus those a runtime adds around its collections).  Births come in any
 * order (Merlin writes records by death), so the scan must not depend on
 * the last lookup. */
static bool index_point(ephs_clocks *c, size_t i) {
  uint64_t base = c->points[0].bytes, b = c->points[i].bytes;
  size_t last_bucket = (size_t)((b - base) >> c->shift);
  if (!reserve(c, (void **)&c->index, &c->index_cap, last_bucket + 1, sizeof *c->index)) return false;
  for (; c->index_len <= last_bucket; c->index_len++) {
    uint64_t start = base + ((uint64_t)c->index_len << c->shift);
    c->index[c->index_len] = (uint32_t)(b <= start ? i : i - 1);
  }
  return true;
}

/* The slope from point a to b, kept in a: records come in any order of
 * birth (a finalization profile's stop writes them in the order of its
 * ephemerons, Merlin by death), and a 128-bit division per interval
 * looked up was a fifth of such a stop. */
static void set_slope(ephs_clock_point *a, const ephs_clock_point *b) {
  uint64_t bytes = b->bytes - a->bytes;
  unsigned __int128 slope = bytes ? ((unsigned __int128)(b->wall_ns - a->wall_ns) << 32) / bytes : 0;
  a->slope = slope > UINT64_MAX ? UINT64_MAX : (uint64_t)slope; /* over 4 s a byte: never */
}

/* Halves the table: keeps the even-numbered points and the last.  The
 * index shrinks, so it needs no memory. */
static void thin(ephs_clocks *c) {
  size_t n = c->npoints, k = 0;
  for (size_t i = 0; i < n; i++)
    if (i % 2 == 0 || i == n - 1) c->points[k++] = c->points[i];
  c->npoints = k;
  for (size_t i = 0; i + 1 < k; i++) set_slope(&c->points[i], &c->points[i + 1]);
  c->gap *= 2;
  c->shift++;
  c->index_len = 0;
  for (size_t i = 0; i < k; i++) index_point(c, i);
  for (size_t i = 0; i < EPHS_CLOCK_CACHES; i++) c->cache[i].wall_span = 0; /* the cached intervals may be gone */
}

bool ephs_clocks_point(ephs_clocks *c, uint64_t bytes, uint64_t wall_ns) {
  if (c->npoints >= CLOCK_POINTS_MAX) thin(c);
  while (c->npoints && bytes > c->points[0].bytes && c->shift < CLOCK_SHIFT_MAX &&
         (bytes - c->points[0].bytes) >> c->shift >= CLOCK_BUCKETS_PER_POINT * CLOCK_POINTS_MAX)
    thin(c);
  if (!reserve(c, (void **)&c->points, &c->points_cap, c->npoints + 1, sizeof *c->points)) return false;
  c->points[c->npoints++] = (ephs_clock_point){bytes, wall_ns, 0};
  if (!index_point(c, c->npoints - 1)) {
    c->npoints--;
    return false;
  }
  if (c->npoints > 1) set_slope(&c->points[c->npoints - 2], &c->points[c->npoints - 1]);
  c->next_point = bytes + c->gap;
  return true;
}

bool ephs_clocks_init(ephs_clocks *c, ephs_clock_alloc alloc, ephs_step_rule rule, uint64_t bytes, uint64_t wall_ns,
                      uint32_t minor0, uint32_t major0) {
  *c = (ephs_clocks){.shift = CLOCK_POINT_SHIFT,
                     .gap = (uint64_t)1 << CLOCK_POINT_SHIFT,
                     .minor0 = minor0,
                     .major0 = major0,
                     .step_after = rule == EPHS_STEPS_STRICTLY_BEFORE,
                     .alloc = alloc};
  return ephs_clocks_point(c, bytes, wall_ns);
}

bool ephs_clocks_step(ephs_clocks *c, uint64_t bytes, bool major) {
  if (!reserve(c, (void **)&c->steps, &c->steps_cap, c->nsteps + 1, sizeof *c->steps)) return false;
  ephs_clock_step s = {bytes, c->minor0, c->major0};
  if (c->nsteps) s.minor = c->steps[c->nsteps - 1].minor, s.major = c->steps[c->nsteps - 1].major;
  if (major) s.major++;
  else s.minor++;
  c->steps[c->nsteps++] = s;
  for (size_t i = 0; i < EPHS_CLOCK_CACHES; i++) c->cache[i].step_span = 0; /* they may have been open-ended */
  return true;
}

/* The points (a, b] that hold (lo, hi] are copied as they are (slopes
 * included), re-indexed from the first; the steps, few, all. */
bool ephs_clocks_copy_range(ephs_clocks *dst, const ephs_clocks *src, uint64_t lo, uint64_t hi) {
  const ephs_clock_point *pt = src->points;
  size_t first = 0, last, hi_i = src->npoints; /* the last at or before lo: pt[first] */
  while (hi_i - first > 1) {
    size_t mid = first + (hi_i - first) / 2;
    if (pt[mid].bytes <= lo) first = mid;
    else hi_i = mid;
  }
  for (last = first; last + 1 < src->npoints && pt[last].bytes < hi; last++) {} /* the first at or after hi */
  size_t n = last - first + 1;
  ephs_clock_point *points = dst->points;
  uint32_t *index = dst->index;
  ephs_clock_step *steps = dst->steps;
  size_t points_cap = dst->points_cap, index_cap = dst->index_cap, steps_cap = dst->steps_cap;
  *dst = *src;
  dst->points = points, dst->points_cap = points_cap;
  dst->index = index, dst->index_cap = index_cap, dst->index_len = 0;
  dst->steps = steps, dst->steps_cap = steps_cap;
  for (size_t i = 0; i < EPHS_CLOCK_CACHES; i++) dst->cache[i] = (ephs_clock_cache){0};
  if (!reserve(dst, (void **)&dst->points, &dst->points_cap, n, sizeof *dst->points) ||
      !reserve(dst, (void **)&dst->steps, &dst->steps_cap, src->nsteps ? src->nsteps : 1, sizeof *dst->steps))
    goto fail;
  for (size_t i = 0; i < n; i++) dst->points[i] = pt[first + i];
  dst->npoints = n;
  if (src->nsteps) memcpy(dst->steps, src->steps, src->nsteps * sizeof *src->steps);
  for (size_t i = 0; i < n; i++)
    if (!index_point(dst, i)) goto fail;
  return true;
fail:
  ephs_clocks_free(dst);
  return false;
}

void ephs_clocks_free(ephs_clocks *c) {
  if (c->points) c->alloc.release(c->alloc.ctx, c->points, c->points_cap, sizeof *c->points);
  if (c->index) c->alloc.release(c->alloc.ctx, c->index, c->index_cap, sizeof *c->index);
  if (c->steps) c->alloc.release(c->alloc.ctx, c->steps, c->steps_cap, sizeof *c->steps);
  ephs_clock_alloc alloc = c->alloc;
  *c = (ephs_clocks){.alloc = alloc};
}

/* Index of the last step at or before x, trying the previous answer and
 * its successor first: lookups mostly come in time order.  Needs
 * steps[0].bytes <= x. */
static size_t find_step(const ephs_clocks *c, uint64_t x, size_t hint) {
  const ephs_clock_step *s = c->steps;
  size_t n = c->nsteps;
  if (hint < n && s[hint].bytes <= x && (hint + 1 >= n || s[hint + 1].bytes > x)) return hint;
  if (hint + 1 < n && s[hint + 1].bytes <= x && (hint + 2 >= n || s[hint + 2].bytes > x)) return hint + 1;
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (s[mid].bytes <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

ephs_clock_stamp ephs_clocks_stamp_slow(const ephs_clocks *c, uint64_t bytes, ephs_clock_cache *k) {
  ephs_clock_stamp s = {.bytes = bytes};
  /* Interpolated in the interval (a, b] of clock points that holds bytes:
   * an object born when the clock reached a collection's byte count was
   * allocated before that collection, so it gets the wall time before the
   * pause, and one born just after gets the time after it. */
  const ephs_clock_point *pt = c->points;
  if (bytes - k->wall_lo - 1 < k->wall_span) {
    s.wall_ns = ephs_clock_wall_in(k, bytes);
  } else if (bytes <= pt[0].bytes) {
    s.wall_ns = pt[0].wall_ns;
  } else {
    uint64_t y = bytes - 1; /* the last point strictly before bytes */
    size_t b = (size_t)((y - pt[0].bytes) >> c->shift);
    size_t j = b < c->index_len ? c->index[b] : c->npoints - 1;
    while (j + 1 < c->npoints && pt[j + 1].bytes <= y) j++;
    s.wall_ns = pt[j].wall_ns;
    if (j + 1 < c->npoints) { /* pt[j].bytes < bytes <= the next's */
      k->wall_lo = pt[j].bytes;
      k->wall_span = pt[j + 1].bytes - pt[j].bytes;
      k->wall_at_lo = pt[j].wall_ns;
      k->wall_slope = pt[j].slope;
      s.wall_ns = ephs_clock_wall_in(k, bytes);
    }
  }
  uint64_t after = c->step_after; /* a step counts from its own byte count + after */
  if (bytes - k->step_lo < k->step_span) {
    s.minor = k->minor;
    s.major = k->major;
  } else if (c->nsteps && c->steps[0].bytes + after <= bytes) {
    k->step_hint = find_step(c, bytes - after, k->step_hint);
    const ephs_clock_step *g = &c->steps[k->step_hint];
    s.minor = k->minor = g->minor;
    s.major = k->major = g->major;
    /* valid until the next step counts, or for ever after the last */
    k->step_lo = g->bytes + after;
    k->step_span = k->step_hint + 1 < c->nsteps ? g[1].bytes - g->bytes : UINT64_MAX - g->bytes;
  } else { /* before the first step counts */
    s.minor = k->minor = c->minor0;
    s.major = k->major = c->major0;
    k->step_lo = 0;
    k->step_span = c->nsteps ? c->steps[0].bytes + after : UINT64_MAX;
  }
  return s;
}
