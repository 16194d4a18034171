/* embed.c — the smallest useful Ephemera program: classes, allocation, roots. */
#include <stdio.h>
#include <string.h>

#include "ephemera/heap.h"

static eph_class_id Point, Name;

/* A point with a name.  Any allocation may move objects: values kept across
 * one live in rooted variables (EPH_LOCAL), which the collector updates. */
static eph_value make_point(eph_heap *h, intptr_t x, intptr_t y, const char *label) {
  EPH_FRAME(h);
  EPH_LOCAL(h, p);
  EPH_LOCAL(h, name);
  name = eph_alloc_bytes(h, Name, strlen(label));
  memcpy(eph_bytes(name), label, strlen(label));
  p = eph_alloc(h, Point, 3);
  eph_store(h, p, 0, eph_int(x));
  eph_store(h, p, 1, eph_int(y));
  eph_store(h, p, 2, name);
  EPH_RETURN(h, p);
}

int main(void) {
  eph_heap *h;
  eph_error err;
  if (eph_heap_new(NULL, &h, &err) != EPH_OK) { /* defaults + EPHEMERA_GC */
    fprintf(stderr, "embed: %s\n", err.message);
    return 1;
  }
  Point = eph_class_register(h, "Point", EPH_FORMAT_POINTERS);
  Name = eph_class_register(h, "Name", EPH_FORMAT_BYTES);

  EPH_FRAME(h);
  EPH_LOCAL(h, origin);
  origin = make_point(h, 0, 0, "origin");
  for (intptr_t i = 0; i < 1000000; i++) make_point(h, i, -i, "garbage"); /* dies young */
  eph_collect(h, EPH_GC_FULL); /* origin moves to old space; the variable follows */

  eph_value name = eph_slot(origin, 2);
  printf("%.*s = (%ld, %ld), class %s, young %d\n", (int)eph_size_bytes(name), (const char *)eph_bytes(name),
         (long)eph_int_value(eph_slot(origin, 0)), (long)eph_int_value(eph_slot(origin, 1)),
         eph_class_name(h, eph_class_of(origin)), (int)eph_is_young(h, origin));
  eph_heap_stats_print(h, stdout);
  int ok = eph_heap_verify(h) == EPH_OK && eph_int_value(eph_slot(origin, 0)) == 0 && !eph_is_young(h, origin);
  EPH_UNFRAME(h);
  eph_heap_free(h);
  return ok ? 0 : 1;
}
