/*
 * ephemera/profile.h — the object-lifetime profiler.
 * Layer: profiler, above heap, sampling and format (docs/architecture.md).
 *
 * Switched on per heap: from code (eph_profile_start / eph_profile_stop),
 * from the environment for any program that creates its heap with
 * eph_heap_new(NULL, ...) (EPHEMERA_PROFILE="mode=gc,sample=1/100,out=run.eph";
 * the profile is written when the heap is freed), or from the CLI
 * (`ephemera run WORKLOAD --profile SPEC -o FILE`).
 *
 * Each sampled allocation gets an off-heap record (format.h: eph_record):
 * class, size, site, birth and death in three clocks (bytes allocated, wall
 * time, collections so far) and how it died.  Objects still alive when the
 * profile stops (after a last full GC) are written as censored records,
 * never dropped.  Records
 * are streamed to the .eph file as they complete.
 *
 * Modes:
 *   gc            the collector reports a sampled object's death when a
 *                 scavenge or full GC finds it unreachable; the record
 *                 holds the interval (last collection survived, the one
 *                 that found it dead].  No heap objects are added.  At
 *                 1/N with N <= 8 or with a class filter it walks eden
 *                 after each collection instead of hooking allocations
 *                 (observer.h's eden-walk mode): much cheaper when most
 *                 allocations are samples.
 *   finalization  FiLiP (ISMM'24): one ephemeron per sampled object, whose
 *                 key is the object and which is its own finaliser (one
 *                 heap object per sample); pretenured unless pretenure=off.
 *                 Death = when the finaliser runs.  The ephemerons live in
 *                 a registry of pretenured chunks, as FiLiP's do in Pharo.
 *                 Unlike FiLiP's, they are phantom (the dead object is not
 *                 kept for the finaliser) and recycled once finalised:
 *                 docs/finalization.md.
 *
 * Sampling: sample=1/N samples each allocation with probability 1/N
 * (geometrically distributed gaps of mean N: a plain counter would alias
 * with periodic allocation patterns and bias per-class figures), each
 * sample standing for N objects; sample=every:N is FiLiP's literal counter
 * (every N-th allocation); sample=bytes:B samples the allocation that crosses points
 * spaced by exponentially distributed gaps of mean B bytes (tcmalloc), an
 * object of size s standing for 1/(1-exp(-s/B)) objects, so that weighted
 * sums are unbiased estimates of objects and bytes allocated.  classes=A,B
 * restricts sampling to those classes.
 *
 * The SPEC string: comma-separated key=value pairs
 *   mode=gc|finalization|merlin|brute   sample=1/N | N | every:N | all | bytes:B (B with K/M/G)
 *   out=FILE   pretenure=on|off   compress=on|off   seed=N   classes=A,B,...
 *   granule=K (brute)   trace=on (merlin)   threads=1|2|auto (gc, finalization, merlin)   stacks=N
 * (a token without '=' after classes= continues the class list).
 * The file is encoded and written on the program's thread, but in Merlin
 * and finalization mode where two CPUs are usable (not with threads=1):
 * there on a thread of the profiler's own; Merlin's stop also shares its
 * records with a helper thread, which stamps and encodes two of every
 * three blocks of them (threads=2 asks for the helper on one CPU too).  A
 * stop in gc or finalization mode with 65 536 samples or more to record
 * encodes them on that thread too (started for the stop in gc mode).  The
 * environment variable
 * EPHEMERA_WRITER_THREAD=1 asks for that thread in every mode (slower in
 * gc mode on the machines measured so far, docs/gc-mode.md), =0 in none.
 */
#ifndef EPHEMERA_PROFILE_H
#define EPHEMERA_PROFILE_H

#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/spec.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

/* Sets the heap parameters a mode needs at heap creation (merlin: the
 * trailer words); a no-op for the other modes. */
void eph_profile_prepare_params(const eph_profile_spec *s, eph_gc_params *p);

/*
 * Starts profiling h into spec->out, with extra metadata pairs (workload,
 * size, command...; may be NULL).  Installs the heap's observer.  Fails if
 * a profiler already runs on h, a class in the filter is unknown to h at
 * this point, or the file cannot be created.
 */
eph_status eph_profile_start(eph_heap *h, const eph_profile_spec *spec, const eph_meta_pair *meta, size_t nmeta,
                             eph_error *err);

typedef struct eph_profile_stats {
  uint64_t samples;       /* records started */
  uint64_t deaths;        /* records completed by a death */
  uint64_t censored;
  uint64_t memory_bytes;  /* the profiler's own off-heap memory now */
  uint64_t peak_memory_bytes;
  uint64_t own_objects, own_bytes; /* heap objects the profiler allocated (finalization mode) */
  uint64_t merlin_resorts; /* merlin: collections whose backward pass fell back to stamp order */
} eph_profile_stats;

/* Runs a last full GC (so that garbage is reported dead, not censored),
 * writes censored records for objects still reachable, the totals, closes
 * the file, and removes the observer; fills *final (may be NULL) with the
 * last statistics.  EPH_OK if no profiler runs. */
eph_status eph_profile_stop(eph_heap *h, eph_profile_stats *final, eph_error *err);

/*
 * Call stacks of the program's own frames (optional, stacks=N): EPH_AT
 * marks where an object is made; EPH_CALLER(h) marks a call on the way
 * there, until EPH_CALLER_END(h):
 *
 *   EPH_CALLER(h); t = make_tree(h, depth); EPH_CALLER_END(h);
 *
 * A sample taken while calls are marked gets, as its site, the EPH_AT site
 * with the innermost N - 1 marked calls as its callers, one site per
 * distinct stack in the file (docs/eph-format.md 5.8).  Pairs must nest.
 * Each mark is a call that does nothing unless a profile with stacks=N
 * runs on h; the stack is only looked at for samples, and not for the
 * young objects gc mode finds by walking eden (1/N with N <= 8, or a
 * class filter): those keep their plain site.
 */
void eph_profile_caller_push(eph_heap *h, const eph_site *site);
void eph_profile_caller_pop(eph_heap *h);
#define EPH_CALLER(h) eph_profile_caller_push((h), EPH_SITE_HERE)
#define EPH_CALLER_END(h) eph_profile_caller_pop(h)

/*
 * Makes SIGINT and SIGTERM finish the profile running on h before they end
 * the process.  The handler only records the signal; at h's next safe point
 * (observer.h, eph_heap_set_poll: its next collection while the program
 * allocates) the profile is stopped as eph_profile_stop does (a last full
 * GC, censored records for what is still alive, the closing chunk), then
 * the signal is raised again with its default action, so the process ends
 * killed by it (a shell's $? is 130 or 143), as `perf record` does.  Also
 * when the signal comes while the profile is being stopped otherwise.  A
 * second signal ends the process at once (the file then reads up to its
 * last chunk, as after SIGKILL): the way out of a program blocked or no
 * longer allocating.  Signals the process ignores stay ignored.  The
 * previous handlers are back once the profile is stopped (if no other
 * profile of the process holds them).  Returns EPH_ERR_INVALID if no
 * profile runs on h or a handler cannot be installed.
 */
eph_status eph_profile_stop_on_signals(eph_heap *h, eph_error *err);

/* Statistics of the profiler running on h; false if none runs. */
bool eph_profile_stats_get(eph_heap *h, eph_profile_stats *out);

/* The heap-creation hook behind EPHEMERA_PROFILE (observer.h), registered
 * when the library is loaded; named so that a static link can keep it. */
extern const struct eph_heap_create_hook eph_profile_env_hook;

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_PROFILE_H */
