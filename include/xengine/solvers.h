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

#endif
