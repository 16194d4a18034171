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

/* Room for n more records' lifetimes. */
static bool reserve(eph_lifetimes *lt, size_t more) {
  eph_analysis *a = lt->a;
  size_t need = a->nrecords + more;
  if (need <= lt->cap) return true;
  size_t cap = lt->cap ? 2 * lt->cap : 4096;
  if (cap < need) cap = need; /* a whole profile at once: exactly */
  eph_life *lives = realloc(a->lives, cap * sizeof *lives);
  if (lives) a->lives = lives;
  uint64_t(*walls)[3] = lives ? realloc(lt->walls, cap * sizeof *walls) : NULL;
  if (walls) lt->walls = walls;
  eph_iv *iv = walls ? realloc(lt->iv, cap * sizeof *iv) : NULL;
  if (!iv) return false;
  lt->iv = iv;
  lt->cap = cap;
  return true;
}

/* Keeps the records while every one is an exact death or censored: the
 * heap views, drawn for exact profiles only, need them whole. */
static bool keep(eph_lifetimes *lt, const eph_record *r, size_t n) {
  for (size_t i = 0; i < n && lt->keeping; i++)
    if (r[i].death_kind != EPH_DEATH_CENSORED && r[i].death_kind != EPH_DEATH_EXACT) lt->keeping = false;
  if (!lt->keeping) {
    free(lt->kept);
    lt->kept = NULL;
    lt->nkept = lt->cap_kept = 0;
    return true;
  }
  if (lt->nkept + n > lt->cap_kept) {
    size_t cap = lt->cap_kept ? lt->cap_kept : 4096;
    while (cap < lt->nkept + n) cap *= 2;
    eph_record *k = realloc(lt->kept, cap * sizeof *k);
    if (!k) return false;
    lt->kept = k;
    lt->cap_kept = cap;
  }
  memcpy(lt->kept + lt->nkept, r, n * sizeof *r);
  lt->nkept += n;
  return true;
}

static float span_bytes(const eph_stamp *from, const eph_stamp *to) {
  return to->bytes > from->bytes ? (float)(to->bytes - from->bytes) : 0;
}
static uint32_t collections(const eph_stamp *s) { return s->scavenges + s->full_gcs; }

/* What r's death tells, on the allocation clock (eph_iv). */
eph_iv eph_iv_of(const eph_record *r) {
  eph_iv v = {.lo = span_bytes(&r->birth, &r->alive_until), .hi = span_bytes(&r->birth, &r->death),
              .gc_birth = collections(&r->birth)};
  switch (r->death_kind) {
  case EPH_DEATH_CENSORED: v.kind = EPH_IV_CENSORED, v.lo = v.hi; break;
  case EPH_DEATH_EXACT: v.kind = EPH_IV_POINT, v.lo = v.hi; break;
  case EPH_DEATH_FULL_GC: /* stamps taken as a collection starts: it is the next one */
    v.kind = EPH_IV_FULL;
    v.gc = r->alive_until.bytes > r->birth.bytes ? collections(&r->alive_until) + 1 : 0;
    break;
  case EPH_DEATH_FINALIZED: /* stamped after the collection whose mourning ran the finaliser */
    v.kind = EPH_IV_FINALIZED, v.gc = collections(&r->death), v.lo = 0;
    break;
  default: v.kind = v.lo < v.hi ? EPH_IV_TRUSTED : EPH_IV_POINT; break;
  }
  return v;
}

/* r's lifetime on clock c (the run's wall length: the relative clock's),
 * into l and the sums, at both ends. */
static void take(eph_lifetimes *lt, eph_life *l, const eph_record *r, eph_clock c, double run_wall_ns) {
  l->t[c] = eph_lifetime_of(r, c, lt->a->opts.end, run_wall_ns);
  double lo = eph_lifetime_of(r, c, EPH_END_ALIVE, run_wall_ns);
  lt->sum[c] += l->weight * l->t[c];
  lt->sum_lo[c] += l->weight * lo;
  lt->a->lo_sum[l->group][c] += l->weight * lo;
  lt->sum2[c] += l->weight * l->t[c] * l->t[c];
}

void eph_lifetimes_begin(eph_lifetimes *lt, eph_analysis *a, bool keep_records) {
  memset(lt, 0, sizeof *lt);
  lt->a = a;
  lt->exact = true;
  lt->keeping = keep_records;
}

/* Each record's lifetime on the clocks that need no run length (bytes,
 * seconds) and the sums over them, in record order; the relative clock
 * waits for eph_lifetimes_finish, with the wall stamps it needs. */
bool eph_lifetimes_add(eph_lifetimes *lt, const eph_record *recs, size_t n) {
  eph_analysis *a = lt->a;
  if (!reserve(lt, n) || (lt->keeping && !keep(lt, recs, n))) return false;
  for (size_t i = 0; i < n; i++) {
    const eph_record *r = &recs[i];
    if ((double)r->death.wall_ns > lt->max_wall) lt->max_wall = (double)r->death.wall_ns;
    if ((double)r->death.bytes > lt->max_bytes) lt->max_bytes = (double)r->death.bytes;
    eph_life *l = &a->lives[a->nrecords];
    uint64_t *w = lt->walls[a->nrecords];
    a->nrecords++;
    memset(l, 0, sizeof *l);
    l->group = a->opts.by == EPH_BY_SITE ? r->site_id : r->class_id;
    l->weight = r->weight > 0 && isfinite(r->weight) ? r->weight : 1;
    l->size = (double)r->size;
    l->censored = r->death_kind == EPH_DEATH_CENSORED;
    if (l->weight != 1) a->sampled = true;
    if (!lo_sum_reserve(a, l->group)) return false;
    take(lt, l, r, EPH_CLOCK_BYTES, 0);
    take(lt, l, r, EPH_CLOCK_SECONDS, 0);
    w[0] = r->birth.wall_ns;
    w[1] = r->death.wall_ns;
    w[2] = r->alive_until.wall_ns;
    lt->iv[a->nrecords - 1] = eph_iv_of(r);
    uint64_t gb = (uint64_t)r->birth.scavenges + r->birth.full_gcs;
    uint64_t ga = (uint64_t)r->alive_until.scavenges + r->alive_until.full_gcs;
    l->gcs_survived = ga > gb ? (uint32_t)(ga - gb) : 0;
    if (l->censored) a->ncensored++;
    else if (r->death_kind == EPH_DEATH_SCAVENGE || r->death_kind == EPH_DEATH_FULL_GC) a->n_interval++;
    if (!l->censored && r->death_kind != EPH_DEATH_EXACT) lt->exact = false;
    lt->wsum += l->weight;
    lt->var_n += l->weight * (l->weight - 1);
    lt->bsum += l->weight * l->size;
    lt->var_b += l->weight * (l->weight - 1) * l->size * l->size;
  }
  return true;
}

void eph_lifetimes_finish(eph_lifetimes *lt) {
  eph_analysis *a = lt->a;
  const eph_file *p = a->profile;
  /* The run's length: the totals when complete, else the latest stamp seen. */
  double wall = p->complete ? (double)p->totals.wall_ns : 0, bytes = p->complete ? (double)p->totals.bytes_allocated : 0;
  /* Merlin's run counts its two trailer words an object; its records' clocks do not */
  const char *mode = eph_file_meta(p, "mode");
  if (mode && !strcmp(mode, "merlin") && bytes >= 16.0 * (double)p->totals.objects_allocated)
    bytes -= 16.0 * (double)p->totals.objects_allocated;
  if (lt->max_wall > wall) wall = lt->max_wall;
  if (lt->max_bytes > bytes) bytes = lt->max_bytes;
  a->run_wall_s = wall / 1e9;
  a->run_bytes = bytes;
  a->gc_share = p->complete && p->totals.wall_ns ? (double)p->totals.gc_wall_ns / (double)p->totals.wall_ns : NAN;
  for (size_t i = 0; i < a->nrecords; i++) {
    eph_life *l = &a->lives[i];
    eph_record r = {.death_kind = l->censored ? EPH_DEATH_CENSORED : EPH_DEATH_EXACT};
    r.birth.wall_ns = lt->walls[i][0];
    r.death.wall_ns = lt->walls[i][1];
    r.alive_until.wall_ns = lt->walls[i][2];
    take(lt, l, &r, EPH_CLOCK_REL, wall);
  }
  a->exact = a->nrecords > 0 && lt->exact;
  a->objects_est = lt->wsum;
  a->objects_se = sqrt(lt->var_n);
  a->bytes_est = lt->bsum;
  a->bytes_se = sqrt(lt->var_b);
  for (int k = 0; k < EPH_NCLOCKS; k++) {
    a->mean[k] = lt->wsum > 0 ? lt->sum[k] / lt->wsum : NAN;
    a->mean_lo[k] = lt->wsum > 0 ? lt->sum_lo[k] / lt->wsum : NAN;
    double var = lt->wsum > 0 ? lt->sum2[k] / lt->wsum - a->mean[k] * a->mean[k] : 0;
    a->mean_se[k] = a->nrecords > 1 && var > 0 ? sqrt(var / (double)a->nrecords) : 0;
  }
}

void eph_lifetimes_free(eph_lifetimes *lt) {
  free(lt->walls);
  free(lt->iv);
  free(lt->kept);
  memset(lt, 0, sizeof *lt);
}
