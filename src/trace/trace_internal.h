/*
 * trace_internal.h — shared pieces of libephemera_trace: a stable radix
 * sort of (key, value) pairs, the clock map that turns a byte time into a
 * full eph_stamp, and opening an output file with a copy of a profile's
 * metadata and tables.  Internal names start with `ephtr_`.
 */
#ifndef EPH_TRACE_INTERNAL_H
#define EPH_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Seconds on the monotonic clock. */
double ephtr_now(void);

/* --- sorting ---------------------------------------------------------------- */

typedef struct ephtr_pair {
  uint64_t key, val;
} ephtr_pair;

/* Sorts a by key, stably (LSD radix).  False if memory ran out (a unchanged). */
bool ephtr_sort_pairs(ephtr_pair *a, size_t n);

/* --- clocks ----------------------------------------------------------------- */

/*
 * The run's three clocks as functions of the byte clock, rebuilt from a
 * trace: wall time from the (bytes, wall_ns) pairs of its records' stamps
 * (the profiler's own interpolation: a point at every allocation time,
 * linear between; the latest where stamps of one time differ, never going
 * back), collections from its GC events (those ended strictly before the
 * time, as the profiler counts them).
 */
typedef struct ephtr_clock_point {
  uint64_t bytes, wall_ns;
  uint32_t scavenges, full_gcs;
} ephtr_clock_point;

typedef struct ephtr_clock {
  ephtr_clock_point *points;
  size_t npoints;
  uint64_t *gc_time; /* ends of collections, ascending */
  uint32_t *gc_scavenges; /* scavenges among gc_time[0 .. i) */
  size_t ngc;
  size_t hint; /* the last lookup's point */
} ephtr_clock;

bool ephtr_clock_build(const eph_file *p, ephtr_clock *c);
eph_stamp ephtr_clock_at(ephtr_clock *c, uint64_t bytes);
void ephtr_clock_free(ephtr_clock *c);

/* --- output ------------------------------------------------------------------- */

/*
 * Opens path for writing with p's metadata, where key `key` (if not NULL)
 * is set to `value` (replaced if present, else appended), and p's class,
 * site and GC tables.  NULL with err filled on failure.
 */
eph_writer *ephtr_open_copy(const eph_file *p, const char *path, const char *key, const char *value, bool compress,
                            eph_error *err);

/* Fills err with the writer's message for a failed call, closes the writer
 * and removes path.  Returns st. */
eph_status ephtr_fail_writer(eph_writer *w, eph_status st, const char *path, eph_error *err);

/* Closes w with totals; on failure fills err and removes path. */
eph_status ephtr_close(eph_writer *w, const eph_totals *totals, const char *path, eph_error *err);

#endif
