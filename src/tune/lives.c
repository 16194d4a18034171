/*
 * lives.c — a profile's records as the simulator's lifetimes: birth and
 * death on the bytes clock, size, class, weight (12-32 bytes per record
 * instead of the reader's 112, so a profile of millions loads quickly).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/tune.h"

typedef struct collect {
  eph_tune_lives *l;
  size_t cap;
  bool exact;
  uint64_t end;
} collect;

static bool take(void *ctx, const eph_record *r, size_t n) {
  collect *c = ctx;
  eph_tune_lives *l = c->l;
  if (l->n + n > c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 1 << 16;
    while (cap < l->n + n) cap *= 2;
    eph_tune_life *p = realloc(l->lives, cap * sizeof *p);
    if (!p) return false;
    l->lives = p;
    c->cap = cap;
  }
  for (size_t i = 0; i < n; i++) {
    eph_tune_life *o = &l->lives[l->n++];
    o->birth = r[i].birth.bytes;
    o->size = r[i].size > UINT32_MAX ? UINT32_MAX : (uint32_t)r[i].size;
    o->class_id = r[i].class_id;
    o->weight = (float)(r[i].weight > 0 ? r[i].weight : 1.0);
    /* The run's end on the records' own clock (a censored record's death
     * is the end; the totals count merlin's trailer words too). */
    if (r[i].death.bytes > c->end) c->end = r[i].death.bytes;
    if (r[i].birth.bytes > c->end) c->end = r[i].birth.bytes;
    switch (r[i].death_kind) {
      case EPH_DEATH_CENSORED: o->death = UINT64_MAX; break;
      case EPH_DEATH_SCAVENGE:
      case EPH_DEATH_FULL_GC:
        /* The death lies in (alive_until, death]: take the middle. */
        o->death = r[i].alive_until.bytes + (r[i].death.bytes - r[i].alive_until.bytes) / 2;
        if (o->death < o->birth) o->death = o->birth;
        c->exact = false;
        break;
      default: o->death = r[i].death.bytes; break;
    }
  }
  return true;
}

static int by_birth(const void *a, const void *b) {
  const eph_tune_life *x = a, *y = b;
  return x->birth < y->birth ? -1 : x->birth > y->birth;
}

/* After the records: the runtime check, the class names, birth order. */
static eph_status finish(const char *name, const eph_file *p, const collect *c, eph_tune_lives *out, eph_error *err) {
  const char *rt = eph_file_meta(p, "runtime");
  if (rt && strcmp(rt, "ephemera")) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s: a profile of runtime '%s', not of Ephemera's heap", name, rt);
    eph_tune_lives_free(out);
    return EPH_ERR_INVALID;
  }
  out->exact = c->exact;
  out->end = c->end;
  out->nclasses = p->nclasses;
  out->class_names = calloc(p->nclasses ? p->nclasses : 1, sizeof *out->class_names);
  bool nomem = !out->class_names;
  for (size_t i = 0; !nomem && i < p->nclasses; i++)
    if (p->class_names[i] && !(out->class_names[i] = strdup(p->class_names[i]))) nomem = true;
  if (nomem) {
    eph_tune_lives_free(out);
    eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", name);
    return EPH_ERR_NOMEM;
  }
  /* Records come in id order, which is birth order except across threads. */
  for (size_t i = 1; i < out->n; i++)
    if (out->lives[i].birth < out->lives[i - 1].birth) {
      qsort(out->lives, out->n, sizeof *out->lives, by_birth);
      break;
    }
  return EPH_OK;
}

eph_status eph_tune_lives_load(const char *path, eph_tune_lives *out, eph_error *err) {
  memset(out, 0, sizeof *out);
  collect c = {out, 0, true, 0};
  eph_record_sink sink = {take, &c};
  eph_file *p = NULL;
  eph_status st = eph_file_load_with(path, &sink, &p, err);
  if (st != EPH_OK) {
    eph_tune_lives_free(out);
    return st;
  }
  st = finish(path, p, &c, out, err);
  eph_file_free(p);
  return st;
}

eph_status eph_tune_lives_from_file(const eph_file *p, const char *name, eph_tune_lives *out, eph_error *err) {
  memset(out, 0, sizeof *out);
  collect c = {out, 0, true, 0};
  if (p->nrecords && !take(&c, p->records, p->nrecords)) {
    eph_tune_lives_free(out);
    eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", name);
    return EPH_ERR_NOMEM;
  }
  return finish(name, p, &c, out, err);
}

void eph_tune_lives_free(eph_tune_lives *l) {
  free(l->lives);
  if (l->class_names)
    for (size_t i = 0; i < l->nclasses; i++) free(l->class_names[i]);
  free(l->class_names);
  memset(l, 0, sizeof *l);
}
