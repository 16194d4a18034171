/*
 * fuzz_common.h — helpers shared by the reader fuzz target (libFuzzer) and
 * its fallback driver: structure-aware fix-ups so that mutated inputs get
 * past the CRCs and reach the payload decoders.
 */
#ifndef EPH_FORMAT_FUZZ_COMMON_H
#define EPH_FORMAT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/*
 * Walks the chunk framing of an .eph image and recomputes every chunk's
 * payload CRC and header CRC in place (as far as the lengths allow).
 */
void fuzz_fix_crcs(uint8_t *data, size_t size);

/*
 * Applies 1..8 random mutations (bit flips, interesting values, inserts,
 * deletes, duplicated ranges, truncation, splicing with `other`) to data
 * (size bytes, capacity max) and returns the new size.  rng: a state for
 * sample_rand.  Fixes the CRCs afterwards three times out of four.
 */
size_t fuzz_mutate(uint8_t *data, size_t size, size_t max, const uint8_t *other, size_t other_size, uint64_t *rng);

/* The fuzz target: loads data and checks the invariants of what loads. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
