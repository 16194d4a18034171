/*
 * alloc.c — the lua_Alloc wrapper.  Lua 5.4 (manual §4.6) calls it for
 * every block; when ptr is NULL, osize carries the base type of the object
 * being created (LUA_TSTRING..LUA_TPROTO), and an object is freed with
 * nsize == 0 and osize equal to its size, its block intact (so its type
 * byte tells short from long strings and Lua from C closures).
 *
 * A sample is allocated with a 16-byte header in front (ephlua.h,
 * lt_header: the core's rt_sample, its birth clock, size and site) and its
 * address marked (the core's marks, src/runtime/marks.c); its free finds
 * the mark, writes the record from the header (rt_emit_inline) and frees
 * the whole block.  So no table is kept per sample, and its birth
 * data sits next to the object, in the cache when the sweep frees it.
 *
 * The fast paths (alloc_impl) do no more than this:
 *   (NULL, x, 0)        return NULL;
 *   free                the block's mark (rt_marked: two loads and a bit
 *                       test): if clear, the heap count and the free itself;
 *   new block           for objects of a sampled type, the countdown (a
 *                       sample leaves for alloc_sample); the byte clock, the
 *                       heap and object counts; the allocation;
 *   reallocation        the mark (Lua never reallocates an object's block,
 *                       but a marked one keeps its header); the byte clock
 *                       and heap count; the reallocation.
 * No clock is read unless a block is a sample.  The
 * peak heap is checked where the heap decreases (a free, a shrink), since a
 * maximum is always followed by one (or by the end: rt_peak_heap).
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
#include <stdlib.h>
#include <string.h>

#include "runtime/lua/ephlua.h"
#include "runtime/lua/lua54_layout.h"

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

/* The record of a sample (the core's, rt_emit_inline), its class read
 * from the object's type byte. */
RT_ALWAYS_INLINE void emit(lt_tracker *t, void *obj, uint8_t death_kind) {
  rt_emit_inline(&t->s, class_of(obj), lt_header_of(obj), death_kind);
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

/* A free of a marked block: a sample, or the main block. */
static __attribute__((noinline)) void *free_slow(lt_tracker *t, void *ptr, size_t osize) {
  if (ptr == t->main_block) return lt_final_free(t, ptr, osize); /* the end of lua_close */
  lt_gc_watch(t);
  if (t->gc_stop && (*t->gc_stop & LT_GCSTPCLS)) t->s.closing = true; /* lua_close frees everything */
  if (!t->s.detached) {
    if (((const uint8_t *)ptr)[LT_TT_OFFSET] == LT_TAG_PROTO) lt_site_cache_flush(t, false); /* a prototype: its pcs may be reused */
    emit(t, ptr, t->s.closing ? EPH_DEATH_CENSORED : EPH_DEATH_FREED);
  }
  rt_unmark(&t->s, ptr);
  t->s.live--;
  rt_heap_decrease(&t->s, osize);
  return inner_call(t, lt_header_of(ptr), osize + LT_HEADER_SIZE, 0);
}

/* An object whose allocation runs the countdown out (nothing counted yet:
 * if the allocation fails, the retry comes back here).  The sample gets a
 * header; if the larger block or its mark cannot be had, the object is made
 * without (the sample is dropped: the profiler never makes an allocation
 * fail). */
static __attribute__((noinline)) void *alloc_sample(lt_tracker *t, size_t tag, size_t nsize) {
  if (RT_UNLIKELY(rt_signal_due(&t->s))) rt_signal_stop(); /* returns with t detached, or not at all */
  uint64_t birth = t->s.bytes;
  void *p = NULL;
  if (!t->s.internal && !t->s.detached) {
    lt_header *h = inner_call(t, NULL, tag, nsize + LT_HEADER_SIZE);
    if (h && rt_mark(&t->s, h + 1)) {
      p = h + 1;
      uint32_t site = !t->s.opt.sites || t->s.closing ? 0 : t->s.opt.stacks ? lt_stack_current(t) : lt_site_current(t);
      rt_sample_set(h, birth, nsize, site);
      t->s.live++;
      if (birth >= t->s.clocks.next_point) rt_clock_mark(&t->s, birth);
    } else {
      if (h) inner_call(t, h, nsize + LT_HEADER_SIZE, 0);
      t->s.dropped++;
      lt_site_cache_flush(t, true); /* this object's death will not be seen */
    }
  }
  if (!p && !(p = inner_call(t, NULL, tag, nsize))) return NULL;
  rt_count_new(&t->s, nsize);
  rt_sampler_next(&t->s);
  return p;
}

/* A marked block reallocated: not expected (Lua never reallocates an
 * object's block), but its header must move with it. */
static __attribute__((noinline, cold)) void *resize_marked(lt_tracker *t, void *ptr, size_t osize, size_t nsize) {
  lt_header *h = inner_call(t, lt_header_of(ptr), osize + LT_HEADER_SIZE, nsize + LT_HEADER_SIZE);
  if (!h) return NULL;
  if (h + 1 != ptr) {
    rt_unmark(&t->s, ptr);
    if (!rt_mark(&t->s, h + 1)) { /* keeps the block, without its header */
      memmove(h, h + 1, nsize);
      t->s.live--;
      lt_site_cache_flush(t, true);
      void *q = inner_call(t, h, nsize + LT_HEADER_SIZE, nsize);
      return q ? q : h; /* a shrink that fails leaves the block as it was: still valid */
    }
  }
  h->size_site = (h->size_site & ~RT_SIZE_MASK) | (uint64_t)nsize;
  if (nsize > osize) {
    t->s.bytes += nsize - osize;
    t->s.heap += (int64_t)(nsize - osize);
  } else {
    rt_heap_decrease(&t->s, osize - nsize);
  }
  return h + 1;
}

/* Undoes the counts of a failed new block (its countdown step recomputed;
 * its sizes were left in t->pending). */
static __attribute__((noinline, cold)) void *alloc_failed(lt_tracker *t) {
  size_t osize = t->pending_osize, nsize = t->pending_nsize;
  if (osize - LT_TAG_FIRST <= (size_t)(LT_TAG_LAST - LT_TAG_FIRST)) {
    t->s.objects--;
    if (t->tag_mask >> osize & 1u) t->s.countdown += t->s.by_bytes ? (int64_t)nsize : 1;
  }
  t->s.bytes -= nsize;
  t->s.heap -= (int64_t)nsize;
  return NULL;
}

static __attribute__((noinline, cold)) void *realloc_failed(lt_tracker *t) {
  size_t osize = t->pending_osize, nsize = t->pending_nsize;
  if (nsize > osize) t->s.bytes -= nsize - osize;
  t->s.heap += (int64_t)osize - (int64_t)nsize;
  return NULL;
}

/* A new block (ptr NULL, nsize > 0). */
RT_ALWAYS_INLINE void *new_impl(lt_tracker *t, size_t osize, size_t nsize, const bool direct, const bool by_bytes) {
  lt_gc_watch(t);
  if (osize - LT_TAG_FIRST <= (size_t)(LT_TAG_LAST - LT_TAG_FIRST)) {
    if (t->tag_mask >> osize & 1u && rt_sample_due(&t->s, by_bytes ? (int64_t)nsize : 1))
      return alloc_sample(t, osize, nsize);
    t->s.objects++;
  }
  t->s.bytes += nsize;
  t->s.heap += (int64_t)nsize;
  /* for alloc_failed: only t needs to be kept across the call */
  t->pending_osize = osize;
  t->pending_nsize = nsize;
  void *p = direct ? malloc(nsize) : t->inner(t->inner_ud, NULL, osize, nsize);
  if (RT_UNLIKELY(!p)) return alloc_failed(t);
  return p;
}

/* A reallocation (ptr and nsize non-zero): never an object's block. */
RT_ALWAYS_INLINE void *resize_impl(lt_tracker *t, void *ptr, size_t osize, size_t nsize, const bool direct) {
  lt_gc_watch(t);
  if (RT_UNLIKELY(rt_marked(&t->s, ptr))) return resize_marked(t, ptr, osize, nsize);
  if (nsize > osize) {
    t->s.bytes += nsize - osize;
    t->s.heap += (int64_t)(nsize - osize);
  } else {
    rt_heap_decrease(&t->s, osize - nsize);
  }
  t->pending_osize = osize;
  t->pending_nsize = nsize;
  void *p = direct ? realloc(ptr, nsize) : t->inner(t->inner_ud, ptr, osize, nsize);
  if (RT_UNLIKELY(!p)) return realloc_failed(t);
  return p;
}

/* The entry: (NULL, x, 0) and frees here (no register to save), the rest
 * in the functions above (tail calls). */
typedef void *new_fn_t(lt_tracker *, size_t, size_t);
typedef void *resize_fn_t(lt_tracker *, void *, size_t, size_t);

RT_ALWAYS_INLINE void *alloc_impl(lt_tracker *t, void *ptr, size_t osize, size_t nsize, const bool direct,
                                  new_fn_t *new_fn, resize_fn_t *resize_fn) {
  if (nsize == 0) {
    if (!ptr) return NULL;
    if (RT_UNLIKELY(rt_marked(&t->s, ptr))) return free_slow(t, ptr, osize);
    rt_heap_decrease(&t->s, osize);
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
  if (t->direct) return t->s.by_bytes ? alloc_bytes_direct : alloc_count_direct;
  return t->s.by_bytes ? alloc_bytes : alloc_count;
}

lt_tracker *lt_tracker_of(lua_State *L) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  bool ours = f == alloc_count_direct || f == alloc_bytes_direct || f == alloc_count || f == alloc_bytes;
  return ours ? ud : NULL;
}
