/*
 * stacks.c — sites' call stacks and the folding by stack prefix: each
 * site's first N frames as a label, labels interned to group ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

size_t eph_stack_callers(const eph_file *p, uint32_t site, const uint32_t **callers) {
  *callers = NULL;
  if (!p->stacks || site >= p->nstacks || !p->stacks[site].ncallers) return 0;
  *callers = p->stacks[site].callers;
  return p->stacks[site].ncallers;
}

unsigned eph_stack_depth(const eph_file *p) {
  const char *v = eph_file_meta(p, "stacks");
  if (v) {
    char *end;
    unsigned long d = strtoul(v, &end, 10);
    if (end != v && !*end && d <= EPH_FORMAT_MAX_STACK + 1) return (unsigned)d;
  }
  unsigned most = 0;
  for (size_t i = 0; i < p->nstacks; i++)
    if (p->stacks[i].ncallers + 1 > most) most = p->stacks[i].ncallers + 1;
  return most;
}

/* Appends site's frame name ("function file:line") to a growing string. */
static void put_frame(FILE *f, const eph_file *p, uint32_t site) {
  if (!site || site >= p->nsites || !p->sites[site].file) {
    fputs("(unknown)", f);
    return;
  }
  const eph_site_entry *e = &p->sites[site];
  const char *base = strrchr(e->file, '/');
  base = base ? base + 1 : e->file;
  fprintf(f, "%s%s%s:%d", e->function ? e->function : "", e->function && *e->function ? " " : "", base, e->line);
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

bool eph_stack_fold_build(const eph_file *p, unsigned depth, eph_stack_fold *fold) {
  memset(fold, 0, sizeof *fold);
  if (depth < 1) depth = 1;
  size_t n = p->nsites ? p->nsites : 1;
  size_t nslot = 16;
  while (nslot < 2 * n) nslot *= 2;
  uint32_t *slot = calloc(nslot, sizeof *slot); /* group id, 0 empty */
  fold->group_of = calloc(n, sizeof *fold->group_of);
  fold->labels = calloc(n + 1, sizeof *fold->labels);
  bool ok = slot && fold->group_of && fold->labels;
  fold->ngroups = 1;
  for (size_t site = 1; ok && site < p->nsites; site++) {
    if (!p->sites[site].file) continue;
    char *label = NULL;
    size_t len;
    FILE *f = open_memstream(&label, &len);
    if (!f) {
      ok = false;
      break;
    }
    put_frame(f, p, (uint32_t)site);
    const uint32_t *callers;
    size_t nc = eph_stack_callers(p, (uint32_t)site, &callers);
    for (size_t k = 0; k < nc && k + 1 < depth; k++) {
      fputs(" < ", f);
      put_frame(f, p, callers[k]);
    }
    if (fclose(f) != 0 || !label) {
      free(label);
      ok = false;
      break;
    }
    size_t j = hash_str(label) & (nslot - 1);
    while (slot[j] && strcmp(fold->labels[slot[j]], label)) j = (j + 1) & (nslot - 1);
    if (slot[j]) {
      free(label);
    } else {
      slot[j] = (uint32_t)fold->ngroups;
      fold->labels[fold->ngroups++] = label;
    }
    fold->group_of[site] = slot[j];
  }
  free(slot);
  if (!ok) eph_stack_fold_free(fold);
  return ok;
}

void eph_stack_fold_free(eph_stack_fold *fold) {
  if (fold->labels)
    for (size_t i = 0; i < fold->ngroups; i++) free(fold->labels[i]);
  free(fold->labels);
  free(fold->group_of);
  memset(fold, 0, sizeof *fold);
}
