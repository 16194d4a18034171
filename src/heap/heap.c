/*
 * heap.c — creating and destroying heaps, errors, parameters at run time,
 * and the observer slot.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/profile.h"
#include "heap_internal.h"

const char *eph_status_name(eph_status s) {
  switch (s) {
    case EPH_OK: return "ok";
    case EPH_ERR_NOMEM: return "out of memory";
    case EPH_ERR_HEAP_EXHAUSTED: return "heap exhausted";
    case EPH_ERR_INVALID: return "invalid argument";
    case EPH_ERR_TOO_LARGE: return "object too large";
    case EPH_ERR_CORRUPT: return "heap corrupt";
    case EPH_ERR_IO: return "I/O error";
  }
  return "unknown status";
}

static void default_error_handler(void *data, eph_heap *h, eph_status st, const char *msg) {
  (void)data;
  (void)h;
  fprintf(stderr, "ephemera: %s: %s\n", eph_status_name(st), msg);
}

/* Records the error message without calling the handler. */
void eph_set_error(eph_heap *h, eph_status st, const char *fmt, ...) {
  h->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
}

/* Records the error and tells the embedder's handler. */
void eph_raise(eph_heap *h, eph_status st, const char *fmt, ...) {
  h->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->error, sizeof h->error, fmt, ap);
  va_end(ap);
  if (h->error_fn) h->error_fn(h->error_data, h, st, h->error);
}

/* For failures that leave the heap unusable: a collector table could not grow. */
void eph_fatal(eph_heap *h, const char *what) {
  eph_raise(h, EPH_ERR_NOMEM, "cannot continue: %s", what);
  abort();
}

const char *eph_heap_error(const eph_heap *h) { return h->error; }

eph_status eph_heap_status(const eph_heap *h) { return h->status; }

void eph_heap_set_error_handler(eph_heap *h, eph_error_fn fn, void *data) {
  h->error_fn = fn;
  h->error_data = data;
}

/* The inline allocator takes the slow path whenever alloc_top reaches
 * alloc_limit; pulling the limit down to the top sends every allocation
 * there (stress mode, allocation observers) at no cost to the fast path. */
void eph_update_alloc_limit(eph_heap *h) {
  /* Allocations made by an observer inside on_alloc take the slow path,
   * which leaves them out of the sample countdown. */
  if (h->params.stress || h->params.stress_full_every || h->in_observer || h->requested_gc) {
    h->fast.alloc_limit = h->fast.alloc_top;
    return;
  }
  h->fast.alloc_limit = h->eden.end;
  if (h->sample_at_bytes != UINT64_MAX) {
    uint64_t now = eph_heap_allocated(h);
    uint64_t gap = h->sample_at_bytes > now ? h->sample_at_bytes - now : 0;
    if (gap < (uint64_t)(h->eden.end - h->fast.alloc_top)) h->fast.alloc_limit = h->fast.alloc_top + gap;
  }
}

/* Re-arms both sample triggers from the current clocks. */
void eph_sample_arm(eph_heap *h) {
  h->objects_base += h->countdown_start - h->fast.alloc_countdown;
  h->fast.alloc_countdown = h->sample_objects ? h->sample_objects : EPH_NO_COUNTDOWN;
  h->countdown_start = h->fast.alloc_countdown;
  h->sample_at_bytes = h->sample_bytes ? eph_heap_allocated(h) + h->sample_bytes : UINT64_MAX;
  eph_update_alloc_limit(h);
}

void eph_heap_sample_next(eph_heap *h, uint64_t objects, uint64_t bytes) {
  h->sample_objects = objects;
  h->sample_bytes = bytes;
  eph_sample_arm(h);
}

uint64_t eph_heap_objects_allocated(const eph_heap *h) {
  return h->objects_base + (h->countdown_start - h->fast.alloc_countdown);
}

eph_status eph_heap_new(const eph_gc_params *params, eph_heap **out, eph_error *err) {
  *out = NULL;
  eph_gc_params p;
  /* Any program that takes the environment's parameters can be profiled. */
  const char *profile = params ? NULL : getenv("EPHEMERA_PROFILE");
  eph_profile_spec spec;
  eph_profile_spec_init(&spec);
  if (profile && *profile) {
    eph_error perr;
    if (eph_profile_spec_parse(&spec, profile, &perr) != EPH_OK) {
      eph_error_fill(err, EPH_ERR_INVALID, "EPHEMERA_PROFILE: %s", perr.message);
      return EPH_ERR_INVALID;
    }
  }
  if (params) {
    p = *params;
  } else {
    eph_gc_params_init(&p);
    eph_status st = eph_gc_params_apply_env(&p, err);
    if (st != EPH_OK) return st;
    eph_profile_prepare_params(&spec, &p);
  }
  if (p.trailer_words > 4) {
    eph_error_fill(err, EPH_ERR_INVALID, "trailer_words %lu is more than 4", p.trailer_words);
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
  h->page = eph_os_page_size();
  h->error_fn = default_error_handler;
  h->auto_finalize = true;
  h->fast.alloc_countdown = h->countdown_start = EPH_NO_COUNTDOWN;
  h->sample_at_bytes = UINT64_MAX;
  h->start_wall_ns = eph_now_ns();
  h->start_cpu_ns = eph_cpu_ns();
  h->fast.roots_cap = 256;
  h->fast.roots = malloc(h->fast.roots_cap * sizeof *h->fast.roots);
  h->classes_cap = 64;
  h->classes = calloc(h->classes_cap, sizeof *h->classes);
  h->classes_len = 1; /* index 0 is reserved */
  if (!h->fast.roots || !h->classes) {
    eph_heap_free(h);
    eph_error_fill(err, EPH_ERR_NOMEM, "cannot allocate the heap's tables");
    return EPH_ERR_NOMEM;
  }
  st = eph_new_space_init(h, p.eden_bytes);
  if (st == EPH_OK) st = eph_old_space_init(h);
  if (st != EPH_OK) {
    eph_error_fill(err, st, "%s", h->error);
    eph_heap_free(h);
    return st;
  }
  eph_note_committed(h);
  if (profile && *profile) {
    eph_error perr;
    st = eph_profile_start(h, &spec, NULL, 0, &perr);
    if (st != EPH_OK) {
      eph_error_fill(err, st, "EPHEMERA_PROFILE: %s", perr.message);
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
  if (h->new_base && h->old_base) eph_exit_finalizers(h);
  eph_new_space_release(h);
  eph_os_release(h->old_base, h->old_reserved);
  for (size_t i = 1; i < h->classes_len; i++) free(h->classes[i].name);
  free(h->classes);
  free(h->fast.roots);
  eph_eden_walk_free(h);
  free(h->globals);
  free(h->remset);
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
    eph_set_error(h, EPH_ERR_INVALID, "%s", err.message);
    return EPH_ERR_INVALID;
  }
  size_t new_space = p->eden_bytes + 2 * eph_round_up(p->eden_bytes / 5, h->page);
  if (p->max_heap && p->max_heap + 2 * new_space > h->old_reserved) {
    eph_set_error(h, EPH_ERR_INVALID, "GC parameter 'max': %zu bytes is more than this heap reserved (%zu); set it at creation",
                  p->max_heap, h->old_reserved);
    return EPH_ERR_INVALID;
  }
  bool eden_changed = eph_round_up(p->eden_bytes, h->page) != (size_t)(h->eden.end - h->eden.start);
  unsigned long trailer = h->params.trailer_words; /* fixed at creation */
  h->params = *p;
  h->params.trailer_words = trailer;
  if (eden_changed) {
    eph_full_gc(h); /* empties new space */
    eph_new_space_release(h);
    eph_status st = eph_new_space_init(h, p->eden_bytes);
    if (st != EPH_OK) return st;
  }
  eph_set_full_threshold(h);
  eph_update_alloc_limit(h);
  eph_note_committed(h);
  if (eden_changed) eph_safepoint(h); /* the full GC may have mourned ephemerons */
  return EPH_OK;
}

void eph_heap_set_observer(eph_heap *h, const eph_observer *obs) {
  if (obs) {
    h->observer = *obs;
    h->has_observer = true;
  } else {
    memset(&h->observer, 0, sizeof h->observer);
    h->has_observer = false;
    eph_heap_set_eden_walk(h, false);
  }
  h->fast.store_hook = h->has_observer && h->observer.on_store;
  eph_heap_sample_next(h, h->has_observer && h->observer.on_alloc ? 1 : 0, 0);
}

const eph_observer *eph_heap_get_observer(const eph_heap *h) { return h->has_observer ? &h->observer : NULL; }

/* Where obj's bytes are now: a young object evacuated by this collection
 * is at its copy; nothing is compacted yet. */
eph_value eph_gc_locate(eph_heap *h, eph_value obj) {
  if (!eph_is_ptr(obj) || h->phase == PHASE_NONE) return obj;
  if (eph_in_space(&h->evacuated[0], obj) || eph_in_space(&h->evacuated[1], obj)) {
    eph_header hdr = *eph_header_of(obj);
    if (hdr & EPH_HDR_FORWARDED) return (eph_value)(hdr & ~EPH_HDR_FORWARDED);
  }
  return obj;
}

/* The answer behind eph_gc_where and eph_gc_fate: eph_gc_locate, and
 * whether obj was found dead; compacted: for a survivor of a full GC,
 * where compaction will put it instead. */
static inline eph_value where(const eph_heap *h, eph_value obj, bool *dead, bool compacted) {
  *dead = false;
  if (!eph_is_ptr(obj) || h->phase == PHASE_NONE) return obj;
  if (eph_in_space(&h->evacuated[0], obj) || eph_in_space(&h->evacuated[1], obj)) {
    eph_header hdr = *eph_header_of(obj);
    if (!(hdr & EPH_HDR_FORWARDED)) {
      *dead = true;
      return obj;
    }
    obj = (eph_value)(hdr & ~EPH_HDR_FORWARDED);
    if (h->phase == PHASE_EVACUATED) return obj;
  }
  if (h->phase == PHASE_MARKED && eph_in_old(h, obj)) {
    *dead = !eph_full_is_marked(h, obj);
    if (compacted && !*dead) return eph_full_forward(h, obj);
  }
  return obj;
}

void eph_heap_request_gc(eph_heap *h, eph_gc_kind kind) {
  h->requested_gc = 1 + (int)kind;
  eph_update_alloc_limit(h);
}

/* Walks [start, top) of a space the collection evacuated: an object whose
 * header is a forwarding address survived (its size is read from the copy). */
static void each_dead_evacuated(eph_heap *h, const eph_space *s, void (*fn)(void *, eph_value), void *data) {
  for (char *p = s->start; p < s->top;) {
    eph_header hdr = *(eph_header *)(void *)p;
    if (hdr & EPH_HDR_FORWARDED) {
      p += eph_span(h, (eph_value)(hdr & ~EPH_HDR_FORWARDED));
    } else {
      fn(data, (eph_value)p);
      p = eph_next_object(h, p);
    }
  }
}

void eph_gc_each_dead(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data) {
  if (h->phase == PHASE_NONE) return;
  each_dead_evacuated(h, &h->evacuated[0], fn, data);
  each_dead_evacuated(h, &h->evacuated[1], fn, data);
  if (h->phase != PHASE_MARKED) return;
  for (char *p = h->old_base; p < h->old_top; p = eph_next_object(h, p))
    if (!eph_full_is_marked(h, (eph_value)p)) fn(data, (eph_value)p);
}

eph_value eph_gc_where(eph_heap *h, eph_value obj, bool *dead) { return where(h, obj, dead, false); }

uintptr_t eph_gc_dense_end(const eph_heap *h) {
  return (uintptr_t)(h->phase == PHASE_MARKED ? h->dense_end : h->old_base);
}

eph_value eph_gc_fate(eph_heap *h, eph_value obj) {
  bool dead;
  obj = where(h, obj, &dead, true);
  return dead ? EPH_NIL : obj;
}

size_t eph_heap_root_slots(eph_heap *h, eph_value ***shadow, eph_value ***globals, size_t *nglobals) {
  *shadow = h->fast.roots;
  *globals = h->globals;
  *nglobals = h->globals_len;
  return h->fast.roots_len;
}

void eph_heap_old_range(const eph_heap *h, uintptr_t *base, size_t *reserved) {
  *base = (uintptr_t)h->old_base;
  *reserved = h->old_reserved;
}

void eph_heap_each_object(eph_heap *h, void (*fn)(void *data, eph_value obj), void *data) {
  const eph_space *spaces[2] = {&h->eden, &h->past};
  for (int i = 0; i < 2; i++) {
    char *top = i == 0 ? h->fast.alloc_top : spaces[i]->top;
    for (char *p = spaces[i]->start; p < top; p = eph_next_object(h, p)) fn(data, (eph_value)p);
  }
  for (char *p = h->old_base; p < h->old_top; p = eph_next_object(h, p)) fn(data, (eph_value)p);
}
