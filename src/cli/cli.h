/*
 * cli.h — the `ephemera` command's subcommands.  Each returns the process
 * exit status: 0 success, 1 the work failed (a self-check, a bad file),
 * 2 bad usage.  Errors are one line on stderr starting with "ephemera: ".
 */
#ifndef EPH_CLI_H
#define EPH_CLI_H

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
int cmd_bench(int argc, char **argv);

/* Prints "ephemera: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
