/*
 * report.c — `ephemera report`'s work: the profile read and analysed once
 * (and once more, whole, for the HTML page's flame graph), the advisor's
 * view added, the renderer of the chosen format run into stdout or a
 * directory, and every write checked.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "render.h"
#include "render_tune.h"
#include "report.h"

static void warn(const eph_report_request *r, const char *fmt, const char *a, const char *b) {
  if (!r->warn) return;
  char line[1024];
  snprintf(line, sizeof line, fmt, a, b);
  r->warn(r->warn_ctx, line);
}

static void progress(const char *stage, double f, void *ctx) {
  FILE *tty = ctx;
  if (!stage) {
    fputs("\r\033[K", tty);
    return;
  }
  fprintf(tty, "\r\033[Kanalysing: %s %3.0f%%", stage, 100 * f);
  fflush(tty);
}

static eph_status write_csv(const eph_report_request *r, const eph_analysis *a, eph_error *err) {
  errno = 0;
  bool ok = eph_render_csv(stdout, r->dir, a);
  if (r->dir && !ok) {
    eph_error_fill(err, EPH_ERR_IO, "report: writing CSV into %s: %s", r->dir, errno ? strerror(errno) : "write error");
    return EPH_ERR_IO;
  }
  if (r->dir)
    printf("wrote %s/{summary,histogram,classes,survival%s%s}.csv\n", r->dir, a->heap ? ",heap" : "",
           a->profile->ngcs ? ",timeline" : "");
  return eph_render_finish(stdout, false, "report", r->dir ? "the list of files written" : "the report", err);
}

/* The advisor's predicted GC parameters, after a text report. */
static void gc_suggestion(const eph_report_request *r, FILE *out) {
  eph_tune_suggestion s;
  eph_error e;
  if (eph_tune_suggest(r->path, &s, &e) != EPH_OK) warn(r, "GC suggestion: %s%s", e.message, "");
  else eph_render_tune_suggestion(out, &s);
}

static eph_status write_one(const eph_report_request *r, const eph_analysis *a, eph_error *err) {
  static const char *const ext[] = {"txt", "csv", "json", "html"};
  FILE *out = stdout;
  char file[4096];
  if (r->dir) {
    snprintf(file, sizeof file, "%s/report.%s", r->dir, ext[r->format]);
    if (!(out = fopen(file, "w"))) {
      eph_error_fill(err, EPH_ERR_IO, "report: cannot write %s: %s", file, strerror(errno));
      return EPH_ERR_IO;
    }
  }
  eph_tune_lua_advice lua = eph_tune_lua_advice_of(a->cycles.survived0, a->cycles.survived1, a->cycles.freed,
                                                   a->cycles.censored);
  bool plots_ok = true;
  char failed[4096] = "";
  int plot_errno = 0;
  if (r->format == EPH_REPORT_TEXT) {
    eph_render_text(out, a, &lua, r->color);
    gc_suggestion(r, out);
  } else if (r->format == EPH_REPORT_JSON) {
    eph_render_json(out, a, &lua);
  } else {
    /* The flame graph's space-time by stack: the file read once more, whole. */
    eph_file *whole = NULL;
    eph_error e;
    eph_spacetime *flame = eph_spacetime_load(r->path, a->opts.end, &whole, &e);
    if (!flame) warn(r, "no flame graph: %s%s", e.message, "");
    if (!(plots_ok = eph_render_html_with(out, a, &lua, flame, r->dir, failed, sizeof failed))) plot_errno = errno;
    eph_spacetime_free(flame);
    eph_file_free(whole);
  }
  eph_status st = eph_render_finish(out, r->dir != NULL, "report", r->dir ? file : "the report", err);
  if (st != EPH_OK) return st;
  if (!plots_ok) {
    eph_error_fill(err, EPH_ERR_IO, "report: writing %s: %s", failed, strerror(plot_errno));
    return EPH_ERR_IO;
  }
  if (!r->dir) return EPH_OK;
  printf("wrote %s\n", file);
  return eph_render_finish(stdout, false, "report", "the list of files written", err);
}

eph_status eph_report_write(const eph_report_request *r, eph_error *err) {
  eph_analysis_opts o = r->opts;
  if (r->progress) {
    fprintf(r->progress, "reading %s ...", r->path);
    fflush(r->progress);
    o.progress = progress;
    o.progress_ctx = r->progress;
  }
  o.drop_lives = true; /* rendering needs only the tables and curves */
  eph_file *p = NULL;
  eph_analysis *a = eph_analysis_load(r->path, &o, &p, err);
  if (r->progress) fputs("\r\033[K", r->progress);
  if (!a) return err->status ? err->status : EPH_ERR_INVALID;
  if (p->warning[0]) warn(r, "%s: %s", r->path, p->warning);
  eph_status st;
  if (r->dir && mkdir(r->dir, 0777) != 0 && errno != EEXIST) {
    eph_error_fill(err, EPH_ERR_IO, "report: cannot create %s: %s", r->dir, strerror(errno));
    st = EPH_ERR_IO;
  } else {
    st = r->format == EPH_REPORT_CSV ? write_csv(r, a, err) : write_one(r, a, err);
  }
  eph_analysis_free(a);
  eph_file_free(p);
  return st;
}
