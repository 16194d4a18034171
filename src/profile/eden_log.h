/*
 * eden_log.h — what the births of an eden walk count from (eden_births.h):
 * the clock when eden was last empty and the old-space allocations made
 * since.  Each mode that walks eden keeps one: gc mode (gc_eden.c) and
 * finalization mode's arming in runs (mode_finalization.c).
 */
#ifndef EPHEMERA_PROFILE_EDEN_LOG_H
#define EPHEMERA_PROFILE_EDEN_LOG_H

#include <stddef.h>
#include <stdint.h>

/* An old-space allocation made with eden's top at `at`, `bytes` after the
 * clock when eden was last empty. */
struct old_alloc {
  uintptr_t at;
  uint64_t bytes;
};

typedef struct eden_log {
  uint64_t eden_clock; /* the clock when eden was last empty */
  struct old_alloc *old_allocs;
  size_t nold_allocs, old_allocs_cap;
} eden_log;

#endif
