/*
 * writer_clock.c — the writer's replica of a profiler's clock tables
 * (src/sampling/clock_table.h), so that a record can be handed over with
 * its birth and death as points of the byte clock alone and be stamped
 * (wall time, collections) where it is encoded: on the writer's thread
 * when it has one.  A Merlin run hands over a record for every object;
 * two full stamps made each record's queued item 80 bytes, and storing
 * them was a large part of what the program's thread paid per record.
 *
 * The profiler calls start, point and step exactly where it changes its
 * own tables, in order with its records (they share one queue), so each
 * clocked record meets the replica as the profiler's tables stood at its
 * call, and gets the stamps the profiler would have looked up then — a
 * thinning of the tables included, since the replica makes the same one.
 */
#include "format_internal.h"
#include "writer_internal.h"

static eph_status no_memory(eph_writer *w) {
  w->failed = EPH_ERR_NOMEM;
  return ephf_writer_fail(w, EPH_ERR_NOMEM, "out of memory for the writer's clock tables");
}

static eph_status not_started(eph_writer *w, const char *what) {
  if (w->failed) return w->failed;
  return ephf_writer_fail(w, EPH_ERR_INVALID, "%s before the writer's clock started", what);
}

eph_status ephf_clock_start_now(eph_writer *w, const eph_writer_clock_ops *ops, uint64_t bytes, uint64_t wall_ns,
                                uint32_t minor0, uint32_t major0) {
  if (w->failed) return w->failed;
  if (!ops) return ephf_writer_fail(w, EPH_ERR_INVALID, "eph_writer_clock_start: no clock operations");
  ephf_clock_free(w);
  w->clock_ops = *ops;
  w->clock = ops->start(bytes, wall_ns, minor0, major0);
  return w->clock ? EPH_OK : no_memory(w);
}

eph_status ephf_clock_point_now(eph_writer *w, uint64_t bytes, uint64_t wall_ns) {
  if (w->failed) return w->failed;
  if (!w->clock) return not_started(w, "a clock point");
  return w->clock_ops.point(w->clock, bytes, wall_ns) ? EPH_OK : no_memory(w);
}

eph_status ephf_clock_step_now(eph_writer *w, uint64_t bytes, bool major) {
  if (w->failed) return w->failed;
  if (!w->clock) return not_started(w, "a collection step");
  return w->clock_ops.step(w->clock, bytes, major) ? EPH_OK : no_memory(w);
}

eph_status ephf_record_clocked_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size, uint64_t birth,
                                   uint64_t death, unsigned death_kind) {
  if (!w->clock) return not_started(w, "a clocked record");
  eph_stamp b = w->clock_ops.stamp(w->clock, birth, 0);
  eph_stamp d = death == birth ? b : w->clock_ops.stamp(w->clock, death, 1);
  return ephf_record_to_death_now(w, class_id, site_id, size, 1.0, &b, &d, death_kind);
}

eph_status ephf_batch_record_clocked_now(eph_writer *w, uint32_t class_id, uint32_t site_id, uint64_t size,
                                         double weight, uint64_t birth, bool until_birth) {
  if (!w->clock) return not_started(w, "a clocked record");
  eph_stamp b = w->clock_ops.stamp(w->clock, birth, 0);
  return ephf_batch_record_now(w, class_id, site_id, size, weight, &b, until_birth);
}

void ephf_clock_free(eph_writer *w) {
  if (!w->clock) return;
  w->clock_ops.free(w->clock);
  w->clock = NULL;
}

size_t ephf_clock_memory(const eph_writer *w) { return w->clock ? w->clock_ops.memory(w->clock) : 0; }
