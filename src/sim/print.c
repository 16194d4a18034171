/*
 * print.c — simulation results as text, CSV or JSON.
 */
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"
#include "escape.h"

static void size_text(char *buf, size_t len, uint64_t v) {
  if (v && v % (1u << 30) == 0) snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
  else if (v && v % (1u << 20) == 0) snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
  else if (v && v % (1u << 10) == 0) snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
  else snprintf(buf, len, "%llu", (unsigned long long)v);
}

void eph_sim_config_label(const eph_sim_config *cfg, const eph_sim_result *res, char *buf, size_t len) {
  if (cfg->collector == EPH_SIM_SPUR) {
    char e[32], h[32], s[32];
    const eph_gc_params *p = &cfg->params;
    size_text(e, sizeof e, p->eden_bytes);
    size_text(h, sizeof h, p->growth_headroom);
    size_text(s, sizeof s, p->shrink_threshold);
    int n = snprintf(buf, len, "spur eden=%s,headroom=%s,shrink=%s,ratio=%g,tenure=%lu", e, h, s, p->gc_ratio,
                     p->tenure_age);
    if (p->max_heap && n > 0 && (size_t)n < len) {
      char m[32];
      size_text(m, sizeof m, p->max_heap);
      snprintf(buf + n, len - (size_t)n, ",max=%s", m);
    }
  } else {
    char h[32];
    uint64_t bytes = res ? res->heap_bytes : cfg->heap_bytes;
    if (bytes) size_text(h, sizeof h, bytes);
    else snprintf(h, sizeof h, "%gx", cfg->heap_factor);
    int n = snprintf(buf, len, "%s heap=%s", eph_sim_collector_name(cfg->collector), h);
    if (res && !cfg->heap_bytes && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " (%gx)", cfg->heap_factor);
  }
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }


static void print_text(FILE *out, const char *name, const eph_sim_input *in, const eph_sim_config *cfgs,
                       const eph_sim_result *res, size_t n, const eph_sim_costmodel *cm) {
  fprintf(out, "simulated %s: %s input, %llu objects, %.1f MiB allocated, max live %.1f MiB\n", name,
          eph_sim_input_kind_name(in->kind), (unsigned long long)in->objects, mib(in->bytes), mib(in->max_live));
  fputs(in->caveats, out);
  fprintf(out, "cost model: %s (fit error %.1f%% over %u collections)\n",
          cm->samples ? "fitted" : "built-in guess, not calibrated on this machine", 100 * cm->fit_error, cm->samples);
  for (size_t i = 0; i < n; i++) {
    const eph_sim_result *r = &res[i];
    char label[256];
    eph_sim_config_label(&cfgs[i], r, label, sizeof label);
    fprintf(out, "\n%s%s\n", label, r->exhausted ? "  (EXHAUSTED: the program does not fit)" : "");
    if (in->death_lo)
      fprintf(out, "  collections  %llu..%llu scavenges, %llu..%llu full GCs\n", (unsigned long long)r->early.scavenges,
              (unsigned long long)r->scavenges, (unsigned long long)r->early.full_gcs, (unsigned long long)r->full_gcs);
    else
      fprintf(out, "  collections  %llu scavenges, %llu full GCs\n", (unsigned long long)r->scavenges,
              (unsigned long long)r->full_gcs);
    fprintf(out, "  moved        %.2f MiB copied, %.2f MiB promoted, %.2f MiB marked, %.2f MiB compacted\n",
            mib(r->bytes_copied), mib(r->bytes_promoted), mib(r->bytes_marked), mib(r->bytes_compacted));
    fprintf(out, "  remembered   %llu insertions, %llu entries scanned\n", (unsigned long long)r->remembered,
            (unsigned long long)r->remembered_scanned);
    fprintf(out, "  work         %llu objects moved", (unsigned long long)r->objects_moved);
    if (r->input == EPH_SIM_INPUT_TRACE && r->collector == EPH_SIM_SPUR)
      fprintf(out, ", pointer slots scanned: %llu by scavenges (and %llu in the remembered set), %llu by full GCs\n",
              (unsigned long long)r->slots_scanned, (unsigned long long)r->remembered_slots,
              (unsigned long long)r->slots_traced);
    else
      fprintf(out, " (pointer slots estimated from the cost model's density)\n");
    fprintf(out, "  heap         peak committed %.2f MiB, peak used %.2f MiB, space-time %.3g MiB x MiB\n",
            mib(r->peak_committed), mib(r->peak_used), r->space_time / (1024.0 * 1024.0 * 1024.0 * 1024.0));
    fprintf(out, "  mark/cons    %.4f\n", r->mark_cons);
    if (r->gc_seconds_low != r->gc_seconds_high)
      fprintf(out, "  GC time      %.4f .. %.4f s predicted\n", r->gc_seconds_low, r->gc_seconds_high);
    else
      fprintf(out, "  GC time      %.4f s predicted\n", r->gc_seconds);
    for (size_t k = 0; k < r->nevents; k++) {
      const eph_sim_event *e = &r->events[k];
      fprintf(out, "    %-8s at %llu: copied %llu promoted %llu marked %llu compacted %llu remembered %llu, after %llu used of %llu\n",
              e->kind == EPH_GC_FULL ? "full" : "scavenge", (unsigned long long)e->allocated,
              (unsigned long long)e->copied, (unsigned long long)e->promoted, (unsigned long long)e->marked,
              (unsigned long long)e->compacted, (unsigned long long)e->remembered, (unsigned long long)e->heap_after,
              (unsigned long long)e->committed);
    }
  }
}

static void print_csv(FILE *out, const eph_sim_config *cfgs, const eph_sim_result *res, size_t n) {
  fputs("config,collector,input,scavenges,full_gcs,scavenges_early,full_gcs_early,bytes_allocated,bytes_copied,"
        "bytes_promoted,bytes_marked,bytes_compacted,remembered,peak_committed,peak_used,mark_cons,space_time,"
        "gc_seconds,gc_seconds_low,gc_seconds_high,exhausted,remembered_scanned,objects_moved,slots_scanned,"
        "remembered_slots,slots_traced\n",
        out);
  for (size_t i = 0; i < n; i++) {
    const eph_sim_result *r = &res[i];
    char label[256];
    eph_sim_config_label(&cfgs[i], r, label, sizeof label);
    fprintf(out, "\"%s\",%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%llu,%llu,%llu,%llu,%llu\n",
            label, eph_sim_collector_name(r->collector), eph_sim_input_kind_name(r->input),
            (unsigned long long)r->scavenges, (unsigned long long)r->full_gcs, (unsigned long long)r->early.scavenges,
            (unsigned long long)r->early.full_gcs, (unsigned long long)r->bytes_allocated,
            (unsigned long long)r->bytes_copied, (unsigned long long)r->bytes_promoted,
            (unsigned long long)r->bytes_marked, (unsigned long long)r->bytes_compacted,
            (unsigned long long)r->remembered, (unsigned long long)r->peak_committed,
            (unsigned long long)r->peak_used, r->mark_cons, r->space_time, r->gc_seconds, r->gc_seconds_low,
            r->gc_seconds_high, r->exhausted, (unsigned long long)r->remembered_scanned,
            (unsigned long long)r->objects_moved, (unsigned long long)r->slots_scanned,
            (unsigned long long)r->remembered_slots, (unsigned long long)r->slots_traced);
  }
}

static void print_json(FILE *out, const char *name, const eph_sim_input *in, const eph_sim_config *cfgs,
                       const eph_sim_result *res, size_t n, const eph_sim_costmodel *cm) {
  fputs("{\"input\":", out);
  eph_json_string(out, name);
  fprintf(out, ",\"kind\":\"%s\",\"objects\":%llu,\"bytes\":%llu,\"max_live\":%llu,\"caveats\":",
          eph_sim_input_kind_name(in->kind), (unsigned long long)in->objects, (unsigned long long)in->bytes,
          (unsigned long long)in->max_live);
  eph_json_string(out, in->caveats);
  fprintf(out, ",\"cost_model\":{\"fitted\":%s,\"fit_error\":%.6g,\"samples\":%u},\"configs\":[",
          cm->samples ? "true" : "false", cm->fit_error, cm->samples);
  for (size_t i = 0; i < n; i++) {
    const eph_sim_result *r = &res[i];
    char label[256];
    eph_sim_config_label(&cfgs[i], r, label, sizeof label);
    fputs(i ? ",{\"config\":" : "{\"config\":", out);
    eph_json_string(out, label);
    fprintf(out,
            ",\"collector\":\"%s\",\"scavenges\":%llu,\"full_gcs\":%llu,\"scavenges_early\":%llu,"
            "\"full_gcs_early\":%llu,\"bytes_allocated\":%llu,\"bytes_copied\":%llu,\"bytes_promoted\":%llu,"
            "\"bytes_marked\":%llu,\"bytes_compacted\":%llu,\"remembered\":%llu,\"peak_committed\":%llu,"
            "\"peak_used\":%llu,\"mark_cons\":%.6g,\"space_time\":%.6g,\"gc_seconds\":%.6g,\"gc_seconds_low\":%.6g,"
            "\"gc_seconds_high\":%.6g,\"exhausted\":%s,\"remembered_scanned\":%llu,\"objects_moved\":%llu,"
            "\"slots_scanned\":%llu,\"remembered_slots\":%llu,\"slots_traced\":%llu,\"events\":[",
            eph_sim_collector_name(r->collector), (unsigned long long)r->scavenges, (unsigned long long)r->full_gcs,
            (unsigned long long)r->early.scavenges, (unsigned long long)r->early.full_gcs,
            (unsigned long long)r->bytes_allocated, (unsigned long long)r->bytes_copied,
            (unsigned long long)r->bytes_promoted, (unsigned long long)r->bytes_marked,
            (unsigned long long)r->bytes_compacted, (unsigned long long)r->remembered,
            (unsigned long long)r->peak_committed, (unsigned long long)r->peak_used, r->mark_cons, r->space_time,
            r->gc_seconds, r->gc_seconds_low, r->gc_seconds_high, r->exhausted ? "true" : "false",
            (unsigned long long)r->remembered_scanned, (unsigned long long)r->objects_moved,
            (unsigned long long)r->slots_scanned, (unsigned long long)r->remembered_slots,
            (unsigned long long)r->slots_traced);
    for (size_t k = 0; k < r->nevents; k++) {
      const eph_sim_event *e = &r->events[k];
      fprintf(out,
              "%s{\"kind\":\"%s\",\"allocated\":%llu,\"copied\":%llu,\"promoted\":%llu,\"marked\":%llu,"
              "\"compacted\":%llu,\"remembered\":%llu,\"heap_after\":%llu,\"committed\":%llu}",
              k ? "," : "", e->kind == EPH_GC_FULL ? "full" : "scavenge", (unsigned long long)e->allocated,
              (unsigned long long)e->copied, (unsigned long long)e->promoted, (unsigned long long)e->marked,
              (unsigned long long)e->compacted, (unsigned long long)e->remembered, (unsigned long long)e->heap_after,
              (unsigned long long)e->committed);
    }
    fputs("]}", out);
  }
  fputs("]}\n", out);
}

bool eph_sim_print(FILE *out, eph_sim_format fmt, const char *input_name, const eph_sim_input *in,
                   const eph_sim_config *cfgs, const eph_sim_result *res, size_t n, const eph_sim_costmodel *cm) {
  switch (fmt) {
    case EPH_SIM_CSV: print_csv(out, cfgs, res, n); break;
    case EPH_SIM_JSON: print_json(out, input_name, in, cfgs, res, n, cm); break;
    default: print_text(out, input_name, in, cfgs, res, n, cm); break;
  }
  return !ferror(out); /* the caller flushes, and reports the error with its errno */
}

bool eph_sim_print_granularity(FILE *out, eph_sim_format fmt, const char *label, const uint64_t *granules,
                               size_t ngranules, const double *errors) {
  if (fmt == EPH_SIM_TEXT) {
    fprintf(out, "granularity errors against the exact trace (mark/cons error, collection count error)\n%s\n", label);
    fprintf(out, "%10s", "granule");
    for (unsigned k = 0; k < EPH_SIM_NSYNC; k++) fprintf(out, " %21s", eph_sim_sync_name((eph_sim_sync)k));
    fputc('\n', out);
  } else if (fmt == EPH_SIM_CSV) {
    fputs("config,granule,scheme,mark_cons_error,count_error\n", out);
  } else {
    fputs("{\"config\":", out);
    eph_json_string(out, label);
    fputs(",\"rows\":[", out);
  }
  for (size_t g = 0; g < ngranules; g++) {
    char gs[32];
    size_text(gs, sizeof gs, granules[g]);
    if (fmt == EPH_SIM_TEXT) fprintf(out, "%10s", gs);
    for (unsigned k = 0; k < EPH_SIM_NSYNC; k++) {
      const double *e = &errors[2 * (g * EPH_SIM_NSYNC + k)];
      if (fmt == EPH_SIM_TEXT) fprintf(out, "   %+8.2f%% / %+8.2f%%", 100 * e[0], 100 * e[1]);
      else if (fmt == EPH_SIM_CSV)
        fprintf(out, "\"%s\",%llu,%s,%.6g,%.6g\n", label, (unsigned long long)granules[g],
                eph_sim_sync_name((eph_sim_sync)k), e[0], e[1]);
      else
        fprintf(out, "%s{\"granule\":%llu,\"scheme\":\"%s\",\"mark_cons_error\":%.6g,\"count_error\":%.6g}",
                g || k ? "," : "", (unsigned long long)granules[g], eph_sim_sync_name((eph_sim_sync)k), e[0], e[1]);
    }
    if (fmt == EPH_SIM_TEXT) fputc('\n', out);
  }
  if (fmt == EPH_SIM_JSON) fputs("]}\n", out);
  return !ferror(out); /* the caller flushes, and reports the error with its errno */
}
