/* Anytime large-neighbourhood search over stage windows (docs/lns.md): keep the
 * incumbent, re-solve the stages [t0, t0 + w) with the MILP while every other stage is
 * fixed to it, keep what is cheaper after the simulator has replayed it. */
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

void xe_lns_opts_default(xe_lns_opts *o)
{
    memset(o, 0, sizeof *o); /* every field a later version adds starts as 0 / NULL */
    o->time_limit = 60.0;
    o->rel_gap = 1e-4;
    o->bound = -INFINITY;
    o->threads = 1;
    o->isolate = 0;
    o->interrupt = NULL;
    o->bound_fn = NULL;
    o->beaten_fn = NULL;
    o->bound_ctx = NULL;
    o->progress = 0;
    o->window = 0;
    o->seed = 1;
    o->slice = 0;
}

void xe_lns_result_clear(xe_lns_result *res) { xe_stages_clear(&res->sol); }

/* 1 when the schedule recomputes or copies i somewhere (where a better plan may gain). */
static int extra_work(const xe_stages *st, int i)
{
    int n = st->n, D = st->ndev;
    for (int t = i + 1; t < n; t++)
        for (int d = 0; d < D; d++) {
            if (*xe_R(st, t, i, d)) return 1;
            for (int e = 0; e < D; e++)
                if (e != d && *xe_C(st, t, i, d, e)) return 1;
        }
    for (int d = 0; d < D; d++)
        for (int e = 0; e < D; e++)
            if (e != d && *xe_C(st, i, i, d, e)) return 1;
    return 0;
}

/* Replays st in the simulator: the incumbent is only ever replaced by a schedule that
 * the independent checker accepts with the same objective. */
static int sim_ok(const xe_instance *in, const xe_stages *st, xe_err *err)
{
    xe_sim_result sr;
    return xe_stages_replay(in, st, &sr, err);
}

/* One progress line on stderr, as the MILP's ("[milp] ..."): elapsed seconds,
 * incumbent, bound and gap ("-" when unknown), neighbourhoods tried, and why. */
static void progress_line(const xe_lns_result *res, double elapsed, const char *why)
{
    char bnd[32] = "-", gap[32] = "-";
    if (isfinite(res->bound)) {
        snprintf(bnd, sizeof bnd, "%.6g", res->bound);
        double g = res->objective > 0 ? (res->objective - fmin(res->bound, res->objective)) / res->objective : 0;
        snprintf(gap, sizeof gap, "%.2f%%", 100.0 * g);
    }
    fprintf(stderr, "[lns]  %7.1fs  incumbent %-12.6g bound %-12s gap %-8s %d neighbourhoods%s\n", elapsed,
            res->objective, bnd, gap, res->iterations, why);
}

int xe_lns_solve(const xe_instance *in, const xe_stages *start, const xe_lns_opts *o, xe_lns_result *res,
                 xe_err *err)
{
    double t0 = xe_now();
    memset(res, 0, sizeof *res);
    res->objective = INFINITY;
    res->bound = o->bound;
    if (!(o->time_limit > 0) || !(o->rel_gap >= 0) || o->threads < 1 || o->window < 0 || !(o->slice >= 0))
        return xe_err_set(err, XE_EINVAL, "LNS: time limit must be > 0, gap >= 0, threads >= 1, window >= 0, slice >= 0");
    int rc = xe_stages_check(in, start, err);
    if (rc) return rc == XE_ENOMEM ? rc : xe_err_set(err, XE_EINVAL, "LNS: the start schedule is not valid: %s", err ? err->msg : "");
    rc = xe_stages_copy(&res->sol, start);
    if (rc) return xe_err_set(err, XE_ENOMEM, "LNS: out of memory copying the start");
    res->objective = xe_stages_cost(in, start);
    res->stop = "time limit";
    res->ntrace = 1;
    res->trace_t[0] = 0;
    res->trace_obj[0] = res->objective;
    int n = in->g->n;
    if (n == 0) return XE_OK;
    const xe_graph *g = in->g;
    int *reach = xe_graph_reach(g);
    int64_t *sz = calloc((size_t)n, sizeof *sz);      /* binary columns of stage t */
    int64_t *ncols = calloc((size_t)n, sizeof *ncols); /* binary columns of node i */
    uint8_t *mask = calloc((size_t)n, 1);
    uint8_t *extra = calloc((size_t)n, 1); /* extra_work of each node in the incumbent */
    int *queue = malloc((size_t)n * sizeof *queue);
    if (!reach || !sz || !ncols || !mask || !extra || !queue) {
        free(reach), free(sz), free(ncols), free(mask), free(extra), free(queue);
        xe_lns_result_clear(res);
        return xe_err_set(err, XE_ENOMEM, "LNS: out of memory");
    }
    for (int i = 0; i < n; i++) extra[i] = (uint8_t)extra_work(&res->sol, i);
    int64_t total = xe_node_binaries(in, reach, ncols, sz);
    /* initial neighbourhoods: about 1,500 binary columns (CBC solves those in well
     * under a second); a stage window has at least 2 stages */
    double target = 1500;
    int w = o->window;
    if (w == 0) {
        int64_t acc = 0;
        for (int t = n / 2; t < n && acc < target; t++, w++) acc += sz[t];
        if (w < 2) w = 2;
    }
    if (w > n) w = n;
    uint64_t rng = o->seed ? o->seed : 1;
    int pos = (int)(xe_splitmix64(&rng) % (uint64_t)n);
    int fails_w = 0, fails_n = 0; /* neighbourhoods of each kind tried since their last gain */
    double deadline = t0 + o->time_limit;
    double last_line = t0; /* progress: a line at least about once a second */
    if (o->progress) progress_line(res, 0.0, " (start)");
    int fail_run = 0; /* solver failures in a row */
    for (int it = 0; !res->optimal; it++) {
        if (o->progress && xe_now() - last_line >= 1.0) {
            last_line = xe_now();
            progress_line(res, last_line - t0, "");
        }
        if (o->bound_fn) { /* a bound that another thread may have raised (xe_lns_opts) */
            double ext = o->bound_fn(o->bound_ctx);
            if (ext > res->bound) res->bound = fmin(ext, res->objective);
        }
        if (isfinite(res->bound) && res->objective > 0 && (res->objective - res->bound) / res->objective <= o->rel_gap) {
            res->stop = "bound reached"; /* also when no time is left: the proof stands */
            break;
        }
        if (o->beaten_fn && o->beaten_fn(o->bound_ctx, res->objective)) {
            res->stop = "a cheaper schedule in hand";
            break;
        }
        double left = deadline - xe_now();
        if (xe_interrupted(o->interrupt)) {
            res->stop = "interrupted";
            break;
        }
        if (left < 0.05) break;
        /* rotate: a window of consecutive stages; a connected set of nodes free in every
         * stage (a tensor's whole life: where it is kept, copied, recomputed); every node
         * the incumbent pays extra for, with its inputs and users, plus a run of
         * consecutive nodes (a change that moves recomputations far apart) */
        int kind = w < n ? it % 3 : 0, nodes_kind = kind != 0;
        int a = 0, b = 0;
        if (kind == 0) {
            a = pos, b = pos + w;
            if (b > n) {
                b = n;
                a = n - w;
            }
        } else if (kind == 1) {
            memset(mask, 0, (size_t)n);
            int seed = (int)(xe_splitmix64(&rng) % (uint64_t)n), qh = 0, qt = 0;
            if (xe_splitmix64(&rng) % 2) { /* half of the time: a node the incumbent pays extra for */
                int cnt = 0;
                for (int i = 0; i < n; i++)
                    if (extra[i] && xe_splitmix64(&rng) % (uint64_t)(++cnt) == 0) seed = i;
            }
            double acc = 0;
            mask[seed] = 1;
            queue[qt++] = seed;
            while (qh < qt && acc < target) { /* breadth-first over inputs and users */
                int v = queue[qh++];
                acc += (double)ncols[v];
                for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++)
                    if (!mask[g->pred[p]]) mask[g->pred[p]] = 1, queue[qt++] = g->pred[p];
                for (int p = g->succ_off[v]; p < g->succ_off[v + 1]; p++)
                    if (!mask[g->succ[p]]) mask[g->succ[p]] = 1, queue[qt++] = g->succ[p];
            }
            for (int k = qh; k < qt; k++) mask[queue[k]] = 0; /* queued, not taken */
        } else {
            memset(mask, 0, (size_t)n);
            double acc = 0;
            for (int i = 0; i < n; i++) {
                if (!extra[i]) continue;
                mask[i] = 1;
                for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++) mask[g->pred[p]] = 1;
                for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) mask[g->succ[p]] = 1;
            }
            for (int i = 0; i < n; i++) acc += mask[i] ? (double)ncols[i] : 0;
            /* too many: drop a random half of them, pass after pass from a random node,
             * until the set fits (each pass removes every member with probability 1/2) */
            for (int pass = 0; acc > target && pass < 64; pass++) {
                int from = (int)(xe_splitmix64(&rng) % (uint64_t)n);
                for (int k = 0; k < n && acc > target; k++) {
                    int i = (from + k) % n;
                    if (mask[i] && xe_splitmix64(&rng) % 2) mask[i] = 0, acc -= (double)ncols[i];
                }
            }
            for (int i = (int)(xe_splitmix64(&rng) % (uint64_t)n), k = 0; k < n && acc < target; k++, i = (i + 1) % n)
                if (!mask[i]) mask[i] = 1, acc += (double)ncols[i];
        }
        xe_milp_opts mo;
        xe_milp_opts_default(&mo);
        mo.fix = &res->sol;
        mo.fix_t0 = a;
        mo.fix_t1 = b;
        mo.free_nodes = nodes_kind ? mask : NULL;
        mo.threads = o->threads;
        mo.isolate = o->isolate;
        mo.interrupt = o->interrupt;
        mo.rel_gap = 1e-6;
        /* a neighbourhood gets a slice of the time; the whole model gets what is left */
        int whole = !nodes_kind && w == n;
        double slice = whole ? left : o->slice > 0 ? o->slice : fmax(1.0, fmin(o->time_limit / 30, 5.0));
        mo.time_limit = fmin(slice, xe_milp_limit_within(left)); /* its process ends within the limit */
        if (mo.time_limit < 0.02) break;
        xe_milp_result mr;
        rc = o->milp_fn ? o->milp_fn(o->milp_ctx, in, &mo, &mr, err) : xe_milp_solve(in, &mo, &mr, err);
        if (rc == XE_ESOLVER || rc == XE_EINVAL) {
            /* CBC failed on this neighbourhood (or its answer failed the exact check):
             * the incumbent stands; try the next one, unless it failed on the last
             * XE_LNS_MAX_FAILURES in a row (a process that cannot start, or dies of a
             * memory limit, fails every time: a new user's trial saw 370,206 failed
             * neighbourhoods in 5 s reported as "time limit") */
            if (!res->failures++) snprintf(res->failure, sizeof res->failure, "%.199s", err ? err->msg : "");
            xe_milp_result_clear(&mr);
            rc = XE_OK;
            res->iterations++;
            if (!nodes_kind) pos = (pos + (w / 2 > 0 ? w / 2 : 1)) % n;
            if (++fail_run >= XE_LNS_MAX_FAILURES) {
                res->stop = "solver failed";
                break;
            }
            continue;
        }
        if (rc) break;
        fail_run = 0;
        res->iterations++;
        int improved = 0;
        if (mr.sol.R && mr.objective < res->objective - 1e-9 * fmax(1.0, res->objective)) {
            xe_err e2;
            if (sim_ok(in, &mr.sol, &e2) == XE_OK) {
                xe_stages_clear(&res->sol);
                res->sol = mr.sol;
                for (int i = 0; i < n; i++) extra[i] = (uint8_t)extra_work(&res->sol, i);
                memset(&mr.sol, 0, sizeof mr.sol);
                res->objective = mr.objective;
                res->time_best = xe_now() - t0;
                res->improvements++;
                improved = 1;
                int k = res->ntrace < 64 ? res->ntrace++ : 63;
                res->trace_t[k] = res->time_best;
                res->trace_obj[k] = res->objective;
                if (o->progress) {
                    last_line = xe_now();
                    progress_line(res, last_line - t0,
                                  kind == 2 ? " (improved: extra-work neighbourhood)"
                                  : kind == 1 ? " (improved: node neighbourhood)" : " (improved: stage window)");
                }
            }
        }
        int solved = mr.status == XE_MILP_OPTIMAL && !mr.killed;
        if (whole && solved) {
            res->optimal = 1;
            res->bound = fmax(res->bound, res->objective);
        } else if (whole && isfinite(mr.bound) && !mr.killed) {
            res->bound = fmax(res->bound, fmin(mr.bound, res->objective));
        }
        /* a neighbourhood killed by the watchdog (CBC overran its own limit) ran out of
         * time too: its result carries no solve time */
        int timed_out = !solved && (mr.killed || mr.solve_time >= 0.9 * mo.time_limit);
        double mr_time = mr.solve_time;
        if (o->progress >= 2)
            fprintf(stderr, "[lns]  %7.1fs  %s %d cols %d rows: %s %.2f s%s\n", xe_now() - t0,
                    kind == 2 ? "extra " : kind == 1 ? "nodes " : "stages", mr.nvars, mr.nrows,
                    mr.killed ? "killed at its limit (no answer)" : xe_milp_status_str(mr.status), mr.solve_time,
                    improved ? " improved" : "");
        xe_milp_result_clear(&mr);
        /* sizes: shrink when neighbourhoods run out of time, grow after a sweep (about n
         * stages, or about n/4 node sets) without gain; beyond ~40,000 binary columns
         * CBC no longer finishes a neighbourhood in seconds */
        int quick = solved && mr_time < 0.1 * slice;
        if (nodes_kind) {
            fails_n = improved ? 0 : fails_n + 1;
            if (timed_out) target = fmax(300, target * 0.66);
            else if (quick && target * 1.3 <= 40000) target *= 1.3;
            else if (fails_n >= 8 && target * 1.5 <= 40000) {
                target *= 1.5;
                fails_n = 0;
            }
        } else {
            fails_w = improved ? 0 : fails_w + 1;
            int step = w / 2 > 0 ? w / 2 : 1;
            if (timed_out && w > 2) {
                w = w * 2 / 3 < 2 ? 2 : w * 2 / 3;
            } else if (quick && w < n && (double)total * (w + w / 4 + 1) / n <= 40000.0) {
                w = w + w / 4 + 1 > n ? n : w + w / 4 + 1;
            } else if (fails_w * step >= n && w < n) {
                int w2 = w * 3 / 2 + 1 > n ? n : w * 3 / 2 + 1;
                if ((double)total * w2 / n <= 40000.0) w = w2;
                fails_w = 0;
            }
            step = w / 2 > 0 ? w / 2 : 1;
            pos = b >= n ? (int)(xe_splitmix64(&rng) % (uint64_t)step) : pos + step;
            if (pos >= n) pos = 0;
        }
    }
    free(reach), free(ncols), free(mask), free(extra), free(queue);
    if (rc) {
        free(sz);
        xe_lns_result_clear(res);
        return rc;
    }
    free(sz);
    res->time_total = xe_now() - t0;
    if (res->optimal) res->stop = "optimal";
    else if (!res->stop) res->stop = "time limit";
    if (o->progress) {
        char why[48];
        snprintf(why, sizeof why, " (%s)", res->stop);
        progress_line(res, res->time_total, why);
    }
    return XE_OK;
}

int64_t xe_node_binaries(const xe_instance *in, const int *reach, int64_t *ncols, int64_t *stage)
{
    int n = in->g->n, D = in->ndev;
    int64_t per = 2 * D + D * (D - 1), total = 0;
    if (stage) memset(stage, 0, (size_t)n * sizeof *stage);
    for (int i = 0; i < n; i++) {
        int last = reach[i] > i ? reach[i] : i;
        ncols[i] = (int64_t)(last - i + 1) * per;
        total += ncols[i];
        if (stage) { /* + per on stages i..last: a difference array, summed below */
            stage[i] += per;
            if (last + 1 < n) stage[last + 1] -= per;
        }
    }
    for (int t = 1; stage && t < n; t++) stage[t] += stage[t - 1];
    return total;
}

int64_t xe_milp_binary_estimate(const xe_instance *in)
{
    int *reach = xe_graph_reach(in->g);
    int64_t *ncols = malloc((size_t)(in->g->n ? in->g->n : 1) * sizeof *ncols);
    int64_t total = reach && ncols ? xe_node_binaries(in, reach, ncols, NULL) : -1;
    free(reach), free(ncols);
    return total;
}
