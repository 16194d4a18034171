/*
 * table.c — the live sampled blocks: open addressing with linear probing
 * and backward-shift deletion, keyed by block address.  Its memory comes
 * from the wrapped allocator directly (never through Lua), and a failed
 * growth only drops the sample: the profiler never makes Lua's allocation
 * fail.
 */
#include <string.h>

#include "ephlua.h"

void *lt_mem_alloc(lt_tracker *t, size_t size) { return t->inner(t->inner_ud, NULL, 0, size); }

void lt_mem_free(lt_tracker *t, void *p, size_t size) {
  if (p) t->inner(t->inner_ud, p, size, 0);
}

/* Page-local hashing: the 256 16-byte units of a 4 KiB page map to 256
 * consecutive slots, pages are scattered.  Lua allocates and sweeps objects
 * in runs of neighbouring addresses, so inserts and removals walk the table
 * mostly sequentially instead of missing the cache every time. */
static inline size_t slot_of(const void *ptr, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)ptr >> 4;
  uint64_t page = (x >> 8) * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)((page >> 24 << 8) | (x & 0xFF)) & mask;
}

static bool grow(lt_tracker *t) {
  lt_table *tb = &t->live;
  size_t ncap = tb->cap ? tb->cap * 2 : 1024;
  lt_entry *ns = lt_mem_alloc(t, ncap * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, ncap * sizeof *ns);
  for (size_t i = 0; i < tb->cap; i++) {
    if (!tb->slots[i].ptr) continue;
    size_t j = slot_of(tb->slots[i].ptr, ncap - 1);
    while (ns[j].ptr) j = (j + 1) & (ncap - 1);
    ns[j] = tb->slots[i];
  }
  lt_mem_free(t, tb->slots, tb->cap * sizeof *tb->slots);
  tb->slots = ns;
  tb->cap = ncap;
  return true;
}

bool lt_table_insert(lt_tracker *t, const lt_entry *e) {
  lt_table *tb = &t->live;
  if ((tb->count + 1) * 2 > tb->cap && !grow(t)) return false;
  size_t mask = tb->cap - 1, i = slot_of(e->ptr, mask);
  while (tb->slots[i].ptr) i = (i + 1) & mask;
  tb->slots[i] = *e;
  tb->count++;
  uint8_t *f = &t->filter[lt_filter_slot(e->ptr)];
  if (*f < 255) ++*f;
  return true;
}

bool lt_table_remove(lt_tracker *t, const void *ptr, lt_entry *out) {
  lt_table *tb = &t->live;
  size_t mask = tb->cap - 1, i = slot_of(ptr, mask);
  for (;;) {
    const void *k = tb->slots[i].ptr;
    if (!k) return false;
    if (k == ptr) break;
    i = (i + 1) & mask;
  }
  *out = tb->slots[i];
  uint8_t *f = &t->filter[lt_filter_slot(ptr)];
  if (*f < 255) --*f;
  /* backward shift: pull later members of the run into the hole */
  size_t hole = i;
  for (size_t j = (i + 1) & mask; tb->slots[j].ptr; j = (j + 1) & mask) {
    size_t home = slot_of(tb->slots[j].ptr, mask);
    /* j may move to hole if its home is not in (hole, j] (cyclically) */
    bool stay = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stay) {
      tb->slots[hole] = tb->slots[j];
      hole = j;
    }
  }
  tb->slots[hole].ptr = NULL;
  tb->count--;
  return true;
}

void lt_table_free(lt_tracker *t) {
  memset(t->filter, 0, sizeof t->filter);
  lt_mem_free(t, t->live.slots, t->live.cap * sizeof *t->live.slots);
  memset(&t->live, 0, sizeof t->live);
}
