/*
 * cmd_stats.c — the GC figures of a cmd: target, from the lines its heaps
 * append to EPHEMERA_STATS (src/heap/env_stats.c).  A program may create
 * several heaps (or run several processes that do): times, counts and
 * bytes are summed, peaks are the largest.  No line: the command does not
 * embed the heap or never freed it, and its GC figures stay unknown (-1).
 */
#include <stdio.h>
#include <string.h>

#include "bench_internal.h"

static double field(const char *line, const char *key) {
  size_t k = strlen(key);
  for (const char *p = strstr(line, key); p; p = strstr(p + 1, key))
    if ((p == line || p[-1] == ' ') && p[k] == '=') {
      double v;
      if (sscanf(p + k + 1, "%lf", &v) == 1) return v;
    }
  return -1;
}

bool eph_bench_read_cmd_stats(const char *path, eph_bench_iter *it) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[1024];
  int heaps = 0;
  double gc = 0, gc_cpu = 0, scav = 0, full = 0, peak_live = 0, alloc = 0, objects = 0, copied = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "ephemera-stats ", 15)) continue;
    double v[8] = {field(line, "gc_wall_s"),       field(line, "gc_cpu_s"), field(line, "scavenges"),
                   field(line, "full_gcs"),        field(line, "peak_used"), field(line, "bytes_allocated"),
                   field(line, "objects"),         field(line, "bytes_copied") + field(line, "bytes_promoted")};
    bool ok = true;
    for (int i = 0; i < 7; i++) ok = ok && v[i] >= 0;
    if (!ok) continue;
    heaps++;
    gc += v[0], gc_cpu += v[1], scav += v[2], full += v[3];
    if (v[4] > peak_live) peak_live = v[4];
    alloc += v[5], objects += v[6], copied += v[7];
  }
  fclose(f);
  if (!heaps) return false;
  it->gc_s = gc;
  it->gc_cpu_s = gc_cpu;
  it->mutator_s = it->wall_s - gc;
  it->scavenges = (int64_t)scav;
  it->full_gcs = (int64_t)full;
  it->gc_count = it->scavenges + it->full_gcs;
  it->peak_live_bytes = (int64_t)peak_live;
  it->allocated_bytes = (int64_t)alloc;
  it->objects = (int64_t)objects;
  it->bytes_copied = (int64_t)copied;
  return true;
}
