/*
 * heap_internal.h — the heap's private state, shared by the files of src/heap.
 *
 * Memory layout
 *   new space: one mapping [eden | survivor A | survivor B].  Between
 *     collections `past` holds the survivors and `future` is empty.
 *   old space: one reserved address range; [old_base, old_top) holds
 *     objects back to back, [old_top, old_base + old_committed) is free and
 *     committed, the rest is reserved (PROT_NONE).  Being contiguous, it can
 *     be compacted by sliding, and promoted objects are a contiguous run at
 *     its top that the scavenger scans like a second Cheney queue.
 *
 * Invariants between collections (checked by eph_heap_verify)
 *   - every object in eden, past and old space has a valid header;
 *   - every pointer slot holds an immediate or the address of an object in
 *     eden, past or old space;
 *   - an old object holding a young pointer has EPH_HDR_REMEMBERED set and
 *     appears exactly once in the remembered set; no young object has it.
 *     An inert ephemeron (ephh_inert_candidate) may be in the set instead
 *     as one: its entry in the set's inert part (remset_inert), tagged
 *     REMSET_INERT, its header EPH_HDR_REMEMBERED_INERT.  A store of a
 *     young value into it then adds a plain entry too
 *     (EPH_HDR_REMEMBERED), which the scavenger scans in its stead.
 */
#ifndef EPH_HEAP_INTERNAL_H
#define EPH_HEAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/ephemeron.h"
#include "ephemera/heap.h"
#include "ephemera/observer.h"

#define EPH_WORD ((size_t)sizeof(eph_value))
#define EPH_KiB ((size_t)1 << 10)
#define EPH_MiB ((size_t)1 << 20)
#define EPH_GiB ((size_t)1 << 30)

/* Each survivor space is eden / EPH_SURVIVOR_DIVISOR, so that new space is
 * eden 5/7 and two survivors 1/7 each, as in Pharo's Spur. */
#define EPH_SURVIVOR_DIVISOR 5
/* Objects of half a survivor space would rarely fit one: allocate them old,
 * and anything this large (256 KiB) however large the survivor spaces. */
#define EPH_LARGE_OBJECT_MAX (256 * EPH_KiB)
/* Trailer words a tool may ask for (Merlin needs 2): a bound on the bytes
 * every object carries for nothing the program asked. */
#define EPH_MAX_TRAILER_WORDS 4
/* a young object's words fit a forwarding header's 16 bits (value.h) */
_Static_assert(EPH_LARGE_OBJECT_MAX / 8 + 1 + EPH_MAX_TRAILER_WORDS < (1u << (64 - EPH_FWD_WORDS_SHIFT)),
               "young objects too large to forward");
/* First sizes of tables that double as they fill: a frame's worth of
 * shadow-stack roots, and the classes of a small program. */
#define EPH_ROOTS_INITIAL 256
#define EPH_CLASSES_INITIAL 64
/* The remembered set's first size: old objects with young pointers between
 * two scavenges, for a small program; it doubles as it fills. */
#define EPH_REMSET_INITIAL 1024

typedef struct eph_space {
  char *start, *top, *end;
} eph_space;

typedef struct eph_class_entry {
  char *name;
  eph_format format;
  uint32_t finalizer; /* eph_finalizer_id for its ephemerons, 0 = none */
  bool phantom;       /* its ephemerons leave a tombstone for their key (ephemeron.h) */
  bool compact;       /* its ephemerons have no finaliser slot: the class's runs (ephemeron.h) */
  bool has_ephemerons; /* eph_ephemeron_new made one: too late to make it compact */
  bool pinned_dropped; /* eph_pinned_drop: its pinned ephemerons go at the next full GC */
  size_t pinned_objects; /* in the pinned space */
  eph_batch_finalizer_fn batch_finalizer; /* compact classes: runs instead of the finaliser */
  void *batch_data;
} eph_class_entry;

/* Slots before an ephemeron's user slots: key, value and, unless its class
 * is compact, its finaliser id. */
static inline size_t ephh_ephemeron_fixed_slots(const eph_class_entry *c) {
  return c->compact ? EPH_EPHEMERON_COMPACT_FIXED_SLOTS : EPH_EPHEMERON_FIXED_SLOTS;
}

typedef struct eph_finalizer_entry {
  eph_finalizer_fn fn;
  void *data;
} eph_finalizer_entry;

/* A growable array of values (off-heap). */
typedef struct eph_value_vec {
  eph_value *items;
  size_t len, cap;
} eph_value_vec;

/* What eph_gc_fate answers from, while the collector runs. */
typedef enum eph_gc_phase { PHASE_NONE = 0, PHASE_EVACUATED, PHASE_MARKED } eph_gc_phase;

/* An observer's registration (chain.c).  seq 0: a free slot.  While
 * several observers watch, each keeps its own sample points: the gaps it
 * asked for, and its next points on the clocks of sampled objects
 * (ephh_sampled_objects) and of bytes (UINT64_MAX: none). */
struct eph_observer_reg {
  eph_observer obs;
  uint64_t seq;
  uint64_t sample_objects, sample_bytes;
  uint64_t next_object, next_byte;
};

struct eph_heap {
  struct eph_heap_fast fast; /* must be first: read by the inline fast paths */
  eph_gc_params params;

  /* new space */
  char *new_base;
  size_t new_bytes;    /* eden and the survivor spaces */
  size_t new_reserved; /* and the second eden after them (newspace.c) */
  size_t survivor_bytes;
  eph_space eden, past, future; /* eden.top is unused: see fast.alloc_top */
  /* eden pairs (eph_heap_set_eden_pair): the eden not in use, committed
   * while eden_pair is on; after a scavenge the one it evacuated */
  eph_space spare_eden;
  bool eden_pair;

  /* old space */
  char *old_base, *old_top;
  size_t old_reserved, old_committed;
  size_t full_threshold;  /* counted old bytes (ephh_old_counted) above which a full GC runs */
  size_t permanent_bytes; /* old bytes a tool keeps alive for good: not counted (observer.h) */
  bool over_max;          /* old space had to exceed max_heap during a collection */

  /* pinned space (pinned.c): reserved on first use, never moved */
  char *pinned_base, *pinned_top;
  size_t pinned_reserved, pinned_committed;
  size_t pinned_drops; /* classes dropped since the last full GC */
  size_t pinned_kept;  /* during a full GC: pinned objects it traces */
  eph_class_id pinned_quick_class; /* ephemeron.c's pinned_quick: its class (0: none yet) */
  size_t pinned_quick_total;       /* ... and its ephemerons' bytes */

  /* full GC side tables (grown on demand, kept between collections) */
  uint64_t *mark_bits;    /* one bit per old-space word, set for every word of a live object */
  size_t mark_bits_words;
  size_t *chunk_live_before; /* live words before each 64-word chunk */
  char *dense_end;        /* during a full GC: below this, nothing moves */
  eph_value *mark_stack;
  size_t mark_len, mark_cap;

  /* remembered set: old objects that may hold young pointers; its inert
   * ephemerons' entries apart (remset.c) */
  eph_value *remset;
  size_t remset_len, remset_cap;
  eph_value_vec remset_inert;

  /* global roots: fast.globals, fast.globals_len */
  size_t globals_cap;

  /* classes; index 0 is reserved */
  eph_class_entry *classes;
  size_t classes_len, classes_cap;

  /* ephemerons: finaliser table, the mourn queue (a root: [mourn_head,
   * len) are waiting for their finaliser), and the ephemerons a trace has
   * reached but whose keys it has not (yet) */
  eph_finalizer_entry *finalizers;
  size_t finalizers_len, finalizers_cap;
  eph_value_vec mourn;
  size_t mourn_head;
  eph_value_vec deferred;
  /* A scavenge's deferred phantoms whose value needs no copying: settling
   * them never copies anything, so they wait for the fixpoint and are
   * settled in one pass (scavenge.c) */
  eph_value_vec deferred_inert;
  bool running_finalizers;
  bool in_batch_finalizer; /* a batch finaliser runs: no collection (ephemeron.h) */
  bool auto_finalize;
  bool mourn_all;            /* the final full GC of EPH_EXIT_RUN_ALL */
  eph_exit_finalize exit_finalize;

  /* collector state */
  bool in_gc;
  /* Not next to in_observer: GCC would test both with one wide load, which
   * right after in_observer's store (each sample point) stalls on store
   * forwarding. */
  int requested_gc;        /* 1 + eph_gc_kind to run at the next allocation, or 0 */
  eph_gc_phase phase;
  eph_space evacuated[2];  /* the last evacuation's from-spaces: eden and past */
  uint64_t alloc_count;    /* slow-path allocations, for stress_full */

  /* sample points (observer.h): the fast path counts fast.alloc_countdown
   * down and stops at alloc_limit, which sits at the byte sample point */
  uint64_t sample_objects, sample_bytes; /* the gaps to re-arm with; 0 = none */
  uint64_t sample_at_bytes;              /* allocation clock of the byte trigger */
  uint64_t countdown_start;              /* alloc_countdown when last armed */
  uint64_t objects_base;                 /* objects counted before that */

  /* observers (chain.c): what the heap calls, the only observer's hooks
   * or, while several watch, the chain's, which calls theirs */
  eph_observer observer;
  bool has_observer;
  bool in_observer;
  /* eden-walk mode (edenwalk.c; on while fast.site_log is set): the site
   * log's storage, and where in eden the walk starts (above objects made
   * before the mode was set) */
  eph_site_mark *site_log_base;
  size_t site_log_cap;
  /* in pair mode, the retired eden's log (swapped with the one above) */
  eph_site_mark *spare_log_base;
  size_t spare_log_cap;
  char *eden_walk_from;

  /* the poll at safe points (eph_heap_set_poll, poll.c) */
  const volatile sig_atomic_t *poll_flag;
  void (*poll_fn)(void *data, eph_heap *h);
  void *poll_data;
  bool in_poll;

  /* errors */
  char error[256];
  eph_status status;
  eph_error_fn error_fn;
  void *error_data;

  /* statistics */
  eph_heap_stats stats;
  uint64_t eden_retired;   /* bytes allocated in eden before its current fill */
  uint64_t start_wall_ns, start_cpu_ns;
  eph_gc_event *events;
  size_t events_len, events_cap;
  eph_gc_event current;    /* the collection under way */
  uint64_t gc_start_cpu_ns;
  size_t page;

  /* the observers (chain.c): registrations in slots, in the order they
   * were added */
  eph_observer_reg observer_slots[EPH_MAX_OBSERVERS];
  eph_observer_reg *observers[EPH_MAX_OBSERVERS];
  unsigned nobservers;
  uint64_t observers_added;           /* registrations so far: each one's seq */
  eph_observer_reg *acting;           /* the observer whose hook the chain is calling */
  eph_observer_reg *eden_walk_owner;  /* the observer that turned eden-walk mode on */
  bool points_per_observer;           /* each observer keeps its sample points, the heap's are the nearest */
  bool in_chain_alloc;                /* the chain's on_alloc runs: it sets the heap's points after */
  uint64_t unsampled_objects;         /* objects counted that were no sample point: pinned, or made in on_alloc */
};

/* os.c — virtual memory and clocks */
#define EPH_HUGE_PAGE (2 * EPH_MiB) /* reservations start on this boundary, so huge pages can back them */
void *ephh_os_reserve(size_t bytes);
/* Makes [addr, addr+bytes) readable and writable; huge: ask for transparent
 * huge pages there (a hint: ignored where the OS has none). */
bool ephh_os_commit(void *addr, size_t bytes, bool huge);
void ephh_os_decommit(void *addr, size_t bytes);
void ephh_os_release(void *addr, size_t bytes);
size_t ephh_os_page_size(void);
uint64_t ephh_now_ns(void);
uint64_t ephh_cpu_ns(void);
static inline size_t ephh_round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* A survivor space for an eden of eden_bytes, and the new space they make
 * (eden and two survivor spaces), each rounded up to `page` (1 where
 * there is no heap yet: the parameters' check). */
static inline size_t ephh_survivor_bytes(size_t eden_bytes, size_t page) {
  return ephh_round_up(eden_bytes / EPH_SURVIVOR_DIVISOR, page);
}
static inline size_t ephh_new_space_bytes(size_t eden_bytes, size_t page) {
  return ephh_round_up(eden_bytes, page) + 2 * ephh_survivor_bytes(eden_bytes, page);
}


/* heap.c — errors */
void ephh_set_error(eph_heap *h, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ephh_raise(eph_heap *h, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ephh_fatal(eph_heap *h, const char *what) __attribute__((noreturn));
void ephh_update_alloc_limit(eph_heap *h);
void ephh_sample_arm(eph_heap *h);
/* The heap's own sample points (one observer's, or the nearest of
 * several): as eph_heap_sample_next; and resumed with the count trigger
 * `countdown` allocations away (0: none) and the byte trigger at clock
 * at_bytes (UINT64_MAX: none), then re-armed with the gaps. */
void ephh_sample_next(eph_heap *h, uint64_t objects, uint64_t bytes);
void ephh_sample_resume(eph_heap *h, uint64_t objects, uint64_t bytes, uint64_t countdown, uint64_t at_bytes);
/* Allocations that may be sample points: all but pinned ones and those
 * made inside on_alloc. */
static inline uint64_t ephh_sampled_objects(const eph_heap *h) {
  return eph_heap_objects_allocated(h) - h->unsampled_objects;
}

/* chain.c: the observer a call that names none is about (the one whose
 * hook runs, else the last added; NULL: none), and the sample points of
 * reg while several observers watch. */
eph_observer_reg *ephh_acting_observer(eph_heap *h);
void ephh_chain_sample_next(eph_heap *h, eph_observer_reg *reg, uint64_t objects, uint64_t bytes);

/* Allocation (alloc.c, sample_point.c). */
eph_value ephh_alloc_general(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload, bool pretenure);
void ephh_sample_point_slow(eph_heap *h, eph_value *obj, bool old);
void ephh_notify_alloc_observer(eph_heap *h, eph_value *obj);

static inline bool ephh_class_matches(const eph_heap *h, eph_class_id cls, eph_format fmt) {
  return cls >= 1 && cls < h->classes_len && h->classes[cls].format == fmt;
}

/* An object's bytes: header, payload rounded to words, the tools' trailer. */
static inline size_t ephh_object_total(const eph_heap *h, size_t payload) {
  return sizeof(eph_header) + ephh_round_up(payload, EPH_WORD) + h->fast.trailer_bytes;
}

/* Clears n bytes at p (a multiple of 8).  Up to 64, two overlapping
 * stores of a fixed width: memset's call, for a size known only at run
 * time, cost more than the clearing on the sample point's path, which in
 * Merlin mode every allocation takes. */
static inline void ephh_clear_words(char *p, size_t n) {
  if (n > 64) {
    memset(p, 0, n);
  } else if (n > 32) {
    memset(p, 0, 32);
    memset(p + n - 32, 0, 32);
  } else if (n > 16) {
    memset(p, 0, 16);
    memset(p + n - 16, 0, 16);
  } else if (n) {
    memset(p, 0, 8);
    memset(p + n - 8, 0, 8);
  }
}

static inline eph_value ephh_init_object(char *p, eph_class_id cls, eph_format fmt, size_t payload, size_t total) {
  *(eph_header *)(void *)p = eph_make_header(cls, fmt, payload);
  ephh_clear_words(p + sizeof(eph_header), total - sizeof(eph_header));
  return (eph_value)p;
}
#define EPH_NO_COUNTDOWN (UINT64_MAX / 2)

/* newspace.c */
eph_status ephh_new_space_init(eph_heap *h, size_t eden_bytes);
void ephh_new_space_swap_eden(eph_heap *h);
void ephh_new_space_release(eph_heap *h);

/* oldspace.c */
eph_status ephh_old_space_init(eph_heap *h);
size_t ephh_old_limit(const eph_heap *h);
char *ephh_old_alloc_gc(eph_heap *h, size_t bytes);
char *ephh_old_alloc_mutator(eph_heap *h, size_t bytes);
void ephh_old_space_resize_after_full(eph_heap *h);
void ephh_set_full_threshold(eph_heap *h);
static inline size_t ephh_old_used(const eph_heap *h) { return (size_t)(h->old_top - h->old_base); }
/* The allocation clock (eph_heap_allocated) is alloc_top + fast.allocated_base:
 * rebased when eden starts a fill, moved by every old-space allocation.
 * ephh_clock_base is what the base must be (the verifier checks it). */
static inline uint64_t ephh_clock_base(const eph_heap *h) {
  return h->eden_retired + h->stats.bytes_allocated_old - (uint64_t)(uintptr_t)h->eden.start;
}
static inline void ephh_clock_rebase(eph_heap *h) { h->fast.allocated_base = ephh_clock_base(h); }
static inline void ephh_count_old_bytes(eph_heap *h, size_t total) {
  h->stats.bytes_allocated_old += total;
  h->fast.allocated_base += total;
}

/* What the GC-ratio trigger counts: old space less a tool's permanent objects. */
static inline size_t ephh_old_counted(const eph_heap *h) {
  return ephh_old_used(h) > h->permanent_bytes ? ephh_old_used(h) - h->permanent_bytes : 0;
}
static inline bool ephh_in_old(const eph_heap *h, eph_value v) {
  return (v & 7) == 0 && v - (uintptr_t)h->old_base < (uintptr_t)(h->old_top - h->old_base);
}

/* pinned.c */
eph_value ephh_pinned_alloc(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload);
/* The bump and the counts of a pinned allocation of total bytes, which the
 * committed space has room for (pinned.c, and ephemeron.c's quick path). */
static inline char *ephh_pinned_take(eph_heap *h, eph_class_id cls, size_t total) {
  char *p = h->pinned_top;
  h->pinned_top = p + total;
  ephh_count_old_bytes(h, total);
  h->objects_base++, h->unsampled_objects++; /* counted, never a sample point */
  h->classes[cls].pinned_objects++;
  return p;
}
void ephh_pinned_free_dropped(eph_heap *h);
void ephh_pinned_release(eph_heap *h);
static inline size_t ephh_pinned_used(const eph_heap *h) { return (size_t)(h->pinned_top - h->pinned_base); }
static inline bool ephh_in_pinned(const eph_heap *h, eph_value v) {
  return (v & 7) == 0 && v - (uintptr_t)h->pinned_base < (uintptr_t)(h->pinned_top - h->pinned_base);
}
/* Pinned objects of classes not dropped (pinned.c). */
size_t ephh_pinned_kept(const eph_heap *h);
/* A pinned object the collectors trace: no filler, and not dropped. */
static inline bool ephh_pinned_holds(const eph_heap *h, eph_value obj) {
  eph_class_id cls = eph_class_of(obj);
  return cls != 0 && !(h->pinned_drops && h->classes[cls].pinned_dropped);
}

/* edenwalk.c */
static inline bool ephh_eden_walk_on(const eph_heap *h) { return h->fast.site_log != NULL; }
void ephh_eden_walk_after_gc(eph_heap *h);
void ephh_eden_walk_free(eph_heap *h);
bool ephh_eden_walk_spare_log(eph_heap *h);
void ephh_eden_walk_note_old(eph_heap *h);
/* The last collection was a scavenge in pair mode: the eden it evacuated
 * is the spare now, left as it was. */
static inline bool ephh_eden_retired(const eph_heap *h) {
  return h->eden_pair && h->evacuated[0].start == h->spare_eden.start;
}

/* ephemeron.c */
void ephh_vec_grow(eph_heap *h, eph_value_vec *v);
/* Inline: the collectors push every deferred and mourned ephemeron. */
static inline void ephh_vec_push(eph_heap *h, eph_value_vec *v, eph_value x) {
  if (EPH_UNLIKELY(v->len == v->cap)) ephh_vec_grow(h, v);
  v->items[v->len++] = x;
}
/* Room in v for n more, so that a loop pushing at most n needs no check. */
static inline void ephh_vec_reserve(eph_heap *h, eph_value_vec *v, size_t n) {
  while (EPH_UNLIKELY(v->cap - v->len < n)) ephh_vec_grow(h, v);
}
void ephh_mourn(eph_heap *h, eph_value e); /* before its key and value are traced */
/* ephh_mourn, inline, for a phantom whose key is a young object neither
 * reached nor copied: the scavenger's inert ephemerons (scavenge.c), one
 * per dead sample at 100 % in finalization mode (the call and the class
 * lookup cost 20 instructions of 40 on sph).  hdr: e's header as it is
 * to be, less the mourned flag; the mourn queue has room (ephh_vec_reserve),
 * and the caller counts the mourned (ephh_count_mourned). */
static inline void ephh_mourn_phantom(eph_heap *h, eph_value e, eph_header hdr) {
  eph_value *key = (eph_value *)(e + sizeof(eph_header)) + EPH_EPHEMERON_KEY;
  *key = eph_tombstone_of(*key);
  *eph_header_of(e) = hdr | EPH_HDR_MOURNED;
  h->mourn.items[h->mourn.len++] = e;
}
static inline void ephh_count_mourned(eph_heap *h, uint64_t n) {
  h->stats.ephemerons_mourned += n;
  h->current.ephemerons_mourned += n;
}
void ephh_safepoint(eph_heap *h);

/* poll.c: the poll, when its flag is set (at the end of ephh_safepoint) */
void ephh_poll_run(eph_heap *h);
static inline void ephh_poll(eph_heap *h) {
  if (EPH_UNLIKELY(h->poll_flag != NULL && *h->poll_flag)) ephh_poll_run(h);
}
void ephh_exit_finalizers(eph_heap *h);
/* EPHEMERA_STATS=PATH: appends the heap's statistics line to PATH (env_stats.c). */
void ephh_append_env_stats(eph_heap *h);
static inline bool ephh_is_live_ephemeron(eph_value obj) {
  return eph_format_of(obj) == EPH_FORMAT_EPHEMERON && !(*eph_header_of(obj) & EPH_HDR_MOURNED);
}

/* remset.c.  A remembered-set entry's low bits: REMSET_INERT for an
 * inert ephemeron's entry (in remset_inert: the scavenger settles it at
 * its fixpoint without scanning it first); REMSET_KEEP, during a
 * scavenge only. */
#define REMSET_INERT ((eph_value)2)
/* An old ephemeron the scavenger may leave unread until its fixpoint: it
 * holds nothing but a young key, which it does not keep alive (a phantom
 * with no user slot and a value that is no young object, not mourned).
 * It stays so until a collection: its value can become young only by a
 * store that the write barrier sees, and its class only by
 * eph_class_set_phantom, which takes its entries back (remset.c). */
static inline bool ephh_inert_candidate(const eph_heap *h, eph_value e) {
  eph_header hdr = *eph_header_of(e);
  const eph_value *slot = (const eph_value *)(e + sizeof(eph_header));
  return ((hdr >> EPH_HDR_FORMAT_SHIFT) & 0xF) == EPH_FORMAT_EPHEMERON && !(hdr & EPH_HDR_MOURNED) &&
         (size_t)(hdr >> EPH_HDR_SIZE_SHIFT) == EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD &&
         h->classes[eph_class_of(e)].phantom && eph_is_young(h, slot[EPH_EPHEMERON_KEY]) &&
         !eph_is_young(h, slot[EPH_EPHEMERON_VALUE]) && !eph_is_young(h, e);
}
/* Appends obj to the remembered set, plainly (the plain part has room)
 * or as an inert ephemeron (its part grows if need be), and flags its
 * header so. */
static inline void ephh_remset_push(eph_heap *h, eph_value obj, bool inert) {
  eph_header *hdr = eph_header_of(obj);
  /* one store, relaxed-atomic: a tool's thread may read the header meanwhile
   * (a profiler walking a retired eden, eph_gc_eden_walk_next) */
  __atomic_store_n(hdr, *hdr | (inert ? EPH_HDR_REMEMBERED_INERT : EPH_HDR_REMEMBERED), __ATOMIC_RELAXED);
  if (inert) ephh_vec_push(h, &h->remset_inert, obj | REMSET_INERT);
  else h->remset[h->remset_len++] = obj;
}
/* Remembers an old object (not remembered yet) as an inert ephemeron if
 * it is one, else plainly. */
static inline void ephh_remember(eph_heap *h, eph_value obj) { ephh_remset_push(h, obj, ephh_inert_candidate(h, obj)); }
void ephh_remset_add(eph_heap *h, eph_value obj); /* plainly, growing the set */
void ephh_remset_grow(eph_heap *h);
/* Takes class cls's inert entries back into the plain set (cls stops being phantom). */
void ephh_remset_plain_class(eph_heap *h, eph_class_id cls);


/* scavenge.c */
void ephh_evacuate_young(eph_heap *h, bool tenure_all);
void ephh_scavenge(eph_heap *h);

/* fullgc.c */
void ephh_full_gc(eph_heap *h);
eph_value ephh_full_forward(const eph_heap *h, eph_value obj);
bool ephh_full_is_marked(const eph_heap *h, eph_value obj);

/* stats.c */
void ephh_gc_begin(eph_heap *h, eph_gc_kind kind);
void ephh_gc_end(eph_heap *h);
uint64_t ephh_heap_used(const eph_heap *h);
void ephh_note_committed(eph_heap *h);
/* New space (both edens of a pair), old space and the pinned space. */
size_t ephh_committed(const eph_heap *h);
/* Checked builds and verify mode: the slow checks (poisoning vacated
 * memory, the O(pending) queue check of eph_ephemeron_rearm). */
static inline bool ephh_checking(const eph_heap *h) {
#ifdef EPH_CHECKED
  (void)h;
  return true;
#else
  return h->params.verify != 0;
#endif
}
void ephh_poison(char *from, char *to);

/* verify.c */
void ephh_verify_after_gc(eph_heap *h);

/* The space an object takes: header, payload and the heap's trailer words. */
static inline size_t ephh_span(const eph_heap *h, eph_value obj) { return eph_object_bytes(obj) + h->fast.trailer_bytes; }

/* Walk [from, to) object by object. */
static inline char *ephh_next_object(const eph_heap *h, char *p) { return p + ephh_span(h, (eph_value)p); }

static inline bool ephh_in_space(const eph_space *s, eph_value v) {
  return v - (uintptr_t)s->start < (uintptr_t)(s->top - s->start);
}

/* Eden's fill level lives in fast.alloc_top (eden.top is unused). */
static inline bool ephh_in_eden(const eph_heap *h, eph_value v) {
  return v - (uintptr_t)h->eden.start < (uintptr_t)(h->fast.alloc_top - h->eden.start);
}

#endif /* EPH_HEAP_INTERNAL_H */
