/*
 * mode_merlin.h — Merlin mode's state and functions (mode_merlin.c: the
 * stamps and their backward pass; stop_records.c: the stop's records on
 * two threads).
 */
#ifndef EPHEMERA_PROFILE_MODE_MERLIN_H
#define EPHEMERA_PROFILE_MODE_MERLIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"
#include "ephemera/observer.h"
#include "format/writer_profiler.h"

typedef struct eph_profiler eph_profiler;

typedef struct prof_merlin {
  eph_value *seen;            /* root slot values at the last check: globals then shadow stack */
  size_t seen_len, seen_cap, seen_globals;
  uint64_t last_check;        /* application clock at the last root check */
  eph_value *dead;            /* a collection's dead objects that hold pointers: the backward pass's sources */
  size_t ndead, dead_cap;
  struct dead { eph_value obj; uint64_t stamp; } *resort, *resort_tmp; /* sources left to the paper's order */
  size_t nresort, resort_cap, resort_tmp_cap;
  eph_value *stack;
  size_t stack_cap;
  struct prof_stop_records *stop_records; /* the stop's records (stop_records.c), while it writes them */
} prof_merlin;

/* stop_records.c: Merlin's records at the stop, filled here and stamped and
 * encoded on this thread and a helper's.  begin: false with threads=1 (by
 * default on one CPU) or when out of memory (the records are then written
 * one at a time); room and filled give places for the next records, in
 * order, and count them; flush writes all taken (before the clock tables
 * change); end flushes and ends the helper. */
typedef struct prof_stop_records prof_stop_records;
bool prof_stop_records_begin(eph_profiler *p);
/* Room for records of kind `kind` in the block being filled: where the
 * next goes, and in *room how many fit there (at least one).  The caller
 * fills some of them in place (not copied from its stack: a copy of a
 * record just written field by field stalls on store forwarding), then
 * tells prof_stop_records_filled how many, before it asks again; between
 * the two, a record costs the caller no call. */
eph_clocked_record *prof_stop_records_room(eph_profiler *p, eph_death_kind kind, size_t *room);
void prof_stop_records_filled(eph_profiler *p, eph_death_kind kind, size_t n);
void prof_stop_records_flush(eph_profiler *p);
void prof_stop_records_end(eph_profiler *p);
size_t prof_stop_records_memory(const eph_profiler *p); /* its blocks and the helper's fork */

#endif
