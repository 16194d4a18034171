/*
 * alloc.c — the lua_Alloc wrapper.  Lua 5.4 (manual §4.6) calls it for
 * every block; when ptr is NULL, osize carries the base type of the object
 * being created (LUA_TSTRING..LUA_TPROTO), and an object is freed with
 * nsize == 0 and osize equal to its size, its block intact (so its type
 * byte tells short from long strings and Lua from C closures).
 *
 * A sample is allocated with a 16-byte header in front (ephlua.h,
 * lt_header: its birth clock, size and site) and its address marked
 * (marks.c); its free finds the mark, writes the record from the header and
 * frees the whole block.  So no table is kept per sample, and its birth
 * data sits next to the object, in the cache when the sweep frees it.
 *
 * The fast paths (alloc_impl) do no more than this:
 *   (NULL, x, 0)        return NULL;
 *   free                the block's mark (lt_marked: two loads and a bit
 *                       test): if clear, the heap count and the free itself;
 *   new block           for objects of a sampled type, the countdown (a
 *                       sample leaves for alloc_sample); the byte clock, the
 *                       heap and object counts; the allocation;
 *   reallocation        the mark (Lua never reallocates an object's block,
 *                       but a marked one keeps its header); the byte clock
 *                       and heap count; the reallocation.
 * No clock is read unless a block is a sample.  The
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
#include <string.h>
#include <time.h>

#include "ephlua.h"
#include "lua54_layout.h"

#define LT_LIKELY(x) __builtin_expect(!!(x), 1)
#define LT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LT_ALWAYS_INLINE static inline __attribute__((always_inline))

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
  if (t->by_bytes) return ephs_byte_weight(size, t->opt.sample_bytes);
  return t->count_weight;
}

/* GCObject's CommonHeader: struct GCObject *next; lu_byte tt; ... */
#define LT_TT_OFFSET sizeof(void *)

static inline uint32_t class_of(const void *obj) {
  uint8_t tt = ((const uint8_t *)obj)[LT_TT_OFFSET];
  switch (tt) {
    case 0x04: return LT_CLS_SHORT_STRING;
    case 0x14: return LT_CLS_LONG_STRING;
    case 0x05: return LT_CLS_TABLE;
    case 0x06: return LT_CLS_LUA_CLOSURE;
    case 0x26: return LT_CLS_C_CLOSURE;
    case 0x07: return LT_CLS_USERDATA;
    case 0x08: return LT_CLS_THREAD;
#if LT_TAG_UPVALUE
    case LT_TAG_UPVALUE: return LT_CLS_UPVALUE;
#endif
    case LT_TAG_PROTO: return LT_CLS_PROTOTYPE;
    default: return (tt & 0x0F) == 0x06 ? LT_CLS_FUNCTION : LT_CLS_STRING; /* a variant we do not know */
  }
}

static unsigned log2_bucket(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

/* The summary's tallies (lt_summary), kept only when it will be printed. */
static __attribute__((noinline)) void tally(lt_tracker *t, uint32_t cls, double weight, uint8_t death_kind,
                                            uint64_t lifetime, uint32_t cycles_survived) {
  t->deaths_by_class[cls]++;
  t->weight_by_class[cls] += weight;
  if (death_kind == EPH_DEATH_CENSORED) {
    t->censored_weight += weight;
  } else {
    t->freed_weight += weight;
    t->life_hist[log2_bucket(lifetime + 1)] += weight;
    uint32_t c = cycles_survived;
    unsigned b = c < 4 ? c : c < 8 ? 4 : c < 16 ? 5 : c < 64 ? 6 : 7;
    t->survived_hist[b] += weight;
  }
}

static __attribute__((noinline, cold)) void write_failed(lt_tracker *t) {
  snprintf(t->error, sizeof t->error, "writing %s: %s", t->opt.out, eph_writer_error(t->w));
  t->write_failed = true;
  t->detached = true;
  t->countdown = INT64_MAX;
}

/* Records go to the writer in batches (writer_profiler.h): the frees of
 * one sweep step share their death stamp (no allocation moves the byte
 * clock in between, and the coarse clock moves once a tick), so the
 * record carries only what is its own: class, site, size and birth.  A
 * new batch starts whenever the death stamp or kind changes.  The clock
 * is read for one death in LT_DEATHS_PER_READING of a sweep step, and
 * again after any other reading (a clock point, a cycle's end: clock.c),
 * so no death is stamped before a reading its birth may be placed after. */
static __attribute__((noinline)) void new_batch(lt_tracker *t, uint64_t death_ns, uint8_t death_kind) {
  t->batch_death = (eph_stamp){.bytes = t->bytes, .wall_ns = death_ns, .full_gcs = t->cycles};
  t->batch_kind = death_kind;
  eph_stamp until = death_kind == EPH_DEATH_FREED
                        ? (eph_stamp){.bytes = t->cycle_bytes, .wall_ns = t->cycle_ns, .full_gcs = t->cycles}
                        : t->batch_death;
  eph_writer_batch(t->w, &t->batch_death, &until, death_kind);
}

LT_ALWAYS_INLINE void emit(lt_tracker *t, void *obj, uint8_t death_kind) {
  uint32_t cls = class_of(obj);
  if (t->opt.class_mask && !(t->opt.class_mask & (1u << cls))) {
    t->filtered++;
    return;
  }
  if (t->write_failed) return;
  const lt_header *h = lt_header_of(obj);
  uint64_t birth = h->birth, size = h->size_site & ((UINT64_C(1) << LT_SIZE_BITS) - 1);
  double weight = weight_of(t, size);
  ephs_clock_stamp born = lt_clock_at(t, birth);
  uint32_t birth_cycles = born.major;
  eph_stamp b = {.bytes = birth, .wall_ns = born.wall_ns, .full_gcs = birth_cycles};
  bool same =
      death_kind == t->batch_kind && t->bytes == t->batch_death.bytes && t->cycles == t->batch_death.full_gcs;
  if (LT_LIKELY(same && t->batch_reuse)) {
    t->batch_reuse--;
  } else {
    uint64_t death_ns = stamp_ns(t);
    if (!same || death_ns != t->batch_death.wall_ns) new_batch(t, death_ns, death_kind);
    t->batch_reuse = LT_DEATHS_PER_READING - 1;
  }
  /* alive until its birth if no cycle ended since; else until the batch's
   * alive_until, the last cycle's end (a censored record's: its death) */
  bool freed = death_kind == EPH_DEATH_FREED, until_birth = freed && t->cycles == birth_cycles;
  /* interpolation spreads a pause across its bucket: the birth was before the cycle's end */
  if (freed && !until_birth && b.wall_ns > t->cycle_ns) b.wall_ns = t->cycle_ns;
  eph_status st = eph_writer_batch_record(t->w, cls, (uint32_t)(h->size_site >> LT_SIZE_BITS), size, weight, &b,
                                          until_birth);
  if (LT_UNLIKELY(st != EPH_OK)) return write_failed(t);
  t->records++;
  if (death_kind == EPH_DEATH_CENSORED) t->censored++;
  if (t->summary) tally(t, cls, weight, death_kind, t->bytes - birth, t->cycles - birth_cycles);
}

void lt_emit(lt_tracker *t, void *obj, uint8_t death_kind) { emit(t, obj, death_kind); }

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

/* A free of a marked block: a sample, or the main block. */
static __attribute__((noinline)) void *free_slow(lt_tracker *t, void *ptr, size_t osize) {
  if (ptr == t->main_block) return lt_final_free(t, ptr, osize); /* the end of lua_close */
  lt_gc_watch(t);
  if (t->gc_stop && (*t->gc_stop & LT_GCSTPCLS)) t->closing = true; /* lua_close frees everything */
  if (!t->detached) {
    if (((const uint8_t *)ptr)[LT_TT_OFFSET] == LT_TAG_PROTO) lt_site_cache_flush(t, false); /* a prototype: its pcs may be reused */
    emit(t, ptr, t->closing ? EPH_DEATH_CENSORED : EPH_DEATH_FREED);
  }
  lt_unmark(t, ptr);
  t->live--;
  heap_decrease(t, osize);
  return inner_call(t, lt_header_of(ptr), osize + LT_HEADER_SIZE, 0);
}

/* Counts a new block of nsize bytes (made). */
static inline void count_new(lt_tracker *t, size_t nsize) {
  t->bytes += nsize;
  t->heap += (int64_t)nsize;
  t->objects++;
}

/* An object whose allocation runs the countdown out (nothing counted yet:
 * if the allocation fails, the retry comes back here).  The sample gets a
 * header; if the larger block or its mark cannot be had, the object is made
 * without (the sample is dropped: the profiler never makes an allocation
 * fail). */
static __attribute__((noinline)) void *alloc_sample(lt_tracker *t, size_t tag, size_t nsize) {
  if (LT_UNLIKELY(lt_signal_due(t))) lt_signal_stop(); /* returns with t detached, or not at all */
  uint64_t birth = t->bytes;
  void *p = NULL;
  if (!t->internal && !t->detached) {
    lt_header *h = inner_call(t, NULL, tag, nsize + LT_HEADER_SIZE);
    if (h && lt_mark(t, h + 1)) {
      p = h + 1;
      h->birth = birth;
      uint32_t site = !t->opt.sites || t->closing ? 0 : t->opt.stacks ? lt_stack_current(t) : lt_site_current(t);
      h->size_site = (uint64_t)nsize | (uint64_t)(site <= LT_SITE_MAX ? site : 0) << LT_SIZE_BITS;
      t->live++;
      if (birth >= t->clocks.next_point) lt_clock_mark(t, birth);
    } else {
      if (h) inner_call(t, h, nsize + LT_HEADER_SIZE, 0);
      t->dropped++;
      lt_site_cache_flush(t, true); /* this object's death will not be seen */
    }
  }
  if (!p && !(p = inner_call(t, NULL, tag, nsize))) return NULL;
  count_new(t, nsize);
  if (t->fixed_gap) t->countdown = t->fixed_gap;
  else lt_sampler_rearm(t);
  return p;
}

/* A marked block reallocated: not expected (Lua never reallocates an
 * object's block), but its header must move with it. */
static __attribute__((noinline, cold)) void *resize_marked(lt_tracker *t, void *ptr, size_t osize, size_t nsize) {
  lt_header *h = inner_call(t, lt_header_of(ptr), osize + LT_HEADER_SIZE, nsize + LT_HEADER_SIZE);
  if (!h) return NULL;
  if (h + 1 != ptr) {
    lt_unmark(t, ptr);
    if (!lt_mark(t, h + 1)) { /* keeps the block, without its header */
      memmove(h, h + 1, nsize);
      t->live--;
      lt_site_cache_flush(t, true);
      void *q = inner_call(t, h, nsize + LT_HEADER_SIZE, nsize);
      return q ? q : h; /* a shrink that fails leaves the block as it was: still valid */
    }
  }
  h->size_site = (h->size_site & ~((UINT64_C(1) << LT_SIZE_BITS) - 1)) | (uint64_t)nsize;
  if (nsize > osize) {
    t->bytes += nsize - osize;
    t->heap += (int64_t)(nsize - osize);
  } else {
    heap_decrease(t, osize - nsize);
  }
  return h + 1;
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
  lt_gc_watch(t);
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
  lt_gc_watch(t);
  if (LT_UNLIKELY(lt_marked(t, ptr))) return resize_marked(t, ptr, osize, nsize);
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
    if (LT_UNLIKELY(lt_marked(t, ptr))) return free_slow(t, ptr, osize);
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

lt_tracker *lt_tracker_of(lua_State *L) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  bool ours = f == alloc_count_direct || f == alloc_bytes_direct || f == alloc_count || f == alloc_bytes;
  return ours ? ud : NULL;
}

int64_t lt_peak_heap(const lt_tracker *t) {
  int64_t p = t->peak_heap > t->heap ? t->peak_heap : t->heap;
  return p > 0 ? p : 0;
}
