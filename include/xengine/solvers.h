/* xengine — schedule strategies other than the MILP, all producing stage matrices
 * (xe_stages) judged by the same checks and the same simulator. */
#ifndef XENGINE_SOLVERS_H
#define XENGINE_SOLVERS_H

#include "xengine/instance.h"
#include "xengine/stages.h"

/* Greedy stage-by-stage heuristic (docs/heuristic.md): in stage t, t runs on the fastest
 * device where it fits; missing inputs are copied in or recomputed; checkpoints are kept
 * while the budgets allow and evicted by a cost-per-byte rule when they do not. On XE_OK,
 * out (initialised by the callee; caller clears) passes xe_stages_check.
 * XE_EINFEASIBLE when it finds no schedule (not a proof that none exists). */
int xe_heur_greedy(const xe_instance *in, xe_stages *out, xe_err *err);

/* Checkpoint-all on device d: every node computed once on d, kept while it has later
 * users. XE_EINFEASIBLE when it does not fit d's budget or d cannot run some node. */
int xe_heur_checkpoint_all(const xe_instance *in, int d, xe_stages *out, xe_err *err);

/* Budget range of device d with the other devices' budgets fixed: *lower = bytes every
 * schedule needs on d (the largest footprint, mem of a node plus its inputs, among the
 * nodes that no other device can hold with their inputs; 0 when none); *upper = the
 * smallest budget, to 1% by bisection, at which xe_heur_greedy finds a schedule (0 when
 * it finds none even at the no-recomputation peak plus the largest footprint).
 * upper may be NULL to skip the bisection. in is not modified (a copy is used). */
int xe_budget_range(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err);

#endif
