/*
 * fuzz_common.c — CRC fix-ups and a small mutator; see fuzz_common.h.
 */
#include "fuzz_common.h"

#include <string.h>

#include <zlib.h>

#include "sample.h"

#define FILE_HEADER 16
#define CHUNK_HEADER 24

static uint32_t load32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

void fuzz_fix_crcs(uint8_t *data, size_t size) {
  size_t off = FILE_HEADER;
  while (size >= CHUNK_HEADER && off <= size - CHUNK_HEADER) {
    uint8_t *h = data + off;
    uint32_t stored = load32(h + 8);
    size_t rest = size - off - CHUNK_HEADER;
    if (stored <= rest) store32(h + 16, (uint32_t)crc32(0L, h + CHUNK_HEADER, stored));
    store32(h + 20, (uint32_t)crc32(0L, h, 20));
    if (stored > rest) break;
    off += CHUNK_HEADER + stored;
  }
}

static const uint32_t INTERESTING[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff,
                                       0x80000000u, 0xffffffffu, 1u << 24, (1u << 24) + 1, 1u << 20, 24, 16};

size_t fuzz_mutate(uint8_t *data, size_t size, size_t max, const uint8_t *other, size_t other_size, uint64_t *rng) {
  unsigned n = 1 + (unsigned)(sample_rand(rng) % 8);
  for (unsigned k = 0; k < n; k++) {
    uint64_t x = sample_rand(rng);
    size_t pos = size ? (size_t)((x >> 8) % size) : 0;
    switch (x % 9) {
      case 0: /* flip a bit */
        if (size) data[pos] ^= (uint8_t)(1u << ((x >> 40) & 7));
        break;
      case 1: /* a random byte */
        if (size) data[pos] = (uint8_t)(x >> 40);
        break;
      case 2: /* an interesting u32 */
        if (size >= 4) {
          pos = (size_t)((x >> 8) % (size - 3));
          store32(data + pos, INTERESTING[(x >> 40) % (sizeof INTERESTING / sizeof INTERESTING[0])]);
        }
        break;
      case 3: /* insert a byte */
        if (size < max) {
          memmove(data + pos + 1, data + pos, size - pos);
          data[pos] = (uint8_t)(x >> 40);
          size++;
        }
        break;
      case 4: { /* delete a range */
        size_t len = 1 + (size_t)((x >> 40) % 16);
        if (pos + len <= size) {
          memmove(data + pos, data + pos + len, size - pos - len);
          size -= len;
        }
        break;
      }
      case 5: { /* duplicate a range (e.g. a whole chunk) */
        size_t len = 1 + (size_t)((x >> 40) % 256);
        if (pos + len <= size && size + len <= max) {
          memmove(data + pos + len, data + pos, size - pos);
          size += len;
        }
        break;
      }
      case 6: /* truncate */
        size = pos;
        break;
      case 7: /* splice: the tail of the other input */
        if (other && other_size) {
          size_t from = (size_t)((x >> 40) % other_size), len = other_size - from;
          if (pos + len > max) len = max - pos;
          memcpy(data + pos, other + from, len);
          size = pos + len;
        }
        break;
      default: /* a varint-sized run of 0xff (long varints) */
        for (size_t i = 0; i < 10 && pos + i < size; i++) data[pos + i] = 0xff;
        break;
    }
  }
  if (sample_rand(rng) % 4) fuzz_fix_crcs(data, size);
  return size;
}
