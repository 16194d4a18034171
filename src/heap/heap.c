/*
 * heap.c — creating and destroying heaps, errors, parameters at run time,
 * and the heap-creation hook.  The observer's side of the heap is in
 * observer.c, the sample points in sample_point.c.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

static void default_error_handler(void *data, eph_heap *h, eph_status st, const char *msg) {
  (void)data;
  (void)h;
  fprintf(stderr, "ephemera: %s: %s\n", eph_status_name(st), msg);
}

/* Records the error message without calling the handler. */
void ephh_set_error(eph_heap *h, eph_status st, const char *fmt, ...) {
  h->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
}

/* Records the error and tells the embedder's handler. */
void ephh_raise(eph_heap *h, eph_status st, const char *fmt, ...) {
  h->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
  if (h->error_fn) h->error_fn(h->error_data, h, st, h->error);
}

/* For failures that leave the heap unusable: a collector table could not grow. */
void ephh_fatal(eph_heap *h, const char *what) {
  ephh_raise(h, EPH_ERR_NOMEM, "cannot continue: %s", what);
  abort();
}

const char *eph_heap_error(const eph_heap *h) { return h->error; }

eph_status eph_heap_status(const eph_heap *h) { return h->status; }

void eph_heap_set_error_handler(eph_heap *h, eph_error_fn fn, void *data) {
  h->error_fn = fn;
  h->error_data = data;
}

/* The tool that attaches to heaps made with eph_heap_new(NULL, ...): the
 * profiler registers itself here (observer.h), so the heap never calls it
 * by name. */
static const eph_heap_create_hook *create_hook;

void eph_heap_set_create_hook(const eph_heap_create_hook *hook) { create_hook = hook; }

eph_status eph_heap_new(const eph_gc_params *params, eph_heap **out, eph_error *err) {
  *out = NULL;
  eph_gc_params p;
  /* Any program that takes the environment's parameters can be profiled:
   * the hook sees (and may change) them before EPHEMERA_GC applies. */
  const eph_heap_create_hook *hook = params ? NULL : create_hook;
  if (params) {
    p = *params;
  } else {
    eph_gc_params_init(&p);
    if (hook && hook->prepare) {
      eph_status st = hook->prepare(&p, err);
      if (st != EPH_OK) return st;
    }
    eph_status st = eph_gc_params_apply_env(&p, err);
    if (st != EPH_OK) return st;
  }
  if (p.trailer_words > EPH_MAX_TRAILER_WORDS) {
    eph_error_fill(err, EPH_ERR_INVALID, "trailer_words %lu is more than %d", p.trailer_words, EPH_MAX_TRAILER_WORDS);
    return EPH_ERR_INVALID;
  }
  eph_status st = eph_gc_params_check(&p, err);
  if (st != EPH_OK) return st;

  eph_heap *h = calloc(1, sizeof *h);
  if (!h) {
    eph_error_fill(err, EPH_ERR_NOMEM, "cannot allocate the heap descriptor");
    return EPH_ERR_NOMEM;
  }
  h->params = p;
  h->fast.trailer_bytes = p.trailer_words * EPH_WORD;
  h->page = ephh_os_page_size();
  h->error_fn = default_error_handler;
  h->auto_finalize = true;
  h->fast.alloc_countdown = h->countdown_start = EPH_NO_COUNTDOWN;
  h->sample_at_bytes = UINT64_MAX;
  h->start_wall_ns = ephh_now_ns();
  h->start_cpu_ns = ephh_cpu_ns();
  h->fast.roots_cap = EPH_ROOTS_INITIAL;
  h->fast.roots = malloc(h->fast.roots_cap * sizeof *h->fast.roots);
  h->classes_cap = EPH_CLASSES_INITIAL;
  h->classes = calloc(h->classes_cap, sizeof *h->classes);
  h->classes_len = 1; /* index 0 is reserved */
  if (!h->fast.roots || !h->classes) {
    eph_heap_free(h);
    eph_error_fill(err, EPH_ERR_NOMEM, "cannot allocate the heap's tables");
    return EPH_ERR_NOMEM;
  }
  st = ephh_new_space_init(h, p.eden_bytes);
  if (st == EPH_OK) st = ephh_old_space_init(h);
  if (st != EPH_OK) {
    eph_error_fill(err, st, "%s", h->error);
    eph_heap_free(h);
    return st;
  }
  ephh_note_committed(h);
  if (hook && hook->attach) {
    st = hook->attach(h, err);
    if (st != EPH_OK) {
      eph_heap_free(h);
      return st;
    }
  }
  *out = h;
  return EPH_OK;
}

void eph_heap_free(eph_heap *h) {
  if (!h) return;
  if (h->has_observer && h->observer.on_heap_free && h->new_base && h->old_base)
    h->observer.on_heap_free(h->observer.data, h);
  if (h->new_base && h->old_base) ephh_exit_finalizers(h);
  if (h->new_base && h->old_base) ephh_append_env_stats(h);
  ephh_new_space_release(h);
  ephh_os_release(h->old_base, h->old_reserved);
  ephh_pinned_release(h);
  for (size_t i = 1; i < h->classes_len; i++) free(h->classes[i].name);
  free(h->classes);
  free(h->fast.roots);
  ephh_eden_walk_free(h);
  free(h->fast.globals);
  free(h->remset);
  free(h->remset_inert.items);
  free(h->mark_bits);
  free(h->chunk_live_before);
  free(h->mark_stack);
  free(h->events);
  free(h->finalizers);
  free(h->mourn.items);
  free(h->deferred.items);
  free(h->deferred_inert.items);
  free(h);
}

const eph_gc_params *eph_heap_params(const eph_heap *h) { return &h->params; }

eph_status eph_heap_set_params(eph_heap *h, const eph_gc_params *p) {
  eph_error err;
  if (eph_gc_params_check(p, &err) != EPH_OK) {
    ephh_set_error(h, EPH_ERR_INVALID, "%s", err.message);
    return EPH_ERR_INVALID;
  }
  size_t new_space = ephh_new_space_bytes(p->eden_bytes, h->page);
  /* old space may hold the maximum, a new space's worth a collection may
   * promote beyond it (heap.h, max_heap), and a new space of slack */
  if (p->max_heap && p->max_heap + 2 * new_space > h->old_reserved) {
    ephh_set_error(h, EPH_ERR_INVALID, "GC parameter 'max': %zu bytes is more than this heap reserved (%zu); set it at creation",
                  p->max_heap, h->old_reserved);
    return EPH_ERR_INVALID;
  }
  bool eden_changed = ephh_round_up(p->eden_bytes, h->page) != (size_t)(h->eden.end - h->eden.start);
  unsigned long trailer = h->params.trailer_words; /* fixed at creation */
  h->params = *p;
  h->params.trailer_words = trailer;
  if (eden_changed) {
    bool pair = h->eden_pair;
    ephh_full_gc(h); /* empties new space */
    ephh_new_space_release(h);
    eph_status st = ephh_new_space_init(h, p->eden_bytes);
    if (st != EPH_OK) return st;
    if (pair && !eph_heap_set_eden_pair(h, true)) {
      ephh_set_error(h, EPH_ERR_NOMEM, "cannot commit the second eden of a pair (%zu bytes)", p->eden_bytes);
      return EPH_ERR_NOMEM;
    }
  }
  ephh_set_full_threshold(h);
  ephh_update_alloc_limit(h);
  ephh_note_committed(h);
  if (eden_changed) ephh_safepoint(h); /* the full GC may have mourned ephemerons */
  return EPH_OK;
}

