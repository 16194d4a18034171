/*
 * render_bench_table.c — the harness's results as tables: a bench report
 * as text, CSV or Markdown (or the results file's JSON), the nominal
 * statistics, the calibration runs.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "render_bench.h"
#include "base/escape.h"

int eph_bench_format_parse(const char *s, eph_bench_format *out) {
  static const struct {
    const char *name;
    eph_bench_format f;
  } names[] = {{"text", EPH_BENCH_TEXT}, {"csv", EPH_BENCH_CSV},      {"json", EPH_BENCH_JSON},
               {"md", EPH_BENCH_MARKDOWN}, {"markdown", EPH_BENCH_MARKDOWN}, {"html", EPH_BENCH_HTML}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(s, names[i].name)) return *out = names[i].f, 0;
  return -1;
}

static double pct(const eph_bench_stat *s) { return s->mean > 0 ? 100 * s->ci / s->mean : 0; }
static double mib(double b) { return b / 1048576.0; }

static const char *PCT_NAMES[EPH_BENCH_NPCT] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};

bool eph_bench_geomean_same_series(const eph_bench_geomean *a, const eph_bench_geomean *b) {
  return !strcmp(a->gc, b->gc) && !strcmp(a->profile, b->profile);
}

bool eph_bench_geomean_opens_series(const eph_bench_report *rep, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (eph_bench_geomean_same_series(&rep->geomean[k], &rep->geomean[i])) return false;
  return true;
}

/* Figure 1 as a table: a row per collector (or GC parameters), a column
 * per heap factor, "wall/task" geometric-mean LBO; a point that some
 * target did not run says how many did. */
static void geomean_text(FILE *out, const eph_bench_report *rep) {
  if (rep->ntargets < 2) return;
  double factors[32];
  size_t nf = 0;
  for (size_t i = 0; i < rep->ngeomean && nf < 32; i++) {
    size_t k = 0;
    while (k < nf && factors[k] != rep->geomean[i].factor) k++;
    if (k == nf) factors[nf++] = rep->geomean[i].factor;
  }
  fprintf(out, "\nLBO, geometric mean over the %zu targets, wall / task clock (DaCapo Chopin's Figure 1):\n  %-22s", rep->ntargets,
          "configuration");
  for (size_t f = 0; f < nf; f++) {
    char h[32];
    if (factors[f] > 0) snprintf(h, sizeof h, "heap=%gx", factors[f]);
    else snprintf(h, sizeof h, "no limit");
    fprintf(out, " %13s", h);
  }
  fputc('\n', out);
  for (size_t i = 0; i < rep->ngeomean; i++) {
    const eph_bench_geomean *g = &rep->geomean[i];
    if (!eph_bench_geomean_opens_series(rep, i)) continue; /* its series is printed */
    char label[600];
    snprintf(label, sizeof label, "%s%s%s", g->gc[0] ? g->gc : "defaults", g->profile[0] ? " profile:" : "", g->profile);
    fprintf(out, "  %-22s", label);
    for (size_t f = 0; f < nf; f++) {
      const eph_bench_geomean *pt = NULL;
      for (size_t k = i; k < rep->ngeomean && !pt; k++)
        if (rep->geomean[k].factor == factors[f] && eph_bench_geomean_same_series(&rep->geomean[k], g))
          pt = &rep->geomean[k];
      char cell[40] = "-";
      if (pt && pt->complete) snprintf(cell, sizeof cell, "%.3f/%.3f", pt->lbo_wall, pt->lbo_task);
      else if (pt) snprintf(cell, sizeof cell, "(%zu of %zu ran)", pt->ntargets, rep->ntargets);
      fprintf(out, " %13s", cell);
    }
    fputc('\n', out);
  }
}

int eph_render_bench_text(FILE *out, const eph_bench_report *rep) {
  for (size_t i = 0; i < rep->nrows; i++) {
    const eph_bench_summary *r = &rep->rows[i];
    if (!i || r->target_index != rep->rows[i - 1].target_index) {
      fprintf(out, "%s%s\n", i ? "\n" : "", r->target.spec);
      fprintf(out, "  %-22s %4s %16s %16s %9s %7s %9s %8s %8s %9s\n", "configuration", "inv", "wall s (95% CI)",
              "task s (95% CI)", "GC s", "GCs", "peak MiB", "LBO wall", "LBO task", "warm-up s");
    }
    char label[300];
    eph_bench_config_label(&r->config, label, sizeof label);
    if (!r->invocations) {
      fprintf(out, "  %-22s %4zu  all %zu failed: %s\n", label, r->invocations, r->failed, r->first_error);
      continue;
    }
    char gc[32] = "-", gcs[32] = "-";
    if (r->have_gc) snprintf(gc, sizeof gc, "%.3f", r->gc.mean);
    if (r->gc_count.mean >= 0) snprintf(gcs, sizeof gcs, "%.0f", r->gc_count.mean);
    char wall[40], task[40];
    snprintf(wall, sizeof wall, "%.3f ±%.1f%%", r->wall.mean, pct(&r->wall));
    snprintf(task, sizeof task, "%.3f ±%.1f%%", r->task.mean, pct(&r->task));
    char warm[32] = "-";
    if (r->warmups) snprintf(warm, sizeof warm, "%.3f", r->warmup_wall);
    /* 17 columns for 16 characters: "±" is two bytes */
    fprintf(out, "  %-22s %4zu %17s %17s %9s %7s %9.1f %8.3f %8.3f %9s\n", label, r->invocations, wall, task, gc, gcs,
            mib(r->peak.mean), r->lbo_wall, r->lbo_task, warm);
    if (r->failed) fprintf(out, "  %-22s      %zu invocation(s) failed: %s\n", "", r->failed, r->first_error);
    if (r->simple.n) {
      const eph_bench_latency *l[3] = {&r->simple, &r->metered_100ms, &r->metered_full};
      const char *names[3] = {"simple", "metered 100ms", "metered full"};
      for (int k = 0; k < 3; k++) {
        fprintf(out, "  %-22s latency %-13s ms:", k ? "" : "", names[k]);
        for (int p = 0; p < EPH_BENCH_NPCT; p++) fprintf(out, " %s %.3f", PCT_NAMES[p], l[k]->ms[p]);
        fprintf(out, "  (%zu events)\n", l[k]->n);
      }
    }
  }
  geomean_text(out, rep);
  if (rep->wide_ci)
    fprintf(out, "\nwarning: %zu configuration(s) have a wall-time 95%% CI wider than 3%% of the mean: more invocations "
                 "(--invocations, --ci 1%%) would tighten them\n",
            rep->wide_ci);
  return ferror(out) ? -1 : 0;
}

/* CSV: a field quoted when it holds a comma, quote or newline. */
int eph_render_bench_csv(FILE *out, const eph_bench_report *rep) {
  fputs("target,gc,factor,heap_bytes,invocations,failed,wall_mean_s,wall_median_s,wall_ci_s,task_mean_s,task_ci_s,"
        "gc_mean_s,gc_cpu_mean_s,mutator_mean_s,gc_count_mean,peak_bytes_mean,allocated_bytes_mean,lbo_wall,"
        "lbo_wall_lo,lbo_wall_hi,lbo_task,lbo_task_lo,lbo_task_hi,warmups,warmup_wall_s,events",
        out);
  const char *kinds[3] = {"simple", "metered100ms", "meteredfull"};
  const char *pn[EPH_BENCH_NPCT] = {"p50", "p90", "p99", "p999", "p9999", "max"};
  for (int k = 0; k < 3; k++)
    for (int p = 0; p < EPH_BENCH_NPCT; p++) fprintf(out, ",%s_%s_ms", kinds[k], pn[p]);
  fputs(",profile\n", out);
  for (size_t i = 0; i < rep->nrows; i++) {
    const eph_bench_summary *r = &rep->rows[i];
    eph_csv_field(out, r->target.spec, EPH_CSV_QUOTE_AS_NEEDED);
    fputc(',', out);
    eph_csv_field(out, r->config.gc, EPH_CSV_QUOTE_AS_NEEDED);
    fprintf(out, ",%g,%llu,%zu,%zu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.2f,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,"
                 "%zu,%.6f,%zu",
            r->config.factor, (unsigned long long)r->config.heap_bytes, r->invocations, r->failed, r->wall.mean,
            r->wall.median, r->wall.ci, r->task.mean, r->task.ci, r->have_gc ? r->gc.mean : -1,
            r->have_gc ? r->gc_cpu.mean : -1, r->have_gc ? r->mutator.mean : -1, r->gc_count.mean, r->peak.mean,
            r->allocated.mean, r->lbo_wall, r->lbo_wall_lo, r->lbo_wall_hi, r->lbo_task, r->lbo_task_lo,
            r->lbo_task_hi, r->warmups, r->warmup_wall, r->simple.n);
    const eph_bench_latency *l[3] = {&r->simple, &r->metered_100ms, &r->metered_full};
    for (int k = 0; k < 3; k++)
      for (int p = 0; p < EPH_BENCH_NPCT; p++) fprintf(out, ",%.4f", l[k]->ms[p]);
    fputc(',', out);
    eph_csv_field(out, r->config.profile, EPH_CSV_QUOTE_AS_NEEDED);
    fputc('\n', out);
  }
  return ferror(out) ? -1 : 0;
}

int eph_render_bench_markdown(FILE *out, const eph_bench_report *rep) {
  fputs("| target | configuration | invocations | wall s | ± 95% CI | task s | ± 95% CI | GC s | GCs | peak MiB | LBO "
        "wall | LBO task | p99 ms | metered p99 (100 ms) |\n",
        out);
  fputs("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", out);
  for (size_t i = 0; i < rep->nrows; i++) {
    const eph_bench_summary *r = &rep->rows[i];
    char label[300];
    eph_bench_config_label(&r->config, label, sizeof label);
    fprintf(out, "| `%s` | %s | %zu", r->target.spec, label, r->invocations);
    if (!r->invocations) {
      fprintf(out, " | failed: %s |||||||||||\n", r->first_error);
      continue;
    }
    fprintf(out, " | %.3f | %.1f%% | %.3f | %.1f%% |", r->wall.mean, pct(&r->wall), r->task.mean, pct(&r->task));
    if (r->have_gc) fprintf(out, " %.3f | %.0f |", r->gc.mean, r->gc_count.mean);
    else fputs(" - | - |", out);
    fprintf(out, " %.1f | %.3f | %.3f |", mib(r->peak.mean), r->lbo_wall, r->lbo_task);
    if (r->simple.n) fprintf(out, " %.3f | %.3f |\n", r->simple.ms[2], r->metered_100ms.ms[2]);
    else fputs(" - | - |\n", out);
  }
  return ferror(out) ? -1 : 0;
}

int eph_render_bench(FILE *out, eph_bench_format fmt, const eph_bench_results *r, const eph_bench_report *rep,
                     eph_error *err) {
  switch (fmt) {
  case EPH_BENCH_CSV: return eph_render_bench_csv(out, rep);
  case EPH_BENCH_MARKDOWN: return eph_render_bench_markdown(out, rep);
  case EPH_BENCH_JSON: return eph_bench_results_write_json(r, rep, out, err);
  default: return eph_render_bench_text(out, rep);
  }
}

int eph_render_bench_nominal(FILE *out, const eph_bench_nominal_table *t) {
  fprintf(out, "nominal statistics (size %s, %lld invocations each; DaCapo Chopin's, docs/bench.md)\n", t->size,
          t->invocations);
  fprintf(out, "%-12s %9s %10s %8s %8s %8s %9s %9s %8s %8s %8s\n", "workload", "minheap", "alloc", "obj size",
          "GC @2x", "GCs @2x", "survival", "peak live", "2x/6x", "p50 ms", "p99 ms");
  fprintf(out, "%-12s %9s %10s %8s %8s %8s %9s %9s %8s %8s %8s\n", "", "MiB", "MB/s", "bytes", "share", "", "copied",
          "MiB", "time", "", "");
  for (size_t i = 0; i < t->nrows; i++) {
    const eph_bench_nominal_row *r = &t->rows[i];
    fprintf(out, "%-12s", r->workload);
    if (r->error[0]) {
      fprintf(out, " failed: %s\n", r->error);
      continue;
    }
    fprintf(out, " %9.1f %10.0f %8.1f %7.1f%% %8.0f %8.1f%% %9.1f %8.3f", r->minheap_bytes / 1048576.0,
            r->alloc_rate_mb_s, r->mean_object_bytes, 100 * r->gc_share_2x, r->gc_count_2x,
            100 * r->scavenge_survival, r->peak_live_bytes / 1048576.0, r->heap_sensitivity);
    if (r->have_latency) fprintf(out, " %8.3f %8.3f\n", r->latency_p50_ms, r->latency_p99_ms);
    else fprintf(out, " %8s %8s\n", "-", "-");
  }
  return ferror(out) ? -1 : 0;
}

int eph_render_bench_calibration(FILE *out, const eph_bench_calibration *c) {
  fprintf(out, "%-12s %-7s %-44s %6s %12s %12s %8s\n", "workload", "size", "gc", "GCs", "measured s", "predicted s",
          "error");
  for (size_t i = 0; i < c->nruns; i++) {
    const eph_bench_calibration_run *r = &c->runs[i];
    fprintf(out, "%-12s %-7s %-44s %6zu %12.6f %12.6f %7.1f%%%s\n", r->workload, r->size, r->gc, r->collections,
            r->measured_s, r->predicted_s, 100 * r->error, r->fitted ? "" : "  (too little GC: not fitted)");
  }
  return ferror(out) ? -1 : 0;
}
