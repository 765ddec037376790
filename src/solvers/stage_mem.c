/* One stage's memory profile (the MILP's U and FREE accounting, docs/formulation.md
 * constraints 7-8, restricted to a single stage) and reach-cost estimates. */
#include "stage_mem.h"

#include <math.h>

void xe_heur_stage_eval(const xe_instance *in, const xe_stages *st, int t, int64_t *U, int *last)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    int has_next = t + 1 < n;
    for (int d = 0; d < D; d++) {
        for (int i = 0; i <= t; i++) {
            int act = *xe_R(st, t, i, d) || xe_heur_cin(st, t, i, d) || xe_heur_cout(st, t, i, d);
            last[i * D + d] = act ? i : -1;
        }
        /* users are visited in increasing step order, so the last write is the latest */
        for (int k = 0; k <= t; k++)
            if (*xe_R(st, t, k, d))
                for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) last[g->pred[p] * D + d] = k;
        int64_t u = 0;
        for (int i = 0; i < t; i++)
            if (*xe_S(st, t, i, d)) u += g->nodes[i].mem;
        for (int k = 0; k <= t; k++) {
            if (*xe_R(st, t, k, d) || xe_heur_cin(st, t, k, d)) u += g->nodes[k].mem;
            U[k * D + d] = u;
            int keepk = has_next && *xe_S(st, t + 1, k, d);
            /* k itself: touched at step k, no later user on d, not kept */
            if (last[k * D + d] == k && !keepk) u -= g->nodes[k].mem;
            if (!*xe_R(st, t, k, d)) continue;
            for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) {
                int i = g->pred[p];
                int keepi = has_next && *xe_S(st, t + 1, i, d);
                if (!keepi && last[i * D + d] == k) u -= g->nodes[i].mem;
            }
        }
    }
}

int64_t xe_heur_worst_overflow(const xe_instance *in, int t, const int64_t *U, int *step, int *dev)
{
    int D = in->ndev;
    int64_t worst = 0;
    for (int k = 0; k <= t; k++)
        for (int d = 0; d < D; d++) {
            int64_t ex = U[k * D + d] - in->dev[d].budget;
            if (ex > worst) {
                worst = ex;
                *step = k;
                *dev = d;
            }
        }
    return worst;
}

/* Cost of computing i on each device from `best` inputs (INFINITY where it cannot). */
static void recompute_costs(const xe_instance *in, const double *best, int i, double *rec)
{
    const xe_graph *g = in->g;
    int D = in->ndev;
    for (int d = 0; d < D; d++) {
        if (!xe_can_run(in, i, d)) {
            rec[d] = INFINITY;
            continue;
        }
        double c = xe_cost(in, i, d);
        for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++) c += best[g->pred[p] * D + d];
        rec[d] = c;
    }
}

double xe_heur_reach_one(const xe_instance *in, const uint8_t *avail, const double *best, int i, int d)
{
    int D = in->ndev;
    double rec[XE_MAX_DEV];
    recompute_costs(in, best, i, rec);
    double b = rec[d];
    for (int e = 0; e < D; e++) {
        if (e == d) continue;
        double src = avail[i * D + e] ? 0.0 : rec[e];
        double c = src + xe_copy_cost(in, i, e, d);
        if (c < b) b = c;
    }
    return b;
}

void xe_heur_reach_cost(const xe_instance *in, const uint8_t *avail, int upto, double *best)
{
    xe_heur_reach_cost_from(in, avail, 0, upto, best);
}

void xe_heur_reach_cost_from(const xe_instance *in, const uint8_t *avail, int from, int upto, double *best)
{
    int D = in->ndev;
    double rec[XE_MAX_DEV];
    for (int j = from; j < upto; j++) {
        recompute_costs(in, best, j, rec);
        for (int d = 0; d < D; d++) {
            if (avail[j * D + d]) {
                best[j * D + d] = 0.0;
                continue;
            }
            double b = rec[d];
            for (int e = 0; e < D; e++) {
                if (e == d) continue;
                double src = avail[j * D + e] ? 0.0 : rec[e];
                double c = src + xe_copy_cost(in, j, e, d);
                if (c < b) b = c;
            }
            best[j * D + d] = b;
        }
    }
}
