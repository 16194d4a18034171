/*
 * test_clock_table.c — the clock tables (src/sampling/clock_table.h)
 * against brute force: collections counted strictly before or at-or-before
 * a point, as each runtime chose; wall times interpolated between the
 * points around a point; the table bounded by thinning; a refused
 * allocation leaving usable tables.  Lookups come in random order so that
 * the cached intervals and hints are exercised, not just the search.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sampling/clock_table.h"

static size_t grows_left = SIZE_MAX; /* refuse allocations after this many */

static void *grow(void *ctx, void *items, size_t *cap, size_t need, size_t size) {
  (void)ctx;
  if (grows_left == 0) return NULL;
  grows_left--;
  size_t c = *cap ? *cap : 4;
  while (c < need) c *= 2;
  void *n = realloc(items, c * size);
  if (n) *cap = c;
  return n;
}

static void release(void *ctx, void *items, size_t cap, size_t size) {
  (void)ctx, (void)cap, (void)size;
  free(items);
}

static const ephs_clock_alloc heap_alloc = {grow, release, NULL};

static uint64_t rng = 88172645463325252u;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* Steps at random byte counts, some several at one count, each major or
 * minor; every point of [0, end] looked up in random order matches a count
 * of the steps before it (strictly, or at or before). */
static void check_steps(ephs_step_rule rule) {
  enum { NSTEPS = 200 };
  ephs_clocks c;
  grows_left = SIZE_MAX;
  assert_true(ephs_clocks_init(&c, heap_alloc, rule, 0, 0, 3, 5));
  uint64_t at[NSTEPS], bytes = 0;
  bool major[NSTEPS];
  for (int i = 0; i < NSTEPS; i++) {
    bytes += next() % 4 ? next() % 5000 : 0;
    at[i] = bytes;
    major[i] = next() % 3 == 0;
    assert_true(ephs_clocks_step(&c, bytes, major[i]));
  }
  for (int q = 0; q < 20000; q++) {
    uint64_t x = next() % (bytes + 100);
    if (q % 3 == 0) x = at[next() % NSTEPS] + (next() % 3) - 1; /* at a step, or one byte either side */
    uint32_t minor = 3, maj = 5;
    for (int i = 0; i < NSTEPS; i++)
      if (rule == EPHS_STEPS_STRICTLY_BEFORE ? at[i] < x : at[i] <= x) major[i] ? maj++ : minor++;
    ephs_clock_stamp s = ephs_clocks_stamp(&c, x, &c.cache[q % 2]);
    assert_int_equal(s.minor, minor);
    assert_int_equal(s.major, maj);
  }
  ephs_clocks_free(&c);
  assert_null(c.points);
}

static void steps_strictly_before(void **state) {
  (void)state;
  check_steps(EPHS_STEPS_STRICTLY_BEFORE);
}

static void steps_at_or_before(void **state) {
  (void)state;
  check_steps(EPHS_STEPS_AT_OR_BEFORE);
}

/* A step added after a lookup past the last one counts for later points:
 * the open-ended interval cached before it is dropped. */
static void new_step_seen(void **state) {
  (void)state;
  ephs_clocks c;
  assert_true(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_STRICTLY_BEFORE, 0, 0, 0, 0));
  assert_int_equal(ephs_clocks_stamp(&c, 1000, &c.cache[0]).minor, 0);
  assert_true(ephs_clocks_step(&c, 500, false));
  assert_int_equal(ephs_clocks_stamp(&c, 1000, &c.cache[0]).minor, 1);
  assert_int_equal(ephs_clocks_stamp(&c, 500, &c.cache[0]).minor, 0);
  ephs_clocks_free(&c);
}

/* The wall time brute force gives a point: interpolated in (a, b], a's
 * before the first, the last point's after it. */
static uint64_t wall_by_hand(const uint64_t *b, const uint64_t *w, size_t n, uint64_t x) {
  if (x <= b[0]) return w[0];
  size_t j = 0;
  while (j + 1 < n && b[j + 1] < x) j++;
  if (j + 1 == n) return w[j];
  double f = (double)(x - b[j]) / (double)(b[j + 1] - b[j]);
  return w[j] + (uint64_t)(f * (double)(w[j + 1] - w[j]));
}

static void wall_interpolated(void **state) {
  (void)state;
  enum { N = 3000 };
  static uint64_t b[N], w[N];
  ephs_clocks c;
  b[0] = 100, w[0] = 7;
  assert_true(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_AT_OR_BEFORE, b[0], w[0], 0, 0));
  for (size_t i = 1; i < N; i++) {
    bool pause = next() % 10 == 0; /* a collection: two points at one byte count */
    b[i] = b[i - 1] + (pause ? 0 : 1 + next() % 200000);
    w[i] = w[i - 1] + next() % 3000000;
    assert_true(ephs_clocks_point(&c, b[i], w[i]));
  }
  assert_int_equal(c.npoints, N);
  for (int q = 0; q < 50000; q++) {
    uint64_t x = next() % (b[N - 1] + 1000);
    if (q % 4 == 0) x = b[next() % N] + (next() % 3) - 1;
    uint64_t got = ephs_clocks_stamp(&c, x, &c.cache[q % 2]).wall_ns, want = wall_by_hand(b, w, N, x);
    uint64_t err = got > want ? got - want : want - got;
    assert_true(err <= 2 + want / 1000000000); /* fixed-point rounding against a double's */
  }
  ephs_clocks_free(&c);
}

/* Past the points' bound every other point goes and the gap doubles; the
 * points kept are still interpolated through exactly. */
static void thinning_bounded(void **state) {
  (void)state;
  ephs_clocks c;
  assert_true(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_STRICTLY_BEFORE, 0, 0, 0, 0));
  uint64_t gap0 = c.gap, bytes = 0, wall = 0;
  size_t max_points = 0;
  for (size_t i = 0; i < 600000; i++) {
    bytes = c.next_point + i % 7;
    wall += 1000 + i % 13;
    assert_true(ephs_clocks_point(&c, bytes, wall));
    if (c.npoints > max_points) max_points = c.npoints;
  }
  assert_true(max_points <= (size_t)1 << 18);
  assert_true(c.gap >= 4 * gap0);
  assert_true(c.index_len <= 4 * ((size_t)1 << 18) + 1);
  for (size_t i = 0; i < c.npoints; i += 997) {
    ephs_clock_point p = c.points[i];
    uint64_t got = ephs_clocks_stamp(&c, p.bytes, &c.cache[0]).wall_ns;
    assert_true(got <= p.wall_ns && got + 1 >= p.wall_ns); /* the 32.32 slope rounds down */
  }
  assert_int_equal(ephs_clocks_stamp(&c, bytes + 5, &c.cache[1]).wall_ns, wall);
  ephs_clocks_free(&c);
}

/* A refused allocation: the call says so, and the tables hold what they
 * held and still answer. */
static void refused_allocation(void **state) {
  (void)state;
  ephs_clocks c;
  grows_left = 0;
  assert_false(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_STRICTLY_BEFORE, 0, 0, 0, 0));
  assert_int_equal(c.npoints, 0);
  ephs_clocks_free(&c);
  grows_left = SIZE_MAX;
  assert_true(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_STRICTLY_BEFORE, 0, 0, 0, 0));
  size_t i = 1;
  while (c.npoints < c.points_cap) assert_true(ephs_clocks_point(&c, 1000 * i, 10 * i)), i++;
  size_t n = c.npoints;
  grows_left = 0;
  assert_false(ephs_clocks_point(&c, 1000 * i, 10 * i));
  assert_int_equal(c.npoints, n);
  uint64_t mid = ephs_clocks_stamp(&c, 1500, &c.cache[0]).wall_ns;
  assert_true(mid == 14 || mid == 15);
  assert_int_equal(c.nsteps, 0);
  assert_false(ephs_clocks_step(&c, 2000, true));
  assert_int_equal(ephs_clocks_stamp(&c, 5000, &c.cache[0]).major, 0);
  grows_left = SIZE_MAX;
  ephs_clocks_free(&c);
}

/* A copy of a range stamps every point in it as the original does, also
 * after the original grew (and thinned) since; copies reuse memory. */
static void copied_range(void **state) {
  (void)state;
  ephs_clocks c, copy = {0};
  grows_left = SIZE_MAX;
  assert_true(ephs_clocks_init(&c, heap_alloc, EPHS_STEPS_STRICTLY_BEFORE, 0, 0, 0, 0));
  uint64_t bytes = 0, wall = 0;
  for (int round = 0; round < 40; round++) {
    uint64_t lo = bytes;
    for (int i = 0; i < 2000; i++) {
      bytes += 1 + next() % 70000;
      wall += next() % 100000;
      if (next() % 50 == 0) { /* a collection: a step between two points at one count */
        assert_true(ephs_clocks_point(&c, bytes, wall));
        assert_true(ephs_clocks_step(&c, bytes, next() % 4 == 0));
        wall += 5000;
      }
      assert_true(ephs_clocks_point(&c, bytes, wall));
    }
    uint64_t hi = bytes;
    assert_true(ephs_clocks_copy_range(&copy, &c, lo, hi));
    assert_true(copy.npoints <= 2002 * 2);
    for (int q = 0; q < 3000; q++) {
      uint64_t x = lo + 1 + next() % (hi - lo);
      ephs_clock_stamp a = ephs_clocks_stamp(&c, x, &c.cache[0]), b = ephs_clocks_stamp(&copy, x, &copy.cache[0]);
      assert_int_equal(a.wall_ns, b.wall_ns);
      assert_int_equal(a.minor, b.minor);
      assert_int_equal(a.major, b.major);
    }
  }
  ephs_clocks_free(&copy);
  ephs_clocks_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(steps_strictly_before), cmocka_unit_test(steps_at_or_before),
      cmocka_unit_test(new_step_seen),         cmocka_unit_test(wall_interpolated),
      cmocka_unit_test(thinning_bounded),      cmocka_unit_test(refused_allocation),
      cmocka_unit_test(copied_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
