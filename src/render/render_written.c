/*
 * render_written.c — what a command wrote, in one line (render_written.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "render_written.h"

void eph_render_merlin_written(FILE *out, const char *path, const eph_trace_merlin *m, double seconds) {
  fprintf(out, "wrote %s: %zu records (%" PRIu64 " censored) in %.3f s\n", path, m->nobjects, m->stats.censored,
          seconds);
}

void eph_render_pprof_written(FILE *out, const char *path, const eph_spacetime *s) {
  fprintf(out, "wrote %s (%zu samples from %zu records)\n", path, s->ncells, s->nrecords);
}

void eph_render_chrome_written(FILE *out, const char *path, const eph_timeline *t) {
  fprintf(out, "wrote %s (%zu collections)\n", path, t->ngcs);
}
