/*
 * binary-trees (Computer Language Benchmarks Game) with malloc and explicit
 * free: every tree is freed as soon as it has been checked.
 */
#include "common.h"

typedef struct node {
  struct node *left, *right;
} node;

static node *new_node(node *left, node *right) {
  node *n = malloc(sizeof(node));
  if (n == NULL) gct_fail("malloc returned NULL");
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

static void delete_tree(node *n) {
  if (n->left != NULL) {
    delete_tree(n->left);
    delete_tree(n->right);
  }
  free(n);
}

int main(int argc, char **argv) {
  int verbose;
  int max_depth = binarytrees_parse(argc, argv, &verbose);
  int stretch_depth = max_depth + 1;

  gct_timer timer = gct_timer_start();

  {
    node *stretch = bottom_up_tree(stretch_depth);
    long check = item_check(stretch);
    printf("stretch tree of depth %d\t check: %ld\n", stretch_depth, check);
    binarytrees_expect(check, gct_tree_size(stretch_depth), "stretch tree");
    delete_tree(stretch);
  }

  node *long_lived = bottom_up_tree(max_depth);

  for (int depth = BINARYTREES_MIN_DEPTH; depth <= max_depth; depth += 2) {
    long iterations = binarytrees_iterations(max_depth, depth);
    long check = 0;
    for (long i = 0; i < iterations; i++) {
      node *tree = bottom_up_tree(depth);
      check += item_check(tree);
      delete_tree(tree);
    }
    printf("%ld\t trees of depth %d\t check: %ld\n", iterations, depth, check);
    binarytrees_expect(check, iterations * gct_tree_size(depth), "temporary trees");
  }

  long check = item_check(long_lived);
  printf("long lived tree of depth %d\t check: %ld\n", max_depth, check);
  binarytrees_expect(check, gct_tree_size(max_depth), "long lived tree");
  delete_tree(long_lived);

  gct_report(&timer, "-");
  if (verbose) fprintf(stderr, "malloc: no collector statistics\n");
  return 0;
}
