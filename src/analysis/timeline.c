/*
 * timeline.c — the heap over time from the GC event log.  Committed
 * memory is new space, fixed for the run (eden plus two survivor spaces,
 * each a fifth of eden: the "gc" metadata's eden), plus old space, whose
 * size each event records after the collection.  (The analysis reads the
 * file only: the metadata string is read here, not by the heap's parser.)
 */
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

/* New space from the run's "gc" metadata ("eden=15M,..." as the heap's
 * eph_gc_params_format writes it), or 0 when it does not say. */
static double new_space_of(const eph_file *p) {
  const char *gc = eph_file_meta(p, "gc"), *rt = eph_file_meta(p, "runtime");
  if (!gc || (rt && strcmp(rt, "ephemera"))) return 0;
  const char *e = strstr(gc, "eden=");
  if (!e || (e != gc && e[-1] != ',')) return 0;
  char *end;
  double eden = strtod(e + 5, &end);
  switch (*end) {
    case 'K': case 'k': eden *= 1024; break;
    case 'M': case 'm': eden *= 1024 * 1024; break;
    case 'G': case 'g': eden *= 1024.0 * 1024 * 1024; break;
    case ',': case 0: break;
    default: return 0;
  }
  if (!(eden > 0)) return 0;
  uint64_t eb = (uint64_t)eden;
  return (double)eb + 2.0 * (double)(eb / 5);
}

bool eph_timeline_build(const eph_file *p, eph_timeline *t) {
  memset(t, 0, sizeof *t);
  t->new_space = new_space_of(p);
  t->run_s = p->complete ? (double)p->totals.wall_ns / 1e9 : 0;
  if (!p->ngcs) return true;
  t->gcs = calloc(p->ngcs, sizeof *t->gcs);
  if (!t->gcs) return false;
  double old_before = (double)p->gcs[0].old_committed; /* before the first: as after it (not logged) */
  for (size_t i = 0; i < p->ngcs; i++) {
    const eph_gc_event *e = &p->gcs[i];
    eph_timeline_gc *g = &t->gcs[t->ngcs++];
    g->kind = e->kind;
    g->index = e->index;
    g->start_s = (double)e->start_ns / 1e9;
    g->pause_s = (double)e->duration_ns / 1e9;
    g->allocated = (double)e->allocated;
    g->used_before = (double)e->used_before;
    g->used_after = (double)e->used_after;
    g->committed_before = t->new_space + old_before;
    g->committed_after = t->new_space + (double)e->old_committed;
    g->promoted = (double)e->bytes_promoted;
    g->copied = (double)e->bytes_copied;
    old_before = (double)e->old_committed;
    if (e->kind == EPH_GC_FULL) t->nfull++;
    else t->nscavenges++;
    if (g->used_before > t->peak_used) t->peak_used = g->used_before;
    double c = g->committed_before > g->committed_after ? g->committed_before : g->committed_after;
    if (c > t->peak_committed) t->peak_committed = c;
    if (g->pause_s > t->max_pause_s) t->max_pause_s = g->pause_s;
    t->total_pause_s += g->pause_s;
    if (g->start_s + g->pause_s > t->run_s) t->run_s = g->start_s + g->pause_s;
  }
  return true;
}

void eph_timeline_free(eph_timeline *t) {
  free(t->gcs);
  memset(t, 0, sizeof *t);
}
