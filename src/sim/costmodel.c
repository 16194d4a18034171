/*
 * costmodel.c — predicted GC time: a linear model of a collection's work,
 * fitted by least squares on the real heap's per-collection statistics
 * (`ephemera sim calibrate`), kept in a small `key value` text file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_internal.h"

#define NFEAT 14
#define MIN_RUNS 8 /* fewer runs than this leave the fit meaningless */
#define IRLS_ROUNDS 30 /* reweightings of the least-absolute-error fit */
#define IRLS_FLOOR 0.01 /* relative errors below 1 % weigh as 1 % */

/* The built-in guesses: a scavenge costs ~20 us of fixed work, a full GC
 * ~100 us, copying ~0.3 ns per byte and ~5 ns per object, a slot ~1.5 ns,
 * marking ~0.1 ns per byte, sliding ~0.2 ns (memmove), a remembered entry
 * ~20 ns (a cache miss).  Only a starting point: calibrate on the machine. */
void eph_sim_costmodel_default(eph_sim_costmodel *cm) {
  *cm = (eph_sim_costmodel){
      .per_scavenge = 20e-6,
      .per_full_gc = 100e-6,
      .per_byte_copied = 0.3e-9,
      .per_byte_promoted = 0.4e-9,
      .per_object_moved = 5e-9,
      .per_object_far = 1e-9,
      .per_byte_far = 0,
      .per_slot_scanned = 1.5e-9,
      .per_remembered_slot = 1.5e-9,
      .per_slot_traced = 3e-9,
      .per_byte_marked = 0.1e-9,
      .per_byte_compacted = 0.2e-9,
      .per_remembered = 20e-9,
      .per_mib_committed = 0,
      .slots_per_byte = 0.05,
  };
}

double eph_sim_eden_distance(uint64_t eden_bytes) {
  double d = log2((double)eden_bytes / (256.0 * 1024));
  return d > 0 ? d : 0;
}

static const char *const KEYS[NFEAT] = {
    "per_scavenge",    "per_full_gc",         "per_byte_copied", "per_byte_promoted",  "per_object_moved",
    "per_object_far",  "per_byte_far",
    "per_slot_scanned", "per_remembered_slot", "per_slot_traced", "per_byte_marked",   "per_byte_compacted",
    "per_remembered",  "per_mib_committed"};

static double *field(eph_sim_costmodel *cm, int i) {
  double *f[NFEAT] = {&cm->per_scavenge,       &cm->per_full_gc,         &cm->per_byte_copied,
                      &cm->per_byte_promoted,  &cm->per_object_moved,    &cm->per_object_far,
                      &cm->per_byte_far,
                      &cm->per_slot_scanned,
                      &cm->per_remembered_slot, &cm->per_slot_traced,    &cm->per_byte_marked,
                      &cm->per_byte_compacted, &cm->per_remembered,      &cm->per_mib_committed};
  return f[i];
}

bool eph_sim_costmodel_default_path(char *buf, size_t len) {
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  int n;
  if (xdg && *xdg) n = snprintf(buf, len, "%s/ephemera/costmodel", xdg);
  else if (home && *home) n = snprintf(buf, len, "%s/.config/ephemera/costmodel", home);
  else return false;
  return n > 0 && (size_t)n < len;
}

eph_status eph_sim_costmodel_load(const char *path, eph_sim_costmodel *cm, eph_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    eph_error_fill(err, EPH_ERR_IO, "cannot open cost model %s: %s", path, strerror(errno));
    return EPH_ERR_IO;
  }
  eph_sim_costmodel m = {0};
  char line[256];
  unsigned lineno = 0, seen = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '#' || line[0] == '\n') continue;
    char key[64];
    double v;
    if (sscanf(line, "%63s %lf", key, &v) != 2 || !isfinite(v) || v < 0) {
      fclose(f);
      eph_error_fill(err, EPH_ERR_INVALID, "cost model %s line %u: expected `key non-negative-number`", path, lineno);
      return EPH_ERR_INVALID;
    }
    bool known = false;
    for (int i = 0; i < NFEAT; i++)
      if (!strcmp(key, KEYS[i])) {
        *field(&m, i) = v;
        seen |= 1u << i;
        known = true;
      }
    if (!strcmp(key, "slots_per_byte")) m.slots_per_byte = v, known = true;
    if (!strcmp(key, "fit_error")) m.fit_error = v, known = true;
    if (!strcmp(key, "samples")) m.samples = (unsigned)v, known = true;
    if (!known) {
      fclose(f);
      eph_error_fill(err, EPH_ERR_INVALID, "cost model %s line %u: unknown key '%s'", path, lineno, key);
      return EPH_ERR_INVALID;
    }
  }
  fclose(f);
  if (seen != (1u << NFEAT) - 1) {
    eph_error_fill(err, EPH_ERR_INVALID, "cost model %s: missing coefficients (needs all of per_scavenge ... per_mib_committed; "
                   "a model from an older ephemera: run `ephemera sim calibrate` again)", path);
    return EPH_ERR_INVALID;
  }
  *cm = m;
  return EPH_OK;
}

eph_status eph_sim_costmodel_resolve(const char *path, eph_sim_costmodel *cm, eph_error *err) {
  if (path) return eph_sim_costmodel_load(path, cm, err);
  char def[4096];
  eph_error ignored;
  if (!eph_sim_costmodel_default_path(def, sizeof def) || eph_sim_costmodel_load(def, cm, &ignored) != EPH_OK)
    eph_sim_costmodel_default(cm);
  return EPH_OK;
}

/* mkdir -p of path's parent. */
static void make_parent(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(dir, 0755);
      *p = '/';
    }
  mkdir(dir, 0755);
}

eph_status eph_sim_costmodel_save(const char *path, const eph_sim_costmodel *cm, eph_error *err) {
  make_parent(path);
  FILE *f = fopen(path, "w");
  if (!f) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write cost model %s: %s", path, strerror(errno));
    return EPH_ERR_IO;
  }
  fprintf(f, "# ephemera sim cost model: predicted GC seconds = sum of coefficient x feature\n");
  eph_sim_costmodel m = *cm;
  for (int i = 0; i < NFEAT; i++) fprintf(f, "%s %.9g\n", KEYS[i], *field(&m, i));
  fprintf(f, "slots_per_byte %.9g\nfit_error %.6g\nsamples %u\n", cm->slots_per_byte, cm->fit_error, cm->samples);
  if (fclose(f) != 0) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write cost model %s: %s", path, strerror(errno));
    return EPH_ERR_IO;
  }
  return EPH_OK;
}

/* A run: its summed features (in KEYS order) and GC seconds. */
typedef struct run_sum {
  double x[NFEAT];
  double seconds;
  double weight; /* the robust fit's weight (eph_sim_costmodel_fit) */
} run_sum;

static void add_observation(run_sum *r, const eph_sim_observation *o) {
  bool full = o->kind == EPH_GC_FULL;
  double x[NFEAT] = {!full,
                     full,
                     o->copied,
                     o->promoted,
                     o->objects,
                     full ? 0 : o->objects * eph_sim_eden_distance((uint64_t)o->eden_bytes),
                     full ? 0 : (o->copied + o->promoted) * eph_sim_eden_distance((uint64_t)o->eden_bytes),
                     full ? 0 : o->slots - o->remembered_slots,
                     full ? 0 : o->remembered_slots,
                     full ? o->slots : 0,
                     o->marked,
                     o->compacted,
                     o->remembered,
                     o->mib_committed};
  for (int j = 0; j < NFEAT; j++) r->x[j] += x[j];
  r->seconds += o->seconds;
}

/* Solves the weighted normal equations over the active features (weight
 * weight / seconds^2: relative errors; Gaussian elimination with partial
 * pivoting on scaled columns).  False if singular. */
static bool solve(const run_sum *runs, size_t n, const bool active[NFEAT], const double scale[NFEAT],
                  double beta[NFEAT]) {
  double a[NFEAT][NFEAT + 1] = {{0}};
  int idx[NFEAT], m = 0;
  for (int j = 0; j < NFEAT; j++)
    if (active[j]) idx[m++] = j;
  for (size_t k = 0; k < n; k++) {
    double w = 1 / runs[k].seconds, u = runs[k].weight;
    for (int i = 0; i < m; i++) {
      double xi = runs[k].x[idx[i]] / scale[idx[i]] * w;
      for (int j = 0; j < m; j++) a[i][j] += u * xi * runs[k].x[idx[j]] / scale[idx[j]] * w;
      a[i][m] += u * xi * runs[k].seconds * w;
    }
  }
  for (int c = 0; c < m; c++) {
    int piv = c;
    for (int r = c + 1; r < m; r++)
      if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
    if (fabs(a[piv][c]) < 1e-300) return false;
    for (int j = 0; j <= m; j++) {
      double t = a[c][j];
      a[c][j] = a[piv][j];
      a[piv][j] = t;
    }
    for (int r = 0; r < m; r++) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (int j = c; j <= m; j++) a[r][j] -= f * a[c][j];
    }
  }
  for (int j = 0; j < NFEAT; j++) beta[j] = 0;
  for (int i = 0; i < m; i++) beta[idx[i]] = a[i][m] / a[i][i] / scale[idx[i]];
  return true;
}

/* Non-negative weighted least squares over the features `active` allows;
 * false if none is left. */
static bool fit_nonnegative(const run_sum *runs, size_t n, const bool active[NFEAT], const double scale[NFEAT],
                            double beta[NFEAT]) {
  bool on[NFEAT];
  for (int j = 0; j < NFEAT; j++) on[j] = active[j];
  /* Non-negative least squares, the simple way: drop the most negative
   * coefficient and refit until none is negative (a handful of features). */
  for (;;) {
    if (!solve(runs, n, on, scale, beta)) {
      /* Collinear columns: drop the last active feature and retry. */
      int last = -1;
      for (int j = 0; j < NFEAT; j++)
        if (on[j]) last = j;
      if (last <= 0) return false;
      on[last] = false;
      continue;
    }
    int worst = -1;
    for (int j = 0; j < NFEAT; j++)
      if (on[j] && beta[j] < 0 && (worst < 0 || beta[j] * scale[j] < beta[worst] * scale[worst])) worst = j;
    if (worst < 0) break;
    on[worst] = false;
  }
  return true;
}

/* The runs with enough GC time to fit on, summed; *n_out of them. */
static run_sum *sum_runs(const eph_sim_observation *obs, size_t n, size_t *n_out, double *slots_per_byte) {
  unsigned nrun = 0;
  for (size_t k = 0; k < n; k++)
    if (obs[k].run + 1 > nrun) nrun = obs[k].run + 1;
  run_sum *all = calloc(nrun ? nrun : 1, sizeof *all);
  if (!all) return NULL;
  double slots = 0, bytes = 0;
  for (size_t k = 0; k < n; k++) {
    add_observation(&all[obs[k].run], &obs[k]);
    slots += obs[k].slots;
    bytes += obs[k].copied + obs[k].promoted + obs[k].marked;
  }
  *slots_per_byte = bytes > 0 ? slots / bytes : 0;
  size_t keep = 0;
  for (unsigned r = 0; r < nrun; r++)
    if (all[r].seconds >= EPH_SIM_FIT_MIN_SECONDS) all[keep++] = all[r];
  *n_out = keep;
  return all;
}

eph_status eph_sim_costmodel_fit(const eph_sim_observation *obs, size_t n, eph_sim_costmodel *cm, eph_error *err) {
  size_t nruns;
  double slots_per_byte;
  run_sum *runs = sum_runs(obs, n, &nruns, &slots_per_byte);
  if (!runs) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return EPH_ERR_NOMEM;
  }
  if (nruns < MIN_RUNS) {
    free(runs);
    eph_error_fill(err, EPH_ERR_INVALID, "%zu runs with at least %g ms of GC: at least %d are needed to fit the cost model",
                   nruns, EPH_SIM_FIT_MIN_SECONDS * 1e3, MIN_RUNS);
    return EPH_ERR_INVALID;
  }
  /* Features never observed (all zero) are left out; columns are scaled to
   * their largest value so that bytes and counts are comparable. */
  double scale[NFEAT] = {0};
  bool active[NFEAT];
  for (size_t k = 0; k < nruns; k++)
    for (int j = 0; j < NFEAT; j++)
      if (fabs(runs[k].x[j]) > scale[j]) scale[j] = fabs(runs[k].x[j]);
  for (int j = 0; j < NFEAT; j++) active[j] = scale[j] > 0;
  /* Least absolute relative error, by iteratively reweighted least
   * squares: GC times are noisy (a run's scavenges can take a third more
   * on a busy machine), a squared error lets a few such runs pull every
   * prediction, and the absolute error is what the median error measures. */
  double beta[NFEAT];
  for (size_t k = 0; k < nruns; k++) runs[k].weight = 1;
  for (int round = 0; round < IRLS_ROUNDS; round++) {
    if (!fit_nonnegative(runs, nruns, active, scale, beta)) {
      free(runs);
      eph_error_fill(err, EPH_ERR_INVALID, "the observations cannot determine the cost model (all features collinear)");
      return EPH_ERR_INVALID;
    }
    for (size_t k = 0; k < nruns; k++) {
      double pred = 0;
      for (int j = 0; j < NFEAT; j++) pred += beta[j] * runs[k].x[j];
      double rel = fabs(pred - runs[k].seconds) / runs[k].seconds;
      runs[k].weight = 1 / (rel > IRLS_FLOOR ? rel : IRLS_FLOOR);
    }
  }
  eph_sim_costmodel m = {0};
  for (int j = 0; j < NFEAT; j++) *field(&m, j) = beta[j];
  double sse = 0;
  for (size_t k = 0; k < nruns; k++) {
    double pred = 0;
    for (int j = 0; j < NFEAT; j++) pred += beta[j] * runs[k].x[j];
    double rel = (pred - runs[k].seconds) / runs[k].seconds;
    sse += rel * rel;
  }
  free(runs);
  m.fit_error = sqrt(sse / (double)nruns);
  m.samples = (unsigned)nruns;
  m.slots_per_byte = slots_per_byte;
  *cm = m;
  return EPH_OK;
}
