/*
 * gaps.c — the gaps between samples (sampling.h).
 */
#include <math.h>

#include "sampling.h"

/* Gaps of 1e18 allocations or more are as good as never. */
#define COUNT_GAP_MAX UINT64_C(1000000000000000000)
/* Below UINT64_MAX and INT64_MAX, which the Lua adapter's signed countdown needs. */
#define BYTE_GAP_MAX 9.0e18

uint64_t ephs_count_gap(ephs_rng *r, uint64_t n, bool fixed) {
  if (n <= 1 || fixed) return n ? n : 1;
  if (r->log_keep == 0.0) r->log_keep = log1p(-1.0 / (double)n); /* log(1 - 1/N), once */
  double gap = 1.0 + floor(log(ephs_unit(r)) / r->log_keep);
  return gap < 1.0 ? 1 : gap > 1e18 ? COUNT_GAP_MAX : (uint64_t)gap;
}

uint64_t ephs_byte_gap(ephs_rng *r, uint64_t mean) {
  double gap = -log(ephs_unit(r)) * (double)mean;
  if (gap < 1.0) return 1;
  if (gap > BYTE_GAP_MAX) return (uint64_t)BYTE_GAP_MAX;
  return (uint64_t)gap;
}
