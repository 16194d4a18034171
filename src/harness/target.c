/*
 * target.c — what `ephemera bench` runs: "dataframe:default", "lua:x.lua ARGS",
 * "cmd:prog args"; and heap factor lists.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ephemera/bench.h"
#include "workloads/workload.h"

static const char *skip_space(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  return s;
}

int eph_bench_target_parse(const char *text, eph_bench_target *t, eph_error *err) {
  memset(t, 0, sizeof *t);
  if (strlen(text) >= sizeof t->spec) {
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%.40s...': too long", text);
    return -1;
  }
  snprintf(t->spec, sizeof t->spec, "%s", text);
  if (!strncmp(text, "cmd:", 4)) {
    t->kind = EPH_BENCH_CMD;
    const char *c = skip_space(text + 4);
    if (!*c) {
      eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': no command after 'cmd:'", text);
      return -1;
    }
    snprintf(t->name, sizeof t->name, "%s", c);
    return 0;
  }
  if (!strncmp(text, "lua:", 4)) {
    t->kind = EPH_BENCH_LUA;
    const char *s = skip_space(text + 4);
    size_t n = strcspn(s, " \t");
    if (!n || n >= sizeof t->name) {
      eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': expected lua:SCRIPT [ARGS]", text);
      return -1;
    }
    memcpy(t->name, s, n);
    snprintf(t->args, sizeof t->args, "%s", skip_space(s + n));
    if (access(t->name, R_OK) != 0) {
      eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': cannot read %s: %s", text, t->name, strerror(errno));
      return -1;
    }
#ifndef EPH_BENCH_HAVE_LUA
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': this ephemera was built without Lua 5.4", text);
    return -1;
#endif
    return 0;
  }
  t->kind = EPH_BENCH_WORKLOAD;
  const char *colon = strchr(text, ':');
  size_t n = colon ? (size_t)(colon - text) : strlen(text);
  if (!n || n >= 64) {
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': expected WORKLOAD[:SIZE], lua:SCRIPT or cmd:COMMAND", text);
    return -1;
  }
  memcpy(t->name, text, n);
  snprintf(t->size, sizeof t->size, "%s", colon ? colon + 1 : "default");
  const wl_workload *wl = wl_find(t->name);
  if (!wl) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "bad target '%s': no workload '%s' (see 'ephemera workloads'; lua:SCRIPT and cmd:COMMAND run others)",
                   text, t->name);
    return -1;
  }
  uint64_t size;
  char why[256];
  if (wl_parse_size(wl, t->size, &size, why, sizeof why)) {
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': %s", text, why);
    return -1;
  }
  return 0;
}

int eph_bench_factors_parse(const char *text, double *out, size_t max, eph_error *err) {
  size_t n = 0;
  const char *s = text;
  for (;;) {
    char *end;
    errno = 0;
    double f = strtod(s, &end);
    if (end == s || errno || !(f > 0) || f > 1e6 || (*end && *end != ',')) {
      size_t len = strcspn(s, ",");
      eph_error_fill(err, EPH_ERR_INVALID, "--heap: bad factor '%.*s' in '%s' (positive numbers such as 1.5,2,3)",
                     (int)(len > 40 ? 40 : len), s, text);
      return -1;
    }
    if (n == max) {
      eph_error_fill(err, EPH_ERR_INVALID, "--heap: more than %zu factors", max);
      return -1;
    }
    out[n++] = f;
    if (!*end) break;
    s = end + 1;
  }
  return (int)n;
}
