/*
 * sitefold.c — the report's site table on a profile with call stacks:
 * each stack is a site of its own in the file (docs/eph-format.md §5.8),
 * and `--by site --stack-depth N` groups them by their first N frames
 * (N = 1: by allocation point, as a profile without stacks).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "stacks.h"

bool eph_analysis_fold_sites(eph_analysis *a) {
  const eph_file *p = a->profile;
  if (a->opts.by != EPH_BY_SITE || !p->nstacks) return true;
  eph_stack_fold fold;
  if (!eph_stack_fold_build(p, a->opts.stack_depth, &fold)) return false;
  size_t ngroups = fold.ngroups > 0 ? fold.ngroups : 1;
  double(*lo)[EPH_NCLOCKS] = calloc(ngroups, sizeof *lo);
  if (!lo) {
    eph_stack_fold_free(&fold);
    return false;
  }
  /* lo_sum rows are per site so far: add each into its group's. */
  for (size_t site = 0; site < a->nlo_sum; site++) {
    uint32_t g = site < p->nsites ? fold.group_of[site] : 0;
    for (int c = 0; c < EPH_NCLOCKS; c++) lo[g][c] += a->lo_sum[site][c];
  }
  for (size_t i = 0; i < a->nrecords; i++) {
    uint32_t s = a->lives[i].group;
    a->lives[i].group = s < p->nsites ? fold.group_of[s] : 0;
  }
  free(a->lo_sum);
  a->lo_sum = lo;
  a->nlo_sum = ngroups;
  /* The labels become the table's (eph_analysis_free frees up to nsites of them). */
  a->site_labels = fold.labels;
  fold.labels = NULL;
  free(fold.group_of);
  return true;
}
