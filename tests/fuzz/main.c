/*
 * tests/fuzz/main.c — eph-fuzz-heap: a seeded, reproducible random mutator
 * checked against a shadow model after every collection.
 *
 *   eph-fuzz-heap [--seed S] [--ops N] [--mode normal|stress|small]
 *                 [--gc SPEC] [--check-every K] [--verbose]
 *
 * On the first difference it prints one line
 *   FAIL seed=S op=K: <what differed>
 * and the command that replays it, and exits 1.  On success it prints a
 * summary and exits 0.  A run depends only on its options (never on the
 * clock, addresses or EPHEMERA_GC), so a seed replays exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef EPH_SANITIZE
#include <sanitizer/common_interface_defs.h>
#endif

#include "fuzz.h"

/* --- modes --------------------------------------------------------------------- */

static const fz_mode fz_modes[] = {
    /* The default parameters: collections come from eden filling up and from
       explicit eph_collect; the graph is larger. */
    {.name = "normal",
     .gc_spec = "",
     .default_ops = 250000,
     .max_live_objs = 3000,
     .max_live_bytes = 6u << 20,
     .check_every = 20,
     .verify_every = 500, /* eden is 15 MiB: verifying it is the expensive part */
     .large_min = 256u << 10,
     .large_max = 1u << 20,
     .medium_max = 256u << 10,
     .long_chain_max = 30000,
     .w_large = 2,
     .w_scavenge = 20,
     .w_full = 8,
     .w_set_params = 1},
    /* A tiny heap: scavenges, tenuring, old-space growth/shrink and full GCs
       all the time. */
    {.name = "small",
     .gc_spec = "eden=64K,headroom=64K,shrink=128K",
     .default_ops = 100000,
     .max_live_objs = 600,
     .max_live_bytes = 1u << 20,
     .check_every = 4,
     .verify_every = 4,
     .large_min = 16u << 10,
     .large_max = 300u << 10,
     .medium_max = 32u << 10,
     .long_chain_max = 5000,
     .observe_alloc = true,
     .w_large = 10,
     .w_scavenge = 30,
     .w_full = 20,
     .w_set_params = 3},
    /* A scavenge before every allocation, a full GC every 50 allocations, the
       library's own verifier after every collection. */
    {.name = "stress",
     .gc_spec = "stress=1,stress_full=50,verify=1",
     .default_ops = 50000,
     .max_live_objs = 400,
     .max_live_bytes = 1u << 20,
     .check_every = 1,
     .verify_every = 1,
     .large_min = 256u << 10,
     .large_max = 512u << 10,
     .medium_max = 64u << 10,
     .long_chain_max = 0,
     .observe_alloc = true,
     .w_large = 2,
     .w_scavenge = 20,
     .w_full = 10,
     .w_set_params = 0},
};
#define FZ_NMODES (sizeof fz_modes / sizeof fz_modes[0])

/* --- failure ------------------------------------------------------------------- */

static fuzz *g_fz; /* for the crash handlers */

static void print_replay(FILE *out, const fuzz *fz) {
  fprintf(out, "replay: %s --seed %" PRIu64 " --mode %s --ops %" PRIu64, fz->argv0, fz->seed, fz->mode->name,
          fz->in_final ? fz->nops : fz->op + 1);
  if (fz->gc_extra) fprintf(out, " --gc '%s'", fz->gc_extra);
  if (fz->check_every_opt) fprintf(out, " --check-every %" PRIu64, fz->check_every_opt);
  fprintf(out, "\n");
}

void fz_fail(fuzz *fz, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fflush(stdout);
  fflush(stderr);
  if (fz->in_final)
    printf("FAIL seed=%" PRIu64 " op=%" PRIu64 " (final check): %s\n", fz->seed, fz->op, msg);
  else
    printf("FAIL seed=%" PRIu64 " op=%" PRIu64 ": %s\n", fz->seed, fz->op, msg);
  print_replay(stdout, fz);
  fflush(stdout);
  exit(1);
}

void *fz_xrealloc(void *p, size_t n) {
  void *q = n == SIZE_MAX ? NULL : realloc(p, n);
  if (!q) {
    fprintf(stderr, "eph-fuzz-heap: out of memory (fuzzer side)\n");
    exit(2);
  }
  return q;
}

static void report_crash(const char *what) {
  if (!g_fz) return;
  fflush(stdout);
  fprintf(stdout, "FAIL seed=%" PRIu64 " op=%" PRIu64 ": %s\n", g_fz->seed, g_fz->op, what);
  print_replay(stdout, g_fz);
  fflush(stdout);
}

static void on_signal(int sig) {
  /* Not async-signal-safe, but the process is dying anyway. */
  char what[64];
  snprintf(what, sizeof what, "crashed with signal %d (%s)", sig, strsignal(sig));
  report_crash(what);
  signal(sig, SIG_DFL);
  raise(sig);
}

#ifdef EPH_SANITIZE
static void on_sanitizer_death(void) { report_crash("sanitizer error (report above)"); }
#endif

/* --- heap callbacks --------------------------------------------------------------- */

static void on_heap_error(void *data, eph_heap *h, eph_status status, const char *message) {
  (void)h;
  fuzz *fz = data;
  if (status == EPH_ERR_CORRUPT) fz_fail(fz, "heap verifier (%s): %s", fz->phase ? fz->phase : "the library's verify=1 check", message);
  /* Anything else: the failing call returns nil or a status, and the op reports it. */
  if (fz->verbose) fprintf(stderr, "heap error %s: %s\n", eph_status_name(status), message);
}

/*
 * Sees every allocation the mutator makes (not its own nested ones).  It
 * sometimes allocates garbage itself: that may collect while the library
 * holds the new object, which it must have rooted.
 */
static void on_alloc(void *data, eph_heap *h, eph_value obj) {
  fuzz *fz = data;
  fz->c.observed_allocs++;
  if (!eph_is_ptr(obj) || eph_age_of(obj) != 0 || (*eph_header_of(obj) & EPH_HDR_FORWARDED))
    fz_fail(fz, "on_alloc got %#" PRIxPTR " with header %#" PRIx64, obj, eph_is_ptr(obj) ? (uint64_t)*eph_header_of(obj) : 0);
  if (fz_chance(&fz->rng, 1, 32)) {
    size_t n = (size_t)fz_below(&fz->rng, 200);
    if (eph_alloc_bytes(h, fz->cls[FZ_BYTES], n) == EPH_NIL) fz_fail(fz, "allocation inside on_alloc failed: %s", eph_heap_error(h));
    fz->c.nested_allocs++;
    fz->c.bytes_allocated += fz_obj_bytes(n);
  }
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  (void)h;
  fz_fate_on_collect(data, kind);
}

static void on_gc_end(void *data, eph_heap *h, const eph_gc_event *ev) {
  fuzz *fz = data;
  fz->gcs_seen++;
  if (ev->kind == EPH_GC_FULL)
    fz->c.full_gcs++;
  else
    fz->c.scavenges++;
  if (ev->used_after > ev->used_before)
    fz_fail(fz, "%s #%" PRIu64 ": used grew from %" PRIu64 " to %" PRIu64 " bytes during the collection",
            ev->kind == EPH_GC_FULL ? "full GC" : "scavenge", ev->index, ev->used_before, ev->used_after);
  if (fz->observer_verify) {
    const char *saved = fz->phase;
    fz->phase = ev->kind == EPH_GC_FULL ? "on_gc_end after a full GC" : "on_gc_end after a scavenge";
    if (eph_heap_verify(h) != EPH_OK)
      fz_fail(fz, "eph_heap_verify after %s #%" PRIu64 ": %s", ev->kind == EPH_GC_FULL ? "full GC" : "scavenge",
              ev->index, eph_heap_error(h));
    fz->phase = saved;
  }
  if (fz->verbose)
    fprintf(stderr, "  gc #%" PRIu64 " %s: used %" PRIu64 " -> %" PRIu64 ", promoted %" PRIu64 "\n", ev->index,
            ev->kind == EPH_GC_FULL ? "full" : "scavenge", ev->used_before, ev->used_after, ev->bytes_promoted);
}

/* --- options ------------------------------------------------------------------- */

static void usage(FILE *out) {
  fprintf(out,
          "usage: eph-fuzz-heap [--seed S] [--ops N] [--mode normal|stress|small]\n"
          "                     [--gc KEY=VAL,...] [--check-every K] [--verbose]\n"
          "  --seed S         PRNG seed (default 1); the same options replay the same run\n"
          "  --ops N          number of operations (default: 250000 normal, 100000 small, 50000 stress)\n"
          "  --mode M         normal: default GC parameters; small: eden=64K,headroom=64K,shrink=128K;\n"
          "                   stress: stress=1,stress_full=50,verify=1\n"
          "  --gc SPEC        extra GC parameters on top of the mode's (EPHEMERA_GC is ignored)\n"
          "  --check-every K  model check and eph_heap_verify every K ops (always after a collection)\n"
          "  --verbose        trace every operation and collection on stderr\n"
          "GC parameters:\n");
  eph_gc_params_describe(out);
}

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || *s == '-') return false;
  *out = v;
  return true;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- main ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  static fuzz fzs;
  fuzz *fz = &fzs;
  fz->argv0 = argv[0];
  fz->seed = 1;
  fz->mode = &fz_modes[0];
  bool ops_given = false;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
      fz->verbose = true;
    } else if (v && !strcmp(a, "--seed")) {
      if (!parse_u64(v, &fz->seed)) goto bad;
      i++;
    } else if (v && !strcmp(a, "--ops")) {
      if (!parse_u64(v, &fz->nops)) goto bad;
      ops_given = true;
      i++;
    } else if (v && !strcmp(a, "--check-every")) {
      if (!parse_u64(v, &fz->check_every_opt) || !fz->check_every_opt || fz->check_every_opt > UINT32_MAX) goto bad;
      i++;
    } else if (v && !strcmp(a, "--gc")) {
      fz->gc_extra = v;
      i++;
    } else if (v && !strcmp(a, "--mode")) {
      size_t m;
      for (m = 0; m < FZ_NMODES; m++)
        if (!strcmp(v, fz_modes[m].name)) break;
      if (m == FZ_NMODES) goto bad;
      fz->mode = &fz_modes[m];
      i++;
    } else {
      goto bad;
    }
    continue;
  bad:
    fprintf(stderr, "eph-fuzz-heap: bad option '%s'%s%s\n", a, v ? " " : "", v ? v : "");
    usage(stderr);
    return 2;
  }
  if (!ops_given) fz->nops = fz->mode->default_ops;
  fz_mode mode = *fz->mode;
  if (fz->check_every_opt) mode.check_every = mode.verify_every = (uint32_t)fz->check_every_opt;
  fz->mode = &mode;

  /* parameters: defaults, the mode's, then --gc */
  eph_error err;
  eph_gc_params_init(&fz->params);
  if (eph_gc_params_parse(&fz->params, mode.gc_spec, &err) != EPH_OK ||
      (fz->gc_extra && eph_gc_params_parse(&fz->params, fz->gc_extra, &err) != EPH_OK)) {
    fprintf(stderr, "eph-fuzz-heap: bad GC parameters: %s\n", err.message);
    return 2;
  }
  if (eph_heap_new(&fz->params, &fz->h, &err) != EPH_OK) {
    fprintf(stderr, "eph-fuzz-heap: eph_heap_new: %s\n", err.message);
    return 2;
  }
  eph_heap *h = fz->h;
  fz->observer_verify = fz->params.verify == 0;

  g_fz = fz;
  signal(SIGABRT, on_signal);
#ifdef EPH_SANITIZE
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGILL, on_signal);
#endif

  eph_heap_set_error_handler(h, on_heap_error, fz);
  eph_observer obs = {.data = fz, .on_collect = on_collect, .on_gc_end = on_gc_end};
  if (mode.observe_alloc) obs.on_alloc = on_alloc;
  eph_heap_set_observer(h, &obs);

  fz_rng_seed(&fz->rng, fz->seed);
  fz_model_init(&fz->m);
  for (size_t k = 0; k < FZ_NKINDS; k++) {
    fz->cls[k] = eph_class_register(h, fz_kinds[k].name, fz_kinds[k].format);
    if (!fz->cls[k]) fz_fail(fz, "eph_class_register(%s): %s", fz_kinds[k].name, eph_heap_error(h));
  }

  /* roots: one bottom frame of locals, and globals (all registered at first) */
  size_t base = eph_roots_height(h);
  for (size_t i = 0; i < FZ_NLOCALS; i++) {
    fz->locals[i] = EPH_NIL;
    eph_root_push(h, &fz->locals[i]);
  }
  fz->globals = calloc(FZ_NGLOBALS, sizeof *fz->globals);
  if (!fz->globals) fz_xrealloc(NULL, SIZE_MAX);
  for (size_t g = 0; g < FZ_NGLOBALS; g++) {
    if (eph_global_root_add(h, &fz->globals[g]) != EPH_OK) fz_fail(fz, "eph_global_root_add failed");
    fz->m.global_on[g] = true;
  }
  fz_ops_init(fz);

  /* the run */
  double t0 = now_s();
  for (fz->op = 0; fz->op < fz->nops; fz->op++) {
    size_t height = eph_roots_height(h);
    fz_op_step(fz);
    if (eph_roots_height(h) != height)
      fz_fail(fz, "fuzzer bug: the shadow stack is %zu high after the op, %zu before", eph_roots_height(h), height);
    if (fz->gcs_seen != fz->gcs_checked)
      fz_check(fz, "check after a collection", true);
    else if (fz->expect_exact || (fz->op + 1) % mode.check_every == 0)
      fz_check(fz, "periodic check", fz->expect_exact || (fz->op + 1) % mode.verify_every == 0);
    else if (fz->m.records > 2 * mode.max_live_objs + 4000)
      fz_walk(fz, false, true); /* forget garbage records, recompute pressure */
  }

  /* closing: a full GC must leave exactly the live bytes; with no roots, nothing */
  fz->in_final = true;
  if (eph_collect(h, EPH_GC_FULL) != EPH_OK) fz_fail(fz, "final eph_collect(full): %s", eph_heap_error(h));
  fz->expect_exact = true;
  fz_check(fz, "final full GC", true);
  size_t final_live = fz->m.live_objs;
  for (size_t r = 0; r < FZ_NROOTS; r++) {
    if (r < FZ_NLOCALS)
      fz->locals[r] = EPH_NIL;
    else
      fz->globals[r - FZ_NLOCALS] = EPH_NIL;
    fz->m.roots[r] = (fz_mval)EPH_NIL;
  }
  if (eph_collect(h, EPH_GC_FULL) != EPH_OK) fz_fail(fz, "final eph_collect(full): %s", eph_heap_error(h));
  fz->expect_exact = true;
  fz_check(fz, "full GC with every root nil", true);
  double secs = now_s() - t0;

  const fz_counters *c = &fz->c;
  printf("ok seed=%" PRIu64 " mode=%s ops=%" PRIu64 ":", fz->seed, mode.name, fz->nops);
  printf(" %" PRIu64 " scavenges, %" PRIu64 " full GCs (explicit: %" PRIu64 " and %" PRIu64 ");", c->scavenges, c->full_gcs,
         c->explicit_scavenges, c->explicit_fulls);
  printf(" %" PRIu64 " checks (%" PRIu64 " exact), %" PRIu64 " objects checked, %" PRIu64 " eph_gc_fate answers checked;",
         c->checks, c->exact_checks, c->objects_checked, fz->m.fate_checked);
  printf(" %" PRIu64 " allocations (%" PRIu64 " pretenured, %" PRIu64 " large, %" PRIu64 " more in on_alloc, %.1f MiB),",
         c->allocs, c->allocs_old, c->allocs_large, c->nested_allocs, (double)c->bytes_allocated / (1 << 20));
  printf(" %" PRIu64 " stores (%" PRIu64 " old->young);", c->stores, c->old_young_stores);
  printf(" live objects: mean %" PRIu64 ", peak %zu (%zu bytes), %zu at the end; %.2fs\n",
         c->checks ? c->sum_live_objs / c->checks : 0, c->max_live_objs, c->max_live_bytes, final_live, secs);
  if (fz->verbose) {
    for (size_t i = 0; i < fz_op_count(); i++) fprintf(stderr, "  %-22s %" PRIu64 "\n", fz_op_name(i), fz->op_counts[i]);
    eph_heap_stats_print(h, stderr);
  }

  g_fz = NULL;
  eph_roots_reset(h, base);
  for (size_t g = 0; g < FZ_NGLOBALS; g++)
    if (fz->m.global_on[g]) eph_global_root_remove(h, &fz->globals[g]);
  eph_heap_free(h);
  free(fz->globals);
  free(fz->op_counts);
  fz_model_free(&fz->m);
  return 0;
}
