/*
 * test_escape.c — the one CSV/JSON/HTML escaper (src/render/escape.c):
 * quoting, control characters, and that no invalid UTF-8 gets through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render.h"

/* What fn writes for s, as a malloc'd string. */
static char *render(void (*fn)(FILE *, const char *), const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  fn(f, s);
  assert_int_equal(fclose(f), 0);
  return buf;
}

static void csv_always(FILE *f, const char *s) { eph_csv_field(f, s, EPH_CSV_QUOTE_ALWAYS); }
static void csv_needed(FILE *f, const char *s) { eph_csv_field(f, s, EPH_CSV_QUOTE_AS_NEEDED); }

static void expect(void (*fn)(FILE *, const char *), const char *in, const char *want) {
  char *got = render(fn, in);
  if (strcmp(got, want)) fail_msg("'%s' -> '%s', expected '%s'", in ? in : "(null)", got, want);
  free(got);
}

/* Every byte sequence in s is valid UTF-8. */
static void assert_utf8(const char *s) {
  while (*s) {
    size_t n = eph_utf8_len(s);
    if (!n) fail_msg("invalid UTF-8 at '%s'", s);
    s += n;
  }
}

static const char *const BAD[] = {
    "bad\xff\xfe",     /* bytes that are never UTF-8 */
    "cut \xc3",        /* a sequence cut by the end */
    "cut \xe2\x9c x",  /* cut by a space */
    "over\xc0\xaf",    /* overlong '/' */
    "sur\xed\xa0\x80", /* a UTF-16 surrogate */
    "big\xf4\x90\x80\x80", /* above U+10FFFF */
};

static void test_utf8_len(void **state) {
  (void)state;
  assert_int_equal(eph_utf8_len("a"), 1);
  assert_int_equal(eph_utf8_len("\xc3\xa9"), 2);
  assert_int_equal(eph_utf8_len("\xe2\x9c\x93"), 3);
  assert_int_equal(eph_utf8_len("\xf0\x9f\x98\x80"), 4);
  assert_int_equal(eph_utf8_len(""), 0);
  for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
    const char *s = strpbrk(BAD[i], "\x80\x81\x90\x9c\xa0\xaf\xc0\xc3\xe2\xed\xf4\xfe\xff");
    assert_int_equal(eph_utf8_len(s), 0);
  }
}

static void test_json(void **state) {
  (void)state;
  expect(eph_json_string, "plain", "\"plain\"");
  expect(eph_json_string, NULL, "\"\"");
  expect(eph_json_string, "q\"b\\", "\"q\\\"b\\\\\"");
  expect(eph_json_string, "a\nb\t\x01", "\"a\\u000ab\\u0009\\u0001\"");
  expect(eph_json_string, "\xc3\xa9t\xc3\xa9 \xe2\x9c\x93", "\"\xc3\xa9t\xc3\xa9 \xe2\x9c\x93\"");
  expect(eph_json_string, "bad\xff\xfe", "\"bad\\ufffd\\ufffd\"");
  expect(eph_json_string, "cut \xc3", "\"cut \\ufffd\"");
  for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
    char *got = render(eph_json_string, BAD[i]);
    assert_utf8(got);
    assert_non_null(strstr(got, "\\ufffd"));
    free(got);
  }
}

static void test_csv(void **state) {
  (void)state;
  expect(csv_always, "Point", "\"Point\"");
  expect(csv_needed, "Point", "Point");
  expect(csv_needed, "a,b", "\"a,b\"");
  expect(csv_needed, "say \"hi\"", "\"say \"\"hi\"\"\"");
  expect(csv_needed, "two\nlines", "\"two\nlines\"");
  expect(csv_always, NULL, "\"\"");
  expect(csv_needed, "bad\xff", "bad\xef\xbf\xbd");
  for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
    char *a = render(csv_always, BAD[i]), *b = render(csv_needed, BAD[i]);
    assert_utf8(a);
    assert_utf8(b);
    free(a);
    free(b);
  }
}

static void test_html(void **state) {
  (void)state;
  expect(eph_html_escape, "<a href=\"x\">&</a>", "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
  expect(eph_html_escape, "\xe2\x9c\x93 ok", "\xe2\x9c\x93 ok");
  for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
    char *got = render(eph_html_escape, BAD[i]);
    assert_utf8(got);
    free(got);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_len),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_html),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
