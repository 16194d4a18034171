/*
 * classes.c — the run-time class registry: names and formats by index, so
 * that every report can say which objects live long.
 */
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

eph_class_id eph_class_find(const eph_heap *h, const char *name) {
  if (!name) return 0;
  for (size_t i = 1; i < h->classes_len; i++)
    if (strcmp(h->classes[i].name, name) == 0) return (eph_class_id)i;
  return 0;
}

eph_class_id eph_class_register(eph_heap *h, const char *name, eph_format fmt) {
  if (!name || !*name) {
    ephh_set_error(h, EPH_ERR_INVALID, "class name is empty");
    return 0;
  }
  if ((unsigned)fmt >= EPH_FORMAT_COUNT_) {
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s': unknown format %d", name, (int)fmt);
    return 0;
  }
  eph_class_id existing = eph_class_find(h, name);
  if (existing) {
    if (h->classes[existing].format == fmt) return existing;
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s' is already registered with another format", name);
    return 0;
  }
  if (h->classes_len >= EPH_MAX_CLASSES) {
    ephh_set_error(h, EPH_ERR_INVALID, "class '%s': the class table is full (%u classes)", name, EPH_MAX_CLASSES);
    return 0;
  }
  if (h->classes_len == h->classes_cap) {
    size_t cap = h->classes_cap * 2;
    eph_class_entry *c = realloc(h->classes, cap * sizeof *c);
    if (!c) {
      ephh_set_error(h, EPH_ERR_NOMEM, "class '%s': cannot grow the class table", name);
      return 0;
    }
    h->classes = c;
    h->classes_cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) {
    ephh_set_error(h, EPH_ERR_NOMEM, "class '%s': out of memory", name);
    return 0;
  }
  h->classes[h->classes_len] = (eph_class_entry){.name = copy, .format = fmt};
  return (eph_class_id)h->classes_len++;
}

const char *eph_class_name(const eph_heap *h, eph_class_id cls) {
  return cls >= 1 && cls < h->classes_len ? h->classes[cls].name : NULL;
}

eph_format eph_class_format(const eph_heap *h, eph_class_id cls) {
  return cls >= 1 && cls < h->classes_len ? h->classes[cls].format : EPH_FORMAT_COUNT_;
}

size_t eph_class_count(const eph_heap *h) { return h->classes_len; }

eph_format eph__class_format_checked(eph_heap *h, eph_class_id cls) { return eph_class_format(h, cls); }
