/*
 * binary-trees (Computer Language Benchmarks Game) on the Boehm-Demers-Weiser
 * collector: nodes from GC_MALLOC, never freed explicitly.
 */
#include <gc.h>

#include "common.h"

typedef struct node {
  struct node *left, *right;
} node;

static node *new_node(node *left, node *right) {
  node *n = GC_MALLOC(sizeof(node));
  if (n == NULL) gct_fail("GC_MALLOC returned NULL");
  n->left = left;
  n->right = right;
  return n;
}

static node *bottom_up_tree(int depth) {
  if (depth <= 0) return new_node(NULL, NULL);
  node *left = bottom_up_tree(depth - 1);
  node *right = bottom_up_tree(depth - 1);
  return new_node(left, right);
}

static long item_check(const node *n) {
  if (n->left == NULL) return 1;
  return 1 + item_check(n->left) + item_check(n->right);
}

int main(int argc, char **argv) {
  int verbose;
  int max_depth = binarytrees_parse(argc, argv, &verbose);
  int stretch_depth = max_depth + 1;

  gct_timer timer = gct_timer_start();
  GC_INIT();

  {
    node *stretch = bottom_up_tree(stretch_depth);
    long check = item_check(stretch);
    printf("stretch tree of depth %d\t check: %ld\n", stretch_depth, check);
    binarytrees_expect(check, gct_tree_size(stretch_depth), "stretch tree");
  }

  node *long_lived = bottom_up_tree(max_depth);

  for (int depth = BINARYTREES_MIN_DEPTH; depth <= max_depth; depth += 2) {
    long iterations = binarytrees_iterations(max_depth, depth);
    long check = 0;
    for (long i = 0; i < iterations; i++) check += item_check(bottom_up_tree(depth));
    printf("%ld\t trees of depth %d\t check: %ld\n", iterations, depth, check);
    binarytrees_expect(check, iterations * gct_tree_size(depth), "temporary trees");
  }

  long check = item_check(long_lived);
  printf("long lived tree of depth %d\t check: %ld\n", max_depth, check);
  binarytrees_expect(check, gct_tree_size(max_depth), "long lived tree");

  char info[128];
  snprintf(info, sizeof info, "collections=%lu,heap_mb=%.1f", (unsigned long)GC_get_gc_no(),
           (double)GC_get_heap_size() / 1048576.0);
  gct_report(&timer, info);
  if (verbose)
    fprintf(stderr, "boehm: %lu collections, heap %zu bytes, %zu bytes allocated in total\n",
            (unsigned long)GC_get_gc_no(), GC_get_heap_size(), GC_get_total_bytes());
  return 0;
}
