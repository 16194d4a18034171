/*
 * input.c — turning an .eph file into a simulator input, once.
 *
 * A trace (Merlin with EVTS chunks) gives objects from its ALLOC events,
 * deaths from its records, and the ALLOC/STORE stream; a Merlin profile
 * without events gives objects and deaths only; a gc/finalization profile
 * gives weighted samples whose deaths are intervals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* ALLOC event fields (docs/traces.md): c = site | format << 32 | pretenured << 40. */
#define ALLOC_FORMAT(c) (((c) >> 32) & 0xff)
#define ALLOC_PRETENURED (UINT64_C(1) << 40)

typedef struct id_death {
  uint64_t id, lo, hi;
} id_death;

static int cmp_id_death(const void *a, const void *b) {
  uint64_t x = ((const id_death *)a)->id, y = ((const id_death *)b)->id;
  return x < y ? -1 : x > y;
}

void eph_sim_input_free(eph_sim_input *in) {
  if (!in) return;
  sim_spur_scratch_free(atomic_exchange(&in->spur_scratch, NULL));
  free(in->birth);
  free(in->death);
  free(in->death_lo);
  free(in->size);
  free(in->unit_size);
  free(in->flags);
  free(in->slot_start);
  free(in->ops);
  free(in->size_prefix);
  free(in->death_max1);
  free(in->death_max2);
  for (int k = 0; k < SIM_LONG_LEVELS; k++) free(in->long_lived[k]);
  free(in->big);
  free(in->store_before);
  free(in->store_start);
  free(in->stores);
  free(in->fwd);
  free(in->fwd_src);
  free(in->fwd_src_min1);
  free(in->fwd_src_min2);
  free(in->obj_young_bytes_min);
  free(in->store_young_bytes);
  free(in->store_young_bytes_min);
  free(in->slot_store_start);
  free(in->slot_stores);
  free(in->slot_one);
  free(in->root_start);
  free(in->root_changes);
  free(in);
}

static eph_status nomem(eph_sim_input *in, eph_error *err) {
  eph_sim_input_free(in);
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory preparing the simulation input");
  return EPH_ERR_NOMEM;
}

static bool alloc_objects(eph_sim_input *in, size_t n, bool sampled) {
  in->n = n;
  in->birth = calloc(n ? n : 1, sizeof *in->birth);
  in->death = calloc(n ? n : 1, sizeof *in->death);
  in->size = calloc(n ? n : 1, sizeof *in->size);
  in->flags = calloc(n ? n : 1, 1);
  if (sampled) in->death_lo = calloc(n ? n : 1, sizeof *in->death_lo);
  if (sampled) in->unit_size = calloc(n ? n : 1, sizeof *in->unit_size);
  return in->birth && in->death && in->size && in->flags && (!sampled || (in->death_lo && in->unit_size));
}

/* Index of the object born at id, or SIM_NONE. */
static uint32_t find(const eph_sim_input *in, uint64_t id) {
  size_t lo = 0, hi = in->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (in->birth[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < in->n && in->birth[lo] == id ? (uint32_t)lo : SIM_NONE;
}

/* The records' deaths, sorted by id (death = SIM_IMMORTAL when censored). */
static id_death *record_deaths(const eph_file *p) {
  id_death *d = malloc((p->nrecords ? p->nrecords : 1) * sizeof *d);
  if (!d) return NULL;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    bool censored = r->death_kind == EPH_DEATH_CENSORED;
    d[i] = (id_death){r->id, censored ? SIM_IMMORTAL : r->alive_until.bytes, censored ? SIM_IMMORTAL : r->death.bytes};
  }
  qsort(d, p->nrecords, sizeof *d, cmp_id_death);
  return d;
}

/* The most bytes live at once: objects in birth order, deaths (which free
 * after their time) sorted by time. */
static bool compute_max_live(eph_sim_input *in) {
  id_death *dead = malloc((in->n ? in->n : 1) * sizeof *dead);
  if (!dead) return false;
  size_t nd = 0;
  for (size_t i = 0; i < in->n; i++)
    if (in->death[i] != SIM_IMMORTAL) dead[nd++] = (id_death){in->death[i], in->size[i], 0};
  qsort(dead, nd, sizeof *dead, cmp_id_death);
  uint64_t live = 0, best = 0;
  size_t j = 0;
  for (size_t i = 0; i < in->n; i++) {
    while (j < nd && dead[j].id < in->birth[i]) live -= dead[j++].lo;
    live += in->size[i];
    if (live > best) best = live;
  }
  in->max_live = best;
  free(dead);
  return true;
}

static eph_status load_trace(const eph_file *p, eph_sim_input *in, eph_error *err) {
  size_t nalloc = 0, nstore = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    if (p->events[i].kind == EPH_EV_ALLOC) nalloc++;
    else if (p->events[i].kind == EPH_EV_STORE) nstore++;
  }
  if (!alloc_objects(in, nalloc, false)) return nomem(in, err);
  in->slot_start = malloc((nalloc + 1) * sizeof *in->slot_start);
  in->ops = malloc((nalloc + nstore + 1) * sizeof *in->ops);
  if (!in->slot_start || !in->ops) return nomem(in, err);
  size_t k = 0, ephemerons = 0;
  uint64_t slots = 0, prev = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind != EPH_EV_ALLOC) continue;
    if (k && e->obj <= prev) {
      eph_sim_input_free(in);
      eph_error_fill(err, EPH_ERR_INVALID, "trace: ALLOC events are not in allocation order (id %llu after %llu)",
                     (unsigned long long)e->obj, (unsigned long long)prev);
      return EPH_ERR_INVALID;
    }
    prev = e->obj;
    in->birth[k] = e->obj;
    in->size[k] = (uint32_t)e->b;
    in->flags[k] = (e->c & ALLOC_PRETENURED) ? SIM_PRETENURED : 0;
    in->slot_start[k] = slots;
    uint64_t fmt = ALLOC_FORMAT(e->c);
    if ((fmt == EPH_FORMAT_POINTERS || fmt == EPH_FORMAT_EPHEMERON) && e->b >= 8) slots += (e->b - 8) / 8;
    if (fmt == EPH_FORMAT_EPHEMERON) ephemerons++;
    in->bytes += e->b;
    k++;
  }
  in->slot_start[nalloc] = slots;
  in->nslots = slots;
  in->objects = nalloc;
  /* The program: ALLOC and STORE in order; stores as dense indices. */
  size_t nops = 0;
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind == EPH_EV_ALLOC) {
      in->ops[nops++] = (sim_op){SIM_NONE, 0, 0};
    } else if (e->kind == EPH_EV_STORE) {
      uint32_t src = find(in, e->obj);
      uint32_t dst = e->c ? find(in, e->c) : SIM_NONE;
      if (src == SIM_NONE || (e->c && dst == SIM_NONE) ||
          e->a >= in->slot_start[src + 1] - in->slot_start[src]) {
        in->skipped_stores++;
        continue;
      }
      in->ops[nops++] = (sim_op){src, (uint32_t)e->a, dst};
    }
  }
  in->nops = nops;
  if (!sim_roots_load(in, p, find)) return nomem(in, err);
  /* Deaths from the records (Merlin's last-reachable times). */
  id_death *d = record_deaths(p);
  if (!d) return nomem(in, err);
  size_t j = 0, missing = 0;
  for (size_t i = 0; i < in->n; i++) {
    while (j < p->nrecords && d[j].id < in->birth[i]) j++;
    if (j < p->nrecords && d[j].id == in->birth[i]) in->death[i] = d[j].hi;
    else {
      in->death[i] = SIM_IMMORTAL;
      missing++;
    }
  }
  free(d);
  int len = snprintf(in->caveats, sizeof in->caveats, "%s",
                     in->root_start
                         ? "input: a Merlin trace: exact deaths, the object graph and the root slots (nepotism, "
                           "remembered set, promotion and survivor order exact).\n"
                         : "input: a Merlin trace: exact deaths and the object graph (nepotism, remembered set, "
                           "promotion exact); survivor order within a scavenge is approximated (this trace "
                           "has no root slots: recorded by an older ephemera), which matters only when a "
                           "survivor space overflows.\n");
  if (in->roots_disordered && len > 0 && (size_t)len < sizeof in->caveats)
    len += snprintf(in->caveats + len, sizeof in->caveats - (size_t)len,
                    "the trace's root slot events (ROOT a = 2) are out of time order: ignored.\n");
  if (missing && len > 0 && (size_t)len < sizeof in->caveats)
    len += snprintf(in->caveats + len, sizeof in->caveats - (size_t)len,
                    "%zu objects have no record (a truncated trace?): taken as alive to the end.\n", missing);
  if (in->skipped_stores && len > 0 && (size_t)len < sizeof in->caveats)
    len += snprintf(in->caveats + len, sizeof in->caveats - (size_t)len,
                    "%llu stores name objects or slots the trace never allocated: skipped.\n",
                    (unsigned long long)in->skipped_stores);
  if (ephemerons && len > 0 && (size_t)len < sizeof in->caveats)
    snprintf(in->caveats + len, sizeof in->caveats - (size_t)len,
             "%zu ephemerons: simulated as ordinary objects (Merlin's reachability is strong); the heap mourns "
             "them at its own collections and runs finalisers the trace does not place, so counts may differ.\n",
             ephemerons);
  return EPH_OK;
}

/* Objects from records: Merlin profiles (exact deaths) and samples. */
static eph_status load_records(const eph_file *p, eph_sim_input *in, eph_error *err) {
  bool sampled = in->kind == EPH_SIM_INPUT_SAMPLED;
  if (!alloc_objects(in, p->nrecords, sampled)) return nomem(in, err);
  id_death *order = malloc((p->nrecords ? p->nrecords : 1) * sizeof *order);
  if (!order) return nomem(in, err);
  for (size_t i = 0; i < p->nrecords; i++) order[i] = (id_death){p->records[i].id, i, 0};
  qsort(order, p->nrecords, sizeof *order, cmp_id_death);
  double objects = 0;
  for (size_t k = 0; k < p->nrecords; k++) {
    const eph_record *r = &p->records[order[k].lo];
    double w = sampled && r->weight > 1 ? r->weight : 1;
    bool censored = r->death_kind == EPH_DEATH_CENSORED;
    in->birth[k] = r->birth.bytes ? r->birth.bytes : r->id;
    double bytes = (double)r->size * w;
    in->size[k] = bytes > 4e9 ? UINT32_MAX : (uint32_t)bytes;
    if (sampled) in->unit_size[k] = (uint32_t)r->size;
    in->death[k] = censored ? SIM_IMMORTAL : r->death.bytes;
    if (sampled) in->death_lo[k] = censored ? SIM_IMMORTAL : r->alive_until.bytes;
    in->bytes += in->size[k];
    objects += w;
  }
  free(order);
  in->objects = (uint64_t)(objects + 0.5);
  if (sampled)
    snprintf(in->caveats, sizeof in->caveats,
             "input: a sampled profile (mode %s): each sample stands for `weight` objects, simulated as one "
             "object of weight x size bytes; a death is only known to lie in (alive_until, death], so every "
             "figure is simulated twice, deaths at the earliest and at the latest, and given as a range; no "
             "object graph (no nepotism, no remembered set), no pretenuring.\n",
             eph_file_meta(p, "mode") ? eph_file_meta(p, "mode") : "?");
  else
    snprintf(in->caveats, sizeof in->caveats,
             "input: Merlin lifetimes without events: exact deaths, no object graph, so no nepotism (young "
             "objects kept alive by dead old ones), no remembered-set entries, Cheney order by age and no "
             "pretenured allocations; expect counts and bytes within about 10%%.\n");
  return EPH_OK;
}

eph_status eph_sim_input_from_profile(const eph_file *p, eph_sim_input **out, eph_error *err) {
  *out = NULL;
  eph_sim_input *in = calloc(1, sizeof *in);
  if (!in) return nomem(NULL, err);
  const char *mode = eph_file_meta(p, "mode");
  bool has_allocs = false;
  for (size_t i = 0; i < p->nevents && !has_allocs; i++) has_allocs = p->events[i].kind == EPH_EV_ALLOC;
  eph_status st;
  if (has_allocs) {
    if (!p->complete) {
      free(in);
      eph_error_fill(err, EPH_ERR_INVALID, "a truncated trace (no closing chunk): its last objects' deaths are missing");
      return EPH_ERR_INVALID;
    }
    in->kind = EPH_SIM_INPUT_TRACE;
    st = load_trace(p, in, err);
  } else if (p->nrecords == 0) {
    free(in);
    eph_error_fill(err, EPH_ERR_INVALID, "no records and no ALLOC events: nothing to simulate");
    return EPH_ERR_INVALID;
  } else {
    bool exact = mode && (!strcmp(mode, "merlin") || !strcmp(mode, "brute"));
    in->kind = exact ? EPH_SIM_INPUT_LIFETIMES : EPH_SIM_INPUT_SAMPLED;
    st = load_records(p, in, err);
  }
  if (st != EPH_OK) return st; /* in freed */
  const char *g = eph_file_meta(p, "granule");
  if (g) in->granule = strtoull(g, NULL, 10);
  if (in->granule && in->kind == EPH_SIM_INPUT_TRACE) {
    size_t len = strlen(in->caveats);
    snprintf(in->caveats + len, sizeof in->caveats - len,
             "a granulated trace (granule %llu bytes): deaths are known only at its multiples; collections "
             "placed by the sync scheme (default unsync).\n", (unsigned long long)in->granule);
  }
  if (!compute_max_live(in)) return nomem(in, err);
  if (in->kind != EPH_SIM_INPUT_SAMPLED && !sim_input_prepare(in)) return nomem(in, err);
  *out = in;
  return EPH_OK;
}

eph_status eph_sim_input_load(const char *path, eph_sim_input **out, eph_error *err) {
  *out = NULL;
  eph_file *p;
  eph_error inner;
  eph_status st = eph_file_load(path, &p, &inner);
  if (st != EPH_OK) {
    eph_error_fill(err, st, "%s", inner.message);
    return st;
  }
  st = eph_sim_input_from_profile(p, out, &inner);
  eph_file_free(p);
  if (st != EPH_OK) eph_error_fill(err, st, "%s", inner.message);
  return st;
}

eph_sim_input_kind eph_sim_input_kind_of(const eph_sim_input *in) { return in->kind; }
const char *eph_sim_input_caveats(const eph_sim_input *in) { return in->caveats; }
uint64_t eph_sim_input_objects(const eph_sim_input *in) { return in->objects; }
uint64_t eph_sim_input_bytes(const eph_sim_input *in) { return in->bytes; }
uint64_t eph_sim_input_max_live(const eph_sim_input *in) { return in->max_live; }
uint64_t eph_sim_input_granule(const eph_sim_input *in) { return in->granule; }

const char *eph_sim_input_kind_name(eph_sim_input_kind k) {
  switch (k) {
    case EPH_SIM_INPUT_TRACE: return "trace";
    case EPH_SIM_INPUT_LIFETIMES: return "lifetimes";
    case EPH_SIM_INPUT_SAMPLED: return "sampled";
  }
  return "?";
}
