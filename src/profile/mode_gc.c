/*
 * mode_gc.c — the collector-hook mode: the collector itself says when a
 * sampled object dies.  Sampled objects are tracked by address in two
 * lists, young and old, so that a scavenge looks only at the young ones;
 * in on_collect, eph_gc_fate gives each its new address or EPH_NIL.  A
 * death lies between the last collection the object survived (alive_until)
 * and the one that found it dead.  No heap objects are added.
 *
 * A young entry is 16 bytes (address, birth word), an old one 12 (see
 * old_entry): most live samples are old.  When each entry was last known
 * alive is not stored per entry: every young entry that is not new
 * survived the last collection (young_settled, young_until), and old
 * entries come in spans that share it (promoted by the same scavenge,
 * allocated old since, or survivors of the last full GC).
 *
 * Sampling every object (take_all), most objects (1/N with N up to 8) or
 * through a class filter (prof_sampler_walks), young objects are not
 * tracked as they are allocated: after each collection gc_eden.c walks
 * what eden held.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "profiler.h"

#define AT_BIRTH UINT64_MAX /* span.until.bytes: alive until birth */

static inline void push_young(eph_profiler *p, eph_value addr, uint64_t birth) {
  tracked_vec *v = &p->gc.young;
  v->items = prof_grow(p, v->items, &v->cap, v->len + 1, sizeof *v->items);
  v->items[v->len++] = (tracked){addr, birth};
}

/* --- the old list: packed entries in blocks ------------------------------------ */

#define OFFSET_BITS 35 /* words: 256 GiB of old space */
#define OFFSET_MASK ((UINT64_C(1) << OFFSET_BITS) - 1)

static inline old_entry *old_at(const old_list *l, size_t i) {
  return &l->blocks[i >> OLD_BLOCK_BITS].entries[i & (OLD_BLOCK - 1)];
}

static inline void pack(const eph_profiler *p, old_entry *e, eph_value addr, uint64_t birth) {
  uint64_t off = (addr - p->gc.old_base) >> 3, words = (birth & BIRTH_MASK) >> 3, site = birth >> BIRTH_BITS;
  uint64_t lo = off | words << OFFSET_BITS;
  e->w[0] = (uint32_t)lo;
  e->w[1] = (uint32_t)(lo >> 32);
  e->w[2] = (uint32_t)(words >> (64 - OFFSET_BITS) | site << 16);
}

/* Entry i of the list: packed, and its block's highest offset raised.
 * Entries are written in index order, so the first of a block resets it. */
static inline void put(eph_profiler *p, size_t i, eph_value addr, uint64_t birth) {
  old_block *b = &p->gc.old.blocks[i >> OLD_BLOCK_BITS];
  uint64_t off = (addr - p->gc.old_base) >> 3;
  if (!(i & (OLD_BLOCK - 1)) || off > b->max_offset) b->max_offset = off;
  pack(p, &b->entries[i & (OLD_BLOCK - 1)], addr, birth);
}

static inline eph_value unpack(const eph_profiler *p, const old_entry *e, uint64_t *birth) {
  uint64_t lo = e->w[0] | (uint64_t)e->w[1] << 32;
  uint64_t words = lo >> OFFSET_BITS | (uint64_t)(e->w[2] & 0xFFFF) << (64 - OFFSET_BITS);
  *birth = words << 3 | (uint64_t)(e->w[2] >> 16) << BIRTH_BITS;
  return p->gc.old_base + ((lo & OFFSET_MASK) << 3);
}

#define BLOCK_BYTES (OLD_BLOCK * sizeof(old_entry))

/* A spare block if there is one (its pages already written), else a new one. */
static old_entry *new_block(old_list *l) {
  atomic_fetch_add_explicit(&l->blocks_made, 1, memory_order_relaxed);
  for (unsigned i = 0; i < OLD_SPARES; i++) {
    old_entry *b = atomic_exchange_explicit(&l->spares[i], NULL, memory_order_acquire);
    if (b) return b;
  }
  return malloc(BLOCK_BYTES);
}

/* Keeps block b as a spare if a slot is free, else frees it. */
static void spare_or_free(old_list *l, old_entry *b) {
  for (unsigned i = 0; i < OLD_SPARES; i++) {
    old_entry *none = NULL;
    if (atomic_compare_exchange_strong_explicit(&l->spares[i], &none, b, memory_order_release, memory_order_relaxed))
      return;
  }
  free(b);
}

void prof_gc_spare_blocks(eph_profiler *p, size_t entries) {
  old_list *l = &p->gc.old;
  size_t want = (entries + OLD_BLOCK - 1) / OLD_BLOCK;
  size_t made = atomic_load_explicit(&l->blocks_made, memory_order_relaxed), lately = made - l->blocks_made_seen;
  l->blocks_made_seen = made;
  if (want < lately) want = lately; /* what the young list and the survivors do not tell: old-space allocations */
  for (unsigned i = 0; i < OLD_SPARES && want; i++, want--) {
    if (atomic_load_explicit(&l->spares[i], memory_order_relaxed)) continue;
    volatile char *b = malloc(BLOCK_BYTES);
    if (!b) return;
    for (size_t at = 0; at < BLOCK_BYTES; at += 4096) b[at] = 0; /* its pages, faulted in here */
    spare_or_free(l, (old_entry *)b);
  }
}

static size_t spare_memory(const eph_profiler *p) {
  size_t n = 0;
  for (unsigned i = 0; i < OLD_SPARES; i++)
    n += atomic_load_explicit(&p->gc.old.spares[i], memory_order_relaxed) != NULL;
  return n * BLOCK_BYTES;
}

static void push_old(eph_profiler *p, eph_value addr, uint64_t birth) {
  old_list *l = &p->gc.old;
  if (l->len == l->nblocks * OLD_BLOCK) {
    l->blocks = prof_grow(p, l->blocks, &l->blocks_cap, l->nblocks + 1, sizeof *l->blocks);
    old_entry *b = new_block(l);
    if (!b) {
      fprintf(stderr, "ephemera: profiler: out of memory for tracked objects\n");
      abort();
    }
    l->blocks[l->nblocks++] = (old_block){b, 0};
    prof_note_memory(p);
  }
  put(p, l->len++, addr, birth);
}

/* Frees the blocks past the list's end. */
static void trim_old(eph_profiler *p) {
  old_list *l = &p->gc.old;
  size_t need = (l->len + OLD_BLOCK - 1) >> OLD_BLOCK_BITS;
  while (l->nblocks > need) spare_or_free(l, l->blocks[--l->nblocks].entries);
}

eph_status prof_gc_track_start(eph_profiler *p, eph_error *err) {
  size_t reserved;
  eph_heap_old_range(p->h, &p->gc.old_base, &reserved);
  if (reserved >> 3 > OFFSET_MASK + 1) {
    eph_error_fill(err, EPH_ERR_INVALID, "mode=%s tracks old objects by 35-bit word offsets: an old space of %zu GiB "
                   "is larger than the 256 GiB it can address (lower max_heap)",
                   p->mode->name, reserved >> 30);
    return EPH_ERR_INVALID;
  }
  p->gc.young_until.bytes = UINT64_MAX;
  return EPH_OK;
}

void prof_gc_mode_free(eph_profiler *p) {
  prof_gc_eden_free(p);
  free(p->gc.young.items);
  free(p->gc.eden.old_allocs);
  free(p->gc.spans);
  p->gc.old.len = 0;
  trim_old(p);
  free(p->gc.old.blocks);
  for (unsigned i = 0; i < OLD_SPARES; i++) free(atomic_exchange(&p->gc.old.spares[i], NULL));
}

size_t prof_gc_mode_memory(const eph_profiler *p) {
  const prof_gc *g = &p->gc;
  return g->young.cap * sizeof(tracked) + g->old.nblocks * OLD_BLOCK * sizeof(old_entry) +
         g->old.blocks_cap * sizeof *g->old.blocks + g->spans_cap * sizeof *g->spans +
         g->eden.old_allocs_cap * sizeof *g->eden.old_allocs + prof_gc_eden_memory(p) + spare_memory(p);
}

/* Starts a span of old entries last known alive at `until`, unless the
 * current one already says so. */
static void open_span(eph_profiler *p, const eph_stamp *until) {
  if (p->gc.nspans) {
    span *last = &p->gc.spans[p->gc.nspans - 1];
    if (last->until.bytes == until->bytes && (until->bytes == AT_BIRTH || last->until.wall_ns == until->wall_ns))
      return;
    if (last->start == p->gc.old.len) { /* empty: reuse */
      last->until = *until;
      return;
    }
  }
  p->gc.spans = prof_grow(p, p->gc.spans, &p->gc.spans_cap, p->gc.nspans + 1, sizeof *p->gc.spans);
  p->gc.spans[p->gc.nspans++] = (span){p->gc.old.len, *until};
}

void prof_gc_mode_track(eph_profiler *p, eph_value obj, uint64_t birth) {
  if (eph_is_young(p->h, obj)) {
    push_young(p, obj, birth);
    return;
  }
  open_span(p, &(eph_stamp){.bytes = AT_BIRTH});
  push_old(p, obj, birth);
}

static eph_death_kind death_kind(const eph_profiler *p, eph_gc_kind kind) {
  return p->gc.exact ? EPH_DEATH_EXACT
         : kind == EPH_GC_SCAVENGE     ? EPH_DEATH_SCAVENGE
                                       : EPH_DEATH_FULL_GC;
}

/* Brute force's deaths are exact: the object was alive at the last
 * allocation, so the death is now. */
static const eph_stamp *until_for(eph_death_kind how, const eph_stamp *until) {
  return how == EPH_DEATH_EXACT ? NULL : until;
}

/* Starts a batch of deaths found now, of objects last known alive at
 * `until`; true if that means at their birth (each record says so). */
static bool begin_batch(eph_profiler *p, const eph_stamp *now, eph_death_kind how, const eph_stamp *until) {
  const eph_stamp *au = until_for(how, until);
  bool at_birth = au && au->bytes == AT_BIRTH;
  prof_batch(p, now, at_birth ? NULL : au, how);
  return at_birth;
}

/* A full GC: every old entry is dead or moves; the survivors form one span.
 * A block whose entries all lie below the dense prefix's end, met while
 * nothing has died yet, stays as it is (old objects seldom die, and the
 * list is nearly in address order: each scavenge's promotions lie above
 * the last's); the rest go to the heap FATE_BATCH at a time.  The entries
 * of a batch are read before any is written back, so the list compacts in
 * place. */
#define FATE_BATCH 256 /* divides OLD_BLOCK: a batch lies in one block */
static void settle_old(eph_profiler *p, eph_death_kind how, const eph_stamp *now) {
  old_list *l = &p->gc.old;
  size_t keep = 0, s = 0, batch_span = SIZE_MAX;
  bool at_birth = false;
  uint64_t dense = (eph_gc_dense_end(p->h) - p->gc.old_base) >> 3;
  eph_value addr[FATE_BATCH], to[FATE_BATCH];
  uint64_t birth[FATE_BATCH];
  for (size_t i = 0; i < l->len;) {
    size_t left = l->len - i;
    if (keep == i && !(i & (OLD_BLOCK - 1)) && l->blocks[i >> OLD_BLOCK_BITS].max_offset < dense) {
      size_t n = left < OLD_BLOCK ? left : OLD_BLOCK;
      i += n, keep += n;
      continue;
    }
    size_t n = left < FATE_BATCH ? left : FATE_BATCH;
    const old_entry *e = old_at(l, i);
    for (size_t k = 0; k < n; k++) {
      __builtin_prefetch(&e[k + FATE_BATCH]); /* the next batch: the list is read once, cold */
      addr[k] = unpack(p, &e[k], &birth[k]);
    }
    eph_gc_old_fates(p->h, addr, to, n);
    for (size_t k = 0; k < n; k++, i++) {
      if (k + 16 < n && to[k + 16] == EPH_NIL) __builtin_prefetch((const void *)addr[k + 16]); /* its header */
      if (to[k] != EPH_NIL) {
        put(p, keep++, to[k], birth[k]);
        continue;
      }
      while (s + 1 < p->gc.nspans && p->gc.spans[s + 1].start <= i) s++;
      if (s != batch_span) at_birth = begin_batch(p, now, how, &p->gc.spans[s].until), batch_span = s;
      prof_batch_record(p, addr[k], birth[k], at_birth);
    }
  }
  l->len = keep;
  trim_old(p);
  p->gc.nspans = 0;
  open_span(p, now);
}

/* A tracked object that survived this collection, now at `to`: young[keep]
 * (the caller has room) or, promoted, appended to the old list in this
 * collection's span.  Returns the young entries kept so far. */
static inline size_t keep_one(eph_profiler *p, tracked *young, size_t keep, eph_value to, uint64_t birth,
                              bool *span_open, const eph_stamp *now) {
  if (eph_is_young(p->h, to)) {
    young[keep++] = (tracked){to, birth};
    return keep;
  }
  if (!*span_open) open_span(p, now), *span_open = true;
  push_old(p, to, birth);
  return keep;
}

/* Tracked objects that survived this collection, now at t[i].addr: young
 * entries from `keep` on (the young list is rebuilt in place; it grows
 * once) or, promoted, appended to the old list in this collection's span.
 * Returns the young entries kept so far. */
size_t prof_gc_keep_survivors(eph_profiler *p, const tracked *t, size_t n, size_t keep, bool *span_open,
                              const eph_stamp *now) {
  tracked_vec *v = &p->gc.young;
  tracked *young = v->items = prof_grow(p, v->items, &v->cap, keep + n, sizeof *v->items);
  for (size_t i = 0; i < n; i++) {
    /* t is a walk piece's, written on the other CPU: its lines come from
     * that CPU's cache, which the hardware prefetcher does not fetch ahead */
    if (i + 32 < n) __builtin_prefetch(&t[i + 32]);
    keep = keep_one(p, young, keep, t[i].addr, t[i].birth, span_open, now);
  }
  return keep;
}

size_t prof_gc_keep_survivor(eph_profiler *p, eph_value to, uint64_t birth, size_t keep, bool *span_open,
                        const eph_stamp *now) {
  return prof_gc_keep_survivors(p, &(tracked){to, birth}, 1, keep, span_open, now);
}

/* Any collection: young entries die, stay young, or are promoted (appended
 * to the old list with their final addresses, in a span of their own). */
static void settle_young(eph_profiler *p, eph_death_kind how, bool full, const eph_stamp *now) {
  tracked *items = p->gc.young.items;
  size_t keep = 0;
  bool span_open = false, exact = how == EPH_DEATH_EXACT;
  begin_batch(p, now, how, &p->gc.young_until); /* entries born since are alive until birth */
  for (size_t i = 0; i < p->gc.young.len; i++) {
    if (i + 8 < p->gc.young.len) __builtin_prefetch((const void *)items[i + 8].addr);
    tracked t = items[i];
    eph_value to = eph_gc_fate(p->h, t.addr);
    if (to == EPH_NIL) {
      /* a full GC may have evacuated it before marking found it dead: its
       * header is then at the copy */
      eph_value at = full ? eph_gc_locate(p->h, t.addr) : t.addr;
      prof_batch_record(p, at, t.birth, !exact && i >= p->gc.young_settled);
      continue;
    }
    keep = keep_one(p, items, keep, to, t.birth, &span_open, now); /* in place: keep <= i */
  }
  if (eph_heap_eden_walk(p->h)) keep = prof_gc_settle_eden(p, full, now, keep, span_open);
  p->gc.young.len = keep;
  p->gc.young_settled = keep;
  p->gc.young_until = *now;
}

void prof_gc_mode_collect(eph_profiler *p, eph_gc_kind kind) {
  eph_stamp now = prof_now(p);
  eph_death_kind how = death_kind(p, kind);
  /* Old first: eph_gc_fate maps pre-collection addresses, and settling the
   * young list appends promoted survivors, with their final addresses, to
   * the old list, which must not be asked about them again. */
  if (kind == EPH_GC_FULL) settle_old(p, how, &now);
  settle_young(p, how, kind == EPH_GC_FULL, &now);
}

void prof_gc_mode_stop(eph_profiler *p) {
  prof_gc_walk_finish(p);
  eph_stamp end = prof_now(p);
  prof_batch(p, &end, NULL, EPH_DEATH_CENSORED);
  const tracked *young = p->gc.young.items;
  for (size_t i = 0; i < p->gc.young.len; i++) prof_batch_record(p, young[i].addr, young[i].birth, false);
  p->gc.young.len = 0;
  for (size_t i = 0; i < p->gc.old.len; i++) {
    uint64_t birth;
    eph_value addr = unpack(p, old_at(&p->gc.old, i), &birth);
    prof_batch_record(p, addr, birth, false);
  }
  p->gc.old.len = 0;
  trim_old(p);
  p->gc.nspans = 0;
}

/* --- the mode ------------------------------------------------------------------ */

/* on_alloc at sample points: nothing to dispatch on, and with every
 * allocation sampled (take_all) nothing for the sampler to do. */
static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  (void)h;
  eph_profiler *p = data;
  if (EPH_LIKELY(p->take_all) || prof_sampler_take(p, obj)) prof_gc_mode_track(p, obj, prof_birth(p));
}

/* Most allocations sampled (prof_sampler_walks): the eden walk, whose
 * on_alloc sees old-space allocations only. */
static eph_status start(eph_profiler *p, eph_observer *obs, eph_error *err) {
  p->gc.walks = prof_sampler_walks(p);
  obs->on_alloc = p->gc.walks ? prof_gc_walk_on_alloc : on_alloc;
  return prof_gc_track_start(p, err);
}

static void arm(eph_profiler *p) {
  if (p->gc.walks) prof_gc_walk_start(p);
  else prof_sampler_arm(p);
}

const prof_mode prof_mode_gc = {
    .name = "gc", .stamping = PROF_STAMP_HERE, .stop_on_writer_thread = true,
    .start = start, .arm = arm, .finish_writes = prof_gc_walk_finish, .on_gc_start = prof_clocks_before_pause,
    .on_collect = prof_gc_mode_collect, .on_gc_end = prof_clocks_after_pause, .gc_written = prof_gc_walk_note_gc_end,
    .stop = prof_gc_mode_stop, .free = prof_gc_mode_free, .memory = prof_gc_mode_memory,
};
