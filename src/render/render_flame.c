/*
 * render_flame.c — a flame graph of the heap's space-time (bytes x
 * lifetime in bytes allocated) by call stack, as inline SVG in the HTML
 * report: the root at the bottom, each frame as wide as the space-time
 * allocated under it, callers below callees (Brendan Gregg's layout).
 * Debian packages no FlameGraph tool, so the page draws its own: a trie
 * of frames (merged by function, file and line), then one <rect> per
 * frame wider than a pixel.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_sections.h"
#include "render.h"
#include "analysis/stacks.h"

#define FLAME_W 1160.0
#define FRAME_H 18.0

typedef struct node {
  uint32_t site;  /* a site id (its label names the frame); UINT32_MAX: the root */
  double value;   /* space-time at or under this frame */
  double objects, bytes;
  int32_t child, next; /* first child, next sibling; -1 none */
} node;

typedef struct trie {
  node *n;
  size_t len, cap;
  const eph_file *p;
  bool nomem;
} trie;

/* A frame's name: "function file:line" (the file's last component). */
static void frame_label(const eph_file *p, uint32_t site, char *buf, size_t len) {
  if (site == UINT32_MAX) {
    snprintf(buf, len, "all");
    return;
  }
  if (!site || site >= p->nsites || !p->sites[site].file) {
    snprintf(buf, len, "(unknown site)");
    return;
  }
  const eph_site_entry *e = &p->sites[site];
  const char *f = strrchr(e->file, '/');
  snprintf(buf, len, "%s %s:%d", e->function && *e->function ? e->function : "?", f ? f + 1 : e->file, e->line);
}

/* Two sites name the same frame (a stack's sites repeat their leaf's). */
static bool same_frame(const eph_file *p, uint32_t a, uint32_t b) {
  if (a == b) return true;
  if (!a || !b || a >= p->nsites || b >= p->nsites || !p->sites[a].file || !p->sites[b].file) return false;
  const eph_site_entry *x = &p->sites[a], *y = &p->sites[b];
  return x->line == y->line && !strcmp(x->file, y->file) && !strcmp(x->function, y->function);
}

static int32_t new_node(trie *t, uint32_t site) {
  if (t->len == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    node *n = realloc(t->n, cap * sizeof *n);
    if (!n) {
      t->nomem = true;
      return -1;
    }
    t->n = n;
    t->cap = cap;
  }
  t->n[t->len] = (node){site, 0, 0, 0, -1, -1};
  return (int32_t)t->len++;
}

static int32_t child_of(trie *t, int32_t parent, uint32_t site) {
  for (int32_t c = t->n[parent].child; c >= 0; c = t->n[c].next)
    if (same_frame(t->p, t->n[c].site, site)) return c;
  int32_t c = new_node(t, site);
  if (c < 0) return -1;
  t->n[c].next = t->n[parent].child;
  t->n[parent].child = c;
  return c;
}

/* Adds a cell's stack, outermost caller first, down to its site. */
static void add_cell(trie *t, const eph_st_cell *c) {
  const uint32_t *callers = NULL;
  size_t ncallers = eph_stack_callers(t->p, c->site_id, &callers);
  int32_t at = 0;
  t->n[0].value += c->sum.byte_bytes;
  for (size_t k = ncallers + 1; k-- > 0 && at >= 0;) {
    uint32_t site = k ? callers[k - 1] : c->site_id;
    at = child_of(t, at, site);
    if (at < 0) return;
    t->n[at].value += c->sum.byte_bytes;
    t->n[at].objects += c->sum.objects;
    t->n[at].bytes += c->sum.bytes;
  }
}

static int depth_of(const trie *t, int32_t at) {
  int d = 0;
  for (int32_t c = t->n[at].child; c >= 0; c = t->n[c].next) {
    int k = depth_of(t, c);
    if (k > d) d = k;
  }
  return d + 1;
}

/* A warm colour from the frame's name, the same on every run. */
static void colour(const char *name, int *r, int *g, int *b) {
  uint32_t h = 2166136261u;
  for (const char *s = name; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  *r = 205 + (int)(h % 50);
  *g = 80 + (int)((h >> 8) % 130);
  *b = 40 + (int)((h >> 16) % 40);
}

static void draw(FILE *out, const trie *t, int32_t at, double x, int depth, int height, double scale) {
  const node *n = &t->n[at];
  double w = n->value * scale;
  if (w < 1.0) return;
  char label[512], b1[32], b2[32];
  frame_label(t->p, n->site, label, sizeof label);
  double y = (double)(height - depth - 1) * FRAME_H;
  int r, g, b;
  colour(label, &r, &g, &b);
  fputs("<g class=frame><title>", out);
  eph_html_escape(out, label);
  fprintf(out, ": %.2f %% of the space-time", t->n[0].value > 0 ? 100 * n->value / t->n[0].value : 0);
  if (at) fprintf(out, ", %s objects, %s", eph_fmt_count(b1, sizeof b1, n->objects), eph_fmt_life(b2, sizeof b2, n->bytes, EPH_CLOCK_BYTES));
  fprintf(out, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=2 fill=\"rgb(%d,%d,%d)\"/>", x, y, w,
          FRAME_H - 1, r, g, b);
  size_t fit = (size_t)(w / 7); /* characters of ~7 px that fit */
  if (fit >= 3) {
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 5);
    size_t len = strlen(label);
    if (len > fit) {
      len = fit - 2;
      while (len > 0 && ((unsigned char)label[len] & 0xc0) == 0x80) len--; /* not inside a UTF-8 sequence */
      label[len] = 0;
      eph_html_escape(out, label);
      fputs("..", out);
    } else {
      eph_html_escape(out, label);
    }
    fputs("</text>", out);
  }
  fputs("</g>\n", out);
  double cx = x;
  for (int32_t c = n->child; c >= 0; c = t->n[c].next) {
    draw(out, t, c, cx, depth + 1, height, scale);
    cx += t->n[c].value * scale;
  }
}

void eph_html_flamegraph(FILE *out, const eph_spacetime *s) {
  if (!s || !s->ncells) return;
  trie t = {.p = s->profile};
  if (new_node(&t, UINT32_MAX) < 0) return;
  for (size_t i = 0; i < s->ncells && !t.nomem; i++) add_cell(&t, &s->cells[i]);
  if (t.nomem || !(t.n[0].value > 0)) {
    free(t.n);
    return;
  }
  int height = depth_of(&t, 0);
  bool stacks = eph_stack_depth(s->profile) > 0;
  fprintf(out, "<h2 id=flamegraph>Flame graph: bytes &times; lifetime by %s</h2>\n<p class=note>Each frame is as wide "
               "as the heap space-time (bytes &times; lifetime in bytes allocated, weighted by the sampling) of the "
               "objects allocated under it; callers below, the allocation site on top. %s Hover a frame for its "
               "share, objects and bytes. <code>ephemera export --pprof</code> gives the same numbers to "
               "<code>go tool pprof</code> and speedscope.</p>\n",
          stacks ? "call stack" : "allocation site",
          stacks ? "" : "This profile has no call stacks (profile with <code>stacks=N</code> to record them), so each "
                        "column is one allocation site.");
  fprintf(out, "<svg class=flame id=flame-svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"ui-monospace,Menlo,monospace\" font-size=\"11\">\n"
               "<style>.frame text{pointer-events:none;fill:#222}.frame:hover rect{stroke:#000;stroke-width:1}</style>\n",
          FLAME_W, height * FRAME_H);
  draw(out, &t, 0, 0, 0, height, FLAME_W / t.n[0].value);
  fputs("</svg>\n", out);
  free(t.n);
}
