/*
 * ephemera/spec.h — a profile's SPEC string ("mode=gc,sample=1/100,out=run.eph"),
 * as the heap's profiler (profile.h) and the Lua adapter (`ephemera lua`,
 * the ephemera.so module) read it.  Runtime-neutral: part of the sampling
 * layer, it needs only base.h.  The keys and their meaning: profile.h.
 */
#ifndef EPHEMERA_SPEC_H
#define EPHEMERA_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/base.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

typedef enum eph_profile_mode {
  EPH_MODE_GC = 0,
  EPH_MODE_FINALIZATION = 1,
  EPH_MODE_MERLIN = 2, /* exact last-reachable times, every object (needs a heap made for it) */
  EPH_MODE_BRUTE = 3,  /* a full GC every `granule` bytes (default: every allocation), every object */
} eph_profile_mode;

typedef struct eph_profile_spec {
  eph_profile_mode mode;
  uint64_t sample_every; /* count sampling: 1 in N (1 = every allocation) */
  uint64_t sample_bytes; /* byte sampling: mean gap in bytes; 0 = count sampling */
  bool sample_fixed;     /* count sampling with a fixed gap (every:N) instead of random gaps */
  bool pretenure;        /* finalization mode: pretenure the ephemerons */
  bool compress;         /* deflate the file's chunks */
  uint64_t seed;         /* byte sampler's random stream */
  char out[1024];        /* the .eph file */
  char classes[1024];    /* comma-separated class filter; "" = all classes */
  uint64_t granule;      /* brute: bytes between full GCs; 0 = every allocation */
  bool trace;            /* merlin: write the full event trace */
  unsigned threads;      /* gc mode sampling every object: threads that walk eden after a
                            scavenge, 1 or 2; 0 (auto) = 2 if the process may run on two CPUs or more.
                            merlin: 1 = records encoded on the program's thread; else on a writer's
                            thread where two CPUs are usable, and at the stop on the program's
                            thread and a helper (2, or auto where two CPUs are usable) */
  unsigned stacks;       /* frames kept per sampled allocation (the site and EPH_CALLER frames), 2..256;
                            0 = the site alone (profile.h) */
} eph_profile_spec;

/* Defaults: mode=gc, sample=1/1, pretenure=on, compress=off, out=ephemera.eph. */
void eph_profile_spec_init(eph_profile_spec *s);

/* Applies a SPEC string over s.  A bad key or value: EPH_ERR_INVALID, s
 * unchanged, and err names the key. */
eph_status eph_profile_spec_parse(eph_profile_spec *s, const char *text, eph_error *err);

/* Writes s as a SPEC string. */
void eph_profile_spec_format(const eph_profile_spec *s, char *buf, size_t len);

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_SPEC_H */
