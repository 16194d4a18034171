/*
 * fuzz_reader.c — fuzz target for the .eph reader.
 *
 * LLVMFuzzerTestOneInput loads the input with eph_file_load_buffer and,
 * when it loads, checks what the reader promises about the result (ids that
 * resolve, enum values in range, valid_bytes within the input, a warning
 * exactly when incomplete); a broken promise aborts.  It loads the input
 * again through a record sink (eph_file_load_buffer_with), which must
 * end the same way and hand over exactly the records the first load kept.  Built with
 * -fsanitize=fuzzer (EPH_LIBFUZZER) it also installs a custom mutator that
 * repairs the CRCs after libFuzzer's mutations, so that most inputs reach
 * the payload decoders.  Without libFuzzer, fuzz_driver.c calls the same
 * function.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/format.h"
#include "fuzz_common.h"

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "fuzz_reader: broken invariant: %s\n", #cond);        \
      abort();                                                              \
    }                                                                       \
  } while (0)

static void check_profile(const eph_file *p, size_t size) {
  CHECK(p->version == EPH_FORMAT_VERSION);
  CHECK(p->valid_bytes <= size && p->valid_bytes >= 16);
  CHECK(p->complete == (p->warning[0] == 0));
  CHECK(memchr(p->warning, 0, sizeof p->warning) != NULL);
  for (size_t i = 0; i < p->nmeta; i++) CHECK(p->meta[i].key && p->meta[i].value);
  CHECK(p->nclasses <= (size_t)EPH_FORMAT_MAX_ID + 1 && p->nsites <= (size_t)EPH_FORMAT_MAX_ID + 1);
  CHECK(p->nclasses == 0 || p->class_names[p->nclasses - 1]);
  CHECK(p->nsites == 0 || p->sites[p->nsites - 1].file);
  for (size_t i = 0; i < p->nsites; i++) CHECK(!p->sites[i].file == !p->sites[i].function);
  for (size_t i = 0; i < p->nrecords; i++) {
    const eph_record *r = &p->records[i];
    CHECK(r->death_kind >= EPH_DEATH_FINALIZED && r->death_kind <= EPH_DEATH_FREED);
    CHECK(r->class_id == 0 || (r->class_id < p->nclasses && p->class_names[r->class_id]));
    CHECK(r->site_id == 0 || (r->site_id < p->nsites && p->sites[r->site_id].file));
    CHECK(isfinite(r->weight) && r->weight >= 0);
  }
  for (size_t i = 0; i < p->ngcs; i++) CHECK(p->gcs[i].kind == EPH_GC_SCAVENGE || p->gcs[i].kind == EPH_GC_FULL);
  for (size_t i = 0; i < p->nevents; i++) {
    const eph_event *e = &p->events[i];
    CHECK(e->kind >= EPH_EV_ALLOC && e->kind <= EPH_EV_TICK);
    if (e->kind == EPH_EV_ALLOC) {
      CHECK(e->a == 0 || (e->a < p->nclasses && p->class_names[e->a]));
      CHECK(e->c == 0 || (e->c < p->nsites && p->sites[e->c].file));
    }
    if (e->kind == EPH_EV_GC) CHECK(e->a <= 1 && e->b <= 1);
  }
  const char *v = eph_file_meta(p, "runtime");
  (void)v;
}

/* The records a sink is handed, compared as they come with a first load's. */
typedef struct sunk {
  const eph_file *first; /* NULL: the first load failed */
  size_t n;
  bool same;
} sunk;

static bool compare_records(void *ctx, const eph_record *r, size_t n) {
  sunk *s = ctx;
  CHECK(n > 0);
  if (s->first && s->n + n <= s->first->nrecords && memcmp(r, s->first->records + s->n, n * sizeof *r) != 0)
    s->same = false;
  s->n += n;
  return true;
}

static void check_sink(const uint8_t *data, size_t size, const eph_file *first, eph_status first_st) {
  sunk s = {first, 0, true};
  eph_record_sink sink = {compare_records, &s};
  eph_file *q = NULL;
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_status st = eph_file_load_buffer_with(data, size, &sink, &q, &err);
  CHECK(st == first_st);
  if (st != EPH_OK) {
    CHECK(q == NULL);
    return;
  }
  CHECK(q->records == NULL);
  CHECK(q->nrecords == first->nrecords && s.n == first->nrecords && s.same);
  CHECK(q->complete == first->complete && q->valid_bytes == first->valid_bytes);
  CHECK(q->nevents == first->nevents && q->ngcs == first->ngcs && q->nclasses == first->nclasses);
  eph_file_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eph_file *p = NULL;
  eph_error err;
  memset(&err, 0, sizeof err);
  eph_status st = eph_file_load_buffer(data, size, &p, &err);
  check_sink(data, size, p, st);
  if (st == EPH_OK) {
    CHECK(p != NULL);
    check_profile(p, size);
    eph_file_free(p);
  } else {
    CHECK(p == NULL);
    CHECK(st == EPH_ERR_INVALID || st == EPH_ERR_NOMEM);
    CHECK(err.status == st);
    CHECK(memchr(err.message, 0, sizeof err.message) != NULL);
    /* Every error about the input names where: "... at byte N ..." */
    CHECK(st != EPH_ERR_INVALID || strstr(err.message, "at byte ") != NULL);
  }
  return 0;
}

#ifdef EPH_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 8 != 0) fuzz_fix_crcs(data, size); /* mostly past the CRCs; sometimes test them */
  return size;
}
#endif
