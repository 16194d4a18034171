/*
 * ephemera/observer.h — how tools (the profiler, a statistics printer, a
 * program's own) watch a heap.
 *
 * Observers register on a heap (eph_heap_add_observer), up to
 * EPH_MAX_OBSERVERS at once, each with its own hooks and context pointer.
 * Every hook of every observer is called in the order they were added.
 * The collector calls the collection hooks once per collection.  on_alloc
 * sees allocations at *sample points* only, so that unsampled allocations
 * keep the inline fast path: by default every allocation is one;
 * eph_observer_sample_next spaces them out by a count of objects (the fast
 * path counts down) or by bytes allocated (the fast path's limit stops at
 * the point), as tcmalloc's sampler does.  Each observer has sample points
 * of its own: the heap stops at the nearest, and calls on_alloc of each
 * observer whose point it is, no other.
 *
 * With one observer the heap calls its hooks directly; with several, a
 * chain of its own calls them in turn (and on_alloc then runs as a leaf,
 * below, only if every observer's is one).
 *
 * Callbacks run on the heap's thread.  on_alloc may allocate (nested
 * allocations are not reported again, to any observer) but must root
 * `obj` first if it does.  The other hooks must not allocate, store or
 * collect.  Any hook but on_store may add or remove observers, its own
 * included: one removed is not called again, even for the event under
 * way; one added is first called at the next event.
 */
#ifndef EPHEMERA_OBSERVER_H
#define EPHEMERA_OBSERVER_H

#include <signal.h>

#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

/* The most observers a heap takes at once. */
#define EPH_MAX_OBSERVERS 8

typedef struct eph_observer {
  void *data; /* the context pointer every hook gets */
  /* Who registered it, for eph_heap_find_observer: an address of the
   * tool's own (a static object); NULL: none. */
  const void *tool;
  /*
   * An object was allocated (young, old or pretenured) at one of this
   * observer's sample points.  NULL: not wanted.  Where one allocation is a
   * sample point for several, each gets obj in turn (where it is now, if
   * an earlier one's allocation moved it) and its site (eph_heap_site).
   */
  void (*on_alloc)(void *data, eph_heap *h, eph_value obj);
  /* A collection is about to start.  Must not allocate or collect. */
  void (*on_gc_start)(void *data, eph_heap *h, eph_gc_kind kind);
  /*
   * Liveness is known and no dead object's memory has been reused yet: ask
   * eph_gc_fate about any object.  Dead objects' headers and slots are still
   * readable here.  Every observer's on_collect sees the heap so: the
   * queries below marked "only inside on_collect" hold in each.
   */
  void (*on_collect)(void *data, eph_heap *h, eph_gc_kind kind);
  /* A collection ended; ev describes it. */
  void (*on_gc_end)(void *data, eph_heap *h, const eph_gc_event *ev);
  /* The heap is being freed; it is still fully usable during the call. */
  void (*on_heap_free)(void *data, eph_heap *h);
  /*
   * A pointer store replaced old with new in slot i of obj (eph_store);
   * called right after the store.  Setting it makes every eph_store take a
   * slow path, so install it only for tools that need it (Merlin, traces).
   * Must not allocate, store, collect, or add or remove observers.
   */
  void (*on_store)(void *data, eph_heap *h, eph_value obj, size_t i, eph_value old, eph_value new_value);
  /*
   * Merlin's barrier without a call (on_store NULL): when set, each pointer
   * store raises trailer word store_stamp_word of the object it overwrote to
   * *store_clock, if that is later (the heap needs that many trailer words).
   * One load, a compare and a store at every pointer store, where on_store
   * adds an indirect call and a frame.
   */
  const uint64_t *store_clock;
  unsigned store_stamp_word;
  /*
   * Set when on_alloc never collects and never allocates but pinned
   * ephemerons (it may store, re-arm ephemerons, make pinned ones, set
   * sample points and call eph_heap_site): the heap then calls it at its
   * plain sample points without rooting obj first, which is most of the
   * cost of a hook that runs at every allocation (Merlin, or a profile
   * that samples everything).  With several observers, only when every
   * one with an on_alloc sets it.
   */
  bool on_alloc_is_leaf;
} eph_observer;

/*
 * Only inside on_collect: where obj's bytes are right now (a young object
 * already evacuated by this collection is at its copy; nothing has been
 * compacted yet).  Unlike eph_gc_fate, also for objects found dead.
 */
eph_value eph_gc_locate(eph_heap *h, eph_value obj);

/*
 * Only inside on_collect: eph_gc_locate(h, obj), and in *dead whether
 * eph_gc_fate(h, obj) is EPH_NIL; one call for tools that ask both about
 * every pointer they follow (Merlin).
 */
eph_value eph_gc_where(eph_heap *h, eph_value obj, bool *dead);

/*
 * Only inside on_collect of a full GC: every old-space object below the
 * address returned is alive and keeps its address (the compaction's dense
 * prefix), so a tool that keeps old addresses need not ask about them.
 * Elsewhere: the start of old space (nothing is known).
 */
uintptr_t eph_gc_dense_end(const eph_heap *h);

/*
 * Only inside on_collect: calls fn for every object this collection found
 * dead, by its pre-collection address; its header, slots and trailer are
 * still readable (not writable for young objects: do not rely on writes).
 */
void eph_gc_each_dead(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data);

/* A walk over a space's objects in address order reads a header per
 * object, and the hardware's prefetcher does not keep ahead of it (sph's
 * dead at Merlin's stop: a fifth of the walk's time on that load): the
 * walks below ask for the line 1 KiB on at every object (measured against
 * 512 B and 2 KiB; a prefetch past the space's end is harmless). */
static inline void eph__walk_ahead(uintptr_t p) { __builtin_prefetch((const void *)(p + 1024)); }

/*
 * What a collection found, for a tool that asks about every pointer it
 * follows and walks every dead object (Merlin): eph_gc_where and
 * eph_gc_each_dead without a call per object.  Private fields: use the
 * functions below.
 */
typedef struct eph_gc_view {
  uintptr_t start[2], top[2];  /* the spaces it evacuated (eden, the survivor space left), as they were */
  uintptr_t old_base, old_top; /* a full GC: old space, whose mark bits decide */
  const uint64_t *mark_bits;   /* a full GC: one bit per old-space word; NULL in a scavenge */
  size_t trailer_bytes;
} eph_gc_view;

/* Only inside on_collect: fills v for this collection. */
void eph_gc_view_begin(const eph_heap *h, eph_gc_view *v);

/* Whether old-space object obj is marked in the full GC v describes. */
static inline bool eph_gc_view_marked(const eph_gc_view *v, uintptr_t obj) {
  size_t w = (size_t)(obj - v->old_base) / sizeof(eph_value);
  return (v->mark_bits[w >> 6] >> (w & 63)) & 1u;
}

/* eph_gc_where(h, obj, dead) in the collection v describes; obj a pointer. */
static inline eph_value eph_gc_view_where(const eph_gc_view *v, eph_value obj, bool *dead) {
  *dead = false;
  if (obj - v->start[0] < v->top[0] - v->start[0] || obj - v->start[1] < v->top[1] - v->start[1]) {
    eph_header hdr = *eph_header_of(obj);
    if (!(hdr & EPH_HDR_FORWARDED)) {
      *dead = true;
      return obj;
    }
    obj = eph_forwarded_to(hdr); /* a full GC may yet find the copy dead */
  }
  if (v->mark_bits && (obj & 7) == 0 && obj - v->old_base < v->old_top - v->old_base) *dead = !eph_gc_view_marked(v, obj);
  return obj;
}

/* The first old-space word at or after word w whose mark bit is clear, or
 * nwords.  A full GC marks every word of a live object, its trailer's
 * included, so the end of a run of set bits is the start of a dead
 * object: the walk below skips live objects 64 words a load, without
 * reading their headers (most of old space, and missed by the cache). */
static inline size_t eph_gc_view__unmarked(const eph_gc_view *v, size_t w, size_t nwords) {
  size_t i = w >> 6, nchunks = (nwords + 63) >> 6;
  uint64_t clear = ~v->mark_bits[i] & (~UINT64_C(0) << (w & 63));
  while (!clear) {
    if (++i >= nchunks) return nwords;
    clear = ~v->mark_bits[i];
  }
  size_t r = (i << 6) + (size_t)__builtin_ctzll(clear);
  return r < nwords ? r : nwords;
}

/*
 * The dead objects of the collection v describes, in eph_gc_each_dead's
 * order (by their addresses before it): *space and *at start at 0; each
 * call returns the next one, or 0 at the end.
 */
static inline eph_value eph_gc_view_next_dead(const eph_gc_view *v, int *space, uintptr_t *at) {
  for (; *space < 2; (*space)++, *at = 0) {
    uintptr_t p = *at ? *at : v->start[*space];
    while (p < v->top[*space]) {
      eph__walk_ahead(p);
      eph_header hdr = *(const eph_header *)p;
      if (hdr & EPH_HDR_FORWARDED) { /* a survivor: its size without reading its copy */
        p += eph_forwarded_bytes(hdr); /* its trailer included */
      } else {
        *at = p + eph_object_bytes((eph_value)p) + v->trailer_bytes;
        return (eph_value)p;
      }
    }
  }
  if (*space == 2 && v->mark_bits) {
    uintptr_t p = *at ? *at : v->old_base;
    size_t nwords = (size_t)(v->old_top - v->old_base) / sizeof(eph_value);
    while (p < v->old_top) {
      size_t w = (size_t)(p - v->old_base) / sizeof(eph_value);
      if ((v->mark_bits[w >> 6] >> (w & 63)) & 1u) { /* a run of live objects: past it unread */
        p = v->old_base + eph_gc_view__unmarked(v, w, nwords) * sizeof(eph_value);
        continue;
      }
      *at = p + eph_object_bytes((eph_value)p) + v->trailer_bytes;
      return (eph_value)p;
    }
    *at = p;
  }
  return 0;
}

/*
 * The trailer of obj: the heap's params.trailer_words words after its
 * payload (zero at allocation, moved with the object, never traced).
 */
static inline uint64_t *eph_trailer(eph_value obj) { return (uint64_t *)(obj + eph_object_bytes(obj)); }

/* The root slots: the shadow stack's, then the global roots'.  Valid
 * until the next root is pushed or registered.  For tools that stamp roots
 * (Merlin reads them at every allocation: inline). */
static inline size_t eph_heap_root_slots(eph_heap *h, eph_value ***shadow, eph_value ***globals, size_t *nglobals) {
  const struct eph_heap_fast *f = eph__fast_const(h);
  *shadow = f->roots;
  *globals = f->globals;
  *nglobals = f->globals_len;
  return f->roots_len;
}

/* Old space's address range, reserved for the heap's lifetime: every old
 * object lies in [*base, *base + *reserved).  Tools that keep many old
 * addresses can store them as offsets. */
void eph_heap_old_range(const eph_heap *h, uintptr_t *base, size_t *reserved);

/*
 * Bytes of old space that the tool keeps alive for good (its own objects,
 * which it never drops while it runs): the full-GC trigger (GC ratio)
 * leaves them out of old space's growth, since no full GC could reclaim
 * them.  Set it back (to 0) before they may die.  Default 0.
 */
void eph_heap_set_permanent_bytes(eph_heap *h, size_t bytes);

/* Calls fn for every object in the heap (outside collections). */
void eph_heap_each_object(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data);

/* Runs a collection of this kind at the start of the next allocation
 * (before it allocates).  Brute-force lifetime computation uses it. */
void eph_heap_request_gc(eph_heap *h, eph_gc_kind kind);

/*
 * A poll at the heap's safe points, for a tool that must act on an
 * asynchronous event (a signal) where the heap is consistent: after each
 * collection that an allocation or eph_collect runs, once its finalisers
 * ran, and outside the collector, on_alloc and finalisers, the heap reads
 * *flag, and if it is non-zero calls fn(data, h).  fn may allocate,
 * collect, stop a profile (removing the observer) and remove the poll; it
 * is not called again while it runs.  flag is what a signal handler may
 * write (a volatile sig_atomic_t); the heap only reads it.  flag NULL
 * removes the poll (the default: none).  How soon fn runs after *flag is
 * set depends on the program: at its next collection while it allocates.
 */
void eph_heap_set_poll(eph_heap *h, const volatile sig_atomic_t *flag, void (*fn)(void *data, eph_heap *h),
                       void *data);

/* An observer's registration on a heap: valid until it is removed. */
typedef struct eph_observer_reg eph_observer_reg;

/*
 * Adds obs (copied) after h's other observers and returns its
 * registration, or NULL when h has EPH_MAX_OBSERVERS already.  With an
 * on_alloc, every allocation is a sample point for it until it sets its
 * own (eph_observer_sample_next).
 */
eph_observer_reg *eph_heap_add_observer(eph_heap *h, const eph_observer *obs);

/* Removes reg: its hooks are not called again, and eden-walk mode ends if
 * it turned it on.  The others keep their sample points. */
void eph_heap_remove_observer(eph_heap *h, eph_observer_reg *reg);

/* The first observer added with this tool (eph_observer.tool), or NULL:
 * how a tool finds its registration from the heap alone. */
eph_observer_reg *eph_heap_find_observer(const eph_heap *h, const void *tool);

/* The context pointer reg was added with (its eph_observer.data). */
void *eph_observer_data(const eph_observer_reg *reg);

/* Removes every observer, then adds obs unless it is NULL: for a tool
 * that watches the heap alone. */
void eph_heap_set_observer(eph_heap *h, const eph_observer *obs);

/*
 * Only inside on_alloc: the site recorded by EPH_AT for this allocation, or
 * NULL if none was.  The heap forgets the site after on_alloc returns.
 */
static inline eph_site *eph_heap_site(eph_heap *h) { return eph__fast(h)->site; } /* inline: every sample asks */

/*
 * Sets reg's sample points: its on_alloc is called for the allocation
 * that is the `objects`-th from now (0: no count trigger), and for the
 * first allocation that ends more than `bytes` beyond the current
 * allocation clock (0: no byte trigger).  The setting is re-armed the same
 * way after each of its sample points; call this from on_alloc to choose
 * each gap (e.g. exponentially distributed).  Adding an observer with
 * on_alloc sets (1, 0): every allocation.  (0, 0): none.  Allocations
 * made inside any on_alloc, and pinned objects, count for no observer's
 * count trigger.
 */
void eph_observer_sample_next(eph_heap *h, eph_observer_reg *reg, uint64_t objects, uint64_t bytes);

/* The same for the observer whose hook is running, or outside hooks the
 * one added last (with one observer: it). */
void eph_heap_sample_next(eph_heap *h, uint64_t objects, uint64_t bytes);

/*
 * Eden-walk mode, for a tool that wants every allocation without a call for
 * each: young allocations stop being sample points (set the count trigger
 * to 0; a byte trigger still works), every old-space allocation becomes
 * one, and EPH_AT logs each site.  After a collection, in on_collect, an
 * eph_eden_walk visits what eden held, in allocation order, with each
 * object's site.  The mode is the heap's, and belongs to the observer that
 * turned it on (the one whose hook is running, or the one added last):
 * old-space allocations are sample points for that observer; the others
 * keep their own.  Removing that observer turns the mode off.
 */
void eph_heap_set_eden_walk(eph_heap *h, bool on);
bool eph_heap_eden_walk(const eph_heap *h);
/*
 * Eden pairs, in eden-walk mode: a scavenge leaves the eden it evacuated
 * as it was (its dead objects, its survivors' forwarding headers, its
 * part of the site log) and the mutator allocates in a second eden of the
 * same size until the next scavenge, which swaps them back.  A walk begun
 * in on_collect of a scavenge (not of a full GC) so stays valid until the
 * next collection begins (on_gc_start), and may run on another thread
 * meanwhile: it reads the retired eden, its log and its survivors' headers
 * where they were copied, none of which the mutator changes but for the
 * remembered flag of a promoted survivor, which the write barrier sets
 * with a relaxed-atomic store (eph_gc_eden_walk_next reads the header so
 * too, and needs no other bit of it).  The second eden is committed
 * while the mode is on: the tool's memory, counted in heap_committed.
 * Turn it off only when no walk of a retired eden is under way; turning
 * eden-walk mode off turns it off.  false: not in eden-walk mode, or no
 * memory (the mode stays as it was).
 */
bool eph_heap_set_eden_pair(eph_heap *h, bool on);
bool eph_heap_eden_pair(const eph_heap *h);

/* Bytes the site log holds (allocated for the mode; the tool's cost). */
size_t eph_heap_site_log_bytes(const eph_heap *h);

/* A walk over eden's objects (private fields: use the functions below). */
typedef struct eph_eden_walk {
  eph_heap *h;
  uintptr_t next, top;                   /* the next object; eden's top before the collection */
  const eph_site_mark *mark, *marks_end; /* the site log, in address order */
  size_t trailer_bytes;
  bool full;                             /* a full GC: its mark decides what is dead */
  eph_header header;                     /* the last object's, where it is now */
} eph_eden_walk;

/*
 * Only inside on_collect, in eden-walk mode: starts a walk over every
 * object allocated in eden since the last collection (or since the mode
 * was set).  Outside the mode the walk is empty.
 */
void eph_gc_eden_walk_begin(eph_heap *h, eph_eden_walk *w);

/*
 * Outside a collection, in eden-walk mode (for instance in on_gc_start,
 * before the collection moves anything): starts a walk over every object
 * allocated in eden since the last collection, as they are now.  Each
 * step gives *now == *was; *dead means nothing here.  Outside the mode,
 * or inside a collection, the walk is empty.
 */
void eph_eden_walk_begin(eph_heap *h, eph_eden_walk *w);

/* The site of the walk's object at p: the last EPH_AT made for it. */
static inline eph_site *eph__walk_site(eph_eden_walk *w, uintptr_t p) {
  eph_site *s = NULL;
  const eph_site_mark *m = w->mark;
  for (; m < w->marks_end && m->at <= p; m++)
    if (m->at == p) s = m->site;
  w->mark = m;
  return s;
}

/*
 * The next object, in allocation order, or false at the end: *was is its
 * address before this collection (ask eph_gc_fate about it), *now where
 * its bytes are (as eph_gc_where), *dead whether this collection found it
 * dead, *site its EPH_AT (or NULL).  Inline: it runs once per object.
 */
static inline bool eph_gc_eden_walk_next(eph_eden_walk *w, eph_value *was, eph_value *now, bool *dead, eph_site **site) {
  uintptr_t p = w->next;
  if (p >= w->top) return false;
  *site = eph__walk_site(w, p);
  eph__walk_ahead(p);
  eph_header hdr = *eph_header_of((eph_value)p);
  *was = (eph_value)p;
  *dead = !(hdr & EPH_HDR_FORWARDED);
  *now = *dead ? (eph_value)p : eph_forwarded_to(hdr);
  if (w->full) *now = eph_gc_where(w->h, (eph_value)p, dead); /* evacuated, yet maybe unmarked */
  /* A survivor's header, read once: with eden pairs a tool's thread walks
   * while the mutator runs, and may set the copy's remembered bit. */
  w->header = *now == (eph_value)p ? hdr : __atomic_load_n(eph_header_of(*now), __ATOMIC_RELAXED);
  w->next = p + eph_header_object_bytes(w->header) + w->trailer_bytes;
  return true;
}

/*
 * Ends a walk begun by eph_eden_walk_begin that reached its end, with
 * nothing allocated since it began: the next walk, and the next
 * collection's, start after the objects it visited, and the site log lets
 * go of their marks.  A tool that walks eden as it fills so keeps the log
 * small.  Not with eden pairs (nothing happens).
 */
void eph_eden_walk_end(eph_heap *h, const eph_eden_walk *w);

/*
 * The next object of a walk begun by eph_eden_walk_begin (outside a
 * collection), in allocation order, or false at the end: *obj, and *site
 * its EPH_AT (or NULL).  Inline: it runs once per object.
 */
static inline bool eph_eden_walk_next_live(eph_eden_walk *w, eph_value *obj, eph_site **site) {
  uintptr_t p = w->next;
  if (p >= w->top) return false;
  *site = eph__walk_site(w, p);
  eph__walk_ahead(p);
  w->header = *eph_header_of((eph_value)p);
  w->next = p + eph_header_object_bytes(w->header) + w->trailer_bytes;
  *obj = (eph_value)p;
  return true;
}

/* The class of the object eph_gc_eden_walk_next returned last, from the
 * header the walk read of it. */
static inline eph_class_id eph_gc_eden_walk_class(const eph_eden_walk *w) {
  return (eph_class_id)((w->header >> EPH_HDR_CLASS_SHIFT) & (EPH_MAX_CLASSES - 1));
}

/*
 * Only inside on_collect: where obj (an address from before this
 * collection, young or old) lives after it, or EPH_NIL if this collection
 * found it dead.  Objects outside the collected spaces (old objects during
 * a scavenge) are returned unchanged.
 */
eph_value eph_gc_fate(eph_heap *h, eph_value obj);

/*
 * Only inside on_collect of a full GC: to[i] = eph_gc_fate(h, objs[i]) for
 * n old-space objects (allocated before this collection), in one call: for
 * tools that ask about millions of them at every full GC (gc mode's list of
 * old samples).  objs and to may be the same array.
 */
void eph_gc_old_fates(eph_heap *h, const eph_value *objs, eph_value *to, size_t n);

/* Bytes every object carries after its payload for a tool (the trailer
 * words fixed at heap creation: eph_gc_params.trailer_words). */
size_t eph_heap_trailer_bytes(const eph_heap *h);

/* Eden's allocation top now: the address the next young object gets.  For
 * a tool that places an old-space allocation among the young ones in an
 * eden walk.  Inline: read at sample points. */
static inline uintptr_t eph_heap_eden_top(eph_heap *h) { return (uintptr_t)eph__fast(h)->alloc_top; }

/* The size from which eph_alloc puts an object in old space (large
 * objects): a tool tells a pretenured allocation from a large one by it. */
static inline size_t eph_heap_large_object_bytes(eph_heap *h) { return eph__fast(h)->large_object_bytes; }

/*
 * A tool that attaches to every heap made with eph_heap_new(NULL, ...)
 * (the profiler, from EPHEMERA_PROFILE, registers one when it is linked
 * in), so the heap never calls a tool by name.
 *   prepare  before the heap exists, on the defaults before EPHEMERA_GC
 *            applies: may set parameters the tool needs (trailer words);
 *            a failure (err filled) fails eph_heap_new.
 *   attach   once the heap exists: adds the tool's observer; on a
 *            failure (err filled) the heap is freed and eph_heap_new fails.
 * Either may be NULL.  One hook per process; the struct must outlive it.
 */
typedef struct eph_heap_create_hook {
  eph_status (*prepare)(eph_gc_params *p, eph_error *err);
  eph_status (*attach)(eph_heap *h, eph_error *err);
} eph_heap_create_hook;

/* Registers hook (NULL: none); replaces the previous one. */
void eph_heap_set_create_hook(const eph_heap_create_hook *hook);

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_OBSERVER_H */
