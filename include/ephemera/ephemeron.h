/*
 * ephemera/ephemeron.h — ephemerons and finalisation (Hayes, OOPSLA 1997).
 *
 * An ephemeron is an object of a class registered with EPH_FORMAT_EPHEMERON.
 * Its slots are:
 *
 *   0  key        held weakly: it does not keep the key alive
 *   1  value      held only as strongly as the key (see the rules)
 *   2  finaliser  a small integer: an eph_finalizer_id, 0 = the class's
 *   3… user slots, ordinary strong slots (FiLiP keeps its record here, so
 *                 the ephemeron is its own finaliser: one object per sample)
 *
 * Ephemerons of a compact class (eph_class_set_compact) have no finaliser
 * slot: their user slots start at 2, and the class's finaliser runs for
 * each of them, as in Pharo, where an ephemeron's class says what
 * mourning it does.
 *
 * The rules, in every collection (scavenge and full GC alike):
 *
 *  1. Reachability.  The collector first traces everything reachable from
 *     the roots without going through the key or value slot of an ephemeron
 *     whose key it has not (yet) found reachable.  An ephemeron whose key is
 *     found reachable, now or later in the same trace, has its value traced
 *     like an ordinary slot; this repeats until nothing changes.  In a
 *     scavenge, everything in old space counts as reachable (and a young
 *     key held by an old ephemeron is found through the remembered set).
 *  2. Mourning.  Every ephemeron that was reached but whose key was not is
 *     mourned, all in the same collection: it gets the MOURNED flag, is
 *     appended to the mourn queue, and its key and value are then traced so
 *     that they stay alive for the finaliser.  Anything reached only
 *     through those keys and values — including other ephemerons — goes
 *     through rules 1–2 again in the same collection.
 *  3. Once.  A mourned ephemeron is an ordinary strong object from then on:
 *     it is never mourned again, so its finaliser runs exactly once.
 *  4. Unreachable ephemerons are reclaimed silently: no finaliser runs.
 *     Reachability is as the collection sees it: a scavenge counts all of
 *     old space as reachable, so a dead *old* ephemeron whose young key
 *     dies is mourned by the scavenge (tenured garbage, as in Pharo); a
 *     full GC reclaims it silently.
 *  5. Immediate keys (small integers, nil, true, false) never die: such an
 *     ephemeron holds its value strongly and is never mourned.
 *
 * Phantom ephemerons (a class option, eph_class_set_phantom) change rule 2
 * for their key only: when one is mourned, its key is not kept alive for
 * the finaliser.  The key slot gets a *tombstone* instead, a small integer
 * saying the dead key's class and size (eph_tombstone_class/_bytes), and
 * the key is reclaimed by the collection that found it dead, as if the
 * ephemeron had been a weak reference.  Its value is traced as in rule 2.
 * A key that something else keeps alive (another ephemeron on it, or
 * EPH_EXIT_RUN_ALL, which mourns live keys too) stays alive; only this
 * ephemeron lets go of it.  This is what a finaliser that only needs to
 * know *what* died wants: the dead key is not copied by the scavenge that
 * mourns it, nor tenured if the survivor space overflows.
 *
 * Consequences, each covered by a test:
 *  - key↔value cycles: a value that refers back to its own key does not keep
 *    the key alive (the value is not traced before the key is found);
 *  - chains (the value of E1 is the key of E2): if E1's key dies, E1 and E2
 *    are mourned in the same collection when nothing else holds E2's key;
 *  - many ephemerons on one key: all are mourned together;
 *  - a young key held by an old (e.g. pretenured) ephemeron: the store
 *    remembered the ephemeron, the scavenger applies the rules to it.
 *
 * Finalisers run outside the collector, at the next safe point after the
 * collection that mourned them: before the allocation or eph_collect call
 * that collected returns, or on demand with eph_run_finalizers.  They run
 * in queue order (the order of mourning) and may allocate, store, collect,
 * and resurrect: the ephemeron (and through it key and value) stays alive
 * as long as something references it.  A finaliser that runs while
 * finalisers are already running is queued behind them, not nested.
 */
#ifndef EPHEMERA_EPHEMERON_H
#define EPHEMERA_EPHEMERON_H

#include <stdlib.h>

#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

#define EPH_EPHEMERON_KEY 0
#define EPH_EPHEMERON_VALUE 1
#define EPH_EPHEMERON_FINALIZER 2
#define EPH_EPHEMERON_FIXED_SLOTS 3
#define EPH_EPHEMERON_COMPACT_FIXED_SLOTS 2 /* key and value: a compact class's */

typedef uint32_t eph_finalizer_id;

/* A finaliser: called with the mourned ephemeron (rooted during the call). */
typedef void (*eph_finalizer_fn)(eph_heap *h, eph_value ephemeron, void *data);

/* Registers a finaliser; returns its id (>= 1), or 0 if the table cannot grow. */
eph_finalizer_id eph_finalizer_register(eph_heap *h, eph_finalizer_fn fn, void *data);

/* Sets the finaliser of ephemerons of class cls whose own id is 0. */
eph_status eph_class_set_finalizer(eph_heap *h, eph_class_id cls, eph_finalizer_id fin);

/*
 * A batch finaliser: called with n >= 1 mourned ephemerons of one compact
 * class, consecutive in the queue and in queue order, instead of the
 * class's finaliser once for each.  For a tool that finalises an ephemeron
 * per allocation (a profiler): the per-call dispatch cost 15 % of such a
 * finaliser.  It runs where finalisers run, but must not allocate or
 * collect: a collection while it runs is refused (eph_collect and the
 * allocation slow path return EPH_ERR_INVALID / EPH_NIL), and one started
 * otherwise aborts.  It may read and store into the ephemerons and re-arm
 * them.  The array belongs to the heap and is valid during the call only.
 */
typedef void (*eph_batch_finalizer_fn)(eph_heap *h, const eph_value *ephemerons, size_t n, void *data);

/* Sets (fn) or removes (NULL) the batch finaliser of class cls, which must
 * be a compact ephemeron class; EPH_ERR_INVALID otherwise. */
eph_status eph_class_set_batch_finalizer(eph_heap *h, eph_class_id cls, eph_batch_finalizer_fn fn, void *data);

/* Makes ephemerons of class cls phantom (see above) or not (the default). */
eph_status eph_class_set_phantom(eph_heap *h, eph_class_id cls, bool phantom);

/*
 * Makes ephemerons of class cls compact (see above): a word smaller, and
 * finalised by the class's finaliser, which eph_class_set_finalizer may
 * change at any time (for all of them at once).  Refused once
 * eph_ephemeron_new has made one of the class, unless it is compact
 * already (then a no-op).
 */
eph_status eph_class_set_compact(eph_heap *h, eph_class_id cls);

/*
 * Allocates an ephemeron of class cls with `user_slots` slots after the
 * fixed three (two if cls is compact), holding key and value, finalised
 * by fin (0: the class's; a compact class takes only 0).
 * With pretenure, it is allocated directly in old space (FiLiP's remedy:
 * a pretenured ephemeron costs the scavenger one remembered-set entry
 * instead of a copy per scavenge; but once dead it is old garbage until a
 * full GC: docs/heap.md says when that pays).  Returns EPH_NIL on failure.
 */
eph_value eph_ephemeron_new(eph_heap *h, eph_class_id cls, eph_value key, eph_value value, size_t user_slots,
                            eph_finalizer_id fin, bool pretenure);

/*
 * Pinned ephemerons.  eph_ephemeron_new_pinned makes an ephemeron (as
 * eph_ephemeron_new: class, key, value, user slots, finaliser) in the
 * heap's *pinned space*, beside old space: no collection moves it or
 * reclaims it.  It is old to the collectors (the write barrier remembers
 * it while its key or value is young) and always alive, holding its key
 * weakly and its value while the key lives (rules 1-3); it is mourned once,
 * its finaliser runs, and eph_ephemeron_rearm arms it again.  It stays until
 * its class's pinned ephemerons are dropped (eph_pinned_drop).
 * What it is for: a tool that keeps one ephemeron per object for a whole
 * run (FiLiP's profiler re-arms one per sample) would otherwise hold them
 * in old space through a registry that a full GC marks, slides and
 * updates with the rest, doubling its work when most objects are sampled.
 * Pinned, a full GC reads each one once to trace its key and value and
 * once to update them, and nothing points to it.  Its bytes count towards
 * the maximum heap but not towards the GC-ratio trigger of full GCs (a
 * full GC cannot reclaim them).  Pinned allocation never collects: it
 * returns EPH_NIL with EPH_ERR_HEAP_EXHAUSTED when the maximum heap leaves
 * no room.  Its allocations are counted (bytes and objects) but are never
 * sample points.
 */
eph_value eph_ephemeron_new_pinned(eph_heap *h, eph_class_id cls, eph_value key, eph_value value, size_t user_slots,
                                   eph_finalizer_id fin);

/*
 * Drops the pinned ephemerons of class cls: until the next full GC they
 * behave as before; that GC takes them for garbage (it neither traces,
 * mourns nor updates them; its on_collect may still read them, and ask
 * eph_gc_where about their keys), removes those still waiting for their
 * finaliser from the queue (their finalisers never run), and frees them.
 * Pinned ephemerons made after the call are dropped with them.  The
 * space they leave is reused once no live pinned object lies above it.
 */
eph_status eph_pinned_drop(eph_heap *h, eph_class_id cls);

/* The pinned space's objects lie back to back in [*base, *top) (both 0
 * before the first pinned allocation); space a drop freed is a filler,
 * an object of class index 0.  The base never changes once set. */
void eph_pinned_range(const eph_heap *h, uintptr_t *base, uintptr_t *top);

/*
 * Re-arms a mourned ephemeron whose finaliser has already run, for a new
 * key and value: from then on it is live again, exactly as if it had just
 * been made by eph_ephemeron_new (same class, finaliser and user slots), and
 * rule 3 starts over (it is mourned once more when the new key dies).  It
 * saves allocating an ephemeron per key: FiLiP's profiler re-arms its
 * finalised ephemerons for new samples.  Returns EPH_ERR_INVALID if e is
 * not a mourned ephemeron or its finaliser is still pending (the pending
 * check runs in checked builds and verify mode only; it is the caller's
 * promise otherwise), or if called inside a collection.
 */
eph_status eph_ephemeron_rearm(eph_heap *h, eph_value e, eph_value key, eph_value value);

/*
 * eph_ephemeron_rearm for a tool that re-arms one per sample and knows e
 * to be a mourned ephemeron whose finaliser has run, outside a collection:
 * the same effects, inline, without the checks (builds with EPH_CHECKED
 * make them, and abort on a refusal).
 */
static inline void eph_ephemeron_rearm_unchecked(eph_heap *h, eph_value e, eph_value key, eph_value value) {
#ifndef EPH_CHECKED
  if (EPH_LIKELY(!eph__fast(h)->store_hook)) {
    eph_value *slot = (eph_value *)(e + sizeof(eph_header));
    *eph_header_of(e) &= ~EPH_HDR_MOURNED; /* first: the barrier sees an armed ephemeron */
    slot[EPH_EPHEMERON_KEY] = key;
    slot[EPH_EPHEMERON_VALUE] = value;
    if ((eph_is_young(h, key) || eph_is_young(h, value)) && !eph_is_young(h, e)) eph_remember_slow(h, e);
    return;
  }
#endif
  if (eph_ephemeron_rearm(h, e, key, value) != EPH_OK) abort();
}

/*
 * eph_ephemeron_rearm_unchecked for n ephemerons at once: es[i] gets key
 * keys[i] and value values[i], in order, with the same effects and the
 * same promise from the caller.  One call for a run of samples: the
 * barrier's checks that hold for the whole run (room in the remembered
 * set, the class's kind) are made once, not per ephemeron.
 */
void eph_ephemerons_rearm_unchecked(eph_heap *h, size_t n, const eph_value *es, const eph_value *keys,
                                    const eph_value *values);

static inline eph_value eph_ephemeron_key(eph_value e) { return eph_slot(e, EPH_EPHEMERON_KEY); }
static inline eph_value eph_ephemeron_value(eph_value e) { return eph_slot(e, EPH_EPHEMERON_VALUE); }
static inline bool eph_ephemeron_is_mourned(eph_value e) { return (*eph_header_of(e) & EPH_HDR_MOURNED) != 0; }

/* A mourned phantom ephemeron's key slot: the dead key's class and payload
 * size (eph_size_bytes), packed in a small integer. */
static inline eph_value eph_tombstone_of(eph_value key) { return eph_int((intptr_t)(*eph_header_of(key) >> EPH_HDR_CLASS_SHIFT)); }
static inline eph_class_id eph_tombstone_class(eph_value t) {
  return (eph_class_id)((uintptr_t)eph_int_value(t) & (EPH_MAX_CLASSES - 1));
}
static inline size_t eph_tombstone_size_bytes(eph_value t) {
  return (size_t)((uintptr_t)eph_int_value(t) >> (EPH_HDR_SIZE_SHIFT - EPH_HDR_CLASS_SHIFT));
}
/* The bytes the dead key occupied, as eph_object_bytes would say. */
static inline size_t eph_tombstone_object_bytes(eph_value t) {
  return sizeof(eph_header) + ((eph_tombstone_size_bytes(t) + 7u) & ~(size_t)7u);
}

/* Runs the pending finalisers now; returns how many ran. */
size_t eph_run_finalizers(eph_heap *h);

/* Number of mourned ephemerons whose finaliser has not run yet. */
size_t eph_pending_finalizers(const eph_heap *h);

/*
 * Whether finalisers run by themselves at safe points (the default), or
 * only when the embedder calls eph_run_finalizers.
 */
void eph_heap_set_auto_finalize(eph_heap *h, bool on);

/* What eph_heap_free does with finalisers. */
typedef enum eph_exit_finalize {
  EPH_EXIT_DROP_PENDING = 0, /* default: pending finalisers never run */
  EPH_EXIT_RUN_PENDING = 1,  /* run the mourned ones still queued */
  EPH_EXIT_RUN_ALL = 2       /* also mourn and finalise every reachable ephemeron
                                whose key is still alive, as lua_close does */
} eph_exit_finalize;
void eph_heap_set_exit_finalize(eph_heap *h, eph_exit_finalize mode);

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_EPHEMERON_H */
