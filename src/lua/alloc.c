/*
 * alloc.c — the lua_Alloc wrapper.  Lua 5.4 (manual §4.6) calls it for
 * every block; when ptr is NULL, osize carries the base type of the object
 * being created (LUA_TSTRING..LUA_TPROTO), and an object is freed with
 * nsize == 0 and osize equal to its size, its block intact (so its type
 * byte tells short from long strings and Lua from C closures).  Object
 * blocks are never reallocated, so reallocations are not looked up.
 *
 * Hot path, in order: (NULL, x, 0) calls return at once; a free looks the
 * block up only if some sample is live; an allocation advances the byte
 * clock and, for objects of the selected types, the sampler's countdown.
 * A failed allocation is returned as is (Lua then collects and retries);
 * the profiler's own failures only drop a sample.
 */
#include <math.h>
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
uint64_t lt_stamp_ns(lt_tracker *t) {
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

double lt_weight(const lt_tracker *t, uint64_t size) {
  if (t->by_bytes) return 1.0 / -expm1(-(double)size / (double)t->opt.sample_bytes);
  return (double)t->opt.sample_every;
}

/* GCObject's CommonHeader: struct GCObject *next; lu_byte tt; ... */
#define LT_TT_OFFSET sizeof(void *)

uint32_t lt_class_of(const void *ptr, uint8_t tag, bool block_valid) {
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

static void stamp(eph_stamp *s, uint64_t bytes, uint64_t ns, uint32_t cycles) {
  s->bytes = bytes;
  s->wall_ns = ns;
  s->scavenges = 0;
  s->full_gcs = cycles;
}

static unsigned log2_bucket(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

void lt_emit(lt_tracker *t, const void *ptr, const lt_entry *e, uint8_t death_kind, bool block_valid) {
  uint32_t cls = lt_class_of(ptr, e->tag, block_valid);
  if (t->opt.class_mask && !(t->opt.class_mask & (1u << cls))) {
    t->filtered++;
    return;
  }
  if (t->write_failed) return;
  double weight = lt_weight(t, e->size);
  eph_record r = {.id = e->id, .class_id = cls, .site_id = e->site, .size = e->size, .weight = weight,
                  .death_kind = death_kind};
  stamp(&r.birth, e->birth_bytes, e->birth_ns, e->birth_cycles);
  stamp(&r.death, t->bytes, lt_stamp_ns(t), t->cycles);
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

static void sample(lt_tracker *t, void *p, size_t tag, size_t size) {
  double w;
  lt_sampler_take(t, size, &w); /* w == lt_weight(t, size), recomputed when the record is written */
  if (t->internal || t->detached) return;
  lt_entry e = {.id = ++t->next_id,
                .size = size,
                .birth_bytes = t->bytes - size,
                .birth_ns = lt_stamp_ns(t),
                .birth_cycles = t->cycles,
                .site = t->opt.sites && !t->closing ? lt_site_current(t) : 0,
                .tag = (uint8_t)tag};
  if (!lt_table_insert(t, p, &e)) {
    t->dropped++;
    lt_site_cache_flush(t, true); /* this object's death will not be seen */
  }
}

void *lt_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lt_tracker *t = ud;
  if (nsize == 0) {
    if (!ptr) return NULL;
    if (ptr == t->main_block) return lt_final_free(t, ptr, osize); /* the end of lua_close */
    if (t->filter[lt_filter_slot(ptr)]) {
      lt_entry e;
      if (lt_table_remove(t, ptr, &e)) {
        if (e.tag == LT_TAG_LAST) lt_site_cache_flush(t, false); /* a prototype died: its pcs may be reused */
        lt_emit(t, ptr, &e, t->closing ? EPH_DEATH_CENSORED : EPH_DEATH_FREED, true);
      }
    }
    t->heap = t->heap > osize ? t->heap - osize : 0;
    return t->inner(t->inner_ud, ptr, osize, 0);
  }
  void *p = t->inner(t->inner_ud, ptr, osize, nsize);
  if (!p) return NULL;
  if (!ptr) {
    t->bytes += nsize;
    t->heap += nsize;
    if (osize - LT_TAG_FIRST <= (size_t)(LT_TAG_LAST - LT_TAG_FIRST)) {
      t->objects++;
      if (t->internal) t->internal_objects++;
      if (t->tag_mask >> osize & 1u) {
        t->countdown -= t->by_bytes ? (int64_t)nsize : 1;
        if (t->countdown <= 0) sample(t, p, osize, nsize);
      }
    }
  } else if (nsize > osize) {
    t->bytes += nsize - osize;
    t->heap += nsize - osize;
  } else {
    t->heap = t->heap > osize - nsize ? t->heap - (osize - nsize) : 0;
  }
  if (t->heap > t->peak_heap) t->peak_heap = t->heap;
  return p;
}
