/* The planner's fit-order phase (src/solvers/plan_int.h, docs/reorder.md, "Fitting an
 * order to a budget"): where one device runs every node at its cheapest (the only device,
 * or the GPU beside a slower CPU), a topological order whose no-recomputation peak fits
 * that device's budget makes computing every node once there, each output freed after its
 * last reader, a schedule as cheap as any can be. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "xengine/dtr.h"
#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

int xe_plan_fit_device(const xe_instance *in)
{
    const xe_graph *g = in->g;
    double once = xe_bound_cheapest(in);
    for (int d = 0; d < in->ndev; d++) {
        double sum = 0;
        int ok = 1;
        for (int v = 0; v < g->n && ok; v++) {
            if (!xe_can_run(in, v, d)) ok = 0;
            else sum += xe_cost(in, v, d);
        }
        /* every node once on d is the bound over every schedule: no copy can help */
        if (ok && sum <= once * (1 + 1e-12)) return d;
    }
    return -1;
}

int xe_plan_fit_target(const xe_instance *in, const xe_plan_opts *o)
{
    if (o->no_reorder || o->no_fit || o->feasibility || in->g->n < 3 || xe_plan_stopped(o)) return -1;
    int d = xe_plan_fit_device(in);
    if (d < 0) return -1;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    return peak > in->dev[d].budget ? d : -1; /* at or above the index order's peak, that order fits */
}

int xe_plan_once_in_order(const xe_instance *in, int dev, const int *order, xe_schedule *s, double *cost, xe_err *err)
{
    /* where the order fits, DTR in it evicts nothing: every node once, each output freed
     * after its last reader, replayed by the simulator before it is returned */
    int recomputes = 0;
    int rc = xe_dtr_schedule(in, dev, order, 0, INFINITY, s, cost, &recomputes, err);
    if (rc == XE_OK && recomputes > 0)
        rc = xe_err_set(err, XE_EINFEASIBLE, "the order needs %d recomputation%s on %s", recomputes,
                        recomputes == 1 ? "" : "s", in->dev[dev].name);
    return rc;
}

int xe_plan_fit_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start, int dev,
                      double seconds, int late, xe_schedule *ev, double *ev_cost, double *t_ev, xe_err *err)
{
    const xe_graph *g = in->g;
    double t0 = xe_now();
    if (o->phase) o->phase(o->ctx, "fit-order");
    int *order = malloc(((size_t)g->n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory for the fit order");
    xe_order_fit_result fr;
    xe_err e2 = {{0}};
    /* the exact search, then annealing over orders (docs/reorder.md); late, the annealing
     * alone with other random bits (the search would only repeat its first pass) */
    int annealed = late;
    int rc = late ? xe_order_anneal(g, in->dev[dev].budget, NULL, XE_PLAN_FIT_LATE_SEED, t0 + seconds, o->interrupt,
                                    order, &fr, &e2)
                  : xe_order_fit_within(g, in->dev[dev].budget, seconds, o->interrupt, order, &fr, &annealed, &e2);
    if (rc) {
        free(order);
        return xe_err_set(err, rc, "plan: %s", e2.msg);
    }
    xe_schedule s;
    xe_schedule_init(&s);
    if (fr.status == XE_FIT_FOUND) {
        double c = INFINITY;
        rc = xe_plan_once_in_order(in, dev, order, &s, &c, &e2);
        if (rc == XE_OK) { /* replaces the schedule in hand */
            xe_schedule_clear(ev);
            *ev = s;
            xe_schedule_init(&s);
            *ev_cost = c;
            *t_ev = xe_now() - t_start;
            xe_plan_trace(res, *t_ev, c);
            if (res->peak_index <= 0) res->peak_index = xe_instance_norecompute_peak(g);
            res->peak_order = fr.peak;
        } else if (rc == XE_EINFEASIBLE) { /* the order's peak was checked: cannot happen */
            rc = xe_err_set(err, XE_EINTERNAL, "plan: the fit order (peak %lld B) did not replay within %lld B: %s",
                            (long long)fr.peak, (long long)in->dev[dev].budget, e2.msg);
        } else {
            rc = xe_err_set(err, rc, "plan: %s", e2.msg);
        }
    }
    xe_schedule_clear(&s);
    free(order);
    if (rc) return rc;
    if (fr.status == XE_FIT_FOUND)
        snprintf(res->fit_status, sizeof res->fit_status,
                 "every node once in an order that fits (peak %.1f%% of the graph order's%s): optimal",
                 100.0 * (double)fr.peak / (double)res->peak_index,
                 late ? ", by annealing, late" : annealed ? ", by annealing" : "");
    else if (late)
        snprintf(res->fit_status, sizeof res->fit_status, "%s (annealing again, %ld moves)",
                 xe_plan_stopped(o) ? "interrupted" : "no order found within its time", fr.states);
    else if (fr.status == XE_FIT_NONE) /* on one device every schedule recomputes; beside others, copies may do */
        snprintf(res->fit_status, sizeof res->fit_status, "no order fits %s's budget: every one searched (%ld set%s)%s",
                 in->dev[dev].name, fr.sets, fr.sets == 1 ? "" : "s",
                 in->ndev == 1 ? ", recomputation needed" : "");
    else
        snprintf(res->fit_status, sizeof res->fit_status, "%s (%ld set%s searched%s)",
                 xe_plan_stopped(o) ? "interrupted" : "no order found within its time", fr.sets,
                 fr.sets == 1 ? "" : "s", annealed ? ", then annealing" : "");
    int found = fr.status == XE_FIT_FOUND;
    xe_plan_emit_heur(o, res, "fit-order", res->fit_status, found ? *ev_cost : INFINITY, xe_now() - t0);
    return found ? 1 : fr.status == XE_FIT_CUT ? 2 : 0;
}
