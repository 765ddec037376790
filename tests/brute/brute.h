/* Brute-force reference solvers for tiny instances (ground truth for the MILP planner).
 *
 * Written from the text of docs/formulation.md and ../shared/PROBLEM.md only; they share
 * no code with src/core/stages.c, src/milp/ or src/sim/.
 *
 *   xe_bf_stage_solve  exact optimum over the stage class of docs/formulation.md (R, S,
 *                      C, FREE with constraints 1-8), by dynamic programming over the
 *                      steps of every stage; the state between two steps is the set of
 *                      (node, device) pairs resident at that moment.
 *   xe_bf_event_solve  exact optimum over ALL valid event lists of PROBLEM.md, by
 *                      Dijkstra over (computed-at-least-once mask, resident mask per
 *                      device).
 *
 * Both need n <= XE_BF_MAX_N and ndev <= XE_BF_MAX_DEV, and (for memory) n * ndev <= 14
 * (stage) and n * (ndev + 1) <= 20 (event); they return XE_EINVAL beyond that. Costs are
 * seconds. Neither keeps state between calls. */
#ifndef XENGINE_TESTS_BRUTE_H
#define XENGINE_TESTS_BRUTE_H

#include <stdint.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

#define XE_BF_MAX_N 8
#define XE_BF_MAX_DEV 3

/* An optimal stage schedule in the notation of docs/formulation.md:
 * R[t][i][d], S[t][i][d] (i < t), C[t][i][d][e]. Unused entries are 0. */
typedef struct xe_bf_stages {
    int n, ndev;
    uint8_t R[XE_BF_MAX_N][XE_BF_MAX_N][XE_BF_MAX_DEV];
    uint8_t S[XE_BF_MAX_N][XE_BF_MAX_N][XE_BF_MAX_DEV];
    uint8_t C[XE_BF_MAX_N][XE_BF_MAX_N][XE_BF_MAX_DEV][XE_BF_MAX_DEV];
} xe_bf_stages;

/* Stage-class optimum. Returns XE_OK with *cost (seconds) and, when sol is non-NULL,
 * one optimal schedule; XE_EINFEASIBLE when no stage schedule fits the budgets;
 * XE_EINVAL when the instance is too large; XE_ENOMEM. */
int xe_bf_stage_solve(const xe_instance *in, double *cost, xe_bf_stages *sol, xe_err *err);

/* Event-list optimum. Returns XE_OK with *cost (seconds) and, when events is non-NULL,
 * one optimal event list appended to it; XE_EINFEASIBLE when no valid event list exists;
 * XE_EINVAL when the instance is too large; XE_ENOMEM. */
int xe_bf_event_solve(const xe_instance *in, double *cost, xe_schedule *events, xe_err *err);

#endif
