/*
 * poll.c — the poll at safe points (observer.h, eph_heap_set_poll): how a
 * tool acts on a signal without acting inside the signal handler or the
 * collector.
 */
#include "heap_internal.h"

void eph_heap_set_poll(eph_heap *h, const volatile sig_atomic_t *flag, void (*fn)(void *data, eph_heap *h),
                       void *data) {
  h->poll_flag = fn ? flag : NULL;
  h->poll_fn = flag ? fn : NULL;
  h->poll_data = flag && fn ? data : NULL;
}

/* Not from a safe point reached inside on_alloc (the observer's own
 * allocations) or a finaliser, nor again from the poll's own collections:
 * the flag stays set, and the next safe point outside them takes it. */
void ephh_poll_run(eph_heap *h) {
  if (h->in_poll || h->in_observer || h->running_finalizers || h->in_gc) return;
  h->in_poll = true;
  h->poll_fn(h->poll_data, h);
  h->in_poll = false;
}
