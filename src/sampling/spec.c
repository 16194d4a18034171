/*
 * spec.c — a profile's SPEC strings: "mode=gc,sample=1/100,out=run.eph"
 * (ephemera/spec.h), shared by the heap's profiler and the Lua adapter.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/spec.h"

void eph_profile_spec_init(eph_profile_spec *s) {
  memset(s, 0, sizeof *s);
  s->mode = EPH_MODE_GC;
  s->sample_every = 1;
  s->pretenure = true;
  s->seed = 1;
  snprintf(s->out, sizeof s->out, "ephemera.eph");
}

static bool parse_u64(const char *v, uint64_t *out) {
  if (!isdigit((unsigned char)*v)) return false;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  uint64_t mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, end++;
  else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, end++;
  else if (*end == 'g' || *end == 'G') mult = 1024 * 1024 * 1024, end++;
  if (errno || *end || x == 0) return false;
  *out = (uint64_t)x * mult;
  return true;
}

static bool parse_bool(const char *v, bool *out) {
  if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true")) return *out = true, true;
  if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false")) return *out = false, true;
  return false;
}

static bool parse_sample(eph_profile_spec *s, const char *v) {
  if (!strcmp(v, "all")) {
    s->sample_every = 1;
    s->sample_bytes = 0;
    return true;
  }
  if (!strncmp(v, "bytes:", 6)) {
    s->sample_every = 1;
    return parse_u64(v + 6, &s->sample_bytes);
  }
  s->sample_fixed = false;
  if (!strncmp(v, "every:", 6)) {
    s->sample_fixed = true;
    v += 6;
  } else if (!strncmp(v, "1/", 2)) {
    v += 2;
  }
  s->sample_bytes = 0;
  return parse_u64(v, &s->sample_every) && s->sample_every < (UINT64_C(1) << 62);
}

static eph_status bad(eph_error *err, const char *key, const char *value, const char *expect) {
  eph_error_fill(err, EPH_ERR_INVALID, "profile spec: '%s': bad value '%s' (expected %s)", key, value, expect);
  return EPH_ERR_INVALID;
}

eph_status eph_profile_spec_parse(eph_profile_spec *s, const char *text, eph_error *err) {
  eph_profile_spec t = *s;
  char buf[2048];
  if (strlen(text) >= sizeof buf) {
    eph_error_fill(err, EPH_ERR_INVALID, "profile spec too long");
    return EPH_ERR_INVALID;
  }
  strcpy(buf, text);
  bool in_classes = false;
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*item)) item++;
    if (!*item) continue;
    char *eq = strchr(item, '=');
    if (!eq) {
      if (in_classes) { /* classes=A,B,C: the list goes on */
        size_t n = strlen(t.classes);
        snprintf(t.classes + n, sizeof t.classes - n, ",%s", item);
        continue;
      }
      eph_error_fill(err, EPH_ERR_INVALID, "profile spec: '%s' has no value (expected KEY=VALUE)", item);
      return EPH_ERR_INVALID;
    }
    *eq = '\0';
    const char *key = item, *v = eq + 1;
    in_classes = false;
    if (!*v) {
      eph_error_fill(err, EPH_ERR_INVALID, "profile spec: '%s' has an empty value", key);
      return EPH_ERR_INVALID;
    }
    if (!strcmp(key, "mode")) {
      if (!strcmp(v, "gc")) t.mode = EPH_MODE_GC;
      else if (!strcmp(v, "finalization") || !strcmp(v, "fin")) t.mode = EPH_MODE_FINALIZATION;
      else if (!strcmp(v, "merlin")) t.mode = EPH_MODE_MERLIN;
      else if (!strcmp(v, "brute")) t.mode = EPH_MODE_BRUTE;
      else return bad(err, key, v, "gc, finalization, merlin or brute");
    } else if (!strcmp(key, "sample")) {
      if (!parse_sample(&t, v)) return bad(err, key, v, "1/N, N, every:N, all or bytes:B");
    } else if (!strcmp(key, "out") || !strcmp(key, "o")) {
      if (strlen(v) >= sizeof t.out) return bad(err, key, v, "a shorter path");
      snprintf(t.out, sizeof t.out, "%s", v);
    } else if (!strcmp(key, "pretenure")) {
      if (!parse_bool(v, &t.pretenure)) return bad(err, key, v, "on or off");
    } else if (!strcmp(key, "compress")) {
      if (!parse_bool(v, &t.compress)) return bad(err, key, v, "on or off");
    } else if (!strcmp(key, "seed")) {
      if (!parse_u64(v, &t.seed)) return bad(err, key, v, "a positive integer");
    } else if (!strcmp(key, "granule")) {
      if (!parse_u64(v, &t.granule)) return bad(err, key, v, "a positive number of bytes (K/M/G)");
    } else if (!strcmp(key, "trace")) {
      if (!parse_bool(v, &t.trace)) return bad(err, key, v, "on or off");
    } else if (!strcmp(key, "threads")) {
      if (!strcmp(v, "auto")) t.threads = 0;
      else if (!strcmp(v, "1") || !strcmp(v, "2")) t.threads = (unsigned)(*v - '0');
      else return bad(err, key, v, "1, 2 or auto");
    } else if (!strcmp(key, "stacks")) {
      uint64_t d;
      if (!parse_u64(v, &d) || d < 1 || d > 256) return bad(err, key, v, "frames kept, 1..256 (1: the site alone)");
      t.stacks = d > 1 ? (unsigned)d : 0;
    } else if (!strcmp(key, "classes")) {
      snprintf(t.classes, sizeof t.classes, "%s", v);
      in_classes = true;
    } else {
      eph_error_fill(err, EPH_ERR_INVALID,
                     "profile spec: unknown key '%s' (known: mode, sample, out, pretenure, compress, seed, classes, granule, trace, threads, stacks)",
                     key);
      return EPH_ERR_INVALID;
    }
  }
  *s = t;
  return EPH_OK;
}

static const char *mode_name(eph_profile_mode m) {
  static const char *names[] = {"gc", "finalization", "merlin", "brute"};
  return (unsigned)m < 4 ? names[m] : "?";
}

void eph_profile_spec_format(const eph_profile_spec *s, char *buf, size_t len) {
  char sample[64];
  if (s->sample_bytes) snprintf(sample, sizeof sample, "bytes:%llu", (unsigned long long)s->sample_bytes);
  else snprintf(sample, sizeof sample, "%s%llu", s->sample_fixed ? "every:" : "1/", (unsigned long long)s->sample_every);
  char extra[64] = "";
  if (s->mode == EPH_MODE_BRUTE) snprintf(extra, sizeof extra, ",granule=%llu", (unsigned long long)s->granule);
  if (s->mode == EPH_MODE_MERLIN && s->trace) snprintf(extra, sizeof extra, ",trace=on");
  if (s->threads) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",threads=%u", s->threads);
  if (s->stacks) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",stacks=%u", s->stacks);
  snprintf(buf, len, "mode=%s,sample=%s,pretenure=%s,compress=%s,seed=%llu%s%s%s", mode_name(s->mode), sample,
           s->pretenure ? "on" : "off", s->compress ? "on" : "off", (unsigned long long)s->seed, extra,
           s->classes[0] ? ",classes=" : "", s->classes);
}
