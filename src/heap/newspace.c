/*
 * newspace.c — eden and the two survivor spaces, in one mapping.
 * Eden is 5/7 of new space and each survivor space 1/7, as in Pharo.
 * The mapping reserves (but does not commit) a second eden after them,
 * for eden pairs (eph_heap_set_eden_pair): inside new space, so that
 * eph_is_young stays one range test whichever eden is in use.
 */
#include "heap_internal.h"

eph_status ephh_new_space_init(eph_heap *h, size_t eden_bytes) {
  size_t eden = ephh_round_up(eden_bytes, h->page);
  size_t surv = ephh_survivor_bytes(eden_bytes, h->page);
  size_t total = ephh_new_space_bytes(eden_bytes, h->page);
  char *base = ephh_os_reserve(total + eden);
  /* Huge pages (params.huge_pages): eden is filled from one end to the
   * other again and again, and a short run otherwise spends a good part of
   * its time faulting it in 4 KiB at a time. */
  if (!base || !ephh_os_commit(base, total, h->params.huge_pages)) {
    ephh_os_release(base, total + eden);
    ephh_set_error(h, EPH_ERR_NOMEM, "cannot map %zu bytes of new space", total);
    return EPH_ERR_NOMEM;
  }
  h->new_base = base;
  h->new_bytes = total;
  h->new_reserved = total + eden;
  h->survivor_bytes = surv;
  h->eden = (eph_space){base, base, base + eden};
  h->past = (eph_space){base + eden, base + eden, base + eden + surv};
  h->future = (eph_space){base + eden + surv, base + eden + surv, base + total};
  h->fast.alloc_top = h->eden.start;
  ephh_clock_rebase(h);
  h->fast.young_lo = (uintptr_t)base;
  h->spare_eden = (eph_space){base + total, base + total, base + total + eden};
  h->eden_pair = false;
  h->fast.young_size = total + eden;
  size_t large = surv / 2; /* would rarely fit a survivor space: allocate old */
  h->fast.large_object_bytes = large < EPH_LARGE_OBJECT_MAX ? large : EPH_LARGE_OBJECT_MAX;
  ephh_update_alloc_limit(h);
  return EPH_OK;
}

void ephh_new_space_release(eph_heap *h) {
  ephh_os_release(h->new_base, h->new_reserved);
  h->new_base = NULL;
}

/* Commits or decommits the second eden.  Whichever of the two is in use
 * stays; the other is the spare. */
bool eph_heap_set_eden_pair(eph_heap *h, bool on) {
  if (on == h->eden_pair) return true;
  if (on && (!ephh_eden_walk_on(h) || !h->new_base || !ephh_eden_walk_spare_log(h))) return false;
  size_t bytes = (size_t)(h->spare_eden.end - h->spare_eden.start);
  if (on && !ephh_os_commit(h->spare_eden.start, bytes, h->params.huge_pages)) return false;
  if (!on) ephh_os_decommit(h->spare_eden.start, bytes);
  h->eden_pair = on;
  h->spare_eden.top = h->spare_eden.start;
  ephh_note_committed(h);
  return true;
}

bool eph_heap_eden_pair(const eph_heap *h) { return h->eden_pair; }

/* After a scavenge's on_collect, in pair mode: the evacuated eden is left
 * as it was and the mutator goes on in the other. */
void ephh_new_space_swap_eden(eph_heap *h) {
  eph_space retired = h->eden;
  h->eden = h->spare_eden;
  h->spare_eden = retired;
}
