/*
 * stats.c — heap statistics: the counters the collector keeps, the derived
 * figures computed on demand, and a printable summary.
 */
#include "heap_internal.h"

uint64_t ephh_heap_used(const eph_heap *h) {
  return (uint64_t)(h->fast.alloc_top - h->eden.start) + (uint64_t)(h->past.top - h->past.start) + ephh_old_used(h) +
         ephh_pinned_used(h);
}

size_t ephh_committed(const eph_heap *h) {
  return h->new_bytes + h->old_committed + h->pinned_committed +
         (h->eden_pair ? (size_t)(h->spare_eden.end - h->spare_eden.start) : 0);
}

void ephh_note_committed(eph_heap *h) {
  h->stats.heap_committed = ephh_committed(h);
  if (h->stats.heap_committed > h->stats.peak_committed) h->stats.peak_committed = h->stats.heap_committed;
}

void eph_heap_stats_get(eph_heap *h, eph_heap_stats *out) {
  eph_heap_stats *s = &h->stats;
  s->bytes_allocated = eph_heap_allocated(h);
  s->objects_allocated = eph_heap_objects_allocated(h);
  s->used = ephh_heap_used(h);
  if (s->used > s->peak_used) s->peak_used = s->used;
  s->old_used = ephh_old_used(h);
  s->old_committed = h->old_committed;
  s->pinned_used = ephh_pinned_used(h);
  s->pinned_committed = h->pinned_committed;
  s->new_space_bytes = h->new_bytes;
  ephh_note_committed(h);
  s->wall_ns = ephh_now_ns() - h->start_wall_ns;
  s->cpu_ns = ephh_cpu_ns() - h->start_cpu_ns;
  s->mutator_wall_ns = s->wall_ns > s->gc_wall_ns ? s->wall_ns - s->gc_wall_ns : 0;
  s->mutator_cpu_ns = s->cpu_ns > s->gc_cpu_ns ? s->cpu_ns - s->gc_cpu_ns : 0;
  s->remembered = h->remset_len + h->remset_inert.len;
  *out = *s;
}

const eph_gc_event *eph_heap_events(const eph_heap *h, size_t *count) {
  *count = h->events_len;
  return h->events;
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }
static double ms(uint64_t ns) { return (double)ns / 1e6; }

void eph_heap_stats_print(eph_heap *h, FILE *out) {
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  char params[512];
  eph_gc_params_format(&h->params, params, sizeof params);
  fprintf(out, "ephemera heap: %s\n", params);
  fprintf(out, "  time        %.1f ms wall (%.1f mutator, %.1f GC = %.1f%%), %.1f ms CPU (%.1f GC)\n", ms(s.wall_ns),
          ms(s.mutator_wall_ns), ms(s.gc_wall_ns), s.wall_ns ? 100.0 * (double)s.gc_wall_ns / (double)s.wall_ns : 0.0,
          ms(s.cpu_ns), ms(s.gc_cpu_ns));
  fprintf(out, "  scavenges   %llu in %.1f ms;  full GCs %llu in %.1f ms;  max pause %.2f ms\n",
          (unsigned long long)s.scavenges, ms(s.scavenge_ns), (unsigned long long)s.full_gcs, ms(s.full_ns),
          ms(s.max_pause_ns));
  fprintf(out, "  allocated   %.1f MiB in %llu objects (%.1f MiB in old space directly)\n", mib(s.bytes_allocated),
          (unsigned long long)s.objects_allocated, mib(s.bytes_allocated_old));
  fprintf(out, "  moved       %.1f MiB copied, %.1f MiB promoted, %.1f MiB compacted; %.1f MiB reclaimed\n",
          mib(s.bytes_copied), mib(s.bytes_promoted), mib(s.bytes_compacted), mib(s.bytes_reclaimed));
  fprintf(out, "  heap        %.1f MiB used (peak %.1f), old %.1f of %.1f MiB committed, new space %.1f MiB, peak committed %.1f MiB\n",
          mib(s.used), mib(s.peak_used), mib(s.old_used), mib(s.old_committed), mib(s.new_space_bytes),
          mib(s.peak_committed));
  if (s.pinned_committed)
    fprintf(out, "  pinned      %.1f MiB used of %.1f MiB committed\n", mib(s.pinned_used), mib(s.pinned_committed));
}
