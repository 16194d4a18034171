/*
 * agents — wolves, goats and grass, after Re:Mobidyc (FiLiP §4.3: "a
 * multi-agent simulator for individual-based modeling in population
 * dynamics ... wolves chase and eat goats in a grass field").
 *
 * A torus of Patches (grass, or a regrowth countdown), Goats and Wolves.
 * Every tick:
 *   1. each goat perceives its 3x3 neighbourhood as nine candidate Points,
 *      moves to a random grassy one (or any one), spends energy, eats the
 *      grass there, may give birth, and dies of starvation;
 *   2. the goats are indexed by patch (an Array of Link chains);
 *   3. each wolf perceives the goats around it (a perception Array), eats
 *      a random one and takes its place, or moves at random; spends
 *      energy, may give birth, and dies of starvation;
 *   4. dead animals leave the population Arrays; eaten grass regrows.
 * Lifetimes: Patches live for the whole run; Goats and Wolves are born and
 * die (medium-lived); the candidate Points, perception Arrays and index
 * Links are per-tick temporaries (short-lived), except the Point an animal
 * moves to, which it keeps until its next move.
 * Each tick is one latency event.
 *
 * Size: the side of the (square) grid; `--ticks N` sets the number of
 * ticks.  Self-check: a plain-C replica of the same model, drawing the
 * same random numbers in the same order, must give identical goat, wolf
 * and grass counts after every tick.
 */
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum { C_PATCH, C_GOAT, C_WOLF, C_POINT, C_ARRAY, C_LINK, NCLASSES };
static const wl_class classes[] = {
    [C_PATCH] = {"Patch", EPH_FORMAT_POINTERS}, [C_GOAT] = {"Goat", EPH_FORMAT_POINTERS},
    [C_WOLF] = {"Wolf", EPH_FORMAT_POINTERS},   [C_POINT] = {"Point", EPH_FORMAT_POINTERS},
    [C_ARRAY] = {"Array", EPH_FORMAT_POINTERS}, [C_LINK] = {"Link", EPH_FORMAT_POINTERS},
};

enum { PATCH_GRASS, PATCH_COUNTDOWN, PATCH_NSLOTS };
enum { A_POS, A_ENERGY, A_ALIVE, A_NSLOTS }; /* Goat and Wolf */
enum { PT_X, PT_Y, PT_NSLOTS };
enum { LINK_ITEM, LINK_NEXT, LINK_NSLOTS };

#define AG_DEFAULT_TICKS 200u
#define GOAT_GAIN 4
#define WOLF_GAIN 8
#define GOAT_REPRO 0.08
#define WOLF_REPRO 0.03
#define GRASS_REGROW 20

/* Population after each tick. */
typedef struct census {
  uint32_t goats, wolves, grass;
} census;

typedef struct model {
  int side;
  unsigned ticks;
  census *counts; /* [ticks] */
} model;

static inline int wrap(int v, int side) { return v < 0 ? v + side : v >= side ? v - side : v; }
/* Candidate k (0..8) around (x, y): rows dy = -1..1, columns dx = -1..1. */
static inline int cand_x(int x, int k, int side) { return wrap(x + k % 3 - 1, side); }
static inline int cand_y(int y, int k, int side) { return wrap(y + k / 3 - 1, side); }

/* The initial state, drawn in this order: patches, goats, wolves. */
static uint32_t initial_goats(int side) { return (uint32_t)(side * side / 12 + 1); }
static uint32_t initial_wolves(int side) { return (uint32_t)(side * side / 50 + 1); }
static void draw_patch(wl_rng *r, bool *grass, int *countdown) {
  *grass = wl_rng_unit(r) < 0.5;
  *countdown = *grass ? 0 : 1 + (int)wl_rng_below(r, GRASS_REGROW);
}
static void draw_animal(wl_rng *r, int side, int gain, int *x, int *y, int *energy) {
  *x = (int)wl_rng_below(r, (uint64_t)side);
  *y = (int)wl_rng_below(r, (uint64_t)side);
  *energy = 1 + (int)wl_rng_below(r, 2 * (uint64_t)gain);
}

/* --- the plain-C replica --------------------------------------------------- */

typedef struct herd {
  int *x, *y, *energy;
  bool *alive;
  size_t n, cap;
} herd;

typedef struct world {
  int side;
  bool *grass;
  int *countdown;
  herd goats, wolves, born;
  int *head, *next; /* goat index: per patch, a LIFO chain of goat numbers */
  int *prey;        /* perception list */
  wl_rng rng;
} world;

static int herd_push(herd *hd, int x, int y, int energy) {
  if (hd->n == hd->cap) {
    size_t cap = hd->cap ? 2 * hd->cap : 64;
    int *nx = realloc(hd->x, cap * sizeof *nx);
    if (nx) hd->x = nx;
    int *ny = realloc(hd->y, cap * sizeof *ny);
    if (ny) hd->y = ny;
    int *ne = realloc(hd->energy, cap * sizeof *ne);
    if (ne) hd->energy = ne;
    bool *na = realloc(hd->alive, cap * sizeof *na);
    if (na) hd->alive = na;
    if (!nx || !ny || !ne || !na) return -1;
    hd->cap = cap;
  }
  hd->x[hd->n] = x, hd->y[hd->n] = y, hd->energy[hd->n] = energy, hd->alive[hd->n] = true;
  hd->n++;
  return 0;
}

static void herd_free(herd *hd) { free(hd->x), free(hd->y), free(hd->energy), free(hd->alive); }

/* Keeps the living in order, then appends the newborns (emptying born). */
static int herd_compact(herd *hd, herd *born) {
  size_t k = 0;
  for (size_t i = 0; i < hd->n; i++)
    if (hd->alive[i]) hd->x[k] = hd->x[i], hd->y[k] = hd->y[i], hd->energy[k] = hd->energy[i], hd->alive[k++] = true;
  hd->n = k;
  for (size_t i = 0; born && i < born->n; i++)
    if (herd_push(hd, born->x[i], born->y[i], born->energy[i])) return -1;
  if (born) born->n = 0;
  return 0;
}

static void world_free(world *m) {
  free(m->grass), free(m->countdown), free(m->head), free(m->next), free(m->prey);
  herd_free(&m->goats), herd_free(&m->wolves), herd_free(&m->born);
}

static int world_init(world *m, int side, uint64_t seed) {
  size_t np = (size_t)side * (size_t)side;
  memset(m, 0, sizeof *m);
  m->side = side;
  wl_rng_seed(&m->rng, seed);
  m->grass = malloc(np * sizeof *m->grass), m->countdown = malloc(np * sizeof *m->countdown);
  m->head = malloc(np * sizeof *m->head);
  if (!m->grass || !m->countdown || !m->head) return -1;
  for (size_t p = 0; p < np; p++) draw_patch(&m->rng, &m->grass[p], &m->countdown[p]);
  int x, y, e;
  for (uint32_t i = 0; i < initial_goats(side); i++) {
    draw_animal(&m->rng, side, GOAT_GAIN, &x, &y, &e);
    if (herd_push(&m->goats, x, y, e)) return -1;
  }
  for (uint32_t i = 0; i < initial_wolves(side); i++) {
    draw_animal(&m->rng, side, WOLF_GAIN, &x, &y, &e);
    if (herd_push(&m->wolves, x, y, e)) return -1;
  }
  return 0;
}

/* Spends a tick's energy, may give birth (always drawing a number), and
 * returns the energy left; *child gets the newborn's energy or 0. */
static int live(wl_rng *r, int energy, double repro, int *child) {
  energy -= 1;
  double u = wl_rng_unit(r);
  *child = 0;
  if (u < repro && energy >= 2) {
    *child = energy / 2;
    energy -= *child;
  }
  return energy;
}

static int plain_goat(world *m, size_t i) {
  int side = m->side, x = m->goats.x[i], y = m->goats.y[i], grassy[9], ng = 0, k;
  for (k = 0; k < 9; k++)
    if (m->grass[cand_y(y, k, side) * side + cand_x(x, k, side)]) grassy[ng++] = k;
  k = ng ? grassy[wl_rng_below(&m->rng, (uint64_t)ng)] : (int)wl_rng_below(&m->rng, 9);
  x = cand_x(x, k, side), y = cand_y(y, k, side);
  int p = y * side + x, energy = m->goats.energy[i], child;
  if (m->grass[p]) m->grass[p] = false, m->countdown[p] = GRASS_REGROW, energy += GOAT_GAIN;
  energy = live(&m->rng, energy, GOAT_REPRO, &child);
  if (child && herd_push(&m->born, x, y, child)) return -1;
  m->goats.x[i] = x, m->goats.y[i] = y, m->goats.energy[i] = energy, m->goats.alive[i] = energy > 0;
  return 0;
}

static int plain_wolf(world *m, size_t i) {
  int side = m->side, x = m->wolves.x[i], y = m->wolves.y[i], energy = m->wolves.energy[i], child;
  size_t n = 0;
  for (int k = 0; k < 9; k++)
    for (int g = m->head[cand_y(y, k, side) * side + cand_x(x, k, side)]; g >= 0; g = m->next[g])
      if (m->goats.alive[g]) m->prey[n++] = g;
  if (n) {
    int g = m->prey[wl_rng_below(&m->rng, n)];
    m->goats.alive[g] = false;
    x = m->goats.x[g], y = m->goats.y[g], energy += WOLF_GAIN;
  } else {
    int k = (int)wl_rng_below(&m->rng, 9);
    x = cand_x(x, k, side), y = cand_y(y, k, side);
  }
  energy = live(&m->rng, energy, WOLF_REPRO, &child);
  if (child && herd_push(&m->born, x, y, child)) return -1;
  m->wolves.x[i] = x, m->wolves.y[i] = y, m->wolves.energy[i] = energy, m->wolves.alive[i] = energy > 0;
  return 0;
}

static uint32_t regrow(bool *grass, int *countdown) {
  if (!*grass && --*countdown <= 0) *grass = true;
  return *grass;
}

static int plain_tick(world *m, census *c) {
  size_t np = (size_t)m->side * (size_t)m->side;
  for (size_t i = 0; i < m->goats.n; i++)
    if (plain_goat(m, i)) return -1;
  if (herd_compact(&m->goats, &m->born)) return -1;
  int *next = realloc(m->next, (m->goats.n + 1) * sizeof *next), *prey = realloc(m->prey, (m->goats.n + 1) * sizeof *prey);
  if (next) m->next = next;
  if (prey) m->prey = prey;
  if (!next || !prey) return -1;
  for (size_t p = 0; p < np; p++) m->head[p] = -1;
  for (size_t i = 0; i < m->goats.n; i++) {
    int p = m->goats.y[i] * m->side + m->goats.x[i];
    m->next[i] = m->head[p], m->head[p] = (int)i;
  }
  for (size_t i = 0; i < m->wolves.n; i++)
    if (plain_wolf(m, i)) return -1;
  if (herd_compact(&m->wolves, &m->born) || herd_compact(&m->goats, NULL)) return -1;
  c->grass = 0;
  for (size_t p = 0; p < np; p++) c->grass += regrow(&m->grass[p], &m->countdown[p]);
  c->goats = (uint32_t)m->goats.n, c->wolves = (uint32_t)m->wolves.n;
  return 0;
}

/* Runs the replica; returns the first tick whose census differs from
 * counts (ticks if none), or -1 if out of memory. */
static long plain_run(const model *md, uint64_t seed) {
  world m;
  long bad = md->ticks;
  if (world_init(&m, md->side, seed)) bad = -1;
  for (unsigned t = 0; bad == (long)md->ticks && t < md->ticks; t++) {
    census c;
    if (plain_tick(&m, &c)) bad = -1;
    else if (memcmp(&c, &md->counts[t], sizeof c)) bad = (long)t;
  }
  world_free(&m);
  return bad;
}

/* --- the heap version ------------------------------------------------------ */

typedef struct heap_model {
  wl_rng rng;
  int side;
  size_t nborn; /* newborns so far this phase, in the Array `born` */
} heap_model;

static eph_value point_new(wl_ctx *w, int x, int y) {
  eph_value p = WL_NEW(w, C_POINT, PT_NSLOTS);
  eph_store(w->h, p, PT_X, eph_int(x));
  eph_store(w->h, p, PT_Y, eph_int(y));
  return p;
}
static int point_x(eph_value p) { return (int)eph_int_value(eph_slot(p, PT_X)); }
static int point_y(eph_value p) { return (int)eph_int_value(eph_slot(p, PT_Y)); }
static int energy_of(eph_value a) { return (int)eph_int_value(eph_slot(a, A_ENERGY)); }

static eph_value animal_new(wl_ctx *w, size_t cls, int x, int y, int energy) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, a);
  a = WL_NEW(w, cls, A_NSLOTS);
  eph_store(h, a, A_ENERGY, eph_int(energy));
  eph_store(h, a, A_ALIVE, EPH_TRUE);
  eph_value pos = point_new(w, x, y);
  eph_store(h, a, A_POS, pos);
  EPH_RETURN(h, a);
}

/* The patch under position Point pt. */
static eph_value patch_at(eph_value patches, const heap_model *m, eph_value pt) {
  return eph_slot(patches, (size_t)point_y(pt) * (size_t)m->side + (size_t)point_x(pt));
}

/* Appends obj to the growable Array *arr holding *n items. */
static void array_add(wl_ctx *w, eph_value *arr, size_t *n, eph_value obj) {
  eph_heap *h = w->h;
  if (*n == eph_slot_count(*arr)) {
    EPH_FRAME(h);
    EPH_ROOT(h, obj);
    eph_value grown = WL_NEW(w, C_ARRAY, 2 * *n + 4);
    for (size_t k = 0; k < *n; k++) eph_store(h, grown, k, eph_slot(*arr, k));
    *arr = grown;
    EPH_UNFRAME(h);
  }
  eph_store(h, *arr, (*n)++, obj);
}

/* The nine Points around an animal: its move candidates. */
static eph_value candidates(wl_ctx *w, const heap_model *m, eph_value animal) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, cands);
  eph_value pos = eph_slot(animal, A_POS);
  int x = point_x(pos), y = point_y(pos);
  cands = WL_NEW(w, C_ARRAY, 9);
  for (int k = 0; k < 9; k++) {
    eph_value pt = point_new(w, cand_x(x, k, m->side), cand_y(y, k, m->side));
    eph_store(h, cands, (size_t)k, pt);
  }
  EPH_RETURN(h, cands);
}

/* Energy, birth and death after a move; a newborn joins *born. */
static void animal_live(wl_ctx *w, heap_model *m, size_t cls, eph_value a, int energy, double repro, eph_value *born) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, a);
  int child;
  energy = live(&m->rng, energy, repro, &child);
  eph_store(h, a, A_ENERGY, eph_int(energy));
  eph_store(h, a, A_ALIVE, eph_bool(energy > 0));
  if (child) {
    eph_value pos = eph_slot(a, A_POS);
    eph_value kid = animal_new(w, cls, point_x(pos), point_y(pos), child);
    array_add(w, born, &m->nborn, kid);
  }
  EPH_UNFRAME(h);
}

static void goat_act(wl_ctx *w, heap_model *m, eph_value patches, eph_value goat, eph_value *born) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, patches);
  EPH_ROOT(h, goat);
  EPH_LOCAL(h, cands);
  EPH_LOCAL(h, grassy);
  EPH_LOCAL(h, choice);
  cands = candidates(w, m, goat);
  size_t ng = 0;
  for (size_t k = 0; k < 9; k++) ng += eph_slot(patch_at(patches, m, eph_slot(cands, k)), PATCH_GRASS) == EPH_TRUE;
  grassy = WL_NEW(w, C_ARRAY, ng);
  for (size_t k = 0, i = 0; k < 9; k++)
    if (eph_slot(patch_at(patches, m, eph_slot(cands, k)), PATCH_GRASS) == EPH_TRUE)
      eph_store(h, grassy, i++, eph_slot(cands, k));
  choice = ng ? eph_slot(grassy, wl_rng_below(&m->rng, ng)) : eph_slot(cands, wl_rng_below(&m->rng, 9));
  eph_store(h, goat, A_POS, choice);
  eph_value patch = patch_at(patches, m, choice);
  int energy = energy_of(goat);
  if (eph_slot(patch, PATCH_GRASS) == EPH_TRUE) {
    eph_store(h, patch, PATCH_GRASS, EPH_FALSE);
    eph_store(h, patch, PATCH_COUNTDOWN, eph_int(GRASS_REGROW));
    energy += GOAT_GAIN;
  }
  animal_live(w, m, C_GOAT, goat, energy, GOAT_REPRO, born);
  EPH_UNFRAME(h);
}

/* The living goats on the nine patches around the wolf (its perception),
 * in candidate order and, per patch, in index order. */
static eph_value perceive(wl_ctx *w, const heap_model *m, eph_value index, eph_value cands, size_t *n) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, index);
  EPH_ROOT(h, cands);
  EPH_LOCAL(h, prey);
  EPH_LOCAL(h, link);
  prey = WL_NEW(w, C_ARRAY, 4);
  *n = 0;
  for (size_t k = 0; k < 9; k++) {
    eph_value pt = eph_slot(cands, k);
    size_t p = (size_t)point_y(pt) * (size_t)m->side + (size_t)point_x(pt);
    for (link = eph_slot(index, p); link != EPH_NIL; link = eph_slot(link, LINK_NEXT)) {
      eph_value goat = eph_slot(link, LINK_ITEM);
      if (eph_slot(goat, A_ALIVE) == EPH_TRUE) array_add(w, &prey, n, goat);
    }
  }
  EPH_RETURN(h, prey);
}

static void wolf_act(wl_ctx *w, heap_model *m, eph_value index, eph_value wolf, eph_value *born) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, index);
  EPH_ROOT(h, wolf);
  EPH_LOCAL(h, cands);
  EPH_LOCAL(h, prey);
  cands = candidates(w, m, wolf);
  size_t n;
  prey = perceive(w, m, index, cands, &n);
  int energy = energy_of(wolf);
  if (n) {
    eph_value goat = eph_slot(prey, wl_rng_below(&m->rng, n));
    eph_store(h, goat, A_ALIVE, EPH_FALSE);
    eph_store(h, wolf, A_POS, eph_slot(goat, A_POS));
    energy += WOLF_GAIN;
  } else {
    eph_store(h, wolf, A_POS, eph_slot(cands, wl_rng_below(&m->rng, 9)));
  }
  animal_live(w, m, C_WOLF, wolf, energy, WOLF_REPRO, born);
  EPH_UNFRAME(h);
}

/* A new population Array: the living of pop in order, then the newborns. */
static eph_value compact(wl_ctx *w, eph_value pop, eph_value born, size_t nborn) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, pop);
  EPH_ROOT(h, born);
  size_t n = eph_slot_count(pop), alive = 0;
  for (size_t i = 0; i < n; i++) alive += eph_slot(eph_slot(pop, i), A_ALIVE) == EPH_TRUE;
  eph_value out = WL_NEW(w, C_ARRAY, alive + nborn);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (eph_slot(eph_slot(pop, i), A_ALIVE) == EPH_TRUE) eph_store(h, out, k++, eph_slot(pop, i));
  for (size_t i = 0; i < nborn; i++) eph_store(h, out, k++, eph_slot(born, i));
  EPH_RETURN(h, out);
}

/* Per patch, a chain of Links to the goats on it, the last goat first. */
static eph_value index_goats(wl_ctx *w, const heap_model *m, eph_value goats) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, goats);
  EPH_LOCAL(h, index);
  index = WL_NEW(w, C_ARRAY, (size_t)m->side * (size_t)m->side);
  for (size_t i = 0; i < eph_slot_count(goats); i++) {
    eph_value link = WL_NEW(w, C_LINK, LINK_NSLOTS);
    eph_value goat = eph_slot(goats, i), pos = eph_slot(goat, A_POS);
    size_t p = (size_t)point_y(pos) * (size_t)m->side + (size_t)point_x(pos);
    eph_store(h, link, LINK_ITEM, goat);
    eph_store(h, link, LINK_NEXT, eph_slot(index, p));
    eph_store(h, index, p, link);
  }
  EPH_RETURN(h, index);
}

static uint32_t heap_regrow(wl_ctx *w, eph_value patches) {
  uint32_t grass = 0;
  for (size_t p = 0; p < eph_slot_count(patches); p++) {
    eph_value patch = eph_slot(patches, p);
    bool g = eph_slot(patch, PATCH_GRASS) == EPH_TRUE;
    int countdown = (int)eph_int_value(eph_slot(patch, PATCH_COUNTDOWN));
    grass += regrow(&g, &countdown);
    eph_store(w->h, patch, PATCH_GRASS, eph_bool(g));
    eph_store(w->h, patch, PATCH_COUNTDOWN, eph_int(countdown));
  }
  return grass;
}

/* One tick; *goats and *wolves are rooted by the caller. */
static void heap_tick(wl_ctx *w, heap_model *m, eph_value patches, eph_value *goats, eph_value *wolves, census *c) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, patches);
  EPH_LOCAL(h, born);
  EPH_LOCAL(h, index);
  born = WL_NEW(w, C_ARRAY, 8);
  m->nborn = 0;
  for (size_t i = 0; i < eph_slot_count(*goats); i++) goat_act(w, m, patches, eph_slot(*goats, i), &born);
  *goats = compact(w, *goats, born, m->nborn);
  index = index_goats(w, m, *goats);
  born = WL_NEW(w, C_ARRAY, 8);
  m->nborn = 0;
  for (size_t i = 0; i < eph_slot_count(*wolves); i++) wolf_act(w, m, index, eph_slot(*wolves, i), &born);
  *wolves = compact(w, *wolves, born, m->nborn);
  *goats = compact(w, *goats, EPH_NIL, 0);
  c->grass = heap_regrow(w, patches);
  c->goats = (uint32_t)eph_slot_count(*goats), c->wolves = (uint32_t)eph_slot_count(*wolves);
  EPH_UNFRAME(h);
}

/* The initial state, from the same draws as world_init. */
static void heap_init(wl_ctx *w, heap_model *m, eph_value *patches, eph_value *goats, eph_value *wolves) {
  eph_heap *h = w->h;
  size_t np = (size_t)m->side * (size_t)m->side;
  *patches = WL_NEW(w, C_ARRAY, np);
  for (size_t p = 0; p < np; p++) {
    bool g;
    int countdown;
    draw_patch(&m->rng, &g, &countdown);
    eph_value patch = WL_NEW(w, C_PATCH, PATCH_NSLOTS);
    eph_store(h, patch, PATCH_GRASS, eph_bool(g));
    eph_store(h, patch, PATCH_COUNTDOWN, eph_int(countdown));
    eph_store(h, *patches, p, patch);
  }
  *goats = WL_NEW(w, C_ARRAY, initial_goats(m->side));
  *wolves = WL_NEW(w, C_ARRAY, initial_wolves(m->side));
  int x, y, e;
  for (size_t i = 0; i < eph_slot_count(*goats); i++) {
    draw_animal(&m->rng, m->side, GOAT_GAIN, &x, &y, &e);
    eph_value goat = animal_new(w, C_GOAT, x, y, e);
    eph_store(h, *goats, i, goat);
  }
  for (size_t i = 0; i < eph_slot_count(*wolves); i++) {
    draw_animal(&m->rng, m->side, WOLF_GAIN, &x, &y, &e);
    eph_value wolf = animal_new(w, C_WOLF, x, y, e);
    eph_store(h, *wolves, i, wolf);
  }
}

/* --- options and the run --------------------------------------------------- */

typedef struct agents_options {
  unsigned ticks;
} agents_options;

static int parse_options(wl_ctx *w, int argc, char **argv) {
  agents_options *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->ticks = AG_DEFAULT_TICKS;
  w->options = o;
  for (int i = 0; i < argc; i++) {
    char *end = NULL;
    unsigned long v = 0;
    if (!strcmp(argv[i], "--ticks") && i + 1 < argc) v = strtoul(argv[i + 1], &end, 10);
    if (!end || *end || v == 0 || v > 1000000) {
      fprintf(stderr, "agents: bad option '%s' (expected --ticks N, 1..1000000)\n", argv[i]);
      return -1;
    }
    o->ticks = (unsigned)v;
    i++;
  }
  return 0;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  if (w->size > 4096) return wl_check(w, false, "grid side %llu too large (at most 4096)", (unsigned long long)w->size);
  model md = {.side = (int)w->size, .ticks = w->options ? ((agents_options *)w->options)->ticks : AG_DEFAULT_TICKS};
  md.counts = wl_calloc(w, md.ticks, sizeof *md.counts);
  if (!md.counts) return wl_check(w, false, "out of C memory");
  heap_model m = {.side = md.side};
  wl_rng_seed(&m.rng, w->seed);
  EPH_FRAME(h);
  EPH_LOCAL(h, patches);
  EPH_LOCAL(h, goats);
  EPH_LOCAL(h, wolves);
  heap_init(w, &m, &patches, &goats, &wolves);
  uint32_t peak_goats = 0, peak_wolves = 0;
  for (unsigned t = 0; t < md.ticks; t++) {
    wl_event_begin(w);
    heap_tick(w, &m, patches, &goats, &wolves, &md.counts[t]);
    wl_event_end(w);
    if (md.counts[t].goats > peak_goats) peak_goats = md.counts[t].goats;
    if (md.counts[t].wolves > peak_wolves) peak_wolves = md.counts[t].wolves;
  }
  EPH_UNFRAME(h);
  long bad = plain_run(&md, w->seed);
  census last = md.counts[md.ticks - 1];
  wl_free(w, md.counts);
  if (bad != (long)md.ticks)
    return wl_check(w, false, bad < 0 ? "out of C memory in the replica" : "census differs from the plain-C replica at tick %ld",
                    bad);
  return wl_check(w, true, "%d x %d grid, %u ticks: %u goats (peak %u), %u wolves (peak %u), %u grassy patches; matches plain C",
                  md.side, md.side, md.ticks, last.goats, peak_goats, last.wolves, peak_wolves, last.grass);
}

const wl_workload wl_agents = {
    .name = "agents",
    .description = "Re:Mobidyc-like wolves, goats and grass: agents born and dying, per-tick perception temporaries",
    .unit = "grid side",
    .sizes = {.small = 24, .middle = 80, .normal = 400, .large = 800},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Point",
    .options_help = "--ticks N  simulation ticks (default 200)",
    .options = (const wl_option[]){{"ticks", WL_OPT_COUNT, 1, 1000000, NULL}, {NULL}},
    .parse_options = parse_options,
    .run = run,
};
