/*
 * offline_merlin.c — Merlin after the fact (Hertz et al., TOPLAS 2006,
 * §6.4): every object's last-reachable time recomputed from a trace's
 * ALLOC, STORE and ROOT events alone.
 *
 *   1. Replay: ALLOC events create objects (ids are birth times), with
 *      (size - 8) / 8 pointer slots for pointer and ephemeron objects, all
 *      non-pointers; STORE events set slots, so the replay ends with the
 *      final object graph.  Every object's stamp starts at its birth; a
 *      STORE stamps its old target with the store's time (the write
 *      barrier, Fig. 5), a ROOT event with a = 0 stamps its object with
 *      the time it was last seen in a root (the root scan, Fig. 6).
 *   2. Reachability at the end: objects reachable over the final graph
 *      from the final roots (ROOT events with a = 1) are alive at exit
 *      (censored); everything else is dead.
 *   3. The backward pass over all dead objects (Fig. 8): sorted by stamp,
 *      pushed earliest first so the latest is popped first; a popped
 *      source gives its stamp to each dead target with an earlier stamp,
 *      and pushes it.  The stamps are then the last-reachable times.
 *
 * Why one pass at the end gives the online result (mode_merlin.c, which
 * runs the backward pass after every collection over the objects that
 * collection found dead):
 *   - Once an object is unreachable the program cannot store into it or
 *     put it in a root, and nothing reachable points to it, so no later
 *     STORE or ROOT event names it: its slots in the final graph are its
 *     slots when it died, and its stamp from the events is the stamp it
 *     had when the collection that found it dead ran.
 *   - The backward pass computes, for each dead object, the maximum of the
 *     stamps of the dead objects from which it is reachable through dead
 *     objects (its own included): a maximum over paths, which does not
 *     depend on the order in which sources are processed or on splitting
 *     the dead into batches.  A batch online cannot miss a source from a
 *     later batch: an object that a collection keeps alive keeps alive
 *     everything it points to, so a later-dying source never points to an
 *     earlier-freed object.  A dead source whose target survives its
 *     collection stamps no later than that collection, while the target's
 *     own last-reachable time is at or after it, so the extra candidate
 *     that offline propagation (and online, for old targets of a
 *     scavenge) considers never changes the maximum.
 *   - What survives the profiler's last full GC is what the final roots
 *     reach, the objects censored here.
 * So the two agree object by object on a faithful trace; a disagreement
 * means the trace misses a pointer write or a root (the replay counts
 * stores whose old value is not what the replayed slot holds).
 *
 * Memory: dense arrays indexed by the object's rank among the sorted ids
 * (id, stamp, flags, slot offsets, one u32 per pointer slot) and a bucket
 * index for id lookups; no per-object allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

#define NONE UINT32_MAX
#define MAX_OBJECTS ((size_t)UINT32_MAX - 1)

static eph_status nomem(eph_error *err) {
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
  return EPH_ERR_NOMEM;
}

void eph_trace_merlin_free(eph_trace_merlin *m) {
  if (!m) return;
  free(m->id);
  free(m->death);
  free(m->censored);
  free(m->bucket);
  memset(m, 0, sizeof *m);
}

/* --- id lookup: sorted ids and a bucket index over id >> shift ------------- */

static bool build_index(eph_trace_merlin *m) {
  size_t n = m->nobjects;
  if (!n) return true;
  uint64_t max = m->id[n - 1];
  unsigned shift = 0;
  while ((max >> shift) >= n) shift++;
  m->shift = shift;
  m->nbuckets = (size_t)(max >> shift) + 1;
  m->bucket = malloc((m->nbuckets + 1) * sizeof *m->bucket);
  if (!m->bucket) return false;
  size_t j = 0;
  for (size_t b = 0; b < m->nbuckets; b++) {
    while (j < n && (m->id[j] >> shift) < b) j++;
    m->bucket[b] = (uint32_t)j;
  }
  m->bucket[m->nbuckets] = (uint32_t)n;
  return true;
}

bool eph_trace_merlin_find(const eph_trace_merlin *m, uint64_t id, size_t *index) {
  if (!m->nobjects) return false;
  uint64_t b = id >> m->shift;
  if (b >= m->nbuckets) return false;
  size_t lo = m->bucket[b], hi = m->bucket[b + 1];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->id[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  if (lo < m->bucket[b + 1] && m->id[lo] == id) {
    *index = lo;
    return true;
  }
  return false;
}

/* A growable u32 stack. */
typedef struct stack32 {
  uint32_t *items;
  size_t len, cap;
} stack32;

static bool push(stack32 *s, uint32_t v) {
  if (s->len == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    uint32_t *items = realloc(s->items, cap * sizeof *items);
    if (!items) return false;
    s->items = items;
    s->cap = cap;
  }
  s->items[s->len++] = v;
  return true;
}

static uint64_t pointer_slots(const eph_event *e) {
  uint64_t fmt = (e->c >> EPH_TRACE_FORMAT_SHIFT) & EPH_TRACE_FORMAT_MASK;
  if (fmt != EPH_FORMAT_POINTERS && fmt != EPH_FORMAT_EPHEMERON) return 0;
  return e->b >= sizeof(uint64_t) ? (e->b - sizeof(uint64_t)) / sizeof(uint64_t) : 0;
}

/* The state of one run, freed by run_free. */
typedef struct run {
  uint64_t *start; /* slot offsets, nobjects + 1 */
  uint32_t *slots; /* dense index of each slot's target, NONE = not an object */
  stack32 stack;
  ephtr_pair *dead;
} run;

static void run_free(run *r) {
  free(r->start);
  free(r->slots);
  free(r->stack.items);
  free(r->dead);
}

/* Step 1 (objects): the sorted object table, its index and the slot
 * offsets (r->start), in one pass over the ALLOC events. */
static eph_status collect_objects(const eph_file *p, eph_trace_merlin *m, run *r, eph_error *err) {
  size_t n = 0, cap = 0;
  ephtr_pair *objs = NULL; /* (id, pointer slots), in ALLOC order */
  bool sorted = true;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ALLOC) continue;
    if (e->obj == 0 || e->b > (uint64_t)EPH_MAX_PAYLOAD_BYTES + sizeof(uint64_t)) {
      free(objs);
      eph_error_fill(err, EPH_ERR_INVALID, "event %zu: an allocation of object %llu with %llu bytes: not a possible object", i,
                     (unsigned long long)e->obj, (unsigned long long)e->b);
      return EPH_ERR_INVALID;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      ephtr_pair *x = realloc(objs, cap * sizeof *x);
      if (!x) {
        free(objs);
        return nomem(err);
      }
      objs = x;
    }
    if (n && e->obj <= objs[n - 1].key) sorted = false;
    objs[n++] = (ephtr_pair){e->obj, pointer_slots(e)};
  }
  if (n > MAX_OBJECTS) {
    free(objs);
    eph_error_fill(err, EPH_ERR_INVALID, "%zu objects: more than offline Merlin handles (%zu)", n, MAX_OBJECTS);
    return EPH_ERR_INVALID;
  }
  if (!sorted && !ephtr_sort_pairs(objs, n)) {
    free(objs);
    return nomem(err);
  }
  m->nobjects = n;
  m->id = malloc((n ? n : 1) * sizeof *m->id);
  r->start = malloc((n + 1) * sizeof *r->start);
  if (!m->id || !r->start) {
    free(objs);
    return nomem(err);
  }
  r->start[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && objs[i].key == objs[i - 1].key) {
      eph_error_fill(err, EPH_ERR_INVALID, "object %llu is allocated twice", (unsigned long long)objs[i].key);
      free(objs);
      return EPH_ERR_INVALID;
    }
    m->id[i] = objs[i].key;
    r->start[i + 1] = r->start[i] + objs[i].val;
  }
  free(objs);
  if (!build_index(m)) return nomem(err);
  return EPH_OK;
}

static inline void stamp_max(uint64_t *stamp, size_t i, uint64_t t) {
  if (stamp[i] < t) stamp[i] = t;
}

/* Step 1 (replay): slots and stamps; the final roots onto roots. */
static eph_status replay(const eph_file *p, eph_trace_merlin *m, run *r, stack32 *roots, eph_error *err) {
  size_t n = m->nobjects;
  eph_trace_merlin_stats *st = &m->stats;
  m->death = malloc((n ? n : 1) * sizeof *m->death);
  m->censored = calloc(n ? n : 1, 1);
  if (!m->death || !m->censored) return nomem(err);
  uint64_t *stamp = m->death;
  for (size_t i = 0; i < n; i++) stamp[i] = m->id[i];
  st->pointer_slots = r->start[n];
  if (r->start[n] > SIZE_MAX / sizeof *r->slots) return nomem(err);
  r->slots = malloc((r->start[n] ? (size_t)r->start[n] : 1) * sizeof *r->slots);
  if (!r->slots) return nomem(err);
  memset(r->slots, 0xff, (size_t)r->start[n] * sizeof *r->slots); /* NONE */

  st->events = p->nevents;
  st->allocs = n;
  m->end = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    size_t s, t;
    switch (e->kind) {
      case EPH_EV_ALLOC:
      case EPH_EV_GC:
        break;
      case EPH_EV_STORE: {
        st->stores++;
        if (!eph_trace_merlin_find(m, e->obj, &s)) {
          st->unknown_ids++;
          break;
        }
        if (e->a >= r->start[s + 1] - r->start[s]) {
          st->bad_slots++;
          break;
        }
        uint32_t *slot = &r->slots[r->start[s] + e->a];
        uint32_t old = NONE;
        if (e->b) {
          if (eph_trace_merlin_find(m, e->b, &t)) {
            stamp_max(stamp, t, e->time); /* the write barrier's stamp */
            old = (uint32_t)t;
          } else {
            st->unknown_ids++;
          }
        }
        if (*slot != old && !st->stale_stores++) st->first_stale_event = i;
        *slot = NONE;
        if (e->c) {
          if (eph_trace_merlin_find(m, e->c, &t)) *slot = (uint32_t)t;
          else st->unknown_ids++;
        }
        break;
      }
      case EPH_EV_ROOT:
        if (e->a == 2) continue; /* a root slot's new value: the root order, not reachability */
        if (!eph_trace_merlin_find(m, e->obj, &t)) {
          st->unknown_ids++;
          break;
        }
        if (e->a == 0) {
          st->root_exits++;
          stamp_max(stamp, t, e->time); /* last seen in a root */
        } else {
          st->final_roots++;
          if (!push(roots, (uint32_t)t)) return nomem(err);
        }
        break;
      default: /* DEATH (the online result), TICK: not inputs */
        continue;
    }
    if (e->time > m->end) m->end = e->time;
  }
  return EPH_OK;
}

/* Step 2: marks (m->censored) what the final roots reach over the final graph. */
static eph_status mark(eph_trace_merlin *m, run *r, const stack32 *roots, eph_error *err) {
  uint8_t *marked = m->censored;
  stack32 *s = &r->stack;
  s->len = 0;
  for (size_t i = 0; i < roots->len; i++) {
    uint32_t o = roots->items[i];
    if (marked[o]) continue;
    marked[o] = 1;
    if (!push(s, o)) return nomem(err);
    while (s->len) {
      uint32_t x = s->items[--s->len];
      for (uint64_t k = r->start[x]; k < r->start[x + 1]; k++) {
        uint32_t t = r->slots[k];
        if (t == NONE || marked[t]) continue;
        marked[t] = 1;
        if (!push(s, t)) return nomem(err);
      }
    }
  }
  return EPH_OK;
}

/* Step 3: the backward pass over every dead object (the paper's Fig. 8). */
static eph_status propagate(eph_trace_merlin *m, run *r, eph_error *err) {
  size_t n = m->nobjects, ndead = 0;
  uint64_t *stamp = m->death;
  const uint8_t *censored = m->censored;
  for (size_t i = 0; i < n; i++) ndead += !censored[i];
  m->stats.dead = ndead;
  m->stats.censored = n - ndead;
  r->dead = malloc((ndead ? ndead : 1) * sizeof *r->dead);
  if (!r->dead) return nomem(err);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!censored[i]) r->dead[k++] = (ephtr_pair){stamp[i], i};
  if (!ephtr_sort_pairs(r->dead, ndead)) return nomem(err);
  stack32 *s = &r->stack;
  s->len = 0;
  for (size_t i = 0; i < ndead; i++) /* earliest first: the latest is popped first */
    if (!push(s, (uint32_t)r->dead[i].val)) return nomem(err);
  free(r->dead);
  r->dead = NULL;
  while (s->len) {
    uint32_t src = s->items[--s->len];
    uint64_t ts = stamp[src];
    for (uint64_t j = r->start[src]; j < r->start[src + 1]; j++) {
      uint32_t t = r->slots[j];
      if (t == NONE || censored[t] || stamp[t] >= ts) continue;
      stamp[t] = ts; /* t was reachable from src, so at least as late */
      m->stats.propagations++;
      if (!push(s, t)) return nomem(err);
    }
  }
  for (size_t i = 0; i < n; i++)
    if (censored[i]) stamp[i] = m->end;
  return EPH_OK;
}

eph_status eph_trace_merlin_run(const eph_file *p, eph_trace_merlin *m, eph_error *err) {
  double t0 = ephtr_now();
  memset(m, 0, sizeof *m);
  const char *why = eph_trace_unusable(p);
  if (why) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s", why);
    return EPH_ERR_INVALID;
  }
  run r = {0};
  stack32 roots = {0};
  eph_status st = collect_objects(p, m, &r, err);
  if (st == EPH_OK) st = replay(p, m, &r, &roots, err);
  if (st == EPH_OK) st = mark(m, &r, &roots, err);
  if (st == EPH_OK) st = propagate(m, &r, err);
  free(roots.items);
  run_free(&r);
  m->stats.seconds = ephtr_now() - t0;
  return st;
}

/* --- comparison with the trace's own results ------------------------------------ */

#define UNKNOWN 0
#define ALIVE UINT64_MAX

typedef struct diff_sink {
  eph_trace_diff *diffs;
  size_t max, count;
} diff_sink;

static void add_diff(diff_sink *d, eph_trace_diff_kind kind, uint64_t id, uint64_t offline, uint64_t online,
                     uint64_t other) {
  if (d->count < d->max) d->diffs[d->count] = (eph_trace_diff){kind, id, offline, online, other};
  d->count++;
}

size_t eph_trace_merlin_check(const eph_file *p, const eph_trace_merlin *m, eph_trace_diff *diffs, size_t max,
                              size_t *compared) {
  size_t n = m->nobjects;
  uint64_t *rec = calloc(n ? n : 1, sizeof *rec), *ev = calloc(n ? n : 1, sizeof *ev);
  ephtr_pair *extra = NULL; /* ids the trace gives a result for but never allocates: (id, time) */
  size_t nextra = 0, extra_cap = 0;
  size_t result = SIZE_MAX;
  if (!rec || !ev) goto out;
  for (size_t i = 0, total = p->nevents + p->nrecords; i < total; i++) {
    uint64_t id, t;
    bool is_record = i >= p->nevents;
    if (is_record) {
      const eph_record *r = &p->records[i - p->nevents];
      id = r->id;
      t = r->death_kind == EPH_DEATH_CENSORED ? ALIVE : r->death.bytes;
    } else {
      const eph_event *e = &p->events[i];
      if (e->kind != EPH_EV_DEATH) continue;
      id = e->obj;
      t = e->time;
    }
    size_t k;
    if (eph_trace_merlin_find(m, id, &k)) {
      (is_record ? rec : ev)[k] = t;
      continue;
    }
    if (nextra == extra_cap) {
      extra_cap = extra_cap ? 2 * extra_cap : 64;
      ephtr_pair *x = realloc(extra, extra_cap * sizeof *x);
      if (!x) goto out;
      extra = x;
    }
    extra[nextra++] = (ephtr_pair){id, t};
  }
  if (!ephtr_sort_pairs(extra, nextra)) goto out;
  diff_sink d = {diffs, max, 0};
  size_t x = 0;
  for (size_t i = 0; i <= n; i++) {
    uint64_t id = i < n ? m->id[i] : UINT64_MAX;
    for (; x < nextra && (extra[x].key < id || i == n); x++)
      if (!x || extra[x].key != extra[x - 1].key) add_diff(&d, EPH_TRACE_DIFF_NO_ALLOC, extra[x].key, 0, extra[x].val, 0);
    if (i == n) break;
    uint64_t off = m->censored[i] ? ALIVE : m->death[i];
    uint64_t offline_time = m->death[i];
    if (rec[i] != UNKNOWN && ev[i] != UNKNOWN && rec[i] != ev[i]) {
      add_diff(&d, EPH_TRACE_DIFF_SELF, id, offline_time, rec[i], ev[i]);
      continue;
    }
    uint64_t on = rec[i] != UNKNOWN ? rec[i] : ev[i];
    if (on == UNKNOWN) add_diff(&d, EPH_TRACE_DIFF_NO_ONLINE, id, offline_time, 0, 0);
    else if (on == off) continue;
    else if (on == ALIVE) add_diff(&d, EPH_TRACE_DIFF_OFFLINE_DEAD, id, offline_time, m->end, 0);
    else if (off == ALIVE) add_diff(&d, EPH_TRACE_DIFF_OFFLINE_ALIVE, id, offline_time, on, 0);
    else add_diff(&d, EPH_TRACE_DIFF_TIME, id, offline_time, on, 0);
  }
  result = d.count;
  if (compared) *compared = n;
out:
  free(rec);
  free(ev);
  free(extra);
  return result;
}

/* --- the recomputed profile ---------------------------------------------------------- */

eph_status eph_trace_merlin_write(const eph_file *p, const eph_trace_merlin *m, const char *path, bool compress,
                                  eph_error *err) {
  ephtr_clock clock;
  if (!ephtr_clock_build(p, &clock)) return nomem(err);
  eph_writer *w = ephtr_open_copy(p, path, "offline_merlin", "yes", compress, err);
  if (!w) {
    ephtr_clock_free(&clock);
    return err ? err->status : EPH_ERR_INVALID;
  }
  eph_status st = EPH_OK;
  for (size_t i = 0; i < p->nevents && st == EPH_OK; i++) {
    const eph_event *e = &p->events[i];
    size_t k;
    if (e->kind != EPH_EV_ALLOC || !eph_trace_merlin_find(m, e->obj, &k)) continue;
    eph_record r = {
        .id = e->obj,
        .class_id = (uint32_t)e->a,
        .site_id = (uint32_t)(e->c & EPH_TRACE_SITE_MASK),
        .size = e->b,
        .weight = 1.0,
        .birth = ephtr_clock_at(&clock, e->obj),
        .death = ephtr_clock_at(&clock, m->death[k]),
        .death_kind = m->censored[k] ? EPH_DEATH_CENSORED : EPH_DEATH_EXACT,
    };
    r.alive_until = r.death;
    st = eph_writer_record(w, &r);
  }
  ephtr_clock_free(&clock);
  if (st != EPH_OK) return ephtr_fail_writer(w, st, path, err);
  eph_totals totals = p->totals;
  totals.records = m->nobjects;
  totals.censored = m->stats.censored;
  return ephtr_close(w, &totals, path, err);
}
