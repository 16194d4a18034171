/*
 * sample.h — deterministic .eph content for the format tests, the dump
 * test, the fuzz seeds and the fallback fuzz driver: build it in memory,
 * write it with eph_writer, and check what a reader returns against it.
 */
#ifndef EPH_FORMAT_SAMPLE_H
#define EPH_FORMAT_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ephemera/format.h"

typedef struct sample_spec {
  size_t nrecords, ngcs, nevents;
  bool extreme;          /* include extreme values (0, UINT64_MAX, long and odd strings, ...) */
  bool small_ids;        /* with extreme: no ids near EPH_FORMAT_MAX_ID (their dense tables make loads slow) */
  uint64_t seed;
} sample_spec;

typedef struct sample_class {
  uint32_t id;
  char *name;
} sample_class;

typedef struct sample_site {
  uint32_t id;
  char *file, *function;
  int line;
} sample_site;

typedef struct sample {
  eph_meta_pair *meta; /* owned strings */
  size_t nmeta;
  sample_class *classes;
  size_t nclasses;
  sample_site *sites;
  size_t nsites;
  eph_record *records;
  size_t nrecords;
  eph_gc_event *gcs;
  size_t ngcs;
  eph_event *events;
  size_t nevents;
  eph_totals totals;
} sample;

void sample_build(sample *s, const sample_spec *spec);
void sample_free(sample *s);

/*
 * Writes s to path: tables declared as they are first needed (the second
 * half of the classes and sites only midway), records, gcs and events
 * interleaved.  flush_every > 0: eph_writer_flush after that many items,
 * for small files with many chunks.  close: write the closing chunk.
 * Returns the first error (message in msg).
 */
eph_status sample_write(const sample *s, const char *path, bool compress, size_t flush_every, bool close,
                        char *msg, size_t msglen);

/*
 * Checks a loaded profile against s: every table entry, record, gc and
 * event it holds equals s's (in order, a prefix when prefix_ok), and when
 * complete, that it holds everything with the totals.  NULL if all is
 * well, else a static message saying what differs.
 */
const char *sample_check(const sample *s, const eph_file *p, bool prefix_ok);

/* Field-by-field equality (weights compared bit for bit). */
bool sample_record_eq(const eph_record *a, const eph_record *b);
bool sample_gc_eq(const eph_gc_event *a, const eph_gc_event *b);
bool sample_event_eq(const eph_event *a, const eph_event *b);

/*
 * Writes the fuzz seed corpus into dir: small samples, plain and
 * compressed, complete and not, few and many chunks, with and without
 * extreme values.  0 on success, else -1 with msg.
 */
int sample_write_seeds(const char *dir, char *msg, size_t msglen);

/* Reads a whole file (malloc); NULL on failure. */
uint8_t *sample_read_file(const char *path, size_t *len);

/* A small deterministic generator (xorshift64*). */
uint64_t sample_rand(uint64_t *state);

#endif
