/*
 * wall_check.c — how well a Lua profile's interpolated birth wall times
 * (src/sampling/clock_table.c, readings every 64 KiB of the byte clock)
 * agree with the profile's own exact readings: a death reads the clock
 * when it happens, so an object born at byte clock b was born after every
 * death stamped at a byte clock below b and before every death above it.
 * A coarse death reading may be early by up to a timer tick (rt_stamp_ns,
 * src/runtime/adapter.h), so the upper bound is widened by one (4 ms,
 * HZ=250).  Prints
 *   wall births=N inside=N outside=N worst_ns=N
 * (births with deaths on both sides; worst: the largest distance outside).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ephemera/format.h"

#define TICK_NS 4000000u

typedef struct reading { uint64_t bytes, wall_ns; } reading;

static int by_bytes(const void *a, const void *b) {
  const reading *x = a, *y = b;
  return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* The first reading with bytes > b (upper) or >= b (!upper). */
static size_t bound(const reading *r, size_t n, uint64_t b, bool upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (upper ? r[mid].bytes <= b : r[mid].bytes < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: wall_check FILE.eph\n");
    return 2;
  }
  eph_file *p;
  eph_error err;
  if (eph_file_load(argv[1], &p, &err) != EPH_OK) {
    fprintf(stderr, "wall_check: %s\n", err.message);
    return 1;
  }
  reading *d = malloc((p->nrecords + 1) * sizeof *d);
  uint64_t *latest_before = malloc((p->nrecords + 1) * sizeof *latest_before); /* max wall of d[0..i] */
  uint64_t *earliest_after = malloc((p->nrecords + 1) * sizeof *earliest_after); /* min wall of d[i..] */
  if (!d || !latest_before || !earliest_after) return fprintf(stderr, "wall_check: out of memory\n"), 1;
  size_t n = 0;
  for (size_t i = 0; i < p->nrecords; i++)
    if (p->records[i].death_kind != EPH_DEATH_CENSORED) d[n++] = (reading){p->records[i].death.bytes, p->records[i].death.wall_ns};
  qsort(d, n, sizeof *d, by_bytes);
  for (size_t i = 0; i < n; i++) latest_before[i] = i && latest_before[i - 1] > d[i].wall_ns ? latest_before[i - 1] : d[i].wall_ns;
  for (size_t i = n; i-- > 0;)
    earliest_after[i] = i + 1 < n && earliest_after[i + 1] < d[i].wall_ns ? earliest_after[i + 1] : d[i].wall_ns;
  uint64_t births = 0, inside = 0, worst = 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_stamp *b = &p->records[i].birth;
    size_t below = bound(d, n, b->bytes, false), above = bound(d, n, b->bytes, true);
    if (below == 0 || above == n) continue;
    uint64_t lo = latest_before[below - 1], hi = earliest_after[above] + TICK_NS;
    births++;
    if (b->wall_ns >= lo && b->wall_ns <= hi) inside++;
    else if ((b->wall_ns < lo ? lo - b->wall_ns : b->wall_ns - hi) > worst)
      worst = b->wall_ns < lo ? lo - b->wall_ns : b->wall_ns - hi;
  }
  printf("wall births=%" PRIu64 " inside=%" PRIu64 " outside=%" PRIu64 " worst_ns=%" PRIu64 "\n", births, inside,
         births - inside, worst);
  free(d);
  free(latest_before);
  free(earliest_after);
  eph_file_free(p);
  return 0;
}
