/*
 * stacks.h — call stacks of allocation sites (the STAK chunks of
 * docs/eph-format.md §5.7): a site recorded with a stack is the
 * allocation point plus its callers, innermost first.  And the report's
 * folding by stack prefix: records grouped by their first N frames.
 * Layer: analysis, above the format.
 */
#ifndef EPH_STACKS_H
#define EPH_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"

/* The callers of site (innermost first) into *callers; returns how many
 * (0: no stack).  Points into p. */
size_t eph_stack_callers(const eph_file *p, uint32_t site, const uint32_t **callers);

/* The depth limit the profile's stacks were recorded with (metadata
 * "stacks"), or, without it, 1 + the most callers of any site; 0 when the
 * profile has no stacks. */
unsigned eph_stack_depth(const eph_file *p);

/*
 * Folding by stack prefix: sites whose first `depth` frames (the site,
 * then depth - 1 callers) name the same functions, files and lines get one
 * group id.  Makes fold->group_of[site] for every site id of p and a label
 * per group ("f a.lua:3 < g a.lua:9 < main a.lua:20", innermost first).
 * depth 1 merges sites that differ only in their stacks.  Returns false
 * when out of memory.
 */
typedef struct eph_stack_fold {
  uint32_t *group_of; /* p->nsites entries (0 for site 0, "unknown") */
  char **labels;      /* by group id; labels[0] NULL (unknown site) */
  size_t ngroups;     /* highest group id + 1 */
} eph_stack_fold;
bool eph_stack_fold_build(const eph_file *p, unsigned depth, eph_stack_fold *fold);
void eph_stack_fold_free(eph_stack_fold *fold);

#endif
