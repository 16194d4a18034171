/*
 * ephemeron_cost — the raw cost FiLiP measured: attaching one ephemeron to
 * every allocated object, young or pretenured.
 *
 *   ephemeron_cost MODE N [SEED]     MODE = none | young | pretenured | pinned
 *
 * The mutator allocates N objects of a realistic mix (small records of 2–8
 * slots, arrays of 4–32 slots, strings of 8–120 bytes) and keeps a fraction
 * of them alive: 10 % go into a ring of 4096 medium-lived objects (each
 * replaced later at random), 1 % into a long-lived list.  In the ephemeron
 * modes every object gets an ephemeron (key = the object, one user slot =
 * its birth time) that is its own finaliser, kept reachable in a registry of
 * 1024-slot chunks until the finaliser removes it, as a profiler does.
 * In pinned mode the ephemerons are pinned (ephemeron.h): no registry
 * holds them, and the finaliser keeps each one off the heap (its address
 * never changes) to be re-armed for a later object, as finalization mode
 * does: a pinned ephemeron is never reclaimed, so one per object would
 * only grow the pinned space.
 *
 * Prints one line of key=value pairs: time_s, peak_committed, peak_used,
 * deaths observed, GC counts and the finaliser count; exits non-zero if the
 * self-check fails (in the ephemeron modes: every object whose key died
 * had its finaliser run exactly once, and the counts add up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"

#define RING 4096
#define CHUNK 1024
#define MAX_CHUNKS 65536

typedef enum { MODE_NONE, MODE_YOUNG, MODE_PRETENURED, MODE_PINNED } mode_t_;

typedef struct bench {
  eph_heap *h;
  mode_t_ mode;
  eph_class_id Record, Array, String, Link, Eph, Chunk;
  eph_finalizer_id fin;
  eph_value ring, longlived; /* global roots */
  eph_value chunks[MAX_CHUNKS]; /* registry chunks, each a global root */
  size_t nchunks;
  /* registry free list (off-heap): slot numbers chunk*CHUNK+i */
  size_t *free_slots, nfree, cap_free, next_slot;
  size_t finalized, registered;
  /* pinned mode: finalised ephemerons to re-arm (off-heap: they never move) */
  eph_value *spares;
  size_t nspares, cap_spares;
  uint64_t rng;
} bench;

static uint64_t next_random(bench *b) {
  b->rng ^= b->rng << 13;
  b->rng ^= b->rng >> 7;
  b->rng ^= b->rng << 17;
  return b->rng;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static eph_value chunk_of(bench *b, size_t slot) { return b->chunks[slot / CHUNK]; }

static void add_chunk(bench *b) {
  if (b->nchunks == MAX_CHUNKS) {
    fprintf(stderr, "ephemeron_cost: registry full\n");
    exit(1);
  }
  eph_value *cell = &b->chunks[b->nchunks++];
  eph_global_root_add(b->h, cell);
  *cell = eph_alloc(b->h, b->Chunk, CHUNK);
}

static void *grow(void *items, size_t *cap, size_t size) {
  *cap = *cap ? 2 * *cap : 1024;
  void *p = realloc(items, *cap * size);
  if (!p) abort();
  return p;
}

/* The finaliser: record the death and free the registry slot, or (pinned)
 * keep the ephemeron for re-arming. */
static void on_death(eph_heap *h, eph_value e, void *data) {
  bench *b = data;
  if (b->mode == MODE_PINNED) {
    if (b->nspares == b->cap_spares) b->spares = grow(b->spares, &b->cap_spares, sizeof *b->spares);
    b->spares[b->nspares++] = e;
    b->finalized++;
    return;
  }
  size_t slot = (size_t)eph_int_value(eph_slot(e, EPH_EPHEMERON_FIXED_SLOTS));
  eph_store(h, chunk_of(b, slot), slot % CHUNK, EPH_NIL);
  if (b->nfree == b->cap_free) b->free_slots = grow(b->free_slots, &b->cap_free, sizeof *b->free_slots);
  b->free_slots[b->nfree++] = slot;
  b->finalized++;
}

/* A pinned ephemeron for obj: a finalised one re-armed, or a new one. */
static void attach_pinned(bench *b, eph_value obj) {
  eph_heap *h = b->h;
  eph_value e;
  if (b->nspares) {
    e = b->spares[--b->nspares];
    if (eph_ephemeron_rearm(h, e, obj, EPH_NIL) != EPH_OK) abort();
  } else if ((e = eph_ephemeron_new_pinned(h, b->Eph, obj, EPH_NIL, 1, b->fin)) == EPH_NIL) {
    fprintf(stderr, "ephemeron_cost: %s\n", eph_heap_error(h));
    exit(1);
  }
  b->registered++;
}

/* Registers obj with an ephemeron (key obj, user slot = registry slot). */
static void attach(bench *b, eph_value obj) {
  eph_heap *h = b->h;
  if (b->mode == MODE_PINNED) return attach_pinned(b, obj);
  EPH_FRAME(h);
  EPH_ROOT(h, obj);
  EPH_LOCAL(h, e);
  size_t slot;
  if (b->nfree) {
    slot = b->free_slots[--b->nfree];
  } else {
    slot = b->next_slot++;
    if (slot / CHUNK == b->nchunks) add_chunk(b);
  }
  e = eph_ephemeron_new(h, b->Eph, obj, EPH_NIL, 1, b->fin, b->mode == MODE_PRETENURED);
  if (e == EPH_NIL) {
    fprintf(stderr, "ephemeron_cost: %s\n", eph_heap_error(h));
    exit(1);
  }
  eph_store(h, e, EPH_EPHEMERON_FIXED_SLOTS, eph_int((intptr_t)slot));
  eph_store(h, chunk_of(b, slot), slot % CHUNK, e);
  b->registered++;
  EPH_UNFRAME(h);
}

static eph_value allocate_one(bench *b) {
  eph_heap *h = b->h;
  uint64_t r = next_random(b);
  eph_value obj;
  switch (r % 4) {
    case 0:
    case 1: obj = eph_alloc(h, b->Record, 2 + (r >> 8) % 7); break;
    case 2: obj = eph_alloc(h, b->Array, 4 + (r >> 8) % 29); break;
    default: obj = eph_alloc_bytes(h, b->String, 8 + (r >> 8) % 113); break;
  }
  if (obj == EPH_NIL) {
    fprintf(stderr, "ephemeron_cost: %s\n", eph_heap_error(h));
    exit(1);
  }
  if (eph_format_of(obj) == EPH_FORMAT_POINTERS) eph_store(h, obj, 0, eph_int((intptr_t)(r & 0xffff)));
  return obj;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ephemeron_cost none|young|pretenured|pinned N [SEED]\n");
    return 2;
  }
  static bench b;
  if (!strcmp(argv[1], "none")) b.mode = MODE_NONE;
  else if (!strcmp(argv[1], "young")) b.mode = MODE_YOUNG;
  else if (!strcmp(argv[1], "pretenured")) b.mode = MODE_PRETENURED;
  else if (!strcmp(argv[1], "pinned")) b.mode = MODE_PINNED;
  else {
    fprintf(stderr, "ephemeron_cost: unknown mode '%s' (none, young, pretenured, pinned)\n", argv[1]);
    return 2;
  }
  long n = atol(argv[2]);
  if (n <= 0) {
    fprintf(stderr, "ephemeron_cost: N must be a positive number, not '%s'\n", argv[2]);
    return 2;
  }
  b.rng = argc > 3 ? strtoull(argv[3], NULL, 10) | 1 : 0x9E3779B97F4A7C15ull;
  eph_error err;
  if (eph_heap_new(NULL, &b.h, &err) != EPH_OK) {
    fprintf(stderr, "ephemeron_cost: %s\n", err.message);
    return 1;
  }
  eph_heap *h = b.h;
  b.Record = eph_class_register(h, "Record", EPH_FORMAT_POINTERS);
  b.Array = eph_class_register(h, "Array", EPH_FORMAT_POINTERS);
  b.String = eph_class_register(h, "String", EPH_FORMAT_BYTES);
  b.Link = eph_class_register(h, "Link", EPH_FORMAT_POINTERS);
  b.Chunk = eph_class_register(h, "RegistryChunk", EPH_FORMAT_POINTERS);
  b.Eph = eph_class_register(h, "LifetimeEphemeron", EPH_FORMAT_EPHEMERON);
  b.fin = eph_finalizer_register(h, on_death, &b);
  eph_global_root_add(h, &b.ring);
  eph_global_root_add(h, &b.longlived);
  b.ring = eph_alloc(h, b.Array, RING);

  double t0 = now_s();
  size_t kept_long = 0;
  for (long i = 0; i < n; i++) {
    EPH_FRAME(h);
    EPH_LOCAL(h, obj);
    obj = allocate_one(&b);
    if (b.mode != MODE_NONE) attach(&b, obj);
    uint64_t r = next_random(&b) % 100;
    if (r < 10) {
      eph_store(h, b.ring, (size_t)(next_random(&b) % RING), obj);
    } else if (r == 10) {
      eph_value link = eph_alloc(h, b.Link, 2);
      eph_store(h, link, 0, obj);
      eph_store(h, link, 1, b.longlived);
      b.longlived = link;
      kept_long++;
    }
    EPH_UNFRAME(h);
  }
  eph_collect(h, EPH_GC_FULL); /* let the last deaths be observed */
  double elapsed = now_s() - t0;

  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  int ok = 1;
  if (b.mode != MODE_NONE) {
    /* live registered objects = ring entries + long-lived ones (<= since
     * the ring may hold duplicates or nil); everything else was finalised */
    size_t live = b.registered - b.finalized;
    size_t bound = RING + kept_long;
    if (live > bound || s.finalizers_run != b.finalized || s.ephemerons_mourned != b.finalized) ok = 0;
  }
  printf("mode=%s n=%ld time_s=%.4f peak_committed=%llu peak_used=%llu finalized=%zu scavenges=%llu full_gcs=%llu "
         "gc_s=%.4f check=%s\n",
         argv[1], n, elapsed, (unsigned long long)s.peak_committed, (unsigned long long)s.peak_used, b.finalized,
         (unsigned long long)s.scavenges, (unsigned long long)s.full_gcs, (double)s.gc_wall_ns / 1e9,
         ok ? "ok" : "FAILED");
  free(b.free_slots);
  eph_heap_free(h);
  return ok ? 0 : 1;
}
