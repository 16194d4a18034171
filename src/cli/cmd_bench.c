/*
 * cmd_bench.c — `ephemera bench ...`: parses options, calls the bench
 * library (include/ephemera/bench.h, docs/bench.md) and its renderers
 * (src/render/render_bench.h).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ephemera/bench.h"
#include "ephemera/profile.h"
#include "render/render_bench.h"

#define MAX_GCS 16
#define MAX_FACTORS 32

static void usage(FILE *out) {
  fputs("usage: ephemera bench TARGET... [options]            run a sweep, print its table\n"
        "       ephemera bench minheap TARGET [--gc P] [--iterations K] [--warmup W] [--no-cache]\n"
        "       ephemera bench plan TARGET... [options] --emit-jobs JOBS --results-dir DIR\n"
        "       ephemera bench merge DIR [--format F] [-o results.json] [--html DIR]\n"
        "       ephemera bench report results.json [--format F] [--html DIR]\n"
        "       ephemera bench nominal [--size S] [--invocations N] [-o FILE]   (default nominal.json)\n"
        "targets: WORKLOAD[:SIZE] (dataframe:default), lua:SCRIPT [ARGS], cmd:COMMAND (configured through EPHEMERA_GC),\n"
        "         jvm:NAME[:SIZE] (the Java suite: fop h2 jython luindex lusearch xalan javac; small|default),\n"
        "         jcmd:COMMAND (any Java command line; collector, heap and agent through JAVA_TOOL_OPTIONS)\n"
        "  --invocations N    fresh processes per configuration (default 5)\n"
        "  --iterations K     timed iterations per invocation (default 1)\n"
        "  --warmup W         warm-up iterations per invocation, reported apart (default 1)\n"
        "  --gc PARAMS        GC parameters of a configuration (repeat to compare several)\n"
        "  --collector C,...  Java targets: OpenJDK's collectors (serial, parallel, g1, shenandoah, zgc, or all\n"
        "                     that this JDK has; default g1); heap factors multiply G1's minimum heap\n"
        "  --base-minheap-only  Java targets: measure G1's minimum heap alone, not each collector's own\n"
        "  --heap F1,F2,...   heap sizes as multiples of the measured minimum heap\n"
        "  --ci P%            add invocations until the wall-time 95% CI is within P% of the mean\n"
        "  --max-invocations N  the cap for --ci (default 30)\n"
        "  --profile SPEC     run under the lifetime profiler (workloads; commands get EPHEMERA_PROFILE);\n"
        "                     minimum heaps are measured without it\n"
        "  --no-cache         measure minimum heaps again instead of reading the cache\n"
        "  --format F         text (default), csv, md or json on stdout\n"
        "  -o FILE            also write the results (every run and the summaries) as JSON\n"
        "  --html DIR         also write DIR/index.html with plots (gnuplot)\n"
        "exit status: 0 ok, 1 a configuration failed in every invocation, 2 usage, 3 bad result file\n",
        out);
}

/* Through the CLI's one strict number parser (number.h); the parser's own
 * one-line message names the option and the value.  0 ok, -1 refused. */
static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out) {
  uint64_t v;
  if (!cli_opt_u64(opt, s, CLI_COUNT, min, max, &v)) return -1;
  *out = (unsigned)v;
  return 0;
}

static int parse_double(const char *opt, const char *s, double *out) {
  return cli_opt_double(opt, s, 0, 1e12, false, out) ? 0 : -1;
}

typedef struct args {
  eph_bench_options o;
  const char *gcs[MAX_GCS];
  const char *collectors[8]; /* --collector */
  size_t ncollectors;
  bool all_collectors;       /* --collector all: those the JDK has */
  double factors[MAX_FACTORS];
  eph_bench_target *targets;
  eph_bench_format format;
  const char *out, *html, *jobs, *dir, *size;
  eph_bench_target target; /* run-one */
  eph_bench_config config;
  size_t index[3];
  bool have_target;
} args;

enum { O_INV = 256, O_ITER, O_WARM, O_GC, O_HEAP, O_CI, O_MAXINV, O_NOCACHE, O_FORMAT, O_HTML, O_JOBS, O_DIR,
       O_SIZE, O_TARGET, O_FACTOR, O_HEAPB, O_INDEX, O_PROFILE, O_COLLECTOR, O_BASE_ONLY };

/* Parses options into a; operands are left in argv[optind..]. */
static int parse(int argc, char **argv, args *a) {
  static const struct option opts[] = {
      {"invocations", required_argument, 0, O_INV}, {"iterations", required_argument, 0, O_ITER},
      {"warmup", required_argument, 0, O_WARM},     {"gc", required_argument, 0, O_GC},
      {"heap", required_argument, 0, O_HEAP},       {"ci", required_argument, 0, O_CI},
      {"max-invocations", required_argument, 0, O_MAXINV}, {"no-cache", no_argument, 0, O_NOCACHE},
      {"format", required_argument, 0, O_FORMAT},   {"html", required_argument, 0, O_HTML},
      {"emit-jobs", required_argument, 0, O_JOBS},  {"results-dir", required_argument, 0, O_DIR},
      {"size", required_argument, 0, O_SIZE},       {"target", required_argument, 0, O_TARGET},
      {"factor", required_argument, 0, O_FACTOR},   {"heap-bytes", required_argument, 0, O_HEAPB},
      {"index", required_argument, 0, O_INDEX},     {"output", required_argument, 0, 'o'},
      {"profile", required_argument, 0, O_PROFILE}, {"collector", required_argument, 0, O_COLLECTOR},
      {"base-minheap-only", no_argument, 0, O_BASE_ONLY},
      {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
  opterr = 0;
  optind = 1;
  int c;
  eph_error e;
  while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    switch (c) {
    case O_INV: if (parse_uint("--invocations", optarg, 1, 10000, &a->o.invocations)) return -1; break;
    case O_ITER: if (parse_uint("--iterations", optarg, 1, 100000, &a->o.iterations)) return -1; break;
    case O_WARM: if (parse_uint("--warmup", optarg, 0, 100000, &a->o.warmup)) return -1; break;
    case O_MAXINV: if (parse_uint("--max-invocations", optarg, 2, 10000, &a->o.max_invocations)) return -1; break;
    case O_GC:
      if (a->o.ngcs == MAX_GCS) return cli_error("bench: more than %d --gc", MAX_GCS), -1;
      if (strlen(optarg) >= sizeof a->config.gc) return cli_error("bench: --gc '%.30s...': too long", optarg), -1;
      a->gcs[a->o.ngcs++] = optarg;
      break;
    case O_COLLECTOR:
      if (eph_bench_collectors_parse(optarg, a->collectors, &a->ncollectors, &a->all_collectors, &e))
        return cli_error("bench: --collector: %s", e.message), -1;
      break;
    case O_HEAP: {
      int n = eph_bench_factors_parse(optarg, a->factors, MAX_FACTORS, &e);
      if (n < 0) return cli_error("bench: %s", e.message), -1;
      a->o.nfactors = (size_t)n;
      break;
    }
    case O_CI: {
      char buf[32];
      snprintf(buf, sizeof buf, "%s", optarg);
      size_t len = strlen(buf);
      if (len && buf[len - 1] == '%') buf[len - 1] = 0;
      if (parse_double("--ci", buf, &a->o.ci_target) || a->o.ci_target <= 0 || a->o.ci_target >= 100)
        return cli_error("bench: --ci: expected a percentage such as 1%%"), -1;
      a->o.ci_target /= 100;
      break;
    }
    case O_NOCACHE: a->o.use_cache = false; break;
    case O_BASE_ONLY: a->o.skip_own_minheap = true; break;
    case O_FORMAT:
      if (eph_bench_format_parse(optarg, &a->format) || a->format == EPH_BENCH_HTML)
        return cli_error("bench: --format: unknown format '%s' (text, csv, md, json; --html DIR for the page)", optarg), -1;
      break;
    case O_HTML: a->html = optarg; break;
    case O_PROFILE: {
      eph_profile_spec spec;
      eph_profile_spec_init(&spec);
      if (eph_profile_spec_parse(&spec, optarg, &e) != EPH_OK) return cli_error("bench: --profile: %s", e.message), -1;
      if (strlen(optarg) >= sizeof a->config.profile) return cli_error("bench: --profile: too long"), -1;
      a->o.profile = optarg;
      snprintf(a->config.profile, sizeof a->config.profile, "%s", optarg);
      break;
    }
    case O_JOBS: a->jobs = optarg; break;
    case O_DIR: a->dir = optarg; break;
    case O_SIZE: a->size = optarg; break;
    case 'o': a->out = optarg; break;
    case O_TARGET:
      if (eph_bench_target_parse(optarg, &a->target, &e)) return cli_error("bench: %s", e.message), -1;
      a->have_target = true;
      break;
    case O_FACTOR: if (parse_double("--factor", optarg, &a->config.factor)) return -1; break;
    case O_HEAPB: {
      uint64_t v;
      if (!cli_opt_u64("--heap-bytes", optarg, CLI_SIZE, 0, UINT64_MAX, &v)) return -1;
      a->config.heap_bytes = v;
      break;
    }
    case O_INDEX: {
      unsigned long long x, y, z;
      char tail;
      if (sscanf(optarg, "%llu,%llu,%llu%c", &x, &y, &z, &tail) != 3)
        return cli_error("bench: --index: expected T,C,I, got '%s'", optarg), -1;
      a->index[0] = x, a->index[1] = y, a->index[2] = z;
      break;
    }
    case 'h': usage(stdout); exit(cli_stdout_done("the help"));
    default:
      if (optopt >= O_INV) cli_error("bench: %s needs a value", argv[optind - 1]);
      else if (optopt) cli_error("bench: -%c needs a value", optopt);
      else cli_error("bench: unknown option '%s' (try 'ephemera bench --help')", argv[optind - 1]);
      return -1;
    }
  }
  a->o.gcs = a->gcs;
  a->o.collectors = a->collectors;
  a->o.ncollectors = a->ncollectors;
  a->o.factors = a->factors;
  return 0;
}

static int parse_targets(int n, char **v, args *a) {
  if (!n) return cli_error("bench: no target (try 'ephemera bench --help')"), -1;
  a->targets = calloc((size_t)n, sizeof *a->targets);
  if (!a->targets) return cli_error("bench: out of memory"), -1;
  for (int i = 0; i < n; i++) {
    eph_error e;
    if (eph_bench_target_parse(v[i], &a->targets[i], &e)) return cli_error("bench: %s", e.message), -1;
  }
  a->o.targets = a->targets;
  a->o.ntargets = (size_t)n;
  eph_error e;
  char left_out[128];
  if (eph_bench_collectors_check(&a->o, a->collectors, &a->ncollectors, a->all_collectors, left_out, sizeof left_out, &e))
    return cli_error("bench: %s", e.message), -1;
  a->o.ncollectors = a->ncollectors;
  if (left_out[0]) cli_error("note: this JDK has no %s collector: left out of --collector all", left_out);
  return 0;
}

/* Tables on stdout, and the optional JSON and HTML; 0, or 1 if a row failed entirely. */
static int output(const args *a, const eph_bench_results *r) {
  eph_bench_report rep;
  eph_error e;
  if (eph_bench_summarize(r, &rep, &e)) return cli_error("bench: %s", e.message), 1;
  int rc = eph_render_bench(stdout, a->format, r, &rep, &e);
  if (rc || fflush(stdout)) cli_error("bench: cannot write the output"), rc = 1;
  if (!rc && a->out) {
    FILE *f = fopen(a->out, "w");
    if (!f) cli_error("bench: %s: %s", a->out, strerror(errno)), rc = 1;
    else {
      if (eph_bench_results_write_json(r, &rep, f, &e)) cli_error("bench: %s: %s", a->out, e.message), rc = 1;
      if (fclose(f) && !rc) cli_error("bench: %s: %s", a->out, strerror(errno)), rc = 1;
    }
  }
  if (!rc && a->html && eph_render_bench_html(&rep, a->html, &e)) cli_error("bench: %s", e.message), rc = 1;
  if (rep.wide_ci && a->format != EPH_BENCH_TEXT)
    cli_error("warning: %zu configuration(s) have a wall-time 95%% CI wider than 3%%", rep.wide_ci);
  for (size_t i = 0; i < rep.nrows && !rc; i++)
    if (!rep.rows[i].invocations) rc = 1;
  eph_bench_report_free(&rep);
  return rc;
}

static int run_one(args *a) {
  if (!a->have_target || !a->out) return cli_error("bench run-one: needs --target and -o"), 2;
  if (a->o.ngcs > 1) return cli_error("bench run-one: one --gc at most"), 2;
  if (a->o.ngcs) snprintf(a->config.gc, sizeof a->config.gc, "%s", a->gcs[0]);
  eph_bench_run run;
  eph_error e;
  if (eph_bench_run_one(&a->target, &a->config, a->o.warmup, a->o.iterations, &run, &e))
    return cli_error("bench run-one: %s", e.message), 1;
  run.target_index = a->index[0], run.config_index = a->index[1], run.invocation = a->index[2];
  FILE *f = fopen(a->out, "w");
  int rc = 0;
  if (!f) rc = 1, cli_error("bench run-one: %s: %s", a->out, strerror(errno));
  else {
    if (eph_bench_run_write_json(&run, f, &e)) rc = 1, cli_error("bench run-one: %s: %s", a->out, e.message);
    if (fclose(f) && !rc) rc = 1, cli_error("bench run-one: %s: %s", a->out, strerror(errno));
  }
  eph_bench_run_free(&run);
  return rc;
}

int cmd_bench(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("needs a TARGET or a subcommand");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return cli_stdout_done("the help");
  }
  static const char *const subs[] = {"run-one", "minheap", "plan", "merge", "report", "nominal"};
  const char *sub = NULL;
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
    if (!strcmp(argv[1], subs[i])) sub = subs[i];
  if (sub) argc--, argv++;
  args a = {0};
  eph_bench_options_init(&a.o);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return cli_error("bench: cannot find this executable: %s", strerror(errno)), 1;
  exe[n] = 0;
  a.o.exe = exe;
  eph_render_progress progress = {stderr, isatty(STDERR_FILENO) != 0};
  a.o.progress = eph_render_bench_progress;
  a.o.progress_ctx = &progress;
  if (parse(argc, argv, &a)) return free(a.targets), 2;
  int nops = argc - optind;
  char **ops = argv + optind;
  int rc = 0;
  eph_error e;
  eph_bench_results r = {0};
  if (!sub) {
    if (parse_targets(nops, ops, &a)) rc = 2;
    else if (eph_bench_sweep(&a.o, &r, &e)) rc = 1, cli_error("bench: %s", e.message);
    else rc = output(&a, &r);
  } else if (!strcmp(sub, "run-one")) {
    rc = run_one(&a);
  } else if (!strcmp(sub, "minheap")) {
    uint64_t bytes;
    bool cached;
    if (nops != 1) rc = 2, cli_error("bench minheap: expected one target");
    else if (parse_targets(nops, ops, &a)) rc = 2;
    else if (eph_bench_minheap(&a.o, &a.targets[0],
                               eph_bench_kind_is_java(a.targets[0].kind) ? (a.o.ncollectors ? a.collectors[0] : "g1")
                               : a.o.ngcs                               ? a.gcs[0]
                                                                        : "",
                               &bytes, &cached, &e))
      rc = 1, cli_error("bench minheap: %s", e.message);
    else {
      eph_render_bench_minheap(stdout, &a.targets[0], bytes, cached);
      rc = cli_stdout_done("the minimum heap");
    }
  } else if (!strcmp(sub, "plan")) {
    if (!a.jobs || !a.dir) rc = 2, cli_error("bench plan: needs --emit-jobs FILE and --results-dir DIR");
    else if (a.o.ci_target) rc = 2, cli_error("bench plan: --ci adapts to results as they come: run it locally");
    else if (parse_targets(nops, ops, &a)) rc = 2;
    else {
      FILE *f = fopen(a.jobs, "w");
      long jobs = -1;
      if (!f) cli_error("bench plan: %s: %s", a.jobs, strerror(errno));
      else if ((jobs = eph_bench_plan(&a.o, a.dir, f, &e)) < 0) cli_error("bench plan: %s", e.message);
      if (f && fclose(f)) jobs = -1, cli_error("bench plan: %s: %s", a.jobs, strerror(errno));
      if (jobs < 0) rc = 1;
      else eph_render_bench_plan(stderr, jobs, a.jobs, a.dir);
    }
  } else if (!strcmp(sub, "merge") || !strcmp(sub, "report")) {
    bool merge = !strcmp(sub, "merge");
    if (nops != 1) rc = 2, cli_error("bench %s: expected one %s", sub, merge ? "directory" : "results file");
    else if (merge ? eph_bench_results_load_dir(&r, ops[0], &e) : eph_bench_results_load(&r, ops[0], &e))
      rc = 3, cli_error("bench %s: %s", sub, e.message);
    else rc = output(&a, &r);
  } else { /* nominal */
    if (nops) rc = 2, cli_error("bench nominal: unexpected '%s'", ops[0]);
    else {
      if (!a.out) a.out = "nominal.json";
      FILE *f = fopen(a.out, "w");
      if (!f) rc = 1, cli_error("bench nominal: %s: %s", a.out, strerror(errno));
      else {
        if (eph_bench_nominal(&a.o, a.size ? a.size : "default", f, &e)) rc = 1, cli_error("bench nominal: %s", e.message);
        if (f != stdout && fclose(f) && !rc) rc = 1, cli_error("bench nominal: %s: %s", a.out, strerror(errno));
      }
    }
  }
  eph_bench_results_free(&r);
  free(a.targets);
  return rc;
}
