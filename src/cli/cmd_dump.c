/*
 * cmd_dump.c — `ephemera dump FILE [--csv|--json] [--head N]`: an .eph file
 * as text, CSV or JSON (rendered by eph_dump_file, src/render/render_dump.c).
 *
 * A malformed or unreadable file is one line `ephemera: FILE: <problem at
 * byte N>` and exit 3; a truncated one (a killed run) prints what it
 * holds, warns on stderr, and exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "render/render.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera dump FILE [--csv | --json] [--head N]\n"
          "  (default)  a summary: metadata, tables, counts by death kind, the first records\n"
          "  --csv      a header row and one row per record\n"
          "  --json     one JSON document: meta, classes, sites, records, gcs, totals\n"
          "  --head N   records shown by the summary (default 10)\n" CLI_EXIT_HELP);
}

int cmd_dump(int argc, char **argv) {
  enum { OPT_CSV = 256, OPT_JSON, OPT_HEAD };
  static const struct option longopts[] = {{"csv", no_argument, NULL, OPT_CSV},
                                           {"json", no_argument, NULL, OPT_JSON},
                                           {"head", required_argument, NULL, OPT_HEAD},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  eph_dump_format fmt = EPH_DUMP_TEXT;
  uint64_t head = 10;
  for (int c; (c = cli_getopt(argc, argv, ":h", longopts)) != -1;) {
    switch (c) {
      case OPT_CSV: fmt = EPH_DUMP_CSV; break;
      case OPT_JSON: fmt = EPH_DUMP_JSON; break;
      case OPT_HEAD:
        if (!cli_opt_u64("--head", optarg, CLI_COUNT, 0, SIZE_MAX / 2, &head)) return CLI_USAGE;
        break;
      case 'h': usage(stdout); return cli_stdout_done("the help");
      default: return CLI_USAGE;
    }
  }
  if (optind >= argc) return cli_usage_error("needs a FILE");
  if (optind + 1 < argc) return cli_usage_error("one file at a time ('%s' and '%s')", argv[optind], argv[optind + 1]);
  const char *path = argv[optind];
  eph_dump_result res;
  eph_error err = {0};
  eph_status st = eph_dump_file(stdout, path, fmt, (size_t)head, &res, &err);
  if (st != EPH_OK && !res.loaded) {
    cli_error("%s", err.message);
    return cli_load_failed(st);
  }
  /* The output first: a write error is the one line that matters then. */
  int rc = cli_stdout_done("the dump");
  if (rc != CLI_OK) return rc;
  if (st != EPH_OK) {
    cli_error("%s", err.message);
    return CLI_FAILED;
  }
  if (!res.complete && res.warning[0]) cli_error("%s: warning: %s", path, res.warning);
  return CLI_OK;
}
