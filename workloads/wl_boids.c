/*
 * boids — Reynolds' flocking, after Bloc's Boids demo (FiLiP §4.3: "Bloc
 * ... We executed the Boids benchmark, which renders moving figures that
 * simulate the flocking behavior of birds").
 *
 * A Flock of Boids flies over a wrapping canvas.  Every frame, each boid
 * looks at every other boid and steers by separation (away from the very
 * close), alignment (towards the mean velocity of those in sight) and
 * cohesion (towards their centre); then all boids move, and the frame is
 * "rendered": a bounds Rectangle per boid in a draw list, whose union is
 * the damaged area.  Vectors are immutable objects and arithmetic on them
 * allocates, as with Pharo Points, so the lifetimes are Bloc's:
 *   - the Flock and its Boids live for the whole run;
 *   - each frame gives every boid a new position and velocity Vector
 *     (stored into old boids: the write barrier) and makes a draw list of
 *     Rectangles (medium-lived: one frame);
 *   - the steering sums make Vector temporaries for every pair of boids
 *     (short-lived: the bulk of allocation).
 * Each frame is one latency event.
 *
 * Size: the number of boids; `--frames N` sets the number of frames
 * (default 300: the paper's 10 seconds at 30 frames/s).  Self-check:
 * the same flock in plain C arrays, with the same operations in the same
 * order, must end at the same positions and velocities (to 1e-9); every
 * boid must be on the canvas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum { C_BOID, C_FLOCK, C_VECTOR, C_ARRAY, C_RECTANGLE, NCLASSES };
static const wl_class classes[] = {
    [C_BOID] = {"Boid", EPH_FORMAT_POINTERS},   [C_FLOCK] = {"Flock", EPH_FORMAT_POINTERS},
    [C_VECTOR] = {"Vector", EPH_FORMAT_BYTES},  [C_ARRAY] = {"Array", EPH_FORMAT_POINTERS},
    [C_RECTANGLE] = {"Rectangle", EPH_FORMAT_BYTES},
};

enum { B_POS, B_VEL, B_NSLOTS };
enum { F_BOIDS, F_DRAWLIST, F_NSLOTS };

/* --- the model, shared by the heap and the plain-C versions --------------- */

#define BOID_SIGHT 50.0      /* alignment and cohesion radius */
#define BOID_PERSONAL 20.0   /* separation radius */
#define BOID_W_SEPARATE 1.5
#define BOID_W_ALIGN 0.05
#define BOID_W_COHERE 0.005
#define BOID_MAX_SPEED 4.0
#define BOID_MIN_SPEED 1.5
#define BOID_SIZE 3.0        /* half the side of a boid's bounds */
#define BOID_SPACE 60.0      /* canvas width per sqrt(boid) */

#define BOIDS_DEFAULT_FRAMES 300u /* 10 s at 30 frames per second, as in the paper */

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

typedef struct canvas {
  size_t n;
  double width, height;
  v2 *pos0, *vel0; /* the initial flock */
} canvas;

/* Keeps the speed between the limits. */
static inline v2 limit_speed(v2 v) {
  double s = sqrt(v2_dot(v, v));
  if (s > BOID_MAX_SPEED) return v2_scale(v, BOID_MAX_SPEED / s);
  if (s < BOID_MIN_SPEED && s > 0.0) return v2_scale(v, BOID_MIN_SPEED / s);
  return v;
}

static inline v2 wrap(const canvas *c, v2 x) {
  if (x.x < 0.0) x.x += c->width;
  if (x.x >= c->width) x.x -= c->width;
  if (x.y < 0.0) x.y += c->height;
  if (x.y >= c->height) x.y -= c->height;
  return x;
}

/* The steering of a boid from the sums over the boids in sight. */
static inline v2 steer(v2 vel, v2 sep, v2 ali, v2 coh, int seen) {
  v2 s = v2_scale(sep, BOID_W_SEPARATE);
  if (seen) {
    s = v2_add(s, v2_scale(v2_sub(v2_scale(ali, 1.0 / seen), vel), BOID_W_ALIGN));
    s = v2_add(s, v2_scale(v2_scale(coh, 1.0 / seen), BOID_W_COHERE));
  }
  return limit_speed(v2_add(vel, s));
}

static int canvas_init(wl_ctx *w, canvas *c, size_t n, uint64_t seed) {
  c->n = n;
  c->width = floor(BOID_SPACE * sqrt((double)n)) + 100.0;
  c->height = floor(c->width * 0.75);
  c->pos0 = wl_malloc(w, n * sizeof *c->pos0);
  c->vel0 = wl_malloc(w, n * sizeof *c->vel0);
  if (!c->pos0 || !c->vel0) return -1;
  wl_rng rng;
  wl_rng_seed(&rng, seed);
  for (size_t i = 0; i < n; i++) {
    double x = wl_rng_unit(&rng) * c->width, y = wl_rng_unit(&rng) * c->height;
    double a = wl_rng_unit(&rng) * 6.283185307179586, s = BOID_MIN_SPEED + wl_rng_unit(&rng) * (BOID_MAX_SPEED - BOID_MIN_SPEED);
    c->pos0[i] = v2_make(x, y);
    c->vel0[i] = v2_make(cos(a) * s, sin(a) * s);
  }
  return 0;
}

/* --- the plain-C replica --------------------------------------------------- */

static void plain_frame(const canvas *c, v2 *pos, v2 *vel, v2 *next) {
  for (size_t i = 0; i < c->n; i++) {
    v2 sep = v2_make(0.0, 0.0), ali = sep, coh = sep;
    int seen = 0;
    for (size_t j = 0; j < c->n; j++) {
      if (j == i) continue;
      v2 d = v2_sub(pos[j], pos[i]);
      double d2 = v2_dot(d, d);
      if (d2 < BOID_SIGHT * BOID_SIGHT) ali = v2_add(ali, vel[j]), coh = v2_add(coh, d), seen++;
      if (d2 < BOID_PERSONAL * BOID_PERSONAL && d2 > 0.0) sep = v2_sub(sep, v2_scale(d, 1.0 / d2));
    }
    next[i] = steer(vel[i], sep, ali, coh, seen);
  }
  for (size_t i = 0; i < c->n; i++) {
    vel[i] = next[i];
    pos[i] = wrap(c, v2_add(pos[i], vel[i]));
  }
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
/* Operands are read before the allocation: they need no rooting. */
static eph_value vec_add(wl_ctx *w, eph_value a, eph_value b) { return vec_new(w, v2_add(vec_get(a), vec_get(b))); }
static eph_value vec_sub(wl_ctx *w, eph_value a, eph_value b) { return vec_new(w, v2_sub(vec_get(a), vec_get(b))); }
static eph_value vec_scale(wl_ctx *w, eph_value a, double k) { return vec_new(w, v2_scale(vec_get(a), k)); }

static eph_value flock_new(wl_ctx *w, const canvas *c) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, flock);
  EPH_LOCAL(h, boid);
  flock = WL_NEW(w, C_FLOCK, F_NSLOTS);
  eph_value boids = WL_NEW(w, C_ARRAY, c->n);
  eph_store(h, flock, F_BOIDS, boids);
  for (size_t i = 0; i < c->n; i++) {
    boid = WL_NEW(w, C_BOID, B_NSLOTS);
    eph_store(h, eph_slot(flock, F_BOIDS), i, boid);
    eph_value v = vec_new(w, c->pos0[i]);
    eph_store(h, boid, B_POS, v);
    v = vec_new(w, c->vel0[i]);
    eph_store(h, boid, B_VEL, v);
  }
  EPH_RETURN(h, flock);
}

/* Boid i's new velocity, from Vector sums over the other boids. */
static eph_value boid_steer(wl_ctx *w, eph_value boids, size_t i) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, boids);
  EPH_LOCAL(h, me);
  EPH_LOCAL(h, sep);
  EPH_LOCAL(h, ali);
  EPH_LOCAL(h, coh);
  EPH_LOCAL(h, d);
  EPH_LOCAL(h, t);
  me = eph_slot(boids, i);
  sep = vec_new(w, v2_make(0.0, 0.0));
  ali = sep, coh = sep;
  int seen = 0;
  for (size_t j = 0; j < eph_slot_count(boids); j++) {
    if (j == i) continue;
    eph_value other = eph_slot(boids, j);
    d = vec_sub(w, eph_slot(other, B_POS), eph_slot(me, B_POS));
    v2 dv = vec_get(d);
    double d2 = v2_dot(dv, dv);
    if (d2 < BOID_SIGHT * BOID_SIGHT) {
      ali = vec_add(w, ali, eph_slot(eph_slot(boids, j), B_VEL));
      coh = vec_add(w, coh, d);
      seen++;
    }
    if (d2 < BOID_PERSONAL * BOID_PERSONAL && d2 > 0.0) {
      t = vec_scale(w, d, 1.0 / d2);
      sep = vec_sub(w, sep, t);
    }
  }
  v2 vel = vec_get(eph_slot(me, B_VEL));
  t = vec_scale(w, sep, BOID_W_SEPARATE);
  if (seen) {
    d = vec_scale(w, ali, 1.0 / seen);
    d = vec_new(w, v2_sub(vec_get(d), vel));
    d = vec_scale(w, d, BOID_W_ALIGN);
    t = vec_add(w, t, d);
    d = vec_scale(w, coh, 1.0 / seen);
    d = vec_scale(w, d, BOID_W_COHERE);
    t = vec_add(w, t, d);
  }
  t = vec_new(w, v2_add(vel, vec_get(t)));
  t = vec_new(w, limit_speed(vec_get(t)));
  EPH_RETURN(h, t);
}

typedef struct rect {
  double x0, y0, x1, y1;
} rect;

static eph_value rect_new(wl_ctx *w, rect r) {
  eph_value v = WL_NEW_BYTES(w, C_RECTANGLE, sizeof r);
  if (v != EPH_NIL) memcpy(eph_bytes(v), &r, sizeof r);
  return v;
}

/* The draw list: one bounds Rectangle (x0, y0, x1, y1) per boid.  Returns
 * the area of their union's bounding box (the damaged region). */
static double render(wl_ctx *w, eph_value flock) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, flock);
  size_t n = eph_slot_count(eph_slot(flock, F_BOIDS));
  eph_value list = WL_NEW(w, C_ARRAY, n);
  eph_store(h, flock, F_DRAWLIST, list);
  double u[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < n; i++) {
    v2 x = vec_get(eph_slot(eph_slot(eph_slot(flock, F_BOIDS), i), B_POS));
    rect r = {x.x - BOID_SIZE, x.y - BOID_SIZE, x.x + BOID_SIZE, x.y + BOID_SIZE};
    eph_store(h, eph_slot(flock, F_DRAWLIST), i, rect_new(w, r));
    u[0] = fmin(u[0], r.x0), u[1] = fmin(u[1], r.y0), u[2] = fmax(u[2], r.x1), u[3] = fmax(u[3], r.y1);
  }
  EPH_UNFRAME(h);
  return n ? (u[2] - u[0]) * (u[3] - u[1]) : 0.0;
}

static double heap_frame(wl_ctx *w, const canvas *c, eph_value flock) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, flock);
  EPH_LOCAL(h, next);
  next = WL_NEW(w, C_ARRAY, c->n);
  for (size_t i = 0; i < c->n; i++) {
    eph_value v = boid_steer(w, eph_slot(flock, F_BOIDS), i);
    eph_store(h, next, i, v);
  }
  for (size_t i = 0; i < c->n; i++) {
    eph_value boid = eph_slot(eph_slot(flock, F_BOIDS), i);
    eph_store(h, boid, B_VEL, eph_slot(next, i));
    eph_value x = vec_new(w, wrap(c, v2_add(vec_get(eph_slot(boid, B_POS)), vec_get(eph_slot(next, i)))));
    eph_store(h, eph_slot(eph_slot(flock, F_BOIDS), i), B_POS, x);
  }
  double damaged = render(w, flock);
  EPH_UNFRAME(h);
  return damaged;
}

/* --- options and the run --------------------------------------------------- */

typedef struct boids_options {
  unsigned frames;
} boids_options;

static int parse_options(wl_ctx *w, int argc, char **argv) {
  boids_options *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->frames = BOIDS_DEFAULT_FRAMES;
  w->options = o;
  for (int i = 0; i < argc; i++) {
    char *end = NULL;
    unsigned long v = 0;
    if (!strcmp(argv[i], "--frames") && i + 1 < argc) v = strtoul(argv[i + 1], &end, 10);
    if (!end || *end || v == 0 || v > 1000000) {
      fprintf(stderr, "boids: bad option '%s' (expected --frames N, 1..1000000)\n", argv[i]);
      return -1;
    }
    o->frames = (unsigned)v;
    i++;
  }
  return 0;
}

/* Largest difference from the replica's positions and velocities; counts
 * boids off the canvas or not finite. */
static double compare(const canvas *c, eph_value boids, const v2 *pos, const v2 *vel, size_t *off) {
  double worst = 0.0;
  *off = 0;
  for (size_t i = 0; i < c->n; i++) {
    eph_value b = eph_slot(boids, i);
    v2 x = vec_get(eph_slot(b, B_POS)), v = vec_get(eph_slot(b, B_VEL));
    double d = fmax(fmax(fabs(x.x - pos[i].x), fabs(x.y - pos[i].y)), fmax(fabs(v.x - vel[i].x), fabs(v.y - vel[i].y)));
    if (!(d <= worst)) worst = d; /* NaN sticks */
    if (!(x.x >= 0.0 && x.x < c->width && x.y >= 0.0 && x.y < c->height)) (*off)++;
  }
  return worst;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  unsigned frames = w->options ? ((boids_options *)w->options)->frames : BOIDS_DEFAULT_FRAMES;
  canvas c;
  v2 *pos = wl_malloc(w, w->size * sizeof *pos), *vel = wl_malloc(w, w->size * sizeof *vel),
     *next = wl_malloc(w, w->size * sizeof *next);
  if (canvas_init(w, &c, w->size, w->seed) || !pos || !vel || !next)
    return wl_check(w, false, "out of C memory"); /* the runner frees what was made (wl_free_all) */
  EPH_FRAME(h);
  EPH_LOCAL(h, flock);
  flock = flock_new(w, &c);
  double damaged = 0.0;
  for (unsigned f = 0; f < frames; f++) {
    wl_event_begin(w);
    damaged = heap_frame(w, &c, flock);
    wl_event_end(w);
  }
  memcpy(pos, c.pos0, c.n * sizeof *pos);
  memcpy(vel, c.vel0, c.n * sizeof *vel);
  for (unsigned f = 0; f < frames; f++) plain_frame(&c, pos, vel, next);
  size_t off = 0;
  double diff = compare(&c, eph_slot(flock, F_BOIDS), pos, vel, &off);
  size_t count = eph_slot_count(eph_slot(flock, F_BOIDS));
  double speed = 0.0;
  for (size_t i = 0; i < c.n; i++) speed += sqrt(v2_dot(vel[i], vel[i])) / (double)c.n;
  EPH_UNFRAME(h);
  wl_free(w, c.pos0), wl_free(w, c.vel0), wl_free(w, pos), wl_free(w, vel), wl_free(w, next);
  bool ok = diff <= 1e-9 && off == 0 && count == c.n;
  return wl_check(w, ok, "%zu boids, %u frames on a %gx%g canvas: max |state - plain C| %.3g, %zu off canvas, mean speed %.3f, damaged area %.0f",
                  count, frames, c.width, c.height, diff, off, speed, damaged);
}

const wl_workload wl_boids = {
    .name = "boids",
    .description = "Bloc-like Boids: long-lived Boids, per-frame Vector temporaries, each frame a latency event",
    .unit = "boids",
    .sizes = {.small = 20, .middle = 100, .normal = 700, .large = 0},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Vector",
    .options_help = "--frames N  frames to render (default 300)",
    .options = (const wl_option[]){{"frames", WL_OPT_COUNT, 1, 1000000, NULL}, {NULL}},
    .parse_options = parse_options,
    .run = run,
};
