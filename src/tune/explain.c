/*
 * explain.c — why the recommendation works, in terms a user acts on: the
 * classes whose objects outlive the default eden (their bytes are what the
 * scavenger copies and what fills old space), and what the pick changes in
 * copying, full GCs and peak heap.
 */
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

typedef struct class_volume {
  double bytes;
  size_t id;
} class_volume;

static int by_bytes_desc(const void *a, const void *b) {
  const class_volume *x = a, *y = b;
  return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static void print_change(FILE *out, const char *what, double before, double after, const char *unit, double scale) {
  fprintf(out, "    %-12s %.1f -> %.1f %s", what, before / scale, after / scale, unit);
  if (before > 0) fprintf(out, " (%+.0f%%)", 100.0 * (after - before) / before);
  fputc('\n', out);
}

void tune_explain(FILE *out, const eph_tune_lives *L, const eph_tune_sim *def, const eph_tune_sim *pick) {
  /* Long-lived: survives the default's first scavenge, i.e. lives longer
   * than one default eden of allocation. */
  uint64_t threshold = def->config.eden;
  class_volume *v = calloc(L->nclasses ? L->nclasses : 1, sizeof *v);
  double all = 0, longlived = 0;
  if (!v) return;
  for (size_t i = 0; i < L->nclasses; i++) v[i].id = i;
  for (size_t i = 0; i < L->n; i++) {
    const eph_tune_life *o = &L->lives[i];
    double b = (double)o->size * (double)o->weight;
    all += b;
    if (o->death - o->birth > threshold && o->class_id < L->nclasses) {
      v[o->class_id].bytes += b;
      longlived += b;
    }
  }
  qsort(v, L->nclasses, sizeof *v, by_bytes_desc);
  char mib[32];
  tune_format_mib(longlived, mib, sizeof mib);
  fprintf(out, "  why:\n    %.0f%% of the allocated bytes (%s) outlive one default eden (%zu MiB of allocation);\n",
          all > 0 ? 100.0 * longlived / all : 0.0, mib, (size_t)(threshold >> 20));
  if (longlived > 0) {
    fprintf(out, "    the long-lived volume is");
    for (size_t i = 0; i < L->nclasses && i < 3 && v[i].bytes > 0; i++) {
      tune_format_mib(v[i].bytes, mib, sizeof mib);
      fprintf(out, "%s %s %.0f%% (%s)", i ? "," : "", L->class_names[v[i].id] ? L->class_names[v[i].id] : "?",
              100.0 * v[i].bytes / longlived, mib);
    }
    fprintf(out, ".\n    Every scavenge copies what of it is young, and it fills old space, which triggers full GCs.\n");
  }
  free(v);
  fprintf(out, "  what the pick changes (simulated, default -> pick):\n");
  print_change(out, "copying", def->copied, pick->copied, "MiB", 1024.0 * 1024.0);
  print_change(out, "scavenges", (double)def->scavenges, (double)pick->scavenges, "", 1.0);
  print_change(out, "full GCs", (double)def->full_gcs, (double)pick->full_gcs, "", 1.0);
  print_change(out, "full-GC work", def->marked, pick->marked, "MiB traced", 1024.0 * 1024.0);
  print_change(out, "peak heap", def->peak_heap, pick->peak_heap, "MiB", 1024.0 * 1024.0);
}
