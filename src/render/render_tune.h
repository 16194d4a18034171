/*
 * render_tune.h — the advisor's results as text (render_tune.c).
 * Layer: renderers, above tune (docs/architecture.md).
 */
#ifndef EPH_RENDER_TUNE_H
#define EPH_RENDER_TUNE_H

#include <stdio.h>

#include "ephemera/tune.h"

/* One step of `ephemera tune` as it completes (the lines `ephemera tune`
 * prints for it); EPH_TUNE_DONE prints the verified table, the
 * recommendation, its explanation and, with request->kv, the kv line. */
void eph_render_tune_step(FILE *out, eph_tune_step step, const eph_tune_result *r);
/* The same as an eph_tune_progress callback; ctx is the FILE. */
void eph_render_tune_progress(void *out, eph_tune_step step, const eph_tune_result *r);

/* `ephemera tune --lua`, step by step; and as an eph_tune_lua_progress callback. */
void eph_render_tune_lua_step(FILE *out, eph_tune_step step, const eph_tune_lua_result *r);
void eph_render_tune_lua_progress(void *out, eph_tune_step step, const eph_tune_lua_result *r);

/* The advisor's prediction after a text report ("GC parameters (PREDICTED
 * ...)"); nothing for EPH_SUGGEST_NONE. */
void eph_render_tune_suggestion(FILE *out, const eph_tune_suggestion *s);

/* A grid, one EPHEMERA_GC string a line (`ephemera tune --list-grid`). */
void eph_render_tune_grid(FILE *out, const eph_tune_config *grid, size_t n);

#endif
