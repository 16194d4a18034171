/*
 * The lifetime profiler: lifetimes known by construction in both modes,
 * sampling rates and the byte sampler's unbiasedness, the class filter,
 * censored records, EPHEMERA_PROFILE, and the file it writes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemera/ephemeron.h"
#include "ephemera/format.h"
#include "ephemera/heap.h"
#include "ephemera/profile.h"
#include "profile_test.h"

static char path[sizeof ((eph_profile_spec *)0)->out];

static void start(eph_heap *h, const char *spec_text) {
  eph_profile_spec spec = test_spec(spec_text, "profile");
  snprintf(path, sizeof path, "%s", spec.out);
  test_profile_start(h, &spec);
}

static eph_file *stop_and_load(eph_heap *h) {
  eph_file *prof = test_profile_finish(h, path, NULL);
  assert_true(prof->complete);
  return prof;
}

static const eph_record *record_of_class(const eph_file *p, const char *name) {
  for (size_t i = 0; i < p->nrecords; i++) {
    uint32_t c = p->records[i].class_id;
    if (c < p->nclasses && p->class_names[c] && !strcmp(p->class_names[c], name)) return &p->records[i];
  }
  return NULL;
}

/* Fills eden with garbage until a scavenge happens. */
static void churn_until_scavenge(eph_heap *h, eph_class_id junk) {
  eph_heap_stats s0, s;
  eph_heap_stats_get(h, &s0);
  do {
    eph_alloc(h, junk, 6);
    eph_heap_stats_get(h, &s);
  } while (s.scavenges == s0.scavenges);
}

/* gc mode: an object dropped at a known time is reported dead by the first
 * collection after it, and the recorded interval contains the drop. */
static void test_gc_mode_known_death(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=64K,headroom=64K");
  eph_class_id Tracked = eph_class_register(h, "Tracked", EPH_FORMAT_POINTERS);
  eph_class_id Junk = eph_class_register(h, "Junk", EPH_FORMAT_POINTERS);
  start(h, "mode=gc,classes=Tracked");
  EPH_FRAME(h);
  EPH_LOCAL(h, t);
  t = eph_alloc(h, Tracked, 2);
  churn_until_scavenge(h, Junk); /* it survives one scavenge */
  uint64_t dropped_at = eph_heap_allocated(h);
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  uint64_t scavenges_at_drop = s.scavenges;
  t = EPH_NIL;
  churn_until_scavenge(h, Junk);
  EPH_UNFRAME(h);
  eph_file *p = stop_and_load(h);
  const eph_record *r = record_of_class(p, "Tracked");
  assert_non_null(r);
  assert_int_equal(p->nrecords, 1); /* the filter kept Junk out */
  assert_int_equal(r->death_kind, EPH_DEATH_SCAVENGE);
  assert_true(r->alive_until.bytes <= dropped_at);
  assert_true(r->death.bytes >= dropped_at);
  /* within one collection: found by the first scavenge after the drop */
  assert_int_equal(r->death.scavenges, scavenges_at_drop);
  assert_int_equal(r->death.scavenges - r->birth.scavenges, 1); /* survived exactly one */
  assert_true(r->death.bytes - dropped_at <= 64 * 1024 + 64);
  eph_file_free(p);
  eph_heap_free(h);
}

/* gc mode, old objects: a tenured object is found dead by the next full GC. */
static void test_gc_mode_full_gc_death(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=64K,headroom=64K,ratio=100");
  eph_class_id Tracked = eph_class_register(h, "Tracked", EPH_FORMAT_POINTERS);
  start(h, "mode=gc");
  EPH_FRAME(h);
  EPH_LOCAL(h, t);
  t = eph_alloc(h, Tracked, 2);
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK); /* tenures it */
  t = EPH_NIL;
  assert_int_equal(eph_collect(h, EPH_GC_SCAVENGE), EPH_OK); /* cannot see old garbage */
  assert_int_equal(eph_collect(h, EPH_GC_FULL), EPH_OK);
  EPH_UNFRAME(h);
  eph_file *p = stop_and_load(h);
  const eph_record *r = record_of_class(p, "Tracked");
  assert_non_null(r);
  assert_int_equal(r->death_kind, EPH_DEATH_FULL_GC);
  assert_int_equal(r->death.full_gcs, 1);  /* the second full GC found it */
  assert_int_equal(r->death.scavenges, 1);
  /* a scavenge never examines old objects: last seen alive by the first full GC */
  assert_int_equal(r->alive_until.full_gcs, 0);
  assert_int_equal(r->alive_until.scavenges, 0);
  eph_file_free(p);
  eph_heap_free(h);
}

/* finalization mode: death = when the finaliser runs, right after the first
 * collection that finds the key dead (one finaliser pass late at most). */
static void test_finalization_known_death(void **state) {
  (void)state;
  for (int pretenure = 0; pretenure < 2; pretenure++) {
    eph_heap *h = heap_with("eden=64K,headroom=64K");
    eph_class_id Tracked = eph_class_register(h, "Tracked", EPH_FORMAT_POINTERS);
    eph_class_id Junk = eph_class_register(h, "Junk", EPH_FORMAT_POINTERS);
    start(h, pretenure ? "mode=finalization,classes=Tracked,pretenure=on" : "mode=finalization,classes=Tracked,pretenure=off");
    EPH_FRAME(h);
    EPH_LOCAL(h, t);
    t = eph_alloc(h, Tracked, 2);
    churn_until_scavenge(h, Junk);
    uint64_t dropped_at = eph_heap_allocated(h);
    eph_heap_stats s;
    eph_heap_stats_get(h, &s);
    t = EPH_NIL;
    churn_until_scavenge(h, Junk);
    EPH_UNFRAME(h);
    eph_file *p = stop_and_load(h);
    const eph_record *r = record_of_class(p, "Tracked");
    assert_non_null(r);
    assert_int_equal(r->death_kind, EPH_DEATH_FINALIZED);
    assert_true(r->death.bytes >= dropped_at);
    /* the finaliser ran after the first scavenge following the drop */
    assert_int_equal(r->death.scavenges, s.scavenges + 1);
    eph_file_free(p);
    eph_heap_free(h);
  }
}

/* Two finalization profiles on one heap, one after the other.  The
 * ephemeron class outlives a profile and its finaliser is the class's, so
 * the first profile's ephemerons still queued at its stop (mourned, their
 * finalisers not run: auto-finalising is off) reach the second profile's
 * finaliser, which must pass over them: the second file holds exactly its
 * own objects. */
static void test_finalization_twice(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=64K,headroom=64K");
  eph_class_id First = eph_class_register(h, "First", EPH_FORMAT_POINTERS);
  eph_class_id Second = eph_class_register(h, "Second", EPH_FORMAT_POINTERS);
  eph_class_id Junk = eph_class_register(h, "Junk", EPH_FORMAT_POINTERS);
  eph_heap_set_auto_finalize(h, false);
  for (int round = 0; round < 2; round++) {
    start(h, round ? "mode=finalization,classes=Second" : "mode=finalization,classes=First,pretenure=off");
    EPH_FRAME(h);
    EPH_LOCAL(h, holder);
    holder = eph_alloc(h, Junk, 100);
    for (size_t i = 0; i < 100; i++) eph_store(h, holder, i, eph_alloc(h, round ? Second : First, 1));
    holder = EPH_NIL;
    EPH_UNFRAME(h);
    churn_until_scavenge(h, Junk);
    assert_true(eph_pending_finalizers(h) >= 100);
    if (round) eph_run_finalizers(h); /* the first profile's leftovers, and this one's */
    eph_file *p = stop_and_load(h);
    size_t n[2] = {0, 0};
    for (size_t i = 0; i < p->nrecords; i++) {
      const char *name = p->class_names[p->records[i].class_id];
      assert_int_equal(p->records[i].death_kind, EPH_DEATH_FINALIZED);
      n[!strcmp(name, "Second")]++;
    }
    assert_int_equal(n[round], 100);
    assert_int_equal(n[!round], 0);
    eph_file_free(p);
  }
  eph_run_finalizers(h); /* after both stops: into no profiler */
  eph_heap_free(h);
}

/* every:N keeps every N-th allocation exactly; 1/N keeps each with
 * probability 1/N (within 5 standard deviations of n/N); weight N. */
static void test_count_sampling(void **state) {
  (void)state;
  for (int mode = 0; mode < 4; mode++) {
    eph_heap *h = heap_with("eden=256K");
    eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_POINTERS);
    const char *specs[] = {"mode=gc,sample=every:7", "mode=finalization,sample=every:7", "mode=gc,sample=1/7",
                           "mode=finalization,sample=1/7"};
    start(h, specs[mode]);
    for (int i = 0; i < 70000; i++) eph_alloc(h, C, (size_t)(i % 5));
    eph_file *p = stop_and_load(h);
    if (mode < 2) assert_int_equal(p->nrecords, 10000);
    else assert_true(p->nrecords > 10000 - 463 && p->nrecords < 10000 + 463); /* sd = 92.6 */
    for (size_t i = 0; i < p->nrecords; i++) assert_true(p->records[i].weight == 7.0);
    assert_int_equal(p->totals.objects_allocated, 70000); /* the profiler's own objects are not counted */
    eph_file_free(p);
    eph_heap_free(h);
  }
}

/* A class filter counts the gaps over its classes only: 1/5 of the
 * filtered class's allocations, none of the others (gc mode walks eden
 * then, at any rate, and samples as it goes). */
static void test_class_filter_sampling(void **state) {
  (void)state;
  const char *specs[] = {"mode=gc,sample=1/5,classes=A", "mode=gc,sample=1/50,classes=A"};
  const double every[] = {5, 50};
  for (int k = 0; k < 2; k++) {
    eph_heap *h = heap_with("eden=256K");
    eph_class_id A = eph_class_register(h, "A", EPH_FORMAT_POINTERS);
    eph_class_id B = eph_class_register(h, "B", EPH_FORMAT_POINTERS);
    start(h, specs[k]);
    for (int i = 0; i < 100000; i++) eph_alloc(h, i % 2 ? A : B, (size_t)(i % 3));
    eph_file *p = stop_and_load(h);
    double n = 50000 / every[k], sd = sqrt(50000 * (1 / every[k]) * (1 - 1 / every[k]));
    assert_true(fabs((double)p->nrecords - n) < 5 * sd);
    for (size_t i = 0; i < p->nrecords; i++) {
      assert_string_equal(p->class_names[p->records[i].class_id], "A");
      assert_true(p->records[i].weight == every[k]);
    }
    eph_file_free(p);
    eph_heap_free(h);
  }
}

/* bytes:B: weighted sums estimate objects and bytes without bias.  Over 20
 * seeds each estimate must be within 10 % and their mean within 2 %. */
static void test_byte_sampler_unbiased(void **state) {
  (void)state;
  const int seeds = 20;
  double sum_obj_err = 0, sum_byte_err = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    eph_heap *h = heap_with("eden=1M");
    eph_class_id S = eph_class_register(h, "Small", EPH_FORMAT_POINTERS);
    eph_class_id B = eph_class_register(h, "Big", EPH_FORMAT_BYTES);
    char spec[64];
    snprintf(spec, sizeof spec, "mode=gc,sample=bytes:4096,seed=%d", seed);
    start(h, spec);
    uint64_t true_objects = 0, true_bytes = 0;
    for (int i = 0; i < 200000; i++) {
      eph_value v = (i % 10 == 0) ? eph_alloc_bytes(h, B, 200 + (size_t)(i % 7) * 300) : eph_alloc(h, S, 1 + (size_t)(i % 3));
      true_objects++;
      true_bytes += eph_object_bytes(v);
    }
    eph_file *p = stop_and_load(h);
    double est_obj = 0, est_bytes = 0;
    for (size_t i = 0; i < p->nrecords; i++) {
      est_obj += p->records[i].weight;
      est_bytes += p->records[i].weight * (double)p->records[i].size;
    }
    double eo = est_obj / (double)true_objects - 1, eb = est_bytes / (double)true_bytes - 1;
    assert_true(fabs(eo) < 0.10);
    assert_true(fabs(eb) < 0.10);
    sum_obj_err += eo;
    sum_byte_err += eb;
    eph_file_free(p);
    eph_heap_free(h);
  }
  print_message("byte sampler mean relative error: objects %+.4f, bytes %+.4f over %d seeds\n", sum_obj_err / seeds,
                sum_byte_err / seeds, seeds);
  assert_true(fabs(sum_obj_err / seeds) < 0.02);
  assert_true(fabs(sum_byte_err / seeds) < 0.02);
}

/* Objects alive at stop are censored, never dropped or counted as deaths. */
static void test_censored(void **state) {
  (void)state;
  for (int mode = 0; mode < 2; mode++) {
    eph_heap *h = heap_with("eden=64K");
    eph_class_id C = eph_class_register(h, "C", EPH_FORMAT_POINTERS);
    start(h, mode ? "mode=finalization" : "mode=gc");
    EPH_FRAME(h);
    EPH_LOCAL(h, keep);
    keep = eph_alloc(h, C, 50);
    for (size_t i = 0; i < 50; i++) {
      eph_value v = eph_alloc(h, C, 1);
      eph_store(h, keep, i, v);
    }
    for (int i = 0; i < 20000; i++) eph_alloc(h, C, 2); /* garbage, collected */
    eph_file *p = stop_and_load(h);
    size_t censored = 0, dead = 0;
    for (size_t i = 0; i < p->nrecords; i++) {
      if (p->records[i].death_kind == EPH_DEATH_CENSORED) censored++;
      else dead++;
    }
    assert_int_equal(censored, 51);
    assert_int_equal(p->totals.censored, 51);
    assert_int_equal(censored + dead, 20051);
    assert_int_equal(dead, 20000); /* the last full GC at stop found all garbage */
    EPH_UNFRAME(h);
    eph_file_free(p);
    eph_heap_free(h);
  }
}

/* Random 1/N gaps do not alias with a periodic allocation pattern: with
 * a period-4 sequence of classes, each class gets about a quarter of the
 * samples, where a fixed counter of 4 would sample one class only. */
static void test_no_aliasing(void **state) {
  (void)state;
  for (int fixed = 0; fixed < 2; fixed++) {
    eph_heap *h = heap_with("eden=256K");
    eph_class_id cls[4] = {eph_class_register(h, "A", EPH_FORMAT_POINTERS), eph_class_register(h, "B", EPH_FORMAT_POINTERS),
                           eph_class_register(h, "C", EPH_FORMAT_POINTERS), eph_class_register(h, "D", EPH_FORMAT_POINTERS)};
    start(h, fixed ? "mode=gc,sample=every:4" : "mode=gc,sample=1/4");
    for (int i = 0; i < 40000; i++) eph_alloc(h, cls[i % 4], 1);
    eph_file *p = stop_and_load(h);
    size_t per[8] = {0};
    for (size_t i = 0; i < p->nrecords; i++) per[p->records[i].class_id % 8]++;
    size_t nonzero = 0;
    for (int c = 0; c < 8; c++) nonzero += per[c] > 0;
    if (fixed) assert_int_equal(nonzero, 1); /* the counter locks onto one class */
    else
      for (int c = 0; c < 4; c++) assert_true(per[cls[c] % 8] > 2000 && per[cls[c] % 8] < 3000);
    eph_file_free(p);
    eph_heap_free(h);
  }
}

/* Sites and classes round-trip through the file. */
static void test_sites_in_file(void **state) {
  (void)state;
  eph_heap *h = heap_with("eden=64K");
  eph_class_id C = eph_class_register(h, "SiteClass", EPH_FORMAT_POINTERS);
  start(h, "mode=gc");
  EPH_AT(h);
  int line = __LINE__ - 1;
  eph_alloc(h, C, 1);
  eph_alloc(h, C, 1); /* no site */
  eph_file *p = stop_and_load(h);
  assert_int_equal(p->nrecords, 2);
  const eph_record *r = &p->records[0];
  assert_string_equal(p->class_names[r->class_id], "SiteClass");
  assert_true(r->site_id > 0 && r->site_id < p->nsites);
  assert_int_equal(p->sites[r->site_id].line, line);
  assert_non_null(strstr(p->sites[r->site_id].file, "test_profile.c"));
  assert_string_equal(p->sites[r->site_id].function, "test_sites_in_file");
  assert_int_equal(p->records[1].site_id, 0);
  assert_string_equal(eph_file_meta(p, "mode"), "gc");
  eph_file_free(p);
  eph_heap_free(h);
}

/* EPHEMERA_PROFILE profiles any program that takes the environment's
 * parameters; a bad spec fails heap creation naming the key. */
static void test_environment(void **state) {
  (void)state;
  char spec[sizeof path + 64];
  snprintf(path, sizeof path, "/tmp/eph-test-env-%d.eph", (int)getpid());
  snprintf(spec, sizeof spec, "mode=gc,sample=1/2,out=%s", path);
  setenv("EPHEMERA_PROFILE", spec, 1);
  eph_heap *h;
  eph_error err;
  assert_int_equal(eph_heap_new(NULL, &h, &err), EPH_OK);
  eph_class_id C = eph_class_register(h, "EnvClass", EPH_FORMAT_POINTERS);
  for (int i = 0; i < 1000; i++) eph_alloc(h, C, 1);
  eph_heap_free(h); /* writes the profile */
  eph_file *p;
  assert_int_equal(eph_file_load(path, &p, &err), EPH_OK);
  assert_true(p->nrecords > 500 - 80 && p->nrecords < 500 + 80); /* 1/2 of 1000, sd 15.8 */
  assert_true(p->complete);
  eph_file_free(p);
  unlink(path);

  setenv("EPHEMERA_PROFILE", "mode=gc,smaple=1/2", 1);
  assert_int_equal(eph_heap_new(NULL, &h, &err), EPH_ERR_INVALID);
  assert_null(h);
  assert_non_null(strstr(err.message, "smaple"));
  unsetenv("EPHEMERA_PROFILE");
}

static void test_spec_parsing(void **state) {
  (void)state;
  eph_profile_spec s;
  eph_error err;
  eph_profile_spec_init(&s);
  assert_int_equal(eph_profile_spec_parse(&s, "mode=finalization,sample=1/100,classes=Fraction,Array,pretenure=off", &err), EPH_OK);
  assert_int_equal(s.mode, EPH_MODE_FINALIZATION);
  assert_int_equal(s.sample_every, 100);
  assert_string_equal(s.classes, "Fraction,Array");
  assert_false(s.pretenure);
  assert_int_equal(eph_profile_spec_parse(&s, "sample=bytes:64K", &err), EPH_OK);
  assert_int_equal(s.sample_bytes, 65536);
  assert_int_equal(s.threads, 0); /* auto */
  assert_int_equal(eph_profile_spec_parse(&s, "threads=1", &err), EPH_OK);
  assert_int_equal(s.threads, 1);
  char text[256];
  eph_profile_spec_format(&s, text, sizeof text);
  assert_non_null(strstr(text, ",threads=1"));
  assert_int_equal(eph_profile_spec_parse(&s, "threads=auto", &err), EPH_OK);
  assert_int_equal(s.threads, 0);
  eph_profile_spec_format(&s, text, sizeof text);
  assert_null(strstr(text, "threads"));
  const char *bad[] = {"mode=fast", "sample=1/0", "sample=bytes:", "pretenure=maybe", "colour=red", "out=", "threads=3"};
  /* merlin and brute are modes now */
  const char *key[] = {"mode", "sample", "sample", "pretenure", "colour", "out", "threads"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    eph_profile_spec before = s;
    assert_int_equal(eph_profile_spec_parse(&s, bad[i], &err), EPH_ERR_INVALID);
    assert_non_null(strstr(err.message, key[i]));
    assert_memory_equal(&before, &s, sizeof s);
  }
}


/* Every object of a random mutator, in gc and finalization mode, against
 * what the mutator knows: each has exactly one record, found by its id (the
 * birth clock) with its class and size; censored exactly when still held at
 * the end; and the recorded interval contains the moment it was dropped.
 * In gc mode no full GC lies between the drop and the death (the first one
 * after the drop finds it), and each clock runs forward from birth to
 * alive_until to death.  Small eden and headroom: many scavenges,
 * promotions and full GCs, so the young list, old list and spans all turn. */
/* The application's clock, as the profiler keeps it: without its own objects. */
static uint64_t app_clock(eph_heap *h) {
  eph_profile_stats ps;
  assert_true(eph_profile_stats_get(h, &ps));
  return eph_heap_allocated(h) - ps.own_bytes;
}

/* The mutator's size: slots in the holder, objects allocated; GC parameters. */
typedef struct oracle_size {
  int slots, objects;
  int fixed; /* the first objects fill the first slots and stay until the end */
  const char *gc;
} oracle_size;
static const oracle_size ORACLE_SMALL = {512, 60000, 0, "eden=32K,headroom=64K,ratio=0.5"};

/* mixed: a site (EPH_AT) for most allocations and some objects allocated
 * in old space between young ones, as the eden walk must count them. */
static void check_oracle_sized(const char *spec, uint64_t seed, bool mixed, oracle_size size) {
  const int ORACLE_SLOTS = size.slots;
  const size_t ORACLE_OBJECTS = (size_t)size.objects;
  eph_heap *h = heap_with(size.gc);
  eph_class_id Holder = eph_class_register(h, "Holder", EPH_FORMAT_POINTERS);
  eph_class_id C[3] = {eph_class_register(h, "A", EPH_FORMAT_POINTERS), eph_class_register(h, "B", EPH_FORMAT_POINTERS),
                       eph_class_register(h, "Bytes", EPH_FORMAT_BYTES)};
  EPH_FRAME(h);
  EPH_LOCAL(h, holder);
  holder = eph_alloc(h, Holder, ORACLE_SLOTS);
  start(h, spec);
  struct obj { uint64_t birth, dropped, size; eph_class_id cls; int slot; bool old; } *objs = calloc(ORACLE_OBJECTS, sizeof *objs);
  int *in_slot = malloc((size_t)ORACLE_SLOTS * sizeof *in_slot);
  for (int i = 0; i < ORACLE_SLOTS; i++) in_slot[i] = -1;
  uint64_t x = seed;
  eph_heap_stats s;
  uint64_t *full_at = NULL, *any_at = NULL; /* clock of each full GC, of each collection */
  size_t nfull = 0, nany = 0;
  eph_heap_stats_get(h, &s);
  uint64_t fulls_seen = s.full_gcs, any_seen = s.scavenges + s.full_gcs;
  for (int i = 0; i < (int)ORACLE_OBJECTS; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    int slot = size.fixed + (int)((x >> 33) % (uint64_t)(ORACLE_SLOTS - size.fixed));
    /* long-lived slots (low numbers) are overwritten rarely */
    if (slot < size.fixed + 64 && (x >> 20) % 16 != 0) slot += 64;
    if (i < size.fixed) slot = i;
    eph_class_id cls = C[(x >> 40) % 3];
    uint64_t before = app_clock(h);
    bool old = mixed && (x >> 50) % 23 == 0;
    size_t n = cls == C[2] ? (size_t)((x >> 45) % 300) : (size_t)((x >> 45) % 6);
    if (mixed && (x >> 55) % 4 != 0) {
      if ((x >> 57) % 2) EPH_AT(h);
      else EPH_AT(h);
    }
    eph_value v = cls == C[2] ? (old ? eph_alloc_bytes_old(h, cls, n) : eph_alloc_bytes(h, cls, n))
                              : (old ? eph_alloc_old(h, cls, n) : eph_alloc(h, cls, n));
    eph_heap_stats_get(h, &s);
    if (s.full_gcs != fulls_seen) { /* the allocation ran one (or more, counted once) */
      full_at = realloc(full_at, (nfull + 1) * sizeof *full_at);
      full_at[nfull++] = before;
      fulls_seen = s.full_gcs;
    }
    if (s.scavenges + s.full_gcs != any_seen) {
      any_at = realloc(any_at, (nany + 1) * sizeof *any_at);
      any_at[nany++] = before;
      any_seen = s.scavenges + s.full_gcs;
    }
    objs[i] = (struct obj){app_clock(h), 0, eph_object_bytes(v), cls, slot, old};
    if (in_slot[slot] >= 0) objs[in_slot[slot]].dropped = objs[i].birth;
    eph_store(h, holder, (size_t)slot, v);
    in_slot[slot] = i;
  }
  holder = EPH_NIL; /* everything is garbage except what stop's own full GC may not see (nothing) */
  EPH_UNFRAME(h);
  /* the slots' last objects die now; mark them so */
  uint64_t end_drop = app_clock(h);
  for (int i = 0; i < ORACLE_SLOTS; i++)
    if (in_slot[i] >= 0) objs[in_slot[i]].dropped = end_drop;
  eph_file *p = stop_and_load(h);
  bool gc_mode = strstr(spec, "mode=gc") != NULL;
  size_t matched = 0;
  for (size_t k = 0; k < p->nrecords; k++) {
    const eph_record *r = &p->records[k];
    /* binary search by birth clock: births increase with i */
    size_t lo = 0, hi = ORACLE_OBJECTS;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (objs[mid].birth < r->id) lo = mid + 1;
      else hi = mid;
    }
    if (lo == ORACLE_OBJECTS || objs[lo].birth != r->id) continue; /* the holder */
    const struct obj *o = &objs[lo];
    matched++;
    assert_int_equal(r->birth.bytes, o->birth);
    assert_int_equal(r->size, o->size);
    assert_string_equal(p->class_names[r->class_id], eph_class_name(h, o->cls));
    assert_int_not_equal(r->death_kind, EPH_DEATH_CENSORED); /* the holder died: so did all */
    assert_true(r->death.bytes >= o->dropped);
    if (!(r->birth.wall_ns <= r->alive_until.wall_ns && r->alive_until.wall_ns <= r->death.wall_ns))
      fail_msg("%s: object %zu: wall clock not forward: birth %llu (at %llu bytes), alive until %llu (%llu), death %llu (%llu), kind %d",
               spec, lo, (unsigned long long)r->birth.wall_ns, (unsigned long long)r->birth.bytes,
               (unsigned long long)r->alive_until.wall_ns, (unsigned long long)r->alive_until.bytes,
               (unsigned long long)r->death.wall_ns, (unsigned long long)r->death.bytes, r->death_kind);
    assert_true(r->birth.scavenges <= r->alive_until.scavenges && r->alive_until.scavenges <= r->death.scavenges);
    if (!gc_mode) continue;
    assert_true(r->alive_until.bytes >= r->birth.bytes);
    assert_true(r->alive_until.bytes <= o->dropped);
    for (size_t f = 0; f < nfull; f++) assert_false(full_at[f] > o->dropped && full_at[f] < r->death.bytes);
    /* and the interval is tight: the first collection after its birth saw
     * it alive (if it was young: a scavenge does not look at old objects),
     * and so did every full GC before the drop */
    for (size_t f = 0; f < nany && !o->old; f++)
      if (any_at[f] >= o->birth) {
        if (any_at[f] < o->dropped) assert_true(r->alive_until.bytes >= any_at[f]);
        break;
      }
    for (size_t f = 0; f < nfull; f++)
      if (full_at[f] >= o->birth && full_at[f] < o->dropped) assert_true(r->alive_until.bytes >= full_at[f]);
  }
  if (matched != ORACLE_OBJECTS) fail_msg("%s: %zu of %zu objects have a record (%zu records)", spec, matched, ORACLE_OBJECTS, p->nrecords);
  free(objs);
  free(in_slot);
  free(full_at);
  free(any_at);
  eph_file_free(p);
  eph_heap_free(h);
}

static void check_oracle_with(const char *spec, uint64_t seed, bool mixed) { check_oracle_sized(spec, seed, mixed, ORACLE_SMALL); }
static void check_oracle(const char *spec, uint64_t seed) { check_oracle_with(spec, seed, false); }

static void test_oracle(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3; seed++) {
    check_oracle("mode=gc", seed);
    check_oracle("mode=finalization,pretenure=on", seed);
    check_oracle("mode=finalization,pretenure=off", seed);
  }
}

/* The same with sites and old-space allocations, walked by one thread and
 * by two sharing each scavenge's walk in pieces of 1 KiB: the pieces'
 * clocks must account for the old allocations between them. */
static void test_oracle_shared_walk(void **state) {
  (void)state;
  setenv("EPHEMERA_WALK_PIECE_MIN", "1024", 1);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    check_oracle_with("mode=gc,threads=1", seed, true);
    check_oracle_with("mode=gc,threads=2", seed, true);
    check_oracle_with("mode=finalization,pretenure=on", seed, true);
  }
  unsetenv("EPHEMERA_WALK_PIECE_MIN");
}

/* An old list of several blocks (mode_gc.c: 65 536 entries a block): a
 * large holder keeps many objects alive long enough to be promoted, and
 * full GCs find some of them dead in most blocks and compact the list
 * across blocks; the first 140 000 objects live to the end, so later full
 * GCs find their blocks below the dense prefix and skip them. */
static void test_oracle_many_old(void **state) {
  (void)state;
  const oracle_size big = {200000, 500000, 140000, "eden=256K,headroom=512K,ratio=0.3"};
  check_oracle_sized("mode=gc,threads=1", 7, false, big);
  check_oracle_sized("mode=gc,threads=2", 8, true, big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gc_mode_known_death),   cmocka_unit_test(test_gc_mode_full_gc_death),
      cmocka_unit_test(test_finalization_known_death), cmocka_unit_test(test_finalization_twice), cmocka_unit_test(test_count_sampling), cmocka_unit_test(test_class_filter_sampling),
      cmocka_unit_test(test_byte_sampler_unbiased), cmocka_unit_test(test_censored),
      cmocka_unit_test(test_no_aliasing),           cmocka_unit_test(test_sites_in_file),         cmocka_unit_test(test_environment),
      cmocka_unit_test(test_spec_parsing),          cmocka_unit_test(test_oracle),
      cmocka_unit_test(test_oracle_shared_walk),    cmocka_unit_test(test_oracle_many_old),
  };
  return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
