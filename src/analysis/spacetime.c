/*
 * spacetime.c — a profile summed by (site, class, lifetime bucket):
 * an open-addressing table keyed by the three, filled in one pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spacetime.h"

const char *eph_life_bucket_name(eph_life_bucket b) {
  static const char *const names[EPH_LIFE_NBUCKETS] = {"<1% of run", "1-5% of run", "5-25% of run", "25-100% of run",
                                                       "alive at exit"};
  return (unsigned)b < EPH_LIFE_NBUCKETS ? names[b] : "?";
}

static eph_life_bucket bucket_of(const eph_record *r, double rel_pct) {
  if (r->death_kind == EPH_DEATH_CENSORED) return EPH_LIFE_ALIVE_AT_EXIT;
  if (rel_pct < 1) return EPH_LIFE_UNDER_1PCT;
  if (rel_pct < 5) return EPH_LIFE_1_5PCT;
  if (rel_pct < 25) return EPH_LIFE_5_25PCT;
  return EPH_LIFE_25_100PCT;
}

static void add(eph_st_sums *s, double w, double size, double life_bytes, double life_s, bool alive) {
  s->objects += w;
  s->bytes += w * size;
  s->byte_bytes += w * size * life_bytes;
  s->byte_seconds += w * size * life_s;
  if (alive) s->alive_bytes += w * size;
}

typedef struct table {
  uint64_t *keys; /* 0: empty (a key is never 0: the bucket is stored + 1) */
  size_t *cell;   /* index into cells */
  size_t cap;     /* a power of two */
} table;

static uint64_t key_of(uint32_t site, uint32_t cls, eph_life_bucket b) {
  return ((uint64_t)site << 24 | (uint64_t)cls << 3 | (uint64_t)b) + 1; /* ids < 2^20 */
}

static size_t slot_of(uint64_t k, size_t cap) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1); }

static bool grow(table *t) {
  size_t cap = t->cap ? 2 * t->cap : 1024;
  uint64_t *keys = calloc(cap, sizeof *keys);
  size_t *cell = malloc(cap * sizeof *cell);
  if (!keys || !cell) {
    free(keys);
    free(cell);
    return false;
  }
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->keys[i]) continue;
    size_t j = slot_of(t->keys[i], cap);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = t->keys[i];
    cell[j] = t->cell[i];
  }
  free(t->keys);
  free(t->cell);
  t->keys = keys;
  t->cell = cell;
  t->cap = cap;
  return true;
}

/* The cell of (site, class, bucket), made if new; NULL when out of memory. */
static eph_st_cell *cell_for(eph_spacetime *s, table *t, size_t *cap_cells, uint32_t site, uint32_t cls,
                             eph_life_bucket b) {
  if (2 * (s->ncells + 1) > t->cap && !grow(t)) return NULL;
  uint64_t k = key_of(site, cls, b);
  size_t j = slot_of(k, t->cap);
  for (; t->keys[j]; j = (j + 1) & (t->cap - 1))
    if (t->keys[j] == k) return &s->cells[t->cell[j]];
  if (s->ncells == *cap_cells) {
    size_t n = *cap_cells ? 2 * *cap_cells : 256;
    eph_st_cell *c = realloc(s->cells, n * sizeof *c);
    if (!c) return NULL;
    s->cells = c;
    *cap_cells = n;
  }
  eph_st_cell *c = &s->cells[s->ncells];
  memset(c, 0, sizeof *c);
  c->site_id = site;
  c->class_id = cls;
  c->bucket = b;
  t->keys[j] = k;
  t->cell[j] = s->ncells++;
  return c;
}

eph_spacetime *eph_spacetime_build(const eph_file *p, eph_death_end end, eph_error *err) {
  if (!p->nrecords || !p->records) {
    eph_error_fill(err, EPH_ERR_INVALID, "the profile has no records");
    return NULL;
  }
  eph_spacetime *s = calloc(1, sizeof *s);
  table t = {0};
  size_t cap_cells = 0;
  if (!s) goto nomem;
  s->profile = p;
  /* The run's length as the report takes it: the totals, or the latest death. */
  double wall = p->complete ? (double)p->totals.wall_ns : 0, bytes = p->complete ? (double)p->totals.bytes_allocated : 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    if ((double)p->records[i].death.wall_ns > wall) wall = (double)p->records[i].death.wall_ns;
    if ((double)p->records[i].death.bytes > bytes) bytes = (double)p->records[i].death.bytes;
  }
  s->run_wall_ns = wall;
  s->run_bytes = bytes;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    double w = r->weight > 0 && isfinite(r->weight) ? r->weight : 1;
    double lb = eph_lifetime_of(r, EPH_CLOCK_BYTES, end, wall);
    double ls = eph_lifetime_of(r, EPH_CLOCK_SECONDS, end, wall);
    double rel = eph_lifetime_of(r, EPH_CLOCK_REL, end, wall);
    bool alive = r->death_kind == EPH_DEATH_CENSORED;
    eph_st_cell *c = cell_for(s, &t, &cap_cells, r->site_id, r->class_id, bucket_of(r, rel));
    if (!c) goto nomem;
    add(&c->sum, w, (double)r->size, lb, ls, alive);
    add(&s->total, w, (double)r->size, lb, ls, alive);
    s->nrecords++;
  }
  free(t.keys);
  free(t.cell);
  return s;
nomem:
  free(t.keys);
  free(t.cell);
  eph_spacetime_free(s);
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory summing %zu records", p->nrecords);
  return NULL;
}

eph_spacetime *eph_spacetime_load(const char *path, eph_death_end end, eph_file **profile, eph_error *err) {
  *profile = NULL;
  eph_file *p = NULL;
  if (eph_file_load(path, &p, err) != EPH_OK) return NULL; /* the message names path */
  eph_spacetime *s = eph_spacetime_build(p, end, err);
  if (!s) {
    eph_error e = *err;
    eph_error_fill(err, e.status, "%s: %s", path, e.message);
    eph_file_free(p);
    return NULL;
  }
  free(p->records);
  p->records = NULL;
  *profile = p;
  return s;
}

void eph_spacetime_free(eph_spacetime *s) {
  if (!s) return;
  free(s->cells);
  free(s);
}
