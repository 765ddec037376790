/* The planner's LNS on the exact search's schedule, restaged (src/solvers/plan_int.h;
 * docs/reorder.md, "Restaging"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

/* *ev (initialised by the caller) = st, a stage schedule of the restaged instance ri
 * costing c, as an event list in in's node ids, replayed there first. XE_ENOMEM, or
 * XE_EINTERNAL when the simulator rejects it (a bug), with e2 saying why. */
static int mapped_back(const xe_instance *in, const xe_instance *ri, const int *map, const xe_stages *st, double c,
                       xe_schedule *ev, xe_err *e2)
{
    xe_sim_result sr;
    int rc = xe_stages_to_schedule(ri, st, ev, e2);
    if (rc == XE_OK) {
        xe_schedule_unrestage(ev, map);
        rc = xe_schedule_replay(in, ev, c, &sr, e2);
    }
    if (rc && rc != XE_ENOMEM) {
        char why[sizeof e2->msg];
        memcpy(why, e2->msg, sizeof why);
        rc = xe_err_set(e2, XE_EINTERNAL, "the restaged schedule fails on the graph (a bug): %.400s", why);
    }
    if (rc) xe_schedule_clear(ev);
    return rc;
}

/* res->events = st (of ri, costing c), mapped back (mapped_back). */
static int take(const xe_instance *in, const xe_instance *ri, const int *map, const xe_stages *st, double c,
                xe_plan_result *res, xe_err *err)
{
    xe_schedule ev;
    xe_schedule_init(&ev);
    xe_err e2 = {{0}};
    int rc = mapped_back(in, ri, map, st, c, &ev, &e2);
    if (rc) return xe_err_set(err, rc, "plan: %s", e2.msg);
    xe_schedule_clear(&res->events);
    res->events = ev;
    res->events_objective = c;
    return XE_OK;
}

double xe_plan_refine_events(void *ctx, const xe_instance *in, xe_schedule *s, double cost)
{
    xe_plan_refine *rf = ctx;
    xe_instance *ri = NULL;
    int *map = NULL;
    xe_stages st = {0};
    xe_err e2 = {{0}};
    int rc = xe_instance_restage(in, s, &ri, &map, &st, &e2);
    if (rc && rc != XE_ENOMEM) return cost; /* not restaged: the candidate as it is */
    if (rc == XE_OK) rc = xe_heur_improve(ri, &st, rf->seconds, &e2);
    double c = rc == XE_OK ? xe_stages_cost(ri, &st) : INFINITY;
    if (rc == XE_OK && c < cost) {
        xe_schedule ev;
        xe_schedule_init(&ev);
        rc = mapped_back(in, ri, map, &st, c, &ev, &e2);
        if (rc == XE_OK) {
            xe_schedule_clear(s);
            *s = ev;
            cost = c;
        }
    }
    if (rc) xe_err_set(&rf->err, rc, "a candidate restaged and improved: %s", e2.msg);
    xe_stages_clear(&st);
    free(map);
    xe_instance_free(ri);
    return rc ? rc : cost;
}

int xe_plan_restage_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, xe_plan_bound *bs,
                          double improve_s, double lns_s, double t_start, double lb_any, double *t_events,
                          const char **name, xe_err *err)
{
    double t0 = xe_now();
    xe_plan_row r = {.method = "restaged", .objective = INFINITY, .bound = lb_any, .gap = NAN,
                     .milp_status = -1};
    xe_instance *ri = NULL;
    int *map = NULL;
    xe_stages st = {0};
    xe_lns_result lns = {0};
    xe_err e2 = {{0}};
    int rc = xe_instance_restage(in, &res->events, &ri, &map, &st, &e2);
    if (rc == XE_ENOMEM) {
        rc = xe_err_set(err, rc, "plan: %s", e2.msg);
        goto out;
    }
    if (rc) { /* not a bug of the schedule: say why and go on */
        snprintf(res->restage_status, sizeof res->restage_status, "not restaged: %.80s", e2.msg);
        r.status = res->restage_status;
        rc = XE_OK;
        goto emit;
    }
    if (o->phase) o->phase(o->ctx, "restaged");
    /* the local improvement first: milliseconds, and most of the gain (docs/reorder.md) */
    rc = xe_heur_improve(ri, &st, fmax(1e-3, improve_s), err);
    if (rc) goto out;
    double c = xe_stages_cost(ri, &st);
    int improved = c < res->events_objective;
    if (improved) {
        rc = take(in, ri, map, &st, c, res, err);
        if (rc) goto out;
        *name = "restaged";
        *t_events = xe_now() - t_start;
        xe_plan_trace(res, *t_events, c);
    }
    const char *lstop = NULL;
    if (lns_s > 0 && !xe_plan_stopped(o)) {
        xe_lns_opts lo;
        xe_lns_opts_default(&lo);
        lo.time_limit = fmax(1e-3, lns_s);
        lo.rel_gap = o->rel_gap;
        lo.bound = lb_any; /* holds for every schedule, so for the restaged instance's too */
        lo.bound_fn = xe_plan_bound_fn; /* the search bound, once its thread ends: likewise */
        lo.beaten_fn = xe_plan_reach_beats; /* and the reach bound's path, once cheaper */
        lo.bound_ctx = bs;
        lo.threads = o->threads;
        lo.isolate = 1;
        lo.interrupt = o->interrupt;
        lo.progress = o->progress;
        lo.slice = o->slice;
        double t_lns0 = xe_now() - t_start;
        rc = xe_lns_solve(ri, &st, &lo, &lns, err);
        if (rc) goto out;
        lstop = lns.stop;
        if (lns.objective < res->events_objective) {
            rc = take(in, ri, map, &lns.sol, lns.objective, res, err);
            if (rc) goto out;
            *name = "restaged-lns";
            *t_events = t_lns0 + lns.time_best;
            for (int k = 1; k < lns.ntrace; k++) /* entry 0 is its start, traced already */
                xe_plan_trace(res, t_lns0 + lns.trace_t[k], lns.trace_obj[k]);
        }
    }
    r.objective = res->events_objective;
    snprintf(res->restage_status, sizeof res->restage_status, "valid, %d stages; local improvement: %s%s%s",
             ri->g->n, improved ? "gained" : "no gain", lstop ? ", then LNS: " : "", lstop ? lstop : "");
    r.status = res->restage_status;
emit:
    r.gap = xe_plan_rel_gap(r.objective, lb_any);
    r.time = xe_now() - t0;
    xe_plan_emit(o, res, &r);
out:
    xe_lns_result_clear(&lns);
    xe_stages_clear(&st);
    free(map);
    xe_instance_free(ri);
    return rc;
}
