/* Internal helpers of the stage heuristics (src/solvers/): one stage's memory profile
 * under docs/formulation.md's accounting, and the cost of making a tensor present.
 * Not part of the public API. */
#ifndef XENGINE_SOLVERS_STAGE_MEM_H
#define XENGINE_SOLVERS_STAGE_MEM_H

#include <stdint.h>

#include <signal.h>

#include "xengine/instance.h"
#include "xengine/stages.h"

/* xe_heur_greedy_pair (include/xengine/solvers.h) that stops at the next greedy pass once
 * *intr is nonzero (Ctrl-C; intr may be NULL): the best schedule in hand then, or
 * XE_ETIMEOUT when there is none (src/solvers/greedy.c). */
int xe_heur_greedy_pair_intr(const xe_instance *in, int pins, double deadline, const volatile sig_atomic_t *intr,
                             xe_stages *out, xe_stages *second, xe_err *err);

/* Number of copies of i arriving on d / leaving d at step i of stage t. */
static inline int xe_heur_cin(const xe_stages *st, int t, int i, int d)
{
    int s = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) s += *xe_C(st, t, i, e, d);
    return s;
}
static inline int xe_heur_cout(const xe_stages *st, int t, int i, int d)
{
    int s = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) s += *xe_C(st, t, i, d, e);
    return s;
}

/* 1 when j is an input of v (v reads j's output). */
static inline int xe_heur_is_input(const xe_graph *g, int j, int v)
{
    for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++)
        if (g->pred[p] == j) return 1;
    return 0;
}

/* P[t][i][d] != 0: i is checkpointed on d at the start of stage t, computed on d or
 * copied to d at step i of stage t. */
static inline int xe_heur_present(const xe_stages *st, int t, int i, int d)
{
    return (i < t && *xe_S(st, t, i, d)) || *xe_R(st, t, i, d) || xe_heur_cin(st, t, i, d);
}

/* Memory of stage t exactly as xe_stages_eval counts it, for one stage only:
 * U[k * ndev + d] = bytes on d at step k (k = 0..t), and last[i * ndev + d] = the last
 * step of stage t that touches i on d (its own step when computed or copied there, or a
 * user's step when that user is computed on d), -1 when none (i <= t). The next stage's
 * checkpoints S[t+1] (absent for the last stage) decide what is not freed.
 * O(t * ndev^2 + edges among 0..t * ndev). */
void xe_heur_stage_eval(const xe_instance *in, const xe_stages *st, int t, int64_t *U, int *last);

/* Largest overflow of a profile from xe_heur_stage_eval: returns max over k <= t, d of
 * U - budget[d] when positive (and sets *step, *dev), else 0. */
int64_t xe_heur_worst_overflow(const xe_instance *in, int t, const int64_t *U, int *step, int *dev);

/* Reach costs: best[j * ndev + d] (j < upto) = estimated seconds to make j present on d
 * when avail[j * ndev + d] (a row of S: [n][ndev]) marks what is already resident:
 * 0 when available, else the cheaper of recomputing j on d (cost plus the reach costs of
 * its inputs on d) and copying it from a device e that holds it or recomputes it.
 * Shared inputs are counted once per use, so it over-estimates on DAGs. INFINITY when
 * nothing can produce j. O(upto * ndev^2 + edges * ndev). */
void xe_heur_reach_cost(const xe_instance *in, const uint8_t *avail, int upto, double *best);

/* xe_heur_reach_cost for j in [from, upto) only, best[0 .. from * ndev) taken as they
 * are: exact (the same values, bit for bit) when avail changed at rows >= from only since
 * best was computed for all of [0, upto), since row j depends on rows < j and avail row j
 * alone. The greedy's evictions change one row at a time (src/solvers/greedy.c, evict). */
void xe_heur_reach_cost_from(const xe_instance *in, const uint8_t *avail, int from, int upto, double *best);

/* Reach cost of one node i on d (as in xe_heur_reach_cost, treating (i, d) as not
 * available) from the reach costs `best` of its inputs under `avail`. */
double xe_heur_reach_one(const xe_instance *in, const uint8_t *avail, const double *best, int i, int d);

#endif
