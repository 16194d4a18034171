/*
 * verify.c — the heap verifier.  Two passes: the first walks every space
 * object by object, checks each header and records where objects start;
 * the second checks every slot against those starts, the remembered set
 * against the slots, and the roots.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

typedef struct verifier {
  eph_heap *h;
  uint64_t *new_starts, *old_starts, *pinned_starts; /* one bit per word */
  size_t remembered_seen;
  bool failed;
} verifier;

static void fail(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(verifier *v, const char *fmt, ...) {
  if (v->failed) return;
  v->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->h->error, sizeof v->h->error, fmt, ap);
  va_end(ap);
}

static void set_start(uint64_t *bits, size_t w) { bits[w >> 6] |= UINT64_C(1) << (w & 63); }
static bool is_start(const uint64_t *bits, size_t w) { return (bits[w >> 6] >> (w & 63)) & 1u; }

static const char *space_name(const eph_heap *h, eph_value p) {
  if (ephh_in_eden(h, p)) return "eden";
  if (ephh_in_space(&h->past, p)) return "survivor space";
  if (ephh_in_old(h, p)) return "old space";
  if (ephh_in_pinned(h, p)) return "pinned space";
  return "nowhere";
}

static void walk_headers(verifier *v, char *start, char *top, uint64_t *starts, const char *bitmap_base, bool old) {
  eph_heap *h = v->h;
  for (char *p = start; p < top && !v->failed;) {
    eph_value obj = (eph_value)p;
    eph_header hdr = *eph_header_of(obj);
    if (hdr & EPH_HDR_FORWARDED) return fail(v, "object %p in %s has a forwarding header", (void *)p, space_name(h, obj));
    eph_class_id cls = eph_class_of(obj);
    bool filler = cls == 0 && ephh_in_pinned(h, obj) && eph_format_of(obj) == EPH_FORMAT_BYTES &&
                  !(hdr & (EPH_HDR_REMEMBERED | EPH_HDR_REMEMBERED_INERT | EPH_HDR_MOURNED)); /* pinned.c: no object starts here */
    if (filler) {
      p = ephh_next_object(v->h, p);
      continue;
    }
    if (cls < 1 || cls >= h->classes_len)
      return fail(v, "object %p in %s has unknown class index %u", (void *)p, space_name(h, obj), cls);
    if (eph_format_of(obj) != h->classes[cls].format)
      return fail(v, "object %p (%s) has format %d, its class has %d", (void *)p, h->classes[cls].name,
                  (int)eph_format_of(obj), (int)h->classes[cls].format);
    if (eph_format_of(obj) != EPH_FORMAT_BYTES && eph_size_bytes(obj) % EPH_WORD)
      return fail(v, "object %p (%s) has a pointer payload of %zu bytes, not whole slots", (void *)p,
                  h->classes[cls].name, eph_size_bytes(obj));
    if ((size_t)(top - p) < ephh_span(h, obj))
      return fail(v, "object %p (%s, %zu bytes) runs past the end of %s", (void *)p, h->classes[cls].name,
                  ephh_span(h, obj), space_name(h, obj));
    if (eph_format_of(obj) == EPH_FORMAT_EPHEMERON) {
      size_t fixed = ephh_ephemeron_fixed_slots(&h->classes[cls]);
      if (eph_size_bytes(obj) < fixed * EPH_WORD)
        return fail(v, "ephemeron %p (%s) has fewer than %zu slots", (void *)p, h->classes[cls].name, fixed);
      eph_value fin = fixed > EPH_EPHEMERON_FINALIZER ? eph_slot(obj, EPH_EPHEMERON_FINALIZER) : EPH_NIL;
      if (fin != EPH_NIL && (!eph_is_int(fin) || eph_int_value(fin) < 0 ||
          (eph_int_value(fin) > 0 && (size_t)eph_int_value(fin) >= h->finalizers_len)))
        return fail(v, "ephemeron %p (%s) has an invalid finaliser slot 0x%llx", (void *)p, h->classes[cls].name,
                    (unsigned long long)fin);
    } else if (hdr & EPH_HDR_MOURNED) {
      return fail(v, "object %p (%s) is flagged mourned but is no ephemeron", (void *)p, h->classes[cls].name);
    }
    if (hdr & (EPH_HDR_REMEMBERED | EPH_HDR_REMEMBERED_INERT)) {
      if (!old) return fail(v, "young object %p (%s) is marked remembered", (void *)p, h->classes[cls].name);
      v->remembered_seen += !!(hdr & EPH_HDR_REMEMBERED) + !!(hdr & EPH_HDR_REMEMBERED_INERT);
    }
    set_start(starts, (size_t)(p - bitmap_base) / EPH_WORD);
    p = ephh_next_object(v->h, p);
  }
}

/* Checks one value found at `where`; returns true if it is a young pointer. */
static bool check_value(verifier *v, eph_value val, const char *what, eph_value owner, size_t index) {
  eph_heap *h = v->h;
  if (eph_is_int(val) || val == EPH_NIL || val == EPH_TRUE || val == EPH_FALSE) return false;
  const char *owner_class = owner ? eph_class_name(h, eph_class_of(owner)) : "";
  if (val & 7) {
    fail(v, "%s %zu of %p%s%s holds 0x%llx, an invalid tag", what, index, (void *)owner, owner ? " " : "",
         owner_class, (unsigned long long)val);
    return false;
  }
  bool ok, young = false;
  if (ephh_in_eden(h, val)) {
    ok = is_start(v->new_starts, (size_t)(val - (uintptr_t)h->new_base) / EPH_WORD);
    young = true;
  } else if (ephh_in_space(&h->past, val)) {
    ok = is_start(v->new_starts, (size_t)(val - (uintptr_t)h->new_base) / EPH_WORD);
    young = true;
  } else if (ephh_in_old(h, val)) {
    ok = is_start(v->old_starts, (size_t)(val - (uintptr_t)h->old_base) / EPH_WORD);
  } else if (ephh_in_pinned(h, val)) {
    ok = is_start(v->pinned_starts, (size_t)(val - (uintptr_t)h->pinned_base) / EPH_WORD);
  } else {
    const char *where = eph_is_young(h, val) ? "the empty survivor space or free eden" : "outside the heap";
    fail(v, "%s %zu of %p%s%s points to %p, %s", what, index, (void *)owner, owner ? " " : "", owner_class,
         (void *)val, where);
    return false;
  }
  if (!ok)
    fail(v, "%s %zu of %p%s%s points to %p in %s, which is not the start of an object", what, index, (void *)owner,
         owner ? " " : "", owner_class, (void *)val, space_name(h, val));
  return young;
}

static void check_slots(verifier *v, char *start, char *top, bool old) {
  for (char *p = start; p < top && !v->failed; p = ephh_next_object(v->h, p)) {
    eph_value obj = (eph_value)p;
    if (eph_format_of(obj) == EPH_FORMAT_BYTES) continue;
    size_t n = eph_size_bytes(obj) / EPH_WORD;
    eph_header hdr = *eph_header_of(obj);
    for (size_t i = 0; i < n && !v->failed; i++) {
      bool young = check_value(v, eph_slot(obj, i), "slot", obj, i);
      /* an inert ephemeron's entry covers its key (remset.c) */
      bool covered = (hdr & EPH_HDR_REMEMBERED) || ((hdr & EPH_HDR_REMEMBERED_INERT) && i == EPH_EPHEMERON_KEY);
      if (young && old && !covered)
        fail(v, "old object %p (%s) holds young %p in slot %zu but is not remembered", (void *)p,
             eph_class_name(v->h, eph_class_of(obj)), (void *)eph_slot(obj, i), i);
    }
  }
}

static void check_layout(verifier *v) {
  eph_heap *h = v->h;
  if (h->fast.alloc_top < h->eden.start || h->fast.alloc_top > h->eden.end) fail(v, "eden top out of bounds");
  if (h->past.top < h->past.start || h->past.top > h->past.end) fail(v, "survivor top out of bounds");
  if (h->future.top != h->future.start) fail(v, "the empty survivor space is not empty");
  if (h->old_top < h->old_base || ephh_old_used(h) > h->old_committed) fail(v, "old space top out of bounds");
  if (h->pinned_top < h->pinned_base || ephh_pinned_used(h) > h->pinned_committed) fail(v, "pinned space top out of bounds");
  if (h->fast.alloc_limit > h->eden.end) fail(v, "allocation limit beyond eden");
  if (h->fast.allocated_base != ephh_clock_base(h))
    fail(v, "the allocation clock's base does not match eden's start and the bytes allocated");
}

/* Entry i of the remembered set: of its plain part (remset), then its
 * inert part (remset_inert). */
static eph_value remset_entry(const eph_heap *h, size_t i) {
  return i < h->remset_len ? h->remset[i] : h->remset_inert.items[i - h->remset_len];
}

static void check_remset(verifier *v) {
  eph_heap *h = v->h;
  size_t entries = h->remset_len + h->remset_inert.len;
  for (size_t i = 0; i < entries && !v->failed; i++) {
    eph_value entry = remset_entry(h, i);
    bool inert = entry & REMSET_INERT;
    if (inert != (i >= h->remset_len))
      return fail(v, "remembered set entry %zu (%p) is in the %s part but %s tagged inert", i,
                  (void *)(entry & ~REMSET_INERT), inert ? "plain" : "inert", inert ? "is" : "is not");
    eph_value obj = entry & ~REMSET_INERT;
    bool old = ephh_in_old(h, obj) && is_start(v->old_starts, (size_t)(obj - (uintptr_t)h->old_base) / EPH_WORD);
    bool pinned =
        ephh_in_pinned(h, obj) && is_start(v->pinned_starts, (size_t)(obj - (uintptr_t)h->pinned_base) / EPH_WORD);
    if (!old && !pinned) return fail(v, "remembered set entry %zu (%p) is not an old or pinned object", i, (void *)obj);
    eph_header hdr = *eph_header_of(obj);
    if (!(hdr & (inert ? EPH_HDR_REMEMBERED_INERT : EPH_HDR_REMEMBERED)))
      return fail(v, "remembered set entry %zu (%p) lacks the remembered flag", i, (void *)obj);
    /* an inert entry: still a bare phantom, armed, whose value is no young
     * object unless a plain entry covers it */
    if (inert && (eph_format_of(obj) != EPH_FORMAT_EPHEMERON || (hdr & EPH_HDR_MOURNED) ||
                  eph_size_bytes(obj) != EPH_EPHEMERON_COMPACT_FIXED_SLOTS * EPH_WORD ||
                  !h->classes[eph_class_of(obj)].phantom ||
                  (eph_is_young(h, eph_slot(obj, EPH_EPHEMERON_VALUE)) && !(hdr & EPH_HDR_REMEMBERED))))
      return fail(v, "remembered set entry %zu (%p) is tagged inert but is no inert ephemeron", i, (void *)obj);
  }
  if (!v->failed && v->remembered_seen != entries)
    fail(v, "%zu objects are flagged remembered but the remembered set has %zu entries", v->remembered_seen,
         entries);
}

eph_status eph_heap_verify(eph_heap *h) {
  verifier v = {.h = h};
  size_t new_words = h->fast.young_size / EPH_WORD, /* either eden of a pair */ old_words = ephh_old_used(h) / EPH_WORD;
  v.new_starts = calloc(new_words / 64 + 1, sizeof(uint64_t));
  v.old_starts = calloc(old_words / 64 + 1, sizeof(uint64_t));
  v.pinned_starts = calloc(ephh_pinned_used(h) / EPH_WORD / 64 + 1, sizeof(uint64_t));
  if (!v.new_starts || !v.old_starts || !v.pinned_starts) {
    free(v.new_starts);
    free(v.old_starts);
    free(v.pinned_starts);
    ephh_set_error(h, EPH_ERR_NOMEM, "verifier: no memory for its tables");
    return EPH_ERR_NOMEM;
  }
  check_layout(&v);
  if (!v.failed) walk_headers(&v, h->eden.start, h->fast.alloc_top, v.new_starts, h->new_base, false);
  if (!v.failed) walk_headers(&v, h->past.start, h->past.top, v.new_starts, h->new_base, false);
  if (!v.failed) walk_headers(&v, h->old_base, h->old_top, v.old_starts, h->old_base, true);
  if (!v.failed) walk_headers(&v, h->pinned_base, h->pinned_top, v.pinned_starts, h->pinned_base, true);
  if (!v.failed) check_slots(&v, h->eden.start, h->fast.alloc_top, false);
  if (!v.failed) check_slots(&v, h->past.start, h->past.top, false);
  if (!v.failed) check_slots(&v, h->old_base, h->old_top, true);
  if (!v.failed) check_slots(&v, h->pinned_base, h->pinned_top, true);
  if (!v.failed) check_remset(&v);
  for (size_t i = 0; i < h->fast.roots_len && !v.failed; i++) check_value(&v, *h->fast.roots[i], "shadow-stack root", 0, i);
  for (size_t i = 0; i < h->fast.globals_len && !v.failed; i++) check_value(&v, *h->fast.globals[i], "global root", 0, i);
  for (size_t i = h->mourn_head; i < h->mourn.len && !v.failed; i++) {
    check_value(&v, h->mourn.items[i], "mourn queue entry", 0, i);
    if (!v.failed && !(eph_is_ptr(h->mourn.items[i]) && eph_ephemeron_is_mourned(h->mourn.items[i])))
      fail(&v, "mourn queue entry %zu is not a mourned ephemeron", i);
  }
  free(v.new_starts);
  free(v.old_starts);
  free(v.pinned_starts);
  if (v.failed) h->status = EPH_ERR_CORRUPT;
  return v.failed ? EPH_ERR_CORRUPT : EPH_OK;
}

void ephh_verify_after_gc(eph_heap *h) {
  if (eph_heap_verify(h) == EPH_OK) return;
  char msg[sizeof h->error];
  memcpy(msg, h->error, sizeof msg);
  ephh_raise(h, EPH_ERR_CORRUPT, "verifier after collection %llu: %s",
            (unsigned long long)(h->stats.scavenges + h->stats.full_gcs), msg);
  abort();
}
