/*
 * record_encoding.c — what one .eph record costs to write: bytes per record
 * in RECS payloads and nanoseconds per eph_writer_record call, for
 * synthetic record streams shaped like the profiler's and for records
 * replayed from real profiles.
 *
 * It uses only the public API (include/ephemera/format.h), so the same
 * program measures any version of src/format/: bench/record-encoding/run
 * compiles it against a source tree of your choice (SRC=...).
 *
 *   record_encoding [--n N] [--reps R] [--no-check] [--once] STREAM...
 *   record_encoding --export IN.eph OUT.recs
 *
 * STREAM is one of
 *   gc          gc mode at 100 %: records in batches at each collection, one
 *               death stamp per batch, alive_until the previous collection or
 *               the birth, ids a counter in allocation order
 *   gc-byteids  the same with id == birth.bytes
 *   fin         finalization mode: a death stamp per record (finalisers run
 *               one after the other after a collection), alive_until == death
 *   lua         the Lua adapter: frees during collector steps on a coarse
 *               clock, alive_until the cycle's start or the birth
 *   FILE.recs   records exported from a real profile (--export), in file order;
 *               FILE.recs:byteids replays them with id := birth.bytes
 *
 * For each stream: RECS payload bytes per record (uncompressed, what
 * eph_writer_record produces; chunk headers excluded) and file bytes per
 * record, then the best of R timed runs of eph_writer_record for every
 * record + close, to /dev/null (encoding, CRC, framing) and to a file in
 * $TMPDIR (plus the write(2) into the page cache), in ns per record.  The
 * records are passed from a small buffer that is hot in the cache, as in a
 * profiler (see write_all).  --once writes each stream once to /dev/null
 * and prints nothing else: for counting instructions under callgrind,
 * which a loaded machine does not disturb (the run script's INSTR=1).
 * Unless --no-check, the file is read back and every record compared.
 * Ends with one key=value line per stream.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ephemera/format.h"

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "record_encoding: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  exit(1);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1Du;
}

typedef struct recs {
  eph_record *r;
  size_t n, cap;
} recs;

static void push(recs *v, const eph_record *r) {
  if (v->n == v->cap) {
    v->cap = v->cap ? 2 * v->cap : 1 << 16;
    v->r = realloc(v->r, v->cap * sizeof *v->r);
    if (!v->r) die("out of memory%s", "");
  }
  v->r[v->n++] = *r;
}

/* --- synthetic streams ------------------------------------------------------------------ */

/* A dataframe-like allocation mix: rows of a few classes in a fixed order,
 * each class with its site and (mostly) fixed size, and some noise. */
typedef struct klass {
  uint32_t id, site, alt_site;
  uint64_t size, size_var;
} klass;

static const klass K[] = {
    {1, 1, 1, 24, 0},  {2, 2, 2, 32, 0},   {3, 3, 3, 24, 0},  {3, 3, 9, 24, 0}, {4, 4, 4, 40, 48},
    {1, 5, 5, 24, 0},  {5, 6, 6, 64, 0},   {6, 7, 7, 16, 0},  {7, 8, 8, 48, 0}, {8, 10, 10, 24, 200},
    {9, 11, 12, 32, 0}, {10, 13, 13, 80, 0},
};
#define NK (sizeof K / sizeof K[0])

typedef struct obj {
  eph_record r;
  uint64_t dies_at; /* bytes clock */
} obj;

typedef struct sim {
  uint64_t bytes, wall, next_id;
  uint32_t scav, full;
  bool byteids;
  obj *live;
  size_t nlive, cap;
} sim;

static eph_stamp now_of(const sim *s) { return (eph_stamp){s->bytes, s->wall, s->scav, s->full}; }

/* Allocates one object: 88 % die within about one eden, 9 % within a few,
 * 3 % live on (most of those to the end). */
static void sim_alloc(sim *s, size_t i) {
  uint64_t x = rnd();
  const klass *k = x % 23 == 0 ? &K[(x >> 8) % NK] : &K[i % 6];
  if (s->nlive == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1 << 16;
    s->live = realloc(s->live, s->cap * sizeof *s->live);
    if (!s->live) die("out of memory%s", "");
  }
  obj *o = &s->live[s->nlive++];
  memset(o, 0, sizeof *o);
  o->r.class_id = k->id;
  o->r.site_id = (x >> 16) % 17 == 0 ? k->alt_site : k->site;
  o->r.size = k->size + (k->size_var ? (x >> 24) % k->size_var / 8 * 8 : 0);
  o->r.weight = 1.0;
  s->wall += 25 + (x >> 32) % 60;
  o->r.birth = now_of(s);
  o->r.alive_until = o->r.birth;
  o->r.id = s->byteids ? s->bytes : ++s->next_id;
  s->bytes += o->r.size;
  uint64_t y = (x >> 40) % 100;
  uint64_t life = y < 88 ? (x >> 20) % (12u << 20) : y < 97 ? (x >> 20) % (60u << 20) : UINT64_MAX / 2;
  o->dies_at = s->bytes + life;
}

/* gc and fin: N objects, a collection every 15 MiB, every 8th a full GC. */
static void gen_heap(recs *out, size_t n, bool byteids, bool fin) {
  sim s = {.bytes = 4096, .wall = 100000, .byteids = byteids};
  const uint64_t eden = 15u << 20;
  uint64_t next_gc = eden;
  eph_stamp last_gc = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    sim_alloc(&s, i);
    if (s.bytes < next_gc && i + 1 < n) continue;
    bool full = (s.scav + s.full + 1) % 8 == 0;
    s.wall += 2000000; /* the collection itself */
    if (full) s.full++;
    else s.scav++;
    eph_stamp now = now_of(&s);
    size_t keep = 0;
    for (size_t j = 0; j < s.nlive; j++) {
      obj *o = &s.live[j];
      if (o->dies_at > s.bytes) {
        o->r.alive_until = now;
        s.live[keep++] = *o;
        continue;
      }
      if (fin) {
        s.wall += 150 + rnd() % 300; /* one finaliser after the other */
        o->r.death = now_of(&s);
        o->r.alive_until = o->r.death;
        o->r.death_kind = EPH_DEATH_FINALIZED;
      } else {
        o->r.death = now;
        o->r.death_kind = full ? EPH_DEATH_FULL_GC : EPH_DEATH_SCAVENGE;
        if (o->r.birth.bytes < last_gc.bytes) o->r.alive_until = last_gc; /* else: still its birth */
      }
      push(out, &o->r);
    }
    s.nlive = keep;
    last_gc = now;
    next_gc = s.bytes + eden;
  }
  eph_stamp end = now_of(&s);
  for (size_t j = 0; j < s.nlive; j++) {
    obj *o = &s.live[j];
    o->r.death = o->r.alive_until = end;
    o->r.death_kind = EPH_DEATH_CENSORED;
    push(out, &o->r);
  }
  free(s.live);
}

/* Lua: tables of one class and site; frees happen during collector steps,
 * whose clock is coarse (the same stamp for a step's frees); alive_until
 * is the cycle's start for objects older than the cycle, else the birth. */
static void gen_lua(recs *out, size_t n) {
  uint64_t bytes = 0, wall = 0, id = 0;
  uint32_t cycles = 0;
  eph_stamp cycle = {0, 0, 0, 0};
  obj *live = NULL;
  size_t nlive = 0, cap = 0;
  uint64_t next_step = 64 << 10;
  while (out->n < n) {
    uint64_t x = rnd();
    if (nlive == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      live = realloc(live, cap * sizeof *live);
      if (!live) die("out of memory%s", "");
    }
    obj *o = &live[nlive++];
    memset(o, 0, sizeof *o);
    o->r.id = ++id;
    o->r.class_id = 1;
    o->r.site_id = 1;
    o->r.size = 56;
    o->r.weight = 1.0;
    wall += 40 + x % 30;
    o->r.birth = (eph_stamp){bytes, wall, 0, cycles};
    bytes += 56;
    o->dies_at = bytes + (x >> 8) % (x % 10 < 8 ? (256u << 10) : (8u << 20));
    if (bytes < next_step) continue;
    /* a collector step: the dead objects it reaches are freed at one stamp */
    wall += 50000;
    if (x % 8 == 0) {
      cycles++;
      cycle = (eph_stamp){bytes, wall, 0, cycles};
    }
    eph_stamp now = {bytes, wall, 0, cycles};
    size_t keep = 0;
    for (size_t j = 0; j < nlive && out->n < n; j++) {
      obj *d = &live[j];
      if (d->dies_at > bytes) {
        live[keep++] = *d;
        continue;
      }
      d->r.death = now;
      d->r.death_kind = EPH_DEATH_FREED;
      d->r.alive_until = d->r.birth.full_gcs < cycles ? cycle : d->r.birth;
      push(out, &d->r);
    }
    nlive = keep;
    next_step = bytes + (64 << 10);
  }
  free(live);
}

/* --- replaying real profiles ------------------------------------------------------------------ */

static void export_profile(const char *in, const char *outpath) {
  eph_file *p;
  eph_error err;
  if (eph_file_load(in, &p, &err) != EPH_OK) die("%s", err.message);
  FILE *f = fopen(outpath, "wb");
  if (!f || fwrite(p->records, sizeof *p->records, p->nrecords, f) != p->nrecords || fclose(f) != 0)
    die("cannot write %s", outpath);
  printf("%s: %zu records exported to %s\n", in, p->nrecords, outpath);
  eph_file_free(p);
}

static void load_recs(recs *out, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s", path);
  eph_record r;
  while (fread(&r, sizeof r, 1, f) == 1) push(out, &r);
  fclose(f);
}

/* --- measuring -------------------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define WINDOW 1024

/* Writes every record to path; returns the seconds the records and the close took. */
static double write_all(const recs *v, const char *path, uint32_t max_class, uint32_t max_site) {
  eph_error err;
  eph_meta_pair meta[] = {{"runtime", "ephemera"}, {"program", "record_encoding"}};
  eph_writer *w = eph_writer_open(path, meta, 2, false, &err);
  if (!w) die("%s", err.message);
  char name[32];
  for (uint32_t c = 1; c <= max_class; c++) {
    snprintf(name, sizeof name, "Class%u", (unsigned)c);
    if (eph_writer_class(w, c, name) != EPH_OK) die("%s", eph_writer_error(w));
  }
  for (uint32_t s = 1; s <= max_site; s++)
    if (eph_writer_site(w, s, "bench.c", (int)s, "f") != EPH_OK) die("%s", eph_writer_error(w));
  if (eph_writer_flush(w) != EPH_OK) die("%s", eph_writer_error(w));
  /* A profiler writes a record it has just filled in, hot in the cache: copy
   * each window of records into a small buffer first (not timed), so that the
   * time is the writer's and not that of streaming the array from memory. */
  static eph_record hot[WINDOW];
  double t = 0;
  for (size_t i = 0; i < v->n; i += WINDOW) {
    size_t k = v->n - i < WINDOW ? v->n - i : WINDOW;
    memcpy(hot, v->r + i, k * sizeof *hot);
    double t0 = now_s();
    for (size_t j = 0; j < k; j++)
      if (eph_writer_record(w, &hot[j]) != EPH_OK) die("%s", eph_writer_error(w));
    t += now_s() - t0;
  }
  double t0 = now_s();
  if (eph_writer_close(w, NULL) != EPH_OK) die("%s", eph_writer_error(NULL));
  return t + now_s() - t0;
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sums the payload bytes of the RECS chunks of a file. */
static uint64_t recs_bytes(const char *path, uint64_t *file_bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s", path);
  uint8_t h[24];
  uint64_t total = 0;
  if (fseek(f, 16, SEEK_SET) != 0) die("cannot seek %s", path);
  while (fread(h, 1, 24, f) == 24) {
    uint32_t stored = rd32(h + 8);
    if (!memcmp(h, "RECS", 4)) total += rd32(h + 12);
    if (fseek(f, stored, SEEK_CUR) != 0) break;
  }
  fclose(f);
  struct stat sb;
  *file_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
  return total;
}

static bool stamp_eq(const eph_stamp *a, const eph_stamp *b) {
  return a->bytes == b->bytes && a->wall_ns == b->wall_ns && a->scavenges == b->scavenges &&
         a->full_gcs == b->full_gcs;
}

static void check(const recs *v, const char *path) {
  eph_file *p;
  eph_error err;
  if (eph_file_load(path, &p, &err) != EPH_OK) die("%s", err.message);
  if (p->nrecords != v->n) die("%s: record count differs", path);
  for (size_t i = 0; i < v->n; i++) {
    const eph_record *a = &v->r[i], *b = &p->records[i];
    if (a->id != b->id || a->class_id != b->class_id || a->site_id != b->site_id || a->size != b->size ||
        memcmp(&a->weight, &b->weight, sizeof a->weight) || !stamp_eq(&a->birth, &b->birth) ||
        !stamp_eq(&a->death, &b->death) || !stamp_eq(&a->alive_until, &b->alive_until) ||
        a->death_kind != b->death_kind) {
      fprintf(stderr, "record_encoding: %s: record %zu differs after reading back\n", path, i);
      exit(1);
    }
  }
  eph_file_free(p);
}

int main(int argc, char **argv) {
  size_t n = 2000000;
  int reps = 5;
  bool do_check = true, once = false;
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first++) {
    if (!strcmp(argv[first], "--n") && first + 1 < argc) n = strtoull(argv[++first], NULL, 10);
    else if (!strcmp(argv[first], "--reps") && first + 1 < argc) reps = atoi(argv[++first]);
    else if (!strcmp(argv[first], "--no-check")) do_check = false;
    else if (!strcmp(argv[first], "--once")) once = true;
    else if (!strcmp(argv[first], "--export") && first + 2 < argc) {
      export_profile(argv[first + 1], argv[first + 2]);
      return 0;
    } else {
      fprintf(stderr, "usage: record_encoding [--n N] [--reps R] [--no-check] [--once] STREAM...\n"
                      "       record_encoding --export IN.eph OUT.recs\n");
      return 2;
    }
  }
  if (first == argc) die("no stream given (gc, gc-byteids, fin, lua or FILE.recs)%s", "");
  const char *tmp = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/record-encoding-%ld.eph", tmp && *tmp ? tmp : "/tmp", (long)getpid());
  if (once) { /* for counting instructions (run under callgrind) */
    printf("%-24s %9s\n", "stream", "records");
  } else {
    printf("%-24s %9s %10s %10s %12s %12s\n", "stream", "records", "rec_B/rec", "file_B/rec", "ns/rec(null)",
           "ns/rec(file)");
  }
  char summary[8192] = "";
  for (int a = first; a < argc; a++) {
    recs v = {0};
    const char *s = argv[a];
    rng_state = 0x9E3779B97F4A7C15u;
    if (!strcmp(s, "gc")) gen_heap(&v, n, false, false);
    else if (!strcmp(s, "gc-byteids")) gen_heap(&v, n, true, false);
    else if (!strcmp(s, "fin")) gen_heap(&v, n, false, true);
    else if (!strcmp(s, "lua")) gen_lua(&v, n);
    else {
      char file[4096];
      snprintf(file, sizeof file, "%s", s);
      char *colon = strrchr(file, ':');
      bool byteids = colon && !strcmp(colon, ":byteids");
      if (byteids) *colon = 0;
      load_recs(&v, file);
      if (byteids)
        for (size_t i = 0; i < v.n; i++) v.r[i].id = v.r[i].birth.bytes;
    }
    if (!v.n) die("%s: no records", s);
    uint32_t max_class = 0, max_site = 0;
    for (size_t i = 0; i < v.n; i++) {
      if (v.r[i].class_id > max_class) max_class = v.r[i].class_id;
      if (v.r[i].site_id > max_site) max_site = v.r[i].site_id;
    }
    const char *label = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
    if (once) {
      write_all(&v, "/dev/null", max_class, max_site);
      printf("%-24s %9zu\n", label, v.n);
      free(v.r);
      continue;
    }
    write_all(&v, path, max_class, max_site);
    uint64_t file_bytes, rb = recs_bytes(path, &file_bytes);
    if (do_check) check(&v, path);
    double best_null = 1e30, best_file = 1e30;
    for (int r = 0; r < reps; r++) {
      double t = write_all(&v, "/dev/null", max_class, max_site);
      if (t < best_null) best_null = t;
      t = write_all(&v, path, max_class, max_site);
      if (t < best_file) best_file = t;
    }
    unlink(path);
    double bpr = (double)rb / (double)v.n, fpr = (double)file_bytes / (double)v.n;
    double nsn = best_null * 1e9 / (double)v.n, nsf = best_file * 1e9 / (double)v.n;
    printf("%-24s %9zu %10.2f %10.2f %12.1f %12.1f\n", label, v.n, bpr, fpr, nsn, nsf);
    fflush(stdout);
    size_t used = strlen(summary);
    snprintf(summary + used, sizeof summary - used, "%s%s_bytes_per_record=%.2f %s_ns_per_record=%.1f", used ? " " : "",
             label, bpr, label, nsn);
    free(v.r);
  }
  if (!once) printf("\n%s\n", summary);
  return 0;
}
