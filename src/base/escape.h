/*
 * escape.h — the one escaper of text from profiles, names and arguments into
 * CSV, JSON and HTML, for every layer that writes them (renderers, the
 * simulator's and the harness's output).  UTF-8 safe: a byte that starts no
 * valid UTF-8 sequence is written as U+FFFD, never raw.  Internal to the
 * libraries (not exported from libephemera.so).
 */
#ifndef EPH_BASE_ESCAPE_H
#define EPH_BASE_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence starting at s (1 for ASCII), or 0 if
 * *s is the terminating 0 or starts no valid sequence (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
size_t eph_utf8_len(const char *s);

typedef enum eph_csv_quoting {
  EPH_CSV_QUOTE_ALWAYS,   /* "name" */
  EPH_CSV_QUOTE_AS_NEEDED /* quoted only if it holds a comma, quote, CR or LF */
} eph_csv_quoting;
/* A CSV field (RFC 4180: quotes doubled); s NULL is "". */
void eph_csv_field(FILE *out, const char *s, eph_csv_quoting q);
/* A JSON string with its quotes: \" and \\, control characters as \u00XX,
 * invalid bytes as \ufffd; s NULL is "". */
void eph_json_string(FILE *out, const char *s);
/* HTML text: < > & " as entities. */
void eph_html_escape(FILE *out, const char *s);
/* All three write each byte that starts no valid UTF-8 sequence as U+FFFD. */

#endif
