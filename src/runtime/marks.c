/*
 * marks.c — which addresses are samples (Lua: which blocks carry a sample
 * header, src/runtime/lua/ephlua.h): one bit per 8-byte granule of address
 * space, set at the object's address.  The address space is cut into 16 MiB
 * regions; a region's bitmap (256 KiB) is mapped when its first sample is
 * marked, and a top table of region pointers, reserved once and touched
 * only where there are regions, finds it.  A free asks rt_marked (inline:
 * two loads and a bit test) whether the block is a sample; a collector
 * sweeps neighbouring blocks in a row, so those loads mostly hit the cache.
 *
 * The bitmaps, the top table and the region list live in pages of their own
 * (mmap), outside the runtime's accounting and outside any custom
 * allocator's limits; a failed mapping only drops a sample: the profiler
 * never makes an allocation fail.  The clock tables live in such pages too;
 * smaller structures (sites, stacks) come from the session's allocator
 * (rt_mem_alloc: Lua's, the allocator it wraps).
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/adapter.h"

void *rt_mem_alloc(rt_session *s, size_t size) { return s->mem(s->mem_ud, NULL, 0, size); }

void rt_mem_free(rt_session *s, void *p, size_t size) {
  if (p) s->mem(s->mem_ud, p, size, 0);
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

void *rt_pages_alloc(size_t size) {
  void *p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void rt_pages_free(void *p, size_t size) {
  if (p) munmap(p, page_round(size));
}

void *rt_pages_grow(void *p, size_t old, size_t size) {
  if (!p) return rt_pages_alloc(size);
#ifdef MREMAP_MAYMOVE
  void *q = mremap(p, page_round(old), page_round(size), MREMAP_MAYMOVE);
  return q == MAP_FAILED ? NULL : q;
#else
  void *q = rt_pages_alloc(size);
  if (q) {
    memcpy(q, p, old);
    rt_pages_free(p, old);
  }
  return q;
#endif
}

#define RT_RARE __attribute__((noinline, cold))

/* --- the marks --------------------------------------------------------------- */

bool rt_marks_init(rt_session *s) {
  memset(&s->marks, 0, sizeof s->marks);
  s->marks_top = rt_pages_alloc(RT_MARK_TOP_LEN * sizeof *s->marks_top);
  return s->marks_top != NULL;
}

/* Maps region r's bitmap; NULL if it cannot. */
static RT_RARE uint64_t *new_region(rt_session *s, size_t r) {
  rt_marks *m = &s->marks;
  if (m->nregions == m->regions_cap) {
    size_t ncap = m->regions_cap ? m->regions_cap * 2 : 512;
    uint32_t *nr = rt_pages_grow(m->regions, m->regions_cap * sizeof *nr, ncap * sizeof *nr);
    if (!nr) return NULL;
    m->regions = nr;
    m->regions_cap = ncap;
  }
  uint64_t *bits = rt_pages_alloc(RT_MARK_REGION_WORDS * sizeof *bits);
  if (!bits) return NULL;
  m->regions[m->nregions++] = (uint32_t)r;
  s->marks_top[r] = bits;
  return bits;
}

bool rt_mark_slow(rt_session *s, const void *p) {
  uintptr_t a = (uintptr_t)p;
  size_t r = (size_t)(a >> RT_MARK_REGION_SHIFT);
  if (!s->marks_top || r >= RT_MARK_TOP_LEN) return false;
  uint64_t *bits = s->marks_top[r];
  if (!bits && !(bits = new_region(s, r))) return false;
  bits[rt_mark_word(a)] |= UINT64_C(1) << rt_mark_bit(a);
  return true;
}

void rt_marks_each(rt_session *s, void (*f)(rt_session *, void *, void *), void *arg) {
  rt_marks *m = &s->marks;
  for (size_t k = 0; k < m->nregions; k++) {
    uintptr_t base = (uintptr_t)m->regions[k] << RT_MARK_REGION_SHIFT;
    const uint64_t *bits = s->marks_top[m->regions[k]];
    for (size_t w = 0; w < RT_MARK_REGION_WORDS; w++) {
      for (uint64_t x = bits[w]; x; x &= x - 1) {
        uintptr_t a = base + (((uintptr_t)w * 64 + (uintptr_t)__builtin_ctzll(x)) << RT_MARK_GRANULE_SHIFT);
        f(s, (void *)a, arg);
      }
    }
  }
}

void rt_marks_free(rt_session *s) {
  rt_marks *m = &s->marks;
  for (size_t k = 0; k < m->nregions; k++) rt_pages_free(s->marks_top[m->regions[k]], RT_MARK_REGION_WORDS * sizeof(uint64_t));
  rt_pages_free(m->regions, m->regions_cap * sizeof *m->regions);
  rt_pages_free(s->marks_top, RT_MARK_TOP_LEN * sizeof *s->marks_top);
  memset(m, 0, sizeof *m);
  s->marks_top = NULL;
}
