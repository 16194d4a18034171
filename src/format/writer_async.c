/*
 * writer_async.c — the writer's own thread: records, GC events and trace
 * events appended to an in-memory batch by the program's thread, and
 * encoded, checksummed, compressed and written by the writer's thread.
 *
 * The program's thread (the mutator) copies each item, as its arguments,
 * into the batch it fills (a few stores: no encoding, no table check).  A
 * full batch goes into a ring of at most RING batches, guarded by one
 * mutex and two condition variables; the writer's thread takes them in
 * order and calls the same encoders a writer without a thread calls at
 * once (writer_records.c, writer.c), so the file is the one those write.
 * When the ring is full, the mutator waits for room: memory stays bounded.
 *
 * Everything else (declaring a class, a site or a stack, flushing,
 * closing, joining a fork) first waits until the thread has written all
 * that was queued (ephf_async_wait), then runs on the caller's thread
 * (eph_writer_stop_thread waits likewise, then ends the thread for good):
 * a table entry is still written before the records that name it, and
 * between two waits the writer's state belongs to the thread alone.  The
 * guarantee of the file is unchanged: each chunk is one write(2), so a
 * process killed at any moment leaves a file that reads up to its last
 * complete chunk; what was still queued is lost, as a writer's unfilled
 * buffer always was.
 *
 * A fork of a writer with a thread (eph_writer_fork) fills batches of its
 * own, taken from the parent's spares, and keeps the full ones in order;
 * eph_writer_join queues them all after the parent's.  Its records are
 * then encoded in the parent's record stream, in the batch the parent had
 * started.
 */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"
#include "writer_internal.h"
#include "writer_profiler.h"

#define BATCH_BYTES ((size_t)128 << 10) /* one batch: about 2300 records of a collection */
#define RING 128   /* batches queued at most: 16 MiB, the records of a scavenge of a 15 MB eden in Merlin mode */
#define SPARES 32  /* empty batches kept for reuse (more are freed) */

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif

/* The queued items: each starts with its tag; sizes are multiples of 8. */
enum {
  OP_BATCH = 1, OP_BATCH_RECORD, OP_TO_DEATH, OP_RECORD, OP_GC, OP_EVENT,
  OP_CLOCK_START, OP_CLOCK_POINT, OP_CLOCK_STEP, OP_CLOCKED, OP_CLOCKED_WIDE, OP_BATCH_CLOCKED, OP_CLOCKED_RUN,
  OP_BATCH_CLOCKED_RUN, OP_BATCH_PACKED_RUN
};

typedef struct op_batch {
  uint32_t tag, kind;
  eph_stamp death, alive_until;
} op_batch;

typedef struct op_batch_record {
  uint32_t tag, class_id, site_id, until_birth;
  uint64_t size;
  double weight;
  eph_stamp birth;
} op_batch_record;

/* A batch record stamped by the replica: until_birth in the tag's bit 8. */
typedef struct op_batch_clocked {
  uint32_t tag, class_id, site_id, pad;
  uint64_t size;
  double weight;
  uint64_t birth;
} op_batch_clocked;

typedef struct op_to_death {
  uint32_t tag, class_id, site_id, kind;
  uint64_t size;
  double weight;
  eph_stamp birth, death;
} op_to_death;

typedef struct op_clock_start {
  uint32_t tag, pad;
  const eph_writer_clock_ops *ops;
  uint64_t bytes, wall_ns;
  uint32_t minor0, major0;
} op_clock_start;

typedef struct op_clock_point { /* and a step: wall_ns is then whether it was major */
  uint32_t tag, pad;
  uint64_t bytes, wall_ns;
} op_clock_point;

/* A clocked record, the common one: the death kind in the tag's high
 * bits, a size below 4 GiB.  The wide one has a size of 64 bits. */
typedef struct op_clocked {
  uint32_t tag, class_id, site_id, size;
  uint64_t birth, death;
} op_clocked;

typedef struct op_clocked_wide {
  uint32_t tag, class_id, site_id, pad;
  uint64_t size, birth, death;
} op_clocked_wide;

/* A run filled in place: n items follow.  OP_CLOCKED_RUN: clocked
 * records of one death kind (the tag's high bits), as eph_clocked_record;
 * OP_BATCH_CLOCKED_RUN: records of the current batch, not until_birth, as
 * eph_batch_clocked_record; OP_BATCH_PACKED_RUN: the same as
 * eph_packed_record, for the writer's unpacker. */
typedef struct op_run {
  uint32_t tag, n;
} op_run;

typedef struct op_record {
  uint32_t tag, pad;
  eph_record r;
} op_record;

typedef struct op_gc {
  uint32_t tag, pad;
  eph_gc_event ev;
} op_gc;

typedef struct op_event {
  uint32_t tag, pad;
  eph_event ev;
} op_event;

struct ephf_async {
  /* The calling thread's. */
  ephf_buf cur;         /* the batch being filled */
  bool is_fork;         /* a fork's: full batches wait in `held` for the join */
  eph_status status;    /* a fork's: it ran out of memory */
  ephf_async *pool;     /* a fork's: its parent's queue, whose spares it takes */
  ephf_buf *held;       /* a fork's full batches, in order */
  size_t nheld, held_cap;
  size_t writer_memory; /* the writer's buffers at the last wait */
  /* Shared, under mu. */
  pthread_mutex_t mu;
  pthread_cond_t work; /* a batch was queued, or stop */
  pthread_cond_t done; /* a batch was taken or written */
  ephf_buf ring[RING];
  unsigned head, count;
  ephf_buf spare[SPARES];
  unsigned nspare;
  size_t batch_bytes; /* the batches' memory: queued, being written, spare, and the forks' */
  bool busy, stop;
  bool forked; /* a fork shares its batches: the thread stays to the close */
  eph_status thread_status; /* the first error of a queued item not yet reported */
  char thread_error[sizeof ((eph_writer *)0)->error];
  bool has_thread;
  pthread_t thread;
};

/* --- the writer's thread -------------------------------------------------------- */

/* The encoders of a run filled in place (eph_writer_clocked_room,
 * eph_writer_batch_clocked_room): on the writer's thread for a queued
 * run, at once for a writer without one.  Stop at the first error. */
static eph_status clocked_run_now(eph_writer *w, const eph_clocked_record *r, size_t n, unsigned death_kind) {
  for (size_t i = 0; i < n; i++) {
    eph_status st = ephf_record_clocked_now(w, r[i].class_id, r[i].site_id, r[i].size, r[i].birth, r[i].death, death_kind);
    if (st != EPH_OK) return st;
  }
  return EPH_OK;
}

static eph_status batch_clocked_run_now(eph_writer *w, const eph_batch_clocked_record *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    eph_status st = ephf_batch_record_clocked_now(w, r[i].class_id, r[i].site_id, r[i].size, r[i].weight, r[i].birth, false);
    if (st != EPH_OK) return st;
  }
  return EPH_OK;
}

/* Unpacks a packed run a piece at a time, then encodes it as above. */
static eph_status batch_packed_run_now(eph_writer *w, const eph_packed_record *r, size_t n) {
  eph_batch_clocked_record out[64];
  for (size_t at = 0; at < n;) {
    size_t k = n - at < 64 ? n - at : 64;
    w->unpack(w->unpack_ctx, r + at, k, out);
    eph_status st = batch_clocked_run_now(w, out, k);
    if (st != EPH_OK) return st;
    at += k;
  }
  return EPH_OK;
}

/* Encodes one batch's items; the first error and its message in *first. */
static void run_batch(eph_writer *w, const uint8_t *p, size_t len, eph_status *first, char *msg, size_t msg_len) {
  for (size_t at = 0; at < len;) {
    const void *item = p + at;
    uint32_t tag;
    memcpy(&tag, item, sizeof tag);
    eph_status st = EPH_OK;
    switch (tag & 0xFF) {
      case OP_CLOCKED: {
        const op_clocked *o = item;
        st = ephf_record_clocked_now(w, o->class_id, o->site_id, o->size, o->birth, o->death, tag >> 8);
        at += sizeof *o;
        break;
      }
      case OP_CLOCKED_WIDE: {
        const op_clocked_wide *o = item;
        st = ephf_record_clocked_now(w, o->class_id, o->site_id, o->size, o->birth, o->death, tag >> 8);
        at += sizeof *o;
        break;
      }
      case OP_CLOCKED_RUN: {
        const op_run *o = item;
        st = clocked_run_now(w, (const eph_clocked_record *)(o + 1), o->n, tag >> 8);
        at += sizeof *o + o->n * sizeof(eph_clocked_record);
        break;
      }
      case OP_BATCH_CLOCKED_RUN: {
        const op_run *o = item;
        st = batch_clocked_run_now(w, (const eph_batch_clocked_record *)(o + 1), o->n);
        at += sizeof *o + o->n * sizeof(eph_batch_clocked_record);
        break;
      }
      case OP_BATCH_PACKED_RUN: {
        const op_run *o = item;
        st = batch_packed_run_now(w, (const eph_packed_record *)(o + 1), o->n);
        at += sizeof *o + o->n * sizeof(eph_packed_record);
        break;
      }
      case OP_CLOCK_START: {
        const op_clock_start *o = item;
        st = ephf_clock_start_now(w, o->ops, o->bytes, o->wall_ns, o->minor0, o->major0);
        at += sizeof *o;
        break;
      }
      case OP_CLOCK_POINT: {
        const op_clock_point *o = item;
        st = ephf_clock_point_now(w, o->bytes, o->wall_ns);
        at += sizeof *o;
        break;
      }
      case OP_CLOCK_STEP: {
        const op_clock_point *o = item;
        st = ephf_clock_step_now(w, o->bytes, o->wall_ns != 0);
        at += sizeof *o;
        break;
      }
      case OP_BATCH: {
        const op_batch *o = item;
        ephf_batch_now(w, &o->death, &o->alive_until, o->kind);
        at += sizeof *o;
        break;
      }
      case OP_BATCH_RECORD: {
        const op_batch_record *o = item;
        st = ephf_batch_record_now(w, o->class_id, o->site_id, o->size, o->weight, &o->birth, o->until_birth);
        at += sizeof *o;
        break;
      }
      case OP_BATCH_CLOCKED: {
        const op_batch_clocked *o = item;
        st = ephf_batch_record_clocked_now(w, o->class_id, o->site_id, o->size, o->weight, o->birth, (tag >> 8) & 1);
        at += sizeof *o;
        break;
      }
      case OP_TO_DEATH: {
        const op_to_death *o = item;
        st = ephf_record_to_death_now(w, o->class_id, o->site_id, o->size, o->weight, &o->birth, &o->death, o->kind);
        at += sizeof *o;
        break;
      }
      case OP_RECORD: {
        const op_record *o = item;
        st = ephf_record_now(w, &o->r);
        at += sizeof *o;
        break;
      }
      case OP_GC: {
        const op_gc *o = item;
        st = ephf_gc_now(w, &o->ev);
        at += sizeof *o;
        break;
      }
      case OP_EVENT: {
        const op_event *o = item;
        st = ephf_event_now(w, &o->ev);
        at += sizeof *o;
        break;
      }
      default: /* cannot happen: only this file writes the queue */
        fprintf(stderr, "ephemera: writer thread: bad queued item %u\n", (unsigned)tag);
        abort();
    }
    if (UNLIKELY(st != EPH_OK) && *first == EPH_OK) {
      *first = st;
      snprintf(msg, msg_len, "%s", w->error);
    }
  }
}

static void *writer_thread(void *arg) {
  eph_writer *w = arg;
  ephf_async *q = w->q;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    while (!q->count && !q->stop) pthread_cond_wait(&q->work, &q->mu);
    if (!q->count) break; /* stopped, and everything written */
    ephf_buf b = q->ring[q->head];
    q->head = (q->head + 1) % RING;
    q->count--;
    q->busy = true;
    pthread_cond_broadcast(&q->done); /* room in the ring */
    pthread_mutex_unlock(&q->mu);
    eph_status first = EPH_OK;
    char msg[sizeof q->thread_error];
    run_batch(w, b.p, b.len, &first, msg, sizeof msg);
    pthread_mutex_lock(&q->mu);
    if (first != EPH_OK && q->thread_status == EPH_OK) {
      q->thread_status = first;
      memcpy(q->thread_error, msg, sizeof msg);
    }
    b.len = 0;
    if (q->nspare < SPARES) {
      q->spare[q->nspare++] = b;
    } else {
      free(b.p);
      q->batch_bytes -= b.cap;
    }
    q->busy = false;
    pthread_cond_broadcast(&q->done);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL;
}

/* --- the calling thread --------------------------------------------------------- */

/* Queues batch *b (under q->mu), waiting for room in the ring. */
static void enqueue(ephf_async *q, ephf_buf *b) {
  while (q->count >= RING) pthread_cond_wait(&q->done, &q->mu);
  q->ring[(q->head + q->count) % RING] = *b;
  q->count++;
  *b = (ephf_buf){0};
  pthread_cond_signal(&q->work);
}

/* An empty batch into *b (under q->mu): a spare, else a new one, else
 * (out of memory) the first the thread gives back: never fails while a
 * batch is queued. */
static void take_empty(ephf_async *q, ephf_buf *b) {
  for (;;) {
    if (q->nspare) {
      *b = q->spare[--q->nspare];
      return;
    }
    uint8_t *p = malloc(BATCH_BYTES);
    if (p) {
      *b = (ephf_buf){.p = p, .cap = BATCH_BYTES};
      q->batch_bytes += BATCH_BYTES;
      return;
    }
    pthread_cond_wait(&q->done, &q->mu);
  }
}

/* Queues the batch being filled and takes an empty one. */
static void hand_over(ephf_async *q) {
  pthread_mutex_lock(&q->mu);
  enqueue(q, &q->cur);
  take_empty(q, &q->cur);
  pthread_mutex_unlock(&q->mu);
}

/* A fork's next batch: its full one joins those it holds, and it takes a
 * spare of the parent's or a new one (every item fits a batch); false
 * when memory runs out. */
static bool fork_next_batch(ephf_async *q) {
  if (q->cur.p) {
    if (q->nheld == q->held_cap) {
      size_t cap = q->held_cap ? 2 * q->held_cap : 64;
      ephf_buf *h = realloc(q->held, cap * sizeof *h);
      if (!h) return false;
      q->held = h;
      q->held_cap = cap;
    }
    q->held[q->nheld++] = q->cur;
    q->cur = (ephf_buf){0};
  }
  ephf_async *pool = q->pool;
  pthread_mutex_lock(&pool->mu);
  if (pool->nspare) {
    q->cur = pool->spare[--pool->nspare];
  } else if ((q->cur.p = malloc(BATCH_BYTES)) != NULL) {
    q->cur.cap = BATCH_BYTES;
    pool->batch_bytes += BATCH_BYTES;
  }
  pthread_mutex_unlock(&pool->mu);
  return q->cur.p != NULL;
}

/* Room for an item of n bytes: the parent hands its full batch over, a
 * fork starts another; false only when a fork runs out of memory. */
static __attribute__((noinline)) bool make_room(ephf_async *q, size_t n) {
  (void)n; /* every item is far smaller than a batch */
  if (!q->is_fork) {
    hand_over(q);
    return true;
  }
  if (q->status != EPH_OK) return false;
  if (!fork_next_batch(q)) {
    q->status = EPH_ERR_NOMEM;
    return false;
  }
  return true;
}

static inline bool has_room(const ephf_async *q, size_t n) { return q->cur.cap - q->cur.len >= n; }

/* The place of the next item of n bytes (has_room said yes). */
static inline void *take_room(ephf_async *q, size_t n) {
  void *item = q->cur.p + q->cur.len;
  q->cur.len += n;
  return item;
}

/* The same, making room first; NULL: a fork out of memory. */
static inline void *item_room(ephf_async *q, size_t n) {
  if (UNLIKELY(!has_room(q, n)) && !make_room(q, n)) return NULL;
  return take_room(q, n);
}

eph_status ephf_async_wait(eph_writer *w) {
  ephf_async *q = w->q;
  if (!q || q->is_fork) return EPH_OK;
  pthread_mutex_lock(&q->mu);
  if (q->cur.len) { /* the batch being filled goes first (room in the ring: wait for it) */
    pthread_mutex_unlock(&q->mu);
    hand_over(q);
    pthread_mutex_lock(&q->mu);
  }
  while (q->count || q->busy) pthread_cond_wait(&q->done, &q->mu);
  eph_status st = q->thread_status;
  if (st != EPH_OK) memcpy(w->error, q->thread_error, sizeof w->error);
  q->thread_status = EPH_OK; /* reported once, as a writer without a thread would */
  pthread_mutex_unlock(&q->mu);
  size_t m = sizeof *w + w->zout.cap + w->spool.cap + ephf_clock_memory(w);
  for (int i = 0; i < NBUF; i++) m += w->buf[i].cap;
  q->writer_memory = m;
  return st;
}

static void stop_thread(ephf_async *q) {
  if (!q->has_thread) return;
  pthread_mutex_lock(&q->mu);
  q->stop = true;
  pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mu);
  pthread_join(q->thread, NULL);
  q->has_thread = false;
}

/* Gives a fork's batches back to its parent's pool (or frees them). */
static void fork_release(ephf_async *q) {
  ephf_async *pool = q->pool;
  pthread_mutex_lock(&pool->mu);
  for (size_t i = 0; i <= q->nheld; i++) {
    ephf_buf *b = i < q->nheld ? &q->held[i] : &q->cur;
    if (!b->p) continue;
    b->len = 0;
    if (pool->nspare < SPARES) {
      pool->spare[pool->nspare++] = *b;
    } else {
      free(b->p);
      pool->batch_bytes -= b->cap;
    }
    *b = (ephf_buf){0};
  }
  q->nheld = 0;
  pthread_mutex_unlock(&pool->mu);
}

void ephf_async_free(eph_writer *w) {
  ephf_async *q = w->q;
  if (!q) return;
  if (q->is_fork) { /* its parent may be gone already (the profiler closes forks last): no pool */
    for (size_t i = 0; i < q->nheld; i++) free(q->held[i].p);
    free(q->held);
    free(q->cur.p);
    free(q);
    w->q = NULL;
    return;
  }
  stop_thread(q); /* writes what was queued first */
  for (unsigned i = 0; i < q->nspare; i++) free(q->spare[i].p);
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->work);
  pthread_cond_destroy(&q->done);
  free(q->cur.p);
  free(q);
  w->q = NULL;
}

eph_status eph_writer_start_thread(eph_writer *w) {
  if (!w || w->parent) return EPH_ERR_INVALID;
  if (w->q) return EPH_OK;
  if (w->failed) return w->failed;
  ephf_async *q = calloc(1, sizeof *q);
  if (!q || !(q->cur.p = malloc(BATCH_BYTES))) {
    free(q);
    return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory starting the writer's thread of %s", w->path);
  }
  q->cur.cap = BATCH_BYTES;
  q->batch_bytes = BATCH_BYTES;
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->work, NULL);
  pthread_cond_init(&q->done, NULL);
  w->q = q;
  int rc = eph_writer_thread_create(&q->thread, writer_thread, w);
  if (rc != 0) {
    ephf_async_free(w);
    return ephf_writer_fail(w, EPH_ERR_IO, "cannot start the writer's thread of %s: %s", w->path, strerror(rc));
  }
  q->has_thread = true;
  return EPH_OK;
}

int eph_writer_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

bool eph_writer_has_thread(const eph_writer *w) { return w && w->q && !w->q->is_fork; }

eph_status eph_writer_stop_thread(eph_writer *w) {
  if (!eph_writer_has_thread(w) || w->q->forked) return EPH_OK;
  eph_status st = ephf_async_wait(w);
  ephf_async_free(w);
  return st;
}

bool ephf_async_fork(eph_writer *f) {
  ephf_async *q = calloc(1, sizeof *q);
  if (!q) return false;
  q->is_fork = true;
  q->pool = f->parent->q;
  q->pool->forked = true;
  f->q = q;
  return true;
}

eph_status ephf_async_join(eph_writer *f) {
  ephf_async *fq = f->q;
  eph_writer *w = f->parent;
  if (fq->status != EPH_OK) { /* the fork's records are lost: the file would lack them */
    fork_release(fq);
    ephf_async_wait(w);
    if (!w->failed) {
      w->failed = fq->status;
      ephf_writer_fail(w, w->failed, "out of memory holding a forked record stream of %s", w->path);
    }
    fq->status = EPH_OK;
    return w->failed;
  }
  if (!fq->nheld && !fq->cur.len) return EPH_OK;
  /* The fork's batches themselves go into the ring, after the parent's
   * so far: no copy.  The fork keeps no batch (it takes a spare when it
   * next writes). */
  ephf_async *q = w->q;
  pthread_mutex_lock(&q->mu);
  if (q->cur.len) {
    enqueue(q, &q->cur);
    take_empty(q, &q->cur);
  }
  for (size_t i = 0; i < fq->nheld; i++) enqueue(q, &fq->held[i]);
  fq->nheld = 0;
  if (fq->cur.len) {
    enqueue(q, &fq->cur);
  } else if (fq->cur.p) { /* an empty batch: a spare again */
    if (q->nspare < SPARES) {
      q->spare[q->nspare++] = fq->cur;
    } else {
      free(fq->cur.p);
      q->batch_bytes -= fq->cur.cap;
    }
    fq->cur = (ephf_buf){0};
  }
  pthread_mutex_unlock(&q->mu);
  return EPH_OK;
}

size_t ephf_async_memory(const eph_writer *w) {
  ephf_async *q = w->q;
  if (q->is_fork) return sizeof *w + sizeof *q + q->held_cap * sizeof *q->held; /* its batches are the pool's */
  pthread_mutex_lock(&q->mu);
  size_t batches = q->batch_bytes;
  pthread_mutex_unlock(&q->mu);
  return q->writer_memory + sizeof *q + batches;
}

/* --- the entry points ------------------------------------------------------------- */

eph_status eph_writer_record(eph_writer *w, const eph_record *r) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_record_now(w, r);
  if (!r) return EPH_ERR_INVALID;
  op_record *o = item_room(w->q, sizeof *o);
  if (UNLIKELY(!o)) return EPH_ERR_NOMEM;
  o->tag = OP_RECORD;
  o->pad = 0;
  o->r = *r;
  return EPH_OK;
}

/* The hot entry points call anything else only in tail position, so that
 * their common path (a room check and the stores) saves no registers. */
static __attribute__((noinline)) eph_status to_death_room(eph_writer *w, uint32_t class_id, uint32_t site_id,
                                                          uint64_t size, double weight, const eph_stamp *birth,
                                                          const eph_stamp *death, unsigned death_kind) {
  if (!make_room(w->q, sizeof(op_to_death))) return EPH_ERR_NOMEM;
  return eph_writer_record_to_death(w, class_id, site_id, size, weight, birth, death, death_kind);
}

eph_status eph_writer_record_to_death(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                      const eph_stamp *birth, const eph_stamp *death, unsigned death_kind) {
  if (UNLIKELY(!w || !w->q)) return ephf_record_to_death_now(w, class_id, site_id, size, weight, birth, death, death_kind);
  if (UNLIKELY(!has_room(w->q, sizeof(op_to_death))))
    return to_death_room(w, class_id, site_id, size, weight, birth, death, death_kind);
  op_to_death *o = take_room(w->q, sizeof *o);
  o->tag = OP_TO_DEATH;
  o->class_id = class_id;
  o->site_id = site_id;
  o->kind = death_kind;
  o->size = size;
  o->weight = weight;
  o->birth = *birth;
  o->death = *death;
  return EPH_OK;
}

/* Clocked records (writer_clock.c). */

static __attribute__((noinline)) eph_status clocked_room(eph_writer *w, uint32_t class_id, uint32_t site_id,
                                                         uint64_t size, uint64_t birth, uint64_t death,
                                                         unsigned death_kind) {
  if (size > UINT32_MAX) { /* the wide item */
    op_clocked_wide *o = item_room(w->q, sizeof *o);
    if (!o) return EPH_ERR_NOMEM;
    *o = (op_clocked_wide){.tag = OP_CLOCKED_WIDE | death_kind << 8, .class_id = class_id, .site_id = site_id,
                           .size = size, .birth = birth, .death = death};
    return EPH_OK;
  }
  if (!make_room(w->q, sizeof(op_clocked))) return EPH_ERR_NOMEM;
  return eph_writer_record_clocked(w, class_id, site_id, size, birth, death, death_kind);
}

eph_status eph_writer_record_clocked(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                     uint64_t birth, uint64_t death, unsigned death_kind) {
  if (UNLIKELY(!w)) return EPH_ERR_INVALID;
  if (UNLIKELY(!w->q)) return ephf_record_clocked_now(w, class_id, site_id, size, birth, death, death_kind);
  if (UNLIKELY(death_kind > 0xFF)) death_kind = 0xFF; /* no kind: the encoder rejects the record */
  if (UNLIKELY(!has_room(w->q, sizeof(op_clocked)) || size > UINT32_MAX))
    return clocked_room(w, class_id, site_id, size, birth, death, death_kind);
  op_clocked *o = take_room(w->q, sizeof *o);
  o->tag = OP_CLOCKED | death_kind << 8;
  o->class_id = class_id;
  o->site_id = site_id;
  o->size = (uint32_t)size;
  o->birth = birth;
  o->death = death;
  return EPH_OK;
}

/* Room for a run of at least one item of `item` bytes in the batch being
 * filled, its header to go in front (run_filled); NULL: a fork out of
 * memory. */
static void *run_room(ephf_async *q, size_t item, size_t *room) {
  if (UNLIKELY(!has_room(q, sizeof(op_run) + item)) && !make_room(q, sizeof(op_run) + item)) {
    *room = 0;
    return NULL;
  }
  *room = (q->cur.cap - q->cur.len - sizeof(op_run)) / item;
  return q->cur.p + q->cur.len + sizeof(op_run);
}

/* Queues the run of n items that run_room gave room for. */
static void run_filled(ephf_async *q, uint32_t tag, size_t n, size_t item) {
  op_run *o = take_room(q, sizeof *o + n * item);
  o->tag = tag;
  o->n = (uint32_t)n;
}

eph_clocked_record *eph_writer_clocked_room(eph_writer *w, size_t *room) {
  if (w->q) return run_room(w->q, sizeof(eph_clocked_record), room);
  *room = sizeof w->clocked_scratch / sizeof *w->clocked_scratch;
  return w->clocked_scratch;
}

eph_status eph_writer_clocked_filled(eph_writer *w, size_t n, unsigned death_kind) {
  if (!n) return EPH_OK;
  if (UNLIKELY(death_kind > 0xFF)) death_kind = 0xFF; /* no kind: the encoder rejects the record */
  if (!w->q) return clocked_run_now(w, w->clocked_scratch, n, death_kind);
  run_filled(w->q, OP_CLOCKED_RUN | death_kind << 8, n, sizeof(eph_clocked_record));
  return EPH_OK;
}

eph_batch_clocked_record *eph_writer_batch_clocked_room(eph_writer *w, size_t *room) {
  if (w->q) return run_room(w->q, sizeof(eph_batch_clocked_record), room);
  *room = sizeof w->batch_clocked_scratch / sizeof *w->batch_clocked_scratch;
  return w->batch_clocked_scratch;
}

eph_status eph_writer_batch_clocked_filled(eph_writer *w, size_t n) {
  if (!n) return EPH_OK;
  if (!w->q) return batch_clocked_run_now(w, w->batch_clocked_scratch, n);
  run_filled(w->q, OP_BATCH_CLOCKED_RUN, n, sizeof(eph_batch_clocked_record));
  return EPH_OK;
}

void eph_writer_set_unpacker(eph_writer *w, eph_record_unpacker *unpack, const void *ctx) {
  w->unpack = unpack;
  w->unpack_ctx = ctx;
}

eph_packed_record *eph_writer_batch_packed_room(eph_writer *w, size_t *room) {
  if (w->q) return run_room(w->q, sizeof(eph_packed_record), room);
  *room = sizeof w->packed_scratch / sizeof *w->packed_scratch;
  return w->packed_scratch;
}

eph_status eph_writer_batch_packed_filled(eph_writer *w, size_t n) {
  if (!n) return EPH_OK;
  if (!w->unpack) return EPH_ERR_INVALID;
  if (!w->q) return batch_packed_run_now(w, w->packed_scratch, n);
  run_filled(w->q, OP_BATCH_PACKED_RUN, n, sizeof(eph_packed_record));
  return EPH_OK;
}

eph_status eph_writer_clock_start(eph_writer *w, const eph_writer_clock_ops *ops, uint64_t bytes, uint64_t wall_ns,
                                  uint32_t minor0, uint32_t major0) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_clock_start_now(w, ops, bytes, wall_ns, minor0, major0);
  op_clock_start *o = item_room(w->q, sizeof *o);
  if (!o) return EPH_ERR_NOMEM;
  *o = (op_clock_start){.tag = OP_CLOCK_START, .ops = ops, .bytes = bytes, .wall_ns = wall_ns, .minor0 = minor0,
                        .major0 = major0};
  return EPH_OK;
}

eph_status eph_writer_clock_point(eph_writer *w, uint64_t bytes, uint64_t wall_ns) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_clock_point_now(w, bytes, wall_ns);
  op_clock_point *o = item_room(w->q, sizeof *o);
  if (!o) return EPH_ERR_NOMEM;
  *o = (op_clock_point){.tag = OP_CLOCK_POINT, .bytes = bytes, .wall_ns = wall_ns};
  return EPH_OK;
}

eph_status eph_writer_clock_step(eph_writer *w, uint64_t bytes, bool major) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_clock_step_now(w, bytes, major);
  op_clock_point *o = item_room(w->q, sizeof *o);
  if (!o) return EPH_ERR_NOMEM;
  *o = (op_clock_point){.tag = OP_CLOCK_STEP, .bytes = bytes, .wall_ns = major};
  return EPH_OK;
}

void eph_writer_batch(eph_writer *w, const eph_stamp *death, const eph_stamp *alive_until, unsigned death_kind) {
  if (!w) return;
  if (!w->q) {
    ephf_batch_now(w, death, alive_until, death_kind);
    return;
  }
  op_batch *o = item_room(w->q, sizeof *o);
  if (UNLIKELY(!o)) return; /* a fork out of memory: its join reports it */
  o->tag = OP_BATCH;
  o->kind = death_kind;
  o->death = *death;
  o->alive_until = *alive_until;
}

static __attribute__((noinline)) eph_status batch_record_room(eph_writer *w, uint32_t class_id, uint32_t site_id,
                                                              uint64_t size, double weight, const eph_stamp *birth,
                                                              bool until_birth) {
  if (!make_room(w->q, sizeof(op_batch_record))) return EPH_ERR_NOMEM;
  return eph_writer_batch_record(w, class_id, site_id, size, weight, birth, until_birth);
}

eph_status eph_writer_batch_record(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, double weight,
                                   const eph_stamp *birth, bool until_birth) {
  if (UNLIKELY(!w || !w->q)) return ephf_batch_record_now(w, class_id, site_id, size, weight, birth, until_birth);
  if (UNLIKELY(!has_room(w->q, sizeof(op_batch_record))))
    return batch_record_room(w, class_id, site_id, size, weight, birth, until_birth);
  op_batch_record *o = take_room(w->q, sizeof *o);
  o->tag = OP_BATCH_RECORD;
  o->class_id = class_id;
  o->site_id = site_id;
  o->until_birth = until_birth;
  o->size = size;
  o->weight = weight;
  ephf_copy_stamp(&o->birth, birth);
  return EPH_OK;
}

static inline void put_batch_clocked(op_batch_clocked *o, uint32_t class_id, uint32_t site_id, uint64_t size,
                                     double weight, uint64_t birth, bool until_birth) {
  *o = (op_batch_clocked){.tag = OP_BATCH_CLOCKED | (uint32_t)until_birth << 8, .class_id = class_id,
                          .site_id = site_id, .size = size, .weight = weight, .birth = birth};
}

eph_status eph_writer_batch_record_clocked(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                           double weight, uint64_t birth, bool until_birth) {
  if (UNLIKELY(!w)) return EPH_ERR_INVALID;
  if (UNLIKELY(!w->q)) return ephf_batch_record_clocked_now(w, class_id, site_id, size, weight, birth, until_birth);
  op_batch_clocked *o = item_room(w->q, sizeof *o);
  if (UNLIKELY(!o)) return EPH_ERR_NOMEM;
  put_batch_clocked(o, class_id, site_id, size, weight, birth, until_birth);
  return EPH_OK;
}

eph_status eph_writer_gc(eph_writer *w, const eph_gc_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_gc_now(w, ev);
  if (!ev) return EPH_ERR_INVALID;
  op_gc *o = item_room(w->q, sizeof *o);
  if (UNLIKELY(!o)) return EPH_ERR_NOMEM;
  o->tag = OP_GC;
  o->pad = 0;
  o->ev = *ev;
  return EPH_OK;
}

eph_status eph_writer_event(eph_writer *w, const eph_event *ev) {
  if (!w) return EPH_ERR_INVALID;
  if (!w->q) return ephf_event_now(w, ev);
  if (!ev) return EPH_ERR_INVALID;
  op_event *o = item_room(w->q, sizeof *o);
  if (UNLIKELY(!o)) return EPH_ERR_NOMEM;
  o->tag = OP_EVENT;
  o->pad = 0;
  o->ev = *ev;
  return EPH_OK;
}
