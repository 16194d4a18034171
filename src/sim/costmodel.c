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

#define NFEAT 7
#define MIN_OBSERVATIONS 8 /* fewer collections than this leave the fit meaningless */

/* The built-in guesses: a scavenge costs ~20 us of fixed work, copying ~1 ns
 * per byte, marking ~0.5 ns, sliding ~0.3 ns (memmove), a remembered entry
 * ~20 ns (a cache miss).  Only a starting point: calibrate on the machine. */
void eph_sim_costmodel_default(eph_sim_costmodel *cm) {
  *cm = (eph_sim_costmodel){
      .per_collection = 20e-6,
      .per_byte_copied = 1.0e-9,
      .per_byte_promoted = 1.2e-9,
      .per_byte_marked = 0.5e-9,
      .per_byte_compacted = 0.3e-9,
      .per_remembered = 20e-9,
      .per_mib_committed = 0,
  };
}

static const char *const KEYS[NFEAT] = {"per_collection",     "per_byte_copied", "per_byte_promoted",
                                        "per_byte_marked",    "per_byte_compacted", "per_remembered",
                                        "per_mib_committed"};

static double *field(eph_sim_costmodel *cm, int i) {
  double *f[NFEAT] = {&cm->per_collection,     &cm->per_byte_copied, &cm->per_byte_promoted, &cm->per_byte_marked,
                      &cm->per_byte_compacted, &cm->per_remembered,  &cm->per_mib_committed};
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
    eph_error_fill(err, EPH_ERR_INVALID, "cost model %s: missing coefficients (needs all of per_collection ... per_mib_committed)", path);
    return EPH_ERR_INVALID;
  }
  *cm = m;
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
  fprintf(f, "fit_error %.6g\nsamples %u\n", cm->fit_error, cm->samples);
  if (fclose(f) != 0) {
    eph_error_fill(err, EPH_ERR_IO, "cannot write cost model %s: %s", path, strerror(errno));
    return EPH_ERR_IO;
  }
  return EPH_OK;
}

static void features(const eph_sim_observation *o, double x[NFEAT]) {
  x[0] = 1;
  x[1] = o->copied;
  x[2] = o->promoted;
  x[3] = o->marked;
  x[4] = o->compacted;
  x[5] = o->remembered;
  x[6] = o->mib_committed;
}

/* Solves the normal equations over the active features (Gaussian
 * elimination with partial pivoting on scaled columns).  False if singular. */
static bool solve(const eph_sim_observation *obs, size_t n, const bool active[NFEAT], const double scale[NFEAT],
                  double beta[NFEAT]) {
  double a[NFEAT][NFEAT + 1] = {{0}};
  int idx[NFEAT], m = 0;
  for (int j = 0; j < NFEAT; j++)
    if (active[j]) idx[m++] = j;
  for (size_t k = 0; k < n; k++) {
    double x[NFEAT];
    features(&obs[k], x);
    for (int i = 0; i < m; i++) {
      double xi = x[idx[i]] / scale[idx[i]];
      for (int j = 0; j < m; j++) a[i][j] += xi * x[idx[j]] / scale[idx[j]];
      a[i][m] += xi * obs[k].seconds;
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

eph_status eph_sim_costmodel_fit(const eph_sim_observation *obs, size_t n, eph_sim_costmodel *cm, eph_error *err) {
  if (n < MIN_OBSERVATIONS) {
    eph_error_fill(err, EPH_ERR_INVALID, "%zu collections observed: at least %d are needed to fit the cost model", n,
                   MIN_OBSERVATIONS);
    return EPH_ERR_INVALID;
  }
  /* Features never observed (all zero) are left out; columns are scaled to
   * their largest value so that bytes and counts are comparable. */
  double scale[NFEAT] = {0};
  bool active[NFEAT];
  for (size_t k = 0; k < n; k++) {
    double x[NFEAT];
    features(&obs[k], x);
    for (int j = 0; j < NFEAT; j++)
      if (fabs(x[j]) > scale[j]) scale[j] = fabs(x[j]);
  }
  for (int j = 0; j < NFEAT; j++) active[j] = scale[j] > 0;
  /* Non-negative least squares, the simple way: drop the most negative
   * coefficient and refit until none is negative (a handful of features). */
  double beta[NFEAT];
  for (;;) {
    if (!solve(obs, n, active, scale, beta)) {
      /* Collinear columns: drop the last active feature and retry. */
      int last = -1;
      for (int j = 0; j < NFEAT; j++)
        if (active[j]) last = j;
      if (last <= 0) {
        eph_error_fill(err, EPH_ERR_INVALID, "the observations cannot determine the cost model (all features collinear)");
        return EPH_ERR_INVALID;
      }
      active[last] = false;
      continue;
    }
    int worst = -1;
    for (int j = 0; j < NFEAT; j++)
      if (active[j] && beta[j] < 0 && (worst < 0 || beta[j] * scale[j] < beta[worst] * scale[worst])) worst = j;
    if (worst < 0) break;
    active[worst] = false;
  }
  eph_sim_costmodel m = {0};
  for (int j = 0; j < NFEAT; j++) *field(&m, j) = beta[j];
  double sse = 0, sst = 0;
  for (size_t k = 0; k < n; k++) {
    double x[NFEAT], pred = 0;
    features(&obs[k], x);
    for (int j = 0; j < NFEAT; j++) pred += beta[j] * x[j];
    sse += (pred - obs[k].seconds) * (pred - obs[k].seconds);
    sst += obs[k].seconds * obs[k].seconds;
  }
  m.fit_error = sst > 0 ? sqrt(sse / sst) : 0;
  m.samples = (unsigned)n;
  *cm = m;
  return EPH_OK;
}
