/*
 * timeline.h — the heap over time, from the collection event log every
 * profile of Ephemera's heap carries (GCEV chunks): used bytes before and
 * after each collection, committed bytes (new space plus old space), and
 * each collection's kind and pause.
 * Layer: analysis, above the format (docs/architecture.md).
 */
#ifndef EPH_TIMELINE_H
#define EPH_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "ephemera/format.h"

/* One collection, with the heap at its two ends. */
typedef struct eph_timeline_gc {
  eph_gc_kind kind;
  uint64_t index;
  double start_s, pause_s;        /* wall seconds since the run started; pause = its wall duration */
  double allocated;               /* bytes allocated when it started (the GC clock) */
  double used_before, used_after; /* bytes in objects */
  double committed_before, committed_after; /* new space + old space */
  double promoted, copied;
} eph_timeline_gc;

typedef struct eph_timeline {
  eph_timeline_gc *gcs; /* in start order */
  size_t ngcs, nscavenges, nfull;
  double new_space;     /* committed new space (eden + two survivors) from the gc metadata; 0 unknown */
  double run_s;         /* the run's wall length (totals, or the last collection's end) */
  double peak_used, peak_committed, max_pause_s, total_pause_s;
} eph_timeline;

/*
 * Builds the timeline of p's collection events into t (zeroed first;
 * t->ngcs 0 when the profile has none, e.g. Lua profiles).  Returns false
 * when out of memory.  Free with eph_timeline_free.
 */
bool eph_timeline_build(const eph_file *p, eph_timeline *t);
void eph_timeline_free(eph_timeline *t);

#endif
