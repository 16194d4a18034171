/*
 * render_json.c — the results file: every run, then the summaries.
 */
#include <errno.h>
#include <string.h>

#include "bench_internal.h"

static json_t *stat_json(const eph_bench_stat *s) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s->n, "mean", s->mean, "median", s->median,
                   "sd", s->sd, "ci95", s->ci, "min", s->min, "max", s->max);
}

static json_t *latency_json(const eph_bench_latency *l) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "events", (json_int_t)l->n, "p50_ms", l->ms[0], "p90_ms",
                   l->ms[1], "p99_ms", l->ms[2], "p99.9_ms", l->ms[3], "p99.99_ms", l->ms[4], "max_ms", l->ms[5]);
}

int eph_bench_render_json(const eph_bench_results *r, const eph_bench_report *rep, FILE *out, eph_error *err) {
  json_t *runs = json_array(), *rows = json_array();
  for (size_t i = 0; i < r->nruns; i++) json_array_append_new(runs, eph_bench_run_to_json(&r->runs[i]));
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
  json_t *j = json_pack("{s:i, s:s, s:f, s:I, s:o, s:o}", "ephemera_bench", 1, "version", EPH_BENCH_VERSION,
                        "ci_target", r->ci_target, "wide_ci", (json_int_t)rep->wide_ci, "runs", runs, "summary", rows);
  int rc = j ? json_dumpf(j, out, JSON_INDENT(1)) : -1;
  json_decref(j);
  if (!rc) fputc('\n', out);
  if (rc || ferror(out)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write the results: %s", rc ? "JSON encoding failed" : strerror(errno));
    return -1;
  }
  return 0;
}
