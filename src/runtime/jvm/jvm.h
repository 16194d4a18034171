/*
 * jvm.h — what Ephemera reads from a Java virtual machine: the lines the
 * JVMTI agent (agent.c, libephemera-jvm.so) appends to its stats file, the
 * lines the Java suite's driver (workloads/jvm) appends per iteration, and
 * OpenJDK's collectors by name.  Layer: runtime adapters (runtime/jvm);
 * the harness runs Java targets through it (src/harness/run_jvm.c).
 *
 * Stats file (one block per JVM that ran with the agent):
 *   ephemera-jvm-pause pid=P start_ns=S end_ns=E cpu_start_ns=C0 cpu_end_ns=C1
 *   ephemera-jvm-collector pid=P name=G1_Young_Generation count=N time_ms=T
 *   ephemera-jvm-end pid=P pauses=N lost=0|1 vm_start_ns=S vm_end_ns=E
 * Iterations file (the suite's driver):
 *   ephemera-jvm-iteration index=I warmup=0|1 start_ns=S end_ns=E cpu_start_ns=C0 cpu_end_ns=C1 check=ok
 *   ephemera-jvm-event iteration=I start_ns=S end_ns=E
 * Times are CLOCK_MONOTONIC (System.nanoTime) and process CPU time, in ns.
 */
#ifndef EPH_JVM_H
#define EPH_JVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/base.h"

#define EPH_JVM_PAUSE_TAG "ephemera-jvm-pause"
#define EPH_JVM_COLLECTOR_TAG "ephemera-jvm-collector"
#define EPH_JVM_END_TAG "ephemera-jvm-end"
#define EPH_JVM_ITER_TAG "ephemera-jvm-iteration"
#define EPH_JVM_EVENT_TAG "ephemera-jvm-event"

/* --- OpenJDK's collectors ------------------------------------------------------ */

/* The five production collectors, in the DaCapo Chopin paper's order:
 * "serial", "parallel", "g1", "shenandoah", "zgc". */
#define EPH_JVM_NCOLLECTORS 5
extern const char *const eph_jvm_collectors[EPH_JVM_NCOLLECTORS];
/* The flag that selects a collector ("-XX:+UseG1GC"), NULL for an unknown name. */
const char *eph_jvm_collector_flag(const char *name);
/* Whether `java` starts with that collector (runs `java FLAG -version`). */
bool eph_jvm_collector_available(const char *java, const char *name);

/* --- where things are ------------------------------------------------------------ */

/* The java binary: $EPHEMERA_JAVA, else "java" (on PATH). */
const char *eph_jvm_java(void);
/* The agent: $EPHEMERA_JVM_AGENT, else the one this build made. */
const char *eph_jvm_agent_path(void);
/* The Java suite's class path (its jar and Debian's jars), read from the
 * file the build wrote ($EPHEMERA_JVM_SUITE_CP overrides).  NULL and a
 * message in err when the suite was not built. */
const char *eph_jvm_suite_classpath(eph_error *err);

/* --- the agent's stats ----------------------------------------------------------- */

typedef struct eph_jvm_pause {
  int64_t start_ns, end_ns, cpu_start_ns, cpu_end_ns;
} eph_jvm_pause;

typedef struct eph_jvm_collector {
  char name[64]; /* the MXBean's name, spaces as '_' ("G1_Young_Generation") */
  int64_t count, time_ms;
} eph_jvm_collector;

#define EPH_JVM_MAX_COLLECTORS 8

typedef struct eph_jvm_stats {
  eph_jvm_pause *pauses; /* every JVM's, in file order */
  size_t npauses;
  eph_jvm_collector collectors[EPH_JVM_MAX_COLLECTORS]; /* summed by name over the JVMs */
  size_t ncollectors;
  int jvms;  /* end lines: JVMs that finished with the agent */
  bool lost; /* a JVM had pauses it could not record */
} eph_jvm_stats;

/* Reads a stats file (missing or empty: no JVM, jvms 0).  Returns 0, or -1
 * with err naming the file and line (malformed, or out of memory).  Free
 * with eph_jvm_stats_free. */
int eph_jvm_stats_read(const char *path, eph_jvm_stats *s, eph_error *err);
void eph_jvm_stats_free(eph_jvm_stats *s);

/* The pauses within [t0, t1] (monotonic ns; a pause that straddles an end
 * counts for its part inside): wall seconds, process CPU seconds (of a
 * straddling pause, the share of its wall inside), how many. */
void eph_jvm_pauses_in(const eph_jvm_stats *s, int64_t t0, int64_t t1, double *wall_s, double *cpu_s, int64_t *count);

/* --- the suite's iterations ------------------------------------------------------ */

typedef struct eph_jvm_event {
  int64_t start_ns, end_ns; /* absolute (monotonic) */
} eph_jvm_event;

typedef struct eph_jvm_iteration {
  size_t index;
  bool warmup;
  int64_t start_ns, end_ns, cpu_start_ns, cpu_end_ns;
  eph_jvm_event *events;
  size_t nevents;
} eph_jvm_iteration;

/* Reads an iterations file.  Returns 0 with *it (malloc'd, *n entries,
 * in file order), or -1 with err naming the file and line. */
int eph_jvm_iterations_read(const char *path, eph_jvm_iteration **it, size_t *n, eph_error *err);
void eph_jvm_iterations_free(eph_jvm_iteration *it, size_t n);

#endif
