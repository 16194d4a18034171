/*
 * report.h — `ephemera report`'s work (report.c): read a profile, analyse
 * it, add the advisor's view (the GC parameters it predicts for the heap's
 * profiles, the collector advice for Lua's), and render it in one format
 * to stdout or into a directory.
 * Layer: renderers, the top of them: it calls analysis, tune and the
 * renderers below it (docs/architecture.md).
 */
#ifndef EPH_REPORT_H
#define EPH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/analysis.h"

typedef enum eph_report_format { EPH_REPORT_TEXT, EPH_REPORT_CSV, EPH_REPORT_JSON, EPH_REPORT_HTML } eph_report_format;

typedef struct eph_report_request {
  const char *path;          /* the profile */
  eph_report_format format;
  const char *dir;           /* write report.txt / *.csv / report.json / report.html (+ SVGs) into it; NULL: stdout */
  eph_analysis_opts opts;    /* the analysis's options (progress: see below) */
  bool color;                /* text on stdout: bold headings */
  FILE *progress;            /* a terminal for "reading FILE ..." and the analysis's progress; NULL: none */
  /* warnings that do not stop the report (a truncated file, no flame
   * graph, no GC prediction): one line each, without "warning: " */
  void (*warn)(void *ctx, const char *line);
  void *warn_ctx;
} eph_report_request;

/*
 * Writes the report.  With dir, creates it (if needed) and ends by printing
 * on stdout the files written ("wrote DIR/report.txt").  Returns EPH_OK, or
 * an error in err with a one-line message: the profile does not load
 * (EPH_ERR_INVALID, EPH_ERR_CORRUPT, or EPH_ERR_NOMEM), or the output
 * cannot be created or written (EPH_ERR_IO, "report: writing FILE: reason").
 */
eph_status eph_report_write(const eph_report_request *req, eph_error *err);

#endif
