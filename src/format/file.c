/*
 * file.c — the in-memory eph_file (a loaded .eph file): growing its arrays while reading,
 * metadata lookup, freeing.
 */
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"

bool ephf_grow(void **arr, size_t *cap, size_t elem, size_t n) {
  if (n <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < n) {
    if (c > SIZE_MAX / 2) return false;
    c *= 2;
  }
  if (c > SIZE_MAX / elem) return false;
  void *a = realloc(*arr, c * elem);
  if (!a) return false;
  *arr = a;
  *cap = c;
  return true;
}

bool ephf_grow_table(void **arr, size_t *cap, size_t elem, size_t n) {
  if (n <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < n) {
    if (c > SIZE_MAX / 2) return false;
    c *= 2;
  }
  /* calloc, not realloc + memset: a sparse table (one id near the top)
   * then costs untouched zero pages, not a pass over all of it. */
  void *a = calloc(c, elem);
  if (!a) return false;
  if (*cap) memcpy(a, *arr, *cap * elem);
  free(*arr);
  *arr = a;
  *cap = c;
  return true;
}

const char *eph_file_meta(const eph_file *p, const char *key) {
  if (!p || !key) return NULL;
  for (size_t i = 0; i < p->nmeta; i++)
    if (!strcmp(p->meta[i].key, key)) return p->meta[i].value;
  return NULL;
}

void eph_file_free(eph_file *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nmeta; i++) {
    free((char *)p->meta[i].key);
    free((char *)p->meta[i].value);
  }
  free(p->meta);
  for (size_t i = 0; i < p->nclasses; i++)
    if (p->class_names[i]) free(p->class_names[i]);
  free(p->class_names);
  for (size_t i = 0; i < p->nsites; i++)
    if (p->sites[i].file) {
      free(p->sites[i].file);
      free(p->sites[i].function);
    }
  free(p->sites);
  for (size_t i = 0; i < p->nstacks; i++) free(p->stacks[i].callers);
  free(p->stacks);
  free(p->records);
  free(p->gcs);
  free(p->events);
  free(p);
}
