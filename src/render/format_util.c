/*
 * format_util.c — numbers and lifetimes as people read them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

const char *eph_clock_name(eph_clock c) {
  static const char *const n[] = {"bytes allocated", "wall time", "% of run"};
  return c < EPH_NCLOCKS ? n[c] : "?";
}

const char *eph_clock_unit(eph_clock c) {
  static const char *const n[] = {"bytes", "s", "%"};
  return c < EPH_NCLOCKS ? n[c] : "?";
}

const char *eph_fmt_life(char *buf, size_t len, double v, eph_clock c) {
  if (!isfinite(v)) {
    snprintf(buf, len, "-");
    return buf;
  }
  if (c == EPH_CLOCK_REL) {
    if (v == 0) snprintf(buf, len, "0 %%");
    else if (v < 0.01) snprintf(buf, len, "%.1e %%", v);
    else if (v < 10) snprintf(buf, len, "%.2f %%", v);
    else snprintf(buf, len, "%.1f %%", v);
  } else if (c == EPH_CLOCK_SECONDS) {
    if (v == 0) snprintf(buf, len, "0 s");
    else if (v < 1e-6) snprintf(buf, len, "%.0f ns", v * 1e9);
    else if (v < 1e-3) snprintf(buf, len, "%.1f us", v * 1e6);
    else if (v < 1) snprintf(buf, len, "%.1f ms", v * 1e3);
    else snprintf(buf, len, "%.2f s", v);
  } else {
    static const char *const u[] = {"B", "KB", "MB", "GB", "TB"};
    int k = 0;
    while (fabs(v) >= 1024 && k < 4) v /= 1024, k++;
    if (k == 0) snprintf(buf, len, "%.0f B", v);
    else snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, u[k]);
  }
  return buf;
}

const char *eph_fmt_count(char *buf, size_t len, double v) {
  if (!isfinite(v)) {
    snprintf(buf, len, "-");
    return buf;
  }
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%.0f", fabs(v));
  size_t n = strlen(tmp), o = 0;
  if (v < 0 && o + 1 < len) buf[o++] = '-';
  for (size_t i = 0; i < n && o + 2 < len; i++) {
    if (i && (n - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = tmp[i];
  }
  buf[o < len ? o : len - 1] = 0;
  return buf;
}

const char *eph_fmt_run_gc(char *buf, size_t len, const eph_analysis *a, const char *sep) {
  const eph_file *p = a->profile;
  size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__))
  buf[0] = '\0';
  if (isfinite(a->gc_share)) PUT("%s%.1f %% of wall time in GC", sep, 100 * a->gc_share);
  if (a->lua) { /* Lua's collector in its own words: cycles, untimed */
    if (!isfinite(a->gc_share)) PUT("%sGC time not measured", sep);
    if (p->complete)
      PUT(" (%" PRIu64 " cycles of Lua's collector%s%s)", p->totals.full_gcs, a->lua_gc ? ", " : "",
          a->lua_gc ? a->lua_gc : "");
  } else if (p->complete) {
    /* The profiler's stop ends with a full GC of its own (it finds the
     * last deaths), one more than the run itself reports. */
    if (p->totals.full_gcs == 1) PUT(" (%" PRIu64 " scavenges, 1 full GC: the profile's stop)", p->totals.scavenges);
    else
      PUT(" (%" PRIu64 " scavenges, %" PRIu64 " full GCs%s)", p->totals.scavenges, p->totals.full_gcs,
          p->totals.full_gcs ? ": the last is the profile's stop" : "");
  }
#undef PUT
  return buf;
}

eph_status eph_render_finish(FILE *f, bool close, const char *command, const char *what, eph_error *err) {
  bool failed = ferror(f) != 0;
  errno = 0;
  /* A failed write keeps its bytes in the buffer (glibc), so the flush
   * meets the error again and errno says why. */
  int rc = close ? fclose(f) : fflush(f);
  if (rc == 0 && !failed) return EPH_OK;
  eph_error_fill(err, EPH_ERR_IO, "%s: writing %s: %s", command, what, errno ? strerror(errno) : "an earlier write failed");
  return EPH_ERR_IO;
}
