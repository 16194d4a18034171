/*
 * test_stacks.c — the STAK chunk (docs/eph-format.md 5.8) through the
 * writer and the reader, and the report's folding by stack prefix
 * (src/analysis/stacks.c): round trip, the writer's refusals, a site's
 * stack declared twice, folding at depths 1, 2 and 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemera/format.h"
#include "stacks.h"

static char path[64];

/* Sites 1 alloc (a.c:10 make), 2 call in via_a (a.c:20), 3 call in via_b
 * (a.c:30), 4 call in main (a.c:40); stacks: 5 = 1 < 2 < 4, 6 = 1 < 3 < 4,
 * 7 = 1 < 2 (another main... cut at depth 2). */
static eph_writer *write_sites(void) {
  eph_error err;
  snprintf(path, sizeof path, "/tmp/eph-test-stacks-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  eph_meta_pair meta[] = {{"stacks", "3"}};
  eph_writer *w = eph_writer_open(path, meta, 1, false, &err);
  assert_non_null(w);
  assert_int_equal(eph_writer_class(w, 1, "Node"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 1, "a.c", 10, "make"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 2, "a.c", 20, "via_a"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 3, "a.c", 30, "via_b"), EPH_OK);
  assert_int_equal(eph_writer_site(w, 4, "a.c", 40, "main"), EPH_OK);
  for (uint32_t id = 5; id <= 7; id++) assert_int_equal(eph_writer_site(w, id, "a.c", 10, "make"), EPH_OK);
  return w;
}

static void record(eph_writer *w, uint64_t id, uint32_t site) {
  eph_record r = {.id = id, .class_id = 1, .site_id = site, .size = 32, .weight = 1, .death_kind = EPH_DEATH_CENSORED};
  r.birth.bytes = id;
  r.death.bytes = r.alive_until.bytes = 1000;
  assert_int_equal(eph_writer_record(w, &r), EPH_OK);
}

static void roundtrip_and_fold(void **state) {
  (void)state;
  eph_writer *w = write_sites();
  assert_int_equal(eph_writer_stack(w, 5, (uint32_t[]){2, 4}, 2), EPH_OK);
  assert_int_equal(eph_writer_stack(w, 6, (uint32_t[]){3, 4}, 2), EPH_OK);
  assert_int_equal(eph_writer_stack(w, 7, (uint32_t[]){2}, 1), EPH_OK);
  assert_int_equal(eph_writer_stack(w, 5, (uint32_t[]){2, 4}, 2), EPH_OK); /* again, the same: no-op */
  record(w, 1, 5);
  record(w, 2, 6);
  record(w, 3, 7);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);

  eph_file *p;
  eph_error err;
  assert_int_equal(eph_file_load(path, &p, &err), EPH_OK);
  assert_int_equal(p->nrecords, 3);
  const uint32_t *c;
  assert_int_equal(eph_stack_callers(p, 5, &c), 2);
  assert_int_equal(c[0], 2);
  assert_int_equal(c[1], 4);
  assert_int_equal(eph_stack_callers(p, 6, &c), 2);
  assert_int_equal(c[0], 3);
  assert_int_equal(eph_stack_callers(p, 1, &c), 0);
  assert_int_equal(eph_stack_depth(p), 3);

  eph_stack_fold f;
  assert_true(eph_stack_fold_build(p, 1, &f)); /* by allocation point: 1, 5, 6, 7 together */
  assert_int_equal(f.group_of[5], f.group_of[1]);
  assert_int_equal(f.group_of[6], f.group_of[1]);
  assert_int_equal(f.group_of[7], f.group_of[1]);
  assert_string_equal(f.labels[f.group_of[5]], "make a.c:10");
  eph_stack_fold_free(&f);
  assert_true(eph_stack_fold_build(p, 2, &f)); /* 5 and 7 share make < via_a */
  assert_int_equal(f.group_of[5], f.group_of[7]);
  assert_int_not_equal(f.group_of[5], f.group_of[6]);
  assert_string_equal(f.labels[f.group_of[6]], "make a.c:10 < via_b a.c:30");
  eph_stack_fold_free(&f);
  assert_true(eph_stack_fold_build(p, 3, &f)); /* all apart */
  assert_int_not_equal(f.group_of[5], f.group_of[7]);
  assert_string_equal(f.labels[f.group_of[5]], "make a.c:10 < via_a a.c:20 < main a.c:40");
  eph_stack_fold_free(&f);
  eph_file_free(p);
  unlink(path);
}

static void writer_refuses(void **state) {
  (void)state;
  eph_writer *w = write_sites();
  assert_int_equal(eph_writer_stack(w, 5, (uint32_t[]){2, 4}, 2), EPH_OK);
  assert_int_equal(eph_writer_stack(w, 5, (uint32_t[]){3, 4}, 2), EPH_ERR_INVALID); /* another stack */
  assert_non_null(strstr(eph_writer_error(w), "another stack"));
  assert_int_equal(eph_writer_stack(w, 9, (uint32_t[]){2}, 1), EPH_ERR_INVALID);    /* undeclared site */
  assert_int_equal(eph_writer_stack(w, 6, (uint32_t[]){8}, 1), EPH_ERR_INVALID);    /* undeclared caller */
  assert_int_equal(eph_writer_stack(w, 6, (uint32_t[]){2}, 0), EPH_ERR_INVALID);    /* no callers */
  uint32_t many[EPH_FORMAT_MAX_STACK + 1];
  for (size_t i = 0; i <= EPH_FORMAT_MAX_STACK; i++) many[i] = 2;
  assert_int_equal(eph_writer_stack(w, 6, many, EPH_FORMAT_MAX_STACK + 1), EPH_ERR_INVALID);
  assert_int_equal(eph_writer_stack(w, 6, many, EPH_FORMAT_MAX_STACK), EPH_OK);
  assert_int_equal(eph_writer_close(w, NULL), EPH_OK);
  eph_file *p;
  eph_error err;
  assert_int_equal(eph_file_load(path, &p, &err), EPH_OK);
  const uint32_t *c;
  assert_int_equal(eph_stack_callers(p, 6, &c), EPH_FORMAT_MAX_STACK);
  assert_int_equal(eph_stack_depth(p), 3); /* the metadata's, not the longest stack */
  eph_file_free(p);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(roundtrip_and_fold), cmocka_unit_test(writer_refuses)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
