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

/* ---- eviction bound (docs/lns.md, "Bounds") ------------------------------------------ */

typedef struct { double ratio, mem, delta; } evict_item;

static int cmp_ratio(const void *a, const void *b)
{
    double x = ((const evict_item *)a)->ratio, y = ((const evict_item *)b)->ratio;
    return x < y ? -1 : x > y;
}

double xe_bound_eviction(const xe_instance *in)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    double *cmin = malloc(sizeof *cmin * (size_t)n);
    int *last = malloc(sizeof *last * (size_t)n);
    evict_item *items = malloc(sizeof *items * (size_t)n);
    char *in_set = calloc((size_t)n, 1);
    double base = 0, best_extra = 0;
    if (!cmin || !last || !items || !in_set) goto out;
    for (int v = 0; v < n; v++) {
        double c = INFINITY;
        for (int d = 0; d < D; d++)
            if (fits(in, v, d)) c = fmin(c, xe_cost(in, v, d));
        if (!isfinite(c)) { base = INFINITY; goto out; }
        cmin[v] = c;
        base += c;
        last[v] = xe_graph_last_use(g, v);
    }
    /* O(D n^2 log n): 0.34 s at 5,000 nodes, 5.8 s at 20,000; above XE_EVICTION_MAX_NODES
     * only the sum of cheapest costs is returned (still a valid bound) */
    for (int d = 0; d < D && n <= XE_EVICTION_MAX_NODES; d++) {
        for (int t = 0; t < n; t++) {
            /* S_t = {t} + inputs of t + every u < t read after stage t */
            int64_t need = 0;
            int k = 0;
            memset(in_set, 0, (size_t)n);
            for (int u = 0; u < t; u++)
                if (last[u] > t) in_set[u] = 1;
            for (int p = g->pred_off[t]; p < g->pred_off[t + 1]; p++) in_set[g->pred[p]] = 2;
            in_set[t] = 3;
            for (int u = 0; u <= t; u++) {
                if (!in_set[u]) continue;
                need += g->nodes[u].mem;
                /* Absent from d at step t: u is resident on another device, computed there
                 * (cost above its cheapest) or copied there; or, for a tensor only read
                 * after stage t (in_set 1), resident nowhere and recomputed later. An input
                 * of t (2) is needed on the device running t, and t itself (3) is computed
                 * there for the first time, so neither can wait for a recomputation, and t
                 * cannot have been copied. */
                double delta = INFINITY;
                if (in_set[u] == 1) delta = cmin[u];
                if (in_set[u] != 3)
                    for (int e = 0; e < D; e++)
                        for (int f = 0; f < D; f++)
                            if (e != f) delta = fmin(delta, xe_copy_cost(in, u, e, f));
                for (int e = 0; e < D; e++)
                    if (e != d && fits(in, u, e)) delta = fmin(delta, xe_cost(in, u, e) - cmin[u]);
                if (g->nodes[u].mem > 0 && isfinite(delta))
                    items[k++] = (evict_item){fmax(delta, 0) / (double)g->nodes[u].mem, (double)g->nodes[u].mem,
                                              fmax(delta, 0)};
            }
            double excess = (double)(need - in->dev[d].budget);
            if (excess <= 0) continue;
            /* cheapest fractional cover of the excess (LP of this one row) */
            qsort(items, (size_t)k, sizeof *items, cmp_ratio);
            double extra = 0;
            for (int i = 0; i < k && excess > 0; i++) {
                double take = fmin(items[i].mem, excess);
                extra += items[i].ratio * take;
                excess -= take;
            }
            if (excess > 0) { base = INFINITY; goto out; } /* cannot fit at all */
            best_extra = fmax(best_extra, extra);
        }
    }
out:
    free(cmin), free(last), free(items), free(in_set);
    if (!isfinite(base)) return INFINITY;
    return base + best_extra;
}

double xe_bound_stage(const xe_instance *in)
{
    double lb = xe_bound_cheapest(in), ev = xe_bound_eviction(in);
    return isfinite(ev) ? fmax(lb, ev) : lb;
}
