/*
 * tests/fuzz/fuzz.h — the heap fuzzer (eph-fuzz-heap): shared declarations.
 *
 * Three parts, one file each:
 *
 *   model.c  the shadow model: one record per mutator-visible object (id,
 *            kind, size, the expected content of every slot) plus the
 *            expected value of every root; the walk that compares the heap
 *            with the model from the roots, and the model's own "GC" that
 *            forgets records no root reaches any more.
 *   ops.c    the operation table: weighted random mutator steps that change
 *            heap and model together (allocate, store, drop roots, build
 *            chains and trees, collect, ...).  New operations (ephemerons)
 *            go there: add a function and a row to the table.
 *   main.c   options, heap setup, the observer, the main loop, the report.
 *
 * Identity: every object with room for it carries its model id — slot 0 is
 * eph_int(id) in a pointer object, the first 8 bytes are the id (little
 * endian) in a byte object, the rest of a byte object is a pattern derived
 * from (id, version).  The mutator never stores into slot 0.
 *
 * Checks: after every collection (counted by the observer's on_gc_end) and
 * every `check_every` ops, fz_check runs eph_heap_verify and walks heap and
 * model together from the roots (ids, classes, sizes, every slot, every
 * byte, one address per object); `used` must cover the reachable bytes, and
 * after a full GC equal them exactly.  Around explicit collections,
 * on_collect asks eph_gc_fate about every object with a known address.
 *
 * Extending it (ephemerons, say): add a kind (fz_kinds, fz_kind), give the
 * walk its reachability rule (visit/scan in model.c: an ephemeron's value is
 * reachable only if its key is reachable some other way), and add ops to the
 * table in ops.c.  The model's reachability is whatever fz_walk computes, so
 * the exact-bytes and eph_gc_fate checks follow automatically.
 */
#ifndef EPH_FUZZ_H
#define EPH_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/heap.h"
#include "ephemera/observer.h"
#include "rng.h"

#define FZ_NLOCALS 24  /* shadow-stack roots (one frame at the bottom) */
#define FZ_NGLOBALS 8  /* global roots, each registered or not */
#define FZ_NROOTS (FZ_NLOCALS + FZ_NGLOBALS)
#define FZ_NONE UINT32_MAX

/* --- object kinds -------------------------------------------------------- */

/*
 * FZ_EPH: an ephemeron (ephemeron.h).  Slot 0 key, 1 value, 2 finaliser id,
 * 3 its model id (the first user slot), 4.. ordinary strong user slots.  The
 * generic store ops never pick one (only the ephemeron ops store into it).
 * FZ_CEPH: the same of a compact class (eph_class_set_compact): no
 * finaliser slot, so the model id is slot 2.
 * Either may be pinned (eph_ephemeron_new_pinned): then it is a root of the
 * model (fz_model.pinned) until the run drops them before its last check.
 */
typedef enum fz_kind { FZ_NODE, FZ_PAIR, FZ_ARRAY, FZ_BYTES, FZ_STRING, FZ_EPH, FZ_CEPH, FZ_NKINDS } fz_kind;

struct fz_kind_info {
  const char *name;
  eph_format format;
};
extern const struct fz_kind_info fz_kinds[FZ_NKINDS];

static inline bool fz_kind_is_bytes(fz_kind k) { return fz_kinds[k].format == EPH_FORMAT_BYTES; }

static inline bool fz_kind_is_eph(fz_kind k) { return k == FZ_EPH || k == FZ_CEPH; }

/* The slot that carries the model id of a pointer object. */
#define FZ_EPH_ID_SLOT 3
#define FZ_CEPH_ID_SLOT 2
static inline size_t fz_id_slot(fz_kind k) { return k == FZ_EPH ? FZ_EPH_ID_SLOT : k == FZ_CEPH ? FZ_CEPH_ID_SLOT : 0; }

/* Bytes an object with this payload occupies (eph_object_bytes semantics). */
static inline size_t fz_obj_bytes(size_t payload) { return sizeof(eph_header) + ((payload + 7u) & ~(size_t)7u); }

/* --- model values ---------------------------------------------------------- */

/*
 * A model value is either an immediate, encoded exactly like the eph_value
 * it stands for (ints, nil, false, true), or a reference to a model record,
 * encoded as mid << 3 | 4 (a bit pattern no immediate uses).
 */
typedef uint64_t fz_mval;
#define FZ_REF_TAG 4u
static inline bool fz_is_ref(fz_mval v) { return (v & 7u) == FZ_REF_TAG; }
static inline uint32_t fz_ref_mid(fz_mval v) { return (uint32_t)(v >> 3); }
static inline fz_mval fz_ref(uint32_t mid) { return ((fz_mval)mid << 3) | FZ_REF_TAG; }

/* One object as the mutator believes it is. */
typedef struct fz_obj {
  uint64_t id;      /* unique over the run; 0 marks a free record */
  fz_kind kind;
  size_t size;      /* payload bytes: exact for bytes, 8 * nslots otherwise */
  size_t nslots;    /* pointer objects only */
  fz_mval *slots;   /* expected content of every slot (slot 0 = eph_int(id)) */
  uint32_t version; /* byte objects: pattern generation */
  uint32_t epoch;   /* the last walk that reached this record */
  eph_value addr;   /* where that walk (or the allocation) found it */
  uint64_t addr_gc; /* fz->gcs_seen when addr was recorded: addr is current iff equal */
  uint32_t fate_serial; /* == fz_model.fate_serial: fate_addr is what eph_gc_fate said */
  eph_value fate_addr;
  /* ephemerons */
  bool mourned;      /* its finaliser ran (the model's MOURNED flag) */
  uint64_t reach_gc; /* ephemeron-reachable (before mourning) in collection number reach_gc (model view) */
  uint64_t fin_gc;   /* the collection that mourned it, once finalised */
} fz_obj;

struct fz_addr_slot {
  eph_value addr;
  uint32_t mid;
  uint32_t epoch;
};

typedef struct fz_model {
  fz_obj *objs; /* indexed by mid; records are reused, ids never */
  uint32_t nobjs, cap;
  uint32_t *free_mids;
  uint32_t nfree, free_cap;
  uint32_t records; /* records in use: reachable, or garbage not yet swept */
  uint64_t next_id;

  fz_mval roots[FZ_NROOTS];   /* locals first, then globals */
  bool global_on[FZ_NGLOBALS]; /* registered with eph_global_root_add */

  /* walk scratch */
  uint32_t epoch;
  uint32_t *stack;
  size_t stack_len, stack_cap;
  struct fz_addr_slot *addrs; /* address -> mid, to catch two ids at one address */
  size_t addr_len, addr_cap;

  /* eph_gc_fate checks around explicit collections (see fz_arm_fate) */
  bool fate_armed;
  uint32_t fate_epoch;  /* records with this epoch were reachable when it was armed */
  uint32_t fate_serial; /* bumped per armed collection */
  uint64_t fate_gcs;    /* gcs_seen when armed */
  uint64_t fate_checked;

  /* pinned ephemerons (eph_ephemeron_new_pinned): always alive, never
   * moved; walked and traced as roots after the others */
  struct fz_pinned { uint32_t mid; eph_value addr; } *pinned;
  size_t npinned, pinned_cap;

  /* ephemerons by id: model record (FZ_NONE when released) and state */
  uint32_t *eph_mid;
  uint8_t *eph_state; /* 0 not an ephemeron, 1 created, 2 finalised */
  size_t eph_cap;

  /* result of the last walk */
  size_t live_objs, live_bytes, live_young;
} fz_model;

/* --- modes ----------------------------------------------------------------- */

typedef struct fz_mode {
  const char *name;
  const char *gc_spec;     /* applied on top of the defaults */
  uint64_t default_ops;
  uint32_t max_live_objs;  /* above this the mutator mostly drops things */
  size_t max_live_bytes;
  uint32_t check_every;    /* model check every N ops (also after every GC) */
  uint32_t verify_every;   /* ... with eph_heap_verify every N ops (always after a GC) */
  size_t large_min, large_max;
  size_t medium_max;      /* occasional byte objects log-uniform in [300, medium_max) */
  size_t long_chain_max;  /* occasional chains this long (0: never) */
  bool observe_alloc;     /* install on_alloc (every allocation takes the slow path; it sometimes allocates) */
  /* weights (per 10000) of the mode-dependent operations */
  unsigned w_large, w_scavenge, w_full, w_set_params;
} fz_mode;

/* --- the fuzzer ------------------------------------------------------------ */

typedef struct fz_counters {
  uint64_t scavenges, full_gcs;            /* seen by the observer */
  uint64_t explicit_scavenges, explicit_fulls;
  uint64_t checks, exact_checks, objects_checked, spot_checks;
  uint64_t allocs, allocs_old, allocs_large, bytes_allocated;
  uint64_t stores, old_young_stores;
  uint64_t observed_allocs, nested_allocs; /* on_alloc calls, allocations made inside them */
  size_t max_live_objs, max_live_bytes;
  uint64_t sum_live_objs; /* over checks, for the mean */
  /* ephemerons */
  uint64_t eph_created, eph_pretenured, eph_pinned, eph_pinned_refused, eph_imm_keys, eph_placed;
  uint64_t pinned_allocs; /* in allocs too, but never sample points (ephemeron.h) */
  uint64_t eph_finalised, eph_caveat, eph_resurrected, eph_fin_allocs, eph_fin_garbage_known;
  uint64_t eph_predicted, eph_exact_checks, eph_reach_walks;
  uint64_t allocs_in_finalizers; /* counted in allocs too */
} fz_counters;

/* A mourning the observer saw, waiting for its finaliser (queue order). */
typedef struct fz_mourn_tag {
  uint64_t gc;      /* gcs_seen of the collection that mourned */
  eph_gc_kind kind;
} fz_mourn_tag;

typedef struct fuzz {
  eph_heap *h;
  const fz_mode *mode;
  eph_gc_params params; /* as created */
  const char *argv0;
  const char *gc_extra; /* --gc, or NULL */
  uint64_t check_every_opt; /* --check-every, or 0 */
  uint64_t seed, nops, op;
  bool verbose;
  bool in_final; /* the closing checks after the last op */
  fz_rng rng;
  fz_model m;
  eph_class_id cls[FZ_NKINDS];

  /* the real roots, mirrored by m.roots */
  eph_value locals[FZ_NLOCALS];
  eph_value *globals; /* FZ_NGLOBALS, malloc'd so their addresses never change */

  uint64_t gcs_seen;    /* collections reported by on_gc_end */
  uint64_t gcs_checked; /* gcs_seen at the last full check */
  bool observer_verify; /* run eph_heap_verify in on_gc_end (when params.verify is off) */
  bool expect_exact;    /* the last thing that happened was a full GC */
  bool pressure;        /* the live graph is over its bounds: drop things */
  bool grow;            /* the live graph is under half its bounds: drop less */
  const char *phase;    /* for the error handler's message */

  fz_counters c;
  uint64_t *op_counts; /* per row of the op table */
  uint64_t *eph_op_counts;

  /* --ephemerons */
  bool ephemerons;
  eph_finalizer_id fin_explicit, fin_class; /* the same function, by id and as the class's */
  fz_mourn_tag *tags;
  size_t tag_head, tag_len, tag_cap;
  uint64_t predict_gc;  /* an explicit full GC whose mournings the model predicted (0: none) */
  bool in_on_alloc;     /* inside on_alloc's own allocation (allocations there are not observed) */
  bool in_finalizer;
  bool fin_in_op;       /* a finaliser ran during the current operation */
  uint64_t predict_hits; /* finalisers of ephemerons mourned by predict_gc */

  /* --merlin-check: no observer of ours (the profiler's), no young/old decisions */
  bool observed;        /* our observer is installed */
  bool deterministic;   /* decisions never depend on GC timing */
  size_t trailer_bytes; /* per object, for tools */
  const char *run_name; /* " (merlin run)" / " (brute run)" */
} fuzz;

/* main.c */
_Noreturn void fz_fail(fuzz *fz, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *fz_xrealloc(void *p, size_t n);

/* model.c */
void fz_model_init(fz_model *m);
void fz_model_free(fz_model *m);
/* A new record of this kind; pointer kinds get nslots = size / 8, all nil but slot 0. */
uint32_t fz_model_new(fz_model *m, fz_kind kind, size_t size);
/* Renders a model value / a heap value for messages. */
const char *fz_describe_mval(fuzz *fz, fz_mval v, char *buf, size_t len);
const char *fz_describe_value(eph_value v, char *buf, size_t len);
/* The byte pattern of a byte object. */
void fz_pattern_fill(uint8_t *p, size_t n, uint64_t id, uint32_t version);
/* Index of the first byte that differs, or -1. */
ptrdiff_t fz_pattern_check(const uint8_t *p, size_t n, uint64_t id, uint32_t version);
/* Checks header (class, format, size, not forwarded) and the embedded id. */
void fz_check_ident(fuzz *fz, uint32_t mid, eph_value a, const char *ctx);
/* fz_check_ident plus every slot (refs: identity of the target) or the byte pattern. */
void fz_check_object(fuzz *fz, uint32_t mid, eph_value a, const char *ctx);
/*
 * Walks the roots.  With heap: compares the heap with the model on the way
 * (any difference fails).  Either way, forgets records no root reaches and
 * leaves live_objs / live_bytes / live_young in m.
 */
void fz_walk(fuzz *fz, bool heap, bool sweep);
/*
 * Before an explicit collection: a walk (no sweep) records every reachable
 * object's address; then on_collect asks eph_gc_fate about every record
 * with a current address: reachable ones must survive (and the next walk
 * must find them where fate said), unreachable ones must die in a full GC.
 */
void fz_arm_fate(fuzz *fz);
void fz_fate_on_collect(fuzz *fz, eph_gc_kind kind);
/* The full check: eph_heap_verify (if verify), fz_walk(heap, sweep), the used-bytes bounds. */
void fz_check(fuzz *fz, const char *why, bool verify);
/*
 * The model's ephemeron trace from the roots (the heap's algorithm, rules
 * 1-2 of ephemeron.h, for a full GC).  Records reached before any mourning
 * get reach_gc = stamp.  With predicted != NULL, the ephemerons the rounds
 * would mourn are appended there (*n of them; the array is malloc'd).
 */
void fz_eph_trace(fuzz *fz, uint64_t stamp, uint32_t **predicted, size_t *n);
/* Records an ephemeron's id -> mid. */
void fz_eph_note(fz_model *m, uint64_t id, uint32_t mid);
/* The live record of ephemeron id, or FZ_NONE. */
uint32_t fz_eph_lookup(const fz_model *m, uint64_t id);

/* ops.c */
void fz_ops_init(fuzz *fz);
size_t fz_op_count(void);
const char *fz_op_name(size_t i);
/* Runs one weighted random operation (op number fz->op). */
void fz_op_step(fuzz *fz);
/* The finaliser of every fuzzer ephemeron. */
void fz_finalizer(eph_heap *h, eph_value e, void *data);

#endif /* EPH_FUZZ_H */
