/*
 * render_timeline.c — the heap timeline (src/analysis/timeline.h) as a CSV
 * series and as a section of the HTML report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "html_sections.h"
#include "render.h"
#include "analysis/timeline.h"

static const char *kind_name(eph_gc_kind k) { return k == EPH_GC_FULL ? "full" : "scavenge"; }

void eph_render_timeline_csv(FILE *o, const eph_timeline *t) {
  fprintf(o, "time_s,event,gc_index,kind,used_bytes,committed_bytes,pause_ms,allocated_bytes\n");
  for (size_t i = 0; i < t->ngcs; i++) {
    const eph_timeline_gc *g = &t->gcs[i];
    fprintf(o, "%.9f,start,%llu,%s,%.0f,%.0f,%.6f,%.0f\n", g->start_s, (unsigned long long)g->index, kind_name(g->kind),
            g->used_before, g->committed_before, 1e3 * g->pause_s, g->allocated);
    fprintf(o, "%.9f,end,%llu,%s,%.0f,%.0f,%.6f,%.0f\n", g->start_s + g->pause_s, (unsigned long long)g->index,
            kind_name(g->kind), g->used_after, g->committed_after, 1e3 * g->pause_s, g->allocated);
  }
}

void eph_html_timeline(FILE *out, struct plot_ctx *pc, const eph_analysis *a) {
  eph_timeline t;
  if (!eph_timeline_build(a->profile, &t) || !t.ngcs) {
    eph_timeline_free(&t);
    return;
  }
  char *data = NULL, *script = NULL;
  size_t dl, sl;
  FILE *d = open_memstream(&data, &dl), *s = open_memstream(&script, &sl);
  if (!d || !s) {
    if (d) fclose(d);
    if (s) fclose(s);
    free(data);
    free(script);
    eph_timeline_free(&t);
    return;
  }
  /* index 0: the heap (time, used, committed) at each collection's two ends;
   * 1, 2: pauses of scavenges and full GCs (time, pause ms). */
  const double MB = 1024.0 * 1024.0;
  for (size_t i = 0; i < t.ngcs; i++) {
    const eph_timeline_gc *g = &t.gcs[i];
    fprintf(d, "%.9g %.6g %.6g\n%.9g %.6g %.6g\n", g->start_s, g->used_before / MB, g->committed_before / MB,
            g->start_s + g->pause_s, g->used_after / MB, g->committed_after / MB);
  }
  for (int k = 0; k < 2; k++) {
    fputs("\n\n", d);
    size_t n = 0;
    for (size_t i = 0; i < t.ngcs; i++)
      if ((int)t.gcs[i].kind == k) fprintf(d, "%.9g %.6g\n", t.gcs[i].start_s, 1e3 * t.gcs[i].pause_s), n++;
    if (!n) fputs("NaN NaN\n", d); /* gnuplot needs a point to plot an index */
  }
  fprintf(s, "set key top left\nset grid lc rgb '#dddddd'\nset xlabel 'wall time (s)'\nset ylabel 'heap (MB)'\n"
             "set y2label 'pause (ms)'\nset ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
             "set xrange [0:%.9g]\n",
          t.run_s > 0 ? t.run_s : 1);
  fputs("plot datafile index 0 using 1:3 with steps lw 2 lc rgb '#9aa5b8' title 'committed', "
        "datafile index 0 using 1:2 with lines lw 2 lc rgb '#3b6fb6' title 'used', "
        "datafile index 1 using 1:2 axes x1y2 with impulses lw 2 lc rgb '#1b9e77' title 'scavenge pause', "
        "datafile index 2 using 1:2 axes x1y2 with impulses lw 3 lc rgb '#d95f02' title 'full GC pause'\n",
        s);
  fclose(d);
  fclose(s);
  char b1[32], b2[32];
  fprintf(out, "<h2 id=timeline>Heap timeline</h2>\n<p class=note>From the collection event log: bytes in objects "
               "before and after each of the %zu collections (%zu scavenges, %zu full GCs) and committed memory "
               "(new space%s plus old space). Peak used %s, peak committed %s; longest pause %.3f ms, %.3f ms in "
               "all. The series is <code>timeline.csv</code> of <code>ephemera report --format csv</code>; "
               "<code>ephemera export --chrome-trace</code> opens it in Perfetto.</p>\n",
          t.ngcs, t.nscavenges, t.nfull, t.new_space > 0 ? "" : " unknown: not counted",
          eph_fmt_life(b1, sizeof b1, t.peak_used, EPH_CLOCK_BYTES),
          eph_fmt_life(b2, sizeof b2, t.peak_committed, EPH_CLOCK_BYTES), 1e3 * t.max_pause_s, 1e3 * t.total_pause_s);
  eph_html_figure(out, pc, "timeline",
                  "Heap used (blue) and committed (grey) over wall time; vertical bars: each collection's pause "
                  "(right axis), green for scavenges, orange for full GCs.",
                  script, data, 1200, 440);
  free(data);
  free(script);
  eph_timeline_free(&t);
}
