/*
 * paper.c — the Merlin paper's collectors (TOPLAS 2006 §7): not built yet.
 */
#include "sim_run.h"

eph_status sim_paper(const eph_sim_input *in, const eph_sim_config *cfg, const uint64_t *death, eph_sim_result *res,
                     eph_error *err) {
  (void)in, (void)death, (void)res;
  eph_error_fill(err, EPH_ERR_INVALID, "collector '%s' is not implemented yet (only spur is)",
                 eph_sim_collector_name(cfg->collector));
  return EPH_ERR_INVALID;
}
