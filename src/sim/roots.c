/*
 * roots.c — the root slots of a trace over time (ROOT a = 2 events), so
 * that spur copies a scavenge's root targets in the order the real
 * scavenger meets them (scavenge.c scan_roots: the shadow stack bottom up,
 * then the global roots).  That order decides which survivors are tenured
 * early when a survivor space overflows.
 */
#include <stdlib.h>

#include "ephemera/format.h"
#include "sim_internal.h"

typedef struct root_event {
  uint32_t slot; /* dense: shadow slots first, then globals */
  uint32_t target;
  uint64_t time;
  size_t seq; /* emission order, for equal times */
} root_event;

static int by_slot_time(const void *a, const void *b) {
  const root_event *x = a, *y = b;
  if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool sim_roots_load(eph_sim_input *in, const eph_file *p, uint32_t (*find)(const eph_sim_input *, uint64_t)) {
  size_t n = 0;
  uint64_t nshadow = 0, nglobal = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ROOT || e->a != 2 || e->b >= UINT32_MAX / 2) continue;
    n++;
    if (e->c == 0 && e->b + 1 > nshadow) nshadow = e->b + 1;
    if (e->c != 0 && e->b + 1 > nglobal) nglobal = e->b + 1;
  }
  if (!n) return true; /* a trace from before root slots were recorded: spur approximates the order */
  root_event *ev = malloc(n * sizeof *ev);
  in->root_start = calloc(nshadow + nglobal + 1, sizeof *in->root_start);
  in->root_changes = malloc(n * sizeof *in->root_changes);
  if (!ev || !in->root_start || !in->root_changes) {
    free(ev);
    return false;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ROOT || e->a != 2 || e->b >= UINT32_MAX / 2) continue;
    uint32_t target = e->obj ? find(in, e->obj) : SIM_NONE; /* an id the trace never allocated: no object */
    ev[k] = (root_event){(uint32_t)(e->c == 0 ? e->b : nshadow + e->b), target, e->time, k};
    k++;
  }
  qsort(ev, n, sizeof *ev, by_slot_time);
  for (size_t i = 0; i < n; i++) {
    in->root_start[ev[i].slot + 1]++;
    in->root_changes[i] = (sim_root_change){ev[i].time, ev[i].target};
  }
  in->nroots = nshadow + nglobal;
  for (size_t s = 0; s < in->nroots; s++) in->root_start[s + 1] += in->root_start[s];
  free(ev);
  return true;
}

uint32_t sim_root_at(const eph_sim_input *in, size_t slot, uint64_t when) {
  const sim_root_change *c = in->root_changes;
  size_t lo = in->root_start[slot], hi = in->root_start[slot + 1]; /* the first change after `when` */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c[mid].time <= when) lo = mid + 1;
    else hi = mid;
  }
  return lo > in->root_start[slot] ? c[lo - 1].target : SIM_NONE;
}
