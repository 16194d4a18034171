/*
 * test_truncate.c — a file cut at every byte offset loads up to its last
 * complete chunk (complete = false, a warning naming the offset), and what
 * it returns is a prefix of what was written.  Cut inside the 16-byte
 * file header, it fails cleanly.
 */
#include <sys/stat.h>

#include "format_test.h"

static void cut_everywhere(bool compress, bool extreme) {
  sample_spec spec = {.nrecords = 60, .ngcs = 6, .nevents = 80, .extreme = extreme, .small_ids = true, .seed = 7};
  sample s;
  sample_build(&s, &spec);
  for (size_t i = 0; i < s.nmeta; i++)
    if (strlen(s.meta[i].value) > 50) ((char *)s.meta[i].value)[50] = 0;
  for (size_t i = 0; i < s.nclasses; i++)
    if (strlen(s.classes[i].name) > 50) s.classes[i].name[50] = 0;
  for (size_t i = 0; i < s.nsites; i++)
    if (strlen(s.sites[i].function) > 50) s.sites[i].function[50] = 0;
  const char *path = tmp_path("cut.eph");
  write_sample(&s, path, compress, 10, true);
  size_t n;
  uint8_t *orig = sample_read_file(path, &n);
  assert_non_null(orig);
  size_t prev_records = 0, prev_events = 0, prev_valid = 0, boundaries = 0;
  for (size_t len = 0; len <= n; len++) {
    /* An exact-size copy, so that ASan catches any read past the end. */
    uint8_t *d = malloc(len ? len : 1);
    assert_non_null(d);
    memcpy(d, orig, len);
    eph_file *p = NULL;
    eph_error err;
    memset(&err, 0, sizeof err);
    eph_status st = eph_file_load_buffer(d, len, &p, &err);
    free(d);
    if (len < 16) {
      assert_int_equal(st, EPH_ERR_INVALID);
      assert_null(p);
      assert_non_null(strstr(err.message, "at byte"));
      continue;
    }
    if (st != EPH_OK) fail_msg("cut at %zu: %s", len, err.message);
    const char *diff = sample_check(&s, p, true);
    if (diff) fail_msg("cut at %zu: %s", len, diff);
    assert_true(p->complete == (len == n));
    assert_true(p->valid_bytes <= len);
    assert_true(p->valid_bytes >= prev_valid);
    assert_true(p->nrecords >= prev_records && p->nevents >= prev_events);
    if (!p->complete) {
      char at[64];
      snprintf(at, sizeof at, "at byte %llu", (unsigned long long)p->valid_bytes);
      if (!strstr(p->warning, at)) fail_msg("cut at %zu: warning \"%s\" should say '%s'", len, p->warning, at);
      if (p->valid_bytes == len) {
        boundaries++;
        assert_non_null(strstr(p->warning, "no closing chunk"));
      } else {
        assert_non_null(strstr(p->warning, "truncated"));
      }
    }
    prev_records = p->nrecords;
    prev_events = p->nevents;
    prev_valid = p->valid_bytes;
    eph_file_free(p);
  }
  assert_true(boundaries > 10);
  assert_int_equal(prev_records, s.nrecords);

  /* The same through eph_file_load on a file cut in the middle. */
  assert_int_equal(truncate(path, (off_t)(n / 2)), 0);
  eph_file *p = load_ok(path);
  assert_false(p->complete);
  assert_null(sample_check(&s, p, true));
  eph_file_free(p);
  free(orig);
  sample_free(&s);
}

static void test_cut_plain(void **state) {
  (void)state;
  cut_everywhere(false, false);
}

static void test_cut_compressed(void **state) {
  (void)state;
  cut_everywhere(true, false);
}

static void test_cut_extreme(void **state) {
  (void)state;
  cut_everywhere(false, true);
  cut_everywhere(true, true);
}

static void test_load_errors(void **state) {
  (void)state;
  eph_file *p = (eph_file *)1;
  eph_error err;
  assert_int_equal(eph_file_load("/nonexistent/x.eph", &p, &err), EPH_ERR_INVALID);
  assert_null(p);
  assert_non_null(strstr(err.message, "/nonexistent/x.eph"));
  assert_int_equal(eph_file_load("/tmp", &p, &err), EPH_ERR_INVALID);
  assert_non_null(strstr(err.message, "not a regular file"));
  /* The file name prefixes the message. */
  const char *path = tmp_path("junk.eph");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs("this is not a profile at all", f);
  fclose(f);
  assert_int_equal(eph_file_load(path, &p, &err), EPH_ERR_INVALID);
  char want[600];
  snprintf(want, sizeof want, "%s: not an .eph file: bad magic at byte 0", path);
  assert_string_equal(err.message, want);
  assert_int_equal(eph_file_load_buffer(NULL, 0, &p, &err), EPH_ERR_INVALID);
  assert_int_equal(eph_file_load_buffer((const uint8_t *)"x", 1, NULL, &err), EPH_ERR_INVALID);
  assert_int_equal(eph_file_load(path, NULL, NULL), EPH_ERR_INVALID);
  assert_int_equal(eph_file_load(path, &p, NULL), EPH_ERR_INVALID); /* err may be NULL */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cut_plain),
      cmocka_unit_test(test_cut_compressed),
      cmocka_unit_test(test_cut_extreme),
      cmocka_unit_test(test_load_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
