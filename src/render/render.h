/*
 * render.h — the renderers: an analysis (src/analysis/analysis.h), a
 * comparison or a raw .eph file written as text, CSV, JSON or HTML.
 * Layer: renderers, above analysis and format (docs/architecture.md).
 *
 * Renderers write to a FILE the caller owns; they do not flush or close
 * it, and a failed write leaves the stream's error flag set (ferror): the
 * caller checks it, and the fflush/fclose result, when it finishes the
 * stream.  Files a renderer opens itself (CSV tables or SVG plots into a
 * directory) it checks itself, as each function's comment says.
 *
 * Every string from a profile goes through the one escaper below, which
 * never writes invalid UTF-8.
 */
#ifndef EPH_RENDER_H
#define EPH_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/spacetime.h"
#include "analysis/timeline.h"
#include "ephemera/format.h"
#include "ephemera/profile.h"
#include "ephemera/tune.h"
#include "trace/trace.h"
#include "base/escape.h"
#include "workloads/workload.h"

/* --- escaping: the one escaper, src/base/escape.h (every layer uses it) ----- */

/* --- numbers as people read them (format_util.c) ------------------------------ */

/* Formats a lifetime on clock c ("1.2 MB", "35 ms", "0.04 %"); NAN as "-". */
const char *eph_fmt_life(char *buf, size_t len, double v, eph_clock c);
const char *eph_fmt_count(char *buf, size_t len, double v);
/* What a report's "run:" line says of the collector, after the bytes
 * allocated: the GC share (or, for Lua, that it is not measured) and the
 * collections in the runtime's own terms; sep goes before each clause. */
const char *eph_fmt_run_gc(char *buf, size_t len, const eph_analysis *a, const char *sep);
const char *eph_clock_name(eph_clock c);
const char *eph_clock_unit(eph_clock c);

/* Ends writing to f (closed when close, else flushed) for a command's
 * output: EPH_OK when every write succeeded, else EPH_ERR_IO with
 * "COMMAND: writing WHAT: reason" in err (format_util.c). */
eph_status eph_render_finish(FILE *f, bool close, const char *command, const char *what, eph_error *err);

/* --- the report (render_text.c, render_csv.c, render_json.c, render_html.c) --- */

/* lua: a Lua profile's collector advice (eph_tune_lua_advice_of), or NULL. */
void eph_render_text(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *lua, bool color);
/* CSV: with dir, one file per table (summary.csv, histogram.csv, classes.csv,
 * survival.csv[, heap.csv][, timeline.csv: render_timeline.c]); without, all tables on out, each after a
 * "# table" line.  Returns false with errno on a write error (a file in dir
 * that cannot be created or written, or out's error flag). */
bool eph_render_csv(FILE *out, const char *dir, const eph_analysis *a);
void eph_render_json(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *lua);
/* HTML: one self-contained page (plots inlined as SVG).  plot_dir: where the
 * SVG files also go (may be NULL).  Returns false, with errno and the path
 * in failed, when a plot file could not be written (the page is whole). */
bool eph_render_html(FILE *out, const eph_analysis *a, const char *plot_dir, char *failed, size_t failedlen);
/* The same with a Lua profile's collector advice (NULL: none), a flame graph
 * of bytes x lifetime by call stack drawn from flame (spacetime.h; NULL:
 * none), and the heap timeline (render_timeline.c). */
bool eph_render_html_with(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *lua, const eph_spacetime *flame,
                          const char *plot_dir, char *failed, size_t failedlen);
/* The heap timeline (timeline.h) as CSV: two rows per collection (its start
 * and end): time_s,event,gc_index,kind,used_bytes,committed_bytes,pause_ms,allocated_bytes. */
void eph_render_timeline_csv(FILE *out, const eph_timeline *t);

/* plot_gnuplot.c: runs gnuplot on a script; returns malloc'd SVG text or NULL
 * (and a reason in why). */
bool eph_gnuplot_available(void);
char *eph_gnuplot_svg(const char *script, const char *data, char *why, size_t whylen);
/* The same at w x h SVG pixels (eph_gnuplot_svg draws 760 x 380). */
char *eph_gnuplot_svg_sized(const char *script, const char *data, int w, int h, char *why, size_t whylen);

/* --- compare (render_compare.c) ------------------------------------------------ */

void eph_compare_text(FILE *out, const eph_compare *c);
void eph_compare_csv(FILE *out, const eph_compare *c);
void eph_compare_json(FILE *out, const eph_compare *c);
/* `compare --exact`: the calibration table and the bracket check (render_calibration.c). */
void eph_calibration_text(FILE *out, const eph_calibration *c, const eph_bracket_stats *b);
void eph_calibration_csv(FILE *out, const eph_calibration *c, const eph_bracket_stats *b);
void eph_calibration_json(FILE *out, const eph_calibration *c, const eph_bracket_stats *b);

/* --- workloads and runs (render_run.c): `ephemera workloads`, `ephemera run` --- */

/* The workload table; verbose adds each one's classes and options. */
void eph_render_workloads(FILE *out, bool verbose);
/* A run's results.  profile_path NULL: the run was not profiled (ps unused). */
void eph_render_run(FILE *out, const wl_workload *wl, const wl_result *res, const char *retain, const char *profile_path,
                    const eph_profile_stats *ps);
/* The same as one line "kv key=value ..." for scripts (ps zeros when not profiled). */
void eph_render_run_kv(FILE *out, const wl_workload *wl, const wl_result *res, const eph_profile_stats *ps);

/* --- traces (render_trace.c): `ephemera merlin`, `ephemera trace granulate` ---- */

#define EPH_RENDER_MAX_DIFFS 10 /* differences eph_render_merlin_diffs describes at most */

/* Offline Merlin's summary: objects, events replayed, time (load_seconds to read path). */
void eph_render_merlin_summary(FILE *out, const char *path, const eph_trace_merlin *m, double load_seconds);
/* eph_trace_merlin_check's result: "N objects: all agree", or n differences of
 * which the first `shown` (at most EPH_RENDER_MAX_DIFFS) are described with
 * their class and size from p's ALLOC events. */
void eph_render_merlin_diffs(FILE *out, const eph_file *p, const eph_trace_diff *diffs, size_t n, size_t shown,
                            size_t compared);
/* What eph_trace_granulate did: in granulated into path. */
void eph_render_granulate(FILE *out, const char *in, const char *path, const eph_trace_granulate_stats *s);

/* --- an .eph file as it is (render_dump.c): `ephemera dump` ------------------- */

typedef enum eph_dump_format { EPH_DUMP_TEXT, EPH_DUMP_CSV, EPH_DUMP_JSON } eph_dump_format;

typedef struct eph_dump_result {
  bool loaded;       /* the file read (false: err says why; nothing was written) */
  bool complete;     /* it has its closing chunk */
  char warning[256]; /* why it is incomplete (a truncated file still dumps) */
} eph_dump_result;

/*
 * Writes the file at path to out: EPH_DUMP_TEXT a summary (metadata,
 * tables, counts by death kind, the first head records), EPH_DUMP_CSV a
 * header and one row per record, EPH_DUMP_JSON one document.  Records are
 * never all held: the file is read once for its tables and counts, and
 * CSV and JSON read it again, writing each chunk's records as decoded.
 * Returns EPH_OK, or an error in err: the file does not load (res->loaded
 * false, nothing written; EPH_ERR_NOMEM when out of memory) or it changed
 * between the two reads (res->loaded true, the output is cut short).
 */
eph_status eph_dump_file(FILE *out, const char *path, eph_dump_format fmt, size_t head, eph_dump_result *res,
                         eph_error *err);

#endif
