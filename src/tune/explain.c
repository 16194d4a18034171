/*
 * explain.c — why the recommendation works, in terms a user acts on: the
 * classes whose objects outlive the default eden (their bytes are what the
 * scavenger copies and what fills old space).  What the pick changes in
 * copying, full GCs and peak heap is in the two simulations themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

typedef struct class_volume {
  double bytes;
  size_t id;
} class_volume;

static int by_bytes_desc(const void *a, const void *b) {
  const class_volume *x = a, *y = b;
  return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

bool tune_why(const eph_tune_lives *L, const eph_tune_sim *def, eph_tune_why *why) {
  /* Long-lived: survives the default's first scavenge, i.e. lives longer
   * than one default eden of allocation. */
  memset(why, 0, sizeof *why);
  why->threshold = def->config.eden;
  class_volume *v = calloc(L->nclasses ? L->nclasses : 1, sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < L->nclasses; i++) v[i].id = i;
  for (size_t i = 0; i < L->n; i++) {
    const eph_tune_life *o = &L->lives[i];
    double b = (double)o->size * (double)o->weight;
    why->all_bytes += b;
    if (o->death - o->birth > why->threshold && o->class_id < L->nclasses) {
      v[o->class_id].bytes += b;
      why->longlived_bytes += b;
    }
  }
  qsort(v, L->nclasses, sizeof *v, by_bytes_desc);
  for (size_t i = 0; i < L->nclasses && i < 3 && v[i].bytes > 0; i++) {
    const char *name = L->class_names[v[i].id] ? L->class_names[v[i].id] : "?";
    snprintf(why->classes[i].name, sizeof why->classes[i].name, "%s", name);
    why->classes[i].bytes = v[i].bytes;
    why->nclasses = i + 1;
  }
  free(v);
  return true;
}
