/* The solve strategy as one call (include/xengine/plan.h, docs/lns.md "Strategy of
 * `xengine solve --method`"): portfolio and extra starts, LNS, the whole MILP. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/baselines.h"
#include "xengine/milp.h"
#include "xengine/pebble.h"
#include "xengine/plan.h"
#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

/* Above this many binary MILP columns auto gives LNS all the time (docs/lns.md). */
#define XE_PLAN_MILP_MAX_BINARIES 40000

static const char *const mode_names[] = {"auto", "lns", "milp", "heuristic"};

const char *xe_plan_mode_name(int mode)
{
    return mode >= 0 && mode <= XE_PLAN_HEURISTIC ? mode_names[mode] : "?";
}

int xe_plan_mode_parse(const char *s, xe_plan_mode *mode)
{
    for (int m = 0; m <= XE_PLAN_HEURISTIC; m++)
        if (s && !strcmp(s, mode_names[m])) {
            *mode = (xe_plan_mode)m;
            return 0;
        }
    return -1;
}

/* (objective - bound) / objective, 0 for a zero objective, NAN when unknown. */
static double rel_gap(double objective, double bound)
{
    if (!isfinite(objective) || !isfinite(bound)) return NAN;
    if (objective <= 0) return 0;
    return (objective - fmin(bound, objective)) / objective;
}

const char *xe_plan_name(const xe_plan_result *res)
{
    static const char *const names[][2] = {
        {"greedy", "greedy, low-peak order"},     {"greedy-random", "greedy-random, low-peak order"},
        {"lns", "lns, low-peak order"},           {"milp", "milp, low-peak order"},
        {"descent", "descent, low-peak order"},   {"checkpoint-all", "checkpoint-all, low-peak order"},
        {"recompute-all", "recompute-all, low-peak order"},
    };
    if (!res->reordered) return res->name;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(res->name, names[k][0])) return names[k][1];
    return "low-peak order";
}

void xe_plan_opts_default(xe_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = XE_PLAN_AUTO;
    o->time_limit = 60;
    o->rel_gap = 1e-4;
    o->threads = 1;
    o->knapsack = -1; /* on in auto's final MILP (docs/lns.md) */
}

void xe_plan_result_clear(xe_plan_result *res)
{
    if (!res) return;
    xe_stages_clear(&res->sol);
    xe_schedule_clear(&res->events);
    memset(res, 0, sizeof *res);
}

/* Records a new best (t seconds from the call) in the trace. */
static void trace(xe_plan_result *res, double t, double obj)
{
    int k = res->ntrace < 64 ? res->ntrace++ : 63;
    res->trace_t[k] = t;
    res->trace_obj[k] = obj;
}

/* 1 once the call was interrupted (xe_plan_opts.interrupt): no phase starts after. */
static int stopped(const xe_plan_opts *o) { return xe_interrupted(o->interrupt); }

/* Seconds left of the call's time limit (negative once it has passed; none once
 * interrupted). */
static double time_left(const xe_plan_opts *o, double t_start)
{
    if (stopped(o)) return 0.0;
    return o->time_limit - (xe_now() - t_start);
}

/* A solver phase whose limit (after its process's grace, xe_milp_limit_within) would be
 * shorter than this is not started: it could do nothing useful in it. */
#define XE_PLAN_MIN_PHASE 0.05

/* The LP relaxation as a bound (docs/lns.md, "Bounds", 2; row `lp-bound`): on models of
 * at most XE_PLAN_LP_MAX_BINARIES binary columns (xe_milp_binary_estimate), where Clp
 * solves it in 0.2-3 s here (random_layered_n100 one GPU 1 s, FCN-8 on two devices 2.7 s;
 * MobileNet one GPU, 34,410 columns, 19 s), each order's with XE_PLAN_LP_SHARE of the
 * time left. */
#define XE_PLAN_LP_MAX_BINARIES 20000
#define XE_PLAN_LP_SHARE 0.1
/* auto's final MILP carries the knapsack rows by default (xe_plan_opts.knapsack -1) only
 * with at least this many seconds: their larger model needs them for its root (VGG16 on
 * two devices at 70%, `--time-limit` 6, 10, 15, 15 again, 20: final MILP 2.3, 3, 5.4,
 * 5.7, 6.4 s; gap with them: killed in the root, 0.600%, 0.530%, killed, 0.360%; without
 * 0.600%, 0.555%, 0.555%, 0.555%, 0.555%). The default 60 s gives it about 23 s. */
#define XE_PLAN_KNAPSACK_MIN_S 10.0

/* An LP with less than this (its process's grace deducted) is not started: on the
 * shared graphs it needs 0.2-3 s, so a shorter share is mostly spent for nothing (a
 * 5-s limit gives random_layered_n100 0.45 s for an LP of 0.8 s). */
#define XE_PLAN_LP_MIN_S 0.5

/* The exact search's share of the time when other phases follow (docs/pebble.md), and
 * its least time where the limit has (nearly) passed. */
#define XE_PLAN_PEBBLE_SHARE 0.1
#define XE_PLAN_PEBBLE_MIN_S 2.0
#define XE_PLAN_PEBBLE_DEFAULT_S 10.0 /* heuristic mode without a time limit */

/* The chain DP (docs/chain-dp.md) runs on one-device training chains of up to this many
 * nodes, with a quarter of the time left (XE_PLAN_CHAIN_DP_SHARE; its time grows steeply
 * past 200 nodes: 0.4-0.7 s at 200, 16-38 s at 256 on the chains measured there) */
#define XE_PLAN_CHAIN_DP_MAX_NODES 256
#define XE_PLAN_CHAIN_DP_SHARE 0.25
#define XE_PLAN_CHAIN_DP_DEFAULT_S 2.0 /* without a time limit */

/* Seconds for a search that runs where no stage schedule is in hand (the exact search,
 * further low-peak orders): a tenth of the time left (of default_s without a limit), at
 * least min(XE_PLAN_PEBBLE_MIN_S, a quarter of the limit), at most what is left. */
static double search_share(const xe_plan_opts *o, double t_start, double default_s)
{
    double left = o->time_limit > 0 ? time_left(o, t_start) : default_s;
    double floor_s = o->time_limit > 0 ? fmin(XE_PLAN_PEBBLE_MIN_S, 0.25 * o->time_limit) : XE_PLAN_PEBBLE_MIN_S;
    return fmin(fmax(floor_s, XE_PLAN_PEBBLE_SHARE * left), fmax(0.01, left));
}

static void emit(const xe_plan_opts *o, xe_plan_result *res, const xe_plan_row *r)
{
    if (res->nrows < XE_PLAN_MAX_ROWS) res->rows[res->nrows++] = *r;
    if (o->row) o->row(o->ctx, r);
}

/* Emits the row of a phase not started because the time limit has (nearly) passed or the
 * call was interrupted, with the bound and gap known so far (NAN: none). */
static void emit_not_run(const xe_plan_opts *o, xe_plan_result *res, const char *method, double bound, double gap)
{
    xe_plan_row r = {.method = method, .status = stopped(o) ? "not run (interrupted)" : "not run (time limit reached)",
                     .objective = INFINITY,
                     .bound = bound, .gap = gap, .milp_status = -1};
    emit(o, res, &r);
}

/* Emits the row of a heuristic phase: no bound, no gap, no MILP status; objective in
 * seconds (INFINITY: no schedule), `seconds` the phase's time. */
static void emit_heur(const xe_plan_opts *o, xe_plan_result *res, const char *method, const char *status,
                      double objective, double seconds)
{
    xe_plan_row r = {.method = method, .status = status, .objective = objective, .bound = NAN, .gap = NAN,
                     .time = seconds, .milp_status = -1};
    emit(o, res, &r);
}

/* mr becomes "no schedule, no bound" (its schedule freed). */
static void no_answer(xe_milp_result *mr)
{
    xe_milp_result_clear(mr);
    memset(mr, 0, sizeof *mr);
    mr->status = XE_MILP_NO_SOLUTION;
    mr->objective = INFINITY;
    mr->bound = -INFINITY;
}

/* The whole MILP from `start` (NULL or o->no_start: none) for `limit` seconds, as one
 * phase named `method` (its row's bound capped at lb_other: the other order's stage
 * bound once reordered, else INFINITY): CBC failures and refuted or unconfirmed infeasibility claims are
 * turned into statuses (docs/lns.md), the row is emitted, res's MILP fields are set.
 * mr is filled (status NO_SOLUTION after a failure); *t0 = when the phase began,
 * seconds from t_start. Returns XE_OK or a fatal error (out of memory, a bug). */
static int milp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, const char *method,
                      const xe_stages *start, double limit, double t_start, double lb_other, xe_milp_result *mr,
                      double *t0, xe_err *err)
{
    xe_err e2 = {{0}};
    xe_milp_opts mo;
    xe_milp_opts_default(&mo);
    mo.time_limit = limit;
    mo.rel_gap = o->rel_gap;
    mo.threads = o->threads;
    mo.progress = o->progress;
    mo.isolate = 1; /* hold CBC to the wall-clock limit */
    mo.interrupt = o->interrupt;
    mo.start = start && !o->no_start ? start : NULL;
    /* -1: auto's default, with time for the larger model's root */
    mo.knapsack = o->knapsack < 0 ? o->mode == XE_PLAN_AUTO && limit >= XE_PLAN_KNAPSACK_MIN_S : o->knapsack;
    if (o->phase) o->phase(o->ctx, method);
    res->milp_crashed = res->milp_refuted = res->milp_killed = 0; /* the latest MILP phase's */
    double t_m0 = xe_now();
    *t0 = t_m0 - t_start;
    int rc = xe_milp_solve(in, &mo, mr, &e2);
    xe_plan_row r = {.method = method, .time = xe_now() - t_m0}; /* wall time, also when CBC gave no answer */
    if (rc == XE_ESOLVER && start) { /* e.g. CBC crashed when its time limit stopped it */
        snprintf(res->milp_error, sizeof res->milp_error, "%s", e2.msg);
        no_answer(mr);
        r.status = "no answer (solver process ended)";
        r.crashed = 1;
        r.kept = res->name;
        r.error = res->milp_error;
        res->milp_crashed = 1;
        rc = XE_OK;
    }
    if (rc == XE_OK && mr->status == XE_MILP_INFEASIBLE && start) {
        /* a valid schedule in hand refutes the "proof" (CBC 2.10 can report infeasible
         * when its time limit stops it in preprocessing): keep the schedule */
        int nv = mr->nvars, ni = mr->nints, nr = mr->nrows;
        no_answer(mr);
        mr->nvars = nv, mr->nints = ni, mr->nrows = nr;
        r.status = "infeasible claimed, refuted (ignored)";
        r.refuted = 1;
        r.kept = res->name;
        res->milp_refuted = 1;
    }
    if (rc == XE_OK && mr->status == XE_MILP_INFEASIBLE && !start && xe_descent_margin(in) > 1) {
        /* budgets too large for CBC to resolve single bytes: a claim stands only when the
         * soft model's least overflow is beyond that resolution (docs/lns.md) */
        int c = xe_descent_confirm_infeasible(in, time_left(o, t_start), o->threads, NULL, &e2);
        if (c == XE_ENOMEM) rc = c;
        else if (c != 1) {
            mr->status = XE_MILP_NO_SOLUTION;
            mr->bound = -INFINITY;
            r.status = "infeasible claimed, not confirmed (below CBC's byte resolution)";
        }
        r.time = xe_now() - t_m0;
    }
    if (rc) {
        if (err) *err = e2;
        return rc;
    }
    if (!r.status && mr->killed && stopped(o)) {
        r.status = "interrupted";
        mr->killed = 0; /* not a model too large for its limit */
    }
    if (!r.status)
        r.status = mr->killed ? "stopped at the time limit (CBC killed: it did not stop at its own)" : xe_milp_status_str(mr->status);
    r.objective = mr->sol.R ? mr->objective : INFINITY;
    r.bound = fmin(mr->bound, lb_other);
    r.gap = mr->sol.R ? rel_gap(mr->objective, r.bound) : NAN;
    r.milp_status = (int)mr->status;
    r.killed = mr->killed;
    r.nvars = mr->nvars, r.nints = mr->nints, r.nrows = mr->nrows;
    emit(o, res, &r);
    res->milp_status = (int)mr->status;
    res->milp_killed = mr->killed;
    return XE_OK;
}

/* Makes the MILP's schedule (phase `name`, begun t0 seconds into the call) the best one
 * when it is at least as cheap: a tie goes to the MILP (solve's choice). */
static void take_milp(xe_plan_result *res, xe_milp_result *m, const char *name, double t0, const xe_stages **best,
                      double *best_cost)
{
    if (!m->sol.R || m->objective > *best_cost) return;
    if (m->objective < *best_cost) {
        res->time_best = t0 + m->time_best;
        trace(res, res->time_best, m->objective);
    }
    *best = &m->sol;
    *best_cost = m->objective;
    res->name = name;
}

/* One device, no stage schedule in hand: the exact search over all event lists for
 * `seconds` (docs/pebble.md). YES: res->events holds its schedule, res->events_objective
 * its cost; NO: res->infeasible and res->infeasible_any set, res->blocker a node that
 * cannot be computed. Emits the "pebbling" row, whose bound is the cost of computing
 * every node once (*trivial): the stage bounds do not bound schedules outside the stage
 * structure; traces its first candidate and, if later, its best (*t_best: seconds from
 * the call until the best was in hand). Returns the answer, or a negative XE_E* code
 * (XE_ENOMEM) with err set. */
static int pebble_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                        double t_start, double *trivial, double *t_best, xe_err *err)
{
    double t0 = xe_now();
    *trivial = xe_bound_cheapest(in); /* one device: every node once */
    xe_pebble *pb = xe_pebble_new(in->g, 0);
    if (!pb) return xe_err_set(err, XE_ENOMEM, "plan: out of memory for the exact search");
    xe_pebble_set_interrupt(pb, o->interrupt);
    if (o->phase) o->phase(o->ctx, "pebbling");
    xe_pebble_answer a = XE_PEBBLE_UNKNOWN;
    xe_pebble_stats st;
    int rc = xe_pebble_schedule(pb, in, 0, t0 + seconds, &res->events, &a, &res->blocker, &st, err);
    if (a != XE_PEBBLE_NO) res->blocker = -1;
    xe_pebble_free(pb);
    if (rc) return rc;
    xe_plan_row r = {.method = "pebbling", .objective = INFINITY, .bound = *trivial, .gap = NAN,
                     .time = xe_now() - t0, .milp_status = -1};
    if (a == XE_PEBBLE_YES) {
        double c = st.cost;
        res->events_objective = c;
        r.objective = c;
        r.gap = rel_gap(c, *trivial);
        r.status = "valid (outside the stage structure)";
        /* its first candidate, then the best if that came later (docs/pebble.md) */
        double t_first = t0 - t_start + st.first_time;
        trace(res, t_first, st.first_cost);
        *t_best = t_first;
        if (c < st.first_cost) {
            *t_best = xe_now() - t_start;
            trace(res, *t_best, c);
        }
    } else if (a == XE_PEBBLE_NO) {
        res->infeasible = res->infeasible_any = 1;
        r.status = "no schedule of any form fits (proven)";
    } else {
        r.status = "unknown at its time limit";
    }
    emit(o, res, &r);
    return (int)a;
}

/* The order search's passes and time (docs/reorder.md): 400 passes take 9 ms on
 * random_layered_n250; the time cap matters only on graphs of thousands of wide layers. */
#define XE_PLAN_ORDER_PASSES 400
#define XE_PLAN_ORDER_S 0.1
/* Where the graph order has a schedule: up to this many low-peak orders (seeds 1, 2, ...),
 * the portfolio in each, for XE_PLAN_REORDER_SHARE of the time left (1 s without a
 * limit), the first always; the orders differ (random_layered_n100: peaks 38,660-42,430 B
 * over seeds 1-20, portfolio schedules 51.140-64.538 s at 70%). */
#define XE_PLAN_ORDER_CANDIDATES 16
#define XE_PLAN_REORDER_SHARE 0.05
#define XE_PLAN_REORDER_DEFAULT_S 1.0
/* With LNS or the MILP to follow, the low-peak order is taken only when its portfolio's
 * schedule is this much cheaper than the graph order's (or provably optimal): a small
 * lead does not last (random_layered_n100 one GPU at 90%, the first order alone: 48.283 s
 * against 48.412 s, 0.27% cheaper, but LNS in the graph order reaches 48.146 s and in the
 * low-peak order stays at 48.283 s); a larger one does (at 80%: 48.283 s against
 * 49.143 s, 1.75%, below the graph order's proven stage optimum, 48.866 s). */
#define XE_PLAN_REORDER_MARGIN 0.01
/* Further orders where neither order's portfolio nor the restarts found a schedule: at
 * most this many, for a tenth of the time left (at least min(2 s, a quarter of the
 * limit); 5 s without a limit), as the exact search (docs/reorder.md). */
#define XE_PLAN_MORE_ORDERS 32
#define XE_PLAN_MORE_ORDERS_DEFAULT_S 5.0

/* The low-peak order's schedule replaces the graph order's when cheaper by this factor
 * (any cheaper where nothing follows the portfolio). */
static double reorder_margin(const xe_plan_opts *o)
{
    return o->mode == XE_PLAN_HEURISTIC || o->feasibility ? 0.0 : XE_PLAN_REORDER_MARGIN;
}

/* FNV-1a hash of an order: seeds often give the same order (the first pass of
 * xe_order_low_peak is the same for every seed), which is then not planned again. */
static uint64_t order_hash(const int *order, int n)
{
    uint64_t h = 14695981039346656037ULL;
    for (int k = 0; k < n; k++) h = (h ^ (uint64_t)(unsigned)order[k]) * 1099511628211ULL;
    return h;
}

/* 1 when h is among seen[0..*nseen); else adds it (when there is room) and returns 0. */
static int seen_order(uint64_t h, uint64_t *seen, int *nseen, int cap)
{
    for (int k = 0; k < *nseen; k++)
        if (seen[k] == h) return 1;
    if (*nseen < cap) seen[(*nseen)++] = h;
    return 0;
}

/* The low-peak order of `seed` (xe_order_low_peak into order[n], with the search's
 * passes and time) and in relabelled in it: *p (new, the caller's) and *pk its peak; *p
 * stays NULL when that peak is not below `peak` or the order was tried before (seen,
 * seen_order). XE_OK or an error (out of memory). */
static int order_candidate(const xe_instance *in, uint64_t seed, double deadline, int64_t peak, int *order,
                           uint64_t *seen, int *nseen, int cap, xe_instance **p, int64_t *pk, xe_err *err)
{
    *p = NULL;
    int rc = xe_order_low_peak(in->g, seed, XE_PLAN_ORDER_PASSES, fmin(deadline, xe_now() + XE_PLAN_ORDER_S), order,
                               pk, err);
    if (rc || *pk >= peak || seen_order(order_hash(order, in->g->n), seen, nseen, cap)) return rc;
    return xe_instance_permute(in, order, p, err);
}

/* Where some device's budget is below the index order's no-recomputation peak:
 * topological orders with a lower peak (xe_order_low_peak, seeds 1, 2, ...), the
 * instance relabelled in each and the portfolio there (improved, no randomised restarts;
 * docs/reorder.md). When the graph order has a schedule (best_cost finite), up to
 * XE_PLAN_ORDER_CANDIDATES orders for `seconds` (the first always, unless the graph
 * order's portfolio took t_portfolio > seconds: then none), stopping at one as
 * cheap as every node once; else the first order only (the exact search should not
 * wait for more). The cheapest is kept. Emits row "reorder" when some order has a lower
 * peak. Returns 1 when its schedule is cheaper than best_cost by XE_PLAN_REORDER_MARGIN
 * (none in heuristic or feasibility mode), or optimal, or the only one: *in2 (owned by
 * the caller then), perm[n] (the order: node k of *in2 is node perm[k] of in) and *heur2
 * hold it, *which2 its member; 2 when neither order's portfolio found a schedule (*in2
 * and perm kept for the later phases, *heur2 empty); 0 when nothing changes (nothing
 * allocated); a negative XE_E* code with err set on errors (out of memory, a portfolio
 * failure). */
static int reorder_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double h_deadline,
                         double seconds, double t_portfolio, double best_cost, xe_instance **in2, int *perm,
                         xe_stages *heur2, const char **which2, xe_err *err)
{
    int n = in->g->n;
    *in2 = NULL;
    if (o->no_reorder || n < 3 || (o->feasibility && isfinite(best_cost))) return 0;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    if (peak < 0) return xe_err_set(err, XE_ENOMEM, "plan: out of memory computing the peak");
    int tight = 0;
    for (int d = 0; d < in->ndev; d++) tight |= in->dev[d].budget < peak;
    if (!tight) return 0;
    double once = xe_bound_cheapest(in);
    if (best_cost <= once * (1 + 1e-12)) return 0; /* optimal already */
    /* the graph order has a schedule, and one more portfolio would not fit the share (a
     * failing one is not interrupted: 7 s on a random 2,000-node DAG whose graph-order
     * portfolio took 3.7 s) */
    if (isfinite(best_cost) && t_portfolio > seconds) return 0;
    double t0 = xe_now(), end = t0 + seconds;
    int ncand = isfinite(best_cost) ? XE_PLAN_ORDER_CANDIDATES : 1;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    double c = INFINITY; /* the best order's schedule's cost */
    const char *w = "greedy";
    xe_stages cand = {0};
    int rc = XE_OK, tried = 0, nseen = 0;
    uint64_t seen[XE_PLAN_ORDER_CANDIDATES];
    res->peak_index = peak;
    for (int seed = 1; tried < ncand && seed <= 4 * ncand && (seed == 1 || xe_now() < end); seed++) {
        int64_t pk;
        xe_instance *p;
        rc = order_candidate(in, (uint64_t)seed, INFINITY, peak, order, seen, &nseen, XE_PLAN_ORDER_CANDIDATES, &p,
                             &pk, err);
        if (rc) break;
        if (seed == 1) res->peak_order = pk;
        if (!p) continue;
        tried++;
        const char *cw = "greedy";
        xe_err e2 = {{0}};
        int hrc = xe_heur_best_within(p, &cand, &cw, 2, 0.0, h_deadline, &e2); /* no diversification */
        if (hrc != XE_OK && hrc != XE_EINFEASIBLE) {
            xe_instance_free(p);
            rc = xe_err_set(err, hrc, "heuristic failed in a low-peak order: %s", e2.msg);
            break;
        }
        double cc = hrc == XE_OK ? xe_stages_cost(p, &cand) : INFINITY;
        if (cc < c || !*in2) { /* the cheapest so far (or the first order, kept for later phases) */
            xe_instance_free(*in2);
            xe_stages_clear(heur2);
            *in2 = p;
            *heur2 = cand;
            memset(&cand, 0, sizeof cand);
            memcpy(perm, order, (size_t)n * sizeof *perm);
            res->peak_order = pk;
            c = cc;
            w = cw;
        } else {
            xe_instance_free(p);
            xe_stages_clear(&cand);
        }
        if (c <= once * (1 + 1e-12)) break; /* every node once: nothing is cheaper */
    }
    free(order);
    if (rc) {
        xe_stages_clear(heur2);
        xe_instance_free(*in2);
        *in2 = NULL;
        return rc;
    }
    if (!*in2) return 0; /* no order with a lower peak */
    /* cheaper by the margin (LNS and the MILP follow in one order only, and the graph
     * order's search often closes a small lead), or as cheap as computing every node once
     * on its cheapest device: optimal over all schedules */
    double margin = reorder_margin(o);
    int take = isfinite(c) && (c < best_cost * (1 - margin) || (c < best_cost && c <= once * (1 + 1e-12)));
    snprintf(res->reorder_status, sizeof res->reorder_status,
             "%s (%d low-peak order%s; peak %.1f%% of the graph order's)",
             !isfinite(c) ? "no schedule found" : take ? "valid, planned in it" : "valid, not cheaper", tried,
             tried == 1 ? "" : "s", 100.0 * (double)res->peak_order / (double)peak);
    emit_heur(o, res, "reorder", res->reorder_status, c, xe_now() - t0);
    if (!take && !isfinite(c) && !isfinite(best_cost))
        return 2; /* neither order has a schedule: *in2 stays for the restarts and descent */
    if (!take) {
        xe_stages_clear(heur2);
        xe_instance_free(*in2);
        *in2 = NULL;
        return 0;
    }
    *which2 = w;
    return 1;
}

/* Where no order's portfolio or restarts found a stage schedule: further low-peak
 * orders (xe_order_low_peak with seeds 2, 3, ...: other orders of about the same peak),
 * the portfolio in each, for `seconds` and at most XE_PLAN_MORE_ORDERS orders; the first
 * schedule found is kept: *in2 and perm then hold that order (the previous *in2 freed),
 * *heur2 its schedule, *which2 its member, and 1 is returned; 0 when none was found;
 * a negative XE_E* code on errors. Emits row "orders". random_layered_n250 one GPU at
 * 65%: the first order and the restarts find nothing, the order of seed 3 a schedule of
 * 133.732 s (1.065x) after 0.3 s, where the exact search's is 265 s (docs/reorder.md). */
static int more_orders(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                       xe_instance **in2, int *perm, xe_stages *heur2, const char **which2, xe_err *err)
{
    int n = in->g->n;
    double t0 = xe_now(), end = t0 + seconds;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    int found = 0, tried = 0, rc = XE_OK, nseen = 0;
    double c = INFINITY;
    uint64_t seen[XE_PLAN_MORE_ORDERS + 1];
    seen_order(order_hash(perm, n), seen, &nseen, XE_PLAN_MORE_ORDERS + 1); /* the first order's */
    for (uint64_t seed = 2; !found && tried < XE_PLAN_MORE_ORDERS && seed <= 4 * XE_PLAN_MORE_ORDERS && xe_now() < end;
         seed++) {
        int64_t pk;
        xe_instance *p;
        rc = order_candidate(in, seed, end, res->peak_index, order, seen, &nseen, XE_PLAN_MORE_ORDERS + 1, &p, &pk,
                             err);
        if (rc) break;
        if (!p) continue; /* none lower this time, or one already tried */
        tried++;
        const char *w = "greedy";
        xe_err e2 = {{0}};
        int hrc = xe_heur_best_within(p, heur2, &w, 2, 0.0, end, &e2); /* no diversification */
        if (hrc == XE_OK) {
            xe_instance_free(*in2);
            *in2 = p;
            memcpy(perm, order, (size_t)n * sizeof *perm);
            res->peak_order = pk;
            *which2 = w;
            c = xe_stages_cost(p, heur2);
            found = 1;
        } else {
            xe_instance_free(p);
            if (hrc != XE_EINFEASIBLE) {
                rc = xe_err_set(err, hrc, "heuristic failed in a low-peak order: %s", e2.msg);
                break;
            }
        }
    }
    free(order);
    if (rc) return rc;
    snprintf(res->orders_status, sizeof res->orders_status, "%s (%d more low-peak order%s tried)",
             found ? "valid, planned in it" : "no schedule found", tried, tried == 1 ? "" : "s");
    emit_heur(o, res, "orders", res->orders_status, c, xe_now() - t0);
    return found;
}

/* From here on the phases plan in the low-peak order in2: its schedule st (found by
 * phase `name`) is the best; the stage bound becomes in2's, the graph order's is kept
 * apart in *lb_index (the reported bound is the lesser: docs/reorder.md). */
static void adopt_order(const xe_instance *in2, const xe_stages *st, const char *name, double t_start,
                        xe_plan_result *res, const xe_instance **cur, const xe_stages **best, double *best_cost,
                        double *lb, double *lb_index)
{
    *cur = in2;
    *best = st;
    *best_cost = xe_stages_cost(in2, st);
    res->name = name;
    res->time_best = xe_now() - t_start;
    res->reordered = 1;
    trace(res, res->time_best, *best_cost);
    *lb_index = fmin(*lb_index, *lb);
    *lb = xe_bound_stage(in2);
}

/* Why lp_bound has no bound: the words of the lp-bound row's status. */
static const char *const lp_why[] = {"solved", "not finished in its share of the time", "model too large",
                                     "infeasibility claimed (not trusted)", "solver failed", "interrupted",
                                     "not started (under 0.5 s left for it)"};
enum { LP_SOLVED, LP_TIMEOUT, LP_TOO_LARGE, LP_INFEASIBLE, LP_FAILED, LP_INTERRUPTED, LP_NO_TIME };

/* "%.9g s" of a solved LP bound, else why there is none (lp_why), into buf. */
static const char *lp_words(char *buf, size_t cap, double lp, int why)
{
    if (why == LP_SOLVED) snprintf(buf, cap, "%.9g s", lp);
    else snprintf(buf, cap, "%s", lp_why[why]);
    return buf;
}

/* The LP relaxation of in's stage MILP (xe_milp_opts.relax) in a child process killed
 * within `limit` seconds (>= XE_PLAN_LP_MIN_S), stopped by o->interrupt; est is the
 * model's xe_milp_binary_estimate (< 0: it ran out of memory). *lp = its optimum, a lower
 * bound on in's stage-class optimum in seconds, else -INFINITY with *why saying why
 * (lp_why): not solved to optimality in time, over XE_PLAN_LP_MAX_BINARIES, an
 * infeasibility claim (not trusted: CBC's tolerances at GB budgets, docs/formulation.md;
 * a schedule is in hand anyway), a solver failure, or the interrupt. Returns XE_OK, or
 * XE_ENOMEM. */
static int lp_bound(const xe_instance *in, int64_t est, const xe_plan_opts *o, double limit, double *lp, int *why,
                    xe_err *err)
{
    *lp = -INFINITY;
    if (est < 0) return xe_err_set(err, XE_ENOMEM, "plan: out of memory sizing the LP relaxation");
    if (est > XE_PLAN_LP_MAX_BINARIES) {
        *why = LP_TOO_LARGE;
        return XE_OK;
    }
    xe_milp_opts mo;
    xe_milp_opts_default(&mo);
    mo.time_limit = limit;
    mo.isolate = 1;
    mo.relax = 1;
    mo.threads = o->threads;
    mo.interrupt = o->interrupt;
    xe_milp_result r;
    memset(&r, 0, sizeof r);
    xe_err e2 = {{0}};
    int rc = xe_milp_solve(in, &mo, &r, &e2);
    if (rc == XE_OK && r.status == XE_MILP_INFEASIBLE) *why = LP_INFEASIBLE;
    else if (rc == XE_OK && isfinite(r.bound)) *why = LP_SOLVED, *lp = r.bound;
    else if (stopped(o)) *why = LP_INTERRUPTED;
    else *why = rc == XE_OK ? LP_TIMEOUT : LP_FAILED;
    xe_milp_result_clear(&r);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "plan: LP relaxation: %s", e2.msg);
    return XE_OK;
}

/* On one device, where the graph is a training chain (xe_chain_detect) of at most
 * XE_PLAN_CHAIN_DP_MAX_NODES nodes: the chain DP (docs/chain-dp.md) for
 * XE_PLAN_CHAIN_DP_SHARE of the time left; its schedule, turned into stage matrices
 * (xe_stages_from_schedule), replaces *best when cheaper (kept in *dp). With several
 * devices the DP parks tensors on the others (copies, not converted), so it is not run.
 * Emits row "chain-dp" when it ran. Returns XE_OK or XE_ENOMEM. */
static int chain_dp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                          xe_stages *dp, const xe_stages **best, double *best_cost, xe_err *err)
{
    int n = in->g->n;
    xe_err e2 = {{0}};
    if (o->no_chain_dp || in->ndev != 1 || n > XE_PLAN_CHAIN_DP_MAX_NODES || (o->feasibility && *best)) return XE_OK;
    double t0 = xe_now();
    double share = o->time_limit > 0 ? XE_PLAN_CHAIN_DP_SHARE * time_left(o, t_start) : XE_PLAN_CHAIN_DP_DEFAULT_S;
    if (!(share > 0.01)) return XE_OK;
    xe_schedule s;
    xe_schedule_init(&s);
    double c = INFINITY;
    const char *status;
    int r = xe_chain_dp_within(in, 0, t0 + share, &s, &c, &e2); /* it detects the chain itself */
    if (r == XE_EUNSUPPORTED) { /* not a training chain: no row */
        xe_schedule_clear(&s);
        return XE_OK;
    }
    if (r == XE_OK) {
        xe_stages st;
        int cr = xe_stages_from_schedule(in, &s, &st, &e2);
        if (cr == XE_OK && c < *best_cost * (1 - 1e-12)) {
            xe_stages_clear(dp);
            *dp = st;
            *best = dp;
            *best_cost = c;
            res->name = "chain-dp";
            res->time_best = xe_now() - t_start;
            trace(res, res->time_best, c);
            status = "valid";
        } else if (cr == XE_OK) {
            xe_stages_clear(&st);
            status = "valid, not cheaper";
        } else {
            r = cr;
            status = "not a stage schedule";
        }
    } else {
        status = r == XE_ETIMEOUT ? "unknown at its time limit" : r == XE_EINFEASIBLE ? "no schedule of its class fits"
                                                                                       : "failed";
    }
    xe_schedule_clear(&s);
    if (r == XE_ENOMEM) return xe_err_set(err, r, "plan: chain DP: %s", e2.msg);
    emit_heur(o, res, "chain-dp", status, c, xe_now() - t0);
    return XE_OK;
}

int xe_plan(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, xe_err *err)
{
    double t_start = xe_now();
    memset(res, 0, sizeof *res);
    res->name = "none";
    res->objective = INFINITY;
    res->bound = -INFINITY;
    res->gap = NAN;
    res->milp_status = -1;
    res->blocker = -1;
    if (o->mode < XE_PLAN_AUTO || o->mode > XE_PLAN_HEURISTIC ||
        (o->mode != XE_PLAN_HEURISTIC && !(o->time_limit > 0)) || !(o->rel_gap >= 0) || o->threads < 1 ||
        o->progress < 0 || !(o->slice >= 0) || o->nstarts < 0 || (o->nstarts > 0 && !o->starts) ||
        o->knapsack < -1 || o->knapsack > 1)
        return xe_err_set(err, XE_EINVAL,
                          "plan: bad options (mode %d, time limit %g s, gap %g, threads %d, slice %g, %d starts)",
                          o->mode, o->time_limit, o->rel_gap, o->threads, o->slice, o->nstarts);

    xe_stages heur = {0};
    xe_lns_result lns;
    memset(&lns, 0, sizeof lns);
    xe_milp_result mr; /* the whole MILP */
    memset(&mr, 0, sizeof mr);
    xe_stages dp = {0}; /* the chain DP's stage schedule */
    xe_descent_result dres;
    memset(&dres, 0, sizeof dres);
    xe_err e2 = {{0}};
    const xe_stages *best = NULL;
    double best_cost = INFINITY;
    double lb = -INFINITY; /* best lower bound so far, seconds */
    double trivial = -INFINITY; /* every node once: bounds every schedule (pebbling's) */
    double t_events = 0;        /* when the pebbling schedule was in hand */
    const xe_instance *cur = in; /* the instance the phases plan in: in, or in2 (reordered) */
    xe_instance *in2 = NULL;     /* in relabelled in a low-peak order (docs/reorder.md) */
    int *perm = NULL;            /* node k of in2 is node perm[k] of in */
    xe_stages heur2 = {0};       /* the portfolio's schedule in that order */
    double lb_index = INFINITY;  /* once reordered: the stage bound of the index order */
    int rc;

    /* 1. heuristic portfolio (docs/heuristic.md), its randomised restarts left for 1b;
     * once it holds a schedule it starts nothing more after the time limit (on graphs of
     * thousands of nodes its variants, pins and improvement take seconds) */
    const char *which = "greedy";
    double h_deadline = o->time_limit > 0 ? t_start + o->time_limit : INFINITY;
    double t_h0 = xe_now() - t_start;
    xe_heur_times ht;
    int hrc = xe_heur_best_timed(in, &heur, &which, 1, 0.0, h_deadline, &ht, &e2);
    double t_heur = xe_now() - t_start;
    res->time_heur = t_heur;
    if (hrc != XE_OK && hrc != XE_EINFEASIBLE) {
        rc = xe_err_set(err, hrc, "heuristic failed: %s", e2.msg);
        goto out;
    }
    if (hrc == XE_OK) {
        best = &heur;
        best_cost = xe_stages_cost(in, &heur);
        res->name = which;
        /* when it was in hand: its randomised diversification runs on after its last
         * improvement (docs/heuristic.md) */
        res->time_best = isfinite(ht.best_at) ? t_h0 + ht.best_at : t_heur;
        if (ht.first_cost > best_cost && isfinite(ht.first_at)) trace(res, t_h0 + ht.first_at, ht.first_cost);
    }
    emit_heur(o, res, hrc == XE_OK ? which : "greedy", hrc == XE_OK ? "valid" : "no schedule found", best_cost,
              t_heur);
    /* extra starts: the cheapest valid one replaces the portfolio's */
    for (int k = 0; k < o->nstarts; k++) {
        const xe_stages *st = o->starts[k].st;
        if (!st || !st->R || st->n != in->g->n || st->ndev != in->ndev) continue;
        xe_err e3;
        rc = xe_stages_check(in, st, &e3);
        if (rc == XE_ENOMEM) {
            rc = xe_err_set(err, rc, "plan: out of memory checking the start '%s'", o->starts[k].name);
            goto out;
        }
        if (rc != XE_OK) continue;
        double c = xe_stages_cost(in, st);
        if (c < best_cost) {
            best = st;
            best_cost = c;
            res->name = o->starts[k].name;
            res->time_best = t_heur;
        }
    }
    if (best) trace(res, res->time_best, best_cost);
    /* training chains: the chain DP's schedule where it is a stage schedule */
    rc = chain_dp_phase(in, o, res, t_start, &dp, &best, &best_cost, err);
    if (rc) goto out;
    lb = xe_bound_stage(in); /* docs/lns.md, "Bounds" */

    /* 1r. another topological order where the budget is below the index order's
     * no-recomputation peak (docs/reorder.md): the portfolio there; when cheaper, every
     * later phase plans in it, and bounds hold for the union of both orders' stage
     * schedules (lb_index kept apart) */
    perm = malloc(((size_t)in->g->n + 1) * sizeof *perm);
    if (!perm) {
        rc = xe_err_set(err, XE_ENOMEM, "plan: out of memory");
        goto out;
    }
    double ro_s = o->time_limit > 0 ? XE_PLAN_REORDER_SHARE * fmax(0.0, time_left(o, t_start)) : XE_PLAN_REORDER_DEFAULT_S;
    /* one order's portfolio runs without the diversification: its cost is the graph
     * order's deterministic part (ht.first_at), not the whole call */
    double t_one = hrc == XE_OK && isfinite(ht.first_at) ? ht.first_at : t_heur - t_h0;
    rc = stopped(o) ? 0 : reorder_phase(in, o, res, h_deadline, ro_s, t_one, best_cost, &in2, perm, &heur2, &which, err);
    if (rc < 0) goto out;
    if (rc == 1) adopt_order(in2, &heur2, which, t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
    rc = XE_OK;

    /* 1a. one device and no start: the exact search over all schedules (docs/pebble.md),
     * for a tenth of the time left (of its default without a limit in heuristic mode;
     * where it finds a schedule it mostly takes milliseconds, so a larger share would only
     * lengthen the failures; random_layered_n250 at 60% takes 1.2-1.5 s); at least
     * min(2 s, a quarter of the limit), at most what is
     * left */
    if (!best && !o->no_pebbling && in->ndev == 1 && !stopped(o)) {
        double lim = search_share(o, t_start, XE_PLAN_PEBBLE_DEFAULT_S);
        int a = pebble_phase(in, o, res, lim, t_start, &trivial, &t_events, err);
        if (a < 0) {
            rc = a;
            goto out;
        }
        if (a == XE_PEBBLE_NO) goto out; /* nothing fits: no phase below can help */
    }

    /* 1b. the portfolio's randomised greedy restarts where its greedy found nothing (no
     * stage schedule, or only recompute-all's): up to XE_PORTFOLIO_RANDOM_S, at most a
     * quarter of the limit, half in heuristic mode; the cheaper schedule stays */
    if (cur == in && (hrc != XE_OK || !strcmp(which, "recompute-all")) && (!best || best == &heur) && !stopped(o)) {
        double rand_share = o->mode == XE_PLAN_HEURISTIC ? 0.5 : 0.25;
        double rand_s = o->time_limit > 0 ? fmin(XE_PORTFOLIO_RANDOM_S, rand_share * o->time_limit)
                                          : XE_PORTFOLIO_RANDOM_S;
        double tr0 = xe_now(), cc = INFINITY, c2 = INFINITY;
        int replaced = 0;
        if (in2) { /* neither order's portfolio found one: the low-peak order's restarts
                    * first, for a quarter of that time (docs/reorder.md) */
            double none = INFINITY;
            int r2 = xe_heur_restarts(in2, 0.25 * rand_s, &heur2, &none, NULL, &c2, NULL, &e2);
            if (r2 != XE_OK && r2 != XE_EINFEASIBLE) {
                rc = xe_err_set(err, r2, "heuristic failed in the low-peak order: %s", e2.msg);
                goto out;
            }
        }
        int rrc = xe_heur_restarts(in, rand_s, &heur, &best_cost, NULL, &cc, &replaced, &e2);
        if (rrc != XE_OK && rrc != XE_EINFEASIBLE) {
            rc = xe_err_set(err, rrc, "heuristic failed: %s", e2.msg);
            goto out;
        }
        if (isfinite(c2) && !(best_cost <= c2 * (1 + reorder_margin(o)))) { /* the low-peak order's */
            rrc = xe_heur_improve(in2, &heur2, xe_heur_improve_seconds(in2), &e2);
            if (rrc) {
                rc = xe_err_set(err, rrc, "heuristic failed: %s", e2.msg);
                goto out;
            }
            adopt_order(in2, &heur2, "greedy-random", t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
            cc = best_cost;
            replaced = 0;
            rrc = XE_OK;
        } else if (isfinite(c2)) {
            xe_stages_clear(&heur2);
        }
        if (replaced) { /* improved like the portfolio's own best */
            rrc = xe_heur_improve(in, &heur, xe_heur_improve_seconds(in), &e2);
            if (rrc) {
                rc = xe_err_set(err, rrc, "heuristic failed: %s", e2.msg);
                goto out;
            }
            cc = best_cost = xe_stages_cost(in, &heur);
            best = &heur;
            res->name = "greedy-random";
            res->time_best = xe_now() - t_start;
            trace(res, res->time_best, best_cost);
        }
        double t_random = xe_now() - tr0;
        emit_heur(o, res, "greedy-random",
                  rrc == XE_OK ? (cur != in ? "valid (low-peak order)" : "valid") : "no schedule found", cc, t_random);
        res->time_heur += t_random;
    }
    /* 1d. no stage schedule in either order, not even from the restarts: further
     * low-peak orders (docs/reorder.md) */
    if (!best && in2 && !o->feasibility && !stopped(o)) {
        double lim = search_share(o, t_start, XE_PLAN_MORE_ORDERS_DEFAULT_S);
        rc = more_orders(in, o, res, lim, &in2, perm, &heur2, &which, err);
        if (rc < 0) goto out;
        if (rc == 1) adopt_order(in2, &heur2, which, t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
        rc = XE_OK;
    }
    if (o->mode == XE_PLAN_HEURISTIC || (o->feasibility && (best || res->events.len))) goto out;

    /* 1c. budget descent when no start fits (auto, lns; docs/lns.md "Budget descent"):
     * up to 60% of the time; the phases below share what it leaves */
    int descent = !best && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS);
    if (descent && stopped(o)) {
        emit_not_run(o, res, "descent", NAN, NAN);
    } else if (descent) {
        if (o->phase) o->phase(o->ctx, "descent");
        double td0 = xe_now();
        xe_plan_row dr = {.method = "descent", .objective = INFINITY, .bound = NAN, .gap = NAN, .milp_status = -1};
        xe_descent_opts dopt;
        xe_descent_opts_default(&dopt);
        dopt.time_limit = fmax(1e-3, 0.6 * time_left(o, t_start));
        dopt.threads = o->threads;
        dopt.isolate = 1;
        dopt.interrupt = o->interrupt;
        dopt.progress = o->progress;
        dopt.slice = o->slice;
        /* in the low-peak order where neither order had a schedule (docs/reorder.md) */
        const xe_instance *din = in2 ? in2 : in;
        int drc = xe_descent(din, &dopt, &dres, &e2);
        if (drc == XE_ENOMEM) {
            rc = xe_err_set(err, drc, "%s", e2.msg);
            goto out;
        }
        dr.time = xe_now() - td0;
        if (drc == XE_OK && din != in) {
            adopt_order(in2, &dres.sol, "descent", t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
            dr.objective = best_cost;
            dr.status = "fits the budgets (low-peak order)";
        } else if (drc == XE_OK) {
            best = &dres.sol;
            best_cost = dres.objective;
            res->name = "descent";
            res->time_best = xe_now() - t_start;
            trace(res, res->time_best, best_cost);
            dr.objective = best_cost;
            dr.status = "fits the budgets";
        } else if (dres.proven && din != in) { /* that order's class only: the MILP follows */
            dr.status = "no stage schedule of the low-peak order fits (proven)";
            dres.proven = 0;
        } else if (dres.proven) {
            dr.status = "no stage schedule fits (proven)";
        } else if (drc == XE_ETIMEOUT && dres.sol.R) {
            snprintf(res->descent_status, sizeof res->descent_status, "still %.6g B over at its worst stage",
                     dres.worst);
            dr.status = res->descent_status;
        } else if (drc == XE_ETIMEOUT || drc == XE_EINFEASIBLE) {
            dr.status = "no start found";
        } else { /* CBC failing again and again, or a bug: say so, go on to the MILP */
            snprintf(res->descent_status, sizeof res->descent_status, "failed: %.55s", e2.msg);
            dr.status = res->descent_status;
        }
        emit(o, res, &dr);
        if (dres.proven) { /* the whole model, solved: no MILP needed */
            res->infeasible = 1;
            res->milp_status = XE_MILP_INFEASIBLE;
            rc = XE_OK;
            goto out;
        }
    }

    int skip_milp = 0; /* LNS proved its schedule, or had all the time: no MILP after it */
    int64_t nbin = xe_milp_binary_estimate(cur); /* the model's size: the LP's and auto's MILP's gate */
    if (nbin < 0) {
        rc = xe_err_set(err, XE_ENOMEM, "plan: out of memory sizing the MILP");
        goto out;
    }

    /* 1e. the LP relaxation as a bound (auto, lns; docs/lns.md "Bounds"), of the order
     * planned in and, once reordered, of the graph's order too, whose stage class the
     * reported bound also covers and which nothing after this bounds better than
     * xe_bound_stage; a start proven within the gap needs no LNS or MILP (nor this, when
     * the stage bounds already prove it: LNS then stops at once, "bound reached") */
    int lp_proof = 0;
    double lp_limit = xe_milp_limit_within(XE_PLAN_LP_SHARE * time_left(o, t_start));
    if (best && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS) && !stopped(o) &&
        !(rel_gap(best_cost, fmin(lb, lb_index)) <= o->rel_gap) && nbin <= XE_PLAN_LP_MAX_BINARIES &&
        lp_limit >= XE_PLAN_LP_MIN_S) {
        if (o->phase) o->phase(o->ctx, "lp-bound");
        double t_lp0 = xe_now(), lp = -INFINITY, lpi = -INFINITY;
        int why = LP_SOLVED, whyi = LP_SOLVED;
        rc = lp_bound(cur, nbin, o, lp_limit, &lp, &why, err);
        double lim_i = xe_milp_limit_within(XE_PLAN_LP_SHARE * time_left(o, t_start));
        if (rc == XE_OK && cur != in && stopped(o)) whyi = LP_INTERRUPTED;
        else if (rc == XE_OK && cur != in && lim_i >= XE_PLAN_LP_MIN_S) rc = lp_bound(in, xe_milp_binary_estimate(in), o, lim_i, &lpi, &whyi, err);
        else if (cur != in) whyi = LP_NO_TIME;
        if (rc) goto out;
        lb = fmax(lb, lp);
        if (cur != in) lb_index = fmax(lb_index, lpi);
        double ub = fmin(lb, lb_index);
        /* the status gives each LP's value or why it has none; the row's bound is the
         * reported bound after it, shown only when some LP was solved */
        char w1[48], w2[48];
        if (cur == in)
            snprintf(res->lp_status, sizeof res->lp_status, "%s%s", why == LP_SOLVED ? "LP relaxation " : "",
                     lp_words(w1, sizeof w1, lp, why));
        else
            snprintf(res->lp_status, sizeof res->lp_status, "LP relaxation, low-peak order: %s; graph order: %s",
                     lp_words(w1, sizeof w1, lp, why), lp_words(w2, sizeof w2, lpi, whyi));
        int any = why == LP_SOLVED || (cur != in && whyi == LP_SOLVED);
        xe_plan_row lr = {.method = "lp-bound",
                          .status = res->lp_status,
                          .objective = INFINITY,
                          .bound = any ? ub : NAN,
                          .gap = any ? rel_gap(best_cost, ub) : NAN,
                          .time = xe_now() - t_lp0,
                          .milp_status = -1};
        emit(o, res, &lr);
        lp_proof = any && isfinite(lr.gap) && lr.gap <= o->rel_gap;
        if (lp_proof) {
            skip_milp = 1;
            res->milp_status = XE_MILP_OPTIMAL;
        }
    }

    /* 2. LNS (auto: 60% of the time left, lns: all of it; docs/lns.md); not started when
     * the time limit has passed (on graphs of thousands of nodes the portfolio can take it
     * all, and LNS's set-up alone, its bounds, takes 0.1-0.2 s there) */
    int lns_mode = best && !lp_proof && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS);
    if (lns_mode && o->time_limit > 0 && time_left(o, t_start) < XE_PLAN_MIN_PHASE) {
        /* the stage bound known so far and the incumbent's gap to it, so that the table
         * still says how far the schedule may be from the optimum */
        emit_not_run(o, res, "lns", fmin(lb, lb_index), rel_gap(best_cost, fmin(lb, lb_index)));
    } else if (lns_mode) {
        /* auto on a model too large for CBC's root LP: LNS gets all the time */
        int all = o->mode == XE_PLAN_LNS || nbin > XE_PLAN_MILP_MAX_BINARIES;
        xe_lns_opts lo;
        xe_lns_opts_default(&lo);
        lo.time_limit = fmax(1e-3, (all ? 1.0 : 0.6) * time_left(o, t_start));
        lo.rel_gap = o->rel_gap;
        lo.bound = lb;
        lo.threads = o->threads;
        lo.isolate = 1;
        lo.interrupt = o->interrupt;
        lo.progress = o->progress;
        lo.slice = o->slice;
        if (o->phase) o->phase(o->ctx, "lns");
        double t_lns0 = xe_now() - t_start;
        rc = xe_lns_solve(cur, best, &lo, &lns, err);
        if (rc) goto out;
        double llb = fmax(lb, lns.bound);
        double lgap = rel_gap(lns.objective, llb);
        xe_plan_row lr = {.method = "lns",
                          .status = lns.stop,
                          .objective = lns.objective,
                          .bound = fmin(llb, lb_index), /* the union's bound once reordered */
                          .gap = rel_gap(lns.objective, fmin(llb, lb_index)),
                          .time = lns.time_total,
                          .milp_status = -1};
        emit(o, res, &lr);
        /* LNS proved its schedule within the gap ("bound reached", "optimal"): no MILP */
        if (lns.optimal || lgap <= o->rel_gap) all = 1;
        if (lns.objective < best_cost) {
            best = &lns.sol;
            best_cost = lns.objective;
            res->name = "lns";
            res->time_best = t_lns0 + lns.time_best;
            for (int k = 1; k < lns.ntrace; k++) /* entry 0 is LNS's start, traced already */
                trace(res, t_lns0 + lns.trace_t[k], lns.trace_obj[k]);
        }
        lb = llb;
        if (all) {
            skip_milp = 1;
            res->milp_status = lns.optimal || lgap <= o->rel_gap ? XE_MILP_OPTIMAL : XE_MILP_FEASIBLE;
        }
    }

    /* 3. the whole MILP: milp, auto after LNS, and any mode without a start schedule;
     * not started when the time limit has (nearly) passed */
    double milp_limit = xe_milp_limit_within(time_left(o, t_start)); /* its process ends in time */
    if (!skip_milp && milp_limit < XE_PLAN_MIN_PHASE) {
        emit_not_run(o, res, "milp", NAN, NAN);
        res->milp_status = best ? XE_MILP_FEASIBLE : XE_MILP_NO_SOLUTION;
        res->milp_killed = 0;
        skip_milp = 1;
    }
    if (!skip_milp) {
        double t_m0;
        rc = milp_phase(cur, o, res, "milp", best, milp_limit, t_start, lb_index, &mr, &t_m0, err);
        if (rc) goto out;
        take_milp(res, &mr, "milp", t_m0, &best, &best_cost);
        if (mr.status == XE_MILP_INFEASIBLE) res->infeasible = 1; /* no schedule in hand */
        lb = fmax(lb, mr.bound);
    }

out:
    if (rc == XE_OK && best) {
        if (best == &heur || best == &heur2 || best == &lns.sol || best == &mr.sol || best == &dres.sol ||
            best == &dp) { /* move */
            res->sol = *best;
            memset((xe_stages *)best, 0, sizeof *best);
        } else if (xe_stages_copy(&res->sol, best)) {
            rc = xe_err_set(err, XE_ENOMEM, "plan: out of memory copying the '%s' schedule", res->name);
        }
    }
    /* the pebbling schedule stays only where no stage schedule is as cheap */
    double sc = rc == XE_OK && res->sol.R ? xe_stages_cost(cur, &res->sol) : INFINITY;
    if (rc == XE_OK && res->events.len && res->sol.R && sc <= res->events_objective)
        xe_schedule_clear(&res->events);
    if (rc == XE_OK && res->events.len) {
        xe_stages_clear(&res->sol);
        res->reordered = 0;
        res->name = "pebbling";
        res->objective = res->events_objective;
        res->bound = fmin(trivial, res->objective); /* the stage bounds do not hold here */
        res->gap = rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
        res->time_best = t_events;
        res->infeasible = 0; /* a stage-class proof does not cover this schedule */
    } else if (rc == XE_OK && res->sol.R && cur != in) {
        /* planned in the low-peak order: an event list in in's node ids (docs/reorder.md) */
        rc = xe_stages_to_schedule(cur, &res->sol, &res->events, err);
        xe_stages_clear(&res->sol);
        if (rc == XE_OK) {
            xe_schedule_unpermute(&res->events, perm);
            res->events_objective = res->objective = sc;
            res->bound = fmin(fmin(lb, lb_index), sc); /* over both orders' stage schedules */
            res->gap = rel_gap(sc, res->bound);
            res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
            res->infeasible = 0;
            /* a proof by LNS or the MILP held in the low-peak order only */
            if (!res->optimal && res->milp_status == XE_MILP_OPTIMAL) res->milp_status = XE_MILP_FEASIBLE;
        } else {
            xe_schedule_clear(&res->events);
        }
    } else if (rc == XE_OK && res->sol.R) {
        res->objective = sc;
        res->bound = fmin(lb, res->objective);
        res->gap = rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    } else if (rc == XE_OK) {
        res->name = "none";
        res->bound = lb;
    }
    res->time_total = xe_now() - t_start;
    xe_stages_clear(&heur);
    xe_lns_result_clear(&lns);
    xe_milp_result_clear(&mr);
    xe_stages_clear(&dres.sol);
    xe_stages_clear(&dp);
    xe_stages_clear(&heur2);
    xe_instance_free(in2);
    free(perm);
    return rc;
}
