/*
 * lua54_layout.h — the few private structures of Lua 5.4.4 (lstate.h) the
 * adapter reads: the head of lua_State (its global state and running
 * CallInfo), the head of global_State (the allocator, the byte counts and
 * the collector's state bytes) and CallInfo.  They are not part of Lua's
 * API, so nothing is read through them until lt_layout_check has
 * confirmed them on the state at hand (gcstate.c); on a layout it does not
 * recognise, the adapter falls back to what the API gives (a __gc sentinel
 * for GC cycles, lua_getinfo for sites).  Layer: Lua adapter.
 */
#ifndef LT_LUA54_LAYOUT_H
#define LT_LUA54_LAYOUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

/* lua_State's first fields (lstate.h): CommonHeader, then the rest. */
struct lt_state54 {
  void *next;
  uint8_t tt, marked, status, allowhook;
  unsigned short nci;
  void *top;
  void *l_G; /* struct lt_global54 */
  void *ci;  /* struct lt_ci54: the running call */
};

/* global_State's first fields, up to the collector's parameters. */
struct lt_global54 {
  lua_Alloc frealloc;
  void *ud;
  ptrdiff_t totalbytes, GCdebt; /* Lua's count of bytes in use = totalbytes + GCdebt */
  size_t GCestimate, lastatomic;
  struct {
    void **hash;
    int nuse, size;
  } strt;
  struct {
    union {
      void *p;
      int64_t i;
      double n;
    } value;
    uint8_t tt;
  } l_registry, nilvalue;
  unsigned int seed;
  uint8_t currentwhite; /* flips at the end of every atomic phase: once per collection */
  uint8_t gcstate;      /* GCSpropagate .. GCSpause, below */
  uint8_t gckind;       /* 0 incremental, 1 generational */
  uint8_t gcstopem, genminormul, genmajormul;
  uint8_t gcstp; /* bit 2 (GCSTPCLS): lua_close is freeing everything */
  uint8_t gcemergency, gcpause, gcstepmul, gcstepsize;
};

/* gcstate values (lgc.h) */
enum { LT_GCS_PROPAGATE, LT_GCS_ENTERATOMIC, LT_GCS_ATOMIC, LT_GCS_SWPALLGC, LT_GCS_SWPFINOBJ,
       LT_GCS_SWPTOBEFNZ, LT_GCS_SWPEND, LT_GCS_CALLFIN, LT_GCS_PAUSE };
#define LT_GCSTPCLS 4u

/* CallInfo (lstate.h). */
struct lt_ci54 {
  void *func, *top;
  struct lt_ci54 *previous, *next;
  union {
    struct {
      const void *savedpc;
      volatile sig_atomic_t trap;
      int nextraargs;
    } l;
    struct {
      void *k;
      ptrdiff_t old_errfunc;
      intptr_t ctx;
    } c;
  } u;
  union {
    int funcidx, nyield, nres;
    struct {
      unsigned short ftransfer, ntransfer;
    } transferinfo;
  } u2;
  short nresults;
  unsigned short callstatus;
};
#define LT_CIST_C (1u << 1)

#endif
