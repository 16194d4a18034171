/*
 * nominal.c — DaCapo Chopin's nominal statistics for the workload suite:
 * a sweep of every workload at 2x and 6x its minimum heap, distilled into
 * one row per workload (`ephemera bench nominal`), written as a JSON file
 * and read back for `ephemera workloads --nominal FILE` to show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "workload.h"

int eph_bench_nominal(const eph_bench_options *base, const char *size, FILE *out, eph_error *err) {
  eph_bench_options o = *base;
  eph_bench_target *targets = calloc(wl_count, sizeof *targets);
  static const double factors[2] = {2, 6};
  if (!targets) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < wl_count; i++) {
    char spec[128];
    snprintf(spec, sizeof spec, "%s:%s", wl_all[i]->name, size);
    if (eph_bench_target_parse(spec, &targets[i], err)) {
      free(targets);
      return -1;
    }
  }
  o.targets = targets;
  o.ntargets = wl_count;
  o.factors = factors;
  o.nfactors = 2;
  o.ngcs = 0;
  eph_bench_results r = {0};
  eph_bench_report rep = {0};
  int rc = -1;
  if (eph_bench_sweep(&o, &r, err) || eph_bench_summarize(&r, &rep, err)) goto out;
  json_t *rows = json_array();
  for (size_t i = 0; i + 1 < rep.nrows; i += 2) {
    const eph_bench_summary *x2 = &rep.rows[i], *x6 = &rep.rows[i + 1];
    double wall = x2->wall.mean, alloc = x2->allocated.mean;
    double objects = 0, copied = 0, live = 0;
    size_t n = 0;
    for (size_t k = 0; k < r.nruns; k++) { /* objects, survivors and live bytes: from the 2x runs' timed iterations */
      const eph_bench_run *run = &r.runs[k];
      if (run->target_index != x2->target_index || run->config_index != x2->config_index || !run->ok) continue;
      for (size_t it = 0; it < run->niters; it++)
        if (!run->iters[it].warmup) {
          objects += (double)run->iters[it].objects;
          copied += (double)run->iters[it].bytes_copied;
          if ((double)run->iters[it].peak_live_bytes > live) live = (double)run->iters[it].peak_live_bytes;
          n++;
        }
    }
    json_t *row = json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "workload", x2->target.name,
                            "target", x2->target.spec, "minheap_bytes", (json_int_t)(x2->config.heap_bytes / 2),
                            "alloc_rate_mb_s", wall > 0 ? alloc / wall / 1e6 : 0, "mean_object_bytes",
                            n && objects > 0 ? alloc * (double)n / objects : 0, "gc_share_2x",
                            wall > 0 ? x2->gc.mean / wall : 0, "gc_count_2x", x2->gc_count.mean,
                            "scavenge_survival", alloc > 0 && n ? copied / (double)n / alloc : 0, "peak_live_bytes",
                            live, "heap_sensitivity", x6->wall.mean > 0 ? wall / x6->wall.mean : 0, "wall_2x_s", wall);
    if (!x2->invocations || !x6->invocations)
      json_object_set_new(row, "error", json_string(x2->first_error[0] ? x2->first_error : x6->first_error));
    if (x2->simple.n) {
      json_object_set_new(row, "latency_p50_ms", json_real(x2->simple.ms[0]));
      json_object_set_new(row, "latency_p99_ms", json_real(x2->simple.ms[2]));
      json_object_set_new(row, "metered_p99_100ms_ms", json_real(x2->metered_100ms.ms[2]));
    }
    json_array_append_new(rows, row);
  }
  json_t *j = json_pack("{s:i, s:s, s:s, s:I, s:o}", "ephemera_nominal", 1, "version", EPH_BENCH_VERSION, "size", size,
                        "invocations", (json_int_t)o.invocations, "workloads", rows);
  rc = json_dumpf(j, out, JSON_INDENT(1));
  json_decref(j);
  fputc('\n', out);
  if (rc || ferror(out)) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write the nominal statistics: %s", strerror(errno));
    rc = -1;
  }
out:
  eph_bench_report_free(&rep);
  eph_bench_results_free(&r);
  free(targets);
  return rc;
}

static double num(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : -1;
}

int eph_bench_nominal_load(const char *path, eph_bench_nominal_table *out, eph_error *err) {
  memset(out, 0, sizeof *out);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  json_t *rows = j ? json_object_get(j, "workloads") : NULL;
  if (!j || !json_object_get(j, "ephemera_nominal") || !json_is_array(rows)) {
    if (!j && je.line <= 0) eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, je.text);
    else eph_error_fill(err, EPH_ERR_INVALID, "%s: not a nominal statistics file (from 'ephemera bench nominal')%s%s",
                        path, j ? "" : ": ", j ? "" : je.text);
    json_decref(j);
    return -1;
  }
  json_t *size = json_object_get(j, "size");
  snprintf(out->size, sizeof out->size, "%s", json_is_string(size) ? json_string_value(size) : "?");
  out->invocations = (long long)num(j, "invocations");
  out->rows = calloc(json_array_size(rows) + 1, sizeof *out->rows);
  if (!out->rows) {
    json_decref(j);
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *r = json_array_get(rows, i);
    json_t *name = json_object_get(r, "workload"), *e = json_object_get(r, "error");
    eph_bench_nominal_row *row = &out->rows[out->nrows++];
    snprintf(row->workload, sizeof row->workload, "%s", json_is_string(name) ? json_string_value(name) : "?");
    if (json_is_string(e)) {
      snprintf(row->error, sizeof row->error, "%s", json_string_value(e));
      continue;
    }
    row->minheap_bytes = num(r, "minheap_bytes");
    row->alloc_rate_mb_s = num(r, "alloc_rate_mb_s");
    row->mean_object_bytes = num(r, "mean_object_bytes");
    row->gc_share_2x = num(r, "gc_share_2x");
    row->gc_count_2x = num(r, "gc_count_2x");
    row->scavenge_survival = num(r, "scavenge_survival");
    row->peak_live_bytes = num(r, "peak_live_bytes");
    row->heap_sensitivity = num(r, "heap_sensitivity");
    row->have_latency = json_object_get(r, "latency_p50_ms") != NULL;
    row->latency_p50_ms = num(r, "latency_p50_ms");
    row->latency_p99_ms = num(r, "latency_p99_ms");
  }
  json_decref(j);
  return 0;
}

void eph_bench_nominal_table_free(eph_bench_nominal_table *t) {
  if (!t) return;
  free(t->rows);
  t->rows = NULL;
  t->nrows = 0;
}
