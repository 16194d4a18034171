/*
 * test_core.c — the runtime adapter core (src/runtime/adapter.h) through
 * its contract (docs/runtime.md), with no runtime: a toy one whose objects
 * sit in an array and keep their rt_sample beside them (a JVMTI agent's
 * way: no header in front, no marks), with a fixed class table, sites,
 * a call stack, a cycle end, frees and the censoring of what is alive at
 * the end.  The file is read back and checked record by record; the SPEC's
 * errors name the toy runtime; 1/N sampling gives about 1/N of the
 * objects, each standing for N; classes= leaves the others out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/adapter.h"

enum { CLS_OBJECT = 1, CLS_STRING, CLS_ARRAY, NCLASSES };
static const char *const NAMES[NCLASSES] = {NULL, "Object", "String", "Array"};
static const uint32_t ALSO[NCLASSES] = {[CLS_OBJECT] = 1u << CLS_STRING | 1u << CLS_ARRAY}; /* Object: all */

typedef struct toy_obj {
  uint32_t cls;
  size_t size;
  bool alive, sampled;
  rt_sample smp;
} toy_obj;

typedef struct toy {
  rt_session s; /* first: the core's callbacks take it */
  toy_obj objs[8192];
  size_t n;
} toy;

static void censor_live(rt_session *s) {
  toy *t = (toy *)s;
  for (size_t i = 0; i < t->n; i++)
    if (t->objs[i].alive && t->objs[i].sampled) rt_emit(s, t->objs[i].cls, &t->objs[i].smp, EPH_DEATH_CENSORED);
}

static void tail(const rt_session *s, FILE *out) {
  (void)s;
  fprintf(out, "  toy advice\n");
}

static const rt_runtime TOY = {
    .name = "toy",
    .title = "Toy",
    .class_names = NAMES,
    .nclasses = NCLASSES,
    .class_also = ALSO,
    .classes_known = "Object, String, Array",
    .mode_note = "the toy frees its own objects",
    .censor_live = censor_live,
    .summary_tail = tail,
};

static void *mem(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (!nsize) {
    free(p);
    return NULL;
  }
  return realloc(p, nsize);
}

/* Methods: a site's key is the method's address, as a jmethodID would be. */
static const char METHOD_A = 'a', METHOD_B = 'b';

static char dir[64];

static toy *toy_open(const char *spec) {
  rt_options opt;
  rt_options_init(&opt);
  char msg[1600];
  assert_true(rt_options_parse(&opt, &TOY, spec, msg, sizeof msg));
  snprintf(opt.out, sizeof opt.out, "%s/toy.eph", dir);
  assert_true(rt_session_room());
  toy *t = calloc(1, sizeof *t);
  assert_non_null(t);
  rt_session_init(&t->s, &TOY, &opt, "toy gc", mem, NULL);
  rt_spec_text text;
  rt_spec_text_of(&opt, &text);
  eph_meta_pair meta[] = {{"runtime", "toy"}, {"mode", "gc"}, {"sample", text.sample}, {"spec", text.spec}};
  assert_true(rt_session_open(&t->s, meta, 4, msg, sizeof msg));
  rt_session_register(&t->s);
  return t;
}

/* An allocation, as an adapter reports it; returns the object's index. */
static size_t toy_new(toy *t, uint32_t cls, size_t size, const void *method, int line, const uint32_t *callers,
                      size_t ncallers) {
  rt_session *s = &t->s;
  toy_obj *o = &t->objs[t->n];
  *o = (toy_obj){.cls = cls, .size = size, .alive = true};
  if (rt_sample_due(s, s->by_bytes ? (int64_t)size : 1)) {
    if (!s->detached && !s->internal) {
      rt_site_key k = {.key = method, .line = line, .aux = 0, .file = method == &METHOD_A ? "A.java" : "B.java"};
      uint32_t site = 0;
      if (s->opt.sites && !s->closing && !(site = rt_site_find(s, &k)))
        site = rt_site_add(s, &k, method == &METHOD_A ? "a()" : "b()");
      if (site && ncallers && s->opt.stacks) {
        uint32_t frames[4] = {site};
        memcpy(frames + 1, callers, ncallers * sizeof *callers);
        uint32_t id = rt_stack_find(s, frames, ncallers + 1);
        site = id ? id : rt_stack_add(s, frames, ncallers + 1, k.file, line, "a()");
      }
      rt_sample_set(&o->smp, s->bytes, size, site);
      o->sampled = true;
      s->live++;
      if (s->bytes >= s->clocks.next_point) rt_clock_mark(s, s->bytes);
    }
    rt_sampler_next(s);
  }
  rt_count_new(s, size);
  return t->n++;
}

static void toy_free(toy *t, size_t i) {
  toy_obj *o = &t->objs[i];
  o->alive = false;
  if (o->sampled) {
    rt_emit(&t->s, o->cls, &o->smp, t->s.closing ? EPH_DEATH_CENSORED : EPH_DEATH_FREED);
    t->s.live--;
  }
  rt_heap_decrease(&t->s, o->size);
}

static eph_file *toy_close(toy *t) {
  char msg[1600];
  rt_begin_close(&t->s);
  assert_int_equal(rt_finish(&t->s, false, msg, sizeof msg), 0);
  assert_int_equal(rt_finish(&t->s, false, msg, sizeof msg), 0); /* idempotent */
  rt_session_release(&t->s);
  free(t);
  char path[128];
  snprintf(path, sizeof path, "%s/toy.eph", dir);
  eph_file *f = NULL;
  eph_error err;
  assert_int_equal(eph_file_load(path, &f, &err), EPH_OK);
  assert_true(f->complete);
  return f;
}

static const eph_record *by_id(const eph_file *f, uint64_t id) {
  for (size_t i = 0; i < f->nrecords; i++)
    if (f->records[i].id == id) return &f->records[i];
  fail_msg("no record %llu", (unsigned long long)id);
  return NULL;
}

/* Every object: births, a cycle, deaths, the censored rest, sites, a stack. */
static void life(void **state) {
  (void)state;
  toy *t = toy_open("sample=1/1,stacks=3,summary=on");
  size_t a = toy_new(t, CLS_OBJECT, 32, &METHOD_A, 10, NULL, 0);  /* bytes 0 */
  size_t b = toy_new(t, CLS_STRING, 24, &METHOD_A, 10, NULL, 0);  /* bytes 32, the same site */
  size_t c = toy_new(t, CLS_ARRAY, 100, &METHOD_B, 5, NULL, 0);   /* bytes 56 */
  assert_true(rt_cycle_end(&t->s));
  uint32_t callers[1] = {1}; /* called from A.java:10 */
  size_t d = toy_new(t, CLS_OBJECT, 32, &METHOD_A, 11, callers, 1); /* bytes 156: a stack */
  size_t e = toy_new(t, CLS_OBJECT, 8, &METHOD_A, 11, callers, 1);  /* bytes 188: the same stack */
  assert_int_equal(t->s.live, 5);
  toy_free(t, a);
  toy_free(t, d);
  assert_int_equal(t->s.live, 3);
  (void)b, (void)c, (void)e;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  rt_summary(&t->s, out);
  fclose(out);
  assert_non_null(strstr(text, "ephemera: toy profile "));
  assert_non_null(strstr(text, "2 records (0 censored) of 5 objects, 1 GC cycles (toy gc)"));
  assert_non_null(strstr(text, "Object"));
  assert_non_null(strstr(text, "  toy advice\n"));
  free(text);

  eph_file *f = toy_close(t);
  assert_string_equal(eph_file_meta(f, "runtime"), "toy");
  assert_string_equal(eph_file_meta(f, "spec"), "mode=gc,sample=1/1,seed=1,sites=on,stacks=3");
  assert_string_equal(f->class_names[CLS_ARRAY], "Array");
  assert_int_equal(f->nrecords, 5);
  assert_int_equal(f->totals.records, 5);
  assert_int_equal(f->totals.censored, 3);
  assert_int_equal(f->totals.objects_allocated, 5);
  assert_int_equal(f->totals.bytes_allocated, 196);
  assert_int_equal(f->totals.full_gcs, 1);
  assert_int_equal(f->totals.peak_heap, 196);

  const eph_record *ra = by_id(f, 0), *rb = by_id(f, 32), *rc = by_id(f, 56), *rd = by_id(f, 156),
                   *re = by_id(f, 188);
  assert_int_equal(ra->class_id, CLS_OBJECT);
  assert_int_equal(ra->size, 32);
  assert_true(ra->weight == 1.0);
  assert_int_equal(ra->death_kind, EPH_DEATH_FREED);
  assert_int_equal(ra->birth.full_gcs, 0);
  assert_int_equal(ra->death.full_gcs, 1);
  assert_int_equal(ra->alive_until.bytes, 156); /* the cycle's end */
  assert_int_equal(ra->alive_until.full_gcs, 1);
  assert_int_equal(rd->death_kind, EPH_DEATH_FREED);
  assert_int_equal(rd->birth.full_gcs, 1); /* born after the cycle's end at its byte clock */
  assert_int_equal(rd->alive_until.bytes, rd->birth.bytes); /* no cycle since: alive until its birth */
  assert_int_equal(rb->death_kind, EPH_DEATH_CENSORED);
  assert_int_equal(rc->death_kind, EPH_DEATH_CENSORED);
  assert_int_equal(re->death_kind, EPH_DEATH_CENSORED);
  assert_int_equal(rb->death.bytes, 196);

  /* sites: A.java:10 (1), B.java:5 (2), A.java:11 (3), the stack 3 <- 1 (4) */
  assert_int_equal(ra->site_id, 1);
  assert_int_equal(rb->site_id, 1);
  assert_int_equal(rc->site_id, 2);
  assert_int_equal(rd->site_id, 4);
  assert_int_equal(re->site_id, 4);
  assert_string_equal(f->sites[1].file, "A.java");
  assert_int_equal(f->sites[1].line, 10);
  assert_string_equal(f->sites[2].function, "b()");
  assert_int_equal(f->sites[4].line, 11);
  assert_true(f->nstacks > 4);
  assert_int_equal(f->stacks[4].ncallers, 1);
  assert_int_equal(f->stacks[4].callers[0], 1);
  eph_file_free(f);
}

/* 1/N: about one object in N is a sample, each standing for N. */
static void sampled(void **state) {
  (void)state;
  toy *t = toy_open("sample=1/8,seed=3,sites=off");
  for (int i = 0; i < 8000; i++) toy_new(t, CLS_STRING, 16, &METHOD_B, 1, NULL, 0);
  eph_file *f = toy_close(t);
  assert_in_range(f->nrecords, 850, 1150);
  for (size_t i = 0; i < f->nrecords; i++) {
    assert_true(f->records[i].weight == 8.0);
    assert_int_equal(f->records[i].site_id, 0);
    assert_int_equal(f->records[i].death_kind, EPH_DEATH_CENSORED);
  }
  assert_int_equal(f->totals.objects_allocated, 8000);
  eph_file_free(f);
}

/* classes=: the others are counted out, not recorded. */
static void classes(void **state) {
  (void)state;
  toy *t = toy_open("classes=String");
  toy_new(t, CLS_OBJECT, 16, &METHOD_A, 1, NULL, 0);
  toy_new(t, CLS_STRING, 16, &METHOD_A, 1, NULL, 0);
  toy_free(t, 0);
  toy_free(t, 1);
  assert_int_equal(t->s.filtered, 1);
  eph_file *f = toy_close(t);
  assert_int_equal(f->nrecords, 1);
  assert_int_equal(f->records[0].class_id, CLS_STRING);
  eph_file_free(f);

  rt_options opt;
  rt_options_init(&opt);
  char msg[1600];
  assert_true(rt_options_parse(&opt, &TOY, "classes=Object", msg, sizeof msg));
  assert_int_equal(opt.class_mask, 1u << CLS_OBJECT | 1u << CLS_STRING | 1u << CLS_ARRAY);
}

/* The SPEC's errors name the runtime. */
static void spec_errors(void **state) {
  (void)state;
  rt_options opt;
  rt_options_init(&opt);
  char msg[1600];
  assert_false(rt_options_parse(&opt, &TOY, "classes=Foo", msg, sizeof msg));
  assert_string_equal(msg, "profile spec: classes: unknown Toy class 'Foo' (known: Object, String, Array)");
  assert_false(rt_options_parse(&opt, &TOY, "mode=merlin", msg, sizeof msg));
  assert_string_equal(msg, "profile spec: mode=merlin does not apply to Toy: the toy frees its own objects");
  assert_false(rt_options_parse(&opt, &TOY, "trace=on", msg, sizeof msg));
  assert_string_equal(msg, "profile spec: trace does not apply to Toy (only mode=gc)");
  assert_true(rt_options_parse(&opt, &TOY, "sample=bytes:4K,stacks=1,sites=off", msg, sizeof msg));
  assert_int_equal(opt.sample_bytes, 4096);
  assert_int_equal(opt.stacks, 0);
  assert_false(opt.sites);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/eph-rt-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(dir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(life),
      cmocka_unit_test(sampled),
      cmocka_unit_test(classes),
      cmocka_unit_test(spec_errors),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char path[128];
  snprintf(path, sizeof path, "%s/toy.eph", dir);
  unlink(path);
  rmdir(dir);
  return rc;
}
