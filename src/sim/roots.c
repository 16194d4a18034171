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
  /* A counting sort by slot: the events come in time order (each root
   * check stamps a later time than the one before), which it keeps. */
  in->nroots = nshadow + nglobal;
  in->root_start = calloc(in->nroots + 1, sizeof *in->root_start);
  in->root_changes = malloc(n * sizeof *in->root_changes);
  uint64_t *fill = calloc(in->nroots + 1, sizeof *fill);
  if (!in->root_start || !in->root_changes || !fill) {
    free(fill);
    return false;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < p->nevents; i++) {
      const eph_event *e = &p->events[i];
      if (e->kind != EPH_EV_ROOT || e->a != 2 || e->b >= UINT32_MAX / 2) continue;
      size_t slot = e->c == 0 ? e->b : nshadow + e->b;
      if (pass == 0) {
        in->root_start[slot + 1]++;
        continue;
      }
      uint32_t target = e->obj ? find(in, e->obj) : SIM_NONE; /* an id the trace never allocated: no object */
      uint64_t at = fill[slot]++;
      if (at > in->root_start[slot] && in->root_changes[at - 1].time > e->time) { /* not a trace ephemera wrote */
        free(fill);
        free(in->root_start);
        free(in->root_changes);
        in->root_start = NULL;
        in->root_changes = NULL;
        in->nroots = 0;
        in->roots_disordered = true;
        return true;
      }
      in->root_changes[at] = (sim_root_change){e->time, target};
    }
    if (pass == 0) { /* counts to offsets: slot s's changes are [root_start[s], root_start[s + 1]) */
      for (size_t s = 0; s < in->nroots; s++) in->root_start[s + 1] += in->root_start[s];
      for (size_t s = 0; s < in->nroots; s++) fill[s] = in->root_start[s];
    }
  }
  free(fill);
  return true;
}

uint32_t sim_root_at_from(const eph_sim_input *in, size_t slot, uint64_t when, uint64_t *seen) {
  const sim_root_change *c = in->root_changes;
  uint64_t first = in->root_start[slot], end = in->root_start[slot + 1];
  uint64_t lo = first + *seen; /* c[first, lo) are at or before `when` */
  if (lo < end && c[lo].time <= when) {
    uint64_t step = 1; /* gallop: c[lo] is at or before; find a hi after */
    while (lo + step < end && c[lo + step].time <= when) {
      lo += step;
      step *= 2;
    }
    uint64_t hi = lo + step < end ? lo + step : end;
    lo++;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (c[mid].time <= when) lo = mid + 1;
      else hi = mid;
    }
  }
  *seen = lo - first;
  return lo > first ? c[lo - 1].target : SIM_NONE;
}

uint32_t sim_root_at(const eph_sim_input *in, size_t slot, uint64_t when) {
  uint64_t seen = 0;
  return sim_root_at_from(in, slot, when, &seen);
}
