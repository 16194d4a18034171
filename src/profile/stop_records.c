/*
 * stop_records.c — Merlin's records at the profile's stop, on two threads.
 *
 * The stop's last full GC finds every object not yet recorded: the dead
 * get their exact death, the rest are censored.  The program waits for
 * them all, and on a short run they are most of the profile (every
 * workload at `small` never scavenges: the stop writes all its records).
 * Each record costs two clock lookups and its encoding; filling its
 * fields (class, site, size, birth, death) is a tenth of that.
 *
 * So this thread fills blocks of STOP_BLOCK records and, with threads=2
 * (by default where a second CPU is usable), a helper thread encodes every other
 * block into a fork of the writer while this one encodes the block
 * before it.  Blocks go in pairs, this thread's first; the join puts the
 * fork's records after it, so the file holds the records in the order
 * they came, in the same chunks' worth of bytes give or take a chunk
 * header.  Only this thread fills, so only it declares a class in the
 * file (the fork is synced before each pair).  The clock tables stand
 * still while the helper reads them: the profile's clock points are
 * taken before a pair is filled or after it is joined, never between.
 * The helper keeps clock caches of its own, emptied before each block
 * (a point taken between two pairs changes the tables).
 *
 * Without a helper (threads=1, by default on one CPU, a fork or a thread
 * that could not be had, or fewer records than two blocks) the blocks are encoded
 * here, in the same order: the same records either way.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

#define STOP_BLOCK 4096
/* Spins (each a pause) before a wait blocks: a block takes tens of
 * microseconds to encode, and a blocked thread takes as long to wake. */
#define SPINS 20000

typedef struct stop_block {
  eph_clocked_record r[STOP_BLOCK];
} stop_block;

/* The helper spins on `posted` while this thread fills: what this thread
 * writes per record (the blocks' counts) lies on other cache lines, or
 * each record's count would pull the line back from the spinning helper. */
struct prof_stop_records {
  stop_block block[2]; /* block[1] is the helper's in a pair */
  _Alignas(64) size_t n[2];    /* records in each block */
  eph_death_kind kind[2];      /* a block holds one kind */
  int filling;                 /* the block being filled: 1 once block[0] is closed */
  bool helper_wanted;          /* threads=2, or a second CPU with threads=auto */
  bool helper_failed;          /* the fork or the thread could not be had: all here */
  bool thread_running;
  eph_writer *fork;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  eph_profiler *p;
  /* Handed to the helper with a pair, and back. */
  _Alignas(64) atomic_uint posted; /* pairs handed to the helper */
  size_t helper_n;                 /* its block's records and kind */
  eph_death_kind helper_kind;
  bool quit;
  _Alignas(64) atomic_uint done; /* pairs the helper finished */
  eph_status helper_status;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void wait_for(prof_stop_records *s, atomic_uint *v, unsigned want) {
  for (int i = 0; i < SPINS; i++) {
    if (atomic_load_explicit(v, memory_order_acquire) == want) return;
    cpu_relax();
  }
  pthread_mutex_lock(&s->lock);
  while (atomic_load_explicit(v, memory_order_acquire) != want) pthread_cond_wait(&s->cond, &s->lock);
  pthread_mutex_unlock(&s->lock);
}

static void post(prof_stop_records *s, atomic_uint *v, unsigned value) {
  pthread_mutex_lock(&s->lock);
  atomic_store_explicit(v, value, memory_order_release);
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

/* Stamps and encodes the n records of b, all of one kind, into `out`
 * with clock caches c. */
static eph_status write_block(eph_profiler *p, eph_writer *out, const stop_block *b, size_t n, eph_death_kind kind,
                              ephs_clock_cache *c) {
  for (size_t i = 0; i < n; i++) {
    const eph_clocked_record *r = &b->r[i];
    eph_stamp birth = prof_clocks_stamp_in(p, r->birth, &c[0]);
    eph_stamp death = r->death == r->birth ? birth : prof_clocks_stamp_in(p, r->death, &c[1]);
    eph_status st = eph_writer_record_to_death(out, r->class_id, r->site_id, r->size, 1.0, &birth, &death, kind);
    if (EPH_UNLIKELY(st != EPH_OK)) return st;
  }
  return EPH_OK;
}

static void *helper_main(void *arg) {
  prof_stop_records *s = arg;
  for (unsigned pair = 1;; pair++) {
    wait_for(s, &s->posted, pair);
    if (s->quit) return NULL;
    ephs_clock_cache cache[2];
    memset(cache, 0, sizeof cache);
    eph_status st = write_block(s->p, s->fork, &s->block[1], s->helper_n, s->helper_kind, cache);
    if (st != EPH_OK && s->helper_status == EPH_OK) s->helper_status = st;
    post(s, &s->done, pair);
  }
}

static bool start_helper(prof_stop_records *s) {
  if (!(s->fork = eph_writer_fork(s->p->out))) return false;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  if (pthread_create(&s->thread, NULL, helper_main, s) != 0) {
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    eph_writer_close(s->fork, NULL);
    s->fork = NULL;
    return false;
  }
  s->thread_running = true;
  return true;
}

/* Writes the filled blocks, in order, and empties them. */
static void write_blocks(prof_stop_records *s) {
  eph_profiler *p = s->p;
  if (s->n[1] && !s->thread_running && s->helper_wanted && !s->helper_failed) s->helper_failed = !start_helper(s);
  if (s->n[1] && s->thread_running) {
    eph_writer_fork_sync(s->fork); /* the classes this pair's filling declared */
    s->helper_n = s->n[1];
    s->helper_kind = s->kind[1];
    unsigned pair = atomic_load_explicit(&s->posted, memory_order_relaxed) + 1;
    post(s, &s->posted, pair);
    prof_write_error(p, write_block(p, p->out, &s->block[0], s->n[0], s->kind[0], p->clocks.cache));
    wait_for(s, &s->done, pair);
    if (s->helper_status != EPH_OK) {
      prof_write_error(p, s->helper_status);
      s->helper_status = EPH_OK;
    }
    prof_write_error(p, eph_writer_join(s->fork));
  } else {
    for (int i = 0; i < 2; i++)
      prof_write_error(p, write_block(p, p->out, &s->block[i], s->n[i], s->kind[i], p->clocks.cache));
  }
  s->n[0] = s->n[1] = 0;
  s->filling = 0;
}

bool prof_stop_records_begin(eph_profiler *p) {
  prof_stop_records *s = calloc(1, sizeof *s);
  if (!s) return false;
  s->p = p;
  /* A writer that still has its thread queues what it is given: it needs
   * no helper, and a fork would keep the thread (eph_writer_stop_thread). */
  unsigned threads = p->spec.threads ? p->spec.threads : prof_usable_cpus() > 1 ? 2 : 1;
  s->helper_wanted = threads == 2 && !eph_writer_has_thread(p->out);
  p->stop_records = s;
  return true;
}

void prof_stop_records_add(eph_profiler *p, const eph_clocked_record *r, eph_death_kind kind) {
  prof_stop_records *s = p->stop_records;
  int f = s->filling;
  if (s->n[f] && (s->n[f] == STOP_BLOCK || s->kind[f] != kind)) { /* block f is closed */
    if (f == 0) f = s->filling = 1;
    else write_blocks(s), f = 0;
  }
  if (!s->n[f]) s->kind[f] = kind;
  s->block[f].r[s->n[f]++] = *r;
  if (kind == EPH_DEATH_CENSORED) p->stats.censored++;
  else p->stats.deaths++;
}

void prof_stop_records_flush(eph_profiler *p) {
  if (p->stop_records) write_blocks(p->stop_records);
}

void prof_stop_records_end(eph_profiler *p) {
  prof_stop_records *s = p->stop_records;
  if (!s) return;
  write_blocks(s);
  if (s->thread_running) {
    s->quit = true;
    post(s, &s->posted, atomic_load_explicit(&s->posted, memory_order_relaxed) + 1);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
  }
  if (s->fork) eph_writer_close(s->fork, NULL);
  free(s);
  p->stop_records = NULL;
}
