/*
 * render_text.c — the terminal report: summary, histograms as bars, the class
 * table, survival at a few points with bands, and a coarse heap profile.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

#define B(buf) buf, sizeof buf

static void bin_label(char *buf, size_t len, const eph_histogram *h, size_t i) {
  char a[32], b[32];
  if (h->log_bins && i == 0) snprintf(buf, len, "< %s", eph_fmt_life(B(b), h->edges[1], h->clock));
  else if (i + 1 == h->nbins && h->log_bins) snprintf(buf, len, ">= %s", eph_fmt_life(B(a), h->edges[i], h->clock));
  else snprintf(buf, len, "%s .. %s", eph_fmt_life(B(a), h->edges[i], h->clock), eph_fmt_life(B(b), h->edges[i + 1], h->clock));
}

static void histogram(FILE *out, const eph_histogram *h) {
  fprintf(out, "\nLifetime distribution: %s (%s bins)\n", eph_clock_name(h->clock), h->log_bins ? "logarithmic" : "linear");
  fprintf(out, "  %-22s %7s %7s %7s  %s\n", "lifetime", "objects", "bytes", "alive@", "objects (# died, + alive at exit)");
  double maxc = 0;
  for (size_t i = 0; i < h->nbins; i++)
    if (h->count[i] + h->count_cens[i] > maxc) maxc = h->count[i] + h->count_cens[i];
  for (size_t i = 0; i < h->nbins; i++) {
    char lab[64];
    bin_label(B(lab), h, i);
    double c = h->count[i] + h->count_cens[i], by = h->bytes[i] + h->bytes_cens[i];
    fprintf(out, "  %-22s %6.1f%% %6.1f%% %6.1f%%  ", lab, h->total_count ? 100 * c / h->total_count : 0,
            h->total_bytes ? 100 * by / h->total_bytes : 0, h->total_count ? 100 * h->count_cens[i] / h->total_count : 0);
    int width = 40;
    int nd = maxc > 0 ? (int)lround(h->count[i] / maxc * width) : 0;
    int nc = maxc > 0 ? (int)lround(h->count_cens[i] / maxc * width) : 0;
    if (h->count[i] > 0 && nd == 0 && nc == 0) fputc('.', out);
    for (int k = 0; k < nd; k++) fputc('#', out);
    for (int k = 0; k < nc; k++) fputc('+', out);
    fputc('\n', out);
  }
}

static void class_table(FILE *out, const eph_analysis *a) {
  const char *what = a->opts.by == EPH_BY_SITE ? "site" : "class";
  fprintf(out, "\n%s table (sorted by share of allocations; * most allocated >= %g %%; short: share of objects living <= %g %% of\n"
               "the run; lived: short if the mean is; lifetimes estimated from what each death tells, %% of the bytes allocated)\n",
          a->opts.by == EPH_BY_SITE ? "Allocation-site" : "Class", a->opts.most_allocated_pct, a->opts.short_threshold_pct);
  bool gcmode = a->n_interval > 0;
  fprintf(out, "  %-26s %7s %7s %10s %9s %9s %9s %6s %10s %10s %10s %6s %7s %5s%s\n", what, "%objs", "%mem", "mean", "s.e.",
          "median", "p90", "short", "mean", "median", "p90", "GCs", "alive@", "lived", gcmode ? "  mean(lower end)" : "");
  fprintf(out, "  %-26s %7s %7s %10s %9s %9s %9s %6s %10s %10s %10s %6s %7s %5s%s\n", "", "", "", "% run", "", "% run", "% run", "",
          "bytes", "bytes", "bytes", "surv.", "exit", "", gcmode ? "  % run, a bound" : "");
  size_t shown = 0, unresolved = 0;
  for (size_t i = 0; i < a->nrows; i++) {
    const eph_group_row *r = &a->rows[i];
    if (shown >= 25 && !r->most_allocated) continue;
    shown++;
    const eph_life_est *e = &r->est;
    char m[40], se[32], md[32], p9[32], mb[32], mdb[32], p9b[32], lo[32], sh[16], name[28];
    snprintf(name, sizeof name, "%s%s", r->most_allocated ? "*" : " ", r->name);
    const char *ge = r->ncensored ? ">" : " "; /* means are lower bounds when some are alive at exit */
    snprintf(m, sizeof m, "%s%s", ge, eph_fmt_life(B(se), e->mean_pct, EPH_CLOCK_REL));
    eph_fmt_life(B(se), e->mean_pct_se, EPH_CLOCK_REL);
    eph_fmt_life(B(md), e->median_pct, EPH_CLOCK_REL);
    eph_fmt_life(B(p9), e->p90_pct, EPH_CLOCK_REL);
    snprintf(sh, sizeof sh, "%.0f%%%s", 100 * e->short_share, e->resolved ? "" : "?");
    eph_fmt_life(B(mb), e->mean_bytes, EPH_CLOCK_BYTES);
    eph_fmt_life(B(mdb), e->median_bytes, EPH_CLOCK_BYTES);
    eph_fmt_life(B(p9b), e->p90_bytes, EPH_CLOCK_BYTES);
    unresolved += !e->resolved;
    fprintf(out, "  %-26.26s %6.1f%% %6.1f%% %10s %9s %9s %9s %6s %10s %10s %10s %6.1f %6.1f%% %5s", name, r->pct_objects,
            r->pct_bytes, m, se, md, p9, sh, mb, mdb, p9b, r->gcs_survived, 100.0 * (double)r->ncensored / (double)r->nrecords,
            r->short_lived ? "short" : "long");
    if (gcmode) fprintf(out, "  %s", eph_fmt_life(B(lo), a->run_bytes > 0 ? 100 * r->mean_lo[EPH_CLOCK_BYTES] / a->run_bytes : NAN, EPH_CLOCK_REL));
    fputc('\n', out);
  }
  if (shown < a->nrows) fprintf(out, "  (%zu more %ss below 25 rows and under %g %%; see --format csv)\n", a->nrows - shown, what, a->opts.most_allocated_pct);
  fprintf(out, "  %s: Turnbull's estimate from the death intervals (exact deaths: Kaplan-Meier); objects alive at exit count as\n"
               "  alive; '-': not reached within the run; '>' marks means that are lower bounds (some objects alive at exit);\n"
               "  s.e. from %d bootstrap replicates (classes of >= %g %% of allocations)%s\n",
          a->exact ? "mean, median, p90, short" : "mean, median, p90, short", a->opts.nboot, a->opts.most_allocated_pct,
          unresolved ? ";\n  '?': unresolved (see Resolution)" : "");
}

/* What the run's collections can tell: the resolution, and which classes lie below it. */
static void resolution(FILE *out, const eph_analysis *a) {
  const eph_resolution *r = &a->res;
  char b1[48], b2[48];
  bool fin = !strcmp(a->mode, "finalization");
  if (a->exact) {
    fprintf(out, "lifetimes are exact (%s: each object's last-reachable time)%s\n", a->mode,
            !strcmp(a->mode, "merlin") ? "; bytes allocated exclude Merlin's two trailer words an object" : "");
    return;
  }
  if (!r->interval) return;
  if (a->lua) {
    fprintf(out, "\nResolution: a death is seen when Lua's collector frees the object, up to a GC cycle after it became\n"
                 "  unreachable; lifetimes are estimated from (the cycle before, the free] (%" PRIu64 " cycles)\n", r->full_gcs);
    return;
  }
  fprintf(out, "\nResolution (deaths are found at collections, so they are seen late: ");
  if (fin) fprintf(out, "a finaliser runs after the collection that\n  found its object unreachable, up to a scavenge interval after the death, a full-GC interval for old objects)\n");
  else fprintf(out, "up to a scavenge interval after the\n  death, a full-GC interval for objects promoted before they died)\n");
  if (isfinite(r->scavenge_interval))
    fprintf(out, "  %" PRIu64 " scavenges, one every %s (%.2f %% of the run)", r->scavenges, eph_fmt_life(B(b1), r->scavenge_interval, EPH_CLOCK_BYTES),
            a->run_bytes > 0 ? 100 * r->scavenge_interval / a->run_bytes : NAN);
  else fprintf(out, "  %" PRIu64 " scavenges", r->scavenges);
  if (isfinite(r->full_interval))
    fprintf(out, "; %" PRIu64 " full GCs, one every %s (%.1f %% of the run)\n", r->full_gcs, eph_fmt_life(B(b2), r->full_interval, EPH_CLOCK_BYTES),
            a->run_bytes > 0 ? 100 * r->full_interval / a->run_bytes : NAN);
  else fprintf(out, "; %" PRIu64 " full GCs\n", r->full_gcs);
  if (!r->have_gc_log) fprintf(out, "  (the file has no GC log: brackets as recorded)\n");
  if (r->too_few)
    fprintf(out, "  WARNING: TOO FEW COLLECTIONS (%" PRIu64 " scavenges): the run ended before its collections could tell short\n"
                 "  lifetimes from long ones; every lifetime here may be 'until the next collection'. Profile a larger run,\n"
                 "  or a smaller eden (--gc eden=...), or an exact mode (mode=merlin).\n", r->scavenges);
  /* classes whose estimated median lies below one scavenge interval, and the unresolved */
  const char *sep = "";
  size_t n = 0;
  for (size_t i = 0; i < a->nrows && isfinite(r->scavenge_interval); i++) {
    const eph_group_row *g = &a->rows[i];
    if (!g->most_allocated || !(g->est.median_bytes < r->scavenge_interval)) continue;
    if (!n++) fprintf(out, "  below one scavenge interval (median), resolved by the spread of births between collections:\n   ");
    fprintf(out, "%s %s", sep, g->name), sep = ",";
  }
  if (n) fputc('\n', out);
  sep = "", n = 0;
  for (size_t i = 0; i < a->nrows; i++) {
    const eph_group_row *g = &a->rows[i];
    if (!g->most_allocated || g->est.resolved) continue;
    if (!n++) fprintf(out, "  unresolved (the deaths only full GCs found could move the mean by > 0.5 points of %% of run or the\n"
                           "  short-lived share by > 5 points; or nepotism: proven lower ends move it that much; or too few collections):\n   ");
    fprintf(out, "%s %s (%.1f pp%s)", sep, g->name, g->est.full_gc_mean_pp, g->est.nepotism_sensitive ? ", nepotism" : ""), sep = ",";
  }
  if (n) fputc('\n', out);
  if (r->nepotism_suspects)
    fprintf(out, "  nepotism: %zu deaths (%.1f %% of GC-found ones) that only a full GC found had been seen alive last at a scavenge,\n"
                 "  which keeps young objects that dead old ones point to: their lower end is taken at the last full GC they\n"
                 "  survived, or their birth (a lower end is a bound only for objects seen alive by a full GC or never promoted)\n",
            r->nepotism_suspects, 100 * r->nepotism_share);
}

static void survival(FILE *out, const eph_analysis *a) {
  eph_clock c = a->opts.km_clock;
  if (a->km_estimated)
    fprintf(out, "\nSurvival (estimated from the death intervals, fraction still alive after a lifetime of ..., %s;\n"
                 "  95 %% bootstrap band for the most allocated)\n", c == EPH_CLOCK_REL ? "% of the bytes allocated" : eph_clock_name(c));
  else
    fprintf(out, "\nSurvival (Kaplan-Meier, fraction still alive after a lifetime of ..., %s; 95 %% Greenwood band)\n",
            eph_clock_name(c));
  double pts[7];
  size_t np = 0;
  if (c == EPH_CLOCK_REL) {
    const double rel[] = {0.01, 0.1, 1, 5, 25, 50, 90};
    memcpy(pts, rel, sizeof rel);
    np = 7;
  } else {
    double m = a->km[0].max_time;
    for (np = 0; np < 7; np++) pts[np] = m * pow(10, (double)np - 6);
  }
  fprintf(out, "  %-22s %8s", "", "records");
  for (size_t i = 0; i < np; i++) {
    char b[32];
    fprintf(out, " %13s", eph_fmt_life(B(b), pts[i], c));
  }
  fputc('\n', out);
  for (size_t k = 0; k < a->nkm; k++) {
    const eph_km *km = &a->km[k];
    fprintf(out, "  %-22.22s %8zu", km->group == UINT32_MAX ? "all objects" : eph_group_name(a, km->group), km->nrecords);
    double s = 1, lo = 1, hi = 1;
    for (size_t i = 0, j = 0; i < np; i++) { /* pts ascend: each point's step search goes on from the last */
      for (; j < km->n && km->time[j] <= pts[i]; j++) s = km->surv[j], lo = km->lo[j], hi = km->hi[j];
      char cell[32];
      double hw = (hi - lo) / 2;
      if (hw < 0.0005) snprintf(cell, sizeof cell, "%.3f", s);
      else snprintf(cell, sizeof cell, "%.3f +-%.3f", s, hw);
      fprintf(out, " %13s", cell);
    }
    fputc('\n', out);
  }
}

static void heap_profile(FILE *out, const eph_heapview *h) {
  const int W = 60, H = 10;
  fprintf(out, "\nHeap profile (exact trace; live bytes over bytes allocated, Merlin Fig. 12; full views in --format html)\n");
  double maxlive = 0;
  double tot[60];
  for (int x = 0; x < W; x++) {
    size_t c = (size_t)((double)(x + 1) / W * (double)h->cols) - 1;
    double s = 0;
    for (size_t g = 0; g < h->segs; g++) s += h->live[g * h->cols + c];
    tot[x] = s;
    if (s > maxlive) maxlive = s;
  }
  char b[32];
  for (int y = H; y >= 1; y--) {
    fprintf(out, "  %10s |", y == H ? eph_fmt_life(B(b), maxlive, EPH_CLOCK_BYTES) : "");
    for (int x = 0; x < W; x++) fputc(maxlive > 0 && tot[x] / maxlive * H >= y - 0.5 ? '#' : ' ', out);
    fputc('\n', out);
  }
  fprintf(out, "  %10s +", "0");
  for (int x = 0; x < W; x++) fputc('-', out);
  fprintf(out, "\n  %11s0 %*s\n", "", W - 1, eph_fmt_life(B(b), h->t_max, EPH_CLOCK_BYTES));
}

/* Lua profiles: the collector advice, as `ephemera lua --summary` states it. */
static void lua_advice(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *v) {
  const char *text = v->text;
  if (!text) return;
  fprintf(out, "\nLua collector advice (a hypothesis; check it with `ephemera lua --gc ...` and the wall time):\n");
  fprintf(out, "  run with gc %s; of the objects freed, %.0f %% died before the next GC cycle completed, %.0f %% within two;\n"
               "  %.0f %% were alive at the end\n",
          a->lua_gc ? a->lua_gc : "(unknown)", 100 * v->share0, 100 * v->share01, 100 * v->censored);
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    fprintf(out, "  %.*s\n", len, line);
    line = nl ? nl + 1 : NULL;
  }
}

void eph_render_text(FILE *out, const eph_analysis *a, const eph_tune_lua_advice *lua, bool color) {
  const eph_file *p = a->profile;
  char b1[48], b2[48], b3[48], b4[48];
  const char *size = eph_file_meta(p, "size");
  const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
  fprintf(out, "%sEphemera report: %s%s%s%s\n", bold, a->title, size ? " (size " : "", size ? size : "", size ? ")" : "");
  fputs(off, out);
  const char *gc = eph_file_meta(p, "gc");
  fprintf(out, "mode %s, sampling %s%s%s\n", a->mode, a->sample ? a->sample : "all", gc ? ", gc " : "", gc ? gc : "");
  fprintf(out, "run: %s, %s allocated", eph_fmt_life(B(b1), a->run_wall_s, EPH_CLOCK_SECONDS),
          eph_fmt_life(B(b2), a->run_bytes, EPH_CLOCK_BYTES));
  char gcs[256];
  fputs(eph_fmt_run_gc(gcs, sizeof gcs, a, ", "), out);
  fputc('\n', out);
  if (!p->complete) fprintf(out, "warning: %s\n", p->warning[0] ? p->warning : "incomplete file (no closing totals)");
  if (a->sampled) {
    fprintf(out, "objects allocated: %s +- %s (estimate from %zu samples, 1 s.e.)", eph_fmt_count(B(b1), a->objects_est),
            eph_fmt_count(B(b2), a->objects_se), a->nrecords);
    if (p->complete && p->totals.objects_allocated)
      fprintf(out, "; the run counted %s", eph_fmt_count(B(b3), (double)p->totals.objects_allocated));
    fprintf(out, "\nbytes allocated (sampled objects' estimate): %s +- %s\n", eph_fmt_life(B(b1), a->bytes_est, EPH_CLOCK_BYTES),
            eph_fmt_life(B(b2), a->bytes_se, EPH_CLOCK_BYTES));
  } else {
    fprintf(out, "objects: %s records, %s (every allocation recorded)\n", eph_fmt_count(B(b1), a->objects_est),
            eph_fmt_life(B(b2), a->bytes_est, EPH_CLOCK_BYTES));
  }
  fprintf(out, "alive at exit (censored): %zu records (%.1f %%): lifetimes are lower bounds, handled by Kaplan-Meier\n",
          a->ncensored, 100.0 * (double)a->ncensored / (double)a->nrecords);
  /* With deaths only known to an interval, two means: the one at --end
   * (what the histograms use) and the estimate over the intervals, the
   * one to quote; each line says which it is. */
  static const char *const at_end[] = {"deaths at the GC that found them, --end death",
                                       "deaths at the last GC they survived, --end alive", "deaths at the midpoint, --end mid"};
  if (a->n_interval) fprintf(out, "mean lifetime (%s; what the histograms use): ", at_end[a->opts.end]);
  else fputs("mean lifetime: ", out);
  fprintf(out, "%s%s of run (s.e. %s), %s%s, %s%s\n", a->ncensored ? ">" : "",
          eph_fmt_life(B(b1), a->mean[EPH_CLOCK_REL], EPH_CLOCK_REL), eph_fmt_life(B(b4), a->mean_se[EPH_CLOCK_REL], EPH_CLOCK_REL),
          a->ncensored ? ">" : "", eph_fmt_life(B(b2), a->mean[EPH_CLOCK_BYTES], EPH_CLOCK_BYTES), a->ncensored ? ">" : "",
          eph_fmt_life(B(b3), a->mean[EPH_CLOCK_SECONDS], EPH_CLOCK_SECONDS));
  if (a->n_interval) fputs("estimated mean lifetime (the one to quote: each death spread over its interval): ", out);
  else fputs("estimated mean lifetime: ", out);
  fprintf(out, "%s%s of run (allocation clock%s%s); short-lived (<= %g %% of run): %.1f %% of objects\n",
          a->ncensored ? ">" : "", eph_fmt_life(B(b1), a->est.mean_pct, EPH_CLOCK_REL), isfinite(a->est.mean_pct_se) ? ", s.e. " : "",
          isfinite(a->est.mean_pct_se) ? eph_fmt_life(B(b2), a->est.mean_pct_se, EPH_CLOCK_REL) : "", a->opts.short_threshold_pct,
          100 * a->est.short_share);
  if (a->n_interval) {
    static const char *const ends[] = {"the upper end (the GC that found them dead)", "the lower end (the last GC they survived)",
                                       "the midpoint"};
    fprintf(out, "GC-found deaths: %zu records died somewhere in (last GC survived, GC that found them dead];\n"
                 "  histograms and wall-clock figures use %s (--end); the mean over that interval is %s .. %s of run\n",
            a->n_interval, ends[a->opts.end], eph_fmt_life(B(b1), a->mean_lo[EPH_CLOCK_REL], EPH_CLOCK_REL),
            eph_fmt_life(B(b2), a->mean[EPH_CLOCK_REL], EPH_CLOCK_REL));
  }
  resolution(out, a);
  histogram(out, &a->hist[EPH_CLOCK_REL]);
  histogram(out, &a->hist[EPH_CLOCK_BYTES]);
  histogram(out, &a->hist[EPH_CLOCK_SECONDS]);
  class_table(out, a);
  survival(out, a);
  if (a->heap) heap_profile(out, a->heap);
  if (a->lua && lua) lua_advice(out, a, lua);
}
