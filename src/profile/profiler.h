/*
 * profiler.h — the profiler's private state, shared by the files of src/profile.
 *
 * Live sampled objects have an entry in the record pool (an eph_record
 * being filled in); a record leaves the pool when its object dies or the
 * profile stops, and is then written to the file.  How a mode learns of
 * deaths differs (mode_gc.c, mode_finalization.c); everything else —
 * sampling, stamps, the tables, the file — is shared (profiler.c).
 */
#ifndef EPH_PROFILER_H
#define EPH_PROFILER_H

#include <stdbool.h>
#include <stdint.h>

#include "ephemera/ephemeron.h"
#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"
#include "ephemera/profile.h"

/* A gc-mode tracking entry: where a sampled object is now. */
typedef struct tracked {
  eph_value addr;
  uint32_t rec; /* index in the record pool */
} tracked;

typedef struct tracked_vec {
  tracked *items;
  size_t len, cap;
} tracked_vec;

/* Pointer -> id map for allocation sites (open addressing). */
typedef struct site_map {
  const eph_site **keys;
  uint32_t *ids;
  size_t cap, len;
} site_map;

typedef struct eph_profiler {
  eph_heap *h;
  eph_profile_spec spec;
  eph_writer *out;
  uint64_t start_ns;

  /* sampling */
  uint64_t rng;               /* xorshift state for byte gaps */
  uint8_t *class_state;       /* per heap class: 0 unknown, 1 sampled, 2 filtered out */
  size_t class_state_len;
  uint8_t *class_written;     /* class entry already in the file */
  size_t class_written_len;
  uint64_t filtered_count;    /* allocations of filtered classes seen (count sampling with a filter) */

  /* the record pool */
  eph_record *pool;
  uint32_t *free_recs;
  size_t pool_len, pool_cap, nfree;

  /* clocks the profiler keeps itself */
  uint32_t scavenges, full_gcs;

  /* gc mode */
  tracked_vec young, old;

  /* finalization mode */
  eph_class_id eph_class;
  eph_finalizer_id fin, noop_fin;
  eph_value *chunks;          /* registry chunks, each cell a global root */
  size_t nchunks, chunks_cap;

  /* merlin mode */
  eph_value *seen;            /* root slot values at the last check: shadow stack then globals */
  size_t seen_len, seen_cap;
  uint64_t last_check;        /* application clock at the last root check */
  struct dead { eph_value obj; uint64_t stamp; } *dead, *dead_tmp;
  size_t ndead, dead_cap, dead_tmp_cap;
  eph_value *stack;
  size_t stack_cap;
  struct clock_point { uint64_t bytes, wall_ns; } *clock_points; /* bytes -> wall, for interpolation */
  size_t nclock_points, clock_points_cap;
  uint64_t next_clock_point;
  size_t clock_hint, gc_hint;   /* last lookups: records come in time order, mostly */
  /* each collection, in order, with the counts of collections up to it */
  struct gc_clock { uint64_t bytes; uint32_t scavenges, full_gcs; } *gc_clocks;
  size_t ngc_clocks, gc_clocks_cap;

  /* brute mode */
  uint64_t last_brute_gc;     /* clock of the last requested full GC */

  site_map sites;
  uint32_t next_site_id;
  eph_profile_stats stats;
  eph_status error;           /* first write error, reported at stop */
  char error_message[256];
} eph_profiler;

#define REGISTRY_CHUNK 1024

/* profiler.c */
uint64_t prof_clock(eph_profiler *p); /* application bytes allocated (trailers excluded) */
eph_stamp prof_now(eph_profiler *p);
uint32_t prof_new_record(eph_profiler *p, eph_value obj, double weight);
void prof_finish_record(eph_profiler *p, uint32_t rec, const eph_stamp *death, const eph_stamp *alive_until,
                        eph_death_kind kind);
void prof_note_memory(eph_profiler *p);
void prof_write_error(eph_profiler *p, eph_status st);

/* sampler.c */
void sampler_arm(eph_profiler *p);
bool sampler_take(eph_profiler *p, eph_value obj, double *weight);

/* mode_gc.c */
void gc_mode_track(eph_profiler *p, eph_value obj, uint32_t rec);
void gc_mode_collect(eph_profiler *p, eph_gc_kind kind);
void gc_mode_stop(eph_profiler *p);

/* mode_merlin.c */
eph_status merlin_mode_start(eph_profiler *p, eph_error *err);
void merlin_on_alloc(eph_profiler *p, eph_value obj);
void merlin_on_store(eph_profiler *p, eph_value obj, size_t i, eph_value old, eph_value new_value);
void merlin_on_gc_start(eph_profiler *p);
void merlin_on_collect(eph_profiler *p, eph_gc_kind kind);
void merlin_note_gc(eph_profiler *p, eph_gc_kind kind);
void merlin_mode_stop(eph_profiler *p);
uint32_t prof_site_id(eph_profiler *p, const eph_site *s);
uint32_t prof_class_id(eph_profiler *p, eph_class_id cls);

/* mode_finalization.c */
eph_status fin_mode_start(eph_profiler *p, eph_error *err);
void fin_mode_track(eph_profiler *p, eph_value obj, uint32_t rec);
void fin_mode_stop(eph_profiler *p);

#endif
