/*
 * sim_run.h — what every simulated collector shares: the run's clock, its
 * slots (the object graph as the program builds it), the current
 * collection's figures, the event list, committed memory over time.
 */
#ifndef EPH_SIM_RUN_H
#define EPH_SIM_RUN_H

#include "sim_internal.h"

/* A growable array of object indices.  Growth failure sets run->nomem. */
typedef struct simvec {
  uint32_t *v;
  size_t len, cap;
} simvec;

/* The collection under way. */
typedef struct simcur {
  eph_gc_kind kind;
  uint64_t allocated, used_before;
  uint64_t copied, promoted, marked, compacted, remembered, remembered_scanned;
  /* Cost features: objects moved; pointer slots scanned, apart from those
   * of remembered-set entries. */
  uint64_t objects, slots, remembered_slots;
} simcur;

typedef struct simrun {
  const eph_sim_input *in;
  const eph_sim_config *cfg;
  const uint64_t *death;   /* the deaths this run uses (hi or lo end for samples) */
  eph_sim_result *res;
  uint32_t *slots;         /* NULL without an object graph */
  uint64_t page;
  uint64_t clock;          /* bytes allocated before the allocation under way */
  simcur cur;
  size_t events_cap;
  uint64_t committed, committed_since; /* space-time: committed bytes since clock committed_since */
  bool exhausted, nomem;
  /* Granularity (cfg->sync over a granule): the next point of perfect
   * knowledge, and whether natural collections are held back until one. */
  uint64_t granule, next_tick;
  bool hold_natural;
} simrun;

/* The points of perfect knowledge at or before `clock` not yet seen, one
 * call each: returns true and sets *point while there is one. */
bool sim_run_tick(simrun *r, uint64_t clock, uint64_t *point);
/* At a point of perfect knowledge, with `used` bytes of a space of `cap`
 * that the clock fills: whether the scheme collects there. */
bool sim_run_sync_collect(const simrun *r, uint64_t used, uint64_t cap);

/* replay_graph: allocate r->slots for a collector that replays the stores. */
eph_status sim_run_init(simrun *r, const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death,
                       eph_sim_result *res, bool replay_graph, eph_error *err);
void sim_run_free(simrun *r);
eph_status sim_run_nomem(eph_error *err);
/* The program's steps: the trace's ops, or one ALLOC per object without one. */
static inline size_t sim_run_nops(const simrun *r) { return r->in->ops ? r->in->nops : r->in->n; }
static inline sim_op sim_run_op(const simrun *r, size_t i) {
  return r->in->ops ? r->in->ops[i] : (sim_op){SIM_NONE, 0, 0};
}
/* How many of the program's objects object o stands for: a sample's
 * weight (its bytes over one object's), else 1. */
static inline uint64_t sim_run_weight(const simrun *r, uint32_t o) {
  const eph_sim_input *in = r->in;
  return in->unit_size && in->unit_size[o] ? (in->size[o] + in->unit_size[o] / 2) / in->unit_size[o] : 1;
}
/* Committed bytes are now `bytes` (space-time and peak). */
void sim_run_committed(simrun *r, uint64_t bytes);
void sim_run_begin(simrun *r, eph_gc_kind kind, uint64_t used);
void sim_run_end(simrun *r, uint64_t used_after, uint64_t committed);
void sim_vec_grow(simrun *r, simvec *v);
static inline void simvec_push(simrun *r, simvec *v, uint32_t x) {
  if (v->len == v->cap) sim_vec_grow(r, v);
  if (v->len < v->cap) v->v[v->len++] = x; /* else out of memory: the run stops (r->nomem) */
}
/* Totals, mark/cons, space-time to the end; EPH_ERR_NOMEM if memory ran out. */
eph_status sim_run_finish(simrun *r, eph_error *err);

/* The collectors (spur.c, paper.c). */
eph_status sim_spur(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death, eph_sim_result *res,
                    eph_error *err);
/* spur by replaying every allocation and store (spur_replay.c): sim_spur's
 * reference, and its path where the fast one does not apply. */
eph_status sim_spur_replay(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death,
                           eph_sim_result *res, eph_error *err);
/* Whether sim_spur takes its fast path for this input and configuration. */
bool sim_spur_fast_applies(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death);
/* Whether the state arrays sim_spur left in the input's cache are all zero
 * (or none is cached), as the next configuration needs them: for tests. */
bool sim_spur_scratch_clean(const eph_sim_input *in);
eph_status sim_paper(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death, eph_sim_result *res,
                     eph_error *err);

#endif
