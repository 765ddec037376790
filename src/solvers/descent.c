/* Budget descent (docs/lns.md, "Budget descent"): where the heuristics find no schedule
 * at the budgets asked for, start from one at larger budgets and remove its overflow
 * neighbourhood by neighbourhood with the MILP's soft-budget model, until every stage
 * fits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "rng.h"
#include "xengine/milp.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

void xe_descent_opts_default(xe_descent_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit = 60.0;
    o->threads = 1;
    o->seed = 1;
}

/* Seconds at most for the randomised restarts of the start (a tenth of its time). */
#define XE_DESCENT_RANDOM_S 2.0

/* Bytes that surely hold the no-recomputation schedule: no budget is scaled beyond it. */
static int64_t budget_cap(const xe_instance *in)
{
    return xe_instance_norecompute_peak(in->g) + xe_instance_min_footprint(in->g);
}

/* in with every budget scaled by f, never below the budget asked for and never above
 * cap (bytes that hold the no-recomputation schedule; shallow copy: only the budgets
 * differ). */
static xe_instance scaled(const xe_instance *in, double f, int64_t cap)
{
    xe_instance tmp = *in;
    for (int d = 0; d < in->ndev; d++) {
        double b = (double)in->dev[d].budget * f;
        tmp.dev[d].budget = b >= (double)cap ? (in->dev[d].budget > cap ? in->dev[d].budget : cap) : (int64_t)b;
    }
    return tmp;
}

/* The greedy on scaled(in, f, cap), or, with seed > 0, its randomised restarts from that
 * seed for up to `seconds` (xe_heur_greedy_random): 1 with its schedule in out (the old
 * one freed), else 0 and out untouched (*fatal set on errors other than "none found"). */
static int greedy_scaled(const xe_instance *in, double f, int64_t cap, uint64_t seed, double seconds, xe_stages *out,
                         int *fatal, xe_err *err)
{
    xe_instance tmp = scaled(in, f, cap);
    xe_stages st = {0};
    int rc = seed ? xe_heur_greedy_random(&tmp, seed, seconds, &st, NULL, err) : xe_heur_greedy_ex(&tmp, 0, &st, err);
    if (rc == XE_OK) {
        xe_stages_clear(out);
        *out = st;
        return 1;
    }
    xe_stages_clear(&st);
    if (rc != XE_EINFEASIBLE) *fatal = rc;
    return 0;
}

int xe_descent_start(const xe_instance *in, double max_seconds, xe_stages *out, double *factor, xe_err *err)
{
    double t0 = xe_now();
    memset(out, 0, sizeof *out);
    int fatal = 0;
    int64_t cap = budget_cap(in);
    double lo = 1.0, hi = 0;
    for (double f = 1.05;; f = 1.0 + 2.0 * (f - 1.0)) {
        if (greedy_scaled(in, f, cap, 0, 0.0, out, &fatal, err)) {
            hi = f;
            break;
        }
        if (fatal) return fatal;
        lo = f;
        int all_big = 1; /* every device at the cap: larger factors change nothing */
        for (int d = 0; d < in->ndev; d++)
            if ((double)in->dev[d].budget * f < (double)cap) all_big = 0;
        if (all_big)
            return xe_err_set(err, XE_EINFEASIBLE,
                              "descent: the greedy finds no schedule even with budgets that hold the no-recomputation schedule");
        if (xe_now() - t0 > max_seconds)
            return xe_err_set(err, XE_ETIMEOUT, "descent: no start schedule within %.3g s (tried up to %.3gx the budgets)",
                              max_seconds, f);
    }
    /* closer: less to remove; first the greedy (six bisection steps), then its
     * randomised restarts (docs/heuristic.md) between the budgets and the greedy's
     * factor, up to XE_DESCENT_RANDOM_S, a quarter of that per step */
    for (int k = 0; k < 6 && hi - lo > 0.005 && xe_now() - t0 < 0.5 * max_seconds; k++) {
        double mid = 0.5 * (lo + hi);
        if (greedy_scaled(in, mid, cap, 0, 0.0, out, &fatal, err)) hi = mid;
        else if (fatal) break;
        else lo = mid;
    }
    double rand_t0 = xe_now(), rand_s = fmin(XE_DESCENT_RANDOM_S, 0.1 * max_seconds);
    lo = 1.0;
    for (uint64_t k = 1; !fatal && hi - lo > 0.005 && xe_now() - rand_t0 < rand_s; k++) {
        double mid = 0.5 * (lo + hi), slice = fmax(0.0, fmin(0.25 * rand_s, rand_s - (xe_now() - rand_t0)));
        if (greedy_scaled(in, mid, cap, k, slice, out, &fatal, err)) hi = mid;
        else if (!fatal) lo = mid;
    }
    if (fatal) {
        xe_stages_clear(out);
        return fatal;
    }
    if (factor) *factor = hi;
    return XE_OK;
}

/* Per stage and device, bytes above the budget at the stage's fullest step
 * (over[t * D + d]); returns their sum, or -1 when st fails the structural check. */
static double overflow(const xe_instance *in, const xe_stages *st, double *U, double *over, int64_t *peak)
{
    int n = in->g->n, D = in->ndev;
    if (xe_stages_eval(in, st, U, NULL, NULL) != XE_OK) return -1;
    double sum = 0;
    for (int d = 0; d < D; d++) peak[d] = 0;
    for (int t = 0; t < n; t++)
        for (int d = 0; d < D; d++) {
            double mx = 0;
            for (int k = 0; k <= t; k++) mx = fmax(mx, U[((int64_t)t * n + k) * D + d]);
            if ((int64_t)mx > peak[d]) peak[d] = (int64_t)ceil(mx);
            over[t * D + d] = fmax(0.0, mx - (double)in->dev[d].budget);
            sum += over[t * D + d];
        }
    return sum;
}

/* The candidate's per-stage overflow (*cand, peak2, as overflow() filled them) becomes
 * the incumbent's (*cur, peak); *cand keeps the old array as scratch. */
static void swap_over(double **cur, double **cand, int64_t *peak, const int64_t *peak2, int D)
{
    double *t = *cur;
    *cur = *cand;
    *cand = t;
    memcpy(peak, peak2, (size_t)D * sizeof *peak);
}

/* Overflow weight of the soft model, seconds per byte: more than any stage schedule can
 * cost (every computation and copy in every stage), and overflows are whole bytes, so one
 * byte less always pays: the soft model's optimum is lexicographic (overflow first). */
static double soft_weight(const xe_instance *in)
{
    int n = in->g->n, D = in->ndev;
    double cmax = 0;
    for (int i = 0; i < n; i++) {
        double ci = 0;
        for (int d = 0; d < D; d++) {
            if (xe_can_run(in, i, d)) ci += xe_cost(in, i, d);
            for (int e = 0; e < D; e++)
                if (e != d) ci += xe_copy_cost(in, i, d, e);
        }
        cmax += ci * (double)(n - i);
    }
    return fmax(2.0 * cmax, 1e-6);
}

/* The soft model's instance and budgets: rel = in with each budget raised to peak[d]
 * (what the incumbent uses: it must fit the hard caps), soft[d] = in's budget. */
static void soft_caps(const xe_instance *in, const int64_t *peak, xe_instance *rel, int64_t *soft)
{
    *rel = *in; /* shallow: only the budgets differ */
    for (int d = 0; d < in->ndev; d++) {
        soft[d] = in->dev[d].budget;
        if (peak[d] > rel->dev[d].budget) rel->dev[d].budget = peak[d];
    }
}

double xe_descent_margin(const xe_instance *in)
{
    double margin = 1.0;
    for (int d = 0; d < in->ndev; d++) margin = fmax(margin, 1e-6 * (double)in->dev[d].budget);
    return margin;
}

int xe_descent_confirm_infeasible(const xe_instance *in, double max_seconds, int threads, double *least, xe_err *err)
{
    double t0 = xe_now();
    int n = in->g->n, D = in->ndev;
    if (least) *least = NAN;
    xe_stages start;
    int rc = xe_descent_start(in, max_seconds / 3, &start, NULL, err);
    if (rc == XE_ETIMEOUT || rc == XE_EINFEASIBLE) return 0;
    if (rc) return rc;
    size_t n3 = (size_t)(n ? n : 1) * n * D;
    double *U = malloc(n3 * sizeof *U);
    double *over = malloc((size_t)(n ? n : 1) * D * sizeof *over);
    int64_t peak[XE_MAX_DEV];
    if (!U || !over) {
        free(U), free(over);
        xe_stages_clear(&start);
        return xe_err_set(err, XE_ENOMEM, "descent: out of memory");
    }
    xe_stages_prune(in, &start);
    int confirmed = 0;
    double cur = overflow(in, &start, U, over, peak);
    if (cur > 0) {
        xe_instance rel;
        int64_t soft[XE_MAX_DEV];
        soft_caps(in, peak, &rel, soft);
        xe_milp_opts mo;
        xe_milp_opts_default(&mo);
        mo.start = &start;
        mo.soft_budget = soft;
        mo.soft_weight = soft_weight(in);
        mo.threads = threads;
        mo.isolate = 1;
        mo.rel_gap = 1e-6;
        mo.time_limit = xe_milp_limit_within(max_seconds - (xe_now() - t0)); /* ends, grace included, in time */
        if (mo.time_limit >= 0.05) { /* else no time left: not confirmed */
            xe_milp_result mr;
            xe_err e2;
            int mrc = xe_milp_solve(&rel, &mo, &mr, &e2);
            if (mrc == XE_ENOMEM) rc = xe_err_set(err, mrc, "descent: %s", e2.msg);
            if (mrc == XE_OK && mr.status == XE_MILP_OPTIMAL && !mr.killed && mr.sol.R) {
                double least_over = overflow(in, &mr.sol, U, over, peak);
                if (least) *least = least_over;
                confirmed = least_over >= xe_descent_margin(in);
            }
            xe_milp_result_clear(&mr);
        }
    }
    free(U), free(over);
    xe_stages_clear(&start);
    return rc ? rc : confirmed;
}

int xe_descent(const xe_instance *in, const xe_descent_opts *o, xe_descent_result *res, xe_err *err)
{
    double t0 = xe_now();
    memset(res, 0, sizeof *res);
    if (!(o->time_limit > 0))
        return xe_err_set(err, XE_EINVAL, "descent: time limit must be > 0");
    xe_stages start;
    int rc = xe_descent_start(in, o->time_limit, &start, NULL, err);
    if (rc) return rc;
    xe_descent_opts rest = *o; /* the start's search counts */
    rest.time_limit = fmax(1e-3, o->time_limit - (xe_now() - t0));
    rc = xe_descent_solve(in, &start, &rest, res, err);
    xe_stages_clear(&start);
    return rc;
}

int xe_descent_solve(const xe_instance *in, const xe_stages *start, const xe_descent_opts *o, xe_descent_result *res,
                     xe_err *err)
{
    double t0 = xe_now();
    memset(res, 0, sizeof *res);
    xe_stages best = {0}; /* the least-overflow incumbent, kept across restarts */
    if (!(o->time_limit > 0) || o->threads < 1 || !(o->slice >= 0))
        return xe_err_set(err, XE_EINVAL, "descent: time limit must be > 0, threads >= 1, slice >= 0");
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    if (start->n != n || start->ndev != D)
        return xe_err_set(err, XE_EINVAL, "descent: the start has %d nodes and %d devices, the instance %d and %d", start->n,
                          start->ndev, n, D);
    size_t n3 = (size_t)(n ? n : 1) * n * D;
    double *U = malloc(n3 * sizeof *U);
    double *over = calloc((size_t)(n ? n : 1) * D, sizeof *over);
    double *over2 = calloc((size_t)(n ? n : 1) * D, sizeof *over2);
    int64_t *ncols = calloc((size_t)(n ? n : 1), sizeof *ncols);
    uint8_t *mask = calloc((size_t)(n ? n : 1), 1);
    int *queue = malloc((size_t)(n ? n : 1) * sizeof *queue);
    int *reach = xe_graph_reach(g);
    int rc = XE_OK;
    if (!U || !over || !over2 || !ncols || !mask || !queue || !reach) {
        rc = xe_err_set(err, XE_ENOMEM, "descent: out of memory");
        goto out;
    }
    rc = xe_stages_copy(&res->sol, start);
    if (rc) {
        rc = xe_err_set(err, XE_ENOMEM, "descent: out of memory copying the start");
        goto out;
    }
    xe_stages_prune(in, &res->sol); /* the MILP has no column for a dead recomputation */
    int64_t peak[XE_MAX_DEV], peak2[XE_MAX_DEV];
    double cur = overflow(in, &res->sol, U, over, peak);
    if (cur < 0) {
        rc = xe_err_set(err, XE_EINVAL, "descent: the start is not a stage schedule of this instance");
        goto out;
    }
    res->start_overflow = cur;
    double cur_cost = xe_stages_cost(in, &res->sol); /* seconds, of the incumbent */
    xe_node_binaries(in, reach, ncols, NULL);
    double weight = soft_weight(in);
    int64_t soft[XE_MAX_DEV];
    double target = 1500; /* binary columns per neighbourhood, as LNS starts */
    uint64_t rng = o->seed ? o->seed : 1;
    double deadline = t0 + o->time_limit;
    int failures = 0; /* consecutive neighbourhoods CBC failed on */
    double margin = xe_descent_margin(in);
    int unsure = 0;
    /* restarts: after 16 neighbourhoods without a lower overflow, start again from the
     * greedy at budgets 1.06x, 1.08x, ... (another structure; descents stall at
     * different places); the least overflow seen is what a time-out reports */
    int last_gain = 0, restarts = 0;
    /* a neighbourhood that is the whole model and ran out of its slice unsolved gets
     * twice the slice next time (a 7-node model took over 1 s under ASan on a loaded
     * machine, and the same 1 s again and again never proved anything) */
    double whole_mult = 1.0;
    int64_t cap = budget_cap(in);
    double best_over = cur;
    for (int it = 0; cur > 0; it++) {
        double left = deadline - xe_now();
        if (left < 0.05 || xe_interrupted(o->interrupt)) break;
        if (it - last_gain >= 16) {
            restarts++;
            last_gain = it;
            int fatal = 0;
            xe_stages ns = {0};
            double f = 1.0 + 0.02 * (restarts + 2);
            if (greedy_scaled(in, f, cap, 0, 0.0, &ns, &fatal, NULL)) {
                xe_stages_prune(in, &ns);
                double c2 = overflow(in, &ns, U, over2, peak2);
                if (c2 >= 0) {
                    if (cur <= best_over) { /* keep the best incumbent before leaving it */
                        xe_stages_clear(&best);
                        best = res->sol;
                        best_over = cur;
                    } else {
                        xe_stages_clear(&res->sol);
                    }
                    res->sol = ns;
                    swap_over(&over, &over2, peak, peak2, D);
                    cur = c2;
                    cur_cost = xe_stages_cost(in, &res->sol);
                    target = 1500;
                    if (o->progress)
                        fprintf(stderr, "[descent] %6.1fs  restart %d from the greedy at %.2fx the budgets: overflow %.6g B over all stages\n",
                                xe_now() - t0, restarts, f, cur);
                    continue;
                }
            }
            xe_stages_clear(&ns);
            if (fatal == XE_ENOMEM) {
                rc = xe_err_set(err, XE_ENOMEM, "descent: out of memory restarting");
                goto out;
            }
        }
        /* a stage that overflows, drawn with probability proportional to its excess */
        double pick = (double)(xe_splitmix64(&rng) >> 11) / 9007199254740992.0 * cur, acc = 0;
        int ts = -1, ds = 0;
        for (int t = 0; t < n && ts < 0; t++)
            for (int d = 0; d < D; d++) {
                acc += over[t * D + d];
                if (over[t * D + d] > 0 && acc >= pick) {
                    ts = t, ds = d;
                    break;
                }
            }
        if (ts < 0) /* rounding: the last overflowing stage */
            for (int t = 0; t < n; t++)
                for (int d = 0; d < D; d++)
                    if (over[t * D + d] > 0) ts = t, ds = d;
        /* nodes free in every stage: a random part of what stage ts holds on ds (its
         * checkpoints and what it computes there), grown over inputs and users */
        memset(mask, 0, (size_t)(n > 0 ? n : 1));
        int qh = 0, qt = 0;
        double cols = 0;
        for (int i = 0; i <= ts; i++) /* what the stage holds, in random order */
            if ((i < ts && *xe_S(&res->sol, ts, i, ds)) || *xe_R(&res->sol, ts, i, ds)) {
                int j = (int)(xe_splitmix64(&rng) % (uint64_t)(qt + 1));
                queue[qt] = i; /* then swap with a random earlier place */
                queue[qt++] = queue[j];
                queue[j] = i;
            }
        if (qt == 0) queue[qt++] = ts;
        int nseed = 0; /* a prefix of it, up to half the neighbourhood's size */
        for (int k = 0; k < qt && (k == 0 || cols + (double)ncols[queue[k]] <= 0.5 * target); k++) {
            mask[queue[k]] = 1;
            cols += (double)ncols[queue[k]];
            queue[nseed++] = queue[k];
        }
        qt = nseed;
        int up = it % 2; /* every other turn: inputs only (what recomputing them needs) */
        while (qh < qt && cols < target) {
            int v = queue[qh++];
            for (int p = g->pred_off[v]; p < g->pred_off[v + 1] && cols < target; p++)
                if (!mask[g->pred[p]]) mask[g->pred[p]] = 1, queue[qt++] = g->pred[p], cols += (double)ncols[g->pred[p]];
            for (int p = g->succ_off[v]; !up && p < g->succ_off[v + 1] && cols < target; p++)
                if (!mask[g->succ[p]]) mask[g->succ[p]] = 1, queue[qt++] = g->succ[p], cols += (double)ncols[g->succ[p]];
        }
        int nfree = 0;
        for (int i = 0; i < n; i++) nfree += mask[i];
        xe_instance rel;
        soft_caps(in, peak, &rel, soft);
        xe_milp_opts mo;
        xe_milp_opts_default(&mo);
        mo.fix = &res->sol;
        mo.fix_t0 = ts;
        mo.fix_t1 = ts;
        mo.free_nodes = mask;
        mo.threads = o->threads;
        mo.isolate = o->isolate;
        mo.interrupt = o->interrupt;
        mo.rel_gap = 1e-6;
        mo.soft_budget = soft;
        mo.soft_weight = weight;
        double slice = o->slice > 0 ? o->slice : fmax(1.0, fmin(o->time_limit / 30, 5.0));
        if (nfree == n) slice *= whole_mult;
        mo.time_limit = fmin(slice, xe_milp_limit_within(left)); /* its process ends within the limit */
        if (mo.time_limit < 0.02) break;
        xe_milp_result mr;
        xe_err e2;
        int mrc = xe_milp_solve(&rel, &mo, &mr, &e2);
        res->iterations++;
        failures = mrc == XE_ESOLVER ? failures + 1 : 0; /* CBC failed here: try another */
        if ((mrc != XE_OK && mrc != XE_ESOLVER) || failures >= 5) {
            /* out of memory, a start the model refuses, or CBC failing again and again */
            xe_milp_result_clear(&mr);
            rc = xe_err_set(err, mrc, "descent: %s", e2.msg);
            goto out;
        }
        int gained = 0;
        if (mrc == XE_OK && mr.sol.R) {
            double nxt = overflow(in, &mr.sol, U, over2, peak2);
            /* lower overflow; or the same with lower cost (a sideways move that the
             * next neighbourhoods start from) */
            int lower = nxt >= 0 && nxt < cur - 0.5;
            int same = nxt >= 0 && !lower && nxt <= cur + 0.5 && mr.objective < cur_cost - 1e-9;
            if (lower || same) {
                xe_stages_clear(&res->sol);
                res->sol = mr.sol;
                memset(&mr.sol, 0, sizeof mr.sol);
                swap_over(&over, &over2, peak, peak2, D);
                cur = nxt;
                cur_cost = mr.objective;
                gained = lower;
                res->improvements += lower;
                if (lower) last_gain = it;
            }
        }
        int solved = mrc == XE_OK && mr.status == XE_MILP_OPTIMAL && !mr.killed;
        if (solved && nfree == n && cur > 0) {
            /* every variable was free and the optimum (overflow first) still overflows:
             * no stage schedule fits the budgets, unless the overflow is within the
             * solver's resolution */
            res->proven = cur >= margin;
            unsure = !res->proven;
            xe_milp_result_clear(&mr);
            break;
        }
        double mtime = mr.solve_time;
        if (o->progress >= 2 || (o->progress == 1 && gained))
            fprintf(stderr, "[descent] %6.1fs  overflow %.6g B over all stages%s (stage %d, %s, %d cols: %s %.2f s)\n", xe_now() - t0, cur,
                    gained ? " (lower)" : "", ts, up ? "inputs" : "inputs+users", mr.nvars,
                    mrc == XE_OK ? xe_milp_status_str(mr.status) : "failed", mtime);
        xe_milp_result_clear(&mr);
        if (!solved && nfree == n && mtime >= 0.9 * mo.time_limit) whole_mult *= 2.0;
        if (!solved && mtime >= 0.9 * mo.time_limit) target = fmax(300, target * 0.66);
        else if (!gained && mtime < 0.3 * mo.time_limit && target * 1.3 <= 40000) target *= 1.3;
    }
    if (cur > 0 && best.R && best_over < cur) { /* a time-out reports the least overflow seen */
        xe_stages_clear(&res->sol);
        res->sol = best;
        memset(&best, 0, sizeof best);
        cur = best_over;
    }
    xe_stages_clear(&best);
    res->overflow = cur;
    if (cur > 0 && overflow(in, &res->sol, U, over, peak) >= 0) /* the reported incumbent's worst stage */
        for (int k = 0; k < n * D; k++) res->worst = fmax(res->worst, over[k]);
    res->restarts = restarts;
    res->time_total = xe_now() - t0;
    if (cur > 0 && res->proven) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "descent: no stage schedule fits the budgets (proven: the whole model's least overflow is %.6g bytes)", cur);
        goto out;
    }
    if (cur > 0) {
        res->objective = xe_stages_cost(in, &res->sol);
        if (unsure)
            rc = xe_err_set(err, XE_ETIMEOUT, "descent: the whole model's least overflow, %.6g bytes, is within the "
                            "solver's numerical resolution (under %.6g bytes): not a proof", cur, margin);
        else
            rc = xe_err_set(err, XE_ETIMEOUT, "descent: %.6g bytes still over the budgets after %.1f s", cur, res->time_total);
        goto out;
    }
    xe_stages_prune(in, &res->sol);
    rc = xe_stages_check(in, &res->sol, err);
    if (rc == XE_OK) {
        xe_sim_result sr;
        rc = xe_stages_replay(in, &res->sol, &sr, err);
    }
    if (rc) {
        rc = rc == XE_ENOMEM ? rc : xe_err_set(err, XE_EINTERNAL, "descent: the schedule without overflow fails the check: %s", err ? err->msg : "");
        goto out;
    }
    res->objective = xe_stages_cost(in, &res->sol);
    res->time_found = res->time_total;
out:
    free(U), free(over), free(over2), free(ncols), free(mask), free(queue), free(reach);
    xe_stages_clear(&best);
    if (rc && rc != XE_ETIMEOUT) xe_stages_clear(&res->sol);
    return rc;
}
