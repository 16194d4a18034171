/*
 * stop_records.c — Merlin's records at the profile's stop, on two threads.
 *
 * The stop's last full GC finds every object not yet recorded: the dead
 * get their exact death, the rest are censored.  The program waits for
 * them all, and on a short run they are most of the profile (every
 * workload at `small` never scavenges: the stop writes all its records).
 * Each record costs two clock lookups and its encoding; filling its
 * fields (class, site, size, birth, death, read from the object as the
 * walk over the dead reaches it) takes about 0.4 times as long (boids).
 *
 * So this thread fills blocks of STOP_BLOCK records in rounds of 1 +
 * HELPER_BLOCKS blocks and, with threads=2 (by default where a second
 * CPU is usable), a helper thread stamps and encodes a round's last
 * HELPER_BLOCKS blocks into a fork of the writer while this thread
 * encodes the round's first block and fills the next round.  Before it
 * encodes that round's first block, this thread joins the fork, which
 * puts the helper's records after its own: the file holds the records in
 * the order they came.  The helper's blocks are two sets used in turn,
 * one being encoded while the other is filled.  Only this thread fills,
 * so only it declares a class in the file (the fork is synced before each
 * hand-over).  The clock tables stand still while the helper reads them:
 * prof_stop_records_flush waits for the helper, and the profile takes a
 * clock point only after a flush.  The helper keeps clock caches of its
 * own, emptied at each hand-over.
 *
 * With threads=1 (by default on one CPU) none of this: the records are
 * written one at a time as they come (mode_merlin.c).  Where the fork or
 * the thread cannot be had, or there are fewer records than one block,
 * the blocks are encoded here, in the same order: the same records either
 * way.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

#define STOP_BLOCK 4096
/* The helper encodes HELPER_BLOCKS blocks while this thread fills 1 +
 * HELPER_BLOCKS and encodes one: on boids, filling a block takes about
 * 0.4 times as long as encoding it, so two keep both threads busy. */
#define HELPER_BLOCKS 2
#define ROUND (1 + HELPER_BLOCKS)
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
  stop_block mine;                            /* a round's first block: this thread's */
  stop_block helpers[2][HELPER_BLOCKS];       /* the rest, two sets in turn */
  _Alignas(64) size_t n[ROUND];               /* records in each block of the round being filled */
  eph_death_kind kind[ROUND];                 /* a block holds one kind */
  int filling;                                /* the block of the round being filled */
  int set;                                    /* the set of helpers' blocks being filled */
  bool in_flight;                             /* the helper has (or had) the other set: join before going on */
  bool helper_failed;                         /* the fork or the thread could not be had: all here */
  bool thread_running;
  eph_writer *fork;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  eph_profiler *p;
  /* Handed to the helper with a set of blocks, and back. */
  _Alignas(64) atomic_uint posted; /* sets handed to the helper */
  const stop_block *helper_blocks;
  size_t helper_n[HELPER_BLOCKS];
  eph_death_kind helper_kind[HELPER_BLOCKS];
  bool quit;
  _Alignas(64) atomic_uint done; /* sets the helper finished */
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
  for (unsigned set = 1;; set++) {
    wait_for(s, &s->posted, set);
    if (s->quit) return NULL;
    ephs_clock_cache cache[2];
    memset(cache, 0, sizeof cache);
    eph_status st = EPH_OK;
    for (int i = 0; i < HELPER_BLOCKS && st == EPH_OK; i++)
      st = write_block(s->p, s->fork, &s->helper_blocks[i], s->helper_n[i], s->helper_kind[i], cache);
    if (st != EPH_OK && s->helper_status == EPH_OK) s->helper_status = st;
    post(s, &s->done, set);
  }
}

static bool start_helper(prof_stop_records *s) {
  if (!(s->fork = eph_writer_fork(s->p->out))) return false;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  if (eph_writer_thread_create(&s->thread, helper_main, s) != 0) { /* it takes no signals */
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    eph_writer_close(s->fork, NULL);
    s->fork = NULL;
    return false;
  }
  s->thread_running = true;
  return true;
}

/* Waits for the set the helper has, and puts its records in the file
 * after those written so far. */
static void join_helper(prof_stop_records *s) {
  if (!s->in_flight) return;
  eph_profiler *p = s->p;
  wait_for(s, &s->done, atomic_load_explicit(&s->posted, memory_order_relaxed));
  if (s->helper_status != EPH_OK) {
    prof_write_error(p, s->helper_status);
    s->helper_status = EPH_OK;
  }
  prof_write_error(p, eph_writer_join(s->fork));
  s->in_flight = false;
}

/* Ends the round being filled: the helper's blocks to the helper (after
 * the set it had is in the file), the first block encoded here; without a
 * helper, all of them here, in order. */
static void end_round(prof_stop_records *s) {
  eph_profiler *p = s->p;
  size_t helper_records = 0;
  for (int i = 1; i < ROUND; i++) helper_records += s->n[i];
  if (helper_records && !s->thread_running && !s->helper_failed) s->helper_failed = !start_helper(s);
  join_helper(s); /* the last round's helper records follow its first block */
  if (helper_records && s->thread_running) {
    eph_writer_fork_sync(s->fork); /* the classes this round's filling declared */
    s->helper_blocks = s->helpers[s->set];
    for (int i = 0; i < HELPER_BLOCKS; i++) s->helper_n[i] = s->n[1 + i], s->helper_kind[i] = s->kind[1 + i];
    post(s, &s->posted, atomic_load_explicit(&s->posted, memory_order_relaxed) + 1);
    s->in_flight = true;
    prof_write_error(p, write_block(p, p->out, &s->mine, s->n[0], s->kind[0], p->clocks.cache));
    s->set ^= 1;
  } else {
    prof_write_error(p, write_block(p, p->out, &s->mine, s->n[0], s->kind[0], p->clocks.cache));
    for (int i = 0; i < HELPER_BLOCKS; i++)
      prof_write_error(p, write_block(p, p->out, &s->helpers[s->set][i], s->n[1 + i], s->kind[1 + i], p->clocks.cache));
  }
  memset(s->n, 0, sizeof s->n);
  s->filling = 0;
}

static inline stop_block *block_of(prof_stop_records *s, int i) {
  return i == 0 ? &s->mine : &s->helpers[s->set][i - 1];
}

bool prof_stop_records_begin(eph_profiler *p) {
  /* A writer that still has its thread queues what it is given: it needs
   * no helper, and a fork would keep the thread (eph_writer_stop_thread). */
  unsigned threads = p->spec.threads ? p->spec.threads : prof_usable_cpus() > 1 ? 2 : 1;
  if (threads != 2 || eph_writer_has_thread(p->out)) return false;
  prof_stop_records *s = calloc(1, sizeof *s);
  if (!s) return false;
  s->p = p;
  p->stop_records = s;
  prof_note_memory(p);
  return true;
}

eph_clocked_record *prof_stop_records_room(eph_profiler *p, eph_death_kind kind, size_t *room) {
  prof_stop_records *s = p->stop_records;
  int f = s->filling;
  if (s->n[f] && (s->n[f] == STOP_BLOCK || s->kind[f] != kind)) { /* block f is closed */
    if (f + 1 < ROUND) f = ++s->filling;
    else end_round(s), f = 0;
  }
  if (!s->n[f]) s->kind[f] = kind;
  *room = STOP_BLOCK - s->n[f];
  return &block_of(s, f)->r[s->n[f]];
}

void prof_stop_records_filled(eph_profiler *p, eph_death_kind kind, size_t n) {
  prof_stop_records *s = p->stop_records;
  s->n[s->filling] += n;
  if (kind == EPH_DEATH_CENSORED) p->stats.censored += n;
  else p->stats.deaths += n;
}

void prof_stop_records_flush(eph_profiler *p) {
  prof_stop_records *s = p->stop_records;
  if (!s) return;
  if (s->n[0]) end_round(s);
  join_helper(s);
}

size_t prof_stop_records_memory(const eph_profiler *p) {
  const prof_stop_records *s = p->stop_records;
  return s ? sizeof *s + eph_writer_memory(s->fork) : 0;
}

void prof_stop_records_end(eph_profiler *p) {
  prof_stop_records *s = p->stop_records;
  if (!s) return;
  prof_stop_records_flush(p);
  prof_note_memory(p); /* the fork's buffers at their largest */
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
