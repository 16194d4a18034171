/*
 * heap_test.h — small helpers shared by the heap unit tests (cmocka).
 *
 * Everything here is static inline so that each test file uses what it needs
 * without unused-function warnings.
 */
#ifndef EPHEMERA_HEAP_TEST_H
#define EPHEMERA_HEAP_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ephemera/heap.h"
#include "ephemera/observer.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* Parameters: defaults plus spec (may be NULL); fails the test on a bad spec. */
static inline eph_gc_params params_with(const char *spec) {
  eph_gc_params p;
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_gc_params_init(&p);
  if (spec != NULL && eph_gc_params_parse(&p, spec, &err) != EPH_OK) fail_msg("bad spec \"%s\": %s", spec, err.message);
  return p;
}

/* A heap with the defaults plus spec; never reads EPHEMERA_GC. */
static inline eph_heap *heap_with(const char *spec) {
  eph_gc_params p = params_with(spec);
  eph_error err;
  eph_heap *h = NULL;
  memset(&err, 0, sizeof err);
  eph_status s = eph_heap_new(&p, &h, &err);
  if (s != EPH_OK || h == NULL) fail_msg("eph_heap_new(\"%s\") failed: %d %s", spec ? spec : "", (int)s, err.message);
  return h;
}

/* An error handler that records calls instead of printing or aborting. */
typedef struct err_log {
  int calls;
  int per_status[EPH_ERR_CORRUPT + 1];
  eph_status last;
  char message[256];
} err_log;

static inline void err_log_fn(void *data, eph_heap *h, eph_status status, const char *message) {
  err_log *log = (err_log *)data;
  (void)h;
  log->calls++;
  if ((int)status >= 0 && status <= EPH_ERR_CORRUPT) log->per_status[status]++;
  log->last = status;
  snprintf(log->message, sizeof log->message, "%s", message ? message : "");
}

static inline eph_heap_stats stats_of(eph_heap *h) {
  eph_heap_stats s;
  memset(&s, 0xA5, sizeof s); /* so a field the library forgets to fill shows */
  eph_heap_stats_get(h, &s);
  return s;
}

static inline void assert_verifies(eph_heap *h) {
  eph_status s = eph_heap_verify(h);
  if (s != EPH_OK) fail_msg("verifier failed: %d %s", (int)s, eph_heap_error(h));
}

static inline void assert_contains(const char *haystack, const char *needle) {
  assert_non_null(haystack);
  if (strstr(haystack, needle) == NULL) fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* Raw slot access: writes that bypass the write barrier (for corruption tests). */
static inline eph_value *raw_slot(eph_value obj, size_t i) { return (eph_value *)(obj + sizeof(eph_header)) + i; }

#endif /* EPHEMERA_HEAP_TEST_H */
