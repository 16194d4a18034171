/*
 * ephemera/format.h — the `.eph` file: profiles and event traces.
 * Layer: format, needing only base (docs/architecture.md).
 *
 * One versioned, chunked binary format for every runtime Ephemera profiles
 * (its own heap, Lua, full Merlin event traces).  The byte-level
 * specification is docs/eph-format.md.  In short: a file header, then
 * chunks, each with a type, a length and a CRC32; chunks are written as
 * they fill, so a killed process leaves a file that reads up to its last
 * complete chunk.  A closing chunk with totals marks a complete file.
 *
 * Writers append through eph_writer; every tool reads through eph_reader,
 * which checks everything it reads and reports bad input as one message
 * naming the byte offset — never a crash.
 */
#ifndef EPHEMERA_FORMAT_H
#define EPHEMERA_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/base.h"
#include "ephemera/gc_event.h"

#ifdef __cplusplus
extern "C" {
#endif
EPH_API_BEGIN

/* The version this library writes and the only one it reads (2: compact
 * records, docs/eph-format.md §9). */
#define EPH_FORMAT_VERSION 2

/* Largest class or site id a file may use (ids index dense tables). */
#define EPH_FORMAT_MAX_ID ((1u << 20) - 1)

/* Most callers a call stack may list (docs/eph-format.md §5.7). */
#define EPH_FORMAT_MAX_STACK 255

/* How a sampled object's life ended (or did not). */
typedef enum eph_death_kind {
  EPH_DEATH_FINALIZED = 1,  /* finalization mode: its ephemeron's finaliser ran */
  EPH_DEATH_SCAVENGE = 2,   /* gc mode: a scavenge found it dead */
  EPH_DEATH_FULL_GC = 3,    /* gc mode: a full GC found it dead */
  EPH_DEATH_CENSORED = 4,   /* alive at exit: lifetime is a lower bound */
  EPH_DEATH_EXACT = 5,      /* merlin or brute: last-reachable time */
  EPH_DEATH_FREED = 6,      /* an allocator hook saw it freed (Lua) */
} eph_death_kind;

/* A point in the run's three clocks. */
typedef struct eph_stamp {
  uint64_t bytes;    /* bytes allocated so far (the GC clock) */
  uint64_t wall_ns;  /* wall time since the run started */
  uint32_t scavenges, full_gcs; /* collections completed so far */
} eph_stamp;

/* One sampled object. */
typedef struct eph_record {
  uint64_t id;       /* unique in the file, in allocation order */
  uint32_t class_id; /* index into the class table */
  uint32_t site_id;  /* index into the site table, 0 = unknown */
  uint64_t size;     /* bytes, header included */
  double weight;     /* how many allocated objects this sample stands for (1 when unsampled) */
  eph_stamp birth;
  eph_stamp death;   /* for censored records: the end of the run */
  /* For deaths found by a collector: the last point the object was known
   * alive (the last collection it survived, or its birth); the death lies
   * in (alive_until, death].  Equal to death for exact and finalised ones. */
  eph_stamp alive_until;
  uint8_t death_kind; /* eph_death_kind */
} eph_record;

/* A run's metadata: free-form key/value pairs, with well-known keys:
 * runtime ("ephemera" | "lua"), program, workload, size, gc, mode, sample,
 * classes, host, date, command. */
typedef struct eph_meta_pair {
  const char *key, *value;
} eph_meta_pair;

/* The closing totals. */
typedef struct eph_totals {
  uint64_t wall_ns, cpu_ns, gc_wall_ns;
  uint64_t bytes_allocated, objects_allocated; /* objects: 0 if unknown */
  uint64_t records, censored;
  uint64_t scavenges, full_gcs;
  uint64_t peak_heap; /* committed bytes */
} eph_totals;

/* Trace events (Merlin traces; see docs/eph-format.md).  A trace file is a
 * profile file with event chunks; tools that do not know a chunk type skip it. */
typedef enum eph_event_kind {
  EPH_EV_ALLOC = 1,   /* obj; a = class id; b = size; c = site id | (eph_format << 32) */
  EPH_EV_STORE = 2,   /* obj (source), slot, old, new */
  EPH_EV_ROOT = 3,    /* obj: a root target stamped at this time */
  EPH_EV_DEATH = 4,   /* obj */
  EPH_EV_GC = 5,      /* a = eph_gc_kind, b = 0 start / 1 end */
  EPH_EV_TICK = 6,    /* time advanced to `time` bytes */
} eph_event_kind;

typedef struct eph_event {
  uint8_t kind;   /* eph_event_kind */
  uint64_t time;  /* bytes allocated when it happened */
  uint64_t obj;   /* object id */
  uint64_t a, b, c; /* kind-specific, see eph_event_kind */
} eph_event;

/* --- writing ---------------------------------------------------------------- */

typedef struct eph_writer eph_writer;

/*
 * Creates path and writes the header and metadata.  compress: deflate each
 * chunk (zlib).  Returns NULL and fills err on failure.
 */
eph_writer *eph_writer_open(const char *path, const eph_meta_pair *meta, size_t nmeta, bool compress, eph_error *err);

/* Table entries; ids are chosen by the caller (small, dense, from 1, at
 * most EPH_FORMAT_MAX_ID).  Declaring an id again identically is a no-op,
 * differently EPH_ERR_INVALID.  Records and ALLOC events may only name
 * declared classes and sites (or 0, unknown): EPH_ERR_INVALID otherwise.
 * A failed write(2) (disk full, EBADF) fails the writer for good; as
 * eph_status has no I/O code it is reported as EPH_ERR_INVALID with the
 * system's message in eph_writer_error. */
eph_status eph_writer_class(eph_writer *w, uint32_t id, const char *name);
eph_status eph_writer_site(eph_writer *w, uint32_t id, const char *file, int line, const char *function);
eph_status eph_writer_record(eph_writer *w, const eph_record *r);
eph_status eph_writer_gc(eph_writer *w, const eph_gc_event *ev);
/*
 * A call stack (docs/eph-format.md §5.7): the allocations of site site_id
 * were made from these callers, innermost first (callers[0] called the
 * function that allocated).  site_id and every caller are sites declared
 * before; ncallers in 1..EPH_FORMAT_MAX_STACK.  A writer that records
 * stacks gives each distinct stack its own site id (declared with its
 * leaf's file, line and function) and puts "stacks" = its depth limit in
 * the metadata.  Declaring a site's stack again identically is a no-op,
 * differently EPH_ERR_INVALID.
 */
eph_status eph_writer_stack(eph_writer *w, uint32_t site_id, const uint32_t *callers, size_t ncallers);
eph_status eph_writer_event(eph_writer *w, const eph_event *ev);

/* (The heap's profiler writes records found dead together, exact
 * lifetimes and records from a second thread through cheaper calls:
 * src/format/writer_profiler.h, not part of the API.) */

/* Writes the buffered chunk now (the writer also does when a chunk fills). */
eph_status eph_writer_flush(eph_writer *w);

/* Writes the closing chunk and closes the file; frees w.  NULL allowed.
 * totals NULL: zero totals.  On a failed write the file stays incomplete. */
eph_status eph_writer_close(eph_writer *w, const eph_totals *totals);

/* Message of the writer's last error.  eph_writer_error(NULL): the message
 * of this thread's last eph_writer_close that failed (w is gone by then). */
const char *eph_writer_error(const eph_writer *w);

/* --- reading ------------------------------------------------------------------ */

typedef struct eph_site_entry {
  char *file;
  char *function;
  int line;
} eph_site_entry;

/* A site's call stack: its callers, innermost first (ncallers 0: none). */
typedef struct eph_stack_entry {
  uint32_t *callers;
  uint32_t ncallers;
} eph_stack_entry;

/* A whole file in memory. */
typedef struct eph_file {
  uint32_t version;
  eph_meta_pair *meta;   /* owned strings */
  size_t nmeta;
  char **class_names;    /* indexed by class id; NULL where undefined */
  size_t nclasses;       /* highest id + 1 */
  eph_site_entry *sites; /* indexed by site id; file NULL where undefined */
  size_t nsites;
  eph_record *records;
  size_t nrecords;
  eph_gc_event *gcs;
  size_t ngcs;
  eph_event *events;
  size_t nevents;
  eph_totals totals;
  bool complete;         /* the closing chunk was read */
  uint64_t valid_bytes;  /* bytes read up to the last good chunk */
  char warning[256];     /* e.g. "truncated at byte 81920: read up to the last complete chunk" */
  eph_stack_entry *stacks; /* indexed by site id (STAK chunks); NULL when the file has none */
  size_t nstacks;          /* highest site id with a stack + 1 */
} eph_file;

/*
 * Reads path.  A truncated file (a killed run) loads up to its last
 * complete chunk with complete == false and a warning; anything malformed
 * (bad magic, unknown version, bad CRC, impossible lengths or values)
 * fails with EPH_ERR_INVALID and a message naming the byte offset.
 */
eph_status eph_file_load(const char *path, eph_file **out, eph_error *err);

/* The same from memory (used by the fuzz target). */
eph_status eph_file_load_buffer(const uint8_t *data, size_t len, eph_file **out, eph_error *err);

/*
 * Records handed over as they are decoded instead of kept in the profile,
 * for tools that turn each into something smaller: a loaded record takes
 * 112 bytes, and a profile at 100 % sampling holds tens of millions.  fn
 * gets each good chunk's records, in file order, before the next chunk is
 * read; p->records stays NULL and p->nrecords counts them.  fn returns
 * false when out of memory, which fails the load with EPH_ERR_NOMEM.  A
 * load that fails may have handed over records before it did.
 */
typedef struct eph_record_sink {
  bool (*fn)(void *ctx, const eph_record *records, size_t n);
  void *ctx;
} eph_record_sink;
eph_status eph_file_load_with(const char *path, const eph_record_sink *sink, eph_file **out, eph_error *err);
eph_status eph_file_load_buffer_with(const uint8_t *data, size_t len, const eph_record_sink *sink, eph_file **out,
                                        eph_error *err);

/* Looks up a metadata value, or NULL. */
const char *eph_file_meta(const eph_file *p, const char *key);

void eph_file_free(eph_file *p);

EPH_API_END
#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_FORMAT_H */
