/*
 * bench_workload.h — one run of a workload in this process, with the
 * lifetime profiler riding on the runner's hooks: started once the heap
 * and the workload's classes exist, stopped (censoring what is alive)
 * before the heap goes away.  `ephemera run` and the harness's
 * invocations (`ephemera bench run-one`) both run workloads through it.
 * Layer: bench, above the profiler and the workloads (docs/architecture.md).
 */
#ifndef EPH_BENCH_WORKLOAD_H
#define EPH_BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "ephemera/profile.h"
#include "workloads/workload.h"

typedef struct eph_bench_profiling {
  const eph_profile_spec *spec;        /* NULL: the run is not profiled */
  const char *program;                 /* the profile's meta "program" ("ephemera run") */
  const char *command;                 /* its meta "command", or NULL for none */
  bool stop_on_signals;                /* SIGINT/SIGTERM finish the profile (eph_profile_stop_on_signals) */
  int (*after)(wl_ctx *w, void *data); /* the caller's own hook at the end (after the profile stops), or NULL */
  void *data;                          /* after's data */
  eph_profile_stats stats;             /* out: the profile's statistics (zeros when not profiled) */
  eph_error err;                       /* out: why the profiler failed; message "" when it did not */
} eph_bench_profiling;

/*
 * Runs wl with opt (whose configure, before, after and data this call
 * supplies: set p's instead) and fills *res.  With p->spec, the heap's
 * parameters are prepared for the profile, the profile starts with meta
 * program, workload, size, unit, seed (and command) and stops after the
 * run.  Returns wl_run's result: 0, or nonzero with the runner's message
 * in why; a failure of the profiler is then in p->err.
 */
int eph_bench_workload_run(const wl_workload *wl, const wl_run_options *opt, eph_bench_profiling *p, wl_result *res,
                           char *why, size_t whylen);

#endif
