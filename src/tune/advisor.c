/*
 * advisor.c — the loop behind `ephemera tune`: profile once, simulate the
 * grid, verify the best few against the default with real runs, recommend
 * the best measured configuration and explain it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune_internal.h"

/* The profiled run.  Merlin (exact deaths) for small and middle runs
 * (`small` or a number), a 1-in-32 gc-mode profile for `default` and
 * `large` ones (and commands), whose deaths are known to the collection
 * that found them. */
static eph_status profile_target(const eph_tune_request *req, const char *path, const char **mode_used,
                                 eph_error *err) {
  const eph_tune_target *t = &req->target;
  const char *mode = req->profile_mode;
  if (!mode)
    mode = t->workload && t->size && strcmp(t->size, "default") && strcmp(t->size, "large") ? "merlin" : "gc";
  /* A trace (the object graph and the roots: the simulator's exact input)
   * at the named small sizes; a number may be large: lifetimes only. */
  bool trace = t->workload && t->size && (!strcmp(t->size, "small") || !strcmp(t->size, "middle"));
  const char *spec = strcmp(mode, "merlin") ? "mode=gc,sample=1/32" : trace ? "mode=merlin,trace=on" : "mode=merlin";
  *mode_used = spec;
  if (t->workload) {
    char *argv[] = {(char *)t->ephemera, "run", (char *)t->workload, "--size", (char *)(t->size ? t->size : "default"),
                    "--profile", (char *)spec, "-o", (char *)path, "--quiet", NULL};
    return tune_spawn(argv, NULL, NULL, "the profiled run", err);
  }
  char env[1200];
  snprintf(env, sizeof env, "%s,out=%s", spec, path);
  char *argv[] = {"/bin/sh", "-c", (char *)t->command, NULL};
  char what[1400];
  snprintf(what, sizeof what, "the profiled run of '%s'", t->command);
  return tune_spawn(argv, "EPHEMERA_PROFILE", env, what, err);
}

/* a / b, 0 when b is not positive (printed as 0.00x rather than inf). */
static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

/* How many of the model's best the simulator re-simulates at least, and
 * the time it may take for more: when one configuration simulates fast
 * enough (a trace at small and middle sizes), all of the grid. */
#define REFINE 24
#define REFINE_BUDGET_S 20.0

/* The cost model of `ephemera sim calibrate` if there is one, else the built-in guess. */
static void sim_costmodel(eph_sim_costmodel *cm) {
  char path[1024];
  eph_error e;
  eph_sim_costmodel_default(cm);
  if (eph_sim_costmodel_default_path(path, sizeof path) && access(path, R_OK) == 0 &&
      eph_sim_costmodel_load(path, cm, &e) != EPH_OK)
    eph_sim_costmodel_default(cm);
}

/*
 * The simulator's pass: the default, then the model's best distinct
 * configurations — all of the grid if the default's simulation says that
 * fits in budget_s, else the REFINE best — re-simulated and
 * calibrated on the measured default like the model (not at all when
 * gc_measured is 0); order[] then lists them best first under the
 * objective, *nref of them within it.  res (may be NULL) gets what the
 * pass did.
 */
static eph_status refine(const eph_tune_objective *obj, const eph_tune_config *grid, const eph_sim_input *in,
                         double def_wall_s, double gc_measured,
                         const eph_tune_costs *costs, eph_tune_sim *sims, size_t *order, size_t feasible,
                         double budget_s, size_t *nref, eph_tune_result *res, eph_error *err) {
  size_t *which = malloc((feasible + 1) * sizeof *which), *sub_order = malloc((feasible + 1) * sizeof *sub_order);
  double *sim_gc = malloc((feasible + 1) * sizeof *sim_gc);
  eph_tune_sim *sub = malloc((feasible + 1) * sizeof *sub);
  eph_status st = EPH_OK;
  if (!which || !sub_order || !sim_gc || !sub) {
    st = EPH_ERR_NOMEM;
    eph_error_fill(err, st, "out of memory for the simulator's pass");
    goto done;
  }
  eph_sim_costmodel cm;
  sim_costmodel(&cm);
  which[0] = 0;
  double t0 = tune_now_s();
  st = tune_refine(in, &cm, sims, which, 1, sim_gc, err);
  if (st != EPH_OK) goto done;
  double one = tune_now_s() - t0;
  size_t limit = one > 0 && budget_s / one < (double)feasible ? (size_t)(budget_s / one) : feasible;
  if (limit < REFINE) limit = REFINE;
  size_t n = 1, r = 0;
  /* First the model's best at each eden size, so that the line search over
   * eden (verify_order.c) has a simulated candidate at every size, not
   * only at those the model favours (it does not see the mutator's side
   * of a bigger eden, and can rank every smaller one below its top few). */
  for (size_t q = 0; q < feasible && n < limit + 1; q++) {
    bool seen = false;
    for (size_t k = 0; k < n && !seen; k++)
      seen = (k > 0 && grid[which[k]].eden == grid[order[q]].eden) || tune_same_outcome(&sims[order[q]], &sims[which[k]]);
    if (!seen) which[n++] = order[q];
  }
  for (; r < feasible && n < limit + 1; r++) {
    bool dup = false;
    for (size_t k = 0; k < n && !dup; k++) dup = order[r] == which[k] || tune_same_outcome(&sims[order[r]], &sims[which[k]]);
    if (!dup) which[n++] = order[r];
  }
  st = tune_refine(in, &cm, sims, which + 1, n - 1, sim_gc + 1, err);
  if (st != EPH_OK) goto done;
  /* Calibration as for the model: scale so the default's GC is the measured. */
  double k = sim_gc[0] > 0 && gc_measured > 0 ? gc_measured / sim_gc[0] : 1;
  if (k > 8) k = 8;
  if (k < 0.125) k = 0.125;
  double mutator = def_wall_s - sim_gc[0] * k;
  if (mutator < 0) mutator = 0;
  for (size_t i = 0; i < n; i++) {
    eph_tune_sim *s = &sims[which[i]];
    s->gc_s = sim_gc[i] * k;
    s->time_s = mutator + s->gc_s + costs->per_committed_byte * (s->committed - sims[0].committed);
    sub[i] = *s;
  }
  size_t ok = eph_tune_rank(obj, sub, n, sub_order);
  for (size_t i = 0; i < n; i++) order[i] = which[sub_order[i]];
  *nref = ok;
  if (res) {
    res->sim_used = true;
    res->sim_all = r == feasible;
    res->sim_count = n - 1;
    res->sim_input = eph_sim_input_kind_name(eph_sim_input_kind_of(in));
    res->sim_fitted = cm.samples != 0;
    res->sim_scale = k;
  }
done:
  free(which);
  free(sub_order);
  free(sim_gc);
  free(sub);
  return st;
}

/* Reads the profile once, into lifetimes (the model's input) and, when it
 * can, the simulator's input (*sim_in NULL then, sim_err says why). */
/* Reads the profile once into both inputs; a sampled profile of more than
 * max_records records is thinned first (tune_thin_records; *thinned gets k,
 * 1 when it was not), 0: never. */
static eph_status load_profile(const char *path, size_t max_records, size_t *thinned, eph_tune_lives *lives,
                               eph_sim_input **sim_in, eph_error *sim_err, eph_error *err) {
  *sim_in = NULL;
  eph_file *p = NULL;
  eph_status st = eph_file_load(path, &p, err);
  if (st != EPH_OK) return st;
  *thinned = tune_thin_records(p, max_records);
  st = eph_tune_lives_from_file(p, path, lives, err);
  if (st == EPH_OK && eph_sim_input_from_profile(p, sim_in, sim_err) != EPH_OK) *sim_in = NULL;
  eph_file_free(p);
  return st;
}

/* The best measured of the nv verified (index into meas), under the objective. */
static int best_measured(const eph_tune_objective *o, const eph_tune_measurement *meas, int nv) {
  int best = 0;
  double best_score = eph_tune_score(o, meas[0].mean_s, meas[0].peak_heap);
  for (int k = 1; k < nv; k++) {
    double s = eph_tune_score(o, meas[k].mean_s, meas[k].peak_heap);
    if (s < best_score) best = k, best_score = s;
  }
  return best;
}

static void report(eph_tune_progress progress, void *ctx, eph_tune_step step, const eph_tune_result *r) {
  if (progress) progress(ctx, step, r);
}

eph_status eph_tune_run(const eph_tune_request *req, eph_tune_progress progress, void *ctx, eph_tune_result *res,
                        eph_error *err) {
  const eph_tune_target *t = &req->target;
  memset(res, 0, sizeof *res);
  res->request = req;
  int verify = req->verify > 0 ? req->verify : 5;
  if (verify > 5) verify = 5;
  int inv = req->invocations > 0 ? req->invocations : 5;
  res->invocations = inv;
  char path[256];
  if (req->keep_profile) snprintf(path, sizeof path, "%s", req->keep_profile);
  else snprintf(path, sizeof path, "%s/ephemera-tune-%ld.eph", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                (long)getpid());
  eph_tune_objective_format(&req->objective, res->objective, sizeof res->objective);
  report(progress, ctx, EPH_TUNE_STARTED, res);

  /* 1. One profiled run. */
  const char *mode;
  eph_status st = profile_target(req, path, &mode, err);
  if (st != EPH_OK) return st;
  eph_tune_lives lives;
  eph_sim_input *sim_in = NULL;
  eph_error sim_err = {0};
  size_t thinned;
  st = load_profile(path, 0, &thinned, &lives, &sim_in, &sim_err, err);
  if (!req->keep_profile) unlink(path);
  if (st != EPH_OK) return st;
  snprintf(res->profile_spec, sizeof res->profile_spec, "%s", mode);
  res->records = lives.n;
  res->allocated = lives.end;
  res->exact = lives.exact;
  report(progress, ctx, EPH_TUNE_PROFILED, res);

  /* 2. The grid, simulated. */
  eph_tune_config *grid = NULL;
  size_t n = eph_tune_grid(&grid);
  eph_tune_sim *sims = n ? calloc(n, sizeof *sims) : NULL;
  size_t *order = n ? calloc(n, sizeof *order) : NULL;
  eph_tune_measurement *meas = calloc((size_t)verify, sizeof *meas);
  size_t *verified = calloc((size_t)verify, sizeof *verified);
  double *score = calloc((size_t)verify, sizeof *score); /* the measured ones' under the objective */
  res->verified = calloc((size_t)verify, sizeof *res->verified);
  if (!grid || !sims || !order || !meas || !verified || !score || !res->verified) {
    st = EPH_ERR_NOMEM;
    eph_error_fill(err, st, "out of memory for the grid");
    goto done;
  }
  st = eph_tune_simulate(&lives, grid, n, sims);
  if (st != EPH_OK) {
    eph_error_fill(err, st, "out of memory simulating the grid");
    goto done;
  }

  /* 3. The default, measured: calibrates the cost model. */
  st = eph_tune_measure(t, NULL, inv, &meas[0], err);
  if (st != EPH_OK) goto done;
  verified[0] = 0; /* the grid's element 0 is the default */
  eph_tune_costs costs = eph_tune_costs_nominal();
  double gc_measured = meas[0].gc_s;
  /* A command's heaps report their GC time through EPHEMERA_STATS; one
   * that does not (no heap freed) is assumed at 30 % (docs/tune.md). */
  bool gc_assumed = !t->workload && gc_measured <= 0;
  if (gc_assumed) gc_measured = 0.3 * meas[0].mean_s;
  eph_tune_calibrate(&costs, &sims[0], meas[0].mean_s, gc_measured, sims, n);
  size_t feasible = eph_tune_rank(&req->objective, sims, n, order);
  res->grid = n;
  res->feasible = feasible;
  res->default_wall_s = meas[0].mean_s;
  res->gc_measured_s = gc_measured;
  res->gc_assumed = gc_assumed;
  res->scale = costs.scale;
  report(progress, ctx, EPH_TUNE_SCREENED, res);
  if (sim_in) {
    size_t nref = 0;
    st = refine(&req->objective, grid, sim_in, meas[0].mean_s, gc_measured, &costs, sims, order, feasible, REFINE_BUDGET_S,
                &nref, res, err);
    if (st != EPH_OK) goto done;
    feasible = nref;
  } else {
    snprintf(res->sim_skipped, sizeof res->sim_skipped, "%s", sim_err.message);
  }
  report(progress, ctx, EPH_TUNE_SIMULATED, res);

  /* 4. A few, measured: measurement chooses the eden size, the model the
   * other parameters at each (verify_order.c). */
  int nv = 1;
  score[0] = eph_tune_score(&req->objective, meas[0].mean_s, meas[0].peak_heap);
  while (nv < verify) {
    tune_verify_state vs = {grid, sims, order, feasible, verified, score, nv};
    size_t i = tune_next_to_verify(&vs);
    if (i == SIZE_MAX) break;
    char gc[160];
    eph_tune_config_format(&grid[i], gc, sizeof gc);
    st = eph_tune_measure(t, gc, inv, &meas[nv], err);
    if (st != EPH_OK) goto done;
    score[nv] = eph_tune_score(&req->objective, meas[nv].mean_s, meas[nv].peak_heap);
    verified[nv++] = i;
  }

  /* 5. The best measured.  Under the time objective a configuration must
   * be faster beyond the noise: the fastest of five noisy means is biased
   * low, and a pick that is not clearly faster than the default may well
   * be slower (tune_clearly_faster: beyond the interval, or by rules of
   * its own for one or two invocations). */
  int best = best_measured(&req->objective, meas, nv), unclear = 0;
  if (req->objective.kind == EPH_TUNE_TIME && best && !tune_clearly_faster(&meas[0], &meas[best]))
    unclear = best, best = 0;
  for (int k = 0; k < nv; k++) res->verified[k] = (eph_tune_verified){sims[verified[k]], meas[k]};
  res->nverified = nv;
  res->best = best;
  res->unclear = unclear;
  if (unclear) {
    res->unclear_speedup = meas[0].mean_s / meas[unclear].mean_s;
    res->unclear_ci = tune_speedup_ci(&meas[0], &meas[unclear]);
  }
  res->speedup = meas[0].mean_s / meas[best].mean_s;
  res->speedup_ci = tune_speedup_ci(&meas[0], &meas[best]);
  res->predicted = ratio(sims[0].time_s, sims[verified[best]].time_s);
  if (best && !unclear) res->has_why = tune_why(&lives, &sims[0], &res->why);
  report(progress, ctx, EPH_TUNE_DONE, res);
done:
  free(grid);
  free(sims);
  free(order);
  free(meas);
  free(verified);
  free(score);
  eph_tune_lives_free(&lives);
  eph_sim_input_free(sim_in);
  return st;
}

void eph_tune_result_free(eph_tune_result *r) {
  free(r->verified);
  r->verified = NULL;
  r->nverified = 0;
}

/* The suggestion's input at most: a few million weighted samples predict
 * as well as tens of millions of records, in seconds rather than minutes. */
enum { SUGGESTION_MAX_RECORDS = 6000000 };

eph_status eph_tune_suggest(const char *profile_path, eph_tune_suggestion *out, eph_error *err) {
  memset(out, 0, sizeof *out);
  struct stat sb;
  if (stat(profile_path, &sb) == 0 && sb.st_size > ((off_t)1 << 30)) {
    out->kind = EPH_SUGGEST_TOO_BIG;
    return EPH_OK;
  }
  eph_tune_lives lives;
  eph_sim_input *in = NULL;
  eph_error e2 = {0};
  eph_status st = load_profile(profile_path, SUGGESTION_MAX_RECORDS, &out->thinned, &lives, &in, &e2, err);
  if (st == EPH_ERR_INVALID && !strstr(err->message, "runtime")) return st;
  if (st != EPH_OK) return st == EPH_ERR_INVALID ? EPH_OK : st; /* another runtime's profile: nothing to say */
  eph_tune_config def = eph_tune_config_default();
  if (lives.end < def.eden) { /* never filled the default eden: no collection to tune */
    eph_tune_lives_free(&lives);
    eph_sim_input_free(in);
    return EPH_OK;
  }
  eph_tune_config *grid = NULL;
  size_t n = eph_tune_grid(&grid);
  eph_tune_sim *sims = n ? calloc(n, sizeof *sims) : NULL;
  size_t *order = n ? calloc(n, sizeof *order) : NULL;
  if (!grid || !sims || !order || eph_tune_simulate(&lives, grid, n, sims) != EPH_OK) {
    st = EPH_ERR_NOMEM;
    eph_error_fill(err, st, "%s: out of memory simulating the grid", profile_path);
  } else {
    eph_tune_costs costs = eph_tune_costs_nominal();
    eph_tune_calibrate(&costs, &sims[0], 0, 0, sims, n);
    eph_tune_objective time = {EPH_TUNE_TIME, 0};
    size_t feasible = eph_tune_rank(&time, sims, n, order);
    /* The simulator ranks the model's best, when it can read the profile. */
    size_t nref;
    if (in && refine(&time, grid, in, 0, 0, &costs, sims, order, feasible, 0, &nref, NULL, &e2) != EPH_OK)
      snprintf(out->sim_failed, sizeof out->sim_failed, "%s", e2.message);
    out->kind = EPH_SUGGEST_PREDICTED;
    out->grid = n;
    out->records = lives.n;
    out->def = sims[0];
    out->top = sims[order[0]];
  }
  free(grid);
  free(sims);
  free(order);
  eph_tune_lives_free(&lives);
  eph_sim_input_free(in);
  return st;
}
