/*
 * profile_test.h — steps the profiler tests share: a spec writing to a
 * file of the test's own under /tmp, starting the profiler with it, and
 * stopping it to load what it wrote.
 */
#ifndef EPH_PROFILE_TEST_H
#define EPH_PROFILE_TEST_H

#include <unistd.h>

#include "ephemera/format.h"
#include "ephemera/profile.h"
#include "heap_test.h"

/* spec_text over the defaults, writing to /tmp/eph-test-NAME-PID.eph (spec.out). */
static inline eph_profile_spec test_spec(const char *spec_text, const char *name) {
  eph_profile_spec spec;
  eph_error err;
  eph_profile_spec_init(&spec);
  assert_int_equal(eph_profile_spec_parse(&spec, spec_text, &err), EPH_OK);
  snprintf(spec.out, sizeof spec.out, "/tmp/eph-test-%s-%d.eph", name, (int)getpid());
  return spec;
}

static inline void test_profile_start(eph_heap *h, const eph_profile_spec *spec) {
  eph_error err;
  if (eph_profile_start(h, spec, NULL, 0, &err) != EPH_OK) fail_msg("start: %s", err.message);
}

/* Stops the profiler on h (its last statistics into *final unless NULL),
 * loads the file it wrote to path, and removes the file. */
static inline eph_file *test_profile_finish(eph_heap *h, const char *path, eph_profile_stats *final) {
  eph_error err;
  if (eph_profile_stop(h, final, &err) != EPH_OK) fail_msg("stop: %s", err.message);
  eph_file *prof;
  if (eph_file_load(path, &prof, &err) != EPH_OK) fail_msg("load: %s", err.message);
  unlink(path);
  return prof;
}

#endif
