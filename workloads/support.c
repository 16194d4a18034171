/*
 * support.c — what every workload shares: --retain, latency events, the
 * self-check, the random number generator and heap strings.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#define RETAIN_CHUNK 4096 /* slots per retain chunk; the last links to the previous chunk */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Retained objects live in a chain of old-space chunks held by a global
 * root, so they stay reachable until the heap is freed. */
eph_value wl_retain(wl_ctx *w, eph_value obj) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  if (w->retain_chunk == EPH_NIL || w->retain_fill == RETAIN_CHUNK - 1) {
    EPH_LOCAL(h, chunk);
    chunk = eph_alloc_old(h, eph_class_find(h, "RetainChunk"), RETAIN_CHUNK);
    if (chunk == EPH_NIL) EPH_RETURN(h, obj); /* exhausted: the next allocation says so */
    eph_store(h, chunk, RETAIN_CHUNK - 1, w->retain_chunk);
    w->retain_chunk = chunk;
    w->retain_fill = 0;
  }
  eph_store(h, w->retain_chunk, w->retain_fill++, obj);
  w->retained++;
  EPH_RETURN(h, obj);
}

void wl_event_begin(wl_ctx *w) {
  if (w->nevents == w->events_cap) {
    size_t cap = w->events_cap ? 2 * w->events_cap : 1024;
    wl_event *e = realloc(w->events, cap * sizeof *e);
    if (!e) return; /* events are best effort */
    w->events = e;
    w->events_cap = cap;
  }
  w->events[w->nevents].start_ns = now_ns() - w->start_ns;
  w->events[w->nevents].end_ns = 0;
}

void wl_event_end(wl_ctx *w) {
  if (w->nevents < w->events_cap) w->events[w->nevents++].end_ns = now_ns() - w->start_ns;
}

int wl_check(wl_ctx *w, bool ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->check_message, sizeof w->check_message, fmt, ap);
  va_end(ap);
  w->check_ok = ok;
  return ok ? 0 : 1;
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

void wl_rng_seed(wl_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t wl_rng_next(wl_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double wl_rng_unit(wl_rng *r) { return (double)(wl_rng_next(r) >> 11) * 0x1.0p-53; }

double wl_rng_normal(wl_rng *r) {
  double u = wl_rng_unit(r), v = wl_rng_unit(r);
  if (u < 1e-300) u = 1e-300;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

eph_value wl_string(wl_ctx *w, size_t cls, const char *s, size_t len) {
  eph_value str = WL_NEW_BYTES(w, cls, len);
  if (str != EPH_NIL) memcpy(eph_bytes(str), s, len);
  return str;
}
