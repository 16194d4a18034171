/*
 * calibrate.c — `ephemera compare --exact`: a profile's lifetime estimates
 * against the exact ones (merlin or brute) of the same run, class by
 * class, and its brackets object by object.
 *
 * Both sides' figures are eph_life_est (allocation clock, % of each run's
 * own bytes allocated: the two runs allocate the same bytes when the
 * program is deterministic, Merlin's trailer words left out).  The curve
 * distance is sup |F_exact - F_other| over the exact side's grid, the
 * other's F read as a step function at the same % of run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* F of e (on a's grid) at t % of a's run: the last edge at or below t. */
static double F_at(const eph_analysis *a, const double *F, double t) {
  double x = t / 100 * a->run_bytes;
  size_t lo = 0, hi = a->nest_edges; /* edges [0, lo) are <= x */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->est_edges[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo ? F[lo - 1] : 0;
}

static double curve_distance(const eph_analysis *x, const double *Fx, const eph_analysis *y, const double *Fy) {
  if (!Fx || !Fy || !(x->run_bytes > 0) || !(y->run_bytes > 0)) return NAN;
  double d = 0;
  for (size_t i = 0; i < x->nest_edges; i++) {
    double t = 100 * x->est_edges[i] / x->run_bytes;
    if (t > 100) break;
    double v = fabs(Fx[i] - F_at(y, Fy, t));
    if (v > d) d = v;
  }
  return d;
}

static void fill_row(eph_calib_row *r, const eph_analysis *x, const eph_life_est *ex, const eph_analysis *y,
                     const eph_life_est *ey) {
  r->mean_exact = ex->mean_pct;
  r->short_exact = 100 * ex->short_share;
  r->median_exact = ex->median_pct;
  if (!ey) {
    r->mean_est = r->short_est = r->median_est = r->mean_err_pp = r->short_err_pp = r->curve_dist = NAN;
    return;
  }
  r->in_other = true;
  r->mean_est = ey->mean_pct;
  r->mean_se = ey->mean_pct_se;
  r->short_est = 100 * ey->short_share;
  r->short_se = 100 * ey->short_share_se;
  r->median_est = ey->median_pct;
  r->mean_err_pp = r->mean_est - r->mean_exact;
  r->short_err_pp = r->short_est - r->short_exact;
  r->curve_dist = curve_distance(x, ex->F, y, ey->F);
  r->resolved = ey->resolved;
  r->found_by_full = ey->found_by_full;
  r->nepotism_sensitive = ey->nepotism_sensitive;
}

static const eph_group_row *find_row(const eph_analysis *a, const char *name) {
  for (size_t i = 0; i < a->nrows; i++)
    if (!strcmp(a->rows[i].name, name)) return &a->rows[i];
  return NULL;
}

eph_calibration *eph_calibrate(const eph_analysis *exact, const eph_analysis *other) {
  eph_calibration *c = calloc(1, sizeof *c);
  if (!c || !(c->rows = calloc(exact->nrows ? exact->nrows : 1, sizeof *c->rows))) {
    free(c);
    return NULL;
  }
  c->exact = exact;
  c->other = other;
  c->all.name = "(all objects)";
  c->all.pct_objects = 100;
  fill_row(&c->all, exact, &exact->est, other, &other->est);
  for (size_t i = 0; i < exact->nrows; i++) {
    const eph_group_row *x = &exact->rows[i], *y = find_row(other, x->name);
    eph_calib_row *r = &c->rows[c->nrows++];
    r->name = x->name;
    r->pct_objects = x->pct_objects;
    fill_row(r, exact, &x->est, other, y ? &y->est : NULL);
    if (!y || x->pct_objects < exact->opts.most_allocated_pct) continue;
    if (!r->resolved) {
      c->nunresolved++;
      continue;
    }
    c->nresolved++;
    if (fabs(r->short_err_pp) > c->short_err_max_pp) c->short_err_max_pp = fabs(r->short_err_pp);
    if (fabs(r->mean_err_pp) > c->mean_err_max_pp) c->mean_err_max_pp = fabs(r->mean_err_pp);
  }
  return c;
}

void eph_calibration_free(eph_calibration *c) {
  if (!c) return;
  free(c->rows);
  free(c);
}

/* --- brackets, object by object ------------------------------------------------ */

typedef struct id_death {
  uint64_t id, death; /* birth clock (the record id) and exact death, bytes */
} id_death;

typedef struct exact_index {
  id_death *v;
  size_t n, cap;
} exact_index;

static bool take_exact(void *ctx, const eph_record *r, size_t n) {
  exact_index *x = ctx;
  if (x->n + n > x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 1 << 16;
    while (cap < x->n + n) cap *= 2;
    id_death *v = realloc(x->v, cap * sizeof *v);
    if (!v) return false;
    x->v = v;
    x->cap = cap;
  }
  for (size_t i = 0; i < n; i++)
    if (r[i].death_kind != EPH_DEATH_CENSORED) x->v[x->n++] = (id_death){r[i].id, r[i].death.bytes};
  return true;
}

static int id_cmp(const void *p, const void *q) {
  const id_death *a = p, *b = q;
  return a->id < b->id ? -1 : a->id > b->id;
}

typedef struct other_pass {
  const exact_index *x;
  const eph_gc_table *t;
  eph_bracket_stats *s;
} other_pass;

static bool check_other(void *ctx, const eph_record *r, size_t n) {
  other_pass *o = ctx;
  for (size_t i = 0; i < n; i++) {
    if (r[i].death_kind == EPH_DEATH_CENSORED) continue;
    id_death key = {r[i].id, 0};
    const id_death *e = bsearch(&key, o->x->v, o->x->n, sizeof key, id_cmp);
    if (!e) {
      o->s->unmatched++;
      continue;
    }
    eph_iv iv = eph_iv_of(&r[i]);
    eph_bracket b = eph_bracket_of(&iv, o->t);
    /* the bracket's ends are single floats (eph_iv): a relative 1e-6 of slack */
    double birth = (double)r[i].birth.bytes, death = (double)e->death, slack = 1 + 1e-6 * b.hi;
    o->s->joined++;
    bool late = death > (double)r[i].death.bytes, early = death + slack < birth + b.safe_lo;
    if (late) o->s->late_upper++;
    if (death + slack < birth + b.lo) o->s->below_recorded++;
    if (late || early) o->s->violations++;
  }
  return true;
}

static bool drop(void *ctx, const eph_record *r, size_t n) {
  (void)ctx, (void)r, (void)n;
  return true;
}

eph_status eph_bracket_check(const char *exact_path, const char *other_path, eph_bracket_stats *s, eph_error *err) {
  memset(s, 0, sizeof *s);
  exact_index x = {0};
  eph_file *pe = NULL, *po = NULL;
  eph_gc_table t = {0};
  eph_record_sink se = {take_exact, &x}, sd = {drop, NULL};
  eph_status st = eph_file_load_with(exact_path, &se, &pe, err);
  if (st == EPH_OK) {
    qsort(x.v, x.n, sizeof *x.v, id_cmp);
    st = eph_file_load_with(other_path, &sd, &po, err); /* its GC log first: the brackets need it */
  }
  if (st == EPH_OK && !eph_gc_table_build(&t, po)) {
    eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", other_path);
    st = EPH_ERR_NOMEM;
  }
  if (st == EPH_OK) {
    eph_file_free(po);
    po = NULL;
    other_pass o = {&x, &t, s};
    eph_record_sink so = {check_other, &o};
    st = eph_file_load_with(other_path, &so, &po, err);
  }
  eph_gc_table_free(&t);
  eph_file_free(pe);
  eph_file_free(po);
  free(x.v);
  return st;
}
