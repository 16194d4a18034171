/*
 * ephemera/base.h — what every Ephemera library shares and needs nothing:
 * the status codes, the one-line error, and the export macro.
 *
 * The layers (docs/architecture.md): base → heap → sampling → profiler /
 * Lua adapter → format → analysis / simulator → tune / bench → renderers →
 * CLI.  The format library needs only this header (and gc_event.h), so a
 * reader of .eph files links without the heap.
 */
#ifndef EPHEMERA_BASE_H
#define EPHEMERA_BASE_H

#ifdef __cplusplus
extern "C" {
#endif

/* EPH_API marks the public API: the libraries and the Lua module are
 * built with -fvisibility=hidden, so only what carries it is exported.  A
 * public header puts its declarations between EPH_API_BEGIN and
 * EPH_API_END, which marks them all. */
#if defined(__GNUC__)
#define EPH_API __attribute__((visibility("default")))
#define EPH_API_BEGIN _Pragma("GCC visibility push(default)")
#define EPH_API_END _Pragma("GCC visibility pop")
#else
#define EPH_API
#define EPH_API_BEGIN
#define EPH_API_END
#endif

typedef enum eph_status {
  EPH_OK = 0,
  EPH_ERR_NOMEM,          /* the OS refused memory (mmap/malloc failed) */
  EPH_ERR_HEAP_EXHAUSTED, /* the maximum heap size would be exceeded */
  EPH_ERR_INVALID,        /* a bad argument: unknown key, bad value, bad class */
  EPH_ERR_TOO_LARGE,      /* an object larger than EPH_MAX_PAYLOAD_BYTES */
  EPH_ERR_CORRUPT,        /* the verifier found a broken invariant */
  EPH_ERR_IO              /* a file could not be created, written or closed */
} eph_status;

/* A status with a one-line message saying what went wrong. */
typedef struct eph_error {
  eph_status status;
  char message[256];
} eph_error;

/* Static name of a status ("heap exhausted", ...); never NULL. */
EPH_API const char *eph_status_name(eph_status s);

/* Fills err (if not NULL) with a status and a printf-style message,
 * truncated to fit. */
EPH_API void eph_error_fill(eph_error *err, eph_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif /* EPHEMERA_BASE_H */
