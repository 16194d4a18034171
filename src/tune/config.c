/*
 * config.c — GC configurations: the default, Illimani's five, their
 * EPHEMERA_GC string, and the search grids.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/tune.h"

#define MiB ((size_t)1 << 20)

eph_tune_config eph_tune_config_default(void) {
  eph_gc_params p;
  eph_gc_params_init(&p);
  return eph_tune_config_from_params(&p);
}

eph_tune_config eph_tune_config_from_params(const eph_gc_params *p) {
  eph_tune_config c = {p->eden_bytes, p->growth_headroom, p->shrink_threshold, p->gc_ratio, (unsigned)p->tenure_age};
  return c;
}

eph_tune_config eph_tune_config_illimani(int i) {
  /* Illimani et al., IWST 2023, Table 2: eden, growth headroom, shrink threshold, GC ratio. */
  static const struct {
    size_t eden, headroom, shrink;
    double ratio;
  } T[5] = {{64, 64, 128, 2.5}, {150, 128, 128, 2.5}, {300, 128, 128, 5.0}, {300, 256, 256, 10.0}, {300, 512, 512, 10.0}};
  if (i < 0 || i > 4) i = 0;
  eph_tune_config c = {T[i].eden * MiB, T[i].headroom * MiB, T[i].shrink * MiB, T[i].ratio, 3};
  return c;
}

/* Sizes in the largest unit that divides them exactly (the parser's K/M/G). */
static int format_size(char *buf, size_t len, size_t v) {
  if (v && v % (1u << 30) == 0) return snprintf(buf, len, "%zuG", v >> 30);
  if (v && v % (1u << 20) == 0) return snprintf(buf, len, "%zuM", v >> 20);
  if (v && v % (1u << 10) == 0) return snprintf(buf, len, "%zuK", v >> 10);
  return snprintf(buf, len, "%zu", v);
}

void eph_tune_config_format(const eph_tune_config *c, char *buf, size_t len) {
  char e[32], h[32], s[32];
  format_size(e, sizeof e, c->eden);
  format_size(h, sizeof h, c->headroom);
  format_size(s, sizeof s, c->shrink);
  /* %.17g would round-trip any double; the grid's ratios print exactly with %g. */
  snprintf(buf, len, "eden=%s,headroom=%s,shrink=%s,ratio=%g,tenure=%u", e, h, s, c->ratio, c->tenure);
}

bool eph_tune_config_equal(const eph_tune_config *a, const eph_tune_config *b) {
  return a->eden == b->eden && a->headroom == b->headroom && a->shrink == b->shrink &&
         fabs(a->ratio - b->ratio) < 1e-9 && a->tenure == b->tenure;
}

/* Appends c unless it is already there. */
static void add_unique(eph_tune_config *g, size_t *n, eph_tune_config c) {
  for (size_t i = 0; i < *n; i++)
    if (eph_tune_config_equal(&g[i], &c)) return;
  g[(*n)++] = c;
}

/* The product of the axes, the default first and Illimani's five added. */
static size_t grid_product(eph_tune_config **out, const size_t *edens, size_t ne, const size_t *heads, size_t nh,
                           const size_t *shrinks, size_t ns, const double *ratios, size_t nr, const unsigned *tenures,
                           size_t nt) {
  size_t cap = ne * nh * ns * nr * nt + 6;
  eph_tune_config *g = malloc(cap * sizeof *g);
  *out = g;
  if (!g) return 0;
  size_t n = 0;
  add_unique(g, &n, eph_tune_config_default());
  for (int i = 0; i < 5; i++) add_unique(g, &n, eph_tune_config_illimani(i));
  for (size_t a = 0; a < ne; a++)
    for (size_t b = 0; b < nh; b++)
      for (size_t c = 0; c < ns; c++)
        for (size_t d = 0; d < nr; d++)
          for (size_t e = 0; e < nt; e++) {
            eph_tune_config k = {edens[a] * MiB, heads[b] * MiB, shrinks[c] * MiB, ratios[d], tenures[e]};
            add_unique(g, &n, k);
          }
  return n;
}

/* Roughly doubling steps (log-spaced) through the default (15M, 16M, 32M,
 * 0.33, 3) and Illimani's values. */
size_t eph_tune_grid(eph_tune_config **out) {
  static const size_t edens[] = {4, 8, 15, 32, 64, 150, 300};
  static const size_t heads[] = {16, 64, 128, 512};
  static const size_t shrinks[] = {32, 128, 512};
  static const double ratios[] = {0.33, 1.0, 2.5, 5.0, 10.0};
  static const unsigned tenures[] = {1, 3, 7};
  return grid_product(out, edens, 7, heads, 4, shrinks, 3, ratios, 5, tenures, 3);
}

size_t eph_tune_grid_coarse(eph_tune_config **out) {
  static const size_t edens[] = {8, 15, 32, 64, 150, 300};
  static const size_t heads[] = {64};
  static const size_t shrinks[] = {128};
  static const double ratios[] = {0.33, 1.0, 2.5, 10.0};
  static const unsigned tenures[] = {1, 3};
  return grid_product(out, edens, 6, heads, 1, shrinks, 1, ratios, 4, tenures, 2);
}

eph_status eph_tune_grid_named(const char *which, eph_tune_config **out, size_t *n, eph_error *err) {
  *out = NULL;
  *n = 0;
  if (!strcmp(which, "full")) *n = eph_tune_grid(out);
  else if (!strcmp(which, "coarse")) *n = eph_tune_grid_coarse(out);
  else if (!strcmp(which, "illimani")) {
    if ((*out = malloc(5 * sizeof **out))) *n = 5;
    for (size_t i = 0; i < *n; i++) (*out)[i] = eph_tune_config_illimani((int)i);
  } else {
    eph_error_fill(err, EPH_ERR_INVALID, "--list-grid takes full, coarse or illimani, not '%s'", which);
    return EPH_ERR_INVALID;
  }
  if (*n) return EPH_OK;
  eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
  return EPH_ERR_NOMEM;
}
