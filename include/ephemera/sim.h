/*
 * ephemera/sim.h — the GC simulator (docs/sim.md): replay a profile under
 * another collector configuration and predict what the real heap does.
 * Layer: simulator, above the format (docs/architecture.md).
 *
 * Built for a grid search: load and prepare the input once
 * (eph_sim_input_load), then simulate as many configurations as wanted
 * (eph_sim_run), each cheap and independent; an input is read-only while
 * simulated, so several threads may run configurations over one input.
 *
 * Inputs (eph_sim_input_kind), each with its caveats as text:
 *   TRACE      a Merlin trace (`ephemera run W --profile mode=merlin --trace`):
 *              the object graph is known, so nepotism, remembered-set
 *              entries and promotion are exact;
 *   LIFETIMES  a Merlin profile without events: exact deaths, no graph;
 *   SAMPLED    a gc/finalization profile: weighted samples whose deaths
 *              are intervals; the results are ranges.
 * Collectors (eph_sim_collector): `spur`, the rules of src/heap/ read from
 * the heap's own parameter table (eph_gc_params), and the Merlin paper's
 * semispace, fixed nursery, Appel variable nursery and older-first.
 */
#ifndef EPHEMERA_SIM_H
#define EPHEMERA_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"
#include "ephemera/heap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eph_sim_input_kind {
  EPH_SIM_INPUT_TRACE = 0,
  EPH_SIM_INPUT_LIFETIMES,
  EPH_SIM_INPUT_SAMPLED,
} eph_sim_input_kind;

typedef struct eph_sim_input eph_sim_input;

/*
 * Loads an .eph file and prepares it for simulation: objects, their sizes,
 * deaths and (from a trace) the ALLOC/STORE stream.  On failure returns
 * EPH_ERR_INVALID (not a usable profile: no records, truncated, a profile
 * kind the simulator cannot use) or EPH_ERR_NOMEM, fills err with one line
 * naming the problem and sets *out to NULL.  The caller owns *out
 * (eph_sim_input_free).
 */
eph_status eph_sim_input_load(const char *path, eph_sim_input **out, eph_error *err);
/* The same from a loaded profile (not kept: p may be freed afterwards). */
eph_status eph_sim_input_from_profile(const eph_file *p, eph_sim_input **out, eph_error *err);
void eph_sim_input_free(eph_sim_input *in); /* NULL allowed */

eph_sim_input_kind eph_sim_input_kind_of(const eph_sim_input *in);
const char *eph_sim_input_kind_name(eph_sim_input_kind k); /* "trace", "lifetimes", "sampled" */
/* What this input cannot model, one sentence per line (static or owned by in). */
const char *eph_sim_input_caveats(const eph_sim_input *in);
/* Objects and bytes the input's program allocated (weighted for samples). */
uint64_t eph_sim_input_objects(const eph_sim_input *in);
uint64_t eph_sim_input_bytes(const eph_sim_input *in);
/* The largest number of bytes live at once (exact from deaths; a lower
 * bound of any heap that runs the program): the minimum heap. */
uint64_t eph_sim_input_max_live(const eph_sim_input *in);

typedef enum eph_sim_collector {
  EPH_SIM_SPUR = 0, /* Ephemera's own heap (src/heap/) */
  EPH_SIM_SS,       /* semispace: two halves of the heap, copy all live */
  EPH_SIM_FG,       /* fixed-size nursery, promote all its survivors; mark-compact mature space */
  EPH_SIM_VG,       /* Appel: the nursery is half the free heap */
  EPH_SIM_OF,       /* older-first: a window sweeping the heap from the oldest end */
  EPH_SIM_NCOLLECTORS
} eph_sim_collector;

/* "spur", "ss", "fg", "vg", "of"; NULL for an out-of-range value. */
const char *eph_sim_collector_name(eph_sim_collector c);
/* Parses a collector name; false if unknown. */
bool eph_sim_collector_parse(const char *name, eph_sim_collector *out);

/* When collections run on a granulated trace (TOPLAS 2006 §3.2), whose
 * deaths are known only at multiples of the granule ("points of perfect
 * knowledge"): */
typedef enum eph_sim_sync {
  EPH_SIM_UNSYNC = 0, /* at the collector's natural points, with the deaths as granulated */
  EPH_SIM_SYNC_EARLY, /* at the last point before the natural one: never over the bounds */
  EPH_SIM_SYNC_MID,   /* at the point nearest the natural one */
  EPH_SIM_SYNC_LATE,  /* at the first point after it: over the bounds meanwhile */
  EPH_SIM_NSYNC
} eph_sim_sync;

const char *eph_sim_sync_name(eph_sim_sync s); /* "unsync", "syncearly", "syncmid", "synclate" */
bool eph_sim_sync_parse(const char *name, eph_sim_sync *out);

typedef struct eph_sim_config {
  eph_sim_collector collector;
  eph_gc_params params;   /* spur: the heap's parameters (eph_gc_params_init, _parse) */
  uint64_t heap_bytes;    /* ss/fg/vg/of: the heap size (0: the minimum heap times heap_factor) */
  double heap_factor;     /* ss/fg/vg/of with heap_bytes 0: multiple of the minimum heap (default 2) */
  uint64_t nursery_bytes; /* fg: nursery size (0: a quarter of the heap); of: window (0: a third) */
  bool keep_events;       /* fill result.events with one entry per collection */
  /* Granularity: deaths moved up to the next multiple of `granule` bytes
   * (as `ephemera trace granulate` does; 0 = the input's own, which is the
   * granule of a granulated trace) and collections placed by `sync`. */
  uint64_t granule;
  eph_sim_sync sync;
} eph_sim_config;

/* How spur treats the GC parameter `key` (a key of EPH_GC_PARAM_TABLE):
 * "modelled: ...", "refused: ..." or "no effect on collections: ...";
 * NULL for a key the simulator does not know (a test fails on that). */
const char *eph_sim_param_role(const char *key);

/* Defaults: spur with eph_gc_params_init, heap_factor 2. */
void eph_sim_config_init(eph_sim_config *c);

/* One simulated collection. */
typedef struct eph_sim_event {
  eph_gc_kind kind;      /* scavenge (any nursery or window collection) or full */
  uint64_t allocated;    /* bytes allocated before it (the clock) */
  uint64_t copied, promoted, marked, compacted, remembered;
  uint64_t heap_after;   /* bytes in objects after it */
  uint64_t committed;    /* bytes committed after it */
} eph_sim_event;

/* The cost model: predicted GC seconds = sum of coefficient * feature. */
typedef struct eph_sim_costmodel {
  double per_scavenge;      /* s per scavenge (roots, flip, fixed costs) */
  double per_full_gc;       /* s per full GC (bitmap, tables, fixed costs) */
  double per_byte_copied;   /* s per byte copied (young to young, or semispace) */
  double per_byte_promoted; /* s per byte promoted (tenured) */
  double per_object_moved;  /* s per object copied or promoted (header, forwarding) */
  /* s per object a scavenge moves, per doubling of eden beyond 256 KiB:
   * survivors spread over a bigger eden are further out of the caches. */
  double per_object_far;
  /* The same per byte moved (copied or promoted): large survivors spread
   * over a bigger eden cost more cache lines each (kvstore's). */
  double per_byte_far;
  double per_slot_scanned;  /* s per pointer slot a scavenge scans in a copied or promoted object */
  double per_remembered_slot; /* s per pointer slot a scavenge scans in a remembered-set entry */
  double per_slot_traced;   /* s per pointer slot a full GC scans (its evacuation and mark) */
  double per_byte_marked;   /* s per byte marked (live old bytes at a full GC) */
  double per_byte_compacted;/* s per byte moved by compaction */
  double per_remembered;    /* s per remembered-set entry scanned */
  double per_mib_committed; /* s per MiB committed, per collection (page and table walks) */
  /* Pointer slots per byte moved or marked in the calibration runs: the
   * slot counts of an input without the object graph are estimated with it. */
  double slots_per_byte;
  double fit_error;         /* relative RMS error of the fit over its runs (0 if not fitted) */
  unsigned samples;         /* runs it was fitted on (0: built-in guess) */
} eph_sim_costmodel;

typedef struct eph_sim_result {
  eph_sim_collector collector;
  eph_sim_input_kind input;
  uint64_t scavenges, full_gcs;  /* collections by kind */
  uint64_t bytes_allocated;      /* the clock at the end */
  uint64_t bytes_allocated_old;  /* allocated straight into old space */
  uint64_t bytes_copied;         /* survivors copied within the young generation */
  uint64_t bytes_promoted;       /* bytes tenured */
  uint64_t bytes_overflowed;     /* of which tenured young because a survivor space was full (spur) */
  uint64_t bytes_marked;         /* live bytes traced by full GCs */
  uint64_t bytes_compacted;      /* bytes moved by compaction */
  uint64_t remembered;           /* remembered-set insertions */
  uint64_t peak_committed;       /* bytes */
  uint64_t peak_used;            /* bytes in objects at a collection's start, highest */
  uint64_t heap_bytes;           /* ss/fg/vg/of: the heap size used */
  double mark_cons;              /* (copied + promoted + marked) / allocated */
  double space_time;             /* committed bytes integrated over the allocation clock (byte^2) */
  double gc_seconds;             /* predicted by the cost model */
  double gc_seconds_low, gc_seconds_high; /* a range when the input is sampled; else equal */
  /* Cost features (eph_sim_costmodel): */
  double collection_mib;         /* sum over collections of MiB committed then */
  uint64_t remembered_scanned;   /* remembered-set entries scanned by scavenges */
  uint64_t objects_moved;        /* objects copied or promoted */
  double objects_far;            /* objects scavenges moved x log2(eden / 256K), at least 0 (spur) */
  double bytes_far;              /* bytes scavenges moved x log2(eden / 256K), at least 0 (spur) */
  uint64_t slots_scanned;        /* pointer slots scanned by scavenges in copied objects (trace input; else 0) */
  uint64_t remembered_slots;     /* pointer slots scanned by scavenges in remembered-set entries (idem) */
  uint64_t slots_traced;         /* pointer slots scanned by full GCs (trace input; else 0) */
  /* Sampled input: the same figures with every death at its earliest
   * (alive_until); the fields above take the latest.  Else equal to them. */
  struct {
    uint64_t scavenges, full_gcs, bytes_copied, bytes_promoted, peak_committed;
  } early;
  bool exhausted;                /* the configuration could not run the program (max heap) */
  eph_sim_event *events;         /* keep_events: owned, free with eph_sim_result_free */
  size_t nevents;
} eph_sim_result;

/*
 * Simulates cfg over in and fills *res (cm may be NULL: the built-in
 * default model).  Returns EPH_ERR_INVALID with a message for a config the
 * input cannot drive (e.g. a collector without the object graph it needs),
 * EPH_ERR_NOMEM if memory ran out.  res->events is owned by the caller.
 */
eph_status eph_sim_run(const eph_sim_input *in, const eph_sim_config *cfg, const eph_sim_costmodel *cm,
                       eph_sim_result *res, eph_error *err);
void eph_sim_result_free(eph_sim_result *res);

/* log2(eden_bytes / 256 KiB), at least 0: the cost model's distance of a
 * scavenge's survivors from the caches (per_object_far). */
double eph_sim_eden_distance(uint64_t eden_bytes);

/* The predicted GC seconds of res under cm (the sum of its features). */
double eph_sim_predict(const eph_sim_costmodel *cm, const eph_sim_result *res);

/* --- granularity ------------------------------------------------------------ */

/*
 * The error table of TOPLAS 2006 §5: for each granule of `granules` and each
 * scheme, the relative error of mark/cons and of the collection count
 * against the exact input (granule 0, natural points), for cfg.  errors
 * gets ngranules * EPH_SIM_NSYNC pairs (mark/cons error, count error), row
 * by granule.  EPH_ERR_INVALID if the input is not exact (a trace or Merlin
 * lifetimes).
 */
eph_status eph_sim_granularity_table(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *granules,
                                     size_t ngranules, double *errors, eph_error *err);
/* The input's own granule (meta `granule` of a granulated trace), 0 if exact. */
uint64_t eph_sim_input_granule(const eph_sim_input *in);

/* --- the cost model ------------------------------------------------------- */

/* The built-in model (rough figures of a 2020s x86-64 core), used until
 * `ephemera sim calibrate` has fitted one. */
void eph_sim_costmodel_default(eph_sim_costmodel *cm);
/* $XDG_CONFIG_HOME/ephemera/costmodel or ~/.config/ephemera/costmodel into
 * buf; false if neither variable is set or buf is too small. */
bool eph_sim_costmodel_default_path(char *buf, size_t len);
/* Reads a model written by eph_sim_costmodel_save into *cm.  EPH_ERR_IO
 * when the file cannot be opened, EPH_ERR_INVALID with a message naming the
 * line for a malformed one (or naming what is missing); *cm unchanged then. */
eph_status eph_sim_costmodel_load(const char *path, eph_sim_costmodel *cm, eph_error *err);
/* Writes cm as `key value` lines (creating the parent directory).
 * EPH_ERR_IO with the system's message if the file cannot be written. */
eph_status eph_sim_costmodel_save(const char *path, const eph_sim_costmodel *cm, eph_error *err);

/* One real collection, as the heap's event log gives it: its measured
 * time and the features the model charges for. */
typedef struct eph_sim_observation {
  unsigned run;             /* the real run it belongs to (the fit weighs runs) */
  eph_gc_kind kind;
  double eden_bytes;        /* the run's eden size */
  double seconds;
  double copied, promoted, objects;
  double slots;             /* pointer slots scanned, all of them */
  double remembered_slots;  /* of which in remembered-set entries */
  double marked, compacted, remembered, mib_committed;
} eph_sim_observation;

/*
 * Fits the model to n observations: their features and times are summed
 * per run, and the coefficients (non-negative) minimise the sum of the
 * runs' absolute *relative* errors (least squares reweighted by each run's
 * inverse error), so that a 1 ms run counts as much as a 100 ms one and a
 * few runs a busy machine slowed do not pull the rest (runs under
 * EPH_SIM_FIT_MIN_SECONDS of GC are left out: timer noise).
 * Fills cm (0 for a feature never observed), fit_error = the RMS relative
 * error over the runs fitted, samples = their number, slots_per_byte.
 * EPH_ERR_INVALID with a message if fewer than 8 runs qualify or the
 * features cannot determine any coefficient.
 */
#define EPH_SIM_FIT_MIN_SECONDS 0.0005
eph_status eph_sim_costmodel_fit(const eph_sim_observation *obs, size_t n, eph_sim_costmodel *cm, eph_error *err);

/* Reads the model at path; with path NULL, the default file
 * (eph_sim_costmodel_default_path) if it loads, else the built-in model.
 * With a path: eph_sim_costmodel_load's errors; without one: EPH_OK. */
eph_status eph_sim_costmodel_resolve(const char *path, eph_sim_costmodel *cm, eph_error *err);

/* --- labels ------------------------------------------------------------------ */

/* A size as "4K", "1M", "2G" when a whole number of them, else in bytes. */
void eph_sim_size_text(char *buf, size_t len, uint64_t bytes);
/* One configuration's label, e.g. "spur eden=1M,ratio=0.33,tenure=3" or
 * "ss heap=4M"; with res, a heap given as a factor shows its size too
 * ("ss heap=4M (2x)"). */
void eph_sim_config_label(const eph_sim_config *cfg, const eph_sim_result *res, char *buf, size_t len);

/* --- many configurations over one input (`ephemera sim`) ------------------- */

/* A heap size of ss/fg/vg/of: bytes, or (bytes 0) a multiple of the minimum heap. */
typedef struct eph_sim_heap_size {
  uint64_t bytes;
  double factor;
} eph_sim_heap_size;

/* The configurations a command asks for. */
typedef struct eph_sim_plan {
  eph_sim_collector collector;
  const char *const *gc;           /* spur: one configuration per GC parameter string (none: the defaults) */
  size_t ngc;
  const eph_sim_heap_size *heaps;  /* ss/fg/vg/of: one configuration per heap size (none: 2x) */
  size_t nheaps;
  uint64_t nursery_bytes;          /* as eph_sim_config's */
  uint64_t granule;
  eph_sim_sync sync;
  bool keep_events;
} eph_sim_plan;

/* Fills cfgs[0..*n), at most cap of them, from plan.  EPH_ERR_INVALID with a
 * message: a GC parameter string that does not parse (eph_gc_params_parse's
 * message), GC parameters for a collector other than spur or heap sizes for
 * spur, more than cap configurations. */
eph_status eph_sim_plan_configs(const eph_sim_plan *plan, eph_sim_config *cfgs, size_t cap, size_t *n,
                                eph_error *err);

/* Every configuration simulated over one input, and what its renderer
 * (src/render/render_sim.h) needs to show it. */
typedef struct eph_sim_report {
  const char *input_name;         /* as the caller named the input (not owned) */
  const eph_sim_input *input;     /* not owned */
  eph_sim_costmodel model;        /* the model the predictions used */
  const eph_sim_config *configs;  /* not owned: n of them */
  eph_sim_result *results;        /* owned (eph_sim_report_free): results[i] of configs[i] */
  size_t n;
} eph_sim_report;

/* Simulates cfgs[0..n) over in (cm NULL: the built-in model) into *out.
 * On failure eph_sim_run's error, with nothing left to free. */
eph_status eph_sim_run_all(const eph_sim_input *in, const char *input_name, const eph_sim_config *cfgs, size_t n,
                           const eph_sim_costmodel *cm, eph_sim_report *out, eph_error *err);
void eph_sim_report_free(eph_sim_report *r); /* NULL allowed */

/* eph_sim_granularity_table of each configuration. */
typedef struct eph_sim_granularity_report {
  const eph_sim_config *configs;  /* not owned */
  size_t n;                       /* tables computed (on failure, those before the one that failed) */
  const uint64_t *granules;       /* not owned */
  size_t ngranules;
  double *errors;                 /* owned: table i at errors + i * ngranules * EPH_SIM_NSYNC * 2 */
} eph_sim_granularity_report;

/* The error table of each of cfgs[0..n) into *out.  On failure
 * eph_sim_granularity_table's error (or EPH_ERR_NOMEM), and out->n tables
 * are still there to show; free *out either way. */
eph_status eph_sim_granularity_all(const eph_sim_input *in, const eph_sim_config *cfgs, size_t n,
                                   const uint64_t *granules, size_t ngranules, eph_sim_granularity_report *out,
                                   eph_error *err);
void eph_sim_granularity_report_free(eph_sim_granularity_report *g); /* NULL allowed */

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_SIM_H */
