/*
 * number.c — the strict number parser (number.h).
 */
#include "number.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decimal digits at *s into *v; false on overflow or no digit. */
static bool digits(const char **s, uint64_t *v) {
  const char *p = *s;
  if (*p < '0' || *p > '9') return false;
  uint64_t x = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
  }
  *s = p;
  *v = x;
  return true;
}

/* The unit after a size's digits: K/M/G (optionally KiB/KB), or B. */
static bool size_unit(const char *s, unsigned *shift) {
  *shift = 0;
  switch (*s) {
    case 'k': case 'K': *shift = 10; s++; break;
    case 'm': case 'M': *shift = 20; s++; break;
    case 'g': case 'G': *shift = 30; s++; break;
    default: break;
  }
  if (*shift && (*s == 'i' || *s == 'I') && (s[1] == 'b' || s[1] == 'B')) s += 2;
  else if (*s == 'b' || *s == 'B') s++;
  return *s == 0;
}

bool cli_number_u64(const char *text, cli_number_kind kind, uint64_t min, uint64_t max, uint64_t *out, char *why,
                    size_t whylen) {
  const char *s = text ? text : "";
  uint64_t v;
  unsigned shift = 0;
  bool ok = digits(&s, &v);
  if (ok) ok = kind == CLI_SIZE ? size_unit(s, &shift) : *s == 0;
  if (ok && shift && v > (UINT64_MAX >> shift)) ok = false;
  if (ok) v <<= shift;
  if (ok && v >= min && v <= max) {
    *out = v;
    return true;
  }
  const char *what = kind == CLI_SIZE ? "a size in bytes (K, M, G suffixes: 4K = 4096)" : "an integer";
  if (max == UINT64_MAX) snprintf(why, whylen, "expected %s, at least %llu", what, (unsigned long long)min);
  else snprintf(why, whylen, "expected %s from %llu to %llu", what, (unsigned long long)min, (unsigned long long)max);
  return false;
}

bool cli_number_double(const char *text, double min, double max, bool allow_percent, double *out, char *why,
                       size_t whylen) {
  const char *s = text ? text : "";
  /* strtod takes "nan", "inf", "0x1p3" and leading space: only plain decimals here. */
  bool ok = s[0] != 0;
  for (const char *p = s; *p && ok; p++)
    ok = (*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' || *p == '+' ||
         (allow_percent && *p == '%' && p[1] == 0);
  double v = 0;
  if (ok) {
    char *end;
    errno = 0;
    v = strtod(s, &end);
    ok = end != s && errno == 0 && isfinite(v) && (*end == 0 || (allow_percent && !strcmp(end, "%")));
  }
  if (ok && v >= min && v <= max) {
    *out = v;
    return true;
  }
  snprintf(why, whylen, "expected a number from %g to %g", min, max);
  return false;
}
