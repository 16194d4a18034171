/*
 * render_trace.c — offline Merlin's and granulation's results as text
 * (`ephemera merlin`, `ephemera trace granulate`; src/trace).
 */
#include <inttypes.h>
#include <stdio.h>

#include "render.h"

/* "12345 (Class, 40 bytes)" for the shown differences: one pass over the ALLOC events. */
static void describe_objects(const eph_file *p, const eph_trace_diff *d, size_t n, char (*what)[96]) {
  for (size_t k = 0; k < n; k++) snprintf(what[k], sizeof what[k], "%" PRIu64, d[k].id);
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ALLOC) continue;
    for (size_t k = 0; k < n; k++) {
      if (d[k].id != e->obj) continue;
      const char *cls = e->a < p->nclasses && p->class_names[e->a] ? p->class_names[e->a] : "?";
      snprintf(what[k], sizeof what[k], "%" PRIu64 " (%s, %" PRIu64 " bytes)", e->obj, cls, e->b);
    }
  }
}

static void print_diff(FILE *out, const eph_trace_diff *d, const char *what) {
  switch (d->kind) {
    case EPH_TRACE_DIFF_TIME:
      fprintf(out, "  %s: offline dead at %" PRIu64 ", online dead at %" PRIu64 "\n", what, d->offline, d->online);
      break;
    case EPH_TRACE_DIFF_OFFLINE_DEAD:
      fprintf(out, "  %s: offline dead at %" PRIu64 ", online alive at exit\n", what, d->offline);
      break;
    case EPH_TRACE_DIFF_OFFLINE_ALIVE:
      fprintf(out, "  %s: offline alive at exit, online dead at %" PRIu64 "\n", what, d->online);
      break;
    case EPH_TRACE_DIFF_NO_ONLINE:
      fprintf(out, "  %s: offline dead at %" PRIu64 ", the trace has no death or record for it\n", what, d->offline);
      break;
    case EPH_TRACE_DIFF_NO_ALLOC:
      fprintf(out, "  %s: the trace has a death or record for it (at %" PRIu64 ") but no ALLOC event\n", what,
              d->online);
      break;
    case EPH_TRACE_DIFF_SELF:
      fprintf(out,
              "  %s: the trace disagrees with itself: record %" PRIu64 ", DEATH event %" PRIu64 " (offline %" PRIu64
              ")\n",
              what, d->online, d->other, d->offline);
      break;
  }
}

void eph_render_merlin_diffs(FILE *out, const eph_file *p, const eph_trace_diff *diffs, size_t n, size_t shown,
                             size_t compared) {
  if (n == 0) {
    fprintf(out, "%zu objects: all agree\n", compared);
    return;
  }
  if (shown > n) shown = n;
  if (shown > EPH_RENDER_MAX_DIFFS) shown = EPH_RENDER_MAX_DIFFS;
  char what[EPH_RENDER_MAX_DIFFS][96];
  describe_objects(p, diffs, shown, what);
  fprintf(out, "%zu differences (%zu objects compared); the first %zu:\n", n, compared, shown);
  for (size_t i = 0; i < shown; i++) print_diff(out, &diffs[i], what[i]);
}

void eph_render_merlin_summary(FILE *out, const char *path, const eph_trace_merlin *m, double load_seconds) {
  const eph_trace_merlin_stats *s = &m->stats;
  fprintf(out, "offline merlin: %s: %" PRIu64 " objects: %" PRIu64 " dead, %" PRIu64 " censored (alive at exit)\n",
          path, s->allocs, s->dead, s->censored);
  fprintf(out,
          "  replayed %" PRIu64 " events: %" PRIu64 " stores, %" PRIu64 " root exits, %" PRIu64 " final roots; %" PRIu64
          " pointer slots; %" PRIu64 " stamps propagated; trace ends at %" PRIu64 "\n",
          s->events, s->stores, s->root_exits, s->final_roots, s->pointer_slots, s->propagations, m->end);
  fprintf(out, "  time: %.3f s to load, %.3f s offline Merlin\n", load_seconds, s->seconds);
}

void eph_render_granulate(FILE *out, const char *in, const char *path, const eph_trace_granulate_stats *s) {
  fprintf(out, "granulated %s to %" PRIu64 " bytes: %s\n", in, s->granule, path);
  fprintf(out,
          "  %" PRIu64 " deaths (%" PRIu64 " moved), %" PRIu64 " records moved, %" PRIu64 " ticks (the last at %" PRIu64
          "); %" PRIu64 " events in, %" PRIu64 " out",
          s->deaths, s->deaths_moved, s->records_moved, s->ticks, s->last_tick, s->events_in, s->events_out);
  if (s->old_ticks) fprintf(out, " (%" PRIu64 " old ticks replaced)", s->old_ticks);
  fprintf(out, "\n  time: %.3f s\n", s->seconds);
}
