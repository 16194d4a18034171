/*
 * collect.c — what every collection does around its algorithm: timing,
 * the event log, observer calls, the verifier in verify mode; and the
 * public eph_collect.
 */
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

/* In verify mode and checked builds, memory a collection vacated is filled
 * with a pattern whose every word has an invalid tag (…100) and is an
 * invalid header, so that a C variable left unrooted across a collection
 * reads garbage at once instead of a stale but plausible old copy. */
#define EPH_POISON_BYTE 0xDC

static void poison_evacuated(eph_heap *h) {
  for (int i = ephh_eden_retired(h) ? 1 : 0; i < 2; i++) { /* a retired eden is the tool's to walk */
    eph_space *s = &h->evacuated[i];
    if (s->top > s->start) memset(s->start, EPH_POISON_BYTE, (size_t)(s->top - s->start));
    s->top = s->start;
  }
}

void ephh_poison(char *from, char *to) {
  if (to > from) memset(from, EPH_POISON_BYTE, (size_t)(to - from));
}

void ephh_gc_begin(eph_heap *h, eph_gc_kind kind) {
  if (h->in_batch_finalizer) ephh_fatal(h, "a collection inside a batch finaliser (ephemeron.h)");
  if (h->has_observer && h->observer.on_gc_start) h->observer.on_gc_start(h->observer.data, h, kind);
  h->in_gc = true;
  uint64_t now = ephh_now_ns();
  h->gc_start_cpu_ns = ephh_cpu_ns();
  h->current = (eph_gc_event){
      .kind = kind,
      .index = h->stats.scavenges + h->stats.full_gcs + 1,
      .start_ns = now - h->start_wall_ns,
      .allocated = eph_heap_allocated(h),
      .used_before = ephh_heap_used(h),
  };
}

static void log_event(eph_heap *h, const eph_gc_event *ev) {
  if (!h->params.record_events || h->params.stress) return;
  if (h->events_len == h->events_cap) {
    size_t cap = h->events_cap ? h->events_cap * 2 : 256;
    eph_gc_event *e = realloc(h->events, cap * sizeof *e);
    if (!e) return; /* the log is best effort; the totals stay exact */
    h->events = e;
    h->events_cap = cap;
  }
  h->events[h->events_len++] = *ev;
}

void ephh_gc_end(eph_heap *h) {
  eph_gc_event *ev = &h->current;
  ev->duration_ns = ephh_now_ns() - h->start_wall_ns - ev->start_ns;
  ev->cpu_ns = ephh_cpu_ns() - h->gc_start_cpu_ns;
  ev->used_after = ephh_heap_used(h);
  ev->old_committed = h->old_committed;

  eph_heap_stats *s = &h->stats;
  if (ev->kind == EPH_GC_SCAVENGE) {
    s->scavenges++;
    s->scavenge_ns += ev->duration_ns;
  } else {
    s->full_gcs++;
    s->full_ns += ev->duration_ns;
  }
  if (ev->duration_ns > s->max_pause_ns) s->max_pause_ns = ev->duration_ns;
  s->gc_wall_ns += ev->duration_ns;
  s->gc_cpu_ns += ev->cpu_ns;
  s->bytes_copied += ev->bytes_copied;
  s->bytes_promoted += ev->bytes_promoted;
  s->bytes_compacted += ev->bytes_compacted;
  s->bytes_reclaimed += ev->used_before - ev->used_after;
  if (ev->used_before > s->peak_used) s->peak_used = ev->used_before;
  ephh_note_committed(h);
  log_event(h, ev);
  ephh_eden_walk_after_gc(h);
  h->in_gc = false;
  if (ephh_checking(h)) poison_evacuated(h);

  if (h->params.verify) ephh_verify_after_gc(h);
  if (h->has_observer && h->observer.on_gc_end) h->observer.on_gc_end(h->observer.data, h, ev);
}

eph_status eph_collect(eph_heap *h, eph_gc_kind kind) {
  if (h->in_gc) {
    ephh_set_error(h, EPH_ERR_INVALID, "eph_collect called from inside a collection");
    return EPH_ERR_INVALID;
  }
  if (h->in_batch_finalizer) {
    ephh_set_error(h, EPH_ERR_INVALID, "eph_collect called from a batch finaliser");
    return EPH_ERR_INVALID;
  }
  if (kind == EPH_GC_FULL)
    ephh_full_gc(h);
  else
    ephh_scavenge(h);
  ephh_safepoint(h);
  if (h->over_max) {
    ephh_set_error(h, EPH_ERR_HEAP_EXHAUSTED, "heap exhausted: %zu bytes live in old space exceed the maximum heap of %zu bytes",
                  ephh_old_used(h), h->params.max_heap);
    return EPH_ERR_HEAP_EXHAUSTED;
  }
  return EPH_OK;
}
