/* Checkpoint-all: the no-recomputation schedule on one device as stage matrices. */
#include <stdlib.h>
#include <string.h>

#include "xengine/solvers.h"

int xe_heur_checkpoint_all(const xe_instance *in, int d, xe_stages *out, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n;
    memset(out, 0, sizeof *out);
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "checkpoint-all: device %d does not exist (instance has %d)", d, in->ndev);
    for (int v = 0; v < n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "checkpoint-all: device %s cannot run node %d (%s)",
                              in->dev[d].name, v, g->nodes[v].name);
    /* its stage matrices hold exactly the no-recomputation peak (tests/test_heuristic.c):
     * below it, infeasible without building them (O(n^2) cells and their check: 8 s on a
     * 10,000-node chain on gpu+cpu) */
    int64_t peak = xe_instance_norecompute_peak(g);
    if (peak == -1) return xe_err_set(err, XE_ENOMEM, "checkpoint-all: out of memory");
    if (peak > in->dev[d].budget)
        return xe_err_set(err, XE_EINFEASIBLE, "checkpoint-all on %s needs %lld B (the no-recomputation peak), budget %lld B",
                          in->dev[d].name, (long long)peak, (long long)in->dev[d].budget);
    int *lastuse = malloc((n > 0 ? (size_t)n : 1) * sizeof *lastuse);
    if (!lastuse) return xe_err_set(err, XE_ENOMEM, "checkpoint-all: out of memory");
    for (int v = 0; v < n; v++) lastuse[v] = xe_graph_last_use(g, v);
    int rc = xe_stages_init(out, n, in->ndev);
    if (rc) {
        free(lastuse);
        return xe_err_set(err, XE_ENOMEM, "checkpoint-all: out of memory for %d stages", n);
    }
    /* stage t computes t; S[t+1] keeps every i <= t that a later stage still reads */
    for (int t = 0; t < n; t++) {
        *xe_R(out, t, t, d) = 1;
        if (t + 1 < n)
            for (int i = 0; i <= t; i++)
                if (lastuse[i] > t) *xe_S(out, t + 1, i, d) = 1;
    }
    free(lastuse);
    xe_err e2;
    rc = xe_stages_check(in, out, &e2);
    if (rc) {
        xe_stages_clear(out);
        return xe_err_set(err, rc, "checkpoint-all on %s: %s", in->dev[d].name, e2.msg);
    }
    return XE_OK;
}
