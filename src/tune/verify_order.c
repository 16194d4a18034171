/*
 * verify_order.c — which configuration the advisor measures next.
 *
 * The model and the simulator see the collector's work, not what another
 * eden size costs the mutator (an eden that falls out of the caches makes
 * every allocation slower; one that is faulted in costs page faults), and
 * that cost is what most often reorders their best few.  So measurement
 * chooses the eden: the first run after the default is the best that keeps
 * the default's eden (its mutator is the default's), the second the
 * model's best overall, and each further run goes to an eden size next to
 * the fastest measured so far, outward while the fastest is at the edge of
 * what was measured — a line search over eden, with the model choosing the
 * other four parameters at each size.  And whether the best measured is
 * clearly faster than the default, which the advisor requires of a pick.
 */
#include <math.h>
#include <stdint.h>

#include "tune_internal.h"

bool tune_same_outcome(const eph_tune_sim *a, const eph_tune_sim *b) {
  return a->scavenges == b->scavenges && a->full_gcs == b->full_gcs && fabs(a->peak_heap - b->peak_heap) < 1 &&
         fabs(a->copied - b->copied) < 1;
}

/* Whether grid element i repeats one measured (itself or its outcome). */
static bool measured_already(const tune_verify_state *v, size_t i) {
  for (int k = 0; k < v->nv; k++)
    if (i == v->verified[k] || tune_same_outcome(&v->sims[i], &v->sims[v->verified[k]])) return true;
  return false;
}

static bool eden_measured(const tune_verify_state *v, size_t eden) {
  for (int k = 0; k < v->nv; k++)
    if (v->grid[v->verified[k]].eden == eden) return true;
  return false;
}

/* The model's best at eden size `eden` not measured yet: its rank in
 * order, or SIZE_MAX. */
static size_t best_rank_at(const tune_verify_state *v, size_t eden) {
  for (size_t r = 0; r < v->feasible; r++)
    if (v->grid[v->order[r]].eden == eden && !measured_already(v, v->order[r])) return r;
  return SIZE_MAX;
}

/* The grid's eden sizes next to `eden`: the largest below and the smallest
 * above (0 when none). */
static void eden_neighbours(const tune_verify_state *v, size_t eden, size_t *below, size_t *above) {
  *below = *above = 0;
  for (size_t r = 0; r < v->feasible; r++) {
    size_t e = v->grid[v->order[r]].eden;
    if (e < eden && e > *below) *below = e;
    if (e > eden && (!*above || e < *above)) *above = e;
  }
}

double tune_speedup_ci(const eph_tune_measurement *def, const eph_tune_measurement *pick) {
  double r = def->mean_s / pick->mean_s;
  double ed = def->mean_s > 0 ? def->ci95_s / def->mean_s : 0, ep = pick->mean_s > 0 ? pick->ci95_s / pick->mean_s : 0;
  return r * sqrt(ed * ed + ep * ep);
}

bool tune_clearly_faster(const eph_tune_measurement *def, const eph_tune_measurement *pick) {
  if (pick->mean_s <= 0) return false;
  double speedup = def->mean_s / pick->mean_s;
  if (pick->n < 2 || def->n < 2) return speedup > 1.05;
  if (pick->n == 2 || def->n == 2) return speedup > 1.05 && pick->max_s < def->min_s;
  return speedup - tune_speedup_ci(def, pick) > 1.0;
}

size_t tune_next_to_verify(const tune_verify_state *v) {
  size_t none = SIZE_MAX;
  /* 1. The best that keeps the default's eden. */
  if (v->nv == 1) {
    size_t r = best_rank_at(v, v->grid[v->verified[0]].eden);
    if (r != none) return v->order[r];
  }
  /* 2. The model's best at another eden, until one is measured. */
  size_t def_eden = v->grid[v->verified[0]].eden;
  bool other = false;
  for (int k = 1; k < v->nv; k++) other |= v->grid[v->verified[k]].eden != def_eden;
  if (!other)
    for (size_t r = 0; r < v->feasible; r++)
      if (v->grid[v->order[r]].eden != def_eden && !measured_already(v, v->order[r])) return v->order[r];
  /* 3. Next to the fastest measured: outward while it is the largest (or
   * smallest) eden measured, else the neighbour the model ranks higher. */
  int best = 0;
  size_t lo = SIZE_MAX, hi = 0;
  for (int k = 0; k < v->nv; k++) {
    size_t e = v->grid[v->verified[k]].eden;
    if (v->score[k] < v->score[best]) best = k;
    if (e < lo) lo = e;
    if (e > hi) hi = e;
  }
  size_t eden = v->grid[v->verified[best]].eden, below, above;
  eden_neighbours(v, eden, &below, &above);
  size_t r_below = below && !eden_measured(v, below) ? best_rank_at(v, below) : none;
  size_t r_above = above && !eden_measured(v, above) ? best_rank_at(v, above) : none;
  size_t r;
  if (eden == hi && eden != lo && r_above != none) r = r_above;
  else if (eden == lo && eden != hi && r_below != none) r = r_below;
  else r = r_above < r_below ? r_above : r_below;
  if (r != none) return v->order[r];
  /* 4. Else the model's order. */
  for (size_t q = 0; q < v->feasible; q++)
    if (!measured_already(v, v->order[q])) return v->order[q];
  return none;
}
