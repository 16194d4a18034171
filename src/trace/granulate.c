/*
 * granulate.c — the granulated trace of Hertz et al. (TOPLAS 2006, §3.2,
 * §4, §6.5): what a brute-force trace generator that looks for dead
 * objects only every K bytes of allocation would have written.
 *
 * A death at time t (the object was last reachable at t) is only known at
 * the next point of perfect knowledge, ceil(t / K) * K (a death exactly at
 * a multiple of K stays).  Both the DEATH events and the records' death
 * and alive_until stamps move there (censored records are not deaths and
 * keep the end of the run); the other clocks of a moved stamp follow from
 * the trace's own clock samples.  A TICK event at every multiple of K, from
 * K up to the first multiple at or after the end of the trace, marks the
 * points where the granulated trace is exact.
 *
 * Event order (docs/traces.md): the input's events other than DEATH and
 * TICK, unchanged and in their order; before the first of them whose time
 * is past a multiple m*K, the DEATH events moved to m*K (in id order) and
 * then TICK m*K.  So each DEATH lies between the tick before its granule
 * and its own tick, and every event the program made at or before m*K
 * precedes TICK m*K.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

typedef struct gwriter {
  eph_writer *w;
  eph_status st;
  uint64_t events;
} gwriter;

static void put(gwriter *g, const eph_event *e) {
  if (g->st != EPH_OK) return;
  g->st = eph_writer_event(g->w, e);
  g->events++;
}

/* The stamp s moved to its granule: unchanged if it is already on one. */
static bool move_stamp(ephtr_clock *clock, uint64_t k, eph_stamp *s) {
  uint64_t g;
  if (!eph_trace_granule_ceil(s->bytes, k, &g)) g = s->bytes; /* cannot happen below the end */
  if (g == s->bytes) return false;
  *s = ephtr_clock_at(clock, g);
  return true;
}

eph_status eph_trace_granulate(const eph_file *p, uint64_t k, const char *path, bool compress,
                               eph_trace_granulate_stats *stats, eph_error *err) {
  double t0 = ephtr_now();
  eph_trace_granulate_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->granule = k;
  stats->events_in = p->nevents;
  if (k == 0) {
    eph_error_fill(err, EPH_ERR_INVALID, "the granule must be at least 1 byte");
    return EPH_ERR_INVALID;
  }
  const char *why = eph_trace_unusable(p);
  if (why) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s", why);
    return EPH_ERR_INVALID;
  }

  /* The deaths, by granule and then id; the end of the trace. */
  size_t nd = 0;
  uint64_t end = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind == EPH_EV_DEATH) nd++;
    else if (e->kind == EPH_EV_TICK) stats->old_ticks++;
    if (e->kind != EPH_EV_TICK && e->time > end) end = e->time;
  }
  if (!eph_trace_granule_ceil(end, k, &stats->last_tick)) {
    eph_error_fill(err, EPH_ERR_INVALID, "granule %" PRIu64 ": the trace ends at %" PRIu64 ", too close to 2^64", k,
                   end);
    return EPH_ERR_INVALID;
  }
  if (stats->last_tick == 0) stats->last_tick = k; /* a trace at time 0: one tick */
  ephtr_pair *deaths = malloc((nd ? nd : 1) * sizeof *deaths);
  if (!deaths) goto nomem;
  nd = 0;
  for (size_t i = 0; i < p->nevents; i++)
    if (p->events[i].kind == EPH_EV_DEATH) deaths[nd++] = (ephtr_pair){p->events[i].obj, p->events[i].time};
  if (!ephtr_sort_pairs(deaths, nd)) goto nomem;
  for (size_t i = 0; i < nd; i++) {
    uint64_t g;
    eph_trace_granule_ceil(deaths[i].val, k, &g); /* fits: val <= end */
    stats->deaths_moved += g != deaths[i].val;
    deaths[i] = (ephtr_pair){g, deaths[i].key};
  }
  if (!ephtr_sort_pairs(deaths, nd)) goto nomem; /* stable: ids stay in order within a granule */
  stats->deaths = nd;

  ephtr_clock clock;
  if (!ephtr_clock_build(p, &clock)) goto nomem;
  char granule[32];
  snprintf(granule, sizeof granule, "%" PRIu64, k);
  gwriter g = {ephtr_open_copy(p, path, "granule", granule, compress, err), EPH_OK, 0};
  if (!g.w) {
    ephtr_clock_free(&clock);
    free(deaths);
    return err ? err->status : EPH_ERR_INVALID;
  }

  for (size_t i = 0; i < p->nrecords && g.st == EPH_OK; i++) {
    eph_record r = p->records[i];
    if (r.death_kind != EPH_DEATH_CENSORED) {
      stats->records_moved += move_stamp(&clock, k, &r.death);
      move_stamp(&clock, k, &r.alive_until);
    }
    g.st = eph_writer_record(g.w, &r);
  }
  ephtr_clock_free(&clock);

  size_t di = 0;
  uint64_t next = k;
  bool ticks_done = false;
  for (size_t i = 0; i <= p->nevents && g.st == EPH_OK; i++) {
    const eph_event *e = i < p->nevents ? &p->events[i] : NULL;
    if (e && (e->kind == EPH_EV_DEATH || e->kind == EPH_EV_TICK)) continue;
    /* The points of perfect knowledge before e (all that are left at the end). */
    while (!ticks_done && (!e || next < e->time) && g.st == EPH_OK) {
      for (; di < nd && deaths[di].key <= next; di++)
        put(&g, &(eph_event){.kind = EPH_EV_DEATH, .time = deaths[di].key, .obj = deaths[di].val});
      put(&g, &(eph_event){.kind = EPH_EV_TICK, .time = next});
      stats->ticks++;
      if (next >= stats->last_tick) ticks_done = true;
      else next += k;
    }
    if (e) put(&g, e);
  }
  free(deaths);
  stats->events_out = g.events;
  if (g.st != EPH_OK) return ephtr_fail_writer(g.w, g.st, path, err);
  eph_status st = ephtr_close(g.w, &p->totals, path, err);
  stats->seconds = ephtr_now() - t0;
  return st;

nomem:
  free(deaths);
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
  return EPH_ERR_NOMEM;
}
