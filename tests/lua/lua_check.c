/*
 * lua_check.c — prints an .eph profile of a Lua run as lines the tests grep:
 *   total complete=1 records=N censored=N objects=N cycles=N
 *   group class=table line=5 freed=100 censored=0 weight=100 smin=2 smax=2
 * (groups by class and site line; smin/smax: GC cycles survived by the
 * freed records, full_gcs at death minus at birth).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ephemera/format.h"

typedef struct group {
  uint32_t cls;
  int line;
  uint64_t freed, censored;
  double weight;
  uint32_t smin, smax;
} group;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lua_check FILE.eph\n");
    return 2;
  }
  eph_file *p;
  eph_error err;
  if (eph_file_load(argv[1], &p, &err) != EPH_OK) {
    fprintf(stderr, "lua_check: %s\n", err.message);
    return 1;
  }
  static group g[4096];
  size_t ng = 0;
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    int line = r->site_id && r->site_id < p->nsites && p->sites[r->site_id].file ? p->sites[r->site_id].line : 0;
    size_t k;
    for (k = 0; k < ng; k++)
      if (g[k].cls == r->class_id && g[k].line == line) break;
    if (k == ng) {
      if (ng == 4096) continue;
      g[ng++] = (group){.cls = r->class_id, .line = line, .smin = UINT32_MAX};
    }
    g[k].weight += r->weight;
    if (r->death_kind == EPH_DEATH_CENSORED) {
      g[k].censored++;
    } else {
      g[k].freed++;
      uint32_t s = r->death.full_gcs - r->birth.full_gcs;
      if (s < g[k].smin) g[k].smin = s;
      if (s > g[k].smax) g[k].smax = s;
      const eph_stamp *b = &r->birth, *au = &r->alive_until, *d = &r->death;
      /* birth <= alive_until <= death in every clock */
      if (d->bytes < b->bytes || d->wall_ns < b->wall_ns || au->bytes < b->bytes || au->bytes > d->bytes ||
          au->wall_ns < b->wall_ns || au->wall_ns > d->wall_ns || au->full_gcs < b->full_gcs ||
          au->full_gcs > d->full_gcs)
        printf("bad-order id=%" PRIu64 "\n", r->id);
    }
  }
  printf("total complete=%d records=%zu censored=%" PRIu64 " objects=%" PRIu64 " cycles=%" PRIu64 " runtime=%s\n",
         p->complete, p->nrecords, p->totals.censored, p->totals.objects_allocated, p->totals.full_gcs,
         eph_file_meta(p, "runtime") ? eph_file_meta(p, "runtime") : "?");
  for (size_t k = 0; k < ng; k++) {
    const char *name = g[k].cls < p->nclasses && p->class_names[g[k].cls] ? p->class_names[g[k].cls] : "?";
    char cname[64];
    snprintf(cname, sizeof cname, "%s", name);
    for (char *c = cname; *c; c++)
      if (*c == ' ') *c = '_';
    printf("group class=%s line=%d freed=%" PRIu64 " censored=%" PRIu64 " weight=%.0f smin=%u smax=%u\n", cname,
           g[k].line, g[k].freed, g[k].censored, g[k].weight, g[k].freed ? g[k].smin : 0, g[k].smax);
  }
  eph_file_free(p);
  return 0;
}
