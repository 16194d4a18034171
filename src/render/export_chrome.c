/*
 * export_chrome.c — the heap timeline as Chrome's trace-event JSON
 * (the "JSON Object Format": {"traceEvents": [...]}), which Perfetto's UI
 * imports: collections as complete events on one track, the heap's used
 * and committed bytes as counters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/escape.h"
#include "export.h"

#define PID 1
#define TID_GC 1

static void ts(FILE *o, double seconds) { fprintf(o, "%.3f", seconds * 1e6); }

static void counter(FILE *o, const char *name, double t, const char *k1, double v1, const char *k2, double v2) {
  fprintf(o, ",\n{\"name\":\"%s\",\"ph\":\"C\",\"pid\":%d,\"ts\":", name, PID);
  ts(o, t);
  fprintf(o, ",\"args\":{\"%s\":%.0f", k1, v1);
  if (k2) fprintf(o, ",\"%s\":%.0f", k2, v2);
  fputs("}}", o);
}

eph_status eph_export_chrome_trace(const eph_file *p, const eph_timeline *t, const char *path, eph_error *err) {
  FILE *o = fopen(path, "w");
  if (!o) {
    eph_error_fill(err, EPH_ERR_INVALID, "cannot create %s: %s", path, strerror(errno));
    return EPH_ERR_INVALID;
  }
  const char *wl = eph_file_meta(p, "workload"), *prog = eph_file_meta(p, "program");
  fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"ephemera export --chrome-trace\"", o);
  for (size_t i = 0; i < p->nmeta; i++) {
    fputc(',', o);
    eph_json_string(o, p->meta[i].key);
    fputc(':', o);
    eph_json_string(o, p->meta[i].value);
  }
  fprintf(o, "},\n\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", PID);
  char name[512];
  snprintf(name, sizeof name, "ephemera: %s", wl ? wl : prog ? prog : "run");
  eph_json_string(o, name);
  fprintf(o, "}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"collector\"}}", PID,
          TID_GC);
  for (size_t i = 0; i < t->ngcs; i++) {
    const eph_timeline_gc *g = &t->gcs[i];
    double end = g->start_s + g->pause_s;
    fprintf(o, ",\n{\"name\":\"%s\",\"cat\":\"gc\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
            g->kind == EPH_GC_FULL ? "full GC" : "scavenge", PID, TID_GC);
    ts(o, g->start_s);
    fputs(",\"dur\":", o);
    ts(o, g->pause_s);
    fprintf(o, ",\"args\":{\"index\":%llu,\"used_before\":%.0f,\"used_after\":%.0f,\"committed_after\":%.0f,"
               "\"promoted\":%.0f,\"copied\":%.0f,\"allocated\":%.0f}}",
            (unsigned long long)g->index, g->used_before, g->used_after, g->committed_after, g->promoted, g->copied,
            g->allocated);
    counter(o, "heap", g->start_s, "used", g->used_before, t->new_space > 0 ? "committed" : NULL, g->committed_before);
    counter(o, "allocated", g->start_s, "bytes", g->allocated, NULL, 0);
    counter(o, "heap", end, "used", g->used_after, t->new_space > 0 ? "committed" : NULL, g->committed_after);
  }
  fputs("\n]}\n", o);
  bool failed = ferror(o) != 0;
  int saved = errno;
  if (fclose(o) != 0 || failed) {
    eph_error_fill(err, EPH_ERR_INVALID, "writing %s: %s", path, strerror(saved ? saved : EIO));
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}
