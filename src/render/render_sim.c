/*
 * render_sim.c — `ephemera sim`'s results (eph_sim_report,
 * eph_sim_granularity_report) as text, CSV or JSON, and the cost model a
 * calibration fitted.
 */
#include <stdio.h>
#include <string.h>

#include "render_sim.h"
#include "base/escape.h"

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

static void print_text(FILE *out, const eph_sim_report *rep) {
  const eph_sim_input *in = rep->input;
  const eph_sim_config *cfgs = rep->configs;
  const eph_sim_result *res = rep->results;
  const eph_sim_costmodel *cm = &rep->model;
  size_t n = rep->n;
  bool ranges = eph_sim_input_kind_of(in) == EPH_SIM_INPUT_SAMPLED; /* deaths as intervals */
  fprintf(out, "simulated %s: %s input, %llu objects, %.1f MiB allocated, max live %.1f MiB\n", rep->input_name,
          eph_sim_input_kind_name(eph_sim_input_kind_of(in)), (unsigned long long)eph_sim_input_objects(in),
          mib(eph_sim_input_bytes(in)), mib(eph_sim_input_max_live(in)));
  fputs(eph_sim_input_caveats(in), out);
  fprintf(out, "cost model: %s (fit error %.1f%% over %u collections)\n",
          cm->samples ? "fitted" : "built-in guess, not calibrated on this machine", 100 * cm->fit_error, cm->samples);
  for (size_t i = 0; i < n; i++) {
    const eph_sim_result *r = &res[i];
    char label[256];
    eph_sim_config_label(&cfgs[i], r, label, sizeof label);
    fprintf(out, "\n%s%s\n", label, r->exhausted ? "  (EXHAUSTED: the program does not fit)" : "");
    if (ranges)
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

static void print_csv(FILE *out, const eph_sim_report *rep) {
  const eph_sim_config *cfgs = rep->configs;
  const eph_sim_result *res = rep->results;
  size_t n = rep->n;
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

static void print_json(FILE *out, const eph_sim_report *rep) {
  const eph_sim_input *in = rep->input;
  fputs("{\"input\":", out);
  eph_json_string(out, rep->input_name);
  fprintf(out, ",\"kind\":\"%s\",\"objects\":%llu,\"bytes\":%llu,\"max_live\":%llu,\"caveats\":",
          eph_sim_input_kind_name(eph_sim_input_kind_of(in)), (unsigned long long)eph_sim_input_objects(in),
          (unsigned long long)eph_sim_input_bytes(in), (unsigned long long)eph_sim_input_max_live(in));
  eph_json_string(out, eph_sim_input_caveats(in));
  fprintf(out, ",\"cost_model\":{\"fitted\":%s,\"fit_error\":%.6g,\"samples\":%u},\"configs\":[",
          rep->model.samples ? "true" : "false", rep->model.fit_error, rep->model.samples);
  for (size_t i = 0; i < rep->n; i++) {
    const eph_sim_result *r = &rep->results[i];
    char label[256];
    eph_sim_config_label(&rep->configs[i], r, label, sizeof label);
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

bool eph_render_sim(FILE *out, eph_sim_format fmt, const eph_sim_report *rep) {
  switch (fmt) {
    case EPH_SIM_CSV: print_csv(out, rep); break;
    case EPH_SIM_JSON: print_json(out, rep); break;
    default: print_text(out, rep); break;
  }
  return !ferror(out); /* the caller flushes, and reports the error with its errno */
}

static void print_granularity(FILE *out, eph_sim_format fmt, const char *label, const uint64_t *granules,
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
    eph_sim_size_text(gs, sizeof gs, granules[g]);
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
}

bool eph_render_sim_granularity(FILE *out, eph_sim_format fmt, const eph_sim_granularity_report *g) {
  for (size_t i = 0; i < g->n; i++) {
    char label[256];
    eph_sim_config_label(&g->configs[i], NULL, label, sizeof label);
    print_granularity(out, fmt, label, g->granules, g->ngranules, g->errors + i * g->ngranules * EPH_SIM_NSYNC * 2);
  }
  return !ferror(out); /* the caller flushes, and reports the error with its errno */
}

bool eph_render_sim_costmodel(FILE *out, const eph_sim_costmodel *cm, double run_error_median, const char *path) {
  fprintf(out,
          "cost model (s): per scavenge %.3g, per full GC %.3g; per byte copied %.3g, promoted %.3g;\n"
          "  per object moved %.3g, and per doubling of eden past 256K %.3g per object, %.3g per byte;\n"
          "  per slot scanned %.3g, in the remembered set %.3g, traced %.3g;\n"
          "  per byte marked %.3g, compacted %.3g;\n"
          "  per remembered entry %.3g; per MiB committed %.3g (0: a coefficient the fit found no use for)\n"
          "fit error %.1f%% (relative RMS over %u runs); per-run GC time error median %.1f%%\n"
          "wrote %s\n",
          cm->per_scavenge, cm->per_full_gc, cm->per_byte_copied, cm->per_byte_promoted, cm->per_object_moved,
          cm->per_object_far, cm->per_byte_far, cm->per_slot_scanned, cm->per_remembered_slot, cm->per_slot_traced,
          cm->per_byte_marked, cm->per_byte_compacted, cm->per_remembered, cm->per_mib_committed,
          100 * cm->fit_error, cm->samples, 100 * run_error_median, path);
  return !ferror(out);
}
