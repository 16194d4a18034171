/*
 * tests/fuzz/model.c — the shadow model and the heap-vs-model walk.
 *
 * The model is the mutator's belief: for every object it ever allocated and
 * can still reach, its id, kind, size and the expected content of every slot;
 * for every root, the expected value.  fz_walk follows the model graph from
 * the roots and, in parallel, the heap graph from the real roots, and fails
 * on the first difference.  Records the walk does not reach are garbage and
 * are forgotten (their ids are never reused).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/ephemeron.h"
#include "fuzz.h"

const struct fz_kind_info fz_kinds[FZ_NKINDS] = {
    [FZ_NODE] = {"FuzzNode", EPH_FORMAT_POINTERS},  [FZ_PAIR] = {"FuzzPair", EPH_FORMAT_POINTERS},
    [FZ_ARRAY] = {"FuzzArray", EPH_FORMAT_POINTERS}, [FZ_BYTES] = {"FuzzBytes", EPH_FORMAT_BYTES},
    [FZ_STRING] = {"FuzzString", EPH_FORMAT_BYTES},  [FZ_EPH] = {"FuzzEph", EPH_FORMAT_EPHEMERON},
    [FZ_CEPH] = {"FuzzCompactEph", EPH_FORMAT_EPHEMERON},
};

/* --- records ----------------------------------------------------------------- */

void fz_model_init(fz_model *m) {
  memset(m, 0, sizeof *m);
  m->epoch = 1;
  /* all roots nil (0), all globals unregistered until main registers them */
}

void fz_model_free(fz_model *m) {
  for (uint32_t i = 0; i < m->nobjs; i++) free(m->objs[i].slots);
  free(m->objs);
  free(m->free_mids);
  free(m->stack);
  free(m->addrs);
  free(m->eph_mid);
  free(m->eph_state);
  free(m->pinned);
  memset(m, 0, sizeof *m);
}

uint32_t fz_model_new(fz_model *m, fz_kind kind, size_t size) {
  uint32_t mid;
  if (m->nfree) {
    mid = m->free_mids[--m->nfree];
  } else {
    if (m->nobjs == m->cap) {
      m->cap = m->cap ? m->cap * 2 : 1024;
      m->objs = fz_xrealloc(m->objs, m->cap * sizeof *m->objs);
    }
    mid = m->nobjs++;
  }
  fz_obj *o = &m->objs[mid];
  memset(o, 0, sizeof *o);
  o->id = ++m->next_id;
  o->kind = kind;
  o->size = size;
  if (!fz_kind_is_bytes(kind)) {
    o->nslots = size / sizeof(eph_value);
    if (o->nslots) {
      o->slots = calloc(o->nslots, sizeof *o->slots); /* all nil */
      if (!o->slots) fz_xrealloc(NULL, SIZE_MAX);
      if (o->nslots > fz_id_slot(kind)) o->slots[fz_id_slot(kind)] = (fz_mval)eph_int((intptr_t)o->id);
    }
  }
  m->records++;
  return mid;
}

void fz_eph_note(fz_model *m, uint64_t id, uint32_t mid) {
  if (id >= m->eph_cap) {
    size_t cap = m->eph_cap ? m->eph_cap : 4096;
    while (cap <= id) cap *= 2;
    m->eph_mid = fz_xrealloc(m->eph_mid, cap * sizeof *m->eph_mid);
    m->eph_state = fz_xrealloc(m->eph_state, cap);
    memset(m->eph_state + m->eph_cap, 0, cap - m->eph_cap);
    for (size_t i = m->eph_cap; i < cap; i++) m->eph_mid[i] = FZ_NONE;
    m->eph_cap = cap;
  }
  m->eph_mid[id] = mid;
  if (!m->eph_state[id]) m->eph_state[id] = 1;
}

uint32_t fz_eph_lookup(const fz_model *m, uint64_t id) { return id < m->eph_cap ? m->eph_mid[id] : FZ_NONE; }

static void model_release(fz_model *m, uint32_t mid) {
  fz_obj *o = &m->objs[mid];
  if (fz_kind_is_eph(o->kind) && o->id < m->eph_cap) m->eph_mid[o->id] = FZ_NONE;
  free(o->slots);
  memset(o, 0, sizeof *o);
  if (m->nfree == m->free_cap) {
    m->free_cap = m->free_cap ? m->free_cap * 2 : 1024;
    m->free_mids = fz_xrealloc(m->free_mids, m->free_cap * sizeof *m->free_mids);
  }
  m->free_mids[m->nfree++] = mid;
  m->records--;
}

/* --- byte pattern ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBu;
  x ^= x >> 31;
  return x;
}

/* Word j of the payload: the id itself for j == 0, then a hash. */
static uint64_t pattern_word(uint64_t id, uint32_t version, size_t j) {
  if (j == 0) return id;
  return mix64(id * 0x9E3779B97F4A7C15u + ((uint64_t)version << 40) + (uint64_t)j);
}

void fz_pattern_fill(uint8_t *p, size_t n, uint64_t id, uint32_t version) {
  for (size_t j = 0; j * 8 < n; j++) {
    uint64_t w = pattern_word(id, version, j);
    size_t k = n - j * 8 < 8 ? n - j * 8 : 8;
    for (size_t b = 0; b < k; b++) p[j * 8 + b] = (uint8_t)(w >> (8 * b));
  }
}

ptrdiff_t fz_pattern_check(const uint8_t *p, size_t n, uint64_t id, uint32_t version) {
  size_t whole = n / 8;
  for (size_t j = 0; j < whole; j++) { /* fast path: whole words (little endian, as fill writes them) */
    uint64_t w = pattern_word(id, version, j), got;
    memcpy(&got, p + j * 8, 8);
    if (got != w) {
      for (size_t b = 0; b < 8; b++)
        if (p[j * 8 + b] != (uint8_t)(w >> (8 * b))) return (ptrdiff_t)(j * 8 + b);
    }
  }
  for (size_t j = whole; j * 8 < n; j++) {
    uint64_t w = pattern_word(id, version, j);
    size_t k = n - j * 8 < 8 ? n - j * 8 : 8;
    for (size_t b = 0; b < k; b++)
      if (p[j * 8 + b] != (uint8_t)(w >> (8 * b))) return (ptrdiff_t)(j * 8 + b);
  }
  return -1;
}

/* --- messages ---------------------------------------------------------------- */

const char *fz_describe_value(eph_value v, char *buf, size_t len) {
  if (v == EPH_NIL)
    snprintf(buf, len, "nil");
  else if (v == EPH_TRUE)
    snprintf(buf, len, "true");
  else if (v == EPH_FALSE)
    snprintf(buf, len, "false");
  else if (eph_is_int(v))
    snprintf(buf, len, "int %" PRIdPTR, eph_int_value(v));
  else if (eph_is_ptr(v))
    snprintf(buf, len, "ptr %#" PRIxPTR, v);
  else
    snprintf(buf, len, "invalid word %#" PRIxPTR, v);
  return buf;
}

const char *fz_describe_mval(fuzz *fz, fz_mval v, char *buf, size_t len) {
  if (!fz_is_ref(v)) return fz_describe_value((eph_value)v, buf, len);
  uint32_t mid = fz_ref_mid(v);
  if (mid >= fz->m.nobjs || fz->m.objs[mid].id == 0) {
    snprintf(buf, len, "ref to freed record %" PRIu32, mid);
  } else {
    const fz_obj *o = &fz->m.objs[mid];
    snprintf(buf, len, "ref to id %" PRIu64 " (%s, %zu bytes)", o->id, fz_kinds[o->kind].name, o->size);
  }
  return buf;
}

static const char *describe_obj(fuzz *fz, uint32_t mid, char *buf, size_t len) {
  const fz_obj *o = &fz->m.objs[mid];
  snprintf(buf, len, "id %" PRIu64 " (%s, %zu bytes)", o->id, fz_kinds[o->kind].name, o->size);
  return buf;
}

/* "local[3]", "global[1]" or "id 17 (FuzzNode, 24 bytes) slot 2". */
static const char *describe_where(fuzz *fz, uint32_t parent, size_t slot, char *buf, size_t len) {
  if (parent == FZ_NONE) {
    if (slot < FZ_NLOCALS)
      snprintf(buf, len, "local[%zu]", slot);
    else if (slot < FZ_NROOTS)
      snprintf(buf, len, "global[%zu]", slot - FZ_NLOCALS);
    else
      snprintf(buf, len, "pinned[%zu]", slot - FZ_NROOTS);
  } else {
    char o[96];
    snprintf(buf, len, "%s slot %zu", describe_obj(fz, parent, o, sizeof o), slot);
  }
  return buf;
}

/* --- object checks ------------------------------------------------------------ */

/* The cheap part of fz_check_ident, without messages. */
static bool ident_ok(fuzz *fz, uint32_t mid, eph_value a) {
  const fz_obj *o = &fz->m.objs[mid];
  if (!eph_is_ptr(a)) return false;
  eph_header hdr = *eph_header_of(a);
  eph_format fmt = fz_kinds[o->kind].format;
  if ((hdr & EPH_HDR_FORWARDED) || eph_class_of(a) != fz->cls[o->kind] || eph_format_of(a) != fmt ||
      eph_size_bytes(a) != o->size)
    return false;
  if (fmt == EPH_FORMAT_BYTES) {
    if (o->size >= 8) {
      uint64_t id;
      memcpy(&id, eph_bytes(a), sizeof id);
      return id == o->id;
    }
    return true;
  }
  size_t is = fz_id_slot(o->kind);
  return o->nslots <= is || eph_slot(a, is) == (eph_value)o->slots[is];
}

void fz_check_ident(fuzz *fz, uint32_t mid, eph_value a, const char *ctx) {
  if (ident_ok(fz, mid, a)) return;
  const fz_obj *o = &fz->m.objs[mid];
  char d[96];
  if (!eph_is_ptr(a)) fz_fail(fz, "%s: %s is not a pointer: %#" PRIxPTR, ctx, describe_obj(fz, mid, d, sizeof d), a);
  eph_header hdr = *eph_header_of(a);
  if (hdr & EPH_HDR_FORWARDED)
    fz_fail(fz, "%s: %s at %#" PRIxPTR " has a forwarded header %#" PRIx64 " outside a collection", ctx,
            describe_obj(fz, mid, d, sizeof d), a, (uint64_t)hdr);
  eph_format fmt = fz_kinds[o->kind].format;
  if (eph_class_of(a) != fz->cls[o->kind] || eph_format_of(a) != fmt || eph_size_bytes(a) != o->size)
    fz_fail(fz,
            "%s: %s at %#" PRIxPTR " has header %#" PRIx64 " (class %" PRIu32 ", format %d, %zu bytes); expected class %" PRIu32
            ", format %d",
            ctx, describe_obj(fz, mid, d, sizeof d), a, (uint64_t)hdr, eph_class_of(a), (int)eph_format_of(a),
            eph_size_bytes(a), fz->cls[o->kind], (int)fmt);
  if (fmt == EPH_FORMAT_BYTES) {
    if (o->size >= 8) {
      uint64_t id;
      memcpy(&id, eph_bytes(a), sizeof id);
      if (id != o->id)
        fz_fail(fz, "%s: byte object at %#" PRIxPTR " should be %s but carries id %" PRIu64 " (wrong object)", ctx, a,
                describe_obj(fz, mid, d, sizeof d), id);
    }
  } else if (o->nslots > fz_id_slot(o->kind)) {
    size_t is = fz_id_slot(o->kind);
    eph_value s0 = eph_slot(a, is);
    if (s0 != (eph_value)o->slots[is]) {
      char v[64];
      fz_fail(fz, "%s: object at %#" PRIxPTR " should be %s but its slot %zu holds %s (wrong object)", ctx, a,
              describe_obj(fz, mid, d, sizeof d), is, fz_describe_value(s0, v, sizeof v));
    }
  }
}

static void check_bytes(fuzz *fz, uint32_t mid, eph_value a, const char *ctx) {
  const fz_obj *o = &fz->m.objs[mid];
  ptrdiff_t bad = fz_pattern_check(eph_bytes(a), o->size, o->id, o->version);
  if (bad >= 0) {
    char d[96];
    fz_fail(fz, "%s: %s at %#" PRIxPTR ": payload byte %td is %#x, expected pattern v%" PRIu32, ctx,
            describe_obj(fz, mid, d, sizeof d), a, bad, eph_bytes(a)[bad], o->version);
  }
}

static void slot_mismatch(fuzz *fz, uint32_t parent, size_t slot, fz_mval exp, eph_value act, const char *ctx,
                          const char *why) {
  char w[160], e[96], f[64];
  fz_fail(fz, "%s: %s: expected %s, found %s%s", ctx, describe_where(fz, parent, slot, w, sizeof w),
          fz_describe_mval(fz, exp, e, sizeof e), fz_describe_value(act, f, sizeof f), why);
}

void fz_check_object(fuzz *fz, uint32_t mid, eph_value a, const char *ctx) {
  fz_check_ident(fz, mid, a, ctx);
  const fz_obj *o = &fz->m.objs[mid];
  if (fz_kind_is_bytes(o->kind)) {
    check_bytes(fz, mid, a, ctx);
    return;
  }
  for (size_t k = 0; k < o->nslots; k++) {
    fz_mval exp = o->slots[k];
    eph_value act = eph_slot(a, k);
    if (!fz_is_ref(exp)) {
      if ((fz_mval)act != exp) slot_mismatch(fz, mid, k, exp, act, ctx, "");
    } else {
      if (!eph_is_ptr(act)) slot_mismatch(fz, mid, k, exp, act, ctx, "");
      fz_check_ident(fz, fz_ref_mid(exp), act, ctx);
    }
  }
  fz->c.spot_checks++;
}

/* --- the walk ------------------------------------------------------------------ */

static size_t addr_hash(eph_value a) { return (size_t)((a >> 3) * 0x9E3779B97F4A7C15u >> 17); }

static void addr_insert_raw(fz_model *m, eph_value a, uint32_t mid) {
  size_t mask = m->addr_cap - 1;
  size_t i = addr_hash(a) & mask;
  while (m->addrs[i].epoch == m->epoch) i = (i + 1) & mask;
  m->addrs[i].addr = a;
  m->addrs[i].mid = mid;
  m->addrs[i].epoch = m->epoch;
}

/* Records that the walk found model record mid at address a; fails if another record is there. */
static void addr_insert(fuzz *fz, eph_value a, uint32_t mid) {
  fz_model *m = &fz->m;
  if ((m->addr_len + 1) * 2 > m->addr_cap) {
    struct fz_addr_slot *old = m->addrs;
    size_t old_cap = m->addr_cap;
    m->addr_cap = old_cap ? old_cap * 2 : 4096;
    m->addrs = calloc(m->addr_cap, sizeof *m->addrs);
    if (!m->addrs) fz_xrealloc(NULL, SIZE_MAX);
    for (size_t i = 0; i < old_cap; i++)
      if (old[i].epoch == m->epoch) addr_insert_raw(m, old[i].addr, old[i].mid);
    free(old);
  }
  size_t mask = m->addr_cap - 1;
  for (size_t i = addr_hash(a) & mask; m->addrs[i].epoch == m->epoch; i = (i + 1) & mask) {
    if (m->addrs[i].addr == a) {
      char d1[96], d2[96];
      fz_fail(fz, "walk: %s and %s are the same heap object at %#" PRIxPTR " (two objects merged, or a stale pointer)",
              describe_obj(fz, m->addrs[i].mid, d1, sizeof d1), describe_obj(fz, mid, d2, sizeof d2), a);
    }
  }
  addr_insert_raw(m, a, mid);
  m->addr_len++;
}

static void visit(fuzz *fz, bool heap, fz_mval exp, eph_value act, uint32_t parent, size_t slot) {
  fz_model *m = &fz->m;
  if (!fz_is_ref(exp)) {
    if (heap && (fz_mval)act != exp) slot_mismatch(fz, parent, slot, exp, act, "walk", "");
    return;
  }
  uint32_t mid = fz_ref_mid(exp);
  if (mid >= m->nobjs || m->objs[mid].id == 0) {
    char w[160];
    fz_fail(fz, "fuzzer bug: %s refers to freed model record %" PRIu32, describe_where(fz, parent, slot, w, sizeof w), mid);
  }
  fz_obj *o = &m->objs[mid];
  if (heap && !eph_is_ptr(act)) slot_mismatch(fz, parent, slot, exp, act, "walk", "");
  if (o->epoch == m->epoch) {
    if (heap && o->addr != act) {
      char w[160], d[96];
      fz_fail(fz, "walk: %s points to %s at %#" PRIxPTR ", but another reference to it points to %#" PRIxPTR
                  " (object duplicated, or a reference not updated)",
              describe_where(fz, parent, slot, w, sizeof w), describe_obj(fz, mid, d, sizeof d), act, o->addr);
    }
    return;
  }
  o->epoch = m->epoch;
  if (heap) {
    o->addr = act;
    o->addr_gc = fz->gcs_seen;
    if (o->fate_serial && o->fate_serial == m->fate_serial && o->fate_addr != act) {
      char w[160], d[96];
      fz_fail(fz, "walk: %s found at %#" PRIxPTR " via %s, but eph_gc_fate said it would be at %#" PRIxPTR,
              describe_obj(fz, mid, d, sizeof d), act, describe_where(fz, parent, slot, w, sizeof w), o->fate_addr);
    }
  }
  if (heap) {
    /* Identity first, so a wrong pointer is reported where it was found. */
    if (!eph_is_ptr(act)) slot_mismatch(fz, parent, slot, exp, act, "walk", "");
    if (!ident_ok(fz, mid, act)) {
      char ctx[192], w[160];
      snprintf(ctx, sizeof ctx, "walk (reached from %s)", describe_where(fz, parent, slot, w, sizeof w));
      fz_check_ident(fz, mid, act, ctx); /* fails with the details */
    }
    addr_insert(fz, act, mid);
  }
  if (m->stack_len == m->stack_cap) {
    m->stack_cap = m->stack_cap ? m->stack_cap * 2 : 1024;
    m->stack = fz_xrealloc(m->stack, m->stack_cap * sizeof *m->stack);
  }
  m->stack[m->stack_len++] = mid;
}

static void scan(fuzz *fz, bool heap, uint32_t mid) {
  fz_model *m = &fz->m;
  const fz_obj *o = &m->objs[mid];
  m->live_objs++;
  m->live_bytes += fz_obj_bytes(o->size) + fz->trailer_bytes;
  eph_value a = o->addr;
  if (heap) {
    fz->c.objects_checked++;
    if (eph_is_young(fz->h, a)) m->live_young++;
    if (fz_kind_is_bytes(o->kind)) check_bytes(fz, mid, a, "walk");
    if (fz_kind_is_eph(o->kind) && eph_ephemeron_is_mourned(a) != o->mourned) {
      char d[96];
      fz_fail(fz, "walk: reachable ephemeron %s at %#" PRIxPTR " is %s in the heap, but its finaliser %s",
              describe_obj(fz, mid, d, sizeof d), a, o->mourned ? "not mourned" : "mourned",
              o->mourned ? "ran" : "never ran (mourned without a finaliser call, or mourned after a finaliser-free collection)");
    }
  }
  for (size_t k = 0; k < o->nslots; k++) visit(fz, heap, o->slots[k], heap ? eph_slot(a, k) : 0, mid, k);
}

void fz_walk(fuzz *fz, bool heap, bool sweep) {
  fz_model *m = &fz->m;
  m->epoch++;
  m->stack_len = 0;
  m->addr_len = 0;
  m->live_objs = m->live_bytes = m->live_young = 0;
  for (size_t r = 0; r < FZ_NROOTS; r++) {
    eph_value act = r < FZ_NLOCALS ? fz->locals[r] : fz->globals[r - FZ_NLOCALS];
    visit(fz, heap, m->roots[r], act, FZ_NONE, r);
    while (m->stack_len) scan(fz, heap, m->stack[--m->stack_len]);
  }
  /* pinned ephemerons: roots at the address they were made at */
  for (size_t i = 0; i < m->npinned; i++) {
    visit(fz, heap, fz_ref(m->pinned[i].mid), m->pinned[i].addr, FZ_NONE, FZ_NROOTS + i);
    while (m->stack_len) scan(fz, heap, m->stack[--m->stack_len]);
  }
  if (sweep)
    for (uint32_t mid = 0; mid < m->nobjs; mid++)
      if (m->objs[mid].id && m->objs[mid].epoch != m->epoch) model_release(m, mid);
  if (m->live_objs > fz->c.max_live_objs) fz->c.max_live_objs = m->live_objs;
  if (m->live_bytes > fz->c.max_live_bytes) fz->c.max_live_bytes = m->live_bytes;
  fz->pressure = m->live_objs > fz->mode->max_live_objs || m->live_bytes > fz->mode->max_live_bytes;
  fz->grow = m->live_objs < fz->mode->max_live_objs / 2;
}

/* --- eph_gc_fate ------------------------------------------------------------------ */

void fz_arm_fate(fuzz *fz) {
  fz_walk(fz, true, false);
  fz->m.fate_armed = true;
  fz->m.fate_epoch = fz->m.epoch;
  fz->m.fate_serial++;
  fz->m.fate_gcs = fz->gcs_seen;
}

/* eph_gc_view_next_dead must name eph_gc_each_dead's objects, in its order. */
typedef struct dead_list {
  eph_value *v;
  size_t n, cap;
} dead_list;

static void note_dead(void *data, eph_value obj) {
  dead_list *l = data;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 256;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v) abort();
  }
  l->v[l->n++] = obj;
}

/* The reference for old space: every object's header read in turn, its
 * first word's mark bit deciding (the view's walk skips live runs through
 * the bitmap instead). */
static void reference_old_dead(const eph_gc_view *v, dead_list *l) {
  if (!v->mark_bits) return;
  for (uintptr_t p = v->old_base; p < v->old_top; p += eph_object_bytes((eph_value)p) + v->trailer_bytes)
    if (!eph_gc_view_marked(v, p)) note_dead(l, (eph_value)p);
}

static void check_view_dead(fuzz *fz, const eph_gc_view *view) {
  dead_list l = {0}, old = {0};
  eph_gc_each_dead(fz->h, note_dead, &l);
  reference_old_dead(view, &old);
  size_t nold = 0;
  for (size_t k = 0; k < l.n; k++)
    if (l.v[k] - view->old_base < view->old_top - view->old_base) {
      if (nold >= old.n || old.v[nold] != l.v[k])
        fz_fail(fz, "on_collect: dead old-space object %zu is %#" PRIxPTR ", a header walk's %#" PRIxPTR, nold,
                l.v[k], nold < old.n ? old.v[nold] : (eph_value)0);
      nold++;
    }
  if (nold != old.n) fz_fail(fz, "on_collect: %zu dead old-space objects, a header walk finds %zu", nold, old.n);
  free(old.v);
  size_t i = 0;
  int space = 0;
  uintptr_t at = 0;
  for (eph_value o; (o = eph_gc_view_next_dead(view, &space, &at)); i++)
    if (i >= l.n || l.v[i] != o)
      fz_fail(fz, "on_collect: eph_gc_view_next_dead's object %zu is %#" PRIxPTR ", eph_gc_each_dead's %#" PRIxPTR, i, o,
              i < l.n ? l.v[i] : (eph_value)0);
  if (i != l.n) fz_fail(fz, "on_collect: eph_gc_view_next_dead gave %zu dead objects, eph_gc_each_dead %zu", i, l.n);
  free(l.v);
}

/* Called from on_collect (inside the collector: no allocation, no stores). */
void fz_fate_on_collect(fuzz *fz, eph_gc_kind kind) {
  fz_model *m = &fz->m;
  if (!m->fate_armed) return;
  m->fate_armed = false;
  eph_gc_view view;
  eph_gc_view_begin(fz->h, &view);
  check_view_dead(fz, &view);
  for (uint32_t mid = 0; mid < m->nobjs; mid++) {
    fz_obj *o = &m->objs[mid];
    if (!o->id || o->addr_gc != fz->gcs_seen) continue; /* no current address for it */
    bool reachable = o->epoch == m->fate_epoch;
    bool young = eph_is_young(fz->h, o->addr);
    eph_value f = eph_gc_fate(fz->h, o->addr);
    char d[96];
    m->fate_checked++;
    /* eph_gc_where answers both questions at once, the same way. */
    bool dead;
    eph_value at = eph_gc_where(fz->h, o->addr, &dead), loc = eph_gc_locate(fz->h, o->addr);
    if (at != loc || dead != (f == EPH_NIL))
      fz_fail(fz, "on_collect: eph_gc_where(%s at %#" PRIxPTR ") = %#" PRIxPTR " dead %d; locate %#" PRIxPTR ", fate %#" PRIxPTR,
              describe_obj(fz, mid, d, sizeof d), o->addr, at, (int)dead, loc, f);
    { /* and the inline answer */
      bool vdead;
      eph_value vat = eph_gc_view_where(&view, o->addr, &vdead);
      if (vat != at || vdead != dead)
        fz_fail(fz, "on_collect: eph_gc_view_where(%s at %#" PRIxPTR ") = %#" PRIxPTR " dead %d; eph_gc_where %#" PRIxPTR " dead %d",
                describe_obj(fz, mid, d, sizeof d), o->addr, vat, (int)vdead, at, (int)dead);
    }
    uintptr_t pbase, ptop;
    eph_pinned_range(fz->h, &pbase, &ptop);
    bool pinned = o->addr >= pbase && o->addr < ptop;
    if (pinned && (f != o->addr || dead))
      fz_fail(fz, "on_collect: eph_gc_fate(pinned %s at %#" PRIxPTR ") = %#" PRIxPTR " dead %d: a pinned object never moves or dies",
              describe_obj(fz, mid, d, sizeof d), o->addr, f, (int)dead);
    if (kind == EPH_GC_FULL && !young && !pinned) { /* and eph_gc_old_fates, the batched answer for old objects */
      eph_value batched;
      eph_gc_old_fates(fz->h, &o->addr, &batched, 1);
      if (batched != f)
        fz_fail(fz, "on_collect: eph_gc_old_fates(%s at %#" PRIxPTR ") = %#" PRIxPTR ", eph_gc_fate %#" PRIxPTR,
                describe_obj(fz, mid, d, sizeof d), o->addr, batched, f);
    }
    if (reachable) {
      if (f == EPH_NIL)
        fz_fail(fz, "on_collect (%s): eph_gc_fate says reachable %s (was at %#" PRIxPTR ") is dead",
                kind == EPH_GC_FULL ? "full GC" : "scavenge", describe_obj(fz, mid, d, sizeof d), o->addr);
      if (kind == EPH_GC_SCAVENGE && !young && f != o->addr)
        fz_fail(fz, "on_collect (scavenge): eph_gc_fate moved old %s from %#" PRIxPTR " to %#" PRIxPTR,
                describe_obj(fz, mid, d, sizeof d), o->addr, f);
      o->fate_serial = m->fate_serial;
      o->fate_addr = f;
    } else if (f != EPH_NIL && kind == EPH_GC_FULL) {
      /* A full GC is precise: nothing unreachable survives it.  (A scavenge
         may keep young garbage that old garbage points to: not checked.) */
      fz_fail(fz, "on_collect (full GC): unreachable %s (was at %#" PRIxPTR ") survives, eph_gc_fate says at %#" PRIxPTR,
              describe_obj(fz, mid, d, sizeof d), o->addr, f);
    }
  }
}

static void m_fate_done(fuzz *fz) { fz->m.fate_serial++; /* fate addresses checked by this walk; forget them */ }

void fz_check(fuzz *fz, const char *why, bool verify) {
  eph_heap *h = fz->h;
  const char *saved = fz->phase;
  fz->phase = why;
  if (verify && eph_heap_verify(h) != EPH_OK) fz_fail(fz, "eph_heap_verify (%s): %s", why, eph_heap_error(h));
  if (fz->gcs_seen != fz->m.fate_gcs + 1) m_fate_done(fz); /* fate is about one collection only */
  fz_walk(fz, true, true);
  m_fate_done(fz);
  fz->c.checks++;
  fz->c.sum_live_objs += fz->m.live_objs;

  eph_heap_stats st;
  eph_heap_stats_get(h, &st);
  fz_model *m = &fz->m;
  if (st.used < m->live_bytes)
    fz_fail(fz, "%s: the heap says used=%" PRIu64 " bytes, but the %zu reachable objects occupy %zu", why, st.used,
            m->live_objs, m->live_bytes);
  if (st.bytes_allocated != fz->c.bytes_allocated || eph_heap_allocated(h) != st.bytes_allocated)
    fz_fail(fz, "%s: the heap counts %" PRIu64 " bytes allocated (eph_heap_allocated %" PRIu64 "), the mutator allocated %" PRIu64,
            why, st.bytes_allocated, eph_heap_allocated(h), fz->c.bytes_allocated);
  /*
   * Every allocation is a sample point here, and on_alloc must see each,
   * but for pinned ephemerons (never sample points: ephemeron.h).  This
   * includes allocations by finalisers that run at a safe point inside an
   * allocation's slow path, after the fast path ran the countdown out
   * (alloc.c gives the countdown back for them first).
   */
  uint64_t sampled = fz->c.allocs - fz->c.pinned_allocs;
  if (fz->observed && fz->mode->observe_alloc && fz->c.observed_allocs != sampled)
    fz_fail(fz, "%s: on_alloc saw %" PRIu64 " allocations, the mutator made %" PRIu64 " (%" PRIu64 " of them in finalisers)", why,
            fz->c.observed_allocs, fz->c.allocs, fz->c.allocs_in_finalizers);
  if (fz->observed && (st.scavenges != fz->c.scavenges || st.full_gcs != fz->c.full_gcs))
    fz_fail(fz, "%s: stats count %" PRIu64 " scavenges and %" PRIu64 " full GCs, the observer saw %" PRIu64 " and %" PRIu64, why,
            st.scavenges, st.full_gcs, fz->c.scavenges, fz->c.full_gcs);
  if (st.old_used > st.old_committed || st.used < st.old_used || st.heap_committed < st.old_committed + st.new_space_bytes)
    fz_fail(fz, "%s: inconsistent stats: used %" PRIu64 ", old used %" PRIu64 " of %" PRIu64 " committed, heap committed %" PRIu64
            ", new space %" PRIu64, why, st.used, st.old_used, st.old_committed, st.heap_committed, st.new_space_bytes);
  if (fz->expect_exact && fz->fin_in_op) {
    /* Finalisers ran after the full GC: what they allocated, and the mourned
       ephemerons they did not keep, are garbage now.  Only the bound holds. */
    fz->expect_exact = false;
  }
  if (fz->ephemerons && eph_pending_finalizers(h))
    fz_fail(fz, "%s: %zu finalisers still pending between operations (every collection's safe point should have run them)",
            why, eph_pending_finalizers(h));
  if (fz->expect_exact) {
    /* A full GC tenures every survivor and compacts: used == live, new space empty. */
    fz->c.exact_checks++;
    if (st.used != m->live_bytes)
      fz_fail(fz,
              "%s: after a full GC used=%" PRIu64 " bytes (old_used=%" PRIu64 "), but the %zu reachable objects occupy exactly %zu"
              " (%+" PRId64 ")",
              why, st.used, st.old_used, m->live_objs, m->live_bytes, (int64_t)(st.used - m->live_bytes));
    if (m->live_young)
      fz_fail(fz, "%s: after a full GC %zu reachable objects are still in new space", why, m->live_young);
    if (st.remembered)
      fz_fail(fz, "%s: after a full GC (no young objects) the remembered set holds %" PRIu64 " objects", why, st.remembered);
    fz->expect_exact = false;
  }
  fz->gcs_checked = fz->gcs_seen;
  fz->phase = saved;
}

/* --- the model's ephemeron trace ------------------------------------------------ */

/*
 * Rules 1-2 of ephemeron.h on the model graph, as a full GC applies them:
 * trace from the roots, deferring every unmourned ephemeron whose key (a
 * reference) is not reached yet; values of deferred ephemerons whose keys
 * got reached are traced, to a fixpoint; then every ephemeron still
 * deferred is mourned (all together), its key and value traced, and the
 * rounds repeat.  Marks use the walk epoch (a fresh one).
 */
static void trace_push(fuzz *fz, fz_mval v, uint64_t stamp, bool first_round) {
  fz_model *m = &fz->m;
  if (!fz_is_ref(v)) return;
  uint32_t mid = fz_ref_mid(v);
  if (mid >= m->nobjs || !m->objs[mid].id) fz_fail(fz, "fuzzer bug: ephemeron trace meets freed record %" PRIu32, mid);
  fz_obj *o = &m->objs[mid];
  if (o->epoch == m->epoch) return;
  o->epoch = m->epoch;
  if (first_round) o->reach_gc = stamp;
  if (m->stack_len == m->stack_cap) {
    m->stack_cap = m->stack_cap ? m->stack_cap * 2 : 1024;
    m->stack = fz_xrealloc(m->stack, m->stack_cap * sizeof *m->stack);
  }
  m->stack[m->stack_len++] = mid;
}

static bool key_marked(fuzz *fz, fz_mval key) {
  return !fz_is_ref(key) || fz->m.objs[fz_ref_mid(key)].epoch == fz->m.epoch;
}

void fz_eph_trace(fuzz *fz, uint64_t stamp, uint32_t **predicted, size_t *npredicted) {
  fz_model *m = &fz->m;
  m->epoch++;
  m->stack_len = 0;
  fz->c.eph_reach_walks++;
  uint32_t *deferred = NULL;
  size_t nd = 0, dcap = 0, np = 0, pcap = 0;
  uint32_t *pred = NULL;
  bool first = true;
  for (size_t r = 0; r < FZ_NROOTS; r++)
    if (r < FZ_NLOCALS || m->global_on[r - FZ_NLOCALS]) trace_push(fz, m->roots[r], stamp, true);
  for (size_t i = 0; i < m->npinned; i++) trace_push(fz, fz_ref(m->pinned[i].mid), stamp, true);
  for (;;) {
    while (m->stack_len) {
      uint32_t mid = m->stack[--m->stack_len];
      fz_obj *o = &m->objs[mid];
      size_t k = 0;
      if (fz_kind_is_eph(o->kind) && !o->mourned && !key_marked(fz, o->slots[0])) {
        if (nd == dcap) {
          dcap = dcap ? 2 * dcap : 256;
          deferred = fz_xrealloc(deferred, dcap * sizeof *deferred);
        }
        deferred[nd++] = mid;
        k = 2;
      }
      for (; k < o->nslots; k++) trace_push(fz, o->slots[k], stamp, first);
    }
    if (!nd) break;
    bool progress = false;
    size_t keep = 0;
    for (size_t i = 0; i < nd; i++) {
      fz_obj *e = &m->objs[deferred[i]];
      if (key_marked(fz, e->slots[0])) {
        trace_push(fz, e->slots[1], stamp, first);
        progress = true;
      } else {
        deferred[keep++] = deferred[i];
      }
    }
    nd = keep;
    if (progress) continue;
    /* mourn every deferred one, together */
    first = false;
    for (size_t i = 0; i < nd; i++) {
      fz_obj *e = &m->objs[deferred[i]];
      if (predicted) {
        if (np == pcap) {
          pcap = pcap ? 2 * pcap : 64;
          pred = fz_xrealloc(pred, pcap * sizeof *pred);
        }
        pred[np++] = deferred[i];
      }
      trace_push(fz, e->slots[0], stamp, false);
      trace_push(fz, e->slots[1], stamp, false);
    }
    nd = 0;
  }
  free(deferred);
  if (predicted) {
    *predicted = pred;
    *npredicted = np;
  }
}
