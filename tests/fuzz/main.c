/*
 * tests/fuzz/main.c — eph-fuzz-heap: a seeded, reproducible random mutator
 * checked against a shadow model after every collection.
 *
 *   eph-fuzz-heap [--seed S] [--ops N] [--mode normal|stress|small|merlin]
 *                 [--gc SPEC] [--check-every K] [--ephemerons] [--merlin-check] [--verbose]
 *
 * --ephemerons adds ephemeron operations and a finaliser that checks (and
 * sometimes resurrects); the model predicts every explicit full GC's
 * mournings exactly and checks every mourning against its reachability.
 * --merlin-check runs the same program twice, profiled with mode=merlin and
 * mode=brute, and compares the two profiles object by object.
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

#include "ephemera/ephemeron.h"
#include "ephemera/profile.h"
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
    /* --merlin-check: small live sets and objects (brute force runs a full GC
       before every allocation); the same decisions whenever collections run. */
    {.name = "merlin",
     .gc_spec = "eden=128K,headroom=128K,shrink=512K",
     .default_ops = 3000,
     .max_live_objs = 250,
     .max_live_bytes = 128u << 10,
     .check_every = 10,
     .verify_every = 50,
     .large_min = 16u << 10,
     .large_max = 48u << 10,
     .medium_max = 8u << 10,
     .long_chain_max = 0,
     .w_large = 3,
     .w_scavenge = 30,
     .w_full = 15,
     .w_set_params = 3},
};
#define FZ_NMODES (sizeof fz_modes / sizeof fz_modes[0])

/* --- failure ------------------------------------------------------------------- */

static fuzz *g_fz; /* for the crash handlers */

static void print_replay(FILE *out, const fuzz *fz) {
  fprintf(out, "replay: %s --seed %" PRIu64 " --mode %s --ops %" PRIu64, fz->argv0, fz->seed, fz->mode->name,
          fz->in_final ? fz->nops : fz->op + 1);
  if (fz->gc_extra) fprintf(out, " --gc '%s'", fz->gc_extra);
  if (fz->check_every_opt) fprintf(out, " --check-every %" PRIu64, fz->check_every_opt);
  if (fz->ephemerons) fprintf(out, " --ephemerons");
  if (fz->run_name) fprintf(out, " --merlin-check");
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
  const char *run = fz->run_name ? fz->run_name : "";
  if (fz->in_final)
    printf("FAIL seed=%" PRIu64 " op=%" PRIu64 "%s (final check): %s\n", fz->seed, fz->op, run, msg);
  else
    printf("FAIL seed=%" PRIu64 " op=%" PRIu64 "%s: %s\n", fz->seed, fz->op, run, msg);
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
    fz->in_on_alloc = true; /* a finaliser may run in there: its allocations are not observed either */
    if (eph_alloc_bytes(h, fz->cls[FZ_BYTES], n) == EPH_NIL) fz_fail(fz, "allocation inside on_alloc failed: %s", eph_heap_error(h));
    fz->in_on_alloc = false;
    fz->c.nested_allocs++;
    fz->c.bytes_allocated += fz_obj_bytes(n) + fz->trailer_bytes;
  }
}

static void on_collect(void *data, eph_heap *h, eph_gc_kind kind) {
  (void)h;
  fuzz *fz = data;
  fz_fate_on_collect(fz, kind);
  /* What the model can reach right now, ephemeron rules applied, before any
     mourning: a key in there must not be mourned by this collection. */
  if (fz->ephemerons) fz_eph_trace(fz, fz->gcs_seen + 1, NULL, NULL);
}

static void on_gc_end(void *data, eph_heap *h, const eph_gc_event *ev) {
  fuzz *fz = data;
  fz->gcs_seen++;
  for (uint64_t i = 0; i < ev->ephemerons_mourned; i++) { /* one finaliser call each, in this order */
    if (fz->tag_len == fz->tag_cap) {
      fz->tag_cap = fz->tag_cap ? 2 * fz->tag_cap : 256;
      fz->tags = fz_xrealloc(fz->tags, fz->tag_cap * sizeof *fz->tags);
    }
    fz->tags[fz->tag_len++] = (fz_mourn_tag){fz->gcs_seen, ev->kind};
  }
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
          "usage: eph-fuzz-heap [--seed S] [--ops N] [--mode normal|stress|small|merlin]\n"
          "                     [--gc KEY=VAL,...] [--check-every K] [--ephemerons] [--merlin-check] [--verbose]\n"
          "  --seed S         PRNG seed (default 1); the same options replay the same run\n"
          "  --ops N          number of operations (default: 250000 normal, 100000 small, 50000 stress)\n"
          "  --mode M         normal: default GC parameters; small: eden=64K,headroom=64K,shrink=128K;\n"
          "                   stress: stress=1,stress_full=50,verify=1\n"
          "  --gc SPEC        extra GC parameters on top of the mode's (EPHEMERA_GC is ignored)\n"
          "  --check-every K  model check and eph_heap_verify every K ops (always after a collection)\n"
          "  --ephemerons     also create ephemerons, drop their keys, finalise (and resurrect) them\n"
          "  --merlin-check   run the program twice, profiled with mode=merlin and mode=brute, and\n"
          "                   compare every object's death (default mode: merlin; no ephemerons)\n"
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

/* --- one run ------------------------------------------------------------------------ */

/*
 * Runs the program of fz's options on a fresh heap.  With profile_mode >= 0
 * (--merlin-check) the profiler watches the heap instead of the fuzzer's
 * observer, writing to profile_out.
 */
static int run(fuzz *fz, int profile_mode, const char *profile_out) {
  const fz_mode *mode = fz->mode;
  /* parameters: defaults, the mode's, then --gc */
  eph_error err;
  eph_gc_params_init(&fz->params);
  if (eph_gc_params_parse(&fz->params, mode->gc_spec, &err) != EPH_OK ||
      (fz->gc_extra && eph_gc_params_parse(&fz->params, fz->gc_extra, &err) != EPH_OK)) {
    fprintf(stderr, "eph-fuzz-heap: bad GC parameters: %s\n", err.message);
    return 2;
  }
  eph_profile_spec spec;
  if (profile_mode >= 0) {
    eph_profile_spec_init(&spec);
    spec.mode = (eph_profile_mode)profile_mode;
    spec.granule = 0; /* brute: a full GC before every allocation */
    snprintf(spec.out, sizeof spec.out, "%s", profile_out);
    eph_profile_prepare_params(&spec, &fz->params);
  }
  if (eph_heap_new(&fz->params, &fz->h, &err) != EPH_OK) {
    fprintf(stderr, "eph-fuzz-heap: eph_heap_new: %s\n", err.message);
    return 2;
  }
  eph_heap *h = fz->h;
  fz->trailer_bytes = fz->params.trailer_words * sizeof(uint64_t);
  fz->observer_verify = fz->params.verify == 0 && profile_mode < 0;

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
  if (profile_mode >= 0) {
    if (eph_profile_start(h, &spec, NULL, 0, &err) != EPH_OK) fz_fail(fz, "eph_profile_start: %s", err.message);
    fz->deterministic = true;
  } else {
    eph_observer obs = {.data = fz, .on_collect = on_collect, .on_gc_end = on_gc_end};
    if (mode->observe_alloc) obs.on_alloc = on_alloc;
    eph_heap_set_observer(h, &obs);
    fz->observed = true;
  }

  fz_rng_seed(&fz->rng, fz->seed);
  fz_model_init(&fz->m);
  for (size_t k = 0; k < FZ_NKINDS; k++) {
    fz->cls[k] = eph_class_register(h, fz_kinds[k].name, fz_kinds[k].format);
    if (!fz->cls[k]) fz_fail(fz, "eph_class_register(%s): %s", fz_kinds[k].name, eph_heap_error(h));
  }
  if (fz->ephemerons) {
    fz->fin_explicit = eph_finalizer_register(h, fz_finalizer, fz);
    fz->fin_class = eph_finalizer_register(h, fz_finalizer, fz);
    if (!fz->fin_explicit || !fz->fin_class || eph_class_set_finalizer(h, fz->cls[FZ_EPH], fz->fin_class) != EPH_OK ||
        eph_class_set_compact(h, fz->cls[FZ_CEPH]) != EPH_OK ||
        eph_class_set_finalizer(h, fz->cls[FZ_CEPH], fz->fin_class) != EPH_OK)
      fz_fail(fz, "registering the finaliser: %s", eph_heap_error(h));
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
    else if (fz->expect_exact || (fz->op + 1) % mode->check_every == 0)
      fz_check(fz, "periodic check", fz->expect_exact || (fz->op + 1) % mode->verify_every == 0);
    else if (fz->m.records > 2 * mode->max_live_objs + 4000)
      fz_walk(fz, false, true); /* forget garbage records, recompute pressure */
  }

  /* closing: a full GC must leave exactly the live bytes; with no roots, nothing.
     With ephemerons, collect until a full GC mourns nothing (finalisers may
     keep mourning and allocating for a few rounds). */
  fz->in_final = true;
  for (int round = 0;; round++) {
    fz->fin_in_op = false;
    if (eph_collect(h, EPH_GC_FULL) != EPH_OK) fz_fail(fz, "final eph_collect(full): %s", eph_heap_error(h));
    fz->expect_exact = true;
    bool ran = fz->fin_in_op;
    fz_check(fz, "final full GC", true);
    if (!ran) break;
    if (round == 20) fz_fail(fz, "final full GCs: finalisers still run after 20 rounds");
  }
  size_t final_live = fz->m.live_objs;
  /* Pinned ephemerons are roots: dropped (eph_pinned_drop), the full GC
   * below frees them without mourning them, with everything else. */
  if (fz->m.npinned) {
    if (eph_pinned_drop(h, fz->cls[FZ_EPH]) != EPH_OK || eph_pinned_drop(h, fz->cls[FZ_CEPH]) != EPH_OK)
      fz_fail(fz, "eph_pinned_drop: %s", eph_heap_error(h));
    fz->m.npinned = 0;
  }
  for (size_t r = 0; r < FZ_NROOTS; r++) {
    if (r < FZ_NLOCALS)
      fz->locals[r] = EPH_NIL;
    else
      fz->globals[r - FZ_NLOCALS] = EPH_NIL;
    fz->m.roots[r] = (fz_mval)EPH_NIL;
  }
  uint64_t fin_before = fz->c.eph_finalised;
  fz->fin_in_op = false;
  if (eph_collect(h, EPH_GC_FULL) != EPH_OK) fz_fail(fz, "final eph_collect(full): %s", eph_heap_error(h));
  if (fz->c.eph_finalised != fin_before)
    fz_fail(fz, "full GC with every root nil ran %" PRIu64 " finalisers: unreachable ephemerons must be reclaimed silently (rule 4)",
            fz->c.eph_finalised - fin_before);
  fz->expect_exact = true;
  fz_check(fz, "full GC with every root nil", true);
  double secs = now_s() - t0;

  const fz_counters *c = &fz->c;
  printf("ok seed=%" PRIu64 " mode=%s%s%s ops=%" PRIu64 ":", fz->seed, mode->name, fz->ephemerons ? " ephemerons" : "",
         fz->run_name ? fz->run_name : "", fz->nops);
  printf(" %" PRIu64 " scavenges, %" PRIu64 " full GCs (explicit: %" PRIu64 " and %" PRIu64 ");", c->scavenges, c->full_gcs,
         c->explicit_scavenges, c->explicit_fulls);
  printf(" %" PRIu64 " checks (%" PRIu64 " exact), %" PRIu64 " objects checked, %" PRIu64 " eph_gc_fate answers checked;",
         c->checks, c->exact_checks, c->objects_checked, fz->m.fate_checked);
  printf(" %" PRIu64 " allocations (%" PRIu64 " pretenured, %" PRIu64 " large, %" PRIu64 " more in on_alloc, %.1f MiB),",
         c->allocs, c->allocs_old, c->allocs_large, c->nested_allocs, (double)c->bytes_allocated / (1 << 20));
  printf(" %" PRIu64 " stores (%" PRIu64 " old->young);", c->stores, c->old_young_stores);
  if (fz->ephemerons)
    printf(" ephemerons: %" PRIu64 " made (%" PRIu64 " pretenured, %" PRIu64 " pinned, %" PRIu64 " refused pinned, %" PRIu64
           " immediate keys, %" PRIu64 " placed), %" PRIu64
           " finalised (%" PRIu64 " unknown to the model: rule 4's caveat; %" PRIu64 " not model-reachable), %" PRIu64
           " resurrected, %" PRIu64 " finaliser allocations, %" PRIu64 " mournings predicted exactly in %" PRIu64
           " explicit full GCs, %" PRIu64 " model traces;",
           c->eph_created, c->eph_pretenured, c->eph_pinned, c->eph_pinned_refused, c->eph_imm_keys, c->eph_placed, c->eph_finalised, c->eph_caveat,
           c->eph_fin_garbage_known, c->eph_resurrected, c->eph_fin_allocs, c->eph_predicted, c->eph_exact_checks,
           c->eph_reach_walks);
  printf(" live objects: mean %" PRIu64 ", peak %zu (%zu bytes), %zu at the end; %.2fs\n",
         c->checks ? c->sum_live_objs / c->checks : 0, c->max_live_objs, c->max_live_bytes, final_live, secs);
  if (fz->verbose) {
    for (size_t i = 0; i < fz_op_count(); i++) fprintf(stderr, "  %-22s %" PRIu64 "\n", fz_op_name(i), fz->op_counts[i]);
    eph_heap_stats_print(h, stderr);
  }

  if (profile_mode >= 0) {
    eph_profile_stats ps;
    if (eph_profile_stop(h, &ps, &err) != EPH_OK) fz_fail(fz, "eph_profile_stop: %s", err.message);
  }
  g_fz = NULL;
  eph_roots_reset(h, base);
  for (size_t g = 0; g < FZ_NGLOBALS; g++)
    if (fz->m.global_on[g]) eph_global_root_remove(h, &fz->globals[g]);
  eph_heap_free(h);
  free(fz->globals);
  free(fz->op_counts);
  free(fz->tags);
  fz_model_free(&fz->m);
  return 0;
}

/* --- --merlin-check: compare the two profiles ------------------------------------------ */

static int cmp_record(const void *a, const void *b) {
  const eph_record *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static const char *death_name(uint8_t k) {
  static const char *names[] = {"?", "finalized", "scavenge", "full-gc", "censored", "exact", "freed"};
  return k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* Loads both files; every object must have the same record (size, class, death time and kind). */
static int compare_profiles(const fuzz *fz, const char *merlin_path, const char *brute_path) {
  eph_file *p[2];
  eph_error err;
  const char *paths[2] = {merlin_path, brute_path};
  for (int i = 0; i < 2; i++) {
    if (eph_file_load(paths[i], &p[i], &err) != EPH_OK) {
      printf("FAIL seed=%" PRIu64 " merlin-check: eph_file_load(%s): %s\n", fz->seed, paths[i], err.message);
      return 1;
    }
    qsort(p[i]->records, p[i]->nrecords, sizeof *p[i]->records, cmp_record);
  }
  size_t n = p[0]->nrecords, bad = 0;
  int rc = 0;
  if (!p[0]->complete || !p[1]->complete) {
    printf("FAIL seed=%" PRIu64 " merlin-check: a profile is incomplete (merlin %d, brute %d)\n", fz->seed, p[0]->complete,
           p[1]->complete);
    rc = 1;
  }
  if (p[0]->nrecords != p[1]->nrecords) {
    printf("FAIL seed=%" PRIu64 " merlin-check: merlin wrote %zu records, brute force %zu\n", fz->seed, p[0]->nrecords,
           p[1]->nrecords);
    rc = 1;
    if (p[1]->nrecords < n) n = p[1]->nrecords;
  }
  uint64_t censored = 0;
  for (size_t i = 0; i < n; i++) {
    const eph_record *m = &p[0]->records[i], *b = &p[1]->records[i];
    if (m->death_kind == EPH_DEATH_CENSORED) censored++;
    if (m->id == b->id && m->size == b->size && m->death.bytes == b->death.bytes && m->death_kind == b->death_kind &&
        m->class_id == b->class_id && (i == 0 || m->id != p[0]->records[i - 1].id))
      continue;
    if (bad++ < 10) {
      const char *cls = m->class_id < p[0]->nclasses && p[0]->class_names[m->class_id] ? p[0]->class_names[m->class_id] : "?";
      printf("FAIL seed=%" PRIu64 " merlin-check: object born at %" PRIu64 " (%s, %" PRIu64 " bytes): merlin says death %" PRIu64
             " (%s), brute force %" PRIu64 " (%s) [brute record id %" PRIu64 ", %" PRIu64 " bytes]\n",
             fz->seed, m->id, cls, m->size, m->death.bytes, death_name(m->death_kind), b->death.bytes,
             death_name(b->death_kind), b->id, b->size);
    }
  }
  if (bad) {
    printf("FAIL seed=%" PRIu64 " merlin-check: %zu of %zu objects differ (profiles kept: %s %s)\n", fz->seed, bad, n,
           merlin_path, brute_path);
    rc = 1;
  }
  if (!rc)
    printf("ok seed=%" PRIu64 " merlin-check: %zu objects, identical death times and kinds in merlin and brute force (%" PRIu64
           " censored)\n",
           fz->seed, n, censored);
  eph_file_free(p[0]);
  eph_file_free(p[1]);
  return rc;
}

/* --- main ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  static fuzz fzs;
  fuzz *fz = &fzs;
  fz->argv0 = argv[0];
  fz->seed = 1;
  fz->mode = &fz_modes[0];
  bool ops_given = false, mode_given = false, merlin_check = false;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
      fz->verbose = true;
    } else if (!strcmp(a, "--ephemerons")) {
      fz->ephemerons = true;
    } else if (!strcmp(a, "--merlin-check")) {
      merlin_check = true;
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
      mode_given = true;
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
  if (merlin_check && fz->ephemerons) {
    fprintf(stderr, "eph-fuzz-heap: --merlin-check models strong reachability only: no --ephemerons\n");
    return 2;
  }
  if (merlin_check && !mode_given) fz->mode = &fz_modes[FZ_NMODES - 1];
  if (!ops_given) fz->nops = fz->mode->default_ops;
  static fz_mode mode;
  mode = *fz->mode;
  if (fz->check_every_opt) mode.check_every = mode.verify_every = (uint32_t)fz->check_every_opt;
  if (merlin_check) mode.observe_alloc = false; /* the profiler owns the observer */
  fz->mode = &mode;

  if (!merlin_check) return run(fz, -1, NULL);

  /* --merlin-check: the same program twice, then the two profiles */
  const char *tmp = getenv("TMPDIR");
  char paths[2][1024];
  static const char *names[2] = {" (merlin run)", " (brute run)"};
  static const int modes[2] = {EPH_MODE_MERLIN, EPH_MODE_BRUTE};
  fuzz saved = *fz;
  for (int r = 0; r < 2; r++) {
    snprintf(paths[r], sizeof paths[r], "%s/eph-fuzz-%ld-seed%" PRIu64 "-%s.eph", tmp && *tmp ? tmp : "/tmp", (long)getpid(),
             fz->seed, r ? "brute" : "merlin");
    *fz = saved;
    fz->run_name = names[r];
    int rc = run(fz, modes[r], paths[r]);
    if (rc) return rc;
  }
  *fz = saved;
  int rc = compare_profiles(fz, paths[0], paths[1]);
  if (rc) {
    printf("replay: %s --merlin-check --seed %" PRIu64 " --mode %s --ops %" PRIu64 "%s%s%s\n", argv[0], fz->seed, mode.name,
           fz->nops, fz->gc_extra ? " --gc '" : "", fz->gc_extra ? fz->gc_extra : "", fz->gc_extra ? "'" : "");
    return 1;
  }
  remove(paths[0]);
  remove(paths[1]);
  return 0;
}
