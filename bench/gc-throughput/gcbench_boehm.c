/*
 * GCBench (John Ellis, Pete Kovac; C version by Hans Boehm) on the
 * Boehm-Demers-Weiser collector, as in the original: nodes from GC_MALLOC
 * (zeroed, so i and j are 0), the double array from GC_MALLOC_ATOMIC.
 */
#include <gc.h>

#include "common.h"

typedef struct node {
  struct node *left, *right;
  int i, j;
} node;

static node *new_node(void) {
  node *n = GC_MALLOC(sizeof(node));
  if (n == NULL) gct_fail("GC_MALLOC returned NULL");
  return n;
}

/* Build a tree top down, storing new nodes into older ones. */
static void populate(int depth, node *n) {
  if (depth <= 0) return;
  depth--;
  n->left = new_node();
  n->right = new_node();
  populate(depth, n->left);
  populate(depth, n->right);
}

/* Build a tree bottom up. */
static node *make_tree(int depth) {
  if (depth <= 0) return new_node();
  node *left = make_tree(depth - 1);
  node *right = make_tree(depth - 1);
  node *result = new_node();
  result->left = left;
  result->right = right;
  return result;
}

static long count_nodes(const node *n) {
  if (n->i != 0 || n->j != 0) gct_fail("a node lost its integer fields");
  if (n->left == NULL) return 1;
  return 1 + count_nodes(n->left) + count_nodes(n->right);
}

static void check_tree(const node *tree, int depth, const char *what) {
  if (tree == NULL || count_nodes(tree) != gct_tree_size(depth)) gct_fail(what);
}

static void time_construction(const gcbench_params *p, int depth) {
  long iters = gcbench_num_iters(p, depth);
  node *temp;
  printf("Creating %ld trees of depth %d\n", iters, depth);

  double t0 = gct_wall();
  for (long i = 0; i < iters; i++) {
    temp = new_node();
    populate(depth, temp);
    if (i == iters - 1) check_tree(temp, depth, "top-down tree");
    temp = NULL;
  }
  printf("\tTop down construction took %d msec\n", gct_msec(t0));

  t0 = gct_wall();
  for (long i = 0; i < iters; i++) {
    temp = make_tree(depth);
    if (i == iters - 1) check_tree(temp, depth, "bottom-up tree");
    temp = NULL;
  }
  printf("\tBottom up construction took %d msec\n", gct_msec(t0));
  (void)temp;
}

int main(int argc, char **argv) {
  int verbose;
  gcbench_params p = gcbench_parse(argc, argv, &verbose);

  gct_timer timer = gct_timer_start();
  GC_INIT();
  gcbench_print_header(&p, "boehm", (long)sizeof(node));
  double t0 = gct_wall();

  /* Stretch the memory space quickly. */
  node *temp_tree = make_tree(p.stretch_depth);
  check_tree(temp_tree, p.stretch_depth, "stretch tree");
  temp_tree = NULL;
  (void)temp_tree;

  /* Create a long-lived object. */
  printf(" Creating a long-lived binary tree of depth %d\n", p.long_lived_depth);
  node *long_lived_tree = new_node();
  populate(p.long_lived_depth, long_lived_tree);

  /* Create a long-lived array, filling half of it. */
  printf(" Creating a long-lived array of %ld doubles\n", p.array_size);
  double *array = GC_MALLOC_ATOMIC((size_t)p.array_size * sizeof(double));
  if (array == NULL) gct_fail("GC_MALLOC_ATOMIC returned NULL");
  for (long i = 0; i < p.array_size / 2; ++i) array[i] = 1.0 / (double)i;

  for (int d = p.min_depth; d <= p.max_depth; d += 2) time_construction(&p, d);

  long k = gcbench_check_index(&p);
  if (array[k] != 1.0 / (double)k) gct_fail("long-lived array lost its contents");
  check_tree(long_lived_tree, p.long_lived_depth, "long-lived tree");
  printf("Completed in %d msec\n", gct_msec(t0));

  char info[128];
  snprintf(info, sizeof info, "collections=%lu,heap_mb=%.1f", (unsigned long)GC_get_gc_no(),
           (double)GC_get_heap_size() / 1048576.0);
  gct_report(&timer, info);
  if (verbose)
    fprintf(stderr, "boehm: %lu collections, heap %zu bytes, %zu bytes allocated in total\n",
            (unsigned long)GC_get_gc_no(), GC_get_heap_size(), GC_get_total_bytes());
  return 0;
}
