/*
 * roots.c — the shadow stack's slow path and the global root table.
 */
#include <stdlib.h>

#include "heap_internal.h"

void eph_roots_grow(eph_heap *h) {
  size_t cap = h->fast.roots_cap * 2;
  eph_value **r = realloc(h->fast.roots, cap * sizeof *r);
  if (!r) ephh_fatal(h, "the shadow stack cannot grow");
  h->fast.roots = r;
  h->fast.roots_cap = cap;
}

eph_status eph_global_root_add(eph_heap *h, eph_value *slot) {
  if (h->fast.globals_len == h->globals_cap) {
    size_t cap = h->globals_cap ? h->globals_cap * 2 : 16;
    eph_value **g = realloc(h->fast.globals, cap * sizeof *g);
    if (!g) {
      ephh_set_error(h, EPH_ERR_NOMEM, "cannot grow the global root table");
      return EPH_ERR_NOMEM;
    }
    h->fast.globals = g;
    h->globals_cap = cap;
  }
  h->fast.globals[h->fast.globals_len++] = slot;
  return EPH_OK;
}

/* Removes the most recent registration of slot (registrations nest). */
void eph_global_root_remove(eph_heap *h, eph_value *slot) {
  for (size_t i = h->fast.globals_len; i-- > 0;) {
    if (h->fast.globals[i] == slot) {
      h->fast.globals[i] = h->fast.globals[--h->fast.globals_len];
      return;
    }
  }
}
