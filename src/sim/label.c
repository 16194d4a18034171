/*
 * label.c — how the simulator names a size and a configuration, e.g.
 * "spur eden=1M,headroom=1M,shrink=4M,ratio=0.33,tenure=3" or
 * "ss heap=4M (2x)": the labels of its results, which every renderer shows.
 */
#include <stdio.h>

#include "sim_internal.h"

void eph_sim_size_text(char *buf, size_t len, uint64_t v) {
  if (v && v % (1u << 30) == 0) snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
  else if (v && v % (1u << 20) == 0) snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
  else if (v && v % (1u << 10) == 0) snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
  else snprintf(buf, len, "%llu", (unsigned long long)v);
}

void eph_sim_config_label(const eph_sim_config *cfg, const eph_sim_result *res, char *buf, size_t len) {
  if (cfg->collector == EPH_SIM_SPUR) {
    char e[32], h[32], s[32];
    const eph_gc_params *p = &cfg->params;
    eph_sim_size_text(e, sizeof e, p->eden_bytes);
    eph_sim_size_text(h, sizeof h, p->growth_headroom);
    eph_sim_size_text(s, sizeof s, p->shrink_threshold);
    int n = snprintf(buf, len, "spur eden=%s,headroom=%s,shrink=%s,ratio=%g,tenure=%lu", e, h, s, p->gc_ratio,
                     p->tenure_age);
    if (p->max_heap && n > 0 && (size_t)n < len) {
      char m[32];
      eph_sim_size_text(m, sizeof m, p->max_heap);
      snprintf(buf + n, len - (size_t)n, ",max=%s", m);
    }
  } else {
    char h[32];
    uint64_t bytes = res ? res->heap_bytes : cfg->heap_bytes;
    if (bytes) eph_sim_size_text(h, sizeof h, bytes);
    else snprintf(h, sizeof h, "%gx", cfg->heap_factor);
    int n = snprintf(buf, len, "%s heap=%s", eph_sim_collector_name(cfg->collector), h);
    if (res && !cfg->heap_bytes && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " (%gx)", cfg->heap_factor);
  }
}
