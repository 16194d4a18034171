/*
 * export_pprof.c — the profile as a pprof Profile message (profile.proto
 * beside this file, compiled by protoc-c at build time), serialized with
 * libprotobuf-c and gzip-compressed with zlib.
 *
 * Locations are the profile's sites (location id = site id, plus one for
 * "unknown site"); a call stack adds its callers' sites after the leaf.
 * Functions are the distinct (function, file) pairs of those sites.  One
 * mapping, named after the workload or script, holds every location: it
 * is what pprof's legend and web UI title call the file ("File: dataframe"),
 * and it says the functions are already symbolized.
 *
 * Every sample type has a unit pprof scales (count or bytes).  Space-time
 * (bytes x lifetime) has no such unit, so it is exported divided by the
 * run's length on the same clock: the bytes a site kept live on average
 * over the run, which ranks and sums exactly as the space-time does.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "export.h"
#include "profile.pb-c.h"
#include "analysis/stacks.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Mapping Mapping;

enum { V_OBJECTS, V_BYTES, V_SPACE_TIME, V_SPACE_TIME_WALL, V_ALIVE, NVALUES };

/* --- the string table: every string once, "" at 0 ----------------------------- */

typedef struct strtab {
  char **s; /* borrowed strings (the profile's, or static) */
  size_t n, cap;
  size_t *slot; /* hash: index + 1, 0 empty */
  size_t nslot;
} strtab;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool strtab_grow(strtab *t) {
  size_t n = t->nslot ? 2 * t->nslot : 256;
  size_t *slot = calloc(n, sizeof *slot);
  if (!slot) return false;
  for (size_t i = 0; i < t->n; i++) {
    size_t j = hash_str(t->s[i]) & (n - 1);
    while (slot[j]) j = (j + 1) & (n - 1);
    slot[j] = i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->nslot = n;
  return true;
}

/* The index of s, added if new; -1 when out of memory. */
static int64_t str_index(strtab *t, const char *s) {
  if (2 * (t->n + 1) > t->nslot && !strtab_grow(t)) return -1;
  size_t j = hash_str(s) & (t->nslot - 1);
  for (; t->slot[j]; j = (j + 1) & (t->nslot - 1))
    if (!strcmp(t->s[t->slot[j] - 1], s)) return (int64_t)(t->slot[j] - 1);
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    char **ns = realloc(t->s, cap * sizeof *ns);
    if (!ns) return -1;
    t->s = ns;
    t->cap = cap;
  }
  t->s[t->n] = (char *)s;
  t->slot[j] = ++t->n;
  return (int64_t)(t->n - 1);
}

/* --- building the message --------------------------------------------------------- */

typedef struct builder {
  const eph_spacetime *st;
  const eph_file *p;
  strtab str;
  Profile prof;
  bool nomem;
  /* Locations by site id (index nsites: the unknown site), made on first use. */
  Location **loc_of_site;
  size_t nloc_sites;
  Location **locs;
  size_t nlocs;
  Line *lines;       /* one per location */
  Line **line_ptrs;
  Function **funcs;
  size_t nfuncs, cap_funcs;
  int64_t key_class, key_lifetime;
  double run_bytes, run_seconds; /* divide the space-times (0: leave them 0) */
  Mapping mapping;               /* the one mapping (the file pprof names) */
  Mapping *mapping_ptr;
  char what[512]; /* the comment (the table borrows it) */
  char **owned;   /* function names made here (the table borrows them) */
  size_t nowned, cap_owned;
} builder;

static int64_t str(builder *b, const char *s) {
  int64_t i = str_index(&b->str, s ? s : "");
  if (i < 0) {
    b->nomem = true;
    return 0;
  }
  return i;
}

/* A function name as pprof shows it whole: pprof drops what is inside <...>
 * and (...) as C++ template or parameter lists, so the Lua adapter's
 * "function <a.lua:4>" becomes "function a.lua:4".  NULL: out of memory. */
static const char *pprof_name(builder *b, const char *name) {
  if (!strpbrk(name, "<>()")) return name;
  if (b->nowned == b->cap_owned) {
    size_t cap = b->cap_owned ? 2 * b->cap_owned : 64;
    char **no = realloc(b->owned, cap * sizeof *no);
    if (!no) return NULL;
    b->owned = no;
    b->cap_owned = cap;
  }
  char *s = malloc(strlen(name) + 1), *o = s;
  if (!s) return NULL;
  for (const char *c = name; *c; c++)
    if (!strchr("<>()", *c)) *o++ = *c;
  *o = 0;
  b->owned[b->nowned++] = s;
  return s;
}

/* The function of (name, file): an existing one or a new one. */
static uint64_t function_id(builder *b, const char *name, const char *file, int line) {
  if (!(name = pprof_name(b, name))) {
    b->nomem = true;
    return 0;
  }
  int64_t n = str(b, name), f = str(b, file);
  for (size_t i = b->nfuncs; i-- > 0;) /* sites of one function are usually declared together */
    if (b->funcs[i]->name == n && b->funcs[i]->filename == f) return b->funcs[i]->id;
  if (b->nfuncs == b->cap_funcs) {
    size_t cap = b->cap_funcs ? 2 * b->cap_funcs : 64;
    Function **nf = realloc(b->funcs, cap * sizeof *nf);
    if (!nf) {
      b->nomem = true;
      return 0;
    }
    b->funcs = nf;
    b->cap_funcs = cap;
  }
  Function *fn = malloc(sizeof *fn);
  if (!fn) {
    b->nomem = true;
    return 0;
  }
  perftools__profiles__function__init(fn);
  fn->id = b->nfuncs + 1;
  fn->name = n;
  fn->system_name = n;
  fn->filename = f;
  fn->start_line = line;
  b->funcs[b->nfuncs++] = fn;
  return fn->id;
}

/* The location of a site (0: unknown), made on first use. */
static uint64_t location_id(builder *b, uint32_t site) {
  size_t idx = site && site < b->p->nsites && b->p->sites[site].file ? site : b->nloc_sites - 1;
  if (b->loc_of_site[idx]) return b->loc_of_site[idx]->id;
  Location *l = malloc(sizeof *l);
  if (!l) {
    b->nomem = true;
    return 0;
  }
  perftools__profiles__location__init(l);
  l->id = b->nlocs + 1;
  l->mapping_id = b->mapping.id;
  Line *ln = &b->lines[b->nlocs];
  perftools__profiles__line__init(ln);
  if (idx == b->nloc_sites - 1) {
    ln->function_id = function_id(b, "(unknown site)", "", 0);
  } else {
    const eph_site_entry *e = &b->p->sites[site];
    ln->function_id = function_id(b, e->function && *e->function ? e->function : "?", e->file, e->line);
    ln->line = e->line;
  }
  b->line_ptrs[b->nlocs] = ln;
  l->n_line = 1;
  l->line = &b->line_ptrs[b->nlocs];
  b->locs[b->nlocs++] = l;
  b->loc_of_site[idx] = l;
  return l->id;
}

static int64_t clamp_round(double v) {
  if (!(v > 0)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  return (int64_t)llround(v);
}

static bool add_sample(builder *b, Sample *s, const eph_st_cell *c) {
  perftools__profiles__sample__init(s);
  const uint32_t *callers = NULL;
  size_t ncallers = eph_stack_callers(b->p, c->site_id, &callers);
  s->n_location_id = 1 + ncallers;
  s->location_id = malloc(s->n_location_id * sizeof *s->location_id);
  s->n_value = NVALUES;
  s->value = malloc(NVALUES * sizeof *s->value);
  Label *labels = malloc(2 * sizeof *labels);
  s->label = calloc(2, sizeof *s->label);
  if (!s->location_id || !s->value || !labels || !s->label) {
    free(labels);
    return false;
  }
  s->location_id[0] = location_id(b, c->site_id);
  for (size_t i = 0; i < ncallers; i++) s->location_id[1 + i] = location_id(b, callers[i]);
  s->value[V_OBJECTS] = clamp_round(c->sum.objects);
  s->value[V_BYTES] = clamp_round(c->sum.bytes);
  s->value[V_SPACE_TIME] = b->run_bytes > 0 ? clamp_round(c->sum.byte_bytes / b->run_bytes) : 0;
  s->value[V_SPACE_TIME_WALL] = b->run_seconds > 0 ? clamp_round(c->sum.byte_seconds / b->run_seconds) : 0;
  s->value[V_ALIVE] = clamp_round(c->sum.alive_bytes);
  const eph_file *p = b->p;
  const char *cls = c->class_id < p->nclasses && p->class_names[c->class_id] ? p->class_names[c->class_id] : "?";
  for (int i = 0; i < 2; i++) {
    perftools__profiles__label__init(&labels[i]);
    s->label[i] = &labels[i];
  }
  s->n_label = 2;
  labels[0].key = b->key_class;
  labels[0].str = str(b, cls);
  labels[1].key = b->key_lifetime;
  labels[1].str = str(b, eph_life_bucket_name(c->bucket));
  return !b->nomem;
}

static void free_builder(builder *b) {
  Profile *pr = &b->prof;
  for (size_t i = 0; i < pr->n_sample; i++) {
    Sample *s = pr->sample[i];
    free(s->location_id);
    free(s->value);
    if (s->label) free(s->label[0]);
    free(s->label);
  }
  free(pr->n_sample ? pr->sample[0] : NULL);
  free(pr->sample);
  for (size_t i = 0; i < pr->n_sample_type; i++) free(pr->sample_type[i]);
  free(pr->sample_type);
  free(pr->comment);
  for (size_t i = 0; i < b->nlocs; i++) free(b->locs[i]);
  free(b->locs);
  free(b->lines);
  free(b->line_ptrs);
  free(b->loc_of_site);
  for (size_t i = 0; i < b->nfuncs; i++) free(b->funcs[i]);
  free(b->funcs);
  free(b->str.s);
  free(b->str.slot);
  for (size_t i = 0; i < b->nowned; i++) free(b->owned[i]);
  free(b->owned);
}

static bool build(builder *b) {
  const eph_spacetime *st = b->st;
  const eph_file *p = b->p;
  Profile *pr = &b->prof;
  perftools__profiles__profile__init(pr);
  str(b, ""); /* string_table[0] */
  b->key_class = str(b, "class");
  b->key_lifetime = str(b, "lifetime");
  b->run_bytes = st->run_bytes;
  b->run_seconds = st->run_wall_ns / 1e9;
  const char *wl = eph_file_meta(p, "workload"), *prog = eph_file_meta(p, "program");
  perftools__profiles__mapping__init(&b->mapping);
  b->mapping.id = 1;
  b->mapping.filename = str(b, wl ? wl : prog ? prog : "ephemera");
  b->mapping.has_functions = b->mapping.has_filenames = b->mapping.has_line_numbers = true;
  b->mapping_ptr = &b->mapping;
  pr->n_mapping = 1;
  pr->mapping = &b->mapping_ptr;
  b->nloc_sites = p->nsites + 1;
  b->loc_of_site = calloc(b->nloc_sites, sizeof *b->loc_of_site);
  b->locs = malloc(b->nloc_sites * sizeof *b->locs);
  b->lines = malloc(b->nloc_sites * sizeof *b->lines);
  b->line_ptrs = malloc(b->nloc_sites * sizeof *b->line_ptrs);
  if (!b->loc_of_site || !b->locs || !b->lines || !b->line_ptrs) return false;

  static const char *const types[NVALUES][2] = {{"objects", "count"},
                                                {"bytes", "bytes"},
                                                {"space_time", "bytes"},
                                                {"space_time_wall", "bytes"},
                                                {"alive_at_exit", "bytes"}};
  pr->sample_type = calloc(NVALUES, sizeof *pr->sample_type);
  if (!pr->sample_type) return false;
  for (int i = 0; i < NVALUES; i++) {
    ValueType *v = malloc(sizeof *v);
    if (!v) return false;
    perftools__profiles__value_type__init(v);
    v->type = str(b, types[i][0]);
    v->unit = str(b, types[i][1]);
    pr->sample_type[pr->n_sample_type++] = v;
  }
  pr->default_sample_type = pr->sample_type[V_SPACE_TIME]->type;
  pr->duration_nanos = clamp_round(st->run_wall_ns);

  Sample *samples = calloc(st->ncells ? st->ncells : 1, sizeof *samples);
  pr->sample = calloc(st->ncells ? st->ncells : 1, sizeof *pr->sample);
  if (!samples || !pr->sample) {
    free(samples);
    return false;
  }
  for (size_t i = 0; i < st->ncells; i++) {
    pr->sample[pr->n_sample++] = &samples[i];
    if (!add_sample(b, &samples[i], &st->cells[i])) return false;
  }
  if (!st->ncells) free(samples);

  /* A comment that says what the numbers are. */
  char *what = b->what;
  const char *mode = eph_file_meta(p, "mode"), *sample = eph_file_meta(p, "sample");
  snprintf(what, sizeof b->what, "ephemera profile of %s (mode %s, sampling %s); weighted estimates of every allocation; "
           "space_time = bytes x lifetime / run length, the bytes kept live on average",
           wl ? wl : prog ? prog : "an unnamed run", mode ? mode : "?", sample ? sample : "all");
  pr->comment = malloc(sizeof *pr->comment);
  if (!pr->comment) return false;
  pr->comment[0] = str(b, what);
  pr->n_comment = 1;

  pr->n_location = b->nlocs;
  pr->location = b->locs;
  pr->n_function = b->nfuncs;
  pr->function = b->funcs;
  pr->n_string_table = b->str.n;
  pr->string_table = b->str.s;
  return !b->nomem;
}

/* Writes data gzip-compressed to path. */
static eph_status write_gzip(const char *path, const uint8_t *data, size_t len, eph_error *err) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    eph_error_fill(err, EPH_ERR_INVALID, "cannot create %s: %s", path, strerror(errno));
    return EPH_ERR_INVALID;
  }
  z_stream z;
  memset(&z, 0, sizeof z);
  /* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
  bool ok = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  uint8_t out[1 << 16];
  z.next_in = (uint8_t *)data;
  z.avail_in = (uInt)len;
  int zr = Z_OK;
  while (ok && zr != Z_STREAM_END) {
    z.next_out = out;
    z.avail_out = sizeof out;
    zr = deflate(&z, Z_FINISH);
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) ok = false;
    size_t n = sizeof out - z.avail_out;
    if (ok && n && fwrite(out, 1, n, f) != n) ok = false;
  }
  deflateEnd(&z);
  int saved = errno;
  if (fclose(f) != 0) ok = false;
  if (!ok) {
    eph_error_fill(err, EPH_ERR_INVALID, "writing %s: %s", path, saved ? strerror(saved) : "compression failed");
    return EPH_ERR_INVALID;
  }
  return EPH_OK;
}

eph_status eph_export_pprof(const eph_spacetime *s, const char *path, eph_error *err) {
  builder b;
  memset(&b, 0, sizeof b);
  b.st = s;
  b.p = s->profile;
  eph_status st = EPH_OK;
  if (!build(&b)) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory building the pprof profile of %zu cells", s->ncells);
    st = EPH_ERR_NOMEM;
  } else {
    size_t len = perftools__profiles__profile__get_packed_size(&b.prof);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
      eph_error_fill(err, EPH_ERR_NOMEM, "out of memory packing %zu bytes of pprof", len);
      st = EPH_ERR_NOMEM;
    } else {
      perftools__profiles__profile__pack(&b.prof, buf);
      st = write_gzip(path, buf, len, err);
      free(buf);
    }
  }
  free_builder(&b);
  return st;
}
