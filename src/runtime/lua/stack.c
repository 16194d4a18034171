/*
 * stack.c — the Lua call stack at a sampled allocation (stacks=N): the
 * allocating frame's site and the sites of up to N - 1 Lua callers above
 * it (C frames such as pcall or table.sort are skipped), found with
 * lua_getstack/lua_getinfo("Sl") as site.c finds the site alone, so the
 * same reasoning makes it safe inside the allocator.  Only sampled
 * allocations pay for it: one lua_getinfo per frame and a hash lookup.
 *
 * Each distinct stack becomes one site of the file, interned by the core
 * (rt_stack_find/add, src/runtime/sites.c): a new site id, declared with
 * the allocating frame's file, line and function, and a STAK entry listing
 * its callers' site ids (docs/eph-format.md 5.8).
 */
#include <string.h>

#include "runtime/lua/ephlua.h"

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
    if (n >= t->s.opt.stacks || n >= sizeof frames / sizeof *frames) break;
  }
  if (n <= 1) return n ? frames[0] : 0;
  uint32_t id = rt_stack_find(&t->s, frames, n);
  if (id) return id;
  char fn[LT_FUNCTION_NAME_MAX];
  lt_frame_function(&leaf, fn, sizeof fn);
  return rt_stack_add(&t->s, frames, n, lt_frame_file(&leaf), leaf.currentline, fn);
}
