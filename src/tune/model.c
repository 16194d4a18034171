/*
 * model.c — the advisor's trace-driven simulation of the heap's policy
 * (src/heap: scavenge.c, oldspace.c, alloc.c) over a profile's lifetimes.
 *
 * The advisor screens the whole grid with it (eph_tune_simulate): it
 * needs, per configuration, only the work it implies (bytes copied, full
 * GCs and the live bytes they trace, memory touched, peak heap), and the
 * GC simulator (src/sim) then re-simulates the best few (refine.c).
 *
 * The grid's configurations share their young-generation behaviour per
 * (eden, tenure): that part walks every lifetime once per pair and yields
 * a promotion stream; the old-space policy (headroom, shrink, ratio) then
 * replays the stream, which is short (one event per scavenge).
 *
 * Simplifications (docs/tune.md, "Limits"): eden fills with the sampled
 * objects' weighted bytes (large objects go to old space); a full GC does not
 * tenure the young generation; the objects are independent (no pointer
 * structure: an object survives exactly while it is alive).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/tune.h"

/* An object in old space: when it dies and how many bytes it stands for. */
typedef struct old_obj {
  uint64_t death;
  double bytes;
} old_obj;

typedef struct young_result {
  size_t eden;
  unsigned tenure;
  uint64_t scavenges;
  double copied, promoted;
  /* One event per scavenge (and one at the end): bytes added to old space
   * (tenured + large objects) at time event_t[k]. */
  uint64_t *event_t;
  double *event_add;
  size_t nevents;
  /* Every object that reached old space, sorted by death, with prefix sums. */
  old_obj *old;
  double *old_dead_prefix; /* [i] = bytes of old[0..i-1] */
  size_t nold;
} young_result;

typedef struct survivor {
  size_t idx;
  unsigned age;
} survivor;

typedef struct vec {
  void *p;
  size_t n, cap, elem;
} vec;

static void *vec_push(vec *v) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 1024;
    void *p = realloc(v->p, cap * v->elem);
    if (!p) return NULL;
    v->p = p;
    v->cap = cap;
  }
  return (char *)v->p + v->elem * v->n++;
}

static double bytes_of(const eph_tune_life *o) { return (double)o->size * (double)o->weight; }

static bool to_old(vec *old, const eph_tune_life *o) {
  old_obj *x = vec_push(old);
  if (!x) return false;
  x->death = o->death;
  x->bytes = bytes_of(o);
  return true;
}

static bool event(vec *t, vec *add, uint64_t at, double bytes) {
  uint64_t *pt = vec_push(t);
  double *pa = vec_push(add);
  if (!pt || !pa) return false;
  *pt = at;
  *pa = bytes;
  return true;
}

static int by_death(const void *a, const void *b) {
  const old_obj *x = a, *y = b;
  return x->death < y->death ? -1 : x->death > y->death;
}

/* The young generation under (eden, tenure). */
/* One object alive at a scavenge: promoted when tenured (by age) or when
 * the survivor space has no room for it, else copied there as `as`.  False
 * when out of memory. */
static bool keep(const eph_tune_life *o, survivor as, bool tenured, young_result *r, vec *old, vec *next, double *room,
                 double *add) {
  double b = bytes_of(o);
  r->copied += b;
  if (tenured || b > *room) {
    r->promoted += b;
    *add += b;
    return to_old(old, o);
  }
  *room -= b;
  survivor *n = vec_push(next);
  if (!n) return false;
  *n = as;
  return true;
}

static eph_status simulate_young(const eph_tune_lives *L, size_t eden, unsigned tenure, young_result *r) {
  memset(r, 0, sizeof *r);
  r->eden = eden;
  r->tenure = tenure;
  double survivor_cap = (double)eden / 5.0;
  double large = (double)(256u << 10);
  if (survivor_cap / 2 < large) large = survivor_cap / 2;
  vec surv = {.elem = sizeof(survivor)}, next = {.elem = sizeof(survivor)};
  vec old = {.elem = sizeof(old_obj)}, et = {.elem = sizeof(uint64_t)}, ea = {.elem = sizeof(double)};
  bool ok = true;
  size_t first_young = 0;
  double pending_large = 0, fill = 0;
  for (size_t i = 0; ok && i <= L->n; i++) {
    if (i == L->n) { /* the end: what went to old space since the last scavenge */
      ok = event(&et, &ea, L->end, pending_large);
      break;
    }
    const eph_tune_life *born = &L->lives[i];
    double bytes = bytes_of(born);
    if ((double)born->size >= large) { /* large objects go straight to old space */
      pending_large += bytes;
      ok = to_old(&old, born);
      continue;
    }
    if (fill + bytes <= (double)eden || fill == 0) {
      fill += bytes;
      continue;
    }
    /* Eden is full: the scavenge before this allocation, survivors first
     * (the oldest), then eden's objects [first_young, i). */
    uint64_t T = born->birth;
    double add = 0, room = survivor_cap;
    r->scavenges++;
    next.n = 0;
    survivor *s = surv.p;
    for (size_t k = 0; ok && k < surv.n; k++) {
      const eph_tune_life *o = &L->lives[s[k].idx];
      if (o->death > T) ok = keep(o, (survivor){s[k].idx, s[k].age + 1}, s[k].age >= tenure, r, &old, &next, &room, &add);
    }
    for (size_t j = first_young; ok && j < i; j++) {
      const eph_tune_life *o = &L->lives[j];
      if ((double)o->size < large && o->death > T) ok = keep(o, (survivor){j, 1}, false, r, &old, &next, &room, &add);
    }
    ok = ok && event(&et, &ea, T, add + pending_large);
    pending_large = 0;
    vec tmp = surv;
    surv = next;
    next = tmp;
    first_young = i;
    fill = bytes;
  }
  free(surv.p);
  free(next.p);
  r->event_t = et.p;
  r->event_add = ea.p;
  r->nevents = et.n;
  r->old = old.p;
  r->nold = old.n;
  if (ok) {
    if (r->nold) qsort(r->old, r->nold, sizeof *r->old, by_death);
    r->old_dead_prefix = malloc((r->nold + 1) * sizeof *r->old_dead_prefix);
    if (!r->old_dead_prefix) ok = false;
    else {
      r->old_dead_prefix[0] = 0;
      for (size_t k = 0; k < r->nold; k++) r->old_dead_prefix[k + 1] = r->old_dead_prefix[k] + r->old[k].bytes;
    }
  }
  return ok ? EPH_OK : EPH_ERR_NOMEM;
}

static void young_free(young_result *r) {
  free(r->event_t);
  free(r->event_add);
  free(r->old);
  free(r->old_dead_prefix);
  memset(r, 0, sizeof *r);
}

/* Bytes of old objects dead at or before t. */
static double dead_by(const young_result *r, uint64_t t) {
  size_t lo = 0, hi = r->nold;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->old[mid].death <= t) lo = mid + 1;
    else hi = mid;
  }
  return r->old_dead_prefix[lo];
}

/* Old space under (headroom, shrink, ratio), replaying the promotion stream. */
static void simulate_old(const young_result *r, const eph_tune_config *c, uint64_t end, eph_tune_sim *out) {
  double headroom = (double)c->headroom, shrink = (double)c->shrink;
  /* Memory costs page faults when first touched: `high` is how far the
   * current commitment has been used (decommitting on shrink resets it). */
  double committed = headroom, peak = committed, touched = 0, high = 0;
  double used = 0, promoted_cum = 0;
  double threshold = headroom * (1.0 + c->ratio);
  for (size_t k = 0; k < r->nevents; k++) {
    double add = r->event_add[k];
    if (used + add > threshold && used > 0) {
      /* A full GC: marks and compacts what is live, resizes, re-arms. */
      double live = promoted_cum - dead_by(r, r->event_t[k]);
      if (live < 0) live = 0;
      out->full_gcs++;
      out->marked += live;
      used = live;
      if (committed - used > shrink) committed = used + shrink;
      if (high > committed) high = committed;
      threshold = (used > headroom ? used : headroom) * (1.0 + c->ratio);
    }
    used += add;
    promoted_cum += add;
    if (used > committed) {
      double step = used - committed;
      if (step < headroom) step = headroom;
      committed += step;
    }
    if (used > high) {
      touched += used - high;
      high = used;
    }
    if (committed > peak) peak = committed;
  }
  double new_space = (double)c->eden * 7.0 / 5.0;
  out->peak_heap = peak + new_space;
  /* Eden is touched as far as the run allocates; a survivor space as far
   * as the scavenges fill it. */
  double eden_touched = (double)c->eden < (double)end ? (double)c->eden : (double)end;
  double survivor_touched = out->copied - out->promoted;
  if (survivor_touched > 2.0 * (double)c->eden / 5.0) survivor_touched = 2.0 * (double)c->eden / 5.0;
  out->committed = touched + eden_touched + survivor_touched;
}

eph_status eph_tune_simulate(const eph_tune_lives *lives, const eph_tune_config *configs, size_t n, eph_tune_sim *out) {
  bool *done = calloc(n ? n : 1, sizeof *done);
  if (!done) return EPH_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    out[i].config = configs[i];
  }
  eph_status st = EPH_OK;
  for (size_t i = 0; i < n && st == EPH_OK; i++) {
    if (done[i]) continue;
    young_result y;
    st = simulate_young(lives, configs[i].eden, configs[i].tenure, &y);
    for (size_t j = i; st == EPH_OK && j < n; j++) {
      if (done[j] || configs[j].eden != y.eden || configs[j].tenure != y.tenure) continue;
      out[j].scavenges = y.scavenges;
      out[j].copied = y.copied;
      out[j].promoted = y.promoted;
      simulate_old(&y, &configs[j], lives->end, &out[j]);
      done[j] = true;
    }
    young_free(&y);
  }
  free(done);
  return st;
}

eph_tune_costs eph_tune_costs_nominal(void) {
  /* Orders of magnitude for a ~3 GHz x86-64: Cheney copying ~1 GB/s with
   * the scan, mark-compact ~0.7 GB/s of live data, a first-touch page fault
   * ~1.2 us per 4 KiB page, fixed costs per collection for the roots. */
  eph_tune_costs c = {1.0e-9, 1.5e-9, 0.3e-9, 20e-6, 200e-6, 0, 1};
  return c;
}

static double gc_work(const eph_tune_costs *c, const eph_tune_sim *s) {
  return c->per_copied_byte * s->copied + c->per_marked_byte * s->marked + c->per_scavenge * (double)s->scavenges +
         c->per_full_gc * (double)s->full_gcs;
}

void eph_tune_calibrate(eph_tune_costs *costs, const eph_tune_sim *reference, double measured_wall_s,
                        double measured_gc_s, eph_tune_sim *sims, size_t n) {
  double ref_gc = gc_work(costs, reference);
  if (measured_gc_s > 0 && ref_gc > 0) {
    /* Within a factor of 8 of the nominal costs: a default whose modelled
     * work is tiny (nothing survives) would otherwise blow every unit up. */
    double k = measured_gc_s / ref_gc;
    if (k > 8) k = 8;
    if (k < 0.125) k = 0.125;
    costs->scale = k;
    costs->per_copied_byte *= k;
    costs->per_marked_byte *= k;
    costs->per_scavenge *= k;
    costs->per_full_gc *= k;
  }
  /* The mutator: what the model does not explain of the default's time. */
  double explained = gc_work(costs, reference);
  costs->mutator_s = measured_wall_s > explained ? measured_wall_s - explained : 0;
  /* Page faults happen in the mutator: only the difference from the
   * reference's memory counts. */
  for (size_t i = 0; i < n; i++) {
    sims[i].gc_s = gc_work(costs, &sims[i]);
    double faults = costs->per_committed_byte * (sims[i].committed - reference->committed);
    sims[i].time_s = costs->mutator_s + sims[i].gc_s + faults;
    if (sims[i].time_s < sims[i].gc_s) sims[i].time_s = sims[i].gc_s;
  }
}
