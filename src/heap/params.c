/*
 * params.c — GC parameters: defaults, the "key=value,..." parser, checks.
 * Everything is driven by EPH_GC_PARAM_TABLE in heap.h.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

enum kind { KIND_SIZE, KIND_RATIO, KIND_COUNT };
#define KIND_OF_SIZE KIND_SIZE
#define KIND_OF_RATIO KIND_RATIO
#define KIND_OF_COUNT KIND_COUNT

typedef struct param_desc {
  const char *key;
  enum kind kind;
  size_t offset;
  double default_value;
  const char *help;
} param_desc;

/* Limits of eph_gc_params_check, each with its reason. */
#define MIN_EDEN (16 * EPH_KiB)      /* below this a survivor space (eden/5) holds hardly an object */
#define MAX_EDEN (64 * EPH_GiB)      /* new space is one mapping: keep it well inside the address space */
#define MIN_HEADROOM (4 * EPH_KiB)   /* old space grows by at least a page */
#define MAX_TENURE 15                /* the header's 4-bit age field */
#define MIN_OLD_SPACE (64 * EPH_KiB) /* max_heap must leave old space room for a few objects */
#define PARAM_SPEC_MAX 1024          /* longest "key=value,..." string accepted */
#define RATIO_DIGITS_MIN 6           /* enough for any ratio a person writes */
#define DOUBLE_ROUND_TRIP_DIGITS 17  /* %.17g always reads back as the same double */
#define SIZE_MAX_AS_DOUBLE 18446744073709551615.0 /* sizes must fit in size_t */

static const param_desc PARAMS[] = {
#define X(key, field, kind, def, help) {#key, KIND_OF_##kind, offsetof(eph_gc_params, field), (double)(def), help},
    EPH_GC_PARAM_TABLE(X)
#undef X
};
#define NPARAMS (sizeof PARAMS / sizeof PARAMS[0])

/* "eden, headroom, ..." from the table, for the unknown-key message. */
#define KEY_TEXT(key, field, kind, def, help) ", " #key
static const char KEY_LIST[] = EPH_GC_PARAM_TABLE(KEY_TEXT);
#undef KEY_TEXT
#define KNOWN_KEYS (KEY_LIST + 2) /* without the first ", " */

void eph_gc_params_init(eph_gc_params *p) {
  memset(p, 0, sizeof *p);
#define X(key, field, kind, def, help) p->field = def;
  EPH_GC_PARAM_TABLE(X)
#undef X
}

/* "64M", "1g", "4096", "1.5G" -> bytes.  Rejects negatives and junk. */
static bool parse_size(const char *s, size_t *out) {
  if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return false;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0) return false;
  double mult = 1;
  switch (*end) {
    case 'k': case 'K': mult = (double)EPH_KiB; end++; break;
    case 'm': case 'M': mult = (double)EPH_MiB; end++; break;
    case 'g': case 'G': mult = (double)EPH_GiB; end++; break;
    default: break;
  }
  if (*end == 'b' || *end == 'B') end++;
  if (*end) return false;
  v *= mult;
  if (v >= SIZE_MAX_AS_DOUBLE) return false;
  *out = (size_t)v;
  return true;
}

static bool parse_ratio(const char *s, double *out) {
  if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return false;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0) return false;
  if (*end == '%') { v /= 100.0; end++; }
  if (*end) return false;
  *out = v;
  return true;
}

static bool parse_count(const char *s, unsigned long *out) {
  if (!isdigit((unsigned char)*s)) return false;
  errno = 0;
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

static const char *kind_expect(enum kind k) {
  switch (k) {
    case KIND_SIZE: return "a size such as 4096, 64K, 15M or 1G";
    case KIND_RATIO: return "a ratio such as 0.33, 2.5 or 33%";
    default: return "a non-negative integer";
  }
}

static eph_status apply_one(eph_gc_params *p, const char *key, size_t keylen, const char *value, eph_error *err) {
  for (size_t i = 0; i < NPARAMS; i++) {
    const param_desc *d = &PARAMS[i];
    if (strlen(d->key) != keylen || strncmp(d->key, key, keylen) != 0) continue;
    char *field = (char *)p + d->offset;
    bool ok;
    switch (d->kind) {
      case KIND_SIZE: ok = parse_size(value, (size_t *)(void *)field); break;
      case KIND_RATIO: ok = parse_ratio(value, (double *)(void *)field); break;
      default: ok = parse_count(value, (unsigned long *)(void *)field); break;
    }
    if (!ok) {
      eph_error_fill(err, EPH_ERR_INVALID, "GC parameter '%s': bad value '%s' (expected %s)", d->key, value,
                     kind_expect(d->kind));
      return EPH_ERR_INVALID;
    }
    return EPH_OK;
  }
  eph_error_fill(err, EPH_ERR_INVALID, "unknown GC parameter '%.*s' (known: %s)", (int)keylen, key, KNOWN_KEYS);
  return EPH_ERR_INVALID;
}

eph_status eph_gc_params_parse(eph_gc_params *p, const char *spec, eph_error *err) {
  eph_gc_params tmp = *p;
  char buf[PARAM_SPEC_MAX];
  if (!spec) spec = "";
  if (strlen(spec) >= sizeof buf) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter string too long (%zu characters)", strlen(spec));
    return EPH_ERR_INVALID;
  }
  strcpy(buf, spec);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*item)) item++;
    char *end = item + strlen(item);
    while (end > item && isspace((unsigned char)end[-1])) *--end = '\0';
    if (!*item) continue;
    char *eq = strchr(item, '=');
    if (!eq) {
      eph_error_fill(err, EPH_ERR_INVALID, "GC parameter '%s' has no value (expected %s=VALUE)", item, item);
      return EPH_ERR_INVALID;
    }
    char *key_end = eq;
    while (key_end > item && isspace((unsigned char)key_end[-1])) key_end--;
    const char *value = eq + 1;
    while (isspace((unsigned char)*value)) value++;
    if (!*value) {
      eph_error_fill(err, EPH_ERR_INVALID, "GC parameter '%.*s' has an empty value", (int)(key_end - item), item);
      return EPH_ERR_INVALID;
    }
    eph_status st = apply_one(&tmp, item, (size_t)(key_end - item), value, err);
    if (st != EPH_OK) return st;
  }
  eph_status st = eph_gc_params_check(&tmp, err);
  if (st != EPH_OK) return st;
  *p = tmp;
  return EPH_OK;
}

eph_status eph_gc_params_apply_env(eph_gc_params *p, eph_error *err) {
  const char *env = getenv("EPHEMERA_GC");
  if (!env) return EPH_OK;
  eph_error inner;
  eph_status st = eph_gc_params_parse(p, env, &inner);
  if (st != EPH_OK) eph_error_fill(err, st, "EPHEMERA_GC: %s", inner.message);
  return st;
}

eph_status eph_gc_params_check(const eph_gc_params *p, eph_error *err) {
  if (p->eden_bytes < MIN_EDEN) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter 'eden': %zu bytes is below the minimum of %zuK", p->eden_bytes,
                   MIN_EDEN / EPH_KiB);
    return EPH_ERR_INVALID;
  }
  if (p->eden_bytes > MAX_EDEN) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter 'eden': %zu bytes is above the maximum of %zuG", p->eden_bytes,
                   MAX_EDEN / EPH_GiB);
    return EPH_ERR_INVALID;
  }
  if (p->growth_headroom < MIN_HEADROOM) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter 'headroom': must be at least %zuK", MIN_HEADROOM / EPH_KiB);
    return EPH_ERR_INVALID;
  }
  if (p->gc_ratio <= 0) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter 'ratio': must be greater than 0");
    return EPH_ERR_INVALID;
  }
  if (p->tenure_age < 1 || p->tenure_age > MAX_TENURE) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameter 'tenure': %lu is outside 1..%d", p->tenure_age, MAX_TENURE);
    return EPH_ERR_INVALID;
  }
  size_t new_space = ephh_new_space_bytes(p->eden_bytes, 1);
  if (p->max_heap && p->max_heap < new_space + MIN_OLD_SPACE) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "GC parameter 'max': %zu bytes leaves no old space (new space alone is %zu bytes; lower 'eden')",
                   p->max_heap, new_space);
    return EPH_ERR_INVALID;
  }
  if (p->stress > 1 || p->verify > 1 || p->record_events > 1 || p->huge_pages > 1) {
    eph_error_fill(err, EPH_ERR_INVALID, "GC parameters 'stress', 'verify', 'events' and 'huge' take 0 or 1");
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}

static void format_size(char *buf, size_t len, size_t v) {
  if (v && v % EPH_GiB == 0) snprintf(buf, len, "%zuG", v / EPH_GiB);
  else if (v && v % EPH_MiB == 0) snprintf(buf, len, "%zuM", v / EPH_MiB);
  else if (v && v % EPH_KiB == 0) snprintf(buf, len, "%zuK", v / EPH_KiB);
  else snprintf(buf, len, "%zu", v);
}

/* Shortest text that parses back to the same double. */
static void format_ratio(char *buf, size_t len, double r) {
  for (int digits = RATIO_DIGITS_MIN; digits <= DOUBLE_ROUND_TRIP_DIGITS; digits++) {
    snprintf(buf, len, "%.*g", digits, r);
    if (strtod(buf, NULL) == r) return;
  }
}

void eph_gc_params_format(const eph_gc_params *p, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NPARAMS && used < len; i++) {
    const param_desc *d = &PARAMS[i];
    const char *field = (const char *)p + d->offset;
    char v[64];
    switch (d->kind) {
      case KIND_SIZE: format_size(v, sizeof v, *(const size_t *)(const void *)field); break;
      case KIND_RATIO: format_ratio(v, sizeof v, *(const double *)(const void *)field); break;
      default: snprintf(v, sizeof v, "%lu", *(const unsigned long *)(const void *)field); break;
    }
    int n = snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "", d->key, v);
    if (n < 0) break;
    used += (size_t)n;
  }
}

void eph_gc_params_describe(FILE *out) {
  for (size_t i = 0; i < NPARAMS; i++) {
    const param_desc *d = &PARAMS[i];
    char def[64];
    if (d->kind == KIND_SIZE) format_size(def, sizeof def, (size_t)d->default_value);
    else snprintf(def, sizeof def, "%g", d->default_value);
    fprintf(out, "  %-12s %-8s %s\n", d->key, def, d->help);
  }
}
