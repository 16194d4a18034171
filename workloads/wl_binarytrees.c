/*
 * binarytrees — the Computer Language Benchmarks Game program: a stretch
 * tree, a long-lived tree, then many short-lived trees of growing depth.
 * The classic test of a collector's young generation.
 */
#include "workload.h"

enum { C_NODE, NCLASSES };
static const wl_class classes[] = {[C_NODE] = {"TreeNode", EPH_FORMAT_POINTERS}};

static eph_value bottom_up(wl_ctx *w, unsigned depth) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  if (depth > 0) {
    left = bottom_up(w, depth - 1);
    right = bottom_up(w, depth - 1);
  }
  eph_value node = WL_NEW(w, C_NODE, 2);
  eph_store(h, node, 0, left);
  eph_store(h, node, 1, right);
  EPH_RETURN(h, node);
}

static uint64_t check(eph_value node) {
  uint64_t n = 1;
  while (eph_slot(node, 0) != EPH_NIL) {
    n += 1 + check(eph_slot(node, 0));
    node = eph_slot(node, 1);
  }
  return n;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  unsigned max_depth = (unsigned)w->size, min_depth = 4;
  if (max_depth < min_depth + 2) max_depth = min_depth + 2;
  EPH_FRAME(h);
  EPH_LOCAL(h, long_lived);
  uint64_t stretch = check(bottom_up(w, max_depth + 1));
  bool ok = stretch == (UINT64_C(2) << (max_depth + 1)) - 1;
  long_lived = bottom_up(w, max_depth);
  uint64_t total = 0;
  for (unsigned d = min_depth; d <= max_depth; d += 2) {
    uint64_t iterations = UINT64_C(1) << (max_depth - d + min_depth), sum = 0;
    for (uint64_t i = 0; i < iterations; i++) sum += check(bottom_up(w, d));
    ok &= sum == iterations * ((UINT64_C(2) << d) - 1);
    total += sum;
  }
  uint64_t long_check = check(long_lived);
  ok &= long_check == (UINT64_C(2) << max_depth) - 1;
  EPH_UNFRAME(h);
  return wl_check(w, ok, "stretch %llu, long-lived %llu, %llu nodes in short-lived trees", (unsigned long long)stretch,
                  (unsigned long long)long_check, (unsigned long long)total);
}

const wl_workload wl_binarytrees = {
    .name = "binarytrees",
    .description = "Benchmarks Game binary-trees: many short-lived trees beside a long-lived one",
    .unit = "depth",
    .sizes = {.small = 10, .middle = 14, .normal = 20, .large = 22},
    .classes = classes,
    .short_lived_class = "TreeNode",
    .nclasses = NCLASSES,
    .run = run,
};
