/*
 * oldspace.c — old space: one reserved range committed from the bottom.
 *
 * Growth: by at least `growth headroom` at a time, never past the maximum
 * heap when the mutator allocates.  During a collection promotion may not
 * fail, so it can commit past the maximum into reserved slack; the heap is
 * then `over_max` until a full GC brings it back, and allocation reports
 * exhaustion meanwhile.  After a full GC, free space above `shrink
 * threshold` goes back to the OS.
 */
#include "heap_internal.h"

/* Headroom above max_heap that promotion may borrow: all of new space, twice. */
static size_t reservation_for(const eph_heap *h) {
  if (h->params.max_heap) return ephh_round_up(h->params.max_heap + 4 * h->new_bytes, h->page);
  return 256 * EPH_GiB;
}

size_t ephh_old_limit(const eph_heap *h) {
  if (!h->params.max_heap) return h->old_reserved;
  size_t others = h->new_bytes + h->pinned_committed; /* the pinned space counts too */
  return h->params.max_heap > others ? (h->params.max_heap - others) / h->page * h->page : 0;
}

eph_status ephh_old_space_init(eph_heap *h) {
  size_t want = reservation_for(h);
  char *base = NULL;
  while (!(base = ephh_os_reserve(want)) && want > EPH_GiB) want /= 2;
  if (!base) {
    ephh_set_error(h, EPH_ERR_NOMEM, "cannot reserve address space for old space");
    return EPH_ERR_NOMEM;
  }
  h->old_base = h->old_top = base;
  h->old_reserved = want;
  size_t first = ephh_round_up(h->params.growth_headroom, h->page);
  if (first > ephh_old_limit(h)) first = ephh_old_limit(h);
  /* Small pages here even with params.huge_pages: old space is decommitted
   * and committed again as it shrinks and grows, and faulting huge pages
   * back in made the kernel compact memory (dataframe and lambda at
   * default size spent 0.2-0.5 s more in the system, for no gain). */
  if (!ephh_os_commit(base, first, false)) {
    ephh_set_error(h, EPH_ERR_NOMEM, "cannot commit %zu bytes of old space", first);
    return EPH_ERR_NOMEM;
  }
  h->old_committed = first;
  h->full_threshold = (size_t)((double)h->params.growth_headroom * (1.0 + h->params.gc_ratio));
  return EPH_OK;
}

static bool grow_to(eph_heap *h, size_t committed) {
  if (!ephh_os_commit(h->old_base + h->old_committed, committed - h->old_committed, false)) return false;
  h->old_committed = committed;
  ephh_note_committed(h);
  return true;
}

/* Promotion target during a collection: may exceed max_heap, never fails
 * short of the reservation or the OS refusing memory. */
char *ephh_old_alloc_gc(eph_heap *h, size_t bytes) {
  size_t need = ephh_old_used(h) + bytes;
  if (need > h->old_committed) {
    size_t step = need - h->old_committed;
    if (step < h->params.growth_headroom) step = h->params.growth_headroom;
    size_t target = ephh_round_up(h->old_committed + step, h->page);
    if (target > h->old_reserved) target = ephh_round_up(need, h->page);
    if (target > h->old_reserved || !grow_to(h, target)) ephh_fatal(h, "old space cannot grow during a collection");
    if (h->old_committed > ephh_old_limit(h)) h->over_max = true;
  }
  char *p = h->old_top;
  h->old_top += bytes;
  return p;
}

/* Allocation outside a collection: NULL when the maximum heap or the OS
 * says no (the heap error says which); the caller may collect and retry. */
char *ephh_old_alloc_mutator(eph_heap *h, size_t bytes) {
  size_t need = ephh_old_used(h) + bytes;
  if (need > h->old_committed) {
    size_t limit = ephh_old_limit(h);
    size_t step = need - h->old_committed;
    if (step < h->params.growth_headroom) step = h->params.growth_headroom;
    size_t target = ephh_round_up(h->old_committed + step, h->page);
    if (target > limit) target = limit;
    if (target < need) {
      ephh_set_error(h, EPH_ERR_HEAP_EXHAUSTED,
                    "heap exhausted: %zu bytes needed in old space, %zu in use, maximum heap %zu bytes", bytes,
                    ephh_old_used(h), h->params.max_heap);
      return NULL;
    }
    if (!grow_to(h, target)) {
      ephh_set_error(h, EPH_ERR_NOMEM, "the OS refused %zu more bytes of old space", target - h->old_committed);
      return NULL;
    }
  }
  char *p = h->old_top;
  h->old_top += bytes;
  return p;
}

void ephh_old_space_resize_after_full(eph_heap *h) {
  size_t used = ephh_round_up(ephh_old_used(h), h->page);
  size_t target = h->old_committed;
  if (h->old_committed - used > h->params.shrink_threshold)
    target = ephh_round_up(used + h->params.shrink_threshold, h->page);
  size_t limit = ephh_old_limit(h);
  if (target > limit) target = used > limit ? used : limit;
  if (target < h->old_committed) {
    ephh_os_decommit(h->old_base + target, h->old_committed - target);
    h->old_committed = target;
  }
  h->over_max = ephh_old_used(h) > limit;
  ephh_set_full_threshold(h);
}

/* The next full GC comes when old space (as counted) has grown by the GC
 * ratio, from at least the growth headroom. */
void ephh_set_full_threshold(eph_heap *h) {
  size_t base = ephh_old_counted(h) > h->params.growth_headroom ? ephh_old_counted(h) : h->params.growth_headroom;
  h->full_threshold = (size_t)((double)base * (1.0 + h->params.gc_ratio));
}
