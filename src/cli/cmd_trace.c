/*
 * cmd_trace.c — `ephemera trace SUBCOMMAND ...`: tools over Merlin event
 * traces (src/trace, docs/traces.md).
 *
 *   ephemera trace granulate IN OUT --granule K
 *     the granulated trace of TOPLAS 2006 §3.2/§6.5: deaths moved to the
 *     next multiple of K bytes, TICK events at the points of perfect
 *     knowledge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ephemera/format.h"
#include "trace.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera trace granulate IN OUT --granule K [--compress]\n"
          "  granulate  write IN granulated to K bytes as OUT: every death moved to the next\n"
          "             multiple of K (ceil(t / K) * K), a TICK event at every multiple of K\n"
          "             up to the end of the trace (the points of perfect knowledge), meta\n"
          "             granule=K; other events unchanged.  K in bytes, K/M/G suffixes\n"
          "             accepted (4K = 4096).\n"
          "  --compress deflate OUT's chunks\n");
}

static int granulate(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *granule = NULL;
  bool compress = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--granule") || !strcmp(a, "-k")) {
      if (++i >= argc) {
        cli_error("trace granulate: %s needs a size in bytes (e.g. 4K)", a);
        return 2;
      }
      granule = argv[i];
    } else if (!strncmp(a, "--granule=", 10)) {
      granule = a + 10;
    } else if (!strcmp(a, "--compress")) {
      compress = true;
    } else if (a[0] == '-' && a[1]) {
      cli_error("trace granulate: unknown option '%s' (try 'ephemera trace --help')", a);
      return 2;
    } else if (!in) {
      in = a;
    } else if (!out) {
      out = a;
    } else {
      cli_error("trace granulate: one input and one output ('%s' is a third file)", a);
      return 2;
    }
  }
  if (!in || !out) {
    cli_error("trace granulate: needs IN and OUT (usage: ephemera trace granulate IN OUT --granule K)");
    return 2;
  }
  if (!granule) {
    cli_error("trace granulate: needs --granule K (bytes, e.g. 4K or 65536)");
    return 2;
  }
  uint64_t k;
  if (!eph_trace_parse_size(granule, &k)) {
    cli_error("trace granulate: bad granule '%s': expected bytes with an optional K, M or G suffix (e.g. 4K)",
              granule);
    return 2;
  }
  if (k == 0) {
    cli_error("trace granulate: bad granule '%s': it must be at least 1 byte", granule);
    return 2;
  }
  eph_file *p = NULL;
  eph_error err = {0};
  if (eph_file_load(in, &p, &err) != EPH_OK) {
    cli_error("%s", err.message);
    return 1;
  }
  const char *why = eph_trace_unusable(p);
  if (why) {
    cli_error("%s: %s%s%s%s", in, why, p->warning[0] ? " (" : "", p->warning, p->warning[0] ? ")" : "");
    eph_file_free(p);
    return 1;
  }
  eph_trace_granulate_stats s;
  eph_status st = eph_trace_granulate(p, k, out, compress, &s, &err);
  eph_file_free(p);
  if (st != EPH_OK) {
    cli_error("%s: %s", out, err.message);
    return 1;
  }
  printf("granulated %s to %" PRIu64 " bytes: %s\n", in, k, out);
  printf("  %" PRIu64 " deaths (%" PRIu64 " moved), %" PRIu64 " records moved, %" PRIu64 " ticks (the last at %" PRIu64
         "); %" PRIu64 " events in, %" PRIu64 " out",
         s.deaths, s.deaths_moved, s.records_moved, s.ticks, s.last_tick, s.events_in, s.events_out);
  if (s.old_ticks) printf(" (%" PRIu64 " old ticks replaced)", s.old_ticks);
  printf("\n  time: %.3f s\n", s.seconds);
  return 0;
}

int cmd_trace(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "granulate")) return granulate(argc - 1, argv + 1);
  cli_error("trace: unknown subcommand '%s' (known: granulate)", argv[1]);
  return 2;
}
