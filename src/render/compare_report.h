/*
 * compare_report.h — `ephemera compare`'s work (compare_report.c): two
 * profiles read and analysed, compared class by class (or an estimate
 * calibrated against an exact profile of the same run), rendered on stdout.
 * Layer: renderers, the top of them (docs/architecture.md).
 */
#ifndef EPH_COMPARE_REPORT_H
#define EPH_COMPARE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/analysis.h"

typedef enum eph_compare_format { EPH_COMPARE_TEXT, EPH_COMPARE_CSV, EPH_COMPARE_JSON } eph_compare_format;

typedef struct eph_compare_request {
  const char *paths[2];     /* A (the baseline) and B; with exact, EXACT and OTHER */
  bool exact;               /* OTHER's estimates against EXACT's lifetimes, and its death brackets */
  eph_compare_format format;
  eph_analysis_opts opts;   /* both analyses' options */
  double z;                 /* a class's change is flagged when |z| > z */
  bool wall;                /* lifetimes in % of the run's wall time, not of its bytes */
  /* warnings that do not stop the comparison (a truncated file), one line each */
  void (*warn)(void *ctx, const char *line);
  void *warn_ctx;
} eph_compare_request;

/*
 * Writes the comparison on stdout.  Returns EPH_OK, or an error in err with
 * a one-line message; *bad_input is then true when a file did not load for
 * what it holds (unreadable, malformed: not out of memory), false for any
 * other failure (EXACT not an exact profile, out of memory, a failed write).
 */
eph_status eph_compare_write(const eph_compare_request *req, bool *bad_input, eph_error *err);

#endif
