/*
 * render_bench.h — the benchmark harness's results (include/ephemera/bench.h,
 * src/harness/bench_calibrate.h) as people read them: a report as a text
 * table, CSV, Markdown or an HTML page with plots, the nominal
 * statistics, a calibration's runs, and the progress of long work.
 * Layer: renderers, above the harness (docs/architecture.md).
 *
 * As the other renderers (render.h): they write to a FILE the caller owns
 * and never close it; those returning int return -1 when its error flag is
 * set (the caller reports the error with its errno).
 */
#ifndef EPH_RENDER_BENCH_H
#define EPH_RENDER_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/bench.h"
#include "harness/bench_calibrate.h"

typedef enum eph_bench_format {
  EPH_BENCH_TEXT, EPH_BENCH_CSV, EPH_BENCH_JSON, EPH_BENCH_MARKDOWN, EPH_BENCH_HTML
} eph_bench_format;

/* Parses "text|csv|json|md|markdown|html"; -1 if unknown. */
int eph_bench_format_parse(const char *s, eph_bench_format *out);

/* --- a report (render_bench_table.c, render_bench_html.c) ----------------------- */

int eph_render_bench_text(FILE *out, const eph_bench_report *rep);
int eph_render_bench_csv(FILE *out, const eph_bench_report *rep);
int eph_render_bench_markdown(FILE *out, const eph_bench_report *rep);
/* rep in fmt: text, CSV or Markdown as above; JSON is the results file
 * (eph_bench_results_write_json of r and rep, which fills err on failure).
 * -1 on a write error.  HTML is eph_render_bench_html's. */
int eph_render_bench(FILE *out, eph_bench_format fmt, const eph_bench_results *r, const eph_bench_report *rep,
                     eph_error *err);
/* dir/index.html with SVG plots drawn by gnuplot (time and LBO against heap
 * factor with CI bars, latency percentile curves); the tables without
 * plots, and a note saying so, if gnuplot is missing.  -1 with err naming
 * the directory or the file when it cannot be written. */
int eph_render_bench_html(const eph_bench_report *rep, const char *dir, eph_error *err);

/* Figure 1's series (render_bench_table.c, for the table and the page): two
 * points of one collector or GC parameters; whether point i is its series'
 * first in rep->geomean. */
bool eph_bench_geomean_same_series(const eph_bench_geomean *a, const eph_bench_geomean *b);
bool eph_bench_geomean_opens_series(const eph_bench_report *rep, size_t i);

/* --- other results (render_bench_table.c, render_bench_progress.c) -------------- */

/* A nominal statistics file (eph_bench_nominal_load) as a table. */
int eph_render_bench_nominal(FILE *out, const eph_bench_nominal_table *t);
/* A calibration's runs: measured GC seconds against the fitted model's
 * prediction (the model itself: eph_render_sim_costmodel, render_sim.h). */
int eph_render_bench_calibration(FILE *out, const eph_bench_calibration *c);
/* `ephemera bench minheap`'s answer: "TARGET minheap_bytes=N (M MiB)[ cached]". */
void eph_render_bench_minheap(FILE *out, const eph_bench_target *t, uint64_t bytes, bool cached);
/* What `ephemera bench plan` wrote: the number of jobs, where, and what to run next. */
void eph_render_bench_plan(FILE *out, long jobs, const char *jobs_path, const char *dir);

/* --- progress (render_bench_progress.c) ------------------------------------------ */

/* eph_render_bench_progress's ctx. */
typedef struct eph_render_progress {
  FILE *out;
  bool live; /* a terminal: show each step on one line, rewritten (else steps are not shown) */
} eph_render_progress;

/* An eph_bench_progress_fn (ctx an eph_render_progress): a live
 * "[i/N] target configuration invocation k  ETA 1m05s" line on a terminal,
 * cleared at the end; one line per minimum heap found, live or not. */
void eph_render_bench_progress(const eph_bench_progress *p, void *ctx);

#endif
