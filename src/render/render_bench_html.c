/*
 * render_bench_html.c — a bench report as dir/index.html: the table and
 * SVG plots drawn by gnuplot (Debian's gnuplot-nox, through
 * plot_gnuplot.c): the geometric mean of LBO over the targets against the
 * heap factor, a curve per collector (the DaCapo Chopin paper's Figure 1,
 * its points also in DIR/lbo-geomean.csv), each target's LBO and time with
 * 95 % CI bars, latency at each percentile.  Without gnuplot, the tables
 * and a note.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "render.h"
#include "render_bench.h"

/* The page's plots: their own size, the key outside, a grid. */
#define PLOT_PREAMBLE                                                                                      \
  "set terminal svg size 720,400 dynamic enhanced font 'Helvetica,12' background rgb 'white'\n"            \
  "set key outside right top\nset grid\n"

/* Runs gnuplot on script with data; returns the SVG (malloc'd) or NULL. */
static char *plot(const char *script, const char *data) {
  size_t n = strlen(PLOT_PREAMBLE) + strlen(script) + 1;
  char *full = malloc(n);
  if (!full) return NULL;
  snprintf(full, n, "%s%s", PLOT_PREAMBLE, script);
  char why[256];
  char *svg = eph_gnuplot_svg(full, data, why, sizeof why);
  free(full);
  return svg;
}

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void add(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(buf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = (b->cap + (size_t)k + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) return;
    b->s = s;
    b->cap = cap;
  }
}

/* gnuplot string: no quotes or backslashes survive. */
static void gp_title(buf *b, const char *s) {
  add(b, "\"");
  for (; *s; s++)
    if (*s != '"' && *s != '\\' && *s != '\n') add(b, "%c", *s == '_' ? '-' : *s);
  add(b, "\"");
}

static double x_of(const eph_bench_summary *r) { return r->config.factor > 0 ? r->config.factor : (double)r->config_index + 1; }

static void emit_plot(FILE *out, const char *title, const char *script, const char *data) {
  char *svg = plot(script, data);
  fprintf(out, "<h3>");
  eph_html_escape(out, title);
  fprintf(out, "</h3>\n");
  if (svg) fprintf(out, "<div class=\"plot\">%s</div>\n", strstr(svg, "<svg") ? strstr(svg, "<svg") : svg);
  else fprintf(out, "<p class=\"note\">gnuplot failed on this plot.</p>\n");
  free(svg);
}

/* A series is one line across the heap factors: the rows of one target
 * under one set of GC parameters (and profile), whatever their factor. */
static bool same_series(const eph_bench_summary *a, const eph_bench_summary *b) {
  return a->target_index == b->target_index && !strcmp(a->config.gc, b->config.gc) &&
         !strcmp(a->config.profile, b->config.profile);
}

/* Whether row i is the first of its series (rows need not be grouped). */
static bool opens_series(const eph_bench_report *rep, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (same_series(&rep->rows[k], &rep->rows[i])) return false;
  return true;
}

/* Whether the target of row i runs under more than one series. */
static bool target_has_series(const eph_bench_report *rep, size_t i) {
  for (size_t k = 0; k < rep->nrows; k++)
    if (rep->rows[k].target_index == rep->rows[i].target_index && !same_series(&rep->rows[k], &rep->rows[i])) return true;
  return false;
}

/* The series' name in a key: its GC parameters ("defaults") and profile. */
static void series_name(const eph_bench_summary *r, char *out, size_t len) {
  snprintf(out, len, "%s%s%s", r->config.gc[0] ? r->config.gc : "defaults", r->config.profile[0] ? ", profiled " : "",
           r->config.profile);
}

/* The rows of row i's series as data lines "x mean lo hi", of the
 * quantity q (0 LBO wall, 1 LBO task, 2 wall, 3 task, 4 GC time). */
static void add_series_data(buf *d, const eph_bench_report *rep, size_t i, int q) {
  for (size_t k = i; k < rep->nrows; k++) {
    const eph_bench_summary *r = &rep->rows[k];
    if (!same_series(r, &rep->rows[i]) || !r->invocations) continue;
    if (q == 0) add(d, "%g %g %g %g\n", x_of(r), r->lbo_wall, r->lbo_wall_lo, r->lbo_wall_hi);
    else if (q == 1) add(d, "%g %g %g %g\n", x_of(r), r->lbo_task, r->lbo_task_lo, r->lbo_task_hi);
    else {
      const eph_bench_stat *st = q == 2 ? &r->wall : q == 3 ? &r->task : &r->gc;
      if (q < 4 || r->have_gc) add(d, "%g %g %g %g\n", x_of(r), st->mean, st->mean - st->ci, st->mean + st->ci);
    }
  }
  add(d, "\n\n");
}

/* Figure 1 (DaCapo Chopin): the geometric mean of LBO over the targets
 * against the heap factor, a curve per collector (or GC parameters) with
 * its shaded interval; only points every target ran. */
static void geomean_plots(const eph_bench_report *rep, FILE *out) {
  for (int which = 0; which < 2; which++) {
    buf d = {0}, s = {0};
    add(&s, "set xlabel 'heap size (multiple of the minimum heap)'\nset ylabel 'LBO, geometric mean (%s)'\n"
            "set yrange [1:*]\nset offsets 0.2, 0.2, 0, 0\nset style fill transparent solid 0.2 noborder\nplot ",
        which ? "task clock" : "wall clock");
    int block = 0, drawn = 0;
    for (size_t i = 0; i < rep->ngeomean; i++) {
      const eph_bench_geomean *g = &rep->geomean[i];
      if (!eph_bench_geomean_opens_series(rep, i)) continue;
      size_t pts = 0;
      for (size_t k = i; k < rep->ngeomean; k++) {
        const eph_bench_geomean *x = &rep->geomean[k];
        if (!eph_bench_geomean_same_series(x, g) || !x->complete || !(x->factor > 0)) continue;
        add(&d, "%g %g %g %g\n", x->factor, which ? x->lbo_task : x->lbo_wall, which ? x->lbo_task_lo : x->lbo_wall_lo,
            which ? x->lbo_task_hi : x->lbo_wall_hi);
        pts++;
      }
      add(&d, "\n\n");
      if (!pts) { /* keep the block numbering: an empty block plots nothing */
        block++;
        continue;
      }
      char name[600];
      snprintf(name, sizeof name, "%s%s%s", g->gc[0] ? g->gc : "defaults", g->profile[0] ? ", profiled " : "", g->profile);
      add(&s, "%sdatafile index %d using 1:3:4 with filledcurves lc %d notitle, datafile index %d using 1:2 with "
              "linespoints lw 2 pt 7 lc %d title ",
          drawn ? ", " : "", block, block + 1, block, block + 1);
      gp_title(&s, name);
      block++, drawn++;
    }
    if (drawn && d.s)
      emit_plot(out, which ? "Figure 1(b): LBO, task clock, geometric mean over the targets"
                           : "Figure 1(a): LBO, wall clock, geometric mean over the targets",
                s.s, d.s);
    free(d.s), free(s.s);
  }
}

/* The LBO graphs of one target (the paper's appendix): a line per series. */
static void target_lbo_plots(const eph_bench_report *rep, size_t i, size_t j, const char *xlabel, FILE *out) {
  for (int which = 0; which < 2; which++) {
    buf d = {0}, s = {0};
    add(&s, "set xlabel '%s'\nset ylabel 'lower-bound overhead (%s)'\nset yrange [0:*]\nset offsets 0.2, 0.2, 0, 0\nplot ",
        xlabel, which ? "task clock" : "wall clock");
    int block = 0;
    for (size_t k = i; k < j; k++) {
      if (!opens_series(rep, k)) continue;
      add_series_data(&d, rep, k, which);
      char name[700];
      series_name(&rep->rows[k], name, sizeof name);
      add(&s, "%sdatafile index %d using 1:2:3:4 with yerrorlines lw 2 title ", block ? ", " : "", block);
      gp_title(&s, name);
      block++;
    }
    char title[1200];
    snprintf(title, sizeof title, "LBO, %s: %s", which ? "task clock" : "wall clock", rep->rows[i].target.spec);
    if (block && d.s) emit_plot(out, title, s.s, d.s);
    free(d.s), free(s.s);
  }
}

/* LBO: Figure 1 when there are several targets; then one plot of every
 * target's series, or with several series per target (collectors), a pair
 * of plots per target; time: one plot per target. */
static void plots(const eph_bench_report *rep, FILE *out) {
  bool factors = rep->nrows && rep->rows[0].config.factor > 0;
  const char *xlabel = factors ? "heap size (multiple of the minimum heap)" : "configuration";
  bool several = false;
  for (size_t i = 0; i < rep->nrows; i++) several |= target_has_series(rep, i);
  if (factors && rep->ntargets >= 2) geomean_plots(rep, out);
  for (int which = 0; which < 2 && !several; which++) { /* LBO wall, LBO task: all targets in one plot */
    buf d = {0}, s = {0};
    add(&s, "set xlabel '%s'\nset ylabel 'lower-bound overhead (%s)'\nset yrange [0:*]\nset offsets 0.2, 0.2, 0, 0\nplot ", xlabel,
        which ? "task clock" : "wall clock");
    int block = 0;
    for (size_t i = 0; i < rep->nrows; i++) {
      if (!opens_series(rep, i)) continue;
      const eph_bench_summary *r = &rep->rows[i];
      add_series_data(&d, rep, i, which);
      add(&s, "%sdatafile index %d using 1:2:3:4 with yerrorlines lw 2 title ", block ? ", " : "", block);
      gp_title(&s, r->target.spec);
      block++;
    }
    if (block && d.s) emit_plot(out, which ? "LBO, task clock" : "LBO, wall clock", s.s, d.s);
    free(d.s), free(s.s);
  }
  for (size_t i = 0; i < rep->nrows;) { /* time per target: wall, task, GC with CI bars, per series */
    size_t j = i;
    while (j < rep->nrows && rep->rows[j].target_index == rep->rows[i].target_index) j++;
    bool several_here = target_has_series(rep, i);
    if (several_here) target_lbo_plots(rep, i, j, xlabel, out);
    buf d = {0}, s = {0};
    add(&s, "set xlabel '%s'\nset ylabel 'seconds per iteration'\nset yrange [0:*]\nset offsets 0.2, 0.2, 0, 0\nplot ", xlabel);
    static const char *const qname[] = {"wall", "task clock", "GC (stop the world)"};
    int block = 0, nseries = 0;
    for (size_t k = i; k < j; k++) {
      if (!opens_series(rep, k)) continue;
      nseries++;
      for (int q = 0; q < 3; q++) {
        if (q == 2 && !rep->rows[k].have_gc) continue;
        add_series_data(&d, rep, k, 2 + q);
        /* one colour per quantity; one dash pattern per series */
        add(&s, "%sdatafile index %d using 1:2:3:4 with yerrorlines lw 2 lc %d dt %d title ", block ? ", " : "", block, q + 1, nseries);
        if (several_here) {
          char t[700];
          series_name(&rep->rows[k], t, sizeof t);
          char qt[800];
          snprintf(qt, sizeof qt, "%s, %s", qname[q], t);
          gp_title(&s, qt);
        } else gp_title(&s, qname[q]);
        block++;
      }
    }
    add(&s, "\n");
    char title[1200];
    snprintf(title, sizeof title, "time: %s (95%% CI)", rep->rows[i].target.spec);
    if (block && d.s) emit_plot(out, title, s.s, d.s);
    free(d.s), free(s.s);
    /* latency percentile curves: simple and metered, per configuration */
    bool any = false;
    for (size_t k = i; k < j; k++) any |= rep->rows[k].simple.n > 0;
    if (any) {
      buf ld = {0}, ls = {0};
      add(&ls, "set xlabel 'percentile'\nset ylabel 'latency (ms)'\nset logscale y\n"
               "set xtics ('50' 0, '90' 1, '99' 2, '99.9' 3, '99.99' 4, 'max' 5)\nplot ");
      int lblock = 0;
      for (size_t k = i; k < j; k++) {
        const eph_bench_summary *r = &rep->rows[k];
        /* the smallest and the largest heap, as the paper's 2x and 6x plots: more curves would not read */
        if (!r->simple.n || (k != i && k != j - 1)) continue;
        const eph_bench_latency *l[3] = {&r->simple, &r->metered_100ms, &r->metered_full};
        const char *kind[3] = {"simple", "metered 100 ms", "metered full"};
        char label[300];
        eph_bench_config_label(&r->config, label, sizeof label);
        for (int m = 0; m < 3; m++) {
          if (lblock) add(&ld, "\n\n");
          for (int p = 0; p < EPH_BENCH_NPCT; p++) add(&ld, "%d %g\n", p, l[m]->ms[p] > 0 ? l[m]->ms[p] : 1e-6);
          char t[400];
          snprintf(t, sizeof t, "%s, %s", label, kind[m]);
          add(&ls, "%sdatafile index %d using 1:2 with linespoints dt %d lc %d title ", lblock ? ", " : "", lblock, m + 1,
              k == i ? 1 : 2);
          gp_title(&ls, t);
          lblock++;
        }
      }
      snprintf(title, sizeof title, "latency: %s", rep->rows[i].target.spec);
      if (ld.s) emit_plot(out, title, ls.s, ld.s);
      free(ld.s), free(ls.s);
    }
    i = j;
  }
}

/* DIR/NAME opened for writing (its path in path), or NULL with err filled. */
static FILE *open_in(const char *dir, const char *name, char path[4096], eph_error *err) {
  snprintf(path, 4096, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, strerror(errno));
  return f;
}

/* Figure 1's points as CSV (the gc and profile fields quoted). */
static int write_geomean_csv(const eph_bench_report *rep, const char *dir, eph_error *err) {
  char path[4096];
  FILE *f = open_in(dir, "lbo-geomean.csv", path, err);
  if (!f) return -1;
  fputs("gc,profile,factor,targets,complete,lbo_wall,lbo_wall_lo,lbo_wall_hi,lbo_task,lbo_task_lo,lbo_task_hi\n", f);
  for (size_t i = 0; i < rep->ngeomean; i++) {
    const eph_bench_geomean *g = &rep->geomean[i];
    const char *q[2] = {g->gc, g->profile};
    for (int k = 0; k < 2; k++) {
      fputc('"', f);
      for (const char *c = q[k]; *c; c++) {
        if (*c == '"') fputc('"', f);
        fputc(*c, f);
      }
      fputs("\",", f);
    }
    fprintf(f, "%g,%zu,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", g->factor, g->ntargets, g->complete ? 1 : 0, g->lbo_wall,
            g->lbo_wall_lo, g->lbo_wall_hi, g->lbo_task, g->lbo_task_lo, g->lbo_task_hi);
  }
  if (fclose(f) != 0) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int eph_render_bench_html(const eph_bench_report *rep, const char *dir, eph_error *err) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", dir, strerror(errno));
    return -1;
  }
  char path[4096];
  FILE *out = open_in(dir, "index.html", path, err);
  if (!out) return -1;
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ephemera bench</title>\n<style>\n"
        "body{font-family:Helvetica,Arial,sans-serif;margin:2em;max-width:1100px}\n"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
        "td:first-child,td:nth-child(2){text-align:left}.note{color:#a40}.plot svg{max-width:100%;height:auto}\n"
        "</style></head><body>\n<h1>ephemera bench</h1>\n"
        "<p>Each row: one target and configuration; times are per timed iteration, means over invocations (each a "
        "fresh process) with 95&nbsp;% confidence intervals (Student's t). LBO: time / the smallest (time &minus; GC "
        "stop-the-world time) over the target's configurations.</p>\n<table>\n<tr><th>target</th><th>configuration</th>"
        "<th>inv</th><th>wall s</th><th>&plusmn; CI</th><th>task s</th><th>&plusmn; CI</th><th>GC s</th><th>GCs</th>"
        "<th>peak MiB</th><th>LBO wall</th><th>LBO task</th><th>p99 ms</th><th>metered p99 100 ms</th></tr>\n",
        out);
  for (size_t i = 0; i < rep->nrows; i++) {
    const eph_bench_summary *r = &rep->rows[i];
    char label[300];
    eph_bench_config_label(&r->config, label, sizeof label);
    fputs("<tr><td>", out);
    eph_html_escape(out, r->target.spec);
    fputs("</td><td>", out);
    eph_html_escape(out, label);
    fprintf(out, "</td><td>%zu</td>", r->invocations);
    if (!r->invocations) {
      fputs("<td colspan=\"11\" class=\"note\">failed: ", out);
      eph_html_escape(out, r->first_error);
      fputs("</td></tr>\n", out);
      continue;
    }
    fprintf(out, "<td>%.3f</td><td>%.1f%%</td><td>%.3f</td><td>%.1f%%</td>", r->wall.mean,
            r->wall.mean > 0 ? 100 * r->wall.ci / r->wall.mean : 0, r->task.mean,
            r->task.mean > 0 ? 100 * r->task.ci / r->task.mean : 0);
    if (r->have_gc) fprintf(out, "<td>%.3f</td><td>%.0f</td>", r->gc.mean, r->gc_count.mean);
    else fputs("<td>-</td><td>-</td>", out);
    fprintf(out, "<td>%.1f</td><td>%.3f</td><td>%.3f</td>", r->peak.mean / 1048576.0, r->lbo_wall, r->lbo_task);
    if (r->simple.n) fprintf(out, "<td>%.3f</td><td>%.3f</td></tr>\n", r->simple.ms[2], r->metered_100ms.ms[2]);
    else fputs("<td>-</td><td>-</td></tr>\n", out);
  }
  fputs("</table>\n", out);
  if (rep->wide_ci)
    fprintf(out, "<p class=\"note\">%zu configuration(s) have a wall-time CI wider than 3&nbsp;%% of the mean.</p>\n",
            rep->wide_ci);
  if (eph_gnuplot_available()) plots(rep, out);
  else fputs("<p class=\"note\">gnuplot is not installed (Debian: gnuplot-nox): no plots.</p>\n", out);
  fputs("</body></html>\n", out);
  if (fclose(out) != 0) {
    eph_error_fill(err, EPH_ERR_IO, "%s: %s", path, strerror(errno));
    return -1;
  }
  return write_geomean_csv(rep, dir, err);
}
