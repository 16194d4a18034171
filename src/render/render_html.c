/*
 * render_html.c — one self-contained HTML page: the summary, plots (gnuplot
 * SVGs embedded as data: URIs, also written to plot_dir) and every table.
 * Without gnuplot the page keeps the tables and says how to get the plots.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_sections.h"
#include "render.h"

#define B(buf) buf, sizeof buf

typedef struct plot_ctx {
  bool have_gnuplot;
  const char *dir;
  char why[512];
  int write_errno; /* the first plot file into dir that could not be written: errno, its path */
  char write_path[4096];
} plot_ctx;

static void base64(FILE *out, const unsigned char *s, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
    fputc(t[v >> 18 & 63], out);
    fputc(t[v >> 12 & 63], out);
    fputc(i + 1 < n ? t[v >> 6 & 63] : '=', out);
    fputc(i + 2 < n ? t[v & 63] : '=', out);
  }
}

/* Plots one figure of w x h SVG pixels; `name` is its id and file name.
 * The page scales the SVG to its column, so w is about the width it is
 * shown at: the text keeps its size. */
static void figure_sized(FILE *out, plot_ctx *pc, const char *name, const char *caption, const char *script, const char *data,
                         int w, int h) {
  fprintf(out, "<figure class=\"plot\" id=\"plot-%s\">", name);
  char *svg = NULL;
  char why[512] = "";
  if (pc->have_gnuplot) svg = eph_gnuplot_svg_sized(script, data, w, h, why, sizeof why);
  if (svg) {
    fputs("<img alt=\"", out);
    eph_html_escape(out, caption);
    fputs("\" src=\"data:image/svg+xml;base64,", out);
    base64(out, (const unsigned char *)svg, strlen(svg));
    fputs("\">", out);
    if (pc->dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.svg", pc->dir, name);
      errno = 0;
      FILE *f = fopen(path, "w");
      bool ok = f && fputs(svg, f) >= 0;
      ok = ok && !ferror(f);
      if (f && fclose(f) != 0) ok = false;
      if (!ok && !pc->write_errno) {
        pc->write_errno = errno ? errno : EIO;
        snprintf(pc->write_path, sizeof pc->write_path, "%s", path);
      }
    }
    free(svg);
  } else {
    fputs("<div class=\"noplot\">plot not drawn: ", out);
    eph_html_escape(out, pc->have_gnuplot ? why : "gnuplot is not installed (Debian: apt-get install gnuplot-nox), so this page has the tables only");
    fputs("</div>", out);
    if (pc->have_gnuplot && !pc->why[0]) snprintf(pc->why, sizeof pc->why, "%s", why);
  }
  fputs("<figcaption>", out);
  eph_html_escape(out, caption);
  fputs("</figcaption></figure>\n", out);
}

static void figure(FILE *out, plot_ctx *pc, const char *name, const char *caption, const char *script, const char *data) {
  figure_sized(out, pc, name, caption, script, data, 760, 380);
}

static void gp_quote(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s == '_' ? ' ' : *s, f); /* '_' would be a subscript in enhanced text */
  }
  fputc('"', f);
}

static void hist_plot(FILE *out, plot_ctx *pc, const eph_analysis *a, eph_clock c, const char *name) {
  const eph_histogram *h = &a->hist[c];
  char *data = NULL, *script = NULL;
  size_t dl, sl;
  FILE *d = open_memstream(&data, &dl), *s = open_memstream(&script, &sl);
  if (!d || !s) return;
  for (size_t i = 0; i < h->nbins; i++) {
    char lo[32], hi[32];
    if (h->log_bins) snprintf(lo, sizeof lo, "%s%s", i == 0 ? "<" : "", eph_fmt_life(B(hi), h->edges[i + 1], c));
    else eph_fmt_life(B(lo), h->edges[i + 1], c);
    fprintf(d, "\"%s\" %.6g %.6g %.6g\n", lo, h->total_count ? 100 * h->count[i] / h->total_count : 0,
            h->total_count ? 100 * h->count_cens[i] / h->total_count : 0,
            h->total_bytes ? 100 * (h->bytes[i] + h->bytes_cens[i]) / h->total_bytes : 0);
  }
  fprintf(s, "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
             "set boxwidth 0.8\nset key top center horizontal\nset grid ytics lc rgb '#dddddd'\nset ylabel '%% of objects / bytes'\n"
             "set xlabel 'lifetime (%s%s; bin %s)'\nset xtics rotate by -35 font ',11'\nset yrange [0:*]\n",
          eph_clock_name(c), c == EPH_CLOCK_REL ? ", FiLiP normalisation" : "", h->log_bins ? "upper edges, log scale" : "upper edges");
  fprintf(s, "plot datafile using 2:xtic(1) title 'objects (died)' lc rgb '#3b6fb6', '' using 3 title 'objects alive at exit' lc rgb '#9fc3ef', "
             "'' using 4 with linespoints lw 2 pt 7 lc rgb '#d95f02' title 'bytes'\n");
  fclose(d);
  fclose(s);
  char cap[160];
  snprintf(cap, sizeof cap, "Lifetime distribution by count and by bytes, %s.", eph_clock_name(c));
  figure_sized(out, pc, name, cap, script, data, 600, 400);
  free(data);
  free(script);
}

static void km_plot(FILE *out, plot_ctx *pc, const eph_analysis *a) {
  char *data = NULL, *script = NULL;
  size_t dl, sl;
  FILE *d = open_memstream(&data, &dl), *s = open_memstream(&script, &sl);
  if (!d || !s) return;
  eph_clock c = a->opts.km_clock;
  double minpos = INFINITY, maxt = 0;
  for (size_t k = 0; k < a->nkm; k++)
    for (size_t i = 0; i < a->km[k].n; i++) {
      if (a->km[k].time[i] > 0 && a->km[k].time[i] < minpos) minpos = a->km[k].time[i];
      if (a->km[k].time[i] > maxt) maxt = a->km[k].time[i];
    }
  for (size_t k = 0; k < a->nkm; k++)
    if (a->km[k].max_time > maxt) maxt = a->km[k].max_time;
  bool logx = isfinite(minpos) && maxt / minpos > 100;
  double x0 = logx ? minpos / 2 : 0;
  for (size_t k = 0; k < a->nkm; k++) {
    const eph_km *km = &a->km[k];
    double ps = 1, pl = 1, ph = 1;
    fprintf(d, "%.6g 1 1 1\n", x0);
    double shown = 1;
    for (size_t i = 0; i < km->n; i++) {
      /* thin the steps for the plot: a visible change in S, or the last */
      if (i + 1 < km->n && fabs(km->surv[i] - shown) < 0.002) continue;
      shown = km->surv[i];
      double t = km->time[i] > x0 ? km->time[i] : x0;
      fprintf(d, "%.6g %.6g %.6g %.6g\n%.6g %.6g %.6g %.6g\n", t, ps, pl, ph, t, km->surv[i], km->lo[i], km->hi[i]);
      ps = km->surv[i], pl = km->lo[i], ph = km->hi[i];
    }
    fprintf(d, "%.6g %.6g %.6g %.6g\n\n\n", km->max_time > x0 ? km->max_time : x0, ps, pl, ph);
  }
  fprintf(s, "set key outside right top\nset grid lc rgb '#dddddd'\nset yrange [0:1.02]\nset ylabel 'fraction still alive S(t)'\n"
             "set xlabel 'lifetime t (%s)'\n%s\nset style fill transparent solid 0.18 noborder\n",
          eph_clock_name(c), logx ? "set logscale x\nset format x '10^{%T}'" : "set xrange [0:*]");
  fputs("plot ", s);
  for (size_t k = 0; k < a->nkm; k++) {
    const char *nm = a->km[k].group == UINT32_MAX ? "all objects" : eph_group_name(a, a->km[k].group);
    fprintf(s, "%sdatafile index %zu using 1:3:4 with filledcurves lc %zu notitle, datafile index %zu using 1:2 with lines lw %d lc %zu title ",
            k ? ", " : "", k, k + 1, k, k == 0 ? 3 : 2, k + 1);
    gp_quote(s, nm);
  }
  fputc('\n', s);
  fclose(d);
  fclose(s);
  figure(out, pc, "survival",
         a->km_estimated ? "Survival curves estimated from the death intervals (Turnbull), overall and for the most allocated classes, "
                           "lifetimes in % of the bytes allocated, with 95 % bootstrap bands. Objects alive at exit count as alive, never as deaths."
                         : "Kaplan-Meier survival curves, overall and for the most allocated classes, with 95 % Greenwood bands. Objects alive at exit count as alive, never as deaths.",
         script, data);
  free(data);
  free(script);
}

static void heap_plots(FILE *out, plot_ctx *pc, const eph_heapview *h) {
  for (int inverted = 0; inverted < 2; inverted++) {
    char *data = NULL, *script = NULL;
    size_t dl, sl;
    FILE *d = open_memstream(&data, &dl), *s = open_memstream(&script, &sl);
    if (!d || !s) return;
    for (size_t c = 0; c < h->cols; c++) {
      fprintf(d, "%.6g", h->col_time[c] / 1048576.0);
      double acc = 0;
      fprintf(d, " 0");
      for (size_t k = 0; k < h->segs; k++) { /* youngest at the bottom unless inverted */
        size_t seg = inverted ? k : h->segs - 1 - k;
        acc += h->live[seg * h->cols + c];
        fprintf(d, " %.6g", acc / 1048576.0);
      }
      fputc('\n', d);
    }
    fprintf(s, "set key off\nset grid lc rgb '#dddddd'\nset xlabel 'time (MB allocated)'\nset ylabel 'live MB (%s at the bottom)'\n"
               "set palette defined (0 '#08306b', 0.5 '#4292c6', 1 '#c6dbef')\nunset colorbox\nset style fill solid 0.9 noborder\n"
               "set yrange [0:*]\nset xrange [0:*]\n"
               "plot for [i=3:%zu] datafile using 1:i-1:i with filledcurves lc palette frac %s, "
               "for [i=3:%zu] datafile using 1:i with lines lc rgb 'black' lw 0.4\n",
            inverted ? "oldest" : "youngest", h->segs + 2, inverted ? "(i-3.0)/" : "1-(i-3.0)/", h->segs + 2);
    fprintf(s, "\n");
    fclose(d);
    fclose(s);
    /* fix the palette fraction's divisor after the fact: append it */
    char *fixed = malloc(strlen(script) + 64);
    if (fixed) {
      char div[32];
      snprintf(div, sizeof div, "%zu", h->segs > 1 ? h->segs - 1 : 1);
      const char *m = strstr(script, "(i-3.0)/");
      size_t pre = (size_t)(m - script) + strlen("(i-3.0)/");
      memcpy(fixed, script, pre);
      strcpy(fixed + pre, div);
      strcat(fixed, m + strlen("(i-3.0)/"));
      figure_sized(out, pc, inverted ? "heap-inverted" : "heap-profile",
             inverted ? "Inverted heap profile (Merlin Fig. 12b): oldest objects at the bottom, new allocation on top; flat bands are long-lived objects."
                      : "Heap profile (Merlin Fig. 12a): live bytes over time by birth segment, youngest at the bottom; each boundary separates objects born before and after a segment start.",
             fixed, data, 600, 400);
      free(fixed);
    }
    free(data);
    free(script);
  }
  char *data = NULL, *script = NULL;
  size_t dl, sl;
  FILE *d = open_memstream(&data, &dl), *s = open_memstream(&script, &sl);
  if (!d || !s) return;
  for (size_t c = 0; c < h->cols; c++) {
    for (size_t y = 0; y < h->ybins; y++)
      fprintf(d, "%.6g %.6g %.6g\n", h->col_time[c] / 1048576.0, (y + 0.5) * h->y_max / (double)h->ybins / 1048576.0,
              log10(1 + h->demise[c * h->ybins + y]));
    fputc('\n', d);
  }
  fprintf(s, "set xlabel 'time of death (MB allocated)'\nset ylabel 'position in age-ordered heap (MB, oldest at 0)'\n"
             "set palette defined (0 'white', 0.3 '#bdbdbd', 1 'black')\nset cblabel 'log10(1 + bytes dying)'\n"
             "set xrange [0:*]\nset yrange [0:*]\nplot datafile using 1:2:3 with image notitle\n");
  fclose(d);
  fclose(s);
  figure_sized(out, pc, "demise-map", "Demise map (Merlin Fig. 12c): where in the age-ordered heap objects became unreachable, and when; darker = more bytes. Vertical bands are objects dying together.", script, data, 600, 400);
  free(data);
  free(script);
}

static void td_life(FILE *out, double v, eph_clock c, const char *prefix) {
  char b[32];
  fprintf(out, "<td>%s%s</td>", prefix, eph_fmt_life(B(b), v, c));
}

static void class_table(FILE *out, const eph_analysis *a) {
  bool gcm = a->n_interval > 0;
  fprintf(out, "<div class=wide><table id=\"classes\" class=\"data\"><thead><tr><th rowspan=2>%s</th><th rowspan=2>%% objects</th><th rowspan=2>%% memory</th>"
               "<th colspan=%d>lifetime, %% of run (allocation clock, estimated)</th><th colspan=3>lifetime, bytes allocated</th><th colspan=3>lifetime, wall time</th>"
               "<th rowspan=2>GCs survived</th><th rowspan=2>alive at exit</th><th rowspan=2>lived</th></tr>"
               "<tr><th>mean</th>%s<th>median</th><th>p90</th><th>short share</th><th>mean</th><th>median</th><th>p90</th><th>mean</th><th>median</th><th>p90</th></tr></thead><tbody>\n",
          a->opts.by == EPH_BY_SITE ? "site" : "class", gcm ? 5 : 4, gcm ? "<th>mean, lower end (a bound)</th>" : "");
  for (size_t i = 0; i < a->nrows; i++) {
    const eph_group_row *r = &a->rows[i];
    if (i >= 60 && !r->most_allocated) break;
    const char *ge = r->ncensored ? "&ge;" : "";
    fprintf(out, "<tr class=\"%s%s\"><td class=name>", r->short_lived ? "short" : "long", r->most_allocated ? " most" : "");
    eph_html_escape(out, r->name);
    if (r->most_allocated) fputs(" <span class=mark title=\"most allocated\">&#9733;</span>", out);
    fprintf(out, "</td><td>%.1f%s</td><td>%.1f</td>", r->pct_objects, "", r->pct_bytes);
    const eph_life_est *e = &r->est;
    td_life(out, e->mean_pct, EPH_CLOCK_REL, ge);
    if (gcm) td_life(out, a->run_bytes > 0 ? 100 * r->mean_lo[EPH_CLOCK_BYTES] / a->run_bytes : NAN, EPH_CLOCK_REL, ge);
    td_life(out, e->median_pct, EPH_CLOCK_REL, "");
    td_life(out, e->p90_pct, EPH_CLOCK_REL, "");
    if (e->resolved) fprintf(out, "<td>%.1f %%</td>", 100 * e->short_share);
    else fprintf(out, "<td title=\"unresolved: see the note below\">%.1f %%<span class=mark>?</span></td>", 100 * e->short_share);
    td_life(out, e->mean_bytes, EPH_CLOCK_BYTES, ge);
    td_life(out, e->median_bytes, EPH_CLOCK_BYTES, "");
    td_life(out, e->p90_bytes, EPH_CLOCK_BYTES, "");
    td_life(out, r->mean[EPH_CLOCK_SECONDS], EPH_CLOCK_SECONDS, ge);
    td_life(out, r->median[EPH_CLOCK_SECONDS], EPH_CLOCK_SECONDS, "");
    td_life(out, r->p90[EPH_CLOCK_SECONDS], EPH_CLOCK_SECONDS, "");
    fprintf(out, "<td>%.1f</td><td>%.1f %%</td><td><span class=\"tag %s\">%s</span></td></tr>\n", r->gcs_survived,
            100.0 * (double)r->ncensored / (double)r->nrecords, r->short_lived ? "short" : "long", r->short_lived ? "short" : "long");
  }
  fprintf(out, "</tbody></table></div>\n<p class=note>&#9733; most allocated (&ge; %g %% of allocations). Short-lived: mean lifetime &le; %g %% of the run (FiLiP). "
               "<span class=mark>?</span> unresolved: the deaths only full GCs found could move the class's mean or short-lived share past the "
               "report's fidelity targets, or it depends on nepotism, or the run had too few collections (the text report's Resolution section says which). "
               "%% of run and bytes: Turnbull&rsquo;s estimate from what each death tells (exact deaths: Kaplan&ndash;Meier); wall time: Kaplan&ndash;Meier at the death seen; &ldquo;-&rdquo; means not reached within the run; &ge; marks means that are lower bounds because some objects were alive at exit.</p>\n",
          a->opts.most_allocated_pct, a->opts.short_threshold_pct);
}

static void hist_table(FILE *out, const eph_analysis *a, eph_clock c) {
  const eph_histogram *h = &a->hist[c];
  static const char *const ids[] = {"hist-bytes", "hist-seconds", "hist-rel"};
  fprintf(out, "<details><summary>table: %s</summary><table id=\"table-%s\" class=\"data small\"><thead><tr><th>from</th><th>to</th><th>%% objects died</th><th>%% objects alive at exit</th><th>%% bytes</th></tr></thead><tbody>\n",
          eph_clock_name(c), ids[c]);
  for (size_t i = 0; i < h->nbins; i++) {
    char lo[32], hi[32];
    fprintf(out, "<tr><td>%s</td><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.2f</td></tr>\n", eph_fmt_life(B(lo), h->edges[i], c),
            eph_fmt_life(B(hi), h->edges[i + 1], c), h->total_count ? 100 * h->count[i] / h->total_count : 0,
            h->total_count ? 100 * h->count_cens[i] / h->total_count : 0,
            h->total_bytes ? 100 * (h->bytes[i] + h->bytes_cens[i]) / h->total_bytes : 0);
  }
  fputs("</tbody></table></details>\n", out);
}

static void summary(FILE *out, const eph_analysis *a) {
  const eph_file *p = a->profile;
  char b1[48], b2[48], b3[48];
  fputs("<table id=\"summary\" class=\"kv\">", out);
#define ROW(k) fprintf(out, "<tr><th>%s</th><td>", k)
#define END() fputs("</td></tr>\n", out)
  ROW("workload");
  eph_html_escape(out, a->title);
  const char *size = eph_file_meta(p, "size");
  if (size) fputs(" &middot; size ", out), eph_html_escape(out, size);
  END();
  ROW("profiling");
  fputs("mode ", out), eph_html_escape(out, a->mode);
  fputs(", sampling ", out), eph_html_escape(out, a->sample ? a->sample : "all");
  END();
  ROW("run");
  fprintf(out, "%s, %s allocated", eph_fmt_life(B(b1), a->run_wall_s, EPH_CLOCK_SECONDS), eph_fmt_life(B(b2), a->run_bytes, EPH_CLOCK_BYTES));
  char gcs[256];
  eph_html_escape(out, eph_fmt_run_gc(gcs, sizeof gcs, a, "; "));
  END();
  ROW("objects allocated");
  if (a->sampled) {
    fprintf(out, "%s &plusmn; %s <span class=note>(estimated from %zu samples, 1 s.e.)</span>", eph_fmt_count(B(b1), a->objects_est),
            eph_fmt_count(B(b2), a->objects_se), a->nrecords);
    if (p->complete && p->totals.objects_allocated)
      fprintf(out, "; counted by the run: %s", eph_fmt_count(B(b1), (double)p->totals.objects_allocated));
  } else fprintf(out, "%s (every allocation recorded)", eph_fmt_count(B(b1), a->objects_est));
  END();
  ROW("bytes allocated");
  fprintf(out, "%s", eph_fmt_life(B(b1), a->bytes_est, EPH_CLOCK_BYTES));
  if (a->sampled) fprintf(out, " &plusmn; %s", eph_fmt_life(B(b2), a->bytes_se, EPH_CLOCK_BYTES));
  END();
  ROW("alive at exit");
  fprintf(out, "%zu records (%.1f %%) &mdash; censored: lower bounds, handled by Kaplan&ndash;Meier", a->ncensored,
          100.0 * (double)a->ncensored / (double)a->nrecords);
  END();
  ROW("mean lifetime");
  fprintf(out, "%s%s of the run &middot; %s &middot; %s", a->ncensored ? "&ge; " : "", eph_fmt_life(B(b1), a->mean[EPH_CLOCK_REL], EPH_CLOCK_REL),
          eph_fmt_life(B(b2), a->mean[EPH_CLOCK_BYTES], EPH_CLOCK_BYTES), eph_fmt_life(B(b3), a->mean[EPH_CLOCK_SECONDS], EPH_CLOCK_SECONDS));
  END();
  if (a->n_interval) {
    static const char *const ends[] = {"the upper end (the GC that found them dead)", "the lower end (the last GC they survived)", "the midpoint"};
    ROW("GC-found deaths");
    fprintf(out, "%zu records died somewhere in (last GC survived, GC that found them dead]; lifetimes use %s. Mean over the interval: %s &ndash; %s of the run.",
            a->n_interval, ends[a->opts.end], eph_fmt_life(B(b1), a->mean_lo[EPH_CLOCK_REL], EPH_CLOCK_REL),
            eph_fmt_life(B(b2), a->mean[EPH_CLOCK_REL], EPH_CLOCK_REL));
    END();
  }
  if (!p->complete) {
    ROW("warning");
    eph_html_escape(out, p->warning[0] ? p->warning : "incomplete file");
    END();
  }
#undef ROW
#undef END
  fputs("</table>\n", out);
}

void eph_html_figure(FILE *out, struct plot_ctx *pc, const char *name, const char *caption, const char *script,
                     const char *data, int w, int h) {
  figure_sized(out, pc, name, caption, script, data, w, h);
}

bool eph_render_html(FILE *out, const eph_analysis *a, const char *plot_dir, char *failed, size_t failedlen) {
  return eph_render_html_with(out, a, NULL, NULL, plot_dir, failed, failedlen);
}

bool eph_render_html_with(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *lua, const eph_spacetime *flame,
                          const char *plot_dir, char *failed, size_t failedlen) {
  plot_ctx pc = {eph_gnuplot_available(), plot_dir, "", 0, ""};
  fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>Ephemera report: ", out);
  eph_html_escape(out, a->title);
  fputs("</title>\n<style>\n"
        "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1560px;margin:24px auto;padding:0 20px;color:#1d2433;background:#fafbfc}\n"
        "h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:34px 0 10px;border-bottom:2px solid #e3e8ef;padding-bottom:4px}\n"
        ".sub{color:#5b6578;margin-bottom:18px}table{border-collapse:collapse;font-size:13px;background:white}\n"
        "table.kv th{text-align:left;padding:4px 14px 4px 0;color:#5b6578;font-weight:600;vertical-align:top}table.kv td{padding:4px 0}\n"
        "table.data{width:100%;box-shadow:0 1px 3px rgba(0,0,0,.08)}table.data th{background:#eef2f7;padding:4px 5px;font-weight:600;border:1px solid #dde3ea}\n"
        "table.data td{padding:4px 5px;border:1px solid #e7ebf0;text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\n"
        "table.data td.name{text-align:left;font-family:ui-monospace,Menlo,monospace;white-space:normal;overflow-wrap:anywhere;min-width:14ch}\n"
        "div.wide{overflow-x:auto}\n"
        "tr.most td.name{font-weight:600}.mark{color:#d9a400}.tag{padding:1px 7px;border-radius:9px;font-size:11px}\n"
        ".tag.short{background:#e3f1e6;color:#23683a}.tag.long{background:#fde8d7;color:#9a4a0b}\n"
        "table.small{width:auto;margin:6px 0}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:14px}\n"
        "figure.plot{margin:0;background:white;padding:8px;box-shadow:0 1px 3px rgba(0,0,0,.08)}figure.plot img{width:100%;height:auto}\n"
        "figcaption,.note{font-size:12px;color:#5b6578}.noplot{padding:30px;background:#fff8e1;color:#7a5d00;border:1px dashed #e0c060}\n"
        "#plot-survival{max-width:860px}#plot-timeline{max-width:1240px}details{margin:4px 0 10px}summary{cursor:pointer;color:#3b6fb6;font-size:13px}\n"
        "</style></head><body>\n<h1>Object lifetimes: ", out);
  eph_html_escape(out, a->title);
  fputs("</h1>\n<div class=sub>Ephemera report &middot; ", out);
  const char *date = eph_file_meta(a->profile, "date");
  if (date) eph_html_escape(out, date), fputs(" &middot; ", out);
  const char *host = eph_file_meta(a->profile, "host");
  if (host) eph_html_escape(out, host);
  fputs("</div>\n", out);
  if (!pc.have_gnuplot)
    fputs("<p class=noplot id=noplot>The plots need gnuplot, which was not found when this report was made. Install it "
          "(Debian/Ubuntu: <code>apt-get install gnuplot-nox</code>) and run <code>ephemera report FILE --format html</code> again. The tables below are complete.</p>\n",
          out);
  fputs("<h2>Summary</h2>\n", out);
  summary(out, a);
  fputs("<h2>Lifetime distribution</h2>\n<p class=note>Relative to run time (FiLiP's normalisation, so runs with different profiling overhead compare fairly), "
        "and absolute in bytes allocated (the GC clock) and wall time. Bars: share of objects; line: share of bytes.</p>\n<div class=grid>\n",
        out);
  hist_plot(out, &pc, a, EPH_CLOCK_REL, "hist-rel");
  hist_plot(out, &pc, a, EPH_CLOCK_BYTES, "hist-bytes");
  fputs("</div>\n", out);
  for (int c = EPH_CLOCK_REL; c >= EPH_CLOCK_BYTES; c--) hist_table(out, a, (eph_clock)c);
  fprintf(out, "<h2>%s</h2>\n", a->opts.by == EPH_BY_SITE ? "Allocation sites" : "Classes");
  class_table(out, a);
  fputs("<h2>Survival</h2>\n", out);
  km_plot(out, &pc, a);
  if (a->heap) {
    fputs("<h2>Heap views (exact trace)</h2>\n<div class=grid>\n", out);
    heap_plots(out, &pc, a->heap);
    fputs("</div>\n", out);
  }
  if (a->lua && lua && lua->text) {
    const eph_tune_lua_advice *v = lua;
    fputs("<h2>Lua collector advice</h2>\n<p class=note>A hypothesis from the lifetime distribution; check it with "
          "<code>ephemera lua --gc ...</code> and the wall time.</p>\n<p>Run with gc ",
          out);
    eph_html_escape(out, a->lua_gc ? a->lua_gc : "(unknown)");
    fprintf(out, "; of the objects freed, %.0f %% died before the next GC cycle completed, %.0f %% within two; %.0f %% "
                 "were alive at the end.</p>\n<p class=lua-advice>",
            100 * v->share0, 100 * v->share01, 100 * v->censored);
    /* One paragraph: the text's line breaks become spaces (escaped as a
     * whole, so that its UTF-8 sequences stay whole). */
    char *text = strdup(v->text);
    if (text) {
      for (char *c = text; *c; c++)
        if (*c == '\n') *c = ' ';
      eph_html_escape(out, text);
      free(text);
    }
    fputs("</p>\n", out);
  }
  eph_html_timeline(out, &pc, a);   /* render_timeline.c */
  eph_html_flamegraph(out, flame); /* render_flame.c */
  if (pc.why[0]) {
    fputs("<p class=note>Some plots failed: ", out);
    eph_html_escape(out, pc.why);
    fputs("</p>\n", out);
  }
  fputs("</body></html>\n", out);
  if (pc.write_errno) {
    snprintf(failed, failedlen, "%s", pc.write_path);
    errno = pc.write_errno;
    return false;
  }
  return true;
}
