/*
 * os.c — the few operating-system services the heap needs: reserving
 * address space, committing and decommitting pages of it, and clocks.
 */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "heap_internal.h"

void *eph_os_reserve(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

bool eph_os_commit(void *addr, size_t bytes) {
  return bytes == 0 || mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
}

/* Gives the pages back to the OS and makes the range inaccessible again. */
void eph_os_decommit(void *addr, size_t bytes) {
  if (bytes == 0) return;
  void *p = mmap(addr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  (void)p; /* on failure the pages merely stay committed */
}

void eph_os_release(void *addr, size_t bytes) {
  if (addr) munmap(addr, bytes);
}

size_t eph_os_page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t eph_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t eph_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
