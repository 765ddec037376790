/* The event-list local search as the planner's last phase (src/solvers/plan_int.h;
 * docs/anneal.md, "In the planner"): on one device, where schedules outside the stage
 * class of the graph's order matter, the schedule in hand is annealed as a compute
 * sequence for the time kept back for it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "xengine/anneal.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

double xe_plan_anneal_share(const xe_instance *in, const xe_plan_opts *o, const xe_plan_result *res, int stage_found)
{
    if (in->ndev != 1 || o->no_anneal || o->feasibility || o->mode == XE_PLAN_MILP) return 0.0;
    /* the graph's order is far from its best (a much lower-peak order exists), or no
     * stage schedule was found in any order: the pebbling schedule, or one restaged */
    if (!xe_plan_order_far(res) && stage_found) return 0.0;
    double share = o->mode != XE_PLAN_HEURISTIC && !o->no_window ? XE_PLAN_WINDOW_SHARE : XE_PLAN_ANNEAL_SHARE;
    return o->time_limit > 0 ? share * o->time_limit : XE_PLAN_ANNEAL_DEFAULT_S;
}

/* The schedule out (cost seconds, found `when` seconds after t_start) replaces the one in
 * hand: only the bounds over every schedule hold for it. Takes out's events. */
static void plan_take_events(xe_plan_result *res, xe_schedule *out, double cost, const char *name, double bound_any,
                             double when, const xe_plan_opts *o)
{
    xe_schedule_clear(&res->events);
    xe_stages_clear(&res->sol);
    res->events = *out;
    xe_schedule_init(out);
    res->events_objective = res->objective = cost;
    res->name = name;
    res->reordered = 0;
    res->search_order = 0;
    res->bound = fmin(bound_any, cost);
    res->gap = xe_plan_rel_gap(cost, res->bound);
    res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    res->infeasible = 0;
    if (res->milp_status == XE_MILP_OPTIMAL) res->milp_status = XE_MILP_FEASIBLE; /* a stage-class proof */
    res->time_best = when;
    xe_plan_trace(res, when, cost);
}

/* The reach windows on start, the schedule in hand as events, until `deadline` (row
 * "reach-window"). */
static int plan_window(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                       double deadline, double bound_any, const xe_schedule *start, xe_err *err)
{
    double t0 = xe_now();
    if (!(deadline - t0 >= XE_PLAN_MIN_PHASE) || xe_plan_stopped(o) || !start->len ||
        xe_plan_rel_gap(res->objective, bound_any) <= o->rel_gap)
        return XE_OK;
    if (o->phase) o->phase(o->ctx, "reach-window");
    xe_rwindow_opts wo;
    xe_rwindow_opts_default(&wo);
    wo.time_limit = deadline - t0;
    wo.interrupt = o->interrupt;
    wo.target = o->rel_gap < 1 ? bound_any / (1 - o->rel_gap) : 0;
    xe_schedule out;
    xe_schedule_init(&out);
    xe_rwindow_result wr;
    int rc = xe_rwindow_improve(in, start, &wo, &out, &wr, err);
    if (rc) {
        xe_schedule_clear(&out);
        return rc;
    }
    int better = wr.cost < res->objective * (1 - 1e-12);
    snprintf(res->window_status, sizeof res->window_status, "%s, %ld windows (%ld cheaper, %ld stopped at their cap)%s",
             better ? "valid (outside the stage structure)" : "no gain", wr.windows, wr.improved, wr.capped,
             wo.target > 0 && wr.cost <= wo.target ? "; bound met" : "");
    xe_plan_row row = {.method = "reach-window",
                       .status = res->window_status,
                       .objective = wr.cost,
                       .bound = NAN,
                       .gap = NAN,
                       .time = xe_now() - t0,
                       .milp_status = -1};
    xe_plan_emit(o, res, &row);
    if (better) plan_take_events(res, &out, wr.cost, "reach-window", bound_any, (t0 - t_start) + wr.time_best, o);
    xe_schedule_clear(&out);
    return XE_OK;
}

int xe_plan_anneal_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                         double seconds, double bound_any, xe_err *err)
{
    if (!(seconds >= XE_PLAN_MIN_PHASE) || xe_plan_stopped(o) || (!res->events.len && !res->sol.R)) return XE_OK;
    /* nothing to gain where the schedule in hand meets a bound over every schedule */
    if (xe_plan_rel_gap(res->objective, bound_any) <= o->rel_gap) return XE_OK;
    if (o->phase) o->phase(o->ctx, "anneal");
    double t0 = xe_now(), end = t0 + seconds;
    int windows = o->mode != XE_PLAN_HEURISTIC && !o->no_window;
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
    ao.time_limit = windows ? (1 - XE_PLAN_WINDOW_PART) * seconds : seconds;
    ao.interrupt = o->interrupt;
    /* heuristic mode: a fixed number of rounds, the same on every run that finishes them */
    ao.max_rounds = o->mode == XE_PLAN_HEURISTIC ? XE_PLAN_ANNEAL_HEURISTIC_ROUNDS : 0;
    /* stop once the bounds over every schedule prove it within the gap (bound <= cost <=
     * bound / (1 - gap)) */
    ao.target = o->rel_gap < 1 ? bound_any / (1 - o->rel_gap) : 0;
    xe_anneal_result ar;
    int rc = xe_anneal(in, start, &ao, &out, &ar, err);
    if (rc) {
        xe_schedule_clear(&conv);
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
    /* the annealed sequence replaces the schedule in hand; the stage bounds do not hold
     * for it, only the bounds over every schedule (raised after this by the caller) */
    if (better) plan_take_events(res, &out, ar.cost, "anneal", bound_any, (t0 - t_start) + ar.time_best, o);
    /* then the windows, from the cheaper of the two: the annealed events, or the stage
     * schedule's events (conv) where nothing beat it */
    if (windows) rc = plan_window(in, o, res, t_start, end, bound_any, res->events.len ? &res->events : &conv, err);
    xe_schedule_clear(&conv);
    xe_schedule_clear(&out);
    return rc;
}
