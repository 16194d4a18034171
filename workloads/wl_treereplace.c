/*
 * treereplace — the Merlin paper's tree-replace-random and tree-replace-binary
 * (Table I; Smalltalk programs from the UMass VM, after Hosking et al. 1992
 * and Stefanovic et al. 1999): build a complete binary tree, then keep
 * replacing subtrees with newly built ones.  The tree's shape never changes;
 * its nodes are continually renewed, so old nodes die at all ages and new
 * subtrees are stored into old parents (the write barrier, and tenured
 * garbage that only a full GC reclaims).
 *
 * Table I describes the two programs as
 *   tree-replace-random  "builds a binary tree then replaces random subtrees
 *                         at a fixed height with newly built subtrees"
 *   tree-replace-binary  "builds a binary tree then replaces random subtrees
 *                         with newly built subtrees"
 * and that is what the two variants do:
 *   --variant random   a node chosen uniformly among those at height H
 *                      (--height, default depth/2) is replaced by a fresh
 *                      subtree of height H;
 *   --variant binary   a node chosen uniformly among all nodes is replaced by
 *                      a fresh subtree of its height.  In a complete binary
 *                      tree half the nodes are leaves, a quarter have height
 *                      1, ...: the replaced heights follow the binary
 *                      distribution P(h) = 2^-(h+1), mostly small subtrees
 *                      with an occasional large one (the whole tree, rarely).
 * (Table I gives no "systematic" order for the binary variant, so none is
 * invented here.)
 *
 * Size: the tree depth D (2^(D+1) - 1 nodes).  The run replaces subtrees
 * until the replacements have allocated --turnover times the tree's nodes
 * (default 20), so both variants allocate about the same.
 *
 * A TreeNode is (left, right, label); labels are unique, handed out in
 * preorder as subtrees are built.  Self-check, kept independently in C: a
 * mirror array holds the label expected at every position of the tree
 * (positions numbered as in a binary heap: root 1, children 2p and 2p+1),
 * updated at each replacement, with a running count and checksum of the
 * labels.  Each replacement checks the labels on the path it walks; at the
 * end every heap node's label must equal the mirror's, and the node count
 * and checksum must match the running ones.
 */
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum { C_NODE, NCLASSES };
static const wl_class classes[] = {[C_NODE] = {"TreeNode", EPH_FORMAT_POINTERS}};

enum { LEFT, RIGHT, LABEL, NODE_SLOTS };
enum { VARIANT_RANDOM, VARIANT_BINARY };
enum { MAX_DEPTH = 26 };

typedef struct options {
  int variant;
  unsigned height; /* 0: depth / 2 */
  unsigned turnover;
} options;

static const options default_options = {VARIANT_RANDOM, 0, 20};

/* The C-side model: the label at every position, count and checksum. */
typedef struct model {
  int64_t *label; /* index: position (1-based) */
  uint64_t nodes, checksum;
  uint64_t next_label;
} model;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xFF51AFD7ED558CCD);
  x ^= x >> 33;
  return x;
}

static uint64_t subtree_nodes(unsigned height) { return (UINT64_C(2) << height) - 1; }

/* Builds a subtree of the given height at position pos, labels in preorder. */
static eph_value build(wl_ctx *w, model *m, unsigned height, uint64_t pos) {
  eph_heap *h = w->h;
  int64_t label = (int64_t)m->next_label++;
  m->label[pos] = label;
  m->nodes++;
  m->checksum += mix((uint64_t)label);
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  if (height > 0) {
    left = build(w, m, height - 1, 2 * pos);
    right = build(w, m, height - 1, 2 * pos + 1);
  }
  eph_value node = WL_NEW(w, C_NODE, NODE_SLOTS);
  eph_store(h, node, LEFT, left);
  eph_store(h, node, RIGHT, right);
  eph_store(h, node, LABEL, eph_int(label));
  EPH_RETURN(h, node);
}

/* Removes the subtree at pos from the model's count and checksum. */
static void forget(model *m, unsigned height, uint64_t pos) {
  m->nodes--;
  m->checksum -= mix((uint64_t)m->label[pos]);
  if (height > 0) {
    forget(m, height - 1, 2 * pos);
    forget(m, height - 1, 2 * pos + 1);
  }
}

static unsigned level_of(uint64_t pos) { return 63u - (unsigned)__builtin_clzll(pos); }

/* The node at pos (> 1)'s parent, walking from the root and checking the
 * labels on the way; EPH_NIL if a label is wrong. */
static eph_value parent_of(const model *m, eph_value root, uint64_t pos) {
  eph_value node = root;
  for (unsigned bit = level_of(pos); bit-- > 1;) {
    if (eph_slot(node, LABEL) != eph_int(m->label[pos >> (bit + 1)])) return EPH_NIL;
    node = eph_slot(node, (pos >> bit) & 1 ? RIGHT : LEFT);
  }
  return eph_slot(node, LABEL) == eph_int(m->label[pos >> 1]) ? node : EPH_NIL;
}

/* Replaces the subtree at pos by a new one; false if the path was wrong. */
static bool replace(wl_ctx *w, model *m, eph_value *root, unsigned depth, uint64_t pos) {
  unsigned height = depth - level_of(pos);
  forget(m, height, pos);
  eph_value fresh = build(w, m, height, pos); /* may collect: *root is rooted */
  if (pos == 1) {
    *root = fresh;
    return true;
  }
  eph_value parent = parent_of(m, *root, pos);
  if (parent == EPH_NIL) return false;
  eph_store(w->h, parent, pos & 1 ? RIGHT : LEFT, fresh);
  return true;
}

/* Final check: every node's label equals the model's; count and checksum. */
static void walk(eph_value node, const model *m, uint64_t pos, unsigned height, uint64_t *nodes, uint64_t *sum,
                 uint64_t *bad) {
  (*nodes)++;
  intptr_t label = eph_int_value(eph_slot(node, LABEL));
  *sum += mix((uint64_t)label);
  *bad += label != m->label[pos];
  eph_value l = eph_slot(node, LEFT), r = eph_slot(node, RIGHT);
  if (height == 0) {
    *bad += l != EPH_NIL || r != EPH_NIL;
    return;
  }
  if (l == EPH_NIL || r == EPH_NIL) {
    (*bad)++;
    return;
  }
  walk(l, m, 2 * pos, height - 1, nodes, sum, bad);
  walk(r, m, 2 * pos + 1, height - 1, nodes, sum, bad);
}

static uint64_t pick(wl_rng *rng, int variant, unsigned depth, unsigned height) {
  if (variant == VARIANT_BINARY) return 1 + wl_rng_below(rng, subtree_nodes(depth));
  unsigned level = depth - height;
  return (UINT64_C(1) << level) + wl_rng_below(rng, UINT64_C(1) << level);
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  const options *o = w->options ? w->options : &default_options;
  unsigned depth = w->size > MAX_DEPTH ? MAX_DEPTH : (unsigned)w->size;
  unsigned height = o->height ? o->height : depth / 2;
  if (height > depth) height = depth;
  model m = {wl_calloc(w, subtree_nodes(depth) + 1, sizeof *m.label), 0, 0, 1};
  if (!m.label) return wl_check(w, false, "out of memory for the model");
  wl_rng rng;
  wl_rng_seed(&rng, w->seed);
  EPH_FRAME(h);
  EPH_LOCAL(h, root);
  root = build(w, &m, depth, 1);
  uint64_t budget = (uint64_t)o->turnover * subtree_nodes(depth), built = 0, replacements = 0;
  bool path_ok = true;
  while (built < budget && path_ok) {
    uint64_t pos = pick(&rng, o->variant, depth, height);
    path_ok = replace(w, &m, &root, depth, pos);
    built += subtree_nodes(depth - level_of(pos));
    replacements++;
  }
  uint64_t nodes = 0, sum = 0, bad = 0;
  walk(root, &m, 1, depth, &nodes, &sum, &bad);
  EPH_UNFRAME(h);
  wl_free(w, m.label);
  bool ok = path_ok && bad == 0 && nodes == m.nodes && nodes == subtree_nodes(depth) && sum == m.checksum;
  return wl_check(w, ok, "%s: %llu replacements built %llu nodes; tree %llu nodes (expected %llu), checksum %s, %llu bad",
                  o->variant == VARIANT_BINARY ? "binary" : "random", (unsigned long long)replacements,
                  (unsigned long long)built, (unsigned long long)nodes, (unsigned long long)m.nodes,
                  sum == m.checksum ? "ok" : "WRONG", (unsigned long long)(bad + !path_ok));
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = (unsigned)v;
  return true;
}

static int parse_options(wl_ctx *w, int argc, char **argv) {
  options *o = malloc(sizeof *o);
  if (!o) return -1;
  *o = default_options;
  w->options = o; /* the runner frees it */
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = v != NULL;
    if (!strcmp(a, "--variant") && v) {
      ok = !strcmp(v, "random") || !strcmp(v, "binary");
      o->variant = !strcmp(v, "binary") ? VARIANT_BINARY : VARIANT_RANDOM;
    } else if (!strcmp(a, "--height") && v) {
      ok = parse_uint(v, 1, MAX_DEPTH, &o->height);
    } else if (!strcmp(a, "--turnover") && v) {
      ok = parse_uint(v, 1, 1000000, &o->turnover);
    } else {
      fprintf(stderr, "treereplace: unknown option '%s'\n", a);
      return -1;
    }
    if (!ok) {
      fprintf(stderr, "treereplace: bad value '%s' for %s\n", v ? v : "", a);
      return -1;
    }
    i++;
  }
  return 0;
}

const wl_workload wl_treereplace = {
    .name = "treereplace",
    .description = "binary tree whose subtrees are replaced by new ones (Merlin's tree-replace-random/-binary)",
    .unit = "depth",
    .sizes = {.small = 10, .middle = 14, .normal = 18, .large = 20},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "TreeNode",
    .options_help = "--variant random|binary (default random)  --height H  replaced height for random (default depth/2)"
                    "  --turnover T  replacements allocate T times the tree (default 20)",
    .options =
        (const wl_option[]){{"variant", WL_OPT_WORD, 0, 0, (const char *const[]){"random", "binary", NULL}},
                            {"height", WL_OPT_COUNT, 1, MAX_DEPTH, NULL},
                            {"turnover", WL_OPT_COUNT, 1, 1000000, NULL},
                            {NULL}},
    .parse_options = parse_options,
    .run = run,
};
