/*
 * thin.c — a smaller stand-in for a big sampled profile.  `ephemera report`
 * predicts GC parameters from whatever profile it is given; a 100 % gc-mode
 * profile of a default-size run holds tens of millions of records, and the
 * grid model and the simulator then cost minutes for a suggestion that a
 * few million weighted samples predict as well (tune itself profiles at
 * 1-in-32).  Thinning keeps one small record in k, chosen by a hash of its
 * id (deterministic, unrelated to allocation order), with its weight
 * multiplied by k, and keeps every record of LARGE_BYTES or more as it is:
 * large objects are few and each one moves the old space on its own.
 */
#include "tune_internal.h"

#include <string.h>

enum { LARGE_BYTES = 4096 };

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

size_t tune_thin_records(eph_file *p, size_t max_records) {
  if (p->nrecords <= max_records || max_records == 0) return 1;
  const char *mode = eph_file_meta(p, "mode");
  if (!mode || !strcmp(mode, "merlin") || !strcmp(mode, "brute")) return 1; /* exact deaths, weight 1: keep */
  for (size_t i = 0; i < p->nevents; i++)
    if (p->events[i].kind == EPH_EV_ALLOC) return 1; /* a trace: its events name every object */
  size_t k = (p->nrecords + max_records - 1) / max_records;
  size_t kept = 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    eph_record r = p->records[i];
    if (r.size < LARGE_BYTES) {
      if (mix(r.id) % k) continue;
      r.weight *= (double)k;
    }
    p->records[kept++] = r;
  }
  p->nrecords = kept;
  return k;
}
