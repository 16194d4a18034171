/*
 * spacetime.h — a profile summed by (allocation site, class, lifetime
 * bucket): objects, bytes, and the heap space-time each cell is
 * responsible for (bytes x lifetime, DHAT's measure), weighted by the
 * sampling.  What the exporters (pprof) and the flame graph draw from.
 * Layer: analysis, above the format (docs/architecture.md).
 *
 * Weights: every value is a Horvitz–Thompson sum (a record stands for
 * `weight` objects).  Lifetimes are those of the report
 * (eph_lifetime_of at the chosen end); censored records (alive at exit)
 * count up to the end of the run and also into alive_bytes.
 */
#ifndef EPH_SPACETIME_H
#define EPH_SPACETIME_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "ephemera/format.h"

/* Lifetime buckets, on the relative clock (% of the run). */
typedef enum eph_life_bucket {
  EPH_LIFE_UNDER_1PCT = 0, /* died within 1 % of the run */
  EPH_LIFE_1_5PCT,         /* 1-5 %: still short-lived by FiLiP's 5 % rule */
  EPH_LIFE_5_25PCT,
  EPH_LIFE_25_100PCT,
  EPH_LIFE_ALIVE_AT_EXIT,  /* censored */
  EPH_LIFE_NBUCKETS
} eph_life_bucket;

/* The bucket's label ("<1%", "1-5%", ..., "alive at exit"). */
const char *eph_life_bucket_name(eph_life_bucket b);

/* The sums of one (site, class, bucket). */
typedef struct eph_st_sums {
  double objects;      /* estimated allocations */
  double bytes;        /* their bytes */
  double byte_bytes;   /* sum of size x lifetime in bytes allocated */
  double byte_seconds; /* sum of size x lifetime in seconds */
  double alive_bytes;  /* bytes still alive at exit */
} eph_st_sums;

typedef struct eph_st_cell {
  uint32_t site_id, class_id;
  eph_life_bucket bucket;
  eph_st_sums sum;
} eph_st_cell;

typedef struct eph_spacetime {
  const eph_file *profile; /* borrowed: names, sites, stacks */
  eph_st_cell *cells;      /* in no particular order */
  size_t ncells;
  eph_st_sums total;
  size_t nrecords;
  double run_wall_ns, run_bytes; /* the run's length (as the report takes it) */
} eph_spacetime;

/*
 * Sums the records of p (loaded whole, p->records) at lifetime end `end`.
 * Returns NULL and fills err: EPH_ERR_INVALID if p has no records,
 * EPH_ERR_NOMEM.  The result borrows p: free it first.
 */
eph_spacetime *eph_spacetime_build(const eph_file *p, eph_death_end end, eph_error *err);
/*
 * Loads path and sums it as eph_spacetime_build does, then drops the
 * records (they take 112 bytes each; the sums keep what the flame graph
 * and exporters need).  *profile gets the profile without its records
 * (the result borrows it: free the result first).  Returns NULL and fills
 * err with a message naming path; *profile is NULL then.
 */
eph_spacetime *eph_spacetime_load(const char *path, eph_death_end end, eph_file **profile, eph_error *err);
void eph_spacetime_free(eph_spacetime *s);

#endif
