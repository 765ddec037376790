/* The planner's MILP phases (src/solvers/plan_int.h): the whole stage MILP from the
 * best schedule, and its LP relaxation as a bound (docs/lns.md, "Bounds"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

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
int xe_plan_milp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, const char *method,
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
    if (rc == XE_ESOLVER) {
        /* e.g. CBC crashed when its time limit stopped it, or its answer fails the stage
         * check (numerical trouble at budgets of 10^11 bytes and more, where its
         * tolerances cannot resolve single bytes): the schedule in hand is kept; without
         * one, the plan ends with none, and the caller names the failure (milp_error).
         * Before 2026-12-05 the latter was an error of the whole plan (exit 5). */
        snprintf(res->milp_error, sizeof res->milp_error, "%s", e2.msg);
        no_answer(mr);
        r.status = start ? "no answer (solver process ended)" : "no usable answer (solver failure)";
        r.crashed = start != NULL;
        r.kept = start ? res->name : NULL;
        r.error = res->milp_error;
        res->milp_crashed = start != NULL;
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
        int c = xe_descent_confirm_infeasible(in, xe_plan_time_left(o, t_start), o->threads, NULL, &e2);
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
    if (!r.status && mr->killed && xe_plan_stopped(o)) {
        r.status = "interrupted";
        mr->killed = 0; /* not a model too large for its limit */
    }
    if (!r.status)
        r.status = mr->killed ? "stopped at the time limit (CBC killed: it did not stop at its own)"
                              : xe_milp_status_str(mr->status);
    r.objective = mr->sol.R ? mr->objective : INFINITY;
    r.bound = fmin(mr->bound, lb_other);
    r.gap = mr->sol.R ? xe_plan_rel_gap(mr->objective, r.bound) : NAN;
    r.milp_status = (int)mr->status;
    r.killed = mr->killed;
    r.nvars = mr->nvars, r.nints = mr->nints, r.nrows = mr->nrows;
    xe_plan_emit(o, res, &r);
    res->milp_status = (int)mr->status;
    res->milp_killed = mr->killed;
    return XE_OK;
}

/* Makes the MILP's schedule (phase `name`, begun t0 seconds into the call) the best one
 * when it is at least as cheap: a tie goes to the MILP (solve's choice), unless its
 * schedule is the one in hand, unchanged (the MILP returned its start), which keeps its
 * name: the name says whose schedule was written (until 2026-12-05 it said "milp" there,
 * a new user's trial on VGG16 gpu+cpu at 70%). */
void xe_plan_take_milp(xe_plan_result *res, xe_milp_result *m, const char *name, double t0, const xe_stages **best,
                      double *best_cost)
{
    if (!m->sol.R || m->objective > *best_cost) return;
    if (*best && m->objective == *best_cost && xe_stages_equal(&m->sol, *best)) return;
    if (m->objective < *best_cost) {
        res->time_best = t0 + m->time_best;
        xe_plan_trace(res, res->time_best, m->objective);
    }
    *best = &m->sol;
    *best_cost = m->objective;
    res->name = name;
}

/* Why lp_bound has no bound: the words of the lp-bound row's status. */
static const char *const lp_why[] = {"solved", "not finished in its share of the time", "model too large",
                                     "infeasibility claimed (not trusted)", "solver failed", "interrupted",
                                     "not started (under 0.5 s left for it)"};

/* "%.9g s" of a solved LP bound, else why there is none (lp_why), into buf. */
const char *xe_plan_lp_words(char *buf, size_t cap, double lp, int why)
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
int xe_plan_lp_bound(const xe_instance *in, int64_t est, const xe_plan_opts *o, double limit, double *lp, int *why,
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
    else if (xe_plan_stopped(o)) *why = LP_INTERRUPTED;
    else *why = rc == XE_OK ? LP_TIMEOUT : LP_FAILED;
    xe_milp_result_clear(&r);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "plan: LP relaxation: %s", e2.msg);
    return XE_OK;
}
