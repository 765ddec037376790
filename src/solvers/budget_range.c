/* The smallest budget of one device: a proven lower bound from single-node footprints
 * and an upper bound from the greedy heuristic, found by bisection. */
#include <stdlib.h>

#include "xengine/solvers.h"

/* 1 when greedy finds a schedule with device d's budget set to b. */
static int greedy_fits(const xe_instance *in, int d, int64_t b, int *fatal, xe_err *err)
{
    xe_instance tmp = *in; /* shallow: only the budgets differ */
    tmp.dev[d].budget = b;
    xe_stages st = {0};
    int rc = xe_heur_greedy_ex(&tmp, 0, &st, err); /* whether, not how cheaply */
    xe_stages_clear(&st);
    if (rc != XE_OK && rc != XE_EINFEASIBLE) *fatal = rc;
    return rc == XE_OK;
}

int xe_budget_range(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err)
{
    const xe_graph *g = in->g;
    int64_t lo = 0;
    for (int v = 0; v < g->n; v++) {
        int64_t f = xe_graph_footprint(g, v);
        int elsewhere = 0;
        for (int e = 0; e < in->ndev; e++)
            if (e != d && xe_can_run(in, v, e) && f <= in->dev[e].budget) elsewhere = 1;
        if (!elsewhere && f > lo) lo = f;
    }
    *lower = lo;
    if (!upper) return XE_OK;
    *upper = 0;
    int fatal = 0;
    int64_t hi = xe_instance_norecompute_peak(g) + xe_instance_min_footprint(g);
    if (!greedy_fits(in, d, hi, &fatal, err)) return fatal ? fatal : XE_OK;
    int64_t a = lo; /* greedy fails at a (or a is the proven bound) */
    if (a > 0 && greedy_fits(in, d, a, &fatal, err)) {
        *upper = a;
        return XE_OK;
    }
    if (fatal) return fatal;
    while (hi - a > (hi / 100 > 1 ? hi / 100 : 1)) {
        int64_t mid = a + (hi - a) / 2;
        if (greedy_fits(in, d, mid, &fatal, err)) hi = mid;
        else if (fatal) return fatal;
        else a = mid;
    }
    *upper = hi;
    return XE_OK;
}
