/*
 * render_bench_progress.c — the harness's progress as it goes (sweeps,
 * calibration), and the one-line answers of `bench minheap` and `bench plan`.
 */
#include <math.h>
#include <stdio.h>

#include "render_bench.h"

void eph_render_bench_progress(const eph_bench_progress *p, void *ctx) {
  const eph_render_progress *rp = ctx;
  switch (p->kind) {
  case EPH_BENCH_PROGRESS_MINHEAP:
    fprintf(rp->out, "minimum heap of %s%s%s: %.2f MiB%s\n", p->target, p->gc[0] ? " with " : "", p->gc,
            (double)p->minheap_bytes / 1048576.0, p->cached ? " (cached)" : "");
    break;
  case EPH_BENCH_PROGRESS_STEP: {
    if (!rp->live) return;
    char eta[32] = "?";
    if (p->eta_s >= 0) snprintf(eta, sizeof eta, "%dm%02ds", (int)(p->eta_s / 60), (int)fmod(p->eta_s, 60));
    fprintf(rp->out, "\r\033[K[%zu/%zu] %s %s invocation %zu  ETA %s", p->done + 1, p->total, p->target, p->config,
            p->invocation + 1, eta);
    fflush(rp->out);
    break;
  }
  case EPH_BENCH_PROGRESS_FINISHED:
    if (rp->live) fprintf(rp->out, "\r\033[K");
    break;
  }
}

void eph_render_bench_minheap(FILE *out, const eph_bench_target *t, uint64_t bytes, bool cached) {
  fprintf(out, "%s minheap_bytes=%llu (%.2f MiB)%s\n", t->spec, (unsigned long long)bytes, (double)bytes / 1048576.0,
          cached ? " cached" : "");
}

void eph_render_bench_plan(FILE *out, long jobs, const char *jobs_path, const char *dir) {
  fprintf(out, "%ld jobs in %s, each writing its result to %s/ ('parallel < %s', then 'ephemera bench merge %s')\n", jobs,
          jobs_path, dir, jobs_path, dir);
}
