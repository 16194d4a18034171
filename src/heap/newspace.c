/*
 * newspace.c — eden and the two survivor spaces, in one mapping.
 * Eden is 5/7 of new space and each survivor space 1/7, as in Pharo.
 */
#include "heap_internal.h"

eph_status ephh_new_space_init(eph_heap *h, size_t eden_bytes) {
  size_t eden = ephh_round_up(eden_bytes, h->page);
  size_t surv = ephh_round_up(eden_bytes / EPH_SURVIVOR_DIVISOR, h->page);
  size_t total = eden + 2 * surv;
  char *base = ephh_os_reserve(total);
  /* Huge pages (params.huge_pages): eden is filled from one end to the
   * other again and again, and a short run otherwise spends a good part of
   * its time faulting it in 4 KiB at a time. */
  if (!base || !ephh_os_commit(base, total, h->params.huge_pages)) {
    ephh_os_release(base, total);
    ephh_set_error(h, EPH_ERR_NOMEM, "cannot map %zu bytes of new space", total);
    return EPH_ERR_NOMEM;
  }
  h->new_base = base;
  h->new_bytes = total;
  h->survivor_bytes = surv;
  h->eden = (eph_space){base, base, base + eden};
  h->past = (eph_space){base + eden, base + eden, base + eden + surv};
  h->future = (eph_space){base + eden + surv, base + eden + surv, base + total};
  h->fast.alloc_top = h->eden.start;
  h->fast.young_lo = (uintptr_t)base;
  h->fast.young_size = total;
  size_t large = surv / 2; /* would rarely fit a survivor space: allocate old */
  h->fast.large_object_bytes = large < EPH_LARGE_OBJECT_MAX ? large : EPH_LARGE_OBJECT_MAX;
  ephh_update_alloc_limit(h);
  return EPH_OK;
}

void ephh_new_space_release(eph_heap *h) {
  ephh_os_release(h->new_base, h->new_bytes);
  h->new_base = NULL;
}
