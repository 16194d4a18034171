/*
 * minheap.c — the minimum heap by bisection over fresh child processes, and
 * its cache ($XDG_CACHE_HOME/ephemera/minheap.tsv: "key<TAB>bytes" lines).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"

static void cache_path(char *buf, size_t len) {
  const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (x && *x) snprintf(buf, len, "%s/ephemera", x);
  else snprintf(buf, len, "%s/.cache/ephemera", home && *home ? home : "/tmp");
}

static void cache_key(const eph_bench_options *o, const eph_bench_target *t, const char *gc, char *buf, size_t len) {
  snprintf(buf, len, "v=%s|limit=fixed-heap|target=%s|gc=%s|iterations=%u+%u", EPH_BENCH_VERSION, t->spec, gc, o->warmup,
           o->iterations);
  for (char *c = buf; *c; c++)
    if (*c == '\t' || *c == '\n') *c = ' ';
}

static bool cache_get(const char *key, uint64_t *bytes) {
  char path[4096], line[4096];
  cache_path(path, sizeof path - 16);
  strcat(path, "/minheap.tsv");
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool found = false;
  while (fgets(line, sizeof line, f)) { /* the last entry for the key wins */
    char *tab = strrchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    if (!strcmp(line, key)) {
      char *end;
      unsigned long long v = strtoull(tab + 1, &end, 10);
      if (v && (*end == '\n' || !*end)) *bytes = v, found = true;
    }
  }
  fclose(f);
  return found;
}

static void cache_put(const char *key, uint64_t bytes) {
  char dir[4096], path[4200];
  cache_path(dir, sizeof dir);
  char *slash = strrchr(dir, '/'); /* make the parent ($HOME/.cache) too */
  if (slash) {
    *slash = 0;
    mkdir(dir, 0700);
    *slash = '/';
  }
  mkdir(dir, 0700);
  snprintf(path, sizeof path, "%s/minheap.tsv", dir);
  FILE *f = fopen(path, "a"); /* a cache: failing to write it is not an error */
  if (!f) return;
  fprintf(f, "%s\t%llu\n", key, (unsigned long long)bytes);
  fclose(f);
}

typedef struct prober {
  const eph_bench_options *o;
  const eph_bench_target *t;
  eph_bench_config c;
  char why[512];
  int64_t peak;
  unsigned probes;
} prober;

/* 1 if the target completes under limit (0 = none), 0 if not, -1 on error. */
static int probe(prober *p, uint64_t limit, eph_error *err) {
  p->c.heap_bytes = limit;
  eph_bench_run run;
  if (eph_bench_spawn(p->o->exe, 0, 0, 0, p->t, &p->c, p->o->warmup, p->o->iterations, &run, err)) return -1;
  p->probes++;
  int ok = run.ok;
  if (!ok) snprintf(p->why, sizeof p->why, "%s", run.error);
  p->peak = 0;
  for (size_t i = 0; i < run.niters; i++)
    if (run.iters[i].peak_bytes > p->peak) p->peak = run.iters[i].peak_bytes;
  eph_bench_run_free(&run);
  return ok;
}

int eph_bench_minheap(const eph_bench_options *o, const eph_bench_target *t, const char *gc, uint64_t *bytes,
                      bool *cached, eph_error *err) {
  char key[2048];
  cache_key(o, t, gc, key, sizeof key);
  *cached = false;
  if (o->use_cache && cache_get(key, bytes)) {
    *cached = true;
    return 0;
  }
  prober p = {.o = o, .t = t};
  snprintf(p.c.gc, sizeof p.c.gc, "%s", gc);
  int ok = probe(&p, 0, err);
  if (ok < 0) return -1;
  if (!ok) {
    eph_error_fill(err, EPH_ERR_INVALID, "%s fails without a heap limit: %s", t->spec, p.why);
    return -1;
  }
  /* an upper bound that completes: the unlimited run's peak (heaps, Lua; a command's or a JVM's is its
   * resident set, no bound on its heap), else 64 MiB, doubled until it does */
  bool peak_is_heap = t->kind != EPH_BENCH_CMD && !eph_bench_kind_is_java(t->kind);
  uint64_t hi = peak_is_heap && p.peak > 0 ? (uint64_t)p.peak : (uint64_t)64 << 20, lo;
  while ((ok = probe(&p, hi, err)) == 0) {
    if (hi > ((uint64_t)1 << 40)) {
      eph_error_fill(err, EPH_ERR_INVALID, "%s does not complete under a 1 TiB heap limit: %s", t->spec, p.why);
      return -1;
    }
    hi *= 2;
  }
  if (ok < 0) return -1;
  /* a lower bound that fails */
  for (lo = hi / 2;; lo /= 2) {
    if (lo < 4096) {
      lo = 0;
      break;
    }
    if ((ok = probe(&p, lo, err)) < 0) return -1;
    if (!ok) break;
    hi = lo;
  }
  while (lo && hi - lo > hi / 100) {
    uint64_t mid = lo + (hi - lo) / 2;
    if ((ok = probe(&p, mid, err)) < 0) return -1;
    if (ok) hi = mid;
    else lo = mid;
  }
  *bytes = hi;
  if (o->use_cache) cache_put(key, hi);
  return 0;
}
