/*
 * options.c — a runtime profile's SPEC: the heap profiler's syntax
 * (eph_profile_spec_parse), of which only mode=gc applies (a runtime's own
 * collector reports each death), plus the adapters' own keys: sites=on|off,
 * summary=on|off, stacks=N, and classes= over the runtime's class table.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ephemera/spec.h"
#include "runtime/adapter.h"

void rt_options_init(rt_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->sample_every = 1;
  opt->seed = 1;
  opt->sites = true;
  snprintf(opt->out, sizeof opt->out, "ephemera.eph");
}

static bool parse_classes(rt_options *opt, const rt_runtime *rt, const char *list, char *msg, size_t msglen) {
  uint32_t mask = 0;
  const char *c = list;
  while (*c) {
    const char *end = strchr(c, ',');
    size_t len = end ? (size_t)(end - c) : strlen(c);
    while (len && isspace((unsigned char)*c)) c++, len--;
    while (len && isspace((unsigned char)c[len - 1])) len--;
    bool found = false;
    for (uint32_t k = 1; k < rt->nclasses; k++) {
      if (strlen(rt->class_names[k]) == len && !strncmp(c, rt->class_names[k], len)) {
        found = true;
        mask |= 1u << k;
        if (rt->class_also) mask |= rt->class_also[k];
      }
    }
    if (!found && len) {
      snprintf(msg, msglen, "profile spec: classes: unknown %s class '%.*s' (known: %s)", rt->title, (int)len, c,
               rt->classes_known);
      return false;
    }
    c += (end ? (size_t)(end - c) + 1 : strlen(c));
  }
  opt->class_mask = mask;
  return true;
}

bool rt_options_parse(rt_options *opt, const rt_runtime *rt, const char *spec, char *msg, size_t msglen) {
  /* sites=on|off, summary=on|off and stacks=N are ours; the rest is the heap profiler's syntax */
  char rest[2048] = "";
  bool sites = opt->sites, summary = opt->summary;
  unsigned stacks = opt->stacks;
  char buf[2048];
  if (strlen(spec) >= sizeof buf) {
    snprintf(msg, msglen, "profile spec too long");
    return false;
  }
  strcpy(buf, spec);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*item)) item++;
    if (!strncmp(item, "stacks=", 7)) {
      char *end;
      unsigned long d = strtoul(item + 7, &end, 10);
      if (end == item + 7 || *end || d > EPH_FORMAT_MAX_STACK + 1) {
        snprintf(msg, msglen, "profile spec: 'stacks': bad value '%s' (expected frames kept, 1..%d; 1 = the site alone)",
                 item + 7, EPH_FORMAT_MAX_STACK + 1);
        return false;
      }
      stacks = d > 1 ? (unsigned)d : 0;
      continue;
    }
    bool is_sites = !strncmp(item, "sites=", 6), is_summary = !strncmp(item, "summary=", 8);
    if (is_sites || is_summary) {
      const char *v = strchr(item, '=') + 1;
      bool on = !strcmp(v, "on");
      if (!on && strcmp(v, "off")) {
        snprintf(msg, msglen, "profile spec: '%s': bad value '%s' (expected on or off)",
                 is_sites ? "sites" : "summary", v);
        return false;
      }
      if (is_sites) sites = on;
      else summary = on;
      continue;
    }
    size_t n = strlen(rest);
    snprintf(rest + n, sizeof rest - n, "%s%s", n ? "," : "", item);
  }
  eph_profile_spec s;
  eph_profile_spec_init(&s);
  s.sample_every = opt->sample_every;
  s.sample_bytes = opt->sample_bytes;
  s.sample_fixed = opt->sample_fixed;
  s.seed = opt->seed;
  s.compress = opt->compress;
  snprintf(s.out, sizeof s.out, "%s", opt->out);
  eph_error err;
  if (eph_profile_spec_parse(&s, rest, &err) != EPH_OK) {
    snprintf(msg, msglen, "%s", err.message);
    return false;
  }
  if (s.mode != EPH_MODE_GC) {
    static const char *names[] = {"gc", "finalization", "merlin", "brute"};
    snprintf(msg, msglen, "profile spec: mode=%s does not apply to %s: %s", (unsigned)s.mode < 4 ? names[s.mode] : "?",
             rt->title, rt->mode_note);
    return false;
  }
  if (s.trace || s.granule) {
    snprintf(msg, msglen, "profile spec: %s does not apply to %s (only mode=gc)", s.trace ? "trace" : "granule",
             rt->title);
    return false;
  }
  rt_options o = *opt;
  if (s.classes[0] && !parse_classes(&o, rt, s.classes, msg, msglen)) return false;
  o.sample_every = s.sample_every;
  o.sample_bytes = s.sample_bytes;
  o.sample_fixed = s.sample_fixed;
  o.seed = s.seed;
  o.compress = s.compress;
  o.sites = sites;
  o.stacks = stacks;
  o.summary = summary;
  snprintf(o.out, sizeof o.out, "%s", s.out);
  *opt = o;
  return true;
}
