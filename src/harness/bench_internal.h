/*
 * bench_internal.h — shared between the files of src/harness.
 */
#ifndef EPH_BENCH_INTERNAL_H
#define EPH_BENCH_INTERNAL_H

#include <jansson.h>

#include "ephemera/bench.h"

#define EPH_BENCH_VERSION "0.1.0"

/* Fills it's GC figures (gc_s, counts, bytes; not wall, task or peak) from
 * the EPHEMERA_STATS lines at path (cmd_stats.c); false when there are none. */
bool eph_bench_read_cmd_stats(const char *path, eph_bench_iter *it);

/* Runs a Lua script's iterations in this process (run_lua.c). */
int eph_bench_run_lua(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err);

/* Runs a Java target's invocation (run_jvm.c): jvm: in one JVM, jcmd: a
 * command per iteration; the collector is c->gc. */
int eph_bench_run_jvm(const eph_bench_target *t, const eph_bench_config *c, unsigned warmup, unsigned iterations,
                      eph_bench_run *run, eph_error *err);

/* The command line of `ephemera bench run-one` for one invocation, writing
 * its result to out; the strings point into t, c, out and bufs. */
#define EPH_BENCH_ARGV_MAX 24
void eph_bench_child_argv(const char *exe, size_t ti, size_t ci, size_t inv, const eph_bench_target *t,
                          const eph_bench_config *c, unsigned warmup, unsigned iterations, const char *out,
                          const char *argv[EPH_BENCH_ARGV_MAX], char bufs[5][64]);

/* The last non-empty line of a file (a failed child's stderr) into buf,
 * skipping lines that start with skip_prefix (NULL: none); "" if none. */
void eph_bench_last_line(const char *path, const char *skip_prefix, char *buf, size_t len);

/* Seconds on a clock. */
double eph_bench_clock(int clock_id);

#endif
