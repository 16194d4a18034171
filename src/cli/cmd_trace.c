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
#include "render/render.h"
#include "ephemera/format.h"
#include "trace/trace.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera trace granulate IN OUT --granule K [--compress]\n"
          "  granulate  write IN granulated to K bytes as OUT: every death moved to the next\n"
          "             multiple of K (ceil(t / K) * K), a TICK event at every multiple of K\n"
          "             up to the end of the trace (the points of perfect knowledge), meta\n"
          "             granule=K; other events unchanged.  K in bytes, K/M/G suffixes\n"
          "             accepted (4K = 4096).\n"
          "  --compress deflate OUT's chunks\n" CLI_EXIT_HELP);
}

static int granulate(int argc, char **argv) {
  enum { OPT_COMPRESS = 256 };
  static const struct option longopts[] = {{"granule", required_argument, NULL, 'k'},
                                           {"compress", no_argument, NULL, OPT_COMPRESS},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  uint64_t k = 0;
  bool compress = false, have_granule = false;
  for (int c; (c = cli_getopt(argc, argv, ":k:h", longopts)) != -1;) {
    switch (c) {
      case 'k':
        if (!cli_opt_u64("--granule", optarg, CLI_SIZE, 1, UINT64_MAX, &k)) return CLI_USAGE;
        have_granule = true;
        break;
      case OPT_COMPRESS: compress = true; break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (argc - optind < 2) return cli_usage_error("needs IN and OUT (usage: ephemera trace granulate IN OUT --granule K)");
  if (argc - optind > 2) return cli_usage_error("one input and one output ('%s' is a third file)", argv[optind + 2]);
  if (!have_granule) return cli_usage_error("needs --granule K (bytes, e.g. 4K or 65536)");
  const char *in = argv[optind], *out = argv[optind + 1];
  eph_file *p = NULL;
  eph_error err = {0};
  if (eph_file_load(in, &p, &err) != EPH_OK) {
    cli_error("%s", err.message);
    return cli_load_failed(err.status);
  }
  const char *why = eph_trace_unusable(p);
  if (why) {
    cli_error("%s: %s%s%s%s", in, why, p->warning[0] ? " (" : "", p->warning, p->warning[0] ? ")" : "");
    eph_file_free(p);
    return CLI_BAD_INPUT;
  }
  eph_trace_granulate_stats s;
  eph_status st = eph_trace_granulate(p, k, out, compress, &s, &err);
  eph_file_free(p);
  if (st != EPH_OK) {
    cli_error("%s: %s", out, err.message);
    return 1;
  }
  eph_render_granulate(stdout, in, out, &s);
  return cli_stdout_done("the summary");
}

int cmd_trace(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
    usage(stdout);
    return cli_stdout_done("the help");
  }
  if (argc < 2) return cli_usage_error("needs a subcommand (known: granulate)");
  if (!strcmp(argv[1], "granulate")) {
    cli_command = "trace granulate";
    return granulate(argc - 1, argv + 1);
  }
  cli_error("trace: unknown subcommand '%s' (known: granulate)", argv[1]);
  return CLI_USAGE;
}
