/*
 * latency.c — simple and metered latency (DaCapo Chopin, section 4.4).
 */
#include "ephemera/bench.h"

const double eph_bench_pcts[EPH_BENCH_NPCT] = {0.5, 0.9, 0.99, 0.999, 0.9999, 1.0};

void eph_bench_metered(const eph_bench_event *ev, size_t n, uint64_t window_ns, double *out) {
  /* [j, k]: the events whose start lies within half a window of event i's;
   * both ends only move forward as i does (starts are in order). */
  size_t j = 0, k = 0;
  uint64_t half = window_ns == UINT64_MAX ? UINT64_MAX : window_ns / 2;
  for (size_t i = 0; i < n; i++) {
    uint64_t s = ev[i].start_ns;
    uint64_t lo = s > half ? s - half : 0;
    uint64_t hi = UINT64_MAX - s > half ? s + half : UINT64_MAX;
    while (ev[j].start_ns < lo) j++;
    if (k < i) k = i;
    while (k + 1 < n && ev[k + 1].start_ns <= hi) k++;
    double synthetic = (double)s;
    if (k > j)
      synthetic = (double)ev[j].start_ns +
                  (double)(ev[k].start_ns - ev[j].start_ns) * (double)(i - j) / (double)(k - j);
    double start = synthetic < (double)s ? synthetic : (double)s;
    out[i] = (double)ev[i].end_ns - start;
  }
}
