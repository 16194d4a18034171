/*
 * granule_check ORIG GRANULATED K — checks `ephemera trace granulate`'s
 * output against its input, independently of src/trace:
 *   - meta granule = K;
 *   - the events other than DEATH and TICK are the input's, in order;
 *   - every DEATH of the input is there once, at ceil(t / K) * K: a multiple
 *     of K, >= t and < t + K;
 *   - TICK events at K, 2K, ... up to ceil(end / K) * K, in order; each
 *     DEATH lies after the tick before its granule and before its own tick;
 *     before each other event come exactly the ticks below the largest
 *     event time so far;
 *   - no ALLOC or STORE names an object after its DEATH;
 *   - the records are the input's, deaths and alive_until moved the same
 *     way (censored ones unchanged).
 * Prints "ok: ..." and exits 0, or "FAIL: ..." and exits 1.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/format.h"

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("FAIL: ", stdout);
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
  return 1;
}

static uint64_t up(uint64_t t, uint64_t k) { return (t + k - 1) / k * k; }

typedef struct death {
  uint64_t id, time;
  int seen;      /* in the granulated trace */
  int dead;      /* its DEATH was passed while walking the granulated trace */
} death;

static int by_id(const void *a, const void *b) {
  uint64_t x = ((const death *)a)->id, y = ((const death *)b)->id;
  return x < y ? -1 : x > y;
}

static death *find(death *d, size_t n, uint64_t id) {
  death key = {.id = id};
  return bsearch(&key, d, n, sizeof *d, by_id);
}

static int same_event(const eph_event *a, const eph_event *b) {
  return a->kind == b->kind && a->time == b->time && a->obj == b->obj && a->a == b->a && a->b == b->b && a->c == b->c;
}

static int check(const eph_file *in, const eph_file *out, uint64_t k) {
  char want[32];
  snprintf(want, sizeof want, "%" PRIu64, k);
  const char *g = eph_file_meta(out, "granule");
  if (!g || strcmp(g, want)) return fail("meta granule is %s, expected %s", g ? g : "(none)", want);
  if (!out->complete) return fail("the output is incomplete");

  /* The input's deaths and end. */
  size_t nd = 0;
  uint64_t end = 0;
  for (size_t i = 0; i < in->nevents; i++) {
    const eph_event *e = &in->events[i];
    nd += e->kind == EPH_EV_DEATH;
    if (e->kind != EPH_EV_TICK && e->time > end) end = e->time;
  }
  death *d = calloc(nd ? nd : 1, sizeof *d);
  if (!d) return fail("out of memory");
  nd = 0;
  for (size_t i = 0; i < in->nevents; i++)
    if (in->events[i].kind == EPH_EV_DEATH) d[nd++] = (death){in->events[i].obj, in->events[i].time, 0, 0};
  qsort(d, nd, sizeof *d, by_id);
  uint64_t last_tick = up(end, k) ? up(end, k) : k;

  int rc = 0;
  size_t j = 0, ndeaths = 0, moved = 0;
  uint64_t ticks = 0, max_time = 0;
  for (size_t i = 0; i < out->nevents && !rc; i++) {
    const eph_event *e = &out->events[i];
    if (e->kind == EPH_EV_TICK) {
      if (e->time != (ticks + 1) * k) rc = fail("event %zu: tick at %" PRIu64 ", expected %" PRIu64, i, e->time, (ticks + 1) * k);
      ticks++;
      continue;
    }
    if (e->kind == EPH_EV_DEATH) {
      death *x = find(d, nd, e->obj);
      if (!x) rc = fail("event %zu: DEATH of %" PRIu64 ", which has none in the input", i, e->obj);
      else if (x->seen) rc = fail("event %zu: a second DEATH of %" PRIu64, i, e->obj);
      else if (e->time % k || e->time < x->time || e->time - x->time >= k || e->time != up(x->time, k))
        rc = fail("event %zu: DEATH of %" PRIu64 " at %" PRIu64 ", input %" PRIu64 ": not its granule", i, e->obj,
                  e->time, x->time);
      else if (ticks != e->time / k - 1)
        rc = fail("event %zu: DEATH at %" PRIu64 " after %" PRIu64 " ticks (expected between ticks %" PRIu64 " and %" PRIu64 ")",
                  i, e->time, ticks, e->time - k, e->time);
      if (rc) break;
      x->seen = x->dead = 1;
      ndeaths++;
      moved += e->time != x->time;
      continue;
    }
    /* The next input event other than DEATH and TICK. */
    while (j < in->nevents && (in->events[j].kind == EPH_EV_DEATH || in->events[j].kind == EPH_EV_TICK)) j++;
    if (j >= in->nevents || !same_event(e, &in->events[j]))
      rc = fail("event %zu (kind %u at %" PRIu64 "): not the input's event %zu", i, e->kind, e->time, j);
    j++;
    if (e->time > max_time) max_time = e->time;
    uint64_t below = max_time ? (max_time - 1) / k : 0; /* ticks m*K < max_time */
    if (!rc && ticks != below)
      rc = fail("event %zu (time %" PRIu64 ", max so far %" PRIu64 "): %" PRIu64 " ticks before it, expected %" PRIu64, i,
                e->time, max_time, ticks, below);
    if (!rc && (e->kind == EPH_EV_ALLOC || e->kind == EPH_EV_STORE)) {
      uint64_t ids[3] = {e->obj, e->kind == EPH_EV_STORE ? e->b : 0, e->kind == EPH_EV_STORE ? e->c : 0};
      for (int q = 0; q < 3 && !rc; q++) {
        death *x = ids[q] ? find(d, nd, ids[q]) : NULL;
        if (x && x->dead) rc = fail("event %zu (kind %u at %" PRIu64 ") names %" PRIu64 " after its DEATH", i, e->kind, e->time, ids[q]);
      }
    }
  }
  while (!rc && j < in->nevents && (in->events[j].kind == EPH_EV_DEATH || in->events[j].kind == EPH_EV_TICK)) j++;
  if (!rc && j != in->nevents) rc = fail("the output lacks input events from %zu on", j);
  if (!rc && ndeaths != nd) rc = fail("%zu DEATH events, the input has %zu", ndeaths, nd);
  if (!rc && ticks * k != last_tick) rc = fail("the last tick is at %" PRIu64 ", expected %" PRIu64, ticks * k, last_tick);
  free(d);
  if (rc) return rc;

  if (in->nrecords != out->nrecords) return fail("%zu records, the input has %zu", out->nrecords, in->nrecords);
  size_t rmoved = 0;
  for (size_t i = 0; i < in->nrecords; i++) {
    const eph_record *a = &in->records[i], *b = &out->records[i];
    if (a->id != b->id || a->death_kind != b->death_kind || a->class_id != b->class_id || a->size != b->size ||
        a->birth.bytes != b->birth.bytes)
      return fail("record %zu (id %" PRIu64 "): not the input's", i, a->id);
    int cens = a->death_kind == EPH_DEATH_CENSORED;
    uint64_t dw = cens ? a->death.bytes : up(a->death.bytes, k), aw = cens ? a->alive_until.bytes : up(a->alive_until.bytes, k);
    if (b->death.bytes != dw || b->alive_until.bytes != aw)
      return fail("record %" PRIu64 ": death %" PRIu64 " / alive_until %" PRIu64 ", expected %" PRIu64 " / %" PRIu64, a->id,
                  b->death.bytes, b->alive_until.bytes, dw, aw);
    if (!cens && (b->death.bytes % k || b->death.bytes < a->death.bytes || b->death.bytes - a->death.bytes >= k))
      return fail("record %" PRIu64 ": death %" PRIu64 " is not the granule of %" PRIu64, a->id, b->death.bytes, a->death.bytes);
    if (b->death.wall_ns < a->death.wall_ns && b->death.bytes != a->death.bytes)
      return fail("record %" PRIu64 ": moved death has an earlier wall time", a->id);
    rmoved += b->death.bytes != a->death.bytes;
  }
  printf("ok: granule %" PRIu64 ": %zu deaths (%zu moved), %zu records (%zu moved), %" PRIu64 " ticks, %zu events\n", k, ndeaths,
         moved, out->nrecords, rmoved, ticks, out->nevents);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: granule_check ORIG GRANULATED K(bytes)\n");
    return 2;
  }
  char *endp;
  uint64_t k = strtoull(argv[3], &endp, 10);
  if (*endp || !k) return fail("bad granule %s", argv[3]);
  eph_file *in, *out;
  eph_error err;
  if (eph_file_load(argv[1], &in, &err) != EPH_OK) return fail("%s", err.message);
  if (eph_file_load(argv[2], &out, &err) != EPH_OK) return fail("%s", err.message);
  int rc = check(in, out, k);
  eph_file_free(in);
  eph_file_free(out);
  return rc;
}
