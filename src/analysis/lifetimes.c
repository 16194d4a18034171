/*
 * lifetimes.c — each record's lifetime on the three clocks, and the run's
 * summary (estimated allocations with their error, means, censoring).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static double stamp_clock(const eph_stamp *s, eph_clock c, double run_wall_ns) {
  switch (c) {
  case EPH_CLOCK_BYTES: return (double)s->bytes;
  case EPH_CLOCK_SECONDS: return (double)s->wall_ns / 1e9;
  default: return run_wall_ns > 0 ? 100.0 * (double)s->wall_ns / run_wall_ns : 0;
  }
}

static double span(const eph_stamp *from, const eph_stamp *to, eph_clock c, double run_wall_ns) {
  double d = stamp_clock(to, c, run_wall_ns) - stamp_clock(from, c, run_wall_ns);
  return d > 0 ? d : 0;
}

double eph_lifetime_of(const eph_record *r, eph_clock c, eph_death_end end, double run_wall_ns) {
  double hi = span(&r->birth, &r->death, c, run_wall_ns);
  double lo = span(&r->birth, &r->alive_until, c, run_wall_ns);
  if (lo > hi) lo = hi;
  switch (end) {
  case EPH_END_ALIVE: return r->death_kind == EPH_DEATH_CENSORED ? hi : lo;
  case EPH_END_MID: return r->death_kind == EPH_DEATH_CENSORED ? hi : (lo + hi) / 2;
  default: return hi;
  }
}

/* Room in a->lo_sum for group g (ids are small and dense: grown on demand). */
static bool lo_sum_reserve(eph_analysis *a, uint32_t g) {
  if (g < a->nlo_sum) return true;
  size_t n = a->nlo_sum ? a->nlo_sum : 64;
  while (n <= g) n *= 2;
  double(*s)[EPH_NCLOCKS] = realloc(a->lo_sum, n * sizeof *s);
  if (!s) return false;
  memset(s + a->nlo_sum, 0, (n - a->nlo_sum) * sizeof *s);
  a->lo_sum = s;
  a->nlo_sum = n;
  return true;
}

bool eph_lifetimes_compute(eph_analysis *a) {
  const eph_profile *p = a->profile;
  /* The run's length: the totals when complete, else the latest stamp seen. */
  double wall = p->complete ? (double)p->totals.wall_ns : 0, bytes = p->complete ? (double)p->totals.bytes_allocated : 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    if ((double)r->death.wall_ns > wall) wall = (double)r->death.wall_ns;
    if ((double)r->death.bytes > bytes) bytes = (double)r->death.bytes;
  }
  a->run_wall_s = wall / 1e9;
  a->run_bytes = bytes;
  a->gc_share = p->complete && p->totals.wall_ns ? (double)p->totals.gc_wall_ns / (double)p->totals.wall_ns : NAN;
  a->lives = calloc(p->nrecords ? p->nrecords : 1, sizeof *a->lives);
  if (!a->lives) return false;
  a->nrecords = p->nrecords;
  double wsum = 0, var_n = 0, bsum = 0, var_b = 0;
  double sum[EPH_NCLOCKS] = {0}, sum_lo[EPH_NCLOCKS] = {0}, sum2[EPH_NCLOCKS] = {0};
  bool exact = p->nrecords > 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    eph_life *l = &a->lives[i];
    l->group = a->opts.by == EPH_BY_SITE ? r->site_id : r->class_id;
    l->weight = r->weight > 0 && isfinite(r->weight) ? r->weight : 1;
    l->size = (double)r->size;
    l->censored = r->death_kind == EPH_DEATH_CENSORED;
    if (l->weight != 1) a->sampled = true;
    if (!lo_sum_reserve(a, l->group)) return false;
    for (int c = 0; c < EPH_NCLOCKS; c++) {
      l->t[c] = eph_lifetime_of(r, (eph_clock)c, a->opts.end, wall);
      double lo = eph_lifetime_of(r, (eph_clock)c, EPH_END_ALIVE, wall);
      sum[c] += l->weight * l->t[c];
      sum_lo[c] += l->weight * lo;
      a->lo_sum[l->group][c] += l->weight * lo;
      sum2[c] += l->weight * l->t[c] * l->t[c];
    }
    uint64_t gb = (uint64_t)r->birth.scavenges + r->birth.full_gcs;
    uint64_t ga = (uint64_t)r->alive_until.scavenges + r->alive_until.full_gcs;
    l->gcs_survived = ga > gb ? (uint32_t)(ga - gb) : 0;
    if (l->censored) a->ncensored++;
    else if (r->death_kind == EPH_DEATH_SCAVENGE || r->death_kind == EPH_DEATH_FULL_GC) a->n_interval++;
    if (!l->censored && r->death_kind != EPH_DEATH_EXACT) exact = false;
    wsum += l->weight;
    var_n += l->weight * (l->weight - 1);
    bsum += l->weight * l->size;
    var_b += l->weight * (l->weight - 1) * l->size * l->size;
  }
  a->exact = exact;
  a->objects_est = wsum;
  a->objects_se = sqrt(var_n);
  a->bytes_est = bsum;
  a->bytes_se = sqrt(var_b);
  for (int c = 0; c < EPH_NCLOCKS; c++) {
    a->mean[c] = wsum > 0 ? sum[c] / wsum : NAN;
    a->mean_lo[c] = wsum > 0 ? sum_lo[c] / wsum : NAN;
    double var = wsum > 0 ? sum2[c] / wsum - a->mean[c] * a->mean[c] : 0;
    a->mean_se[c] = p->nrecords > 1 && var > 0 ? sqrt(var / (double)p->nrecords) : 0;
  }
  return true;
}
