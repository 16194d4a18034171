/*
 * fuzz_driver.c — runs the reader fuzz target without libFuzzer: over the
 * seed corpus (generated here, plus any files or directories given) and
 * then over randomly mutated seeds (fuzz_mutate, CRCs repaired three
 * times out of four).  Any crash, sanitizer report or broken invariant
 * fails the run.
 *
 *   eph-format-fuzz-driver [--iterations N] [--seed S] [FILE|DIR ...]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "sample.h"

typedef struct input {
  uint8_t *data;
  size_t size;
} input;

static input *inputs;
static size_t ninputs, cap_inputs;

static void add_input(uint8_t *data, size_t size) {
  if (ninputs == cap_inputs) {
    cap_inputs = cap_inputs ? 2 * cap_inputs : 64;
    inputs = realloc(inputs, cap_inputs * sizeof *inputs);
    if (!inputs) abort();
  }
  inputs[ninputs].data = data;
  inputs[ninputs].size = size;
  ninputs++;
}

static void add_file(const char *path) {
  size_t len;
  uint8_t *d = sample_read_file(path, &len);
  if (d) add_input(d, len);
}

static void add_path(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    fprintf(stderr, "fuzz-driver: %s: not found\n", path);
    exit(2);
  }
  if (!S_ISDIR(sb.st_mode)) {
    add_file(path);
    return;
  }
  DIR *d = opendir(path);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    add_file(p);
  }
  if (d) closedir(d);
}

static void generate_seeds(void) {
  char dir[] = "/tmp/eph-fuzz-seeds-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  char msg[256];
  if (sample_write_seeds(dir, msg, sizeof msg) != 0) {
    fprintf(stderr, "fuzz-driver: writing seeds: %s\n", msg);
    exit(2);
  }
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    add_file(path);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

int main(int argc, char **argv) {
  unsigned long iterations = 5000;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else add_path(argv[i]);
  }
  generate_seeds();
  size_t nseeds = ninputs;
  for (size_t i = 0; i < nseeds; i++) LLVMFuzzerTestOneInput(inputs[i].data, inputs[i].size);
  uint64_t rng = seed * 0x9E3779B97F4A7C15u + 7;
  size_t max = 1;
  for (size_t i = 0; i < nseeds; i++)
    if (inputs[i].size > max) max = inputs[i].size;
  max += 1024;
  uint8_t *buf = malloc(max);
  if (!buf) return 2;
  for (unsigned long it = 0; it < iterations; it++) {
    const input *a = &inputs[sample_rand(&rng) % nseeds], *b = &inputs[sample_rand(&rng) % nseeds];
    memcpy(buf, a->data, a->size);
    size_t size = fuzz_mutate(buf, a->size, max, b->data, b->size, &rng);
    /* An exact-size copy, so that ASan sees any read past the end. */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) return 2;
    memcpy(exact, buf, size);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
  }
  printf("fuzz-driver: %zu seeds and %lu mutated inputs, no findings\n", nseeds, iterations);
  free(buf);
  for (size_t i = 0; i < ninputs; i++) free(inputs[i].data);
  free(inputs);
  return 0;
}
