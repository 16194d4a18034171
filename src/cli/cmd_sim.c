/*
 * cmd_sim.c — `ephemera sim`: options for the GC simulator (src/sim,
 * docs/sim.md) and its calibration (the harness's, src/harness); the work is
 * the libraries', the printing the renderers' (src/render/render_sim.h,
 * render_bench.h).
 *
 *   ephemera sim PROFILE [--collector NAME] [--gc PARAMS]... [--heap SIZE|FACTORx,...]
 *                [--nursery SIZE] [--events] [--model FILE] [--format text|csv|json]
 *   ephemera sim calibrate [--model FILE] [--size S] [--gc PARAMS]...
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "number.h"
#include "ephemera/sim.h"
#include "harness/bench_calibrate.h"
#include "render/render_bench.h"
#include "render/render_sim.h"

#define MAX_CONFIGS 256

static void usage(FILE *out) {
  fprintf(out,
          "usage: ephemera sim PROFILE [--collector NAME] [--gc PARAMS]... [--heap SIZE|FACTORx,...]\n"
          "                    [--nursery SIZE] [--events] [--model FILE] [--format text|csv|json]\n"
          "                    [--granule K --sync SCHEME | --granularity K,K,...]\n"
          "       ephemera sim calibrate [--model FILE] [--size S] [--gc PARAMS]...\n"
          "  PROFILE        a Merlin trace (exact), a Merlin profile (lifetimes) or a gc/finalization\n"
          "                 profile (samples: results as ranges); the output says which and its caveats\n"
          "  --collector C  spur (Ephemera's heap, default), ss, fg, vg (Appel) or of (older-first)\n"
          "  --gc PARAMS    spur's GC parameters (as `ephemera run --gc`); repeat for several configurations\n"
          "  --heap LIST    ss/fg/vg/of heap sizes: bytes (4M) or multiples of the minimum heap (2x), comma-separated\n"
          "  --nursery SIZE fg: nursery size; of: window size (default: a quarter / a third of the heap)\n"
          "  --events       also list every simulated collection\n"
          "  --granule K    deaths known only at multiples of K bytes (as `ephemera trace granulate`)\n"
          "  --sync S       where collections go on a granulated input: unsync (default), syncearly,\n"
          "                 syncmid, synclate (TOPLAS 2006 3.2)\n"
          "  --granularity LIST  the error table instead: each scheme at each granule against the exact input\n"
          "  --model FILE   the cost model (default $XDG_CONFIG_HOME/ephemera/costmodel, else built-in)\n"
          "  --format F     text (default), csv or json\n"
          "calibrate: runs every workload on the real heap with a few GC settings (or those given by --gc)\n"
          "  at each size of --size (comma-separated; default small,middle), fits the cost model by least\n"
          "  squares on the runs' relative errors and\n"
          "  writes it to --model (default $XDG_CONFIG_HOME/ephemera/costmodel).\n"
          "exit: 0 ok, 1 the simulation or calibration failed, 2 usage, 3 bad input file\n");
}

enum {
  OPT_COLLECTOR = 256,
  OPT_GC,
  OPT_HEAP,
  OPT_NURSERY,
  OPT_EVENTS,
  OPT_MODEL,
  OPT_FORMAT,
  OPT_SIZE,
  OPT_GRANULE,
  OPT_SYNC,
  OPT_GRANULARITY,
  OPT_HELP
};

static const struct option OPTIONS[] = {
    {"collector", required_argument, NULL, OPT_COLLECTOR}, {"gc", required_argument, NULL, OPT_GC},
    {"heap", required_argument, NULL, OPT_HEAP},           {"nursery", required_argument, NULL, OPT_NURSERY},
    {"events", no_argument, NULL, OPT_EVENTS},             {"model", required_argument, NULL, OPT_MODEL},
    {"format", required_argument, NULL, OPT_FORMAT},       {"size", required_argument, NULL, OPT_SIZE},
    {"granule", required_argument, NULL, OPT_GRANULE},     {"sync", required_argument, NULL, OPT_SYNC},
    {"granularity", required_argument, NULL, OPT_GRANULARITY},
    {"help", no_argument, NULL, OPT_HELP},                 {NULL, 0, NULL, 0},
};

typedef struct sim_args {
  eph_sim_collector collector;
  const char *gc[MAX_CONFIGS];
  size_t ngc;
  const char *heap, *nursery, *model, *size, *granule, *granularity;
  eph_sim_sync sync;
  bool events;
  eph_sim_format format;
} sim_args;

/* 0 ok, 2 usage error (printed), -1 --help printed. */
static int parse(int argc, char **argv, sim_args *a) {
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", OPTIONS, NULL)) != -1) {
    switch (c) {
      case OPT_COLLECTOR:
        if (!eph_sim_collector_parse(optarg, &a->collector)) {
          cli_error("sim: unknown collector '%s' (spur, ss, fg, vg, of)", optarg);
          return 2;
        }
        break;
      case OPT_GC:
        if (a->ngc == MAX_CONFIGS) {
          cli_error("sim: at most %d --gc configurations", MAX_CONFIGS);
          return 2;
        }
        a->gc[a->ngc++] = optarg;
        break;
      case OPT_HEAP: a->heap = optarg; break;
      case OPT_NURSERY: a->nursery = optarg; break;
      case OPT_EVENTS: a->events = true; break;
      case OPT_MODEL: a->model = optarg; break;
      case OPT_SIZE: a->size = optarg; break;
      case OPT_GRANULE: a->granule = optarg; break;
      case OPT_GRANULARITY: a->granularity = optarg; break;
      case OPT_SYNC:
        if (!eph_sim_sync_parse(optarg, &a->sync)) {
          cli_error("sim: --sync '%s' is not unsync, syncearly, syncmid or synclate", optarg);
          return 2;
        }
        break;
      case OPT_FORMAT:
        if (!strcmp(optarg, "text")) a->format = EPH_SIM_TEXT;
        else if (!strcmp(optarg, "csv")) a->format = EPH_SIM_CSV;
        else if (!strcmp(optarg, "json")) a->format = EPH_SIM_JSON;
        else {
          cli_error("sim: --format '%s' is not text, csv or json", optarg);
          return 2;
        }
        break;
      case 'h':
      case OPT_HELP: usage(stdout); return cli_stdout_done("the help") ? -2 : -1;
      default:
        if (optopt >= OPT_COLLECTOR) cli_error("sim: option '%s' needs a value", argv[optind - 1]);
        else cli_error("sim: unknown option '%s' (try 'ephemera sim --help')", argv[optind - 1]);
        return 2;
    }
  }
  return 0;
}

/* "4M" (bytes) or "2x"/"2.5x" (times the minimum heap), through the one
 * number parser. */
static bool parse_heap(const char *s, eph_sim_heap_size *h) {
  char why[128];
  size_t n = strlen(s);
  h->bytes = 0;
  h->factor = 0;
  if (n > 1 && (s[n - 1] == 'x' || s[n - 1] == 'X')) {
    char num[64];
    if (n - 1 >= sizeof num) return false;
    memcpy(num, s, n - 1);
    num[n - 1] = 0;
    return cli_number_double(num, 1e-9, 1e9, false, &h->factor, why, sizeof why);
  }
  return cli_number_u64(s, CLI_SIZE, 1, UINT64_MAX, &h->bytes, why, sizeof why);
}

/* A size in bytes, at least 1 (K, M, G suffixes). */
static bool parse_size(const char *s, uint64_t *bytes) {
  char why[128];
  return cli_number_u64(s, CLI_SIZE, 1, UINT64_MAX, bytes, why, sizeof why);
}

static int calibrate(int argc, char **argv) {
  sim_args a = {0};
  int rc = parse(argc, argv, &a);
  if (rc) return rc == -1 ? 0 : rc == -2 ? CLI_FAILED : rc;
  if (optind < argc) {
    cli_error("sim calibrate: unexpected argument '%s'", argv[optind]);
    return 2;
  }
  char path[4096];
  const char *out = a.model;
  if (!out) {
    if (!eph_sim_costmodel_default_path(path, sizeof path)) {
      cli_error("sim calibrate: neither XDG_CONFIG_HOME nor HOME is set: give --model FILE");
      return 2;
    }
    out = path;
  }
  eph_bench_calibration cal;
  eph_error err;
  eph_render_progress progress = {stderr, isatty(STDERR_FILENO) != 0};
  if (eph_bench_calibrate(a.size ? a.size : "small,middle", a.ngc ? a.gc : NULL, a.ngc, eph_render_bench_progress,
                          &progress, &cal, &err) != EPH_OK) {
    cli_error("sim calibrate: %s", err.message);
    return 1;
  }
  eph_render_bench_calibration(stdout, &cal);
  if (eph_sim_costmodel_save(out, &cal.model, &err) != EPH_OK) {
    cli_error("sim calibrate: %s", err.message);
    rc = 1;
  } else {
    eph_render_sim_costmodel(stdout, &cal.model, cal.run_error_median, out);
  }
  eph_bench_calibration_free(&cal);
  return rc;
}

int cmd_sim(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "calibrate")) return calibrate(argc - 1, argv + 1);
  sim_args a = {0};
  int rc = parse(argc, argv, &a);
  if (rc) return rc == -1 ? 0 : rc == -2 ? CLI_FAILED : rc;
  if (optind != argc - 1) {
    cli_error(optind >= argc ? "sim: needs one PROFILE (usage: ephemera sim PROFILE [options])"
                             : "sim: one PROFILE only");
    return 2;
  }
  const char *file = argv[optind];
  eph_sim_plan plan = {.collector = a.collector, .gc = a.gc, .ngc = a.ngc, .sync = a.sync, .keep_events = a.events};
  if (a.nursery && !parse_size(a.nursery, &plan.nursery_bytes)) {
    cli_error("sim: --nursery '%s' is not a size (e.g. 1M)", a.nursery);
    return 2;
  }
  if (a.granule && !parse_size(a.granule, &plan.granule)) {
    cli_error("sim: --granule '%s' is not a size in bytes (e.g. 4K)", a.granule);
    return 2;
  }
  uint64_t granules[64];
  size_t ngranules = 0;
  if (a.granularity) {
    char list[1024];
    snprintf(list, sizeof list, "%s", a.granularity);
    char *save = NULL;
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
      if (ngranules == 64 || !parse_size(item, &granules[ngranules])) {
        cli_error("sim: --granularity: '%s' is not a size in bytes (at most 64 of them)", item);
        return 2;
      }
      ngranules++;
    }
  }
  static eph_sim_heap_size heaps[MAX_CONFIGS];
  if (a.collector == EPH_SIM_SPUR && a.heap) {
    cli_error("sim: --heap is for ss, fg, vg and of; spur takes --gc");
    return 2;
  }
  if (a.collector != EPH_SIM_SPUR) {
    if (a.ngc) {
      cli_error("sim: --gc is for spur; %s takes --heap", eph_sim_collector_name(a.collector));
      return 2;
    }
    char list[1024];
    snprintf(list, sizeof list, "%s", a.heap ? a.heap : "2x");
    char *save = NULL;
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
      if (plan.nheaps == MAX_CONFIGS) {
        cli_error("sim: at most %d heap sizes", MAX_CONFIGS);
        return 2;
      }
      if (!parse_heap(item, &heaps[plan.nheaps])) {
        cli_error("sim: --heap '%s' is neither a size (4M) nor a multiple of the minimum heap (2x)", item);
        return 2;
      }
      plan.nheaps++;
    }
    plan.heaps = heaps;
  }
  static eph_sim_config cfgs[MAX_CONFIGS];
  size_t n;
  eph_error err;
  if (eph_sim_plan_configs(&plan, cfgs, MAX_CONFIGS, &n, &err) != EPH_OK) {
    cli_error("sim: --gc: %s", err.message);
    return 2;
  }
  eph_sim_costmodel cm;
  if (eph_sim_costmodel_resolve(a.model, &cm, &err) != EPH_OK) {
    cli_error("sim: %s", err.message);
    return 3;
  }
  eph_sim_input *in;
  if (eph_sim_input_load(file, &in, &err) != EPH_OK) {
    cli_error("%s: %s", file, err.message);
    return err.status == EPH_ERR_NOMEM ? 1 : 3;
  }
  if (ngranules) {
    eph_sim_granularity_report g;
    eph_status st = eph_sim_granularity_all(in, cfgs, n, granules, ngranules, &g, &err);
    bool ok = eph_render_sim_granularity(stdout, a.format, &g);
    if ((rc = cli_stdout_done("the granularity table")) == 0 && !ok) {
      cli_error("sim: writing the granularity table failed");
      rc = 1;
    }
    if (!rc && st != EPH_OK) {
      cli_error("sim: %s", err.message);
      rc = 1;
    }
    eph_sim_granularity_report_free(&g);
    eph_sim_input_free(in);
    return rc;
  }
  eph_sim_report rep;
  if (eph_sim_run_all(in, file, cfgs, n, &cm, &rep, &err) != EPH_OK) {
    cli_error("sim: %s", err.message);
    rc = 1;
  } else {
    bool ok = eph_render_sim(stdout, a.format, &rep);
    if ((rc = cli_stdout_done("the simulation")) == 0 && !ok) {
      cli_error("sim: writing the simulation failed");
      rc = 1;
    }
  }
  eph_sim_report_free(&rep);
  eph_sim_input_free(in);
  return rc;
}
