/*
 * test_number.c — the CLI's strict number parser (src/cli/number.c): what
 * it accepts, what it refuses, and its bounds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "number.h"

typedef struct u64_case {
  const char *s;
  bool ok;
  uint64_t v;
} u64_case;

static void check_u64(const u64_case *cases, size_t n, cli_number_kind kind, uint64_t min, uint64_t max) {
  for (size_t i = 0; i < n; i++) {
    uint64_t v = 12345;
    char why[128] = "";
    bool ok = cli_number_u64(cases[i].s, kind, min, max, &v, why, sizeof why);
    if (ok != cases[i].ok) fail_msg("'%s': %s, expected %s", cases[i].s, ok ? "accepted" : "refused", cases[i].ok ? "ok" : "refusal");
    if (ok) assert_int_equal(v, cases[i].v);
    else {
      assert_int_equal(v, 12345); /* untouched */
      assert_true(why[0] != 0);
    }
  }
}

static void test_sizes(void **state) {
  (void)state;
  static const u64_case cases[] = {
      {"4096", true, 4096}, {"4K", true, 4096},  {"4k", true, 4096},        {"4KiB", true, 4096},
      {"4KB", true, 4096},  {"64K", true, 65536}, {"1M", true, 1 << 20},   {"2G", true, UINT64_C(2) << 30},
      {"100B", true, 100},  {"0", true, 0},       {"", false, 0},          {"K", false, 0},
      {"4Q", false, 0},     {"-1", false, 0},     {" 4", false, 0},        {"4 K", false, 0},
      {"4KK", false, 0},    {"4Ki", false, 0},    {"18446744073709551616", false, 0},
      {"17179869184G", false, 0}, {"+4", false, 0}, {"0x10", false, 0},
  };
  check_u64(cases, sizeof cases / sizeof *cases, CLI_SIZE, 0, UINT64_MAX);
}

static void test_counts(void **state) {
  (void)state;
  static const u64_case cases[] = {
      {"0", true, 0},   {"42", true, 42},  {"18446744073709551615", true, UINT64_MAX},
      {"-1", false, 0}, {"4K", false, 0},  {"1e3", false, 0},  {"", false, 0},  {"abc", false, 0},
      {"12 ", false, 0}, {"18446744073709551616", false, 0},
  };
  check_u64(cases, sizeof cases / sizeof *cases, CLI_COUNT, 0, UINT64_MAX);
  uint64_t v;
  char why[128];
  assert_false(cli_number_u64("0", CLI_COUNT, 1, 10, &v, why, sizeof why));
  assert_non_null(strstr(why, "from 1 to 10"));
  assert_false(cli_number_u64("11", CLI_COUNT, 1, 10, &v, why, sizeof why));
  assert_true(cli_number_u64("10", CLI_COUNT, 1, 10, &v, why, sizeof why) && v == 10);
}

static void test_doubles(void **state) {
  (void)state;
  static const struct {
    const char *s;
    bool pct, ok;
    double v;
  } cases[] = {
      {"3", false, true, 3},     {"2.5", false, true, 2.5}, {"1e2", false, true, 100}, {"0", false, true, 0},
      {"5%", true, true, 5},     {"5%", false, false, 0},   {"nan", false, false, 0},  {"NaN", false, false, 0},
      {"inf", false, false, 0},  {"-inf", false, false, 0}, {"", false, false, 0},     {"abc", false, false, 0},
      {"3x", false, false, 0},   {" 3", false, false, 0},   {"0x10", false, false, 0}, {"1e999", false, false, 0},
      {"-1", false, false, 0},   {"101", false, false, 0},  {"5%%", true, false, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double v = -7;
    char why[128] = "";
    bool ok = cli_number_double(cases[i].s, 0, 100, cases[i].pct, &v, why, sizeof why);
    if (ok != cases[i].ok) fail_msg("'%s': %s", cases[i].s, ok ? "accepted" : "refused");
    if (ok) assert_true(v == cases[i].v);
    else assert_true(v == -7 && why[0]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_counts),
      cmocka_unit_test(test_doubles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
