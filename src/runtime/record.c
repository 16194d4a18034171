/*
 * record.c — a sample's record, written when it dies or is censored
 * (rt_emit_inline in adapter.h: the part of every record), and the parts
 * that are not every record's: a new batch of records that share a death,
 * the summary's tallies, a failed write.
 */
#include <stdio.h>

#include "runtime/adapter.h"

static unsigned log2_bucket(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

/* The summary's tallies (rt_summary), kept only when it will be printed. */
__attribute__((noinline)) void rt_tally(rt_session *s, uint32_t cls, double weight, uint8_t death_kind,
                                        uint64_t lifetime, uint32_t cycles_survived) {
  if (cls < RT_CLASSES_MAX) {
    s->deaths_by_class[cls]++;
    s->weight_by_class[cls] += weight;
  }
  if (death_kind == EPH_DEATH_CENSORED) {
    s->censored_weight += weight;
  } else {
    s->freed_weight += weight;
    s->life_hist[log2_bucket(lifetime + 1)] += weight;
    uint32_t c = cycles_survived;
    unsigned b = c < 4 ? c : c < 8 ? 4 : c < 16 ? 5 : c < 64 ? 6 : 7;
    s->survived_hist[b] += weight;
  }
}

__attribute__((noinline, cold)) void rt_write_failed(rt_session *s) {
  snprintf(s->error, sizeof s->error, "writing %s: %s", s->opt.out, eph_writer_error(s->w));
  s->write_failed = true;
  s->detached = true;
  s->countdown = INT64_MAX;
}

/* A new batch: the death its records share, and until when they were
 * alive (a freed record's: the end of the last cycle; a censored one's:
 * its death). */
__attribute__((noinline)) void rt_batch_begin(rt_session *s, uint64_t death_ns, uint8_t death_kind) {
  s->batch_death = (eph_stamp){.bytes = s->bytes, .wall_ns = death_ns, .full_gcs = s->cycles};
  s->batch_kind = death_kind;
  eph_stamp until = death_kind == EPH_DEATH_FREED
                        ? (eph_stamp){.bytes = s->cycle_bytes, .wall_ns = s->cycle_ns, .full_gcs = s->cycles}
                        : s->batch_death;
  eph_writer_batch(s->w, &s->batch_death, &until, death_kind);
}

void rt_emit(rt_session *s, uint32_t cls, const rt_sample *h, uint8_t death_kind) {
  rt_emit_inline(s, cls, h, death_kind);
}
