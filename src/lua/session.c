/*
 * session.c — a tracker's life: the SPEC, attaching to a state (chaining
 * onto its allocator), finishing the profile (at the end of lua_close, at
 * process exit, or on request), and the summary with the collector advice.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "ephemera/spec.h"
#include "ephlua.h"
#include "lua_advice.h"

static const char *const CLASS_NAMES[LT_CLS_COUNT] = {
    NULL,       "short string", "long string", "table",  "Lua closure", "C closure",
    "userdata", "thread",       "upvalue",     "prototype", "string",   "function",
};
/* base type tag of each class */
static const uint8_t CLASS_TAG[LT_CLS_COUNT] = {0, 4, 4, 5, 6, 6, 7, 8, LT_TAG_UPVALUE, LT_TAG_PROTO, 4, 6};

/* --- options ----------------------------------------------------------------- */

void lt_options_init(lt_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->sample_every = 1;
  opt->seed = 1;
  opt->sites = true;
  snprintf(opt->out, sizeof opt->out, "ephemera.eph");
}

static bool parse_classes(lt_options *opt, const char *list, char *msg, size_t msglen) {
  uint32_t mask = 0;
  const char *c = list;
  while (*c) {
    const char *end = strchr(c, ',');
    size_t len = end ? (size_t)(end - c) : strlen(c);
    while (len && isspace((unsigned char)*c)) c++, len--;
    while (len && isspace((unsigned char)c[len - 1])) len--;
    bool found = false;
    for (int k = 1; k < LT_CLS_COUNT; k++) {
      if (strlen(CLASS_NAMES[k]) == len && !strncmp(c, CLASS_NAMES[k], len)) {
        found = true;
        mask |= 1u << k;
        if (k == LT_CLS_STRING) mask |= 1u << LT_CLS_SHORT_STRING | 1u << LT_CLS_LONG_STRING;
        if (k == LT_CLS_FUNCTION) mask |= 1u << LT_CLS_LUA_CLOSURE | 1u << LT_CLS_C_CLOSURE;
      }
    }
    if (!found && len) {
      snprintf(msg, msglen,
               "profile spec: classes: unknown Lua class '%.*s' (known: string, short string, long string, table, "
               "function, Lua closure, C closure, userdata, thread, upvalue, prototype)",
               (int)len, c);
      return false;
    }
    c += (end ? (size_t)(end - c) + 1 : strlen(c));
  }
  opt->class_mask = mask;
  return true;
}

bool lt_options_parse(lt_options *opt, const char *spec, char *msg, size_t msglen) {
  /* sites=on|off and stacks=N are ours; the rest is the heap profiler's syntax */
  char rest[2048] = "";
  bool sites = opt->sites, summary = opt->summary;
  unsigned stacks = opt->stacks;
  char buf[2048];
  if (strlen(spec) >= sizeof buf) {
    snprintf(msg, msglen, "profile spec too long");
    return false;
  }
  strcpy(buf, spec);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*item)) item++;
    if (!strncmp(item, "stacks=", 7)) {
      char *end;
      unsigned long d = strtoul(item + 7, &end, 10);
      if (end == item + 7 || *end || d > EPH_FORMAT_MAX_STACK + 1) {
        snprintf(msg, msglen, "profile spec: 'stacks': bad value '%s' (expected frames kept, 1..%d; 1 = the site alone)",
                 item + 7, EPH_FORMAT_MAX_STACK + 1);
        return false;
      }
      stacks = d > 1 ? (unsigned)d : 0;
      continue;
    }
    bool is_sites = !strncmp(item, "sites=", 6), is_summary = !strncmp(item, "summary=", 8);
    if (is_sites || is_summary) {
      const char *v = strchr(item, '=') + 1;
      bool on = !strcmp(v, "on");
      if (!on && strcmp(v, "off")) {
        snprintf(msg, msglen, "profile spec: '%s': bad value '%s' (expected on or off)",
                 is_sites ? "sites" : "summary", v);
        return false;
      }
      if (is_sites) sites = on;
      else summary = on;
      continue;
    }
    size_t n = strlen(rest);
    snprintf(rest + n, sizeof rest - n, "%s%s", n ? "," : "", item);
  }
  eph_profile_spec s;
  eph_profile_spec_init(&s);
  s.sample_every = opt->sample_every;
  s.sample_bytes = opt->sample_bytes;
  s.sample_fixed = opt->sample_fixed;
  s.seed = opt->seed;
  s.compress = opt->compress;
  snprintf(s.out, sizeof s.out, "%s", opt->out);
  eph_error err;
  if (eph_profile_spec_parse(&s, rest, &err) != EPH_OK) {
    snprintf(msg, msglen, "%s", err.message);
    return false;
  }
  if (s.mode != EPH_MODE_GC) {
    static const char *names[] = {"gc", "finalization", "merlin", "brute"};
    snprintf(msg, msglen,
             "profile spec: mode=%s does not apply to Lua: Lua's own collector reports each death through its "
             "allocator, which is mode=gc (leave mode out or write mode=gc)",
             (unsigned)s.mode < 4 ? names[s.mode] : "?");
    return false;
  }
  if (s.trace || s.granule) {
    snprintf(msg, msglen, "profile spec: %s does not apply to Lua (only mode=gc)", s.trace ? "trace" : "granule");
    return false;
  }
  lt_options o = *opt;
  if (s.classes[0] && !parse_classes(&o, s.classes, msg, msglen)) return false;
  o.sample_every = s.sample_every;
  o.sample_bytes = s.sample_bytes;
  o.sample_fixed = s.sample_fixed;
  o.seed = s.seed;
  o.compress = s.compress;
  o.sites = sites;
  o.stacks = stacks;
  o.summary = summary;
  snprintf(o.out, sizeof o.out, "%s", s.out);
  *opt = o;
  return true;
}

/* --- the trackers alive in this process (finished at exit) ------------------- */

#define LT_MAX_TRACKERS 64
static lt_tracker *trackers[LT_MAX_TRACKERS];
static int failures;

static void forget(lt_tracker *t) {
  for (int i = 0; i < LT_MAX_TRACKERS; i++)
    if (trackers[i] == t) trackers[i] = NULL;
}

static void at_exit(void) {
  for (int i = 0; i < LT_MAX_TRACKERS; i++) {
    lt_tracker *t = trackers[i];
    if (!t) continue;
    char msg[1600];
    /* the state is still open: its blocks are valid, the live samples are censored */
    if (lt_finish(t, false, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
    trackers[i] = NULL; /* t stays installed as a pass-through */
  }
}

int lt_failures(void) { return failures; }

/* --- SIGINT and SIGTERM ------------------------------------------------------------ */

bool lt_finish_on_signals(lt_tracker *t, bool over_handlers, char *msg, size_t msglen) {
  if (t->on_signals || t->finished) return true;
  if (!ephs_sigstop_hold(over_handlers, msg, msglen)) return false;
  t->on_signals = true;
  return true;
}

void lt_signal_stop(void) {
  for (int i = 0; i < LT_MAX_TRACKERS; i++) {
    lt_tracker *t = trackers[i];
    if (!t || !t->on_signals) continue;
    char msg[1600];
    /* the states are open: their blocks are valid, the live samples are censored (as at exit) */
    if (lt_finish(t, false, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
    trackers[i] = NULL; /* t stays installed as a pass-through */
  }
}

/* lt_finish's end: the last holder's release ends the process if a signal came. */
static void release_signals(lt_tracker *t) {
  if (!t->on_signals) return;
  t->on_signals = false;
  int sig = ephs_sigstop_pending();
  if (sig)
    fprintf(stderr, "ephemera: %s: lua profile %s finished: %llu records (%llu censored)\n", ephs_sigstop_name(sig),
            t->opt.out, (unsigned long long)t->records, (unsigned long long)t->censored);
  ephs_sigstop_release();
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

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

lt_tracker *lt_attach(lua_State *L, const lt_options *opt, const char *gcmode, const eph_meta_pair *meta,
                      size_t nmeta, char *msg, size_t msglen) {
  static bool registered;
  int slot = -1;
  for (int i = 0; i < LT_MAX_TRACKERS && slot < 0; i++)
    if (!trackers[i]) slot = i;
  if (slot < 0) {
    snprintf(msg, msglen, "too many Lua states profiled at once (at most %d)", LT_MAX_TRACKERS);
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
  t->opt = *opt;
  t->summary = opt->summary;
  snprintf(t->gcmode, sizeof t->gcmode, "%s", gcmode ? gcmode : "unknown");
  t->tag_mask = 0;
  for (int k = 1; k < LT_CLS_COUNT; k++)
    if (!opt->class_mask || (opt->class_mask >> k & 1u)) t->tag_mask |= 1u << CLASS_TAG[k];

  char sample[64], specbuf[200], stacks[16];
  if (opt->sample_bytes) snprintf(sample, sizeof sample, "bytes:%llu", (unsigned long long)opt->sample_bytes);
  else snprintf(sample, sizeof sample, "%s%llu", opt->sample_fixed ? "every:" : "1/",
                (unsigned long long)opt->sample_every);
  snprintf(specbuf, sizeof specbuf, "mode=gc,sample=%s,seed=%llu,sites=%s,stacks=%u", sample,
           (unsigned long long)opt->seed, opt->sites ? "on" : "off", opt->stacks ? opt->stacks : 1);
  snprintf(stacks, sizeof stacks, "%u", opt->sites ? opt->stacks : 0);
  eph_meta_pair base[] = {
      {"runtime", "lua"},
      {"lua", LUA_RELEASE},
      {"gc", t->gcmode},
      {"mode", "gc"},
      {"sample", sample},
      {"spec", specbuf},
      {"clock", "bytes = bytes Lua allocated since the profiler attached (new blocks + growth)"},
      {"cycles", "full_gcs = Lua GC cycles completed (incremental cycles, or minor and major generational "
                 "collections); scavenges unused"},
      {"death", "freed = Lua's collector freed it; censored = still alive at lua_close or exit"},
  };
  size_t nb = sizeof base / sizeof base[0];
  eph_meta_pair all[32];
  size_t n = 0;
  for (size_t i = 0; i < nb; i++) all[n++] = base[i];
  if (opt->sites && opt->stacks) all[n++] = (eph_meta_pair){"stacks", stacks}; /* the STAK feature flag */
  for (size_t i = 0; i < nmeta && n < 32; i++) all[n++] = meta[i];
  eph_error err;
  t->w = eph_writer_open(opt->out, all, n, opt->compress, &err);
  if (!t->w) {
    snprintf(msg, msglen, "%s", err.message);
    inner(ud, t, sizeof *t, 0);
    return NULL;
  }
  for (uint32_t k = 1; k < LT_CLS_COUNT; k++) eph_writer_class(t->w, k, CLASS_NAMES[k]);
  /* the main block is marked so that its free (the end of lua_close)
   * reaches the allocator's slow path */
  if (!lt_marks_init(t) || !lt_mark(t, t->main_block)) {
    snprintf(msg, msglen, "cannot map the profiler's tables: out of memory");
    lt_marks_free(t);
    eph_writer_close(t->w, NULL);
    inner(ud, t, sizeof *t, 0);
    return NULL;
  }
  t->t0_ns = t->fine_ns = lt_now_ns();
  t->cpu0_ns = cpu_ns();
  lt_clock_init(t);
  t->heap = t->peak_heap = (int64_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (int64_t)lua_gc(L, LUA_GCCOUNTB, 0);
  lt_sampler_init(t);
  lt_site_cache_init(t);
  bool from_state = lt_gcstate_attach(t, L);
  bool was = lt_internal_begin(t);
  t->installed = lt_alloc_for(t);
  lua_setallocf(L, t->installed, t);
  if (!from_state) lt_gccount_attach(t, L);
  lt_internal_end(t, was);
  trackers[slot] = t;
  if (!registered) {
    registered = true;
    atexit(at_exit);
  }
  return t;
}

void lt_begin_close(lt_tracker *t) { t->closing = true; }

/* --- finish ---------------------------------------------------------------------- */

static void censor(lt_tracker *t, void *obj, void *unused) {
  (void)unused;
  if (obj != t->main_block) lt_emit(t, obj, EPH_DEATH_CENSORED);
}

int lt_finish(lt_tracker *t, bool state_closed, char *msg, size_t msglen) {
  if (t->finished) return 0;
  t->finished = true;
  bool was_closing = t->closing;
  t->closing = true;
  if (!state_closed && !t->detached) lt_marks_each(t, censor, NULL); /* their blocks are intact */
  t->closing = was_closing;
  lt_clock_free(t);
  lt_sites_free(t);
  lt_stacks_free(t);
  t->detached = true;
  t->countdown = INT64_MAX;
  eph_totals tot = {
      .wall_ns = lt_now_ns() - t->t0_ns,
      .cpu_ns = cpu_ns() - t->cpu0_ns,
      .bytes_allocated = t->bytes,
      .objects_allocated = t->objects - t->internal_objects,
      .records = t->records,
      .censored = t->censored,
      .full_gcs = t->cycles,
      .peak_heap = (uint64_t)lt_peak_heap(t),
  };
  int rc = 0;
  if (t->write_failed) {
    eph_writer_close(t->w, NULL);
    snprintf(msg, msglen, "lua profile: %s", t->error);
    rc = -1;
  } else if (eph_writer_close(t->w, &tot) != EPH_OK) {
    snprintf(msg, msglen, "lua profile: writing %s: %s", t->opt.out, eph_writer_error(NULL));
    rc = -1;
  }
  t->w = NULL;
  if (rc) failures++;
  if (t->summary) lt_summary(t, t->gcmode, stderr);
  release_signals(t);
  return rc;
}

void *lt_final_free(lt_tracker *t, void *ptr, size_t osize) {
  lua_Alloc inner = t->inner;
  void *ud = t->inner_ud;
  t->closing = true;
  char msg[1600];
  if (lt_finish(t, true, msg, sizeof msg) != 0) fprintf(stderr, "ephemera: %s\n", msg);
  forget(t);
  lt_marks_free(t);
  inner(ud, t, sizeof *t, 0);
  return inner(ud, ptr, osize, 0);
}

void lt_release(lt_tracker *t, bool state_open) {
  if (!state_open) return; /* freed by lt_final_free */
  void *ud;
  lua_Alloc cur = lua_getallocf(t->L, &ud);
  lt_gccount_detach(t, t->L);
  if (cur == t->installed && ud == t && t->live == 0) {
    lua_setallocf(t->L, t->inner, t->inner_ud);
    forget(t);
    lt_marks_free(t);
    t->inner(t->inner_ud, t, sizeof *t, 0);
  }
  /* else: someone chained onto us, or samples still carry our header: t
   * stays as a pass-through (it frees those blocks whole) until lua_close */
}

/* --- summary and advice ------------------------------------------------------------ */

static void human(char *buf, size_t n, double b) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int k = 0;
  while (b >= 1024 && k < 4) b /= 1024, k++;
  snprintf(buf, n, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

void lt_summary(const lt_tracker *t, const char *gcmode, FILE *out) {
  double total = t->freed_weight + t->censored_weight;
  fprintf(out, "ephemera: lua profile %s: %llu records (%llu censored) of %llu objects, %llu GC cycles (%s)\n",
          t->opt.out, (unsigned long long)t->records, (unsigned long long)t->censored,
          (unsigned long long)(t->objects - t->internal_objects), (unsigned long long)t->cycles, gcmode);
  if (t->dropped) fprintf(out, "ephemera: %llu samples dropped (out of memory)\n", (unsigned long long)t->dropped);
  if (total <= 0) return;
  fprintf(out, "  estimated objects by class (weighted):\n");
  for (int k = 1; k < LT_CLS_COUNT; k++)
    if (t->deaths_by_class[k])
      fprintf(out, "    %-13s %12.0f\n", CLASS_NAMES[k], t->weight_by_class[k]);
  /* the median lifetime in bytes, and the share dying before one young
   * generation's worth of allocation */
  double acc = 0, half = t->freed_weight / 2;
  int med = -1;
  for (int b = 0; b < 64 && t->freed_weight > 0; b++) {
    acc += t->life_hist[b];
    if (acc >= half) {
      med = b;
      break;
    }
  }
  eph_lua_advice adv =
      eph_lua_advice_compute(t->survived_hist[0], t->survived_hist[1], t->freed_weight, t->censored_weight);
  double share0 = adv.share0, share01 = adv.share01, cens = adv.censored;
  char medb[32], heap[32];
  human(medb, sizeof medb, med >= 0 ? (double)(UINT64_C(1) << med) : 0);
  human(heap, sizeof heap, (double)lt_peak_heap(t));
  fprintf(out,
          "  lifetimes: median about %s of allocation; %.0f%% die before the next GC cycle completes, %.0f%% "
          "within two;\n  %.0f%% live to the end (censored); peak heap %s\n",
          medb, 100 * share0, 100 * share01, 100 * cens, heap);
  /* advice: a hypothesis to check with --gc */
  fprintf(out, "  advice (a hypothesis; compare wall times with `ephemera lua --gc ...`):\n");
  const char *text = eph_lua_advice_text(adv.kind);
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    fprintf(out, "    %.*s\n", len, line);
    line = nl ? nl + 1 : NULL;
  }
}
