/*
 * main.c — `ephemera COMMAND ...`: dispatch to the subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} COMMANDS[] = {
    {"workloads", cmd_workloads, "list the workloads, their sizes and options"},
    {"run", cmd_run, "run a workload: ephemera run WORKLOAD [--size S] [--gc PARAMS] [--retain CLASSES]"},
    {"dump", cmd_dump, "print an .eph file: ephemera dump FILE [--csv|--json]"},
    {"merlin", cmd_merlin, "offline Merlin over a trace: ephemera merlin TRACE [--check] [-o OUT]"},
    {"trace", cmd_trace, "trace tools: ephemera trace granulate IN OUT --granule K"},
    {"report", cmd_report, "lifetime report: ephemera report FILE [--format text|csv|json|html] [-o DIR]"},
    {"export", cmd_export, "other tools' formats: ephemera export FILE --pprof OUT.pb.gz (docs/viewing.md)"},
    {"compare", cmd_compare, "two profiles side by side: ephemera compare A B"},
    {"tune", cmd_tune, "GC parameters from one profile, verified by runs: ephemera tune WORKLOAD|--cmd CMD|--lua SCRIPT"},
    {"sim", cmd_sim, "GC simulator: ephemera sim PROFILE [--collector C] [--gc PARAMS]... | sim calibrate"},
    {"bench", cmd_bench, "benchmark targets DaCapo Chopin's way: ephemera bench TARGET... [--heap F1,F2] (docs/bench.md)"},
    {"lua", cmd_lua, "profile a Lua 5.4 script: ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] SCRIPT [ARGS]"},
};

static int usage(FILE *out) {
  fprintf(out, "usage: ephemera COMMAND [ARGS...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].help);
  fprintf(out, "\n'ephemera COMMAND --help' describes a command.\n" CLI_EXIT_HELP);
  return cli_output_done(out, "the help", false) ? CLI_OK : CLI_FAILED;
}

int main(int argc, char **argv) {
  cli_command = "ephemera";
  if (argc < 2) {
    cli_error("no command given (try 'ephemera --help')");
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    if (argc > 2) {
      cli_error("unexpected argument '%s' after %s (try 'ephemera COMMAND --help')", argv[2], argv[1]);
      return CLI_USAGE;
    }
    return usage(stdout);
  }
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    if (!strcmp(argv[1], COMMANDS[i].name)) {
      cli_command = COMMANDS[i].name;
      return COMMANDS[i].run(argc - 1, argv + 1);
    }
  cli_error("unknown command '%s' (try 'ephemera --help')", argv[1]);
  return CLI_USAGE;
}
