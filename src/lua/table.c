/*
 * table.c — the live sampled blocks: open addressing with linear probing
 * and backward-shift deletion, keyed by block address.  The table holds
 * 16-byte slots (address, payload index) so probes and shifts touch few
 * cache lines; the payloads live in a separate array, the free ones'
 * indices on a stack (the payload freed by a death is the next birth's).
 * In front of it, the counting filter (ephlua.h) that lets the allocator
 * pass most frees without a lookup.
 *
 * The slots, payloads and filter live in pages of their own (mmap; the
 * payloads grow with mremap, without a copy): large blocks of the program's
 * malloc heap would be freed at every growth, and glibc consolidates its
 * heap on such frees, missing the cache on memory that is Lua's.  Smaller
 * structures (sites) come from the wrapped allocator.  None of it goes
 * through Lua's accounting, and a failed growth only drops the sample: the
 * profiler never makes Lua's allocation fail.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ephlua.h"

void *lt_mem_alloc(lt_tracker *t, size_t size) { return t->inner(t->inner_ud, NULL, 0, size); }

void lt_mem_free(lt_tracker *t, void *p, size_t size) {
  if (p) t->inner(t->inner_ud, p, size, 0);
}

/* --- pages: zero-filled, NULL on failure ----------------------------------- */

static size_t page_round(size_t n) {
  static size_t page;
  if (!page) {
    long p = sysconf(_SC_PAGESIZE);
    page = p > 0 ? (size_t)p : 4096;
  }
  return (n + page - 1) & ~(page - 1);
}

static void *pages_alloc(size_t size) {
  void *p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void pages_free(void *p, size_t size) {
  if (p) munmap(p, page_round(size));
}

/* Grows p (old bytes) to size bytes, keeping its contents; NULL on failure
 * (p unchanged). */
static void *pages_grow(void *p, size_t old, size_t size) {
  if (!p) return pages_alloc(size);
#ifdef MREMAP_MAYMOVE
  void *q = mremap(p, page_round(old), page_round(size), MREMAP_MAYMOVE);
  return q == MAP_FAILED ? NULL : q;
#else
  void *q = pages_alloc(size);
  if (q) {
    memcpy(q, p, old);
    pages_free(p, old);
  }
  return q;
#endif
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

/* Growth is rare: kept out of line so that inserts save no registers. */
#define LT_RARE __attribute__((noinline, cold))

static LT_RARE bool grow(lt_tracker *t) {
  lt_table *tb = &t->live;
  size_t ncap = tb->cap ? tb->cap * 2 : 1024;
  lt_slot *ns = pages_alloc(ncap * sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < tb->cap; i++) {
    if (!tb->slots[i].key) continue;
    size_t j = slot_of((const void *)tb->slots[i].key, ncap - 1);
    while (ns[j].key) j = (j + 1) & (ncap - 1);
    ns[j] = tb->slots[i];
  }
  pages_free(tb->slots, tb->cap * sizeof *tb->slots);
  tb->slots = ns;
  tb->cap = ncap;
  return true;
}

/* Makes room for one more payload; false if the array could not grow. */
static LT_RARE bool grow_payloads(lt_tracker *t) {
  lt_table *tb = &t->live;
  if (tb->recs_cap >= UINT32_MAX / 2) return false;
  uint32_t ncap = tb->recs_cap ? tb->recs_cap * 2 : 512;
  if (tb->free_cap < ncap) { /* room for every payload to be free */
    uint32_t *nf = pages_grow(tb->free_idx, (size_t)tb->free_cap * sizeof *nf, (size_t)ncap * sizeof *nf);
    if (!nf) return false;
    tb->free_idx = nf;
    tb->free_cap = ncap;
  }
  lt_entry *nr = pages_grow(tb->recs, (size_t)tb->recs_cap * sizeof *nr, (size_t)ncap * sizeof *nr);
  if (!nr) return false;
  tb->recs = nr;
  tb->recs_cap = ncap;
  return true;
}

/* A free payload, or UINT32_MAX if the payload array could not grow. */
static inline uint32_t new_payload(lt_tracker *t) {
  lt_table *tb = &t->live;
  if (tb->nfree) return tb->free_idx[--tb->nfree];
  if (tb->recs_used == tb->recs_cap && !grow_payloads(t)) return UINT32_MAX;
  return tb->recs_used++;
}

/* --- the filter ------------------------------------------------------------ */

static uint8_t saturated = 255; /* the fallback filter: never written (255 sticks) */

static void filter_pin_main(lt_tracker *t) {
  if (t->main_block && t->filter != &saturated) t->filter[lt_filter_slot(t->filter_mask, t->main_block)] = 255;
}

void lt_filter_init(lt_tracker *t) {
  uint8_t *f = pages_alloc(LT_FILTER_MIN);
  if (f) {
    t->filter = f;
    t->filter_mask = LT_FILTER_MIN - 1;
    filter_pin_main(t);
  } else {
    t->filter = &saturated;
    t->filter_mask = 0;
  }
}

void lt_filter_free(lt_tracker *t) {
  if (t->filter != &saturated) pages_free(t->filter, t->filter_mask + 1);
  t->filter = &saturated;
  t->filter_mask = 0;
}

static void filter_count(lt_tracker *t, const void *ptr) {
  uint8_t *f = &t->filter[lt_filter_slot(t->filter_mask, ptr)];
  if (*f < 255) ++*f;
}

/* Doubles the filter and recounts it from the table; keeps the old one if
 * that fails. */
static LT_RARE void filter_grow(lt_tracker *t) {
  size_t n = t->filter == &saturated ? LT_FILTER_MIN : (t->filter_mask + 1) * 2;
  uint8_t *f = pages_alloc(n);
  if (!f) return;
  lt_filter_free(t);
  t->filter = f;
  t->filter_mask = n - 1;
  filter_pin_main(t);
  lt_table *tb = &t->live;
  for (size_t i = 0; i < tb->cap; i++)
    if (tb->slots[i].key) filter_count(t, (const void *)tb->slots[i].key);
}

/* --- the table --------------------------------------------------------------- */

lt_entry *lt_table_insert(lt_tracker *t, const void *ptr) {
  lt_table *tb = &t->live;
  if ((tb->count + 1) * 2 > tb->cap && !grow(t)) return NULL;
  uint32_t idx = new_payload(t);
  if (idx == UINT32_MAX) return NULL;
  size_t mask = tb->cap - 1, i = slot_of(ptr, mask);
  while (tb->slots[i].key) i = (i + 1) & mask;
  tb->slots[i].key = (uintptr_t)ptr;
  tb->slots[i].idx = idx;
  tb->count++;
  if (tb->count * LT_FILTER_LOAD > t->filter_mask + 1 && t->filter_mask + 1 < LT_FILTER_MAX) filter_grow(t);
  else filter_count(t, ptr);
  return &tb->recs[idx];
}

const lt_entry *lt_table_remove(lt_tracker *t, const void *ptr) {
  lt_table *tb = &t->live;
  if (!tb->cap) return NULL;
  size_t mask = tb->cap - 1, i = slot_of(ptr, mask);
  for (;;) {
    uintptr_t k = tb->slots[i].key;
    if (!k) return NULL;
    if (k == (uintptr_t)ptr) break;
    i = (i + 1) & mask;
  }
  uint32_t idx = tb->slots[i].idx;
  lt_entry *e = &tb->recs[idx];
  tb->free_idx[tb->nfree++] = idx;
  uint8_t *f = &t->filter[lt_filter_slot(t->filter_mask, ptr)];
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
  return e;
}

void lt_table_each(lt_tracker *t, void (*f)(lt_tracker *, const void *, const lt_entry *, void *), void *arg) {
  lt_table *tb = &t->live;
  for (size_t i = 0; i < tb->cap; i++)
    if (tb->slots[i].key) f(t, (const void *)tb->slots[i].key, &tb->recs[tb->slots[i].idx], arg);
}

void lt_table_free(lt_tracker *t) {
  if (t->filter_mask + 1 > LT_FILTER_MIN) { /* back to a small one: nothing is sampled from now on */
    lt_filter_free(t);
    lt_filter_init(t);
  } else if (t->filter != &saturated) {
    memset(t->filter, 0, t->filter_mask + 1);
    filter_pin_main(t);
  }
  pages_free(t->live.slots, t->live.cap * sizeof *t->live.slots);
  pages_free(t->live.recs, (size_t)t->live.recs_cap * sizeof *t->live.recs);
  pages_free(t->live.free_idx, (size_t)t->live.free_cap * sizeof *t->live.free_idx);
  memset(&t->live, 0, sizeof t->live);
}
