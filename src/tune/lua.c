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

eph_status eph_tune_lua_run(const eph_tune_lua_request *req, FILE *out, eph_error *err) {
  int inv = req->invocations > 0 ? req->invocations : 5;
  int verify = req->verify > 0 ? req->verify : 5;
  if (verify > 8) verify = 8;
  char path[256];
  snprintf(path, sizeof path, "%s/ephemera-tune-lua-%ld.eph", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (long)getpid());
  fprintf(out, "tune --lua %s (Lua 5.4's collector), objective time\n", req->argv[0]);

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
  fprintf(out, "  profile    1 run: %.0f objects; of those freed, %.0f%% died before their first GC cycle ended, "
               "%.0f%% within two; %.0f%% alive at the end -> try %s settings first\n",
          t.freed + t.censored, 100 * adv.share0, 100 * adv.share01, 100 * adv.censored,
          adv.kind == EPH_LUA_ADVICE_INCREMENTAL ? "incremental" : adv.kind == EPH_LUA_ADVICE_MIXED ? "mixed" : "generational");

  /* 2. Lua's default and the first candidates, measured. */
  const char *const *cands = adv.kind == EPH_LUA_ADVICE_INCREMENTAL ? INCREMENTAL_FIRST
                             : adv.kind == EPH_LUA_ADVICE_MIXED     ? MIXED_FIRST
                                                                    : GENERATIONAL_FIRST;
  const char *settings[8];
  eph_tune_measurement m[8];
  int n = 0;
  settings[n++] = LUA_DEFAULT;
  for (int i = 0; n < verify && i < 7; i++) settings[n++] = cands[i];
  for (int i = 0; i < n; i++) {
    st = measure_lua(req, settings[i], inv, &m[i], err);
    if (st != EPH_OK) return st;
  }
  int fastest = 0;
  for (int i = 1; i < n; i++)
    if (m[i].mean_s < m[fastest].mean_s) fastest = i;
  /* The same rule as the heap's advisor: a setting replaces the default
   * only when it is clearly faster, not merely the fastest mean. */
  int best = fastest && tune_clearly_faster(&m[0], &m[fastest]) ? fastest : 0;
  fprintf(out, "  verified   %d settings x %d invocations (wall time incl. start-up, 95%% CI):\n", n, inv);
  for (int i = 0; i < n; i++) {
    char rss[32];
    tune_format_mib(m[i].peak_heap, rss, sizeof rss);
    fprintf(out, "    %-3s %-40s %.3f ± %.3f s %7.2fx   max RSS %s\n", i == best ? "*" : (i == 0 ? "def" : ""),
            settings[i], m[i].mean_s, m[i].ci95_s, m[0].mean_s / m[i].mean_s, rss);
  }
  double sp = m[0].mean_s / m[best].mean_s;
  double ci = tune_speedup_ci(&m[0], &m[best]);
  if (best == 0) {
    fprintf(out, "recommendation: keep Lua's default (%s)\n", LUA_DEFAULT);
    if (fastest) {
      double sf = m[0].mean_s / m[fastest].mean_s, cf = tune_speedup_ci(&m[0], &m[fastest]);
      fprintf(out, "  fastest    %s at %.2fx (95%% CI %.2f-%.2fx): not clearly faster than the default\n",
              settings[fastest], sf, sf - cf, sf + cf);
    }
  } else {
    fprintf(out, "recommendation: ephemera lua --gc %s (or collectgarbage(\"%s\", ...) in the script)\n", settings[best],
            strncmp(settings[best], "incremental", 11) ? "generational" : "incremental");
    fprintf(out, "  speed-up   %.2fx measured (95%% CI %.2f-%.2fx)\n", sp, sp - ci, sp + ci);
  }
  if (req->kv)
    fprintf(out, "kv pick=%s speedup=%.4f speedup_ci=%.4f default_s=%.6f pick_s=%.6f advice=%s verified=%d invocations=%d\n",
            settings[best], sp, ci, m[0].mean_s, m[best].mean_s, eph_lua_advice_label(adv.kind), n, inv);
  return EPH_OK;
}
