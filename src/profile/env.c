/*
 * env.c — profiling any program from the environment: EPHEMERA_PROFILE=SPEC
 * profiles every heap made with eph_heap_new(NULL, ...).  The profiler
 * registers a heap-creation hook (observer.h) when it is loaded, so the
 * heap never calls it by name; the profile is written when the heap is
 * freed (the observer's on_heap_free).
 *
 * A static link keeps this file only if something names it: the library's
 * users link with -Wl,-u,eph_profile_env_hook (CMake's INTERFACE link
 * option, ephemera.pc's Libs).
 */
#include <stdlib.h>

#include "profiler.h"

void eph_profile_prepare_params(const eph_profile_spec *s, eph_gc_params *p) {
  const prof_mode *mode = prof_mode_of(s->mode);
  if (mode && mode->trailer_words) p->trailer_words = mode->trailer_words;
}

/* The spec from EPHEMERA_PROFILE; false when it is unset or empty. */
static bool env_spec(eph_profile_spec *spec, eph_status *st, eph_error *err) {
  const char *text = getenv("EPHEMERA_PROFILE");
  *st = EPH_OK;
  if (!text || !*text) return false;
  eph_profile_spec_init(spec);
  eph_error perr;
  if (eph_profile_spec_parse(spec, text, &perr) != EPH_OK) {
    eph_error_fill(err, EPH_ERR_INVALID, "EPHEMERA_PROFILE: %s", perr.message);
    *st = EPH_ERR_INVALID;
  }
  return true;
}

static eph_status env_prepare(eph_gc_params *p, eph_error *err) {
  eph_profile_spec spec;
  eph_status st;
  if (env_spec(&spec, &st, err) && st == EPH_OK) eph_profile_prepare_params(&spec, p);
  return st;
}

static eph_status env_attach(eph_heap *h, eph_error *err) {
  eph_profile_spec spec;
  eph_status st;
  if (!env_spec(&spec, &st, err) || st != EPH_OK) return st;
  eph_error perr;
  st = eph_profile_start(h, &spec, NULL, 0, &perr);
  if (st != EPH_OK) eph_error_fill(err, st, "EPHEMERA_PROFILE: %s", perr.message);
  return st;
}

const eph_heap_create_hook eph_profile_env_hook = {env_prepare, env_attach};

__attribute__((constructor)) static void register_env_hook(void) { eph_heap_set_create_hook(&eph_profile_env_hook); }
