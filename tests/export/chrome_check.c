/*
 * chrome_check.c — `eph-chrome-check TRACE.json NGCS`: checks that
 * `ephemera export --chrome-trace` wrote valid JSON in Chrome's trace-event
 * object format, as Perfetto's importer reads it: a traceEvents array whose
 * every event has a name, a phase and a pid (and a numeric ts unless it is
 * metadata); NGCS complete events ("X") named "scavenge" or "full GC" with
 * a duration and 1-based increasing indexes; two "heap" counters ("C") per
 * collection with a numeric "used"; counters in time order.  Prints what it
 * found; exits 1 on the first problem.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, size_t i) {
  fprintf(stderr, "FAIL: event %zu: %s\n", i, what);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: eph-chrome-check TRACE.json NGCS\n");
    return 2;
  }
  size_t want = strtoul(argv[2], NULL, 10);
  json_error_t jerr;
  json_t *root = json_load_file(argv[1], 0, &jerr);
  if (!root) {
    fprintf(stderr, "FAIL: %s is not JSON: line %d: %s\n", argv[1], jerr.line, jerr.text);
    return 1;
  }
  json_t *events = json_object_get(root, "traceEvents");
  if (!json_is_array(events)) {
    fprintf(stderr, "FAIL: no traceEvents array\n");
    return 1;
  }
  size_t nx = 0, nheap = 0, nmeta = 0, nalloc = 0;
  double last_counter = -1;
  json_int_t last_index = 0;
  for (size_t i = 0; i < json_array_size(events); i++) {
    json_t *e = json_array_get(events, i);
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (!name || !ph || strlen(ph) != 1) return fail("no name or phase", i);
    if (!json_is_integer(json_object_get(e, "pid"))) return fail("no pid", i);
    if (*ph == 'M') {
      nmeta++;
      continue;
    }
    json_t *ts = json_object_get(e, "ts");
    if (!json_is_number(ts) || json_number_value(ts) < 0) return fail("no ts >= 0", i);
    double t = json_number_value(ts);
    json_t *args = json_object_get(e, "args");
    if (*ph == 'X') {
      if (strcmp(name, "scavenge") && strcmp(name, "full GC")) return fail("a slice that is not a collection", i);
      json_t *dur = json_object_get(e, "dur");
      if (!json_is_number(dur) || json_number_value(dur) < 0) return fail("a collection without dur >= 0", i);
      json_int_t index = json_integer_value(json_object_get(args, "index"));
      if (index != last_index + 1) return fail("collection indexes not 1, 2, 3, ...", i);
      last_index = index;
      nx++;
    } else if (*ph == 'C') {
      if (t < last_counter) return fail("counters out of time order", i);
      last_counter = t;
      if (!strcmp(name, "heap")) {
        if (!json_is_number(json_object_get(args, "used"))) return fail("a heap counter without used", i);
        nheap++;
      } else if (!strcmp(name, "allocated")) {
        nalloc++;
      } else {
        return fail("an unknown counter", i);
      }
    } else {
      return fail("an unexpected phase", i);
    }
  }
  printf("%zu collections, %zu heap counters, %zu allocated counters, %zu metadata events\n", nx, nheap, nalloc, nmeta);
  int rc = 0;
  if (nx != want) fprintf(stderr, "FAIL: %zu collections, the profile has %zu\n", nx, want), rc = 1;
  if (nheap != 2 * want) fprintf(stderr, "FAIL: %zu heap counters, expected %zu\n", nheap, 2 * want), rc = 1;
  if (nmeta < 2) fprintf(stderr, "FAIL: no process or thread name\n"), rc = 1;
  json_decref(root);
  return rc;
}
