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
 * the order they came.  The helper takes a set's blocks one at a time,
 * and this thread, when it comes to join, takes those the helper has not
 * begun and encodes them itself after the helper's: a helper that is
 * late (not yet scheduled, or asleep after a long wait, which on a busy
 * host took longer than its whole share of the work) costs no waiting.
 * The helper's blocks are two sets used in turn, one being encoded while
 * the other is filled.  Only this thread fills,
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
/* Blocks are numbered in the order they go to the file among the
 * helper's, from 0: block b is index b % HELPER_BLOCKS of set b /
 * HELPER_BLOCKS, which lies in helpers[(b / HELPER_BLOCKS) % 2]. */

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
  _Alignas(64) atomic_uint posted; /* blocks handed over: whole sets */
  atomic_uint claimed;             /* blocks taken, by either thread, in order */
  size_t helper_n[2][HELPER_BLOCKS];
  eph_death_kind helper_kind[2][HELPER_BLOCKS];
  atomic_bool quit;
  _Alignas(64) atomic_uint done; /* the blocks the helper took are finished up to here */
  eph_status helper_status;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Waits until *v reaches at least `want` (or, for the helper, quit). */
static void wait_for(prof_stop_records *s, atomic_uint *v, unsigned want) {
  for (int i = 0; i < SPINS; i++) {
    if (atomic_load_explicit(v, memory_order_acquire) >= want || s->quit) return;
    cpu_relax();
  }
  pthread_mutex_lock(&s->lock);
  while (atomic_load_explicit(v, memory_order_acquire) < want && !s->quit) pthread_cond_wait(&s->cond, &s->lock);
  pthread_mutex_unlock(&s->lock);
}

/* Takes block b if nobody has (the blocks are taken in order). */
static bool claim(prof_stop_records *s, unsigned b) {
  unsigned want = b;
  return atomic_compare_exchange_strong_explicit(&s->claimed, &want, b + 1, memory_order_acq_rel,
                                                 memory_order_acquire);
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

/* Stamps and encodes helper block b into `out`. */
static eph_status write_helper_block(prof_stop_records *s, eph_writer *out, unsigned b, ephs_clock_cache *c) {
  unsigned set = (b / HELPER_BLOCKS) % 2, i = b % HELPER_BLOCKS;
  return write_block(s->p, out, &s->helpers[set][i], s->helper_n[set][i], s->helper_kind[set][i], c);
}

/* The helper: takes the blocks handed over, one at a time, unless this
 * thread took them first (join_helper). */
static void *helper_main(void *arg) {
  prof_stop_records *s = arg;
  ephs_clock_cache cache[2];
  unsigned next = 0, cache_set = UINT32_MAX;
  for (;;) {
    wait_for(s, &s->posted, next + 1);
    if (s->quit) return NULL;
    if (!claim(s, next)) { /* taken here and after by the program's thread */
      next = atomic_load_explicit(&s->claimed, memory_order_acquire);
      continue;
    }
    if (next / HELPER_BLOCKS != cache_set) { /* a new set: its own clock caches */
      memset(cache, 0, sizeof cache);
      cache_set = next / HELPER_BLOCKS;
    }
    eph_status st = write_helper_block(s, s->fork, next, cache);
    if (st != EPH_OK && s->helper_status == EPH_OK) s->helper_status = st;
    post(s, &s->done, ++next);
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

/* Puts the set handed over in the file after what is written so far:
 * takes the blocks the helper has not begun, waits for those it took,
 * appends their records, then encodes its own here. */
static void join_helper(prof_stop_records *s) {
  if (!s->in_flight) return;
  eph_profiler *p = s->p;
  unsigned end = atomic_load_explicit(&s->posted, memory_order_relaxed);
  unsigned first = atomic_load_explicit(&s->claimed, memory_order_acquire);
  while (first < end && !atomic_compare_exchange_weak_explicit(&s->claimed, &first, end, memory_order_acq_rel,
                                                               memory_order_acquire)) {
  }
  /* blocks [end - HELPER_BLOCKS, first) are the helper's, [first, end) this thread's */
  if (first > end - HELPER_BLOCKS) {
    wait_for(s, &s->done, first);
    if (s->helper_status != EPH_OK) {
      prof_write_error(p, s->helper_status);
      s->helper_status = EPH_OK;
    }
    prof_write_error(p, eph_writer_join(s->fork));
  }
  for (unsigned b = first; b < end; b++) prof_write_error(p, write_helper_block(s, p->out, b, p->clocks.cache));
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
    for (int i = 0; i < HELPER_BLOCKS; i++) s->helper_n[s->set][i] = s->n[1 + i], s->helper_kind[s->set][i] = s->kind[1 + i];
    post(s, &s->posted, atomic_load_explicit(&s->posted, memory_order_relaxed) + HELPER_BLOCKS);
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
  p->merlin.stop_records = s;
  prof_note_memory(p);
  return true;
}

eph_clocked_record *prof_stop_records_room(eph_profiler *p, eph_death_kind kind, size_t *room) {
  prof_stop_records *s = p->merlin.stop_records;
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
  prof_stop_records *s = p->merlin.stop_records;
  s->n[s->filling] += n;
  if (kind == EPH_DEATH_CENSORED) p->stats.censored += n;
  else p->stats.deaths += n;
}

void prof_stop_records_flush(eph_profiler *p) {
  prof_stop_records *s = p->merlin.stop_records;
  if (!s) return;
  if (s->n[0]) end_round(s);
  join_helper(s);
}

size_t prof_stop_records_memory(const eph_profiler *p) {
  const prof_stop_records *s = p->merlin.stop_records;
  return s ? sizeof *s + eph_writer_memory(s->fork) : 0;
}

void prof_stop_records_end(eph_profiler *p) {
  prof_stop_records *s = p->merlin.stop_records;
  if (!s) return;
  prof_stop_records_flush(p);
  prof_note_memory(p); /* the fork's buffers at their largest */
  if (s->thread_running) {
    pthread_mutex_lock(&s->lock);
    atomic_store(&s->quit, true);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
  }
  if (s->fork) eph_writer_close(s->fork, NULL);
  free(s);
  p->merlin.stop_records = NULL;
}
