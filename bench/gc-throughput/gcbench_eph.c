/*
 * GCBench (John Ellis, Pete Kovac; C version by Hans Boehm) on the Ephemera
 * heap.
 *
 * A Node is a pointer object with four slots: left, right, and the original's
 * int fields i and j as small integers (eph_int(0); the original never sets
 * them): 40 bytes.  Built with GCT_NODE_32 (gcbench_eph32), i and j share one
 * slot, as two 32-bit ints share a word in Whippet's Node: 32 bytes, the
 * same as Whippet's, so that the run measures what the layout costs.  The long-lived array of doubles is a byte object.  Every value held
 * across an allocation is on the shadow stack, and every store goes through
 * eph_store.
 */
#include <ephemera/heap.h>

#include "common.h"
#include "eph_events.h"

#ifdef GCT_NODE_32
enum { LEFT, RIGHT, FIELD_IJ, NODE_SLOTS };
#else
enum { LEFT, RIGHT, FIELD_I, FIELD_J, NODE_SLOTS };
#endif

static eph_class_id node_class, double_array_class;

static eph_value new_node(eph_heap *h) {
  eph_value n = eph_alloc(h, node_class, NODE_SLOTS);
  if (EPH_UNLIKELY(n == EPH_NIL)) gct_fail(eph_heap_error(h));
#ifdef GCT_NODE_32
  eph_store(h, n, FIELD_IJ, eph_int(0));
#else
  eph_store(h, n, FIELD_I, eph_int(0));
  eph_store(h, n, FIELD_J, eph_int(0));
#endif
  return n;
}

/* Build a tree top down, storing new (young) nodes into older ones. */
static void populate(eph_heap *h, int depth, eph_value node) {
  if (depth <= 0) return;
  EPH_FRAME(h);
  EPH_ROOT(h, node);
  depth--;
  eph_value child = new_node(h);
  eph_store(h, node, LEFT, child);
  child = new_node(h); /* may move node; it is rooted, so re-read below */
  eph_store(h, node, RIGHT, child);
  populate(h, depth, eph_slot(node, LEFT));
  populate(h, depth, eph_slot(node, RIGHT));
  EPH_UNFRAME(h);
}

/* Build a tree bottom up. */
static eph_value make_tree(eph_heap *h, int depth) {
  if (depth <= 0) return new_node(h);
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  left = make_tree(h, depth - 1);
  right = make_tree(h, depth - 1);
  eph_value result = new_node(h);
  eph_store(h, result, LEFT, left);
  eph_store(h, result, RIGHT, right);
  EPH_RETURN(h, result);
}

/* Node count of a complete tree, checking every node's integer fields. */
static long count_nodes(eph_value node) {
#ifdef GCT_NODE_32
  if (eph_slot(node, FIELD_IJ) != eph_int(0)) gct_fail("a node lost its integer fields");
#else
  if (eph_slot(node, FIELD_I) != eph_int(0) || eph_slot(node, FIELD_J) != eph_int(0))
    gct_fail("a node lost its integer fields");
#endif
  eph_value left = eph_slot(node, LEFT);
  if (left == EPH_NIL) return 1;
  return 1 + count_nodes(left) + count_nodes(eph_slot(node, RIGHT));
}

static void check_tree(eph_value tree, int depth, const char *what) {
  if (tree == EPH_NIL || count_nodes(tree) != gct_tree_size(depth)) gct_fail(what);
}

static void time_construction(eph_heap *h, const gcbench_params *p, int depth) {
  long iters = gcbench_num_iters(p, depth);
  EPH_FRAME(h);
  EPH_LOCAL(h, temp);
  printf("Creating %ld trees of depth %d\n", iters, depth);

  double t0 = gct_wall();
  for (long i = 0; i < iters; i++) {
    temp = new_node(h);
    populate(h, depth, temp);
    if (i == iters - 1) check_tree(temp, depth, "top-down tree");
    temp = EPH_NIL;
  }
  printf("\tTop down construction took %d msec\n", gct_msec(t0));

  t0 = gct_wall();
  for (long i = 0; i < iters; i++) {
    temp = make_tree(h, depth);
    if (i == iters - 1) check_tree(temp, depth, "bottom-up tree");
    temp = EPH_NIL;
  }
  printf("\tBottom up construction took %d msec\n", gct_msec(t0));
  EPH_UNFRAME(h);
}

int main(int argc, char **argv) {
  int verbose;
  gcbench_params p = gcbench_parse(argc, argv, &verbose);

  gct_timer timer = gct_timer_start();
  eph_heap *h;
  eph_error err;
  if (eph_heap_new(NULL, &h, &err) != EPH_OK) gct_fail(err.message);
  node_class = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  double_array_class = eph_class_register(h, "DoubleArray", EPH_FORMAT_BYTES);
  if (node_class == 0 || double_array_class == 0) gct_fail(eph_heap_error(h));
  EPH_FRAME(h);
  EPH_LOCAL(h, temp_tree);
  EPH_LOCAL(h, long_lived_tree);
  EPH_LOCAL(h, array);

  gcbench_print_header(&p, "ephemera", (long)sizeof(eph_header) + NODE_SLOTS * (long)sizeof(eph_value));
  double t0 = gct_wall();

  /* Stretch the memory space quickly. */
  temp_tree = make_tree(h, p.stretch_depth);
  check_tree(temp_tree, p.stretch_depth, "stretch tree");
  temp_tree = EPH_NIL;

  /* Create a long-lived object. */
  printf(" Creating a long-lived binary tree of depth %d\n", p.long_lived_depth);
  long_lived_tree = new_node(h);
  populate(h, p.long_lived_depth, long_lived_tree);

  /* Create a long-lived array, filling half of it. */
  printf(" Creating a long-lived array of %ld doubles\n", p.array_size);
  array = eph_alloc_bytes(h, double_array_class, (size_t)p.array_size * sizeof(double));
  if (array == EPH_NIL) gct_fail(eph_heap_error(h));
  double *a = (double *)(void *)eph_bytes(array); /* valid until the next allocation */
  for (long i = 0; i < p.array_size / 2; ++i) a[i] = 1.0 / (double)i;

  for (int d = p.min_depth; d <= p.max_depth; d += 2) time_construction(h, &p, d);

  long k = gcbench_check_index(&p);
  a = (double *)(void *)eph_bytes(array);
  if (a[k] != 1.0 / (double)k) gct_fail("long-lived array lost its contents");
  check_tree(long_lived_tree, p.long_lived_depth, "long-lived tree");
  printf("Completed in %d msec\n", gct_msec(t0));
  EPH_UNFRAME(h);

  eph_heap_stats st;
  eph_heap_stats_get(h, &st);
  gct_eph_events ev = gct_eph_events_sum(h);
  char info[256];
  snprintf(info, sizeof info,
           "scavenges=%llu,full=%llu,gc_s=%.3f,gc_cpu_s=%.3f,full_cpu_s=%.3f,node_bytes=%ld,alloc_mb=%.1f,objects=%llu,copied_mb=%.1f,promoted_mb=%.1f,objects_moved=%llu,remset_scanned=%llu",
           (unsigned long long)st.scavenges, (unsigned long long)st.full_gcs, (double)(st.scavenge_ns + st.full_ns) * 1e-9,
           (double)st.gc_cpu_ns * 1e-9, (double)ev.full_cpu_ns * 1e-9, (long)sizeof(eph_header) + NODE_SLOTS * (long)sizeof(eph_value),
           (double)st.bytes_allocated / 1048576.0, (unsigned long long)st.objects_allocated,
           (double)st.bytes_copied / 1048576.0, (double)st.bytes_promoted / 1048576.0, ev.moved, ev.remset);
  gct_report(&timer, info);
  if (verbose) eph_heap_stats_print(h, stderr);
  eph_heap_free(h);
  return 0;
}
