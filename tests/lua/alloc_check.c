/*
 * alloc_check.c — the allocator wrapper's counts, call by call (src/runtime/lua/alloc.c):
 * the byte clock, the heap and its peak, the object count and the sample
 * countdown after new blocks, reallocations and frees, and after calls the
 * wrapped allocator refuses (the counts must be as if the call never
 * happened, and a sample whose allocation failed is taken on the retry;
 * a sample whose larger block, with the header, is refused is made without
 * it).
 * Attaches to a state with an allocator of its own that fails on request
 * (the general path) and to a luaL_newstate state (the direct path).
 *   alloc_check DIR    (writes its profiles there)
 * Prints "ok: ..." / "FAIL: ..." lines; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "runtime/lua/ephlua.h"

static int fails;

#define CHECK(cond, ...)                 \
  do {                                   \
    if (cond) {                          \
      printf("ok: ");                    \
    } else {                             \
      printf("FAIL: ");                  \
      fails++;                           \
    }                                    \
    printf(__VA_ARGS__);                 \
    printf("  [%s]\n", #cond);           \
  } while (0)

typedef struct failing {
  int fail_next; /* refuse this many calls with nsize > 0 */
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  failing *f = ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (f->fail_next > 0) {
    f->fail_next--;
    return NULL;
  }
  return realloc(ptr, nsize);
}

typedef struct counts {
  uint64_t bytes, objects;
  int64_t heap, peak, countdown;
  size_t live;
  uint64_t records;
} counts;

static counts snap(const lt_tracker *t) {
  return (counts){t->s.bytes, t->s.objects, t->s.heap, rt_peak_heap(&t->s), t->s.countdown, (size_t)t->s.live, t->s.records};
}

static bool same(counts a, counts b) { return !memcmp(&a, &b, sizeof a); }

static lt_tracker *attach(lua_State *L, const char *dir, const char *name, const char *spec) {
  lt_options opt;
  lt_options_init(&opt);
  char msg[1600];
  if (!lt_options_parse(&opt, spec, msg, sizeof msg)) {
    printf("FAIL: spec %s: %s\n", spec, msg);
    exit(1);
  }
  snprintf(opt.out, sizeof opt.out, "%s/%s.eph", dir, name);
  opt.sites = false;
  lt_tracker *t = lt_attach(L, &opt, "test", NULL, 0, msg, sizeof msg);
  if (!t) {
    printf("FAIL: attach: %s\n", msg);
    exit(1);
  }
  return t;
}

static void finish(lua_State *L, lt_tracker *t) {
  lt_begin_close(t);
  lua_close(L); /* the tracker finishes and frees itself at the end */
}

/* The general path, with count sampling (spec) or byte sampling. */
static void general(const char *dir, bool by_bytes) {
  const char *v = by_bytes ? "general, bytes" : "general, count";
  failing fa = {0};
  lua_State *L = lua_newstate(failing_alloc, &fa);
  lt_tracker *t = attach(L, dir, by_bytes ? "gb" : "gc", by_bytes ? "sample=bytes:1000000000" : "sample=every:1000000");
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  CHECK(!t->direct && ud == t, "%s: a state with its own allocator takes the general path", v);

  /* an object and a non-object block */
  counts c0 = snap(t);
  void *obj = f(ud, NULL, LUA_TTABLE, 56);
  counts c1 = snap(t);
  CHECK(obj && c1.bytes == c0.bytes + 56 && c1.heap == c0.heap + 56 && c1.objects == c0.objects + 1 &&
            c1.countdown == c0.countdown - (by_bytes ? 56 : 1),
        "%s: a new table counts 56 bytes, one object, its countdown step", v);
  void *arr = f(ud, NULL, 0, 100);
  counts c2 = snap(t);
  CHECK(arr && c2.bytes == c1.bytes + 100 && c2.objects == c1.objects && c2.countdown == c1.countdown,
        "%s: a new non-object block counts its bytes only", v);

  /* refused calls change nothing */
  fa.fail_next = 1;
  CHECK(f(ud, NULL, LUA_TSTRING, 40) == NULL && same(snap(t), c2), "%s: a refused new object changes no count", v);
  fa.fail_next = 1;
  CHECK(f(ud, NULL, 0, 40) == NULL && same(snap(t), c2), "%s: a refused new block changes no count", v);
  fa.fail_next = 1;
  CHECK(f(ud, arr, 100, 400) == NULL && same(snap(t), c2), "%s: a refused growth changes no count", v);
  fa.fail_next = 1;
  counts before_shrink = snap(t);
  CHECK(f(ud, arr, 100, 50) == NULL && snap(t).bytes == before_shrink.bytes && snap(t).heap == before_shrink.heap,
        "%s: a refused shrink changes neither clock nor heap", v);

  /* growth, shrink, free; the peak */
  arr = f(ud, arr, 100, 400);
  counts c3 = snap(t);
  CHECK(arr && c3.bytes == c2.bytes + 300 && c3.heap == c2.heap + 300, "%s: growth counts the difference", v);
  arr = f(ud, arr, 400, 40);
  counts c4 = snap(t);
  CHECK(arr && c4.bytes == c3.bytes && c4.heap == c3.heap - 360 && c4.peak >= c3.heap,
        "%s: a shrink lowers the heap, the peak keeps the top", v);
  CHECK(f(ud, arr, 40, 0) == NULL && snap(t).heap == c4.heap - 40, "%s: a free lowers the heap", v);
  CHECK(f(ud, NULL, 0, 0) == NULL && snap(t).heap == c4.heap - 40, "%s: (NULL, 0, 0) is nothing", v);
  CHECK(f(ud, obj, 56, 0) == NULL && snap(t).records == c4.records, "%s: an unsampled object's free: no record", v);

  /* a sample whose block with header is refused is made without one (the
   * sample dropped, never the allocation) */
  t->s.countdown = 1;
  counts c4b = snap(t);
  uint64_t dropped = t->s.dropped;
  fa.fail_next = 1;
  void *plain = f(ud, NULL, LUA_TTABLE, 56);
  counts c4c = snap(t);
  CHECK(plain && c4c.live == c4b.live && t->s.dropped == dropped + 1 && c4c.objects == c4b.objects + 1 &&
            c4c.bytes == c4b.bytes + 56 && c4c.countdown > 0,
        "%s: a refused header drops the sample, not the allocation", v);
  CHECK(f(ud, plain, 56, 0) == NULL && snap(t).records == c4c.records, "%s: the dropped sample's free: no record", v);

  /* a sample whose allocation fails is taken on the retry */
  t->s.countdown = 1;
  counts c5 = snap(t);
  fa.fail_next = 2; /* with its header, and without */
  CHECK(f(ud, NULL, LUA_TTABLE, 56) == NULL && same(snap(t), c5), "%s: a refused sample changes no count", v);
  void *s = f(ud, NULL, LUA_TTABLE, 56);
  counts c6 = snap(t);
  CHECK(s && c6.live == c5.live + 1 && c6.objects == c5.objects + 1 && c6.bytes == c5.bytes + 56 &&
            c6.countdown > 0,
        "%s: the retry is the sample (live %zu -> %zu), re-armed", v, c5.live, c6.live);
  CHECK(f(ud, s, 56, 0) == NULL && snap(t).live == c5.live && snap(t).records == c6.records + 1,
        "%s: the sample's free writes its record", v);
  CHECK(rt_peak_heap(&t->s) >= t->s.heap, "%s: the peak is at least the heap", v);
  finish(L, t);
}

/* The direct path (luaL_newstate's allocator: free, malloc and realloc). */
static void direct(const char *dir) {
  lua_State *L = luaL_newstate();
  lt_tracker *t = attach(L, dir, "d", "sample=every:1000000");
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  CHECK(t->direct && ud == t, "direct: luaL_newstate's allocator is recognised");
  counts c0 = snap(t);
  void *obj = f(ud, NULL, LUA_TTABLE, 56);
  void *arr = f(ud, NULL, 0, 100);
  arr = f(ud, arr, 100, 300);
  counts c1 = snap(t);
  CHECK(obj && arr && c1.bytes == c0.bytes + 356 && c1.heap == c0.heap + 356 && c1.objects == c0.objects + 1,
        "direct: new blocks and growth counted");
  memset(arr, 1, 300);
  f(ud, arr, 300, 0);
  f(ud, obj, 56, 0);
  counts c2 = snap(t);
  CHECK(c2.heap == c0.heap && c2.peak >= c1.heap, "direct: frees give the heap back, the peak keeps the top");
  t->s.countdown = 1;
  void *s = f(ud, NULL, LUA_TSTRING, 30);
  CHECK(s && snap(t).live == c2.live + 1, "direct: a sample");
  if (s) ((unsigned char *)s)[sizeof(void *)] = 0x04; /* its type byte: a short string */
  f(ud, s, 30, 0);
  CHECK(snap(t).live == c2.live && snap(t).records == c2.records + 1, "direct: its record at its free");
  finish(L, t);
}

/* The clock tables (src/runtime/clock.c): cycles at a past byte clock against a count
 * of the cycle ends, and interpolated wall times in order and in range. */
static void clock_tables(const char *dir) {
  lua_State *L = luaL_newstate();
  lt_tracker *t = attach(L, dir, "clk", "sample=every:1000000");
  uint64_t base = t->s.bytes, ends[300];
  uint64_t x = 12345;
  for (int k = 0; k < 300; k++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    t->s.bytes += (x >> 40) % 200000; /* some cycles end with nothing allocated between them */
    rt_clock_mark(&t->s, t->s.bytes);
    ends[k] = t->s.bytes;
    rt_clock_cycle(&t->s);
  }
  int wrong = 0;
  uint64_t prev_ns = 0;
  bool ordered = true;
  for (uint64_t b = base; b <= t->s.bytes; b += 977) {
    uint32_t n = 0;
    while (n < 300 && ends[n] <= b) n++;
    ephs_clock_stamp at = rt_clock_at(&t->s, b);
    if (at.major != n) wrong++;
    uint64_t ns = at.wall_ns;
    if (ns < prev_ns || ns > rt_stamp_ns(&t->s)) ordered = false;
    prev_ns = ns;
  }
  CHECK(wrong == 0, "clock: cycles completed at a past byte clock, %d wrong of %llu", wrong,
        (unsigned long long)((t->s.bytes - base) / 977 + 1));
  CHECK(ordered, "clock: interpolated wall times never go backwards or past now");
  finish(L, t);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: alloc_check DIR\n");
    return 2;
  }
  general(argv[1], false);
  general(argv[1], true);
  direct(argv[1]);
  clock_tables(argv[1]);
  if (fails) printf("%d failure(s)\n", fails);
  return fails ? 1 : 0;
}
