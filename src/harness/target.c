/*
 * target.c — what `ephemera bench` runs: "dataframe:default", "lua:x.lua ARGS",
 * "cmd:prog args", "jvm:h2:small", "jcmd:java -jar x.jar"; and heap factor lists.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ephemera/bench.h"
#include "runtime/jvm/jvm.h"
#include "workloads/workload.h"

static const char *skip_space(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  return s;
}

bool eph_bench_kind_is_java(eph_bench_kind k) { return k == EPH_BENCH_JVM || k == EPH_BENCH_JCMD; }

/* The Java suite's workloads (workloads/jvm/README.md). */
static const char *const java_suite[] = {"fop", "h2", "jython", "luindex", "lusearch", "xalan", "javac", NULL};

static int parse_java(const char *text, eph_bench_target *t, eph_error *err) {
  if (!strncmp(text, "jcmd:", 5)) {
    t->kind = EPH_BENCH_JCMD;
    const char *c = skip_space(text + 5);
    if (!*c) {
      eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': no command after 'jcmd:'", text);
      return -1;
    }
    snprintf(t->name, sizeof t->name, "%s", c);
    return 0;
  }
  t->kind = EPH_BENCH_JVM;
  const char *s = text + 4, *colon = strchr(s, ':');
  size_t n = colon ? (size_t)(colon - s) : strlen(s);
  snprintf(t->size, sizeof t->size, "%s", colon ? colon + 1 : "default");
  int i = 0;
  while (java_suite[i] && (strlen(java_suite[i]) != n || strncmp(java_suite[i], s, n))) i++;
  if (!java_suite[i]) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "bad target '%s': the Java suite has fop, h2, jython, luindex, lusearch, xalan, javac "
                   "(jcmd:'java ...' runs any other)", text);
    return -1;
  }
  snprintf(t->name, sizeof t->name, "%s", java_suite[i]);
  if (strcmp(t->size, "small") && strcmp(t->size, "default")) {
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%s': the Java suite's sizes are small and default", text);
    return -1;
  }
  return 0;
}

int eph_bench_target_parse(const char *text, eph_bench_target *t, eph_error *err) {
  memset(t, 0, sizeof *t);
  if (strlen(text) >= sizeof t->spec) {
    eph_error_fill(err, EPH_ERR_INVALID, "bad target '%.40s...': too long", text);
    return -1;
  }
  snprintf(t->spec, sizeof t->spec, "%s", text);
  if (!strncmp(text, "jvm:", 4) || !strncmp(text, "jcmd:", 5)) return parse_java(text, t, err);
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
    eph_error_fill(err, EPH_ERR_INVALID,
                   "bad target '%s': expected WORKLOAD[:SIZE], lua:SCRIPT, cmd:COMMAND, jvm:NAME[:SIZE] or jcmd:COMMAND", text);
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

int eph_bench_collectors_parse(const char *text, const char **names, size_t *n, bool *all, eph_error *err) {
  *n = 0;
  *all = !strcmp(text, "all");
  if (*all) {
    for (int i = 0; i < EPH_JVM_NCOLLECTORS; i++) names[(*n)++] = eph_jvm_collectors[i];
    return 0;
  }
  for (const char *s = text; *s;) {
    size_t len = strcspn(s, ",");
    int i = 0;
    while (i < EPH_JVM_NCOLLECTORS && (strlen(eph_jvm_collectors[i]) != len || strncmp(eph_jvm_collectors[i], s, len))) i++;
    if (i == EPH_JVM_NCOLLECTORS) {
      eph_error_fill(err, EPH_ERR_INVALID, "unknown collector '%.*s' (serial, parallel, g1, shenandoah, zgc, or all)",
                     (int)(len < 40 ? len : 40), s);
      return -1;
    }
    for (size_t k = 0; k < *n; k++)
      if (names[k] == eph_jvm_collectors[i]) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s named twice", eph_jvm_collectors[i]);
        return -1;
      }
    names[(*n)++] = eph_jvm_collectors[i];
    s += len;
    if (*s) s++;
  }
  if (!*n) {
    eph_error_fill(err, EPH_ERR_INVALID, "no collector named");
    return -1;
  }
  return 0;
}

int eph_bench_collectors_check(const eph_bench_options *o, const char **names, size_t *n, bool all, char *left_out,
                               size_t len, eph_error *err) {
  left_out[0] = 0;
  size_t java = 0;
  for (size_t t = 0; t < o->ntargets; t++) java += eph_bench_kind_is_java(o->targets[t].kind);
  if (*n && !java) {
    eph_error_fill(err, EPH_ERR_INVALID, "--collector is for Java targets (jvm:, jcmd:); Ephemera's heap takes --gc");
    return -1;
  }
  if (o->ngcs && java == o->ntargets) {
    eph_error_fill(err, EPH_ERR_INVALID, "--gc is for Ephemera's heap; Java targets take --collector");
    return -1;
  }
  if (!java) return 0;
  size_t kept = 0, k = 0;
  for (size_t i = 0; i < *n; i++) {
    if (eph_jvm_collector_available(eph_jvm_java(), names[i])) {
      names[kept++] = names[i];
      continue;
    }
    if (!all) {
      eph_error_fill(err, EPH_ERR_INVALID, "%s: this JDK (%s) has no %s collector (%s fails)", names[i], eph_jvm_java(),
                     names[i], eph_jvm_collector_flag(names[i]));
      return -1;
    }
    k += (size_t)snprintf(left_out + k, k < len ? len - k : 0, "%s%s", k ? ", " : "", names[i]);
  }
  *n = kept;
  if (all && !kept) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s starts with none of OpenJDK's collectors (is Java installed?)", eph_jvm_java());
    return -1;
  }
  return 0;
}
