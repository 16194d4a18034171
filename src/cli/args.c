/*
 * args.c — the commands' shared argument handling and error lines (cli.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_command = "ephemera";

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("ephemera: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ephemera: %s: ", cli_command);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (try 'ephemera %s --help')\n", cli_command);
  va_end(ap);
  return CLI_USAGE;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts) {
  opterr = 0; /* the messages are ours: one line, naming the command */
  int prev = optind;
  int c = getopt_long(argc, argv, shortopts, longopts, NULL);
  if (c != '?' && c != ':') return c;
  /* The option as written: a long one is the whole argument (up to any
   * '='); a short one is optopt (it may sit inside a cluster). */
  const char *arg = optind > prev ? argv[optind - 1] : argv[prev];
  char name[64];
  if (arg[0] == '-' && arg[1] == '-') snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
  else snprintf(name, sizeof name, "-%c", optopt);
  bool known = false; /* "--flag=value" for a flag is '?' too */
  for (const struct option *o = longopts; o && o->name && !known; o++)
    known = name[0] == '-' && name[1] == '-' && !strcmp(name + 2, o->name);
  if (c == ':') cli_error("%s: %s needs a value", cli_command, name);
  else if (known && strchr(arg, '=')) cli_error("%s: %s takes no value ('%s')", cli_command, name, arg);
  else cli_error("%s: unknown option '%s' (try 'ephemera %s --help')", cli_command, name, cli_command);
  return '?';
}

static void bad_value(const char *opt, const char *text, const char *why) {
  cli_error("%s: %s: bad value '%s' (%s)", cli_command, opt, text ? text : "", why);
}

bool cli_opt_u64(const char *opt, const char *text, cli_number_kind kind, uint64_t min, uint64_t max, uint64_t *out) {
  char why[128];
  if (cli_number_u64(text, kind, min, max, out, why, sizeof why)) return true;
  bad_value(opt, text, why);
  return false;
}

bool cli_opt_double(const char *opt, const char *text, double min, double max, bool allow_percent, double *out) {
  char why[128];
  if (cli_number_double(text, min, max, allow_percent, out, why, sizeof why)) return true;
  bad_value(opt, text, why);
  return false;
}

int cli_opt_choice(const char *opt, const char *text, const char *const *names) {
  char why[256] = "expected ";
  size_t n = 0;
  while (names[n]) n++;
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(text, names[i])) return (int)i;
    size_t len = strlen(why);
    snprintf(why + len, sizeof why - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
  }
  bad_value(opt, text, why);
  return -1;
}

bool cli_opt_end(const char *text, eph_analysis_opts *o) {
  static const char *const ends[] = {"death", "alive", "mid", NULL};
  static const eph_death_end end_of[] = {EPH_END_DEATH, EPH_END_ALIVE, EPH_END_MID};
  int k = cli_opt_choice("--end", text, ends);
  if (k >= 0) o->end = end_of[k];
  return k >= 0;
}

bool cli_opt_lower(const char *text, eph_analysis_opts *o) {
  static const char *const lowers[] = {"recorded", "proven", NULL};
  int k = cli_opt_choice("--lower", text, lowers);
  if (k >= 0) o->nepotism_safe = k == 1;
  return k >= 0;
}

bool cli_output_done(FILE *f, const char *what, bool close) {
  bool failed = ferror(f) != 0;
  errno = 0;
  /* A failed write keeps its bytes in the buffer (glibc), so the flush
   * meets the error again and errno says why. */
  int rc = close ? fclose(f) : fflush(f);
  if (rc == 0 && !failed) return true;
  /* Only the top level has no command ("ephemera: writing the help"). */
  const char *sep = strcmp(cli_command, "ephemera") ? ": " : "";
  cli_error("%s%swriting %s: %s", sep[0] ? cli_command : "", sep, what,
            errno ? strerror(errno) : "an earlier write failed");
  return false;
}

int cli_stdout_done(const char *what) { return cli_output_done(stdout, what, false) ? CLI_OK : CLI_FAILED; }

int cli_load_failed(eph_status st) { return st == EPH_ERR_NOMEM ? CLI_FAILED : CLI_BAD_INPUT; }
