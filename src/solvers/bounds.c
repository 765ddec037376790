/* Lower bounds on the objective (docs/lns.md, "Bounds") and the minimum feasible budget
 * (docs/heuristic.md, "Minimum budget"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/milp.h"
#include "xengine/solvers.h"

/* 1 when device d can compute v with its inputs resident within d's budget. */
static int fits(const xe_instance *in, int v, int d)
{
    return xe_can_run(in, v, d) && xe_graph_footprint(in->g, v) <= in->dev[d].budget;
}

double xe_bound_cheapest(const xe_instance *in)
{
    const xe_graph *g = in->g;
    int D = in->ndev;
    double lb = 0;
    for (int v = 0; v < g->n; v++) {
        double c = INFINITY;
        for (int d = 0; d < D; d++)
            if (fits(in, v, d)) c = fmin(c, xe_cost(in, v, d));
        if (!isfinite(c)) return INFINITY;
        lb += c;
        /* a user that no device able to compute v can run: v travels at least once */
        int must_copy = 0;
        for (int p = g->succ_off[v]; p < g->succ_off[v + 1] && !must_copy; p++) {
            int w = g->succ[p], shared = 0;
            for (int d = 0; d < D; d++)
                if (fits(in, v, d) && fits(in, w, d)) shared = 1;
            must_copy = !shared;
        }
        if (must_copy) {
            double cc = INFINITY;
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++)
                    if (e != d && fits(in, v, d) && !fits(in, v, e)) cc = fmin(cc, xe_copy_cost(in, v, d, e));
            if (isfinite(cc)) lb += cc;
        }
    }
    return lb;
}

int xe_bound_lp(const xe_instance *in, double time_limit, int isolate, double *lp, int *infeasible, xe_err *err)
{
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.time_limit = time_limit;
    o.isolate = isolate;
    o.relax = 1;
    xe_milp_result r;
    *lp = -INFINITY;
    *infeasible = 0;
    int rc = xe_milp_solve(in, &o, &r, err);
    if (rc) return rc;
    if (r.status == XE_MILP_INFEASIBLE) *infeasible = 1;
    else if (isfinite(r.bound)) *lp = r.bound;
    xe_milp_result_clear(&r);
    return XE_OK;
}

/* 1 when the portfolio finds a schedule with device d's budget set to b. */
static int portfolio_fits(const xe_instance *in, int d, int64_t b, int *fatal, xe_err *err)
{
    xe_instance tmp = *in; /* shallow: only the budgets differ */
    tmp.dev[d].budget = b;
    xe_stages st;
    int rc = xe_heur_best_ex(&tmp, &st, NULL, 0, err);
    xe_stages_clear(&st);
    if (rc != XE_OK && rc != XE_EINFEASIBLE) *fatal = rc;
    return rc == XE_OK;
}

int xe_min_budget(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err)
{
    int rc = xe_budget_range(in, d, lower, NULL, err);
    if (rc) return rc;
    *upper = 0;
    int fatal = 0;
    int64_t hi = xe_instance_norecompute_peak(in->g) + xe_instance_min_footprint(in->g);
    if (!portfolio_fits(in, d, hi, &fatal, err)) return fatal ? fatal : XE_OK;
    int64_t a = *lower;
    if (portfolio_fits(in, d, a, &fatal, err)) {
        *upper = a;
        return XE_OK;
    }
    if (fatal) return fatal;
    /* invariant: fails at a, fits at hi */
    while (hi - a > 1 && (double)(hi - a) > 0.01 * (double)hi) {
        int64_t mid = a + (hi - a) / 2;
        if (portfolio_fits(in, d, mid, &fatal, err)) hi = mid;
        else if (fatal) return fatal;
        else a = mid;
    }
    *upper = hi;
    return XE_OK;
}
