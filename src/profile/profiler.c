/*
 * profiler.c — what the modes share: starting and stopping a profile,
 * records, the class and site tables, and the observer hooks, which call
 * the mode through its table (prof_mode, profiler.h).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiler.h"

eph_stamp prof_now(eph_profiler *p) {
  return (eph_stamp){
      .bytes = prof_clock(p),
      .wall_ns = prof_wall_ns() - p->start_ns,
      .scavenges = p->scavenges,
      .full_gcs = p->full_gcs,
  };
}

void prof_write_error(eph_profiler *p, eph_status st) {
  if (st == EPH_OK || p->error != EPH_OK) return;
  p->error = st;
  snprintf(p->error_message, sizeof p->error_message, "%s", eph_writer_error(p->out));
}

size_t prof_writer_memory(const eph_profiler *p) {
  return p->out_lent ? p->out_lent_memory : eph_writer_memory(p->out);
}

void prof_note_memory(eph_profiler *p) {
  uint64_t m = sizeof *p + ephs_clocks_memory(&p->clocks) + p->class_state_len + p->class_written_len +
               p->sites.cap * (sizeof *p->sites.keys + sizeof *p->sites.ids) +
               (eph_heap_eden_walk(p->h) ? eph_heap_site_log_bytes(p->h) : 0) + prof_writer_memory(p) +
               p->mode->memory(p);
  p->stats.memory_bytes = m;
  if (m > p->stats.peak_memory_bytes) p->stats.peak_memory_bytes = m;
}

long prof_usable_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return sysconf(_SC_NPROCESSORS_ONLN);
}

void *prof_grow_slow(eph_profiler *p, void *items, size_t *cap, size_t need, size_t size) {
  size_t c = *cap ? *cap : 256;
  while (c < need) c += c / 2 + 1;
  void *n = realloc(items, c * size);
  if (!n) {
    fprintf(stderr, "ephemera: profiler: out of memory (%zu bytes for its tables)\n", c * size);
    abort();
  }
  *cap = c;
  prof_note_memory(p);
  return n;
}

/* --- tables ----------------------------------------------------------------- */

uint32_t prof_class_id_slow(eph_profiler *p, eph_class_id cls) {
  if (cls >= p->class_written_len) {
    size_t len = (size_t)cls * 2 + 16;
    uint8_t *wr = realloc(p->class_written, len);
    if (!wr) return cls; /* the entry will be missing; the reader reports it */
    memset(wr + p->class_written_len, 0, len - p->class_written_len);
    p->class_written = wr;
    p->class_written_len = len;
  }
  if (!p->class_written[cls]) {
    p->class_written[cls] = 1;
    const char *name = eph_class_name(p->h, cls);
    prof_write_error(p, eph_writer_class(p->out, cls, name ? name : "?"));
  }
  return cls;
}

static size_t site_slot(const site_map *m, const eph_site *s) {
  size_t i = ((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15u & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != s) i = (i + 1) & (m->cap - 1);
  return i;
}

uint32_t prof_site_find(const eph_profiler *p, const eph_site *s) {
  if (!p->sites.cap) return 0;
  size_t i = site_slot(&p->sites, s);
  return p->sites.keys[i] ? p->sites.ids[i] : 0;
}

uint32_t prof_site_find_shared(eph_profiler *p, const eph_site *s) {
  pthread_mutex_lock(&p->sites_lock);
  uint32_t id = prof_site_find(p, s);
  pthread_mutex_unlock(&p->sites_lock);
  return id;
}

/* Sites are numbered per profile (not in eph_site.id: two heaps in one
 * process may profile the same call site). */
static uint32_t site_id_locked(eph_profiler *p, const eph_site *s) {
  site_map *m = &p->sites;
  if (2 * (m->len + 1) > m->cap) {
    site_map bigger = {.cap = m->cap ? 2 * m->cap : 256};
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.ids = calloc(bigger.cap, sizeof *bigger.ids);
    if (!bigger.keys || !bigger.ids) {
      free(bigger.keys);
      free(bigger.ids);
      return 0;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = site_slot(&bigger, m->keys[i]);
      bigger.keys[j] = m->keys[i];
      bigger.ids[j] = m->ids[i];
    }
    bigger.len = m->len;
    free(m->keys);
    free(m->ids);
    *m = bigger;
  }
  size_t i = site_slot(m, s);
  if (!m->keys[i]) {
    m->keys[i] = s;
    m->ids[i] = ++p->next_site_id;
    m->len++;
    prof_write_error(p, eph_writer_site(p->out, m->ids[i], s->file, s->line, s->function));
  }
  return m->ids[i];
}

uint32_t prof_site_id_slow(eph_profiler *p, const eph_site *s) {
  pthread_mutex_lock(&p->sites_lock);
  uint32_t id = site_id_locked(p, s);
  pthread_mutex_unlock(&p->sites_lock);
  return id;
}

/* --- records ------------------------------------------------------------------ */

void prof_write_record_of(eph_profiler *p, eph_class_id cls, size_t size, uint64_t birth, const eph_stamp *death,
                          const eph_stamp *alive_until, eph_death_kind kind) {
  /* Field by field: every field is set, and an initialiser would first
   * clear the whole struct (this runs once per sampled object). */
  eph_record r;
  r.id = birth & BIRTH_MASK; /* the birth clock: unique, in allocation order */
  r.class_id = prof_class_id(p, cls);
  r.site_id = (uint32_t)(birth >> BIRTH_BITS);
  r.size = size;
  r.weight = prof_sampler_weight(p, r.size);
  r.birth = prof_clocks_stamp_at(p, birth & BIRTH_MASK);
  r.death = *death;
  r.alive_until = !alive_until ? *death : alive_until->bytes == UINT64_MAX ? r.birth : *alive_until;
  r.death_kind = (uint8_t)kind;
  prof_write_error(p, eph_writer_record(p->out, &r));
  if (kind == EPH_DEATH_CENSORED) p->stats.censored++;
  else p->stats.deaths++;
}

void prof_batch(eph_profiler *p, const eph_stamp *death, const eph_stamp *alive_until, eph_death_kind kind) {
  eph_writer_batch(p->out, death, alive_until ? alive_until : death, kind);
  p->batch_kind = kind;
}

void prof_batch_flush(eph_profiler *p, prof_batch_run *run) {
  size_t n = run->n;
  if (!n) {
    run->room = 0;
    return;
  }
  if (run->r != run->own) {
    prof_write_error(p, eph_writer_batch_clocked_filled(p->out, n));
  } else {
    for (size_t i = 0; i < n; i++) {
      const eph_batch_clocked_record *r = &run->own[i];
      eph_status st;
      if (p->clocks_in_writer) {
        st = eph_writer_batch_record_clocked(p->out, r->class_id, r->site_id, r->size, r->weight, r->birth, false);
      } else {
        eph_stamp b = prof_clocks_stamp_at(p, r->birth);
        st = eph_writer_batch_record(p->out, r->class_id, r->site_id, r->size, r->weight, &b, false);
      }
      prof_write_error(p, st);
    }
  }
  prof_count_batch(p, n);
  run->n = run->room = 0;
}

void prof_batch_room(eph_profiler *p, prof_batch_run *run) {
  prof_batch_flush(p, run);
  if (p->clocks_in_writer && (run->r = eph_writer_batch_clocked_room(p->out, &run->room))) return;
  run->r = run->own; /* stamped here, or a fork out of memory (which the writer reports) */
  run->room = sizeof run->own / sizeof *run->own;
}

/* --- observer hooks -------------------------------------------------------------- */

/* The writer's thread starts with the first collection, which brings the
 * first burst of records: a run that ends before it writes them all at the
 * stop, where the thread would only cost its start (eph_profile_stop).  If
 * the thread cannot start, the writer writes on the program's thread. */
static void start_writer_thread(eph_profiler *p) {
  p->writer_thread_due = false;
  (void)eph_writer_start_thread(p->out);
}

static void on_gc_start(void *data, eph_heap *h, eph_gc_kind kind) {
  (void)h;
  (void)kind;
  eph_profiler *p = data;
  /* A thread of the mode's that writes the file (gc mode's walk of the
   * last scavenge's eden) ends first: the file must be the program
   * thread's again before the writer's thread starts. */
  if (p->mode->finish_writes) p->mode->finish_writes(p);
  if (p->writer_thread_due) start_writer_thread(p);
  p->mode->on_gc_start(p);
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  (void)h;
  eph_profiler *p = data;
  p->mode->on_collect(p, kind);
}

static void on_gc_end(void *data, eph_heap *h, const eph_gc_event *ev) {
  (void)h;
  eph_profiler *p = data;
  if (ev->kind == EPH_GC_SCAVENGE) p->scavenges++;
  else p->full_gcs++;
  p->mode->on_gc_end(p, ev->kind);
  prof_write_error(p, eph_writer_gc(p->out, ev));
  if (p->mode->gc_written) p->mode->gc_written(p);
}

/* A class filter name that no class of the program has selects nothing:
 * a typo would otherwise give an empty profile without a word. */
static void warn_unmatched_classes(const eph_profiler *p) {
  for (const char *c = p->spec.classes, *at; *c;) {
    size_t len;
    at = c, c = prof_class_list_next(c, &len);
    char name[sizeof p->spec.classes];
    snprintf(name, sizeof name, "%.*s", (int)len, at);
    if (*name && !eph_class_find(p->h, name))
      fprintf(stderr, "ephemera: warning: profile %s: classes=%s: the program registered no class of that name\n",
              p->spec.out, name);
  }
}

/* The profile of a heap freed while it runs (EPHEMERA_PROFILE's). */
static void on_heap_free(void *data, eph_heap *h) {
  warn_unmatched_classes(data);
  eph_error err;
  if (eph_profile_stop(h, NULL, &err) != EPH_OK) fprintf(stderr, "ephemera: %s\n", err.message);
}

/* The profile's observer is added with this tool: the profile of a heap
 * is found by it among the heap's observers. */
static const char profile_tool;

static eph_profiler *profiler_of(eph_heap *h) {
  eph_observer_reg *r = eph_heap_find_observer(h, &profile_tool);
  return r ? eph_observer_data(r) : NULL;
}

void eph_profile_caller_push(eph_heap *h, const eph_site *site) {
  eph_profiler *p = profiler_of(h);
  if (!p || !p->spec.stacks) return;
  if (p->ncallers < PROF_MAX_CALLERS) p->callers[p->ncallers] = site;
  p->ncallers++;
}

void eph_profile_caller_pop(eph_heap *h) {
  eph_profiler *p = profiler_of(h);
  if (p && p->ncallers) p->ncallers--;
}

/* --- start and stop ------------------------------------------------------------- */

/* Whether the file is written on a thread of its own (writer_async.c).
 * EPHEMERA_WRITER_THREAD=1 asks for it in every mode, =0 in none; by
 * default Merlin and finalization mode have it where a second CPU is
 * usable, unless the spec says threads=1: a record there costs the
 * program's thread a copy instead of its encoding (docs/gc-mode.md has
 * the measurements).  gc mode does not: copying each record for the thread
 * and sharing its batches across CPUs costs more than encoding it where
 * the eden walk already has it in cache (DataFrame at 100 % 3.65 s ->
 * 4.30 s with it). */
static int writer_thread_env(void) { /* EPHEMERA_WRITER_THREAD: 1, 0, or -1 when unset */
  const char *env = getenv("EPHEMERA_WRITER_THREAD");
  return env && *env ? strcmp(env, "0") != 0 : -1;
}
static bool second_cpu_allowed(const eph_profile_spec *spec) { return spec->threads != 1 && prof_usable_cpus() > 1; }

static bool writer_thread_wanted(const eph_profiler *p) {
  int env = writer_thread_env();
  if (env >= 0) return env;
  return p->mode->writer_thread && second_cpu_allowed(&p->spec);
}

static size_t build_meta(eph_profiler *p, eph_meta_pair *meta, size_t cap, char (*buf)[256],
                         const eph_meta_pair *extra, size_t nextra) {
  size_t n = 0;
  meta[n++] = (eph_meta_pair){"runtime", "ephemera"};
  meta[n++] = (eph_meta_pair){"mode", p->mode->name};
  eph_profile_spec_format(&p->spec, buf[0], sizeof buf[0]);
  meta[n++] = (eph_meta_pair){"profile", buf[0]};
  if (p->spec.sample_bytes) snprintf(buf[1], sizeof buf[1], "bytes:%llu", (unsigned long long)p->spec.sample_bytes);
  else snprintf(buf[1], sizeof buf[1], "1/%llu", (unsigned long long)p->spec.sample_every);
  meta[n++] = (eph_meta_pair){"sample", buf[1]};
  eph_gc_params_format(eph_heap_params(p->h), buf[2], sizeof buf[2]);
  meta[n++] = (eph_meta_pair){"gc", buf[2]};
  meta[n++] = (eph_meta_pair){"clocks", "bytes allocated, wall ns since start, collections completed"};
  if (gethostname(buf[3], sizeof buf[3]) != 0) snprintf(buf[3], sizeof buf[3], "unknown");
  meta[n++] = (eph_meta_pair){"host", buf[3]};
  time_t t = time(NULL);
  struct tm tm;
  strftime(buf[4], sizeof buf[4], "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
  meta[n++] = (eph_meta_pair){"date", buf[4]};
  if (p->spec.classes[0]) meta[n++] = (eph_meta_pair){"classes", p->spec.classes};
  if (p->spec.stacks) { /* the STAK feature flag (docs/eph-format.md 5.8) */
    snprintf(buf[5], sizeof buf[5], "%u", p->spec.stacks);
    meta[n++] = (eph_meta_pair){"stacks", buf[5]};
  }
  for (size_t i = 0; i < nextra && n < cap; i++) meta[n++] = extra[i];
  return n;
}

const prof_mode *prof_mode_of(eph_profile_mode mode) {
  static const prof_mode *const modes[] = {
      [EPH_MODE_GC] = &prof_mode_gc,
      [EPH_MODE_FINALIZATION] = &prof_mode_finalization,
      [EPH_MODE_MERLIN] = &prof_mode_merlin,
      [EPH_MODE_BRUTE] = &prof_mode_brute,
  };
  return (unsigned)mode < sizeof modes / sizeof *modes ? modes[mode] : NULL;
}

/* The profile, cleared, and its writer closed: no profile after all (its
 * file would look complete). */
static void abandon(eph_profiler *p) {
  p->mode->free(p);
  eph_writer_close(p->out, NULL);
  unlink(p->spec.out);
  prof_clocks_free(p);
  pthread_mutex_destroy(&p->sites_lock);
  free(p);
}

eph_status eph_profile_start(eph_heap *h, const eph_profile_spec *spec, const eph_meta_pair *meta, size_t nmeta,
                             eph_error *err) {
  if (profiler_of(h)) {
    eph_error_fill(err, EPH_ERR_INVALID, "a profile already runs on this heap");
    return EPH_ERR_INVALID;
  }
  const prof_mode *mode = prof_mode_of(spec->mode);
  if (!mode) {
    eph_error_fill(err, EPH_ERR_INVALID, "profile spec: no mode %d", (int)spec->mode);
    return EPH_ERR_INVALID;
  }
  if (spec->trace && !mode->traces) {
    eph_error_fill(err, EPH_ERR_INVALID, "profile spec: trace=on needs mode=merlin");
    return EPH_ERR_INVALID;
  }
  if (spec->sample_every == 0) {
    eph_error_fill(err, EPH_ERR_INVALID, "profile spec: sample=1/0");
    return EPH_ERR_INVALID;
  }
  eph_profiler *p = calloc(1, sizeof *p);
  if (!p) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  p->h = h;
  p->spec = *spec;
  p->mode = mode;
  pthread_mutex_init(&p->sites_lock, NULL);
  p->count_weight = (double)spec->sample_every;
  ephs_rng_init(&p->rng, spec->seed * UINT64_C(0x9E3779B97F4A7C15) | 1);
  p->start_ns = prof_wall_ns();
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  p->scavenges = p->scavenges0 = (uint32_t)s.scavenges;
  p->full_gcs = p->full_gcs0 = (uint32_t)s.full_gcs;

  eph_meta_pair pairs[64];
  char buf[6][256];
  size_t n = build_meta(p, pairs, 64, buf, meta, nmeta);
  p->out = eph_writer_open(spec->out, pairs, n, spec->compress, err);
  if (!p->out) {
    pthread_mutex_destroy(&p->sites_lock);
    free(p);
    return err ? err->status : EPH_ERR_INVALID;
  }
  /* If the thread cannot start, the writer stays usable and writes at once. */
  p->writer_thread_due = writer_thread_wanted(p);
  p->clocks_in_writer = mode->stamping == PROF_STAMP_IN_WRITER ||
                        (mode->stamping == PROF_STAMP_ON_WRITER_THREAD && p->writer_thread_due);
  prof_clocks_start(p);
  p->take_all = !spec->sample_bytes && spec->sample_every <= 1 && !spec->classes[0];
  eph_observer obs = {.data = p,
                      .tool = &profile_tool,
                      .on_gc_start = on_gc_start,
                      .on_collect = on_collect,
                      .on_gc_end = on_gc_end,
                      .on_heap_free = on_heap_free,
                      .on_alloc_is_leaf = true};
  eph_status st = mode->start(p, &obs, err);
  if (st != EPH_OK) {
    abandon(p);
    return st;
  }
  if (!(p->obs = eph_heap_add_observer(h, &obs))) {
    eph_error_fill(err, EPH_ERR_INVALID, "the heap has %d observers already", EPH_MAX_OBSERVERS);
    abandon(p);
    return EPH_ERR_INVALID;
  }
  if (mode->arm) mode->arm(p);
  prof_note_memory(p);
  return EPH_OK;
}

/*
 * Whether the stop's records (the last full GC's deaths, then the
 * censored: a record for every sample still tracked) are encoded on the
 * writer's thread, while this thread walks the samples and copies each
 * record into its queue.  In gc and finalization mode, where two CPUs are
 * usable, unless the spec says threads=1 or EPHEMERA_WRITER_THREAD=0, and
 * for STOP_THREAD_RECORDS tracked samples or more: below that, starting
 * the thread costs more than it saves (EPHEMERA_STOP_THREAD_MIN, a count,
 * sets another bound; tests use it).  Merlin's stop has threads of its own
 * (stop_records.c).  On DataFrame at 100 % the stop took 0.344 s ->
 * 0.309 s in gc mode (15 interleaved pairs) and 0.633 s -> 0.451 s in
 * finalization mode (7 pairs): the walk and the encoding, which was half
 * of the stop, now overlap.
 */
#define STOP_THREAD_RECORDS 65536
static bool stop_on_writer_thread(const eph_profiler *p) {
  if (!p->mode->stop_on_writer_thread) return false;
  if (writer_thread_env() == 0 || !second_cpu_allowed(&p->spec)) return false;
  uint64_t done = p->stats.deaths + p->stats.censored, live = p->stats.samples > done ? p->stats.samples - done : 0;
  const char *min = getenv("EPHEMERA_STOP_THREAD_MIN");
  return live >= (min && *min ? strtoull(min, NULL, 10) : STOP_THREAD_RECORDS);
}

eph_status eph_profile_stop(eph_heap *h, eph_profile_stats *final, eph_error *err) {
  eph_profiler *p = profiler_of(h);
  if (!p) return EPH_OK;
  bool held_signals = prof_signals_detach(p);
  /* From here the program waits for the profile: the records are stamped
   * on this thread, and encoded on the writer's where that shortens the
   * wait (stop_on_writer_thread). */
  p->clocks_in_writer = false;
  p->writer_thread_due = false;
  /* No other thread may write the file while its thread starts or stops:
   * gc mode's walk of the last scavenge's eden ends first. */
  if (p->mode->finish_writes) p->mode->finish_writes(p);
  if (stop_on_writer_thread(p)) (void)eph_writer_start_thread(p->out); /* if it fails, all here */
  else prof_write_error(p, eph_writer_stop_thread(p->out));
  /* A last full GC settles every object that is already garbage, so that
   * only objects still reachable at the end are censored. */
  if (p->mode->before_stop) p->mode->before_stop(p);
  eph_collect(h, EPH_GC_FULL);
  p->mode->stop(p);
  eph_heap_remove_observer(h, p->obs);

  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  eph_totals totals = {
      .wall_ns = prof_wall_ns() - p->start_ns,
      .cpu_ns = s.cpu_ns,
      .gc_wall_ns = s.gc_wall_ns,
      .bytes_allocated = s.bytes_allocated - p->stats.own_bytes,
      .objects_allocated = s.objects_allocated - p->stats.own_objects,
      .records = p->stats.samples,
      .censored = p->stats.censored,
      .scavenges = s.scavenges,
      .full_gcs = s.full_gcs,
      .peak_heap = s.peak_committed,
  };
  eph_status st = eph_writer_close(p->out, &totals);
  p->out = NULL; /* gone: prof_note_memory counts no writer now */
  if (st != EPH_OK && p->error == EPH_OK) {
    p->error = st;
    snprintf(p->error_message, sizeof p->error_message, "could not finish writing the file (%s)", eph_status_name(st));
  }
  eph_status result = p->error;
  prof_note_memory(p);
  eph_profile_stats stats = p->stats;
  if (final) *final = stats;
  if (result != EPH_OK) eph_error_fill(err, result, "profile %s: %s", p->spec.out, p->error_message);
  p->mode->free(p);
  free(p->sites.keys);
  free(p->sites.ids);
  prof_stacks_free(p);
  free(p->class_state);
  free(p->class_written);
  prof_clocks_free(p);
  pthread_mutex_destroy(&p->sites_lock);
  char out[sizeof p->spec.out];
  snprintf(out, sizeof out, "%s", p->spec.out);
  free(p);
  if (held_signals) prof_signals_release(out, &stats);
  return result;
}

eph_status eph_profile_stop_on_signals(eph_heap *h, eph_error *err) {
  eph_profiler *p = profiler_of(h);
  if (!p) {
    eph_error_fill(err, EPH_ERR_INVALID, "no profile runs on this heap");
    return EPH_ERR_INVALID;
  }
  return prof_signals_attach(p, err);
}

bool eph_profile_stats_get(eph_heap *h, eph_profile_stats *out) {
  eph_profiler *p = profiler_of(h);
  if (!p) return false;
  prof_note_memory(p);
  *out = p->stats;
  return true;
}
