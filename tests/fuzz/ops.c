/*
 * tests/fuzz/ops.c — the mutator: a table of weighted random operations.
 *
 * Every operation changes the heap and the model together, so that between
 * operations the model describes the heap exactly.  Rules every operation
 * follows (the embedder's rules from heap.h):
 *  - a heap address is used only until the next allocation; anything that
 *    must survive an allocation sits in a root (EPH_LOCAL in a frame) and is
 *    re-read from it;
 *  - heap addresses come only from the roots, by walking (pick below), from
 *    an allocation, or from a slot, never from a stale C variable;
 *  - every store into a heap object goes through eph_store.
 *
 * To add an operation: write `static void op_x(fuzz *fz)` and add a row to
 * fz_ops[] with its weight (per 10000) or a mode-dependent weight.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/ephemeron.h"
#include "fuzz.h"

/* --- helpers: randomness --------------------------------------------------------- */

static uint64_t below(fuzz *fz, uint64_t n) { return fz_below(&fz->rng, n); }
static bool chance(fuzz *fz, uint64_t num, uint64_t den) { return fz_chance(&fz->rng, num, den); }

/* A random immediate: small ints, extremes, random 63-bit ints, nil, true, false. */
static eph_value rand_immediate(fuzz *fz) {
  switch (below(fz, 14)) {
  case 0: return EPH_NIL;
  case 1: return EPH_TRUE;
  case 2: return EPH_FALSE;
  case 3: return eph_int(EPH_INT_MIN);
  case 4: return eph_int(EPH_INT_MAX);
  case 5: return eph_int(0);
  case 6: return eph_int(-1);
  case 7: return eph_int((intptr_t)fz_next(&fz->rng) >> 1); /* anywhere in the 63-bit range */
  case 8: return eph_int(EPH_INT_MIN + (intptr_t)below(fz, 4));
  case 9: return eph_int(EPH_INT_MAX - (intptr_t)below(fz, 4));
  default: return eph_int((intptr_t)below(fz, 2001) - 1000);
  }
}

/* --- helpers: roots -------------------------------------------------------------- */

static eph_value *root_cell(fuzz *fz, size_t r) { return r < FZ_NLOCALS ? &fz->locals[r] : &fz->globals[r - FZ_NLOCALS]; }

static bool root_usable(fuzz *fz, size_t r) { return r < FZ_NLOCALS || fz->m.global_on[r - FZ_NLOCALS]; }

static void root_set(fuzz *fz, size_t r, eph_value v, fz_mval mv) {
  *root_cell(fz, r) = v;
  fz->m.roots[r] = mv;
}

/* A random root that is a local or a registered global. */
static size_t rand_root(fuzz *fz) {
  for (;;) {
    size_t r = below(fz, 4) ? below(fz, FZ_NLOCALS) : FZ_NLOCALS + below(fz, FZ_NGLOBALS);
    if (root_usable(fz, r)) return r;
  }
}

/* A root to overwrite: while the graph should grow, preferably one not holding a reference. */
static size_t rand_root_to_overwrite(fuzz *fz) {
  size_t r = rand_root(fz);
  for (int i = 0; i < 4 && fz->grow && fz_is_ref(fz->m.roots[r]); i++) r = rand_root(fz);
  return r;
}

/* --- helpers: picking reachable objects ------------------------------------------ */

enum {
  PK_ANY = 0,
  PK_SLOTS2 = 1, /* a pointer object with at least 2 slots (slot 0 is the id) */
  PK_BYTES = 2,  /* a byte object */
  PK_OLD = 4,    /* not in new space */
  PK_SLOTS1 = 8, /* a pointer object with at least 1 slot */
  PK_EPH = 16,   /* an ephemeron */
};

typedef struct fz_target {
  uint32_t mid;
  eph_value addr; /* valid until the next allocation */
} fz_target;

static bool pick_matches(fuzz *fz, uint32_t mid, eph_value a, unsigned flags) {
  const fz_obj *o = &fz->m.objs[mid];
  /* The generic stores write slots 1..n-1: never an ephemeron's (finaliser id, model id). */
  if ((flags & (PK_SLOTS2 | PK_SLOTS1)) && fz_kind_is_eph(o->kind)) return false;
  if ((flags & PK_EPH) && !fz_kind_is_eph(o->kind)) return false;
  if ((flags & PK_SLOTS2) && o->nslots < 2) return false;
  if ((flags & PK_SLOTS1) && o->nslots < 1) return false;
  if ((flags & PK_BYTES) && !fz_kind_is_bytes(o->kind)) return false;
  /* --merlin-check: young/old depends on when collections ran, which differs between the two runs */
  if ((flags & PK_OLD) && !fz->deterministic && eph_is_young(fz->h, a)) return false;
  return true;
}

/*
 * A random reachable object matching flags: start at a random root holding a
 * reference, then follow random reference slots a few steps, in the model and
 * the heap together (checking identity on the way).  Decisions depend only on
 * the model and on young/old, never on addresses, so seeds replay.
 */
static bool pick(fuzz *fz, unsigned flags, fz_target *t) {
  size_t roots[FZ_NROOTS], n = 0;
  for (size_t r = 0; r < FZ_NROOTS; r++)
    if (fz_is_ref(fz->m.roots[r])) roots[n++] = r;
  if (!n) return false;
  for (int attempt = 0; attempt < 12; attempt++) {
    size_t r = roots[below(fz, n)];
    uint32_t mid = fz_ref_mid(fz->m.roots[r]);
    eph_value a = *root_cell(fz, r);
    fz_check_ident(fz, mid, a, "pick");
    bool found = false;
    if (pick_matches(fz, mid, a, flags)) {
      t->mid = mid;
      t->addr = a;
      found = true;
    }
    unsigned depth = (unsigned)below(fz, 10);
    for (unsigned d = 0; d < depth; d++) {
      const fz_obj *o = &fz->m.objs[mid];
      if (o->nslots < 2) break;
      size_t k = 1 + below(fz, o->nslots - 1);
      if (!fz_is_ref(o->slots[k])) k = 1 + below(fz, o->nslots - 1); /* one more try */
      if (!fz_is_ref(o->slots[k])) break;
      uint32_t next = fz_ref_mid(o->slots[k]);
      eph_value na = eph_slot(a, k);
      fz_check_ident(fz, next, na, "pick");
      mid = next;
      a = na;
      if (pick_matches(fz, mid, a, flags) && (!found || chance(fz, 2, 3))) {
        t->mid = mid;
        t->addr = a;
        found = true;
      }
    }
    if (found) return true;
  }
  return false;
}

/* A random value: an immediate, or a reference to a reachable object. */
static eph_value rand_value(fuzz *fz, fz_mval *mv) {
  fz_target t;
  if (chance(fz, 3, 5) && pick(fz, PK_ANY, &t)) {
    *mv = fz_ref(t.mid);
    return t.addr;
  }
  eph_value v = rand_immediate(fz);
  *mv = (fz_mval)v;
  return v;
}

/* Stores v (model mv) into slot k of target, heap and model. */
static void store(fuzz *fz, fz_target *t, size_t k, eph_value v, fz_mval mv) {
  if (eph_is_young(fz->h, v) && !eph_is_young(fz->h, t->addr)) fz->c.old_young_stores++;
  eph_store(fz->h, t->addr, k, v);
  fz->m.objs[t->mid].slots[k] = mv;
  fz->c.stores++;
}

/* A random slot (>= 1) of t to overwrite; while the graph should grow, preferably not a reference. */
static size_t slot_to_overwrite(fuzz *fz, const fz_target *t) {
  size_t n = fz->m.objs[t->mid].nslots;
  size_t k = 1 + below(fz, n - 1);
  for (int i = 0; i < 3 && fz->grow && fz_is_ref(fz->m.objs[t->mid].slots[k]); i++) k = 1 + below(fz, n - 1);
  return k;
}

/*
 * Stores a new reference v (model mv) into slot k of t.  While the graph
 * should grow and the slot holds a reference, v (if it has room) takes the
 * displaced reference over, like a list insertion; if it cannot, returns
 * false (most of the time) without storing.
 */
static bool store_growing(fuzz *fz, fz_target *t, size_t k, eph_value v, fz_mval mv) {
  fz_mval old = fz->m.objs[t->mid].slots[k];
  if (fz->grow && fz_is_ref(old) && fz_is_ref(mv)) {
    uint32_t vmid = fz_ref_mid(mv);
    if (fz->m.objs[vmid].nslots >= 2 && !fz_kind_is_eph(fz->m.objs[vmid].kind)) {
      fz_target nv = {vmid, v};
      store(fz, &nv, 1 + below(fz, fz->m.objs[vmid].nslots - 1), eph_slot(t->addr, k), old);
    } else if (chance(fz, 3, 4)) {
      return false;
    }
  }
  store(fz, t, k, v, mv);
  return true;
}

/*
 * Makes a fresh object (v, model mv) reachable: into a slot of a reachable
 * object, or into a root.  No allocation happens here, so v stays valid.
 */
static void place(fuzz *fz, eph_value v, fz_mval mv) {
  fz_target t;
  if (chance(fz, 3, 4) && pick(fz, PK_SLOTS2, &t) && store_growing(fz, &t, slot_to_overwrite(fz, &t), v, mv)) return;
  root_set(fz, rand_root_to_overwrite(fz), v, mv);
}

/* --- helpers: allocation --------------------------------------------------------- */

/*
 * Allocates an object of kind with n slots or n bytes (young, or pretenured
 * when old), checks it is fresh, gives it a model record and stamps its id
 * (and byte pattern).  The result is valid until the next allocation.
 */
static eph_value new_object(fuzz *fz, fz_kind kind, size_t n, bool old, uint32_t *mid_out) {
  eph_heap *h = fz->h;
  eph_class_id cls = fz->cls[kind];
  bool bytes = fz_kind_is_bytes(kind);
  eph_value o;
  if (bytes)
    o = old ? eph_alloc_bytes_old(h, cls, n) : eph_alloc_bytes(h, cls, n);
  else
    o = old ? eph_alloc_old(h, cls, n) : eph_alloc(h, cls, n);
  size_t size = bytes ? n : n * sizeof(eph_value);
  const char *how = old ? (bytes ? "eph_alloc_bytes_old" : "eph_alloc_old") : (bytes ? "eph_alloc_bytes" : "eph_alloc");
  if (o == EPH_NIL) fz_fail(fz, "%s(%s, %zu) returned nil: %s", how, fz_kinds[kind].name, n, eph_heap_error(h));
  if (!eph_is_ptr(o)) fz_fail(fz, "%s(%s, %zu) returned a non-pointer %#" PRIxPTR, how, fz_kinds[kind].name, n, o);
  eph_header hdr = *eph_header_of(o);
  /* Age 0, unless on_alloc allocated and a scavenge moved the new object already. */
  eph_header must_be_clear = EPH_HDR_FORWARDED | EPH_HDR_REMEMBERED | (fz->mode->observe_alloc ? 0 : EPH_HDR_AGE_MASK);
  if (eph_class_of(o) != cls || eph_format_of(o) != fz_kinds[kind].format || eph_size_bytes(o) != size ||
      (hdr & must_be_clear))
    fz_fail(fz, "%s(%s, %zu): fresh object has header %#" PRIx64 " (expected class %" PRIu32 ", %zu bytes, age 0, flags clear)",
            how, fz_kinds[kind].name, n, (uint64_t)hdr, cls, size);
  if (old && eph_is_young(h, o)) fz_fail(fz, "%s(%s, %zu) returned a young object", how, fz_kinds[kind].name, n);
  if (bytes) {
    const uint8_t *p = eph_bytes(o);
    for (size_t i = 0; i < n; i++)
      if (p[i]) fz_fail(fz, "%s(%s, %zu): fresh byte %zu is %#x, not zero", how, fz_kinds[kind].name, n, i, p[i]);
  } else {
    for (size_t i = 0; i < n; i++)
      if (eph_slot(o, i) != EPH_NIL)
        fz_fail(fz, "%s(%s, %zu): fresh slot %zu is %#" PRIxPTR ", not nil", how, fz_kinds[kind].name, n, i, eph_slot(o, i));
  }

  uint32_t mid = fz_model_new(&fz->m, kind, size);
  uint64_t id = fz->m.objs[mid].id;
  if (bytes)
    fz_pattern_fill(eph_bytes(o), n, id, 0);
  else if (n)
    eph_store(h, o, 0, eph_int((intptr_t)id));
  fz_obj *rec = &fz->m.objs[mid];
  rec->addr = o;
  rec->addr_gc = fz->gcs_seen;
  if (fz->in_on_alloc)
    fz->c.nested_allocs++; /* a finaliser run by on_alloc's own allocation: not observed */
  else
    fz->c.allocs++;
  if (fz->in_finalizer && !fz->in_on_alloc) fz->c.allocs_in_finalizers++;
  if (old) fz->c.allocs_old++;
  fz->c.bytes_allocated += fz_obj_bytes(size) + fz->trailer_bytes;
  *mid_out = mid;
  return o;
}

/* Fills slots [from, n) of a fresh pointer object: each with probability fill/4. */
static void fill_slots(fuzz *fz, eph_value o, uint32_t mid, size_t from, unsigned fill) {
  size_t n = fz->m.objs[mid].nslots;
  fz_target t = {mid, o};
  for (size_t k = from; k < n; k++) {
    if (below(fz, 4) >= fill) continue;
    fz_mval mv;
    eph_value v;
    if (chance(fz, 1, 20)) {
      v = o; /* self-reference */
      mv = fz_ref(mid);
    } else {
      v = rand_value(fz, &mv);
    }
    store(fz, &t, k, v, mv);
  }
}

static fz_kind rand_pointer_kind(fuzz *fz) { return (fz_kind)below(fz, 3); } /* NODE, PAIR, ARRAY */

static size_t rand_slot_count(fuzz *fz, fz_kind kind) {
  switch (kind) {
  case FZ_NODE: return 1 + below(fz, 4);
  case FZ_PAIR: return 3;
  default: return below(fz, 16) == 0 ? below(fz, 1000) : below(fz, 33); /* ARRAY, may be 0 */
  }
}

/* Log-uniform in [lo, hi): every size class (and the thresholds between them) gets its share. */
static size_t rand_log_size(fuzz *fz, size_t lo, size_t hi) {
  if (hi <= lo + 1) return lo;
  size_t bits = 0;
  while (((size_t)1 << bits) < hi) bits++;
  for (;;) {
    size_t top = (size_t)1 << below(fz, bits + 1);
    size_t n = top / 2 + below(fz, top / 2 + 1);
    if (n >= lo && n < hi) return n;
  }
}

static size_t rand_byte_count(fuzz *fz) {
  if (fz->mode->medium_max > 300 && chance(fz, 1, 64)) return rand_log_size(fz, 300, fz->mode->medium_max);
  return below(fz, 8) == 0 ? below(fz, 8) : below(fz, 301);
}

/* --- operations ------------------------------------------------------------------ */

static void op_alloc_pointers(fuzz *fz) {
  fz_kind kind = rand_pointer_kind(fz);
  uint32_t mid;
  eph_value o = new_object(fz, kind, rand_slot_count(fz, kind), false, &mid);
  fill_slots(fz, o, mid, 1, (unsigned)below(fz, 5));
  place(fz, o, fz_ref(mid));
}

static void op_alloc_bytes(fuzz *fz) {
  uint32_t mid;
  eph_value o = new_object(fz, chance(fz, 1, 2) ? FZ_BYTES : FZ_STRING, rand_byte_count(fz), false, &mid);
  place(fz, o, fz_ref(mid));
}

/* Pretenured: eph_alloc_old / eph_alloc_bytes_old; pointer ones get (often young) references at once. */
static void op_alloc_old(fuzz *fz) {
  uint32_t mid;
  eph_value o;
  if (chance(fz, 1, 3)) {
    o = new_object(fz, chance(fz, 1, 2) ? FZ_BYTES : FZ_STRING, rand_byte_count(fz), true, &mid);
  } else {
    fz_kind kind = rand_pointer_kind(fz);
    o = new_object(fz, kind, rand_slot_count(fz, kind), true, &mid);
    fill_slots(fz, o, mid, 1, 2 + (unsigned)below(fz, 3));
  }
  place(fz, o, fz_ref(mid));
}

/* Large: payload in [large_min, large_max), through the young or the pretenured path. */
static void op_alloc_large(fuzz *fz) {
  const fz_mode *md = fz->mode;
  size_t bytes = md->large_min + below(fz, md->large_max - md->large_min);
  bool old = chance(fz, 1, 3);
  uint32_t mid;
  eph_value o;
  if (chance(fz, 1, 2)) {
    o = new_object(fz, FZ_BYTES, bytes, old, &mid);
  } else {
    o = new_object(fz, FZ_ARRAY, bytes / sizeof(eph_value), old, &mid);
    /* a few references, near both ends and in the middle */
    fz_target t = {mid, o};
    size_t n = fz->m.objs[mid].nslots;
    for (int i = 0; i < 24; i++) {
      size_t k = i < 8 ? 1 + (size_t)i : i < 16 ? n - 1 - (size_t)(i - 8) : 1 + below(fz, n - 1);
      fz_mval mv;
      eph_value v = rand_value(fz, &mv);
      store(fz, &t, k, v, mv);
    }
  }
  fz->c.allocs_large++;
  place(fz, o, fz_ref(mid));
}

static void op_store(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_SLOTS2, &t)) return;
  size_t k = slot_to_overwrite(fz, &t);
  if (fz->grow && fz_is_ref(fz->m.objs[t.mid].slots[k]) && chance(fz, 3, 4)) return; /* rather not cut */
  fz_mval mv;
  eph_value v = rand_value(fz, &mv);
  store(fz, &t, k, v, mv);
}

/* A fresh young object stored into an old one: the write barrier's main case. */
static void op_store_young_into_old(fuzz *fz) {
  eph_heap *h = fz->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, tmp);
  uint32_t mid;
  if (chance(fz, 1, 4)) {
    tmp = new_object(fz, FZ_STRING, rand_byte_count(fz), false, &mid);
  } else {
    tmp = new_object(fz, FZ_NODE, 1 + below(fz, 4), false, &mid);
    fill_slots(fz, tmp, mid, 1, 2);
  }
  fz_target t;
  if (!pick(fz, PK_SLOTS2 | PK_OLD, &t) || !store_growing(fz, &t, slot_to_overwrite(fz, &t), tmp, fz_ref(mid)))
    place(fz, tmp, fz_ref(mid));
  EPH_UNFRAME(h);
}

static void op_drop_root(fuzz *fz) {
  size_t r = rand_root(fz);
  eph_value v = chance(fz, 1, 4) ? rand_immediate(fz) : EPH_NIL;
  root_set(fz, r, v, (fz_mval)v);
}

static void op_move_root(fuzz *fz) {
  size_t a = rand_root(fz), b = rand_root_to_overwrite(fz);
  eph_value va = *root_cell(fz, a);
  fz_mval ma = fz->m.roots[a];
  if (chance(fz, 1, 2)) { /* swap */
    root_set(fz, a, *root_cell(fz, b), fz->m.roots[b]);
  }
  root_set(fz, b, va, ma);
}

/* A root takes the value of a slot somewhere in the graph (deep objects become shallow). */
static void op_root_from_slot(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_SLOTS2, &t)) return;
  size_t k = 1 + below(fz, fz->m.objs[t.mid].nslots - 1);
  root_set(fz, rand_root_to_overwrite(fz), eph_slot(t.addr, k), fz->m.objs[t.mid].slots[k]);
}

/* Cuts references: one slot, or every slot of an object. */
static void op_cut(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_SLOTS2, &t)) return;
  size_t n = fz->m.objs[t.mid].nslots;
  if (chance(fz, 1, 3)) {
    for (size_t k = 1; k < n; k++) store(fz, &t, k, EPH_NIL, (fz_mval)EPH_NIL);
  } else {
    store(fz, &t, 1 + below(fz, n - 1), EPH_NIL, (fz_mval)EPH_NIL);
  }
}

/* A linked list (slot 1 = next, slot 2 = a random value), sometimes closed into a cycle. */
static void op_chain(fuzz *fz) {
  eph_heap *h = fz->h;
  size_t len = chance(fz, 1, 16) ? 64 + below(fz, 400) : 2 + below(fz, 30);
  if (fz->mode->long_chain_max && chance(fz, 1, 500)) /* deep: marking and scanning must not recurse */
    len = fz->mode->long_chain_max / 4 + below(fz, fz->mode->long_chain_max * 3 / 4);
  if (fz->pressure) len = 2 + below(fz, 8);
  bool cycle = chance(fz, 1, 3);
  bool old = chance(fz, 1, 8);
  EPH_FRAME(h);
  EPH_LOCAL(h, head);
  EPH_LOCAL(h, prev);
  uint32_t head_mid = FZ_NONE, prev_mid = FZ_NONE;
  for (size_t i = 0; i < len; i++) {
    uint32_t mid;
    eph_value o = new_object(fz, FZ_NODE, 3, old && chance(fz, 1, 2), &mid);
    fz_target t = {mid, o};
    fz_mval mv;
    eph_value v = rand_value(fz, &mv);
    store(fz, &t, 2, v, mv);
    if (prev_mid == FZ_NONE) {
      head = o;
      head_mid = mid;
    } else {
      fz_target p = {prev_mid, prev};
      store(fz, &p, 1, o, fz_ref(mid));
    }
    prev = o;
    prev_mid = mid;
  }
  if (cycle) {
    fz_target p = {prev_mid, prev};
    store(fz, &p, 1, head, fz_ref(head_mid));
  }
  place(fz, head, fz_ref(head_mid));
  EPH_UNFRAME(h);
}

/* A binary tree built recursively, one frame per level; sometimes a DAG (left == right). */
static eph_value build_tree(fuzz *fz, unsigned depth, uint32_t *mid_out) {
  eph_heap *h = fz->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, left);
  EPH_LOCAL(h, right);
  uint32_t lm = FZ_NONE, rm = FZ_NONE;
  if (depth > 0) {
    left = build_tree(fz, depth - 1, &lm);
    if (chance(fz, 1, 6)) {
      right = left;
      rm = lm;
    } else if (chance(fz, 5, 6)) {
      right = build_tree(fz, depth - 1, &rm);
    }
  }
  uint32_t mid;
  eph_value node = new_object(fz, FZ_PAIR, 3, false, &mid);
  fz_target t = {mid, node};
  if (lm != FZ_NONE) store(fz, &t, 1, left, fz_ref(lm));
  if (rm != FZ_NONE) store(fz, &t, 2, right, fz_ref(rm));
  *mid_out = mid;
  EPH_RETURN(h, node);
}

static void op_tree(fuzz *fz) {
  uint32_t mid;
  unsigned depth = fz->pressure ? 1 : 1 + (unsigned)below(fz, 6);
  eph_value root = build_tree(fz, depth, &mid);
  place(fz, root, fz_ref(mid));
}

static void op_rewrite_bytes(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_BYTES, &t)) return;
  fz_obj *o = &fz->m.objs[t.mid];
  o->version++;
  fz_pattern_fill(eph_bytes(t.addr), o->size, o->id, o->version);
}

static void op_spot_check(fuzz *fz) {
  fz_target t;
  if (pick(fz, PK_ANY, &t)) fz_check_object(fz, t.mid, t.addr, "read-back");
}

/* Unregisters a global root (it becomes nil), or registers it with a new value. */
static void op_global_toggle(fuzz *fz) {
  size_t g = below(fz, FZ_NGLOBALS);
  eph_value *cell = &fz->globals[g];
  if (fz->m.global_on[g]) {
    eph_global_root_remove(fz->h, cell);
    fz->m.global_on[g] = false;
    *cell = EPH_NIL;
    fz->m.roots[FZ_NLOCALS + g] = (fz_mval)EPH_NIL;
  } else {
    fz_mval mv;
    eph_value v = rand_value(fz, &mv);
    *cell = v;
    eph_status s = eph_global_root_add(fz->h, cell);
    if (s != EPH_OK) fz_fail(fz, "eph_global_root_add: %s", eph_status_name(s));
    fz->m.global_on[g] = true;
    fz->m.roots[FZ_NLOCALS + g] = mv;
  }
}

/*
 * The same variable registered twice (a local pushed again in a nested frame,
 * a registered global also on the shadow stack), then a collection.
 */
static void op_duplicate_roots(fuzz *fz) {
  eph_heap *h = fz->h;
  EPH_FRAME(h);
  eph_root_push(h, &fz->locals[below(fz, FZ_NLOCALS)]);
  eph_root_push(h, &fz->locals[below(fz, FZ_NLOCALS)]);
  size_t g = below(fz, FZ_NGLOBALS);
  if (fz->m.global_on[g]) eph_root_push(h, &fz->globals[g]);
  switch (below(fz, 3)) {
  case 0:
    if (eph_collect(h, EPH_GC_SCAVENGE) != EPH_OK) fz_fail(fz, "eph_collect(scavenge): %s", eph_heap_error(h));
    break;
  case 1:
    if (eph_collect(h, EPH_GC_FULL) != EPH_OK) fz_fail(fz, "eph_collect(full): %s", eph_heap_error(h));
    fz->expect_exact = true;
    break;
  default:
    for (int i = 0; i < 4; i++) op_alloc_pointers(fz);
    break;
  }
  EPH_UNFRAME(h);
}

static void op_collect_scavenge(fuzz *fz) {
  fz_arm_fate(fz);
  eph_status s = eph_collect(fz->h, EPH_GC_SCAVENGE);
  if (s != EPH_OK) fz_fail(fz, "eph_collect(scavenge) = %s: %s", eph_status_name(s), eph_heap_error(fz->h));
  fz->c.explicit_scavenges++;
}

static void op_collect_full(fuzz *fz) {
  /* Between operations the model's roots are all the roots (the mourn queue
     is empty): the model predicts exactly which ephemerons this GC mourns. */
  uint32_t *pred = NULL;
  size_t npred = 0;
  if (fz->ephemerons) {
    fz_eph_trace(fz, 0, &pred, &npred);
    fz->predict_gc = fz->gcs_seen + 1;
    fz->predict_hits = 0;
  }
  fz_arm_fate(fz);
  eph_status s = eph_collect(fz->h, EPH_GC_FULL);
  if (s != EPH_OK) fz_fail(fz, "eph_collect(full) = %s: %s", eph_status_name(s), eph_heap_error(fz->h));
  fz->c.explicit_fulls++;
  if (fz->ephemerons) {
    for (size_t i = 0; i < npred; i++) {
      const fz_obj *o = &fz->m.objs[pred[i]];
      if (!o->mourned || o->fin_gc != fz->predict_gc) {
        char k[96];
        fz_fail(fz,
                "explicit full GC #%" PRIu64 ": ephemeron id %" PRIu64 " (key %s) was reachable, unmourned and its key "
                "unreachable (the model's rounds), but its finaliser %s before eph_collect returned",
                fz->predict_gc, o->id, fz_describe_mval(fz, o->slots[0], k, sizeof k),
                o->mourned ? "ran for another collection" : "did not run");
      }
    }
    if (fz->predict_hits != npred)
      fz_fail(fz, "explicit full GC #%" PRIu64 ": the model predicted %zu mournings, finalisers ran for %" PRIu64
                  " ephemerons mourned by it (one with a reachable key, or an unreachable one)",
              fz->predict_gc, npred, fz->predict_hits);
    fz->c.eph_predicted += npred;
    fz->c.eph_exact_checks++;
    fz->predict_gc = 0;
    free(pred);
  }
  fz->expect_exact = true; /* checked right after this op */
}

/* Changes eden size and tenure age on the live heap (eph_heap_set_params). */
static void op_set_params(fuzz *fz) {
  eph_gc_params p = *eph_heap_params(fz->h);
  size_t base = fz->params.eden_bytes;
  switch (below(fz, 3)) {
  case 0: p.eden_bytes = base; break;
  case 1: p.eden_bytes = base * 2; break;
  default: p.eden_bytes = base / 2; break;
  }
  p.tenure_age = 1 + below(fz, 5);
  if (eph_gc_params_check(&p, NULL) != EPH_OK) return; /* e.g. eden too small: not this op's business */
  eph_status s = eph_heap_set_params(fz->h, &p);
  if (s != EPH_OK) fz_fail(fz, "eph_heap_set_params(eden=%zu, tenure=%lu) = %s: %s", p.eden_bytes, p.tenure_age,
                           eph_status_name(s), eph_heap_error(fz->h));
  /* Its full GC is not followed by a safe point: run what it mourned now. */
  if (fz->ephemerons) eph_run_finalizers(fz->h);
}

/* --- ephemerons ------------------------------------------------------------------- */

/* Where an ephemeron is made: young, pretenured in old space, or pinned
 * (eph_ephemeron_new_pinned: never moved nor reclaimed, a root to the
 * model). */
typedef enum fz_where { FZ_YOUNG, FZ_PRETENURED, FZ_PINNED } fz_where;
#define FZ_MAX_PINNED 400

/*
 * eph_ephemeron_new(key, value) with 0-2 extra user slots after the id slot,
 * finalised by the fuzzer's finaliser (by id, or as the class's), young or
 * pretenured.  key and value must be valid now (the call roots them itself).
 * Checks the fresh ephemeron, gives it a record.  Valid until the next allocation.
 */
static eph_value new_ephemeron(fuzz *fz, eph_value key, fz_mval kmv, eph_value value, fz_mval vmv, fz_where where,
                               uint32_t *mid_out) {
  eph_heap *h = fz->h;
  size_t user = 1 + below(fz, 3);
  fz_kind kind = chance(fz, 1, 3) ? FZ_CEPH : FZ_EPH;
  size_t fixed = kind == FZ_CEPH ? EPH_EPHEMERON_COMPACT_FIXED_SLOTS : EPH_EPHEMERON_FIXED_SLOTS, id_slot = fz_id_slot(kind);
  eph_finalizer_id fin = kind == FZ_CEPH || chance(fz, 1, 3) ? 0 : fz->fin_explicit;
  eph_value e = EPH_NIL;
  if (where == FZ_PINNED) { /* never collects; refused only when the maximum heap leaves no room */
    e = eph_ephemeron_new_pinned(h, fz->cls[kind], key, value, user, fin);
    if (e == EPH_NIL && eph_heap_status(h) != EPH_ERR_HEAP_EXHAUSTED)
      fz_fail(fz, "eph_ephemeron_new_pinned(%zu user slots) returned nil: %s", user, eph_heap_error(h));
    if (e == EPH_NIL) fz->c.eph_pinned_refused++, where = FZ_YOUNG;
  }
  bool old = where == FZ_PRETENURED;
  if (where != FZ_PINNED) e = eph_ephemeron_new(h, fz->cls[kind], key, value, user, fin, old);
  size_t n = fixed + user, size = n * sizeof(eph_value);
  if (e == EPH_NIL) fz_fail(fz, "eph_ephemeron_new(%zu user slots, %s) returned nil: %s", user, old ? "pretenured" : "young",
                            eph_heap_error(h));
  eph_header hdr = *eph_header_of(e);
  eph_header must_be_clear = EPH_HDR_FORWARDED | EPH_HDR_MOURNED | (fz->mode->observe_alloc ? 0 : EPH_HDR_AGE_MASK);
  if (!eph_is_ptr(e) || eph_class_of(e) != fz->cls[kind] || eph_format_of(e) != EPH_FORMAT_EPHEMERON ||
      eph_size_bytes(e) != size || (hdr & must_be_clear))
    fz_fail(fz, "eph_ephemeron_new: fresh ephemeron %#" PRIxPTR " has header %#" PRIx64 " (expected class %" PRIu32 ", %zu bytes)", e,
            (uint64_t)hdr, fz->cls[kind], size);
  if (old && eph_is_young(h, e)) fz_fail(fz, "eph_ephemeron_new(pretenured) returned a young ephemeron");
  if (where == FZ_PINNED) {
    uintptr_t base, top;
    eph_pinned_range(h, &base, &top);
    if (e < base || e >= top) fz_fail(fz, "eph_ephemeron_new_pinned returned %#" PRIxPTR ", outside the pinned space", e);
  }
  fz_mval exp[2] = {kmv, vmv};
  for (size_t k = 0; k < 2; k++) {
    eph_value got = eph_slot(e, k);
    if (fz_is_ref(exp[k]))
      fz_check_ident(fz, fz_ref_mid(exp[k]), got, k ? "eph_ephemeron_new value" : "eph_ephemeron_new key");
    else if ((fz_mval)got != exp[k])
      fz_fail(fz, "eph_ephemeron_new: slot %zu holds %#" PRIxPTR ", expected the immediate %#" PRIx64, k, got, exp[k]);
  }
  if (kind == FZ_EPH && eph_slot(e, EPH_EPHEMERON_FINALIZER) != eph_int((intptr_t)fin))
    fz_fail(fz, "eph_ephemeron_new: finaliser slot holds %#" PRIxPTR ", expected int %u", eph_slot(e, 2), fin);
  for (size_t k = fixed; k < n; k++)
    if (eph_slot(e, k) != EPH_NIL) fz_fail(fz, "eph_ephemeron_new: fresh user slot %zu is not nil", k);

  uint32_t mid = fz_model_new(&fz->m, kind, size);
  fz_obj *rec = &fz->m.objs[mid];
  rec->slots[0] = kmv;
  rec->slots[1] = vmv;
  if (kind == FZ_EPH) rec->slots[2] = (fz_mval)eph_int((intptr_t)fin);
  eph_store(h, e, id_slot, eph_int((intptr_t)rec->id));
  fz_eph_note(&fz->m, rec->id, mid);
  rec->addr = e;
  rec->addr_gc = fz->gcs_seen;
  if (fz->in_on_alloc)
    fz->c.nested_allocs++;
  else
    fz->c.allocs++;
  if (fz->in_finalizer && !fz->in_on_alloc) fz->c.allocs_in_finalizers++;
  if (old) fz->c.allocs_old++, fz->c.eph_pretenured++;
  if (where == FZ_PINNED) {
    fz_model *m = &fz->m;
    if (m->npinned == m->pinned_cap) {
      m->pinned_cap = m->pinned_cap ? 2 * m->pinned_cap : 64;
      m->pinned = fz_xrealloc(m->pinned, m->pinned_cap * sizeof *m->pinned);
    }
    m->pinned[m->npinned++] = (struct fz_pinned){mid, e};
    fz->c.eph_pinned++;
    if (!fz->in_on_alloc) fz->c.pinned_allocs++;
  }
  if (!fz_is_ref(kmv)) fz->c.eph_imm_keys++;
  fz->c.eph_created++;
  fz->c.bytes_allocated += fz_obj_bytes(size) + fz->trailer_bytes;
  fz_target t = {mid, e};
  for (size_t k = id_slot + 1; k < n; k++) {
    fz_mval mv;
    eph_value v = rand_value(fz, &mv);
    store(fz, &t, k, v, mv);
  }
  *mid_out = mid;
  return e;
}

/* A fresh small key object: a node, or (sometimes) a string; pretenured sometimes. */
static eph_value fresh_key(fuzz *fz, uint32_t *mid) {
  bool old = chance(fz, 1, 6);
  if (chance(fz, 1, 4)) return new_object(fz, FZ_STRING, rand_byte_count(fz), old, mid);
  eph_value o = new_object(fz, FZ_NODE, 1 + below(fz, 3), old, mid);
  fill_slots(fz, o, *mid, 1, 1);
  return o;
}

/*
 * Creates an ephemeron: the key is a reachable object, a fresh one (kept in a
 * root or not), another ephemeron's key (several on one key) or an
 * immediate; the value an immediate, a reachable object, a fresh node that
 * refers back to the key (a key<->value cycle), another ephemeron's key (a
 * chain), another ephemeron, the key itself, or fresh bytes.  Then placed
 * somewhere reachable (mostly) or dropped at once.
 */
static void op_eph_new(fuzz *fz) {
  eph_heap *h = fz->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, key);
  EPH_LOCAL(h, value);
  fz_mval kmv, vmv = (fz_mval)EPH_NIL;
  fz_target t;
  uint32_t mid;
  unsigned ks = (unsigned)below(fz, 10);
  if (ks == 0) {
    key = rand_immediate(fz);
    kmv = (fz_mval)key;
  } else if (ks <= 2 && pick(fz, PK_EPH, &t)) { /* several ephemerons on one key */
    key = eph_slot(t.addr, EPH_EPHEMERON_KEY);
    kmv = fz->m.objs[t.mid].slots[0];
  } else if (ks <= 5 && pick(fz, PK_ANY, &t)) {
    key = t.addr;
    kmv = fz_ref(t.mid);
  } else {
    key = fresh_key(fz, &mid);
    kmv = fz_ref(mid);
    if (chance(fz, 1, 2)) root_set(fz, rand_root_to_overwrite(fz), key, kmv); /* alive until that root is dropped */
  }
  switch (below(fz, 9)) {
  case 0: value = rand_immediate(fz), vmv = (fz_mval)value; break;
  case 1:
  case 2: value = rand_value(fz, &vmv); break;
  case 3:
  case 4: { /* key<->value cycle: the value refers to the key */
    value = new_object(fz, FZ_NODE, 3, chance(fz, 1, 6), &mid);
    fz_target nv = {mid, value};
    store(fz, &nv, 1, key, kmv);
    fz_mval mv;
    eph_value v = rand_value(fz, &mv);
    store(fz, &nv, 2, v, mv);
    vmv = fz_ref(mid);
    break;
  }
  case 5: /* a chain: this value is another ephemeron's key */
    if (pick(fz, PK_EPH, &t)) value = eph_slot(t.addr, EPH_EPHEMERON_KEY), vmv = fz->m.objs[t.mid].slots[0];
    break;
  case 6:
    if (pick(fz, PK_EPH, &t)) value = t.addr, vmv = fz_ref(t.mid);
    break;
  case 7: value = key, vmv = kmv; break;
  default:
    value = new_object(fz, FZ_BYTES, rand_byte_count(fz), false, &mid);
    vmv = fz_ref(mid);
    break;
  }
  /* pinned ones never die: a few hundred at most, so they do not fill the heap */
  fz_where where = fz->m.npinned < FZ_MAX_PINNED && chance(fz, 1, 8) ? FZ_PINNED
                   : chance(fz, 1, 3)                                 ? FZ_PRETENURED
                                                                      : FZ_YOUNG;
  eph_value e = new_ephemeron(fz, key, kmv, value, vmv, where, &mid);
  if (chance(fz, 4, 5)) {
    place(fz, e, fz_ref(mid));
    fz->c.eph_placed++;
  }
  EPH_UNFRAME(h);
}

/* Stores into a reachable ephemeron: a new value (often the key itself or an object holding it), rarely a new key, or a user slot. */
static void op_eph_store(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_EPH, &t)) return;
  const fz_obj *o = &fz->m.objs[t.mid];
  fz_mval mv;
  eph_value v;
  switch (below(fz, 6)) {
  case 0: /* a new key */
    v = rand_value(fz, &mv);
    store(fz, &t, EPH_EPHEMERON_KEY, v, mv);
    break;
  case 1: /* a user slot */
    if (o->nslots > fz_id_slot(o->kind) + 1) {
      size_t first = fz_id_slot(o->kind) + 1;
      v = rand_value(fz, &mv);
      store(fz, &t, first + below(fz, o->nslots - first), v, mv);
    }
    break;
  case 2: /* value = key */
    store(fz, &t, EPH_EPHEMERON_VALUE, eph_slot(t.addr, EPH_EPHEMERON_KEY), o->slots[0]);
    break;
  default:
    v = rand_value(fz, &mv);
    store(fz, &t, EPH_EPHEMERON_VALUE, v, mv);
    break;
  }
}

/*
 * Drops a reachable ephemeron's key: every reference to it from a root or a
 * reachable object (ephemeron key slots excepted) becomes nil.  A walk first
 * gives every reachable record its current address.
 */
static void op_eph_drop_key(fuzz *fz) {
  fz_target t;
  if (!pick(fz, PK_EPH, &t)) return;
  fz_mval k = fz->m.objs[t.mid].slots[0];
  if (!fz_is_ref(k)) return;
  fz_walk(fz, true, false);
  fz_model *m = &fz->m;
  for (size_t r = 0; r < FZ_NROOTS; r++)
    if (m->roots[r] == k) root_set(fz, r, EPH_NIL, (fz_mval)EPH_NIL);
  for (uint32_t mid = 0; mid < m->nobjs; mid++) {
    fz_obj *o = &m->objs[mid];
    if (!o->id || o->epoch != m->epoch || fz_kind_is_bytes(o->kind)) continue;
    for (size_t j = o->kind == FZ_EPH ? 1 : 1; j < o->nslots; j++) {
      if (fz_kind_is_eph(o->kind) && (j == EPH_EPHEMERON_FINALIZER || j == fz_id_slot(o->kind))) continue;
      if (o->slots[j] != k) continue;
      fz_target s = {mid, o->addr};
      store(fz, &s, j, EPH_NIL, (fz_mval)EPH_NIL);
    }
  }
}

/* A mini deep check from a mourned ephemeron: up to 64 objects reachable from it, heap against model. */
static void deep_check(fuzz *fz, uint32_t mid, eph_value a) {
  uint32_t seen[64], stack_mid[64];
  eph_value stack_addr[64];
  size_t nseen = 0, top = 0;
  stack_mid[top] = mid;
  stack_addr[top++] = a;
  while (top && nseen < 64) {
    uint32_t x = stack_mid[--top];
    eph_value xa = stack_addr[top];
    bool dup = false;
    for (size_t i = 0; i < nseen && !dup; i++) dup = seen[i] == x;
    if (dup) continue;
    seen[nseen++] = x;
    fz_check_object(fz, x, xa, "finaliser (reachable from the mourned ephemeron)");
    const fz_obj *o = &fz->m.objs[x];
    for (size_t k = 0; k < o->nslots && top < 64; k++)
      if (fz_is_ref(o->slots[k])) {
        stack_mid[top] = fz_ref_mid(o->slots[k]);
        stack_addr[top++] = eph_slot(xa, k);
      }
  }
}

static size_t rand_global(fuzz *fz) {
  for (int i = 0; i < 16; i++) {
    size_t g = below(fz, FZ_NGLOBALS);
    if (fz->m.global_on[g]) return FZ_NLOCALS + g;
  }
  return below(fz, FZ_NLOCALS);
}

/*
 * The finaliser of every fuzzer ephemeron.  The observer queued one tag per
 * mourning (queue order = mourning order), so it knows which collection
 * mourned this one.  It checks: the ephemeron is one the fuzzer made, never
 * finalised before, mourned; if the model still has it, everything it
 * reaches matches the model, and its key was not reachable (before
 * mourning) in the model at that collection; if the model had forgotten it
 * (garbage at the last check), only a scavenge may have mourned it (rule
 * 4's caveat).  Then, sometimes, it resurrects the ephemeron or its key into
 * a global root, allocates, or stores.
 */
void fz_finalizer(eph_heap *h, eph_value e, void *data) {
  fuzz *fz = data;
  EPH_FRAME(h);
  EPH_ROOT(h, e);
  if (fz->in_finalizer) fz_fail(fz, "finaliser called while another finaliser runs (they must be queued, not nested)");
  if (fz->tag_head == fz->tag_len)
    fz_fail(fz, "finaliser called for %#" PRIxPTR ", but every mourning the collections reported was finalised already", e);
  fz_mourn_tag tag = fz->tags[fz->tag_head++];
  if (fz->tag_head == fz->tag_len) fz->tag_head = fz->tag_len = 0;
  fz->in_finalizer = true;
  fz->fin_in_op = true;
  const char *gck = tag.kind == EPH_GC_FULL ? "full GC" : "scavenge";
  fz_kind ekind = eph_is_ptr(e) && eph_class_of(e) == fz->cls[FZ_CEPH] ? FZ_CEPH : FZ_EPH;
  if (!eph_is_ptr(e) || eph_format_of(e) != EPH_FORMAT_EPHEMERON || eph_class_of(e) != fz->cls[ekind] ||
      eph_size_bytes(e) < (fz_id_slot(ekind) + 1) * sizeof(eph_value))
    fz_fail(fz, "finaliser got %#" PRIxPTR ", not a fuzzer ephemeron", e);
  if (!eph_ephemeron_is_mourned(e)) fz_fail(fz, "finaliser got ephemeron %#" PRIxPTR " without the MOURNED flag", e);
  eph_value idv = eph_slot(e, fz_id_slot(ekind));
  uint64_t id = eph_is_int(idv) ? (uint64_t)eph_int_value(idv) : 0;
  fz_model *m = &fz->m;
  if (!id || id >= m->eph_cap || !m->eph_state[id])
    fz_fail(fz, "finaliser (%s #%" PRIu64 "): ephemeron %#" PRIxPTR " carries id word %#" PRIxPTR ", no ephemeron the fuzzer made",
            gck, tag.gc, e, idv);
  if (m->eph_state[id] == 2)
    fz_fail(fz, "finaliser (%s #%" PRIu64 "): ephemeron id %" PRIu64 " is finalised a second time (rule 3)", gck, tag.gc, id);
  m->eph_state[id] = 2;
  fz->c.eph_finalised++;
  uint32_t mid = fz_eph_lookup(m, id);
  if (mid == FZ_NONE) {
    /* Garbage at the last check.  Only a scavenge, which counts old space as
       live, may mourn an unreachable ephemeron (rule 4's caveat). */
    if (tag.kind != EPH_GC_SCAVENGE)
      fz_fail(fz, "finaliser: full GC #%" PRIu64 " mourned ephemeron id %" PRIu64 ", which was unreachable (rule 4: reclaimed silently)",
              tag.gc, id);
    fz->c.eph_caveat++;
    fz->in_finalizer = false;
    EPH_UNFRAME(h);
    return;
  }
  fz_obj *o = &m->objs[mid];
  if (o->mourned) fz_fail(fz, "finaliser: ephemeron id %" PRIu64 " was finalised before (model)", id);
  deep_check(fz, mid, e);
  fz_mval k = o->slots[0];
  if (!fz_is_ref(k))
    fz_fail(fz, "finaliser (%s #%" PRIu64 "): ephemeron id %" PRIu64 " has an immediate key and was mourned (rule 5)", gck,
            tag.gc, id);
  const fz_obj *ko = &m->objs[fz_ref_mid(k)];
  if (ko->reach_gc == tag.gc) {
    char d[96];
    fz_fail(fz, "finaliser: %s #%" PRIu64 " mourned ephemeron id %" PRIu64 " (%s), but its key %s was reachable "
                "(without mourning anything) from the roots the model knows at that collection",
            gck, tag.gc, id, o->reach_gc == tag.gc ? "itself reachable" : "itself not reachable in the model",
            fz_describe_mval(fz, k, d, sizeof d));
  }
  if (o->reach_gc != tag.gc) fz->c.eph_fin_garbage_known++; /* not reachable in the model: a temporary root, or rule 4's caveat */
  o->mourned = true;
  o->fin_gc = tag.gc;
  if (tag.gc == fz->predict_gc) fz->predict_hits++;

  /* Sometimes: resurrect, allocate, store. */
  if (chance(fz, 1, 4)) {
    root_set(fz, rand_global(fz), e, fz_ref(mid));
    fz->c.eph_resurrected++;
  }
  if (chance(fz, 1, 8)) root_set(fz, rand_global(fz), eph_slot(e, EPH_EPHEMERON_KEY), k);
  if (chance(fz, 1, 4)) {
    uint32_t nm;
    eph_value n = new_object(fz, FZ_NODE, 4, chance(fz, 1, 8), &nm); /* may collect: e is rooted */
    fz_target nt = {nm, n};
    store(fz, &nt, 1, e, fz_ref(mid));
    fz_mval mv;
    eph_value v = rand_value(fz, &mv);
    store(fz, &nt, 2, v, mv);
    place(fz, n, fz_ref(nm));
    fz->c.eph_fin_allocs++;
  }
  if (chance(fz, 1, 8)) op_store(fz);
  fz->in_finalizer = false;
  EPH_UNFRAME(h);
}

/* --- the table -------------------------------------------------------------------- */

typedef enum fz_weight_kind { W_FIXED, W_LARGE, W_SCAVENGE, W_FULL, W_SET_PARAMS } fz_weight_kind;

typedef struct fz_op {
  const char *name;
  void (*fn)(fuzz *fz);
  unsigned weight; /* per 10000, for W_FIXED */
  fz_weight_kind wkind;
  bool drops; /* shrinks the graph: preferred under pressure */
} fz_op;

static const fz_op fz_ops[] = {
    {"alloc_pointers", op_alloc_pointers, 1800, W_FIXED, false},
    {"alloc_bytes", op_alloc_bytes, 900, W_FIXED, false},
    {"alloc_old", op_alloc_old, 250, W_FIXED, false},
    {"alloc_large", op_alloc_large, 0, W_LARGE, false},
    {"store", op_store, 2300, W_FIXED, false},
    {"store_young_into_old", op_store_young_into_old, 400, W_FIXED, false},
    {"drop_root", op_drop_root, 250, W_FIXED, true},
    {"move_root", op_move_root, 400, W_FIXED, false},
    {"root_from_slot", op_root_from_slot, 400, W_FIXED, false},
    {"cut", op_cut, 200, W_FIXED, true},
    {"chain", op_chain, 120, W_FIXED, false},
    {"tree", op_tree, 50, W_FIXED, false},
    {"rewrite_bytes", op_rewrite_bytes, 200, W_FIXED, false},
    {"spot_check", op_spot_check, 400, W_FIXED, false},
    {"global_toggle", op_global_toggle, 40, W_FIXED, false},
    {"duplicate_roots", op_duplicate_roots, 10, W_FIXED, false},
    {"collect_scavenge", op_collect_scavenge, 0, W_SCAVENGE, false},
    {"collect_full", op_collect_full, 0, W_FULL, false},
    {"set_params", op_set_params, 0, W_SET_PARAMS, false},
};
#define FZ_NOPS (sizeof fz_ops / sizeof fz_ops[0])

/* With --ephemerons, one step in eph_chance_of_1000 comes from this table. */
static const fz_op fz_eph_ops[] = {
    {"eph_new", op_eph_new, 5000, W_FIXED, false},
    {"eph_store", op_eph_store, 2000, W_FIXED, false},
    {"eph_drop_key", op_eph_drop_key, 800, W_FIXED, true},
    {"eph_alloc_pointers", op_alloc_pointers, 1000, W_FIXED, false},
    {"eph_collect_full", op_collect_full, 700, W_FIXED, false},
    {"eph_collect_scavenge", op_collect_scavenge, 500, W_FIXED, false},
};
#define FZ_NEPH_OPS (sizeof fz_eph_ops / sizeof fz_eph_ops[0])
#define EPH_STEPS_PER_1000 120

static unsigned op_weight(const fuzz *fz, const fz_op *op) {
  switch (op->wkind) {
  case W_LARGE: return fz->mode->w_large;
  case W_SCAVENGE: return fz->mode->w_scavenge;
  case W_FULL: return fz->mode->w_full;
  case W_SET_PARAMS: return fz->mode->w_set_params;
  default: return op->weight;
  }
}

static unsigned total_weight;

void fz_ops_init(fuzz *fz) {
  total_weight = 0;
  for (size_t i = 0; i < FZ_NOPS; i++) total_weight += op_weight(fz, &fz_ops[i]);
  fz->op_counts = calloc(FZ_NOPS + FZ_NEPH_OPS, sizeof *fz->op_counts);
  if (!fz->op_counts) fz_xrealloc(NULL, SIZE_MAX);
}

size_t fz_op_count(void) { return FZ_NOPS + FZ_NEPH_OPS; }
const char *fz_op_name(size_t i) { return i < FZ_NOPS ? fz_ops[i].name : fz_eph_ops[i - FZ_NOPS].name; }

void fz_op_step(fuzz *fz) {
  size_t i;
  fz->fin_in_op = false;
  if (fz->ephemerons && chance(fz, EPH_STEPS_PER_1000, 1000)) {
    unsigned tw = 0;
    for (i = 0; i < FZ_NEPH_OPS; i++) tw += fz_eph_ops[i].weight;
    unsigned w = (unsigned)below(fz, tw);
    for (i = 0; i < FZ_NEPH_OPS; i++) {
      if (w < fz_eph_ops[i].weight) break;
      w -= fz_eph_ops[i].weight;
    }
    if (fz->pressure && !fz_eph_ops[i].drops && fz_eph_ops[i].fn == op_eph_new && chance(fz, 1, 2)) i = 2; /* drop a key instead */
    if (fz->verbose) fprintf(stderr, "op %" PRIu64 ": %s\n", fz->op, fz_eph_ops[i].name);
    fz->op_counts[FZ_NOPS + i]++;
    fz_eph_ops[i].fn(fz);
    return;
  }
  if (fz->pressure && chance(fz, 1, 2)) {
    /* Over the bounds: shrink the graph (the next check recomputes pressure). */
    do i = below(fz, FZ_NOPS);
    while (!fz_ops[i].drops);
  } else {
    do {
      unsigned w = (unsigned)below(fz, total_weight);
      for (i = 0; i < FZ_NOPS; i++) {
        unsigned wi = op_weight(fz, &fz_ops[i]);
        if (w < wi) break;
        w -= wi;
      }
    } while (fz->grow && fz_ops[i].drops && chance(fz, 3, 4)); /* small graph: drop less */
  }
  if (fz->verbose) fprintf(stderr, "op %" PRIu64 ": %s\n", fz->op, fz_ops[i].name);
  fz->op_counts[i]++;
  fz_ops[i].fn(fz);
}
