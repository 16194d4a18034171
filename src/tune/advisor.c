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
 * objective, *nref of them within it.  out may be NULL.
 */
static eph_status refine(const eph_tune_objective *obj, const eph_tune_config *grid, const eph_sim_input *in,
                         double def_wall_s, double gc_measured,
                         const eph_tune_costs *costs, eph_tune_sim *sims, size_t *order, size_t feasible,
                         double budget_s, size_t *nref, FILE *out, eph_error *err) {
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
  if (out)
    fprintf(out, "  simulator  the default and %s%zu of the model's best (distinct outcomes) again with the GC "
                 "simulator (spur, %s input%s): x%.2f its cost model\n",
            r == feasible ? "all " : "", n - 1, eph_sim_input_kind_name(eph_sim_input_kind_of(in)),
            cm.samples ? ", fitted cost model" : "", k);
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

eph_status eph_tune_run(const eph_tune_request *req, FILE *out, eph_error *err) {
  const eph_tune_target *t = &req->target;
  int verify = req->verify > 0 ? req->verify : 5;
  if (verify > 5) verify = 5;
  int inv = req->invocations > 0 ? req->invocations : 5;
  char path[256];
  if (req->keep_profile) snprintf(path, sizeof path, "%s", req->keep_profile);
  else snprintf(path, sizeof path, "%s/ephemera-tune-%ld.eph", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                (long)getpid());
  const char *what = t->workload ? t->workload : t->command;
  char objective[64];
  eph_tune_objective_format(&req->objective, objective, sizeof objective);
  fprintf(out, "tune %s%s%s, objective %s\n", what, t->size ? " --size " : "", t->size ? t->size : "", objective);

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
  fprintf(out, "  profile    1 run (%s): %zu records, %.1f MiB allocated, deaths %s\n", mode, lives.n,
          (double)lives.end / (1024.0 * 1024.0), lives.exact ? "exact" : "to the collection that found them");

  /* 2. The grid, simulated. */
  eph_tune_config *grid = NULL;
  size_t n = eph_tune_grid(&grid);
  eph_tune_sim *sims = n ? calloc(n, sizeof *sims) : NULL;
  size_t *order = n ? calloc(n, sizeof *order) : NULL;
  eph_tune_measurement *meas = calloc((size_t)verify, sizeof *meas);
  size_t *verified = calloc((size_t)verify, sizeof *verified);
  double *score = calloc((size_t)verify, sizeof *score); /* the measured ones' under the objective */
  if (!grid || !sims || !order || !meas || !verified || !score) {
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
  fprintf(out, "  model      %zu configurations screened (%zu within the objective); calibrated on the default's "
               "%.3f s (GC %.3f s%s): x%.2f nominal\n",
          n, feasible, meas[0].mean_s, gc_measured, gc_assumed ? ", assumed 30%" : "", costs.scale);
  if (sim_in) {
    size_t nref = 0;
    st = refine(&req->objective, grid, sim_in, meas[0].mean_s, gc_measured, &costs, sims, order, feasible, REFINE_BUDGET_S,
                &nref, out, err);
    if (st != EPH_OK) goto done;
    feasible = nref;
  } else {
    fprintf(out, "  simulator  not used (%s): the model's ranking stands\n", sim_err.message);
  }

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

  /* 5. The best measured. */
  int best = 0;
  double best_score = eph_tune_score(&req->objective, meas[0].mean_s, meas[0].peak_heap);
  for (int k = 1; k < nv; k++) {
    double s = eph_tune_score(&req->objective, meas[k].mean_s, meas[k].peak_heap);
    if (s < best_score) best = k, best_score = s;
  }
  /* Under the time objective a configuration must be faster beyond the
   * noise: the fastest of five noisy means is biased low, and a pick that
   * is not clearly faster than the default may well be slower. */
  int unclear = 0;
  /* (tune_clearly_faster: beyond the interval, or by rules of its own
   * for one or two invocations.) */
  bool one = inv < 2, two = inv == 2;
  if (req->objective.kind == EPH_TUNE_TIME && best && !tune_clearly_faster(&meas[0], &meas[best]))
    unclear = best, best = 0;
  fprintf(out, "  verified   %d configurations x %d invocations (mean wall time%s):\n", nv, inv, one ? "" : ", 95% CI");
  fprintf(out, "    %-3s %-56s %10s %20s %9s %9s %10s %6s\n", "", "EPHEMERA_GC", "predicted", "measured", "pred.x",
          "meas.x", "peak heap", "fullGC");
  for (int k = 0; k < nv; k++) {
    const eph_tune_sim *s = &sims[verified[k]];
    char gc[160], ci[48], peak[32];
    eph_tune_config_format(&s->config, gc, sizeof gc);
    if (one) snprintf(ci, sizeof ci, "%.3f s", meas[k].mean_s);
    else snprintf(ci, sizeof ci, "%.3f ± %.3f s", meas[k].mean_s, meas[k].ci95_s);
    tune_format_mib(meas[k].peak_heap, peak, sizeof peak);
    fprintf(out, "    %-3s %-56s %8.3f s %20s %8.2fx %8.2fx %10s %6.1f\n", k == best ? "*" : (k == 0 ? "def" : ""), gc,
            s->time_s, ci, ratio(sims[0].time_s, s->time_s), ratio(meas[0].mean_s, meas[k].mean_s), peak,
            meas[k].full_gcs);
  }
  const eph_tune_sim *pick = &sims[verified[best]];
  char gc[160];
  eph_tune_config_format(&pick->config, gc, sizeof gc);
  double speedup = meas[0].mean_s / meas[best].mean_s, sci = tune_speedup_ci(&meas[0], &meas[best]);
  double predicted = ratio(sims[0].time_s, pick->time_s);
  char peak_def[32], peak_pick[32];
  tune_format_mib(meas[0].peak_heap, peak_def, sizeof peak_def);
  tune_format_mib(meas[best].peak_heap, peak_pick, sizeof peak_pick);
  if (unclear) {
    char gc_unclear[160];
    eph_tune_config_format(&sims[verified[unclear]].config, gc_unclear, sizeof gc_unclear);
    double su = meas[0].mean_s / meas[unclear].mean_s, ci_u = tune_speedup_ci(&meas[0], &meas[unclear]);
    if (one)
      fprintf(out, "recommendation: keep the defaults (the fastest verified, %s, measured %.2fx in one invocation:\n"
                   "  less than 5 %% faster, within the noise of one run; more with --invocations)\n",
              gc_unclear, su);
    else if (two)
      fprintf(out, "recommendation: keep the defaults (the fastest verified, %s, measured %.2fx in two invocations:\n"
                   "  less than 5 %% faster, or an invocation of it no faster than one of the default; more with "
                   "--invocations)\n",
              gc_unclear, su);
    else
      fprintf(out, "recommendation: keep the defaults (the fastest verified, %s, measured %.2fx, 95%% CI %.2f-%.2fx:\n"
                   "  not clearly faster than the default after %d invocations; more with --invocations)\n",
              gc_unclear, su, su - ci_u, su + ci_u, inv);
  } else if (best == 0) {
    fprintf(out, "recommendation: keep the defaults (no verified configuration measured better under %s)\n", objective);
  } else {
    fprintf(out, "recommendation: EPHEMERA_GC=%s\n", gc);
    if (one)
      fprintf(out, "  speed-up   %.2fx measured (one invocation each: no interval), %.2fx predicted; peak heap %s "
                   "(default %s)\n", speedup, predicted, peak_pick, peak_def);
    else
      fprintf(out, "  speed-up   %.2fx measured (95%% CI %.2f-%.2fx), %.2fx predicted; peak heap %s (default %s)\n",
              speedup, speedup - sci, speedup + sci, predicted, peak_pick, peak_def);
    if (!one && speedup - sci <= 1.0)
      fprintf(out, "  note       the interval includes 1.0x: the gain is within the noise of %d invocations\n", inv);
    tune_explain(out, &lives, &sims[0], pick);
  }
  if (req->kv)
    fprintf(out, "kv pick=%s speedup=%.4f speedup_ci=%.4f predicted=%.4f default_s=%.6f pick_s=%.6f peak_default=%.0f "
                 "peak_pick=%.0f verified=%d invocations=%d grid=%zu advisor_runs=%d\n",
            best ? gc : "default", speedup, sci, predicted, meas[0].mean_s, meas[best].mean_s, meas[0].peak_heap,
            meas[best].peak_heap, nv, inv, n, 1 + nv);
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

/* The suggestion's input at most: a few million weighted samples predict
 * as well as tens of millions of records, in seconds rather than minutes. */
enum { SUGGESTION_MAX_RECORDS = 6000000 };

eph_status eph_tune_report_suggestion(const char *profile_path, FILE *out, eph_error *err) {
  struct stat sb;
  if (stat(profile_path, &sb) == 0 && sb.st_size > ((off_t)1 << 30)) {
    fprintf(out, "\nGC parameters: not simulated for a profile over 1 GiB (run `ephemera tune` on a sampled profile)\n");
    return EPH_OK;
  }
  eph_tune_lives lives;
  eph_sim_input *in = NULL;
  eph_error e2 = {0};
  size_t thinned;
  eph_status st = load_profile(profile_path, SUGGESTION_MAX_RECORDS, &thinned, &lives, &in, &e2, err);
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
      fprintf(out, "\n(the GC simulator failed on this profile: %s; the fast model's ranking follows)\n", e2.message);
    const eph_tune_sim *top = &sims[order[0]];
    char gc[160], peak[32];
    eph_tune_config_format(&top->config, gc, sizeof gc);
    tune_format_mib(top->peak_heap, peak, sizeof peak);
    fprintf(out, "\nGC parameters (PREDICTED by simulating %zu configurations over these lifetimes; not measured —\n"
                 "verify with `ephemera tune`):\n",
            n);
    if (thinned > 1)
      fprintf(out, "  (from %zu of the profile's records: one small object in %zu, weighted, and every one of 4 KiB or more)\n",
              lives.n, thinned);
    if (eph_tune_config_equal(&top->config, &sims[0].config)) {
      fprintf(out, "  the defaults are the best predicted\n");
    } else {
      fprintf(out, "  EPHEMERA_GC=%s\n", gc);
      fprintf(out, "  predicted GC work %.2fx lower than the default's; full GCs %llu -> %llu; peak heap %s\n",
              top->gc_s > 0 ? sims[0].gc_s / top->gc_s : 0, (unsigned long long)sims[0].full_gcs,
              (unsigned long long)top->full_gcs, peak);
    }
  }
  free(grid);
  free(sims);
  free(order);
  eph_tune_lives_free(&lives);
  eph_sim_input_free(in);
  return st;
}
