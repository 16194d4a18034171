/*
 * eph_events.h — what the Ephemera variants of the throughput programs read
 * from the heap's event log besides its statistics: objects moved,
 * remembered-set entries scanned, and the full GCs' CPU time.
 */
#ifndef GCT_EPH_EVENTS_H
#define GCT_EPH_EVENTS_H

#include <ephemera/heap.h>

typedef struct {
  unsigned long long moved, remset, full_cpu_ns;
} gct_eph_events;

static inline gct_eph_events gct_eph_events_sum(const eph_heap *h) {
  gct_eph_events t = {0, 0, 0};
  size_t nev;
  const eph_gc_event *ev = eph_heap_events(h, &nev);
  for (size_t e = 0; e < nev; e++) {
    t.moved += ev[e].objects_moved;
    t.remset += ev[e].remembered_scanned;
    if (ev[e].kind == EPH_GC_FULL) t.full_cpu_ns += ev[e].cpu_ns;
  }
  return t;
}

#endif
