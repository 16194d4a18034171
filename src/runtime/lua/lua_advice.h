/*
 * lua_advice.h — the Lua collector advice (docs/lua.md, "Collector
 * advice"): what a Lua profile's lifetime distribution says about Lua 5.4's
 * incremental and generational collector modes, as a hypothesis to check
 * with `ephemera lua --gc ...`.  Shared by `ephemera lua --summary`
 * (session.c, after the adapter core's summary, from its running tallies),
 * `ephemera report` (src/analysis, from the analysis, for profiles with
 * metadata runtime=lua) and `ephemera tune --lua` (src/tune/lua.c).
 *
 * Header-only (static inline): the Lua adapter is also built into the
 * loadable module, which does not link the analysis library.
 *
 * Inputs: weighted counts of freed (not censored) objects by GC cycles
 * survived (0 and 1), all freed objects, and objects alive at the end.
 */
#ifndef EPH_LUA_ADVICE_H
#define EPH_LUA_ADVICE_H

#include <stdbool.h>

typedef enum eph_lua_advice_kind {
  EPH_LUA_ADVICE_NONE = 0,     /* no objects */
  EPH_LUA_ADVICE_GENERATIONAL, /* most die young */
  EPH_LUA_ADVICE_INCREMENTAL,  /* many survive several cycles or live to the end */
  EPH_LUA_ADVICE_MIXED         /* in between: tune minormul */
} eph_lua_advice_kind;

typedef struct eph_lua_advice {
  eph_lua_advice_kind kind;
  double share0;   /* of freed objects: died before the next cycle completed */
  double share01;  /* of freed objects: survived at most one cycle */
  double censored; /* of all objects: alive at the end */
} eph_lua_advice;

static inline eph_lua_advice eph_lua_advice_compute(double survived0, double survived1, double freed,
                                                    double censored) {
  eph_lua_advice a = {EPH_LUA_ADVICE_NONE, 0, 0, 0};
  double total = freed + censored;
  if (!(total > 0)) return a;
  a.share0 = freed > 0 ? survived0 / freed : 0;
  a.share01 = freed > 0 ? (survived0 + survived1) / freed : 0;
  a.censored = censored / total;
  if (a.share01 >= 0.8) a.kind = EPH_LUA_ADVICE_GENERATIONAL;
  else if (a.censored >= 0.5 || a.share01 < 0.4) a.kind = EPH_LUA_ADVICE_INCREMENTAL;
  else a.kind = EPH_LUA_ADVICE_MIXED;
  return a;
}

/* A short label ("generational", "incremental", "mixed", "none"). */
static inline const char *eph_lua_advice_label(eph_lua_advice_kind k) {
  switch (k) {
    case EPH_LUA_ADVICE_GENERATIONAL: return "generational";
    case EPH_LUA_ADVICE_INCREMENTAL: return "incremental";
    case EPH_LUA_ADVICE_MIXED: return "mixed";
    default: return "none";
  }
}

/* The advice as lines of plain text (no leading spaces; joined by '\n',
 * no final newline); NULL for EPH_LUA_ADVICE_NONE. */
static inline const char *eph_lua_advice_text(eph_lua_advice_kind k) {
  switch (k) {
    case EPH_LUA_ADVICE_GENERATIONAL:
      return "most objects die young: generational mode should pay off (it is lua5.4's default).  If you run\n"
             "incremental, try --gc generational; if generational, a larger minormul (e.g. "
             "--gc generational,minormul=40)\n"
             "makes minor collections rarer, at the price of a bigger young generation.";
    case EPH_LUA_ADVICE_INCREMENTAL:
      return "many objects survive several cycles or live to the end: generational mode gains little and its\n"
             "minor collections re-examine survivors.  Try --gc incremental (and pause=300 to trade memory for\n"
             "fewer cycles), or a lower majormul to make the old generation's major collections earlier.";
    case EPH_LUA_ADVICE_MIXED:
      return "lifetimes are mixed: keep generational mode, and compare --gc generational,minormul=10 and\n"
             "minormul=40 with the default (20) to see which young-generation size suits this program.";
    default: return NULL;
  }
}

#endif
