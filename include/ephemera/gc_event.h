/*
 * ephemera/gc_event.h — one collection as the heap logs it and as a .eph
 * file stores it: a plain record shared by the heap (which fills it) and
 * the format (which writes and reads it), so that neither needs the other.
 */
#ifndef EPHEMERA_GC_EVENT_H
#define EPHEMERA_GC_EVENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eph_gc_kind { EPH_GC_SCAVENGE = 0, EPH_GC_FULL = 1 } eph_gc_kind;

/* One collection. */
typedef struct eph_gc_event {
  eph_gc_kind kind;
  uint64_t index;           /* 1-based, counting both kinds */
  uint64_t start_ns;        /* since heap creation (wall clock) */
  uint64_t duration_ns;     /* wall */
  uint64_t cpu_ns;          /* process CPU */
  uint64_t allocated;       /* bytes allocated before it started (the GC clock) */
  uint64_t used_before;     /* bytes in objects, new + old space */
  uint64_t used_after;
  uint64_t bytes_copied;    /* copied within new space */
  uint64_t bytes_promoted;  /* tenured into old space */
  uint64_t bytes_compacted; /* moved by the compactor */
  uint64_t old_committed;   /* old space size after */
  uint64_t ephemerons_mourned;
  /* Work counts for the simulator's cost model (src/harness/calibrate.c); the
   * heap fills them, a .eph file does not store them (read back as 0). */
  uint64_t objects_moved;      /* objects copied or promoted out of new space */
  uint64_t remembered_scanned; /* remembered-set entries a scavenge scanned */
  uint64_t slots_scanned;      /* pointer slots scanned (scavenge) or traced (full GC mark) */
  uint64_t remembered_slots;   /* of which in remembered-set entries (old objects, scanned in place) */
} eph_gc_event;

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_GC_EVENT_H */
