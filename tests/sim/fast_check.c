/*
 * fast_check.c — spur's fast path (src/sim/spur.c) against the replay of
 * every allocation and store (src/sim/spur_replay.c): for each GC setting,
 * both simulate INPUT and every figure of the result and of every
 * collection's event must be identical, bit for bit.  Also fails if the
 * fast path does not apply to a setting (it would compare the replay with
 * itself).  Each setting runs twice: on the trace, and on the same profile
 * without its events (a lifetimes-only input, no object graph).  The
 * state arrays the fast path leaves cached for the next setting must be
 * all zero after each.
 *
 *   sim-fast TRACE SPEC...
 *
 * Prints one line per setting with both times; exits 1 on any difference.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ephemera/format.h"
#include "ephemera/sim.h"
#include "sim_run.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define SAME(f)                                                                                        \
  if (a->f != b->f) {                                                                                  \
    printf("  %s: fast %.17g, replay %.17g\n", #f, (double)a->f, (double)b->f);                        \
    same = false;                                                                                      \
  }

static bool same_results(const eph_sim_result *a, const eph_sim_result *b) {
  bool same = true;
  SAME(scavenges) SAME(full_gcs) SAME(bytes_allocated) SAME(bytes_allocated_old) SAME(bytes_copied)
  SAME(bytes_promoted) SAME(bytes_overflowed) SAME(bytes_marked) SAME(bytes_compacted) SAME(remembered)
  SAME(peak_committed) SAME(peak_used) SAME(heap_bytes) SAME(mark_cons) SAME(space_time) SAME(collection_mib)
  SAME(remembered_scanned) SAME(objects_moved) SAME(objects_far) SAME(bytes_far) SAME(slots_scanned) SAME(remembered_slots) SAME(slots_traced) SAME(exhausted) SAME(nevents)
  if (!same) return false;
  for (size_t i = 0; i < a->nevents; i++) {
    const eph_sim_event *x = &a->events[i], *y = &b->events[i];
    if (x->kind != y->kind || x->allocated != y->allocated || x->copied != y->copied || x->promoted != y->promoted ||
        x->marked != y->marked || x->compacted != y->compacted || x->remembered != y->remembered ||
        x->heap_after != y->heap_after || x->committed != y->committed) {
      printf("  collection %zu differs (at clock %llu fast, %llu replay)\n", i, (unsigned long long)x->allocated,
             (unsigned long long)y->allocated);
      return false;
    }
  }
  return true;
}

/* Both paths over one input and setting; false if they differ. */
static bool compare(const eph_sim_input *in, const char *label, const char *spec) {
  eph_sim_config cfg;
  eph_error err;
  eph_sim_config_init(&cfg);
  cfg.keep_events = true;
  if (eph_gc_params_parse(&cfg.params, spec, &err) != EPH_OK) {
    printf("%s: %s\n", spec, err.message);
    return false;
  }
  if (!sim_spur_fast_applies(in, &cfg, in->death)) {
    printf("%-9s %-45s the fast path does not apply\n", label, spec);
    return false;
  }
  eph_sim_result fast, replay;
  memset(&fast, 0, sizeof fast);
  memset(&replay, 0, sizeof replay);
  double t0 = now();
  eph_status s1 = sim_spur(in, &cfg, in->death, &fast, &err);
  double t1 = now();
  if (s1 == EPH_OK && !sim_spur_scratch_clean(in)) {
    printf("%-9s %-45s the fast path left its state arrays dirty for the next run\n", label, spec);
    eph_sim_result_free(&fast);
    return false;
  }
  eph_status s2 = s1 == EPH_OK ? sim_spur_replay(in, &cfg, in->death, &replay, &err) : s1;
  double t2 = now();
  bool same = s1 == EPH_OK && s2 == EPH_OK && same_results(&fast, &replay);
  if (s1 != EPH_OK || s2 != EPH_OK) printf("%s: %s\n", spec, err.message);
  printf("%-9s %-45s %s  %llu scavenges %llu full%s  fast %.2f ms  replay %.2f ms\n", label, spec,
         same ? "same" : "DIFFERENT", (unsigned long long)fast.scavenges, (unsigned long long)fast.full_gcs,
         fast.exhausted ? " (exhausted)" : "", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
  eph_sim_result_free(&fast);
  eph_sim_result_free(&replay);
  return same;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: sim-fast TRACE SPEC...\n");
    return 2;
  }
  eph_file *p;
  eph_error err;
  eph_sim_input *trace, *lifetimes;
  if (eph_file_load(argv[1], &p, &err) != EPH_OK || eph_sim_input_from_profile(p, &trace, &err) != EPH_OK) {
    fprintf(stderr, "sim-fast: %s\n", err.message);
    return 1;
  }
  if (eph_sim_input_kind_of(trace) != EPH_SIM_INPUT_TRACE) {
    fprintf(stderr, "sim-fast: %s is not a trace\n", argv[1]);
    return 1;
  }
  p->nevents = 0; /* the same profile, lifetimes only */
  if (eph_sim_input_from_profile(p, &lifetimes, &err) != EPH_OK) {
    fprintf(stderr, "sim-fast: %s\n", err.message);
    return 1;
  }
  int bad = 0;
  for (int i = 2; i < argc; i++) {
    if (!compare(trace, "trace", argv[i])) bad = 1;
    if (!compare(lifetimes, "lifetimes", argv[i])) bad = 1;
  }
  eph_sim_input_free(trace);
  eph_sim_input_free(lifetimes);
  eph_file_free(p);
  return bad;
}
