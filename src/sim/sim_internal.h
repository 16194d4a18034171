/*
 * sim_internal.h — the simulator's prepared input, shared by src/sim files.
 *
 * Objects are dense, indexed by allocation order (ids are birth clocks, so
 * sorting by id is allocation order).  A trace adds the object graph: each
 * pointer object's slots, and the ALLOC/STORE stream that builds it.
 */
#ifndef EPH_SIM_INTERNAL_H
#define EPH_SIM_INTERNAL_H

#include <stdint.h>

#include "ephemera/sim.h"

#define SIM_NONE UINT32_MAX    /* a slot holding no object; an ALLOC op's src */
#define SIM_IMMORTAL UINT64_MAX /* death of an object alive at exit (censored) */

/* Object flags. */
#define SIM_PRETENURED 1u /* the program allocated it in old space (eph_alloc_old) */

/* One step of the program: an allocation (src == SIM_NONE: the next object)
 * or a pointer store (src's slot `slot` now holds `target`). */
typedef struct sim_op {
  uint32_t src, slot, target;
} sim_op;

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
};

#endif
