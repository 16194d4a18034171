/*
 * signals.c — SIGINT and SIGTERM finish the profile (profile.h,
 * eph_profile_stop_on_signals).  The handler (src/sampling/sigstop.c) only
 * records the signal; the heap's poll (observer.h, eph_heap_set_poll) calls
 * on_signal at its next safe point, outside any collection, where
 * eph_profile_stop can run its last full GC, write the censored records
 * and the closing chunk; releasing the signals then ends the process by
 * the signal.
 */
#include <stdio.h>

#include "profiler.h"
#include "sampling/sigstop.h"

static void on_signal(void *data, eph_heap *h) {
  (void)data;
  eph_error err;
  /* Returns only if another holder still waits for its own safe point. */
  if (eph_profile_stop(h, NULL, &err) != EPH_OK) fprintf(stderr, "ephemera: %s\n", err.message);
}

eph_status prof_signals_attach(eph_profiler *p, eph_error *err) {
  if (p->on_signals) return EPH_OK;
  char msg[200];
  if (!ephs_sigstop_hold(true, msg, sizeof msg)) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s", msg);
    return EPH_ERR_INVALID;
  }
  p->on_signals = true;
  eph_heap_set_poll(p->h, &ephs_sigstop_signal, on_signal, p);
  return EPH_OK;
}

bool prof_signals_detach(eph_profiler *p) {
  if (!p->on_signals) return false;
  p->on_signals = false;
  eph_heap_set_poll(p->h, NULL, NULL, NULL); /* the signals stay held until the file is closed */
  return true;
}

void prof_signals_release(const char *out, const eph_profile_stats *final) {
  int sig = ephs_sigstop_pending();
  if (sig)
    fprintf(stderr, "ephemera: %s: profile %s finished: %llu records (%llu deaths, %llu censored)\n",
            ephs_sigstop_name(sig), out, (unsigned long long)final->samples, (unsigned long long)final->deaths,
            (unsigned long long)final->censored);
  ephs_sigstop_release();
}
