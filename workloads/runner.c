/*
 * runner.c — runs one workload on a fresh heap: parameters, classes,
 * --retain, sizes, timing, statistics and latency percentiles.
 *
 * Heap exhaustion inside a workload does not return EPH_NIL to it: the
 * runner's error handler jumps back here and the run ends with a one-line
 * error.  The heap raises errors only at consistent points (before the
 * failing allocation returns), so leaving through longjmp is safe; the
 * workload's memory off the heap comes from wl_malloc (memory.c), which
 * the runner frees after the jump.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

int wl_parse_size(const wl_workload *wl, const char *text, uint64_t *out, char *err, size_t errlen) {
  if (!text || !strcmp(text, "default")) {
    *out = wl->sizes.normal;
    return 0;
  }
  if (!strcmp(text, "small")) {
    *out = wl->sizes.small;
    return 0;
  }
  if (!strcmp(text, "middle")) {
    *out = wl->sizes.middle;
    return 0;
  }
  if (!strcmp(text, "large")) {
    if (!wl->sizes.large) return fail(err, errlen, "%s has no 'large' size", wl->name);
    *out = wl->sizes.large;
    return 0;
  }
  char *end;
  errno = 0;
  if (!isdigit((unsigned char)text[0])) goto bad;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno) goto bad;
  if (*end == 'k' || *end == 'K') v *= 1000, end++;
  else if (*end == 'm' || *end == 'M') v *= 1000000, end++;
  if (*end || v == 0) goto bad;
  *out = v;
  return 0;
bad:
  return fail(err, errlen, "bad size '%s' for %s (small, middle, default, large or a number of %s)", text, wl->name, wl->unit);
}

int wl_class_list(const wl_workload *wl, const char *list, const char *what, bool *found, char *err, size_t errlen) {
  char buf[512];
  if (strlen(list) >= sizeof buf) return fail(err, errlen, "%s: list too long", what);
  strcpy(buf, list);
  char *save = NULL;
  for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    size_t i = 0;
    while (i < wl->nclasses && strcmp(wl->classes[i].name, name) != 0) i++;
    if (i == wl->nclasses) {
      char known[400] = "";
      for (size_t k = 0; k < wl->nclasses; k++) {
        if (k) strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, wl->classes[k].name, sizeof known - strlen(known) - 1);
      }
      return fail(err, errlen, "%s: %s has no class '%s' (it has: %s)", what, wl->name, name, known);
    }
    if (found) found[i] = true;
  }
  return 0;
}

typedef struct escape {
  jmp_buf jump;
  eph_status status;
  char message[256];
} escape;

static void on_heap_error(void *data, eph_heap *h, eph_status st, const char *msg) {
  (void)h;
  escape *e = data;
  if (st == EPH_ERR_CORRUPT) {
    fprintf(stderr, "ephemera: %s\n", msg);
    return; /* the heap aborts */
  }
  e->status = st;
  snprintf(e->message, sizeof e->message, "%s", msg);
  longjmp(e->jump, 1);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void latency_summary(const wl_ctx *w, wl_result *res) {
  res->nevents = w->nevents;
  if (!w->nevents) return;
  uint64_t *d = malloc(w->nevents * sizeof *d);
  if (!d) return;
  for (size_t i = 0; i < w->nevents; i++) d[i] = w->events[i].end_ns - w->events[i].start_ns;
  qsort(d, w->nevents, sizeof *d, cmp_u64);
  res->event_p50_ms = (double)d[w->nevents / 2] / 1e6;
  res->event_p99_ms = (double)d[(size_t)((double)(w->nevents - 1) * 0.99)] / 1e6;
  res->event_max_ms = (double)d[w->nevents - 1] / 1e6;
  free(d);
}

int wl_run(const wl_workload *wl, const wl_run_options *opt, wl_result *res, char *err, size_t errlen) {
  memset(res, 0, sizeof *res);
  if (wl->nclasses > WL_MAX_CLASSES - 1) return fail(err, errlen, "%s declares too many classes", wl->name);
  eph_gc_params p;
  eph_error e;
  eph_gc_params_init(&p);
  if (eph_gc_params_apply_env(&p, &e) != EPH_OK) return fail(err, errlen, "%s", e.message);
  if (opt->gc && eph_gc_params_parse(&p, opt->gc, &e) != EPH_OK) return fail(err, errlen, "--gc: %s", e.message);
  if (opt->configure) opt->configure(&p, opt->data);

  wl_ctx *w = calloc(1, sizeof *w);
  if (!w) return fail(err, errlen, "out of memory");
  w->workload = wl;
  w->seed = opt->seed ? opt->seed : 42;
  w->quiet = opt->quiet;
  int rc = -1;
  if (wl_parse_size(wl, opt->size, &w->size, err, errlen)) goto out;
  if (opt->argc && !wl->parse_options) {
    fail(err, errlen, "unknown option '%s' for %s", opt->argv[0], wl->name);
    goto out;
  }
  if (opt->argc && wl->parse_options(w, opt->argc, opt->argv)) {
    fail(err, errlen, "bad options for %s (see 'ephemera workloads')", wl->name);
    goto out;
  }
  if (eph_heap_new(&p, &w->h, &e) != EPH_OK) {
    fail(err, errlen, "%s", e.message);
    goto out;
  }
  for (size_t i = 0; i < wl->nclasses; i++) {
    w->cls[i] = eph_class_register(w->h, wl->classes[i].name, wl->classes[i].format);
    if (!w->cls[i]) {
      fail(err, errlen, "%s: class %s: %s", wl->name, wl->classes[i].name, eph_heap_error(w->h));
      goto out;
    }
  }
  eph_class_register(w->h, "RetainChunk", EPH_FORMAT_POINTERS);
  if (opt->retain && wl_class_list(wl, opt->retain, "--retain", w->retain, err, errlen)) goto out;
  eph_global_root_add(w->h, &w->retain_chunk);

  escape esc = {.status = EPH_OK};
  eph_heap_set_error_handler(w->h, on_heap_error, &esc);
  if (opt->before && opt->before(w, opt->data)) {
    fail(err, errlen, "%s: could not start the run", wl->name);
    goto out;
  }
  size_t roots = eph_roots_height(w->h);
  double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  w->start_ns = (uint64_t)(wall0 * 1e9);
  if (setjmp(esc.jump) == 0) {
    wl->run(w);
  } else {
    eph_roots_reset(w->h, roots);
    fail(err, errlen, "%s: %s", wl->name, esc.message);
    goto out;
  }
  res->wall_s = clock_s(CLOCK_MONOTONIC) - wall0;
  res->cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  eph_heap_set_error_handler(w->h, NULL, NULL);
  eph_heap_stats_get(w->h, &res->stats);
  res->check_ok = w->check_ok;
  snprintf(res->check_message, sizeof res->check_message, "%s",
           w->check_message[0] ? w->check_message : "the workload reported no self-check");
  res->size = w->size;
  res->retained = w->retained;
  latency_summary(w, res);
  double after_wall0 = clock_s(CLOCK_MONOTONIC), after_cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  int after_failed = opt->after && opt->after(w, opt->data);
  res->after_wall_s = clock_s(CLOCK_MONOTONIC) - after_wall0;
  res->after_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - after_cpu0;
  if (after_failed) {
    fail(err, errlen, "%s: could not finish the run", wl->name);
    goto out;
  }
  rc = 0;
out:
  eph_heap_free(w->h);
  wl_free_all(w); /* what a workload left through the longjmp could not free */
  free(w->events);
  free(w->options);
  free(w);
  return rc;
}
