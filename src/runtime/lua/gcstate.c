/*
 * gcstate.c — GC cycles read from Lua's own collector state, with no
 * object in the program's heap: the allocator (alloc.c) compares two bytes
 * of global_State, `currentwhite` and `gcstate`, with the values it saw
 * last, at every new block, every reallocation and every free of a sample;
 * when they changed, lt_gc_phase_changed decides whether a collection
 * ended.
 *
 * Every collection Lua 5.4 makes (an incremental cycle, a generational
 * minor or major collection, an emergency one) runs one atomic phase,
 * which flips `currentwhite`; its sweep follows (gcstate GCSatomic to
 * GCSswpend; a generational collection sweeps in GCSswpallgc and returns to
 * GCSpropagate).  A collection is counted when its sweep is seen to be
 * over: a white flipped since the last count and a state outside the
 * sweep.  So an object freed by a sweep dies in the cycle count of the
 * collection that found it dead (0 cycles survived if born after the
 * previous one), as the __gc sentinel counted them.  A cycle's end is seen
 * at the next allocator call after it: its byte clock is exact (frees do
 * not advance it); its wall time is that call's.  What cannot be seen: two
 * collections that complete with no allocation, reallocation or sample
 * free in between (back-to-back collectgarbage() calls that free nothing)
 * flip the white twice and count as none; a collection the program's
 * allocation triggers always has an allocation between it and the next.
 *
 * The layout (lua54_layout.h) is Lua 5.4.4's (the same through 5.4.6).
 * lt_layout_global confirms it on the state before anything is read
 * through it: the global state's first words are the state's allocator,
 * its byte counts add up to lua_gc(LUA_GCCOUNT/COUNTB), the collector's
 * bytes hold plausible values, and the pause byte follows
 * lua_gc(LUA_GCSETPAUSE) (set and restored: no other effect).  It reads
 * only fields Lua has initialised.
 */
#include <string.h>

#include "runtime/lua/ephlua.h"
#include "runtime/lua/lua54_layout.h"

const struct lt_global54 *lt_layout_global(lua_State *L) {
#if LUA_VERSION_NUM == 504 && UINTPTR_MAX == UINT64_MAX
  _Static_assert(offsetof(struct lt_global54, currentwhite) == 100, "Lua 5.4.4's global_State on LP64");
  _Static_assert(offsetof(struct lt_state54, ci) == 32, "Lua 5.4.4's lua_State on LP64");
  if (lua_version(L) != 504) return NULL;
  const struct lt_state54 *s = (const struct lt_state54 *)L;
  const struct lt_global54 *g = s->l_G;
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (!g || g->frealloc != f || g->ud != ud) return NULL;
  int64_t count = (int64_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + lua_gc(L, LUA_GCCOUNTB, 0);
  if ((int64_t)g->totalbytes + (int64_t)g->GCdebt != count) return NULL;
  if ((g->currentwhite != 8 && g->currentwhite != 16) || g->gcstate > LT_GCS_PAUSE || g->gckind > 1 ||
      g->gcemergency || (g->gcstp == 0) != (lua_gc(L, LUA_GCISRUNNING, 0) != 0))
    return NULL;
  uint8_t pause = g->gcpause;
  uint8_t probe = pause == 100 ? 101 : 100;
  int old = lua_gc(L, LUA_GCSETPAUSE, 4 * probe);
  bool moved = g->gcpause == probe;
  lua_gc(L, LUA_GCSETPAUSE, old);
  if (!moved || old != 4 * pause || g->gcpause != pause) return NULL;
  return g;
#else
  (void)L;
  return NULL;
#endif
}

int lt_layout_gckind(lua_State *L) {
  const struct lt_global54 *g = lt_layout_global(L);
  return g ? g->gckind : -1;
}

static bool sweeping(uint8_t state) { return state >= LT_GCS_ATOMIC && state <= LT_GCS_SWPEND; }

bool lt_gcstate_attach(lt_tracker *t, lua_State *L) {
  const struct lt_global54 *g = lt_layout_global(L);
  if (!g) {
    t->gc_phase = (const uint8_t *)&t->gc_key; /* never differs from itself: the sentinel counts */
    t->gc_stop = NULL;
    return false;
  }
  t->gc_phase = &g->currentwhite; /* followed by gcstate */
  t->gc_stop = &g->gcstp;
  memcpy(&t->gc_key, t->gc_phase, sizeof t->gc_key);
  t->gc_white = g->currentwhite;
  t->gc_sweeping = sweeping(g->gcstate); /* attached during a sweep: its end is the first count */
  return true;
}

void lt_gc_phase_changed(lt_tracker *t) {
  memcpy(&t->gc_key, t->gc_phase, sizeof t->gc_key);
  uint8_t white = t->gc_phase[0], state = t->gc_phase[1];
  if (*t->gc_stop & LT_GCSTPCLS) { /* lua_close: what it frees is censored, and no cycle ends */
    rt_begin_close(&t->s);
    return;
  }
  if (white != t->gc_white) { /* an atomic phase since the last look */
    if (t->gc_sweeping) rt_cycle_end(&t->s); /* the previous collection's sweep is over */
    t->gc_white = white;
    t->gc_sweeping = true;
  }
  if (t->gc_sweeping && !sweeping(state)) {
    t->gc_sweeping = false;
    rt_cycle_end(&t->s); /* counted unless closing, detached or stopping on a signal */
  }
}
