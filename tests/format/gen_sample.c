/*
 * gen_sample.c — writes .eph files for the dump test and the fuzz seeds.
 *
 *   eph-format-gen sample OUT [--compress] [--extreme] [--incomplete]
 *                  [--records N] [--gcs N] [--events N] [--flush-every N]
 *       writes a sample profile; prints its record count
 *   eph-format-gen seeds DIR      writes the fuzz seed corpus into DIR
 *   eph-format-gen corrupt IN OUT flips one byte inside IN's first RECORDS
 *       chunk payload; prints that chunk's byte offset
 *   eph-format-gen truncate IN OUT  cuts IN in the middle of its last chunk
 *       before CLOSE; prints that chunk's byte offset
 *   eph-format-gen example OUT    writes the example file of
 *       docs/eph-format.md §10 (format.example checks the two agree)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

static uint32_t load32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int save(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(d, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "eph-format-gen: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

/* Offsets of the chunk of type `fourcc` (first, or last before CLOSE). */
static long find_chunk(const uint8_t *d, size_t n, const char *fourcc, bool last, uint32_t *stored) {
  long found = -1;
  for (size_t off = 16; off + 24 <= n;) {
    uint32_t len = load32(d + off + 8);
    if (!memcmp(d + off, "CLOS", 4)) break;
    if (!fourcc || !memcmp(d + off, fourcc, 4)) {
      found = (long)off;
      *stored = len;
      if (!last) break;
    }
    off += 24 + (size_t)len;
  }
  return found;
}

/* The worked example of docs/eph-format.md §10: two records of one class,
 * the second written with the shortcuts of a gc-mode batch. */
static int write_example(const char *path) {
  eph_error err;
  eph_meta_pair meta[] = {{"runtime", "lua"}};
  eph_writer *w = eph_writer_open(path, meta, 1, false, &err);
  if (!w) {
    fprintf(stderr, "eph-format-gen: %s\n", err.message);
    return 1;
  }
  eph_record r = {.id = 1, .class_id = 1, .site_id = 1, .size = 48, .weight = 1,
                  .birth = {1000, 5000, 0, 0}, .death = {1800, 9000, 1, 0}, .death_kind = EPH_DEATH_SCAVENGE};
  r.alive_until = r.birth;
  eph_record r2 = r;
  r2.id = 2;
  r2.birth = (eph_stamp){1100, 5400, 0, 0};
  r2.alive_until = r2.birth;
  eph_totals t = {.wall_ns = 10000, .bytes_allocated = 4096, .records = 2, .scavenges = 1};
  eph_status st = eph_writer_class(w, 1, "Node");
  if (st == EPH_OK) st = eph_writer_site(w, 1, "t.lua", 12, "f");
  if (st == EPH_OK) st = eph_writer_record(w, &r);
  if (st == EPH_OK) st = eph_writer_record(w, &r2);
  if (st != EPH_OK) {
    fprintf(stderr, "eph-format-gen: %s\n", eph_writer_error(w));
    eph_writer_close(w, NULL);
    return 1;
  }
  if (eph_writer_close(w, &t) != EPH_OK) {
    fprintf(stderr, "eph-format-gen: %s\n", eph_writer_error(NULL));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "sample")) {
    sample_spec spec = {.nrecords = 100, .ngcs = 10, .nevents = 200, .seed = 1};
    bool compress = false, close = true;
    size_t flush_every = 0;
    for (int i = 3; i < argc; i++) {
      if (!strcmp(argv[i], "--compress")) compress = true;
      else if (!strcmp(argv[i], "--extreme")) spec.extreme = true;
      else if (!strcmp(argv[i], "--incomplete")) close = false;
      else if (i + 1 < argc && !strcmp(argv[i], "--records")) spec.nrecords = strtoul(argv[++i], NULL, 10);
      else if (i + 1 < argc && !strcmp(argv[i], "--gcs")) spec.ngcs = strtoul(argv[++i], NULL, 10);
      else if (i + 1 < argc && !strcmp(argv[i], "--events")) spec.nevents = strtoul(argv[++i], NULL, 10);
      else if (i + 1 < argc && !strcmp(argv[i], "--flush-every")) flush_every = strtoul(argv[++i], NULL, 10);
      else {
        fprintf(stderr, "eph-format-gen: bad option %s\n", argv[i]);
        return 2;
      }
    }
    sample s;
    sample_build(&s, &spec);
    char msg[256];
    eph_status st = sample_write(&s, argv[2], compress, flush_every, close, msg, sizeof msg);
    if (st != EPH_OK) {
      fprintf(stderr, "eph-format-gen: %s\n", msg);
      return 1;
    }
    printf("%zu\n", s.nrecords);
    sample_free(&s);
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "seeds")) {
    char msg[256];
    if (sample_write_seeds(argv[2], msg, sizeof msg) != 0) {
      fprintf(stderr, "eph-format-gen: %s\n", msg);
      return 1;
    }
    return 0;
  }
  if (argc == 4 && (!strcmp(argv[1], "corrupt") || !strcmp(argv[1], "truncate"))) {
    size_t n;
    uint8_t *d = sample_read_file(argv[2], &n);
    if (!d) {
      fprintf(stderr, "eph-format-gen: cannot read %s\n", argv[2]);
      return 1;
    }
    bool corrupt = !strcmp(argv[1], "corrupt");
    uint32_t stored = 0;
    long off = find_chunk(d, n, corrupt ? "RECS" : NULL, !corrupt, &stored);
    if (off < 0 || stored < 2) {
      fprintf(stderr, "eph-format-gen: no suitable chunk in %s\n", argv[2]);
      return 1;
    }
    if (corrupt) d[off + 24 + stored / 2] ^= 0x55;
    else n = (size_t)off + 24 + stored / 2;
    int rc = save(argv[3], d, n);
    free(d);
    if (!rc) printf("%ld\n", off);
    return rc;
  }
  if (argc == 3 && !strcmp(argv[1], "example")) return write_example(argv[2]);
  fprintf(stderr,
          "usage: eph-format-gen sample OUT [options] | seeds DIR | corrupt IN OUT | truncate IN OUT | example OUT\n");
  return 2;
}
