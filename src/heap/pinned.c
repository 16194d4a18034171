/*
 * pinned.c — the pinned space: ephemerons that no collection moves or
 * reclaims (ephemeron.h, "Pinned ephemerons").
 *
 * One reserved address range beside old space, committed from the bottom
 * as it fills: [pinned_base, pinned_top) holds pinned objects back to back,
 * and *fillers* where a dropped class's objects were (class index 0, byte
 * format, walked over like any object).  Allocation bumps pinned_top; a
 * full GC that frees a drop lowers it past trailing fillers, and gives the
 * space back to the OS when nothing is left.  Free space between live
 * pinned objects is not reused: a tool drops all of its objects at once.
 *
 * The collectors treat pinned objects as old objects that are always
 * alive: the write barrier remembers them, the scavenger scans them from
 * the remembered set, and a full GC traces their slots as roots (fullgc.c)
 * without marking, sliding or forwarding them.
 */
#include "heap_internal.h"

/* Address space for the pinned space: 2.8 G ephemerons of 24 bytes; less
 * if the OS says no (a run under a limit on address space). */
#define PINNED_RESERVATION (64 * EPH_GiB)
/* Commit steps: half of what is committed, within these bounds.  Peak
 * committed memory is what the profiler's memory overhead counts: a first
 * step of 4 MiB cost sph 9 % of its heap at 1 % sampling, where the space
 * holds a few hundred ephemerons. */
#define PINNED_COMMIT_MIN (64 * EPH_KiB)
#define PINNED_COMMIT_MAX (4 * EPH_MiB)

static bool reserve(eph_heap *h) {
  size_t want = PINNED_RESERVATION;
  char *base = NULL;
  while (!(base = ephh_os_reserve(want)) && want > 64 * EPH_MiB) want /= 2;
  if (!base) return false;
  h->pinned_base = h->pinned_top = base;
  h->pinned_reserved = want;
  return true;
}

/* Room for `bytes` more within the reservation and the maximum heap. */
static bool grow(eph_heap *h, size_t bytes) {
  size_t need = ephh_pinned_used(h) + bytes;
  size_t step = h->pinned_committed / 2;
  step = step < PINNED_COMMIT_MIN ? PINNED_COMMIT_MIN : step > PINNED_COMMIT_MAX ? PINNED_COMMIT_MAX : step;
  size_t target = ephh_round_up(need > h->pinned_committed + step ? need : h->pinned_committed + step, h->page);
  size_t others = ephh_committed(h) - h->pinned_committed; /* new and old space */
  bool over_max = h->params.max_heap && others + target > h->params.max_heap;
  if (target > h->pinned_reserved || over_max) target = ephh_round_up(need, h->page); /* no more than needed */
  over_max = h->params.max_heap && others + target > h->params.max_heap;
  if (target > h->pinned_reserved || over_max) {
    ephh_set_error(h, EPH_ERR_HEAP_EXHAUSTED,
                  "heap exhausted: the pinned space cannot grow by %zu bytes (%zu in use, maximum heap %zu bytes)", bytes,
                  ephh_pinned_used(h), h->params.max_heap);
    return false;
  }
  if (!ephh_os_commit(h->pinned_base + h->pinned_committed, target - h->pinned_committed, false)) {
    ephh_set_error(h, EPH_ERR_NOMEM, "the OS refused %zu more bytes of pinned space", target - h->pinned_committed);
    return false;
  }
  h->pinned_committed = target;
  ephh_note_committed(h);
  return true;
}

eph_value ephh_pinned_alloc(eph_heap *h, eph_class_id cls, eph_format fmt, size_t payload) {
  size_t total = ephh_object_total(h, payload);
  if (!h->pinned_base && !reserve(h)) {
    ephh_set_error(h, EPH_ERR_NOMEM, "cannot reserve address space for the pinned space");
    return EPH_NIL;
  }
  if (ephh_pinned_used(h) + total > h->pinned_committed && !grow(h, total)) return EPH_NIL;
  return ephh_init_object(ephh_pinned_take(h, cls, total), cls, fmt, payload, total);
}

eph_status eph_pinned_drop(eph_heap *h, eph_class_id cls) {
  if (eph_class_format(h, cls) != EPH_FORMAT_EPHEMERON) {
    ephh_set_error(h, EPH_ERR_INVALID, "class index %u is not an ephemeron class", cls);
    return EPH_ERR_INVALID;
  }
  if (!h->classes[cls].pinned_dropped) h->pinned_drops++;
  h->classes[cls].pinned_dropped = true;
  return EPH_OK;
}

void eph_pinned_range(const eph_heap *h, uintptr_t *base, uintptr_t *top) {
  *base = (uintptr_t)h->pinned_base;
  *top = (uintptr_t)h->pinned_top;
}

size_t ephh_pinned_kept(const eph_heap *h) {
  size_t kept = 0;
  for (size_t c = 1; c < h->classes_len; c++)
    if (!h->classes[c].pinned_dropped) kept += h->classes[c].pinned_objects;
  return kept;
}

/* A filler where obj was: the same span, walked over, never traced. */
static void make_filler(eph_heap *h, eph_value obj) {
  size_t span = ephh_span(h, obj);
  *eph_header_of(obj) = eph_make_header(0, EPH_FORMAT_BYTES, span - sizeof(eph_header) - h->fast.trailer_bytes);
}

/* The end of a full GC (after its on_collect, which may still read them):
 * the dropped classes' objects leave the mourn queue and become fillers. */
void ephh_pinned_free_dropped(eph_heap *h) {
  size_t keep = h->mourn_head;
  for (size_t i = h->mourn_head; i < h->mourn.len; i++) {
    eph_value e = h->mourn.items[i];
    if (!(ephh_in_pinned(h, e) && h->classes[eph_class_of(e)].pinned_dropped)) h->mourn.items[keep++] = e;
  }
  h->mourn.len = keep;
  /* Fillers only below the last object kept: the space above it is free.
   * When nothing is kept (a profile's stop drops all of its ephemerons,
   * millions of them) the space is not walked at all. */
  size_t kept = ephh_pinned_kept(h);
  char *last_end = h->pinned_base; /* the end of the last object kept */
  for (char *p = h->pinned_base; kept && p < h->pinned_top; p = ephh_next_object(h, p)) {
    eph_class_id cls = eph_class_of((eph_value)p);
    if (cls && !h->classes[cls].pinned_dropped) last_end = ephh_next_object(h, p);
  }
  for (char *p = h->pinned_base; p < last_end; p = ephh_next_object(h, p)) {
    eph_class_id cls = eph_class_of((eph_value)p);
    if (cls && h->classes[cls].pinned_dropped) make_filler(h, (eph_value)p);
  }
  h->pinned_top = last_end;
  if (h->pinned_top == h->pinned_base && h->pinned_committed) {
    ephh_os_decommit(h->pinned_base, h->pinned_committed);
    h->pinned_committed = 0;
  }
  for (size_t c = 1; c < h->classes_len; c++) {
    if (h->classes[c].pinned_dropped) h->classes[c].pinned_objects = 0;
    h->classes[c].pinned_dropped = false;
  }
  h->pinned_drops = 0;
}

void ephh_pinned_release(eph_heap *h) {
  if (h->pinned_base) ephh_os_release(h->pinned_base, h->pinned_reserved);
  h->pinned_base = h->pinned_top = NULL;
  h->pinned_reserved = h->pinned_committed = 0;
}
