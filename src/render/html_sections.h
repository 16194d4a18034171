/*
 * html_sections.h — sections of the HTML report that live in their own
 * files (render_timeline.c, render_flame.c), and the one call of
 * render_html.c they draw their plots through.  Private to src/render.
 */
#ifndef EPH_HTML_SECTIONS_H
#define EPH_HTML_SECTIONS_H

#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/spacetime.h"

struct plot_ctx; /* render_html.c's: gnuplot, the plot directory, the first failure */

/* A gnuplot figure as render_html.c draws its own: `name` is its id
 * (plot-NAME) and file name (NAME.svg in the plot directory), drawn at
 * w x h SVG pixels (about the width the page shows it at, so that its text
 * keeps the page's size). */
void eph_html_figure(FILE *out, struct plot_ctx *pc, const char *name, const char *caption, const char *script,
                     const char *data, int w, int h);

/* "Heap timeline": used and committed bytes over time, each collection
 * marked; nothing when the profile has no collection events. */
void eph_html_timeline(FILE *out, struct plot_ctx *pc, const eph_analysis *a);

/* "Flame graph": bytes x lifetime by call stack (s NULL: nothing). */
void eph_html_flamegraph(FILE *out, const eph_spacetime *s);

#endif
