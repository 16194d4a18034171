/*
 * internal.h — what the files of the runtime adapter core share and
 * adapters do not call (adapter.h is theirs).
 */
#ifndef EPH_RUNTIME_INTERNAL_H
#define EPH_RUNTIME_INTERNAL_H

#include "runtime/adapter.h"

/* clock.c: starts the tables with a reading at byte 0 (rt_session_open);
 * fails the profile (s->error) when out of memory, as the other calls do. */
void rt_clock_init(rt_session *s);
void rt_clock_free(rt_session *s);

#endif
