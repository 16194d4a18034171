/*
 * stack.c — the Lua call stack at a sampled allocation (stacks=N): the
 * allocating frame's site and the sites of up to N - 1 Lua callers above
 * it (C frames such as pcall or table.sort are skipped), found with
 * lua_getstack/lua_getinfo("Sl") as site.c finds the site alone, so the
 * same reasoning makes it safe inside the allocator.  Only sampled
 * allocations pay for it: one lua_getinfo per frame and a hash lookup.
 *
 * Each distinct stack becomes one site of the file: a new site id,
 * declared with the allocating frame's file, line and function, and a
 * STAK entry listing its callers' site ids (docs/eph-format.md 5.8).
 * Records need nothing new: their site id names their stack.
 */
#include <string.h>

#include "ephlua.h"

typedef struct lt_stack_slot {
  uint64_t hash;      /* 0: empty */
  uint32_t id, n;     /* the stack's site id; frames, leaf first */
  uint32_t *frames;
} lt_stack_slot;

static uint64_t hash_frames(const uint32_t *f, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; i++) h = (h ^ f[i]) * UINT64_C(1099511628211);
  return h | 1; /* never 0 */
}

static bool grow(lt_tracker *t) {
  size_t ncap = t->stacks_cap ? 2 * t->stacks_cap : 256;
  lt_stack_slot *ns = lt_mem_alloc(t, ncap * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, ncap * sizeof *ns);
  for (size_t i = 0; i < t->stacks_cap; i++) {
    lt_stack_slot *s = &t->stacks[i];
    if (!s->hash) continue;
    size_t j = s->hash & (ncap - 1);
    while (ns[j].hash) j = (j + 1) & (ncap - 1);
    ns[j] = *s;
  }
  lt_mem_free(t, t->stacks, t->stacks_cap * sizeof *t->stacks);
  t->stacks = ns;
  t->stacks_cap = ncap;
  return true;
}

/* The site id of stack f[0..n) (n >= 2), made and written if new; 0 when
 * out of ids or memory (the record then gets no site). */
static uint32_t intern(lt_tracker *t, const uint32_t *f, size_t n, const lua_Debug *leaf) {
  uint64_t h = hash_frames(f, n);
  if (t->stacks_cap) {
    size_t mask = t->stacks_cap - 1;
    for (size_t j = h & mask; t->stacks[j].hash; j = (j + 1) & mask) {
      lt_stack_slot *s = &t->stacks[j];
      if (s->hash == h && s->n == n && !memcmp(s->frames, f, n * sizeof *f)) return s->id;
    }
  }
  if (t->sites_count >= EPH_FORMAT_MAX_ID || t->sites_count >= LT_SITE_MAX) return 0;
  if ((t->stacks_count + 1) * 2 > t->stacks_cap && !grow(t)) return 0;
  uint32_t *copy = lt_mem_alloc(t, n * sizeof *copy);
  if (!copy) return 0;
  memcpy(copy, f, n * sizeof *copy);
  uint32_t id = (uint32_t)t->sites_count + 1; /* stacks take ids from the sites' sequence */
  if (!lt_site_declare_as(t, id, leaf) || eph_writer_stack(t->w, id, f + 1, n - 1) != EPH_OK) {
    lt_mem_free(t, copy, n * sizeof *copy);
    return 0;
  }
  t->sites_count++;
  size_t mask = t->stacks_cap - 1, j = h & mask;
  while (t->stacks[j].hash) j = (j + 1) & mask;
  t->stacks[j] = (lt_stack_slot){.hash = h, .id = id, .n = (uint32_t)n, .frames = copy};
  t->stacks_count++;
  return id;
}

uint32_t lt_stack_current(lt_tracker *t) {
  uint32_t frames[EPH_FORMAT_MAX_STACK + 1];
  size_t n = 0;
  lua_Debug ar, leaf;
  /* The leaf: the first Lua frame within four levels, as site.c's. */
  for (int level = 0;; level++) {
    if (!lua_getstack(t->L, level, &ar) || !lua_getinfo(t->L, "Sl", &ar)) break;
    if (ar.what[0] == 'C') {
      if (!n && level >= 3) return 0;
      continue;
    }
    uint32_t site = lt_site_of(t, &ar);
    if (!site) {
      if (!n) return 0;
      continue; /* a caller without line information (stripped): skipped */
    }
    if (!n) leaf = ar;
    frames[n++] = site;
    if (n >= t->opt.stacks || n >= sizeof frames / sizeof *frames) break;
  }
  if (n <= 1) return n ? frames[0] : 0;
  return intern(t, frames, n, &leaf);
}

void lt_stacks_free(lt_tracker *t) {
  for (size_t i = 0; i < t->stacks_cap; i++)
    if (t->stacks[i].hash) lt_mem_free(t, t->stacks[i].frames, t->stacks[i].n * sizeof *t->stacks[i].frames);
  lt_mem_free(t, t->stacks, t->stacks_cap * sizeof *t->stacks);
  t->stacks = NULL;
  t->stacks_cap = t->stacks_count = 0;
}
