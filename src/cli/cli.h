/*
 * cli.h — the `ephemera` command's subcommands and the helpers they share
 * to parse arguments and to report errors, always as one line on stderr
 * starting with "ephemera: ".
 * Layer: CLI, on top (docs/architecture.md): it parses and dispatches.
 *
 * Exit status, one meaning each (CLI_EXIT_HELP is what --help says):
 *   0 success; 1 the run or operation failed (including a failed write to
 *   the output); 2 usage error (bad option, bad number, bad argument);
 *   3 bad input file (unreadable, malformed); 128+N killed by signal N.
 */
#ifndef EPH_CLI_H
#define EPH_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ephemera/heap.h"
#include "analysis/analysis.h"
#include "number.h"

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2, CLI_BAD_INPUT = 3 };

#define CLI_EXIT_HELP                                                                                        \
  "exit status: 0 success; 1 the run or operation failed (including a failed write to the output);\n"      \
  "  2 usage error (bad option, number or argument); 3 bad input file (unreadable, malformed);\n"          \
  "  128+N killed by signal N (after finishing the profile)\n"

int cmd_workloads(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_merlin(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_lua(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* The running command's name ("report", "trace granulate"), set by main
 * (and by commands with subcommands) for the messages below. */
extern const char *cli_command;
int cmd_bench(int argc, char **argv);

/* Prints "ephemera: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long with one-line errors: an unknown option or a missing value
 * prints "ephemera: CMD: unknown option '--x' (try 'ephemera CMD --help')"
 * or "ephemera: CMD: --x needs a value" and returns '?'.  shortopts must
 * start with ':' (or "+:" to stop at the first non-option).  Otherwise as
 * getopt_long (the option's character, -1 at the end).
 */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* A positional argument error, e.g. cli_usage_error("needs a FILE"):
 * "ephemera: CMD: needs a FILE (try 'ephemera CMD --help')"; returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Option values through the one number parser (number.h).  On a bad value
 * they print "ephemera: CMD: OPT: bad value 'TEXT' (expected ...)" and
 * return false; the caller returns CLI_USAGE.
 */
bool cli_opt_u64(const char *opt, const char *text, cli_number_kind kind, uint64_t min, uint64_t max, uint64_t *out);
bool cli_opt_double(const char *opt, const char *text, double min, double max, bool allow_percent, double *out);
/* The index of text in names (NULL-terminated), or -1 after "OPT: bad value 'x' (expected a, b or c)". */
int cli_opt_choice(const char *opt, const char *text, const char *const *names);

/* The analysis options `report` and `compare` share: --end death|alive|mid
 * and --lower recorded|proven, into o (false after the message above). */
bool cli_opt_end(const char *text, eph_analysis_opts *o);
bool cli_opt_lower(const char *text, eph_analysis_opts *o);
/*
 * Ends writing to f (stdout or a file the command opened, named what in
 * the message): flushes, or closes when close is true, and checks that
 * every write succeeded.  On failure prints "ephemera: CMD: writing WHAT:
 * <reason>" and returns false.
 */
bool cli_output_done(FILE *f, const char *what, bool close);

/* cli_output_done(stdout, what, false) as an exit status: CLI_OK or CLI_FAILED. */
int cli_stdout_done(const char *what);

/* The exit status for a file that failed to load with st: out of memory is
 * a failed operation (1), anything else a bad input file (3). */
int cli_load_failed(eph_status st);

#endif
