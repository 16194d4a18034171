/*
 * sample.c — deterministic .eph content; see sample.h.
 */
#include "sample.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t sample_rand(uint64_t *state) {
  uint64_t x = *state ? *state : 0x9E3779B97F4A7C15u;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Du;
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "sample: out of memory\n");
    abort();
  }
  return p;
}

static char *xstrdup(const char *s) {
  char *r = xcalloc(strlen(s) + 1, 1);
  memcpy(r, s, strlen(s));
  return r;
}

static char *repeat(char c, size_t n) {
  char *r = xcalloc(n + 1, 1);
  memset(r, c, n);
  return r;
}

static void add_meta(sample *s, char *key, char *value) {
  s->meta[s->nmeta].key = key;
  s->meta[s->nmeta].value = value;
  s->nmeta++;
}

static void add_class(sample *s, uint32_t id, char *name) {
  s->classes[s->nclasses].id = id;
  s->classes[s->nclasses].name = name;
  s->nclasses++;
}

static void add_site(sample *s, uint32_t id, char *file, int line, char *function) {
  sample_site *e = &s->sites[s->nsites++];
  e->id = id;
  e->file = file;
  e->line = line;
  e->function = function;
}

static eph_stamp stamp(uint64_t bytes, uint64_t wall, uint32_t sc, uint32_t full) {
  eph_stamp t = {bytes, wall, sc, full};
  return t;
}

static void extreme_record(eph_record *r, size_t i, const sample *s) {
  static const double weights[] = {0.0, 1.0, DBL_MAX, 5e-324, 9007199254740992.0, 9007199254740994.0,
                                   1e300, -0.0, 0.1, 12.5, DBL_MIN, 18446744073709551616.0};
  memset(r, 0, sizeof *r);
  bool hi = i & 1;
  r->id = i == 0 ? 0 : i == 1 ? UINT64_MAX : (hi ? UINT64_MAX - i : i);
  r->class_id = s->classes[i % s->nclasses].id;
  r->site_id = i % 3 == 0 ? 0 : s->sites[i % s->nsites].id;
  r->size = hi ? UINT64_MAX : 0;
  r->weight = weights[i % (sizeof weights / sizeof weights[0])];
  r->death_kind = (uint8_t)(EPH_DEATH_FINALIZED + i % 6);
  uint64_t big = UINT64_MAX;
  switch (i % 4) {
    case 0:
      r->birth = stamp(0, 0, 0, 0);
      r->death = stamp(big, big, UINT32_MAX, UINT32_MAX);
      r->alive_until = stamp(big / 2, 1, 7, 0);
      break;
    case 1: /* backwards: death before birth */
      r->birth = stamp(big, big, UINT32_MAX, UINT32_MAX);
      r->death = stamp(0, 0, 0, 0);
      r->alive_until = r->death;
      break;
    case 2:
      r->birth = stamp(big - 1, 5, UINT32_MAX - 1, 3);
      r->death = stamp(big, 6, UINT32_MAX, 3);
      r->alive_until = r->birth;
      break;
    default:
      r->birth = stamp(1, big, 0, UINT32_MAX);
      r->death = r->birth;
      r->alive_until = r->birth;
  }
}

void sample_build(sample *s, const sample_spec *spec) {
  memset(s, 0, sizeof *s);
  uint64_t rng = spec->seed * 2654435761u + 1;
  s->meta = xcalloc(16, sizeof *s->meta);
  add_meta(s, xstrdup("runtime"), xstrdup("ephemera"));
  add_meta(s, xstrdup("program"), xstrdup("format-test"));
  add_meta(s, xstrdup("workload"), xstrdup("sample"));
  add_meta(s, xstrdup("mode"), xstrdup("gc"));
  add_meta(s, xstrdup("sample"), xstrdup("1"));
  s->classes = xcalloc(16, sizeof *s->classes);
  s->sites = xcalloc(16, sizeof *s->sites);
  const char *names[] = {"Point", "Array", "String", "Node", "Leaf", "Dictionary"};
  for (uint32_t i = 0; i < 6; i++) add_class(s, i + 1, xstrdup(names[i]));
  add_site(s, 1, xstrdup("workloads/wl_sample.c"), 42, xstrdup("make_point"));
  add_site(s, 2, xstrdup("workloads/wl_sample.c"), 57, xstrdup("make_tree"));
  add_site(s, 3, xstrdup("src/lib.c"), 1, xstrdup("helper"));
  add_site(s, 7, xstrdup("tree.lua"), 1200, xstrdup("insert"));
  if (spec->extreme) {
    add_meta(s, xstrdup(""), xstrdup(""));
    add_meta(s, xstrdup("command"), repeat('x', 100000));
    add_meta(s, xstrdup("odd, \"quoted\"\nvalue"), xstrdup("tab\there \\ back\x01slash \xc3\xa9t\xc3\xa9 \xe2\x9c\x93 bad\xff\xfe"));
    uint32_t top = spec->small_ids ? 77 : EPH_FORMAT_MAX_ID;
    add_class(s, top, xstrdup(""));
    add_class(s, 1000, repeat('C', 70000));
    add_class(s, 9, xstrdup("Odd,\"Class\"\nName"));
    add_site(s, top, xstrdup(""), INT_MIN, xstrdup(""));
    add_site(s, 8, xstrdup("a,b\"c.c"), INT_MAX, repeat('f', 40000));
    add_site(s, 9, xstrdup("neg.c"), -1, xstrdup("f\tn"));
  }

  s->nrecords = spec->nrecords;
  s->records = xcalloc(s->nrecords, sizeof *s->records);
  uint64_t clock = 0, wall = 1000, scav = 0, full = 0;
  eph_stamp batch_death = {0, 0, 0, 0}, batch_au = {0, 0, 0, 0};
  for (size_t i = 0; i < s->nrecords; i++) {
    eph_record *r = &s->records[i];
    if (spec->extreme && i < 48) {
      extreme_record(r, i, s);
      continue;
    }
    uint64_t x = sample_rand(&rng);
    clock += 16 + x % 512;
    wall += x % 3000;
    if (x % 97 == 0) scav++;
    if (x % 1009 == 0) full++;
    r->id = i + 1 + (x % 13 == 0 ? 1000 : 0);
    r->class_id = x % 11 == 0 ? 0 : s->classes[(x >> 8) % 6].id;
    r->site_id = x % 5 == 0 ? 0 : s->sites[(x >> 16) % 4].id;
    r->size = 16 + (x >> 24) % 200;
    r->weight = x % 7 == 0 ? 12.5 : x % 3 == 0 ? 64 : 1;
    r->death_kind = (uint8_t)(EPH_DEATH_FINALIZED + (x >> 32) % 6);
    r->birth = stamp(clock, wall, (uint32_t)scav, (uint32_t)full);
    uint64_t life = (x >> 40) % 100000;
    r->death = stamp(clock + life, wall + life * 3, (uint32_t)(scav + life / 5000), (uint32_t)(full + life / 50000));
    bool gc_found = r->death_kind == EPH_DEATH_SCAVENGE || r->death_kind == EPH_DEATH_FULL_GC;
    r->alive_until = gc_found ? stamp(clock + life / 2, wall + life, r->death.scavenges, r->birth.full_gcs) : r->death;
    /* Blocks of 8 records take turns: random as above; like gc mode (one
     * collection's batch: one death stamp, alive until the previous
     * collection or born since, id == birth.bytes, repeating classes);
     * like finalization mode (deaths one after the other, ids a counter).
     * So the writer's shortcuts for typical streams are all exercised. */
    size_t style = (i / 8) % 3, k = (x >> 8) % 3;
    if (i % 8 == 0) {
      batch_death = stamp(clock + 8 * 600, wall + 8 * 3000, (uint32_t)scav + 1, (uint32_t)full);
      batch_au = stamp(clock - 1, wall - 1, (uint32_t)scav, (uint32_t)full);
    }
    if (style == 0) continue;
    r->class_id = s->classes[k].id;
    r->site_id = s->sites[k].id;
    r->size = 24 + 8 * k;
    if (style == 1) {
      r->id = r->birth.bytes;
      r->weight = 64;
      r->death_kind = (i / 24) % 2 ? EPH_DEATH_FULL_GC : EPH_DEATH_SCAVENGE;
      r->death = batch_death;
      r->alive_until = x % 3 == 0 ? batch_au : r->birth;
    } else {
      r->weight = 1;
      r->death_kind = EPH_DEATH_FINALIZED;
      batch_death.wall_ns += 100 + (x >> 48) % 400;
      r->death = r->alive_until = batch_death;
    }
  }

  s->ngcs = spec->ngcs;
  s->gcs = xcalloc(s->ngcs, sizeof *s->gcs);
  for (size_t i = 0; i < s->ngcs; i++) {
    eph_gc_event *g = &s->gcs[i];
    uint64_t x = sample_rand(&rng);
    g->kind = x % 5 == 0 ? EPH_GC_FULL : EPH_GC_SCAVENGE;
    g->index = i + 1;
    g->start_ns = 1000000 * (i + 1) + x % 1000;
    g->duration_ns = x % 200000;
    g->cpu_ns = x % 190000;
    g->allocated = (i + 1) * 15728640;
    g->used_before = 20000000 + x % 1000000;
    g->used_after = 10000000 + x % 100000;
    g->bytes_copied = x % 4000000;
    g->bytes_promoted = x % 300000;
    g->bytes_compacted = g->kind == EPH_GC_FULL ? x % 9000000 : 0;
    g->old_committed = 16u << 20;
    g->ephemerons_mourned = x % 17;
    if (spec->extreme && i < 4) {
      uint64_t v = i % 2 ? UINT64_MAX : 0;
      g->index = g->start_ns = g->duration_ns = g->cpu_ns = g->allocated = v;
      g->used_before = g->used_after = g->bytes_copied = g->bytes_promoted = v;
      g->bytes_compacted = g->old_committed = g->ephemerons_mourned = v;
    }
  }

  s->nevents = spec->nevents;
  s->events = xcalloc(s->nevents, sizeof *s->events);
  uint64_t time = 0, obj = 0;
  for (size_t i = 0; i < s->nevents; i++) {
    eph_event *e = &s->events[i];
    uint64_t x = sample_rand(&rng);
    e->kind = (uint8_t)(EPH_EV_ALLOC + x % 6);
    switch (e->kind) {
      case EPH_EV_ALLOC:
        e->obj = ++obj;
        e->a = s->classes[(x >> 8) % s->nclasses].id;
        e->b = 16 + (x >> 16) % 100;
        e->c = (x >> 24) % 3 ? s->sites[(x >> 28) % s->nsites].id : 0;
        time += e->b;
        break;
      case EPH_EV_STORE:
        e->obj = obj ? 1 + (x >> 8) % obj : 0;
        e->a = (x >> 20) % 8;
        e->b = obj ? (x >> 24) % obj : 0;
        e->c = obj ? (x >> 32) % (obj + 1) : 0;
        break;
      case EPH_EV_ROOT:
      case EPH_EV_DEATH: e->obj = obj ? 1 + (x >> 8) % obj : 0; break;
      case EPH_EV_GC:
        e->a = (x >> 8) & 1;
        e->b = (x >> 9) & 1;
        break;
      default: time += (x >> 8) % 4096; break;
    }
    e->time = time;
    if (spec->extreme && i < 12) {
      e->time = i % 2 ? UINT64_MAX : 0;
      if (e->kind != EPH_EV_ALLOC && e->kind != EPH_EV_GC) {
        e->obj = UINT64_MAX - i;
        if (e->kind == EPH_EV_STORE) e->a = e->b = e->c = UINT64_MAX;
      }
    }
  }

  uint64_t base = sample_rand(&rng);
  s->totals.wall_ns = base % 100000000000u;
  s->totals.cpu_ns = base % 90000000000u;
  s->totals.gc_wall_ns = base % 1000000000u;
  s->totals.bytes_allocated = clock + 4096;
  s->totals.objects_allocated = s->nrecords * 7;
  s->totals.records = s->nrecords;
  s->totals.censored = s->nrecords / 6;
  s->totals.scavenges = s->ngcs;
  s->totals.full_gcs = s->ngcs / 5;
  s->totals.peak_heap = spec->extreme ? UINT64_MAX : 48u << 20;
}

void sample_free(sample *s) {
  for (size_t i = 0; i < s->nmeta; i++) {
    free((char *)s->meta[i].key);
    free((char *)s->meta[i].value);
  }
  free(s->meta);
  for (size_t i = 0; i < s->nclasses; i++) free(s->classes[i].name);
  free(s->classes);
  for (size_t i = 0; i < s->nsites; i++) {
    free(s->sites[i].file);
    free(s->sites[i].function);
  }
  free(s->sites);
  free(s->records);
  free(s->gcs);
  free(s->events);
  memset(s, 0, sizeof *s);
}

/* --- writing --------------------------------------------------------------------- */

typedef struct wstate {
  const sample *s;
  eph_writer *w;
  bool *class_done, *site_done;
} wstate;

static eph_status need_class(wstate *ws, uint64_t id) {
  for (size_t i = 0; id && i < ws->s->nclasses; i++)
    if (ws->s->classes[i].id == id && !ws->class_done[i]) {
      ws->class_done[i] = true;
      return eph_writer_class(ws->w, ws->s->classes[i].id, ws->s->classes[i].name);
    }
  return EPH_OK;
}

static eph_status need_site(wstate *ws, uint64_t id) {
  for (size_t i = 0; id && i < ws->s->nsites; i++)
    if (ws->s->sites[i].id == id && !ws->site_done[i]) {
      const sample_site *e = &ws->s->sites[i];
      ws->site_done[i] = true;
      return eph_writer_site(ws->w, e->id, e->file, e->line, e->function);
    }
  return EPH_OK;
}

eph_status sample_write(const sample *s, const char *path, bool compress, size_t flush_every, bool close, char *msg,
                        size_t msglen) {
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_writer *w = eph_writer_open(path, s->meta, s->nmeta, compress, &err);
  if (!w) {
    snprintf(msg, msglen, "open: %s", err.message);
    return err.status;
  }
  wstate ws = {s, w, xcalloc(s->nclasses, sizeof(bool)), xcalloc(s->nsites, sizeof(bool))};
  eph_status st = EPH_OK;
  /* The first class and site up front; the others as they are first used. */
  if (s->nclasses) st = need_class(&ws, s->classes[0].id);
  if (st == EPH_OK && s->nsites) st = need_site(&ws, s->sites[0].id);
  size_t n = s->nrecords > s->nevents ? s->nrecords : s->nevents;
  if (s->ngcs > n) n = s->ngcs;
  size_t items = 0;
  for (size_t i = 0; i < n && st == EPH_OK; i++) {
    if (i < s->nrecords) {
      const eph_record *r = &s->records[i];
      st = need_class(&ws, r->class_id);
      if (st == EPH_OK) st = need_site(&ws, r->site_id);
      if (st == EPH_OK) st = eph_writer_record(w, r);
      items++;
    }
    if (st == EPH_OK && i < s->nevents) {
      const eph_event *e = &s->events[i];
      if (e->kind == EPH_EV_ALLOC) {
        st = need_class(&ws, e->a);
        if (st == EPH_OK) st = need_site(&ws, e->c);
      }
      if (st == EPH_OK) st = eph_writer_event(w, e);
      items++;
    }
    if (st == EPH_OK && i < s->ngcs) {
      st = eph_writer_gc(w, &s->gcs[i]);
      items++;
    }
    if (st == EPH_OK && flush_every && items >= flush_every) {
      st = eph_writer_flush(w);
      items = 0;
    }
  }
  for (size_t i = 0; i < s->nclasses && st == EPH_OK; i++) st = need_class(&ws, s->classes[i].id);
  for (size_t i = 0; i < s->nsites && st == EPH_OK; i++) st = need_site(&ws, s->sites[i].id);
  if (st != EPH_OK) snprintf(msg, msglen, "write: %s", eph_writer_error(w));
  free(ws.class_done);
  free(ws.site_done);
  if (st != EPH_OK || !close) {
    /* Leave the file as a killed run would: everything flushed, no closing chunk. */
    eph_status fst = st == EPH_OK ? eph_writer_flush(w) : st;
    if (fst != EPH_OK && st == EPH_OK) snprintf(msg, msglen, "flush: %s", eph_writer_error(w));
    struct stat sb;
    bool sized = stat(path, &sb) == 0;
    eph_writer_close(w, NULL);
    if (sized && truncate(path, sb.st_size) != 0 && fst == EPH_OK) {
      snprintf(msg, msglen, "truncate %s failed", path);
      fst = EPH_ERR_INVALID;
    }
    return st == EPH_OK ? fst : st;
  }
  st = eph_writer_close(w, &s->totals);
  if (st != EPH_OK) snprintf(msg, msglen, "close: %s", eph_writer_error(NULL));
  return st;
}

/* --- checking ----------------------------------------------------------------------- */

static bool stamp_eq(const eph_stamp *a, const eph_stamp *b) {
  return a->bytes == b->bytes && a->wall_ns == b->wall_ns && a->scavenges == b->scavenges &&
         a->full_gcs == b->full_gcs;
}

bool sample_record_eq(const eph_record *a, const eph_record *b) {
  return a->id == b->id && a->class_id == b->class_id && a->site_id == b->site_id && a->size == b->size &&
         !memcmp(&a->weight, &b->weight, sizeof a->weight) && stamp_eq(&a->birth, &b->birth) &&
         stamp_eq(&a->death, &b->death) && stamp_eq(&a->alive_until, &b->alive_until) &&
         a->death_kind == b->death_kind;
}

bool sample_gc_eq(const eph_gc_event *a, const eph_gc_event *b) {
  return a->kind == b->kind && a->index == b->index && a->start_ns == b->start_ns &&
         a->duration_ns == b->duration_ns && a->cpu_ns == b->cpu_ns && a->allocated == b->allocated &&
         a->used_before == b->used_before && a->used_after == b->used_after && a->bytes_copied == b->bytes_copied &&
         a->bytes_promoted == b->bytes_promoted && a->bytes_compacted == b->bytes_compacted &&
         a->old_committed == b->old_committed && a->ephemerons_mourned == b->ephemerons_mourned;
}

bool sample_event_eq(const eph_event *a, const eph_event *b) {
  return a->kind == b->kind && a->time == b->time && a->obj == b->obj && a->a == b->a && a->b == b->b &&
         a->c == b->c;
}

static bool totals_eq(const eph_totals *a, const eph_totals *b) {
  return a->wall_ns == b->wall_ns && a->cpu_ns == b->cpu_ns && a->gc_wall_ns == b->gc_wall_ns &&
         a->bytes_allocated == b->bytes_allocated && a->objects_allocated == b->objects_allocated &&
         a->records == b->records && a->censored == b->censored && a->scavenges == b->scavenges &&
         a->full_gcs == b->full_gcs && a->peak_heap == b->peak_heap;
}

const char *sample_check(const sample *s, const eph_file *p, bool prefix_ok) {
  bool all = p->complete || !prefix_ok;
  if (p->version != EPH_FORMAT_VERSION) return "version differs";
  if (p->nmeta > s->nmeta || (all && p->nmeta != s->nmeta)) return "metadata count differs";
  for (size_t i = 0; i < p->nmeta; i++)
    if (strcmp(p->meta[i].key, s->meta[i].key) || strcmp(p->meta[i].value, s->meta[i].value))
      return "metadata pair differs";
  size_t ncls = 0, nsites = 0;
  for (size_t i = 0; i < p->nclasses; i++) {
    if (!p->class_names[i]) continue;
    ncls++;
    size_t j = 0;
    while (j < s->nclasses && s->classes[j].id != i) j++;
    if (j == s->nclasses) return "a class id the sample does not have";
    if (strcmp(s->classes[j].name, p->class_names[i])) return "class name differs";
  }
  for (size_t i = 0; i < p->nsites; i++) {
    const eph_site_entry *e = &p->sites[i];
    if (!e->file) continue;
    nsites++;
    size_t j = 0;
    while (j < s->nsites && s->sites[j].id != i) j++;
    if (j == s->nsites) return "a site id the sample does not have";
    if (strcmp(s->sites[j].file, e->file) || strcmp(s->sites[j].function, e->function) || s->sites[j].line != e->line)
      return "site differs";
  }
  if (all && (ncls != s->nclasses || nsites != s->nsites)) return "table size differs";
  if (p->nrecords > s->nrecords || (all && p->nrecords != s->nrecords)) return "record count differs";
  for (size_t i = 0; i < p->nrecords; i++)
    if (!sample_record_eq(&p->records[i], &s->records[i])) return "record differs";
  if (p->ngcs > s->ngcs || (all && p->ngcs != s->ngcs)) return "gc count differs";
  for (size_t i = 0; i < p->ngcs; i++)
    if (!sample_gc_eq(&p->gcs[i], &s->gcs[i])) return "gc differs";
  if (p->nevents > s->nevents || (all && p->nevents != s->nevents)) return "event count differs";
  for (size_t i = 0; i < p->nevents; i++)
    if (!sample_event_eq(&p->events[i], &s->events[i])) return "event differs";
  if (p->complete && !totals_eq(&p->totals, &s->totals)) return "totals differ";
  if (!p->complete && !prefix_ok) return "not complete";
  if (!p->complete && !p->warning[0]) return "incomplete without a warning";
  return NULL;
}

int sample_write_seeds(const char *dir, char *msg, size_t msglen) {
  for (int v = 0; v < 10; v++) {
    sample_spec spec = {.nrecords = (size_t)(2 + v * 4), .ngcs = (size_t)(v % 4), .nevents = (size_t)(2 + v * 3),
                        .extreme = v >= 6, .small_ids = true, .seed = (uint64_t)v + 1};
    sample s;
    sample_build(&s, &spec);
    if (spec.extreme) { /* keep the seeds small: cut the long strings */
      for (size_t i = 0; i < s.nmeta; i++)
        if (strlen(s.meta[i].value) > 40) ((char *)s.meta[i].value)[40] = 0;
      for (size_t i = 0; i < s.nclasses; i++)
        if (strlen(s.classes[i].name) > 40) s.classes[i].name[40] = 0;
      for (size_t i = 0; i < s.nsites; i++)
        if (strlen(s.sites[i].function) > 40) s.sites[i].function[40] = 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/seed%02d.eph", dir, v);
    eph_status st = sample_write(&s, path, v % 2 == 1, v % 3 == 0 ? 3 : 0, v != 4 && v != 7, msg, msglen);
    sample_free(&s);
    if (st != EPH_OK) return -1;
  }
  return 0;
}

uint8_t *sample_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (n < cap) break;
    uint8_t *b = realloc(buf, cap * 2);
    if (!b) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = b;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}
