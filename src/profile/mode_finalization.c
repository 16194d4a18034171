/*
 * mode_finalization.c — FiLiP's mode (ISMM'24 §3): one ephemeron per
 * sampled object, keyed by the object, which is its own finaliser (one
 * heap object per sample, and nothing off the heap: the value slot holds
 * the site id and registry cell, the user slot the birth clock).  Ephemerons
 * are pretenured unless pretenure=off.  They are kept reachable by a
 * registry of pretenured chunks, each chunk held by a global root; free
 * cells chain through the registry itself.  The finaliser records the
 * death (class and size from the key, intact while it is mourned) and
 * frees the cell.
 * Death = when the finaliser runs: after the collection that found the key
 * dead, which is FiLiP's *delayed observation*.
 */
#include <stdio.h>
#include <stdlib.h>

#include "profiler.h"

static void on_finalize(eph_heap *h, eph_value e, void *data);
static void on_finalize_nothing(eph_heap *h, eph_value e, void *data) {
  (void)h;
  (void)e;
  (void)data;
}

eph_status fin_mode_start(eph_profiler *p, eph_error *err) {
  p->eph_class = eph_class_register(p->h, "ProfilerEphemeron", EPH_FORMAT_EPHEMERON);
  eph_class_register(p->h, "ProfilerRegistryChunk", EPH_FORMAT_POINTERS);
  p->fin = eph_finalizer_register(p->h, on_finalize, p);
  p->noop_fin = eph_finalizer_register(p->h, on_finalize_nothing, NULL);
  if (!p->eph_class || !p->fin || !p->noop_fin) {
    eph_error_fill(err, EPH_ERR_NOMEM, "finalization mode: %s", eph_heap_error(p->h));
    return EPH_ERR_NOMEM;
  }
  return EPH_OK;
}

/* A free registry cell, growing the registry if needed. */
static uint32_t take_cell(eph_profiler *p) {
  if (!p->free_cell) {
    /* Cells are global roots: they must not move, so the table is
     * allocated once, large enough for 2^26 live samples. */
    if (p->nchunks == p->chunks_cap) {
      if (p->chunks_cap) {
        fprintf(stderr, "ephemera: profiler: more than %zu live samples\n", p->chunks_cap * REGISTRY_CHUNK);
        abort();
      }
      p->chunks_cap = (size_t)1 << 16;
      p->chunks = calloc(p->chunks_cap, sizeof *p->chunks);
      if (!p->chunks) abort();
      prof_note_memory(p);
    }
    eph_value *cell = &p->chunks[p->nchunks];
    if (eph_global_root_add(p->h, cell) != EPH_OK) abort();
    *cell = eph_alloc_old(p->h, eph_class_find(p->h, "ProfilerRegistryChunk"), REGISTRY_CHUNK);
    if (*cell == EPH_NIL) {
      fprintf(stderr, "ephemera: profiler: heap exhausted growing the sample registry\n");
      abort();
    }
    p->stats.own_objects++;
    p->stats.own_bytes += eph_object_bytes(*cell);
    /* chain the new cells, first one first */
    size_t base = p->nchunks * REGISTRY_CHUNK;
    for (size_t i = 0; i < REGISTRY_CHUNK; i++)
      eph_store(p->h, *cell, i, i + 1 < REGISTRY_CHUNK ? eph_int((intptr_t)(base + i + 2)) : eph_int(0));
    p->nchunks++;
    p->free_cell = base + 1;
  }
  uint32_t cell = (uint32_t)(p->free_cell - 1);
  p->free_cell = (uint64_t)eph_int_value(eph_slot(p->chunks[cell / REGISTRY_CHUNK], cell % REGISTRY_CHUNK));
  return cell;
}

static void free_cell(eph_profiler *p, uint32_t cell) {
  eph_store(p->h, p->chunks[cell / REGISTRY_CHUNK], cell % REGISTRY_CHUNK, eph_int((intptr_t)p->free_cell));
  p->free_cell = (uint64_t)cell + 1;
}

#define CELL_BITS 32

void fin_mode_track(eph_profiler *p, eph_value obj, uint64_t birth) {
  eph_heap *h = p->h;
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  EPH_LOCAL(h, e);
  e = eph_ephemeron_new(h, p->eph_class, obj, EPH_NIL, 1, p->fin, p->spec.pretenure);
  if (e == EPH_NIL) { /* heap exhausted: the object goes unobserved, say so */
    eph_stamp now = prof_now(p);
    prof_write_record(p, obj, birth, &now, NULL, EPH_DEATH_CENSORED);
    EPH_UNFRAME(h);
    return;
  }
  uint32_t cell = take_cell(p);
  uint64_t site = birth >> BIRTH_BITS;
  eph_store(h, e, EPH_EPHEMERON_VALUE, eph_int((intptr_t)(site << CELL_BITS | cell)));
  eph_store(h, e, EPH_EPHEMERON_FIXED_SLOTS, eph_int((intptr_t)(birth & BIRTH_MASK)));
  p->stats.own_objects++;
  p->stats.own_bytes += eph_object_bytes(e);
  eph_store(h, p->chunks[cell / REGISTRY_CHUNK], cell % REGISTRY_CHUNK, e);
  EPH_UNFRAME(h);
}

/* The birth word and registry cell an ephemeron carries. */
static uint64_t birth_of(eph_value e, uint32_t *cell) {
  uint64_t v = (uint64_t)eph_int_value(eph_slot(e, EPH_EPHEMERON_VALUE));
  *cell = (uint32_t)v;
  return (uint64_t)eph_int_value(eph_slot(e, EPH_EPHEMERON_FIXED_SLOTS)) | (v >> CELL_BITS) << BIRTH_BITS;
}

static void on_finalize(eph_heap *h, eph_value e, void *data) {
  (void)h;
  eph_profiler *p = data;
  uint32_t cell;
  uint64_t birth = birth_of(e, &cell);
  eph_stamp now = prof_now(p);
  prof_write_record(p, eph_ephemeron_key(e), birth, &now, NULL, EPH_DEATH_FINALIZED);
  free_cell(p, cell);
}

/* Objects still registered are censored; ephemerons mourned but not yet
 * finalised died (their finaliser just has not run): record them now.  Then
 * every ephemeron is disarmed (nil key, a no-op finaliser) so that nothing
 * calls into the profiler after it is gone, and the registry is dropped. */
void fin_mode_stop(eph_profiler *p) {
  eph_heap *h = p->h;
  eph_stamp end = prof_now(p);
  for (size_t c = 0; c < p->nchunks; c++) {
    for (size_t i = 0; i < REGISTRY_CHUNK; i++) {
      eph_value e = eph_slot(p->chunks[c], i);
      if (!eph_is_ptr(e)) continue; /* a free cell */
      uint32_t cell;
      uint64_t birth = birth_of(e, &cell);
      prof_write_record(p, eph_ephemeron_key(e), birth, &end, NULL,
                        eph_ephemeron_is_mourned(e) ? EPH_DEATH_FINALIZED : EPH_DEATH_CENSORED);
      eph_store(h, e, EPH_EPHEMERON_KEY, EPH_NIL);
      eph_store(h, e, EPH_EPHEMERON_FINALIZER, eph_int((intptr_t)p->noop_fin));
    }
    eph_global_root_remove(h, &p->chunks[c]);
  }
  p->nchunks = 0;
  p->free_cell = 0;
}
