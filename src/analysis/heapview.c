/*
 * heapview.c — Merlin (TOPLAS 2006) Fig. 12 from an exact trace's records:
 *  - heap profile: live bytes at each time, split by birth segment; drawn
 *    stacked, the boundaries between segments are Merlin's lines (youngest at
 *    the bottom; the inverted profile puts the oldest at the bottom);
 *  - demise map: where in the age-ordered heap (bytes of older live objects,
 *    oldest at 0) each object was when it became unreachable, and when.
 * Time is bytes allocated.  Positions come from a Fenwick tree over the
 * records in birth order, so the demise map is exact, not binned by segment.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

void eph_heapview_free(eph_heapview *h) {
  if (!h) return;
  free(h->col_time);
  free(h->live);
  free(h->demise);
  free(h);
}

static const eph_record *g_recs; /* qsort has no context argument in C11 */

static int by_birth(const void *x, const void *y) {
  const eph_record *a = &g_recs[*(const size_t *)x], *b = &g_recs[*(const size_t *)y];
  if (a->birth.bytes != b->birth.bytes) return a->birth.bytes < b->birth.bytes ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int by_death(const void *x, const void *y) {
  const eph_record *a = &g_recs[*(const size_t *)x], *b = &g_recs[*(const size_t *)y];
  if (a->death.bytes != b->death.bytes) return a->death.bytes < b->death.bytes ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static void fen_add(double *f, size_t n, size_t i, double v) {
  for (i++; i <= n; i += i & (~i + 1)) f[i - 1] += v;
}

static double fen_prefix(const double *f, size_t i) { /* sum of [0, i) */
  double s = 0;
  for (; i > 0; i -= i & (~i + 1)) s += f[i - 1];
  return s;
}

static size_t col_of(double t, double tmax, size_t cols) { /* first column with col_time >= t */
  if (tmax <= 0) return 0;
  double c = ceil(t / tmax * (double)cols) - 1;
  if (c < 0) return 0;
  return c >= (double)cols ? cols : (size_t)c;
}

eph_heapview *eph_heapview_build(const eph_file *p, size_t cols, size_t segs) {
  size_t n = p->nrecords;
  eph_heapview *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  if (cols < 2) cols = 2;
  if (segs < 1) segs = 1;
  h->cols = cols;
  h->segs = segs;
  h->ybins = 100;
  double tmax = p->complete ? (double)p->totals.bytes_allocated : 0;
  for (size_t i = 0; i < n; i++)
    if ((double)p->records[i].death.bytes > tmax) tmax = (double)p->records[i].death.bytes;
  if (tmax <= 0) tmax = 1;
  h->t_max = tmax;
  h->col_time = malloc(cols * sizeof(double));
  h->live = calloc(segs * (cols + 1), sizeof(double));
  h->demise = calloc(cols * h->ybins, sizeof(double));
  size_t *ob = malloc((n ? n : 1) * sizeof(size_t)), *od = malloc((n ? n : 1) * sizeof(size_t));
  size_t *rank = malloc((n ? n : 1) * sizeof(size_t));
  double *fen = calloc(n ? n : 1, sizeof(double));
  double *ypos = malloc((n ? n : 1) * sizeof(double));
  if (!h->col_time || !h->live || !h->demise || !ob || !od || !rank || !fen || !ypos) {
    free(ob), free(od), free(rank), free(fen), free(ypos);
    eph_heapview_free(h);
    return NULL;
  }
  for (size_t c = 0; c < cols; c++) h->col_time[c] = tmax * (double)(c + 1) / (double)cols;
  /* heap profile: a difference array per segment over the columns (live
   * while birth <= t < death; censored objects live to the end). */
  for (size_t i = 0; i < n; i++) {
    const eph_record *r = &p->records[i];
    double b = (double)r->birth.bytes, d = (double)r->death.bytes;
    size_t s = (size_t)(b / tmax * (double)segs);
    if (s >= segs) s = segs - 1;
    size_t c0 = col_of(b, tmax, cols);
    size_t c1 = r->death_kind == EPH_DEATH_CENSORED ? cols : col_of(d, tmax, cols);
    if (c1 > c0 && c0 < cols && h->col_time[c0] < b) c0++; /* col_of rounds to the column holding b */
    if (c1 <= c0) continue;
    h->live[s * (cols + 1) + c0] += (double)r->size;
    h->live[s * (cols + 1) + c1] -= (double)r->size;
  }
  for (size_t s = 0; s < segs; s++) {
    double acc = 0;
    for (size_t c = 0; c < cols; c++) {
      acc += h->live[s * (cols + 1) + c];
      h->live[s * cols + c] = acc < 0.5 ? 0 : acc; /* compact in place: row s of width cols */
    }
  }
  /* demise map */
  for (size_t i = 0; i < n; i++) ob[i] = od[i] = i;
  g_recs = p->records;
  qsort(ob, n, sizeof *ob, by_birth);
  qsort(od, n, sizeof *od, by_death);
  for (size_t k = 0; k < n; k++) rank[ob[k]] = k;
  size_t nb = 0;
  double ymax = 0;
  for (size_t k = 0; k < n; k++) {
    const eph_record *r = &p->records[od[k]];
    ypos[k] = -1;
    if (r->death_kind == EPH_DEATH_CENSORED) continue;
    while (nb < n && p->records[ob[nb]].birth.bytes <= r->death.bytes) {
      fen_add(fen, n, nb, (double)p->records[ob[nb]].size);
      nb++;
    }
    size_t rk = rank[od[k]];
    if (rk >= nb) continue; /* a record dying before its birth: malformed, skip */
    ypos[k] = fen_prefix(fen, rk);
    if (ypos[k] > ymax) ymax = ypos[k];
    fen_add(fen, n, rk, -(double)r->size);
  }
  h->y_max = ymax > 0 ? ymax : 1;
  for (size_t k = 0; k < n; k++) {
    if (ypos[k] < 0) continue;
    const eph_record *r = &p->records[od[k]];
    size_t c = col_of((double)r->death.bytes, tmax, cols);
    if (c >= cols) c = cols - 1;
    size_t y = (size_t)(ypos[k] / h->y_max * (double)h->ybins);
    if (y >= h->ybins) y = h->ybins - 1;
    h->demise[c * h->ybins + y] += (double)r->size;
  }
  free(ob), free(od), free(rank), free(fen), free(ypos);
  return h;
}
