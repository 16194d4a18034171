/*
 * classtable.c — the per-class (or per-site) table: shares of allocations and
 * memory with their estimation error, mean / median / p90 lifetime on each
 * clock (medians from Kaplan–Meier, so censored objects count as alive),
 * GCs survived, FiLiP's short/long-lived and most-allocated marks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

const char *eph_group_name(const eph_analysis *a, uint32_t id) {
  const eph_file *p = a->profile;
  if (a->opts.by == EPH_BY_SITE) {
    if (a->site_labels && id < p->nsites && a->site_labels[id]) return a->site_labels[id];
    return id ? "?" : "(unknown site)";
  }
  return id < p->nclasses && p->class_names[id] ? p->class_names[id] : "?";
}

static int row_cmp(const void *x, const void *y) {
  const eph_group_row *a = x, *b = y;
  if (a->objects != b->objects) return a->objects > b->objects ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static bool site_labels(eph_analysis *a) {
  const eph_file *p = a->profile;
  a->site_labels = calloc(p->nsites ? p->nsites : 1, sizeof(char *));
  if (!a->site_labels) return false;
  for (size_t i = 0; i < p->nsites; i++) {
    if (!p->sites[i].file) continue;
    const char *f = strrchr(p->sites[i].file, '/');
    f = f ? f + 1 : p->sites[i].file;
    const char *fn = p->sites[i].function ? p->sites[i].function : "";
    size_t len = strlen(f) + strlen(fn) + 32;
    a->site_labels[i] = malloc(len);
    if (!a->site_labels[i]) return false;
    snprintf(a->site_labels[i], len, "%s%s%s:%d", fn, *fn ? " " : "", f, p->sites[i].line);
  }
  return true;
}

bool eph_classtable_build(eph_analysis *a, eph_km_obs *scratch) {
  const eph_file *p = a->profile;
  if (a->opts.by == EPH_BY_SITE && !a->site_labels && !site_labels(a)) return false; /* (folded: sitefold.c's) */
  size_t nids = a->opts.by == EPH_BY_SITE ? p->nsites : p->nclasses;
  uint32_t maxid = 0;
  for (size_t i = 0; i < a->nrecords; i++)
    if (a->lives[i].group > maxid) maxid = a->lives[i].group;
  if ((size_t)maxid + 1 > nids) nids = (size_t)maxid + 1;
  size_t *count = calloc(nids ? nids : 1, sizeof *count);
  size_t *start = calloc(nids + 1, sizeof *start);
  size_t *order = malloc((a->nrecords ? a->nrecords : 1) * sizeof *order);
  eph_km_obs *obs = scratch, *tmp = scratch + a->nrecords;
  bool ok = count && start && order;
  if (!ok) goto out;
  for (size_t i = 0; i < a->nrecords; i++) count[a->lives[i].group]++;
  size_t ngroups = 0;
  for (size_t g = 0; g < nids; g++) {
    start[g + 1] = start[g] + count[g];
    ngroups += count[g] > 0;
  }
  {
    size_t *fill = calloc(nids ? nids : 1, sizeof *fill);
    if (!fill) { ok = false; goto out; }
    for (size_t i = 0; i < a->nrecords; i++) {
      uint32_t g = a->lives[i].group;
      order[start[g] + fill[g]++] = i;
    }
    free(fill);
  }
  a->rows = calloc(ngroups ? ngroups : 1, sizeof *a->rows);
  if (!a->rows) { ok = false; goto out; }
  for (size_t g = 0; g < nids; g++) {
    if (!count[g]) continue;
    eph_group_row *row = &a->rows[a->nrows++];
    row->id = (uint32_t)g;
    row->name = eph_group_name(a, (uint32_t)g);
    row->nrecords = count[g];
    double w = 0, vn = 0, b = 0, vb = 0, gcs = 0, s[EPH_NCLOCKS] = {0}, s2[EPH_NCLOCKS] = {0};
    for (size_t k = start[g]; k < start[g + 1]; k++) {
      const eph_life *l = &a->lives[order[k]];
      w += l->weight;
      vn += l->weight * (l->weight - 1);
      b += l->weight * l->size;
      vb += l->weight * (l->weight - 1) * l->size * l->size;
      gcs += l->weight * l->gcs_survived;
      row->ncensored += l->censored;
      for (int c = 0; c < EPH_NCLOCKS; c++) {
        s[c] += l->weight * l->t[c];
        s2[c] += l->weight * l->t[c] * l->t[c];
      }
    }
    row->objects = w;
    row->objects_se = sqrt(vn);
    row->bytes = b;
    row->bytes_se = sqrt(vb);
    row->gcs_survived = gcs / w;
    row->pct_objects = a->objects_est > 0 ? 100 * w / a->objects_est : 0;
    row->pct_bytes = a->bytes_est > 0 ? 100 * b / a->bytes_est : 0;
    for (int c = 0; c < EPH_NCLOCKS; c++) {
      row->mean[c] = s[c] / w;
      row->mean_lo[c] = a->lo_sum[g][c] / w;
      double var = s2[c] / w - row->mean[c] * row->mean[c];
      row->mean_se[c] = count[g] > 1 && var > 0 ? sqrt(var / (double)count[g]) : 0;
    }
    if (g < a->ngroup_est) row->est = a->group_est[g];
    /* FiLiP's rule on the estimated mean (allocation clock) */
    double mean = isfinite(row->est.mean_pct) && row->est.weight > 0 ? row->est.mean_pct : row->mean[EPH_CLOCK_REL];
    row->short_lived = mean <= a->opts.short_threshold_pct;
    row->most_allocated = row->pct_objects >= a->opts.most_allocated_pct;
  }
  qsort(a->rows, a->nrows, sizeof *a->rows, row_cmp);

  /* Medians and 90th percentiles, from Kaplan-Meier.  The first rows, the
   * largest groups, keep their curve on km_clock (km[1..]): the sort is
   * the same.  km[0], all objects, is eph_analysis's to make. */
  size_t ncurves = a->nrows < a->opts.km_groups ? a->nrows : a->opts.km_groups;
  if (!(a->km = calloc(ncurves + 1, sizeof *a->km))) { ok = false; goto out; }
  a->nkm = ncurves + 1;
  a->km[0].group = UINT32_MAX;
  for (size_t r = 0; r < a->nrows; r++) {
    if (a->opts.progress) a->opts.progress("class table", (double)r / (double)a->nrows, a->opts.progress_ctx);
    eph_group_row *row = &a->rows[r];
    uint32_t g = row->id;
    eph_km *km = r < ncurves ? &a->km[r + 1] : NULL;
    if (km) km->group = g;
    for (int c = 0; c < EPH_NCLOCKS; c++) {
      size_t n = 0;
      for (size_t k = start[g]; k < start[g + 1]; k++) {
        const eph_life *l = &a->lives[order[k]];
        obs[n++] = (eph_km_obs){l->t[c], l->weight, !l->censored};
      }
      static const double q[2] = {0.5, 0.9};
      double at[2];
      if (km && c == (int)a->opts.km_clock) { /* the curve's quantiles are the same */
        if (!eph_km_compute_with(km, obs, n, tmp)) { ok = false; goto out; }
        at[0] = eph_km_quantile(km, q[0]);
        at[1] = eph_km_quantile(km, q[1]);
      } else {
        eph_km_quantiles(obs, n, tmp, q, 2, at);
      }
      row->median[c] = at[0];
      row->p90[c] = at[1];
    }
  }
out:
  free(count);
  free(start);
  free(order);
  return ok;
}
