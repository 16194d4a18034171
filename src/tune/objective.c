/*
 * objective.c — what "best" means: time, time within a heap budget, or
 * space-time (run time × peak heap); scoring and ranking.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/tune.h"

/* "512M", "2G", "1048576": bytes with an optional binary K/M/G suffix. */
static bool parse_size(const char *s, size_t *out) {
  if (!*s || *s == '-' || *s == '+') return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno) return false;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, end++;
  else if (*end == 'M' || *end == 'm') shift = 20, end++;
  else if (*end == 'G' || *end == 'g') shift = 30, end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end || v == 0 || v > (SIZE_MAX >> shift)) return false;
  *out = (size_t)(v << shift);
  return true;
}

eph_status eph_tune_objective_parse(const char *text, eph_tune_objective *out, eph_error *err) {
  static const char within[] = "time-within-heap=";
  memset(out, 0, sizeof *out);
  if (!strcmp(text, "time")) {
    out->kind = EPH_TUNE_TIME;
  } else if (!strcmp(text, "space-time")) {
    out->kind = EPH_TUNE_SPACE_TIME;
  } else if (!strncmp(text, within, sizeof within - 1)) {
    out->kind = EPH_TUNE_TIME_WITHIN_HEAP;
    if (!parse_size(text + sizeof within - 1, &out->heap_limit)) {
      eph_error_fill(err, EPH_ERR_INVALID, "objective '%s': bad heap size (expected e.g. time-within-heap=512M)", text);
      return EPH_ERR_INVALID;
    }
  } else {
    eph_error_fill(err, EPH_ERR_INVALID, "unknown objective '%s' (expected time, time-within-heap=SIZE or space-time)",
                   text);
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}

void eph_tune_objective_format(const eph_tune_objective *o, char *buf, size_t len) {
  switch (o->kind) {
    case EPH_TUNE_TIME_WITHIN_HEAP:
      if (o->heap_limit % (1u << 20) == 0) snprintf(buf, len, "time-within-heap=%zuM", o->heap_limit >> 20);
      else snprintf(buf, len, "time-within-heap=%zu", o->heap_limit);
      break;
    case EPH_TUNE_SPACE_TIME: snprintf(buf, len, "space-time"); break;
    default: snprintf(buf, len, "time"); break;
  }
}

double eph_tune_score(const eph_tune_objective *o, double time_s, double peak_heap) {
  switch (o->kind) {
    case EPH_TUNE_TIME_WITHIN_HEAP: return peak_heap <= (double)o->heap_limit ? time_s : INFINITY;
    case EPH_TUNE_SPACE_TIME: return time_s * peak_heap;
    default: return time_s;
  }
}

/* qsort has no context argument: the scores go with the indices. */
typedef struct scored {
  double bucket; /* the score to 0.2 %: closer scores are a tie */
  double peak;   /* ties go to the smaller peak heap */
  size_t index;  /* then to the earlier configuration */
} scored;

static int by_score(const void *a, const void *b) {
  const scored *x = a, *y = b;
  if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
  if (x->peak != y->peak) return x->peak < y->peak ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static double bucket_of(double score) {
  if (!isfinite(score)) return INFINITY;
  if (score <= 0) return -INFINITY;
  return floor(log(score) / log(1.002));
}

size_t eph_tune_rank(const eph_tune_objective *o, const eph_tune_sim *sims, size_t n, size_t *order) {
  scored *s = malloc((n ? n : 1) * sizeof *s);
  size_t feasible = 0;
  if (!s) { /* no memory to sort: the given order, feasibility still counted */
    for (size_t i = 0; i < n; i++) order[i] = i;
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    double score = eph_tune_score(o, sims[i].time_s, sims[i].peak_heap);
    s[i].bucket = bucket_of(score);
    s[i].peak = sims[i].peak_heap;
    s[i].index = i;
    if (isfinite(score)) feasible++;
  }
  qsort(s, n, sizeof *s, by_score);
  for (size_t i = 0; i < n; i++) order[i] = s[i].index;
  free(s);
  return feasible;
}
