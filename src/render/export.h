/*
 * export.h — a profile in other tools' formats: pprof (go tool pprof,
 * speedscope, Pyroscope) and the Chrome trace-event JSON (Perfetto).
 * Layer: renderers, over the analysis (spacetime.h, timeline.h) and the
 * format; the CLI only parses arguments and calls these.
 */
#ifndef EPH_EXPORT_H
#define EPH_EXPORT_H

#include "ephemera/base.h"
#include "ephemera/format.h"
#include "analysis/spacetime.h"
#include "analysis/timeline.h"

/*
 * Writes s as a gzip-compressed pprof Profile message to path
 * (docs/viewing.md): sample types objects, bytes, space_time (bytes x
 * lifetime in bytes allocated), space_time_wall (bytes x lifetime in
 * byte-microseconds) and alive_at_exit (bytes); one sample per (site or
 * stack, class, lifetime bucket) with labels "class" and "lifetime";
 * locations and functions from the profile's sites and, where recorded,
 * its call stacks.  Sampled records are weighted.  Returns EPH_OK, or an
 * error in err naming path (cannot create or write it, out of memory).
 */
eph_status eph_export_pprof(const eph_spacetime *s, const char *path, eph_error *err);

/*
 * Writes the heap timeline t of profile p as a Chrome trace-event JSON
 * document to path (Perfetto's UI and chrome://tracing open it): one
 * complete event ("ph":"X") per collection on a "collector" track, with
 * its kind, index and bytes in args; counter events ("ph":"C") "heap"
 * (used, committed bytes) at each collection's start and end and
 * "allocated" (bytes allocated, the GC clock).  Times in microseconds
 * since the run started.  Returns EPH_OK, or an error in err naming path.
 */
eph_status eph_export_chrome_trace(const eph_file *p, const eph_timeline *t, const char *path, eph_error *err);

#endif
