/*
 * mode_finalization.h — finalization mode's state and functions
 * (mode_finalization.c): an ephemeron per sample, which records its
 * sample's death when it is finalised.
 */
#ifndef EPHEMERA_PROFILE_MODE_FINALIZATION_H
#define EPHEMERA_PROFILE_MODE_FINALIZATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/ephemeron.h"
#include "ephemera/format.h"
#include "ephemera/observer.h"
#include "eden_log.h"

typedef struct eph_profiler eph_profiler;

#define REGISTRY_CHUNK 1024

typedef struct prof_fin {
  eph_class_id eph_class;
  eph_finalizer_id noop_fin;  /* the class's finaliser: its batch finaliser does the work */
  size_t spares;              /* finalised ephemerons not re-armed yet */
  /* Not pretenured: a registry of young-allocated ephemerons */
  eph_value *chunks;          /* registry chunks, each cell a global root */
  size_t nchunks, chunks_cap;
  size_t cells_used;          /* cells [0, cells_used) hold an ephemeron each */
  size_t permanent_bytes;     /* registry chunks (made in old space): kept until stop */
  size_t spare_cursor;        /* the search for a spare (finalised ephemeron) goes on from this cell */
  /* Pretenured: pinned ephemerons (ephemeron.h), and the spares among
   * them as one bit per word of the pinned space from pinned_base;
   * fresh_count bits are set. */
  uintptr_t pinned_base;
  uintptr_t pinned_cursor;    /* a spare the bitmap could not mark is searched for from here */
  uint64_t *fresh_bits, *fresh_summary; /* summary: a bit per nonzero word of fresh_bits */
  size_t fresh_words, fresh_count, fresh_cursor;
  eph_stamp fin_stamp;        /* the last death stamp, for up to 32 finalisers of one batch */
  bool stopping;              /* the last GC is the stop's (before_stop) */
  bool fin_walk;              /* young samples' ephemerons armed in runs, walking eden */
  eden_log eden;              /* ... the births of that walk */
} prof_fin;

#endif
