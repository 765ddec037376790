/* The event-list local search as the planner's last phase (src/solvers/plan_int.h;
 * docs/anneal.md, "In the planner"): on one device, where schedules outside the stage
 * class of the graph's order matter, the schedule in hand is annealed as a compute
 * sequence for the time kept back for it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "xengine/anneal.h"
#include "xengine/timer.h"

#include "plan_int.h"

double xe_plan_anneal_share(const xe_instance *in, const xe_plan_opts *o, const xe_plan_result *res, int stage_found)
{
    if (in->ndev != 1 || o->no_anneal || o->feasibility || o->mode == XE_PLAN_MILP) return 0.0;
    /* the graph's order is far from its best (a much lower-peak order exists), or no
     * stage schedule was found in any order: the pebbling schedule, or one restaged */
    if (!xe_plan_order_far(res) && stage_found) return 0.0;
    return o->time_limit > 0 ? XE_PLAN_ANNEAL_SHARE * o->time_limit : XE_PLAN_ANNEAL_DEFAULT_S;
}

int xe_plan_anneal_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                         double seconds, double bound_any, xe_err *err)
{
    if (!(seconds >= XE_PLAN_MIN_PHASE) || xe_plan_stopped(o) || (!res->events.len && !res->sol.R)) return XE_OK;
    /* nothing to gain where the schedule in hand meets a bound over every schedule */
    if (xe_plan_rel_gap(res->objective, bound_any) <= o->rel_gap) return XE_OK;
    if (o->phase) o->phase(o->ctx, "anneal");
    double t0 = xe_now();
    xe_schedule conv, out; /* conv: a stage schedule in hand as events */
    xe_schedule_init(&conv);
    xe_schedule_init(&out);
    const xe_schedule *start = &res->events;
    if (!res->events.len) {
        int rc = xe_stages_to_schedule(in, &res->sol, &conv, err);
        if (rc) {
            xe_schedule_clear(&conv);
            return rc;
        }
        start = &conv;
    }
    xe_anneal_opts ao;
    xe_anneal_opts_default(&ao);
    ao.time_limit = seconds;
    ao.interrupt = o->interrupt;
    /* heuristic mode: a fixed number of rounds, the same on every run that finishes them */
    ao.max_rounds = o->mode == XE_PLAN_HEURISTIC ? XE_PLAN_ANNEAL_HEURISTIC_ROUNDS : 0;
    /* stop once the bounds over every schedule prove it within the gap (bound <= cost <=
     * bound / (1 - gap)) */
    ao.target = o->rel_gap < 1 ? bound_any / (1 - o->rel_gap) : 0;
    xe_anneal_result ar;
    int rc = xe_anneal(in, start, &ao, &out, &ar, err);
    xe_schedule_clear(&conv);
    if (rc) {
        xe_schedule_clear(&out);
        return rc;
    }
    int better = ar.cost < res->objective * (1 - 1e-12);
    snprintf(res->anneal_status, sizeof res->anneal_status, "%s, %d round%s%s, %lld moves%s",
             better ? "valid (outside the stage structure)" : "no gain", ar.rounds, ar.rounds == 1 ? "" : "s",
             ar.partial ? " and part of one" : "", (long long)ar.moves,
             ar.cost <= ao.target ? "; bound met" : "");
    xe_plan_row row = {.method = "anneal",
                       .status = res->anneal_status,
                       .objective = ar.cost,
                       .bound = NAN,
                       .gap = NAN,
                       .time = xe_now() - t0,
                       .milp_status = -1};
    xe_plan_emit(o, res, &row);
    if (!better) {
        xe_schedule_clear(&out);
        return XE_OK;
    }
    /* the annealed sequence replaces the schedule in hand; the stage bounds do not hold
     * for it, only the bounds over every schedule (raised after this by the caller) */
    xe_schedule_clear(&res->events);
    xe_stages_clear(&res->sol);
    res->events = out;
    res->events_objective = res->objective = ar.cost;
    res->name = "anneal";
    res->reordered = 0;
    res->search_order = 0;
    res->bound = fmin(bound_any, ar.cost);
    res->gap = xe_plan_rel_gap(ar.cost, res->bound);
    res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    res->infeasible = 0;
    if (res->milp_status == XE_MILP_OPTIMAL) res->milp_status = XE_MILP_FEASIBLE; /* a stage-class proof */
    res->time_best = (t0 - t_start) + ar.time_best;
    xe_plan_trace(res, res->time_best, ar.cost);
    return XE_OK;
}
