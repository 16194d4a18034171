/*
 * session.c — a session's life: opening the profile, the sessions of the
 * process (finished at exit, and on SIGINT/SIGTERM), finishing the profile
 * (the totals, the summary), and the end of a GC cycle.  The adapter says
 * when: it opens a session when it attaches to its runtime, and finishes it
 * when the runtime closes, on request, or lets exit finish it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/internal.h"

/* --- opening ------------------------------------------------------------------------ */

void rt_spec_text_of(const rt_options *opt, rt_spec_text *out) {
  if (opt->sample_bytes) snprintf(out->sample, sizeof out->sample, "bytes:%llu", (unsigned long long)opt->sample_bytes);
  else snprintf(out->sample, sizeof out->sample, "%s%llu", opt->sample_fixed ? "every:" : "1/",
                (unsigned long long)opt->sample_every);
  snprintf(out->spec, sizeof out->spec, "mode=gc,sample=%s,seed=%llu,sites=%s,stacks=%u", out->sample,
           (unsigned long long)opt->seed, opt->sites ? "on" : "off", opt->stacks ? opt->stacks : 1);
  snprintf(out->stacks, sizeof out->stacks, "%u", opt->sites ? opt->stacks : 0);
}

void rt_session_init(rt_session *s, const rt_runtime *rt, const rt_options *opt, const char *gc_label,
                     rt_mem_fn *mem, void *mem_ud) {
  s->rt = rt;
  s->opt = *opt;
  s->summary = opt->summary;
  snprintf(s->gcmode, sizeof s->gcmode, "%s", gc_label ? gc_label : "unknown");
  s->mem = mem;
  s->mem_ud = mem_ud;
}

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool rt_session_open(rt_session *s, const eph_meta_pair *meta, size_t nmeta, char *msg, size_t msglen) {
  eph_error err;
  s->w = eph_writer_open(s->opt.out, meta, nmeta, s->opt.compress, &err);
  if (!s->w) {
    snprintf(msg, msglen, "%s", err.message);
    return false;
  }
  for (uint32_t k = 1; k < s->rt->nclasses; k++) eph_writer_class(s->w, k, s->rt->class_names[k]);
  if (!rt_marks_init(s)) {
    snprintf(msg, msglen, "cannot map the profiler's tables: out of memory");
    rt_marks_free(s);
    eph_writer_close(s->w, NULL);
    s->w = NULL;
    return false;
  }
  s->t0_ns = s->fine_ns = rt_now_ns();
  s->cpu0_ns = cpu_ns();
  rt_clock_init(s);
  rt_sampler_init(s);
  return true;
}

void rt_session_abort(rt_session *s) {
  rt_marks_free(s);
  rt_clock_free(s);
  eph_writer_close(s->w, NULL);
  s->w = NULL;
}

bool rt_class_declare(rt_session *s, uint32_t id, const char *name) {
  return eph_writer_class(s->w, id, name) == EPH_OK;
}

/* --- the sessions alive in this process (finished at exit) ------------------------- */

static rt_session *sessions[RT_MAX_SESSIONS];
static int failures;

bool rt_session_room(void) {
  for (int i = 0; i < RT_MAX_SESSIONS; i++)
    if (!sessions[i]) return true;
  return false;
}

static void at_exit(void) {
  for (int i = 0; i < RT_MAX_SESSIONS; i++) {
    rt_session *s = sessions[i];
    if (!s) continue;
    char msg[1600];
    /* the runtime is still there: its objects are intact, the live samples are censored */
    if (rt_finish(s, false, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
    sessions[i] = NULL; /* the adapter stays installed as a pass-through */
  }
}

void rt_session_register(rt_session *s) {
  static bool registered;
  for (int i = 0; i < RT_MAX_SESSIONS; i++) {
    if (!sessions[i]) {
      sessions[i] = s;
      break;
    }
  }
  if (!registered) {
    registered = true;
    atexit(at_exit);
  }
}

void rt_session_release(rt_session *s) {
  for (int i = 0; i < RT_MAX_SESSIONS; i++)
    if (sessions[i] == s) sessions[i] = NULL;
  rt_marks_free(s);
}

int rt_failures(void) { return failures; }

/* --- SIGINT and SIGTERM ------------------------------------------------------------ */

bool rt_finish_on_signals(rt_session *s, bool over_handlers, char *msg, size_t msglen) {
  if (s->on_signals || s->finished) return true;
  if (!ephs_sigstop_hold(over_handlers, msg, msglen)) return false;
  s->on_signals = true;
  return true;
}

void rt_signal_stop(void) {
  for (int i = 0; i < RT_MAX_SESSIONS; i++) {
    rt_session *s = sessions[i];
    if (!s || !s->on_signals) continue;
    char msg[1600];
    /* the runtimes are open: their objects are intact, the live samples are censored (as at exit) */
    if (rt_finish(s, false, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
    sessions[i] = NULL; /* the adapter stays installed as a pass-through */
  }
}

/* rt_finish's end: the last holder's release ends the process if a signal came. */
static void release_signals(rt_session *s) {
  if (!s->on_signals) return;
  s->on_signals = false;
  int sig = ephs_sigstop_pending();
  if (sig)
    fprintf(stderr, "ephemera: %s: %s profile %s finished: %llu records (%llu censored)\n", ephs_sigstop_name(sig),
            s->rt->name, s->opt.out, (unsigned long long)s->records, (unsigned long long)s->censored);
  ephs_sigstop_release();
}

/* --- cycles ------------------------------------------------------------------------- */

bool rt_cycle_end(rt_session *s) {
  if (s->closing || s->detached) return false;
  if (rt_signal_due(s)) {
    rt_signal_stop(); /* returns only with s finished (or another holder still waiting) */
    return false;
  }
  s->cycles++;
  s->cycle_bytes = s->bytes;
  s->cycle_ns = rt_clock_cycle(s); /* an exact reading, also a clock point */
  return true;
}

/* --- finish ---------------------------------------------------------------------- */

int64_t rt_peak_heap(const rt_session *s) {
  int64_t p = s->peak_heap > s->heap ? s->peak_heap : s->heap;
  return p > 0 ? p : 0;
}

int rt_finish(rt_session *s, bool samples_gone, char *msg, size_t msglen) {
  if (s->finished) return 0;
  s->finished = true;
  bool was_closing = s->closing;
  s->closing = true;
  if (!samples_gone && !s->detached && s->rt->censor_live) s->rt->censor_live(s); /* their memory is intact */
  s->closing = was_closing;
  rt_clock_free(s);
  rt_sites_free(s);
  s->detached = true;
  s->countdown = INT64_MAX;
  eph_totals tot = {
      .wall_ns = rt_now_ns() - s->t0_ns,
      .cpu_ns = cpu_ns() - s->cpu0_ns,
      .bytes_allocated = s->bytes,
      .objects_allocated = s->objects - s->internal_objects,
      .records = s->records,
      .censored = s->censored,
      .full_gcs = s->cycles,
      .peak_heap = (uint64_t)rt_peak_heap(s),
  };
  int rc = 0;
  if (s->write_failed) {
    eph_writer_close(s->w, NULL);
    snprintf(msg, msglen, "%s profile: %s", s->rt->name, s->error);
    rc = -1;
  } else if (eph_writer_close(s->w, &tot) != EPH_OK) {
    snprintf(msg, msglen, "%s profile: writing %s: %s", s->rt->name, s->opt.out, eph_writer_error(NULL));
    rc = -1;
  }
  s->w = NULL;
  if (rc) failures++;
  if (s->summary) rt_summary(s, stderr);
  release_signals(s);
  return rc;
}

/* --- summary ------------------------------------------------------------------------ */

static void human(char *buf, size_t n, double b) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int k = 0;
  while (b >= 1024 && k < 4) b /= 1024, k++;
  snprintf(buf, n, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

void rt_summary(const rt_session *s, FILE *out) {
  double total = s->freed_weight + s->censored_weight;
  fprintf(out, "ephemera: %s profile %s: %llu records (%llu censored) of %llu objects, %llu GC cycles (%s)\n",
          s->rt->name, s->opt.out, (unsigned long long)s->records, (unsigned long long)s->censored,
          (unsigned long long)(s->objects - s->internal_objects), (unsigned long long)s->cycles, s->gcmode);
  if (s->dropped) fprintf(out, "ephemera: %llu samples dropped (out of memory)\n", (unsigned long long)s->dropped);
  if (total <= 0) return;
  fprintf(out, "  estimated objects by class (weighted):\n");
  for (uint32_t k = 1; k < s->rt->nclasses && k < RT_CLASSES_MAX; k++)
    if (s->deaths_by_class[k])
      fprintf(out, "    %-13s %12.0f\n", s->rt->class_names[k], s->weight_by_class[k]);
  /* the median lifetime in bytes, and the shares dying before one and two
   * cycles end, and alive at the end */
  double acc = 0, half = s->freed_weight / 2;
  int med = -1;
  for (int b = 0; b < 64 && s->freed_weight > 0; b++) {
    acc += s->life_hist[b];
    if (acc >= half) {
      med = b;
      break;
    }
  }
  double freed = s->freed_weight;
  double share0 = freed > 0 ? s->survived_hist[0] / freed : 0;
  double share01 = freed > 0 ? (s->survived_hist[0] + s->survived_hist[1]) / freed : 0;
  double cens = s->censored_weight / total;
  char medb[32], heap[32];
  human(medb, sizeof medb, med >= 0 ? (double)(UINT64_C(1) << med) : 0);
  human(heap, sizeof heap, (double)rt_peak_heap(s));
  fprintf(out,
          "  lifetimes: median about %s of allocation; %.0f%% die before the next GC cycle completes, %.0f%% "
          "within two;\n  %.0f%% live to the end (censored); peak heap %s\n",
          medb, 100 * share0, 100 * share01, 100 * cens, heap);
  if (s->rt->summary_tail) s->rt->summary_tail(s, out);
}
