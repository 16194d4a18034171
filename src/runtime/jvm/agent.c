/*
 * agent.c — libephemera-jvm.so, a JVMTI agent for any unmodified Java
 * program: -agentpath:/path/libephemera-jvm.so=stats=FILE, or the same in
 * JAVA_TOOL_OPTIONS.  It records the collector's stop-the-world periods
 * (JVMTI GarbageCollectionStart/Finish: the wall clock and the process's
 * CPU time at each end) and, when the VM ends, the collectors' own counts
 * (java.lang.management's GarbageCollectorMXBeans: their names are the
 * collections' kinds, e.g. "G1 Young Generation"), and appends them to
 * FILE in the lines jvm_stats.c reads (jvm.h).  Without stats=, it writes
 * to $EPHEMERA_STATS; with neither, it does nothing.
 *
 * The GC callbacks run in the VM thread at a safepoint, where JVMTI allows
 * almost nothing: they only read two clocks into a buffer grown ahead of
 * need.  Everything else waits for VMDeath.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>

#include "runtime/jvm/jvm.h"

static struct {
  char path[4096];
  eph_jvm_pause *pauses;
  size_t n, cap;
  bool in_pause, lost; /* lost: a pause that found the buffer full */
  int64_t vm_start_ns;
} agent;

static int64_t now_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Keeps room for the next pause; called outside the pause (at its end), so
 * that the start callback never allocates. */
static void reserve(void) {
  if (agent.n + 1 < agent.cap) return;
  size_t cap = agent.cap ? 2 * agent.cap : 1024;
  eph_jvm_pause *p = realloc(agent.pauses, cap * sizeof *p);
  if (p) agent.pauses = p, agent.cap = cap;
}

static void JNICALL gc_start(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (agent.n >= agent.cap) {
    agent.lost = true;
    return;
  }
  eph_jvm_pause *p = &agent.pauses[agent.n];
  p->start_ns = now_ns(CLOCK_MONOTONIC);
  p->cpu_start_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  agent.in_pause = true;
}

static void JNICALL gc_finish(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (!agent.in_pause) return;
  eph_jvm_pause *p = &agent.pauses[agent.n++];
  p->cpu_end_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  p->end_ns = now_ns(CLOCK_MONOTONIC);
  agent.in_pause = false;
  reserve();
}

/* Appends text to the file in one write (several JVMs of one command may
 * share it; O_APPEND keeps their blocks whole). */
static void append(const char *text, size_t len) {
  int fd = open(agent.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "ephemera-jvm: %s: %s\n", agent.path, strerror(errno));
    return;
  }
  while (len) {
    ssize_t k = write(fd, text, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      fprintf(stderr, "ephemera-jvm: writing %s: %s\n", agent.path, strerror(errno));
      break;
    }
    text += k, len -= (size_t)k;
  }
  close(fd);
}

/* The collectors' names and counts from their MXBeans (JNI; VMDeath is
 * still in the live phase).  Any failure leaves the lines out. */
static void collector_lines(JNIEnv *env, FILE *out) {
  jclass mf = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
  jclass list = mf ? (*env)->FindClass(env, "java/util/List") : NULL;
  jclass bean = list ? (*env)->FindClass(env, "java/lang/management/GarbageCollectorMXBean") : NULL;
  jmethodID get = bean ? (*env)->GetStaticMethodID(env, mf, "getGarbageCollectorMXBeans", "()Ljava/util/List;") : NULL;
  jmethodID size = get ? (*env)->GetMethodID(env, list, "size", "()I") : NULL;
  jmethodID at = size ? (*env)->GetMethodID(env, list, "get", "(I)Ljava/lang/Object;") : NULL;
  jmethodID name = at ? (*env)->GetMethodID(env, bean, "getName", "()Ljava/lang/String;") : NULL;
  jmethodID count = name ? (*env)->GetMethodID(env, bean, "getCollectionCount", "()J") : NULL;
  jmethodID time = count ? (*env)->GetMethodID(env, bean, "getCollectionTime", "()J") : NULL;
  jobject beans = time ? (*env)->CallStaticObjectMethod(env, mf, get) : NULL;
  if (!beans || (*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    return;
  }
  jint n = (*env)->CallIntMethod(env, beans, size);
  for (jint i = 0; i < n && !(*env)->ExceptionCheck(env); i++) {
    jobject b = (*env)->CallObjectMethod(env, beans, at, i);
    jstring s = b ? (*env)->CallObjectMethod(env, b, name) : NULL;
    if (!s || (*env)->ExceptionCheck(env)) break;
    jlong c = (*env)->CallLongMethod(env, b, count), t = (*env)->CallLongMethod(env, b, time);
    const char *chars = (*env)->GetStringUTFChars(env, s, NULL);
    if (chars) {
      fprintf(out, "%s pid=%ld name=", EPH_JVM_COLLECTOR_TAG, (long)getpid());
      for (const char *c2 = chars; *c2; c2++) fputc(*c2 == ' ' ? '_' : *c2, out); /* one word */
      fprintf(out, " count=%lld time_ms=%lld\n", (long long)c, (long long)t);
      (*env)->ReleaseStringUTFChars(env, s, chars);
    }
    (*env)->DeleteLocalRef(env, s);
    (*env)->DeleteLocalRef(env, b);
  }
  (*env)->ExceptionClear(env);
}

static void JNICALL vm_death(jvmtiEnv *jvmti, JNIEnv *env) {
  (void)jvmti;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) return;
  long pid = (long)getpid();
  for (size_t i = 0; i < agent.n; i++) {
    const eph_jvm_pause *p = &agent.pauses[i];
    fprintf(out, "%s pid=%ld start_ns=%lld end_ns=%lld cpu_start_ns=%lld cpu_end_ns=%lld\n", EPH_JVM_PAUSE_TAG, pid,
            (long long)p->start_ns, (long long)p->end_ns, (long long)p->cpu_start_ns, (long long)p->cpu_end_ns);
  }
  collector_lines(env, out);
  fprintf(out, "%s pid=%ld pauses=%zu lost=%d vm_start_ns=%lld vm_end_ns=%lld\n", EPH_JVM_END_TAG, pid, agent.n,
          agent.lost ? 1 : 0, (long long)agent.vm_start_ns, (long long)now_ns(CLOCK_MONOTONIC));
  fclose(out);
  append(text, len);
  free(text);
}

/* "stats=FILE" (the only option); 0, or -1 with a message. */
static int parse_options(const char *options) {
  const char *env = getenv("EPHEMERA_STATS");
  if (env) snprintf(agent.path, sizeof agent.path, "%s", env);
  if (!options || !*options) return 0;
  if (strncmp(options, "stats=", 6) || !options[6]) {
    fprintf(stderr, "ephemera-jvm: unknown option '%s' (expected stats=FILE)\n", options);
    return -1;
  }
  if (strlen(options + 6) >= sizeof agent.path) {
    fprintf(stderr, "ephemera-jvm: stats=: path too long\n");
    return -1;
  }
  snprintf(agent.path, sizeof agent.path, "%s", options + 6);
  return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  agent.vm_start_ns = now_ns(CLOCK_MONOTONIC);
  if (parse_options(options)) return JNI_ERR;
  if (!agent.path[0]) return JNI_OK; /* nowhere to write: stay out of the way */
  jvmtiEnv *jvmti;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
    fprintf(stderr, "ephemera-jvm: no JVMTI 1.2 environment\n");
    return JNI_ERR;
  }
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_garbage_collection_events = 1;
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.GarbageCollectionStart = gc_start;
  cb.GarbageCollectionFinish = gc_finish;
  cb.VMDeath = vm_death;
  reserve();
  if (!agent.pauses || (*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) != JVMTI_ERROR_NONE) {
    fprintf(stderr, "ephemera-jvm: cannot enable the GC events\n");
    return JNI_ERR;
  }
  return JNI_OK;
}
