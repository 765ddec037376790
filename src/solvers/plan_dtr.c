/* The planner's eviction phase (src/solvers/plan_int.h, docs/dtr.md): the first
 * schedule of graphs too large for a quick stage greedy pass, and the last resort where
 * no phase found one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/dtr.h"
#include "xengine/solvers.h"
#include "xengine/reorder.h"
#include "xengine/timer.h"

#include "plan_int.h"

int xe_plan_dtr_big(const xe_instance *in)
{
    double n = in->g->n;
    return n * n * in->ndev >= XE_PLAN_DTR_MIN_CELLS;
}

int xe_plan_dtr_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                      double seconds, xe_schedule *ev, double *ev_cost, double *t_ev, xe_err *err)
{
    const xe_graph *g = in->g;
    double t0 = xe_now(), deadline = t0 + seconds;
    *ev_cost = INFINITY;
    if (o->phase) o->phase(o->ctx, "dtr");
    int *order = malloc(((size_t)g->n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory for the eviction order");
    /* the index order and the low-peak list scheduling's best of up to
     * XE_PLAN_DTR_ORDER_PASSES passes in a quarter of the time (docs/reorder.md; one pass
     * left DTR thrashing on generated layered DAGs at 80-99% where 32 give every node once) */
    int64_t peak;
    xe_err e2;
    int orc = xe_order_low_peak(g, 1, XE_PLAN_DTR_ORDER_PASSES, t0 + 0.25 * seconds, order, &peak, &e2);
    if (orc == XE_ENOMEM) {
        free(order);
        return xe_err_set(err, orc, "plan: %s", e2.msg);
    }
    int have_order = orc == XE_OK;
    xe_schedule s;
    xe_schedule_init(&s);
    int rc = XE_OK, timed_out = 0;
    char why[sizeof res->dtr_status] = "";
    for (int d = 0; d < in->ndev && rc == XE_OK; d++)
        for (int w = 0; w < 1 + have_order && rc == XE_OK; w++) {
            /* without a schedule in hand, the grace the greedy has too (XE_HEUR_GRACE_S) */
            double end = isfinite(*ev_cost) ? deadline : deadline + XE_HEUR_GRACE_S;
            if (xe_now() > end || xe_plan_stopped(o)) {
                timed_out = 1;
                break;
            }
            double c = INFINITY;
            int r = xe_dtr_schedule(in, d, w ? order : NULL, 1, end, &s, &c, NULL, &e2);
            if (r == XE_OK && c < *ev_cost) {
                xe_schedule_clear(ev);
                *ev = s;
                xe_schedule_init(&s);
                *ev_cost = c;
            } else if (r == XE_ETIMEOUT) {
                timed_out = 1;
            } else if (r == XE_EINFEASIBLE && !why[0]) {
                snprintf(why, sizeof why, "%.150s", e2.msg + (strncmp(e2.msg, "dtr: ", 5) ? 0 : 5));
            } else if (r != XE_OK && r != XE_EINFEASIBLE) {
                rc = xe_err_set(err, r, "plan: %s", e2.msg);
            }
            xe_schedule_clear(&s);
        }
    free(order);
    if (rc) return rc;
    double t = xe_now() - t0;
    if (isfinite(*ev_cost)) {
        *t_ev = xe_now() - t_start;
        xe_plan_trace(res, *t_ev, *ev_cost);
        snprintf(res->dtr_status, sizeof res->dtr_status, "%s",
                 "valid (outside the stage structure, computes on one device)");
    } else if (timed_out) {
        snprintf(res->dtr_status, sizeof res->dtr_status, "no schedule within its time");
    } else {
        snprintf(res->dtr_status, sizeof res->dtr_status, "no schedule: %.*s", (int)sizeof why - 16, why);
    }
    xe_plan_emit_heur(o, res, "dtr", res->dtr_status, *ev_cost, t);
    return XE_OK;
}

int xe_plan_dtr_only(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start, xe_err *err)
{
    xe_err mem = *err;
    /* the greedy row says why no stage phase runs: the memory check's message less its
     * advice */
    snprintf(res->dtr_skip, sizeof res->dtr_skip, "not run: %.200s", mem.msg);
    char *cut = strstr(res->dtr_skip, "; plan a smaller graph");
    if (cut) *cut = 0;
    xe_plan_row r = {.method = "greedy", .status = res->dtr_skip, .objective = INFINITY, .bound = NAN, .gap = NAN,
                     .milp_status = -1};
    xe_plan_emit(o, res, &r);
    double secs = o->time_limit > 0 ? o->time_limit - (xe_now() - t_start) : XE_PLAN_DTR_ALONE_S;
    xe_schedule ev;
    xe_schedule_init(&ev);
    double cost = INFINITY, t_ev = 0;
    /* DTR first (its schedule in milliseconds where it finds one), then, unless it computes
     * every node once at the cheapest, an order that fits (every node once: optimal) */
    const char *name = "dtr";
    int fit_dev = xe_plan_fit_target(in, o);
    double fit_s = fit_dev >= 0 ? fmin(XE_PLAN_FIT_BIG_S, 0.25 * secs) : 0.0;
    int rc = xe_plan_dtr_phase(in, o, res, t_start, fmax(0.1, secs - fit_s), &ev, &cost, &t_ev, err);
    if (rc == XE_OK && fit_dev >= 0 && !(ev.len && cost <= xe_bound_cheapest(in) * (1 + 1e-12))) {
        rc = xe_plan_fit_phase(in, o, res, t_start, fit_dev, fit_s, 0, &ev, &cost, &t_ev, err);
        if (rc == 1) name = "fit-order";
        if (rc > 0) rc = XE_OK;
    }
    if (rc) {
        xe_schedule_clear(&ev);
        return rc;
    }
    res->dtr_alone = 1;
    res->time_total = xe_now() - t_start;
    if (!ev.len) { /* no schedule found, none proven impossible: the caller says so (exit 4 in solve) */
        res->bound = res->bound_any = xe_bound_cheapest(in);
        return XE_OK;
    }
    xe_plan_take_dtr(res, &ev, cost, t_ev, name);
    res->bound = res->bound_any = fmin(xe_bound_cheapest(in), cost);
    res->gap = xe_plan_rel_gap(cost, res->bound);
    res->optimal = isfinite(res->gap) && res->gap <= o->rel_gap;
    return XE_OK;
}

void xe_plan_take_dtr(xe_plan_result *res, xe_schedule *ev, double cost, double t_ev, const char *name)
{
    xe_stages_clear(&res->sol);
    xe_schedule_clear(&res->events);
    res->events = *ev;
    xe_schedule_init(ev);
    res->events_objective = res->objective = cost;
    res->name = name;
    res->fit_order = !strcmp(name, "fit-order");
    res->reordered = 0;
    res->search_order = 0;
    res->bound = -INFINITY; /* the stage bounds do not hold outside the stage class */
    res->gap = NAN;
    res->optimal = 0;
    res->infeasible = 0; /* a stage-class proof does not cover this schedule */
    res->time_best = t_ev;
}
