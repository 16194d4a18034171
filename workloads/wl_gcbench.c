/*
 * gcbench — John Ellis and Pete Kovac's GCBench (C version by Hans Boehm),
 * the classic synthetic collector benchmark, on the workload contract.
 *
 * What it models, step by step as in the original:
 *  1. a "stretch" tree of depth max+2, built bottom up and dropped at once;
 *  2. a long-lived tree of depth max, built top down (populate), kept to the end;
 *  3. a long-lived array of 500 000 doubles (a byte object), half of it filled
 *     with 1/i as the original does;
 *  4. for depth d = 4, 6, ..., max: NumIters(d) = 2 * TreeSize(max+2) / TreeSize(d)
 *     trees built top down, then as many built bottom up, each dropped at once.
 * The size is the original's kMaxTreeDepth (16 there, with kStretchTreeDepth
 * 18 and kLongLivedTreeDepth 16).  A Node has four slots: left, right and the
 * original's int fields i and j (small integers; the original never sets
 * them, so here they stay 0 and the self-check confirms that).
 *
 * Self-check: every tree built (stretch, long-lived, each temporary tree)
 * has exactly TreeSize(depth) nodes with i = j = 0, the number of trees per
 * depth is NumIters(depth), and the array still holds 1/i in its first half
 * and zeros in the second.
 */
#include "workload.h"

enum { C_NODE, C_ARRAY, NCLASSES };
static const wl_class classes[] = {
    [C_NODE] = {"Node", EPH_FORMAT_POINTERS},
    [C_ARRAY] = {"DoubleArray", EPH_FORMAT_BYTES},
};

enum { LEFT, RIGHT, FIELD_I, FIELD_J, NODE_SLOTS };
enum { MIN_DEPTH = 4, ARRAY_SIZE = 500000 };

static uint64_t tree_size(unsigned depth) { return (UINT64_C(1) << (depth + 1)) - 1; }

static eph_value new_node(wl_ctx *w) {
  eph_value n = WL_NEW(w, C_NODE, NODE_SLOTS);
  eph_store(w->h, n, FIELD_I, eph_int(0));
  eph_store(w->h, n, FIELD_J, eph_int(0));
  return n;
}

/* Builds a tree top down: new (young) children stored into older parents. */
static void populate(wl_ctx *w, unsigned depth, eph_value node) {
  if (depth == 0) return;
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, node);
  eph_value child = new_node(w);
  eph_store(h, node, LEFT, child);
  child = new_node(w); /* node moved, perhaps: it is rooted, re-read */
  eph_store(h, node, RIGHT, child);
  populate(w, depth - 1, eph_slot(node, LEFT));
  populate(w, depth - 1, eph_slot(node, RIGHT));
  EPH_UNFRAME(h);
}

/* Builds a tree bottom up: children first, the parent last. */
static eph_value make_tree(wl_ctx *w, unsigned depth) {
  if (depth == 0) return new_node(w);
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  left = make_tree(w, depth - 1);
  right = make_tree(w, depth - 1);
  eph_value node = new_node(w);
  eph_store(h, node, LEFT, left);
  eph_store(h, node, RIGHT, right);
  EPH_RETURN(h, node);
}

/* Nodes in a tree whose nodes all have i = j = 0, or 0 if one does not. */
static uint64_t count_nodes(eph_value node) {
  if (eph_slot(node, FIELD_I) != eph_int(0) || eph_slot(node, FIELD_J) != eph_int(0)) return 0;
  eph_value left = eph_slot(node, LEFT), right = eph_slot(node, RIGHT);
  if (left == EPH_NIL && right == EPH_NIL) return 1;
  if (left == EPH_NIL || right == EPH_NIL) return 0;
  uint64_t l = count_nodes(left), r = count_nodes(right);
  return l && r ? 1 + l + r : 0;
}

static bool tree_ok(eph_value tree, unsigned depth) { return tree != EPH_NIL && count_nodes(tree) == tree_size(depth); }

typedef struct tally {
  uint64_t trees, nodes, bad;
} tally;

/* One depth of the main loop: NumIters trees top down, then bottom up. */
static void time_construction(wl_ctx *w, unsigned depth, unsigned stretch_depth, tally *t) {
  eph_heap *h = w->h;
  uint64_t iters = 2 * tree_size(stretch_depth) / tree_size(depth);
  EPH_FRAME(h);
  EPH_LOCAL(h, temp);
  for (uint64_t i = 0; i < iters; i++) {
    temp = new_node(w);
    populate(w, depth, temp);
    t->bad += !tree_ok(temp, depth);
    t->trees++, t->nodes += tree_size(depth);
    temp = EPH_NIL;
  }
  for (uint64_t i = 0; i < iters; i++) {
    temp = make_tree(w, depth);
    t->bad += !tree_ok(temp, depth);
    t->trees++, t->nodes += tree_size(depth);
    temp = EPH_NIL;
  }
  EPH_UNFRAME(h);
}

/* Fills the first half of the array as the original does: a[i] = 1/i. */
static eph_value make_array(wl_ctx *w) {
  eph_value array = WL_NEW_BYTES(w, C_ARRAY, (size_t)ARRAY_SIZE * sizeof(double));
  double *a = (double *)(void *)eph_bytes(array);
  for (int i = 0; i < ARRAY_SIZE / 2; i++) a[i] = 1.0 / (double)i;
  return array;
}

static bool array_ok(eph_value array) {
  const double *a = (const double *)(const void *)eph_bytes(array);
  for (int i = 0; i < ARRAY_SIZE; i++)
    if (a[i] != (i < ARRAY_SIZE / 2 ? 1.0 / (double)i : 0.0)) return false;
  return true;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  unsigned max_depth = (unsigned)w->size;
  if (max_depth < MIN_DEPTH) max_depth = MIN_DEPTH;
  if (max_depth > 26) max_depth = 26;
  unsigned stretch_depth = max_depth + 2, long_lived_depth = max_depth;
  EPH_FRAME(h);
  EPH_LOCAL(h, temp);
  EPH_LOCAL(h, long_lived);
  EPH_LOCAL(h, array);

  temp = make_tree(w, stretch_depth);
  bool stretch_ok = tree_ok(temp, stretch_depth);
  temp = EPH_NIL;

  long_lived = new_node(w);
  populate(w, long_lived_depth, long_lived);
  array = make_array(w);

  tally t = {0, 0, 0};
  uint64_t expected_trees = 0;
  for (unsigned d = MIN_DEPTH; d <= max_depth; d += 2) {
    time_construction(w, d, stretch_depth, &t);
    expected_trees += 2 * (2 * tree_size(stretch_depth) / tree_size(d));
  }
  bool long_ok = tree_ok(long_lived, long_lived_depth), arr_ok = array_ok(array);
  EPH_UNFRAME(h);
  bool ok = stretch_ok && long_ok && arr_ok && t.bad == 0 && t.trees == expected_trees;
  return wl_check(w, ok, "stretch tree %s, long-lived tree %s, array %s; %llu temporary trees (%llu nodes), %llu bad",
                  stretch_ok ? "ok" : "BAD", long_ok ? "ok" : "BAD", arr_ok ? "ok" : "BAD",
                  (unsigned long long)t.trees, (unsigned long long)t.nodes, (unsigned long long)t.bad);
}

const wl_workload wl_gcbench = {
    .name = "gcbench",
    .description = "Ellis/Kovac/Boehm GCBench: stretch tree, long-lived tree and array, top-down and bottom-up trees",
    .unit = "depth",
    .sizes = {.small = 8, .middle = 12, .normal = 18, .large = 20},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Node",
    .run = run,
};
