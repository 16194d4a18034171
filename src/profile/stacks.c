/*
 * stacks.c — call stacks of C programs (profile.h: EPH_CALLER, stacks=N).
 * At a sample taken while calls are marked, the allocation's site and the
 * innermost N - 1 marked calls (each an eph_site, numbered as sites are)
 * make a stack; each distinct stack becomes a site of the file, declared
 * with the allocation site's file, line and function, and its callers go
 * into a STAK entry (docs/eph-format.md 5.8).  Records need nothing new.
 */
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

typedef struct prof_stack {
  uint64_t hash; /* 0: empty */
  uint32_t id, n;
  uint32_t *frames; /* site ids, the allocation site first */
} prof_stack;

static uint64_t hash_frames(const uint32_t *f, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; i++) h = (h ^ f[i]) * UINT64_C(1099511628211);
  return h | 1;
}

static bool grow(eph_profiler *p) {
  size_t cap = p->stacks_cap ? 2 * p->stacks_cap : 256;
  prof_stack *ns = calloc(cap, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < p->stacks_cap; i++) {
    if (!p->stacks[i].hash) continue;
    size_t j = p->stacks[i].hash & (cap - 1);
    while (ns[j].hash) j = (j + 1) & (cap - 1);
    ns[j] = p->stacks[i];
  }
  free(p->stacks);
  p->stacks = ns;
  p->stacks_cap = cap;
  return true;
}

uint32_t prof_stack_site(eph_profiler *p, const eph_site *s, uint32_t site) {
  uint32_t f[PROF_MAX_CALLERS + 1];
  size_t n = 0;
  f[n++] = site;
  unsigned kept = p->ncallers < PROF_MAX_CALLERS ? p->ncallers : PROF_MAX_CALLERS;
  for (unsigned k = kept; k-- > 0 && n < p->spec.stacks;) { /* innermost first */
    uint32_t c = prof_site_id(p, p->callers[k]);
    if (c) f[n++] = c;
  }
  if (n < 2) return site;
  uint64_t h = hash_frames(f, n);
  if (p->stacks_cap) {
    size_t mask = p->stacks_cap - 1;
    for (size_t j = h & mask; p->stacks[j].hash; j = (j + 1) & mask)
      if (p->stacks[j].hash == h && p->stacks[j].n == n && !memcmp(p->stacks[j].frames, f, n * sizeof *f))
        return p->stacks[j].id;
  }
  if ((p->stacks_len + 1) * 2 > p->stacks_cap && !grow(p)) return site;
  uint32_t *copy = malloc(n * sizeof *copy);
  if (!copy) return site;
  memcpy(copy, f, n * sizeof *copy);
  /* under the lock: a walk running on may be writing the file (gc_eden.c) */
  pthread_mutex_lock(&p->sites_lock);
  uint32_t id = ++p->next_site_id; /* stacks take ids from the sites' sequence */
  prof_write_error(p, eph_writer_site(p->out, id, s->file, s->line, s->function));
  prof_write_error(p, eph_writer_stack(p->out, id, f + 1, n - 1));
  pthread_mutex_unlock(&p->sites_lock);
  size_t j = h & (p->stacks_cap - 1);
  while (p->stacks[j].hash) j = (j + 1) & (p->stacks_cap - 1);
  p->stacks[j] = (prof_stack){h, id, (uint32_t)n, copy};
  p->stacks_len++;
  return id;
}

void prof_stacks_free(eph_profiler *p) {
  for (size_t i = 0; i < p->stacks_cap; i++) free(p->stacks[i].frames);
  free(p->stacks);
  p->stacks = NULL;
  p->stacks_cap = p->stacks_len = 0;
}
