/*
 * plot_gnuplot.c — runs gnuplot (Debian: gnuplot-nox) on a script and a data
 * file in a fresh temporary directory and returns the SVG it wrote.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "render.h"

bool eph_gnuplot_available(void) {
  const char *g = getenv("EPH_GNUPLOT");
  if (g && !*g) return false; /* EPH_GNUPLOT= (empty): pretend it is missing (tests) */
  return system(g ? "true" : "command -v gnuplot >/dev/null 2>&1") == 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n + 1 < cap) break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) free(buf);
    buf = nb;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  if (len) *len = n;
  return buf;
}

char *eph_gnuplot_svg(const char *script, const char *data, char *why, size_t whylen) {
  return eph_gnuplot_svg_sized(script, data, 760, 380, why, whylen);
}

char *eph_gnuplot_svg_sized(const char *script, const char *data, int w, int h, char *why, size_t whylen) {
  char dir[] = "/tmp/eph-plot-XXXXXX";
  if (!mkdtemp(dir)) {
    snprintf(why, whylen, "cannot make a temporary directory: %s", strerror(errno));
    return NULL;
  }
  char sp[64], dp[64], op[64], ep[64], cmd[512];
  snprintf(sp, sizeof sp, "%s/plot.gp", dir);
  snprintf(dp, sizeof dp, "%s/data.dat", dir);
  snprintf(op, sizeof op, "%s/plot.svg", dir);
  snprintf(ep, sizeof ep, "%s/err.txt", dir);
  char *svg = NULL;
  FILE *f = fopen(dp, "w");
  if (f) {
    fputs(data, f);
    fclose(f);
  }
  f = fopen(sp, "w");
  if (f) {
    fprintf(f, "set terminal svg size %d,%d dynamic enhanced font 'Helvetica,12' background rgb 'white'\n"
               "set output '%s'\ndatafile = '%s'\n%s\nset output\n", w, h, op, dp, script);
    fclose(f);
  }
  const char *g = getenv("EPH_GNUPLOT");
  snprintf(cmd, sizeof cmd, "%s '%s' 2>'%s' </dev/null", g && *g ? g : "gnuplot", sp, ep);
  int rc = system(cmd);
  if (rc == 0) svg = slurp(op, NULL);
  if (!svg) {
    char *e = slurp(ep, NULL);
    if (e) { /* gnuplot's last non-empty line names the problem */
      size_t n = strlen(e);
      while (n && (e[n - 1] == '\n' || e[n - 1] == ' ')) e[--n] = 0;
      char *nl = strrchr(e, '\n');
      if (nl) memmove(e, nl + 1, strlen(nl + 1) + 1);
    }
    snprintf(why, whylen, "gnuplot failed (exit %d)%s%s", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, e && *e ? ": " : "", e ? e : "");
    free(e);
  }
  unlink(sp), unlink(dp), unlink(op), unlink(ep);
  rmdir(dir);
  return svg;
}
