/*
 * escape.c — the one escaper of strings for CSV, JSON and HTML output
 * (render.h).  Names in a profile come from programs (class names, source
 * paths, Lua chunk names) and may hold any bytes: every escaper here walks
 * the string as UTF-8 and writes a byte that does not start a valid
 * sequence as U+FFFD, so no output is ever invalid UTF-8.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD in UTF-8 */

size_t eph_utf8_len(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  unsigned c = s[0];
  size_t n;
  unsigned min;
  if (c < 0x80) return c ? 1 : 0;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
  else return 0;
  unsigned cp = c & (0x7fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating 0 */
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/* Writes s as UTF-8, each invalid byte as bad (U+FFFD, as bytes or as
 * JSON's escape), passing each ASCII byte through put (which may escape it). */
static void put_utf8(FILE *out, const char *s, void (*put)(FILE *, unsigned char), const char *bad) {
  while (*s) {
    size_t n = eph_utf8_len(s);
    if (n == 1) put(out, (unsigned char)*s);
    else if (n) fwrite(s, 1, n, out);
    else fputs(bad, out);
    s += n ? n : 1;
  }
}

static void put_csv(FILE *out, unsigned char c) {
  if (c == '"') fputc('"', out);
  fputc(c, out);
}

void eph_csv_field(FILE *out, const char *s, eph_csv_quoting q) {
  s = s ? s : "";
  bool quote = q == EPH_CSV_QUOTE_ALWAYS || strpbrk(s, ",\"\r\n") != NULL;
  if (quote) fputc('"', out);
  put_utf8(out, s, put_csv, REPLACEMENT);
  if (quote) fputc('"', out);
}

static void put_json(FILE *out, unsigned char c) {
  switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    default:
      if (c < 0x20) fprintf(out, "\\u%04x", c);
      else fputc(c, out);
  }
}

void eph_json_string(FILE *out, const char *s) {
  fputc('"', out);
  put_utf8(out, s ? s : "", put_json, "\\ufffd");
  fputc('"', out);
}

static void put_html(FILE *out, unsigned char c) {
  switch (c) {
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '&': fputs("&amp;", out); break;
    case '"': fputs("&quot;", out); break;
    default: fputc(c, out);
  }
}

void eph_html_escape(FILE *out, const char *s) { put_utf8(out, s ? s : "", put_html, REPLACEMENT); }
