/*
 * jvm_stats.c — reads the agent's stats file and the suite's iterations
 * file (formats in jvm.h): "TAG key=value ..." lines, other lines ignored
 * (a JVM's own messages never go there, but a file is a file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/jvm/jvm.h"

/* The integer after " key=" in line; false when missing or not a number. */
static bool field(const char *line, const char *key, int64_t *v) {
  size_t k = strlen(key);
  for (const char *p = strstr(line, key); p; p = strstr(p + 1, key))
    if (p[-1] == ' ' && p[k] == '=') {
      char *end;
      errno = 0;
      long long x = strtoll(p + k + 1, &end, 10);
      if (errno || end == p + k + 1 || (*end && *end != ' ' && *end != '\n')) return false;
      *v = x;
      return true;
    }
  return false;
}

static bool word(const char *line, const char *key, char *out, size_t len) {
  size_t k = strlen(key);
  for (const char *p = strstr(line, key); p; p = strstr(p + 1, key))
    if (p[-1] == ' ' && p[k] == '=') {
      size_t n = strcspn(p + k + 1, " \n");
      if (!n || n >= len) return false;
      memcpy(out, p + k + 1, n);
      out[n] = 0;
      return true;
    }
  return false;
}

static bool tagged(const char *line, const char *tag) {
  size_t n = strlen(tag);
  return !strncmp(line, tag, n) && line[n] == ' ';
}

int eph_jvm_stats_read(const char *path, eph_jvm_stats *s, eph_error *err) {
  memset(s, 0, sizeof *s);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : (eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, strerror(errno)), -1);
  char line[1024];
  size_t cap = 0, lineno = 0;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    if (tagged(line, EPH_JVM_PAUSE_TAG)) {
      eph_jvm_pause p;
      if (!field(line, "start_ns", &p.start_ns) || !field(line, "end_ns", &p.end_ns) ||
          !field(line, "cpu_start_ns", &p.cpu_start_ns) || !field(line, "cpu_end_ns", &p.cpu_end_ns) ||
          p.end_ns < p.start_ns || p.cpu_end_ns < p.cpu_start_ns) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s: line %zu: a malformed pause", path, lineno);
        rc = -1;
        break;
      }
      if (s->npauses == cap) {
        cap = cap ? 2 * cap : 256;
        eph_jvm_pause *np = realloc(s->pauses, cap * sizeof *np);
        if (!np) {
          eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", path);
          rc = -1;
          break;
        }
        s->pauses = np;
      }
      s->pauses[s->npauses++] = p;
    } else if (tagged(line, EPH_JVM_COLLECTOR_TAG)) {
      char name[64];
      int64_t count, time_ms;
      if (!word(line, "name", name, sizeof name) || !field(line, "count", &count) || !field(line, "time_ms", &time_ms)) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s: line %zu: a malformed collector line", path, lineno);
        rc = -1;
        break;
      }
      size_t i = 0;
      while (i < s->ncollectors && strcmp(s->collectors[i].name, name)) i++;
      if (i == s->ncollectors && i < EPH_JVM_MAX_COLLECTORS) {
        snprintf(s->collectors[i].name, sizeof s->collectors[i].name, "%s", name);
        s->ncollectors++;
      }
      if (i < s->ncollectors) s->collectors[i].count += count, s->collectors[i].time_ms += time_ms;
    } else if (tagged(line, EPH_JVM_END_TAG)) {
      int64_t lost = 0;
      field(line, "lost", &lost);
      s->jvms++;
      s->lost |= lost != 0;
    }
  }
  fclose(f);
  if (rc) eph_jvm_stats_free(s);
  return rc;
}

void eph_jvm_stats_free(eph_jvm_stats *s) {
  free(s->pauses);
  memset(s, 0, sizeof *s);
}

void eph_jvm_pauses_in(const eph_jvm_stats *s, int64_t t0, int64_t t1, double *wall_s, double *cpu_s, int64_t *count) {
  double w = 0, c = 0;
  int64_t n = 0;
  for (size_t i = 0; i < s->npauses; i++) {
    const eph_jvm_pause *p = &s->pauses[i];
    int64_t a = p->start_ns > t0 ? p->start_ns : t0, b = p->end_ns < t1 ? p->end_ns : t1;
    if (b < a || (b == a && p->end_ns > p->start_ns)) continue;
    double len = (double)(p->end_ns - p->start_ns), inside = (double)(b - a);
    double share = len > 0 ? inside / len : 1;
    w += inside / 1e9;
    c += share * (double)(p->cpu_end_ns - p->cpu_start_ns) / 1e9;
    n++;
  }
  *wall_s = w, *cpu_s = c, *count = n;
}

int eph_jvm_iterations_read(const char *path, eph_jvm_iteration **out, size_t *nout, eph_error *err) {
  *out = NULL, *nout = 0;
  FILE *f = fopen(path, "r");
  if (!f) return eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, strerror(errno)), -1;
  eph_jvm_iteration *it = NULL;
  size_t n = 0, cap = 0, lineno = 0;
  char line[1024];
  int rc = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (tagged(line, EPH_JVM_ITER_TAG)) {
      eph_jvm_iteration x = {0};
      int64_t idx, warm;
      char check[64];
      if (!field(line, "index", &idx) || !field(line, "warmup", &warm) || !field(line, "start_ns", &x.start_ns) ||
          !field(line, "end_ns", &x.end_ns) || !field(line, "cpu_start_ns", &x.cpu_start_ns) ||
          !field(line, "cpu_end_ns", &x.cpu_end_ns) || !word(line, "check", check, sizeof check) || idx < 0 ||
          x.end_ns < x.start_ns || x.cpu_end_ns < x.cpu_start_ns) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s: line %zu: a malformed iteration", path, lineno);
        rc = -1;
        break;
      }
      if (strcmp(check, "ok")) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s: line %zu: iteration %lld: check=%s", path, lineno, (long long)idx, check);
        rc = -1;
        break;
      }
      x.index = (size_t)idx;
      x.warmup = warm != 0;
      if (n == cap) {
        cap = cap ? 2 * cap : 16;
        eph_jvm_iteration *ni = realloc(it, cap * sizeof *ni);
        if (!ni) {
          eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", path);
          rc = -1;
          break;
        }
        it = ni;
      }
      it[n++] = x;
    } else if (tagged(line, EPH_JVM_EVENT_TAG)) {
      int64_t idx;
      eph_jvm_event e;
      if (!field(line, "iteration", &idx) || !field(line, "start_ns", &e.start_ns) || !field(line, "end_ns", &e.end_ns) ||
          e.end_ns < e.start_ns || !n || it[n - 1].index != (size_t)idx) {
        eph_error_fill(err, EPH_ERR_INVALID, "%s: line %zu: a malformed event (or one before its iteration)", path, lineno);
        rc = -1;
        break;
      }
      eph_jvm_iteration *last = &it[n - 1];
      size_t ne_n = last->nevents; /* room for 64, then doubled at each power of two from there */
      if (ne_n == 0 || (ne_n >= 64 && (ne_n & (ne_n - 1)) == 0)) {
        size_t c = last->nevents ? 2 * last->nevents : 64;
        eph_jvm_event *ne = realloc(last->events, c * sizeof *ne);
        if (!ne) {
          eph_error_fill(err, EPH_ERR_NOMEM, "%s: out of memory", path);
          rc = -1;
          break;
        }
        last->events = ne;
      }
      last->events[last->nevents++] = e;
    }
  }
  fclose(f);
  if (rc) {
    eph_jvm_iterations_free(it, n);
    return -1;
  }
  *out = it, *nout = n;
  return 0;
}

void eph_jvm_iterations_free(eph_jvm_iteration *it, size_t n) {
  for (size_t i = 0; i < n; i++) free(it[i].events);
  free(it);
}
