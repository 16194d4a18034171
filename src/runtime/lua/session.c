/*
 * session.c — a tracker's life on a Lua state: Lua's classes and SPEC,
 * attaching (chaining onto the state's allocator, the core's session
 * opened), the end of lua_close (the free of the state's main block),
 * releasing the allocator on request, and what the core calls back: the
 * censoring of the samples still allocated and the collector advice after
 * the summary.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "runtime/lua/ephlua.h"
#include "runtime/lua/lua_advice.h"

/* --- Lua's classes ------------------------------------------------------------------- */

static const char *const CLASS_NAMES[LT_CLS_COUNT] = {
    NULL,       "short string", "long string", "table",  "Lua closure", "C closure",
    "userdata", "thread",       "upvalue",     "prototype", "string",   "function",
};
/* base type tag of each class */
static const uint8_t CLASS_TAG[LT_CLS_COUNT] = {0, 4, 4, 5, 6, 6, 7, 8, LT_TAG_UPVALUE, LT_TAG_PROTO, 4, 6};
/* classes=string selects both variants, classes=function both closures */
static const uint32_t CLASS_ALSO[LT_CLS_COUNT] = {
    [LT_CLS_STRING] = 1u << LT_CLS_SHORT_STRING | 1u << LT_CLS_LONG_STRING,
    [LT_CLS_FUNCTION] = 1u << LT_CLS_LUA_CLOSURE | 1u << LT_CLS_C_CLOSURE,
};

static void censor_live(rt_session *s);
static void advice(const rt_session *s, FILE *out);

static const rt_runtime LUA_RUNTIME = {
    .name = "lua",
    .title = "Lua",
    .class_names = CLASS_NAMES,
    .nclasses = LT_CLS_COUNT,
    .class_also = CLASS_ALSO,
    .classes_known = "string, short string, long string, table, function, Lua closure, C closure, userdata, thread, "
                     "upvalue, prototype",
    .mode_note = "Lua's own collector reports each death through its allocator, which is mode=gc (leave mode out "
                 "or write mode=gc)",
    .censor_live = censor_live,
    .summary_tail = advice,
};

bool lt_options_parse(lt_options *opt, const char *spec, char *msg, size_t msglen) {
  return rt_options_parse(opt, &LUA_RUNTIME, spec, msg, msglen);
}

/* --- attach --------------------------------------------------------------------- */

/* luaL_newstate's allocator: lauxlib.c's static l_alloc, which in every Lua
 * 5.4 release is free(ptr) for nsize == 0 and realloc(ptr, nsize) otherwise
 * (ud unused).  Found once by asking a throwaway state for it; a state that
 * uses it gets the allocator variants that call free/malloc/realloc
 * directly (alloc.c). */
static lua_Alloc default_allocator(void) {
  static lua_Alloc f;
  static bool known;
  if (!known) {
    known = true;
    lua_State *L = luaL_newstate();
    if (L) {
      void *ud;
      f = lua_getallocf(L, &ud);
      lua_close(L);
    }
  }
  return f;
}

lt_tracker *lt_attach(lua_State *L, const lt_options *opt, const char *gcmode, const eph_meta_pair *meta,
                      size_t nmeta, char *msg, size_t msglen) {
  if (!rt_session_room()) {
    snprintf(msg, msglen, "too many Lua states profiled at once (at most %d)", RT_MAX_SESSIONS);
    return NULL;
  }
  void *ud;
  lua_Alloc inner = lua_getallocf(L, &ud);
  lt_tracker *t = inner(ud, NULL, 0, sizeof *t);
  if (!t) {
    snprintf(msg, msglen, "out of memory");
    return NULL;
  }
  memset(t, 0, sizeof *t);
  t->inner = inner;
  t->inner_ud = ud;
  t->direct = LUA_VERSION_NUM == 504 && inner == default_allocator();
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  t->L = lua_tothread(L, -1);
  lua_pop(L, 1);
  t->main_block = (char *)t->L - LUA_EXTRASPACE; /* LG starts with LX: extra space, then the main thread */
  /* the core's small structures come from the allocator we wrap, outside Lua's accounting */
  rt_session_init(&t->s, &LUA_RUNTIME, opt, gcmode, inner, ud);
  t->tag_mask = 0;
  for (int k = 1; k < LT_CLS_COUNT; k++)
    if (!opt->class_mask || (opt->class_mask >> k & 1u)) t->tag_mask |= 1u << CLASS_TAG[k];

  rt_spec_text text;
  rt_spec_text_of(opt, &text);
  eph_meta_pair base[] = {
      {"runtime", "lua"},
      {"lua", LUA_RELEASE},
      {"gc", t->s.gcmode},
      {"mode", "gc"},
      {"sample", text.sample},
      {"spec", text.spec},
      {"clock", "bytes = bytes Lua allocated since the profiler attached (new blocks + growth)"},
      {"cycles", "full_gcs = Lua GC cycles completed (incremental cycles, or minor and major generational "
                 "collections); scavenges unused"},
      {"death", "freed = Lua's collector freed it; censored = still alive at lua_close or exit"},
  };
  size_t nb = sizeof base / sizeof base[0];
  eph_meta_pair all[32];
  size_t n = 0;
  for (size_t i = 0; i < nb; i++) all[n++] = base[i];
  if (opt->sites && opt->stacks) all[n++] = (eph_meta_pair){"stacks", text.stacks}; /* the STAK feature flag */
  for (size_t i = 0; i < nmeta && n < 32; i++) all[n++] = meta[i];
  if (!rt_session_open(&t->s, all, n, msg, msglen)) {
    inner(ud, t, sizeof *t, 0);
    return NULL;
  }
  /* the main block is marked so that its free (the end of lua_close)
   * reaches the allocator's slow path */
  if (!rt_mark(&t->s, t->main_block)) {
    snprintf(msg, msglen, "cannot map the profiler's tables: out of memory");
    rt_session_abort(&t->s);
    inner(ud, t, sizeof *t, 0);
    return NULL;
  }
  t->s.heap = t->s.peak_heap = (int64_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (int64_t)lua_gc(L, LUA_GCCOUNTB, 0);
  lt_site_cache_init(t);
  bool from_state = lt_gcstate_attach(t, L);
  bool was = rt_internal_begin(&t->s);
  t->installed = lt_alloc_for(t);
  lua_setallocf(L, t->installed, t);
  if (!from_state) lt_gccount_attach(t, L);
  rt_internal_end(&t->s, was);
  rt_session_register(&t->s);
  return t;
}

/* --- the end ---------------------------------------------------------------------- */

static void censor(rt_session *s, void *obj, void *unused) {
  (void)unused;
  lt_tracker *t = lt_of(s);
  if (obj != t->main_block) lt_emit(t, obj, EPH_DEATH_CENSORED);
}

/* The samples still allocated, censored (the core's rt_finish: the state is open). */
static void censor_live(rt_session *s) { rt_marks_each(s, censor, NULL); }

void *lt_final_free(lt_tracker *t, void *ptr, size_t osize) {
  lua_Alloc inner = t->inner;
  void *ud = t->inner_ud;
  rt_begin_close(&t->s);
  char msg[1600];
  if (rt_finish(&t->s, true, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
  rt_session_release(&t->s);
  inner(ud, t, sizeof *t, 0);
  return inner(ud, ptr, osize, 0);
}

void lt_release(lt_tracker *t, bool state_open) {
  if (!state_open) return; /* freed by lt_final_free */
  void *ud;
  lua_Alloc cur = lua_getallocf(t->L, &ud);
  lt_gccount_detach(t, t->L);
  if (cur == t->installed && ud == t && t->s.live == 0) {
    lua_setallocf(t->L, t->inner, t->inner_ud);
    rt_session_release(&t->s);
    t->inner(t->inner_ud, t, sizeof *t, 0);
  }
  /* else: someone chained onto us, or samples still carry our header: t
   * stays as a pass-through (it frees those blocks whole) until lua_close */
}

/* --- the collector advice, after the core's summary --------------------------------- */

static void advice(const rt_session *s, FILE *out) {
  eph_lua_advice adv =
      eph_lua_advice_compute(s->survived_hist[0], s->survived_hist[1], s->freed_weight, s->censored_weight);
  /* a hypothesis to check with --gc */
  fprintf(out, "  advice (a hypothesis; compare wall times with `ephemera lua --gc ...`):\n");
  const char *text = eph_lua_advice_text(adv.kind);
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    fprintf(out, "    %.*s\n", len, line);
    line = nl ? nl + 1 : NULL;
  }
}
