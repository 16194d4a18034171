/*
 * modelload — importing a software model into Moose: the Moose benchmark of
 * FiLiP (Jordan Montaño et al., ISMM 2024, §4.3), which loads a company's
 * software model (13 521 classes, 48 087 methods) into the FAMIX metamodel.
 *
 * The input is a generated model in MSE, Moose's textual exchange format,
 * one element per line and deterministic from the seed:
 *
 *   (FAMIX.Class (id: 12) (name 'Foo') (parentPackage (ref: 3)))
 *   (FAMIX.Invocation (id: 50) (sender (ref: 30)) (candidates (ref: 31) (ref: 35)) (signature 'foo()'))
 *
 * with packages, classes, attributes, methods, inheritances, invocations and
 * accesses.  The importer reads each line into a ByteString, scans it with
 * a ReadStream into MSEToken objects (keywords as ByteStrings), and builds
 * the entity: all of that is short-lived.  The model graph is long-lived:
 * entities with their names and signatures (the scanned ByteStrings are
 * kept), and the FAMIX opposites kept in hashed Sets (a class's methods, a
 * method's incoming invocations...) that rehash into bigger Arrays as they
 * grow, leaving the old Arrays as garbage.  References are resolved by id
 * through a Dictionary of Associations; a reference to an element not read
 * yet becomes an FMDanglingReference in a LinkedList of ValueLinks,
 * resolved once the whole file has been read.
 *
 * The size counts classes; there are ~3.5 methods and 2 attributes per
 * class, and per method ~2.5 invocations and 1.5 accesses.
 */
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum {
  C_MODEL,
  C_PACKAGE,
  C_CLASS,
  C_ATTRIBUTE,
  C_METHOD,
  C_INHERITANCE,
  C_INVOCATION,
  C_ACCESS,
  C_SET,
  C_DICTIONARY,
  C_ASSOCIATION,
  C_ORDERED,
  C_ARRAY,
  C_STRING,
  C_STREAM,
  C_TOKEN,
  C_LINKED_LIST,
  C_VALUE_LINK,
  C_DANGLING,
  NCLASSES
};
static const wl_class classes[] = {
    [C_MODEL] = {"MooseModel", EPH_FORMAT_POINTERS},
    [C_PACKAGE] = {"FAMIXPackage", EPH_FORMAT_POINTERS},
    [C_CLASS] = {"FAMIXClass", EPH_FORMAT_POINTERS},
    [C_ATTRIBUTE] = {"FAMIXAttribute", EPH_FORMAT_POINTERS},
    [C_METHOD] = {"FAMIXMethod", EPH_FORMAT_POINTERS},
    [C_INHERITANCE] = {"FAMIXInheritance", EPH_FORMAT_POINTERS},
    [C_INVOCATION] = {"FAMIXInvocation", EPH_FORMAT_POINTERS},
    [C_ACCESS] = {"FAMIXAccess", EPH_FORMAT_POINTERS},
    [C_SET] = {"Set", EPH_FORMAT_POINTERS},
    [C_DICTIONARY] = {"Dictionary", EPH_FORMAT_POINTERS},
    [C_ASSOCIATION] = {"Association", EPH_FORMAT_POINTERS},
    [C_ORDERED] = {"OrderedCollection", EPH_FORMAT_POINTERS},
    [C_ARRAY] = {"Array", EPH_FORMAT_POINTERS},
    [C_STRING] = {"ByteString", EPH_FORMAT_BYTES},
    [C_STREAM] = {"ReadStream", EPH_FORMAT_POINTERS},
    [C_TOKEN] = {"MSEToken", EPH_FORMAT_POINTERS},
    [C_LINKED_LIST] = {"LinkedList", EPH_FORMAT_POINTERS},
    [C_VALUE_LINK] = {"ValueLink", EPH_FORMAT_POINTERS},
    [C_DANGLING] = {"FMDanglingReference", EPH_FORMAT_POINTERS},
};

/* Slots.  Every entity has its id in slot 0 (also its hash in Sets). */
enum { E_ID, E_NAME };
enum { P_CLASSES = 2, P_SLOTS };
enum { K_PACKAGE = 2, K_SUPER_INHERITANCE, K_SUB_INHERITANCES, K_METHODS, K_ATTRIBUTES, K_SLOTS };
enum { A_PARENT = 2, A_ACCESSES, A_SLOTS };
enum { M_SIGNATURE = 2, M_PARENT, M_OUTGOING, M_INCOMING, M_ACCESSES, M_SLOTS };
enum { I_SUBCLASS = 1, I_SUPERCLASS, I_SLOTS };
enum { V_SENDER = 1, V_CANDIDATES, V_SIGNATURE, V_SLOTS };
enum { X_ACCESSOR = 1, X_VARIABLE, X_IS_WRITE, X_SLOTS };
enum { MODEL_ENTITIES, MODEL_BY_ID, MODEL_DANGLING, MODEL_SLOTS };
enum { SET_TALLY, SET_ARRAY, SET_SLOTS };          /* Set and Dictionary */
enum { ASSOC_KEY, ASSOC_VALUE, ASSOC_SLOTS };
enum { OC_ARRAY, OC_TALLY, OC_SLOTS };
enum { RS_COLLECTION, RS_POSITION, RS_LIMIT, RS_SLOTS };
enum { T_KIND, T_TEXT, T_VALUE, T_SLOTS };
enum { LL_FIRST, LL_LAST, LL_SLOTS };
enum { VL_NEXT, VL_VALUE, VL_SLOTS };
enum { DR_ENTITY, DR_ROLE, DR_ID, DR_INDEX, DR_SLOTS };

enum { TOK_OPEN, TOK_CLOSE, TOK_NAME, TOK_STRING, TOK_NUMBER };

/* The element kinds, in the order of the class table. */
static const char *const kind_names[] = {
    [C_PACKAGE] = "FAMIX.Package",         [C_CLASS] = "FAMIX.Class",           [C_ATTRIBUTE] = "FAMIX.Attribute",
    [C_METHOD] = "FAMIX.Method",           [C_INHERITANCE] = "FAMIX.Inheritance", [C_INVOCATION] = "FAMIX.Invocation",
    [C_ACCESS] = "FAMIX.Access",
};
static const size_t kind_slots[] = {
    [C_PACKAGE] = P_SLOTS,         [C_CLASS] = K_SLOTS,           [C_ATTRIBUTE] = A_SLOTS, [C_METHOD] = M_SLOTS,
    [C_INHERITANCE] = I_SLOTS,     [C_INVOCATION] = V_SLOTS,      [C_ACCESS] = X_SLOTS,
};

/* The attributes (roles) of MSE elements. */
enum {
  R_ID, R_NAME, R_SIGNATURE, R_PARENT_PACKAGE, R_PARENT_TYPE, R_SUBCLASS, R_SUPERCLASS, R_SENDER,
  R_CANDIDATES, R_ACCESSOR, R_VARIABLE, R_IS_WRITE, NROLES
};
static const char *const role_names[NROLES] = {
    "id:", "name", "signature", "parentPackage", "parentType", "subclass",
    "superclass", "sender", "candidates", "accessor", "variable", "isWrite",
};

/* --- the input: a generated model -------------------------------------------- */

/* Shape of the model; ids are given by kind: packages, classes, attributes,
 * methods, then relationships in the order of the file. */
typedef struct ml_gen {
  uint64_t seed;
  uint32_t nclasses, npackages;
  uint32_t *attr_first, *meth_first; /* per class, prefix sums (nclasses + 1 entries) */
  int64_t class_base, attr_base, meth_base, rel_base;
} ml_gen;

/* What the check compares: counted while generating. */
typedef struct ml_totals {
  uint64_t packages, classes, attributes, methods, inheritances, invocations, accesses, candidates;
  uint64_t incoming; /* distinct (invocation, candidate) pairs: what the methods' incoming Sets hold */
  uint64_t invocation_checksum, superclass_checksum, access_checksum;
} ml_totals;

static uint64_t mix(uint64_t seed, uint64_t k, uint64_t salt) {
  return seed * UINT64_C(0x9E3779B97F4A7C15) ^ (k + 1) * UINT64_C(0xBF58476D1CE4E5B9) ^ salt;
}

static void class_shape(const ml_gen *g, uint32_t k, uint32_t *nattr, uint32_t *nmeth) {
  wl_rng r;
  wl_rng_seed(&r, mix(g->seed, k, 1));
  *nattr = (uint32_t)wl_rng_below(&r, 5);
  *nmeth = 1 + (uint32_t)wl_rng_below(&r, 6);
}

static int gen_init(wl_ctx *w, ml_gen *g, uint64_t seed, uint32_t nclasses) {
  g->seed = seed;
  g->nclasses = nclasses;
  g->npackages = nclasses / 40 + 1;
  g->attr_first = wl_malloc(w, (nclasses + 1) * sizeof *g->attr_first);
  g->meth_first = wl_malloc(w, (nclasses + 1) * sizeof *g->meth_first);
  if (!g->attr_first || !g->meth_first) return -1;
  g->attr_first[0] = g->meth_first[0] = 0;
  for (uint32_t k = 0; k < nclasses; k++) {
    uint32_t na, nm;
    class_shape(g, k, &na, &nm);
    g->attr_first[k + 1] = g->attr_first[k] + na;
    g->meth_first[k + 1] = g->meth_first[k] + nm;
  }
  g->class_base = 1 + (int64_t)g->npackages;
  g->attr_base = g->class_base + nclasses;
  g->meth_base = g->attr_base + g->attr_first[nclasses];
  g->rel_base = g->meth_base + g->meth_first[nclasses];
  return 0;
}

static void gen_free(wl_ctx *w, ml_gen *g) {
  wl_free(w, g->attr_first);
  wl_free(w, g->meth_first);
}

static uint32_t package_of(const ml_gen *g, uint32_t k) { return (uint32_t)((uint64_t)k * g->npackages / g->nclasses); }

static const char *const words[] = {"Account", "Order", "Invoice", "Customer", "Ledger", "Report", "Session", "Cache",
                                    "Parser", "Node", "Visitor", "Builder", "Policy", "Event", "Queue", "Record"};

static void class_name(uint32_t k, char *buf, size_t len) {
  snprintf(buf, len, "%s%s%u", words[k % 16], words[(k / 16) % 16], k);
}
static void method_name(uint32_t m, char *buf, size_t len) {
  static const char *const verbs[] = {"get", "set", "compute", "visit", "build", "check", "load", "store"};
  snprintf(buf, len, "%s%s%u", verbs[m % 8], words[(m / 8) % 16], m);
}

/* Emits the lines of the model one at a time, like reading a file. */
typedef struct ml_emitter {
  wl_ctx *w;              /* whose memory holds the lines */
  const ml_gen *g;
  ml_totals *t;
  uint32_t k;             /* next class */
  int64_t next_rel;       /* next relationship id */
  char (*lines)[320];     /* the current class's block */
  size_t nlines, cap, next;
} ml_emitter;

static char *emit(ml_emitter *e) {
  if (e->nlines == e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 64;
    char(*l)[320] = wl_realloc(e->w, e->lines, cap * sizeof *l);
    if (!l) abort();
    e->lines = l;
    e->cap = cap;
  }
  return e->lines[e->nlines++];
}

/* The block of class k: its package (first class of a package), the class,
 * its inheritance, attributes and methods, then the methods' invocations
 * and accesses (which may name methods and attributes of later classes). */
static void emit_class(ml_emitter *e, uint32_t k) {
  const ml_gen *g = e->g;
  ml_totals *t = e->t;
  uint32_t pkg = package_of(g, k), nattr = g->attr_first[k + 1] - g->attr_first[k],
           nmeth = g->meth_first[k + 1] - g->meth_first[k];
  int64_t cid = g->class_base + k;
  char name[64];
  wl_rng r;
  wl_rng_seed(&r, mix(g->seed, k, 2));
  if (k == 0 || package_of(g, k - 1) != pkg) {
    snprintf(emit(e), 320, "(FAMIX.Package (id: %u) (name 'com.acme.module%u'))", pkg + 1, pkg);
    t->packages++;
  }
  class_name(k, name, sizeof name);
  snprintf(emit(e), 320, "(FAMIX.Class (id: %lld) (name '%s') (parentPackage (ref: %u)))", (long long)cid, name,
           pkg + 1);
  t->classes++;
  if (k > 0 && wl_rng_below(&r, 5) != 0) {
    uint32_t super = (uint32_t)wl_rng_below(&r, k);
    snprintf(emit(e), 320, "(FAMIX.Inheritance (id: %lld) (subclass (ref: %lld)) (superclass (ref: %lld)))",
             (long long)e->next_rel++, (long long)cid, (long long)(g->class_base + super));
    t->inheritances++;
    t->superclass_checksum += (uint64_t)cid * (uint64_t)(g->class_base + super);
  }
  for (uint32_t a = 0; a < nattr; a++) {
    uint32_t ga = g->attr_first[k] + a;
    snprintf(emit(e), 320, "(FAMIX.Attribute (id: %lld) (name '%c%s%u') (parentType (ref: %lld)))",
             (long long)(g->attr_base + ga), 'a' + (char)(ga % 26), words[ga % 16], ga, (long long)cid);
    t->attributes++;
  }
  for (uint32_t m = 0; m < nmeth; m++) {
    uint32_t gm = g->meth_first[k] + m;
    method_name(gm, name, sizeof name);
    snprintf(emit(e), 320, "(FAMIX.Method (id: %lld) (name '%s') (signature '%s(%s, int)') (parentType (ref: %lld)))",
             (long long)(g->meth_base + gm), name, name, words[gm % 16], (long long)cid);
    t->methods++;
  }
  uint32_t all_methods = g->meth_first[g->nclasses], all_attrs = g->attr_first[g->nclasses];
  for (uint32_t m = 0; m < nmeth; m++) {
    int64_t mid = g->meth_base + g->meth_first[k] + m;
    for (uint32_t i = 0, n = (uint32_t)wl_rng_below(&r, 6); i < n; i++) {
      int64_t vid = e->next_rel++;
      char *p = emit(e), *end = p + 320;
      p += snprintf(p, (size_t)(end - p), "(FAMIX.Invocation (id: %lld) (sender (ref: %lld)) (candidates",
                    (long long)vid, (long long)mid);
      uint32_t ncand = 1 + (uint32_t)wl_rng_below(&r, 3), target = 0, seen[3];
      for (uint32_t c = 0; c < ncand; c++) {
        target = (uint32_t)wl_rng_below(&r, all_methods);
        bool again = false;
        for (uint32_t i2 = 0; i2 < c; i2++) again |= seen[i2] == target;
        seen[c] = target;
        t->incoming += !again;
        p += snprintf(p, (size_t)(end - p), " (ref: %lld)", (long long)(g->meth_base + target));
        t->invocation_checksum += (uint64_t)(c + 1) * (uint64_t)(g->meth_base + target) * (uint64_t)mid;
      }
      method_name(target, name, sizeof name);
      snprintf(p, (size_t)(end - p), ") (signature '%s()'))", name);
      t->invocations++;
      t->candidates += ncand;
    }
    for (uint32_t i = 0, n = all_attrs ? (uint32_t)wl_rng_below(&r, 4) : 0; i < n; i++) {
      uint32_t var = nattr && wl_rng_below(&r, 4) ? g->attr_first[k] + (uint32_t)wl_rng_below(&r, nattr)
                                                  : (uint32_t)wl_rng_below(&r, all_attrs);
      bool write = wl_rng_below(&r, 3) == 0;
      snprintf(emit(e), 320, "(FAMIX.Access (id: %lld) (accessor (ref: %lld)) (variable (ref: %lld)) (isWrite %s))",
               (long long)e->next_rel++, (long long)mid, (long long)(g->attr_base + var), write ? "true" : "false");
      t->accesses++;
      t->access_checksum += (uint64_t)mid * (uint64_t)(g->attr_base + var) * (write ? 3u : 1u);
    }
  }
}

/* The next line, or NULL at the end of the file. */
static const char *next_line(ml_emitter *e) {
  while (e->next == e->nlines) {
    if (e->k == e->g->nclasses) return NULL;
    e->nlines = e->next = 0;
    emit_class(e, e->k++);
  }
  return e->lines[e->next++];
}

/* --- the loader -------------------------------------------------------------- */

typedef struct ml_loader {
  wl_ctx *w;
  eph_value model;  /* rooted by run() */
  uint64_t errors;  /* malformed input (there should be none) */
  uint64_t dangling;
} ml_loader;

static inline intptr_t int_at(eph_value obj, size_t i) { return eph_int_value(eph_slot(obj, i)); }
static inline bool is_a(ml_loader *d, eph_value obj, size_t ci) { return eph_class_of(obj) == d->w->cls[ci]; }

static bool string_is(eph_value s, const char *text) {
  size_t n = strlen(text);
  return s != EPH_NIL && eph_size_bytes(s) == n && memcmp(eph_bytes(s), text, n) == 0;
}

/* --- OrderedCollection --- */

static eph_value new_ordered(ml_loader *d, size_t capacity) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, oc);
  oc = WL_NEW(d->w, C_ORDERED, OC_SLOTS);
  eph_value array = WL_NEW(d->w, C_ARRAY, capacity);
  eph_store(h, oc, OC_ARRAY, array);
  eph_store(h, oc, OC_TALLY, eph_int(0));
  EPH_RETURN(h, oc);
}

static void ordered_add(ml_loader *d, eph_value oc, eph_value v) {
  eph_heap *h = d->w->h;
  size_t n = (size_t)int_at(oc, OC_TALLY);
  eph_value array = eph_slot(oc, OC_ARRAY);
  if (n == eph_slot_count(array)) {
    EPH_FRAME(h);
    EPH_ROOT(h, oc);
    EPH_ROOT(h, v);
    eph_value bigger = WL_NEW(d->w, C_ARRAY, n ? 2 * n : 4);
    array = eph_slot(oc, OC_ARRAY);
    for (size_t i = 0; i < n; i++) eph_store(h, bigger, i, eph_slot(array, i));
    eph_store(h, oc, OC_ARRAY, bigger);
    array = bigger;
    EPH_UNFRAME(h);
  }
  eph_store(h, array, n, v);
  eph_store(h, oc, OC_TALLY, eph_int((intptr_t)n + 1));
}

static size_t ordered_size(eph_value oc) { return (size_t)int_at(oc, OC_TALLY); }
static eph_value ordered_at(eph_value oc, size_t i) { return eph_slot(eph_slot(oc, OC_ARRAY), i); }

/* --- Set of entities (hashed by id) and Dictionary id -> entity --- */

static size_t probe_start(intptr_t key, size_t capacity) {
  return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (capacity - 1);
}

static eph_value new_hashed(ml_loader *d, size_t ci, size_t capacity) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, set);
  set = WL_NEW(d->w, ci, SET_SLOTS);
  eph_value array = WL_NEW(d->w, C_ARRAY, capacity);
  eph_store(h, set, SET_TALLY, eph_int(0));
  eph_store(h, set, SET_ARRAY, array);
  EPH_RETURN(h, set);
}

/* The key of an element: an entity's id, an Association's key. */
static intptr_t element_key(eph_value element) { return int_at(element, 0); }

/* Puts element (known not to be present) into array by its key. */
static void hashed_place(eph_heap *h, eph_value array, eph_value element) {
  size_t capacity = eph_slot_count(array), i = probe_start(element_key(element), capacity);
  while (eph_slot(array, i) != EPH_NIL) i = (i + 1) & (capacity - 1);
  eph_store(h, array, i, element);
}

/* Grows a Set or Dictionary to twice its capacity: the old Array dies. */
static void hashed_grow(ml_loader *d, eph_value set) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, set);
  size_t capacity = eph_slot_count(eph_slot(set, SET_ARRAY));
  eph_value bigger = WL_NEW(d->w, C_ARRAY, 2 * capacity);
  eph_value old = eph_slot(set, SET_ARRAY);
  for (size_t i = 0; i < capacity; i++)
    if (eph_slot(old, i) != EPH_NIL) hashed_place(h, bigger, eph_slot(old, i));
  eph_store(h, set, SET_ARRAY, bigger);
  EPH_UNFRAME(h);
}

/* Set add: element (an entity or Association) unless one with its key is in. */
static void hashed_add(ml_loader *d, eph_value set, eph_value element) {
  eph_heap *h = d->w->h;
  size_t tally = (size_t)int_at(set, SET_TALLY);
  if (4 * (tally + 1) > 3 * eph_slot_count(eph_slot(set, SET_ARRAY))) {
    EPH_FRAME(h);
    EPH_ROOT(h, set);
    EPH_ROOT(h, element);
    hashed_grow(d, set);
    EPH_UNFRAME(h);
  }
  eph_value array = eph_slot(set, SET_ARRAY);
  intptr_t key = element_key(element);
  size_t capacity = eph_slot_count(array), i = probe_start(key, capacity);
  for (eph_value e; (e = eph_slot(array, i)) != EPH_NIL; i = (i + 1) & (capacity - 1))
    if (element_key(e) == key) return;
  eph_store(h, array, i, element);
  eph_store(h, set, SET_TALLY, eph_int((intptr_t)tally + 1));
}

static size_t hashed_size(eph_value set) { return (size_t)int_at(set, SET_TALLY); }

/* Dictionary at: id — the entity, or EPH_NIL. */
static eph_value dictionary_at(eph_value dict, intptr_t key) {
  eph_value array = eph_slot(dict, SET_ARRAY);
  size_t capacity = eph_slot_count(array), i = probe_start(key, capacity);
  for (eph_value a; (a = eph_slot(array, i)) != EPH_NIL; i = (i + 1) & (capacity - 1))
    if (int_at(a, ASSOC_KEY) == key) return eph_slot(a, ASSOC_VALUE);
  return EPH_NIL;
}

static void dictionary_put(ml_loader *d, eph_value dict, intptr_t key, eph_value value) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, dict);
  EPH_ROOT(h, value);
  eph_value assoc = WL_NEW(d->w, C_ASSOCIATION, ASSOC_SLOTS);
  eph_store(h, assoc, ASSOC_KEY, eph_int(key));
  eph_store(h, assoc, ASSOC_VALUE, value);
  hashed_add(d, dict, assoc);
  EPH_UNFRAME(h);
}

/* --- ReadStream and MSE tokens --- */

static eph_value new_stream(ml_loader *d, eph_value collection) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, collection);
  eph_value s = WL_NEW(d->w, C_STREAM, RS_SLOTS);
  eph_store(h, s, RS_COLLECTION, collection);
  eph_store(h, s, RS_POSITION, eph_int(0));
  eph_store(h, s, RS_LIMIT, eph_int((intptr_t)eph_size_bytes(collection)));
  EPH_RETURN(h, s);
}

static int stream_peek(eph_value s) {
  intptr_t pos = int_at(s, RS_POSITION);
  if (pos >= int_at(s, RS_LIMIT)) return -1;
  return eph_bytes(eph_slot(s, RS_COLLECTION))[pos];
}

static void stream_skip(eph_heap *h, eph_value s) { eph_store(h, s, RS_POSITION, eph_int(int_at(s, RS_POSITION) + 1)); }

static bool is_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '_';
}

static eph_value new_token(ml_loader *d, int kind, eph_value text, intptr_t value) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, text);
  eph_value t = WL_NEW(d->w, C_TOKEN, T_SLOTS);
  eph_store(h, t, T_KIND, eph_int(kind));
  eph_store(h, t, T_TEXT, text);
  eph_store(h, t, T_VALUE, eph_int(value));
  EPH_RETURN(h, t);
}

/* The characters [start, end) of the stream's collection as a ByteString. */
static eph_value stream_copy(ml_loader *d, eph_value s, size_t start, size_t end) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, s);
  eph_value str = WL_NEW_BYTES(d->w, C_STRING, end - start);
  memcpy(eph_bytes(str), eph_bytes(eph_slot(s, RS_COLLECTION)) + start, end - start);
  EPH_RETURN(h, str);
}

/* The next token of the line, or EPH_NIL at its end. */
static eph_value next_token(ml_loader *d, eph_value s) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, s);
  while (stream_peek(s) == ' ') stream_skip(h, s);
  int c = stream_peek(s);
  if (c < 0) EPH_RETURN(h, EPH_NIL);
  if (c == '(' || c == ')') {
    stream_skip(h, s);
    EPH_RETURN(h, new_token(d, c == '(' ? TOK_OPEN : TOK_CLOSE, EPH_NIL, 0));
  }
  if ((c >= '0' && c <= '9') || c == '-') {
    bool neg = c == '-';
    if (neg) stream_skip(h, s);
    intptr_t v = 0;
    while ((c = stream_peek(s)) >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      stream_skip(h, s);
    }
    EPH_RETURN(h, new_token(d, TOK_NUMBER, EPH_NIL, neg ? -v : v));
  }
  size_t start = (size_t)int_at(s, RS_POSITION), end;
  int kind = TOK_NAME;
  if (c == '\'') {
    kind = TOK_STRING;
    stream_skip(h, s);
    start++;
    while ((c = stream_peek(s)) >= 0 && c != '\'') stream_skip(h, s);
    end = (size_t)int_at(s, RS_POSITION);
    stream_skip(h, s);
  } else {
    while (is_name_char(stream_peek(s))) stream_skip(h, s);
    end = (size_t)int_at(s, RS_POSITION);
    if (end == start) { /* a stray character: a one-character name */
      stream_skip(h, s);
      end = start + 1;
    }
  }
  eph_value text = stream_copy(d, s, start, end);
  EPH_RETURN(h, new_token(d, kind, text, 0));
}

static int token_kind(eph_value t) { return t == EPH_NIL ? -1 : (int)int_at(t, T_KIND); }

/* --- building entities --- */

static eph_value new_entity(ml_loader *d, size_t ci) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, e);
  e = WL_NEW(d->w, ci, kind_slots[ci]);
  static const size_t package_sets[] = {P_CLASSES};
  static const size_t class_sets[] = {K_SUB_INHERITANCES, K_METHODS, K_ATTRIBUTES};
  static const size_t attribute_sets[] = {A_ACCESSES};
  static const size_t method_sets[] = {M_OUTGOING, M_INCOMING, M_ACCESSES};
  const size_t *sets = NULL;
  size_t nsets = 0;
  switch (ci) {
    case C_PACKAGE: sets = package_sets, nsets = 1; break;
    case C_CLASS: sets = class_sets, nsets = 3; break;
    case C_ATTRIBUTE: sets = attribute_sets, nsets = 1; break;
    case C_METHOD: sets = method_sets, nsets = 3; break;
    case C_INVOCATION: {
      eph_value candidates = new_ordered(d, 2);
      eph_store(h, e, V_CANDIDATES, candidates);
      break;
    }
    default: break;
  }
  for (size_t i = 0; i < nsets; i++) {
    eph_value set = new_hashed(d, C_SET, 4);
    eph_store(h, e, sets[i], set);
  }
  EPH_RETURN(h, e);
}

/* entity.role := target, and the FAMIX opposite: target's Set gets entity. */
static void link(ml_loader *d, eph_value entity, int role, size_t index, eph_value target) {
  eph_heap *h = d->w->h;
  size_t slot, opposite;
  switch (role) {
    case R_PARENT_PACKAGE: slot = K_PACKAGE, opposite = P_CLASSES; break;
    case R_PARENT_TYPE:
      if (is_a(d, entity, C_METHOD)) slot = M_PARENT, opposite = K_METHODS;
      else slot = A_PARENT, opposite = K_ATTRIBUTES;
      break;
    case R_SUBCLASS:
      eph_store(h, entity, I_SUBCLASS, target);
      eph_store(h, target, K_SUPER_INHERITANCE, entity);
      return;
    case R_SUPERCLASS: slot = I_SUPERCLASS, opposite = K_SUB_INHERITANCES; break;
    case R_SENDER: slot = V_SENDER, opposite = M_OUTGOING; break;
    case R_ACCESSOR: slot = X_ACCESSOR, opposite = M_ACCESSES; break;
    case R_VARIABLE: slot = X_VARIABLE, opposite = A_ACCESSES; break;
    case R_CANDIDATES:
      eph_store(h, eph_slot(eph_slot(entity, V_CANDIDATES), OC_ARRAY), index, target);
      hashed_add(d, eph_slot(target, M_INCOMING), entity);
      return;
    default: d->errors++; return;
  }
  eph_store(h, entity, slot, target);
  hashed_add(d, eph_slot(target, opposite), entity);
}

/* Remembers a reference to an element not read yet. */
static void add_dangling(ml_loader *d, eph_value entity, int role, intptr_t id, size_t index) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, entity);
  EPH_LOCAL(h, ref);
  ref = WL_NEW(d->w, C_DANGLING, DR_SLOTS);
  eph_store(h, ref, DR_ENTITY, entity);
  eph_store(h, ref, DR_ROLE, eph_int(role));
  eph_store(h, ref, DR_ID, eph_int(id));
  eph_store(h, ref, DR_INDEX, eph_int((intptr_t)index));
  eph_value link_obj = WL_NEW(d->w, C_VALUE_LINK, VL_SLOTS);
  eph_store(h, link_obj, VL_VALUE, ref);
  eph_value list = eph_slot(d->model, MODEL_DANGLING);
  if (eph_slot(list, LL_LAST) == EPH_NIL) eph_store(h, list, LL_FIRST, link_obj);
  else eph_store(h, eph_slot(list, LL_LAST), VL_NEXT, link_obj);
  eph_store(h, list, LL_LAST, link_obj);
  d->dangling++;
  EPH_UNFRAME(h);
}

static void reference(ml_loader *d, eph_value entity, int role, size_t index, intptr_t id) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, entity);
  if (role == R_CANDIDATES) ordered_add(d, eph_slot(entity, V_CANDIDATES), EPH_NIL);
  eph_value target = dictionary_at(eph_slot(d->model, MODEL_BY_ID), id);
  if (target != EPH_NIL) link(d, entity, role, index, target);
  else add_dangling(d, entity, role, id, index);
  EPH_UNFRAME(h);
}

/* A plain value: id, name, signature, isWrite. */
static void set_value(ml_loader *d, eph_value entity, int role, eph_value value) {
  eph_heap *h = d->w->h;
  switch (role) {
    case R_ID: {
      EPH_FRAME(h);
      EPH_ROOT(h, entity);
      eph_store(h, entity, E_ID, value);
      dictionary_put(d, eph_slot(d->model, MODEL_BY_ID), eph_int_value(value), entity);
      ordered_add(d, eph_slot(d->model, MODEL_ENTITIES), entity);
      EPH_UNFRAME(h);
      return;
    }
    case R_NAME: eph_store(h, entity, E_NAME, value); return;
    case R_SIGNATURE: eph_store(h, entity, is_a(d, entity, C_METHOD) ? M_SIGNATURE : V_SIGNATURE, value); return;
    case R_IS_WRITE: eph_store(h, entity, X_IS_WRITE, value); return;
    default: d->errors++; return;
  }
}

static int role_of(eph_value token) {
  for (int r = 0; r < NROLES; r++)
    if (string_is(eph_slot(token, T_TEXT), role_names[r])) return r;
  return -1;
}

static size_t kind_of(eph_value token) {
  for (size_t k = C_PACKAGE; k <= C_ACCESS; k++)
    if (string_is(eph_slot(token, T_TEXT), kind_names[k])) return k;
  return 0;
}

/* One value of an attribute, its first token in hand: a number, a string,
 * a name (true/false) or a reference (ref: N). */
static bool parse_value(ml_loader *d, eph_value stream, eph_value entity, int role, size_t *index, eph_value tok) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, stream);
  EPH_ROOT(h, entity);
  EPH_ROOT(h, tok);
  bool ok = true;
  switch (token_kind(tok)) {
    case TOK_NUMBER: set_value(d, entity, role, eph_slot(tok, T_VALUE)); break;
    case TOK_STRING: set_value(d, entity, role, eph_slot(tok, T_TEXT)); break;
    case TOK_NAME: set_value(d, entity, role, eph_bool(string_is(eph_slot(tok, T_TEXT), "true"))); break;
    case TOK_OPEN:
      tok = next_token(d, stream);
      ok = token_kind(tok) == TOK_NAME && string_is(eph_slot(tok, T_TEXT), "ref:");
      tok = next_token(d, stream);
      ok &= token_kind(tok) == TOK_NUMBER;
      if (ok) reference(d, entity, role, (*index)++, int_at(tok, T_VALUE));
      ok &= token_kind(next_token(d, stream)) == TOK_CLOSE;
      break;
    default: ok = false;
  }
  EPH_UNFRAME(h);
  return ok;
}

/* (FAMIX.Kind (role value...)...) */
static bool parse_element(ml_loader *d, const char *text) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, stream);
  EPH_LOCAL(h, tok);
  EPH_LOCAL(h, entity);
  size_t len = strlen(text);
  eph_value line = WL_NEW_BYTES(d->w, C_STRING, len);
  memcpy(eph_bytes(line), text, len);
  stream = new_stream(d, line);
  bool ok = token_kind(next_token(d, stream)) == TOK_OPEN;
  tok = next_token(d, stream);
  size_t kind = ok && token_kind(tok) == TOK_NAME ? kind_of(tok) : 0;
  if (!kind) {
    EPH_UNFRAME(h);
    return false;
  }
  entity = new_entity(d, kind);
  while (ok && token_kind(tok = next_token(d, stream)) == TOK_OPEN) {
    tok = next_token(d, stream);
    int role = token_kind(tok) == TOK_NAME ? role_of(tok) : -1;
    size_t index = 0;
    ok = role >= 0;
    while (ok && token_kind(tok = next_token(d, stream)) != TOK_CLOSE) ok = parse_value(d, stream, entity, role, &index, tok);
  }
  ok &= token_kind(tok) == TOK_CLOSE;
  EPH_UNFRAME(h);
  return ok;
}

/* Resolves the dangling references once every element has been read. */
static void resolve_dangling(ml_loader *d) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, link_obj);
  link_obj = eph_slot(eph_slot(d->model, MODEL_DANGLING), LL_FIRST);
  for (; link_obj != EPH_NIL; link_obj = eph_slot(link_obj, VL_NEXT)) {
    eph_value ref = eph_slot(link_obj, VL_VALUE);
    eph_value target = dictionary_at(eph_slot(d->model, MODEL_BY_ID), int_at(ref, DR_ID));
    if (target == EPH_NIL) d->errors++;
    else link(d, eph_slot(ref, DR_ENTITY), (int)int_at(ref, DR_ROLE), (size_t)int_at(ref, DR_INDEX), target);
  }
  eph_value list = eph_slot(d->model, MODEL_DANGLING);
  eph_store(h, list, LL_FIRST, EPH_NIL);
  eph_store(h, list, LL_LAST, EPH_NIL);
  EPH_UNFRAME(h);
}

static void new_model(ml_loader *d) {
  eph_heap *h = d->w->h;
  d->model = WL_NEW(d->w, C_MODEL, MODEL_SLOTS);
  eph_value v = new_ordered(d, 1024);
  eph_store(h, d->model, MODEL_ENTITIES, v);
  v = new_hashed(d, C_DICTIONARY, 1024);
  eph_store(h, d->model, MODEL_BY_ID, v);
  v = WL_NEW(d->w, C_LINKED_LIST, LL_SLOTS);
  eph_store(h, d->model, MODEL_DANGLING, v);
}

/* --- the self-check ---------------------------------------------------------- */

typedef struct ml_found {
  uint64_t count[NCLASSES];
  uint64_t methods_in_classes, classes_in_packages, incoming, candidates;
  uint64_t invocation_checksum, superclass_checksum, access_checksum;
} ml_found;

static void walk_invocation(eph_value v, ml_found *f) {
  eph_value candidates = eph_slot(v, V_CANDIDATES);
  uint64_t sender = (uint64_t)int_at(eph_slot(v, V_SENDER), E_ID);
  for (size_t c = 0, n = ordered_size(candidates); c < n; c++) {
    eph_value target = ordered_at(candidates, c);
    if (target != EPH_NIL) f->invocation_checksum += (c + 1) * (uint64_t)int_at(target, E_ID) * sender;
  }
  f->candidates += ordered_size(candidates);
}

/* Walks the model from its entity list, following the links. */
static void walk_model(ml_loader *d, ml_found *f) {
  memset(f, 0, sizeof *f);
  eph_value entities = eph_slot(d->model, MODEL_ENTITIES);
  for (size_t i = 0, n = ordered_size(entities); i < n; i++) {
    eph_value e = ordered_at(entities, i);
    size_t ci = C_PACKAGE;
    while (ci <= C_ACCESS && !is_a(d, e, ci)) ci++;
    if (ci > C_ACCESS) continue;
    f->count[ci]++;
    if (ci == C_PACKAGE) f->classes_in_packages += hashed_size(eph_slot(e, P_CLASSES));
    if (ci == C_CLASS) {
      f->methods_in_classes += hashed_size(eph_slot(e, K_METHODS));
      eph_value inh = eph_slot(e, K_SUPER_INHERITANCE);
      if (inh != EPH_NIL) f->superclass_checksum += (uint64_t)int_at(e, E_ID) * (uint64_t)int_at(eph_slot(inh, I_SUPERCLASS), E_ID);
    }
    if (ci == C_METHOD) f->incoming += hashed_size(eph_slot(e, M_INCOMING));
    if (ci == C_INVOCATION) walk_invocation(e, f);
    if (ci == C_ACCESS)
      f->access_checksum += (uint64_t)int_at(eph_slot(e, X_ACCESSOR), E_ID) *
                            (uint64_t)int_at(eph_slot(e, X_VARIABLE), E_ID) * (eph_slot(e, X_IS_WRITE) == EPH_TRUE ? 3u : 1u);
  }
}

/* A few names looked up by id in the Dictionary. */
static bool names_match(ml_loader *d, const ml_gen *g) {
  eph_value dict = eph_slot(d->model, MODEL_BY_ID);
  uint32_t samples[3] = {0, g->nclasses / 2, g->nclasses - 1};
  char name[64];
  for (int i = 0; i < 3; i++) {
    eph_value c = dictionary_at(dict, (intptr_t)(g->class_base + samples[i]));
    class_name(samples[i], name, sizeof name);
    if (c == EPH_NIL || !string_is(eph_slot(c, E_NAME), name)) return false;
    uint32_t m = g->meth_first[samples[i]];
    eph_value method = dictionary_at(dict, (intptr_t)(g->meth_base + m));
    method_name(m, name, sizeof name);
    if (method == EPH_NIL || !string_is(eph_slot(method, E_NAME), name) || eph_slot(method, M_PARENT) != c) return false;
  }
  return true;
}

static int check(ml_loader *d, const ml_gen *g, const ml_totals *t) {
  ml_found f;
  walk_model(d, &f);
  bool counts = f.count[C_PACKAGE] == t->packages && f.count[C_CLASS] == t->classes &&
                f.count[C_ATTRIBUTE] == t->attributes && f.count[C_METHOD] == t->methods &&
                f.count[C_INHERITANCE] == t->inheritances && f.count[C_INVOCATION] == t->invocations &&
                f.count[C_ACCESS] == t->accesses && f.candidates == t->candidates;
  bool derived = f.methods_in_classes == t->methods && f.classes_in_packages == t->classes && f.incoming == t->incoming &&
                 f.invocation_checksum == t->invocation_checksum && f.superclass_checksum == t->superclass_checksum &&
                 f.access_checksum == t->access_checksum;
  bool ok = counts && derived && d->errors == 0 && names_match(d, g);
  return wl_check(d->w, ok,
                  "%llu packages, %llu classes, %llu attributes, %llu methods, %llu inheritances, %llu invocations "
                  "(%llu candidates), %llu accesses; %llu dangling references resolved%s%s",
                  (unsigned long long)f.count[C_PACKAGE], (unsigned long long)f.count[C_CLASS],
                  (unsigned long long)f.count[C_ATTRIBUTE], (unsigned long long)f.count[C_METHOD],
                  (unsigned long long)f.count[C_INHERITANCE], (unsigned long long)f.count[C_INVOCATION],
                  (unsigned long long)f.candidates, (unsigned long long)f.count[C_ACCESS],
                  (unsigned long long)d->dangling, counts ? "" : " — COUNTS differ from the generator",
                  derived ? "" : " — LINKS differ from the generator");
}

/* --- the descriptor ---------------------------------------------------------- */

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  ml_gen g;
  ml_totals t = {0};
  uint32_t nclasses = w->size > 10000000 ? 10000000 : (uint32_t)w->size;
  ml_loader d = {.w = w};
  if (gen_init(w, &g, w->seed, nclasses)) {
    gen_free(w, &g);
    return wl_check(w, false, "out of memory");
  }
  ml_emitter e = {.w = w, .g = &g, .t = &t, .next_rel = g.rel_base};
  EPH_FRAME(h);
  EPH_ROOT(h, d.model);
  new_model(&d);
  const char *line;
  while ((line = next_line(&e)))
    if (!parse_element(&d, line)) d.errors++;
  resolve_dangling(&d);
  wl_free(w, e.lines);
  int rc = check(&d, &g, &t);
  EPH_UNFRAME(h);
  gen_free(w, &g);
  return rc;
}

const wl_workload wl_modelload = {
    .name = "modelload",
    .description = "FiLiP's Moose: import a generated MSE software model into a FAMIX graph",
    .unit = "classes",
    .sizes = {.small = 25, .middle = 500, .normal = 25000, .large = 250000},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "MSEToken",
    .run = run,
};
