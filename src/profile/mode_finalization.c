/*
 * mode_finalization.c — FiLiP's mode (ISMM'24 §3): one ephemeron per
 * sampled object, keyed by the object, which is its own finaliser (one
 * heap object per sample: slot 3 holds the record number).  Ephemerons are
 * pretenured unless pretenure=off.  They are kept reachable by a registry
 * of pretenured chunks (record number = registry slot), each chunk held by
 * a global root; the finaliser records the death and frees the slot.
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

/* The registry cell of record rec, growing the registry if needed. */
static eph_value chunk_for(eph_profiler *p, uint32_t rec) {
  size_t c = rec / REGISTRY_CHUNK;
  while (c >= p->nchunks) {
    if (p->nchunks == p->chunks_cap) {
      /* Cells are global roots: they must not move, so the table is
       * allocated once, large enough for 2^26 live samples. */
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
    p->nchunks++;
    p->stats.own_objects++;
    p->stats.own_bytes += eph_object_bytes(*cell);
  }
  return p->chunks[c];
}

void fin_mode_track(eph_profiler *p, eph_value obj, uint32_t rec) {
  eph_heap *h = p->h;
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  EPH_LOCAL(h, e);
  e = eph_ephemeron_new(h, p->eph_class, obj, EPH_NIL, 1, p->fin, p->spec.pretenure);
  if (e == EPH_NIL) { /* heap exhausted: the object goes unobserved, say so */
    eph_stamp now = prof_now(p);
    prof_finish_record(p, rec, &now, &now, EPH_DEATH_CENSORED);
    EPH_UNFRAME(h);
    return;
  }
  eph_store(h, e, EPH_EPHEMERON_FIXED_SLOTS, eph_int((intptr_t)rec));
  p->stats.own_objects++;
  p->stats.own_bytes += eph_object_bytes(e);
  eph_value chunk = chunk_for(p, rec);
  eph_store(h, chunk, rec % REGISTRY_CHUNK, e);
  EPH_UNFRAME(h);
}

static void on_finalize(eph_heap *h, eph_value e, void *data) {
  eph_profiler *p = data;
  uint32_t rec = (uint32_t)eph_int_value(eph_slot(e, EPH_EPHEMERON_FIXED_SLOTS));
  eph_stamp now = prof_now(p);
  prof_finish_record(p, rec, &now, &now, EPH_DEATH_FINALIZED);
  eph_store(h, p->chunks[rec / REGISTRY_CHUNK], rec % REGISTRY_CHUNK, EPH_NIL);
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
      if (e == EPH_NIL) continue;
      uint32_t rec = (uint32_t)eph_int_value(eph_slot(e, EPH_EPHEMERON_FIXED_SLOTS));
      prof_finish_record(p, rec, &end, &end, eph_ephemeron_is_mourned(e) ? EPH_DEATH_FINALIZED : EPH_DEATH_CENSORED);
      eph_store(h, e, EPH_EPHEMERON_KEY, EPH_NIL);
      eph_store(h, e, EPH_EPHEMERON_FINALIZER, eph_int((intptr_t)p->noop_fin));
    }
    eph_global_root_remove(h, &p->chunks[c]);
  }
  p->nchunks = 0;
}
