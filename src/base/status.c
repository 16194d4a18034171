/*
 * status.c — status names and filling an eph_error (ephemera/base.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "ephemera/base.h"

const char *eph_status_name(eph_status s) {
  switch (s) {
    case EPH_OK: return "ok";
    case EPH_ERR_NOMEM: return "out of memory";
    case EPH_ERR_HEAP_EXHAUSTED: return "heap exhausted";
    case EPH_ERR_INVALID: return "invalid argument";
    case EPH_ERR_TOO_LARGE: return "object too large";
    case EPH_ERR_CORRUPT: return "heap corrupt";
    case EPH_ERR_IO: return "I/O error";
  }
  return "unknown status";
}

void eph_error_fill(eph_error *err, eph_status st, const char *fmt, ...) {
  if (!err) return;
  err->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}
