/*
 * alloc.c — the lua_Alloc wrapper.  Lua 5.4 (manual §4.6) calls it for
 * every block; when ptr is NULL, osize carries the base type of the object
 * being created (LUA_TSTRING..LUA_TPROTO), and an object is freed with
 * nsize == 0 and osize equal to its size, its block intact (so its type
 * byte tells short from long strings and Lua from C closures).  Object
 * blocks are never reallocated, so reallocations are not looked up.
 *
 * The fast paths (alloc_impl) do no more than this:
 *   (NULL, x, 0)        return NULL;
 *   free                one filter byte (the live samples' addresses): if
 *                       zero, the heap count and the free itself;
 *   new block           for objects of a sampled type, the countdown (a
 *                       sample leaves for alloc_sample); the byte clock, the
 *                       heap and object counts; the allocation;
 *   reallocation        the byte clock and heap count; the reallocation.
 * No clock is read and no table looked up unless a block is a sample.  The
 * peak heap is checked where the heap decreases (a free, a shrink), since a
 * maximum is always followed by one (or by the end: lt_peak_heap).
 * Counts are made before the call and undone if it fails (Lua then
 * collects and retries, or raises a memory error): the clocks count only
 * blocks that were allocated, and a failed allocation is returned as is.
 * The profiler's own failures only drop a sample: it never makes an
 * allocation fail.
 *
 * When the wrapped allocator is luaL_newstate's (lauxlib.c's l_alloc, which
 * is free() and realloc(), see lt_attach), the variants below call free,
 * malloc and realloc directly: no indirect call, and a new block does not
 * go through realloc(NULL, n).  Four variants (direct or not, count or byte
 * sampling) are compiled from alloc_impl; lt_alloc_for picks one.  Each
 * handles frees in its entry and tail-calls out-of-line functions for new
 * blocks and reallocations, so that (NULL, x, 0) and frees save no
 * registers.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "ephlua.h"

uint64_t lt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Record stamps read CLOCK_MONOTONIC exactly once every LT_FINE_EVERY
 * stamps (and at every GC cycle); in between, CLOCK_MONOTONIC_COARSE (the
 * same clock as of the last timer tick, read without the TSC: a fifth of
 * the cost here).  A stamp is the later of the two readings, so stamps never
 * go backwards and are late by at most min(one tick, the time since the
 * last exact reading): a few microseconds while a program allocates
 * quickly, at most a tick (1-4 ms) after a pause. */
static inline uint64_t stamp_ns(lt_tracker *t) {
  uint64_t now;
  if (t->fine_countdown) {
    t->fine_countdown--;
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now < t->fine_ns) now = t->fine_ns;
#else
    now = t->fine_ns = lt_now_ns();
#endif
  } else {
    t->fine_countdown = LT_FINE_EVERY - 1;
    now = lt_now_ns();
    if (now < t->fine_ns) now = t->fine_ns;
    t->fine_ns = now;
  }
  return now - t->t0_ns;
}

uint64_t lt_stamp_ns(lt_tracker *t) { return stamp_ns(t); }

static inline double weight_of(const lt_tracker *t, uint64_t size) {
  if (t->by_bytes) return 1.0 / -expm1(-(double)size / (double)t->opt.sample_bytes);
  return t->count_weight;
}

double lt_weight(const lt_tracker *t, uint64_t size) { return weight_of(t, size); }

/* GCObject's CommonHeader: struct GCObject *next; lu_byte tt; ... */
#define LT_TT_OFFSET sizeof(void *)

static inline uint32_t class_of(const void *ptr, uint8_t tag, bool block_valid) {
  switch (tag) {
    case 4: {
      if (!block_valid) return LT_CLS_STRING;
      uint8_t tt = ((const uint8_t *)ptr)[LT_TT_OFFSET];
      return tt == 0x04 ? LT_CLS_SHORT_STRING : tt == 0x14 ? LT_CLS_LONG_STRING : LT_CLS_STRING;
    }
    case 5: return LT_CLS_TABLE;
    case 6: {
      if (!block_valid) return LT_CLS_FUNCTION;
      uint8_t tt = ((const uint8_t *)ptr)[LT_TT_OFFSET];
      return tt == 0x06 ? LT_CLS_LUA_CLOSURE : tt == 0x26 ? LT_CLS_C_CLOSURE : LT_CLS_FUNCTION;
    }
    case 7: return LT_CLS_USERDATA;
    case 8: return LT_CLS_THREAD;
    case 9: return LT_CLS_UPVALUE;
    default: return LT_CLS_PROTOTYPE;
  }
}

uint32_t lt_class_of(const void *ptr, uint8_t tag, bool block_valid) { return class_of(ptr, tag, block_valid); }

static void stamp(eph_stamp *s, uint64_t bytes, uint64_t ns, uint32_t cycles) {
  s->bytes = bytes;
  s->wall_ns = ns;
  s->scavenges = 0;
  s->full_gcs = cycles;
}

static unsigned log2_bucket(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

void lt_emit(lt_tracker *t, const void *ptr, const lt_entry *e, uint8_t death_kind, bool block_valid) {
  uint32_t cls = class_of(ptr, e->tag, block_valid);
  if (t->opt.class_mask && !(t->opt.class_mask & (1u << cls))) {
    t->filtered++;
    return;
  }
  if (t->write_failed) return;
  double weight = weight_of(t, e->size);
  eph_record r = {.id = e->id, .class_id = cls, .site_id = e->site, .size = e->size, .weight = weight,
                  .death_kind = death_kind};
  stamp(&r.birth, e->birth_bytes, e->birth_ns, e->birth_cycles);
  stamp(&r.death, t->bytes, stamp_ns(t), t->cycles);
  if (death_kind == EPH_DEATH_FREED && t->cycles > e->birth_cycles)
    stamp(&r.alive_until, t->cycle_bytes, t->cycle_ns, t->cycles);
  else if (death_kind == EPH_DEATH_FREED)
    r.alive_until = r.birth;
  else
    r.alive_until = r.death;
  if (eph_writer_record(t->w, &r) != EPH_OK) {
    snprintf(t->error, sizeof t->error, "writing %s: %s", t->opt.out, eph_writer_error(t->w));
    t->write_failed = true;
    t->detached = true;
    t->countdown = INT64_MAX;
    return;
  }
  t->records++;
  t->deaths_by_class[cls]++;
  t->weight_by_class[cls] += weight;
  if (death_kind == EPH_DEATH_CENSORED) {
    t->censored++;
    t->censored_weight += weight;
  } else {
    t->freed_weight += weight;
    t->life_hist[log2_bucket(r.death.bytes - r.birth.bytes + 1)] += weight;
    uint32_t c = r.death.full_gcs - r.birth.full_gcs;
    unsigned b = c < 4 ? c : c < 8 ? 4 : c < 16 ? 5 : c < 64 ? 6 : 7;
    t->survived_hist[b] += weight;
  }
}

#define LT_LIKELY(x) __builtin_expect(!!(x), 1)
#define LT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LT_ALWAYS_INLINE static inline __attribute__((always_inline))

static void sample(lt_tracker *t, void *p, size_t tag, size_t size) {
  if (t->fixed_gap) t->countdown = t->fixed_gap;
  else lt_sampler_rearm(t);
  if (t->internal || t->detached) return;
  uint64_t id = ++t->next_id;
  lt_entry *e = lt_table_insert(t, p);
  if (!e) {
    t->dropped++;
    lt_site_cache_flush(t, true); /* this object's death will not be seen */
    return;
  }
  e->id = id;
  e->size = size;
  e->birth_bytes = t->bytes - size;
  e->birth_ns = stamp_ns(t);
  e->birth_cycles = t->cycles;
  e->site = t->opt.sites && !t->closing ? lt_site_current(t) : 0;
  e->tag = (uint8_t)tag;
}

/* The wrapped allocator, for the slow paths. */
static inline void *inner_call(lt_tracker *t, void *ptr, size_t osize, size_t nsize) {
  if (t->direct) {
    if (nsize == 0) {
      free(ptr);
      return NULL;
    }
    return ptr ? realloc(ptr, nsize) : malloc(nsize);
  }
  return t->inner(t->inner_ud, ptr, osize, nsize);
}

static inline void heap_decrease(lt_tracker *t, size_t by) {
  int64_t h = t->heap;
  if (h > t->peak_heap) t->peak_heap = h;
  t->heap = h - (int64_t)by;
}

/* A free whose filter byte is set: the main block, a sample, or neither. */
static __attribute__((noinline)) void *free_slow(lt_tracker *t, void *ptr, size_t osize) {
  if (ptr == t->main_block) return lt_final_free(t, ptr, osize); /* the end of lua_close */
  const lt_entry *e = lt_table_remove(t, ptr);
  if (e) {
    if (e->tag == LT_TAG_LAST) lt_site_cache_flush(t, false); /* a prototype died: its pcs may be reused */
    lt_emit(t, ptr, e, t->closing ? EPH_DEATH_CENSORED : EPH_DEATH_FREED, true);
  }
  heap_decrease(t, osize);
  return inner_call(t, ptr, osize, 0);
}

/* An object whose allocation runs the countdown out (nothing counted yet:
 * if the allocation fails, the retry comes back here). */
static __attribute__((noinline)) void *alloc_sample(lt_tracker *t, size_t osize, size_t nsize) {
  void *p = inner_call(t, NULL, osize, nsize);
  if (!p) return NULL;
  t->bytes += nsize;
  t->heap += (int64_t)nsize;
  t->objects++;
  sample(t, p, osize, nsize);
  return p;
}

/* Undoes the counts of a failed new block (its countdown step recomputed;
 * its sizes were left in t->pending). */
static __attribute__((noinline, cold)) void *alloc_failed(lt_tracker *t) {
  size_t osize = t->pending_osize, nsize = t->pending_nsize;
  if (osize - LT_TAG_FIRST <= (size_t)(LT_TAG_LAST - LT_TAG_FIRST)) {
    t->objects--;
    if (t->tag_mask >> osize & 1u) t->countdown += t->by_bytes ? (int64_t)nsize : 1;
  }
  t->bytes -= nsize;
  t->heap -= (int64_t)nsize;
  return NULL;
}

static __attribute__((noinline, cold)) void *realloc_failed(lt_tracker *t) {
  size_t osize = t->pending_osize, nsize = t->pending_nsize;
  if (nsize > osize) t->bytes -= nsize - osize;
  t->heap += (int64_t)osize - (int64_t)nsize;
  return NULL;
}

/* A new block (ptr NULL, nsize > 0). */
LT_ALWAYS_INLINE void *new_impl(lt_tracker *t, size_t osize, size_t nsize, const bool direct, const bool by_bytes) {
  if (osize - LT_TAG_FIRST <= (size_t)(LT_TAG_LAST - LT_TAG_FIRST)) {
    if (t->tag_mask >> osize & 1u) {
      int64_t step = by_bytes ? (int64_t)nsize : 1;
      if (LT_UNLIKELY(t->countdown <= step)) return alloc_sample(t, osize, nsize);
      t->countdown -= step;
    }
    t->objects++;
  }
  t->bytes += nsize;
  t->heap += (int64_t)nsize;
  /* for alloc_failed: only t needs to be kept across the call */
  t->pending_osize = osize;
  t->pending_nsize = nsize;
  void *p = direct ? malloc(nsize) : t->inner(t->inner_ud, NULL, osize, nsize);
  if (LT_UNLIKELY(!p)) return alloc_failed(t);
  return p;
}

/* A reallocation (ptr and nsize non-zero): never an object's block. */
LT_ALWAYS_INLINE void *resize_impl(lt_tracker *t, void *ptr, size_t osize, size_t nsize, const bool direct) {
  if (nsize > osize) {
    t->bytes += nsize - osize;
    t->heap += (int64_t)(nsize - osize);
  } else {
    heap_decrease(t, osize - nsize);
  }
  t->pending_osize = osize;
  t->pending_nsize = nsize;
  void *p = direct ? realloc(ptr, nsize) : t->inner(t->inner_ud, ptr, osize, nsize);
  if (LT_UNLIKELY(!p)) return realloc_failed(t);
  return p;
}

/* The entry: (NULL, x, 0) and frees here (no register to save), the rest
 * in the functions above (tail calls). */
typedef void *new_fn_t(lt_tracker *, size_t, size_t);
typedef void *resize_fn_t(lt_tracker *, void *, size_t, size_t);

LT_ALWAYS_INLINE void *alloc_impl(lt_tracker *t, void *ptr, size_t osize, size_t nsize, const bool direct,
                                  new_fn_t *new_fn, resize_fn_t *resize_fn) {
  if (nsize == 0) {
    if (!ptr) return NULL;
    if (LT_UNLIKELY(t->filter[lt_filter_slot(t->filter_mask, ptr)])) return free_slow(t, ptr, osize);
    heap_decrease(t, osize);
    if (direct) {
      free(ptr);
      return NULL;
    }
    return t->inner(t->inner_ud, ptr, osize, 0);
  }
  if (!ptr) return new_fn(t, osize, nsize);
  return resize_fn(t, ptr, osize, nsize);
}

#define LT_VARIANT(name, direct, by_bytes)                                                                   \
  static __attribute__((noinline)) void *name##_new(lt_tracker *t, size_t osize, size_t nsize) {              \
    return new_impl(t, osize, nsize, direct, by_bytes);                                                       \
  }                                                                                                           \
  static void *name(void *ud, void *ptr, size_t osize, size_t nsize) {                                        \
    return alloc_impl(ud, ptr, osize, nsize, direct, name##_new, direct ? resize_direct : resize_inner);      \
  }

static __attribute__((noinline)) void *resize_direct(lt_tracker *t, void *ptr, size_t osize, size_t nsize) {
  return resize_impl(t, ptr, osize, nsize, true);
}
static __attribute__((noinline)) void *resize_inner(lt_tracker *t, void *ptr, size_t osize, size_t nsize) {
  return resize_impl(t, ptr, osize, nsize, false);
}
LT_VARIANT(alloc_count_direct, true, false)
LT_VARIANT(alloc_bytes_direct, true, true)
LT_VARIANT(alloc_count, false, false)
LT_VARIANT(alloc_bytes, false, true)

lua_Alloc lt_alloc_for(const lt_tracker *t) {
  if (t->direct) return t->by_bytes ? alloc_bytes_direct : alloc_count_direct;
  return t->by_bytes ? alloc_bytes : alloc_count;
}

int64_t lt_peak_heap(const lt_tracker *t) {
  int64_t p = t->peak_heap > t->heap ? t->peak_heap : t->heap;
  return p > 0 ? p : 0;
}
