/*
 * render_run.c — the workload table (`ephemera workloads`) and a run's
 * results (`ephemera run`): self-check, time, GC, memory, latency, the
 * profile, and the one key=value line for scripts.
 */
#include <stdio.h>

#include "render.h"

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

void eph_render_workloads(FILE *out, bool verbose) {
  fprintf(out, "%-12s %-10s %10s %10s %10s  %s\n", "workload", "unit", "small", "default", "large", "description");
  for (size_t i = 0; i < wl_count; i++) {
    const wl_workload *wl = wl_all[i];
    char large[32] = "-";
    if (wl->sizes.large) snprintf(large, sizeof large, "%llu", (unsigned long long)wl->sizes.large);
    fprintf(out, "%-12s %-10s %10llu %10llu %10s  %s\n", wl->name, wl->unit, (unsigned long long)wl->sizes.small,
            (unsigned long long)wl->sizes.normal, large, wl->description);
    if (verbose) {
      fprintf(out, "%12s classes:", "");
      for (size_t k = 0; k < wl->nclasses; k++) fprintf(out, " %s", wl->classes[k].name);
      fprintf(out, "\n");
      if (wl->short_lived_class) fprintf(out, "%12s short-lived: %s\n", "", wl->short_lived_class);
      if (wl->options_help) fprintf(out, "%12s options: %s\n", "", wl->options_help);
    }
  }
}

void eph_render_run(FILE *out, const wl_workload *wl, const wl_result *res, const char *retain,
                    const char *profile_path, const eph_profile_stats *ps) {
  const eph_heap_stats *s = &res->stats;
  fprintf(out, "%s (%llu %s): self-check %s: %s\n", wl->name, (unsigned long long)res->size, wl->unit,
          res->check_ok ? "ok" : "FAILED", res->check_message);
  fprintf(
      out,
      "  time       %.3f s wall, %.3f s CPU; GC %.3f s (%.1f%%): %llu scavenges, %llu full GCs, max pause %.2f ms\n",
      res->wall_s, res->cpu_s, (double)s->gc_wall_ns / 1e9,
      res->wall_s > 0 ? 100.0 * (double)s->gc_wall_ns / 1e9 / res->wall_s : 0.0, (unsigned long long)s->scavenges,
      (unsigned long long)s->full_gcs, (double)s->max_pause_ns / 1e6);
  fprintf(out, "  memory     %.1f MiB allocated, peak heap %.1f MiB committed (%.1f MiB in objects)\n",
          mib(s->bytes_allocated), mib(s->peak_committed), mib(s->peak_used));
  if (retain) fprintf(out, "  retained   %llu objects (%s)\n", (unsigned long long)res->retained, retain);
  if (res->nevents)
    fprintf(out, "  latency    %zu events: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", res->nevents, res->event_p50_ms,
            res->event_p99_ms, res->event_max_ms);
  if (profile_path) {
    fprintf(out, "  profile    %s: %llu records (%llu deaths, %llu censored), profiler memory peak %.1f MiB\n",
            profile_path, (unsigned long long)ps->samples, (unsigned long long)ps->deaths,
            (unsigned long long)ps->censored, mib(ps->peak_memory_bytes));
    fprintf(out,
            "  stop       %.3f s wall, %.3f s CPU after the run: the last full GC, the deaths it finds, the censored "
            "records\n",
            res->after_wall_s, res->after_cpu_s);
  }
}

void eph_render_run_kv(FILE *out, const wl_workload *wl, const wl_result *res, const eph_profile_stats *ps) {
  const eph_heap_stats *s = &res->stats;
  fprintf(out,
          "kv workload=%s size=%llu check=%s wall_s=%.6f cpu_s=%.6f gc_s=%.6f scavenges=%llu full_gcs=%llu "
          "allocated=%llu objects=%llu peak_committed=%llu peak_used=%llu max_pause_ms=%.3f events=%zu "
          "p50_ms=%.3f p99_ms=%.3f samples=%llu censored=%llu profiler_peak=%llu own_bytes=%llu stop_s=%.6f "
          "stop_cpu_s=%.6f\n",
          wl->name, (unsigned long long)res->size, res->check_ok ? "ok" : "failed", res->wall_s, res->cpu_s,
          (double)s->gc_wall_ns / 1e9, (unsigned long long)s->scavenges, (unsigned long long)s->full_gcs,
          (unsigned long long)s->bytes_allocated, (unsigned long long)s->objects_allocated,
          (unsigned long long)s->peak_committed, (unsigned long long)s->peak_used, (double)s->max_pause_ns / 1e6,
          res->nevents, res->event_p50_ms, res->event_p99_ms, (unsigned long long)ps->samples,
          (unsigned long long)ps->censored, (unsigned long long)ps->peak_memory_bytes,
          (unsigned long long)ps->own_bytes, res->after_wall_s, res->after_cpu_s);
}
