/*
 * registry.c — the table of workloads.  The build generates
 * wl_list.h from the files workloads/wl_NAME.c (each defines wl_NAME), so
 * a new workload needs no edit here.
 */
#include <string.h>

#include "workload.h"

#define WL(name) extern const wl_workload wl_##name;
#include "wl_list.h"
#undef WL

const wl_workload *const wl_all[] = {
#define WL(name) &wl_##name,
#include "wl_list.h"
#undef WL
};
const size_t wl_count = sizeof wl_all / sizeof wl_all[0];

const wl_workload *wl_find(const char *name) {
  for (size_t i = 0; i < wl_count; i++)
    if (strcmp(wl_all[i]->name, name) == 0) return wl_all[i];
  return NULL;
}
