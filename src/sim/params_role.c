/*
 * params_role.c — what `spur` does with each GC parameter of the heap's
 * table (EPH_GC_PARAM_TABLE in heap.h).  A parameter added to the heap has
 * no row here until someone decides how the simulator models it; the test
 * sim.params fails meanwhile.
 */
#include <string.h>

#include "sim_internal.h"

static const struct {
  const char *key, *role;
} ROLES[] = {
    {"eden", "modelled: eden, the two survivor spaces (eden/5 each) and the large-object threshold"},
    {"headroom", "modelled: old space's first size and growth step, the floor of the full-GC threshold"},
    {"shrink", "modelled: free old space above it is given back after a full GC (peak and space-time)"},
    {"ratio", "modelled: a full GC when old space has grown by this fraction"},
    {"tenure", "modelled: survivors are tenured at this age"},
    {"max", "modelled: old space stops at max minus new space; exhaustion ends the simulation"},
    {"stress", "refused: a debugging mode (a scavenge before every allocation), not a configuration"},
    {"stress_full", "refused: a debugging mode (a full GC every N allocations), not a configuration"},
    {"verify", "no effect on collections: the verifier only checks the heap"},
    {"events", "no effect on collections: the heap's event log"},
    {"huge", "no effect on collections: a page-size hint to the OS"},
};

const char *eph_sim_param_role(const char *key) {
  for (size_t i = 0; i < sizeof ROLES / sizeof ROLES[0]; i++)
    if (!strcmp(ROLES[i].key, key)) return ROLES[i].role;
  return NULL;
}
