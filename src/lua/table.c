/*
 * table.c — the live sampled blocks: open addressing with linear probing
 * and backward-shift deletion, keyed by block address.  The table holds
 * 16-byte slots (address, payload index) so probes and shifts touch few
 * cache lines; the payloads live in a separate array recycled through a
 * free list (the payload freed by a death is the next birth's, still in
 * cache).  Its memory comes
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
  lt_slot *ns = lt_mem_alloc(t, ncap * sizeof *ns);
  if (!ns) return false;
  memset(ns, 0, ncap * sizeof *ns);
  for (size_t i = 0; i < tb->cap; i++) {
    if (!tb->slots[i].key) continue;
    size_t j = slot_of((const void *)tb->slots[i].key, ncap - 1);
    while (ns[j].key) j = (j + 1) & (ncap - 1);
    ns[j] = tb->slots[i];
  }
  lt_mem_free(t, tb->slots, tb->cap * sizeof *tb->slots);
  tb->slots = ns;
  tb->cap = ncap;
  return true;
}

/* A free payload, or UINT32_MAX if the payload array could not grow. */
static uint32_t new_payload(lt_tracker *t) {
  lt_table *tb = &t->live;
  if (tb->free_head) {
    uint32_t i = tb->free_head - 1;
    tb->free_head = (uint32_t)tb->recs[i].birth_bytes;
    return i;
  }
  if (tb->recs_used == tb->recs_cap) {
    if (tb->recs_cap >= UINT32_MAX / 2) return UINT32_MAX;
    uint32_t ncap = tb->recs_cap ? tb->recs_cap * 2 : 512;
    lt_entry *nr = lt_mem_alloc(t, (size_t)ncap * sizeof *nr);
    if (!nr) return UINT32_MAX;
    if (tb->recs_used) memcpy(nr, tb->recs, (size_t)tb->recs_used * sizeof *nr);
    lt_mem_free(t, tb->recs, (size_t)tb->recs_cap * sizeof *tb->recs);
    tb->recs = nr;
    tb->recs_cap = ncap;
  }
  return tb->recs_used++;
}

bool lt_table_insert(lt_tracker *t, const void *ptr, const lt_entry *e) {
  lt_table *tb = &t->live;
  if ((tb->count + 1) * 2 > tb->cap && !grow(t)) return false;
  uint32_t idx = new_payload(t);
  if (idx == UINT32_MAX) return false;
  tb->recs[idx] = *e;
  size_t mask = tb->cap - 1, i = slot_of(ptr, mask);
  while (tb->slots[i].key) i = (i + 1) & mask;
  tb->slots[i].key = (uintptr_t)ptr;
  tb->slots[i].idx = idx;
  tb->count++;
  uint8_t *f = &t->filter[lt_filter_slot(ptr)];
  if (*f < 255) ++*f;
  return true;
}

bool lt_table_remove(lt_tracker *t, const void *ptr, lt_entry *out) {
  lt_table *tb = &t->live;
  if (!tb->cap) return false;
  size_t mask = tb->cap - 1, i = slot_of(ptr, mask);
  for (;;) {
    uintptr_t k = tb->slots[i].key;
    if (!k) return false;
    if (k == (uintptr_t)ptr) break;
    i = (i + 1) & mask;
  }
  uint32_t idx = tb->slots[i].idx;
  *out = tb->recs[idx];
  tb->recs[idx].birth_bytes = tb->free_head;
  tb->free_head = idx + 1;
  uint8_t *f = &t->filter[lt_filter_slot(ptr)];
  if (*f < 255) --*f;
  /* backward shift: pull later members of the run into the hole */
  size_t hole = i;
  for (size_t j = (i + 1) & mask; tb->slots[j].key; j = (j + 1) & mask) {
    size_t home = slot_of((const void *)tb->slots[j].key, mask);
    /* j may move to hole if its home is not in (hole, j] (cyclically) */
    bool stay = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stay) {
      tb->slots[hole] = tb->slots[j];
      hole = j;
    }
  }
  tb->slots[hole].key = 0;
  tb->count--;
  return true;
}

void lt_table_each(lt_tracker *t, void (*f)(lt_tracker *, const void *, const lt_entry *, void *), void *arg) {
  lt_table *tb = &t->live;
  for (size_t i = 0; i < tb->cap; i++)
    if (tb->slots[i].key) f(t, (const void *)tb->slots[i].key, &tb->recs[tb->slots[i].idx], arg);
}

void lt_table_free(lt_tracker *t) {
  memset(t->filter, 0, sizeof t->filter);
  lt_mem_free(t, t->live.slots, t->live.cap * sizeof *t->live.slots);
  lt_mem_free(t, t->live.recs, (size_t)t->live.recs_cap * sizeof *t->live.recs);
  memset(&t->live, 0, sizeof t->live);
}
