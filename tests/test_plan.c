/* xe_plan, the solve strategy (include/xengine/plan.h, docs/lns.md "Strategy of `xengine
 * solve --method`"), against the brute-force stage optimum on tiny random instances:
 *   - auto returns a valid schedule whose cost is >= the optimum and whose bound is <= it,
 *     and with a generous time limit it proves the optimum (cost equal to it);
 *   - milp mode proves it too and names the MILP's schedule ("milp", also on a tie);
 *   - heuristic mode returns exactly the portfolio's schedule cost (xe_heur_best);
 *   - an infeasible budget never gives a schedule; the exact one-device search proves it
 *     in every mode, the MILP without it;
 *   - an extra start is used only when valid and cheaper, under its own name;
 *   - the row callback sees heuristic, lns, milp rows in order, as res->rows. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/solvers/rng.h"
#include "brute/brute.h"
#include "support/randinst.h"
#include "support/valid.h"
#include "xengine/baselines.h"
#include "xengine/milp.h"
#include "xengine/plan.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"

static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1.0, fabs(b)); }

/* Index of the last row of `method` in r, -1 when none. */
static int row_of(const xe_plan_result *r, const char *method)
{
    int at = -1;
    for (int k = 0; k < r->nrows; k++)
        if (!strcmp(r->rows[k].method, method)) at = k;
    return at;
}

/* Instance of seed k: 4-6 nodes, 1-2 devices, copy costs on every third. */
static xe_instance *inst(uint64_t seed)
{
    int ndev = 1 + (int)(seed % 2), n = 4 + (int)(seed % 3);
    xe_instance *in = xe_test_random_instance(seed, n, ndev, (int)(seed % 3 == 0));
    assert_non_null(in);
    return in;
}

/* auto and milp with a generous limit on 4-6-node instances: every feasible instance is
 * solved to the brute-force optimum (within 1e-9 relative) and proven (optimal flag,
 * bound <= optimum); every infeasible one gives no schedule. */
static void test_auto_and_milp_prove_optimum(void **state)
{
    (void)state;
    int feasible = 0, infeasible = 0, by_milp = 0, kept = 0, proven = 0, cbc_ran = 0;
    for (uint64_t seed = 1; seed <= 36; seed++) {
        xe_instance *in = inst(seed);
        xe_err err;
        double opt = INFINITY;
        int brc = xe_bf_stage_solve(in, &opt, NULL, &err);
        assert_true(brc == XE_OK || brc == XE_EINFEASIBLE);
        /* auto, milp, and milp without a start (pass 2: the MILP from nothing) */
        for (int pass = 0; pass < 3; pass++) {
            int mode = pass == 0 ? XE_PLAN_AUTO : XE_PLAN_MILP;
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.no_start = pass == 2;
            o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
            o.no_chain_dp = 1; /* rows as asserted below; the DP: test_chain_dp_in_plan */
            o.no_bound_search = 1; /* likewise; the search bound: test_search_bound_in_plan */
            o.mode = mode;
            o.time_limit = 60; /* a guard, not a target: each solve takes well under a second */
            o.rel_gap = 1e-9;
            xe_plan_result r;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            xe_schedule ev;
            xe_schedule_init(&ev);
            int src = xe_plan_result_schedule(in, &r, &ev, &err);
            if (brc == XE_EINFEASIBLE) {
                assert_null(r.sol.R);
                assert_string_equal(r.name, "none");
                assert_true(isinf(r.objective));
                assert_int_equal(src, XE_EINFEASIBLE); /* no schedule to hand out */
                assert_int_equal(ev.len, 0);
                infeasible++;
            } else {
                assert_non_null(r.sol.R);
                xe_test_assert_stages_valid(in, &r.sol);
                if (!close_rel(r.objective, opt, 1e-9))
                    print_error("seed %llu mode %s: %.12g, brute force %.12g (%s)\n", (unsigned long long)seed,
                                xe_plan_mode_name(mode), r.objective, opt, r.name);
                assert_true(close_rel(r.objective, opt, 1e-9));
                assert_true(close_rel(xe_stages_cost(in, &r.sol), r.objective, 1e-12));
                /* the schedule as events: the simulator's time is the objective */
                assert_int_equal(src, XE_OK);
                xe_sim_result sr;
                assert_int_equal(xe_sim_run(in, &ev, &sr, &err), XE_OK);
                assert_true(close_rel(sr.total_time, r.objective, 1e-9));
                assert_true(r.bound <= opt * (1 + 1e-9) + 1e-12);
                assert_true(r.bound >= opt * (1 - 1e-8)); /* proven */
                assert_int_equal(r.optimal, 1);
                assert_int_equal(r.milp_status, XE_MILP_OPTIMAL);
                assert_int_equal(r.infeasible, 0);
                assert_true(r.time_best <= r.time_total + 1e-9);
                if (mode == XE_PLAN_MILP) {
                    /* the MILP returns a schedule no worse than its start: solve names it,
                     * unless it is the start unchanged, which keeps the start's name; where
                     * the stage bounds already prove the start within the gap, CBC is not
                     * run (with a start: not from nothing) */
                    assert_int_equal(r.nrows, 2);
                    assert_string_equal(r.rows[1].method, "milp");
                    int not_run = !strncmp(r.rows[1].status, "not run", 7);
                    if (not_run) {
                        assert_int_equal(o.no_start, 0);
                        assert_true(r.rows[0].objective - r.rows[1].bound <= o.rel_gap * r.rows[0].objective);
                        assert_string_equal(r.name, r.rows[0].method);
                        proven++;
                    } else {
                        cbc_ran++;
                    }
                    if (strcmp(r.name, "milp") != 0) {
                        assert_string_equal(r.name, r.rows[0].method);
                        assert_true(r.objective == r.rows[0].objective);
                        kept++;
                    }
                    by_milp++;
                }
                feasible++;
            }
            xe_schedule_clear(&ev);
            xe_plan_result_clear(&r);
        }
        xe_instance_free(in);
    }
    /* both kinds occurred (randinst draws infeasible budgets one time in eight) */
    assert_true(feasible >= 40);
    assert_true(infeasible >= 2);
    assert_true(by_milp >= 20);
    /* both occur: the MILP's own schedule, and its start returned unchanged */
    print_message("milp mode: %d schedules, %d of them the start unchanged; CBC not run on %d (the start proven), "
                  "run on %d\n", by_milp, kept, proven, cbc_ran);
    assert_true(kept >= 1 && kept < by_milp);
    assert_true(proven >= 1 && cbc_ran >= 20);
}

/* A short limit on 7-node (2 devices) and 8-node (1 device) instances: whatever is
 * proven or not, the schedule is valid, its cost >= the optimum, the bound <= it. */
static void test_auto_short_limit_bounds(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t seed = 100; seed < 108; seed++) {
        int ndev = 1 + (int)(seed % 2), n = ndev == 1 ? 8 : 7;
        xe_instance *in = xe_test_random_instance(seed, n, ndev, (int)(seed % 2));
        assert_non_null(in);
        xe_err err;
        double opt;
        int brc = xe_bf_stage_solve(in, &opt, NULL, &err);
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
        o.time_limit = 0.3;
        xe_plan_result r;
        assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
        if (brc == XE_OK) {
            assert_non_null(r.sol.R);
            xe_test_assert_stages_valid(in, &r.sol);
            assert_true(r.objective >= opt * (1 - 1e-9));
            assert_true(r.bound <= opt * (1 + 1e-9) + 1e-12);
            assert_true(r.bound <= r.objective);
            assert_true(r.nrows >= 2); /* heuristic, then lns and/or milp */
            checked++;
        } else {
            assert_int_equal(brc, XE_EINFEASIBLE);
            assert_null(r.sol.R);
        }
        xe_plan_result_clear(&r);
        xe_instance_free(in);
    }
    assert_true(checked >= 5);
}

/* Short limits are kept: on a 40-node instance whose whole MILP CBC cannot solve in
 * them, auto, lns and milp end within the limit (plus 0.15 s for what follows the
 * last phase: copying the schedule, the final cost), or within the portfolio's own time
 * when that alone is longer (it is not interruptible); the schedule is valid. */
static void test_short_limits_kept(void **state)
{
    (void)state;
    xe_instance *in = xe_test_random_instance(7, 40, 1, 0);
    assert_non_null(in);
    in->dev[0].budget = xe_graph_total_mem(in->g) / 3;
    xe_err err;
    xe_stages st;
    int rc = xe_heur_best(in, &st, NULL, &err);
    while (rc == XE_EINFEASIBLE) {
        in->dev[0].budget += in->dev[0].budget / 10;
        rc = xe_heur_best(in, &st, NULL, &err);
    }
    assert_int_equal(rc, XE_OK);
    xe_stages_clear(&st);
    const double limits[] = {0.1, 0.4};
    const xe_plan_mode modes[] = {XE_PLAN_AUTO, XE_PLAN_LNS, XE_PLAN_MILP};
    for (int l = 0; l < 2; l++)
        for (int m = 0; m < 3; m++) {
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
            o.time_limit = limits[l];
            o.mode = modes[m];
            xe_plan_result r;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            if (r.time_total > fmax(o.time_limit, r.time_heur) + 0.15)
                print_error("mode %s, limit %g s: %.3f s (portfolio %.3f s)\n", xe_plan_mode_name(modes[m]), o.time_limit,
                            r.time_total, r.time_heur);
            assert_true(r.time_total <= fmax(o.time_limit, r.time_heur) + 0.15);
            assert_non_null(r.sol.R);
            xe_test_assert_stages_valid(in, &r.sol);
            xe_plan_result_clear(&r);
        }
    xe_instance_free(in);
}

/* Heuristic mode: exactly the portfolio's schedule and cost, one row, no exact phase;
 * bound = min(xe_bound_stage, cost). Where the portfolio (greedy, checkpoint-all,
 * recompute-all, randomised restarts) finds nothing: its row, then on one device the
 * exact search's (docs/pebble.md), whose schedule replays in the simulator or whose "no
 * schedule fits" the event brute force confirms, then the restarts' row. */
static void test_heuristic_mode_is_portfolio(void **state)
{
    (void)state;
    int found = 0, pebbled = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        xe_instance *in = inst(seed);
        xe_err err;
        xe_stages h;
        const char *which = NULL;
        int hrc = xe_heur_best(in, &h, &which, &err);
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
        o.no_chain_dp = 1; /* the portfolio alone; the DP: test_chain_dp_in_plan */
        o.mode = XE_PLAN_HEURISTIC;
        xe_plan_result r;
        assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
        assert_int_equal(r.milp_status, -1);
        if (hrc == XE_OK && strcmp(which, "greedy-random") != 0) {
            assert_int_equal(r.nrows, 1);
            assert_non_null(r.sol.R);
            double c = xe_stages_cost(in, &h);
            assert_true(close_rel(r.objective, c, 1e-12));
            assert_string_equal(r.name, which);
            assert_string_equal(r.rows[0].method, which);
            assert_string_equal(r.rows[0].status, "valid");
            assert_true(close_rel(r.rows[0].objective, c, 1e-12));
            assert_true(close_rel(r.bound, fmin(xe_bound_stage(in), c), 1e-12));
            found++;
        } else {
            assert_string_equal(r.rows[0].status, "no schedule found");
            int k = 1;
            if (in->ndev == 1) {
                assert_string_equal(r.rows[k].method, "pebbling");
                double ev = 0;
                int erc = xe_bf_event_solve(in, &ev, NULL, &err);
                if (r.infeasible_any) {
                    assert_int_equal(erc, XE_EINFEASIBLE);
                    assert_int_equal(r.nrows, 2); /* nothing can fit: no restarts */
                } else {
                    assert_int_equal(erc, XE_OK);
                    assert_true(r.events.len > 0 || r.sol.R); /* a stage schedule may win */
                    if (r.events.len) { /* the pebbling schedule replays, at its cost, no cheaper than
                                           the event-list optimum */
                        xe_sim_result sr;
                        assert_int_equal(xe_sim_run(in, &r.events, &sr, &err), XE_OK);
                        assert_true(fabs(sr.total_time - r.objective) <= 1e-9 * fmax(1.0, r.objective));
                        assert_true(r.objective >= ev - 1e-9);
                    }
                    pebbled++;
                }
                k++;
            }
            if (!r.infeasible_any) assert_string_equal(r.rows[k].method, "greedy-random");
        }
        if (hrc == XE_OK) xe_stages_clear(&h);
        xe_plan_result_clear(&r);
        xe_instance_free(in);
    }
    printf("heuristic mode: the portfolio's schedule on %d of 24 instances, pebbling's on %d\n", found, pebbled);
    assert_true(found >= 15);
}

/* Infeasible budgets: a single device below the largest footprint (mem of a node plus
 * its inputs) in every mode gives no schedule. The exact search proves it in every mode
 * (infeasible_any, a blocker node); without it (no_pebbling) auto, lns and milp prove it
 * with the MILP and heuristic mode proves nothing. */
static void test_infeasible_budget(void **state)
{
    (void)state;
    int proven = 0, proven_any = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 5, 1, 0);
        assert_non_null(in);
        int64_t lo = 0;
        xe_err err;
        assert_int_equal(xe_budget_range(in, 0, &lo, NULL, &err), XE_OK);
        assert_true(lo > 1);
        in->dev[0].budget = lo - 1;
        double opt;
        assert_int_equal(xe_bf_stage_solve(in, &opt, NULL, &err), XE_EINFEASIBLE);
        for (int nopeb = 0; nopeb <= 1; nopeb++)
            for (int mode = XE_PLAN_AUTO; mode <= XE_PLAN_HEURISTIC; mode++) {
                xe_plan_opts o;
                xe_plan_opts_default(&o);
                o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
                o.mode = mode;
                o.time_limit = 20;
                o.no_pebbling = nopeb;
                xe_plan_result r;
                assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
                assert_null(r.sol.R);
                assert_int_equal(r.events.len, 0);
                assert_true(isinf(r.objective));
                assert_true(isnan(r.gap));
                if (!nopeb) {
                    assert_int_equal(r.infeasible, 1);
                    assert_int_equal(r.infeasible_any, 1);
                    assert_true(r.blocker >= 0 && r.blocker < in->g->n);
                    proven_any++;
                } else if (mode == XE_PLAN_HEURISTIC) {
                    assert_int_equal(r.infeasible, 0); /* the portfolio proves nothing */
                } else {
                    assert_int_equal(r.infeasible, 1);
                    assert_int_equal(r.infeasible_any, 0);
                    assert_int_equal(r.milp_status, XE_MILP_INFEASIBLE);
                    proven++;
                }
                xe_plan_result_clear(&r);
            }
        xe_instance_free(in);
    }
    assert_int_equal(proven, 18);
    assert_int_equal(proven_any, 24);
}

/* Extra starts: auto's schedule (from a first plan) handed to heuristic mode is kept under
 * its name where the portfolio is worse; a dearer start, a start of another instance and
 * an invalid one (nothing computed) are ignored. */
static void test_extra_starts(void **state)
{
    (void)state;
    int used = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        /* 8-9 nodes, 2 devices, copy costs: the portfolio is optimal on smaller ones */
        xe_instance *in = xe_test_random_instance(seed, 8 + (int)(seed % 2), 2, 1);
        assert_non_null(in);
        xe_err err;
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
        o.time_limit = 5;
        xe_plan_result best;
        assert_int_equal(xe_plan(in, &o, &best, &err), XE_OK);
        xe_stages h;
        if (!best.sol.R || xe_heur_best(in, &h, NULL, &err) != XE_OK) {
            xe_plan_result_clear(&best);
            xe_instance_free(in);
            continue;
        }
        double hc = xe_stages_cost(in, &h);
        xe_stages bad, other;
        assert_int_equal(xe_stages_init(&bad, in->g->n, in->ndev), XE_OK); /* all zero: invalid */
        assert_int_equal(xe_stages_init(&other, in->g->n + 1, in->ndev), XE_OK);
        xe_plan_start st[4] = {{&bad, "bad"}, {&other, "other"}, {&best.sol, "given"}, {&h, "same-as-portfolio"}};
        o.mode = XE_PLAN_HEURISTIC;
        o.starts = st;
        o.nstarts = 4;
        xe_plan_result r;
        assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
        assert_non_null(r.sol.R);
        xe_test_assert_stages_valid(in, &r.sol);
        if (best.objective < hc * (1 - 1e-9)) {
            assert_string_equal(r.name, "given");
            assert_true(close_rel(r.objective, best.objective, 1e-12));
            used++;
        } else { /* not cheaper: the portfolio's stays */
            assert_string_not_equal(r.name, "given");
            assert_string_not_equal(r.name, "same-as-portfolio");
            assert_true(close_rel(r.objective, hc, 1e-12));
        }
        assert_string_not_equal(r.name, "bad");
        assert_string_not_equal(r.name, "other");
        xe_plan_result_clear(&r);
        /* feasibility: the first schedule (the cheapest start), no LNS, no MILP */
        o.mode = XE_PLAN_AUTO;
        o.feasibility = 1;
        assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
        assert_int_equal(r.nrows, 1);
        assert_int_equal(r.milp_status, -1);
        assert_true(close_rel(r.objective, fmin(hc, best.objective), 1e-12));
        xe_plan_result_clear(&r);
        xe_stages_clear(&bad);
        xe_stages_clear(&other);
        xe_stages_clear(&h);
        xe_plan_result_clear(&best);
        xe_instance_free(in);
    }
    print_message("extra starts: the given start was cheaper and used on %d instances\n", used);
    assert_true(used >= 1);
}

typedef struct seen {
    int nphase, nrow;
    char phase[XE_PLAN_MAX_ROWS][16];
    xe_plan_row row[XE_PLAN_MAX_ROWS];
} seen;

static void on_phase(void *ctx, const char *m)
{
    seen *s = ctx;
    if (s->nphase < XE_PLAN_MAX_ROWS) snprintf(s->phase[s->nphase], sizeof s->phase[0], "%s", m);
    s->nphase++;
}

static void on_row(void *ctx, const xe_plan_row *r)
{
    seen *s = ctx;
    assert_int_equal(s->nrow, s->nphase); /* each phase's row comes before the next phase */
    if (s->nrow < XE_PLAN_MAX_ROWS) s->row[s->nrow] = *r;
    s->nrow++;
}

/* Callbacks, milp mode on 5-node instances: phases "lns" never, "milp" once; the
 * heuristic row before the MILP starts; rows as in res->rows; the milp row's objective is
 * the result's when named "milp", and CBC is not run ("not run", no model) where the stage
 * bound already proves the portfolio's schedule within the gap. Auto on these tiny instances: the LP bound first; it
 * proves the portfolio's schedule within the gap (no further phase), or LNS proves its
 * schedule (the portfolio meets the bound or a window proves it: no MILP), or the whole
 * MILP after it proves the optimum; either way milp_status says optimal, and the
 * objective is milp mode's proven optimum within the gap. */
static void test_rows(void **state)
{
    (void)state;
    int autos = 0, lp_rows = 0, lp_proofs = 0, milp_skips = 0, milp_runs = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 5, 1 + (int)(seed % 2), 0);
        assert_non_null(in);
        xe_err err;
        xe_stages h;
        if (xe_heur_best(in, &h, NULL, &err) != XE_OK) {
            xe_instance_free(in);
            continue;
        }
        double hc = xe_stages_cost(in, &h);
        xe_stages_clear(&h);
        double auto_obj = NAN, lp_bound = -INFINITY;
        for (int mode = XE_PLAN_AUTO; mode <= XE_PLAN_MILP; mode += XE_PLAN_MILP - XE_PLAN_AUTO) {
            seen s;
            memset(&s, 0, sizeof s);
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
            o.no_bound_search = 1; /* rows as asserted; the search bound: test_search_bound_in_plan */
            o.mode = mode;
            o.time_limit = 20;
            o.phase = on_phase;
            o.row = on_row;
            o.ctx = &s;
            xe_plan_result r;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            assert_int_equal(s.nrow, r.nrows);
            assert_true(close_rel(s.row[0].objective, hc, 1e-12));
            assert_string_equal(s.row[0].status, "valid");
            for (int k = 0; k < r.nrows; k++) {
                assert_string_equal(s.row[k].method, r.rows[k].method);
                assert_true(close_rel(s.row[k].time, r.rows[k].time, 0));
            }
            double stage_gap = hc > 0 ? (hc - fmin(hc, xe_bound_stage(in))) / hc : 0;
            if (mode == XE_PLAN_MILP) {
                assert_int_equal(s.nphase, 1);
                assert_string_equal(s.phase[0], "milp");
                assert_string_equal(s.row[1].method, "milp");
                assert_int_equal(r.milp_status, XE_MILP_OPTIMAL);
                if (stage_gap <= o.rel_gap) { /* the start proven by the stage bound: CBC not run */
                    assert_true(!strncmp(s.row[1].status, "not run", 7));
                    assert_int_equal(s.row[1].nvars, 0);
                    assert_true(close_rel(r.objective, hc, 1e-12));
                    milp_skips++;
                } else {
                    assert_int_equal(s.row[1].milp_status, XE_MILP_OPTIMAL);
                    assert_true(s.row[1].nvars > 0);
                    assert_true(close_rel(s.row[1].objective, r.objective, 1e-12));
                    milp_runs++;
                }
                /* auto came first: both proven within the gap of the same optimum, and
                 * auto's LP bound at most it */
                assert_true(lp_bound <= r.objective * (1 + 1e-9));
                assert_true(r.objective <= auto_obj * (1 + 2 * o.rel_gap));
                assert_true(auto_obj <= r.objective * (1 + 2 * o.rel_gap));
            } else {
                /* the LP bound first unless the stage bound proves the portfolio's
                 * schedule already: it proves the start within the gap (no LNS, no
                 * MILP), or LNS follows */
                int lp = !strcmp(s.phase[0], "lp-bound"); /* k: LNS's row */
                assert_int_equal(lp, stage_gap > o.rel_gap);
                if (lp) {
                    lp_rows++;
                    lp_bound = s.row[1].bound;
                    assert_string_equal(s.row[1].method, "lp-bound");
                    assert_true(!strncmp(s.row[1].status, "LP relaxation ", 14));
                    /* "LP relaxation %.9g s": the LP's own value; the row's bound is the
                     * larger of it and the stage bound */
                    double lpv = strtod(s.row[1].status + 14, NULL);
                    assert_true(lpv <= s.row[1].bound * (1 + 1e-8) &&
                                (close_rel(lpv, s.row[1].bound, 1e-8) || s.row[1].bound <= xe_bound_stage(in)));
                    assert_true(isfinite(s.row[1].bound) && s.row[1].bound <= hc * (1 + 1e-9));
                    assert_true(close_rel(s.row[1].gap, (hc - s.row[1].bound) / hc, 1e-9));
                }
                if (lp && s.nphase == 1) { /* the LP proved the portfolio's schedule */
                    assert_true(s.row[1].gap <= o.rel_gap);
                    assert_true(close_rel(r.objective, hc, 1e-12));
                    lp_proofs++;
                } else if (s.nphase == 1 + lp) { /* LNS proved it: no MILP */
                    assert_string_equal(s.phase[lp], "lns");
                    assert_string_equal(s.row[1 + lp].method, "lns");
                    assert_true(!strcmp(s.row[1 + lp].status, "bound reached") ||
                                !strcmp(s.row[1 + lp].status, "optimal"));
                } else {
                    assert_int_equal(s.nphase, 2 + lp);
                    assert_string_equal(s.phase[lp], "lns");
                    assert_string_equal(s.phase[1 + lp], "milp");
                    assert_string_equal(s.row[2 + lp].method, "milp");
                    assert_int_equal(s.row[2 + lp].milp_status, XE_MILP_OPTIMAL);
                    assert_true(close_rel(s.row[2 + lp].objective, r.objective, 1e-9));
                }
                assert_int_equal(r.milp_status, XE_MILP_OPTIMAL);
                assert_true(r.optimal);
                auto_obj = r.objective;
                autos++;
            }
            xe_plan_result_clear(&r);
        }
        xe_instance_free(in);
    }
    print_message("auto on %d tiny instances: the LP bound ran on %d, proved the portfolio's schedule on %d\n", autos,
                  lp_rows, lp_proofs);
    print_message("milp mode: CBC run on %d, not run on %d (the start proven by the stage bound)\n", milp_runs,
                  milp_skips);
    assert_true(autos >= 1);
    assert_true(lp_rows >= 1);
    assert_true(milp_runs >= 1 && milp_skips >= 1);
}

/* The knapsack rows in milp mode: the default (-1) leaves them out, as 0 does; 1 adds
 * them (the milp row's model has more rows) and the optimum is the same. A random
 * instance with memory pressure, so that some rows can bind. */
static void test_knapsack_milp_mode(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 40 && checked < 3; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 6, 1, 0);
        assert_non_null(in);
        int nrows[3] = {0};
        double obj[3] = {0};
        int ok = 1;
        for (int k = -1; k <= 1; k++) {
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.no_reorder = 1;
            o.mode = XE_PLAN_MILP;
            o.time_limit = 20;
            o.knapsack = k;
            o.no_reach_bound = 1; /* its proof would end the solve before the MILP */
            xe_plan_result r;
            xe_err err;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            int at = row_of(&r, "milp");
            if (at < 0 || r.milp_status != XE_MILP_OPTIMAL) ok = 0;
            else {
                nrows[k + 1] = r.rows[at].nrows;
                obj[k + 1] = r.objective;
            }
            xe_plan_result_clear(&r);
        }
        if (ok && nrows[2] > nrows[1]) { /* some knapsack row can bind here */
            assert_int_equal(nrows[0], nrows[1]);
            assert_true(close_rel(obj[0], obj[2], 1e-6) && close_rel(obj[1], obj[2], 1e-6));
            checked++;
        }
        xe_instance_free(in);
    }
    print_message("milp mode: the knapsack rows left out by default, added by 1, on %d instances\n", checked);
    assert_true(checked >= 1);
}

/* The LP bound's proof (docs/lns.md, "Strategy"): on random one-device instances where
 * the LP relaxation (xe_bound_lp) lies strictly between the stage bound and the
 * portfolio's cost, auto with a --gap between the two gaps stops after the lp-bound row:
 * the portfolio's schedule, optimal within that gap, its bound the LP's. */
static void test_lp_proof(void **state)
{
    (void)state;
    int proofs = 0;
    for (uint64_t seed = 1; seed <= 200 && proofs < 3; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 8, 1, 0);
        assert_non_null(in);
        xe_err err;
        xe_stages h;
        if (xe_heur_best(in, &h, NULL, &err) != XE_OK) {
            xe_instance_free(in);
            continue;
        }
        double hc = xe_stages_cost(in, &h), sb = xe_bound_stage(in), lp = -INFINITY;
        xe_stages_clear(&h);
        int infeasible = 0;
        assert_int_equal(xe_bound_lp(in, 10, 1, &lp, &infeasible, &err), XE_OK);
        if (!(lp > sb * (1 + 1e-9) && lp < hc * (1 - 1e-9))) {
            xe_instance_free(in);
            continue;
        }
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.no_reorder = 1;
        o.no_bound_search = 1; /* the LP's proof, as asserted; the search bound: test_search_bound_in_plan */
        o.time_limit = 20;
        o.rel_gap = 0.5 * ((hc - lp) / hc + (hc - sb) / hc);
        xe_plan_result r;
        assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
        assert_int_equal(r.nrows, 2);
        assert_string_equal(r.rows[1].method, "lp-bound");
        assert_true(close_rel(r.rows[1].bound, lp, 1e-9));
        assert_true(r.optimal);
        assert_int_equal(r.milp_status, XE_MILP_OPTIMAL);
        assert_true(close_rel(r.objective, hc, 1e-12));
        assert_true(close_rel(r.bound, lp, 1e-9));
        xe_plan_result_clear(&r);
        xe_instance_free(in);
        proofs++;
    }
    print_message("the LP bound proved the portfolio's schedule on %d instances\n", proofs);
    assert_true(proofs >= 1);
}

/* A graph whose dense stage matrices (8 B x n x n x devices) exceed 90% of the memory
 * the call may count on is refused at once with XE_ENOMEM and the sizes, and planned
 * where they fit: a random 1,500-node DAG on one device needs 18,000,000 B. */
static void test_memory_guard(void **state)
{
    (void)state;
    xe_instance *in = xe_test_random_dag(5, 1500, 0.002, 1.0);
    assert_non_null(in);
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.mode = XE_PLAN_HEURISTIC;
    o.time_limit = 30;
    o.memory_bytes = 19000000; /* 90%: 17,100,000 B, below the 18,000,000 B needed */
    o.no_dtr = 1;
    xe_plan_result r;
    xe_err err;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_ENOMEM);
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "1500 nodes on 1 device: the dense stage matrices need about 17.17 MiB"));
    assert_null(r.sol.R);
    assert_int_equal(r.events.len, 0);
    xe_plan_result_clear(&r);
    /* with DTR (docs/dtr.md), which needs no stage matrices: its schedule, valid, and a
     * greedy row saying why nothing else ran */
    o.no_dtr = 0;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    assert_string_equal(r.name, "dtr");
    assert_null(r.sol.R);
    assert_true(r.events.len > 0);
    xe_sim_result sr;
    assert_int_equal(xe_sim_run(in, &r.events, &sr, &err), XE_OK);
    assert_true(sr.dev[0].peak <= in->dev[0].budget);
    assert_true(fabs(sr.total_time - r.objective) <= 1e-9 * r.objective);
    assert_true(r.bound <= r.objective && r.bound >= xe_bound_cheapest(in) * (1 - 1e-12));
    assert_int_equal(r.nrows, 2);
    assert_string_equal(r.rows[0].method, "greedy");
    assert_non_null(strstr(r.rows[0].status, "not run: 1500 nodes on 1 device: the dense stage matrices"));
    assert_string_equal(r.rows[1].method, "dtr");
    assert_int_equal(r.dtr_alone, 1);
    xe_plan_result_clear(&r);
    /* a budget below every node's footprint: no schedule, none proven, the plan returns
     * without one (solve: exit 4) */
    int64_t keep = in->dev[0].budget;
    in->dev[0].budget = 1;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.dtr_alone, 1);
    assert_string_equal(r.name, "none");
    assert_int_equal(r.events.len, 0);
    assert_null(r.sol.R);
    assert_non_null(strstr(r.dtr_status, "no schedule: "));
    xe_plan_result_clear(&r);
    in->dev[0].budget = keep;
    /* the same check alone, as sweep calls it before its table: the byte where it turns */
    assert_int_equal(xe_plan_memory_check(in, 19999999, &err), XE_ENOMEM);
    assert_non_null(strstr(err.msg, "the dense stage matrices need about 17.17 MiB"));
    assert_int_equal(xe_plan_memory_check(in, 20000000, &err), XE_OK);
    o.memory_bytes = 20000000; /* 90%: 18,000,000 B, enough */
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    assert_true(r.sol.R || r.events.len);
    xe_plan_result_clear(&r);
    xe_instance_free(in);
}

static void test_bad_options(void **state)
{
    (void)state;
    xe_instance *in = inst(1);
    xe_err err;
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
    xe_plan_result r;
    o.time_limit = 0;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "plan: bad option time_limit (> 0 s)")); /* the one at fault */
    xe_plan_result_clear(&r);
    o.mode = XE_PLAN_HEURISTIC; /* no time limit needed there */
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    xe_plan_result_clear(&r);
    o.mode = 7;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "plan: bad option mode (mode 7,"));
    xe_plan_opts_default(&o);
    o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
    o.nstarts = 1; /* starts NULL */
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_EINVAL);
    xe_plan_opts_default(&o);
    assert_int_equal(o.knapsack, -1); /* auto's default: docs/lns.md */
    o.knapsack = 2;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "plan: bad option knapsack (-1, 0 or 1)"));
    xe_plan_mode m = XE_PLAN_AUTO;
    assert_int_equal(xe_plan_mode_parse("lns", &m), 0);
    assert_int_equal(m, XE_PLAN_LNS);
    assert_int_equal(xe_plan_mode_parse("chen-sqrt", &m), -1);
    assert_string_equal(xe_plan_mode_name(XE_PLAN_HEURISTIC), "heuristic");
    xe_instance_free(in);
}

/* Checkmate's linear training graph with L+1 forward nodes: backward node L+j reads
 * L+j-1 and L-j; mem in [100, 1000] bytes and cost in [1, 10] from the seed. */
static xe_instance *training_chain(uint64_t seed, int L)
{
    xe_err err;
    int n = 2 * L + 1;
    uint64_t s = seed;
    xe_graph *g = xe_graph_new("chain");
    assert_non_null(g);
    double cost[512];
    assert_true(n <= 512);
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "%c%d", v <= L ? 'x' : 'g', v);
        int64_t mem = 100 + (int64_t)(xe_splitmix64(&s) % 901);
        cost[v] = 1 + (double)(xe_splitmix64(&s) % 10);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, v > L, mem, 0, cost[v], &err), v);
        if (v) assert_int_equal(xe_graph_add_edge(g, v - 1, v, &err), XE_OK);
    }
    for (int j = 1; j <= L; j++) assert_int_equal(xe_graph_add_edge(g, L - j, L + j, &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 1);
    assert_non_null(in);
    for (int v = 0; v < n; v++) in->cost[v] = cost[v];
    return in;
}

/* On training chains the plan runs the chain DP (docs/chain-dp.md) after the portfolio:
 * in heuristic mode its result costs min(portfolio, DP) exactly, named "chain-dp" where
 * the DP is cheaper, with a "chain-dp" row; the schedule replays in the simulator at that
 * cost within the budget. Chains of 41-61 nodes, budgets between the largest footprint
 * and the no-recomputation peak; the DP must win somewhere. */
static void test_chain_dp_in_plan(void **state)
{
    (void)state;
    int wins = 0, cases = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        xe_instance *in = training_chain(seed, 20 + (int)(seed % 3) * 5);
        int64_t lo = xe_instance_min_footprint(in->g), hi = xe_instance_norecompute_peak(in->g);
        for (int k = 0; k <= 4; k++) {
            in->dev[0].budget = lo + (hi - lo) * k / 8;
            xe_err err = {{0}};
            xe_stages h;
            double hc = INFINITY, dc = INFINITY;
            if (xe_heur_best_ex(in, &h, NULL, 1, 0.0, &err) == XE_OK) {
                hc = xe_stages_cost(in, &h);
                xe_stages_clear(&h);
            }
            xe_schedule ds;
            xe_schedule_init(&ds);
            if (xe_chain_dp(in, 0, &ds, &dc, &err) != XE_OK) dc = INFINITY;
            xe_schedule_clear(&ds);
            if (!isfinite(hc) && !isfinite(dc)) continue;
            cases++;
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.no_reorder = 1; /* the index order's stage class, as the brute force; docs/reorder.md: test_reorder */
            o.mode = XE_PLAN_HEURISTIC;
            o.time_limit = 30;
            xe_plan_result r;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            double want = fmin(hc, dc);
            assert_true(fabs(r.objective - want) <= 1e-9 * want);
            int row = row_of(&r, "chain-dp");
            assert_true(row >= 0);
            if (dc < hc * (1 - 1e-12)) {
                wins++;
                assert_string_equal(r.name, "chain-dp");
                assert_string_equal(r.rows[row].status, "valid");
                assert_true(fabs(r.rows[row].objective - dc) <= 1e-9 * dc);
            }
            xe_test_assert_stages_valid(in, &r.sol); /* replays at its cost, within the budget */
            assert_true(fabs(xe_stages_cost(in, &r.sol) - r.objective) <= 1e-9 * r.objective);
            xe_plan_result_clear(&r);
        }
        xe_instance_free(in);
    }
    assert_true(cases >= 20);
    assert_true(wins >= 1);
    print_message("chain DP in the plan: cheaper than the portfolio on %d of %d chain cases\n", wins, cases);
}

/* The search bound in xe_plan (docs/lns.md, "Bounds" 6) on random one-device instances
 * of 5-8 nodes where a schedule exists, auto mode: its row comes last, after its phase
 * callback; its bound is at most the optimum over all event lists (the brute force) and
 * the result's bound is at least the lesser of it and the objective; with
 * no_bound_search there is no such row. On these sizes the search finishes: its bound is
 * the relaxed game's optimum, equal to the brute force's on most (count printed). */
static void test_search_bound_in_plan(void **state)
{
    (void)state;
    int runs = 0, equal = 0;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 5 + (int)(seed % 4), 1, 0);
        assert_non_null(in);
        xe_err err;
        double opt;
        if (xe_bf_event_solve(in, &opt, NULL, &err) != XE_OK) {
            xe_instance_free(in);
            continue;
        }
        for (int off = 0; off <= 1; off++) {
            seen s;
            memset(&s, 0, sizeof s);
            xe_plan_opts o;
            xe_plan_opts_default(&o);
            o.time_limit = 20;
            o.no_bound_search = off;
            o.phase = on_phase; /* recorded only: phases such as reorder have no callback */
            o.ctx = &s;
            xe_plan_result r;
            assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
            int found = -1;
            for (int k = 0; k < r.nrows; k++)
                if (!strcmp(r.rows[k].method, "search-bound")) found = k;
            if (off) {
                assert_int_equal(found, -1);
            } else {
                assert_int_equal(found, r.nrows - 1);
                assert_string_equal(s.phase[s.nphase - 1], "search-bound");
                double b = r.rows[found].bound;
                assert_true(b <= opt * (1 + 1e-9) + 1e-12);
                assert_true(r.bound >= fmin(b, r.objective) * (1 - 1e-12));
                assert_true(r.bound <= r.objective * (1 + 1e-12));
                equal += fabs(b - opt) <= 1e-9 * fmax(1.0, opt);
                runs++;
            }
            xe_plan_result_clear(&r);
        }
        xe_instance_free(in);
    }
    print_message("search bound in the plan: %d one-device instances, equal to the optimum over all event lists on "
                  "%d\n", runs, equal);
    assert_true(runs >= 8 && equal * 2 > runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_and_milp_prove_optimum),
        cmocka_unit_test(test_auto_short_limit_bounds),
        cmocka_unit_test(test_short_limits_kept),
        cmocka_unit_test(test_heuristic_mode_is_portfolio),
        cmocka_unit_test(test_infeasible_budget),
        cmocka_unit_test(test_extra_starts),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_lp_proof),
        cmocka_unit_test(test_memory_guard),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_knapsack_milp_mode),
        cmocka_unit_test(test_chain_dp_in_plan),
        cmocka_unit_test(test_search_bound_in_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
