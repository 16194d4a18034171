/*
 * trace/trace.h — libephemera_trace: tools over Merlin event traces
 * (`ephemera run WORKLOAD --trace`), see docs/traces.md.
 *
 *   - offline Merlin (TOPLAS 2006, §6.4): every object's last-reachable
 *     time recomputed from the trace's ALLOC, STORE and ROOT events alone,
 *     compared with the trace's own (online) deaths, written as a profile;
 *   - granulation (§3.2, §6.5): the trace a brute-force generator with a
 *     granule of K bytes would give, deaths moved to the next multiple of K,
 *     TICK events at the points of perfect knowledge.
 *
 * Everything works on an eph_profile loaded with eph_profile_load; memory
 * is plain malloc in dense arrays indexed by object (no per-object malloc).
 */
#ifndef EPH_TRACE_H
#define EPH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format of an object, as the ALLOC event's c carries it ((c >> 32) & 0xff). */
#define EPH_TRACE_FORMAT_SHIFT 32
#define EPH_TRACE_FORMAT_MASK UINT64_C(0xff)
/* Bit 40 of an ALLOC event's c: allocated in old space on request (pretenured). */
#define EPH_TRACE_PRETENURED_BIT (UINT64_C(1) << 40)
#define EPH_TRACE_SITE_MASK UINT64_C(0xffffffff)

/* Problems with a file as a trace: NULL if p is a usable whole trace, else
 * static text ("no events: ..."), for "ephemera: FILE: <text>". */
const char *eph_trace_unusable(const eph_profile *p);

/* Parses a size in bytes with an optional K, M or G suffix (binary units,
 * an optional trailing B or iB: 4K, 4KiB, 65536, 1M).  False on junk,
 * overflow or a missing number; 0 parses (callers reject it as a granule). */
bool eph_trace_parse_size(const char *s, uint64_t *out);

/* ceil(t / k) * k: t moved to the next multiple of k (a multiple stays).
 * False if that does not fit in 64 bits.  k > 0. */
bool eph_trace_granule_ceil(uint64_t t, uint64_t k, uint64_t *out);

/* --- offline Merlin ----------------------------------------------------------- */

typedef struct eph_trace_merlin_stats {
  uint64_t events;          /* events in the trace */
  uint64_t allocs, stores, root_exits, final_roots;
  uint64_t pointer_slots;   /* slots of pointer and ephemeron objects */
  uint64_t dead, censored;  /* dead + censored = objects */
  uint64_t propagations;    /* stamps raised by the backward pass */
  /* Inconsistencies (a faithful trace has none; see docs/traces.md): */
  uint64_t unknown_ids;     /* STORE / ROOT naming an id with no ALLOC event */
  uint64_t bad_slots;       /* STORE to a slot the object does not have */
  uint64_t stale_stores;    /* STORE whose old value is not what the replay holds in that slot */
  uint64_t first_stale_event; /* index of the first such store (valid if stale_stores) */
  double seconds;           /* time taken by eph_trace_merlin_run */
} eph_trace_merlin_stats;

typedef struct eph_trace_merlin {
  size_t nobjects;
  uint64_t *id;        /* sorted ascending (ids are birth times) */
  uint64_t *death;     /* last-reachable time; the end of the trace when censored */
  uint8_t *censored;   /* 1: reachable from the final roots (alive at exit) */
  uint64_t end;        /* the end of the trace: its latest event time */
  eph_trace_merlin_stats stats;
  /* lookup index (private) */
  uint32_t *bucket;
  size_t nbuckets;
  unsigned shift;
} eph_trace_merlin;

/*
 * Runs offline Merlin on the trace p (ALLOC, STORE and ROOT events only;
 * DEATH events and records are ignored).  Fills *m (free it with
 * eph_trace_merlin_free, also after a failure).  Fails with a message for
 * a file that is not a usable trace, duplicate ids, more than 2^32 - 2
 * objects or no memory.
 */
eph_status eph_trace_merlin_run(const eph_profile *p, eph_trace_merlin *m, eph_error *err);
void eph_trace_merlin_free(eph_trace_merlin *m);

/* The dense index of object id, or false if no ALLOC event created it. */
bool eph_trace_merlin_find(const eph_trace_merlin *m, uint64_t id, size_t *index);

/* How an object's offline result differs from the trace's own. */
typedef enum eph_trace_diff_kind {
  EPH_TRACE_DIFF_TIME = 1,        /* both dead, at different times */
  EPH_TRACE_DIFF_OFFLINE_DEAD,    /* offline dead, online censored (alive at exit) */
  EPH_TRACE_DIFF_OFFLINE_ALIVE,   /* offline censored, online dead */
  EPH_TRACE_DIFF_NO_ONLINE,       /* the trace has no death or record for it */
  EPH_TRACE_DIFF_NO_ALLOC,        /* the trace has a death or record for an id with no ALLOC */
  EPH_TRACE_DIFF_SELF,            /* the trace's DEATH event and record disagree */
} eph_trace_diff_kind;

typedef struct eph_trace_diff {
  eph_trace_diff_kind kind;
  uint64_t id;
  uint64_t offline; /* death time (the end when censored) */
  uint64_t online;  /* the trace's: its DEATH event's or record's time; SELF: the record's */
  uint64_t other;   /* SELF: the DEATH event's time */
} eph_trace_diff;

/*
 * Compares m with the trace's own results object by object: DEATH events
 * and records (EXACT: dead at death.bytes, CENSORED: alive at exit).
 * Stores the first max differences (in id order) in diffs and returns how
 * many there are in all; *compared = objects compared.  SIZE_MAX if memory
 * ran out.
 */
size_t eph_trace_merlin_check(const eph_profile *p, const eph_trace_merlin *m, eph_trace_diff *diffs, size_t max,
                              size_t *compared);

/*
 * Writes the recomputed records (EXACT or CENSORED, in id order, class,
 * site and size from the ALLOC events, stamps in all three clocks from the
 * trace's own records and GC events) as a profile at path: p's metadata
 * plus offline_merlin=yes, its class and site tables, GC table and totals
 * (records and censored recounted).  On failure removes path.
 */
eph_status eph_trace_merlin_write(const eph_profile *p, const eph_trace_merlin *m, const char *path, bool compress,
                                  eph_error *err);

/* --- granulation ------------------------------------------------------------- */

typedef struct eph_trace_granulate_stats {
  uint64_t granule;
  uint64_t events_in, events_out;
  uint64_t deaths;          /* DEATH events (re-emitted at their granule) */
  uint64_t deaths_moved;    /* of which not already at a multiple of the granule */
  uint64_t records_moved;   /* records whose death moved */
  uint64_t ticks;           /* TICK events written */
  uint64_t old_ticks;       /* TICK events of the input, dropped */
  uint64_t last_tick;
  double seconds;
} eph_trace_granulate_stats;

/*
 * Writes the trace p granulated to `granule` bytes at path (the event order
 * is in docs/traces.md).  stats may be NULL.  On failure removes path.
 */
eph_status eph_trace_granulate(const eph_profile *p, uint64_t granule, const char *path, bool compress,
                               eph_trace_granulate_stats *stats, eph_error *err);

#ifdef __cplusplus
}
#endif
#endif /* EPH_TRACE_H */
