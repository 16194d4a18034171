/*
 * test_trace DIR — unit tests of libephemera_trace on small hand-made
 * traces (written to DIR): offline Merlin's results object by object
 * (cycles, chains, stores that overwrite, root exits, censored objects,
 * byte and ephemeron objects), its comparison with a trace's own deaths,
 * its complaints about unfaithful traces, the granulated event sequence,
 * and sizes and granules.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/format.h"
#include "trace.h"

static int failures;

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      failures++;                                                    \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      printf(__VA_ARGS__);                                           \
      putchar('\n');                                                 \
    }                                                                \
  } while (0)

/* --- building traces -------------------------------------------------------------- */

enum { CLS_OBJ = 1, CLS_BYTES = 2, CLS_EPH = 3, SITE = 1 };
#define MAXEV 256

typedef struct tb {
  eph_event ev[MAXEV];
  size_t n;
  uint64_t clock;
} tb;

static void ev(tb *t, eph_event_kind kind, uint64_t time, uint64_t obj, uint64_t a, uint64_t b, uint64_t c) {
  if (t->n < MAXEV) t->ev[t->n++] = (eph_event){.kind = (uint8_t)kind, .time = time, .obj = obj, .a = a, .b = b, .c = c};
}

/* Allocates an object of `size` bytes (header included) and format fmt; returns its id. */
static uint64_t alloc(tb *t, uint64_t size, unsigned fmt) {
  t->clock += size;
  uint64_t cls = fmt == EPH_FORMAT_BYTES ? CLS_BYTES : fmt == EPH_FORMAT_EPHEMERON ? CLS_EPH : CLS_OBJ;
  ev(t, EPH_EV_ALLOC, t->clock, t->clock, cls, size, SITE | (uint64_t)fmt << 32);
  return t->clock;
}

static void store(tb *t, uint64_t obj, uint64_t slot, uint64_t old, uint64_t new_value) {
  ev(t, EPH_EV_STORE, t->clock, obj, slot, old, new_value);
}

static void root_exit(tb *t, uint64_t time, uint64_t obj) { ev(t, EPH_EV_ROOT, time, obj, 0, 0, 0); }

/* Expected outcome per object: death time, or 0 = censored. */
typedef struct expect {
  uint64_t id, death;
} expect;

/* Writes t with DEATH events and records from `deaths` (0 = censored) as path. */
static int write_trace(const char *path, const tb *t, const expect *deaths, size_t n) {
  eph_error err;
  eph_meta_pair meta[] = {{"runtime", "ephemera"}, {"mode", "merlin"}};
  eph_writer *w = eph_writer_open(path, meta, 2, false, &err);
  if (!w) {
    printf("cannot write %s: %s\n", path, err.message);
    return 1;
  }
  eph_status st = eph_writer_class(w, CLS_OBJ, "Obj");
  if (st == EPH_OK) st = eph_writer_class(w, CLS_BYTES, "Bytes");
  if (st == EPH_OK) st = eph_writer_class(w, CLS_EPH, "Eph");
  if (st == EPH_OK) st = eph_writer_site(w, SITE, "test.c", 1, "test");
  for (size_t i = 0; i < t->n && st == EPH_OK; i++) st = eph_writer_event(w, &t->ev[i]);
  for (size_t i = 0; i < n && st == EPH_OK; i++)
    if (deaths[i].death) st = eph_writer_event(w, &(eph_event){.kind = EPH_EV_DEATH, .time = deaths[i].death, .obj = deaths[i].id});
  for (size_t i = 0; i < n && st == EPH_OK; i++) {
    uint64_t d = deaths[i].death ? deaths[i].death : t->clock;
    eph_record r = {.id = deaths[i].id, .class_id = CLS_OBJ, .site_id = SITE, .size = 24, .weight = 1,
                    .birth = {.bytes = deaths[i].id, .wall_ns = deaths[i].id * 10},
                    .death = {.bytes = d, .wall_ns = d * 10},
                    .death_kind = deaths[i].death ? EPH_DEATH_EXACT : EPH_DEATH_CENSORED};
    r.alive_until = r.death;
    st = eph_writer_record(w, &r);
  }
  if (st != EPH_OK) {
    printf("writing %s: %s\n", path, eph_writer_error(w));
    eph_writer_close(w, NULL);
    return 1;
  }
  if (eph_writer_close(w, NULL) != EPH_OK) {
    printf("closing %s: %s\n", path, eph_writer_error(NULL));
    return 1;
  }
  return 0;
}

static eph_file *load(const char *path) {
  eph_file *p = NULL;
  eph_error err;
  if (eph_file_load(path, &p, &err) != EPH_OK) {
    printf("cannot load %s: %s\n", path, err.message);
    return NULL;
  }
  return p;
}

static void expect_results(const eph_trace_merlin *m, const expect *x, size_t n) {
  CHECK(m->nobjects == n, "%zu objects, expected %zu", m->nobjects, n);
  for (size_t i = 0; i < n; i++) {
    size_t k;
    if (!eph_trace_merlin_find(m, x[i].id, &k)) {
      CHECK(0, "object %" PRIu64 " not found", x[i].id);
      continue;
    }
    if (x[i].death)
      CHECK(!m->censored[k] && m->death[k] == x[i].death, "object %" PRIu64 ": %s at %" PRIu64 ", expected dead at %" PRIu64,
            x[i].id, m->censored[k] ? "censored" : "dead", m->death[k], x[i].death);
    else
      CHECK(m->censored[k] && m->death[k] == m->end, "object %" PRIu64 ": dead at %" PRIu64 ", expected censored", x[i].id,
            m->death[k]);
  }
}

/* --- a graph of pointer objects ------------------------------------------------------ */

/* Builds the graph trace; fills x (17 objects). */
static void build_graph(tb *t, expect *x) {
  memset(t, 0, sizeof *t);
  uint64_t A = alloc(t, 24, 0), B = alloc(t, 24, 0), C = alloc(t, 24, 0);
  store(t, A, 0, 0, B); /* a cycle A -> B -> C -> A */
  store(t, B, 0, 0, C);
  store(t, C, 0, 0, A);
  uint64_t D = alloc(t, 24, 0); /* never referenced: dead at birth */
  uint64_t E = alloc(t, 24, 0), F = alloc(t, 24, 0);
  store(t, E, 0, 0, F); /* E in a root to the end: E and F censored */
  uint64_t G = alloc(t, 24, 0);
  store(t, G, 1, 0, E); /* dead G pointing to censored E */
  uint64_t H = alloc(t, 24, 0), I = alloc(t, 24, 0);
  store(t, H, 0, 0, I);
  uint64_t J = alloc(t, 24, 0);
  store(t, H, 0, I, J); /* I loses its only reference at this time */
  root_exit(t, t->clock, A); /* the cycle's last root exit: A, B and C die with it */
  uint64_t K = alloc(t, 40, 0);
  root_exit(t, K, K);
  uint64_t L = alloc(t, 32, 0), M = alloc(t, 24, 0);
  store(t, L, 2, 0, M);
  uint64_t N = alloc(t, 24, 0);
  root_exit(t, N, L); /* M dies with L, later than its own stamp */
  uint64_t O = alloc(t, 24, 0), P = alloc(t, 24, 0);
  store(t, O, 0, 0, P);
  root_exit(t, P, O);
  uint64_t Q = alloc(t, 24, 0);
  root_exit(t, Q, P); /* P outlives O, its only referrer: O's earlier stamp must not lower it */
  ev(t, EPH_EV_GC, t->clock, 0, EPH_GC_FULL, 1, 0);
  ev(t, EPH_EV_ROOT, t->clock, E, 1, 0, 0);
  ev(t, EPH_EV_ROOT, t->clock, H, 1, 0, 0);
  ev(t, EPH_EV_ROOT, t->clock, E, 1, 0, 0); /* in two root slots */
  expect e[] = {{A, J}, {B, J}, {C, J}, {D, D}, {E, 0}, {F, 0}, {G, G}, {H, 0}, {I, J},
                {J, 0}, {K, K}, {L, N}, {M, N}, {N, N}, {O, P}, {P, Q}, {Q, Q}};
  memcpy(x, e, sizeof e);
}

static void test_graph(const char *dir) {
  tb t;
  expect x[17];
  build_graph(&t, x);
  char path[512];
  snprintf(path, sizeof path, "%s/graph.eph", dir);
  if (write_trace(path, &t, x, 17)) {
    failures++;
    return;
  }
  eph_file *p = load(path);
  if (!p) {
    failures++;
    return;
  }
  eph_trace_merlin m;
  eph_error err;
  CHECK(eph_trace_merlin_run(p, &m, &err) == EPH_OK, "%s", err.message);
  expect_results(&m, x, 17);
  CHECK(m.stats.dead == 13 && m.stats.censored == 4, "%" PRIu64 " dead, %" PRIu64 " censored", m.stats.dead, m.stats.censored);
  CHECK(m.stats.final_roots == 3 && m.stats.stale_stores == 0 && m.stats.unknown_ids == 0 && m.stats.bad_slots == 0,
        "final roots %" PRIu64 ", stale %" PRIu64 ", unknown %" PRIu64 ", bad slots %" PRIu64, m.stats.final_roots,
        m.stats.stale_stores, m.stats.unknown_ids, m.stats.bad_slots);
  eph_trace_diff d[4];
  size_t compared = 0;
  CHECK(eph_trace_merlin_check(p, &m, d, 4, &compared) == 0 && compared == 17, "the trace's own deaths disagree");

  /* The recomputed profile. */
  char out[512];
  snprintf(out, sizeof out, "%s/graph-offline.eph", dir);
  CHECK(eph_trace_merlin_write(p, &m, out, false, &err) == EPH_OK, "%s", err.message);
  eph_file *o = load(out);
  CHECK(o != NULL, "no output");
  if (o) {
    CHECK(o->nrecords == 17, "%zu records", o->nrecords);
    const char *v = eph_file_meta(o, "offline_merlin");
    CHECK(v && !strcmp(v, "yes"), "meta offline_merlin");
    CHECK(o->nevents == 0, "events in the offline profile");
    for (size_t i = 0; i < o->nrecords && i < 17; i++) {
      const eph_record *r = &o->records[i];
      CHECK(r->id == x[i].id, "record %zu has id %" PRIu64, i, r->id);
      CHECK(r->death_kind == (x[i].death ? EPH_DEATH_EXACT : EPH_DEATH_CENSORED), "record %" PRIu64 " kind %u", r->id, r->death_kind);
      CHECK(r->death.bytes == (x[i].death ? x[i].death : t.clock), "record %" PRIu64 " death %" PRIu64, r->id, r->death.bytes);
      /* wall clock: the input's records say wall = 10 * bytes at every birth and death */
      CHECK(r->death.wall_ns == 10 * r->death.bytes && r->birth.wall_ns == 10 * r->birth.bytes, "record %" PRIu64 " wall %" PRIu64,
            r->id, r->death.wall_ns);
      CHECK(r->class_id == CLS_OBJ && r->site_id == SITE, "record %" PRIu64 " class %u site %u", r->id, r->class_id, r->site_id);
    }
    eph_file_free(o);
  }
  eph_trace_merlin_free(&m);
  eph_file_free(p);

  /* A trace whose own deaths are wrong: I at its birth, G censored. */
  expect wrong[17];
  memcpy(wrong, x, sizeof wrong);
  wrong[8].death = wrong[8].id;
  wrong[6].death = 0;
  snprintf(path, sizeof path, "%s/graph-wrong.eph", dir);
  if (write_trace(path, &t, wrong, 17) || !(p = load(path))) {
    failures++;
    return;
  }
  CHECK(eph_trace_merlin_run(p, &m, &err) == EPH_OK, "%s", err.message);
  size_t n = eph_trace_merlin_check(p, &m, d, 4, &compared);
  CHECK(n == 2, "%zu differences, expected 2", n);
  if (n == 2) {
    CHECK(d[0].kind == EPH_TRACE_DIFF_OFFLINE_DEAD && d[0].id == x[6].id && d[0].offline == x[6].death, "first: kind %d id %" PRIu64,
          d[0].kind, d[0].id);
    CHECK(d[1].kind == EPH_TRACE_DIFF_TIME && d[1].id == x[8].id && d[1].offline == x[8].death && d[1].online == x[8].id,
          "second: kind %d id %" PRIu64, d[1].kind, d[1].id);
  }
  eph_trace_merlin_free(&m);
  eph_file_free(p);
}

/* --- byte and ephemeron objects -------------------------------------------------------- */

static void test_formats(const char *dir) {
  tb t = {0};
  uint64_t S = alloc(&t, 40, EPH_FORMAT_BYTES);     /* no slots */
  uint64_t E = alloc(&t, 32, EPH_FORMAT_EPHEMERON); /* three slots */
  uint64_t V = alloc(&t, 24, EPH_FORMAT_POINTERS);
  store(&t, E, 2, 0, V);
  store(&t, E, 1, 0, S);
  uint64_t U = alloc(&t, 24, EPH_FORMAT_POINTERS);
  root_exit(&t, U, E);
  uint64_t W = alloc(&t, 24, EPH_FORMAT_POINTERS);
  root_exit(&t, W, S); /* S's own root exit is later than E's */
  ev(&t, EPH_EV_GC, t.clock, 0, EPH_GC_FULL, 1, 0);
  expect x[] = {{S, W}, {E, U}, {V, U}, {U, U}, {W, W}};
  char path[512];
  snprintf(path, sizeof path, "%s/formats.eph", dir);
  eph_file *p;
  if (write_trace(path, &t, x, 5) || !(p = load(path))) {
    printf("  (ALLOC events of byte and ephemeron objects carry the format in c >> 32: the format layer must accept them)\n");
    failures++;
    return;
  }
  eph_trace_merlin m;
  eph_error err;
  CHECK(eph_trace_merlin_run(p, &m, &err) == EPH_OK, "%s", err.message);
  expect_results(&m, x, 5);
  CHECK(m.stats.pointer_slots == 3 + 2 + 2 + 2, "%" PRIu64 " pointer slots", m.stats.pointer_slots);
  eph_trace_merlin_free(&m);
  eph_file_free(p);
}

/* --- unfaithful traces -------------------------------------------------------------- */

static void test_unfaithful(const char *dir) {
  tb t = {0};
  uint64_t A = alloc(&t, 24, 0), B = alloc(&t, 24, 0);
  store(&t, A, 0, B, 0);        /* the slot held nothing: a missed write */
  store(&t, A, 5, 0, B);        /* no such slot */
  store(&t, 999999, 0, 0, B);   /* no such object */
  root_exit(&t, B, 888888);     /* no such object */
  ev(&t, EPH_EV_GC, t.clock, 0, EPH_GC_FULL, 1, 0);
  expect x[] = {{A, A}, {B, B}};
  char path[512];
  snprintf(path, sizeof path, "%s/unfaithful.eph", dir);
  eph_file *p;
  if (write_trace(path, &t, x, 2) || !(p = load(path))) {
    failures++;
    return;
  }
  eph_trace_merlin m;
  eph_error err;
  CHECK(eph_trace_merlin_run(p, &m, &err) == EPH_OK, "%s", err.message);
  CHECK(m.stats.stale_stores == 1 && m.stats.first_stale_event == 2, "stale %" PRIu64 " first %" PRIu64, m.stats.stale_stores,
        m.stats.first_stale_event);
  CHECK(m.stats.bad_slots == 1, "bad slots %" PRIu64, m.stats.bad_slots);
  CHECK(m.stats.unknown_ids == 2, "unknown ids %" PRIu64, m.stats.unknown_ids);
  expect_results(&m, x, 2);
  eph_trace_merlin_free(&m);
  eph_file_free(p);

  /* ALLOC events out of id order (not what the profiler writes, but valid). */
  tb v = {0};
  ev(&v, EPH_EV_ALLOC, 48, 48, CLS_OBJ, 24, SITE);
  ev(&v, EPH_EV_ALLOC, 24, 24, CLS_OBJ, 24, SITE);
  ev(&v, EPH_EV_ALLOC, 72, 72, CLS_OBJ, 24, SITE);
  ev(&v, EPH_EV_STORE, 72, 48, 1, 0, 24);
  ev(&v, EPH_EV_STORE, 72, 72, 0, 0, 48);
  ev(&v, EPH_EV_ROOT, 72, 72, 0, 0, 0);
  ev(&v, EPH_EV_GC, 72, 0, EPH_GC_FULL, 1, 0);
  expect y[] = {{24, 72}, {48, 72}, {72, 72}};
  snprintf(path, sizeof path, "%s/unsorted.eph", dir);
  if (write_trace(path, &v, y, 3) || !(p = load(path))) {
    failures++;
    return;
  }
  CHECK(eph_trace_merlin_run(p, &m, &err) == EPH_OK, "%s", err.message);
  expect_results(&m, y, 3);
  CHECK(m.stats.stale_stores == 0, "stale %" PRIu64, m.stats.stale_stores);
  eph_trace_merlin_free(&m);
  eph_file_free(p);

  /* An object allocated twice is an error. */
  tb u = {0};
  ev(&u, EPH_EV_ALLOC, 24, 24, CLS_OBJ, 24, SITE);
  ev(&u, EPH_EV_ALLOC, 24, 24, CLS_OBJ, 24, SITE);
  snprintf(path, sizeof path, "%s/twice.eph", dir);
  if (write_trace(path, &u, NULL, 0) || !(p = load(path))) {
    failures++;
    return;
  }
  CHECK(eph_trace_merlin_run(p, &m, &err) != EPH_OK && strstr(err.message, "allocated twice"), "no error for a repeated id");
  eph_trace_merlin_free(&m);
  eph_file_free(p);

  /* Not traces. */
  snprintf(path, sizeof path, "%s/noevents.eph", dir);
  if (write_trace(path, &(tb){0}, NULL, 0) || !(p = load(path))) {
    failures++;
    return;
  }
  CHECK(eph_trace_unusable(p) != NULL, "a file without events is a trace");
  CHECK(eph_trace_merlin_run(p, &m, &err) != EPH_OK, "offline Merlin ran on a file without events");
  eph_trace_merlin_free(&m);
  char out[512];
  snprintf(out, sizeof out, "%s/noevents-g.eph", dir);
  CHECK(eph_trace_granulate(p, 4096, out, false, NULL, &err) != EPH_OK, "granulated a file without events");
  FILE *left = fopen(out, "rb");
  CHECK(left == NULL, "a failed granulate left %s", out);
  if (left) fclose(left);
  eph_file_free(p);
}

/* --- granulation ------------------------------------------------------------------- */

static void test_granulate(const char *dir) {
  tb t;
  expect x[17];
  build_graph(&t, x);
  char path[512], out[512];
  snprintf(path, sizeof path, "%s/graph.eph", dir);
  snprintf(out, sizeof out, "%s/graph-100.eph", dir);
  eph_file *p = load(path), *g;
  if (!p) {
    failures++;
    return;
  }
  eph_trace_granulate_stats s;
  eph_error err;
  CHECK(eph_trace_granulate(p, 100, out, false, &s, &err) == EPH_OK, "%s", err.message);
  if (!(g = load(out))) {
    failures++;
    eph_file_free(p);
    return;
  }
  /* The end is t.clock (the last allocation, 432): ticks at 100 .. 500. */
  CHECK(t.clock == 432, "clock %" PRIu64, t.clock);
  CHECK(s.ticks == 5 && s.last_tick == 500 && s.deaths == 13, "%" PRIu64 " ticks, last %" PRIu64 ", %" PRIu64 " deaths", s.ticks,
        s.last_tick, s.deaths);
  /* Deaths and ticks, in order: each granule's deaths in id order, then its tick. */
  const uint64_t want[][2] = {
      {EPH_EV_DEATH, 96},  {EPH_EV_TICK, 0},   {EPH_EV_DEATH, 168}, {EPH_EV_TICK, 0},   {EPH_EV_DEATH, 24},
      {EPH_EV_DEATH, 48},  {EPH_EV_DEATH, 72}, {EPH_EV_DEATH, 216}, {EPH_EV_DEATH, 280}, {EPH_EV_TICK, 0},
      {EPH_EV_DEATH, 312}, {EPH_EV_DEATH, 336}, {EPH_EV_DEATH, 360}, {EPH_EV_TICK, 0},  {EPH_EV_DEATH, 384},
      {EPH_EV_DEATH, 408}, {EPH_EV_DEATH, 432}, {EPH_EV_TICK, 0}};
  const uint64_t gran[] = {100, 100, 200, 200, 300, 300, 300, 300, 300, 300, 400, 400, 400, 400, 500, 500, 500, 500};
  size_t k = 0, other = 0;
  uint64_t max_time = 0;
  for (size_t i = 0; i < g->nevents; i++) {
    const eph_event *e = &g->events[i];
    if (e->kind != EPH_EV_DEATH && e->kind != EPH_EV_TICK) {
      /* the input's own events, in order; a tick m*100 comes before the first later one */
      CHECK(other < t.n && !memcmp(e, &t.ev[other], sizeof *e), "event %zu is not input event %zu", i, other);
      other++;
      if (e->time > max_time) max_time = e->time;
      size_t ticks = 0;
      for (size_t q = 0; q < k; q++) ticks += want[q][0] == EPH_EV_TICK;
      CHECK(ticks == (max_time - 1) / 100, "event %zu (time %" PRIu64 ") after %zu ticks", i, e->time, ticks);
      continue;
    }
    CHECK(k < sizeof gran / sizeof *gran, "extra event %zu (kind %u at %" PRIu64 ")", i, e->kind, e->time);
    if (k >= sizeof gran / sizeof *gran) break;
    CHECK(e->kind == want[k][0] && e->time == gran[k] && e->obj == want[k][1],
          "death/tick %zu: kind %u time %" PRIu64 " obj %" PRIu64 ", expected kind %u time %" PRIu64 " obj %" PRIu64, k, e->kind,
          e->time, e->obj, (unsigned)want[k][0], gran[k], want[k][1]);
    k++;
  }
  CHECK(k == sizeof gran / sizeof *gran && other == t.n, "%zu deaths and ticks, %zu other events", k, other);
  const char *v = eph_file_meta(g, "granule");
  CHECK(v && !strcmp(v, "100"), "meta granule %s", v ? v : "(none)");
  /* Records: deaths moved, censored ones not. */
  CHECK(g->nrecords == 17, "%zu records", g->nrecords);
  for (size_t i = 0; i < g->nrecords && i < 17; i++) {
    const eph_record *r = &g->records[i];
    uint64_t want_death = x[i].death ? (x[i].death + 99) / 100 * 100 : t.clock;
    CHECK(r->death.bytes == want_death && r->alive_until.bytes == want_death, "record %" PRIu64 ": death %" PRIu64, r->id,
          r->death.bytes);
  }
  eph_file_free(g);

  /* A granule of 1 byte changes no death; a huge one moves all to one tick. */
  CHECK(eph_trace_granulate(p, 1, out, false, &s, &err) == EPH_OK && s.deaths_moved == 0 && s.ticks == 432, "granule 1: %" PRIu64
        " moved, %" PRIu64 " ticks", s.deaths_moved, s.ticks);
  CHECK(eph_trace_granulate(p, UINT64_C(1) << 40, out, false, &s, &err) == EPH_OK && s.ticks == 1, "granule 2^40: %" PRIu64 " ticks",
        s.ticks);
  CHECK(eph_trace_granulate(p, 0, out, false, &s, &err) != EPH_OK, "granule 0 accepted");
  eph_file_free(p);
}

/* --- granules ---------------------------------------------------------------------------- */

/* Sizes are parsed by the CLI (tests/cli/test_number.c). */
static void test_sizes(void) {
  uint64_t g;
  CHECK(eph_trace_granule_ceil(0, 4096, &g) && g == 0, "ceil 0");
  CHECK(eph_trace_granule_ceil(1, 4096, &g) && g == 4096, "ceil 1");
  CHECK(eph_trace_granule_ceil(4096, 4096, &g) && g == 4096, "ceil 4096 (a multiple stays)");
  CHECK(eph_trace_granule_ceil(4097, 4096, &g) && g == 8192, "ceil 4097");
  CHECK(!eph_trace_granule_ceil(UINT64_MAX, 4096, &g), "ceil overflow");
  CHECK(eph_trace_granule_ceil(UINT64_MAX, 1, &g) && g == UINT64_MAX, "ceil granule 1");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  test_sizes();
  test_graph(dir);
  test_formats(dir);
  test_unfaithful(dir);
  test_granulate(dir);
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("ok: all trace unit tests passed\n");
  return 0;
}
