/*
 * env_stats.c — EPHEMERA_STATS=PATH: each heap, when freed, appends one
 * line of its statistics to PATH.  This is how a harness sees the GC time
 * of a program it only runs (`ephemera bench` and `ephemera tune --cmd`
 * set it for cmd: targets), as EPHEMERA_GC is how it sets the parameters.
 * One line per heap, appended with O_APPEND (whole lines even when several
 * processes of a pipeline write to the same file); a heap that is never
 * freed (a program that exits without eph_heap_free) writes nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heap_internal.h"

void ephh_append_env_stats(eph_heap *h) {
  const char *path = getenv("EPHEMERA_STATS");
  if (!path || !path[0]) return;
  eph_heap_stats s;
  eph_heap_stats_get(h, &s);
  char line[768];
  int n = snprintf(line, sizeof line,
                   "ephemera-stats pid=%ld wall_s=%.6f cpu_s=%.6f gc_wall_s=%.6f gc_cpu_s=%.6f scavenges=%llu "
                   "full_gcs=%llu peak_committed=%llu peak_used=%llu bytes_allocated=%llu objects=%llu "
                   "bytes_copied=%llu bytes_promoted=%llu max_pause_s=%.6f scavenge_s=%.6f full_s=%.6f finalize_s=%.6f\n",
                   (long)getpid(), (double)s.wall_ns / 1e9, (double)s.cpu_ns / 1e9, (double)s.gc_wall_ns / 1e9,
                   (double)s.gc_cpu_ns / 1e9, (unsigned long long)s.scavenges, (unsigned long long)s.full_gcs,
                   (unsigned long long)s.peak_committed, (unsigned long long)s.peak_used,
                   (unsigned long long)s.bytes_allocated, (unsigned long long)s.objects_allocated,
                   (unsigned long long)s.bytes_copied, (unsigned long long)s.bytes_promoted,
                   (double)s.max_pause_ns / 1e9, (double)s.scavenge_ns / 1e9, (double)s.full_ns / 1e9,
                   (double)s.finalize_ns / 1e9);
  if (n <= 0 || (size_t)n >= sizeof line) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return; /* the statistics are the harness's; the program goes on */
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  close(fd);
}
