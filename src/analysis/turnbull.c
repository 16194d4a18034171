/*
 * turnbull.c — Turnbull's NPMLE of a lifetime distribution from interval-
 * censored, exact and right-censored observations (turnbull.h).
 *
 * The self-consistency step (Turnbull 1976): with cell masses p, each
 * observation u spreads its weight over its cells a..b in proportion to p;
 * the new p is the total so spread.  p_c' = p_c / W * sum_{u covers c}
 * w_u / P_u, P_u = sum_{c=a..b} p_c.  With prefix sums of p and a
 * difference array for the sum over u, a step costs O(obs + cells).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "turnbull.h"

double *eph_tb_grid(double first, double last, int per_decade, double extra, size_t *n) {
  if (!(first > 0) || per_decade < 1) return NULL;
  if (!(last > first)) last = first * 10;
  size_t k = (size_t)ceil(log10(last / first) * per_decade) + 2;
  double *e = malloc((k + 1) * sizeof *e);
  if (!e) return NULL;
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    e[m++] = first * pow(10, (double)i / per_decade);
    if (e[m - 1] >= last) break;
  }
  if (extra > 0) { /* insert in order, unless it is (almost) an edge already */
    size_t i = 0;
    while (i < m && e[i] < extra) i++;
    bool near = (i < m && fabs(e[i] - extra) <= 1e-9 * extra) || (i > 0 && fabs(e[i - 1] - extra) <= 1e-9 * extra);
    if (!near) {
      memmove(e + i + 1, e + i, (m - i) * sizeof *e);
      e[i] = extra;
      m++;
    }
  }
  *n = m;
  return e;
}

bool eph_tb_init(eph_turnbull *tb, const double *edges, size_t nedges) {
  memset(tb, 0, sizeof *tb);
  tb->edge = edges;
  tb->ncells = nedges + 1;
  tb->nslots = 1024;
  tb->slot = calloc(tb->nslots, sizeof *tb->slot);
  return tb->slot != NULL;
}

void eph_tb_free(eph_turnbull *tb) {
  free(tb->obs);
  free(tb->slot);
  free(tb->p);
  memset(tb, 0, sizeof *tb);
}

/* The first cell whose upper edge is >= x (x's cell, x an upper end). */
static uint32_t cell_upto(const eph_turnbull *tb, double x) {
  size_t lo = 0, hi = tb->ncells - 1; /* answer in [lo, hi]; hi: the open last cell */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tb->edge[mid] >= x) hi = mid;
    else lo = mid + 1;
  }
  return (uint32_t)lo;
}

/* The first cell with points above x (x a lower end, excluded). */
static uint32_t cell_after(const eph_turnbull *tb, double x) {
  size_t lo = 0, hi = tb->ncells - 1;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tb->edge[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return (uint32_t)lo;
}

static inline uint64_t key_hash(uint32_t a, uint32_t b, uint8_t kind) {
  uint64_t z = ((uint64_t)a << 34 | (uint64_t)b << 2 | kind) + 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static bool rehash(eph_turnbull *tb) {
  size_t n = tb->nslots * 2;
  uint32_t *s = calloc(n, sizeof *s);
  if (!s) return false;
  for (size_t i = 0; i < tb->nobs; i++) {
    const eph_tb_obs *o = &tb->obs[i];
    size_t h = key_hash(o->a, o->b, o->kind) & (n - 1);
    while (s[h]) h = (h + 1) & (n - 1);
    s[h] = (uint32_t)(i + 1);
  }
  free(tb->slot);
  tb->slot = s;
  tb->nslots = n;
  return true;
}

bool eph_tb_add(eph_turnbull *tb, eph_tb_kind kind, double lo, double hi, double w) {
  uint32_t a, b;
  if (lo < 0) lo = 0;
  if (kind == EPH_TB_POINT) a = b = cell_upto(tb, lo);
  else if (kind == EPH_TB_CENSORED) a = cell_after(tb, lo), b = (uint32_t)(tb->ncells - 1);
  else {
    if (hi < lo) hi = lo;
    b = cell_upto(tb, hi);
    a = cell_after(tb, lo);
    if (a > b) a = b;
  }
  size_t h = key_hash(a, b, (uint8_t)kind) & (tb->nslots - 1);
  for (; tb->slot[h]; h = (h + 1) & (tb->nslots - 1)) {
    eph_tb_obs *o = &tb->obs[tb->slot[h] - 1];
    if (o->a == a && o->b == b && o->kind == kind) break;
  }
  if (!tb->slot[h]) {
    if (tb->nobs == tb->cap) {
      size_t cap = tb->cap ? 2 * tb->cap : 64;
      eph_tb_obs *obs = realloc(tb->obs, cap * sizeof *obs);
      if (!obs) return false;
      tb->obs = obs;
      tb->cap = cap;
    }
    tb->obs[tb->nobs] = (eph_tb_obs){.a = a, .b = b, .kind = (uint8_t)kind};
    tb->slot[h] = (uint32_t)++tb->nobs;
    if (2 * tb->nobs > tb->nslots && !rehash(tb)) return false;
    /* find it again after a rehash */
    for (h = key_hash(a, b, (uint8_t)kind) & (tb->nslots - 1); tb->slot[h] != tb->nobs; h = (h + 1) & (tb->nslots - 1)) {}
  }
  eph_tb_obs *o = &tb->obs[tb->slot[h] - 1];
  o->w += w;
  o->n += 1;
  o->sum_lo += w * lo;
  o->sum_hi += w * (kind == EPH_TB_INTERVAL ? hi : lo);
  tb->W += w;
  tb->N += 1;
  return true;
}

/* Uniform start: each observation's weight spread evenly over its cells. */
static void start_uniform(const eph_turnbull *tb, double *p, double *diff) {
  size_t n = tb->ncells;
  memset(diff, 0, (n + 1) * sizeof *diff);
  for (size_t u = 0; u < tb->nobs; u++) {
    const eph_tb_obs *o = &tb->obs[u];
    double r = o->w / (double)(o->b - o->a + 1);
    diff[o->a] += r;
    diff[o->b + 1] -= r;
  }
  double run = 0, tot = 0;
  for (size_t c = 0; c < n; c++) tot += p[c] = (run += diff[c]) > 0 ? run : 0;
  for (size_t c = 0; c < n; c++) p[c] = tot > 0 ? p[c] / tot : 0;
}

/* One self-consistency step: q from p under weights w (summing to W).
 * scratch: 2 * (ncells + 1).  Returns the log-likelihood of p. */
static double em_step(const eph_turnbull *tb, const double *w, double W, const double *p, double *q, double *scratch) {
  size_t n = tb->ncells;
  double *P = scratch, *diff = scratch + n + 1, ll = 0;
  P[0] = 0;
  for (size_t c = 0; c < n; c++) P[c + 1] = P[c] + p[c];
  memset(diff, 0, (n + 1) * sizeof *diff);
  for (size_t u = 0; u < tb->nobs; u++) {
    const eph_tb_obs *o = &tb->obs[u];
    double m = P[o->b + 1] - P[o->a];
    if (!(w[u] > 0)) continue;
    if (!(m > 0)) {
      ll = -INFINITY;
      continue;
    }
    ll += w[u] * log(m);
    double r = w[u] / m;
    diff[o->a] += r;
    diff[o->b + 1] -= r;
  }
  double run = 0;
  for (size_t c = 0; c < n; c++) {
    run += diff[c];
    q[c] = p[c] * run / W;
  }
  return ll;
}

/* Largest change of F (the cumulative masses) between p and q. */
static double f_change(const double *p, const double *q, size_t n) {
  double a = 0, b = 0, d = 0;
  for (size_t c = 0; c < n; c++) {
    a += p[c], b += q[c];
    if (fabs(a - b) > d) d = fabs(a - b);
  }
  return d;
}

/* EM on weights w (per observation, summing to W) from p, in place,
 * accelerated by SQUAREM (Varadhan and Roland 2008: one extrapolation
 * from two EM steps, kept only if the likelihood does not drop; plain EM
 * creeps for interval-censored data).  scratch: 5 * (ncells + 1).
 * Returns the EM steps taken (negative: not converged). */
static int em(const eph_turnbull *tb, const double *w, double W, double *p, double tol, int max_iter, double *scratch) {
  size_t n = tb->ncells;
  double *s = scratch, *p1 = scratch + 2 * (n + 1), *p2 = p1 + n + 1, *px = p2 + n + 1;
  if (!(W > 0)) return 0;
  int steps = 0;
  while (steps < max_iter) {
    em_step(tb, w, W, p, p1, s);
    em_step(tb, w, W, p1, p2, s);
    steps += 2;
    if (f_change(p1, p2, n) < tol) {
      memcpy(p, p2, n * sizeof *p);
      return steps;
    }
    double rr = 0, vv = 0;
    for (size_t c = 0; c < n; c++) {
      double r = p1[c] - p[c], v = p2[c] - 2 * p1[c] + p[c];
      rr += r * r, vv += v * v;
    }
    double alpha = vv > 0 ? -sqrt(rr / vv) : -1;
    if (alpha > -1) alpha = -1;
    double tot = 0;
    for (size_t c = 0; c < n; c++) {
      double r = p1[c] - p[c], v = p2[c] - 2 * p1[c] + p[c];
      double x = p[c] - 2 * alpha * r + alpha * alpha * v;
      tot += px[c] = x > 0 ? x : 0;
    }
    bool use = tot > 0;
    if (use) {
      for (size_t c = 0; c < n; c++) px[c] /= tot;
      double llx = em_step(tb, w, W, px, p1, s); /* p1: the stabilising step from px */
      double ll2 = em_step(tb, w, W, p2, px, s); /* px: one more step from p2 */
      steps += 2;
      use = llx >= ll2;
      memcpy(p, use ? p1 : px, n * sizeof *p);
    } else {
      memcpy(p, p2, n * sizeof *p);
    }
  }
  return -steps;
}

bool eph_tb_fit(eph_turnbull *tb, double tol, int max_iter) {
  size_t n = tb->ncells;
  bool warm = tb->p != NULL;
  if (!tb->p && !(tb->p = calloc(n, sizeof *tb->p))) return false;
  double *scratch = malloc(5 * (n + 1) * sizeof *scratch), *w = malloc((tb->nobs ? tb->nobs : 1) * sizeof *w);
  if (!scratch || !w) {
    free(scratch);
    free(w);
    return false;
  }
  if (!warm) start_uniform(tb, tb->p, scratch);
  for (size_t u = 0; u < tb->nobs; u++) w[u] = tb->obs[u].w;
  int it = em(tb, w, tb->W, tb->p, tol, max_iter, scratch);
  tb->iterations = abs(it);
  tb->converged = it > 0;
  free(scratch);
  free(w);
  return true;
}

/* F^-1(q), linear within the cell; NAN when it lies beyond every death
 * (only censored objects' mass is there, which the NPMLE may put anywhere
 * after their censoring: Kaplan–Meier's "not reached"). */
static double quantile(const eph_turnbull *tb, const double *p, double q) {
  double cum = 0;
  size_t last = 0;
  bool any = false;
  for (size_t u = 0; u < tb->nobs; u++)
    if (tb->obs[u].kind != EPH_TB_CENSORED && (!any || tb->obs[u].b > last)) last = tb->obs[u].b, any = true;
  for (size_t c = 0; any && c + 1 < tb->ncells && c <= last; c++) {
    if (cum + p[c] >= q - 1e-12 && p[c] > 0) {
      double lo = c ? tb->edge[c - 1] : 0, f = (q - cum) / p[c];
      return lo + (tb->edge[c] - lo) * (f < 0 ? 0 : f > 1 ? 1 : f);
    }
    cum += p[c];
  }
  return NAN;
}

/* Estimates of masses p under observation weights w. */
static eph_tb_est estimates(const eph_turnbull *tb, const double *p, const double *w, double threshold) {
  size_t n = tb->ncells;
  eph_tb_est e = {NAN, NAN, NAN, NAN};
  double F = 0, W = 0, sum = 0;
  /* F(threshold), linear within the cell that holds it */
  for (size_t c = 0; c < n; c++) {
    double lo = c ? tb->edge[c - 1] : 0, hi = c + 1 < n ? tb->edge[c] : INFINITY;
    if (hi <= threshold) F += p[c];
    else {
      if (threshold > lo && isfinite(hi)) F += p[c] * (threshold - lo) / (hi - lo);
      break;
    }
  }
  e.share = F;
  e.median = quantile(tb, p, 0.5);
  e.p90 = quantile(tb, p, 0.9);
  /* means: prefix sums of p and p * midpoint give E[T | cells a..b] */
  double *P = malloc(2 * (n + 1) * sizeof *P);
  if (!P) return e;
  double *M = P + n + 1;
  P[0] = M[0] = 0;
  for (size_t c = 0; c < n; c++) {
    double lo = c ? tb->edge[c - 1] : 0, hi = c + 1 < n ? tb->edge[c] : lo;
    P[c + 1] = P[c] + p[c];
    M[c + 1] = M[c] + p[c] * (lo + hi) / 2;
  }
  for (size_t u = 0; u < tb->nobs; u++) {
    const eph_tb_obs *o = &tb->obs[u];
    if (!(w[u] > 0)) continue;
    W += w[u];
    double scale = w[u] / o->w; /* a bootstrap replicate scales the observation */
    if (o->kind != EPH_TB_INTERVAL) {
      sum += scale * o->sum_lo;
      continue;
    }
    double m = P[o->b + 1] - P[o->a], lo = o->sum_lo / o->w, hi = o->sum_hi / o->w;
    double t = m > 0 ? (M[o->b + 1] - M[o->a]) / m : (lo + hi) / 2;
    if (t < lo) t = lo;
    if (t > hi) t = hi;
    sum += w[u] * t;
  }
  free(P);
  e.mean = W > 0 ? sum / W : NAN;
  return e;
}

eph_tb_est eph_tb_estimates(const eph_turnbull *tb, double threshold) {
  double *w = malloc((tb->nobs ? tb->nobs : 1) * sizeof *w);
  eph_tb_est e = {NAN, NAN, NAN, NAN};
  if (!w || !tb->p) {
    free(w);
    return e;
  }
  for (size_t u = 0; u < tb->nobs; u++) w[u] = tb->obs[u].w;
  e = estimates(tb, tb->p, w, threshold);
  free(w);
  return e;
}

void eph_tb_result_free(eph_tb_result *res) {
  free(res->F);
  free(res->F_lo);
  free(res->F_hi);
  memset(res, 0, sizeof *res);
}

/* splitmix64: the bootstrap's random numbers (fixed seed: a report is repeatable). */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
static double next_unit(uint64_t *s) { return ((double)(next_u64(s) >> 11) + 0.5) / 9007199254740992.0; }

/* A Poisson(mean) draw: Knuth's product for small means, else normal. */
static double poisson(uint64_t *s, double mean) {
  if (mean < 30) {
    double L = exp(-mean), prod = next_unit(s);
    int k = 0;
    while (prod > L) prod *= next_unit(s), k++;
    return k;
  }
  double z = sqrt(-2 * log(next_unit(s))) * cos(6.283185307179586 * next_unit(s));
  double k = floor(mean + sqrt(mean) * z + 0.5);
  return k > 0 ? k : 0;
}

#define TB_TOL 1e-6
#define TB_MAX_ITER 5000
#define TB_BOOT_ITER 400

bool eph_tb_run(eph_turnbull *tb, double threshold, int nboot, uint64_t seed, eph_tb_result *res) {
  memset(res, 0, sizeof *res);
  size_t n = tb->ncells, ne = n - 1;
  if (!eph_tb_fit(tb, TB_TOL, TB_MAX_ITER)) return false;
  res->iterations = tb->iterations;
  res->converged = tb->converged;
  res->est = eph_tb_estimates(tb, threshold);
  res->F = malloc((ne ? ne : 1) * sizeof *res->F);
  if (!res->F) return false;
  double cum = 0;
  for (size_t c = 0; c < ne; c++) res->F[c] = cum += tb->p[c];
  if (nboot < 2 || tb->N < 2) return true;
  double *w = malloc((tb->nobs ? tb->nobs : 1) * sizeof *w), *p = malloc(n * sizeof *p);
  double *scratch = malloc(5 * (n + 1) * sizeof *scratch), *fs = calloc(2 * (ne ? ne : 1), sizeof *fs);
  res->F_lo = malloc((ne ? ne : 1) * sizeof *res->F_lo);
  res->F_hi = malloc((ne ? ne : 1) * sizeof *res->F_hi);
  bool ok = w && p && scratch && fs && res->F_lo && res->F_hi;
  double s[4] = {0}, s2[4] = {0}, cnt[4] = {0};
  uint64_t rng = seed;
  for (int b = 0; ok && b < nboot; b++) {
    double W = 0;
    for (size_t u = 0; u < tb->nobs; u++) W += w[u] = tb->obs[u].w / tb->obs[u].n * poisson(&rng, tb->obs[u].n);
    memcpy(p, tb->p, n * sizeof *p);
    em(tb, w, W, p, TB_TOL, TB_BOOT_ITER, scratch);
    eph_tb_est e = estimates(tb, p, w, threshold);
    const double v[4] = {e.mean, e.share, e.median, e.p90};
    for (int k = 0; k < 4; k++)
      if (isfinite(v[k])) s[k] += v[k], s2[k] += v[k] * v[k], cnt[k]++;
    cum = 0;
    for (size_t c = 0; c < ne; c++) {
      cum += p[c];
      fs[c] += cum;
      fs[ne + c] += cum * cum;
    }
  }
  if (ok) {
    double sd[4];
    for (int k = 0; k < 4; k++) {
      double m = cnt[k] > 1 ? s[k] / cnt[k] : 0, var = cnt[k] > 1 ? (s2[k] / cnt[k] - m * m) * cnt[k] / (cnt[k] - 1) : 0;
      sd[k] = cnt[k] > 1 ? sqrt(var > 0 ? var : 0) : NAN;
    }
    res->se = (eph_tb_est){sd[0], sd[1], sd[2], sd[3]};
    for (size_t c = 0; c < ne; c++) {
      double m = fs[c] / nboot, var = (fs[ne + c] / nboot - m * m) * nboot / (nboot - 1);
      double h = 1.959964 * sqrt(var > 0 ? var : 0);
      res->F_lo[c] = res->F[c] - h < 0 ? 0 : res->F[c] - h;
      res->F_hi[c] = res->F[c] + h > 1 ? 1 : res->F[c] + h;
    }
    res->nboot = nboot;
  }
  free(w);
  free(p);
  free(scratch);
  free(fs);
  if (!ok) eph_tb_result_free(res);
  return ok;
}
