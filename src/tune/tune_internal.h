/*
 * tune_internal.h — helpers shared inside src/tune (not public API).
 */
#ifndef EPH_TUNE_INTERNAL_H
#define EPH_TUNE_INTERNAL_H

#include <stdio.h>

#include "ephemera/sim.h"
#include "ephemera/tune.h"

/*
 * Runs argv (argv[0] a path) with env_key=env_value set (when env_key is not
 * NULL), output discarded, and waits.  Returns EPH_OK on exit status 0,
 * otherwise EPH_ERR_INVALID with "what failed (exit status N)" in err.
 */
eph_status tune_spawn(char *const argv[], const char *env_key, const char *env_value, const char *what, eph_error *err);

/* Seconds on the monotonic clock (measure.c). */
double tune_now_s(void);

/* The same, also giving the wall time and the child's peak RSS in bytes
 * (either may be NULL). */
eph_status tune_spawn_timed(char *const argv[], const char *env_key, const char *env_value, const char *what,
                            double *wall_s, double *max_rss, eph_error *err);

/*
 * The explanation of a recommendation from the lifetimes and the default's
 * simulation (explain.c): the long-lived volume and the classes that hold
 * most of it.  False when out of memory (why is then empty).
 */
bool tune_why(const eph_tune_lives *lives, const eph_tune_sim *def, eph_tune_why *why);

/*
 * Re-simulates sims[which[0..n-1]] with the GC simulator over `in` (cost
 * model cm, NULL for the built-in): overwrites their counts, bytes and peak
 * heap, sets by_simulator, and writes each one's predicted GC seconds to
 * sim_gc_s[k] (uncalibrated).  Returns the simulator's status and message.
 */
eph_status tune_refine(const eph_sim_input *in, const eph_sim_costmodel *cm, eph_tune_sim *sims,
                       const size_t *which, size_t n, double *sim_gc_s, eph_error *err);

/*
 * Thins a big sampled profile in place for a prediction (thin.c): when p
 * holds more than max_records records of a sampled mode (not a Merlin or
 * brute profile, not a trace), keeps records of 4 KiB or more and one in k
 * of the others, chosen by a hash of the id, their weight times k, so that
 * about max_records remain.  Returns k (1: left as it was).
 */
size_t tune_thin_records(eph_file *p, size_t max_records);

/* Whether two simulated configurations have the same outcome (counts,
 * bytes copied, peak heap): measuring both would tell nothing new. */
bool tune_same_outcome(const eph_tune_sim *a, const eph_tune_sim *b);

/* The advisor's verification so far (verify_order.c). */
typedef struct tune_verify_state {
  const eph_tune_config *grid;
  const eph_tune_sim *sims;    /* per grid element */
  const size_t *order;         /* grid indices, best predicted first */
  size_t feasible;             /* order's length (those within the objective) */
  const size_t *verified;      /* grid indices measured, verified[0] the default */
  const double *score;         /* their measured scores under the objective, lower better */
  int nv;                      /* how many measured (at least 1) */
} tune_verify_state;

/*
 * The grid index to measure next, or SIZE_MAX when every configuration of
 * `order` is measured or repeats a measured outcome: the best that keeps
 * the default's eden, then the model's best at another eden, then the
 * model's best at an eden size next to the fastest measured (outward while
 * the fastest is the largest or smallest eden measured).
 */
size_t tune_next_to_verify(const tune_verify_state *v);

/* The half-width of the 95 % interval of def's mean over pick's, propagated
 * from both means' relative intervals. */
double tune_speedup_ci(const eph_tune_measurement *def, const eph_tune_measurement *pick);

/*
 * Whether `pick` measured clearly faster than the default `def`: its
 * speed-up's 95 % interval (propagated from both means') above 1.0.  One
 * invocation has no interval: 5 % faster.  Two have one too wide to decide
 * anything (Student's t at one degree of freedom is 12.7: two invocations
 * of a 70 s run 5 % apart give it +-30 s): 5 % faster on the means and
 * each invocation of the pick faster than each of the default's.
 */
bool tune_clearly_faster(const eph_tune_measurement *def, const eph_tune_measurement *pick);

#endif
