/*
 * main.c — `ephemera COMMAND ...`: dispatch to the subcommands.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("ephemera: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

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
    {"compare", cmd_compare, "two profiles side by side: ephemera compare A B"},
    {"tune", cmd_tune, "GC parameters from one profile, verified by runs: ephemera tune WORKLOAD|--cmd CMD|--lua SCRIPT"},
    {"sim", cmd_sim, "GC simulator: ephemera sim PROFILE [--collector C] [--gc PARAMS]... | sim calibrate"},
    {"bench", cmd_bench, "benchmark targets DaCapo Chopin's way: ephemera bench TARGET... [--heap F1,F2] (docs/bench.md)"},
    {"lua", cmd_lua, "profile a Lua 5.4 script: ephemera lua [--profile SPEC] [-o FILE] [--gc LUAGC] SCRIPT [ARGS]"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: ephemera COMMAND [ARGS...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].help);
  fprintf(out, "\n'ephemera COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
  cli_error("unknown command '%s' (try 'ephemera --help')", argv[1]);
  return 2;
}
