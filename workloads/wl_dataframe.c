/*
 * dataframe — loading a CSV file into a Pharo DataFrame: the program of
 * Illimani (Jordan Montaño et al., IWST 2023, §4) and FiLiP (ISMM 2024,
 * §4.3 and Table 4).
 *
 * The input is a synthetic CSV of N rows and 6 columns that follow a line
 * with some noise (FiLiP §4.3), generated in memory and deterministic from
 * the seed: an integer id, a fixed-point x with three decimals ("12.375"),
 * two 6-decimal measurements y and z linear in x, a category string, and an
 * integer count.  Loading follows Pharo's DataFrame reader:
 *
 *  1. Reading (NeoCSVReader): every line becomes a ByteString (nextLine);
 *     a ReadStream over it splits the fields into one ByteString each, kept
 *     in a record Array; the records go into an OrderedCollection.  These
 *     records live until the whole file has been converted.
 *  2. Type inference (DataTypeInductor), column by column: every cell is
 *     parsed to find the column's type.  A parse is `Number readFrom: cell
 *     readStream`: a ReadStream and a NumberParser per cell; a decimal
 *     "12.375" becomes 12375 * (10 raisedTo: -3), that is a Fraction 1/1000
 *     and the reduced product 99/8 — the short-lived Fractions of FiLiP's
 *     profile.  A column is Integer, Fraction (fixed point: at most 3
 *     decimals, kept exact), Float (more decimals) or String (not numbers).
 *  3. Conversion, record by record: each cell is parsed again and appended
 *     to its column's DataSeries — small integers, reduced Fractions, Floats
 *     (asFloat: a byte object with a double, since this heap has no
 *     immediate floats) or the field ByteStrings themselves.  A DataSeries
 *     keeps its values in an Array that grows by doubling, as an
 *     OrderedCollection's.
 *
 * Per row that makes 12 ReadStreams, 11 NumberParsers, 12 Fractions and a
 * line ByteString (short-lived), 6 field ByteStrings, a record Array and 2
 * Floats (long-lived): 45 objects, 27% / 24% / 27% / 16% / 2% — the
 * shares of FiLiP's Table 4 (27.9% Fraction, NumberParser and ReadStream,
 * 13.9% ByteString, 2.3% Array); `--class-counts` prints ours.
 *
 * The GC story is Illimani's: records and columns are long-lived, and the
 * big Arrays (the records' collection, then the six columns growing side by
 * side) sit in old space and are remembered while young values are stored
 * into them, so every scavenge rescans them whole: GC work grows with
 * (scavenges x column length), quadratically in the rows.  With the default
 * parameters (15 MB eden, ratio 0.33) `large` spends most of its time in
 * GC; Illimani's configuration 5 (--gc eden=300M,headroom=512M,shrink=512M,
 * ratio=10) scavenges 20 times less often and never needs a full GC.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum {
  C_DATAFRAME,
  C_SERIES,
  C_ORDERED,
  C_ARRAY,
  C_STRING,
  C_STREAM,
  C_PARSER,
  C_FRACTION,
  C_FLOAT,
  NCLASSES
};
static const wl_class classes[] = {
    [C_DATAFRAME] = {"DataFrame", EPH_FORMAT_POINTERS},
    [C_SERIES] = {"DataSeries", EPH_FORMAT_POINTERS},
    [C_ORDERED] = {"OrderedCollection", EPH_FORMAT_POINTERS},
    [C_ARRAY] = {"Array", EPH_FORMAT_POINTERS},
    [C_STRING] = {"ByteString", EPH_FORMAT_BYTES},
    [C_STREAM] = {"ReadStream", EPH_FORMAT_POINTERS},
    [C_PARSER] = {"NumberParser", EPH_FORMAT_POINTERS},
    [C_FRACTION] = {"Fraction", EPH_FORMAT_POINTERS},
    [C_FLOAT] = {"Float", EPH_FORMAT_BYTES},
};

/* Slots of the heap classes. */
enum { DF_NAMES, DF_COLUMNS, DF_ROWS, DF_SLOTS };                 /* DataFrame */
enum { DS_NAME, DS_TYPE, DS_VALUES, DS_SLOTS };                   /* DataSeries */
enum { OC_ARRAY, OC_TALLY, OC_SLOTS };                            /* OrderedCollection */
enum { RS_COLLECTION, RS_POSITION, RS_LIMIT, RS_SLOTS };          /* ReadStream */
enum { FR_NUMERATOR, FR_DENOMINATOR, FR_SLOTS };                  /* Fraction */
enum {                                                            /* NumberParser (Pharo's SqNumberParser) */
  NP_STREAM, NP_BASE, NP_NEG, NP_INTEGER, NP_FRACTION, NP_EXPONENT, NP_SCALE,
  NP_DIGITS, NP_LAST_NON_ZERO, NP_REQUESTOR, NP_FAIL_BLOCK, NP_DEFAULT_BASE, NP_SLOTS
};

/* Column types the inductor assigns. */
enum { T_INTEGER, T_FRACTION, T_FLOAT, T_STRING };
static const char *const type_names[] = {"Integer", "Fraction", "Float", "String"};

#define NCOLS 6
static const char *const column_names[NCOLS] = {"id", "x", "y", "z", "category", "count"};
static const int expected_types[NCOLS] = {T_INTEGER, T_FRACTION, T_FLOAT, T_FLOAT, T_STRING, T_INTEGER};
#define MAX_SCALE 9          /* decimals the parser accepts */
#define FIXED_POINT_SCALE 3  /* columns with at most this many decimals stay exact */

typedef struct df_options {
  bool class_counts;
} df_options;

/* The loader's state: the context and its own per-class allocation counts. */
typedef struct df_loader {
  wl_ctx *w;
  uint64_t count[NCLASSES], bytes[NCLASSES];
} df_loader;

static inline size_t object_bytes(size_t payload) { return 8 + ((payload + 7) & ~(size_t)7); }

/* Allocation with the caller's site, counted per class. */
#define DF_NEW(d, ci, nslots) \
  ((d)->count[ci]++, (d)->bytes[ci] += object_bytes(8 * (size_t)(nslots)), WL_NEW((d)->w, ci, nslots))
#define DF_NEW_BYTES(d, ci, n) \
  ((d)->count[ci]++, (d)->bytes[ci] += object_bytes(n), WL_NEW_BYTES((d)->w, ci, n))

static inline intptr_t int_at(eph_value obj, size_t i) { return eph_int_value(eph_slot(obj, i)); }

/* --- the input: a deterministic CSV ----------------------------------------- */

typedef struct df_row {
  int64_t id, x_milli, y_micro, z_micro, count; /* x = x_milli / 1000, y and z in millionths */
  char category[24];
} df_row;

static const char *const words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                                    "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"};

/* Row i of the file: x grows linearly, y and z follow x with noise. */
static void generate_row(wl_rng *r, uint64_t i, df_row *row) {
  row->id = (int64_t)i + 1;
  row->x_milli = (int64_t)i * 125 + (int64_t)wl_rng_below(r, 2001) - 1000;
  double x = (double)row->x_milli / 1000.0;
  row->y_micro = llround((2.5 * x + 10.0 + 3.0 * wl_rng_normal(r)) * 1e6);
  row->z_micro = llround((-0.75 * x + 100.0 + 5.0 * wl_rng_normal(r)) * 1e6);
  row->count = llround(0.02 * x + 4.0 * wl_rng_normal(r));
  snprintf(row->category, sizeof row->category, "%s-%u", words[wl_rng_below(r, 16)],
           (unsigned)wl_rng_below(r, 1000));
}

static char *put_int(char *p, int64_t v) {
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  if (v < 0) *p++ = '-';
  do tmp[n++] = (char)('0' + u % 10), u /= 10;
  while (u);
  while (n) *p++ = tmp[--n];
  return p;
}

/* value / 10^scale with exactly `scale` decimals. */
static char *put_fixed(char *p, int64_t value, int scale) {
  uint64_t u = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value, unit = 1;
  for (int i = 0; i < scale; i++) unit *= 10;
  if (value < 0) *p++ = '-';
  p = put_int(p, (int64_t)(u / unit));
  *p++ = '.';
  uint64_t frac = u % unit;
  for (uint64_t d = unit / 10; d; d /= 10) *p++ = (char)('0' + frac / d % 10);
  return p;
}

/* One CSV line (no newline); returns its length. */
static size_t format_row(const df_row *row, char *buf) {
  char *p = put_int(buf, row->id);
  *p++ = ',';
  p = put_fixed(p, row->x_milli, 3);
  *p++ = ',';
  p = put_fixed(p, row->y_micro, 6);
  *p++ = ',';
  p = put_fixed(p, row->z_micro, 6);
  *p++ = ',';
  size_t n = strlen(row->category);
  memcpy(p, row->category, n);
  p += n;
  *p++ = ',';
  p = put_int(p, row->count);
  return (size_t)(p - buf);
}

static size_t format_header(char *buf) {
  char *p = buf;
  for (int c = 0; c < NCOLS; c++) {
    if (c) *p++ = ',';
    size_t n = strlen(column_names[c]);
    memcpy(p, column_names[c], n);
    p += n;
  }
  return (size_t)(p - buf);
}

/* --- OrderedCollection: an Array that grows by doubling ---------------------- */

static eph_value new_ordered(df_loader *d, size_t capacity) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, oc);
  oc = DF_NEW(d, C_ORDERED, OC_SLOTS);
  eph_value array = DF_NEW(d, C_ARRAY, capacity);
  eph_store(h, oc, OC_ARRAY, array);
  eph_store(h, oc, OC_TALLY, eph_int(0));
  EPH_RETURN(h, oc);
}

static void ordered_add(df_loader *d, eph_value oc, eph_value v) {
  eph_heap *h = d->w->h;
  size_t n = (size_t)int_at(oc, OC_TALLY);
  eph_value array = eph_slot(oc, OC_ARRAY);
  if (n == eph_slot_count(array)) {
    EPH_FRAME(h);
    EPH_ROOT(h, oc);
    EPH_ROOT(h, v);
    eph_value bigger = DF_NEW(d, C_ARRAY, n ? 2 * n : 8);
    array = eph_slot(oc, OC_ARRAY);
    for (size_t i = 0; i < n; i++) eph_store(h, bigger, i, eph_slot(array, i));
    eph_store(h, oc, OC_ARRAY, bigger);
    array = bigger;
    EPH_UNFRAME(h);
  }
  eph_store(h, array, n, v);
  eph_store(h, oc, OC_TALLY, eph_int((intptr_t)n + 1));
}

static size_t ordered_size(eph_value oc) { return (size_t)int_at(oc, OC_TALLY); }
static eph_value ordered_at(eph_value oc, size_t i) { return eph_slot(eph_slot(oc, OC_ARRAY), i); }

/* --- ReadStream ------------------------------------------------------------- */

static eph_value new_stream(df_loader *d, eph_value collection) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, collection);
  eph_value s = DF_NEW(d, C_STREAM, RS_SLOTS);
  eph_store(h, s, RS_COLLECTION, collection);
  eph_store(h, s, RS_POSITION, eph_int(0));
  eph_store(h, s, RS_LIMIT, eph_int((intptr_t)eph_size_bytes(collection)));
  EPH_RETURN(h, s);
}

static bool stream_at_end(eph_value s) { return int_at(s, RS_POSITION) >= int_at(s, RS_LIMIT); }

static int stream_peek(eph_value s) {
  if (stream_at_end(s)) return -1;
  return eph_bytes(eph_slot(s, RS_COLLECTION))[int_at(s, RS_POSITION)];
}

static void stream_skip(eph_heap *h, eph_value s) { eph_store(h, s, RS_POSITION, eph_int(int_at(s, RS_POSITION) + 1)); }

/* stream upTo: $, — the next field as a new ByteString. */
static eph_value stream_up_to(df_loader *d, eph_value s, int delimiter) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, s);
  size_t start = (size_t)int_at(s, RS_POSITION), limit = (size_t)int_at(s, RS_LIMIT), end = start;
  const uint8_t *bytes = eph_bytes(eph_slot(s, RS_COLLECTION));
  while (end < limit && bytes[end] != delimiter) end++;
  eph_value field = DF_NEW_BYTES(d, C_STRING, end - start);
  memcpy(eph_bytes(field), eph_bytes(eph_slot(s, RS_COLLECTION)) + start, end - start);
  eph_store(h, s, RS_POSITION, eph_int((intptr_t)(end < limit ? end + 1 : end)));
  EPH_RETURN(h, field);
}

/* --- phase 1: reading records ----------------------------------------------- */

/* A line split into a record Array of field ByteStrings. */
static eph_value read_record(df_loader *d, const char *text, size_t len) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, stream);
  EPH_LOCAL(h, record);
  eph_value line = DF_NEW_BYTES(d, C_STRING, len);
  memcpy(eph_bytes(line), text, len);
  stream = new_stream(d, line);
  record = DF_NEW(d, C_ARRAY, NCOLS);
  for (size_t c = 0; c < NCOLS; c++) {
    eph_value field = stream_up_to(d, stream, ',');
    eph_store(h, record, c, field);
  }
  EPH_RETURN(h, record);
}

static eph_value read_records(df_loader *d, uint64_t nrows) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, rows);
  wl_rng rng;
  wl_rng_seed(&rng, d->w->seed);
  rows = new_ordered(d, 8);
  char buf[256];
  for (uint64_t i = 0; i < nrows; i++) {
    df_row row;
    generate_row(&rng, i, &row);
    eph_value record = read_record(d, buf, format_row(&row, buf));
    ordered_add(d, rows, record);
  }
  EPH_RETURN(h, rows);
}

/* --- phase 2: NumberParser, the inductor, the conversion ------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static eph_value new_fraction(df_loader *d, int64_t numerator, int64_t denominator) {
  eph_heap *h = d->w->h;
  eph_value f = DF_NEW(d, C_FRACTION, FR_SLOTS);
  eph_store(h, f, FR_NUMERATOR, eph_int((intptr_t)numerator));
  eph_store(h, f, FR_DENOMINATOR, eph_int((intptr_t)denominator));
  return f;
}

/* Scans sign, integer part and decimals from the parser's stream into its
 * slots; false if the text is not a plain decimal number. */
static bool parser_scan(eph_heap *h, eph_value parser) {
  eph_value s = eph_slot(parser, NP_STREAM);
  bool neg = stream_peek(s) == '-';
  if (neg) stream_skip(h, s);
  int64_t integer = 0, fraction = 0;
  int digits = 0, scale = 0;
  while (stream_peek(s) >= '0' && stream_peek(s) <= '9' && digits < 18) {
    integer = integer * 10 + (stream_peek(s) - '0');
    digits++;
    stream_skip(h, s);
  }
  if (digits == 0) return false;
  if (stream_peek(s) == '.') {
    stream_skip(h, s);
    while (stream_peek(s) >= '0' && stream_peek(s) <= '9' && scale < MAX_SCALE && digits < 18) {
      fraction = fraction * 10 + (stream_peek(s) - '0');
      scale++;
      digits++;
      stream_skip(h, s);
    }
    if (scale == 0) return false;
  }
  if (!stream_at_end(s)) return false;
  eph_store(h, parser, NP_NEG, eph_bool(neg));
  eph_store(h, parser, NP_INTEGER, eph_int((intptr_t)integer));
  eph_store(h, parser, NP_FRACTION, eph_int((intptr_t)fraction));
  eph_store(h, parser, NP_SCALE, eph_int(scale));
  eph_store(h, parser, NP_DIGITS, eph_int(digits));
  return true;
}

/*
 * Number readFrom: field readStream — a small integer, a reduced Fraction
 * (or an integer when the decimals cancel), or EPH_NIL if the field is not
 * a number.  *scale receives the number of decimals.
 */
static eph_value parse_number(df_loader *d, eph_value field, int *scale) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, parser);
  EPH_LOCAL(h, unit);
  eph_value stream = new_stream(d, field);
  EPH_ROOT(h, stream);
  parser = DF_NEW(d, C_PARSER, NP_SLOTS);
  eph_store(h, parser, NP_STREAM, stream);
  eph_store(h, parser, NP_BASE, eph_int(10));
  eph_store(h, parser, NP_DEFAULT_BASE, eph_int(10));
  eph_store(h, parser, NP_EXPONENT, eph_int(0));
  if (!parser_scan(h, parser)) EPH_RETURN(h, EPH_NIL);
  *scale = (int)int_at(parser, NP_SCALE);
  int64_t sign = eph_slot(parser, NP_NEG) == EPH_TRUE ? -1 : 1;
  int64_t integer = int_at(parser, NP_INTEGER);
  if (*scale == 0) EPH_RETURN(h, eph_int((intptr_t)(sign * integer)));
  /* mantissa * (10 raisedTo: scale negated): a Fraction, then the reduced product */
  int64_t power = 1;
  for (int i = 0; i < *scale; i++) power *= 10;
  unit = new_fraction(d, 1, power);
  int64_t mantissa = sign * (integer * power + int_at(parser, NP_FRACTION));
  int64_t numerator = mantissa * int_at(unit, FR_NUMERATOR), denominator = int_at(unit, FR_DENOMINATOR);
  int64_t g = gcd64(numerator, denominator);
  numerator /= g;
  denominator /= g;
  if (denominator == 1) EPH_RETURN(h, eph_int((intptr_t)numerator));
  EPH_RETURN(h, new_fraction(d, numerator, denominator));
}

/* Fraction asFloat: a Float object. */
static eph_value as_float(df_loader *d, eph_value number) {
  double v = eph_is_int(number) ? (double)eph_int_value(number)
                                : (double)int_at(number, FR_NUMERATOR) / (double)int_at(number, FR_DENOMINATOR);
  eph_value f = DF_NEW_BYTES(d, C_FLOAT, sizeof v);
  memcpy(eph_bytes(f), &v, sizeof v);
  return f;
}

/* DataTypeInductor: parses every cell of column c to find its type. */
static int infer_type(df_loader *d, eph_value rows, size_t c) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, rows);
  int max_scale = 0;
  bool numeric = true;
  for (size_t i = 0, n = ordered_size(rows); i < n; i++) {
    int scale = 0;
    if (parse_number(d, eph_slot(ordered_at(rows, i), c), &scale) == EPH_NIL) numeric = false;
    else if (scale > max_scale) max_scale = scale;
  }
  EPH_UNFRAME(h);
  if (!numeric) return T_STRING;
  return max_scale == 0 ? T_INTEGER : max_scale <= FIXED_POINT_SCALE ? T_FRACTION : T_FLOAT;
}

static eph_value convert_cell(df_loader *d, eph_value field, int type) {
  int scale = 0;
  if (type == T_STRING) return field;
  eph_value v = parse_number(d, field, &scale);
  return type == T_FLOAT ? as_float(d, v) : v;
}

/* An empty DataSeries for column c of the given type. */
static eph_value new_series(df_loader *d, eph_value name, int type) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, name);
  EPH_LOCAL(h, series);
  series = DF_NEW(d, C_SERIES, DS_SLOTS);
  eph_store(h, series, DS_NAME, name);
  eph_store(h, series, DS_TYPE, eph_int(type));
  eph_value values = new_ordered(d, 8);
  eph_store(h, series, DS_VALUES, values);
  EPH_RETURN(h, series);
}

/* Converts the records row by row, each cell appended to its column. */
static void convert_rows(df_loader *d, eph_value rows, eph_value columns, const int types[NCOLS]) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, rows);
  EPH_ROOT(h, columns);
  for (size_t i = 0, n = ordered_size(rows); i < n; i++) {
    for (size_t c = 0; c < NCOLS; c++) {
      eph_value v = convert_cell(d, eph_slot(ordered_at(rows, i), c), types[c]);
      ordered_add(d, eph_slot(eph_slot(columns, c), DS_VALUES), v);
    }
  }
  EPH_UNFRAME(h);
}

/* DataFrame readFromCsv: the header and the records; the inductor types
 * each column; then the records are converted into the columns. */
static eph_value load(df_loader *d, uint64_t nrows) {
  eph_heap *h = d->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, frame);
  EPH_LOCAL(h, rows);
  EPH_LOCAL(h, columns);
  char buf[128];
  frame = DF_NEW(d, C_DATAFRAME, DF_SLOTS);
  eph_value names = read_record(d, buf, format_header(buf));
  eph_store(h, frame, DF_NAMES, names);
  rows = read_records(d, nrows);
  eph_store(h, frame, DF_ROWS, eph_int((intptr_t)ordered_size(rows)));
  int types[NCOLS];
  for (size_t c = 0; c < NCOLS; c++) types[c] = infer_type(d, rows, c);
  columns = DF_NEW(d, C_ARRAY, NCOLS);
  eph_store(h, frame, DF_COLUMNS, columns);
  for (size_t c = 0; c < NCOLS; c++) {
    eph_value series = new_series(d, eph_slot(eph_slot(frame, DF_NAMES), c), types[c]);
    eph_store(h, columns, c, series);
  }
  convert_rows(d, rows, columns, types);
  EPH_RETURN(h, frame);
}

/* --- the self-check ---------------------------------------------------------- */

typedef struct df_sums {
  int64_t id, x_milli, count;
  double y, z;
  uint64_t category_hash;
} df_sums;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t x = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < n; i++) x = (x ^ p[i]) * UINT64_C(0x100000001b3);
  return x;
}

/* The sums straight from the generator, without the heap. */
static void expected_sums(uint64_t seed, uint64_t nrows, df_sums *s, df_row samples[3]) {
  wl_rng rng;
  wl_rng_seed(&rng, seed);
  memset(s, 0, sizeof *s);
  for (uint64_t i = 0; i < nrows; i++) {
    df_row row;
    generate_row(&rng, i, &row);
    s->id += row.id;
    s->x_milli += row.x_milli;
    s->y += (double)row.y_micro / 1e6;
    s->z += (double)row.z_micro / 1e6;
    s->count += row.count;
    s->category_hash += fnv1a((const uint8_t *)row.category, strlen(row.category));
    if (i == 0) samples[0] = row;
    if (i == nrows / 2) samples[1] = row;
    if (i == nrows - 1) samples[2] = row;
  }
}

static eph_value column_values(eph_value frame, size_t c) {
  return eph_slot(eph_slot(eph_slot(frame, DF_COLUMNS), c), DS_VALUES);
}

/* Sum of a column of integers and reduced Fractions with denominators
 * dividing `unit`, in units of 1/unit; false on a malformed value. */
static bool exact_sum(eph_value values, int64_t unit, int64_t *sum) {
  *sum = 0;
  for (size_t i = 0, n = ordered_size(values); i < n; i++) {
    eph_value v = ordered_at(values, i);
    if (eph_is_int(v)) {
      *sum += eph_int_value(v) * unit;
      continue;
    }
    int64_t num = int_at(v, FR_NUMERATOR), den = int_at(v, FR_DENOMINATOR);
    if (den <= 1 || unit % den || gcd64(num, den) != 1) return false;
    *sum += num * (unit / den);
  }
  return true;
}

static double float_sum(eph_value values) {
  double sum = 0;
  for (size_t i = 0, n = ordered_size(values); i < n; i++) {
    double v;
    memcpy(&v, eph_bytes(ordered_at(values, i)), sizeof v);
    sum += v;
  }
  return sum;
}

static bool string_is(eph_value s, const char *text) {
  return eph_size_bytes(s) == strlen(text) && memcmp(eph_bytes(s), text, strlen(text)) == 0;
}

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static int check(wl_ctx *w, eph_value frame, uint64_t nrows) {
  df_sums e;
  df_row sample[3];
  expected_sums(w->seed, nrows, &e, sample);
  bool ok = (uint64_t)int_at(frame, DF_ROWS) == nrows;
  for (size_t c = 0; c < NCOLS; c++) {
    eph_value series = eph_slot(eph_slot(frame, DF_COLUMNS), c);
    ok &= int_at(series, DS_TYPE) == expected_types[c] && string_is(eph_slot(series, DS_NAME), column_names[c]);
    ok &= ordered_size(eph_slot(series, DS_VALUES)) == nrows;
  }
  if (!ok) return wl_check(w, false, "wrong shape: expected %llu rows of types Integer, Fraction, Float, Float, String, Integer",
                           (unsigned long long)nrows);
  int64_t id = 0, x_milli = 0, count = 0;
  ok &= exact_sum(column_values(frame, 0), 1, &id) && id == e.id;
  ok &= exact_sum(column_values(frame, 1), 1000, &x_milli) && x_milli == e.x_milli;
  ok &= exact_sum(column_values(frame, 5), 1, &count) && count == e.count;
  double y = float_sum(column_values(frame, 2)), z = float_sum(column_values(frame, 3));
  ok &= close_to(y, e.y) && close_to(z, e.z);
  eph_value categories = column_values(frame, 4);
  uint64_t hash = 0;
  for (size_t i = 0; i < nrows; i++) {
    eph_value s = ordered_at(categories, i);
    hash += fnv1a(eph_bytes(s), eph_size_bytes(s));
  }
  ok &= hash == e.category_hash;
  ok &= string_is(ordered_at(categories, 0), sample[0].category) &&
        string_is(ordered_at(categories, nrows / 2), sample[1].category) &&
        string_is(ordered_at(categories, nrows - 1), sample[2].category);
  double n = (double)nrows;
  return wl_check(w, ok, "%llu rows x %d columns (%s, %s, %s, %s, %s, %s); means x %.4f, y %.4f, z %.4f, count %.4f%s",
                  (unsigned long long)nrows, NCOLS, type_names[expected_types[0]], type_names[expected_types[1]],
                  type_names[expected_types[2]], type_names[expected_types[3]], type_names[expected_types[4]],
                  type_names[expected_types[5]], (double)x_milli / 1000.0 / n, y / n, z / n, (double)count / n,
                  ok ? "" : " — MISMATCH with the generator");
}

/* --- the descriptor ---------------------------------------------------------- */

static void print_class_counts(const df_loader *d) {
  static const struct { const char *name; double share; } filip[] = {
      {"Fraction", 27.9}, {"NumberParser", 27.9}, {"ReadStream", 27.9}, {"ByteString", 13.9}, {"Array", 2.3}};
  uint64_t total = 0, total_bytes = 0;
  for (size_t c = 0; c < NCLASSES; c++) total += d->count[c], total_bytes += d->bytes[c];
  printf("  allocations by class (FiLiP Table 4 in brackets):\n");
  for (size_t c = 0; c < NCLASSES; c++) {
    char paper[24] = "";
    for (size_t k = 0; k < sizeof filip / sizeof filip[0]; k++)
      if (!strcmp(filip[k].name, classes[c].name)) snprintf(paper, sizeof paper, "[%.1f%%]", filip[k].share);
    printf("    %-18s %12llu  %5.1f%% %-8s  %10.1f MiB  %5.1f%% of bytes\n", classes[c].name,
           (unsigned long long)d->count[c], total ? 100.0 * (double)d->count[c] / (double)total : 0.0, paper,
           (double)d->bytes[c] / 1048576.0, total_bytes ? 100.0 * (double)d->bytes[c] / (double)total_bytes : 0.0);
  }
  printf("    %-18s %12llu                   %10.1f MiB\n", "total", (unsigned long long)total,
         (double)total_bytes / 1048576.0);
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  const df_options *opt = w->options;
  df_loader *d = wl_calloc(w, 1, sizeof *d);
  if (!d) return wl_check(w, false, "out of memory");
  d->w = w;
  EPH_FRAME(h);
  EPH_LOCAL(h, frame);
  frame = load(d, w->size);
  int rc = check(w, frame, w->size);
  EPH_UNFRAME(h);
  if (opt && opt->class_counts) print_class_counts(d);
  wl_free(w, d);
  return rc;
}

static int parse_options(wl_ctx *w, int argc, char **argv) {
  df_options *opt = calloc(1, sizeof *opt);
  if (!opt) return -1;
  w->options = opt;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--class-counts")) {
      opt->class_counts = true;
    } else {
      fprintf(stderr, "dataframe: unknown option '%s' (known: --class-counts)\n", argv[i]);
      return -1;
    }
  }
  return 0;
}

const wl_workload wl_dataframe = {
    .name = "dataframe",
    .description = "Illimani/FiLiP: load a synthetic 6-column CSV into a Pharo-style DataFrame",
    .unit = "rows",
    .sizes = {.small = 400, .middle = 20000, .normal = 1000000, .large = 10000000},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "NumberParser",
    .options_help = "--class-counts  print allocations per class (and FiLiP's Table 4 shares) at the end",
    .options = (const wl_option[]){{"class-counts", WL_OPT_FLAG, 0, 0, NULL}, {NULL}},
    .parse_options = parse_options,
    .run = run,
};
