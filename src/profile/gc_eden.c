/*
 * gc_eden.c — gc mode's eden walk: how sampling every object (or most of
 * them) costs no call per allocation.  The heap's eden-walk mode keeps the
 * inline allocation path; after each collection prof_gc_settle_eden walks what
 * eden held, in allocation order, the sampler choosing as it goes, and
 * each object's birth is the clock when eden was last empty plus the
 * bytes before it (old-space allocations in between, which still reach
 * on_alloc, are noted with eden's top at the time).  Sites come from
 * EPH_AT's log.  Dead objects become records; survivors join the young or
 * old list like any tracked object.
 *
 * A scavenge's walk is shared with a second thread: eden is cut into
 * pieces at EPH_AT marks (marks are object starts, and a mark's clock
 * follows from the old-space allocations before it), and both threads
 * take pieces in turn until none is left.  Below 100 % the sampler draws
 * by each object's clock (prof_sampler_walk_draw), the same on either thread.
 * Each piece's records go to a fork of the writer, appended to the file
 * in eden's order, and its survivors are kept in that order, so the
 * profile holds the same records in the same order as a walk on one
 * thread (docs/gc-mode.md has the measurements).  While both threads
 * run, neither may declare a class or site in the file: a piece stops at
 * the first object that needs one, and this thread, alone again,
 * finishes it.
 *
 * With eden pairs (eph_heap_set_eden_pair) the walk need not end with
 * the scavenge: the second thread walks the retired eden while the
 * mutator goes on in the other, and the next collection (on_gc_start)
 * or the profile's stop finishes it (prof_gc_walk_finish): this thread
 * takes the pieces left, keeps them all, then settles that collection.
 * What the walk reads of the profiler is fixed when it starts: the
 * old-space allocations of its eden (p->gc.eden's, handed over), the
 * clock tables of its range (a copy), and the classes and sites the
 * file had (a copy, and a site id bound); a site it has not seen is
 * looked up under sites_lock, which the main thread takes to add one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eden_births.h"

/* A piece of a shared walk.  Stopped: at pos lies an object the piece
 * may not write (its class or site is new to the file, or the writer
 * failed).  Each on cache lines of its own: two threads write neighbours. */
typedef struct walk_piece {
  _Alignas(64)
  walk_pos pos;
  eph_writer *out;    /* a fork */
  tracked *survivors; /* address now, birth: kept, in order, after the walk */
  size_t nsurvivors, survivors_cap;
  uint64_t samples, deaths;
  bool stopped;
  bool written;           /* its records are in the file already (write_ahead) */
  eph_status write_status; /* ... with this outcome, for the main thread to report */
  atomic_bool done; /* walked: the fields above are the main thread's to read */
} walk_piece;

/* What a thread of a shared walk looks things up with; for the main
 * thread also where it stands in keeping the pieces (join_done). */
typedef struct walk_thread {
  eph_profiler *p;
  struct walk_split *split;
  ephs_clock_cache *clock;
  struct prof_site_cache_entry *site_cache; /* SITE_CACHE entries */
  bool main;
  unsigned joined;    /* pieces [0, joined) are in the file and the lists */
  size_t *keep;
  bool *span_open;
} walk_thread;

#define PIECES_MAX 8

/* What the shared walk keeps between collections. */
struct walk_split {
  walk_piece piece[PIECES_MAX];
  walk_pos start[PIECES_MAX]; /* each piece's start */
  unsigned npieces;
  atomic_uint next_piece;
  ephs_clock_cache clock; /* the second thread's */
  struct prof_site_cache_entry site_cache[SITE_CACHE];
  bool busy;     /* the second thread runs: the pieces' memory is in use */
  size_t memory; /* prof_gc_eden_memory before it started */
  pthread_t thread;
  walk_thread second;  /* the second thread's, copied to its stack as it starts */
  bool running_on; /* the walk runs on past its scavenge: prof_gc_walk_finish ends it */
  bool out_open;   /* under sites_lock: the collection's end is in the file and the writer has no thread, */
                   /* so the second thread may append the walk's records (write_ahead), */
  bool finishing;  /* ... unless the main thread has begun to finish the walk (it joins the pieces) */
  size_t young_len, old_room; /* young entries, and room left in the old list's blocks, then */

  /* what the walk reads, fixed at its start */
  eden_olds olds;
  struct old_alloc *olds_buf; /* a walk that runs on: p->gc.eden.old_allocs, handed over */
  size_t olds_cap;
  const ephs_clocks *tables;   /* p->clocks, or for a walk that runs on: */
  ephs_clocks tables_copy;     /* what they held for its range */
  const uint8_t *classes;      /* p->class_written, or for a walk that runs on a copy: */
  uint8_t *classes_buf;
  size_t nclasses, classes_cap;
  uint32_t site_limit;         /* the sites declared at the start: ids up to this */
  eph_stamp now;               /* the scavenge walked */
};

/* Sharing costs a thread start (tens of microseconds): only for an eden
 * that takes longer than that to walk; pieces of at least this size
 * (EPHEMERA_WALK_PIECE_MIN=BYTES overrides it: tests share small edens). */
#define PIECE_MIN_BYTES ((uintptr_t)1 << 20)

/* Young objects are no sample points: each collection walks what eden
 * held, and their births follow from the order.  Here come old-space
 * allocations, sampled and tracked as usual, and the byte trigger's
 * wall-clock points. */
void prof_gc_walk_start(eph_profiler *p) {
  p->gc.eden.eden_clock = prof_clock(p);
  eph_heap_set_eden_walk(p->h, true);
  prof_sampler_walk_arm(p);
  prof_arm_clock_point(p, p->gc.eden.eden_clock);
  unsigned threads = p->spec.threads;
  if (!threads) threads = prof_usable_cpus() > 1 ? 2 : 1;
  p->gc.walk_threads = threads;
  const char *min = getenv("EPHEMERA_WALK_PIECE_MIN");
  p->gc.walk_piece_min = min && atoll(min) > 0 ? (uintptr_t)atoll(min) : PIECE_MIN_BYTES;
  /* EPHEMERA_WALK_DELAY=main:US or second:US: tests force the threads into
   * orders a quiet machine rarely shows (walk_orders_test.sh). */
  const char *delay = getenv("EPHEMERA_WALK_DELAY");
  if (delay) {
    unsigned us = 0;
    if (sscanf(delay, "main:%u", &us) == 1) p->gc.walk_delay_us[0] = us;
    else if (sscanf(delay, "second:%u", &us) == 1) p->gc.walk_delay_us[1] = us;
  }
  /* Eden pairs let the walk run on while the mutator does.  Not with a
   * class filter: the walk would read its table while the mutator adds
   * to it.  EPHEMERA_EDEN_PAIR=0 turns them off (each scavenge's walk
   * then ends in it, shared or not). */
  const char *pair = getenv("EPHEMERA_EDEN_PAIR");
  if (threads > 1 && !p->spec.classes[0] && !(pair && strcmp(pair, "0") == 0)) (void)eph_heap_set_eden_pair(p->h, true);
}

void prof_gc_walk_on_alloc(void *data, eph_heap *h, eph_value obj) {
  eph_profiler *p = data;
  uint64_t t = prof_clock(p);
  if (!eph_is_young(h, obj)) {
    prof_note_old_alloc(p, &p->gc.eden, t);
    if (prof_sampler_take_walked(p, eph_class_of(obj), t)) prof_gc_mode_track(p, obj, prof_birth_at(p, t));
  }
  prof_clocks_tick(p, t);
  prof_arm_clock_point(p, t);
}

/* Walks the rest of pos's range on this thread alone, the sampler
 * choosing, tables declared as met.  Returns the young entries kept. */
static size_t walk_alone(eph_profiler *p, const eden_olds *of, walk_pos *pos, bool full, const eph_stamp *now,
                         size_t keep, bool *span_open) {
  walk_pos q = *pos; /* a copy no call sees: its fields can live in registers */
  eden_olds olds = *of;
  eph_value was, at;
  bool dead;
  eph_site *site;
  while (next_object(&olds, &q, &was, &at, &dead, &site)) {
    if (!p->take_all && !prof_sampler_take_walked(p, eph_class_of(at), q.clock)) continue;
    uint64_t birth = birth_word(q.clock, prof_site_id(p, site));
    p->stats.samples++;
    if (dead) {
      prof_batch_record(p, at, birth, true); /* born since the last collection */
      continue;
    }
    keep = prof_gc_keep_survivor(p, full ? eph_gc_fate(p->h, was) : at, birth, keep, span_open, now);
  }
  *pos = q;
  return keep;
}

/* --- the split walk ------------------------------------------------------------ */

/* The profile's id of site s if the file had it when the walk started (0
 * for none), through t's cache; false if not. */
static inline bool known_site(const walk_thread *t, const eph_site *s, uint32_t *id) {
  if (!s) return *id = 0, true;
  struct prof_site_cache_entry *c = prof_site_cache_entry(t->site_cache, s);
  if (c->site != s) {
    uint32_t found = prof_site_find_shared(t->p, s);
    if (!found) return false;
    c->site = s;
    c->id = found;
  }
  *id = c->id;
  return c->id <= t->split->site_limit;
}

static inline bool known_class(const struct walk_split *s, eph_class_id cls) {
  return cls < s->nclasses && s->classes[cls];
}

/* Not prof_grow: it notes the profiler's memory, which only the main
 * thread may. */
static void keep_for_later(walk_piece *piece, eph_value to, uint64_t birth) {
  if (piece->nsurvivors == piece->survivors_cap) {
    size_t cap = piece->survivors_cap ? piece->survivors_cap * 2 : 1024;
    tracked *t = realloc(piece->survivors, cap * sizeof *t);
    if (!t) {
      fprintf(stderr, "ephemera: profiler: out of memory (%zu bytes for eden's survivors)\n", cap * sizeof *t);
      abort();
    }
    piece->survivors = t;
    piece->survivors_cap = cap;
  }
  piece->survivors[piece->nsurvivors++] = (tracked){to, birth};
}

/* Walks a piece as one of two threads, a scavenge's fates, the sampler
 * drawing by clock; stops before an object that would declare a table
 * entry or whose class the filter has not looked up. */
static void walk_piece_run(const walk_thread *t, walk_piece *piece) {
  eph_profiler *p = t->p;
  const struct walk_split *split = t->split;
  walk_pos q = piece->pos;
  eden_olds olds = split->olds;
  eph_writer *out = piece->out;
  ephs_clock_cache *clock = t->clock;
  uint64_t samples = 0, deaths = 0;
  for (;;) {
    walk_pos before = q;
    eph_value was, at;
    bool dead;
    eph_site *site;
    if (!next_object(&olds, &q, &was, &at, &dead, &site)) break;
    eph_class_id cls = eph_gc_eden_walk_class(&q.w); /* not at's header again: the mutator may write it */
    if (!p->take_all) {
      int selected = prof_sampler_class_state(p, cls);
      if (EPH_UNLIKELY(!selected)) { /* a class the filter has not looked up yet */
        q = before;
        piece->stopped = true;
        break;
      }
      if (selected != 1 || !prof_sampler_walk_draw(p, q.clock)) continue;
    }
    uint32_t site_id; /* a survivor's class is written with its record, later */
    if (EPH_UNLIKELY((dead && !known_class(split, cls)) || !known_site(t, site, &site_id))) {
      q = before;
      piece->stopped = true;
      break;
    }
    uint64_t birth = birth_word(q.clock, site_id);
    if (dead) {
      size_t size = eph_object_bytes(at);
      eph_stamp b = prof_stamp_in(split->tables, birth & BIRTH_MASK, clock);
      eph_status st = eph_writer_batch_record(out, cls, (uint32_t)(birth >> BIRTH_BITS), size,
                                              prof_sampler_weight(p, size), &b, true);
      if (EPH_UNLIKELY(st != EPH_OK)) { /* the thread alone writes it again, and reports */
        q = before;
        piece->stopped = true;
        break;
      }
      deaths++;
    } else {
      keep_for_later(piece, at, birth);
    }
    samples++;
  }
  piece->pos = q;
  piece->samples = samples;
  piece->deaths = deaths;
  atomic_store_explicit(&piece->done, true, memory_order_release);
}

static void walk_broken(const char *what, uint64_t got, uint64_t want) {
  fprintf(stderr, "ephemera: profiler: shared eden walk: a piece ends at %s %#llx, the next began at %#llx\n", what,
          (unsigned long long)got, (unsigned long long)want);
  abort();
}

/*
 * The main thread keeps the walked pieces in eden's order: their records
 * into the file, their survivors into the lists, their counts.  While the
 * second thread runs (alone false) it stops at a piece not walked yet or
 * one that stopped (finishing it may declare); alone, it finishes those.
 */
static void join_done(walk_thread *t, bool alone) {
  eph_profiler *p = t->p;
  struct walk_split *s = t->split;
  for (; t->joined < s->npieces; t->joined++) {
    unsigned i = t->joined;
    walk_piece *piece = &s->piece[i];
    if (!atomic_load_explicit(&piece->done, memory_order_acquire) || (piece->stopped && !alone)) return;
    prof_write_error(p, piece->written ? piece->write_status : eph_writer_join(piece->out));
    *t->keep = prof_gc_keep_survivors(p, piece->survivors, piece->nsurvivors, *t->keep, t->span_open, &s->now);
    p->stats.samples += piece->samples;
    p->stats.deaths += piece->deaths;
    if (piece->stopped) *t->keep = walk_alone(p, &s->olds, &piece->pos, false, &s->now, *t->keep, t->span_open);
    if (i + 1 < s->npieces) {
      walk_pos end = piece->pos;
      const walk_pos *next = &s->start[i + 1];
      /* old-space allocations made with eden's top at the cut belong to both
       * (the next piece starts after them; this one did not get to them) */
      count_olds(&s->olds, &end, next->w.next);
      if (end.w.next != next->w.next) walk_broken("address", end.w.next, next->w.next);
      if (end.clock != next->clock) walk_broken("clock", end.clock, next->clock);
    }
  }
}

/* The tests' hold on thread t (EPHEMERA_WALK_DELAY): once a piece. */
static inline void test_delay(const walk_thread *t) {
  unsigned us = t->p->gc.walk_delay_us[!t->main];
  if (EPH_UNLIKELY(us)) usleep(us);
}

/* Takes pieces until none is left; the main thread keeps the walked ones
 * between its own, so that writing the file overlaps the other's walk. */

static void walk_pieces(walk_thread *t) {
  struct walk_split *s = t->split;
  test_delay(t);
  for (unsigned i; (i = atomic_fetch_add_explicit(&s->next_piece, 1, memory_order_relaxed)) < s->npieces;) {
    walk_piece_run(t, &s->piece[i]);
    test_delay(t);
    if (t->main) join_done(t, false);
  }
}

/*
 * A walk that runs on writes its pieces' records itself, in order, up to
 * the first that stopped, once the collection's end is in the file: the
 * spools are in this CPU's cache, and copying them into the file from the
 * other cost the mutator's thread about 1 % of DataFrame's run.  Meanwhile
 * the main thread writes the file only to declare sites, under the same
 * lock; a writer with a thread of its own is left to the main thread.
 * Returns false once the main thread has begun to finish the walk (the
 * pieces are then its own, and it waits for this thread).
 */
static bool write_ahead(walk_thread *t) {
  eph_profiler *p = t->p;
  struct walk_split *s = t->split;
  test_delay(t);
  pthread_mutex_lock(&p->sites_lock);
  bool on_its_own = !s->finishing;
  if (on_its_own && s->out_open)
    for (unsigned i = 0; i < s->npieces; i++) {
      walk_piece *piece = &s->piece[i];
      if (!atomic_load_explicit(&piece->done, memory_order_acquire) || piece->stopped) break;
      piece->write_status = eph_writer_join(piece->out);
      piece->written = true;
    }
  pthread_mutex_unlock(&p->sites_lock);
  return on_its_own;
}

/* The old list grows at the next collection by about the young entries
 * there were and the survivors walked: blocks for them now, while the
 * mutator runs (their page faults are then not its). */
static void spare_ahead(const walk_thread *t) {
  const struct walk_split *s = t->split;
  size_t grows = s->young_len;
  for (unsigned i = 0; i < s->npieces; i++)
    if (atomic_load_explicit(&s->piece[i].done, memory_order_acquire)) grows += s->piece[i].nsurvivors;
  prof_gc_spare_blocks(t->p, grows > s->old_room ? grows - s->old_room : 0);
}

static void *second_thread_main(void *arg) {
  walk_thread self = *(walk_thread *)arg; /* on its own stack: the main thread's is busy */
  walk_pieces(&self);
  if (self.split->running_on && write_ahead(&self)) spare_ahead(&self);
  return NULL;
}

void prof_gc_walk_note_gc_end(eph_profiler *p) {
  struct walk_split *s = p->gc.split;
  if (!s || !s->running_on) return;
  /* Whether the writer has a thread is read here, on the thread that
   * starts and stops it (never while a walk runs on: on_gc_start and the
   * stop finish the walk first). */
  bool open = !eph_writer_has_thread(p->out);
  pthread_mutex_lock(&p->sites_lock);
  s->out_open = open;
  pthread_mutex_unlock(&p->sites_lock);
}

/* The first EPH_AT mark in [lo, hi) at or past address `at`, or hi. */
static const eph_site_mark *mark_at_or_past(const eph_site_mark *lo, const eph_site_mark *hi, uintptr_t at) {
  while (lo < hi) {
    const eph_site_mark *m = lo + (hi - lo) / 2;
    if (m->at < at) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/*
 * Cuts whole's range into pieces of about equal size at EPH_AT marks;
 * returns how many (1: too small, or no mark to cut at).  A mark is the
 * start of its piece's first object, and its clock is the last old-space
 * allocation's at or below it plus the bytes since (eden's objects lie
 * end to end: no trailers in this mode).
 */
static unsigned cut(const eph_profiler *p, const eden_olds *of, const walk_pos *whole, walk_pos *pieces) {
  const eph_eden_walk *w = &whole->w;
  uintptr_t range = w->top - w->next, min = p->gc.walk_piece_min;
  pieces[0] = *whole;
  if (w->trailer_bytes || w->full || range < 2 * min) return 1;
  unsigned want = range / min < PIECES_MAX ? (unsigned)(range / min) : PIECES_MAX;
  eden_olds olds = *of;
  unsigned n = 1;
  for (unsigned k = 1; k < want; k++) {
    walk_pos *prev = &pieces[n - 1];
    const eph_site_mark *m = mark_at_or_past(prev->w.mark, w->marks_end, w->next + range / want * k);
    if (m == w->marks_end || m->at >= w->top) break;
    if (m->at == prev->w.next) continue;
    uintptr_t at = m->at;
    walk_pos *cur = &pieces[n++];
    *cur = *prev;
    prev->w.top = at;
    prev->w.marks_end = m;
    cur->w.next = at;
    cur->w.mark = m;
    count_olds(&olds, cur, at); /* the clock after the last of them, or prev's start */
    uintptr_t since = cur->next_old > prev->next_old ? olds.at[cur->next_old - 1].at : prev->w.next;
    cur->clock += at - since; /* the young bytes between */
  }
  return n;
}

static struct walk_split *split_state(eph_profiler *p) {
  if (p->gc.split) return p->gc.split;
  struct walk_split *s;
  if (posix_memalign((void **)&s, _Alignof(struct walk_split), sizeof *s) != 0) return NULL;
  memset(s, 0, sizeof *s);
  for (unsigned i = 0; i < PIECES_MAX; i++)
    if (!(s->piece[i].out = eph_writer_fork(p->out))) {
      while (i--) eph_writer_close(s->piece[i].out, NULL);
      free(s);
      return NULL;
    }
  return p->gc.split = s;
}

/* Trades p's old-space allocations for the walk's spare array: handed over
 * as a walk that runs on starts, given back if its thread does not. */
static void swap_olds(eph_profiler *p, struct walk_split *s) {
  struct old_alloc *olds = p->gc.eden.old_allocs;
  size_t cap = p->gc.eden.old_allocs_cap;
  p->gc.eden.old_allocs = s->olds_buf, p->gc.eden.old_allocs_cap = s->olds_cap;
  s->olds_buf = olds, s->olds_cap = cap;
}

/* A walk must end where the heap's clock stood at its collection: every
 * byte allocated since eden was last empty is an object walked or an
 * old-space allocation. */
static void check_walk_end(const eden_olds *olds, walk_pos end, uint64_t clock) {
  count_olds(olds, &end, UINTPTR_MAX); /* those after the last young object */
  if (end.clock == clock) return;
  fprintf(stderr, "ephemera: profiler: eden walk ends at clock %llu, the heap's is %llu\n",
          (unsigned long long)end.clock, (unsigned long long)clock);
  abort();
}

/* What the walk reads that the mutator may change meanwhile, fixed now
 * (running_on) or read in place (the walk ends in this collection). */
static bool fix_inputs(eph_profiler *p, struct walk_split *s, bool running_on, const eph_stamp *now) {
  s->now = *now;
  s->site_limit = p->next_site_id;
  s->olds = eden_olds_of(&p->gc.eden);
  if (!running_on) {
    s->tables = &p->clocks;
    s->classes = p->class_written; /* no class is declared while both threads walk */
    s->nclasses = p->class_written_len;
    return true;
  }
  if (!ephs_clocks_copy_range(&s->tables_copy, &p->clocks, p->gc.eden.eden_clock, now->bytes)) return false;
  s->tables = &s->tables_copy;
  s->classes_buf = prof_grow(p, s->classes_buf, &s->classes_cap, p->class_written_len, 1);
  if (p->class_written_len) memcpy(s->classes_buf, p->class_written, p->class_written_len);
  s->classes = s->classes_buf;
  s->nclasses = p->class_written_len;
  swap_olds(p, s); /* p's array is the walk's now, p gets the spare */
  return true;
}

/* Cuts eden into pieces and starts the second thread on them; false
 * (nothing done) if eden is not worth cutting or the thread does not
 * start.  running_on: the walk goes on after this collection. */
static bool walk_split_start(eph_profiler *p, const walk_pos *pos, const eph_stamp *now, bool running_on) {
  struct walk_split *s = split_state(p);
  if (!s) return false;
  eden_olds olds = eden_olds_of(&p->gc.eden);
  unsigned n = cut(p, &olds, pos, s->start);
  if (n < 2 && !running_on) return false;
  if (!fix_inputs(p, s, running_on, now)) return false;
  for (unsigned i = 0; i < n; i++) {
    walk_piece *piece = &s->piece[i];
    eph_writer_fork_sync(piece->out);
    piece->pos = s->start[i];
    piece->nsurvivors = 0;
    piece->stopped = piece->written = false;
    atomic_store_explicit(&piece->done, false, memory_order_relaxed);
  }
  s->npieces = n;
  atomic_store_explicit(&s->next_piece, 0, memory_order_relaxed);
  s->memory = prof_gc_eden_memory(p);
  p->out_lent_memory = eph_writer_memory(p->out); /* the second thread may change it */
  s->young_len = p->gc.young.len;
  s->old_room = p->gc.old.nblocks * OLD_BLOCK - p->gc.old.len;
  s->out_open = s->finishing = false;
  s->running_on = p->out_lent = running_on; /* before the thread starts: it reads it */
  s->busy = true;
  s->clock = running_on ? (ephs_clock_cache){0} : p->clocks.cache[0];
  s->second = (walk_thread){.p = p, .split = s, .clock = &s->clock, .site_cache = s->site_cache};
  if (pthread_create(&s->thread, NULL, second_thread_main, &s->second) != 0) {
    s->busy = s->running_on = p->out_lent = false;
    if (running_on) swap_olds(p, s); /* give the old-space allocations back */
    return false;
  }
  return true;
}

/* This thread takes the pieces left, waits for the second, and keeps
 * every piece. */
static void walk_split_end(eph_profiler *p, size_t *keep, bool *span_open) {
  struct walk_split *s = p->gc.split;
  if (s->running_on) { /* from here on the pieces are this thread's to join */
    pthread_mutex_lock(&p->sites_lock);
    s->finishing = true;
    pthread_mutex_unlock(&p->sites_lock);
  }
  ephs_clock_cache copy_cache = {0}; /* for the copied tables of a walk that ran on */
  walk_thread self = {.p = p, .split = s, .clock = s->running_on ? &copy_cache : &p->clocks.cache[0],
                      .site_cache = p->site_cache, .main = true, .keep = keep, .span_open = span_open};
  walk_pieces(&self);
  pthread_join(s->thread, NULL);
  s->busy = false;
  s->running_on = p->out_lent = false;
  join_done(&self, true); /* alone again: the rest, stopped pieces finished here */
  check_walk_end(&s->olds, s->piece[s->npieces - 1].pos, s->now.bytes);
}

void prof_gc_walk_finish(eph_profiler *p) {
  struct walk_split *s = p->gc.split;
  if (!s || !s->running_on) return;
  size_t keep = p->gc.young.len;
  bool span_open = false;
  walk_split_end(p, &keep, &span_open);
  p->gc.young.len = p->gc.young_settled = keep; /* all survived the scavenge walked (young_until) */
  prof_note_memory(p);
}

/* After a collection: walks what eden held (see the top); returns the
 * young entries kept. */
size_t prof_gc_settle_eden(eph_profiler *p, bool full, const eph_stamp *now, size_t keep, bool span_open) {
  walk_pos pos = {.clock = p->gc.eden.eden_clock};
  eph_gc_eden_walk_begin(p->h, &pos.w);
  bool shared = p->gc.walk_threads > 1 && !full && p->batch_kind != EPH_DEATH_CENSORED;
  bool running_on = shared && eph_heap_eden_pair(p->h) && pos.w.top - pos.w.next >= p->gc.walk_piece_min;
  if (shared && walk_split_start(p, &pos, now, running_on)) {
    if (!running_on) walk_split_end(p, &keep, &span_open);
  } else {
    eden_olds olds = eden_olds_of(&p->gc.eden);
    keep = walk_alone(p, &olds, &pos, full, now, keep, &span_open);
    check_walk_end(&olds, pos, now->bytes);
  }
  p->gc.eden.nold_allocs = 0;
  p->gc.eden.eden_clock = now->bytes;
  prof_note_memory(p); /* the heap's site log grows without telling */
  return keep;
}

void prof_gc_eden_free(eph_profiler *p) {
  prof_gc_walk_finish(p);
  struct walk_split *s = p->gc.split;
  if (!s) return;
  free(s->olds_buf);
  free(s->classes_buf);
  ephs_clocks_free(&s->tables_copy);
  for (unsigned i = 0; i < PIECES_MAX; i++) {
    eph_writer_close(s->piece[i].out, NULL);
    free(s->piece[i].survivors);
  }
  free(s);
  p->gc.split = NULL;
}

size_t prof_gc_eden_memory(const eph_profiler *p) {
  const struct walk_split *s = p->gc.split;
  if (!s) return 0;
  if (s->busy) return s->memory;
  size_t n = sizeof *s + s->olds_cap * sizeof *s->olds_buf + s->classes_cap + ephs_clocks_memory(&s->tables_copy);
  for (unsigned i = 0; i < PIECES_MAX; i++)
    n += s->piece[i].survivors_cap * sizeof(tracked) + eph_writer_memory(s->piece[i].out);
  return n;
}
