/*
 * prepare.c — the tables that let spur (spur.c) simulate a configuration
 * without replaying every allocation and store: what does not depend on
 * the configuration is computed here, once per input.
 *
 *   - size_prefix: bytes allocated before each object, so a run of young
 *     allocations that fits eden is one binary search;
 *   - death_max1/2: the latest death in each block of objects in birth
 *     order, so a scavenge finds eden's survivors by skipping blocks that
 *     died whole;
 *   - long_lived: the objects that outlive 16 KiB, 64 KiB, 256 KiB, 1 MiB
 *     of allocation, so a scavenge looks at those and at eden's last
 *     allocations only;
 *   - big: the objects that could go to old space, so a configuration
 *     finds its old allocations without looking at every object;
 *   - slot_stores: the stores into each slot in program order, so a slot's
 *     value when an object is scanned is one binary search (no per-run
 *     copy of the graph); slot_one: a slot's only store, one load for the
 *     most common slot; store_before: the stores made before each
 *     allocation, which says how far the program has got at a collection;
 *   - stores, by the object stored into, in program order: the write
 *     barrier of objects allocated old or tenured by overflow, with the
 *     young bytes allocated between each store's target and the store
 *     (a target with more than tenure x eden after it cannot be young);
 *     fwd, the
 *     stores of a younger object into an older one, in program order: the
 *     barrier's candidates for objects tenured by age (spur.c
 *     write_barrier says why no other store can make them remembered),
 *     with the minima of their sources over blocks, so the barrier skips
 *     the blocks of stores into objects born since the last collection;
 *   - obj_young_bytes_min: per object, the least young bytes between a
 *     store into it and that store's target, so an object tenured by
 *     overflow that no store can make young-pointing costs one load.
 */
#include <stdlib.h>

#include "sim_internal.h"

static bool prepare_deaths(eph_sim_input *in) {
  size_t n1 = (in->n + SIM_BLOCK1 - 1) / SIM_BLOCK1, n2 = (in->n + SIM_BLOCK2 - 1) / SIM_BLOCK2;
  in->death_max1 = calloc(n1 ? n1 : 1, sizeof *in->death_max1);
  in->death_max2 = calloc(n2 ? n2 : 1, sizeof *in->death_max2);
  if (!in->death_max1 || !in->death_max2) return false;
  for (size_t i = 0; i < in->n; i++) {
    uint64_t d = in->death[i];
    if (d > in->death_max1[i / SIM_BLOCK1]) in->death_max1[i / SIM_BLOCK1] = d;
    if (d > in->death_max2[i / SIM_BLOCK2]) in->death_max2[i / SIM_BLOCK2] = d;
  }
  /* The lists: one pass counts every level, one fills them. */
  size_t count[SIM_LONG_LEVELS] = {0};
  for (size_t i = 0; i < in->n; i++)
    for (int k = 0; k < SIM_LONG_LEVELS && in->death[i] - in->birth[i] > SIM_LONG[k]; k++) count[k]++;
  for (int k = 0; k < SIM_LONG_LEVELS; k++) {
    in->long_lived[k] = malloc((count[k] ? count[k] : 1) * sizeof *in->long_lived[k]);
    if (!in->long_lived[k]) return false;
  }
  for (size_t i = 0; i < in->n; i++)
    for (int k = 0; k < SIM_LONG_LEVELS && in->death[i] - in->birth[i] > SIM_LONG[k]; k++)
      in->long_lived[k][in->nlong_lived[k]++] = (uint32_t)i;
  return true;
}

static bool prepare_sizes(eph_sim_input *in) {
  in->size_prefix = malloc((in->n + 1) * sizeof *in->size_prefix);
  if (!in->size_prefix) return false;
  uint64_t sum = 0;
  size_t nbig = 0;
  for (size_t i = 0; i < in->n; i++) {
    in->size_prefix[i] = sum;
    sum += in->size[i];
    /* The same unsigned expression as spur's large-object rule. */
    if ((in->flags[i] & SIM_PRETENURED) || in->size[i] - 8 >= SIM_BIG_PAYLOAD) nbig++;
  }
  in->size_prefix[in->n] = sum;
  in->big = malloc((nbig ? nbig : 1) * sizeof *in->big);
  if (!in->big) return false;
  for (size_t i = 0; i < in->n; i++)
    if ((in->flags[i] & SIM_PRETENURED) || in->size[i] - 8 >= SIM_BIG_PAYLOAD) in->big[in->nbig++] = (uint32_t)i;
  return true;
}

static bool prepare_stores(eph_sim_input *in) {
  in->store_before = malloc((in->n ? in->n : 1) * sizeof *in->store_before);
  in->store_start = calloc(in->n + 1, sizeof *in->store_start);
  if (!in->store_before || !in->store_start) return false;
  size_t nstores = 0, next = 0;
  for (size_t i = 0; i < in->nops; i++) {
    const sim_op *op = &in->ops[i];
    if (op->src == SIM_NONE) {
      if (next < in->n) in->store_before[next++] = (uint32_t)nstores;
    } else {
      in->store_start[op->src + 1]++;
      nstores++;
    }
  }
  for (size_t i = 0; i < in->n; i++) in->store_start[i + 1] += in->store_start[i];
  in->stores = malloc((nstores ? nstores : 1) * sizeof *in->stores);
  uint64_t *fill = malloc((in->n ? in->n : 1) * sizeof *fill);
  if (!in->stores || !fill) {
    free(fill);
    return false;
  }
  in->store_young_bytes = malloc((nstores ? nstores : 1) * sizeof *in->store_young_bytes);
  size_t nblocks = (nstores + SIM_STORE_BLOCK - 1) / SIM_STORE_BLOCK;
  in->store_young_bytes_min = malloc((nblocks ? nblocks : 1) * sizeof *in->store_young_bytes_min);
  /* young_before[i]: bytes of the objects before i that are not in big */
  uint64_t *young_before = malloc((in->n + 1) * sizeof *young_before);
  if (!in->store_young_bytes || !in->store_young_bytes_min || !young_before) {
    free(fill);
    free(young_before);
    return false;
  }
  young_before[0] = 0;
  for (size_t i = 0, b = 0; i < in->n; i++) {
    bool big = b < in->nbig && in->big[b] == i;
    if (big) b++;
    young_before[i + 1] = young_before[i] + (big ? 0 : in->size[i]);
  }
  for (size_t i = 0; i < in->n; i++) fill[i] = in->store_start[i];
  uint32_t seq = 0;
  size_t allocated = 0;
  for (size_t i = 0; i < in->nops; i++) {
    const sim_op *op = &in->ops[i];
    if (op->src == SIM_NONE) {
      allocated++;
      continue;
    }
    uint64_t k = fill[op->src]++;
    in->stores[k] = (sim_store){seq++, op->target};
    uint64_t young = op->target == SIM_NONE ? UINT32_MAX : young_before[allocated] - young_before[op->target + 1];
    in->store_young_bytes[k] = young > UINT32_MAX ? UINT32_MAX : (uint32_t)young;
  }
  free(fill);
  free(young_before);
  for (size_t b = 0; b < nblocks; b++) {
    uint32_t m = UINT32_MAX;
    for (size_t k = b * SIM_STORE_BLOCK; k < nstores && k < (b + 1) * SIM_STORE_BLOCK; k++)
      if (in->store_young_bytes[k] < m) m = in->store_young_bytes[k];
    in->store_young_bytes_min[b] = m;
  }
  in->slot_store_start = calloc(in->nslots + 2, sizeof *in->slot_store_start);
  in->slot_stores = malloc((nstores ? nstores : 1) * sizeof *in->slot_stores);
  if (!in->slot_store_start || !in->slot_stores) return false;
  for (size_t i = 0; i < in->nops; i++)
    if (in->ops[i].src != SIM_NONE) in->slot_store_start[in->slot_start[in->ops[i].src] + in->ops[i].slot + 2]++;
  for (uint64_t g = 0; g < in->nslots; g++) in->slot_store_start[g + 2] += in->slot_store_start[g + 1];
  seq = 0; /* slot_store_start[g + 1] is slot g's fill position until the end */
  for (size_t i = 0; i < in->nops; i++) {
    const sim_op *op = &in->ops[i];
    if (op->src == SIM_NONE) continue;
    uint64_t g = in->slot_start[op->src] + op->slot;
    in->slot_stores[in->slot_store_start[g + 1]++] = (sim_store){seq++, op->target};
  }
  in->nstores = nstores;
  in->slot_one = malloc((in->nslots ? in->nslots : 1) * sizeof *in->slot_one);
  if (!in->slot_one) return false;
  for (uint64_t g = 0; g < in->nslots; g++) {
    uint64_t a = in->slot_store_start[g], b = in->slot_store_start[g + 1];
    in->slot_one[g] = a == b       ? (sim_store){UINT32_MAX, SIM_NONE}
                      : b - a == 1 ? in->slot_stores[a]
                                   : (sim_store){in->slot_stores[a].seq, SIM_MULTI};
  }
  size_t nfwd = 0;
  for (size_t i = 0; i < in->nops; i++)
    if (in->ops[i].src != SIM_NONE && in->ops[i].target != SIM_NONE && in->ops[i].target > in->ops[i].src) nfwd++;
  in->fwd = malloc((nfwd ? nfwd : 1) * sizeof *in->fwd);
  in->fwd_src = malloc((nfwd ? nfwd : 1) * sizeof *in->fwd_src);
  if (!in->fwd || !in->fwd_src) return false;
  seq = 0;
  for (size_t i = 0; i < in->nops; i++) {
    const sim_op *op = &in->ops[i];
    if (op->src == SIM_NONE) continue;
    if (op->target != SIM_NONE && op->target > op->src) {
      in->fwd_src[in->nfwd] = op->src;
      in->fwd[in->nfwd++] = (sim_fwd_store){seq, op->src, op->target};
    }
    seq++;
  }
  size_t n1 = (in->nfwd + SIM_FWD_BLOCK1 - 1) / SIM_FWD_BLOCK1, n2 = (in->nfwd + SIM_FWD_BLOCK2 - 1) / SIM_FWD_BLOCK2;
  in->fwd_src_min1 = malloc((n1 ? n1 : 1) * sizeof *in->fwd_src_min1);
  in->fwd_src_min2 = malloc((n2 ? n2 : 1) * sizeof *in->fwd_src_min2);
  in->obj_young_bytes_min = malloc((in->n ? in->n : 1) * sizeof *in->obj_young_bytes_min);
  if (!in->fwd_src_min1 || !in->fwd_src_min2 || !in->obj_young_bytes_min) return false;
  for (size_t b = 0; b < n1; b++) in->fwd_src_min1[b] = UINT32_MAX;
  for (size_t b = 0; b < n2; b++) in->fwd_src_min2[b] = UINT32_MAX;
  for (size_t k = 0; k < in->nfwd; k++) {
    uint32_t src = in->fwd_src[k];
    if (src < in->fwd_src_min1[k / SIM_FWD_BLOCK1]) in->fwd_src_min1[k / SIM_FWD_BLOCK1] = src;
    if (src < in->fwd_src_min2[k / SIM_FWD_BLOCK2]) in->fwd_src_min2[k / SIM_FWD_BLOCK2] = src;
  }
  for (size_t o = 0; o < in->n; o++) {
    uint32_t m = UINT32_MAX;
    for (uint64_t k = in->store_start[o]; k < in->store_start[o + 1]; k++)
      if (in->store_young_bytes[k] < m) m = in->store_young_bytes[k];
    in->obj_young_bytes_min[o] = m;
  }
  return true;
}

bool sim_input_prepare(eph_sim_input *in) {
  if (in->nops > UINT32_MAX) return true; /* store ranks need 32 bits: spur replays instead */
  if (!prepare_deaths(in) || !prepare_sizes(in)) return false;
  return !in->ops || prepare_stores(in);
}
