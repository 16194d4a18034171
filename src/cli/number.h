/*
 * number.h — the CLI's one strict number parser.  Every numeric option of
 * every command goes through it, so that `--seed -1`, `--head 1x` or
 * `--z nan` are refused the same way everywhere.
 *
 * Strict means: the whole text is the number (no leading space or sign,
 * nothing after it but the unit the kind allows), no overflow, and the
 * value lies in [min, max].  Pure functions: no printing, no allocation.
 */
#ifndef EPH_CLI_NUMBER_H
#define EPH_CLI_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cli_number_kind {
  CLI_COUNT, /* decimal digits: 0, 42 */
  CLI_SIZE,  /* bytes: digits with an optional K, M or G (x1024, 1024^2, 1024^3), optionally KiB/KB, or B */
} cli_number_kind;

/*
 * Parses text as an unsigned integer of the given kind within [min, max].
 * Returns true and sets *out; on failure returns false, leaves *out alone
 * and writes what was expected into why (e.g. "an integer from 1 to 100").
 */
bool cli_number_u64(const char *text, cli_number_kind kind, uint64_t min, uint64_t max, uint64_t *out, char *why,
                    size_t whylen);

/*
 * Parses text as a finite decimal number within [min, max] (nan, inf,
 * hex floats and trailing characters are refused).  allow_percent: a
 * trailing '%' is accepted (and ignored: the number is already in %).
 * Returns true and sets *out, or false with why filled.
 */
bool cli_number_double(const char *text, double min, double max, bool allow_percent, double *out, char *why,
                       size_t whylen);

#endif
