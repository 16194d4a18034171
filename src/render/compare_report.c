/*
 * compare_report.c — `ephemera compare`'s work: both profiles analysed,
 * compared (or calibrated, with --exact), rendered, the output checked.
 */
#include <errno.h>
#include <string.h>

#include "compare_report.h"
#include "render.h"

/* --exact: the calibration table and the brackets. */
static eph_status calibrate(const eph_compare_request *r, eph_analysis *const an[2], bool *bad_input, eph_error *err) {
  if (!an[0]->exact) {
    eph_error_fill(err, EPH_ERR_INVALID,
                   "%s: not an exact profile (mode %s): --exact needs one made with mode=merlin or mode=brute",
                   r->paths[0], an[0]->mode);
    return EPH_ERR_INVALID;
  }
  eph_bracket_stats bs;
  eph_status st = eph_bracket_check(r->paths[0], r->paths[1], &bs, err);
  if (st != EPH_OK) {
    *bad_input = st != EPH_ERR_NOMEM;
    return st;
  }
  eph_calibration *c = eph_calibrate(an[0], an[1]);
  if (!c) {
    eph_error_fill(err, EPH_ERR_NOMEM, "compare: out of memory");
    return EPH_ERR_NOMEM;
  }
  if (r->format == EPH_COMPARE_CSV) eph_calibration_csv(stdout, c, &bs);
  else if (r->format == EPH_COMPARE_JSON) eph_calibration_json(stdout, c, &bs);
  else eph_calibration_text(stdout, c, &bs);
  eph_calibration_free(c);
  return eph_render_finish(stdout, false, "compare", "the comparison", err);
}

eph_status eph_compare_write(const eph_compare_request *r, bool *bad_input, eph_error *err) {
  *bad_input = false;
  eph_analysis_opts o = r->opts;
  o.drop_lives = r->exact; /* the calibration reads the estimates only */
  eph_file *p[2] = {NULL, NULL};
  eph_analysis *an[2] = {NULL, NULL};
  eph_status st = EPH_OK;
  for (int i = 0; i < 2 && st == EPH_OK; i++) {
    an[i] = eph_analysis_load(r->paths[i], &o, &p[i], err);
    if (!an[i]) {
      st = err->status ? err->status : EPH_ERR_INVALID;
      *bad_input = st != EPH_ERR_NOMEM;
    } else if (p[i]->warning[0] && r->warn) {
      char line[1024];
      snprintf(line, sizeof line, "%s: %s", r->paths[i], p[i]->warning);
      r->warn(r->warn_ctx, line);
    }
  }
  if (st == EPH_OK && r->exact) {
    st = calibrate(r, an, bad_input, err);
  } else if (st == EPH_OK) {
    eph_compare *c = eph_compare_run_on(an[0], an[1], r->z, r->wall ? EPH_CLOCK_REL : EPH_CLOCK_BYTES);
    if (!c) {
      eph_error_fill(err, EPH_ERR_NOMEM, "compare: out of memory");
      st = EPH_ERR_NOMEM;
    } else {
      if (r->format == EPH_COMPARE_CSV) eph_compare_csv(stdout, c);
      else if (r->format == EPH_COMPARE_JSON) eph_compare_json(stdout, c);
      else eph_compare_text(stdout, c);
      eph_compare_free(c);
      st = eph_render_finish(stdout, false, "compare", "the comparison", err);
    }
  }
  for (int i = 0; i < 2; i++) {
    eph_analysis_free(an[i]);
    eph_file_free(p[i]);
  }
  return st;
}
