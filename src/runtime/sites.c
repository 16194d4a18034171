/*
 * sites.c — sites and call stacks, interned: each distinct site (a key, a
 * line and one more number, as the adapter finds them) gets an id, written
 * to the file with its file, line and function when it is first seen; with
 * stacks=N each distinct call stack (a list of site ids, the allocating
 * frame first) gets an id from the same sequence, named as its leaf, its
 * callers written as a STAK entry (docs/eph-format.md 5.8).  Records need
 * nothing new: their site id names their stack.  Both are open-addressing
 * hash tables from the session's allocator (rt_mem_alloc); lookups take no
 * lock and allocate nothing.
 */
#include <string.h>

#include "runtime/adapter.h"

/* --- sites ---------------------------------------------------------------------------- */

static uint64_t key_hash(const void *key, int line) {
  uint64_t x = (uint64_t)(uintptr_t)key ^ ((uint64_t)(unsigned)line << 40);
  x *= UINT64_C(0x9E3779B97F4A7C15);
  return x >> 17;
}

static char *dup_str(rt_session *s, const char *str) {
  size_t n = strlen(str) + 1;
  char *d = rt_mem_alloc(s, n);
  if (d) memcpy(d, str, n);
  return d;
}

static bool grow_sites(rt_session *s) {
  size_t ncap = s->sites_cap ? s->sites_cap * 2 : 256;
  rt_site_slot *ns = rt_mem_alloc(s, ncap * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, ncap * sizeof *ns);
  for (size_t i = 0; i < s->sites_cap; i++) {
    rt_site_slot *o = &s->sites[i];
    if (!o->id) continue;
    size_t j = key_hash(o->key, o->line) & (ncap - 1);
    while (ns[j].id) j = (j + 1) & (ncap - 1);
    ns[j] = *o;
  }
  rt_mem_free(s, s->sites, s->sites_cap * sizeof *s->sites);
  s->sites = ns;
  s->sites_cap = ncap;
  return true;
}

bool rt_site_declare(rt_session *s, uint32_t id, const char *file, int line, const char *function) {
  return eph_writer_site(s->w, id, file, line, function) == EPH_OK;
}

uint32_t rt_site_find(rt_session *s, const rt_site_key *k) {
  if (!s->sites_cap) return 0;
  size_t mask = s->sites_cap - 1;
  for (size_t i = key_hash(k->key, k->line) & mask; s->sites[i].id; i = (i + 1) & mask) {
    const rt_site_slot *o = &s->sites[i];
    /* the pointer keys the slot; the stored name guards against a key
     * freed and another one made at the same address */
    if (o->key == k->key && o->line == k->line && o->aux == k->aux && !strcmp(o->file, k->file)) return o->id;
  }
  return 0;
}

uint32_t rt_site_add(rt_session *s, const rt_site_key *k, const char *function) {
  if (s->sites_count >= EPH_FORMAT_MAX_ID) return 0;
  if ((s->sites_count + 1) * 2 > s->sites_cap && !grow_sites(s)) return 0;
  char *copy = dup_str(s, k->file);
  if (!copy) return 0;
  uint32_t id = (uint32_t)s->sites_count + 1;
  if (!rt_site_declare(s, id, k->file, k->line, function)) {
    rt_mem_free(s, copy, strlen(copy) + 1);
    return 0;
  }
  size_t mask = s->sites_cap - 1, i = key_hash(k->key, k->line) & mask;
  while (s->sites[i].id) i = (i + 1) & mask;
  s->sites[i] = (rt_site_slot){.key = k->key, .file = copy, .line = k->line, .aux = k->aux, .id = id};
  s->sites_count++;
  return id;
}

/* --- stacks ----------------------------------------------------------------------------- */

typedef struct rt_stack_slot {
  uint64_t hash;  /* 0: empty */
  uint32_t id, n; /* the stack's site id; frames, leaf first */
  uint32_t *frames;
} rt_stack_slot;

static uint64_t hash_frames(const uint32_t *f, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; i++) h = (h ^ f[i]) * UINT64_C(1099511628211);
  return h | 1; /* never 0 */
}

static bool grow_stacks(rt_session *s) {
  size_t ncap = s->stacks_cap ? 2 * s->stacks_cap : 256;
  rt_stack_slot *ns = rt_mem_alloc(s, ncap * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, ncap * sizeof *ns);
  for (size_t i = 0; i < s->stacks_cap; i++) {
    rt_stack_slot *o = &s->stacks[i];
    if (!o->hash) continue;
    size_t j = o->hash & (ncap - 1);
    while (ns[j].hash) j = (j + 1) & (ncap - 1);
    ns[j] = *o;
  }
  rt_mem_free(s, s->stacks, s->stacks_cap * sizeof *s->stacks);
  s->stacks = ns;
  s->stacks_cap = ncap;
  return true;
}

uint32_t rt_stack_find(rt_session *s, const uint32_t *frames, size_t n) {
  if (!s->stacks_cap) return 0;
  uint64_t h = hash_frames(frames, n);
  size_t mask = s->stacks_cap - 1;
  for (size_t j = h & mask; s->stacks[j].hash; j = (j + 1) & mask) {
    const rt_stack_slot *o = &s->stacks[j];
    if (o->hash == h && o->n == n && !memcmp(o->frames, frames, n * sizeof *frames)) return o->id;
  }
  return 0;
}

uint32_t rt_stack_add(rt_session *s, const uint32_t *frames, size_t n, const char *file, int line,
                      const char *function) {
  if (s->sites_count >= EPH_FORMAT_MAX_ID || s->sites_count >= RT_SITE_MAX) return 0;
  if ((s->stacks_count + 1) * 2 > s->stacks_cap && !grow_stacks(s)) return 0;
  uint32_t *copy = rt_mem_alloc(s, n * sizeof *copy);
  if (!copy) return 0;
  memcpy(copy, frames, n * sizeof *copy);
  uint32_t id = (uint32_t)s->sites_count + 1; /* stacks take ids from the sites' sequence */
  if (!rt_site_declare(s, id, file, line, function) || eph_writer_stack(s->w, id, frames + 1, n - 1) != EPH_OK) {
    rt_mem_free(s, copy, n * sizeof *copy);
    return 0;
  }
  s->sites_count++;
  uint64_t h = hash_frames(frames, n);
  size_t mask = s->stacks_cap - 1, j = h & mask;
  while (s->stacks[j].hash) j = (j + 1) & mask;
  s->stacks[j] = (rt_stack_slot){.hash = h, .id = id, .n = (uint32_t)n, .frames = copy};
  s->stacks_count++;
  return id;
}

void rt_sites_free(rt_session *s) {
  for (size_t i = 0; i < s->sites_cap; i++)
    if (s->sites[i].id) rt_mem_free(s, s->sites[i].file, strlen(s->sites[i].file) + 1);
  rt_mem_free(s, s->sites, s->sites_cap * sizeof *s->sites);
  s->sites = NULL;
  s->sites_cap = s->sites_count = 0;
  for (size_t i = 0; i < s->stacks_cap; i++)
    if (s->stacks[i].hash) rt_mem_free(s, s->stacks[i].frames, s->stacks[i].n * sizeof *s->stacks[i].frames);
  rt_mem_free(s, s->stacks, s->stacks_cap * sizeof *s->stacks);
  s->stacks = NULL;
  s->stacks_cap = s->stacks_count = 0;
}
