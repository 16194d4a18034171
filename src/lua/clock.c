/*
 * clock.c — a sample's birth in wall time and in GC cycles, found when its
 * record is written instead of being read and stored per object.
 *
 * Two tables:
 *   bucket times  the byte clock in buckets of 2^shift bytes (64 KiB at
 *                 first): bucket k holds the wall time at which the clock
 *                 entered it, as read at the first sample born in it (or
 *                 after it, for buckets without a sample);
 *   cycle ends    the byte clock at the end of each GC cycle.
 * A birth at `bytes` gets the wall time interpolated across its bucket
 * (between its reading and the next bucket's), which lies between the
 * readings of the samples born around it; and the number of cycle ends at
 * or before it (an object born after a cycle ended has a byte clock at
 * least that cycle's: a cycle ends in a finaliser, between allocations).
 *
 * The buckets are bounded: past LT_CLOCK_BUCKETS_MAX every other one is
 * dropped and the buckets double, so a long run keeps a fixed-size table
 * at a coarser grain.  The cycle ends take 8 bytes per cycle.  Both live
 * in pages of their own (marks.c); if they cannot grow the profile stops
 * with an error, never a wrong stamp.
 */
#include <stdio.h>

#include "ephlua.h"

#define LT_CLOCK_SHIFT0 16
#define LT_CLOCK_BUCKETS_MAX (1u << 18)

static void fail(lt_tracker *t) {
  if (!t->error[0]) snprintf(t->error, sizeof t->error, "out of memory for the clock tables");
  t->write_failed = true;
  t->detached = true;
  t->countdown = INT64_MAX;
}

/* Makes room for `need` items of `size` bytes in *items (capacity *cap). */
static bool reserve(void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap : 1024;
  while (ncap < need) ncap *= 2;
  void *n = lt_pages_grow(*items, *cap * size, ncap * size);
  if (!n) return false;
  *items = n;
  *cap = ncap;
  return true;
}

/* Halves the buckets: new bucket j starts where old bucket 2j did. */
static void thin(lt_clock *c) {
  size_t k = 0;
  for (size_t i = 0; i < c->len; i += 2) c->ns[k++] = c->ns[i];
  c->len = k;
  c->shift++;
  c->inv_width = 1.0 / (double)((uint64_t)1 << c->shift);
}

void lt_clock_init(lt_tracker *t) {
  lt_clock *c = &t->clock;
  c->shift = LT_CLOCK_SHIFT0;
  c->inv_width = 1.0 / (double)((uint64_t)1 << c->shift);
  lt_clock_mark(t, 0);
}

void lt_clock_mark(lt_tracker *t, uint64_t bytes) {
  lt_clock *c = &t->clock;
  while ((bytes >> c->shift) >= LT_CLOCK_BUCKETS_MAX) thin(c);
  size_t k = (size_t)(bytes >> c->shift);
  if (!reserve((void **)&c->ns, &c->cap, k + 1, sizeof *c->ns)) return fail(t);
  t->fine_countdown = 0; /* an exact reading */
  uint64_t now = lt_stamp_ns(t);
  for (; c->len <= k; c->len++) c->ns[c->len] = now;
  c->next_point = (uint64_t)(k + 1) << c->shift;
}

uint64_t lt_clock_cycle(lt_tracker *t) {
  lt_clock *c = &t->clock;
  if (!reserve((void **)&c->cycle_ends, &c->cycle_ends_cap, c->ncycle_ends + 1, sizeof *c->cycle_ends)) {
    fail(t);
    return t->cycle_ns;
  }
  c->cycle_ends[c->ncycle_ends++] = t->bytes;
  t->fine_countdown = 0;
  return lt_stamp_ns(t);
}

uint32_t lt_clock_cycles_before(const lt_tracker *t, uint64_t bytes) {
  const lt_clock *c = &t->clock;
  /* gallop back from the last cycle end (most of the dead were born in the
   * last few cycles), then search the bracket: bytes < cycle_ends[hi] */
  size_t hi = c->ncycle_ends - 1, step = 1, lo;
  for (;;) {
    if (hi < step) {
      lo = 0;
      break;
    }
    if (c->cycle_ends[hi - step] <= bytes) {
      lo = hi - step + 1;
      break;
    }
    hi -= step;
    step *= 2;
  }
  while (lo < hi) { /* the first end after bytes is in [lo, hi] */
    size_t mid = lo + (hi - lo) / 2;
    if (c->cycle_ends[mid] <= bytes) lo = mid + 1;
    else hi = mid;
  }
  return (uint32_t)lo;
}

void lt_clock_free(lt_tracker *t) {
  lt_clock *c = &t->clock;
  lt_pages_free(c->ns, c->cap * sizeof *c->ns);
  lt_pages_free(c->cycle_ends, c->cycle_ends_cap * sizeof *c->cycle_ends);
  c->ns = NULL;
  c->cycle_ends = NULL;
  c->len = c->cap = c->ncycle_ends = c->cycle_ends_cap = 0;
}
