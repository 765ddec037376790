/* Lower bounds on the objective (docs/lns.md, "Bounds") and the minimum feasible budget
 * (docs/heuristic.md, "Minimum budget"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/milp.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

/* 1 when device d can compute v with its inputs resident within d's budget; fp[n] holds
 * every node's footprint (footprints()), or is NULL (then summed here, O(indegree)). */
static int fits(const xe_instance *in, const int64_t *fp, int v, int d)
{
    return xe_can_run(in, v, d) && (fp ? fp[v] : xe_graph_footprint(in->g, v)) <= in->dev[d].budget;
}

/* Every node's footprint (output and inputs, bytes), computed once: summing a node's
 * inputs at every question made the eviction bound O(n^3) on a node that reads n
 * others (8,000 nodes: 158 s past a 1 s limit). NULL when out of memory (fits() then
 * sums them itself). Caller frees. */
static int64_t *footprints(const xe_graph *g)
{
    int64_t *fp = malloc(sizeof *fp * (size_t)(g->n ? g->n : 1));
    if (fp)
        for (int v = 0; v < g->n; v++) fp[v] = xe_graph_footprint(g, v);
    return fp;
}

double xe_bound_cheapest(const xe_instance *in)
{
    const xe_graph *g = in->g;
    int D = in->ndev;
    double lb = 0;
    int64_t *fp = footprints(g);
    for (int v = 0; v < g->n; v++) {
        double c = INFINITY;
        for (int d = 0; d < D; d++)
            if (fits(in, fp, v, d)) c = fmin(c, xe_cost(in, v, d));
        if (!isfinite(c)) {
            lb = INFINITY;
            break;
        }
        lb += c;
        /* a user that no device able to compute v can run: v travels at least once */
        int must_copy = 0;
        for (int p = g->succ_off[v]; p < g->succ_off[v + 1] && !must_copy; p++) {
            int w = g->succ[p], shared = 0;
            for (int d = 0; d < D; d++)
                if (fits(in, fp, v, d) && fits(in, fp, w, d)) shared = 1;
            must_copy = !shared;
        }
        if (must_copy) {
            double cc = INFINITY;
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++)
                    if (e != d && fits(in, fp, v, d) && !fits(in, fp, v, e)) cc = fmin(cc, xe_copy_cost(in, v, d, e));
            if (isfinite(cc)) lb += cc;
        }
    }
    free(fp);
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
    int rc = xe_heur_best_ex(&tmp, &st, NULL, 0, 0.0, err);
    xe_stages_clear(&st);
    if (rc != XE_OK && rc != XE_EINFEASIBLE) *fatal = rc;
    return rc == XE_OK;
}

/* 1 when checkpoint-all on device d fits with d's budget set to b (a quick first
 * check: at the no-recomputation peak it does wherever d can run every node). Its
 * resident bytes are those of xe_instance_norecompute_peak, so it fits exactly when d
 * runs every node and that peak is within b: O(n + m), where building its stage
 * matrices (xe_heur_checkpoint_all) is O(n^2) and took 9 s on a 20,000-node chain,
 * past a 2-s limit, before an infeasible budget's hint (2026-12-02). */
static int checkpoint_all_fits(const xe_instance *in, int d, int64_t b)
{
    for (int v = 0; v < in->g->n; v++)
        if (!xe_can_run(in, v, d)) return 0;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    return peak >= 0 && peak <= b;
}

int xe_min_budget(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err)
{
    return xe_min_budget_within(in, d, INFINITY, 0.0, lower, upper, NULL, err);
}

/* portfolio_fits, with *took = its wall seconds (xe_min_budget_within's estimate of the next run). */
static int timed_fits(const xe_instance *in, int d, int64_t b, int *fatal, double *took, xe_err *err)
{
    double t = xe_now();
    int r = portfolio_fits(in, d, b, fatal, err);
    *took = xe_now() - t;
    return r;
}

int xe_min_budget_within(const xe_instance *in, int d, double max_seconds, double run_s, int64_t *lower,
                         int64_t *upper, int *complete, xe_err *err)
{
    double t0 = xe_now(), took = run_s > 0 ? run_s : 0; /* took: the last portfolio run's seconds */
    if (complete) *complete = 0;
    int rc = xe_budget_range(in, d, lower, NULL, err);
    if (rc) return rc;
    *upper = 0;
    int fatal = 0;
    /* the no-recomputation peak first (checkpoint-all fits there on one device, and a
     * quick answer matters when the time is short), else a budget that holds it with
     * any node's footprint besides */
    int64_t hi = xe_instance_norecompute_peak(in->g), big = hi + xe_instance_min_footprint(in->g);
    if (hi < *lower || (!checkpoint_all_fits(in, d, hi) && !timed_fits(in, d, hi, &fatal, &took, err))) {
        if (fatal) return fatal;
        hi = big;
        if (!timed_fits(in, d, hi, &fatal, &took, err)) return fatal ? fatal : XE_OK;
    }
    int64_t a = *lower;
    if (hi <= a) { /* a schedule at the lower bound itself: the minimum is known */
        *upper = hi;
        if (complete) *complete = 1;
        return XE_OK;
    }
    /* a portfolio run is not interrupted (a failing one at 2,000 nodes: 1.5 s), so none
     * starts that the last one's time (run_s before any) says would end past max_seconds
     * (before 2026-12-02 one could start just before it: 1.5-1.7 s past a 10-s limit on
     * a generated 2,000-node DAG) */
    if (xe_now() - t0 + took >= max_seconds) {
        *upper = hi;
        return XE_OK;
    }
    if (timed_fits(in, d, a, &fatal, &took, err)) {
        *upper = a;
        if (complete) *complete = 1;
        return XE_OK;
    }
    if (fatal) return fatal;
    /* invariant: fails at a, fits at hi */
    int cut = 0;
    while (hi - a > 1 && (double)(hi - a) > 0.01 * (double)hi) {
        if (xe_now() - t0 + took >= max_seconds) {
            cut = 1;
            break;
        }
        int64_t mid = a + (hi - a) / 2;
        if (timed_fits(in, d, mid, &fatal, &took, err)) hi = mid;
        else if (fatal) return fatal;
        else a = mid;
    }
    *upper = hi;
    if (complete) *complete = !cut;
    return XE_OK;
}

/* ---- eviction bound (docs/lns.md, "Bounds") ------------------------------------------ */

typedef struct { double ratio, mem, delta; int kind; } evict_item; /* kind: in_set below */

static int cmp_ratio(const void *a, const void *b)
{
    double x = ((const evict_item *)a)->ratio, y = ((const evict_item *)b)->ratio;
    return x < y ? -1 : x > y;
}

/* Cheapest copy of u into device x from any other device (INFINITY with one device). */
static double copy_into(const xe_instance *in, int u, int x)
{
    double c = INFINITY;
    for (int f = 0; f < in->ndev; f++)
        if (f != x) c = fmin(c, xe_copy_cost(in, u, f, x));
    return c;
}

/* Extra cost, beyond its cheapest computation, that a tensor u < t of S_t pays when it
 * is absent from device d at t's step. A tensor only read after stage t (input = 0) may
 * be resident nowhere and computed again later (at least cmin[u]). Otherwise it is
 * resident on some e != d (for an input of t, e runs t): it got there by a copy into e
 * or by a computation on e (the cost above its cheapest); and when it is read after
 * stage t, its readers still need it: a reader on d needs a new event after t (a copy
 * into d or a recomputation), a reader on a third device x a copy into x or a
 * computation of u on x, and readers on e pay their own cost above their cheapest, of
 * which u claims the share 1/indegree (no reader is claimed more than once in total by
 * the tensors of one row, so the extra events stay disjoint). */
static double absent_delta(const xe_instance *in, const int64_t *fp, const double *cmin, int u, int t, int d,
                           int input, int read_later)
{
    const xe_graph *g = in->g;
    int D = in->ndev;
    double delta = input ? INFINITY : cmin[u];
    for (int e = 0; e < D; e++) {
        if (e == d) continue;
        double first = copy_into(in, u, e);
        if (fits(in, fp, u, e)) first = fmin(first, xe_cost(in, u, e) - cmin[u]);
        if (!isfinite(first)) continue;
        if (!read_later) {
            delta = fmin(delta, fmax(first, 0));
            continue;
        }
        double second = fmin(cmin[u], copy_into(in, u, d)), readers = 0;
        for (int x = 0; x < D; x++)
            if (x != d && x != e) {
                second = fmin(second, copy_into(in, u, x));
                if (fits(in, fp, u, x)) second = fmin(second, xe_cost(in, u, x) - cmin[u]);
            }
        for (int p = g->succ_off[u]; p < g->succ_off[u + 1] && isfinite(readers); p++) {
            int r = g->succ[p];
            if (r <= t) continue;
            if (!fits(in, fp, r, e)) readers = INFINITY;
            else readers += fmax(0, xe_cost(in, r, e) - cmin[r]) / (double)(g->pred_off[r + 1] - g->pred_off[r]);
        }
        delta = fmin(delta, fmax(first, 0) + fmin(second, readers));
    }
    return delta;
}

double xe_bound_eviction(const xe_instance *in)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    double *cmin = malloc(sizeof *cmin * (size_t)n);
    int *last = malloc(sizeof *last * (size_t)n);
    evict_item *items = malloc(sizeof *items * (size_t)n);
    char *in_set = calloc((size_t)n, 1);
    int64_t *fp = footprints(g);
    double base = 0, best_extra = 0;
    if (!cmin || !last || !items || !in_set || !fp) goto out;
    for (int v = 0; v < n; v++) {
        double c = INFINITY;
        for (int d = 0; d < D; d++)
            if (fits(in, fp, v, d)) c = fmin(c, xe_cost(in, v, d));
        if (!isfinite(c)) { base = INFINITY; goto out; }
        cmin[v] = c;
        base += c;
        last[v] = xe_graph_last_use(g, v);
    }
    /* O(D n^2 log n): 0.34 s at 5,000 nodes, 5.8 s at 20,000; above XE_EVICTION_MAX_NODES
     * only the sum of cheapest costs is returned (still a valid bound) */
    for (int t = 0; t < n && n <= XE_EVICTION_MAX_NODES; t++) {
        /* S_t = {t} + inputs of t + every u < t read after stage t (the same on every device) */
        int64_t need = 0;
        memset(in_set, 0, (size_t)n);
        for (int u = 0; u < t; u++)
            if (last[u] > t) in_set[u] = 1;
        for (int p = g->pred_off[t]; p < g->pred_off[t + 1]; p++) in_set[g->pred[p]] = 2;
        in_set[t] = 3;
        for (int u = 0; u <= t; u++)
            if (in_set[u]) need += g->nodes[u].mem;
        for (int d = 0; d < D; d++) {
            double excess = (double)(need - in->dev[d].budget);
            if (excess <= 0) continue;
            /* what each u pays when absent from d at t's step (absent_delta); t itself,
             * which is computed there for the first time, is handled below */
            int k = 0;
            for (int u = 0; u < t; u++) {
                if (!in_set[u]) continue;
                double delta = absent_delta(in, fp, cmin, u, t, d, in_set[u] == 2, last[u] > t);
                if (g->nodes[u].mem > 0 && isfinite(delta))
                    items[k++] = (evict_item){fmax(delta, 0) / (double)g->nodes[u].mem, (double)g->nodes[u].mem,
                                              fmax(delta, 0), in_set[u]};
            }
            /* Either t runs on d at this step, and then t and its inputs are resident there,
             * or it runs elsewhere (t absent, paying its item in full) and its inputs may be
             * absent too. The cheapest fractional cover of the excess (LP of this one row)
             * in each case; the bound is the lesser. */
            qsort(items, (size_t)k, sizeof *items, cmp_ratio);
            double extra_on = 0, left_on = excess, extra_off = INFINITY, left_off = 0;
            for (int e = 0; e < D; e++) /* t computed on another device */
                if (e != d && fits(in, fp, t, e)) extra_off = fmin(extra_off, fmax(0, xe_cost(in, t, e) - cmin[t]));
            if (isfinite(extra_off)) left_off = excess - (double)g->nodes[t].mem;
            for (int i = 0; i < k; i++) {
                double take;
                if (items[i].kind == 1 && left_on > 0) {
                    take = fmin(items[i].mem, left_on);
                    extra_on += items[i].ratio * take;
                    left_on -= take;
                }
                if (left_off > 0) {
                    take = fmin(items[i].mem, left_off);
                    extra_off += items[i].ratio * take;
                    left_off -= take;
                }
            }
            if (left_on > 0) extra_on = INFINITY;
            if (left_off > 0) extra_off = INFINITY;
            double extra = fmin(extra_on, extra_off);
            if (!isfinite(extra)) { base = INFINITY; goto out; } /* cannot fit at all */
            best_extra = fmax(best_extra, extra);
        }
    }
out:
    free(cmin), free(last), free(items), free(in_set), free(fp);
    if (!isfinite(base)) return INFINITY;
    return base + best_extra;
}

double xe_bound_stage(const xe_instance *in)
{
    double lb = xe_bound_cheapest(in), ev = xe_bound_eviction(in);
    return isfinite(ev) ? fmax(lb, ev) : lb;
}
