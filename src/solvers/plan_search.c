/* The planner's exact phases on one device (src/solvers/plan_int.h): the search over
 * all event lists (docs/pebble.md) and the chain DP (docs/chain-dp.md). */
#include <math.h>

#include "xengine/baselines.h"
#include "xengine/pebble.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

/* One device, no stage schedule in hand: the exact search over all event lists for
 * `seconds` (docs/pebble.md). YES: res->events holds its schedule, res->events_objective
 * its cost; NO: res->infeasible and res->infeasible_any set, res->blocker a node that
 * cannot be computed. Emits the "pebbling" row, whose bound (*lb_any) holds for every
 * schedule: the stage bounds do not bound schedules outside the stage structure, so it
 * is the bottleneck bound (xe_bound_bottleneck: every node once, plus what the worst
 * node's slack forces to be computed again), computed after the search for at most
 * XE_PLAN_BOTTLENECK_S; traces its first candidate and, if later, its best (*t_best:
 * seconds from the call until the best was in hand). Returns the answer, or a negative
 * XE_E* code (XE_ENOMEM) with err set. */
int xe_plan_pebble_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                        double t_start, double *lb_any, double *t_best, xe_err *err)
{
    double t0 = xe_now();
    *lb_any = xe_bound_cheapest(in); /* one device: every node once */
    xe_pebble *pb = xe_pebble_new(in->g, 0);
    if (!pb) return xe_err_set(err, XE_ENOMEM, "plan: out of memory for the exact search");
    xe_pebble_set_interrupt(pb, o->interrupt);
    xe_plan_refine refine = {.seconds = XE_PLAN_REFINE_S};
    if (!o->feasibility) /* candidates ranked by what restaging makes of them (docs/reorder.md) */
        xe_pebble_set_refine(pb, xe_plan_refine_events, &refine);
    if (o->phase) o->phase(o->ctx, "pebbling");
    xe_pebble_answer a = XE_PEBBLE_UNKNOWN;
    xe_pebble_stats st;
    int rc = xe_pebble_schedule(pb, in, 0, t0 + seconds, &res->events, &a, &res->blocker, &st, err);
    if (a != XE_PEBBLE_NO) res->blocker = -1;
    xe_pebble_free(pb);
    if (rc && refine.err.msg[0]) /* the refinement's own reason */
        return xe_err_set(err, rc, "plan: the exact search: %s", refine.err.msg);
    if (rc) return rc;
    if (a == XE_PEBBLE_YES && !xe_plan_stopped(o)) { /* a schedule to bound: after the search, not to delay
                                                       * it (nor a Ctrl-C) */
        double left = o->time_limit > 0 ? xe_plan_time_left(o, t_start) : XE_PLAN_BOTTLENECK_S;
        *lb_any = fmax(*lb_any, xe_bound_bottleneck(in, xe_now() + fmin(XE_PLAN_BOTTLENECK_S, fmax(0.02, left)), NULL));
    }
    xe_plan_row r = {.method = "pebbling", .objective = INFINITY, .bound = *lb_any, .gap = NAN,
                     .time = xe_now() - t0, .milp_status = -1};
    if (a == XE_PEBBLE_YES) {
        double c = st.cost;
        res->events_objective = c;
        r.objective = c;
        r.gap = xe_plan_rel_gap(c, *lb_any);
        r.status = "valid (outside the stage structure)";
        /* its first candidate, then the best if that came later (docs/pebble.md) */
        double t_first = t0 - t_start + st.first_time;
        xe_plan_trace(res, t_first, st.first_cost);
        *t_best = t_first;
        if (c < st.first_cost) {
            *t_best = xe_now() - t_start;
            xe_plan_trace(res, *t_best, c);
        }
    } else if (a == XE_PEBBLE_NO) {
        res->infeasible = res->infeasible_any = 1;
        r.status = "no schedule of any form fits (proven)";
        r.bound = NAN; /* no schedule: nothing to bound */
    } else {
        r.status = xe_plan_stopped(o) ? "unknown: interrupted" : "unknown at its time limit";
    }
    xe_plan_emit(o, res, &r);
    return (int)a;
}


/* On one device, where the graph is a training chain (xe_chain_detect) of at most
 * XE_PLAN_CHAIN_DP_MAX_NODES nodes: the chain DP (docs/chain-dp.md) for
 * XE_PLAN_CHAIN_DP_SHARE of the time left; its schedule, turned into stage matrices
 * (xe_stages_from_schedule), replaces *best when cheaper (kept in *dp). With several
 * devices the DP parks tensors on the others (copies, not converted), so it is not run.
 * Emits row "chain-dp" when it ran. Returns XE_OK or XE_ENOMEM. */
int xe_plan_chain_dp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                          xe_stages *dp, const xe_stages **best, double *best_cost, xe_err *err)
{
    int n = in->g->n;
    xe_err e2 = {{0}};
    if (o->no_chain_dp || in->ndev != 1 || n > XE_PLAN_CHAIN_DP_MAX_NODES || (o->feasibility && *best)) return XE_OK;
    double t0 = xe_now();
    double share = o->time_limit > 0 ? XE_PLAN_CHAIN_DP_SHARE * xe_plan_time_left(o, t_start)
                                     : XE_PLAN_CHAIN_DP_DEFAULT_S;
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
            xe_plan_trace(res, res->time_best, c);
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
    xe_plan_emit_heur(o, res, "chain-dp", status, c, xe_now() - t0);
    return XE_OK;
}
