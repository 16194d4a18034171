/*
 * cmd_dump.c — `ephemera dump FILE [--csv|--json]`: an .eph file as text,
 * CSV (one row per record) or one JSON document.
 *
 * A malformed file is one line `ephemera: FILE: <problem at byte N>` and
 * exit 1; a truncated one (a killed run) prints what it holds, warns on
 * stderr, and exits 0.
 *
 * Records are never all held (a profile at 100 % sampling has tens of
 * millions, 112 bytes each loaded): a first read checks the whole file
 * and takes the tables, counts and the first records; CSV and JSON then
 * read it again and print each chunk's records as they are decoded.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ephemera/format.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera dump FILE [--csv | --json] [--head N]\n"
          "  (default)  a summary: metadata, tables, counts by death kind, the first records\n"
          "  --csv      a header row and one row per record\n"
          "  --json     one JSON document: meta, classes, sites, records, gcs, totals\n"
          "  --head N   records shown by the summary (default 10)\n");
}

static const char *const DEATH_NAMES[] = {"?", "finalized", "scavenge", "full_gc", "censored", "exact", "freed"};

static const char *death_name(unsigned k) { return k < sizeof DEATH_NAMES / sizeof *DEATH_NAMES ? DEATH_NAMES[k] : "?"; }

static const char *class_name(const eph_file *p, uint32_t id) {
  return id < p->nclasses && p->class_names[id] ? p->class_names[id] : "";
}

static const eph_site_entry *site_of(const eph_file *p, uint32_t id) {
  return id && id < p->nsites && p->sites[id].file ? &p->sites[id] : NULL;
}

/* death - birth as a signed number (a malformed record could go backwards). */
static void print_diff(FILE *out, uint64_t birth, uint64_t death) {
  if (death >= birth) fprintf(out, "%" PRIu64, death - birth);
  else fprintf(out, "-%" PRIu64, birth - death);
}

/* --- text ------------------------------------------------------------------------- */

/* What the first read gathers of the records. */
typedef struct record_scan {
  size_t head;        /* records to keep */
  eph_record *first;  /* the first head of them */
  size_t nfirst;
  uint64_t by_kind[8];
  double weighted;
} record_scan;

static bool scan_records(void *ctx, const eph_record *r, size_t n) {
  record_scan *sc = ctx;
  for (size_t i = 0; i < n; i++) {
    sc->by_kind[r[i].death_kind & 7]++;
    sc->weighted += r[i].weight;
  }
  size_t take = sc->head - sc->nfirst < n ? sc->head - sc->nfirst : n;
  if (take) {
    eph_record *f = realloc(sc->first, (sc->nfirst + take) * sizeof *f);
    if (!f) return false;
    memcpy(f + sc->nfirst, r, take * sizeof *f);
    sc->first = f;
    sc->nfirst += take;
  }
  return true;
}

static const char *record_class(const eph_file *p, const eph_record *r) {
  return r->class_id ? class_name(p, r->class_id) : "-";
}

/* The record's site as file:line:function ("-" if none) into buf; returns
 * its length as shown (cut to the buffer). */
static int record_site(const eph_file *p, const eph_record *r, char *buf, size_t size) {
  const eph_site_entry *s = site_of(p, r->site_id);
  int n = s ? snprintf(buf, size, "%s:%d:%s", s->file, s->line, s->function) : snprintf(buf, size, "-");
  return n < (int)size ? n : (int)size - 1;
}

static void dump_text(FILE *out, const char *path, const eph_file *p, const record_scan *sc) {
  fprintf(out, "%s: .eph version %u, %s, %" PRIu64 " bytes read\n", path, (unsigned)p->version,
          p->complete ? "complete" : "INCOMPLETE (no closing chunk)", p->valid_bytes);
  fprintf(out, "metadata:\n");
  for (size_t i = 0; i < p->nmeta; i++) fprintf(out, "  %-10s %s\n", p->meta[i].key, p->meta[i].value);
  size_t ncls = 0, nsites = 0;
  for (size_t i = 0; i < p->nclasses; i++) ncls += p->class_names[i] != NULL;
  for (size_t i = 0; i < p->nsites; i++) nsites += p->sites[i].file != NULL;
  fprintf(out, "tables: %zu classes, %zu sites\n", ncls, nsites);
  fprintf(out, "records: %zu (standing for %.0f objects)\n", p->nrecords, sc->weighted);
  for (unsigned k = EPH_DEATH_FINALIZED; k <= EPH_DEATH_FREED; k++)
    if (sc->by_kind[k]) fprintf(out, "  %-10s %" PRIu64 "\n", death_name(k), sc->by_kind[k]);
  size_t full = 0;
  for (size_t i = 0; i < p->ngcs; i++) full += p->gcs[i].kind == EPH_GC_FULL;
  fprintf(out, "gcs: %zu (%zu scavenges, %zu full)\nevents: %zu\n", p->ngcs, p->ngcs - full, full, p->nevents);
  if (p->complete) {
    const eph_totals *t = &p->totals;
    fprintf(out,
            "totals: wall %" PRIu64 " ns, cpu %" PRIu64 " ns, gc %" PRIu64 " ns; allocated %" PRIu64 " bytes, %" PRIu64
            " objects;\n        %" PRIu64 " records (%" PRIu64 " censored); %" PRIu64 " scavenges, %" PRIu64
            " full GCs; peak heap %" PRIu64 " bytes\n",
            t->wall_ns, t->cpu_ns, t->gc_wall_ns, t->bytes_allocated, t->objects_allocated, t->records, t->censored,
            t->scavenges, t->full_gcs, t->peak_heap);
  }
  size_t n = sc->nfirst;
  if (!n) return;
  /* The class and site columns are as wide as their longest entry shown
   * (sites are full paths), so every row lines up under its header: one
   * pass for the widths, one to print. */
  char site[256];
  int class_w = (int)strlen("class"), site_w = (int)strlen("site");
  for (size_t i = 0; i < n; i++) {
    int cw = (int)strlen(record_class(p, &sc->first[i])), sw = record_site(p, &sc->first[i], site, sizeof site);
    class_w = cw > class_w ? cw : class_w;
    site_w = sw > site_w ? sw : site_w;
  }
  fprintf(out, "first %zu records:\n  %-10s %-*s %-*s %10s %8s %14s %14s %s\n", n, "id", class_w, "class", site_w,
          "site", "size", "weight", "birth(bytes)", "life(bytes)", "death");
  for (size_t i = 0; i < n; i++) {
    const eph_record *r = &sc->first[i];
    record_site(p, r, site, sizeof site);
    char life[32];
    if (r->death.bytes >= r->birth.bytes) snprintf(life, sizeof life, "%" PRIu64, r->death.bytes - r->birth.bytes);
    else snprintf(life, sizeof life, "-%" PRIu64, r->birth.bytes - r->death.bytes);
    fprintf(out, "  %-10" PRIu64 " %-*s %-*s %10" PRIu64 " %8g %14" PRIu64 " %14s %s\n", r->id, class_w,
            record_class(p, r), site_w, site, r->size, r->weight, r->birth.bytes, life, death_name(r->death_kind));
  }
}

/* --- CSV ---------------------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void csv_stamp(FILE *out, const eph_stamp *s) {
  fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32, s->bytes, s->wall_ns, s->scavenges, s->full_gcs);
}

static void csv_header(FILE *out) {
  fputs("id,class,site,size,weight", out);
  static const char *const stamps[] = {"birth", "death", "alive_until"};
  for (int i = 0; i < 3; i++) fprintf(out, ",%s_bytes,%s_wall_ns,%s_scavenges,%s_full_gcs", stamps[i], stamps[i], stamps[i], stamps[i]);
  fputs(",death_kind,censored,lifetime_bytes,lifetime_ns\n", out);
}

static void csv_record(FILE *out, const eph_file *p, const eph_record *r) {
  fprintf(out, "%" PRIu64 ",", r->id);
  csv_field(out, class_name(p, r->class_id));
  fputc(',', out);
  const eph_site_entry *s = site_of(p, r->site_id);
  if (s) {
    size_t n = strlen(s->file) + strlen(s->function) + 16;
    char *site = malloc(n);
    if (site) {
      snprintf(site, n, "%s:%d:%s", s->file, s->line, s->function);
      csv_field(out, site);
      free(site);
    }
  }
  fprintf(out, ",%" PRIu64 ",%.17g", r->size, r->weight);
  csv_stamp(out, &r->birth);
  csv_stamp(out, &r->death);
  csv_stamp(out, &r->alive_until);
  fprintf(out, ",%s,%d,", death_name(r->death_kind), r->death_kind == EPH_DEATH_CENSORED);
  print_diff(out, r->birth.bytes, r->death.bytes);
  fputc(',', out);
  print_diff(out, r->birth.wall_ns, r->death.wall_ns);
  fputc('\n', out);
}

/* --- JSON ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  size_t n;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
  else return 0;
  unsigned cp = c & (0x7f >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_str(FILE *out, const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', out);
  while (*s) {
    unsigned c = *s;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc((int)c, out);
      s++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default: fprintf(out, "\\u%04x", c);
      }
      s++;
    } else {
      size_t n = utf8_len(s);
      if (n) {
        fwrite(s, 1, n, out);
        s += n;
      } else {
        fputs("\\ufffd", out);
        s++;
      }
    }
  }
  fputc('"', out);
}

static void json_stamp(FILE *out, const char *name, const eph_stamp *s) {
  fprintf(out, ",\"%s\":{\"bytes\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"scavenges\":%" PRIu32 ",\"full_gcs\":%" PRIu32 "}",
          name, s->bytes, s->wall_ns, s->scavenges, s->full_gcs);
}

/* The document up to its records' array. */
static void json_head(FILE *out, const char *path, const eph_file *p) {
  fputs("{\"file\":", out);
  json_str(out, path);
  fprintf(out, ",\"version\":%u,\"complete\":%s,\"valid_bytes\":%" PRIu64 ",\"warning\":", (unsigned)p->version,
          p->complete ? "true" : "false", p->valid_bytes);
  if (p->warning[0]) json_str(out, p->warning);
  else fputs("null", out);
  fputs(",\n\"meta\":{", out);
  for (size_t i = 0; i < p->nmeta; i++) {
    if (i) fputc(',', out);
    json_str(out, p->meta[i].key);
    fputc(':', out);
    json_str(out, p->meta[i].value);
  }
  fputs("},\n\"classes\":[", out);
  bool first = true;
  for (size_t i = 0; i < p->nclasses; i++) {
    if (!p->class_names[i]) continue;
    fprintf(out, "%s{\"id\":%zu,\"name\":", first ? "" : ",", i);
    json_str(out, p->class_names[i]);
    fputc('}', out);
    first = false;
  }
  fputs("],\n\"sites\":[", out);
  first = true;
  for (size_t i = 0; i < p->nsites; i++) {
    const eph_site_entry *s = &p->sites[i];
    if (!s->file) continue;
    fprintf(out, "%s{\"id\":%zu,\"file\":", first ? "" : ",", i);
    json_str(out, s->file);
    fprintf(out, ",\"line\":%d,\"function\":", s->line);
    json_str(out, s->function);
    fputc('}', out);
    first = false;
  }
  fputs("],\n\"records\":[", out);
}

static void json_record(FILE *out, const eph_file *p, const eph_record *r, bool first) {
  fprintf(out, "%s\n{\"id\":%" PRIu64 ",\"class_id\":%" PRIu32 ",\"class\":", first ? "" : ",", r->id, r->class_id);
  if (r->class_id) json_str(out, class_name(p, r->class_id));
  else fputs("null", out);
  fprintf(out, ",\"site_id\":%" PRIu32 ",\"site\":", r->site_id);
  const eph_site_entry *s = site_of(p, r->site_id);
  if (s) {
    fputs("{\"file\":", out);
    json_str(out, s->file);
    fprintf(out, ",\"line\":%d,\"function\":", s->line);
    json_str(out, s->function);
    fputc('}', out);
  } else {
    fputs("null", out);
  }
  fprintf(out, ",\"size\":%" PRIu64 ",\"weight\":%.17g", r->size, r->weight);
  json_stamp(out, "birth", &r->birth);
  json_stamp(out, "death", &r->death);
  json_stamp(out, "alive_until", &r->alive_until);
  fprintf(out, ",\"death_kind\":\"%s\",\"censored\":%s,\"lifetime_bytes\":", death_name(r->death_kind),
          r->death_kind == EPH_DEATH_CENSORED ? "true" : "false");
  print_diff(out, r->birth.bytes, r->death.bytes);
  fputs(",\"lifetime_ns\":", out);
  print_diff(out, r->birth.wall_ns, r->death.wall_ns);
  fputc('}', out);
}

/* The document after its records. */
static void json_tail(FILE *out, const eph_file *p) {
  fputs("],\n\"gcs\":[", out);
  for (size_t i = 0; i < p->ngcs; i++) {
    const eph_gc_event *g = &p->gcs[i];
    fprintf(out,
            "%s\n{\"kind\":\"%s\",\"index\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
            ",\"cpu_ns\":%" PRIu64 ",\"allocated\":%" PRIu64 ",\"used_before\":%" PRIu64 ",\"used_after\":%" PRIu64
            ",\"bytes_copied\":%" PRIu64 ",\"bytes_promoted\":%" PRIu64 ",\"bytes_compacted\":%" PRIu64
            ",\"old_committed\":%" PRIu64 ",\"ephemerons_mourned\":%" PRIu64 "}",
            i ? "," : "", g->kind == EPH_GC_FULL ? "full" : "scavenge", g->index, g->start_ns, g->duration_ns,
            g->cpu_ns, g->allocated, g->used_before, g->used_after, g->bytes_copied, g->bytes_promoted,
            g->bytes_compacted, g->old_committed, g->ephemerons_mourned);
  }
  fprintf(out, "],\n\"events\":%zu,\n\"totals\":", p->nevents);
  if (p->complete) {
    const eph_totals *t = &p->totals;
    fprintf(out,
            "{\"wall_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"gc_wall_ns\":%" PRIu64 ",\"bytes_allocated\":%" PRIu64
            ",\"objects_allocated\":%" PRIu64 ",\"records\":%" PRIu64 ",\"censored\":%" PRIu64 ",\"scavenges\":%" PRIu64
            ",\"full_gcs\":%" PRIu64 ",\"peak_heap\":%" PRIu64 "}",
            t->wall_ns, t->cpu_ns, t->gc_wall_ns, t->bytes_allocated, t->objects_allocated, t->records, t->censored,
            t->scavenges, t->full_gcs, t->peak_heap);
  } else {
    fputs("null", out);
  }
  fputs("}\n", out);
}

/* The second read: each record printed as it is decoded, as many as the
 * first read found (a file still being written may have grown since). */
typedef struct record_printer {
  FILE *out;
  const eph_file *p; /* the first read's tables */
  bool json;
  size_t done, limit;
} record_printer;

static bool print_records(void *ctx, const eph_record *r, size_t n) {
  record_printer *pr = ctx;
  for (size_t i = 0; i < n && pr->done < pr->limit; i++, pr->done++) {
    if (pr->json) json_record(pr->out, pr->p, &r[i], pr->done == 0);
    else csv_record(pr->out, pr->p, &r[i]);
  }
  return true;
}

int cmd_dump(int argc, char **argv) {
  const char *path = NULL;
  enum { TEXT, CSV, JSON } fmt = TEXT;
  size_t head = 10;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--csv")) {
      fmt = CSV;
    } else if (!strcmp(a, "--json")) {
      fmt = JSON;
    } else if (!strcmp(a, "--head")) {
      char *end;
      if (i + 1 >= argc || (head = strtoull(argv[i + 1], &end, 10), *end || !*argv[i + 1])) {
        cli_error("dump: --head needs a number");
        return 2;
      }
      i++;
    } else if (a[0] == '-' && a[1]) {
      cli_error("dump: unknown option '%s' (try 'ephemera dump --help')", a);
      return 2;
    } else if (path) {
      cli_error("dump: one file at a time ('%s' and '%s')", path, a);
      return 2;
    } else {
      path = a;
    }
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  eph_file *p = NULL;
  eph_error err;
  memset(&err, 0, sizeof err);
  record_scan sc = {.head = fmt == TEXT ? head : 0};
  eph_record_sink scan = {scan_records, &sc};
  if (eph_file_load_with(path, &scan, &p, &err) != EPH_OK) {
    free(sc.first);
    cli_error("%s", err.message);
    return 1;
  }
  int rc = 0;
  if (fmt == TEXT) {
    dump_text(stdout, path, p, &sc);
  } else {
    if (fmt == CSV) csv_header(stdout);
    else json_head(stdout, path, p);
    record_printer pr = {stdout, p, fmt == JSON, 0, p->nrecords};
    eph_record_sink print = {print_records, &pr};
    eph_file *again = NULL;
    if (eph_file_load_with(path, &print, &again, &err) != EPH_OK || pr.done != p->nrecords) {
      cli_error("%s: changed while it was read (%s)", path, err.message[0] ? err.message : "fewer records");
      rc = 1;
    }
    eph_file_free(again);
    if (fmt == JSON) json_tail(stdout, p);
  }
  free(sc.first);
  if (p->warning[0] && !p->complete) cli_error("%s: warning: %s", path, p->warning);
  eph_file_free(p);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("dump: cannot write the output");
    return 1;
  }
  return rc;
}
