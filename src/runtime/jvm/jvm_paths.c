/*
 * jvm_paths.c — OpenJDK's collectors by name, and where the java binary,
 * the agent and the Java suite are (this build's, unless the environment
 * says otherwise).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/jvm/jvm.h"

const char *const eph_jvm_collectors[EPH_JVM_NCOLLECTORS] = {"serial", "parallel", "g1", "shenandoah", "zgc"};
static const char *const flags[EPH_JVM_NCOLLECTORS] = {"-XX:+UseSerialGC", "-XX:+UseParallelGC", "-XX:+UseG1GC",
                                                       "-XX:+UseShenandoahGC", "-XX:+UseZGC"};

const char *eph_jvm_collector_flag(const char *name) {
  for (int i = 0; i < EPH_JVM_NCOLLECTORS; i++)
    if (!strcmp(name, eph_jvm_collectors[i])) return flags[i];
  return NULL;
}

bool eph_jvm_collector_available(const char *java, const char *name) {
  const char *flag = eph_jvm_collector_flag(name);
  if (!flag || strchr(java, '\'')) return false;
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "'%s' %s -version >/dev/null 2>&1 </dev/null", java, flag);
  return system(cmd) == 0;
}

const char *eph_jvm_java(void) {
  const char *j = getenv("EPHEMERA_JAVA");
  return j && *j ? j : "java";
}

const char *eph_jvm_agent_path(void) {
  const char *a = getenv("EPHEMERA_JVM_AGENT");
  return a && *a ? a : EPH_JVM_AGENT_BUILT;
}

const char *eph_jvm_suite_classpath(eph_error *err) {
  static char cp[16384];
  const char *env = getenv("EPHEMERA_JVM_SUITE_CP");
  if (env && *env) return env;
  FILE *f = fopen(EPH_JVM_SUITE_CP_FILE, "r");
  if (!f || !fgets(cp, sizeof cp, f)) {
    if (f) fclose(f);
    eph_error_fill(err, EPH_ERR_INVALID,
                   "the Java suite was not built (needs openjdk-17-jdk-headless, fop, libh2-java, jython, "
                   "liblucene4.10-java, libxalan2-java; then build again)");
    return NULL;
  }
  fclose(f);
  cp[strcspn(cp, "\n")] = 0;
  return cp;
}
