/* Internal helpers shared by the baseline solvers (src/solvers/{chen,one_device,baseline}.c). */
#ifndef XENGINE_SOLVERS_BASELINE_UTIL_H
#define XENGINE_SOLVERS_BASELINE_UTIL_H

#include "xengine/baselines.h"

/* Turns st (structurally valid: xe_stages_eval) into events (appended to out when
 * non-NULL, else discarded) and replays them with xe_sim_run: XE_OK with *cost =
 * total_time (seconds); XE_EINFEASIBLE when they exceed a budget (and replay fine with
 * unbounded budgets); XE_EINTERNAL when the simulator rejects them otherwise; XE_ENOMEM.
 * what names the method. */
int xe_bl_stages_sim(const xe_instance *in, const xe_stages *st, const char *what,
                     xe_schedule *out, double *cost, xe_err *err);

#endif
