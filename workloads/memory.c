/*
 * memory.c — a workload's memory off the heap (its plain-C replicas,
 * models and buffers), kept on a list of the run.
 *
 * Heap exhaustion leaves a workload through the runner's longjmp
 * (runner.c), past the free()s the workload would have made; the runner
 * then frees whatever is still on the list (wl_free_all), so a run that
 * ends that way leaks nothing.  Each block has a header in front: the
 * list's two links, padded to max_align_t so that the block keeps
 * malloc's alignment.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "workload.h"

typedef union wl_block {
  struct {
    union wl_block *prev, *next;
  } link;
  max_align_t align;
} wl_block;

static void *link_block(wl_ctx *w, wl_block *b) {
  if (!b) return NULL;
  b->link.prev = NULL;
  b->link.next = w->blocks;
  if (w->blocks) w->blocks->link.prev = b;
  w->blocks = b;
  return b + 1;
}

static void unlink_block(wl_ctx *w, wl_block *b) {
  if (b->link.prev) b->link.prev->link.next = b->link.next;
  else w->blocks = b->link.next;
  if (b->link.next) b->link.next->link.prev = b->link.prev;
}

void *wl_malloc(wl_ctx *w, size_t size) {
  if (size > SIZE_MAX - sizeof(wl_block)) return NULL;
  return link_block(w, malloc(sizeof(wl_block) + size));
}

void *wl_calloc(wl_ctx *w, size_t n, size_t size) {
  if (size && n > (SIZE_MAX - sizeof(wl_block)) / size) return NULL;
  return link_block(w, calloc(1, sizeof(wl_block) + n * size));
}

void *wl_realloc(wl_ctx *w, void *p, size_t size) {
  if (!p) return wl_malloc(w, size);
  if (size > SIZE_MAX - sizeof(wl_block)) return NULL;
  wl_block *b = (wl_block *)p - 1;
  unlink_block(w, b);
  wl_block *moved = realloc(b, sizeof(wl_block) + size);
  if (!moved) {
    link_block(w, b); /* p stays valid, as with realloc */
    return NULL;
  }
  return link_block(w, moved);
}

void wl_free(wl_ctx *w, void *p) {
  if (!p) return;
  wl_block *b = (wl_block *)p - 1;
  unlink_block(w, b);
  free(b);
}

void wl_free_all(wl_ctx *w) {
  while (w->blocks) {
    wl_block *b = w->blocks;
    w->blocks = b->link.next;
    free(b);
  }
}
