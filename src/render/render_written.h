/*
 * render_written.h — the one line a command prints after writing a file
 * of results: `ephemera merlin -o OUT`, `ephemera export`.
 * Layer: renderers (docs/architecture.md).  As render.h's: they write to a
 * FILE the caller owns, and a failed write leaves its error flag set.
 */
#ifndef EPH_RENDER_WRITTEN_H
#define EPH_RENDER_WRITTEN_H

#include <stdio.h>

#include "analysis/spacetime.h"
#include "analysis/timeline.h"
#include "trace/trace.h"

/* "wrote OUT: N records (C censored) in S s": offline Merlin's profile. */
void eph_render_merlin_written(FILE *out, const char *path, const eph_trace_merlin *m, double seconds);
/* "wrote OUT (N samples from M records)": the pprof profile of s. */
void eph_render_pprof_written(FILE *out, const char *path, const eph_spacetime *s);
/* "wrote OUT (N collections)": the Chrome trace of t. */
void eph_render_chrome_written(FILE *out, const char *path, const eph_timeline *t);

#endif
