/* The planner's options, names, rows, trace and clock (src/solvers/plan_int.h). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "xengine/timer.h"

#include "plan_int.h"

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
double xe_plan_rel_gap(double objective, double bound)
{
    if (!isfinite(objective) || !isfinite(bound)) return NAN;
    if (objective <= 0) return 0;
    return (objective - fmin(bound, objective)) / objective;
}

const char *xe_plan_name(const xe_plan_result *res)
{
    /* the phase's name; planned in a low-peak order; planned in the search bound's */
    static const char *const names[][3] = {
        {"greedy", "greedy, low-peak order", "greedy, search-bound order"},
        {"greedy-diverse", "greedy-diverse, low-peak order", "greedy-diverse, search-bound order"},
        {"greedy-random", "greedy-random, low-peak order", "greedy-random, search-bound order"},
        {"lns", "lns, low-peak order", "lns, search-bound order"},
        {"milp", "milp, low-peak order", "milp, search-bound order"},
        {"descent", "descent, low-peak order", "descent, search-bound order"},
        {"checkpoint-all", "checkpoint-all, low-peak order", "checkpoint-all, search-bound order"},
        {"recompute-all", "recompute-all, low-peak order", "recompute-all, search-bound order"},
        {"search-order", "checkpoint-all, search-bound order", "checkpoint-all, search-bound order"},
    };
    if (!res->reordered) return res->name;
    int col = res->search_order ? 2 : 1;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(res->name, names[k][0])) return names[k][col];
    return res->search_order ? "search-bound order" : "low-peak order";
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

int xe_plan_result_schedule(const xe_instance *in, const xe_plan_result *res, xe_schedule *out, xe_err *err)
{
    xe_schedule_clear(out);
    if (res->events.len) {
        if (xe_schedule_append(out, &res->events) != XE_OK)
            return xe_err_set(err, XE_ENOMEM, "plan: out of memory copying %d events", res->events.len);
        return XE_OK;
    }
    if (!res->sol.R) return xe_err_set(err, XE_EINFEASIBLE, "plan: no schedule was found");
    return xe_stages_to_schedule(in, &res->sol, out, err);
}

void xe_plan_result_clear(xe_plan_result *res)
{
    if (!res) return;
    xe_stages_clear(&res->sol);
    xe_schedule_clear(&res->events);
    memset(res, 0, sizeof *res);
}

/* Records a new best (t seconds from the call) in the trace. */
void xe_plan_trace(xe_plan_result *res, double t, double obj)
{
    /* improvements only: a phase's best that is dearer than a schedule kept aside (a
     * low-peak order's, xe_plan_aside) is not one */
    if (res->ntrace > 0 && !(obj < res->trace_obj[res->ntrace - 1])) return;
    int k = res->ntrace < 64 ? res->ntrace++ : 63;
    res->trace_t[k] = t;
    res->trace_obj[k] = obj;
}

/* 1 once the call was interrupted (xe_plan_opts.interrupt): no phase starts after. */
int xe_plan_stopped(const xe_plan_opts *o) { return xe_interrupted(o->interrupt); }

/* Seconds left of the call's time limit (negative once it has passed; none once
 * interrupted). */
double xe_plan_time_left(const xe_plan_opts *o, double t_start)
{
    if (xe_plan_stopped(o)) return 0.0;
    return o->time_limit - (xe_now() - t_start);
}

void xe_plan_set_reordered(xe_plan_result *res, const xe_plan_opts *o, double cost, double bound)
{
    res->reordered = 1;
    res->events_objective = res->objective = cost;
    res->bound = fmin(bound, cost);
    res->gap = xe_plan_rel_gap(cost, res->bound);
    res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    res->infeasible = 0;
    /* a proof by LNS or the MILP held in one order only */
    if (!res->optimal && res->milp_status == XE_MILP_OPTIMAL) res->milp_status = XE_MILP_FEASIBLE;
}

/* 1 once the time limit has passed (or the call was interrupted): the phases after the
 * portfolio do not start then, except the exact search's least share where no schedule
 * is in hand (before 2026-12-01 a failing reorder, restarts, further orders and descent
 * each ran a portfolio's worth past it: random_layered_n250 one GPU at 60% with a 0.1-s
 * limit took 6.5 s). */
int xe_plan_passed(const xe_plan_opts *o, double t_start)
{
    return xe_plan_stopped(o) || (o->time_limit > 0 && xe_plan_time_left(o, t_start) <= 0);
}

/* A phase's seconds: `frac` of the time left (of default_s without a limit), at least
 * min(XE_PLAN_PEBBLE_MIN_S, a quarter of the limit) (XE_PLAN_PEBBLE_MIN_S without one),
 * at most what is left, and at least least_s. */
double xe_plan_share(const xe_plan_opts *o, double t_start, double frac, double default_s, double least_s)
{
    double left = o->time_limit > 0 ? fmax(0.0, xe_plan_time_left(o, t_start)) : default_s;
    double floor_s = o->time_limit > 0 ? fmin(XE_PLAN_PEBBLE_MIN_S, 0.25 * o->time_limit) : XE_PLAN_PEBBLE_MIN_S;
    return fmin(fmax(floor_s, frac * left), fmax(least_s, left));
}

void xe_plan_emit(const xe_plan_opts *o, xe_plan_result *res, const xe_plan_row *r)
{
    if (res->nrows < XE_PLAN_MAX_ROWS) res->rows[res->nrows++] = *r;
    if (o->row) o->row(o->ctx, r);
}

/* Emits the row of a phase not started because the time limit has (nearly) passed or the
 * call was interrupted, with the bound and gap known so far (NAN: none). */
void xe_plan_emit_not_run(const xe_plan_opts *o, xe_plan_result *res, const char *method, double bound, double gap)
{
    xe_plan_row r = {.method = method,
                     .status = xe_plan_stopped(o) ? "not run (interrupted)" : "not run (time limit reached)",
                     .objective = INFINITY,
                     .bound = bound, .gap = gap, .milp_status = -1};
    xe_plan_emit(o, res, &r);
}

/* Emits the row of a heuristic phase: no bound, no gap, no MILP status; objective in
 * seconds (INFINITY: no schedule), `seconds` the phase's time. */
void xe_plan_emit_heur(const xe_plan_opts *o, xe_plan_result *res, const char *method, const char *status,
                      double objective, double seconds)
{
    xe_plan_row r = {.method = method, .status = status, .objective = objective, .bound = NAN, .gap = NAN,
                     .time = seconds, .milp_status = -1};
    xe_plan_emit(o, res, &r);
}

double xe_plan_physical_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

int xe_plan_order_far(const xe_plan_result *res)
{
    return res->peak_order > 0 && (double)res->peak_order < XE_PLAN_COMPETITOR_PEAK * (double)res->peak_index;
}
