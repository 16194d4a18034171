/*
 * nominal_file.c — a nominal statistics file (what nominal.c writes) read
 * back for `ephemera workloads --nominal FILE` to show.  Apart from
 * nominal.c so that a reader of the file links no sweep.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

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
