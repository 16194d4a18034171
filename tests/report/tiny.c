/*
 * tiny.c — small deterministic profiles for the report tests, written with
 * eph_writer so every stamp is exact.  tiny_write(path, variant):
 *   0  gc mode, unsampled: 3 classes, one censored record, GC-found deaths
 *   1  the same run with Parser objects living ten times longer ("actionable")
 *   2  merlin mode (exact deaths) for the heap views
 *   3  sampled 1/10 (weights 10)
 *   4  variant 0 as a Lua profile (runtime=lua, gc mode, deaths "freed"):
 *      the report adds the Lua collector advice
 */
#include "tiny.h"

#include <stdio.h>
#include <string.h>

static eph_stamp st(uint64_t bytes, uint64_t ms, uint32_t gcs) {
  eph_stamp s = {bytes, ms * 1000000u, gcs, 0};
  return s;
}

int tiny_write(const char *path, int variant) {
  const char *mode = variant == 2 ? "merlin" : "gc";
  eph_meta_pair meta[] = {{"runtime", variant == 4 ? "lua" : "ephemera"},
                          {"workload", variant == 1 ? "tiny-actionable" : "tiny"},
                          {"size", "1"},
                          {"mode", mode},
                          {"sample", variant == 3 ? "1/10" : "all"},
                          {"date", "2024-01-01"},
                          {"gc", "generational (lua5.4 default)"}};
  eph_error err;
  size_t nmeta = sizeof meta / sizeof *meta - (variant == 4 ? 0 : 1);
  eph_writer *w = eph_writer_open(path, meta, nmeta, false, &err);
  if (!w) {
    fprintf(stderr, "tiny: %s\n", err.message);
    return 1;
  }
  eph_writer_class(w, 1, "Parser");
  eph_writer_class(w, 2, "Str");
  eph_writer_class(w, 3, "Table");
  eph_writer_site(w, 1, "src/parse.c", 10, "parse");
  eph_writer_site(w, 2, "src/table.c", 20, "table_new");
  /* 20 records over a run of 1000 ms and 100000 bytes */
  for (uint64_t i = 0; i < 20; i++) {
    eph_record r;
    memset(&r, 0, sizeof r);
    r.id = i + 1;
    r.class_id = i < 10 ? 1 : i < 16 ? 2 : 3;
    r.site_id = r.class_id == 3 ? 2 : 1;
    r.size = r.class_id == 1 ? 64 : r.class_id == 2 ? 32 : 256;
    r.weight = variant == 3 ? 10 : 1;
    uint64_t b = 1000 + i * 4000, ms = 10 + i * 40;
    uint64_t life_ms = r.class_id == 1 ? 10 + 2 * i : r.class_id == 2 ? 100 + 50 * i : 2000;
    if (variant == 1 && r.class_id == 1) life_ms *= 10;
    uint64_t d_ms = ms + life_ms, d_b = b + life_ms * 100;
    r.birth = st(b, ms, (uint32_t)(b / 20000));
    if (d_ms >= 1000 || d_b >= 100000) {
      r.death_kind = EPH_DEATH_CENSORED;
      r.death = st(100000, 1000, 5);
      r.alive_until = r.death;
    } else if (variant == 2) {
      r.death_kind = EPH_DEATH_EXACT;
      r.death = st(d_b, d_ms, (uint32_t)(d_b / 20000));
      r.alive_until = r.death;
    } else {
      /* found dead by the next GC (every 20000 bytes); last seen alive at the previous */
      uint64_t g = d_b / 20000 + 1;
      r.death_kind = variant == 4 ? EPH_DEATH_FREED : g % 2 ? EPH_DEATH_SCAVENGE : EPH_DEATH_FULL_GC;
      r.death = st(g * 20000, g * 200, (uint32_t)g);
      uint64_t prev = (g - 1) * 20000;
      r.alive_until = prev > b ? st(prev, (g - 1) * 200, (uint32_t)(g - 1)) : r.birth;
      if (r.death.bytes > 100000) {
        r.death_kind = EPH_DEATH_CENSORED;
        r.death = st(100000, 1000, 5);
        r.alive_until = r.death;
      }
    }
    if (eph_writer_record(w, &r) != EPH_OK) {
      fprintf(stderr, "tiny: record %llu: %s\n", (unsigned long long)i, eph_writer_error(w));
      return 1;
    }
  }
  eph_totals t = {.wall_ns = 1000000000u, .cpu_ns = 900000000u, .gc_wall_ns = 100000000u, .bytes_allocated = 100000,
                  .objects_allocated = variant == 3 ? 200 : 20, .records = 20, .scavenges = 3, .full_gcs = 2, .peak_heap = 65536};
  for (uint64_t i = 0; i < 20; i++) (void)i;
  if (eph_writer_close(w, &t) != EPH_OK) {
    fprintf(stderr, "tiny: close: %s\n", eph_writer_error(NULL));
    return 1;
  }
  return 0;
}
