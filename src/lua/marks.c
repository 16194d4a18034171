/*
 * marks.c — which blocks carry a sample header (ephlua.h, lt_header): one
 * bit per 8-byte granule of address space, set at the block's address (the
 * object's, just after its header).  The address space is cut into 16 MiB
 * regions; a region's bitmap (256 KiB) is mapped when its first sample is
 * marked, and a top table of region pointers, reserved once and touched
 * only where there are regions, finds it.  A free asks lt_marked (inline:
 * two loads and a bit test) whether the block is a sample; Lua sweeps
 * neighbouring blocks in a row, so those loads mostly hit the cache.
 *
 * The bitmaps, the top table and the region list live in pages of their own
 * (mmap), outside Lua's accounting and outside any custom allocator's
 * limits; a failed mapping only drops a sample: the profiler never makes an
 * allocation fail.  Smaller structures (sites, clock tables) come from the
 * wrapped allocator (lt_mem_alloc).
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

void *lt_pages_alloc(size_t size) {
  void *p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void lt_pages_free(void *p, size_t size) {
  if (p) munmap(p, page_round(size));
}

void *lt_pages_grow(void *p, size_t old, size_t size) {
  if (!p) return lt_pages_alloc(size);
#ifdef MREMAP_MAYMOVE
  void *q = mremap(p, page_round(old), page_round(size), MREMAP_MAYMOVE);
  return q == MAP_FAILED ? NULL : q;
#else
  void *q = lt_pages_alloc(size);
  if (q) {
    memcpy(q, p, old);
    lt_pages_free(p, old);
  }
  return q;
#endif
}

#define LT_RARE __attribute__((noinline, cold))

/* --- the marks --------------------------------------------------------------- */

bool lt_marks_init(lt_tracker *t) {
  memset(&t->marks, 0, sizeof t->marks);
  t->marks_top = lt_pages_alloc(LT_MARK_TOP_LEN * sizeof *t->marks_top);
  return t->marks_top != NULL;
}

/* Maps region r's bitmap; NULL if it cannot. */
static LT_RARE uint64_t *new_region(lt_tracker *t, size_t r) {
  lt_marks *m = &t->marks;
  if (m->nregions == m->regions_cap) {
    size_t ncap = m->regions_cap ? m->regions_cap * 2 : 512;
    uint32_t *nr = lt_pages_grow(m->regions, m->regions_cap * sizeof *nr, ncap * sizeof *nr);
    if (!nr) return NULL;
    m->regions = nr;
    m->regions_cap = ncap;
  }
  uint64_t *bits = lt_pages_alloc(LT_MARK_REGION_WORDS * sizeof *bits);
  if (!bits) return NULL;
  m->regions[m->nregions++] = (uint32_t)r;
  t->marks_top[r] = bits;
  return bits;
}

bool lt_mark_slow(lt_tracker *t, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> LT_MARK_REGION_SHIFT);
  if (!t->marks_top || r >= LT_MARK_TOP_LEN) return false;
  uint64_t *bits = t->marks_top[r];
  if (!bits && !(bits = new_region(t, r))) return false;
  bits[lt_mark_word(a)] |= UINT64_C(1) << lt_mark_bit(a);
  return true;
}

void lt_marks_each(lt_tracker *t, void (*f)(lt_tracker *, void *, void *), void *arg) {
  lt_marks *m = &t->marks;
  for (size_t k = 0; k < m->nregions; k++) {
    uintptr_t base = (uintptr_t)m->regions[k] << LT_MARK_REGION_SHIFT;
    const uint64_t *bits = t->marks_top[m->regions[k]];
    for (size_t w = 0; w < LT_MARK_REGION_WORDS; w++) {
      for (uint64_t x = bits[w]; x; x &= x - 1) {
        uintptr_t a = base + (((uintptr_t)w * 64 + (uintptr_t)__builtin_ctzll(x)) << LT_MARK_GRANULE_SHIFT);
        f(t, (void *)a, arg);
      }
    }
  }
}

void lt_marks_free(lt_tracker *t) {
  lt_marks *m = &t->marks;
  for (size_t k = 0; k < m->nregions; k++) lt_pages_free(t->marks_top[m->regions[k]], LT_MARK_REGION_WORDS * sizeof(uint64_t));
  lt_pages_free(m->regions, m->regions_cap * sizeof *m->regions);
  lt_pages_free(t->marks_top, LT_MARK_TOP_LEN * sizeof *t->marks_top);
  memset(m, 0, sizeof *m);
  t->marks_top = NULL;
}
