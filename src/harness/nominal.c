/*
 * nominal.c — DaCapo Chopin's nominal statistics for the workload suite:
 * a sweep of every workload at 2x and 6x its minimum heap, distilled into
 * one row per workload (`ephemera bench nominal`), written as a JSON file
 * (read back by nominal_file.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "workloads/workload.h"

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
