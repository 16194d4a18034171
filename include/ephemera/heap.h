/*
 * ephemera/heap.h — a precise, moving, generational heap for C programs.
 * Layer: heap, above base (docs/architecture.md); its design: docs/heap.md.
 *
 * Model: Pharo's Spur memory manager.  New objects are bump-allocated in
 * eden; a copying scavenger moves survivors between two survivor spaces and
 * tenures them into old space by age (or when a survivor space overflows).
 * Old space is one reserved address range, committed in steps of at least
 * `growth headroom`, collected by a sliding mark-compact full GC, and handed
 * back to the OS when more than `shrink threshold` of it is free.  A full GC
 * runs when old space has grown by `GC ratio` since the previous one.
 *
 * Rules for the embedder (the same as for any precise moving collector):
 *  - Every allocation may collect, and a collection moves objects.  A value
 *    held in a C variable across an allocation must be registered as a root
 *    (EPH_LOCAL / EPH_ROOT below, or eph_global_root_add), and re-read from
 *    that variable afterwards.
 *  - Every pointer store into a heap object goes through eph_store, which is
 *    the write barrier.
 *  - One heap per thread; a heap is never shared between threads.  Several
 *    heaps may live in one process.
 *
 * Errors are values: functions that can fail return an eph_status, or EPH_NIL
 * from an allocator, and eph_heap_error() says what went wrong.  The library
 * never exits; on heap exhaustion it calls the embedder's error handler (if
 * any) and returns EPH_NIL.
 */
#ifndef EPHEMERA_HEAP_H
#define EPHEMERA_HEAP_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ephemera/base.h"
#include "ephemera/gc_event.h"
#include "ephemera/value.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

typedef struct eph_heap eph_heap;

/* --- parameters ---------------------------------------------------------- */

/*
 * The GC parameters, one table for the struct, the defaults, the parser and
 * the documentation.  X(key, field, kind, default, help).  The first four are
 * Pharo's, with the defaults of Illimani's Table 2.
 *   kind SIZE: bytes, written with an optional K/M/G suffix (binary units)
 *   kind RATIO: a fraction ("0.33", "2.5") or a percentage ("33%")
 *   kind COUNT: a non-negative integer
 */
#define EPH_GC_PARAM_TABLE(X)                                                                        \
  X(eden, eden_bytes, SIZE, 15u << 20, "eden size; survivor spaces are 1/5 of it each (eden = 5/7)") \
  X(headroom, growth_headroom, SIZE, 16u << 20, "old space grows by at least this much")             \
  X(shrink, shrink_threshold, SIZE, 32u << 20, "free old space above this goes back to the OS")     \
  X(ratio, gc_ratio, RATIO, 0.33, "full GC when old space grew by this fraction since the last")    \
  X(tenure, tenure_age, COUNT, 3, "scavenges an object survives before it is tenured (1..15)")      \
  X(max, max_heap, SIZE, 0, "maximum heap (new + old space), 0 = unlimited; see eph_gc_params")      \
  X(stress, stress, COUNT, 0, "1 = scavenge before every allocation")                                \
  X(stress_full, stress_full_every, COUNT, 0, "full GC every N allocations (0 = never)")             \
  X(verify, verify, COUNT, 0, "1 = run the heap verifier after every collection")                    \
  X(events, record_events, COUNT, 1, "1 = keep a per-collection event log (pauses)")                 \
  X(huge, huge_pages, COUNT, 1, "1 = new space asks the OS for transparent huge pages")

/*
 * max_heap: allocation fails with EPH_ERR_HEAP_EXHAUSTED rather than grow
 * old space past max_heap minus new space.  A collection cannot stop half
 * way, so promotion may borrow up to one new-space size beyond it; the heap
 * is then "over its maximum" until a full GC brings it back: allocations
 * meanwhile run a full GC first and fail if it does not.
 */
typedef struct eph_gc_params {
  size_t eden_bytes;
  size_t growth_headroom;
  size_t shrink_threshold;
  double gc_ratio;
  unsigned long tenure_age;
  size_t max_heap;
  unsigned long stress;
  unsigned long stress_full_every;
  unsigned long verify;
  unsigned long record_events;
  unsigned long huge_pages;
  /* Not in the table: words the heap keeps after every object for a tool
   * (the Merlin profiler sets 2).  Fixed at heap creation. */
  unsigned long trailer_words;
} eph_gc_params;

/* Fills p with the defaults. */
void eph_gc_params_init(eph_gc_params *p);

/*
 * Applies "key=value,key=value" (keys from EPH_GC_PARAM_TABLE) on top of p.
 * On a bad key or value returns EPH_ERR_INVALID, leaves p unchanged, and
 * fills err (if not NULL) with a message naming the key.
 */
eph_status eph_gc_params_parse(eph_gc_params *p, const char *spec, eph_error *err);

/* Applies the EPHEMERA_GC environment variable, if set, like parse. */
eph_status eph_gc_params_apply_env(eph_gc_params *p, eph_error *err);

/* Writes p as a spec string that eph_gc_params_parse accepts. */
void eph_gc_params_format(const eph_gc_params *p, char *buf, size_t len);

/* Checks consistency (eden not too small, tenure in range, max >= eden...). */
eph_status eph_gc_params_check(const eph_gc_params *p, eph_error *err);

/* Prints the parameter table (keys, defaults, help) for --help texts. */
void eph_gc_params_describe(FILE *out);

/* --- heap lifecycle ------------------------------------------------------ */

/*
 * Creates a heap.  With params == NULL, uses the defaults with EPHEMERA_GC
 * applied on top; with params, uses exactly those.  On failure returns the
 * status, sets *out to NULL and fills err (if not NULL).
 */
eph_status eph_heap_new(const eph_gc_params *params, eph_heap **out, eph_error *err);

/*
 * Releases the heap and all its memory.  NULL is allowed.  When the
 * environment has EPHEMERA_STATS=PATH, first appends one line to PATH:
 * "ephemera-stats pid=.. wall_s=.. cpu_s=.. gc_wall_s=.. gc_cpu_s=..
 * scavenges=.. full_gcs=.. peak_committed=.. peak_used=.. bytes_allocated=..
 * objects=.. bytes_copied=.. bytes_promoted=.. max_pause_s=.." (what
 * `ephemera bench` reads from cmd: targets).
 */
void eph_heap_free(eph_heap *h);

/* The parameters in force. */
const eph_gc_params *eph_heap_params(const eph_heap *h);

/*
 * Changes the parameters of a live heap.  Eden size changes take effect after
 * a full GC that this call runs (new space is empty then).  Returns
 * EPH_ERR_INVALID with the heap unchanged when p is inconsistent.
 */
eph_status eph_heap_set_params(eph_heap *h, const eph_gc_params *p);

/* Message of the last error on this heap ("" if none). */
const char *eph_heap_error(const eph_heap *h);

/* Status of the last error on this heap (EPH_OK if none). */
eph_status eph_heap_status(const eph_heap *h);

/*
 * The error handler is called, before the failing call returns, for heap
 * exhaustion (EPH_ERR_HEAP_EXHAUSTED), objects too large (EPH_ERR_TOO_LARGE),
 * memory the OS refuses (EPH_ERR_NOMEM) and a failed verification after a
 * collection in verify mode (EPH_ERR_CORRUPT; the heap aborts after the
 * handler returns, since continuing would be unsafe).  Argument errors
 * (EPH_ERR_INVALID) and an explicit eph_heap_verify only set the error.
 * The default handler prints the message to stderr.
 */
typedef void (*eph_error_fn)(void *data, eph_heap *h, eph_status status, const char *message);
void eph_heap_set_error_handler(eph_heap *h, eph_error_fn fn, void *data);

/* --- classes ------------------------------------------------------------- */

/*
 * Registers a class by name and returns its index (>= 1).  Registering the
 * same name again with the same format returns the same index.  Returns 0
 * (and sets the heap error) for an empty name, a name already registered with
 * another format, a bad format, or a full table (EPH_MAX_CLASSES).
 */
eph_class_id eph_class_register(eph_heap *h, const char *name, eph_format fmt);
/* Index of a registered class, or 0. */
eph_class_id eph_class_find(const eph_heap *h, const char *name);
/* Name of a class, or NULL for an unknown index.  Owned by the heap. */
const char *eph_class_name(const eph_heap *h, eph_class_id cls);
eph_format eph_class_format(const eph_heap *h, eph_class_id cls);
/* Number of registered classes plus one (index 0 is reserved). */
size_t eph_class_count(const eph_heap *h);

/* The first member of every eph_heap; see struct eph_heap_fast below. */
struct eph_heap_fast;
static inline struct eph_heap_fast *eph__fast(eph_heap *h) { return (struct eph_heap_fast *)(void *)h; }
static inline const struct eph_heap_fast *eph__fast_const(const eph_heap *h) {
  return (const struct eph_heap_fast *)(const void *)h;
}

/* --- allocation sites ------------------------------------------------------ */

/*
 * An allocation site: where in the embedder's source an object was made.
 * EPH_AT(h) records the site of the next allocation on h.  The descriptor
 * is a static built by the compiler, so the run-time cost is one store and
 * one compare (a profile that walks eden also logs the site: observer.h).
 * Tools (the profiler) read it with eph_heap_site from an on_alloc hook.
 *
 *   EPH_AT(h); obj = eph_alloc(h, Point, 2);
 *   obj = EPH_ALLOC_AT(h, eph_alloc(h, Point, 2));   (the same, as an expression)
 */
typedef struct eph_site {
  const char *file;
  const char *function;
  int line;
  uint32_t id; /* 0 until a tool numbers it */
} eph_site;

#define EPH_SITE_HERE \
  (__extension__({ static eph_site eph_site__ = {__FILE__, __func__, __LINE__, 0}; &eph_site__; }))
#define EPH_AT(h) eph__at(eph__fast(h), EPH_SITE_HERE)
#define EPH_ALLOC_AT(h, alloc_expr) (EPH_AT(h), (alloc_expr))

/* --- the inline fast paths ------------------------------------------------ */

/*
 * The first member of every eph_heap: the fields the inline allocation,
 * barrier and root fast paths read.  Private: use the functions below.
 */
struct eph_heap_fast {
  char *alloc_top;      /* next free byte in eden */
  char *alloc_limit;    /* allocation slow path beyond this (may sit below eden's end) */
  uintptr_t young_lo;   /* new space is [young_lo, young_lo + young_size) */
  uintptr_t young_size;
  eph_value **roots;    /* shadow stack of registered C locals */
  size_t roots_len;
  size_t roots_cap;
  eph_value **globals;  /* global roots (eph_root_register) */
  size_t globals_len;
  size_t large_object_bytes; /* payloads at least this large go to old space */
  eph_site *site;       /* site of the next allocation (EPH_AT), or NULL */
  uint64_t alloc_countdown; /* the slow path runs when this reaches 0 (sampling) */
  uint64_t allocated_base; /* eph_heap_allocated() = alloc_top + this, wrapping: a tool's hook reads the clock
                            * at every sample, and this line is in cache where the heap's counters are not */
  size_t trailer_bytes; /* words after every object's payload, for tools (0 normally) */
  bool store_hook;      /* eph_store takes its slow path (a tool watches stores) */
  /* Eden-walk mode (observer.h): EPH_AT logs (eden top, site) here. */
  struct eph_site_mark *site_log, *site_log_end; /* next free entry, end; NULL: off */
};

/* A site recorded by EPH_AT in eden-walk mode: the next young object
 * allocated at `at` (eden's top then) is of `site`. */
typedef struct eph_site_mark {
  uintptr_t at;
  eph_site *site;
} eph_site_mark;
void eph_site_log_grow(eph_heap *h); /* eph__at's slow path: a bigger log */

/* EPH_AT's body: one store, and in eden-walk mode an entry in the site log. */
static inline void eph__at(struct eph_heap_fast *f, eph_site *site) {
  f->site = site;
  if (EPH_UNLIKELY(f->site_log != NULL)) {
    if (EPH_UNLIKELY(f->site_log == f->site_log_end)) eph_site_log_grow((eph_heap *)(void *)f);
    *f->site_log++ = (eph_site_mark){(uintptr_t)f->alloc_top, site};
  }
}


/* Slow paths behind the inline functions; callable directly. */
eph_value eph_alloc_slow(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload_bytes, bool pretenure);
void eph_remember_slow(eph_heap *h, eph_value obj);
void eph_roots_grow(eph_heap *h);

static inline bool eph_is_young(const eph_heap *h, eph_value v) {
  const struct eph_heap_fast *f = eph__fast_const(h);
  return (v & 7) == 0 && v - f->young_lo < f->young_size;
}

/*
 * Passing a class of another format than the allocator's is a programming
 * error: builds with EPH_CHECKED defined (the sanitizer build) check it on
 * every allocation; otherwise the slow path rejects it (EPH_NIL with
 * EPH_ERR_INVALID) and the verifier reports objects made by the fast path.
 */
eph_format eph__class_format_checked(eph_heap *h, eph_class_id cls);

static inline eph_value eph__alloc(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload) {
  struct eph_heap_fast *f = eph__fast(h);
#ifdef EPH_CHECKED
  if (eph__class_format_checked(h, cls) != fmt) return eph_alloc_slow(h, cls, fmt, payload, false);
#endif
  size_t total = sizeof(eph_header) + ((payload + 7u) & ~(size_t)7u) + f->trailer_bytes;
  if (EPH_LIKELY(payload < f->large_object_bytes && (size_t)(f->alloc_limit - f->alloc_top) >= total &&
                 --f->alloc_countdown != 0)) {
    char *p = f->alloc_top;
    f->alloc_top = p + total;
    *(eph_header *)(void *)p = eph_make_header(cls, fmt, payload);
    /* Two memsets: with a constant payload size the first becomes a few
     * stores instead of a call; the trailer (a tool's words) is rarely there. */
    size_t rounded = (payload + 7u) & ~(size_t)7u;
    memset(p + sizeof(eph_header), 0, rounded);
    if (f->trailer_bytes) memset(p + sizeof(eph_header) + rounded, 0, f->trailer_bytes);
    return (eph_value)p;
  }
  return eph_alloc_slow(h, cls, fmt, payload, false);
}

/*
 * Allocates an object of class cls (registered with EPH_FORMAT_POINTERS) with
 * nslots slots, all nil.  May collect.  Returns EPH_NIL if the heap is
 * exhausted (after a full GC) or nslots is too large; eph_heap_error says why.
 */
static inline eph_value eph_alloc(eph_heap *h, eph_class_id cls, size_t nslots) {
  if (EPH_UNLIKELY(nslots > EPH_MAX_PAYLOAD_BYTES / sizeof(eph_value)))
    return eph_alloc_slow(h, cls, EPH_FORMAT_POINTERS, EPH_MAX_PAYLOAD_BYTES + 1, false);
  return eph__alloc(h, cls, EPH_FORMAT_POINTERS, nslots * sizeof(eph_value));
}

/* Allocates a byte object (class registered with EPH_FORMAT_BYTES), zeroed. */
static inline eph_value eph_alloc_bytes(eph_heap *h, eph_class_id cls, size_t nbytes) {
  return eph__alloc(h, cls, EPH_FORMAT_BYTES, nbytes);
}

/* Pretenured allocation: straight into old space.  Otherwise as above. */
static inline eph_value eph_alloc_old(eph_heap *h, eph_class_id cls, size_t nslots) {
  size_t payload = nslots > EPH_MAX_PAYLOAD_BYTES / sizeof(eph_value) ? EPH_MAX_PAYLOAD_BYTES + 1 : nslots * sizeof(eph_value);
  return eph_alloc_slow(h, cls, EPH_FORMAT_POINTERS, payload, true);
}
static inline eph_value eph_alloc_bytes_old(eph_heap *h, eph_class_id cls, size_t nbytes) {
  return eph_alloc_slow(h, cls, EPH_FORMAT_BYTES, nbytes, true);
}

/*
 * Stores v into slot i of obj: the write barrier.  Remembers obj when it is
 * old and v is young.  i must be below eph_slot_count(obj).
 */
void eph_store_hooked(eph_heap *h, eph_value obj, size_t i, eph_value v);

static inline void eph_store(eph_heap *h, eph_value obj, size_t i, eph_value v) {
  if (EPH_UNLIKELY(eph__fast(h)->store_hook)) {
    eph_store_hooked(h, obj, i, v);
    return;
  }
  ((eph_value *)(obj + sizeof(eph_header)))[i] = v;
  if (EPH_UNLIKELY(eph_is_young(h, v)) && !eph_is_young(h, obj) && !(*eph_header_of(obj) & EPH_HDR_REMEMBERED))
    eph_remember_slow(h, obj);
}

/* eph_store of a value that refers to nothing (nil, a small integer):
 * no barrier to run, no remembered set to check. */
static inline void eph_store_immediate(eph_heap *h, eph_value obj, size_t i, eph_value v) {
  if (EPH_UNLIKELY(eph__fast(h)->store_hook || eph_is_ptr(v))) {
    eph_store_hooked(h, obj, i, v);
    return;
  }
  ((eph_value *)(obj + sizeof(eph_header)))[i] = v;
}

/* --- roots ---------------------------------------------------------------- */

/*
 * The shadow stack holds addresses of C variables that hold values; the
 * collector reads and updates them.  Typical use, in the style of OCaml's
 * CAMLparam/CAMLlocal:
 *
 *   eph_value make_pair(eph_heap *h, eph_value a, eph_value b) {
 *     EPH_FRAME(h);
 *     EPH_ROOT(h, a); EPH_ROOT(h, b);
 *     EPH_LOCAL(h, pair);
 *     pair = eph_alloc(h, Pair, 2);
 *     eph_store(h, pair, 0, a);
 *     eph_store(h, pair, 1, b);
 *     EPH_RETURN(h, pair);
 *   }
 *
 * Every function that opens a frame must leave it (EPH_RETURN, EPH_UNFRAME).
 * EPH_LOCAL pushes a root each time it executes: inside a loop body, open
 * and close a frame in the body too, or the stack grows with dead slots.
 */
static inline void eph_root_push(eph_heap *h, eph_value *slot) {
  struct eph_heap_fast *f = eph__fast(h);
  if (EPH_UNLIKELY(f->roots_len == f->roots_cap)) eph_roots_grow(h);
  f->roots[f->roots_len++] = slot;
}
static inline size_t eph_roots_height(eph_heap *h) { return eph__fast(h)->roots_len; }
static inline void eph_roots_reset(eph_heap *h, size_t height) { eph__fast(h)->roots_len = height; }

#define EPH_FRAME(h) size_t eph_frame__ = eph_roots_height(h)
#define EPH_ROOT(h, var) eph_root_push((h), &(var))
#define EPH_LOCAL(h, var) \
  eph_value var = EPH_NIL; \
  eph_root_push((h), &var)
#define EPH_UNFRAME(h) eph_roots_reset((h), eph_frame__)
#define EPH_RETURN(h, expr)          \
  do {                               \
    eph_value eph_ret__ = (expr);    \
    eph_roots_reset((h), eph_frame__); \
    return eph_ret__;                \
  } while (0)
#define EPH_RETURN_VOID(h)             \
  do {                                 \
    eph_roots_reset((h), eph_frame__); \
    return;                            \
  } while (0)

/*
 * Global roots: C variables (static or heap-allocated) whose value the
 * collector keeps alive and updates.  Remove before the variable goes away.
 * add returns EPH_ERR_NOMEM if the table cannot grow.
 */
eph_status eph_global_root_add(eph_heap *h, eph_value *slot);
void eph_global_root_remove(eph_heap *h, eph_value *slot);

/* --- collection ----------------------------------------------------------- */

/*
 * Runs a collection now.  A full GC first tenures every young survivor, then
 * mark-compacts old space, so new space is empty afterwards.  Returns
 * EPH_ERR_HEAP_EXHAUSTED if the heap is over its maximum afterwards.
 */
eph_status eph_collect(eph_heap *h, eph_gc_kind kind);

/*
 * Checks every invariant: valid headers in every space, every slot an
 * immediate or a pointer to the start of an object in eden, the active
 * survivor space or old space (never the empty survivor space or free
 * space), the remembered set complete and exact, the roots valid.  Returns
 * EPH_OK, or EPH_ERR_CORRUPT with the first problem in eph_heap_error.
 */
eph_status eph_heap_verify(eph_heap *h);

/* --- statistics ------------------------------------------------------------ */

/* One collection: eph_gc_event, in ephemera/gc_event.h. */

typedef struct eph_heap_stats {
  uint64_t scavenges, full_gcs;
  uint64_t scavenge_ns, full_ns;      /* wall time per kind */
  uint64_t max_pause_ns;
  uint64_t bytes_allocated;           /* all allocations, young and old */
  uint64_t objects_allocated;
  uint64_t bytes_allocated_old;       /* of which pretenured or large */
  uint64_t bytes_copied, bytes_promoted, bytes_compacted, bytes_reclaimed;
  uint64_t used;                      /* bytes in objects now */
  uint64_t old_used, old_committed;   /* old space */
  uint64_t pinned_used, pinned_committed; /* the pinned space (ephemeron.h) */
  uint64_t new_space_bytes;           /* eden + 2 survivors */
  uint64_t heap_committed;            /* new space + old and pinned committed */
  uint64_t peak_committed;
  uint64_t peak_used;                 /* highest `used` seen at a collection */
  uint64_t wall_ns, cpu_ns;           /* since heap creation */
  uint64_t gc_wall_ns, gc_cpu_ns;     /* inside collections */
  uint64_t mutator_wall_ns, mutator_cpu_ns;
  uint64_t remembered;                /* remembered set size now */
  uint64_t ephemerons_traced;         /* ephemerons met by collections (once per collection each) */
  uint64_t ephemerons_mourned;
  uint64_t finalizers_run;
  uint64_t finalize_ns;               /* wall time inside finalisers */
} eph_heap_stats;

void eph_heap_stats_get(eph_heap *h, eph_heap_stats *out);

/* Bytes allocated so far (the GC literature's clock).  Cheap: two loads. */
static inline uint64_t eph_heap_allocated(const eph_heap *h) {
  const struct eph_heap_fast *f = eph__fast_const(h);
  return (uint64_t)(uintptr_t)f->alloc_top + f->allocated_base;
}
/* Objects allocated so far.  Cheap. */
uint64_t eph_heap_objects_allocated(const eph_heap *h);

/* The event log (empty if params.record_events is 0); valid until the next collection. */
const eph_gc_event *eph_heap_events(const eph_heap *h, size_t *count);

/* Prints a human-readable summary of the statistics. */
void eph_heap_stats_print(eph_heap *h, FILE *out);

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_HEAP_H */
