/*
 * results_json.c — the harness's files (jansson): a run as JSON, what
 * `run-one` writes; the results file (every run, then the summaries), what
 * `-o results.json` and `--format json` write; both read back by `merge`
 * and `report`.  Missing quantities are written as -1.  The results file is
 * the harness's saved format, so its writer stays beside its reader here
 * rather than with the renderers (src/render/render_bench.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench_internal.h"

void eph_bench_run_free(eph_bench_run *run) {
  if (!run) return;
  for (size_t i = 0; i < run->niters; i++) free(run->iters[i].events);
  free(run->iters);
  run->iters = NULL;
  run->niters = 0;
}

void eph_bench_results_free(eph_bench_results *r) {
  for (size_t i = 0; i < r->nruns; i++) eph_bench_run_free(&r->runs[i]);
  free(r->runs);
  memset(r, 0, sizeof *r);
}

int eph_bench_results_add(eph_bench_results *r, eph_bench_run *run, eph_error *err) {
  if (r->nruns == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    eph_bench_run *n = realloc(r->runs, cap * sizeof *n);
    if (!n) {
      eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
      return -1;
    }
    r->runs = n;
    r->cap = cap;
  }
  r->runs[r->nruns++] = *run;
  run->iters = NULL;
  run->niters = 0;
  return 0;
}

/* Events as one string, "DS,D DS,D ...": each start as the difference from
 * the previous event's start (the first from 0) and the duration, in ns --
 * about 10 bytes an event where a JSON array of pairs would take 30 and a
 * parsed one hundreds (kvstore marks a million requests per iteration). */
static json_t *events_json(const eph_bench_iter *it) {
  size_t cap = it->nevents * 42 + 1, n = 0;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  buf[0] = 0;
  uint64_t prev = 0;
  for (size_t i = 0; i < it->nevents; i++) {
    const eph_bench_event *e = &it->events[i];
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld,%llu", i ? " " : "", (long long)(e->start_ns - prev),
                          (unsigned long long)(e->end_ns - e->start_ns));
    prev = e->start_ns;
  }
  json_t *j = json_stringn_nocheck(buf, n);
  free(buf);
  return j;
}

static json_t *iter_json(const eph_bench_iter *it) {
  return json_pack("{s:b, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o*}", "warmup",
                   it->warmup, "wall_s", it->wall_s, "task_s", it->task_s, "gc_s", it->gc_s, "gc_cpu_s", it->gc_cpu_s,
                   "mutator_s", it->mutator_s, "gc_count", (json_int_t)it->gc_count, "scavenges",
                   (json_int_t)it->scavenges, "full_gcs", (json_int_t)it->full_gcs, "peak_bytes",
                   (json_int_t)it->peak_bytes, "peak_live_bytes", (json_int_t)it->peak_live_bytes, "allocated_bytes",
                   (json_int_t)it->allocated_bytes, "objects", (json_int_t)it->objects, "bytes_copied",
                   (json_int_t)it->bytes_copied, "nevents", (json_int_t)it->nevents, "events",
                   it->nevents ? events_json(it) : NULL);
}

/* One run as a JSON object (new reference). */
static json_t *run_to_json(const eph_bench_run *run) {
  json_t *iters = json_array();
  for (size_t i = 0; i < run->niters; i++) json_array_append_new(iters, iter_json(&run->iters[i]));
  return json_pack("{s:i, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:f, s:I, s:b, s:s, s:o}", "ephemera_bench_run", 1,
                   "version", run->version, "target_index", (json_int_t)run->target_index, "config_index",
                   (json_int_t)run->config_index, "invocation", (json_int_t)run->invocation, "target",
                   run->target.spec, "gc", run->config.gc, "profile", run->config.profile, "factor",
                   run->config.factor, "heap_bytes",
                   (json_int_t)run->config.heap_bytes, "ok", run->ok, "error", run->error, "iterations", iters);
}

int eph_bench_run_write_json(const eph_bench_run *run, FILE *out, eph_error *err) {
  json_t *j = run_to_json(run);
  int rc = j ? json_dumpf(j, out, JSON_INDENT(1) | JSON_COMPACT) : -1;
  json_decref(j);
  if (rc == 0) fputc('\n', out);
  if (rc || ferror(out)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write the run: %s", rc ? "JSON encoding failed" : strerror(errno));
    return -1;
  }
  return 0;
}

static json_t *stat_json(const eph_bench_stat *s) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s->n, "mean", s->mean, "median", s->median,
                   "sd", s->sd, "ci95", s->ci, "min", s->min, "max", s->max);
}

static json_t *latency_json(const eph_bench_latency *l) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "events", (json_int_t)l->n, "p50_ms", l->ms[0], "p90_ms",
                   l->ms[1], "p99_ms", l->ms[2], "p99.9_ms", l->ms[3], "p99.99_ms", l->ms[4], "max_ms", l->ms[5]);
}

int eph_bench_results_write_json(const eph_bench_results *r, const eph_bench_report *rep, FILE *out, eph_error *err) {
  json_t *runs = json_array(), *rows = json_array();
  for (size_t i = 0; i < r->nruns; i++) json_array_append_new(runs, run_to_json(&r->runs[i]));
  for (size_t i = 0; i < rep->nrows; i++) {
    const eph_bench_summary *s = &rep->rows[i];
    json_t *row = json_pack(
        "{s:s, s:s, s:f, s:I, s:I, s:I, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:f, s:f, "
        "s:f, s:I, s:f}",
        "target", s->target.spec, "gc", s->config.gc, "factor", s->config.factor, "heap_bytes",
        (json_int_t)s->config.heap_bytes, "invocations", (json_int_t)s->invocations, "failed", (json_int_t)s->failed,
        "first_error", s->first_error, "have_gc", s->have_gc, "wall_s", stat_json(&s->wall), "task_s",
        stat_json(&s->task), "gc_s", stat_json(&s->gc), "gc_cpu_s", stat_json(&s->gc_cpu), "mutator_s",
        stat_json(&s->mutator), "gc_count", stat_json(&s->gc_count), "peak_bytes", stat_json(&s->peak),
        "allocated_bytes", stat_json(&s->allocated), "lbo_wall", s->lbo_wall, "lbo_wall_lo", s->lbo_wall_lo,
        "lbo_wall_hi", s->lbo_wall_hi, "lbo_task", s->lbo_task, "lbo_task_lo", s->lbo_task_lo, "lbo_task_hi",
        s->lbo_task_hi, "warmups", (json_int_t)s->warmups, "warmup_wall_s", s->warmup_wall);
    json_object_set_new(row, "profile", json_string(s->config.profile));
    if (s->simple.n) {
      json_object_set_new(row, "latency_simple", latency_json(&s->simple));
      json_object_set_new(row, "latency_metered_100ms", latency_json(&s->metered_100ms));
      json_object_set_new(row, "latency_metered_full", latency_json(&s->metered_full));
    }
    json_array_append_new(rows, row);
  }
  json_t *geo = json_array(); /* Figure 1's points */
  for (size_t i = 0; i < rep->ngeomean; i++) {
    const eph_bench_geomean *g = &rep->geomean[i];
    json_array_append_new(geo, json_pack("{s:s, s:s, s:f, s:I, s:b, s:f, s:f, s:f, s:f, s:f, s:f}", "gc", g->gc, "profile",
                                         g->profile, "factor", g->factor, "targets", (json_int_t)g->ntargets, "complete",
                                         g->complete, "lbo_wall", g->lbo_wall, "lbo_wall_lo", g->lbo_wall_lo,
                                         "lbo_wall_hi", g->lbo_wall_hi, "lbo_task", g->lbo_task, "lbo_task_lo",
                                         g->lbo_task_lo, "lbo_task_hi", g->lbo_task_hi));
  }
  json_t *j = json_pack("{s:i, s:s, s:f, s:I, s:o, s:o, s:o}", "ephemera_harness", 1, "version", EPH_BENCH_VERSION,
                        "ci_target", r->ci_target, "wide_ci", (json_int_t)rep->wide_ci, "runs", runs, "summary", rows,
                        "lbo_geomean", geo);
  int rc = j ? json_dumpf(j, out, JSON_INDENT(1)) : -1;
  json_decref(j);
  if (!rc) fputc('\n', out);
  if (rc || ferror(out)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write the results: %s", rc ? "JSON encoding failed" : strerror(errno));
    return -1;
  }
  return 0;
}

/* A target read back from a file: its kind from the prefix, not checked
 * (a merged script may live on another host). */
static void target_unchecked(const char *spec, eph_bench_target *t) {
  eph_error e;
  if (eph_bench_target_parse(spec, t, &e) == 0) return;
  memset(t, 0, sizeof *t);
  snprintf(t->spec, sizeof t->spec, "%s", spec);
  t->kind = !strncmp(spec, "lua:", 4)    ? EPH_BENCH_LUA
            : !strncmp(spec, "cmd:", 4)  ? EPH_BENCH_CMD
            : !strncmp(spec, "jvm:", 4)  ? EPH_BENCH_JVM
            : !strncmp(spec, "jcmd:", 5) ? EPH_BENCH_JCMD
                                         : EPH_BENCH_WORKLOAD;
  snprintf(t->name, sizeof t->name, "%s", spec);
}

static int64_t get_int(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static double get_num(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : -1;
}

static int run_from_json(json_t *j, eph_bench_run *run, const char *path, eph_error *err) {
  memset(run, 0, sizeof *run);
  const char *target = NULL, *gc = "", *profile = "", *version = "", *error = "";
  json_int_t ti = -1, ci = -1, inv = -1, heap = 0;
  double factor = 0;
  int ok = 0;
  json_t *iters = NULL;
  json_error_t je;
  if (json_unpack_ex(j, &je, 0, "{s:s, s:I, s:I, s:I, s?s, s?s, s?F, s?I, s:b, s?s, s?s, s:o}", "target", &target,
                     "target_index", &ti, "config_index", &ci, "invocation", &inv, "gc", &gc, "profile", &profile,
                     "factor", &factor,
                     "heap_bytes", &heap, "ok", &ok, "error", &error, "version", &version, "iterations",
                     &iters) != 0 ||
      !json_is_array(iters) || ti < 0 || ci < 0 || inv < 0 || factor < 0 || heap < 0) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s: not an ephemera bench run (%s)", path,
                   je.text[0] ? je.text : "negative index or factor");
    return -1;
  }
  target_unchecked(target, &run->target);
  run->target_index = (size_t)ti;
  run->config_index = (size_t)ci;
  run->invocation = (size_t)inv;
  snprintf(run->config.gc, sizeof run->config.gc, "%s", gc);
  snprintf(run->config.profile, sizeof run->config.profile, "%s", profile);
  run->config.factor = factor;
  run->config.heap_bytes = (uint64_t)heap;
  run->ok = ok;
  snprintf(run->error, sizeof run->error, "%s", error);
  snprintf(run->version, sizeof run->version, "%s", version);
  size_t n = json_array_size(iters);
  run->iters = calloc(n ? n : 1, sizeof *run->iters);
  if (!run->iters) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  run->niters = n;
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_array_get(iters, i);
    eph_bench_iter *it = &run->iters[i];
    json_t *ev = json_object_get(o, "events");
    if (!json_is_object(o) || !json_is_number(json_object_get(o, "wall_s"))) {
      eph_error_fill(err, EPH_ERR_INVALID, "%s: iteration %zu is not an object with wall_s", path, i);
      eph_bench_run_free(run);
      return -1;
    }
    it->warmup = json_is_true(json_object_get(o, "warmup"));
    it->wall_s = get_num(o, "wall_s");
    it->task_s = get_num(o, "task_s");
    it->gc_s = get_num(o, "gc_s");
    it->gc_cpu_s = get_num(o, "gc_cpu_s");
    it->mutator_s = get_num(o, "mutator_s");
    it->gc_count = get_int(o, "gc_count");
    it->scavenges = get_int(o, "scavenges");
    it->full_gcs = get_int(o, "full_gcs");
    it->peak_bytes = get_int(o, "peak_bytes");
    it->peak_live_bytes = get_int(o, "peak_live_bytes");
    it->allocated_bytes = get_int(o, "allocated_bytes");
    it->objects = get_int(o, "objects");
    it->bytes_copied = get_int(o, "bytes_copied");
    int64_t ne = get_int(o, "nevents");
    if (ne > 0 && (!json_is_string(ev) || ne > (int64_t)json_string_length(ev))) {
      eph_error_fill(err, EPH_ERR_INVALID, "%s: iteration %zu: %lld events but no event string to hold them", path, i,
                     (long long)ne);
      eph_bench_run_free(run);
      return -1;
    }
    if (ne > 0) {
      it->events = malloc((size_t)ne * sizeof *it->events);
      if (!it->events) {
        eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
        eph_bench_run_free(run);
        return -1;
      }
      const char *p = json_string_value(ev);
      uint64_t start = 0;
      for (int64_t e = 0; e < ne; e++) {
        char *end;
        errno = 0;
        long long ds = strtoll(p, &end, 10);
        bool good = end != p && *end == ',' && !errno;
        unsigned long long d = 0;
        if (good) {
          p = end + 1;
          d = strtoull(p, &end, 10);
          good = end != p && *p != '-' && !errno && (*end == ' ' || !*end) && (ds >= 0 || (uint64_t)-ds <= start);
        }
        if (good && !*end && e < ne - 1) {
          eph_error_fill(err, EPH_ERR_INVALID, "%s: iteration %zu: the event string holds %lld events, not %lld", path,
                         i, (long long)e + 1, (long long)ne);
          it->nevents = (size_t)e;
          eph_bench_run_free(run);
          return -1;
        }
        if (!good) {
          eph_error_fill(err, EPH_ERR_INVALID, "%s: iteration %zu: event %lld is not START_DELTA,DURATION", path, i,
                         (long long)e);
          it->nevents = (size_t)e;
          eph_bench_run_free(run);
          return -1;
        }
        start += (uint64_t)ds;
        it->events[e].start_ns = start;
        it->events[e].end_ns = start + d;
        p = end + (*end == ' ');
      }
      it->nevents = (size_t)ne;
    }
  }
  return 0;
}

int eph_bench_results_load(eph_bench_results *r, const char *path, eph_error *err) {
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j) {
    if (je.line <= 0) eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, je.text);
    else eph_error_fill(err, EPH_ERR_INVALID, "%s: line %d: %s", path, je.line, je.text);
    return -1;
  }
  int rc = 0;
  json_t *runs = json_object_get(j, "runs");
  if (json_is_object(j) && json_object_get(j, "ephemera_bench_run")) {
    eph_bench_run run;
    rc = run_from_json(j, &run, path, err);
    if (!rc && eph_bench_results_add(r, &run, err)) rc = -1, eph_bench_run_free(&run);
  } else if (json_is_object(j) && json_is_array(runs) && json_object_get(j, "ephemera_harness")) {
    for (size_t i = 0; i < json_array_size(runs) && !rc; i++) {
      eph_bench_run run;
      rc = run_from_json(json_array_get(runs, i), &run, path, err);
      if (!rc && eph_bench_results_add(r, &run, err)) rc = -1, eph_bench_run_free(&run);
    }
    double ci = get_num(j, "ci_target");
    if (ci > 0) r->ci_target = ci;
  } else {
    eph_error_fill(err, EPH_ERR_INVALID, "%s: not an ephemera bench run or results file", path);
    rc = -1;
  }
  json_decref(j);
  return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int eph_bench_results_load_dir(eph_bench_results *r, const char *dir, eph_error *err) {
  DIR *d = opendir(dir);
  if (!d) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", dir, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) {
        rc = -1;
        break;
      }
      names = nn;
    }
    if (!(names[n] = strdup(e->d_name))) {
      rc = -1;
      break;
    }
    n++;
  }
  closedir(d);
  if (rc) eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
  if (!rc && !n) {
    eph_error_fill(err, EPH_ERR_IO, "%s: no .json result files", dir);
    rc = -1;
  }
  if (n) qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n && !rc; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    rc = eph_bench_results_load(r, path, err);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}
