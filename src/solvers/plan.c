/* The solve strategy as one call (include/xengine/plan.h, docs/lns.md "Strategy of
 * `xengine solve --method`"): portfolio and extra starts, the exact searches, low-peak
 * orders, budget descent, the LP bound, LNS, the whole MILP. Its phases are in
 * plan_*.c (src/solvers/plan_int.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/io.h"
#include "xengine/milp.h"
#include "xengine/pebble.h"
#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

/* The cheapest schedule in hand, seconds: the stage schedule's (best_cost), the exact
 * search's event list (res->events) or the low-peak order's kept aside; INFINITY when
 * none. */
static double plan_incumbent(const xe_plan_result *res, double best_cost, const xe_plan_aside *aside)
{
    double c = best_cost;
    if (res->events.len) c = fmin(c, res->events_objective);
    if (aside->events.len) c = fmin(c, aside->cost);
    return c;
}

/* At a phase boundary: 1 when the ended search bound gives an optimal schedule (adopted,
 * xe_plan_search_order) or proves the cheapest schedule in hand within the gap
 * (xe_plan_bound_proves), so the caller stops; 0 to go on; negative XE_E* on error. */
static int plan_search_check(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                             xe_plan_bound *bs, xe_instance **in2, int *perm, xe_stages *heur2,
                             const xe_instance **cur, const xe_stages **best, double *best_cost, double *lb,
                             double *lb_index, const xe_plan_aside *aside, xe_err *err)
{
    double inc = plan_incumbent(res, *best_cost, aside);
    /* the reach bound's path, cheaper than the schedule in hand: it is taken after the
     * phases (xe_plan_reach_take), and nothing beats it */
    if (xe_plan_reach_take(o, res, t_start, bs, inc, 0, err) == 1) return 1;
    int rc = xe_plan_search_order(in, o, res, t_start, bs, in2, perm, heur2, cur, best, best_cost, lb, lb_index, err);
    if (rc == 0 && xe_plan_bound_proves(bs, plan_incumbent(res, *best_cost, aside), o->rel_gap)) rc = 1;
    return rc;
}

/* The caller's extra starts (o->starts): the cheapest valid one cheaper than *best_cost
 * becomes *best (not copied: o owns it), named as given, in hand at t seconds. XE_OK or
 * XE_ENOMEM. */
static int plan_take_starts(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t,
                            const xe_stages **best, double *best_cost, xe_err *err)
{
    for (int k = 0; k < o->nstarts; k++) {
        const xe_stages *st = o->starts[k].st;
        if (!st || !st->R || st->n != in->g->n || st->ndev != in->ndev) continue;
        xe_err e3;
        int rc = xe_stages_check(in, st, &e3);
        if (rc == XE_ENOMEM)
            return xe_err_set(err, rc, "plan: out of memory checking the start '%s'", o->starts[k].name);
        if (rc != XE_OK) continue;
        double c = xe_stages_cost(in, st);
        if (c < *best_cost) {
            *best = st;
            *best_cost = c;
            res->name = o->starts[k].name;
            res->time_best = t;
        }
    }
    return XE_OK;
}

int xe_plan_memory_check(const xe_instance *in, size_t memory_bytes, xe_err *err)
{
    double stage_bytes = 8.0 * (double)in->g->n * (double)in->g->n * (double)in->ndev;
    double memory = memory_bytes ? (double)memory_bytes : xe_plan_physical_bytes();
    if (memory > 0 && stage_bytes > XE_PLAN_MEMORY_SHARE * memory) {
        char need[32], have[32];
        return xe_err_set(err, XE_ENOMEM,
                          "%d nodes on %d device%s: the dense stage matrices need about %s (8 B x n x n x "
                          "devices), more than %.0f%% of the %s of memory here; plan a smaller graph",
                          in->g->n, in->ndev, in->ndev == 1 ? "" : "s",
                          xe_io_bytes((int64_t)fmin(stage_bytes, 9e18), need, sizeof need),
                          100.0 * XE_PLAN_MEMORY_SHARE, xe_io_bytes((int64_t)memory, have, sizeof have));
    }
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
    res->bound_any = -INFINITY;
    res->milp_status = -1;
    res->blocker = -1;
    /* each option on its own, so the message names the one at fault (one message with
     * every value before 2026-12-05) */
    const char *bad = o->mode < XE_PLAN_AUTO || o->mode > XE_PLAN_HEURISTIC                ? "mode"
                      : o->mode != XE_PLAN_HEURISTIC && !(o->time_limit > 0)                ? "time_limit (> 0 s)"
                      : !(o->rel_gap >= 0)                                                  ? "rel_gap (>= 0)"
                      : o->threads < 1                                                      ? "threads (>= 1)"
                      : o->progress < 0                                                     ? "progress (>= 0)"
                      : !(o->slice >= 0)                                                    ? "slice (>= 0 s)"
                      : o->nstarts < 0 || (o->nstarts > 0 && !o->starts)                    ? "nstarts/starts"
                      : o->knapsack < -1 || o->knapsack > 1                                 ? "knapsack (-1, 0 or 1)"
                                                                                            : NULL;
    if (bad)
        return xe_err_set(err, XE_EINVAL,
                          "plan: bad option %s (mode %d, time limit %g s, gap %g, threads %d, slice %g, %d starts)",
                          bad, (int)o->mode, o->time_limit, o->rel_gap, o->threads, o->slice, o->nstarts);
    /* an instance built or edited by hand: costs, copy costs and budgets in range (a
     * negative budget set through the recipe's public fields ended in an assertion of the
     * chain DP, a cost of 1e30 in a CBC abort behind XE_OK; a new user's find, 2026-12-05) */
    int vrc = xe_instance_validate(in, err);
    if (vrc) return vrc;

    /* the dense stage matrices: refused at once where they cannot fit, rather than
     * killed by the kernel part way (README, "Status") */
    int mrc = xe_plan_memory_check(in, o->memory_bytes, err);
    if (mrc) return o->no_dtr ? mrc : xe_plan_dtr_only(in, o, res, t_start, err);
    /* the result's conversion to an event list and its replay (the caller's) and the
     * bounds at the end take O(n^2 D) work as well: on large graphs the phases end that
     * much before the limit (XE_PLAN_FINISH_PASSES greedy passes of work, at most a tenth
     * of the limit, none under XE_PLAN_MIN_PHASE: 2-3 s on a 10,000-node chain on
     * gpu+cpu, nothing on the shared graphs) */
    xe_plan_opts fin;
    if (o->time_limit > 0) {
        double reserve =
            fmin(0.1 * o->time_limit, XE_PLAN_FINISH_PASSES * xe_heur_pass_seconds(in));
        if (reserve >= XE_PLAN_MIN_PHASE) {
            fin = *o;
            fin.time_limit -= reserve;
            o = &fin;
        }
    }

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
    double lb_any = -INFINITY; /* bounds every schedule (pebbling's): xe_plan_pebble_phase */
    double t_events = 0;        /* when the pebbling schedule was in hand */
    const char *ev_name = "pebbling"; /* "restaged(-lns)" once improved */
    const xe_instance *cur = in; /* the instance the phases plan in: in, or in2 (reordered) */
    xe_instance *in2 = NULL;     /* in relabelled in a low-peak order (docs/reorder.md) */
    int *perm = NULL;            /* node k of in2 is node perm[k] of in */
    xe_stages heur2 = {0};       /* the portfolio's schedule in that order */
    double lb_index = INFINITY;  /* once reordered: the stage bound of the index order */
    xe_plan_aside aside = {.cost = INFINITY}; /* a low-peak order's schedule under 1% cheaper */
    double t_aside = 0;
    /* the event-list local search's time, kept back from the phases after the order
     * search (xe_plan_anneal_share); they then plan under `phases`, o's limit less it */
    double anneal_s = 0;
    const xe_plan_opts *oall = o;
    xe_schedule dtr; /* the DTR schedule (docs/dtr.md), one device, outside the stage structure */
    xe_schedule_init(&dtr);
    double dtr_cost = INFINITY, t_dtr = 0;
    int dtr_ran = 0;
    xe_plan_opts phases;
    int rc;

    /* 1. heuristic portfolio (docs/heuristic.md), its randomised restarts left for 1b;
     * once it holds a schedule it starts nothing more after the time limit (on graphs of
     * thousands of nodes its variants, pins and improvement take seconds) */
    const char *which = "greedy";
    double h_deadline = o->time_limit > 0 ? t_start + o->time_limit : INFINITY;
    xe_plan_bound bsearch; /* the search bound on a second thread (plan_bound.c) */
    xe_plan_bound_start(&bsearch, in, o, t_start);
    /* 0. on graphs where a stage greedy pass takes a large part of a second or more, the
     * DTR schedule first (docs/dtr.md): milliseconds where it finds one, and with it in
     * hand the portfolio's grace past the limit is not needed */
    const char *ev_first = "dtr"; /* the name of the schedule in `dtr` */
    int big = xe_plan_dtr_big(in);
    if (!o->no_dtr && big && !xe_plan_stopped(o)) {
        double secs = o->time_limit > 0 ? fmin(XE_PLAN_DTR_S, 0.25 * o->time_limit) : XE_PLAN_DTR_S;
        rc = xe_plan_dtr_phase(in, o, res, t_start, secs, &dtr, &dtr_cost, &t_dtr, err);
        if (rc) goto out;
        dtr_ran = 1;
        /* every node once at its cheapest: nothing can be cheaper (a 1,000-node DAG at 90%:
         * the greedy and the search bound's order ran 0.35 s more for the same cost) */
        if (dtr.len && dtr_cost <= xe_bound_cheapest(in) * (1 + 1e-12)) goto out;
    }
    /* 0f. one device runs every node at its cheapest and its budget is below the index
     * order's peak: a topological order that fits that budget (docs/reorder.md, "Fitting
     * an order to a budget") makes every node once there a schedule, optimal; nothing else
     * need run. Milliseconds where one exists near the least peak; a tenth of the limit at
     * most (a quarter on graphs that get DTR first, half where DTR found nothing; after
     * DTR, so that the first schedule still comes in milliseconds there), so it delays
     * little where none is found */
    int fit_dev = xe_plan_fit_target(in, o), fit_cut = 0;
    if (fit_dev >= 0) { /* DTR's schedule, where it ran, is not every node once (above) */
        /* on big graphs half the limit while DTR has no schedule: this may be the only
         * one (a 1,000-node layered DAG at 60% on one GPU, `--time-limit 1`: DTR thrashes,
         * the order takes 0.3 s, the stage phases find nothing in time) */
        double cap = !big      ? XE_PLAN_FIT_S
                     : dtr.len ? XE_PLAN_FIT_BIG_S
                               : fmin(XE_PLAN_FIT_NODTR_S, fmax(1.0, in->g->n / 1000.0) * XE_PLAN_FIT_NODTR_PER_1K_S);
        double frac = big ? (dtr.len ? 0.25 : 0.5) : 0.1;
        double secs = o->time_limit > 0 ? fmin(cap, frac * o->time_limit) : cap;
        rc = xe_plan_fit_phase(in, o, res, t_start, fit_dev, secs, 0, &dtr, &dtr_cost, &t_dtr, err);
        if (rc < 0) goto out;
        if (rc == 1) { /* in `dtr` now, taken at `out` */
            rc = XE_OK;
            ev_first = "fit-order";
            dtr_ran = 1;
            goto out;
        }
        fit_cut = rc == 2;
        rc = XE_OK;
    }
    if (dtr_ran) {
        /* with it in hand, where the portfolio (about XE_PLAN_PORTFOLIO_PASSES greedy
         * passes at the heuristics' rate of work, xe_heur_pass_seconds) would take longer
         * than the time left, nothing else starts: the stage phases could only overrun
         * the limit (a 10,000-node chain on gpu+cpu: 2.3 s for a 1-s limit, the greedy cut
         * with nothing found; 28 s for 20 s, as cheap as DTR's to 2e-6) */
        double pass_s = xe_heur_pass_seconds(in), left = xe_plan_time_left(o, t_start);
        /* without it, where one greedy pass alone would outlast the time left and the
         * greedy's grace, no stage phase could find a schedule in time either (a
         * 50,000-node DAG with a 10-s limit: the greedy ran 33 s, exit 4) */
        int skip = o->time_limit > 0 && (dtr.len ? XE_PLAN_PORTFOLIO_PASSES * pass_s > left
                                                 : pass_s > left + XE_HEUR_GRACE_S);
        if (skip) {
            if (dtr.len)
                snprintf(res->dtr_skip, sizeof res->dtr_skip,
                         "not run (the portfolio takes about %.2f s, more than the %.2f s left; the dtr schedule in "
                         "hand)", XE_PLAN_PORTFOLIO_PASSES * pass_s, fmax(0.0, left));
            else
                snprintf(res->dtr_skip, sizeof res->dtr_skip,
                         "not run (one greedy pass takes about %.2f s, more than the %.2f s left and its %.0f-s grace)",
                         pass_s, fmax(0.0, left), XE_HEUR_GRACE_S);
            xe_plan_row r = {.method = "greedy", .status = res->dtr_skip, .objective = INFINITY, .bound = NAN,
                             .gap = NAN, .milp_status = -1};
            xe_plan_emit(o, res, &r);
            if (!dtr.len) res->milp_status = XE_MILP_NO_SOLUTION; /* solve: "no schedule found within the time limit" */
            /* the caller's starts still count (xengine sweep's baselines) */
            rc = plan_take_starts(in, o, res, xe_now() - t_start, &best, &best_cost, err);
            goto out;
        }
    }
    double t_h0 = xe_now() - t_start;
    xe_heur_times ht;
    int hrc = xe_heur_best_intr(in, &heur, &which, 1, 0.0, h_deadline, o->interrupt, &ht, &e2);
    double t_heur = xe_now() - t_start;
    res->time_heur = t_heur;
    res->heur_interrupted = hrc == XE_ETIMEOUT; /* Ctrl-C before its first schedule: no later phase starts */
    if (res->heur_interrupted) hrc = XE_EINFEASIBLE;
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
        if (ht.first_cost > best_cost && isfinite(ht.first_at)) xe_plan_trace(res, t_h0 + ht.first_at, ht.first_cost);
    }
    xe_plan_emit_heur(o, res, hrc == XE_OK ? which : "greedy",
                      hrc == XE_OK              ? "valid"
                      : res->heur_interrupted ? "interrupted before a schedule was found"
                                              : "no schedule found",
                      best_cost, t_heur - t_h0); /* its own time, not DTR's and fit-order's before it */
    /* extra starts: the cheapest valid one replaces the portfolio's */
    rc = plan_take_starts(in, o, res, t_heur, &best, &best_cost, err);
    if (rc) goto out;
    if (best) xe_plan_trace(res, res->time_best, best_cost);
    /* training chains: the chain DP's schedule where it is a stage schedule */
    rc = xe_plan_chain_dp_phase(in, o, res, t_start, &dp, &best, &best_cost, err);
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
    /* 5% of the time left, at least min(2 s, a quarter of the limit) (a 10-s limit gave
     * 0.5 s, less than one portfolio on random_layered_n250, so the phase that finds its
     * optimum at 80% was skipped), at most what is left */
    double ro_s = xe_plan_share(o, t_start, XE_PLAN_REORDER_SHARE, XE_PLAN_REORDER_DEFAULT_S, 0.0);
    /* one order's portfolio runs without the diversification: its cost is the graph
     * order's deterministic part (ht.first_at), not the whole call */
    double t_one = hrc == XE_OK && isfinite(ht.first_at) ? ht.first_at : t_heur - t_h0;
    rc = xe_plan_stopped(o) ? 0
                            : xe_plan_reorder_phase(in, o, res, h_deadline, ro_s, t_one, best_cost, &in2, perm,
                                                    &heur2, &which, &aside, err);
    if (rc < 0) goto out;
    if (aside.events.len) { /* the cheapest schedule in hand from now on */
        t_aside = xe_now() - t_start;
        xe_plan_trace(res, t_aside, aside.cost);
    }
    if (rc == 1) xe_plan_adopt_order(in2, &heur2, which, t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
    rc = XE_OK;
    anneal_s = xe_plan_anneal_share(in, o, res, best || aside.events.len);
    if (anneal_s > 0 && o->time_limit > 0) {
        phases = *o;
        phases.time_limit = o->time_limit - anneal_s;
        o = &phases;
    }

    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
    }
    /* 1a. one device and no start: the exact search over all schedules (docs/pebble.md),
     * for a tenth of the time left (of its default without a limit in heuristic mode;
     * where it finds a schedule it mostly takes milliseconds, so a larger share would only
     * lengthen the failures; random_layered_n250 at 60% takes 1.2-1.5 s); at least
     * min(2 s, a quarter of the limit) even once the limit has passed, since nothing is
     * in hand (before 2026-12-01 at most what was left: 0.01 s after a failing portfolio
     * had used up a 1-s limit, and no schedule), at most what is left otherwise */
    if (!best && !o->no_pebbling && in->ndev == 1 && !xe_plan_stopped(o)) {
        double least = o->time_limit > 0 ? fmin(XE_PLAN_PEBBLE_MIN_S, 0.25 * o->time_limit) : XE_PLAN_PEBBLE_MIN_S;
        double lim = xe_plan_share(o, t_start, XE_PLAN_PEBBLE_SHARE, XE_PLAN_PEBBLE_DEFAULT_S, least);
        int a = xe_plan_pebble_phase(in, o, res, lim, t_start, &lb_any, &t_events, err);
        if (a < 0) {
            rc = a;
            goto out;
        }
        if (a == XE_PEBBLE_NO) goto out; /* nothing fits: no phase below can help */
    } else if (best && !o->no_pebbling && in->ndev == 1 && !o->feasibility && o->mode != XE_PLAN_MILP &&
               xe_plan_order_far(res) &&
               !(xe_plan_rel_gap(best_cost, fmin(lb, lb_index)) <= o->rel_gap)) {
        /* 1a'. a stage schedule in hand, not proven, on a graph whose file order is far
         * from its best (a much lower-peak order exists): the exact search as a
         * competitor, its candidates restaged and improved (docs/reorder.md,
         * "Restaging"): on random_layered_n100 at 70% 48.793 s against the stage
         * schedules' 50.517 s. A tenth of the time left, no floor (the refinements can
         * double it); not started below XE_PLAN_MIN_PHASE */
        double lim = o->time_limit > 0 ? XE_PLAN_PEBBLE_SHARE * xe_plan_time_left(o, t_start) : XE_PLAN_PEBBLE_DEFAULT_S;
        if (lim >= XE_PLAN_MIN_PHASE && !xe_plan_stopped(o)) {
            int a = xe_plan_pebble_phase(in, o, res, lim, t_start, &lb_any, &t_events, err);
            if (a < 0) {
                rc = a;
                goto out;
            }
        }
    }

    /* 1f. the fit-order phase was cut (not proven empty) and the schedule in hand is not
     * within the gap of every node once: with a schedule in hand, the annealing over
     * orders again, longer (plan_int.h, XE_PLAN_FIT_LATE_S), its share taken of the
     * whole limit's time left, the anneal's kept-back part included (an order found is
     * optimal, and ends the solve; with the phases' limit alone, half of it since the
     * reach windows, the 400-node DAG of tests/cli/solve_methods.sh at 65% got 0.21 s of
     * a 30-s solve under ASan and no order) */
    if (fit_cut && !xe_plan_stopped(o)) {
        double have = fmin(best_cost, res->events.len ? res->events_objective : INFINITY);
        double secs = o->time_limit > 0
                          ? fmin(XE_PLAN_FIT_LATE_S, XE_PLAN_FIT_LATE_FRAC * xe_plan_time_left(oall, t_start))
                          : XE_PLAN_FIT_LATE_S;
        if (xe_plan_rel_gap(have, xe_bound_cheapest(in)) > o->rel_gap && secs >= XE_PLAN_FIT_LATE_MIN_S) {
            rc = xe_plan_fit_phase(in, o, res, t_start, fit_dev, secs, 1, &dtr, &dtr_cost, &t_dtr, err);
            if (rc < 0) goto out;
            if (rc == 1) {
                rc = XE_OK;
                ev_first = "fit-order";
                dtr_ran = 1;
                goto out;
            }
            rc = XE_OK;
        }
    }
    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
    }
    /* 1b. the portfolio's randomised greedy restarts where its greedy found nothing (no
     * stage schedule, or only recompute-all's): up to XE_PORTFOLIO_RANDOM_S, at most a
     * quarter of the limit, half in heuristic mode; the cheaper schedule stays */
    int restarts = cur == in && (hrc != XE_OK || !strcmp(which, "recompute-all")) && (!best || best == &heur);
    if (restarts && xe_plan_passed(o, t_start)) {
        xe_plan_emit_not_run(o, res, "greedy-random", NAN, NAN);
    } else if (restarts) {
        double rand_share = o->mode == XE_PLAN_HEURISTIC ? 0.5 : 0.25;
        double rand_s = o->time_limit > 0 ? fmin(XE_PORTFOLIO_RANDOM_S, rand_share * o->time_limit)
                                          : XE_PORTFOLIO_RANDOM_S;
        double tr0 = xe_now(), cc = INFINITY, c2 = INFINITY;
        double r_deadline = o->time_limit > 0 ? t_start + o->time_limit : INFINITY; /* the phases' limit */
        int replaced = 0;
        if (in2) { /* neither order's portfolio found one: the low-peak order's restarts
                    * first, for a quarter of that time (docs/reorder.md) */
            double none = INFINITY;
            int r2 = xe_heur_restarts_within(in2, 0.25 * rand_s, r_deadline, &heur2, &none, NULL, &c2, NULL, &e2);
            if (r2 != XE_OK && r2 != XE_EINFEASIBLE) {
                rc = xe_err_set(err, r2, "heuristic failed in the low-peak order: %s", e2.msg);
                goto out;
            }
        }
        /* their work as always, but none started past the limit: on a loaded machine 0.75 s
         * of work took 1.62 s, and a 3-s solve 3.74 s (a new user's trial, 2026-12-05) */
        int rrc = xe_heur_restarts_within(in, rand_s, r_deadline, &heur, &best_cost, NULL, &cc, &replaced, &e2);
        if (rrc != XE_OK && rrc != XE_EINFEASIBLE) {
            rc = xe_err_set(err, rrc, "heuristic failed: %s", e2.msg);
            goto out;
        }
        if (isfinite(c2) && !(best_cost <= c2 * (1 + xe_plan_reorder_margin(o)))) { /* the low-peak order's */
            rrc = xe_heur_improve(in2, &heur2, xe_heur_improve_seconds(in2), &e2);
            if (rrc) {
                rc = xe_err_set(err, rrc, "heuristic failed: %s", e2.msg);
                goto out;
            }
            xe_plan_adopt_order(in2, &heur2, "greedy-random", t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
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
            xe_plan_trace(res, res->time_best, best_cost);
        }
        double t_random = xe_now() - tr0;
        xe_plan_emit_heur(o, res, "greedy-random",
                  rrc == XE_OK ? (cur != in ? "valid (low-peak order)" : "valid") : "no schedule found", cc, t_random);
        res->time_heur += t_random;
    }
    /* 1d. no stage schedule in either order, not even from the restarts: further
     * low-peak orders (docs/reorder.md) */
    if (!best && in2 && !o->feasibility && xe_plan_passed(o, t_start)) {
        xe_plan_emit_not_run(o, res, "orders", NAN, NAN);
    } else if (!best && in2 && !o->feasibility) {
        double lim = xe_plan_share(o, t_start, XE_PLAN_PEBBLE_SHARE, XE_PLAN_MORE_ORDERS_DEFAULT_S, 0.01);
        rc = xe_plan_more_orders(in, o, res, lim, &in2, perm, &heur2, &which, err);
        if (rc < 0) goto out;
        if (rc == 1) xe_plan_adopt_order(in2, &heur2, which, t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
        rc = XE_OK;
    }
    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
    }
    /* 1p. the exact search's schedule in hand and no stage schedule as cheap: restaged
     * into stages, improved locally, and in auto and lns improved by LNS for half the
     * time left (docs/reorder.md, "Restaging"); budget descent and the MILP, which look
     * for a stage schedule of the graph's order, or LNS on the one in hand, share the
     * rest */
    if (res->events.len && (!best || res->events_objective < best_cost) && in->ndev == 1 && !o->feasibility) {
        if (xe_plan_passed(o, t_start)) {
            xe_plan_emit_not_run(o, res, "restaged", NAN, NAN);
        } else {
            /* without a time limit: the improvement's most, no LNS (as LNS itself) */
            double left = o->time_limit > 0 ? xe_plan_time_left(o, t_start) : INFINITY;
            double imp_s = fmin(XE_PLAN_RESTAGE_IMPROVE_MAX_S, XE_PLAN_RESTAGE_IMPROVE_SHARE * left);
            double lns_s = (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS) && isfinite(left)
                               ? XE_PLAN_RESTAGE_SHARE * (left - imp_s)
                               : 0.0;
            rc = xe_plan_restage_phase(in, o, res, &bsearch, imp_s, lns_s, t_start, lb_any, &t_events, &ev_name, err);
            if (rc) goto out;
        }
    }
    if (o->mode == XE_PLAN_HEURISTIC || (o->feasibility && (best || res->events.len))) goto out;

    /* 1c. budget descent when no start fits (auto, lns; docs/lns.md "Budget descent"):
     * up to 60% of the time; the phases below share what it leaves */
    int descent = !best && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS);
    if (descent && xe_plan_passed(o, t_start)) {
        xe_plan_emit_not_run(o, res, "descent", NAN, NAN);
    } else if (descent) {
        if (o->phase) o->phase(o->ctx, "descent");
        double td0 = xe_now();
        xe_plan_row dr = {.method = "descent", .objective = INFINITY, .bound = NAN, .gap = NAN, .milp_status = -1};
        xe_descent_opts dopt;
        xe_descent_opts_default(&dopt);
        dopt.time_limit = fmax(1e-3, 0.6 * xe_plan_time_left(o, t_start));
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
            xe_plan_adopt_order(in2, &dres.sol, "descent", t_start, res, &cur, &best, &best_cost, &lb, &lb_index);
            dr.objective = best_cost;
            dr.status = "fits the budgets (low-peak order)";
        } else if (drc == XE_OK) {
            best = &dres.sol;
            best_cost = dres.objective;
            res->name = "descent";
            res->time_best = xe_now() - t_start;
            xe_plan_trace(res, res->time_best, best_cost);
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
        xe_plan_emit(o, res, &dr);
        if (dres.proven) { /* the whole model, solved: no MILP needed */
            res->infeasible = 1;
            res->milp_status = XE_MILP_INFEASIBLE;
            rc = XE_OK;
            goto out;
        }
    }

    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
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
    double lp_limit = xe_milp_limit_within(XE_PLAN_LP_SHARE * xe_plan_time_left(o, t_start));
    if (best && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS) && !xe_plan_stopped(o) &&
        !(xe_plan_rel_gap(best_cost, fmin(lb, lb_index)) <= o->rel_gap) && nbin <= XE_PLAN_LP_MAX_BINARIES &&
        lp_limit >= XE_PLAN_LP_MIN_S) {
        if (o->phase) o->phase(o->ctx, "lp-bound");
        double t_lp0 = xe_now(), lp = -INFINITY, lpi = -INFINITY;
        int why = LP_SOLVED, whyi = LP_SOLVED;
        rc = xe_plan_lp_bound(cur, nbin, o, lp_limit, &lp, &why, err);
        double lim_i = xe_milp_limit_within(XE_PLAN_LP_SHARE * xe_plan_time_left(o, t_start));
        if (rc == XE_OK && cur != in && xe_plan_stopped(o)) whyi = LP_INTERRUPTED;
        else if (rc == XE_OK && cur != in && lim_i >= XE_PLAN_LP_MIN_S)
            rc = xe_plan_lp_bound(in, xe_milp_binary_estimate(in), o, lim_i, &lpi, &whyi, err);
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
                     xe_plan_lp_words(w1, sizeof w1, lp, why));
        else
            snprintf(res->lp_status, sizeof res->lp_status, "LP relaxation, low-peak order: %s; graph order: %s",
                     xe_plan_lp_words(w1, sizeof w1, lp, why), xe_plan_lp_words(w2, sizeof w2, lpi, whyi));
        int any = why == LP_SOLVED || (cur != in && whyi == LP_SOLVED);
        xe_plan_row lr = {.method = "lp-bound",
                          .status = res->lp_status,
                          .objective = INFINITY,
                          .bound = any ? ub : NAN,
                          .gap = any ? xe_plan_rel_gap(best_cost, ub) : NAN,
                          .time = xe_now() - t_lp0,
                          .milp_status = -1};
        xe_plan_emit(o, res, &lr);
        lp_proof = any && isfinite(lr.gap) && lr.gap <= o->rel_gap;
        if (lp_proof) {
            skip_milp = 1;
            res->milp_status = XE_MILP_OPTIMAL;
        }
    }

    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
    }
    /* 2. LNS (auto: 60% of the time left, lns: all of it; docs/lns.md); not started when
     * the time limit has passed (on graphs of thousands of nodes the portfolio can take it
     * all, and LNS's set-up alone, its bounds, takes 0.1-0.2 s there) */
    int lns_mode = best && !lp_proof && !o->feasibility && (o->mode == XE_PLAN_AUTO || o->mode == XE_PLAN_LNS);
    /* nor where its set-up (the start's check and copy, the reachability matrix: about
     * XE_PLAN_LNS_SETUP_PASSES greedy passes of work) would outlast the time left (a
     * 10,000-node chain on gpu+cpu, 60-s limit: the portfolio used 59.3 s, then LNS took
     * 6.5 s with 0.6 s left, the solve 67.9 s) */
    double lns_setup = XE_PLAN_LNS_SETUP_PASSES * xe_heur_pass_seconds(cur);
    if (lns_mode && o->time_limit > 0 && xe_plan_time_left(o, t_start) < fmax(XE_PLAN_MIN_PHASE, lns_setup)) {
        /* the stage bound known so far; no gap, as the row has no schedule of its own (until
         * 2026-12-05 the stage schedule's gap to it, which a new user read as the result's
         * where an event list in hand was cheaper; the result line gives that one) */
        xe_plan_emit_not_run(o, res, "lns", fmin(lb, lb_index), NAN);
        /* a model too large for CBC's root LP (where LNS would have had all the time): the
         * whole MILP could not even be built in what is left (a 10,000-node chain on
         * gpu+cpu: killed after 5.4 s with nothing) */
        if (o->mode == XE_PLAN_AUTO && nbin > XE_PLAN_MILP_MAX_BINARIES) {
            skip_milp = 1;
            res->milp_status = XE_MILP_FEASIBLE;
        }
    } else if (lns_mode) {
        /* auto on a model too large for CBC's root LP: LNS gets all the time */
        int all = o->mode == XE_PLAN_LNS || nbin > XE_PLAN_MILP_MAX_BINARIES;
        xe_lns_opts lo;
        xe_lns_opts_default(&lo);
        lo.time_limit = fmax(1e-3, (all ? 1.0 : 0.6) * xe_plan_time_left(o, t_start));
        lo.rel_gap = o->rel_gap;
        lo.bound = lb;
        /* the search bound holds for every schedule, so for the stage class: once its
         * thread has ended, LNS stops where it proves the incumbent (before 2026-12-05 it
         * ran its share out: U-Net one GPU at 70%, proven after 1.1 s, solve over at 6.2 s) */
        lo.bound_fn = xe_plan_bound_fn;
        lo.beaten_fn = xe_plan_reach_beats;
        lo.bound_ctx = &bsearch;
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
        double lgap = xe_plan_rel_gap(lns.objective, llb);
        xe_plan_row lr = {.method = "lns",
                          .status = lns.stop,
                          .objective = lns.objective,
                          .bound = fmin(llb, lb_index), /* the union's bound once reordered */
                          .gap = xe_plan_rel_gap(lns.objective, fmin(llb, lb_index)),
                          .time = lns.time_total,
                          .milp_status = -1};
        if (lns.stop && !strcmp(lns.stop, "solver failed")) {
            snprintf(res->lns_error, sizeof res->lns_error, "CBC failed on %d neighbourhoods in a row: %s",
                     XE_LNS_MAX_FAILURES, lns.failure);
            lr.error = res->lns_error;
            lr.kept = res->name;
        }
        xe_plan_emit(o, res, &lr);
        /* LNS proved its schedule within the gap ("bound reached", "optimal"): no MILP */
        if (lns.optimal || lgap <= o->rel_gap) all = 1;
        if (lns.objective < best_cost) {
            best = &lns.sol;
            best_cost = lns.objective;
            res->name = "lns";
            res->time_best = t_lns0 + lns.time_best;
            for (int k = 1; k < lns.ntrace; k++) /* entry 0 is LNS's start, traced already */
                xe_plan_trace(res, t_lns0 + lns.trace_t[k], lns.trace_obj[k]);
        }
        lb = llb;
        if (all) {
            skip_milp = 1;
            res->milp_status = lns.optimal || lgap <= o->rel_gap ? XE_MILP_OPTIMAL : XE_MILP_FEASIBLE;
        }
    }

    /* the search bound, if it has ended, proves the schedule in hand or gives an optimal one */
    rc = plan_search_check(in, o, res, t_start, &bsearch, &in2, perm, &heur2, &cur, &best, &best_cost, &lb, &lb_index,
                           &aside, err);
    if (rc != 0) { /* 1: nothing can beat the schedule in hand; negative: an error */
        if (rc == 1) rc = XE_OK;
        goto out;
    }
    /* a start the stage bounds already prove within the gap needs no MILP: the MILP
     * searches the same class (`--method milp` ran CBC its whole limit on such starts
     * until 2026-12-05: FCN-8 on gpu+cpu at 70%, the greedy's gap 8.5e-12, 20 s with a
     * 20-s limit; auto and lns stop there, LNS with "bound reached"); with no_start the
     * caller asked for the MILP from nothing, which runs */
    double start_gap = xe_plan_rel_gap(best_cost, fmin(lb, lb_index)); /* the union's bound once reordered */
    if (!skip_milp && best && !o->no_start && start_gap <= o->rel_gap) {
        if (o->phase) o->phase(o->ctx, "milp"); /* its row, like every phase's, after its callback */
        xe_plan_row mr0 = {.method = "milp",
                           .status = "not run (the schedule in hand is proven within --gap by the bound)",
                           .objective = INFINITY,
                           .bound = fmin(lb, lb_index),
                           .gap = start_gap,
                           .milp_status = -1};
        xe_plan_emit(o, res, &mr0);
        res->milp_status = XE_MILP_OPTIMAL;
        skip_milp = 1;
    }
    /* 3. the whole MILP: milp, auto after LNS, and any mode without a start schedule;
     * not started when the time limit has (nearly) passed */
    double milp_limit = xe_milp_limit_within(xe_plan_time_left(o, t_start)); /* its process ends in time */
    if (!skip_milp && milp_limit < XE_PLAN_MIN_PHASE) {
        xe_plan_emit_not_run(o, res, "milp", NAN, NAN);
        res->milp_status = best ? XE_MILP_FEASIBLE : XE_MILP_NO_SOLUTION;
        res->milp_killed = 0;
        skip_milp = 1;
    }
    if (!skip_milp) {
        double t_m0;
        rc = xe_plan_milp_phase(cur, o, res, "milp", best, milp_limit, t_start, lb_index, &mr, &t_m0, err);
        if (rc) goto out;
        xe_plan_take_milp(res, &mr, "milp", t_m0, &best, &best_cost);
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
        res->search_order = 0;
        res->name = ev_name;
        res->objective = res->events_objective;
        res->bound = fmin(lb_any, res->objective); /* the stage bounds do not hold here */
        res->gap = xe_plan_rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
        res->time_best = t_events;
        res->infeasible = 0; /* a stage-class proof does not cover this schedule */
    } else if (rc == XE_OK && res->sol.R && cur != in) {
        /* planned in the low-peak order: an event list in in's node ids (docs/reorder.md) */
        rc = xe_stages_to_schedule(cur, &res->sol, &res->events, err);
        xe_stages_clear(&res->sol);
        if (rc == XE_OK) {
            xe_schedule_unpermute(&res->events, perm);
            xe_plan_set_reordered(res, o, sc, fmin(lb, lb_index)); /* over both orders' stage schedules */
        } else {
            xe_schedule_clear(&res->events);
        }
    } else if (rc == XE_OK && res->sol.R) {
        res->objective = sc;
        res->bound = fmin(lb, res->objective);
        res->gap = xe_plan_rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    } else if (rc == XE_OK) {
        res->name = "none";
        res->bound = lb;
    }
    /* the low-peak order's schedule kept aside, when nothing later beat it: the bound then
     * covers that order's stage schedules too */
    if (rc == XE_OK && aside.events.len && aside.cost < res->objective * (1 - 1e-12)) {
        xe_stages_clear(&res->sol);
        xe_schedule_clear(&res->events);
        res->events = aside.events;
        memset(&aside.events, 0, sizeof aside.events);
        res->name = aside.which;
        res->search_order = 0; /* the aside schedule is a low-peak order's */
        res->peak_order = aside.peak;
        res->time_best = t_aside;
        xe_plan_set_reordered(res, o, aside.cost, fmin(fmin(lb, lb_index), aside.bound));
    }
    xe_schedule_clear(&aside.events);
    /* the DTR schedule where nothing found later is cheaper; where no phase found any
     * schedule (and none is proven impossible), DTR now, as a last resort, on any graph */
    if (rc == XE_OK && !oall->no_dtr && !dtr_ran && !isfinite(res->objective) && !res->events.len &&
        !res->infeasible_any && !xe_plan_stopped(oall)) {
        double left = oall->time_limit > 0 ? xe_plan_time_left(oall, t_start) : XE_PLAN_DTR_S;
        rc = xe_plan_dtr_phase(in, oall, res, t_start, fmin(XE_PLAN_DTR_S, fmax(0.1, left)), &dtr, &dtr_cost, &t_dtr,
                               err);
    }
    if (rc == XE_OK && dtr.len && !(dtr_cost >= res->objective * (1 - 1e-12)))
        xe_plan_take_dtr(res, &dtr, dtr_cost, t_dtr, ev_first); /* its bound: the bounds over every schedule below */
    xe_schedule_clear(&dtr);
    /* the search bound's path, where its thread ended after the last phase boundary
     * without drops: every node once in its order, optimal (then no anneal) */
    /* the reach bound's path where it is cheaper than the result: optimal (docs/lns.md,
     * "Bounds" 7) */
    if (rc == XE_OK) {
        int r = xe_plan_reach_take(oall, res, t_start, &bsearch, res->objective, 1, err);
        if (r < 0) rc = r;
    }
    if (rc == XE_OK) {
        int late = xe_plan_search_late(in, oall, res, t_start, &bsearch, err);
        if (late < 0) rc = late;
    }
    /* 4. the event-list local search (docs/anneal.md) for the time kept back and what
     * the phases left, against the bound over every schedule known now (the search
     * bound's where it has ended) */
    if (rc == XE_OK && anneal_s > 0) {
        double secs = oall->time_limit > 0 ? xe_plan_time_left(oall, t_start) : anneal_s;
        double known = fmax(fmax(xe_bound_cheapest(in), lb_any), xe_plan_bound_ended(&bsearch));
        rc = xe_plan_anneal_phase(in, oall, res, t_start, secs, known, err);
    }
    o = oall;
    /* and once more: its thread may have ended while the anneal ran */
    if (rc == XE_OK) {
        int r = xe_plan_reach_take(oall, res, t_start, &bsearch, res->objective, 1, err);
        if (r < 0) rc = r;
    }
    if (rc == XE_OK) {
        int late = xe_plan_search_late(in, oall, res, t_start, &bsearch, err);
        if (late < 0) rc = late;
    }
    /* the search bound holds for every schedule, so for the class each branch above
     * bounds: it raises the result's bound wherever higher */
    double sb = xe_plan_bound_finish(&bsearch, o, res);
    if (rc == XE_OK && sb > res->bound) {
        res->bound = fmin(sb, res->objective);
        res->gap = xe_plan_rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    }
    /* the bound of every event list of PROBLEM.md, whatever class the schedule is in:
     * the stage bounds above (eviction, LP, the MILP's) hold for stage schedules only,
     * and a schedule outside the class can beat them (docs/lns.md, "Bounds") */
    double any = fmax(fmax(xe_bound_cheapest(in), lb_any), sb);
    res->bound_any = isfinite(res->objective) ? fmin(any, res->objective) : any;
    if (rc == XE_OK && res->bound_any > res->bound) { /* it bounds stage schedules too */
        res->bound = res->bound_any;
        res->gap = xe_plan_rel_gap(res->objective, res->bound);
        res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    }
    res->time_total = xe_now() - t_start;
    xe_stages_clear(&heur);
    xe_lns_result_clear(&lns);
    xe_milp_result_clear(&mr);
    xe_stages_clear(&dres.sol);
    xe_stages_clear(&dp);
    xe_stages_clear(&heur2);
    xe_schedule_clear(&dtr);
    xe_instance_free(in2);
    free(perm);
    return rc;
}
