/*
 * writer_profiler.h — the writer's calls that only the profilers make
 * (the heap's, src/profile, and the runtime adapters', src/runtime): records found
 * dead together, exact lifetimes, forks for a second thread, and the
 * writer's own memory.  The same file as eph_writer_record would write, at
 * less cost.  Not part of the public API (ephemera/format.h); both
 * profilers are linked with the format library.
 */
#ifndef EPH_WRITER_PROFILER_H
#define EPH_WRITER_PROFILER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"

/*
 * Records found dead together, as a collection finds them: after
 * eph_writer_batch, each eph_writer_batch_record writes the record with
 * that death, death kind and alive_until (or, when until_birth, alive
 * until its birth) and id = birth.bytes.  The file is as if each were
 * written with eph_writer_record; the writer only skips what the batch
 * already settled, which makes a record about a third as dear.  Another
 * eph_writer_batch starts a new batch (say, another alive_until);
 * eph_writer_record may be called in between.
 */
/*
 * A record whose id is birth.bytes and whose alive_until is its death, as
 * exact lifetimes have (Merlin): the file is as if it were written with
 * eph_writer_record, at less cost (no eph_record to fill, no choice for
 * id, weight and alive_until when they follow the previous record).
 */
eph_status eph_writer_record_to_death(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                      const eph_stamp *birth, const eph_stamp *death, unsigned death_kind);

/*
 * Clocked records: the writer keeps a replica of the profiler's clock
 * tables (src/sampling/clock_table.h) through `ops`, the profiler's own
 * code, when the profiler calls eph_writer_clock_start, _point and _step
 * with the arguments it gives its own tables, right after it changes
 * them.  eph_writer_record_clocked then takes the birth and death as
 * points of the byte clock, and writes what eph_writer_record_to_death
 * would with the stamps the profiler's tables give them at the call
 * (weight 1); a writer with a thread looks them up on its thread, so the
 * program's thread queues 32 bytes for the record instead of 80.  Errors
 * (out of memory for the replica, a clocked record before the start)
 * fail the writer as a record's would.
 */
typedef struct eph_writer_clock_ops {
  /* New tables, as the caller's were started; NULL: out of memory. */
  void *(*start)(uint64_t bytes, uint64_t wall_ns, uint32_t minor0, uint32_t major0);
  bool (*point)(void *tables, uint64_t bytes, uint64_t wall_ns); /* false: out of memory */
  bool (*step)(void *tables, uint64_t bytes, bool major);        /* false: out of memory */
  /* The stamp of `bytes`; cache 0 serves births, 1 deaths (each come in order). */
  eph_stamp (*stamp)(void *tables, uint64_t bytes, unsigned cache);
  size_t (*memory)(const void *tables);
  void (*free)(void *tables);
} eph_writer_clock_ops;

/* ops must outlive the writer (a static table). */
eph_status eph_writer_clock_start(eph_writer *w, const eph_writer_clock_ops *ops, uint64_t bytes, uint64_t wall_ns,
                                  uint32_t minor0, uint32_t major0);
eph_status eph_writer_clock_point(eph_writer *w, uint64_t bytes, uint64_t wall_ns);
eph_status eph_writer_clock_step(eph_writer *w, uint64_t bytes, bool major);
eph_status eph_writer_record_clocked(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                     uint64_t birth, uint64_t death, unsigned death_kind);

/* A clocked record, as eph_writer_clocked_room gives room for them. */
typedef struct eph_clocked_record {
  uint32_t class_id, site_id;
  uint64_t size, birth, death;
} eph_clocked_record;

/*
 * eph_writer_record_clocked for a run of records of one death kind,
 * filled in place: eph_writer_clocked_room gives room for *room records
 * (at least one), in the batch a writer with a thread is filling, or in
 * the writer's scratch; the caller fills the first n in order and hands
 * them over with eph_writer_clocked_filled(w, n, kind), n <= *room.  In
 * between it must call nothing else of w's (declaring a class, say):
 * Merlin writes a collection's dead this way, with no copy between its
 * walk and the queue.  NULL: a fork out of memory.
 */
eph_clocked_record *eph_writer_clocked_room(eph_writer *w, size_t *room);
/* Stops at the first error (a writer without a thread encodes them now). */
eph_status eph_writer_clocked_filled(eph_writer *w, size_t n, unsigned death_kind);

void eph_writer_batch(eph_writer *w, const eph_stamp *death, const eph_stamp *alive_until, unsigned death_kind);
eph_status eph_writer_batch_record(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                   const eph_stamp *birth, bool until_birth);
/* eph_writer_batch_record with the birth a point of the byte clock,
 * stamped by the writer's replica of the clock tables as they stand at
 * the call (eph_writer_clock_start): on the writer's thread when it has
 * one.  Finalization mode hands over a record per death this way. */
eph_status eph_writer_batch_record_clocked(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                           double weight, uint64_t birth, bool until_birth);

/* A record of the current batch, as eph_writer_batch_clocked_room gives
 * room for them. */
typedef struct eph_batch_clocked_record {
  uint32_t class_id, site_id;
  uint64_t size;
  double weight;
  uint64_t birth;
} eph_batch_clocked_record;

/*
 * eph_writer_batch_record_clocked for a run of records of the current
 * batch, all !until_birth, filled in place as with
 * eph_writer_clocked_room (the same rules: nothing else of w's in
 * between): finalization mode's finalisers hand over their deaths a few
 * dozen at a time.  NULL: a fork out of memory.
 */
eph_batch_clocked_record *eph_writer_batch_clocked_room(eph_writer *w, size_t *room);
/* Stops at the first error (a writer without a thread encodes them now). */
eph_status eph_writer_batch_clocked_filled(eph_writer *w, size_t n);

/*
 * Records of the current batch in the producer's own two words, unpacked
 * by `unpack` into eph_batch_clocked_record on the writer's thread (or at
 * once without one): finalization mode's finalisers copy each dead
 * sample's tombstone and birth word, and leave the decoding (class, size,
 * site, birth, weight) to the thread that encodes.  `unpack` must be
 * safe to call from that thread: it may read only what stays unchanged
 * until the writer's next wait.  Set it (eph_writer_set_unpacker) before
 * the first packed run; rooms and hand-overs follow the rules of
 * eph_writer_batch_clocked_room.
 */
typedef struct eph_packed_record {
  uint64_t a, b;
} eph_packed_record;
typedef void eph_record_unpacker(const void *ctx, const eph_packed_record *in, size_t n, eph_batch_clocked_record *out);
void eph_writer_set_unpacker(eph_writer *w, eph_record_unpacker *unpack, const void *ctx);
eph_packed_record *eph_writer_batch_packed_room(eph_writer *w, size_t *room);
eph_status eph_writer_batch_packed_filled(eph_writer *w, size_t n);

/*
 * Forks: a second record stream, for a thread of the tool's own (gc mode
 * walks eden in two halves at once).  Records written to a fork, with
 * eph_writer_batch_record in the parent's current batch or with
 * eph_writer_record, are encoded in memory by the thread that writes them,
 * against the classes and sites the parent had declared at the last
 * eph_writer_fork_sync.  Until eph_writer_join, the parent may take
 * records and declare classes and sites (from one other thread; records
 * of the fork naming those fail) but must not start a batch or be
 * closed.  eph_writer_join appends the fork's records to the file after
 * the parent's so far; the fork stays, empty, for the next round (sync
 * it first).  Free a fork with eph_writer_close.
 *
 * Ownership: the parent belongs to one thread at a time.  A join writes
 * the parent, so it runs on the thread that owns the parent at that
 * moment, and no other thread may call the parent during it (a tool that
 * hands the parent to another thread for the joins does so under a lock
 * of its own, and never while the parent's thread starts or stops).  A
 * fork made before the parent had a thread (eph_writer_start_thread)
 * still joins correctly: its join first waits until the thread has
 * written all it was handed.
 */
eph_writer *eph_writer_fork(eph_writer *parent); /* NULL: out of memory, or parent is a fork */
void eph_writer_fork_sync(eph_writer *fork);
/* An error the fork met (out of memory) fails the parent for good. */
eph_status eph_writer_join(eph_writer *fork);

/*
 * Gives w a thread of its own (writer_async.c): from now on records, GC
 * events and trace events are copied into an in-memory batch, and the
 * thread encodes, checksums, compresses and writes full batches; the other
 * calls wait until the thread has written what was queued before them.
 * Forks made after it share the thread's batches; forks made before keep
 * encoding on their own thread and join as described above.  An error of a queued item is
 * returned by the next call that waits (declaring a table entry, a join,
 * a flush, the close), with its message in eph_writer_error.  Returns
 * EPH_OK, EPH_ERR_NOMEM or EPH_ERR_IO (the thread could not start: w
 * stays a writer without a thread and usable).
 */
eph_status eph_writer_start_thread(eph_writer *w);
/* Whether w writes on a thread of its own. */
bool eph_writer_has_thread(const eph_writer *w);
/* Ends w's thread once it has written all that was queued: from then on
 * w encodes and writes on the caller's thread, as a writer that never had
 * one.  Worth it where the caller would only wait for the thread (the
 * profile's stop): the hand-over of each batch and the fresh pages of the
 * queue's batches then cost more than the thread saves.  Returns the first
 * error of what the thread wrote, as a wait would; a no-op without a
 * thread, or once w has been forked (the forks share the thread's
 * batches, so it stays until the close). */
eph_status eph_writer_stop_thread(eph_writer *w);

/* Bytes the writer holds in its buffers (not its tables' strings); with a
 * thread, its queue and its buffers as of the last wait. */
size_t eph_writer_memory(const eph_writer *w);

/*
 * pthread_create with every signal blocked in the new thread, which keeps
 * them so: the program's handlers (SIGINT, SIGTERM stopping the profile at
 * a safe point) run on the program's threads only.  For the writer's
 * thread and the profiler's helpers.  Returns pthread_create's code.
 */
int eph_writer_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif /* EPH_WRITER_PROFILER_H */
