/*
 * binary-trees (Computer Language Benchmarks Game) on the Ephemera heap.
 *
 * A Node is a pointer object with two slots (left, right); leaves hold nil.
 * Every value held across an allocation is on the shadow stack, and every
 * pointer store goes through eph_store.
 */
#include <ephemera/heap.h>

#include "common.h"
#include "eph_events.h"

enum { LEFT, RIGHT, NODE_SLOTS };

static eph_class_id node_class;

static eph_value new_node(eph_heap *h) {
  eph_value n = eph_alloc(h, node_class, NODE_SLOTS);
  if (EPH_UNLIKELY(n == EPH_NIL)) gct_fail(eph_heap_error(h));
  return n;
}

static eph_value bottom_up_tree(eph_heap *h, int depth) {
  if (depth <= 0) return new_node(h);
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  left = bottom_up_tree(h, depth - 1);
  right = bottom_up_tree(h, depth - 1);
  eph_value node = new_node(h);
  eph_store(h, node, LEFT, left);
  eph_store(h, node, RIGHT, right);
  EPH_RETURN(h, node);
}

/* Node count; never allocates, so no roots needed. */
static long item_check(eph_value node) {
  eph_value left = eph_slot(node, LEFT);
  if (left == EPH_NIL) return 1;
  return 1 + item_check(left) + item_check(eph_slot(node, RIGHT));
}

int main(int argc, char **argv) {
  int verbose;
  int max_depth = binarytrees_parse(argc, argv, &verbose);
  int stretch_depth = max_depth + 1;

  gct_timer timer = gct_timer_start();
  eph_heap *h;
  eph_error err;
  if (eph_heap_new(NULL, &h, &err) != EPH_OK) gct_fail(err.message);
  node_class = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  if (node_class == 0) gct_fail(eph_heap_error(h));
  EPH_FRAME(h);

  {
    eph_value stretch = bottom_up_tree(h, stretch_depth);
    long check = item_check(stretch);
    printf("stretch tree of depth %d\t check: %ld\n", stretch_depth, check);
    binarytrees_expect(check, gct_tree_size(stretch_depth), "stretch tree");
  }

  EPH_LOCAL(h, long_lived);
  long_lived = bottom_up_tree(h, max_depth);

  for (int depth = BINARYTREES_MIN_DEPTH; depth <= max_depth; depth += 2) {
    long iterations = binarytrees_iterations(max_depth, depth);
    long check = 0;
    for (long i = 0; i < iterations; i++) check += item_check(bottom_up_tree(h, depth));
    printf("%ld\t trees of depth %d\t check: %ld\n", iterations, depth, check);
    binarytrees_expect(check, iterations * gct_tree_size(depth), "temporary trees");
  }

  long check = item_check(long_lived);
  printf("long lived tree of depth %d\t check: %ld\n", max_depth, check);
  binarytrees_expect(check, gct_tree_size(max_depth), "long lived tree");
  EPH_UNFRAME(h);

  eph_heap_stats st;
  eph_heap_stats_get(h, &st);
  gct_eph_events ev = gct_eph_events_sum(h);
  char info[256];
  snprintf(info, sizeof info, "scavenges=%llu,full=%llu,gc_s=%.3f,gc_cpu_s=%.3f,full_cpu_s=%.3f,objects_moved=%llu,remset_scanned=%llu,bytes_moved=%llu",
           (unsigned long long)st.scavenges,
           (unsigned long long)st.full_gcs, (double)(st.scavenge_ns + st.full_ns) * 1e-9, (double)st.gc_cpu_ns * 1e-9, (double)ev.full_cpu_ns * 1e-9, ev.moved, ev.remset,
           (unsigned long long)(st.bytes_copied + st.bytes_promoted));
  gct_report(&timer, info);
  if (verbose) eph_heap_stats_print(h, stderr);
  eph_heap_free(h);
  return 0;
}
