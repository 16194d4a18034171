/*
 * kvstore — an in-process, request-driven key/value service: a
 * latency-sensitive workload in the DaCapo Chopin sense (each request is a
 * latency event; the report gives p50/p99/max).  It stands for the server
 * side of memcached or Redis, YCSB-style: a load phase that stores every
 * key once, then a stream of GET/SET/DELETE/SCAN requests over a Zipfian
 * (theta 0.99, scrambled) key distribution.
 *
 * Per request, as a server would:
 *  1. receive: the request arrives as text in a RequestBuffer (byte
 *     object), memcached-like: "get KEY\r\n", "set KEY LEN\r\nDATA\r\n",
 *     "delete KEY\r\n", "scan KEY COUNT\r\n";
 *  2. parse it into a Request (op, Key, Value, count): the Key and the
 *     Value are new byte objects copied out of the buffer;
 *  3. execute it on the Store, a chained hash table on the heap (Buckets
 *     array of Entry chains, doubled when the load factor passes 1, every
 *     entry relinked at once — a tail-latency event, as in a stop-the-world
 *     rehash); a SET keeps the request's Key (new entries) and Value, so
 *     objects of the same class and site either die with the request or
 *     live until overwritten or deleted; a SCAN of keys KEY..KEY+COUNT-1
 *     collects its hits in ScanCell lists;
 *  4. reply: a Response byte object ("VALUE KEY LEN\r\nDATA\r\nEND\r\n",
 *     "STORED\r\n", "DELETED\r\n", "NOT_FOUND\r\n", "END\r\n").
 * The latency event spans 1-4.  Values are 8 B to 8 KiB (mostly small, a
 * few large), their bytes a function of (key, version).
 *
 * Self-check: an independent C model (per key id: present, length,
 * checksum — computed when the client generates the bytes, never read back
 * from the heap) applies the same stream.  The client checks every
 * response against it (GET and SCAN data checksums, STORED/DELETED/
 * NOT_FOUND), and at the end every heap entry must match the model (key,
 * length, checksum, bucket, hash) and the entry count must equal the
 * model's.
 *
 * Size: requests after the load phase.  --keys K (default size/10, at
 * least 100) sets the key space; --theta the Zipf skew.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum {
  C_STORE, C_BUCKETS, C_ENTRY, C_KEY, C_VALUE, /* the service's state */
  C_REQBUF, C_REQUEST, C_RESPONSE, C_SCANCELL, /* per request */
  NCLASSES
};
static const wl_class classes[] = {
    [C_STORE] = {"Store", EPH_FORMAT_POINTERS},        [C_BUCKETS] = {"Buckets", EPH_FORMAT_POINTERS},
    [C_ENTRY] = {"Entry", EPH_FORMAT_POINTERS},        [C_KEY] = {"Key", EPH_FORMAT_BYTES},
    [C_VALUE] = {"Value", EPH_FORMAT_BYTES},           [C_REQBUF] = {"RequestBuffer", EPH_FORMAT_BYTES},
    [C_REQUEST] = {"Request", EPH_FORMAT_POINTERS},    [C_RESPONSE] = {"Response", EPH_FORMAT_BYTES},
    [C_SCANCELL] = {"ScanCell", EPH_FORMAT_POINTERS},
};

enum { ST_BUCKETS, ST_COUNT, STORE_SLOTS };
enum { E_KEY, E_VALUE, E_NEXT, E_HASH, ENTRY_SLOTS };
enum { R_OP, R_KEY, R_VALUE, R_COUNT, REQUEST_SLOTS };
enum { SC_ENTRY, SC_NEXT, SCANCELL_SLOTS };
enum { OP_GET, OP_SET, OP_DELETE, OP_SCAN, OP_ERROR };

enum { INITIAL_BUCKETS = 16, KEY_LEN = 14, MAX_SCAN = 20, MAX_VALUE = 8192 };
#define KEY_FORMAT "user%010u"

typedef struct options {
  uint64_t keys; /* 0: size / 10 */
  double theta;
} options;
static const options default_options = {0, 0.99};

/* --- byte strings ------------------------------------------------------------ */

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = UINT64_C(0xCBF29CE484222325);
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(0x100000001B3);
  return h;
}

/* The hash kept in an entry: 62 bits, so it is a small integer. */
static intptr_t key_hash(const uint8_t *p, size_t n) { return (intptr_t)(fnv1a(p, n) >> 2); }

static bool bytes_equal(eph_value a, eph_value b) {
  size_t n = eph_size_bytes(a);
  return n == eph_size_bytes(b) && memcmp(eph_bytes(a), eph_bytes(b), n) == 0;
}

/* Parses "user%010u" at p; returns the id or -1. */
static int64_t key_id(const uint8_t *p, size_t n) {
  if (n != KEY_LEN || memcmp(p, "user", 4)) return -1;
  int64_t id = 0;
  for (size_t i = 4; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    id = id * 10 + (p[i] - '0');
  }
  return id;
}

/* --- the store ------------------------------------------------------------------ */

static eph_value new_store(wl_ctx *w) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, store);
  store = WL_NEW(w, C_STORE, STORE_SLOTS);
  eph_value buckets = WL_NEW(w, C_BUCKETS, INITIAL_BUCKETS);
  eph_store(h, store, ST_BUCKETS, buckets);
  eph_store(h, store, ST_COUNT, eph_int(0));
  EPH_RETURN(h, store);
}

static eph_value bucket_head(eph_value buckets, intptr_t hash) {
  return eph_slot(buckets, (size_t)hash & (eph_slot_count(buckets) - 1));
}

/* The entry for key, or EPH_NIL; *prev gets its predecessor (or nil). */
static eph_value lookup(eph_value store, eph_value key, eph_value *prev) {
  intptr_t hash = key_hash(eph_bytes(key), eph_size_bytes(key));
  eph_value p = EPH_NIL;
  for (eph_value e = bucket_head(eph_slot(store, ST_BUCKETS), hash); e != EPH_NIL; p = e, e = eph_slot(e, E_NEXT)) {
    if (eph_int_value(eph_slot(e, E_HASH)) == hash && bytes_equal(eph_slot(e, E_KEY), key)) {
      if (prev) *prev = p;
      return e;
    }
  }
  return EPH_NIL;
}

/* Doubles the bucket array and relinks every entry (stop the world). */
static void resize(wl_ctx *w, eph_value store) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, store);
  size_t n = eph_slot_count(eph_slot(store, ST_BUCKETS));
  eph_value fresh = WL_NEW(w, C_BUCKETS, 2 * n);
  eph_value old = eph_slot(store, ST_BUCKETS); /* re-read after the allocation */
  for (size_t i = 0; i < n; i++) {
    eph_value e = eph_slot(old, i);
    while (e != EPH_NIL) {
      eph_value next = eph_slot(e, E_NEXT);
      size_t b = (size_t)eph_int_value(eph_slot(e, E_HASH)) & (2 * n - 1);
      eph_store(h, e, E_NEXT, eph_slot(fresh, b));
      eph_store(h, fresh, b, e);
      e = next;
    }
  }
  eph_store(h, store, ST_BUCKETS, fresh);
  EPH_UNFRAME(h);
}

static void insert(wl_ctx *w, eph_value store, eph_value key, eph_value value) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, store);
  EPH_ROOT(h, key);
  EPH_ROOT(h, value);
  eph_value e = WL_NEW(w, C_ENTRY, ENTRY_SLOTS);
  intptr_t hash = key_hash(eph_bytes(key), eph_size_bytes(key));
  eph_value buckets = eph_slot(store, ST_BUCKETS);
  size_t b = (size_t)hash & (eph_slot_count(buckets) - 1);
  eph_store(h, e, E_KEY, key);
  eph_store(h, e, E_VALUE, value);
  eph_store(h, e, E_NEXT, eph_slot(buckets, b));
  eph_store(h, e, E_HASH, eph_int(hash));
  eph_store(h, buckets, b, e);
  intptr_t count = eph_int_value(eph_slot(store, ST_COUNT)) + 1;
  eph_store(h, store, ST_COUNT, eph_int(count));
  if ((size_t)count > eph_slot_count(buckets)) resize(w, store);
  EPH_UNFRAME(h);
}

static bool unlink_key(wl_ctx *w, eph_value store, eph_value key) {
  eph_value prev = EPH_NIL, e = lookup(store, key, &prev);
  if (e == EPH_NIL) return false;
  if (prev != EPH_NIL) {
    eph_store(w->h, prev, E_NEXT, eph_slot(e, E_NEXT));
  } else {
    eph_value buckets = eph_slot(store, ST_BUCKETS);
    eph_store(w->h, buckets, (size_t)eph_int_value(eph_slot(e, E_HASH)) & (eph_slot_count(buckets) - 1),
              eph_slot(e, E_NEXT));
  }
  eph_store(w->h, store, ST_COUNT, eph_int(eph_int_value(eph_slot(store, ST_COUNT)) - 1));
  return true;
}

/* --- the server: parse, execute, reply ------------------------------------------ */

/* A token of buf from *pos up to a space or CR; advances past one separator. */
static size_t token(const uint8_t *buf, size_t len, size_t *pos, size_t *start) {
  size_t i = *pos;
  *start = i;
  while (i < len && buf[i] != ' ' && buf[i] != '\r') i++;
  size_t n = i - *start;
  *pos = i < len && buf[i] == ' ' ? i + 1 : i;
  return n;
}

static uint64_t parse_uint(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (uint64_t)(p[i] - '0');
  return v;
}

/* A byte object of class ci holding buf[start, start + n) of the rooted *buf. */
static eph_value copy_out(wl_ctx *w, size_t ci, const eph_value *buf, size_t start, size_t n) {
  eph_value s = WL_NEW_BYTES(w, ci, n);
  memcpy(eph_bytes(s), eph_bytes(*buf) + start, n); /* *buf re-read: it may have moved */
  return s;
}

static eph_value parse_request(wl_ctx *w, eph_value buf) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, buf);
  EPH_LOCAL(h, req);
  EPH_LOCAL(h, s);
  size_t len = eph_size_bytes(buf), pos = 0, start, kstart, n;
  n = token(eph_bytes(buf), len, &pos, &start);
  const char *verb = (const char *)eph_bytes(buf) + start;
  int op = n == 3 && !memcmp(verb, "get", 3)      ? OP_GET
           : n == 3 && !memcmp(verb, "set", 3)    ? OP_SET
           : n == 6 && !memcmp(verb, "delete", 6) ? OP_DELETE
           : n == 4 && !memcmp(verb, "scan", 4)   ? OP_SCAN
                                                  : OP_ERROR;
  size_t klen = token(eph_bytes(buf), len, &pos, &kstart);
  n = op == OP_SET || op == OP_SCAN ? token(eph_bytes(buf), len, &pos, &start) : 0;
  uint64_t arg = parse_uint(eph_bytes(buf) + start, n);
  req = WL_NEW(w, C_REQUEST, REQUEST_SLOTS);
  eph_store(h, req, R_OP, eph_int(op));
  eph_store(h, req, R_COUNT, eph_int((intptr_t)arg));
  s = copy_out(w, C_KEY, &buf, kstart, klen);
  eph_store(h, req, R_KEY, s);
  if (op == OP_SET) {
    s = copy_out(w, C_VALUE, &buf, pos + 2, (size_t)arg); /* after "\r\n" */
    eph_store(h, req, R_VALUE, s);
  }
  EPH_RETURN(h, req);
}

/* A Response holding text. */
static eph_value reply_text(wl_ctx *w, const char *text) { return wl_string(w, C_RESPONSE, text, strlen(text)); }

/* "VALUE KEY LEN\r\n" for an entry into head (64 bytes); returns its length. */
static size_t item_head(char *head, eph_value e) {
  eph_value key = eph_slot(e, E_KEY);
  return (size_t)snprintf(head, 64, "VALUE %.*s %zu\r\n", (int)eph_size_bytes(key), (const char *)eph_bytes(key),
                          eph_size_bytes(eph_slot(e, E_VALUE)));
}

/* Bytes of "VALUE KEY LEN\r\nDATA\r\n" for an entry. */
static size_t item_bytes(eph_value e) {
  char head[64];
  return item_head(head, e) + eph_size_bytes(eph_slot(e, E_VALUE)) + 2;
}

static void write_item(uint8_t *out, eph_value e) {
  eph_value value = eph_slot(e, E_VALUE);
  size_t vlen = eph_size_bytes(value);
  char head[64];
  size_t n = item_head(head, e);
  memcpy(out, head, n);
  memcpy(out + n, eph_bytes(value), vlen);
  memcpy(out + n + vlen, "\r\n", 2);
}

/* The Response to a list of ScanCells (most recent first, so written back to front). */
static eph_value reply_items(wl_ctx *w, eph_value cells) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, cells);
  size_t total = 5; /* "END\r\n" */
  for (eph_value c = cells; c != EPH_NIL; c = eph_slot(c, SC_NEXT)) total += item_bytes(eph_slot(c, SC_ENTRY));
  eph_value r = WL_NEW_BYTES(w, C_RESPONSE, total);
  uint8_t *out = eph_bytes(r);
  size_t end = total - 5;
  memcpy(out + end, "END\r\n", 5);
  for (eph_value c = cells; c != EPH_NIL; c = eph_slot(c, SC_NEXT)) {
    size_t n = item_bytes(eph_slot(c, SC_ENTRY));
    end -= n;
    write_item(out + end, eph_slot(c, SC_ENTRY));
  }
  EPH_RETURN(h, r);
}

static eph_value push_cell(wl_ctx *w, eph_value entry, eph_value cells) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, entry);
  EPH_ROOT(h, cells);
  eph_value c = WL_NEW(w, C_SCANCELL, SCANCELL_SLOTS);
  eph_store(h, c, SC_ENTRY, entry);
  eph_store(h, c, SC_NEXT, cells);
  EPH_RETURN(h, c);
}

static eph_value do_get(wl_ctx *w, eph_value store, eph_value key) {
  eph_value e = lookup(store, key, NULL);
  return e == EPH_NIL ? reply_text(w, "END\r\n") : reply_items(w, push_cell(w, e, EPH_NIL));
}

static eph_value do_scan(wl_ctx *w, eph_value store, eph_value first, uint64_t count) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, store);
  EPH_LOCAL(h, cells);
  EPH_LOCAL(h, key);
  int64_t id = key_id(eph_bytes(first), eph_size_bytes(first));
  for (uint64_t i = 0; id >= 0 && i < count; i++) {
    char text[32];
    snprintf(text, sizeof text, KEY_FORMAT, (unsigned)(id + (int64_t)i));
    key = wl_string(w, C_KEY, text, KEY_LEN);
    eph_value e = lookup(store, key, NULL);
    if (e != EPH_NIL) cells = push_cell(w, e, cells);
  }
  EPH_RETURN(h, reply_items(w, cells));
}

static eph_value execute(wl_ctx *w, eph_value store, eph_value req) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, store);
  EPH_ROOT(h, req);
  eph_value key = eph_slot(req, R_KEY), r;
  switch (eph_int_value(eph_slot(req, R_OP))) {
  case OP_GET:
    r = do_get(w, store, key);
    break;
  case OP_SET: {
    eph_value e = lookup(store, key, NULL);
    if (e != EPH_NIL) eph_store(h, e, E_VALUE, eph_slot(req, R_VALUE)); /* old entry, young value */
    else insert(w, store, key, eph_slot(req, R_VALUE));
    r = reply_text(w, "STORED\r\n");
    break;
  }
  case OP_DELETE:
    r = reply_text(w, unlink_key(w, store, key) ? "DELETED\r\n" : "NOT_FOUND\r\n");
    break;
  case OP_SCAN:
    r = do_scan(w, store, key, (uint64_t)eph_int_value(eph_slot(req, R_COUNT)));
    break;
  default:
    r = reply_text(w, "ERROR\r\n");
  }
  EPH_RETURN(h, r);
}

/* --- the client: request stream, model, checks ---------------------------------- */

typedef struct kv_model {
  uint64_t keys;
  uint8_t *present;
  uint32_t *len, *version;
  uint64_t *sum; /* checksum of the value bytes */
  uint64_t count;
} kv_model;

typedef struct zipf {
  uint64_t n;
  double theta, alpha, zetan, eta, half_pow;
} zipf;

typedef struct client {
  wl_rng rng;
  zipf z;
  kv_model m;
  uint64_t gets, hits, sets, deletes, scans, scanned, errors;
  uint64_t digest; /* of every GET and SCAN response's data, in order */
} client;

typedef struct request_desc {
  int op;
  uint32_t id, len, version, count;
} request_desc;

/* Gray et al.'s Zipfian generator (as in YCSB), ranks 0..n-1. */
static void zipf_init(zipf *z, uint64_t n, double theta) {
  z->n = n, z->theta = theta, z->alpha = 1.0 / (1.0 - theta), z->zetan = 0;
  for (uint64_t i = 1; i <= n; i++) z->zetan += 1.0 / pow((double)i, theta);
  double zeta2 = 1.0 + 1.0 / pow(2.0, theta);
  z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
  z->half_pow = 1.0 + pow(0.5, theta);
}

static uint64_t zipf_next(zipf *z, wl_rng *r) {
  double u = wl_rng_unit(r), uz = u * z->zetan;
  if (uz < 1.0) return 0;
  if (uz < z->half_pow) return 1;
  uint64_t k = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
  return k < z->n ? k : z->n - 1;
}

static uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

/* A scrambled Zipfian key: popular keys are spread over the key space. */
static uint32_t next_key(client *c) { return (uint32_t)(mix64(zipf_next(&c->z, &c->rng)) % c->m.keys); }

/* Value sizes: 70% 8-128 B, 25% 128 B-1 KiB, 5% 1-8 KiB. */
static uint32_t value_len(wl_rng *r) {
  uint64_t p = wl_rng_below(r, 100);
  if (p < 70) return 8 + (uint32_t)wl_rng_below(r, 121);
  if (p < 95) return 128 + (uint32_t)wl_rng_below(r, 897);
  return 1024 + (uint32_t)wl_rng_below(r, MAX_VALUE - 1023);
}

/* The value bytes of (id, version); returns their checksum. */
static uint64_t fill_value(uint8_t *out, uint32_t id, uint32_t version, uint32_t len) {
  uint64_t s = mix64(((uint64_t)id << 32) | version);
  for (uint32_t i = 0; i < len; i++) {
    if ((i & 7) == 0) s = mix64(s + i);
    out[i] = (uint8_t)(' ' + (s >> (8 * (i & 7))) % 95);
  }
  return fnv1a(out, len);
}

static request_desc next_request(client *c) {
  request_desc d = {0, next_key(c), 0, 0, 0};
  uint64_t p = wl_rng_below(&c->rng, 100);
  d.op = p < 70 ? OP_GET : p < 90 ? OP_SET : p < 95 ? OP_DELETE : OP_SCAN;
  if (d.op == OP_SET) d.len = value_len(&c->rng), d.version = ++c->m.version[d.id];
  if (d.op == OP_SCAN) d.count = 1 + (uint32_t)wl_rng_below(&c->rng, MAX_SCAN);
  return d;
}

/* The request text in a new RequestBuffer; a SET's value bytes go into the
 * model as they are generated. */
static eph_value encode(wl_ctx *w, client *c, const request_desc *d) {
  static const char *const verbs[] = {"get", "set", "delete", "scan"};
  char head[64];
  int n = d->op == OP_SET    ? snprintf(head, sizeof head, "set " KEY_FORMAT " %u\r\n", d->id, d->len)
          : d->op == OP_SCAN ? snprintf(head, sizeof head, "scan " KEY_FORMAT " %u\r\n", d->id, d->count)
                             : snprintf(head, sizeof head, "%s " KEY_FORMAT "\r\n", verbs[d->op], d->id);
  size_t total = (size_t)n + (d->op == OP_SET ? d->len + 2 : 0);
  eph_value buf = WL_NEW_BYTES(w, C_REQBUF, total);
  uint8_t *b = eph_bytes(buf);
  memcpy(b, head, (size_t)n);
  if (d->op == OP_SET) {
    c->m.sum[d->id] = fill_value(b + n, d->id, d->version, d->len);
    memcpy(b + n + d->len, "\r\n", 2);
  }
  return buf;
}

static bool text_is(eph_value r, const char *text) {
  size_t n = strlen(text);
  return eph_size_bytes(r) == n && !memcmp(eph_bytes(r), text, n);
}

/* Checks the items of a GET/SCAN response against the model: the keys in
 * [first, first + count) that the model has, in order, then "END". */
static bool check_items(client *c, eph_value r, uint32_t first, uint32_t count) {
  const uint8_t *p = eph_bytes(r);
  size_t len = eph_size_bytes(r), pos = 0;
  for (uint64_t id = first; id < (uint64_t)first + count && id < c->m.keys; id++) {
    if (!c->m.present[id]) continue;
    char head[64];
    int n = snprintf(head, sizeof head, "VALUE " KEY_FORMAT " %u\r\n", (unsigned)id, c->m.len[id]);
    if (pos + (size_t)n + c->m.len[id] + 2 > len || memcmp(p + pos, head, (size_t)n)) return false;
    uint64_t sum = fnv1a(p + pos + n, c->m.len[id]);
    if (sum != c->m.sum[id]) return false;
    c->digest = mix64(c->digest ^ sum);
    c->scanned++;
    pos += (size_t)n + c->m.len[id] + 2;
  }
  return len - pos == 5 && !memcmp(p + pos, "END\r\n", 5);
}

/* Checks the response and applies the request to the model. */
static bool check_response(client *c, const request_desc *d, eph_value r) {
  kv_model *m = &c->m;
  switch (d->op) {
  case OP_GET:
    c->gets++, c->hits += m->present[d->id];
    return check_items(c, r, d->id, 1);
  case OP_SET:
    c->sets++;
    m->count += !m->present[d->id];
    m->present[d->id] = 1, m->len[d->id] = d->len;
    return text_is(r, "STORED\r\n");
  case OP_DELETE: {
    c->deletes++;
    bool had = m->present[d->id];
    m->count -= had;
    m->present[d->id] = 0;
    return text_is(r, had ? "DELETED\r\n" : "NOT_FOUND\r\n");
  }
  default:
    c->scans++;
    return check_items(c, r, d->id, d->count);
  }
}

/* One request: a latency event from its arrival to its response. */
static void serve(wl_ctx *w, client *c, eph_value *store, const request_desc *d) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, req);
  EPH_LOCAL(h, resp);
  wl_event_begin(w);
  req = encode(w, c, d);
  req = parse_request(w, req);
  resp = execute(w, *store, req);
  wl_event_end(w);
  c->errors += !check_response(c, d, resp);
  EPH_UNFRAME(h);
}

/* Every heap entry against the model; returns the number of mismatches. */
static uint64_t check_store(eph_value store, const kv_model *m, uint64_t *entries) {
  eph_value buckets = eph_slot(store, ST_BUCKETS);
  size_t nb = eph_slot_count(buckets);
  uint64_t bad = 0;
  uint8_t *seen = calloc(m->keys, 1);
  if (!seen) return 1;
  *entries = 0;
  for (size_t b = 0; b < nb; b++) {
    for (eph_value e = eph_slot(buckets, b); e != EPH_NIL; e = eph_slot(e, E_NEXT)) {
      eph_value key = eph_slot(e, E_KEY), value = eph_slot(e, E_VALUE);
      int64_t id = key_id(eph_bytes(key), eph_size_bytes(key));
      intptr_t hash = key_hash(eph_bytes(key), eph_size_bytes(key));
      (*entries)++;
      if (id < 0 || (uint64_t)id >= m->keys || seen[id] || !m->present[id] || eph_int_value(eph_slot(e, E_HASH)) != hash ||
          ((size_t)hash & (nb - 1)) != b || eph_size_bytes(value) != m->len[id] ||
          fnv1a(eph_bytes(value), eph_size_bytes(value)) != m->sum[id]) {
        bad++;
        continue;
      }
      seen[id] = 1;
    }
  }
  free(seen);
  return bad + (*entries != m->count) + ((uint64_t)eph_int_value(eph_slot(store, ST_COUNT)) != m->count);
}

static bool client_init(wl_ctx *w, client *c, uint64_t keys, double theta, uint64_t seed) {
  memset(c, 0, sizeof *c);
  wl_rng_seed(&c->rng, seed);
  zipf_init(&c->z, keys, theta);
  c->m.keys = keys;
  c->m.present = wl_calloc(w, keys, 1);
  c->m.len = wl_calloc(w, keys, sizeof *c->m.len);
  c->m.version = wl_calloc(w, keys, sizeof *c->m.version);
  c->m.sum = wl_calloc(w, keys, sizeof *c->m.sum);
  return c->m.present && c->m.len && c->m.version && c->m.sum;
}

static void client_free(wl_ctx *w, client *c) {
  wl_free(w, c->m.present);
  wl_free(w, c->m.len);
  wl_free(w, c->m.version);
  wl_free(w, c->m.sum);
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  const options *o = w->options ? w->options : &default_options;
  uint64_t keys = o->keys ? o->keys : w->size / 10;
  if (keys < 100) keys = 100;
  if (keys > UINT32_MAX / 2) keys = UINT32_MAX / 2;
  client c;
  if (!client_init(w, &c, keys, o->theta, w->seed)) {
    client_free(w, &c);
    return wl_check(w, false, "out of memory for the model");
  }
  EPH_FRAME(h);
  EPH_LOCAL(h, store);
  store = new_store(w);
  for (uint32_t id = 0; id < keys; id++) { /* load phase: every key once */
    request_desc d = {OP_SET, id, value_len(&c.rng), ++c.m.version[id], 0};
    serve(w, &c, &store, &d);
  }
  for (uint64_t i = 0; i < w->size; i++) {
    request_desc d = next_request(&c);
    serve(w, &c, &store, &d);
  }
  uint64_t entries = 0, bad = check_store(store, &c.m, &entries);
  size_t buckets = eph_slot_count(eph_slot(store, ST_BUCKETS));
  EPH_UNFRAME(h);
  client_free(w, &c);
  bool ok = c.errors == 0 && bad == 0;
  return wl_check(w, ok,
                  "%llu keys: %llu gets (%llu hits), %llu sets, %llu deletes, %llu scans; %llu values checked "
                  "(digest %016llx), %llu bad responses; store %llu entries in %zu buckets, %llu bad",
                  (unsigned long long)keys, (unsigned long long)c.gets, (unsigned long long)c.hits,
                  (unsigned long long)c.sets, (unsigned long long)c.deletes, (unsigned long long)c.scans,
                  (unsigned long long)c.scanned, (unsigned long long)c.digest, (unsigned long long)c.errors,
                  (unsigned long long)entries, buckets, (unsigned long long)bad);
}

static int parse_options(wl_ctx *w, int argc, char **argv) {
  options *o = malloc(sizeof *o);
  if (!o) return -1;
  *o = default_options;
  w->options = o; /* the runner frees it */
  for (int i = 0; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(a, "--keys") && v) {
      o->keys = strtoull(v, &end, 10);
      if (*end || o->keys < 1) end = NULL;
    } else if (!strcmp(a, "--theta") && v) {
      o->theta = strtod(v, &end);
      if (*end || !(o->theta > 0.0 && o->theta < 1.0)) end = NULL;
    } else {
      fprintf(stderr, "kvstore: unknown option '%s'\n", a);
      return -1;
    }
    if (!end) {
      fprintf(stderr, "kvstore: bad value '%s' for %s\n", v, a);
      return -1;
    }
  }
  return 0;
}

const wl_workload wl_kvstore = {
    .name = "kvstore",
    .description = "request-driven key/value service, Zipfian GET/SET/DELETE/SCAN, one latency event per request",
    .unit = "requests",
    .sizes = {.small = 5000, .middle = 50000, .normal = 1000000, .large = 3000000},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Response",
    .options_help = "--keys K  key space (default size/10, at least 100)  --theta T  Zipf skew in (0,1) (default 0.99)",
    .options = (const wl_option[]){{"keys", WL_OPT_COUNT, 1, 1e15, NULL}, {"theta", WL_OPT_REAL, 0, 1, NULL}, {NULL}},
    .parse_options = parse_options,
    .run = run,
};
