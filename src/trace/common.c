/*
 * common.c — pieces shared by offline Merlin and granulation: checking a
 * file is a usable trace, sizes and granules, a stable radix sort, the
 * clock map and copying a profile's metadata and tables to a new file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_internal.h"

double ephtr_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *eph_trace_unusable(const eph_file *p) {
  if (!p->complete)
    return "incomplete trace (no closing chunk: a killed run or a truncated copy); the trace tools need the whole "
           "file";
  if (p->nevents == 0) return "not a trace: the file has no events (record one with `ephemera run WORKLOAD --trace`)";
  for (size_t i = 0; i < p->nevents; i++)
    if (p->events[i].kind == EPH_EV_ALLOC) return NULL;
  return "not a trace: the file has events but no allocation events";
}

bool eph_trace_granule_ceil(uint64_t t, uint64_t k, uint64_t *out) {
  uint64_t q = t / k + (t % k != 0);
  if (q > UINT64_MAX / k) return false;
  *out = q * k;
  return true;
}

/* --- sorting ------------------------------------------------------------------ */

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)

bool ephtr_sort_pairs(ephtr_pair *a, size_t n) {
  if (n < 2) return true;
  if (n < 64) { /* insertion sort: stable */
    for (size_t i = 1; i < n; i++) {
      ephtr_pair x = a[i];
      size_t j = i;
      for (; j > 0 && a[j - 1].key > x.key; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return true;
  }
  uint64_t max = 0;
  for (size_t i = 0; i < n; i++)
    if (a[i].key > max) max = a[i].key;
  ephtr_pair *tmp = malloc(n * sizeof *tmp);
  size_t *count = malloc(RADIX * sizeof *count);
  if (!tmp || !count) {
    free(tmp);
    free(count);
    return false;
  }
  ephtr_pair *src = a, *dst = tmp;
  for (unsigned shift = 0; shift < 64 && (max >> shift) != 0; shift += RADIX_BITS) {
    memset(count, 0, RADIX * sizeof *count);
    for (size_t i = 0; i < n; i++) count[(src[i].key >> shift) & (RADIX - 1)]++;
    if (count[(src[0].key >> shift) & (RADIX - 1)] == n) continue; /* one digit everywhere */
    size_t sum = 0;
    for (size_t d = 0; d < RADIX; d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) dst[count[(src[i].key >> shift) & (RADIX - 1)]++] = src[i];
    ephtr_pair *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
  free(tmp);
  free(count);
  return true;
}

/* --- clocks ------------------------------------------------------------------- */

void ephtr_clock_free(ephtr_clock *c) {
  free(c->points);
  free(c->gc_time);
  free(c->gc_scavenges);
  memset(c, 0, sizeof *c);
}

static const eph_stamp *record_stamp(const eph_file *p, uint64_t k) {
  const eph_record *r = &p->records[k / 3];
  switch (k % 3) {
    case 0: return &r->birth;
    case 1: return &r->death;
    default: return &r->alive_until;
  }
}

bool ephtr_clock_build(const eph_file *p, ephtr_clock *c) {
  memset(c, 0, sizeof *c);
  /* Wall time: every stamp of every record, by bytes, one point per time. */
  size_t n = 0;
  ephtr_pair *pairs = malloc((3 * p->nrecords + 1) * sizeof *pairs);
  if (!pairs) return false;
  for (size_t k = 0; k < 3 * p->nrecords; k++) {
    const eph_stamp *s = record_stamp(p, k);
    if (k % 3 == 2 && s->bytes == record_stamp(p, k - 1)->bytes && s->wall_ns == record_stamp(p, k - 1)->wall_ns)
      continue; /* alive_until == death, as usual */
    pairs[n++] = (ephtr_pair){s->bytes, k};
  }
  if (!ephtr_sort_pairs(pairs, n)) {
    free(pairs);
    return false;
  }
  c->points = malloc((n ? n : 1) * sizeof *c->points);
  if (!c->points) {
    free(pairs);
    return false;
  }
  for (size_t k = 0; k < n; k++) {
    const eph_stamp *s = record_stamp(p, pairs[k].val);
    ephtr_clock_point *last = c->npoints ? &c->points[c->npoints - 1] : NULL;
    /* The profiler stamps a time past its last clock sample with that
     * sample's wall time, so one byte time can carry several wall times:
     * the latest is the best estimate, and wall time never goes back. */
    if (last && last->bytes == s->bytes) {
      if (s->wall_ns > last->wall_ns) last->wall_ns = s->wall_ns;
      continue;
    }
    c->points[c->npoints++] = (ephtr_clock_point){s->bytes, s->wall_ns, s->scavenges, s->full_gcs};
  }
  free(pairs);
  for (size_t k = 1; k < c->npoints; k++)
    if (c->points[k].wall_ns < c->points[k - 1].wall_ns) c->points[k].wall_ns = c->points[k - 1].wall_ns;
  /* Collections: the ends in the trace's GC events. */
  size_t ngc = 0;
  for (size_t i = 0; i < p->nevents; i++) ngc += p->events[i].kind == EPH_EV_GC && p->events[i].b == 1;
  c->gc_time = malloc((ngc ? ngc : 1) * sizeof *c->gc_time);
  c->gc_scavenges = malloc((ngc + 1) * sizeof *c->gc_scavenges);
  ephtr_pair *gcs = malloc((ngc ? ngc : 1) * sizeof *gcs);
  if (!c->gc_time || !c->gc_scavenges || !gcs) {
    free(gcs);
    ephtr_clock_free(c);
    return false;
  }
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    if (e->kind == EPH_EV_GC && e->b == 1) gcs[c->ngc++] = (ephtr_pair){e->time, e->a};
  }
  if (!ephtr_sort_pairs(gcs, c->ngc)) {
    free(gcs);
    ephtr_clock_free(c);
    return false;
  }
  c->gc_scavenges[0] = 0;
  for (size_t i = 0; i < c->ngc; i++) {
    c->gc_time[i] = gcs[i].key;
    c->gc_scavenges[i + 1] = c->gc_scavenges[i] + (gcs[i].val == EPH_GC_SCAVENGE);
  }
  free(gcs);
  return true;
}

eph_stamp ephtr_clock_at(ephtr_clock *c, uint64_t bytes) {
  eph_stamp s = {.bytes = bytes};
  const ephtr_clock_point *at = NULL; /* the last point at or before bytes */
  if (c->npoints && c->points[0].bytes <= bytes) {
    size_t lo = c->hint; /* lookups mostly come in time order: try the last answer and its successor */
    if (!(lo < c->npoints && c->points[lo].bytes <= bytes && (lo + 1 == c->npoints || c->points[lo + 1].bytes > bytes))) {
      lo++;
      if (!(lo < c->npoints && c->points[lo].bytes <= bytes && (lo + 1 == c->npoints || c->points[lo + 1].bytes > bytes))) {
        size_t hi = c->npoints;
        lo = 0;
        while (hi - lo > 1) {
          size_t mid = lo + (hi - lo) / 2;
          if (c->points[mid].bytes <= bytes) lo = mid;
          else hi = mid;
        }
      }
    }
    c->hint = lo;
    at = &c->points[lo];
    const ephtr_clock_point *next = lo + 1 < c->npoints ? &c->points[lo + 1] : NULL;
    if (at->bytes == bytes || !next || next->wall_ns < at->wall_ns) {
      s.wall_ns = at->wall_ns;
    } else {
      double f = (double)(bytes - at->bytes) / (double)(next->bytes - at->bytes);
      s.wall_ns = at->wall_ns + (uint64_t)(f * (double)(next->wall_ns - at->wall_ns));
    }
  } else if (c->npoints) {
    s.wall_ns = c->points[0].wall_ns;
  }
  if (c->ngc) {
    size_t lo = 0, hi = c->ngc; /* the first collection ending at or after bytes */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (c->gc_time[mid] < bytes) lo = mid + 1;
      else hi = mid;
    }
    s.scavenges = c->gc_scavenges[lo];
    s.full_gcs = (uint32_t)lo - c->gc_scavenges[lo];
  } else if (at) {
    s.scavenges = at->scavenges;
    s.full_gcs = at->full_gcs;
  }
  return s;
}

/* --- output --------------------------------------------------------------------- */

eph_status ephtr_fail_writer(eph_writer *w, eph_status st, const char *path, eph_error *err) {
  eph_error_fill(err, st, "%s", eph_writer_error(w));
  eph_writer_close(w, NULL);
  unlink(path);
  return st;
}

eph_status ephtr_close(eph_writer *w, const eph_totals *totals, const char *path, eph_error *err) {
  eph_status st = eph_writer_close(w, totals);
  if (st != EPH_OK) {
    eph_error_fill(err, st, "%s", eph_writer_error(NULL));
    unlink(path);
  }
  return st;
}

eph_writer *ephtr_open_copy(const eph_file *p, const char *path, const char *key, const char *value, bool compress,
                            eph_error *err) {
  eph_meta_pair *meta = malloc((p->nmeta + 1) * sizeof *meta);
  if (!meta) {
    eph_error_fill(err, EPH_ERR_NOMEM, "out of memory");
    return NULL;
  }
  size_t n = 0;
  bool replaced = false;
  for (size_t i = 0; i < p->nmeta; i++) {
    meta[n] = p->meta[i];
    if (key && !strcmp(meta[n].key, key)) {
      if (replaced) continue; /* a repeated key: keep one */
      meta[n].value = value;
      replaced = true;
    }
    n++;
  }
  if (key && !replaced) meta[n++] = (eph_meta_pair){key, value};
  eph_writer *w = eph_writer_open(path, meta, n, compress, err);
  free(meta);
  if (!w) return NULL;
  eph_status st = EPH_OK;
  for (size_t i = 0; i < p->nclasses && st == EPH_OK; i++)
    if (p->class_names[i]) st = eph_writer_class(w, (uint32_t)i, p->class_names[i]);
  for (size_t i = 0; i < p->nsites && st == EPH_OK; i++) {
    const eph_site_entry *s = &p->sites[i];
    if (s->file) st = eph_writer_site(w, (uint32_t)i, s->file, s->line, s->function ? s->function : "");
  }
  for (size_t i = 0; i < p->ngcs && st == EPH_OK; i++) st = eph_writer_gc(w, &p->gcs[i]);
  if (st != EPH_OK) {
    ephtr_fail_writer(w, st, path, err);
    return NULL;
  }
  return w;
}
