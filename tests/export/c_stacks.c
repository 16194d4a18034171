/*
 * c_stacks.c — `eph-c-stacks SPEC`: a program embedding the heap with two
 * known call paths to one allocation site, marked with EPH_CALLER:
 * main -> run -> via_a -> make (4000 objects a round) and
 * main -> run -> via_b -> make (1000 a round), 20 rounds, every object
 * dropped at once.  Profiles itself with SPEC (profile.h), e.g.
 * "mode=gc,sample=1/20,stacks=4,out=c.eph".
 */
#include <stdio.h>

#include "ephemera/heap.h"
#include "ephemera/profile.h"

static eph_class_id Node;

static void make(eph_heap *h, int n) {
  for (int i = 0; i < n; i++) {
    EPH_AT(h);
    (void)eph_alloc(h, Node, 2);
  }
}

static void via_a(eph_heap *h) {
  EPH_CALLER(h);
  make(h, 4000);
  EPH_CALLER_END(h);
}

static void via_b(eph_heap *h) {
  EPH_CALLER(h);
  make(h, 1000);
  EPH_CALLER_END(h);
}

static void run(eph_heap *h) {
  for (int round = 0; round < 20; round++) {
    EPH_CALLER(h);
    via_a(h);
    EPH_CALLER_END(h);
    EPH_CALLER(h);
    via_b(h);
    EPH_CALLER_END(h);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: eph-c-stacks SPEC\n");
    return 2;
  }
  eph_heap *h;
  eph_error err;
  if (eph_heap_new(NULL, &h, &err) != EPH_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  Node = eph_class_register(h, "Node", EPH_FORMAT_POINTERS);
  eph_profile_spec spec;
  eph_profile_spec_init(&spec);
  if (eph_profile_spec_parse(&spec, argv[1], &err) != EPH_OK || eph_profile_start(h, &spec, NULL, 0, &err) != EPH_OK) {
    fprintf(stderr, "%s\n", err.message);
    eph_heap_free(h);
    return 1;
  }
  run(h);
  int rc = eph_profile_stop(h, NULL, &err) == EPH_OK ? 0 : 1;
  if (rc) fprintf(stderr, "%s\n", err.message);
  eph_heap_free(h);
  return rc;
}
