/*
 * export.h — a profile in other tools' formats: pprof (go tool pprof,
 * speedscope, Pyroscope) and the Chrome trace-event JSON (Perfetto).
 * Layer: renderers, over the analysis (spacetime.h, timeline.h) and the
 * format; the CLI only parses arguments and calls these.
 */
#ifndef EPH_EXPORT_H
#define EPH_EXPORT_H

#include "ephemera/base.h"
#include "spacetime.h"

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

#endif
