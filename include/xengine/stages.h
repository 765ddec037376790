/* xengine — stage-structured schedules: the R, S and C matrices of the MILP.
 *
 * Checkmate's stage structure (Jain et al., MLSys 2020, sec. 4) extended per device as in
 * XEngine (Schuler et al., TACO 2022) with explicit copies; docs/formulation.md is the
 * exact definition. For stages t = 0..n-1 and nodes i <= t, devices d, e:
 *   R[t][i][d] = 1   compute i on d at step i of stage t (R[t][t][*] has at least one 1)
 *   S[t][i][d] = 1   i is resident on d when stage t begins (checkpoint), i < t
 *   C[t][i][d][e] = 1 copy i from d to e at step i of stage t (after the computes)
 * Stage t runs steps k = 0..t in order. Flat byte arrays, row-major as indexed above. */
#ifndef XENGINE_STAGES_H
#define XENGINE_STAGES_H

#include <stdint.h>

#include "xengine/instance.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xe_stages {
    int n, ndev;
    uint8_t *R; /* [n][n][ndev] */
    uint8_t *S; /* [n][n][ndev] */
    uint8_t *C; /* [n][n][ndev][ndev] */
} xe_stages;

/* Allocates all-zero matrices for n nodes and ndev devices; XE_ENOMEM. */
int xe_stages_init(xe_stages *st, int n, int ndev);
void xe_stages_clear(xe_stages *st);
int xe_stages_copy(xe_stages *dst, const xe_stages *src);
/* 1 when a and b hold the same schedule: the same n and ndev, both allocated, R, S and C
 * (both NULL counts as equal) byte for byte; else 0. */
int xe_stages_equal(const xe_stages *a, const xe_stages *b);

static inline uint8_t *xe_R(const xe_stages *s, int t, int i, int d) { return &s->R[((int64_t)t * s->n + i) * s->ndev + d]; }
static inline uint8_t *xe_S(const xe_stages *s, int t, int i, int d) { return &s->S[((int64_t)t * s->n + i) * s->ndev + d]; }
static inline uint8_t *xe_C(const xe_stages *s, int t, int i, int d, int e)
{
    return &s->C[(((int64_t)t * s->n + i) * s->ndev + d) * s->ndev + e];
}

/* Memory and frees under the MILP's own accounting (docs/formulation.md, eq. U and
 * FREE): U[(t * n + k) * ndev + d] = bytes resident on d at step k of stage t, counted
 * after the computes and incoming copies of step k and before its frees; FREE (may be
 * NULL) gets [t][i][k][d] flattened as ((t*n + i)*n + k)*ndev + d: 1 when i is freed
 * on d right after step k. Returns XE_OK when the matrices satisfy every structural
 * constraint (dependencies, copy sources, checkpoint carry, one presence per step,
 * first computation of t in stage t, devices able to run what they compute), else
 * XE_EINVAL with the first violated constraint in err. Budgets are not checked here:
 * compare U with them (xe_stages_check). U is caller-allocated [n*n*ndev] or NULL. */
int xe_stages_eval(const xe_instance *in, const xe_stages *st, double *U, uint8_t *FREE,
                   xe_err *err);

/* xe_stages_eval plus every U within the budgets; XE_EINFEASIBLE naming the stage, step
 * and device of the first overflow. Evaluates one stage at a time (n x ndev doubles,
 * not U's n x n x ndev). */
int xe_stages_check(const xe_instance *in, const xe_stages *st, xe_err *err);

/* maxu[d] (caller's [ndev]) = the largest U over every stage and step on device d, in
 * bytes (0 without steps), one stage at a time; XE_EINVAL as xe_stages_eval (maxu then
 * unspecified), XE_ENOMEM. */
int xe_stages_max_use(const xe_instance *in, const xe_stages *st, double *maxu, xe_err *err);

/* Objective of the stage schedule: sum of R * cost + C * copy cost, in seconds. */
double xe_stages_cost(const xe_instance *in, const xe_stages *st);

/* Removes what nothing uses, to a fixpoint: a recomputation R[t][i][d] (i < t), an
 * incoming copy C[t][i][e][d] or a checkpoint S[t][i][d] whose tensor no later step of
 * stage t reads on d (no user computed on d, no copy out of d) and stage t+1 does not
 * keep on d. The first computation R[t][t] is never removed. Cost and every U can only
 * go down, so valid matrices stay valid (zero-cost nodes otherwise invite pointless
 * recomputations that the objective does not see). Returns the number of entries
 * removed. */
int xe_stages_prune(const xe_instance *in, xe_stages *st);

/* Turns valid stage matrices into an event list (appended to out): per stage, per step k,
 * computes of k, then copies of k, then frees of every tensor with no later use in the
 * stage that stage t+1 does not keep; at the stage end, frees whatever t+1 does not keep.
 * Frees are as early as the structure allows, so memory never exceeds xe_stages_eval's U. */
int xe_stages_to_schedule(const xe_instance *in, const xe_stages *st, xe_schedule *out,
                          xe_err *err);

/* The stage matrices of an event list, where it has them (the inverse of
 * xe_stages_to_schedule): stage t holds the computes from just after node t-1's first
 * computation up to node t's first computation (R), S[t] = what is resident when stage
 * t's first compute runs. The event list must compute every node, first computations in
 * index order (0, 1, ..., n-1), at most one compute of a node per device and stage, and
 * no copies; the matrices must then pass xe_stages_check (the stage model frees as early
 * as its structure allows, which can differ from the event list's frees). out is
 * initialised here (free with xe_stages_clear; cleared on failure). Returns XE_OK,
 * XE_EUNSUPPORTED (naming the first event or stage that does not fit the structure, or
 * the check's message), XE_ENOMEM. Used to hand the chain DP's event lists
 * (include/xengine/baselines.h) to LNS and the MILP as stage schedules. */
int xe_stages_from_schedule(const xe_instance *in, const xe_schedule *s, xe_stages *out, xe_err *err);

/* The same; with prune set, xe_stages_prune runs before the check. A stage holds a
 * checkpoint that none of its steps touches until it ends, where the event list may free
 * it earlier; the prune drops such checkpoints (and whatever else nothing reads), so
 * that the check sees no more bytes than the list held (xe_instance_restage). */
int xe_stages_from_schedule_ex(const xe_instance *in, const xe_schedule *s, int prune, xe_stages *out, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
