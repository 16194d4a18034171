/*
 * ephemera/observer.h — how tools (the profiler) watch a heap.
 *
 * One observer per heap.  Installing one costs nothing on the allocation
 * fast path unless it asks to see allocations (then every allocation takes
 * the slow path, which calls on_alloc); the collector calls the other hooks
 * once per collection.
 *
 * Callbacks run on the heap's thread.  on_alloc may allocate (nested
 * allocations are not reported again) but must root `obj` first if it does.
 * The other hooks must not allocate, store or collect.  on_collect is
 * called once per collection, scavenge or full GC.
 */
#ifndef EPHEMERA_OBSERVER_H
#define EPHEMERA_OBSERVER_H

#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eph_observer {
  void *data;
  /* An object was allocated (young, old or pretenured).  NULL: not wanted. */
  void (*on_alloc)(void *data, eph_heap *h, eph_value obj);
  /* A collection is about to start.  Must not allocate or collect. */
  void (*on_gc_start)(void *data, eph_heap *h, eph_gc_kind kind);
  /*
   * Liveness is known and no dead object's memory has been reused yet: ask
   * eph_gc_fate about any object.  Dead objects' headers and slots are still
   * readable here.
   */
  void (*on_collect)(void *data, eph_heap *h, eph_gc_kind kind);
  /* A collection ended; ev describes it. */
  void (*on_gc_end)(void *data, eph_heap *h, const eph_gc_event *ev);
} eph_observer;

/*
 * Only inside on_alloc: the site recorded by EPH_AT for this allocation, or
 * NULL if none was.  The heap forgets the site after on_alloc returns.
 */
eph_site *eph_heap_site(eph_heap *h);

/* Installs obs (copied), or removes the observer when obs is NULL. */
void eph_heap_set_observer(eph_heap *h, const eph_observer *obs);

/*
 * Only inside on_collect: where obj (an address from before this
 * collection, young or old) lives after it, or EPH_NIL if this collection
 * found it dead.  Objects outside the collected spaces (old objects during
 * a scavenge) are returned unchanged.
 */
eph_value eph_gc_fate(eph_heap *h, eph_value obj);

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_OBSERVER_H */
