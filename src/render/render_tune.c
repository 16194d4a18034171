/*
 * render_tune.c — `ephemera tune` as it goes: each step of the advisor's
 * loop (eph_tune_run, eph_tune_lua_run) printed when it completes, the
 * verified table and the recommendation at the end; and the advisor's
 * prediction that closes a text report (eph_tune_suggest).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render_tune.h"

static void mib(double bytes, char *buf, size_t len) { snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024.0)); }

/* a / b, 0 when b is not positive (printed as 0.00x rather than inf). */
static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static void print_change(FILE *out, const char *what, double before, double after, const char *unit, double scale) {
  fprintf(out, "    %-12s %.1f -> %.1f %s", what, before / scale, after / scale, unit);
  if (before > 0) fprintf(out, " (%+.0f%%)", 100.0 * (after - before) / before);
  fputc('\n', out);
}

static void print_why(FILE *out, const eph_tune_why *w, const eph_tune_sim *def, const eph_tune_sim *pick) {
  char b[32];
  mib(w->longlived_bytes, b, sizeof b);
  fprintf(out, "  why:\n    %.0f%% of the allocated bytes (%s) outlive one default eden (%zu MiB of allocation);\n",
          w->all_bytes > 0 ? 100.0 * w->longlived_bytes / w->all_bytes : 0.0, b, (size_t)(w->threshold >> 20));
  if (w->longlived_bytes > 0) {
    fprintf(out, "    the long-lived volume is");
    for (size_t i = 0; i < w->nclasses; i++) {
      mib(w->classes[i].bytes, b, sizeof b);
      fprintf(out, "%s %s %.0f%% (%s)", i ? "," : "", w->classes[i].name, 100.0 * w->classes[i].bytes / w->longlived_bytes,
              b);
    }
    fprintf(out, ".\n    Every scavenge copies what of it is young, and it fills old space, which triggers full GCs.\n");
  }
  fprintf(out, "  what the pick changes (simulated, default -> pick):\n");
  print_change(out, "copying", def->copied, pick->copied, "MiB", 1024.0 * 1024.0);
  print_change(out, "scavenges", (double)def->scavenges, (double)pick->scavenges, "", 1.0);
  print_change(out, "full GCs", (double)def->full_gcs, (double)pick->full_gcs, "", 1.0);
  print_change(out, "full-GC work", def->marked, pick->marked, "MiB traced", 1024.0 * 1024.0);
  print_change(out, "peak heap", def->peak_heap, pick->peak_heap, "MiB", 1024.0 * 1024.0);
}

static void print_verified(FILE *out, const eph_tune_result *r) {
  int inv = r->invocations;
  bool one = inv < 2;
  const eph_tune_verified *v = r->verified;
  fprintf(out, "  verified   %d configurations x %d invocations (mean wall time%s):\n", r->nverified, inv,
          one ? "" : ", 95% CI");
  fprintf(out, "    %-3s %-56s %10s %20s %9s %9s %10s %6s\n", "", "EPHEMERA_GC", "predicted", "measured", "pred.x",
          "meas.x", "peak heap", "fullGC");
  for (int k = 0; k < r->nverified; k++) {
    const eph_tune_sim *s = &v[k].sim;
    const eph_tune_measurement *m = &v[k].meas;
    char gc[160], ci[48], peak[32];
    eph_tune_config_format(&s->config, gc, sizeof gc);
    if (one) snprintf(ci, sizeof ci, "%.3f s", m->mean_s);
    else snprintf(ci, sizeof ci, "%.3f ± %.3f s", m->mean_s, m->ci95_s);
    mib(m->peak_heap, peak, sizeof peak);
    fprintf(out, "    %-3s %-56s %8.3f s %20s %8.2fx %8.2fx %10s %6.1f\n", k == r->best ? "*" : (k == 0 ? "def" : ""),
            gc, s->time_s, ci, ratio(v[0].sim.time_s, s->time_s), ratio(v[0].meas.mean_s, m->mean_s), peak,
            m->full_gcs);
  }
}

/* How many invocations would decide "not clearly faster" at the spread
 * measured: the interval's half-width shrinks as 1/sqrt(n), so it excludes
 * 1.0x once n >= inv * (ci / (speedup - 1))^2.  Nothing when the fastest
 * was not faster at all (more runs would not make it so). */
static void print_more_invocations(FILE *out, const eph_tune_result *r, double su, double ci) {
  if (!(su > 1.0) || !(ci > 0)) return;
  double n = ceil((double)r->invocations * (ci / (su - 1.0)) * (ci / (su - 1.0)));
  if (n <= r->invocations) n = r->invocations + 1;
  const eph_tune_target *t = &r->request->target;
  if (n > 1000) {
    fprintf(out, "  at the spread measured, over 1000 invocations each would be needed to tell it apart from the default:\n"
                 "  the difference is within this machine's noise\n");
    return;
  }
  fprintf(out, "  at the spread measured, about %.0f invocations each would decide it:\n    ephemera tune ", n);
  if (t->workload) fprintf(out, "%s%s%s", t->workload, t->size ? " --size " : "", t->size ? t->size : "");
  else fprintf(out, "--cmd '%s'", t->command);
  fprintf(out, " --objective %s --invocations %.0f\n", r->objective, n);
}

static void print_recommendation(FILE *out, const eph_tune_result *r) {
  int inv = r->invocations, best = r->best;
  bool one = inv < 2, two = inv == 2;
  const eph_tune_verified *v = r->verified;
  char gc[160];
  eph_tune_config_format(&v[best].sim.config, gc, sizeof gc);
  if (r->unclear) {
    char gc_unclear[160];
    eph_tune_config_format(&v[r->unclear].sim.config, gc_unclear, sizeof gc_unclear);
    double su = r->unclear_speedup, ci_u = r->unclear_ci;
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
    if (!one) print_more_invocations(out, r, su, ci_u);
  } else if (best == 0) {
    fprintf(out, "recommendation: keep the defaults (no verified configuration measured better under %s)\n",
            r->objective);
  } else {
    char peak_def[32], peak_pick[32];
    mib(v[0].meas.peak_heap, peak_def, sizeof peak_def);
    mib(v[best].meas.peak_heap, peak_pick, sizeof peak_pick);
    fprintf(out, "recommendation: EPHEMERA_GC=%s\n", gc);
    if (one)
      fprintf(out, "  speed-up   %.2fx measured (one invocation each: no interval), %.2fx predicted; peak heap %s "
                   "(default %s)\n", r->speedup, r->predicted, peak_pick, peak_def);
    else
      fprintf(out, "  speed-up   %.2fx measured (95%% CI %.2f-%.2fx), %.2fx predicted; peak heap %s (default %s)\n",
              r->speedup, r->speedup - r->speedup_ci, r->speedup + r->speedup_ci, r->predicted, peak_pick, peak_def);
    if (!one && r->speedup - r->speedup_ci <= 1.0)
      fprintf(out, "  note       the interval includes 1.0x: the gain is within the noise of %d invocations\n", inv);
    if (r->has_why) print_why(out, &r->why, &v[0].sim, &v[best].sim);
  }
  if (r->request->kv)
    fprintf(out, "kv pick=%s speedup=%.4f speedup_ci=%.4f predicted=%.4f default_s=%.6f pick_s=%.6f peak_default=%.0f "
                 "peak_pick=%.0f verified=%d invocations=%d grid=%zu advisor_runs=%d\n",
            best ? gc : "default", r->speedup, r->speedup_ci, r->predicted, v[0].meas.mean_s, v[best].meas.mean_s,
            v[0].meas.peak_heap, v[best].meas.peak_heap, r->nverified, inv, r->grid, 1 + r->nverified);
}

void eph_render_tune_step(FILE *out, eph_tune_step step, const eph_tune_result *r) {
  const eph_tune_target *t = &r->request->target;
  switch (step) {
    case EPH_TUNE_STARTED:
      fprintf(out, "tune %s%s%s, objective %s\n", t->workload ? t->workload : t->command, t->size ? " --size " : "",
              t->size ? t->size : "", r->objective);
      break;
    case EPH_TUNE_PROFILED:
      fprintf(out, "  profile    1 run (%s): %zu records, %.1f MiB allocated, deaths %s\n", r->profile_spec, r->records,
              (double)r->allocated / (1024.0 * 1024.0), r->exact ? "exact" : "to the collection that found them");
      break;
    case EPH_TUNE_SCREENED:
      fprintf(out, "  model      %zu configurations screened (%zu within the objective); calibrated on the default's "
                   "%.3f s (GC %.3f s%s): x%.2f nominal\n",
              r->grid, r->feasible, r->default_wall_s, r->gc_measured_s, r->gc_assumed ? ", assumed 30%" : "", r->scale);
      break;
    case EPH_TUNE_SIMULATED:
      if (r->sim_used)
        fprintf(out, "  simulator  the default and %s%zu of the model's best (distinct outcomes) again with the GC "
                     "simulator (spur, %s input%s): x%.2f its cost model\n",
                r->sim_all ? "all " : "", r->sim_count, r->sim_input, r->sim_fitted ? ", fitted cost model" : "",
                r->sim_scale);
      else
        fprintf(out, "  simulator  not used (%s): the model's ranking stands\n", r->sim_skipped);
      break;
    case EPH_TUNE_DONE:
      print_verified(out, r);
      print_recommendation(out, r);
      break;
  }
  fflush(out);
}

void eph_render_tune_progress(void *out, eph_tune_step step, const eph_tune_result *r) {
  eph_render_tune_step(out, step, r);
}

void eph_render_tune_lua_step(FILE *out, eph_tune_step step, const eph_tune_lua_result *r) {
  const eph_tune_measurement *m = r->meas;
  switch (step) {
    case EPH_TUNE_STARTED:
      fprintf(out, "tune --lua %s (Lua 5.4's collector), objective time\n", r->request->argv[0]);
      break;
    case EPH_TUNE_PROFILED:
      fprintf(out, "  profile    1 run: %.0f objects; of those freed, %.0f%% died before their first GC cycle ended, "
                   "%.0f%% within two; %.0f%% alive at the end -> try %s settings first\n",
              r->objects, 100 * r->share0, 100 * r->share01, 100 * r->censored, r->advice);
      break;
    case EPH_TUNE_DONE: {
      int inv = r->n ? m[0].n : 0, best = r->best;
      fprintf(out, "  verified   %d settings x %d invocations (wall time incl. start-up, 95%% CI):\n", r->n, inv);
      for (int i = 0; i < r->n; i++) {
        char rss[32];
        mib(m[i].peak_heap, rss, sizeof rss);
        fprintf(out, "    %-3s %-40s %.3f ± %.3f s %7.2fx   max RSS %s\n", i == best ? "*" : (i == 0 ? "def" : ""),
                r->settings[i], m[i].mean_s, m[i].ci95_s, m[0].mean_s / m[i].mean_s, rss);
      }
      if (best == 0) {
        fprintf(out, "recommendation: keep Lua's default (%s)\n", r->settings[0]);
        if (r->fastest) {
          double sf = r->fastest_speedup, cf = r->fastest_ci;
          fprintf(out, "  fastest    %s at %.2fx (95%% CI %.2f-%.2fx): not clearly faster than the default\n",
                  r->settings[r->fastest], sf, sf - cf, sf + cf);
        }
      } else {
        fprintf(out, "recommendation: ephemera lua --gc %s (or collectgarbage(\"%s\", ...) in the script)\n",
                r->settings[best], strncmp(r->settings[best], "incremental", 11) ? "generational" : "incremental");
        fprintf(out, "  speed-up   %.2fx measured (95%% CI %.2f-%.2fx)\n", r->speedup, r->speedup - r->speedup_ci,
                r->speedup + r->speedup_ci);
      }
      if (r->request->kv)
        fprintf(out,
                "kv pick=%s speedup=%.4f speedup_ci=%.4f default_s=%.6f pick_s=%.6f advice=%s verified=%d invocations=%d\n",
                r->settings[best], r->speedup, r->speedup_ci, m[0].mean_s, m[best].mean_s, r->advice_label, r->n, inv);
      break;
    }
    default: break;
  }
  fflush(out);
}

void eph_render_tune_lua_progress(void *out, eph_tune_step step, const eph_tune_lua_result *r) {
  eph_render_tune_lua_step(out, step, r);
}

void eph_render_tune_suggestion(FILE *out, const eph_tune_suggestion *s) {
  if (s->kind == EPH_SUGGEST_TOO_BIG) {
    fprintf(out, "\nGC parameters: not simulated for a profile over 1 GiB (run `ephemera tune` on a sampled profile)\n");
    return;
  }
  if (s->kind != EPH_SUGGEST_PREDICTED) return;
  if (s->sim_failed[0])
    fprintf(out, "\n(the GC simulator failed on this profile: %s; the fast model's ranking follows)\n", s->sim_failed);
  char gc[160], peak[32];
  eph_tune_config_format(&s->top.config, gc, sizeof gc);
  mib(s->top.peak_heap, peak, sizeof peak);
  fprintf(out, "\nGC parameters (PREDICTED by simulating %zu configurations over these lifetimes; not measured —\n"
               "verify with `ephemera tune`):\n",
          s->grid);
  if (s->thinned > 1)
    fprintf(out, "  (from %zu of the profile's records: one small object in %zu, weighted, and every one of 4 KiB or more)\n",
            s->records, s->thinned);
  if (eph_tune_config_equal(&s->top.config, &s->def.config)) {
    fprintf(out, "  the defaults are the best predicted\n");
  } else {
    fprintf(out, "  EPHEMERA_GC=%s\n", gc);
    fprintf(out, "  predicted GC work %.2fx lower than the default's; full GCs %llu -> %llu; peak heap %s\n",
            s->top.gc_s > 0 ? s->def.gc_s / s->top.gc_s : 0, (unsigned long long)s->def.full_gcs,
            (unsigned long long)s->top.full_gcs, peak);
  }
}

void eph_render_tune_grid(FILE *out, const eph_tune_config *grid, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char buf[160];
    eph_tune_config_format(&grid[i], buf, sizeof buf);
    fprintf(out, "%s\n", buf);
  }
}
