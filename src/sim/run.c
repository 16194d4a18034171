/*
 * run.c — one simulation: the shared run state (simrun), eph_sim_run's
 * dispatch to a collector, and the cost model's prediction.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim_run.h"

#define DEFAULT_HEAP_FACTOR 2.0 /* DaCapo's customary 2x the minimum heap */

static const char *const NAMES[EPH_SIM_NCOLLECTORS] = {"spur", "ss", "fg", "vg", "of"};

const char *eph_sim_collector_name(eph_sim_collector c) {
  return (unsigned)c < EPH_SIM_NCOLLECTORS ? NAMES[c] : NULL;
}

bool eph_sim_collector_parse(const char *name, eph_sim_collector *out) {
  for (unsigned i = 0; i < EPH_SIM_NCOLLECTORS; i++)
    if (!strcmp(name, NAMES[i])) {
      *out = (eph_sim_collector)i;
      return true;
    }
  return false;
}

static const char *const SYNC_NAMES[EPH_SIM_NSYNC] = {"unsync", "syncearly", "syncmid", "synclate"};

const char *eph_sim_sync_name(eph_sim_sync s) { return (unsigned)s < EPH_SIM_NSYNC ? SYNC_NAMES[s] : NULL; }

bool eph_sim_sync_parse(const char *name, eph_sim_sync *out) {
  for (unsigned i = 0; i < EPH_SIM_NSYNC; i++)
    if (!strcasecmp(name, SYNC_NAMES[i])) {
      *out = (eph_sim_sync)i;
      return true;
    }
  return false;
}

bool sim_run_tick(simrun *r, uint64_t clock, uint64_t *point) {
  if (!r->next_tick || r->next_tick > clock) return false;
  *point = r->next_tick;
  r->next_tick += r->granule;
  return true;
}

bool sim_run_sync_collect(const simrun *r, uint64_t used, uint64_t cap) {
  switch (r->cfg->sync) {
    case EPH_SIM_SYNC_EARLY: return used + r->granule > cap; /* the natural point comes within the next granule */
    case EPH_SIM_SYNC_MID: return used + r->granule / 2 > cap; /* within half a granule, either side */
    case EPH_SIM_SYNC_LATE: return used > cap;                 /* it came within the last granule */
    default: return false;
  }
}

void eph_sim_config_init(eph_sim_config *c) {
  memset(c, 0, sizeof *c);
  c->collector = EPH_SIM_SPUR;
  eph_gc_params_init(&c->params);
  c->heap_factor = DEFAULT_HEAP_FACTOR;
}

eph_status sim_run_nomem(eph_error *err) {
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory while simulating");
  return EPH_ERR_NOMEM;
}

eph_status sim_run_init(simrun *r, const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death,
                       eph_sim_result *res, bool replay_graph, eph_error *err) {
  memset(r, 0, sizeof *r);
  r->in = in;
  r->cfg = cfg;
  r->death = death;
  r->res = res;
  long page = sysconf(_SC_PAGESIZE); /* the heap's page (os.c ephh_os_page_size) */
  r->page = page > 0 ? (uint64_t)page : 4096;
  r->granule = cfg->granule ? cfg->granule : in->granule;
  if (r->granule && cfg->sync != EPH_SIM_UNSYNC) {
    r->next_tick = r->granule;
    r->hold_natural = cfg->sync != EPH_SIM_SYNC_EARLY;
  }
  if (in->ops && replay_graph) {
    r->slots = malloc((in->nslots ? in->nslots : 1) * sizeof *r->slots);
    if (!r->slots) return sim_run_nomem(err);
    memset(r->slots, 0xff, in->nslots * sizeof *r->slots); /* SIM_NONE everywhere */
  }
  return EPH_OK;
}

void sim_run_free(simrun *r) {
  free(r->slots);
  r->slots = NULL;
}

void sim_vec_grow(simrun *r, simvec *v) {
  size_t cap = v->cap ? 2 * v->cap : 1024;
  uint32_t *nv = realloc(v->v, cap * sizeof *nv);
  if (!nv) {
    r->nomem = r->exhausted = true; /* stops the run; sim_run_finish reports it */
    return;
  }
  v->v = nv;
  v->cap = cap;
}

void sim_run_committed(simrun *r, uint64_t bytes) {
  if (r->clock > r->committed_since) {
    r->res->space_time += (double)r->committed * (double)(r->clock - r->committed_since);
    r->committed_since = r->clock;
  }
  r->committed = bytes;
  if (bytes > r->res->peak_committed) r->res->peak_committed = bytes;
}

void sim_run_begin(simrun *r, eph_gc_kind kind, uint64_t used) {
  r->cur = (simcur){.kind = kind, .allocated = r->clock, .used_before = used};
  if (used > r->res->peak_used) r->res->peak_used = used;
}

void sim_run_end(simrun *r, uint64_t used_after, uint64_t committed) {
  eph_sim_result *res = r->res;
  simcur *c = &r->cur;
  if (c->kind == EPH_GC_FULL) res->full_gcs++;
  else res->scavenges++;
  res->bytes_copied += c->copied;
  res->bytes_promoted += c->promoted;
  res->bytes_marked += c->marked;
  res->bytes_compacted += c->compacted;
  res->remembered_scanned += c->remembered_scanned;
  res->objects_moved += c->objects;
  if (c->kind == EPH_GC_FULL) {
    res->slots_traced += c->slots + c->remembered_slots;
  } else {
    res->slots_scanned += c->slots;
    res->remembered_slots += c->remembered_slots;
    if (r->cfg->collector == EPH_SIM_SPUR) {
      double distance = eph_sim_eden_distance(r->cfg->params.eden_bytes);
      res->objects_far += (double)c->objects * distance;
      res->bytes_far += (double)(c->copied + c->promoted) * distance;
    }
  }
  res->collection_mib += (double)committed / (1024.0 * 1024.0);
  if (!r->cfg->keep_events) return;
  if (res->nevents == r->events_cap) {
    size_t cap = r->events_cap ? 2 * r->events_cap : 256;
    eph_sim_event *e = realloc(res->events, cap * sizeof *e);
    if (!e) {
      r->nomem = r->exhausted = true;
      return;
    }
    res->events = e;
    r->events_cap = cap;
  }
  res->events[res->nevents++] = (eph_sim_event){
      .kind = c->kind, .allocated = c->allocated, .copied = c->copied, .promoted = c->promoted,
      .marked = c->marked, .compacted = c->compacted, .remembered = c->remembered,
      .heap_after = used_after, .committed = committed};
}

eph_status sim_run_finish(simrun *r, eph_error *err) {
  if (r->nomem) return sim_run_nomem(err);
  eph_sim_result *res = r->res;
  r->clock = r->in->bytes;
  sim_run_committed(r, r->committed);
  res->bytes_allocated = r->in->bytes;
  res->exhausted = r->exhausted;
  double work = (double)(res->bytes_copied + res->bytes_promoted + res->bytes_marked);
  res->mark_cons = res->bytes_allocated ? work / (double)res->bytes_allocated : 0;
  return EPH_OK;
}

static eph_status run_once(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death,
                           eph_sim_result *res, eph_error *err) {
  memset(res, 0, sizeof *res);
  res->collector = cfg->collector;
  res->input = in->kind;
  /* A granule asked of an exact input: its deaths moved up to the next
   * multiple, as `ephemera trace granulate` writes them. */
  uint64_t *granulated = NULL;
  if (cfg->granule) {
    granulated = malloc((in->n ? in->n : 1) * sizeof *granulated);
    if (!granulated) return sim_run_nomem(err);
    for (size_t i = 0; i < in->n; i++)
      granulated[i] = death[i] == SIM_IMMORTAL ? SIM_IMMORTAL : (death[i] + cfg->granule - 1) / cfg->granule * cfg->granule;
    death = granulated;
  }
  eph_status st = cfg->collector == EPH_SIM_SPUR ? sim_spur(in, cfg, death, res, err) : sim_paper(in, cfg, death, res, err);
  free(granulated);
  return st;
}

eph_status eph_sim_granularity_table(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *granules,
                                     size_t ngranules, double *errors, eph_error *err) {
  if (in->kind == EPH_SIM_INPUT_SAMPLED || in->granule) {
    eph_error_fill(err, EPH_ERR_INVALID, "the granularity table needs an exact input (a Merlin trace or profile, not granulated)");
    return EPH_ERR_INVALID;
  }
  eph_sim_config c = *cfg;
  c.keep_events = false;
  c.granule = 0;
  c.sync = EPH_SIM_UNSYNC;
  eph_sim_result exact;
  eph_status st = run_once(in, &c, in->death, &exact, err);
  if (st != EPH_OK) return st;
  double exact_count = (double)(exact.scavenges + exact.full_gcs);
  for (size_t g = 0; g < ngranules; g++)
    for (unsigned k = 0; k < EPH_SIM_NSYNC; k++) {
      c.granule = granules[g];
      c.sync = (eph_sim_sync)k;
      eph_sim_result r;
      st = run_once(in, &c, in->death, &r, err);
      if (st != EPH_OK) return st;
      double *e = &errors[2 * (g * EPH_SIM_NSYNC + k)];
      e[0] = exact.mark_cons > 0 ? (r.mark_cons - exact.mark_cons) / exact.mark_cons : r.mark_cons;
      e[1] = exact_count > 0 ? ((double)(r.scavenges + r.full_gcs) - exact_count) / exact_count
                             : (double)(r.scavenges + r.full_gcs);
    }
  return EPH_OK;
}

eph_status eph_sim_run(const eph_sim_input *in, const eph_sim_config *cfg, const eph_sim_costmodel *cm,
                       eph_sim_result *res, eph_error *err) {
  eph_sim_costmodel def;
  if (!cm) {
    eph_sim_costmodel_default(&def);
    cm = &def;
  }
  if ((unsigned)cfg->collector >= EPH_SIM_NCOLLECTORS) {
    eph_error_fill(err, EPH_ERR_INVALID, "unknown collector %d", (int)cfg->collector);
    return EPH_ERR_INVALID;
  }
  if (cfg->collector == EPH_SIM_SPUR && (cfg->params.stress || cfg->params.stress_full_every)) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameters 'stress' and 'stress_full' are debugging modes: not simulated");
    return EPH_ERR_INVALID;
  }
  eph_status st = run_once(in, cfg, in->death, res, err);
  if (st != EPH_OK) {
    eph_sim_result_free(res);
    return st;
  }
  res->gc_seconds = res->gc_seconds_low = res->gc_seconds_high = eph_sim_predict(cm, res);
  res->early.scavenges = res->scavenges;
  res->early.full_gcs = res->full_gcs;
  res->early.bytes_copied = res->bytes_copied;
  res->early.bytes_promoted = res->bytes_promoted;
  res->early.peak_committed = res->peak_committed;
  if (in->death_lo) {
    eph_sim_config quiet = *cfg;
    quiet.keep_events = false;
    eph_sim_result lo;
    st = run_once(in, &quiet, in->death_lo, &lo, err);
    if (st != EPH_OK) {
      eph_sim_result_free(res);
      return st;
    }
    double t = eph_sim_predict(cm, &lo);
    if (t < res->gc_seconds_low) res->gc_seconds_low = t;
    if (t > res->gc_seconds_high) res->gc_seconds_high = t;
    res->early.scavenges = lo.scavenges;
    res->early.full_gcs = lo.full_gcs;
    res->early.bytes_copied = lo.bytes_copied;
    res->early.bytes_promoted = lo.bytes_promoted;
    res->early.peak_committed = lo.peak_committed;
    eph_sim_result_free(&lo);
  }
  return EPH_OK;
}

void eph_sim_result_free(eph_sim_result *res) {
  if (!res) return;
  free(res->events);
  res->events = NULL;
  res->nevents = 0;
}

double eph_sim_predict(const eph_sim_costmodel *cm, const eph_sim_result *r) {
  double scanned = (double)r->slots_scanned, remembered = (double)r->remembered_slots,
         traced = (double)r->slots_traced;
  if (r->input != EPH_SIM_INPUT_TRACE || r->collector != EPH_SIM_SPUR) {
    /* Slots not counted (no object graph, or a paper collector): the
     * calibration's density; remembered-set entries' slots unknown. */
    scanned = cm->slots_per_byte * (double)(r->bytes_copied + r->bytes_promoted);
    traced = cm->slots_per_byte * (double)r->bytes_marked;
    remembered = 0;
  }
  return cm->per_scavenge * (double)r->scavenges + cm->per_full_gc * (double)r->full_gcs +
         cm->per_byte_copied * (double)r->bytes_copied + cm->per_byte_promoted * (double)r->bytes_promoted +
         cm->per_object_moved * (double)r->objects_moved + cm->per_object_far * r->objects_far +
         cm->per_byte_far * r->bytes_far +
         cm->per_slot_scanned * scanned +
         cm->per_remembered_slot * remembered +
         cm->per_slot_traced * traced + cm->per_byte_marked * (double)r->bytes_marked +
         cm->per_byte_compacted * (double)r->bytes_compacted + cm->per_remembered * (double)r->remembered_scanned +
         cm->per_mib_committed * r->collection_mib;
}
