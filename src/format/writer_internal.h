/*
 * writer_internal.h — the eph_writer's state, shared by the framing
 * (writer.c) and the record encoding (writer_records.c).  Private to
 * src/format.
 */
#ifndef EPH_WRITER_INTERNAL_H
#define EPH_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <zlib.h>

#include "format_internal.h"
#include "writer_profiler.h"

/* Tables first (B_CLASSES..B_STACKS are written before any data chunk). */
enum { B_META, B_CLASSES, B_SITES, B_STACKS, B_GCS, B_RECORDS, B_EVENTS, B_CLOSE, NBUF };
#define B_LAST_TABLE B_STACKS

static const uint32_t BUF_TYPE[NBUF] = {EPHF_CHUNK_META, EPHF_CHUNK_CLASSES, EPHF_CHUNK_SITES,  EPHF_CHUNK_STACKS,
                                        EPHF_CHUNK_GCS,  EPHF_CHUNK_RECORDS, EPHF_CHUNK_EVENTS, EPHF_CHUNK_CLOSE};

typedef struct site_def {
  char *file, *function; /* file != NULL: declared */
  int line;
} site_def;

typedef struct ephf_async ephf_async; /* writer_async.c */

struct eph_writer {
  int fd;
  char *path;
  bool compress;
  eph_status failed; /* sticky: a write failed */
  char error[256];
  z_stream z;
  bool z_ready;
  ephf_buf zout;
  ephf_buf buf[NBUF]; /* each starts with EPHF_CHUNK_HEADER_LEN reserved bytes */
  /* Delta bases, reset with each chunk (chunks decode on their own). */
  ephf_rec_ctx rec;
  /* The current batch (eph_writer_batch).  synced: the record context's
   * death and kind are the batch's; au_synced: so is its alive_until (the
   * context's au_base, or the death).  Records then need not code them. */
  struct {
    eph_stamp death, alive_until;
    unsigned kind;
    bool au_is_death;
    bool synced, au_synced;
  } batch;
  uint64_t gc_prev_index, gc_prev_start, gc_prev_allocated;
  uint64_t ev_prev_time, ev_prev_obj;
  /* Declared ids as bitmaps (bit 0, "unknown", always set): the per-record check. */
  uint64_t *class_bits, *site_bits;
  size_t class_words, site_words;
  /* A fork (eph_writer_fork): no file; its chunks go to `spool` until
   * eph_writer_join appends them to the parent's.  The bitmaps above are
   * copies of the parent's at the last eph_writer_fork_sync. */
  eph_writer *parent;
  ephf_buf spool;
  /* Each data chunk is decoded before it is sealed (chunk_checks_wanted),
   * with this scratch state. */
  bool check_chunks;
  ephf_builder check;
  /* Declared tables, indexed by id. */
  char **classes;
  size_t classes_cap;
  site_def *sites;
  size_t sites_cap;
  /* Declared stacks: callers per site id (ncallers 0: none yet). */
  eph_stack_entry *stacks;
  size_t stacks_cap;
  /* Not NULL: records, GC events and trace events are queued (a writer
   * with its own thread, or a fork of one: writer_async.c).  Everything
   * above then belongs to the writer's thread between two waits
   * (ephf_async_wait), and the calling thread uses only `q`. */
  ephf_async *q;
  /* The replica of the profiler's clock tables that stamps clocked
   * records (writer_clock.c); clock NULL until eph_writer_clock_start. */
  void *clock;
  eph_writer_clock_ops clock_ops;
  /* eph_writer_clocked_room's and _batch_clocked_room's room when there
   * is no thread. */
  eph_clocked_record clocked_scratch[64];
  eph_batch_clocked_record batch_clocked_scratch[64];
  eph_packed_record packed_scratch[64];
  /* eph_writer_set_unpacker's: packed records' decoder and its data. */
  eph_record_unpacker *unpack;
  const void *unpack_ctx;
};

/* The encoders of writer_records.c and writer.c, which the public entry
 * points (writer_async.c) call at once when the writer has no thread, and
 * the writer's thread calls for queued items.  They check their arguments
 * as the public functions document. */
eph_status ephf_record_now(eph_writer *w, const eph_record *r);
eph_status ephf_record_to_death_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                    const eph_stamp *birth, const eph_stamp *death, unsigned death_kind);
void ephf_batch_now(eph_writer *w, const eph_stamp *death, const eph_stamp *alive_until, unsigned death_kind);
eph_status ephf_batch_record_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                 const eph_stamp *birth, bool until_birth);
eph_status ephf_gc_now(eph_writer *w, const eph_gc_event *ev);
/* writer_clock.c */
eph_status ephf_clock_start_now(eph_writer *w, const eph_writer_clock_ops *ops, uint64_t bytes, uint64_t wall_ns,
                                uint32_t minor0, uint32_t major0);
eph_status ephf_clock_point_now(eph_writer *w, uint64_t bytes, uint64_t wall_ns);
eph_status ephf_clock_step_now(eph_writer *w, uint64_t bytes, bool major);
eph_status ephf_record_clocked_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, uint64_t birth,
                                   uint64_t death, unsigned death_kind);
eph_status ephf_batch_record_clocked_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                         double weight, uint64_t birth, bool until_birth);
void ephf_clock_free(eph_writer *w);
size_t ephf_clock_memory(const eph_writer *w); /* the replica's tables */
eph_status ephf_event_now(eph_writer *w, const eph_event *ev);

/*
 * A writer with a queue (w->q): hands the batch being filled to the
 * thread and waits until the thread has written everything queued, so
 * that the caller may use w's state directly.  Returns the first error
 * the thread met (EPH_OK if none), with its message in w->error.  No-op
 * (EPH_OK) for a writer without a queue.
 */
eph_status ephf_async_wait(eph_writer *w);
/* Ends w's thread after ephf_async_wait and frees w->q (close, fork close). */
void ephf_async_free(eph_writer *w);
/* A fork of a writer with a thread: its records are kept as queued items
 * until the join (false: out of memory). */
bool ephf_async_fork(eph_writer *fork);
/* Moves a queued fork's items to its parent's queue, after the parent's. */
eph_status ephf_async_join(eph_writer *fork);
/* The queue's memory (batches and the writer's buffers at the last wait). */
size_t ephf_async_memory(const eph_writer *w);

/* Sets w's error message; returns st (the writer stays usable unless the
 * caller also sets w->failed). */
eph_status ephf_writer_fail(eph_writer *w, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Makes room for an item of at most n bytes in buffer `which`, writing a
 * full buffer first (tables alone; data after the tables). */
eph_status ephf_writer_make_room(eph_writer *w, int which, size_t n);

/* Writes data buffer `which` as a chunk, after the table entries it may use. */
eph_status ephf_writer_write_data(eph_writer *w, int which);

/* Whether a class or site id was declared (bit 0, "unknown", always set). */
static inline bool ephf_id_declared(const uint64_t *bits, size_t words, uint64_t id) {
  return (id >> 6) < words && ((bits[id >> 6] >> (id & 63)) & 1);
}
static inline bool ephf_class_declared(const eph_writer *w, uint64_t id) {
  return ephf_id_declared(w->class_bits, w->class_words, id);
}
static inline bool ephf_site_declared(const eph_writer *w, uint64_t id) {
  return ephf_id_declared(w->site_bits, w->site_words, id);
}

#endif /* EPH_WRITER_INTERNAL_H */
