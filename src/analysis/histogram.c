/*
 * histogram.c — weighted lifetime histograms by count and by bytes.  Bins are
 * linear when the lifetimes span less than three orders of magnitude, else
 * logarithmic with two bins per decade (bin 0 holds everything below the
 * first edge, zero lifetimes included).  Censored records are counted apart,
 * at their lower bound.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

void eph_histogram_free(eph_histogram *h) {
  free(h->edges);
  free(h->count);
  free(h->bytes);
  free(h->count_cens);
  free(h->bytes_cens);
  memset(h, 0, sizeof *h);
}

static size_t find_bin(const eph_histogram *h, double v) {
  if (v < h->edges[1]) return 0;
  if (v >= h->edges[h->nbins - 1]) return h->nbins - 1;
  size_t lo = 1, hi = h->nbins - 1; /* edges[lo] <= v < edges[hi] */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (v >= h->edges[mid]) lo = mid;
    else hi = mid;
  }
  return lo;
}

bool eph_histogram_build(eph_histogram *h, const eph_life *lives, size_t n, eph_clock c, size_t linear_bins) {
  memset(h, 0, sizeof *h);
  h->clock = c;
  if (linear_bins < 1) linear_bins = 10;
  double max = 0, minpos = INFINITY;
  for (size_t i = 0; i < n; i++) {
    double v = lives[i].t[c];
    if (v > max) max = v;
    if (v > 0 && v < minpos) minpos = v;
  }
  if (c == EPH_CLOCK_REL && max < 100) max = 100; /* FiLiP's axis: 0..100 % of the run */
  if (max <= 0) max = 1;
  h->log_bins = isfinite(minpos) && max / minpos >= 1000;
  if (h->log_bins) {
    const int per = 2;
    double lo_exp = floor(log10(minpos) * per), hi_exp = ceil(log10(max) * per);
    if (hi_exp <= lo_exp) hi_exp = lo_exp + 1;
    if (log10(max) * per >= hi_exp && c != EPH_CLOCK_REL) hi_exp += 1;
    h->nbins = (size_t)(hi_exp - lo_exp) + 1;
    if (h->nbins > 64) { lo_exp = hi_exp - 63; h->nbins = 64; }
    h->edges = malloc((h->nbins + 1) * sizeof *h->edges);
    if (!h->edges) return false;
    h->edges[0] = 0;
    for (size_t i = 1; i <= h->nbins; i++) h->edges[i] = pow(10, (lo_exp + (double)(i - 1)) / per);
  } else {
    h->nbins = linear_bins;
    h->edges = malloc((h->nbins + 1) * sizeof *h->edges);
    if (!h->edges) return false;
    double width = max / (double)linear_bins;
    if (c != EPH_CLOCK_REL) { /* round the width up to 1, 2 or 5 x 10^k */
      double e = pow(10, floor(log10(width))), m = width / e;
      width = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
      if (c == EPH_CLOCK_BYTES && width < 1) width = 1;
    }
    for (size_t i = 0; i <= h->nbins; i++) h->edges[i] = width * (double)i;
  }
  h->count = calloc(h->nbins, sizeof(double));
  h->bytes = calloc(h->nbins, sizeof(double));
  h->count_cens = calloc(h->nbins, sizeof(double));
  h->bytes_cens = calloc(h->nbins, sizeof(double));
  if (!h->count || !h->bytes || !h->count_cens || !h->bytes_cens) return false;
  for (size_t i = 0; i < n; i++) {
    size_t b = find_bin(h, lives[i].t[c]);
    double w = lives[i].weight;
    if (lives[i].censored) {
      h->count_cens[b] += w;
      h->bytes_cens[b] += w * lives[i].size;
    } else {
      h->count[b] += w;
      h->bytes[b] += w * lives[i].size;
    }
    h->total_count += w;
    h->total_bytes += w * lives[i].size;
  }
  return true;
}
