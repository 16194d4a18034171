/*
 * render_dump.c — an .eph file as it is (`ephemera dump`): a text summary,
 * CSV (one row per record) or one JSON document (render.h).
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

#include "render.h"

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
  eph_csv_field(out, class_name(p, r->class_id), EPH_CSV_QUOTE_AS_NEEDED);
  fputc(',', out);
  const eph_site_entry *s = site_of(p, r->site_id);
  if (s) {
    size_t n = strlen(s->file) + strlen(s->function) + 16;
    char *site = malloc(n);
    if (site) {
      snprintf(site, n, "%s:%d:%s", s->file, s->line, s->function);
      eph_csv_field(out, site, EPH_CSV_QUOTE_AS_NEEDED);
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

static void json_stamp(FILE *out, const char *name, const eph_stamp *s) {
  fprintf(out, ",\"%s\":{\"bytes\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"scavenges\":%" PRIu32 ",\"full_gcs\":%" PRIu32 "}",
          name, s->bytes, s->wall_ns, s->scavenges, s->full_gcs);
}

/* The document up to its records' array. */
static void json_head(FILE *out, const char *path, const eph_file *p) {
  fputs("{\"file\":", out);
  eph_json_string(out, path);
  fprintf(out, ",\"version\":%u,\"complete\":%s,\"valid_bytes\":%" PRIu64 ",\"warning\":", (unsigned)p->version,
          p->complete ? "true" : "false", p->valid_bytes);
  if (p->warning[0]) eph_json_string(out, p->warning);
  else fputs("null", out);
  fputs(",\n\"meta\":{", out);
  for (size_t i = 0; i < p->nmeta; i++) {
    if (i) fputc(',', out);
    eph_json_string(out, p->meta[i].key);
    fputc(':', out);
    eph_json_string(out, p->meta[i].value);
  }
  fputs("},\n\"classes\":[", out);
  bool first = true;
  for (size_t i = 0; i < p->nclasses; i++) {
    if (!p->class_names[i]) continue;
    fprintf(out, "%s{\"id\":%zu,\"name\":", first ? "" : ",", i);
    eph_json_string(out, p->class_names[i]);
    fputc('}', out);
    first = false;
  }
  fputs("],\n\"sites\":[", out);
  first = true;
  for (size_t i = 0; i < p->nsites; i++) {
    const eph_site_entry *s = &p->sites[i];
    if (!s->file) continue;
    fprintf(out, "%s{\"id\":%zu,\"file\":", first ? "" : ",", i);
    eph_json_string(out, s->file);
    fprintf(out, ",\"line\":%d,\"function\":", s->line);
    eph_json_string(out, s->function);
    fputc('}', out);
    first = false;
  }
  fputs("],\n\"records\":[", out);
}

static void json_record(FILE *out, const eph_file *p, const eph_record *r, bool first) {
  fprintf(out, "%s\n{\"id\":%" PRIu64 ",\"class_id\":%" PRIu32 ",\"class\":", first ? "" : ",", r->id, r->class_id);
  if (r->class_id) eph_json_string(out, class_name(p, r->class_id));
  else fputs("null", out);
  fprintf(out, ",\"site_id\":%" PRIu32 ",\"site\":", r->site_id);
  const eph_site_entry *s = site_of(p, r->site_id);
  if (s) {
    fputs("{\"file\":", out);
    eph_json_string(out, s->file);
    fprintf(out, ",\"line\":%d,\"function\":", s->line);
    eph_json_string(out, s->function);
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

eph_status eph_dump_file(FILE *out, const char *path, eph_dump_format fmt, size_t head, eph_dump_result *res,
                         eph_error *err) {
  memset(res, 0, sizeof *res);
  eph_file *p = NULL;
  record_scan sc = {.head = fmt == EPH_DUMP_TEXT ? head : 0};
  eph_record_sink scan = {scan_records, &sc};
  eph_status st = eph_file_load_with(path, &scan, &p, err);
  if (st != EPH_OK) {
    free(sc.first);
    return st;
  }
  res->loaded = true;
  res->complete = p->complete;
  snprintf(res->warning, sizeof res->warning, "%s", p->complete ? "" : p->warning);
  if (fmt == EPH_DUMP_TEXT) {
    dump_text(out, path, p, &sc);
  } else {
    if (fmt == EPH_DUMP_CSV) csv_header(out);
    else json_head(out, path, p);
    record_printer pr = {out, p, fmt == EPH_DUMP_JSON, 0, p->nrecords};
    eph_record_sink print = {print_records, &pr};
    eph_file *again = NULL;
    eph_error e2 = {0};
    if (eph_file_load_with(path, &print, &again, &e2) != EPH_OK || pr.done != p->nrecords) {
      eph_error_fill(err, EPH_ERR_INVALID, "%s: changed while it was read (%s)", path,
                     e2.message[0] ? e2.message : "fewer records");
      st = EPH_ERR_INVALID;
    }
    eph_file_free(again);
    if (fmt == EPH_DUMP_JSON) json_tail(out, p);
  }
  free(sc.first);
  eph_file_free(p);
  return st;
}
