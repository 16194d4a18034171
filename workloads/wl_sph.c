/*
 * sph — smoothed-particle hydrodynamics, after HoneyGinger (FiLiP §4.3:
 * "a smoothed-particle hydrodynamics simulator ... we render one
 * simulation for 1000 rendering cycles").
 *
 * A 2-D dam break: a block of fluid particles at the left of a box
 * collapses under gravity (Müller et al. 2003 kernels: poly6 for density,
 * spiky gradient for pressure, the viscosity Laplacian).  As in the
 * Smalltalk program, vectors are immutable objects and arithmetic on them
 * allocates, so the lifetimes are HoneyGinger's:
 *   - Particle objects live for the whole run (tenured early);
 *   - each step gives every particle a new position, velocity and force
 *     Vector and a new density and pressure Float (medium-lived: one step,
 *     stored into old particles, so the write barrier works);
 *   - a spatial hash Grid of Cells (each with a growable Array of
 *     particles) and a neighbour Array per particle are rebuilt every step
 *     (medium-lived);
 *   - the neighbour search, density and force loops make several Vector
 *     temporaries per particle pair (short-lived: the bulk of allocation).
 * Each step is one latency event (one rendering cycle, without drawing).
 *
 * Size: the number of particles; `--steps N` sets the number of steps
 * (default particles / 5, from 10 to 200: 20 at the small size, whose
 * stress-mode test verifies the heap at every allocation).
 * Self-check: the same simulation in plain C arrays (no heap), with the
 * same operations in the same order, must give the same final positions
 * (to 1e-9); every particle must be inside the box and finite.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum { C_PARTICLE, C_VECTOR, C_FLOAT, C_GRID, C_CELL, C_ARRAY, NCLASSES };
static const wl_class classes[] = {
    [C_PARTICLE] = {"Particle", EPH_FORMAT_POINTERS}, [C_VECTOR] = {"Vector", EPH_FORMAT_BYTES},
    [C_FLOAT] = {"Float", EPH_FORMAT_BYTES},          [C_GRID] = {"Grid", EPH_FORMAT_POINTERS},
    [C_CELL] = {"Cell", EPH_FORMAT_POINTERS},         [C_ARRAY] = {"Array", EPH_FORMAT_POINTERS},
};

/* Particle slots. */
enum { P_POS, P_VEL, P_FORCE, P_DENSITY, P_PRESSURE, P_NEIGHBOURS, P_INDEX, P_NSLOTS };
/* Cell slots: a growable collection of particles. */
enum { CELL_COUNT, CELL_ITEMS, CELL_NSLOTS };
/* Grid slots. */
enum { GRID_CELLS, GRID_NSLOTS };

/* Default steps: particles / 5, between 10 and 200 (small: 20 steps). */
static unsigned default_steps(uint64_t particles) {
  uint64_t s = particles / 5;
  return s < 10 ? 10u : s > 200 ? 200u : (unsigned)s;
}

/* --- the physics, shared by the heap and the plain-C versions ------------ */

#define SPH_PI 3.14159265358979323846
#define SPH_H 1.0           /* smoothing length = grid cell size */
#define SPH_H2 (SPH_H * SPH_H)
#define SPH_DX 0.5          /* initial particle spacing */
#define SPH_MASS 0.25       /* rest density ~1 at spacing DX */
#define SPH_STIFF 100.0     /* p = k (rho - rho0), speed of sound 10 */
#define SPH_VISC 0.5
#define SPH_DT 0.02
#define SPH_MARGIN 0.25     /* particles stay this far from the walls */
#define SPH_DAMPING (-0.5)  /* velocity factor on a wall bounce */
#define SPH_POLY6 (4.0 / (SPH_PI * SPH_H2 * SPH_H2 * SPH_H2 * SPH_H2))
#define SPH_SPIKY (-30.0 / (SPH_PI * SPH_H2 * SPH_H2 * SPH_H))
#define SPH_VISC_LAP (40.0 / (SPH_PI * SPH_H2 * SPH_H2 * SPH_H))

typedef struct v2 {
  double x, y;
} v2;

static inline v2 v2_make(double x, double y) {
  v2 r = {x, y};
  return r;
}
static inline v2 v2_add(v2 a, v2 b) { return v2_make(a.x + b.x, a.y + b.y); }
static inline v2 v2_sub(v2 a, v2 b) { return v2_make(a.x - b.x, a.y - b.y); }
static inline v2 v2_scale(v2 a, double s) { return v2_make(a.x * s, a.y * s); }
static inline double v2_dot(v2 a, v2 b) { return a.x * b.x + a.y * b.y; }

static inline double poly6(double r2) {
  double d = SPH_H2 - r2;
  return SPH_POLY6 * d * d * d;
}
/* Pressure force factor along the unit vector from i to j. */
static inline double press_coef(double pi, double pj, double rhoj, double r) {
  double d = SPH_H - r;
  return SPH_MASS * (pi + pj) / (2.0 * rhoj) * SPH_SPIKY * d * d; /* < 0: away from j */
}
/* Viscosity force factor on v_j - v_i. */
static inline double visc_coef(double rhoj, double r) { return SPH_VISC * SPH_MASS / rhoj * SPH_VISC_LAP * (SPH_H - r); }

/* The box, the grid and the dam. */
typedef struct sph_world {
  size_t n;
  double width, height, gravity, rho0;
  int gnx, gny; /* grid cells */
  v2 *initial;  /* initial positions (jittered lattice) */
} sph_world;

static inline double pressure_of(const sph_world *s, double rho) {
  double p = SPH_STIFF * (rho - s->rho0);
  return p > 0.0 ? p : 0.0;
}

static inline int cell_of(const sph_world *s, v2 x) {
  int cx = (int)(x.x / SPH_H), cy = (int)(x.y / SPH_H);
  if (cx < 0) cx = 0;
  if (cx >= s->gnx) cx = s->gnx - 1;
  if (cy < 0) cy = 0;
  if (cy >= s->gny) cy = s->gny - 1;
  return cy * s->gnx + cx;
}

/* The cells around cell c (up to 9, in a fixed order); returns the count. */
static int cells_around(const sph_world *s, int c, int out[9]) {
  int cx = c % s->gnx, cy = c / s->gnx, k = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int x = cx + dx, y = cy + dy;
      if (x >= 0 && x < s->gnx && y >= 0 && y < s->gny) out[k++] = y * s->gnx + x;
    }
  return k;
}

/* Semi-implicit Euler with wall bounces: v += dt f / rho; x += dt v. */
static inline void integrate(const sph_world *s, v2 f, double rho, v2 *x, v2 *v) {
  v2 a = v2_scale(f, 1.0 / rho);
  *v = v2_add(*v, v2_scale(a, SPH_DT));
  *x = v2_add(*x, v2_scale(*v, SPH_DT));
  if (x->x < SPH_MARGIN) x->x = SPH_MARGIN, v->x *= SPH_DAMPING;
  if (x->x > s->width - SPH_MARGIN) x->x = s->width - SPH_MARGIN, v->x *= SPH_DAMPING;
  if (x->y < SPH_MARGIN) x->y = SPH_MARGIN, v->y *= SPH_DAMPING;
  if (x->y > s->height - SPH_MARGIN) x->y = s->height - SPH_MARGIN, v->y *= SPH_DAMPING;
}

static v2 gravity_force(const sph_world *s, double rho) { return v2_make(0.0 * rho, -s->gravity * rho); }

/* A block of bx * by particles (the last row may be short), bx : by ~ 1 : 2,
 * in a box four blocks wide and 1.5 blocks high; positions jittered. */
static int world_init(wl_ctx *w, sph_world *s, size_t n, uint64_t seed) {
  int bx = (int)ceil(sqrt((double)n / 2.0)), by;
  if (bx < 1) bx = 1;
  by = (int)((n + (size_t)bx - 1) / (size_t)bx);
  s->n = n;
  s->gnx = (int)ceil(4.0 * bx * SPH_DX / SPH_H) + 2;
  s->gny = (int)ceil(1.5 * by * SPH_DX / SPH_H) + 2;
  if (s->gnx < 8) s->gnx = 8;
  if (s->gny < 8) s->gny = 8;
  s->width = s->gnx * SPH_H;
  s->height = s->gny * SPH_H;
  s->gravity = SPH_STIFF / (20.0 * (by * SPH_DX)); /* sound speed ~4.5x the fall speed */
  s->rho0 = 0.0;
  for (int i = -3; i <= 3; i++)
    for (int j = -3; j <= 3; j++) {
      double r2 = (i * SPH_DX) * (i * SPH_DX) + (j * SPH_DX) * (j * SPH_DX);
      if (r2 < SPH_H2) s->rho0 += SPH_MASS * poly6(r2);
    }
  s->initial = wl_malloc(w, n * sizeof *s->initial);
  if (!s->initial) return -1;
  wl_rng rng;
  wl_rng_seed(&rng, seed);
  for (size_t k = 0; k < n; k++) {
    double jx = (wl_rng_unit(&rng) - 0.5) * 0.02 * SPH_DX, jy = (wl_rng_unit(&rng) - 0.5) * 0.02 * SPH_DX;
    s->initial[k] = v2_make(SPH_MARGIN + SPH_DX / 2 + (double)(k % (size_t)bx) * SPH_DX + jx,
                            SPH_MARGIN + SPH_DX / 2 + (double)(k / (size_t)bx) * SPH_DX + jy);
  }
  return 0;
}

/* --- the plain-C replica ------------------------------------------------- */

typedef struct plain {
  v2 *x, *v, *f;
  double *rho, *p;
  int *cell_start, *cell_items; /* particles by cell, in index order */
  int *nb_start, *nb;           /* neighbour lists, flattened */
  size_t nb_cap;
  wl_ctx *w;                    /* whose memory holds the arrays */
} plain;

static void plain_free(plain *q) {
  wl_ctx *w = q->w;
  wl_free(w, q->x), wl_free(w, q->v), wl_free(w, q->f), wl_free(w, q->rho), wl_free(w, q->p);
  wl_free(w, q->cell_start), wl_free(w, q->cell_items), wl_free(w, q->nb_start), wl_free(w, q->nb);
}

static int plain_init(wl_ctx *w, plain *q, const sph_world *s) {
  size_t n = s->n, ncells = (size_t)s->gnx * (size_t)s->gny;
  memset(q, 0, sizeof *q);
  q->w = w;
  q->x = wl_malloc(w, n * sizeof *q->x), q->v = wl_calloc(w, n, sizeof *q->v), q->f = wl_calloc(w, n, sizeof *q->f);
  q->rho = wl_calloc(w, n, sizeof *q->rho), q->p = wl_calloc(w, n, sizeof *q->p);
  q->cell_start = wl_calloc(w, ncells + 1, sizeof *q->cell_start), q->cell_items = wl_malloc(w, n * sizeof *q->cell_items);
  q->nb_start = wl_calloc(w, n + 1, sizeof *q->nb_start);
  q->nb_cap = 16 * n;
  q->nb = wl_malloc(w, q->nb_cap * sizeof *q->nb);
  if (!q->x || !q->v || !q->f || !q->rho || !q->p || !q->cell_start || !q->cell_items || !q->nb_start || !q->nb) return -1;
  memcpy(q->x, s->initial, n * sizeof *q->x);
  return 0;
}

/* Counting sort by cell: within a cell, particles stay in index order. */
static void plain_grid(plain *q, const sph_world *s) {
  size_t ncells = (size_t)s->gnx * (size_t)s->gny;
  memset(q->cell_start, 0, (ncells + 1) * sizeof *q->cell_start);
  for (size_t i = 0; i < s->n; i++) q->cell_start[cell_of(s, q->x[i]) + 1]++;
  for (size_t c = 0; c < ncells; c++) q->cell_start[c + 1] += q->cell_start[c];
  int *fill = malloc(ncells * sizeof *fill);
  memcpy(fill, q->cell_start, ncells * sizeof *fill);
  for (size_t i = 0; i < s->n; i++) q->cell_items[fill[cell_of(s, q->x[i])]++] = (int)i;
  free(fill);
}

static int plain_neighbours(plain *q, const sph_world *s) {
  size_t len = 0;
  for (size_t i = 0; i < s->n; i++) {
    int around[9], na = cells_around(s, cell_of(s, q->x[i]), around);
    q->nb_start[i] = (int)len;
    for (int a = 0; a < na; a++)
      for (int k = q->cell_start[around[a]]; k < q->cell_start[around[a] + 1]; k++) {
        int j = q->cell_items[k];
        v2 rij = v2_sub(q->x[j], q->x[i]);
        if (v2_dot(rij, rij) >= SPH_H2) continue;
        if (len == q->nb_cap) {
          int *grown = wl_realloc(q->w, q->nb, 2 * q->nb_cap * sizeof *grown);
          if (!grown) return -1;
          q->nb = grown, q->nb_cap *= 2;
        }
        q->nb[len++] = j;
      }
  }
  q->nb_start[s->n] = (int)len;
  return 0;
}

static void plain_density(plain *q, const sph_world *s) {
  for (size_t i = 0; i < s->n; i++) {
    double rho = 0.0;
    for (int k = q->nb_start[i]; k < q->nb_start[i + 1]; k++) {
      v2 rij = v2_sub(q->x[q->nb[k]], q->x[i]);
      rho = rho + SPH_MASS * poly6(v2_dot(rij, rij));
    }
    q->rho[i] = rho;
    q->p[i] = pressure_of(s, rho);
  }
}

static void plain_forces(plain *q, const sph_world *s) {
  for (size_t i = 0; i < s->n; i++) {
    v2 fpress = v2_make(0.0, 0.0), fvisc = v2_make(0.0, 0.0);
    for (int k = q->nb_start[i]; k < q->nb_start[i + 1]; k++) {
      int j = q->nb[k];
      v2 rij = v2_sub(q->x[j], q->x[i]);
      double r = sqrt(v2_dot(rij, rij));
      if ((size_t)j == i || !(r > 0.0)) continue;
      v2 dir = v2_scale(rij, 1.0 / r);
      fpress = v2_add(fpress, v2_scale(dir, press_coef(q->p[i], q->p[j], q->rho[j], r)));
      fvisc = v2_add(fvisc, v2_scale(v2_sub(q->v[j], q->v[i]), visc_coef(q->rho[j], r)));
    }
    q->f[i] = v2_add(v2_add(fpress, fvisc), gravity_force(s, q->rho[i]));
  }
}

static int plain_run(plain *q, const sph_world *s, unsigned steps) {
  for (unsigned t = 0; t < steps; t++) {
    plain_grid(q, s);
    if (plain_neighbours(q, s)) return -1;
    plain_density(q, s);
    plain_forces(q, s);
    for (size_t i = 0; i < s->n; i++) integrate(s, q->f[i], q->rho[i], &q->x[i], &q->v[i]);
  }
  return 0;
}

/* --- heap objects ---------------------------------------------------------- */

static v2 vec_get(eph_value v) {
  v2 a;
  memcpy(&a, eph_bytes(v), sizeof a);
  return a;
}
static eph_value vec_new(wl_ctx *w, v2 a) {
  eph_value v = WL_NEW_BYTES(w, C_VECTOR, sizeof a);
  if (v != EPH_NIL) memcpy(eph_bytes(v), &a, sizeof a); /* never nil (the runner handles exhaustion), but GCC sees a nil path */
  return v;
}
/* Vector arithmetic allocates, as on immutable Smalltalk Points.  The
 * operands are read before the allocation, so they need no rooting. */
static eph_value vec_add(wl_ctx *w, eph_value a, eph_value b) { return vec_new(w, v2_add(vec_get(a), vec_get(b))); }
static eph_value vec_sub(wl_ctx *w, eph_value a, eph_value b) { return vec_new(w, v2_sub(vec_get(a), vec_get(b))); }
static eph_value vec_scale(wl_ctx *w, eph_value a, double k) { return vec_new(w, v2_scale(vec_get(a), k)); }

static double flt_get(eph_value f) {
  double d;
  memcpy(&d, eph_bytes(f), sizeof d);
  return d;
}
static eph_value flt_new(wl_ctx *w, double d) {
  eph_value f = WL_NEW_BYTES(w, C_FLOAT, sizeof d);
  if (f != EPH_NIL) memcpy(eph_bytes(f), &d, sizeof d);
  return f;
}

static v2 particle_pos(eph_value p) { return vec_get(eph_slot(p, P_POS)); }
static double particle_num(eph_value p, int slot) { return flt_get(eph_slot(p, (size_t)slot)); }
static size_t particle_index(eph_value p) { return (size_t)eph_int_value(eph_slot(p, P_INDEX)); }

static eph_value particles_new(wl_ctx *w, const sph_world *s) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, all);
  EPH_LOCAL(h, p);
  EPH_LOCAL(h, v);
  all = WL_NEW(w, C_ARRAY, s->n);
  for (size_t i = 0; i < s->n; i++) {
    p = WL_NEW(w, C_PARTICLE, P_NSLOTS);
    eph_store(h, p, P_INDEX, eph_int((intptr_t)i));
    eph_store(h, all, i, p);
    v = vec_new(w, s->initial[i]);
    eph_store(h, p, P_POS, v);
    v = vec_new(w, v2_make(0.0, 0.0));
    eph_store(h, p, P_VEL, v);
    eph_store(h, p, P_FORCE, v);
    v = flt_new(w, 0.0);
    eph_store(h, p, P_DENSITY, v);
    eph_store(h, p, P_PRESSURE, v);
  }
  EPH_RETURN(h, all);
}

/* Appends p to cells[c], making the Cell or growing its Array as needed. */
static void cell_add(wl_ctx *w, eph_value cells, int c, eph_value p) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, cells);
  EPH_ROOT(h, p);
  EPH_LOCAL(h, cell);
  EPH_LOCAL(h, items);
  cell = eph_slot(cells, (size_t)c);
  if (cell == EPH_NIL) {
    cell = WL_NEW(w, C_CELL, CELL_NSLOTS);
    eph_store(h, cell, CELL_COUNT, eph_int(0));
    eph_store(h, cells, (size_t)c, cell);
    items = WL_NEW(w, C_ARRAY, 4);
    eph_store(h, cell, CELL_ITEMS, items);
  }
  size_t n = (size_t)eph_int_value(eph_slot(cell, CELL_COUNT));
  items = eph_slot(cell, CELL_ITEMS);
  if (n == eph_slot_count(items)) {
    eph_value grown = WL_NEW(w, C_ARRAY, 2 * n);
    for (size_t k = 0; k < n; k++) eph_store(h, grown, k, eph_slot(items, k));
    eph_store(h, cell, CELL_ITEMS, grown);
    items = grown;
  }
  eph_store(h, items, n, p);
  eph_store(h, cell, CELL_COUNT, eph_int((intptr_t)n + 1));
  EPH_UNFRAME(h);
}

/* The spatial hash of this step: particles appended in index order. */
static eph_value grid_build(wl_ctx *w, const sph_world *s, eph_value particles) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, particles);
  EPH_LOCAL(h, grid);
  grid = WL_NEW(w, C_GRID, GRID_NSLOTS);
  eph_value cells = WL_NEW(w, C_ARRAY, (size_t)s->gnx * (size_t)s->gny);
  eph_store(h, grid, GRID_CELLS, cells);
  for (size_t i = 0; i < s->n; i++) {
    eph_value p = eph_slot(particles, i);
    cell_add(w, eph_slot(grid, GRID_CELLS), cell_of(s, particle_pos(p)), p);
  }
  EPH_RETURN(h, grid);
}

/* Particle i's neighbours (itself included): every particle within H in
 * the 3x3 cells around it, tested with a temporary difference Vector. */
static void find_neighbours(wl_ctx *w, const sph_world *s, eph_value particles, eph_value grid, size_t i, int *buf) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, particles);
  EPH_ROOT(h, grid);
  EPH_LOCAL(h, p);
  EPH_LOCAL(h, items);
  EPH_LOCAL(h, rij);
  p = eph_slot(particles, i);
  int around[9], na = cells_around(s, cell_of(s, particle_pos(p)), around), n = 0;
  for (int a = 0; a < na; a++) {
    eph_value cell = eph_slot(eph_slot(grid, GRID_CELLS), (size_t)around[a]);
    if (cell == EPH_NIL) continue;
    size_t count = (size_t)eph_int_value(eph_slot(cell, CELL_COUNT));
    items = eph_slot(cell, CELL_ITEMS);
    for (size_t k = 0; k < count; k++) {
      eph_value q = eph_slot(items, k);
      rij = vec_sub(w, eph_slot(q, P_POS), eph_slot(p, P_POS));
      v2 d = vec_get(rij);
      if (v2_dot(d, d) < SPH_H2) buf[n++] = (int)particle_index(eph_slot(items, k));
    }
  }
  eph_value nb = WL_NEW(w, C_ARRAY, (size_t)n);
  for (int k = 0; k < n; k++) eph_store(h, nb, (size_t)k, eph_slot(particles, (size_t)buf[k]));
  eph_store(h, p, P_NEIGHBOURS, nb);
  EPH_UNFRAME(h);
}

static void density(wl_ctx *w, const sph_world *s, eph_value p) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, p);
  EPH_LOCAL(h, rij);
  EPH_LOCAL(h, f);
  double rho = 0.0;
  size_t n = eph_slot_count(eph_slot(p, P_NEIGHBOURS));
  for (size_t k = 0; k < n; k++) {
    eph_value q = eph_slot(eph_slot(p, P_NEIGHBOURS), k);
    rij = vec_sub(w, eph_slot(q, P_POS), eph_slot(p, P_POS));
    v2 d = vec_get(rij);
    rho = rho + SPH_MASS * poly6(v2_dot(d, d));
  }
  f = flt_new(w, rho);
  eph_store(h, p, P_DENSITY, f);
  f = flt_new(w, pressure_of(s, rho));
  eph_store(h, p, P_PRESSURE, f);
  EPH_UNFRAME(h);
}

/* Adds neighbour q's pressure and viscosity contributions to the sums. */
static void pair_force(wl_ctx *w, eph_value p, eph_value q, eph_value *fpress, eph_value *fvisc) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, p);
  EPH_ROOT(h, q);
  EPH_LOCAL(h, rij);
  EPH_LOCAL(h, t);
  rij = vec_sub(w, eph_slot(q, P_POS), eph_slot(p, P_POS));
  v2 d = vec_get(rij);
  double r = sqrt(v2_dot(d, d));
  if (q != p && r > 0.0) {
    t = vec_scale(w, rij, 1.0 / r);
    t = vec_scale(w, t, press_coef(particle_num(p, P_PRESSURE), particle_num(q, P_PRESSURE), particle_num(q, P_DENSITY), r));
    *fpress = vec_add(w, *fpress, t);
    t = vec_sub(w, eph_slot(q, P_VEL), eph_slot(p, P_VEL));
    t = vec_scale(w, t, visc_coef(particle_num(q, P_DENSITY), r));
    *fvisc = vec_add(w, *fvisc, t);
  }
  EPH_UNFRAME(h);
}

static void forces(wl_ctx *w, const sph_world *s, eph_value p) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, p);
  EPH_LOCAL(h, fpress);
  EPH_LOCAL(h, fvisc);
  EPH_LOCAL(h, f);
  fpress = vec_new(w, v2_make(0.0, 0.0));
  fvisc = vec_new(w, v2_make(0.0, 0.0));
  size_t n = eph_slot_count(eph_slot(p, P_NEIGHBOURS));
  for (size_t k = 0; k < n; k++) pair_force(w, p, eph_slot(eph_slot(p, P_NEIGHBOURS), k), &fpress, &fvisc);
  f = vec_add(w, fpress, fvisc);
  f = vec_new(w, v2_add(vec_get(f), gravity_force(s, particle_num(p, P_DENSITY))));
  eph_store(h, p, P_FORCE, f);
  EPH_UNFRAME(h);
}

static void move(wl_ctx *w, const sph_world *s, eph_value p) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, p);
  EPH_LOCAL(h, v);
  v2 x = particle_pos(p), vel = vec_get(eph_slot(p, P_VEL));
  integrate(s, vec_get(eph_slot(p, P_FORCE)), particle_num(p, P_DENSITY), &x, &vel);
  v = vec_new(w, vel);
  eph_store(h, p, P_VEL, v);
  v = vec_new(w, x);
  eph_store(h, p, P_POS, v);
  EPH_UNFRAME(h);
}

static void heap_step(wl_ctx *w, const sph_world *s, eph_value particles, int *buf) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, particles);
  EPH_LOCAL(h, grid);
  grid = grid_build(w, s, particles);
  for (size_t i = 0; i < s->n; i++) find_neighbours(w, s, particles, grid, i, buf);
  for (size_t i = 0; i < s->n; i++) density(w, s, eph_slot(particles, i));
  for (size_t i = 0; i < s->n; i++) forces(w, s, eph_slot(particles, i));
  for (size_t i = 0; i < s->n; i++) move(w, s, eph_slot(particles, i));
  EPH_UNFRAME(h);
}

/* --- options and the run --------------------------------------------------- */

typedef struct sph_options {
  unsigned steps;
} sph_options;

static int parse_options(wl_ctx *w, int argc, char **argv) {
  sph_options *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->steps = default_steps(w->size);
  w->options = o;
  for (int i = 0; i < argc; i++) {
    char *end = NULL;
    unsigned long v = 0;
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) v = strtoul(argv[i + 1], &end, 10);
    if (!end || *end || v == 0 || v > 1000000) {
      fprintf(stderr, "sph: bad option '%s' (expected --steps N, 1..1000000)\n", argv[i]);
      return -1;
    }
    o->steps = (unsigned)v;
    i++;
  }
  return 0;
}

/* Compares the heap particles with the replica; returns the largest
 * position difference, and counts particles outside the box or not finite. */
static double compare(const sph_world *s, eph_value particles, const plain *q, size_t *outside) {
  double worst = 0.0;
  *outside = 0;
  for (size_t i = 0; i < s->n; i++) {
    v2 x = particle_pos(eph_slot(particles, i));
    double d = fmax(fabs(x.x - q->x[i].x), fabs(x.y - q->x[i].y));
    if (!(d <= worst)) worst = d; /* NaN sticks */
    if (!(x.x >= SPH_MARGIN && x.x <= s->width - SPH_MARGIN && x.y >= SPH_MARGIN && x.y <= s->height - SPH_MARGIN))
      (*outside)++;
  }
  return worst;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  unsigned steps = w->options ? ((sph_options *)w->options)->steps : default_steps(w->size);
  sph_world s;
  plain q;
  int *buf = wl_malloc(w, w->size * sizeof *buf);
  if (!buf || world_init(w, &s, w->size, w->seed) || plain_init(w, &q, &s))
    return wl_check(w, false, "out of C memory"); /* the runner frees what was made (wl_free_all) */
  EPH_FRAME(h);
  EPH_LOCAL(h, particles);
  particles = particles_new(w, &s);
  for (unsigned t = 0; t < steps; t++) {
    wl_event_begin(w);
    heap_step(w, &s, particles, buf);
    wl_event_end(w);
  }
  int prc = plain_run(&q, &s, steps);
  size_t outside = 0;
  double diff = compare(&s, particles, &q, &outside);
  size_t count = eph_slot_count(particles);
  double meany = 0.0;
  for (size_t i = 0; i < s.n; i++) meany += q.x[i].y / (double)s.n;
  EPH_UNFRAME(h);
  plain_free(&q);
  wl_free(w, s.initial);
  wl_free(w, buf);
  bool ok = prc == 0 && diff <= 1e-9 && outside == 0 && count == s.n;
  return wl_check(w, ok, "%zu particles, %u steps in a %gx%g box: max |x - plain C| %.3g, %zu outside, mean height %.3f",
                  count, steps, s.width, s.height, diff, outside, meany);
}

const wl_workload wl_sph = {
    .name = "sph",
    .description = "HoneyGinger-like SPH dam break: long-lived Particles, per-step grid and Vector temporaries",
    .unit = "particles",
    .sizes = {.small = 80, .middle = 400, .normal = 5000, .large = 20000},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Vector",
    .options_help = "--steps N  simulation steps (default: particles / 5, from 10 to 200)",
    .options = (const wl_option[]){{"steps", WL_OPT_COUNT, 1, 1000000, NULL}, {NULL}},
    .parse_options = parse_options,
    .run = run,
};
