/*
 * sim_internal.h — the simulator's prepared input, shared by src/sim files.
 *
 * Objects are dense, indexed by allocation order (ids are birth clocks, so
 * sorting by id is allocation order).  A trace adds the object graph: each
 * pointer object's slots, and the ALLOC/STORE stream that builds it.
 */
#ifndef EPH_SIM_INTERNAL_H
#define EPH_SIM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ephemera/sim.h"

#define SIM_NONE UINT32_MAX    /* a slot holding no object; an ALLOC op's src */
#define SIM_MULTI (UINT32_MAX - 1) /* slot_one: several stores */
#define SIM_IMMORTAL UINT64_MAX /* death of an object alive at exit (censored) */

/* Object flags. */
#define SIM_PRETENURED 1u /* the program allocated it in old space (eph_alloc_old) */

/* One step of the program: an allocation (src == SIM_NONE: the next object)
 * or a pointer store (src's slot `slot` now holds `target`). */
typedef struct sim_op {
  uint32_t src, slot, target;
} sim_op;

/* One pointer store as spur's fast path reads it (prepare.c): the store's
 * rank among the program's stores and the object stored. */
typedef struct sim_store {
  uint32_t seq, target;
} sim_store;

/* A store of an object born after the one stored into (target > src): the
 * only kind that can make an object tenured by age young-pointing. */
typedef struct sim_fwd_store {
  uint32_t seq, src, target;
} sim_fwd_store;

/* A root slot's new value (ROOT a = 2): from `time` on, it holds target. */
typedef struct sim_root_change {
  uint64_t time;
  uint32_t target; /* SIM_NONE: no object, or the slot is gone */
} sim_root_change;

/* Objects that may be allocated in old space: pretenured, or with a payload
 * of at least this many bytes (the smallest large-object threshold spur
 * takes the fast path for: half a 4K survivor space). */
#define SIM_BIG_PAYLOAD 2048u
/* Death maxima over blocks of objects in birth order (prepare.c). */
#define SIM_BLOCK1 64u
#define SIM_BLOCK2 4096u
#define SIM_STORE_BLOCK 16u
/* Lifetimes (in bytes allocated) above which objects are listed (long_lived), ascending. */
#define SIM_LONG_LEVELS 4
static const uint64_t SIM_LONG[SIM_LONG_LEVELS] = {16u << 10, 64u << 10, 256u << 10, 1u << 20};
/* Minima of fwd_src over blocks of forward stores (prepare.c). */
#define SIM_FWD_BLOCK1 16u
#define SIM_FWD_BLOCK2 512u

struct eph_sim_input {
  eph_sim_input_kind kind;
  size_t n;              /* objects */
  uint64_t *birth;       /* the clock just after its allocation (its id) */
  uint64_t *death;       /* last-reachable time (hi end for samples); SIM_IMMORTAL when censored */
  uint64_t *death_lo;    /* sampled: the earliest the death can be (alive_until); else NULL */
  uint32_t *size;        /* bytes: header and payload (x weight for samples) */
  uint32_t *unit_size;   /* samples: one object's bytes (the large-object rule reads it); else NULL */
  uint8_t *flags;
  uint64_t *slot_start;  /* trace: n + 1 offsets into a run's slot array */
  uint64_t nslots;
  sim_op *ops;           /* trace: the program */
  size_t nops;
  uint64_t bytes;        /* allocated in all */
  uint64_t objects;      /* allocated in all (weighted) */
  uint64_t max_live;     /* the most bytes live at once */
  uint64_t skipped_stores; /* stores naming objects the trace never allocated */
  uint64_t granule;      /* a granulated trace's granule (meta `granule`), 0 if exact */
  char caveats[1024];
  /* trace: the root slots over time in the scavenger's order (the shadow
   * stack's, then the globals'); NULL for a trace without ROOT a = 2. */
  size_t nroots;
  uint64_t *root_start;         /* nroots + 1 offsets into root_changes */
  sim_root_change *root_changes; /* per slot, in time order */
  bool roots_disordered;         /* the trace's root slot events were out of time order: ignored */
  /* Prepared once for spur's fast path (prepare.c; NULL for sampled inputs):
   * nothing here depends on a configuration. */
  uint64_t *size_prefix;  /* n + 1: bytes of objects 0..i-1 */
  uint64_t *death_max1;   /* the largest death in each SIM_BLOCK1 objects */
  uint64_t *death_max2;   /* ... in each SIM_BLOCK2 objects */
  /* Per level k, the objects that live more than SIM_LONG[k] bytes of
   * allocation, in birth order: among eden's objects born that long before
   * a scavenge, only these can survive it. */
  uint32_t *long_lived[SIM_LONG_LEVELS];
  size_t nlong_lived[SIM_LONG_LEVELS];
  uint32_t *big;          /* objects that may go to old space (above), in birth order */
  size_t nbig;
  uint32_t *store_before; /* trace: stores the program made before object i's ALLOC */
  uint64_t *store_start;  /* trace: n + 1 offsets into stores */
  sim_store *stores;      /* trace: the stores into each object, in program order */
  size_t nstores;
  /* trace, per entry of stores: bytes of objects that can only be young
   * (not in big) allocated after the target and before the store
   * (UINT32_MAX if more, or no target); and its minimum per SIM_STORE_BLOCK. */
  uint32_t *store_young_bytes, *store_young_bytes_min;
  uint64_t *slot_store_start; /* trace: nslots + 1 offsets into slot_stores */
  sim_store *slot_stores; /* trace: the stores into each slot, in program order */
  /* trace, per slot: its only store ({UINT32_MAX, SIM_NONE} if none), or
   * {first store's rank, SIM_MULTI} if several (then see slot_stores). */
  sim_store *slot_one;
  sim_fwd_store *fwd;     /* trace: the stores with target > src, in program order */
  size_t nfwd;
  uint32_t *fwd_src;      /* trace: fwd[k].src again, densely: the barrier's scan reads only these */
  /* trace: the smallest fwd_src in each SIM_FWD_BLOCK1 / SIM_FWD_BLOCK2
   * forward stores: the barrier skips blocks of stores into objects all
   * born after the last collection. */
  uint32_t *fwd_src_min1, *fwd_src_min2;
  /* trace, per object: the least store_young_bytes over its stores
   * (UINT32_MAX without stores): an object tenured by overflow whose least
   * is above tenure x eden never passes the barrier. */
  uint32_t *obj_young_bytes_min;
  /* spur's per-object state arrays of the last configuration, left zeroed,
   * for the next one to take (spur.c): a cache, not part of the input's
   * meaning; taken and given back atomically, so threads may still share
   * the input.  Freed with it. */
  _Atomic(struct spur_scratch *) spur_scratch;
};

/* Reads the trace's root slots (roots.c); false when out of memory. */
struct eph_file;
bool sim_roots_load(eph_sim_input *in, const struct eph_file *p, uint32_t (*find)(const eph_sim_input *, uint64_t));
/* The object root slot `slot` holds at the collection inside the
 * allocation whose clock ends at `when` (SIM_NONE: none). */
uint32_t sim_root_at(const eph_sim_input *in, size_t slot, uint64_t when);
/* sim_root_at for a caller whose `when` never decreases: *seen (0 the
 * first time, then left as this sets it) counts the slot's changes at or
 * before the last `when`, and the search gallops on from there, so a slot
 * that changes at every allocation costs a few probes per collection. */
uint32_t sim_root_at_from(const eph_sim_input *in, size_t slot, uint64_t when, uint64_t *seen);

/* Frees a cached pair of spur's state arrays (spur.c); NULL is fine. */
struct spur_scratch;
void sim_spur_scratch_free(struct spur_scratch *x);

/* Fills the fast path's tables of `in` (prepare.c); false when out of memory. */
bool sim_input_prepare(eph_sim_input *in);

#endif
