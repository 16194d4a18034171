/*
 * lua.c — `ephemera tune --lua SCRIPT`: Lua 5.4's collector settings by a
 * measured search seeded by the lifetime profile.  One profiled run gives
 * the share of objects that die before their first or second GC cycle
 * (src/runtime/lua/lua_advice.h); that orders the candidate settings, the
 * first few of which are run for real (`ephemera lua --no-profile --gc S`)
 * with Lua's default, and the best measured is recommended.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ephemera/bench.h"
#include "runtime/lua/lua_advice.h"
#include "tune_internal.h"

typedef struct lua_tally {
  double s0, s1, freed, censored;
} lua_tally;

static bool tally(void *ctx, const eph_record *r, size_t n) {
  lua_tally *t = ctx;
  for (size_t i = 0; i < n; i++) {
    double w = r[i].weight > 0 ? r[i].weight : 1;
    if (r[i].death_kind == EPH_DEATH_CENSORED) {
      t->censored += w;
      continue;
    }
    t->freed += w;
    uint32_t cycles = r[i].death.full_gcs - r[i].birth.full_gcs;
    if (cycles == 0) t->s0 += w;
    else if (cycles == 1) t->s1 += w;
  }
  return true;
}

/* Candidates in the order the profile's advice suggests trying them. */
static const char *const GENERATIONAL_FIRST[] = {
    "generational,minormul=40", "generational,minormul=100", "generational,minormul=60,majormul=300",
    "incremental",              "incremental,pause=300",     "generational,minormul=10",
    "incremental,pause=400,stepmul=400"};
static const char *const INCREMENTAL_FIRST[] = {
    "incremental",           "incremental,pause=300",    "incremental,pause=400,stepmul=400",
    "generational,majormul=300", "generational,minormul=40", "incremental,pause=150,stepmul=200",
    "generational,minormul=100"};
static const char *const MIXED_FIRST[] = {
    "generational,minormul=40", "incremental",       "generational,minormul=10", "incremental,pause=300",
    "generational,minormul=100", "generational,majormul=300", "incremental,pause=400,stepmul=400"};

/* Lua 5.4's own default in `lua5.4` and `ephemera lua`. */
#define LUA_DEFAULT "generational"

static eph_status measure_lua(const eph_tune_lua_request *req, const char *setting, int inv, eph_tune_measurement *m,
                              eph_error *err) {
  int argc = 0;
  while (req->argv[argc]) argc++;
  char **argv = calloc((size_t)argc + 6, sizeof *argv);
  double *wall = calloc((size_t)inv, sizeof *wall);
  if (!argv || !wall) {
    free(argv);
    free(wall);
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  int a = 0;
  argv[a++] = (char *)req->ephemera;
  argv[a++] = "lua";
  argv[a++] = "--no-profile";
  argv[a++] = "--gc";
  argv[a++] = (char *)setting;
  for (int i = 0; i < argc; i++) argv[a++] = req->argv[i];
  argv[a] = NULL;
  char what[512];
  snprintf(what, sizeof what, "the Lua script '%s' with --gc %s", req->argv[0], setting);
  memset(m, 0, sizeof *m);
  eph_status st = EPH_OK;
  for (int i = 0; i < inv && st == EPH_OK; i++) {
    double rss = 0;
    st = tune_spawn_timed(argv, NULL, NULL, what, &wall[i], &rss, err);
    if (rss > m->peak_heap) m->peak_heap = rss;
  }
  if (st == EPH_OK) {
    eph_bench_stat w;
    eph_bench_stat_of(wall, (size_t)inv, &w);
    m->n = inv;
    m->mean_s = w.mean;
    m->ci95_s = w.ci;
    m->min_s = w.min;
    m->max_s = w.max;
  }
  free(argv);
  free(wall);
  return st;
}

static const char *advice_first(eph_lua_advice_kind k) {
  return k == EPH_LUA_ADVICE_INCREMENTAL ? "incremental" : k == EPH_LUA_ADVICE_MIXED ? "mixed" : "generational";
}

eph_status eph_tune_lua_run(const eph_tune_lua_request *req, eph_tune_lua_progress progress, void *ctx,
                            eph_tune_lua_result *res, eph_error *err) {
  memset(res, 0, sizeof *res);
  res->request = req;
  int inv = req->invocations > 0 ? req->invocations : 5;
  int verify = req->verify > 0 ? req->verify : 5;
  if (verify > 8) verify = 8;
  char path[256];
  snprintf(path, sizeof path, "%s/ephemera-tune-lua-%ld.eph", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (long)getpid());
  if (progress) progress(ctx, EPH_TUNE_STARTED, res);

  /* 1. One profiled run (every object, Lua's default collector). */
  int argc = 0;
  while (req->argv[argc]) argc++;
  char **argv = calloc((size_t)argc + 5, sizeof *argv);
  if (!argv) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  int a = 0;
  argv[a++] = (char *)req->ephemera;
  argv[a++] = "lua";
  argv[a++] = "-o";
  argv[a++] = path;
  for (int i = 0; i < argc; i++) argv[a++] = req->argv[i];
  char what[512];
  snprintf(what, sizeof what, "the profiled run of the Lua script '%s'", req->argv[0]);
  eph_status st = tune_spawn(argv, NULL, NULL, what, err);
  free(argv);
  if (st != EPH_OK) {
    unlink(path);
    return st;
  }
  lua_tally t = {0};
  eph_record_sink sink = {tally, &t};
  eph_file *p = NULL;
  st = eph_file_load_with(path, &sink, &p, err);
  unlink(path);
  if (st != EPH_OK) return st;
  eph_file_free(p);
  eph_lua_advice adv = eph_lua_advice_compute(t.s0, t.s1, t.freed, t.censored);
  res->objects = t.freed + t.censored;
  res->share0 = adv.share0;
  res->share01 = adv.share01;
  res->censored = adv.censored;
  res->advice = advice_first(adv.kind);
  res->advice_label = eph_lua_advice_label(adv.kind);
  if (progress) progress(ctx, EPH_TUNE_PROFILED, res);

  /* 2. Lua's default and the first candidates, measured. */
  const char *const *cands = adv.kind == EPH_LUA_ADVICE_INCREMENTAL ? INCREMENTAL_FIRST
                             : adv.kind == EPH_LUA_ADVICE_MIXED     ? MIXED_FIRST
                                                                    : GENERATIONAL_FIRST;
  eph_tune_measurement *m = res->meas;
  int n = 0;
  res->settings[n++] = LUA_DEFAULT;
  for (int i = 0; n < verify && i < 7; i++) res->settings[n++] = cands[i];
  for (int i = 0; i < n; i++) {
    st = measure_lua(req, res->settings[i], inv, &m[i], err);
    if (st != EPH_OK) return st;
  }
  res->n = n;
  int fastest = 0;
  for (int i = 1; i < n; i++)
    if (m[i].mean_s < m[fastest].mean_s) fastest = i;
  /* The same rule as the heap's advisor: a setting replaces the default
   * only when it is clearly faster, not merely the fastest mean. */
  res->best = fastest && tune_clearly_faster(&m[0], &m[fastest]) ? fastest : 0;
  res->fastest = fastest;
  res->fastest_speedup = m[0].mean_s / m[fastest].mean_s;
  res->fastest_ci = tune_speedup_ci(&m[0], &m[fastest]);
  res->speedup = m[0].mean_s / m[res->best].mean_s;
  res->speedup_ci = tune_speedup_ci(&m[0], &m[res->best]);
  if (progress) progress(ctx, EPH_TUNE_DONE, res);
  return EPH_OK;
}

eph_tune_lua_advice eph_tune_lua_advice_of(double survived0, double survived1, double freed, double censored) {
  eph_lua_advice a = eph_lua_advice_compute(survived0, survived1, freed, censored);
  return (eph_tune_lua_advice){eph_lua_advice_label(a.kind), eph_lua_advice_text(a.kind), a.share0, a.share01,
                               a.censored};
}
