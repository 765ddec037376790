/* Budget sweeps and maximum batch (include/xengine/sweep.h): every method at one budget,
 * each schedule replayed by the simulator; the largest batch a method fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/baselines.h"
#include "xengine/plan.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/sweep.h"
#include "xengine/timer.h"

static const char *const method_name[XE_SWEEP_NMETHODS] = {"planner", "gpu-only", "cpu-only", "checkpoint-all",
                                                           "chen-sqrt"};

const char *xe_sweep_method_name(int m)
{
    return m >= 0 && m < XE_SWEEP_NMETHODS ? method_name[m] : "?";
}

void xe_sweep_opts_default(const xe_instance *in, xe_sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit = 10.0;
    o->threads = 1;
    o->gpu = o->cpu = -1;
    for (int d = in->ndev - 1; d >= 0; d--) {
        if (in->dev[d].kind == XE_DEV_GPU) o->gpu = d;
        else o->cpu = d;
    }
    o->swept = o->gpu >= 0 ? o->gpu : 0;
    o->planner = 1;
    o->only = -1;
}

static void cell_none(xe_sweep_cell *c, int status)
{
    memset(c, 0, sizeof *c);
    c->status = status;
    c->cost = INFINITY;
    c->bound = NAN;
    c->which = "";
}

/* c from a replay (status FOUND). */
static void fill(const xe_sweep_opts *o, const xe_sim_result *r, const char *what, xe_sweep_cell *c)
{
    c->status = XE_SWEEP_FOUND;
    c->cost = r->total_time;
    c->peak = r->dev[o->swept].peak;
    c->recomputes = r->recomputes;
    c->copies = r->copies;
    c->which = what;
    c->outside_stages = 0;
}

/* c from a replay's outcome rc (xe_stages_replay, xe_schedule_replay): filled (status
 * FOUND) when it passed, else the error, every one a bug (XE_EINTERNAL) but memory. */
static int judged(int rc, const xe_sim_result *r, const xe_err *e2, const xe_sweep_opts *o, const char *what,
                  xe_sweep_cell *c, xe_err *err)
{
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "sweep: %s: out of memory", what);
    if (rc == XE_EINTERNAL) return xe_err_set(err, rc, "sweep: %s: %s", what, e2->msg);
    if (rc) return xe_err_set(err, XE_EINTERNAL, "sweep: the %s schedule fails the simulator (a bug): %s", what, e2->msg);
    fill(o, r, what, c);
    return XE_OK;
}

/* Replays st in the simulator and fills c from it (status FOUND). The cost is the
 * simulator's; it must equal the stage objective (else a bug: XE_EINTERNAL). */
static int judge(const xe_instance *in, const xe_sweep_opts *o, const xe_stages *st, const char *what,
                 xe_sweep_cell *c, xe_err *err)
{
    xe_err e2 = {{0}};
    xe_sim_result r;
    return judged(xe_stages_replay(in, st, &r, &e2), &r, &e2, o, what, c, err);
}

/* The same for an event list (the planner's pebbling schedule, docs/pebble.md, or a
 * stage schedule of a low-peak order mapped back to the graph's node ids): replayed
 * by the simulator, whose total time must equal the planner's objective. */
static int judge_events(const xe_instance *in, const xe_sweep_opts *o, const xe_schedule *s, double objective,
                        const char *what, xe_sweep_cell *c, xe_err *err)
{
    xe_err e2 = {{0}};
    xe_sim_result r;
    int rc = judged(xe_schedule_replay(in, s, objective, &r, &e2), &r, &e2, o, what, c, err);
    if (rc == XE_OK) c->outside_stages = 1;
    return rc;
}

/* One baseline on device d into st (initialised by the callee): XE_OK, XE_EINFEASIBLE
 * or an error. */
static int run_baseline(const xe_instance *in, int m, int d, xe_stages *st, xe_err *err)
{
    switch (m) {
    case XE_SWEEP_CHECKPOINT_ALL: return xe_heur_checkpoint_all(in, d, st, err);
    case XE_SWEEP_CHEN_SQRT: return xe_chen_sqrt(in, d, st, err);
    default: return xe_one_device(in, d, st, err);
    }
}

/* 1 when a cheap proof shows that no schedule exists: a node fits no device with its
 * inputs (xe_bound_cheapest is infinite), or some device's budget is below the footprint
 * of a node that no other device can hold (xe_budget_range's lower bound). */
static int ruled_out(const xe_instance *in)
{
    if (!isfinite(xe_bound_cheapest(in))) return 1;
    for (int d = 0; d < in->ndev; d++) {
        int64_t lo = 0;
        xe_err e2;
        if (xe_budget_range(in, d, &lo, NULL, &e2) == XE_OK && in->dev[d].budget < lo) return 1;
    }
    return 0;
}

/* The planner kept the event list s (cost seconds): a copy into o->keep_events for the
 * next budget, o->keep cleared (the next point's stage seed is gone). */
static int keep_events(const xe_sweep_opts *o, const xe_schedule *s, double cost, xe_err *err)
{
    if (o->keep) xe_stages_clear(o->keep);
    if (!o->keep_events || s == o->keep_events) return XE_OK;
    xe_schedule_clear(o->keep_events);
    if (xe_schedule_append(o->keep_events, s)) return xe_err_set(err, XE_ENOMEM, "sweep: out of memory");
    if (o->keep_events_cost) *o->keep_events_cost = cost;
    return XE_OK;
}

/* The planner: xe_plan in auto mode (include/xengine/plan.h) with the baselines' stage
 * schedules in base[] and the carried seed as extra starts; time limit 0: the best start
 * only (heuristic mode, no pebbling); feasibility: stop at the first schedule (on one
 * device the pebbling schedule counts: docs/pebble.md). A cheap proof that no
 * schedule exists (ruled_out) skips planning. */
static int plan(const xe_instance *in, const xe_sweep_opts *o, xe_stages *base, const xe_sweep_cell *bc,
                xe_sweep_cell *c, xe_err *err)
{
    double t0 = xe_now();
    if (ruled_out(in)) {
        cell_none(c, XE_SWEEP_PROVEN);
        c->time = xe_now() - t0;
        return XE_OK;
    }
    xe_plan_start starts[XE_SWEEP_NMETHODS + 1];
    int ns = 0;
    for (int m = 1; m < XE_SWEEP_NMETHODS; m++)
        if (bc[m].status == XE_SWEEP_FOUND) starts[ns++] = (xe_plan_start){&base[m], method_name[m]};
    if (o->seed) starts[ns++] = (xe_plan_start){o->seed, "carried"};
    xe_plan_opts po;
    xe_plan_opts_default(&po);
    po.mode = o->time_limit > 0 ? XE_PLAN_AUTO : XE_PLAN_HEURISTIC;
    if (o->time_limit > 0) po.time_limit = o->time_limit;
    po.threads = o->threads;
    po.feasibility = o->feasibility;
    po.no_pebbling = !(o->time_limit > 0); /* the best start only: no search */
    po.no_chain_dp = !(o->time_limit > 0);
    po.no_anneal = !(o->time_limit > 0);
    po.starts = starts;
    po.nstarts = ns;
    xe_plan_result pr;
    xe_err e2 = {{0}};
    int rc = xe_plan(in, &po, &pr, &e2);
    /* the event list carried from a smaller budget, where the planner has nothing
     * cheaper: the sweep's cost then never rises with the budget either */
    double found = (pr.events.len || pr.sol.R) ? pr.objective : INFINITY;
    int carry = rc == XE_OK && o->seed_events && o->seed_events->len && /* cheaper beyond rounding */
                (!isfinite(found) ? isfinite(o->seed_events_cost) : o->seed_events_cost < found * (1 - 1e-9));
    if (rc) {
        rc = xe_err_set(err, rc, "sweep: planner: %s", e2.msg);
    } else if (carry) {
        rc = judge_events(in, o, o->seed_events, o->seed_events_cost, "carried", c, err);
        /* its bound must hold for every schedule: the planner's own where its schedule
         * is the exact search's (not another order's), else every node once */
        double any = pr.events.len && !pr.reordered ? pr.bound : xe_bound_cheapest(in);
        if (rc == XE_OK) c->bound = fmin(any, c->cost);
        rc = rc ? rc : keep_events(o, o->seed_events, c->cost, err);
    } else if (pr.events.len) { /* outside the stage structure, or in another order: an event seed */
        rc = judge_events(in, o, &pr.events, pr.objective, xe_plan_name(&pr), c, err);
        if (rc == XE_OK) c->bound = fmin(pr.bound, c->cost);
        rc = rc ? rc : keep_events(o, &pr.events, c->cost, err);
    } else if (pr.sol.R) {
        rc = judge(in, o, &pr.sol, pr.name, c, err);
        if (rc == XE_OK) c->bound = fmin(pr.bound, c->cost);
        if (rc == XE_OK && o->keep) {
            xe_stages_clear(o->keep);
            if (xe_stages_copy(o->keep, &pr.sol)) rc = xe_err_set(err, XE_ENOMEM, "sweep: out of memory");
        }
        if (rc == XE_OK && o->keep_events) xe_schedule_clear(o->keep_events);
    } else {
        /* proven only for every schedule: the exact one-device search's proof, not the
         * MILP's over stage schedules */
        cell_none(c, pr.infeasible_any ? XE_SWEEP_PROVEN : XE_SWEEP_NONE);
        if (!pr.infeasible && isfinite(pr.bound)) c->bound = pr.bound;
    }
    c->time = xe_now() - t0;
    xe_plan_result_clear(&pr);
    return rc;
}

int xe_sweep_point(const xe_instance *in, const xe_sweep_opts *o, xe_sweep_cell cell[XE_SWEEP_NMETHODS],
                   xe_err *err)
{
    if (!(o->time_limit >= 0) || o->threads < 1 || o->gpu >= in->ndev || o->cpu >= in->ndev || o->swept < 0 ||
        o->swept >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "sweep: bad options (time limit %g, threads %d, devices %d/%d/%d)",
                          o->time_limit, o->threads, o->gpu, o->cpu, o->swept);
    xe_stages base[XE_SWEEP_NMETHODS];
    memset(base, 0, sizeof base);
    int rc = XE_OK;
    for (int m = 0; m < XE_SWEEP_NMETHODS; m++) cell_none(&cell[m], XE_SWEEP_NA);
    for (int m = 1; m < XE_SWEEP_NMETHODS && rc == XE_OK; m++) {
        int d = m == XE_SWEEP_CPU_ONLY ? o->cpu : o->gpu;
        if (d < 0 || (o->only > XE_SWEEP_PLANNER && m != o->only)) continue;
        double t0 = xe_now();
        xe_err e2 = {{0}};
        int r = run_baseline(in, m, d, &base[m], &e2);
        if (r == XE_OK) rc = judge(in, o, &base[m], method_name[m], &cell[m], err);
        else if (r == XE_EINFEASIBLE) cell[m].status = XE_SWEEP_NONE;
        else rc = xe_err_set(err, r, "sweep: %s: %s", method_name[m], e2.msg);
        cell[m].time = xe_now() - t0;
    }
    if (rc == XE_OK && o->planner) rc = plan(in, o, base, cell, &cell[XE_SWEEP_PLANNER], err);
    for (int m = 0; m < XE_SWEEP_NMETHODS; m++) xe_stages_clear(&base[m]);
    return rc;
}

/* Builds batch b and evaluates method m there; *fits = 1 when it found a schedule. */
static int probe(xe_sweep_build_fn build, void *ctx, int m, const xe_sweep_opts *o, int64_t b, int full,
                 xe_sweep_cell *c, int *fits, int *probes, xe_err *err)
{
    xe_instance *in = NULL;
    int rc = build(ctx, b, &in, err);
    if (rc) return rc;
    if (probes) ++*probes;
    xe_sweep_opts po = *o;
    po.planner = m == XE_SWEEP_PLANNER;
    po.only = m == XE_SWEEP_PLANNER ? -1 : m; /* the planner starts from every baseline */
    po.feasibility = !full;
    xe_sweep_cell cells[XE_SWEEP_NMETHODS];
    rc = xe_sweep_point(in, &po, cells, err);
    xe_instance_free(in);
    if (rc) return rc;
    *c = cells[m];
    *fits = c->status == XE_SWEEP_FOUND;
    return XE_OK;
}

int xe_sweep_max_batch(xe_sweep_build_fn build, void *ctx, int m, const xe_sweep_opts *o, int64_t limit,
                       int64_t *batch, xe_sweep_cell *cell, int *probes, xe_err *err)
{
    if (m < 0 || m >= XE_SWEEP_NMETHODS || limit < 1)
        return xe_err_set(err, XE_EINVAL, "sweep: max batch: bad method %d or limit %lld", m, (long long)limit);
    if (probes) *probes = 0;
    *batch = 0;
    cell_none(cell, XE_SWEEP_NONE);
    if ((m == XE_SWEEP_CPU_ONLY ? o->cpu : m == XE_SWEEP_PLANNER ? 0 : o->gpu) < 0) {
        cell->status = XE_SWEEP_NA;
        return XE_OK;
    }
    xe_sweep_cell c, good;
    int fits = 0, rc;
    int64_t ok = 0, bad = 0; /* largest success, smallest failure (0: none yet) */
    for (int64_t b = 1;; b = b * 2 > limit ? limit : b * 2) {
        if ((rc = probe(build, ctx, m, o, b, 0, &c, &fits, probes, err))) return rc;
        if (!fits) {
            bad = b;
            break;
        }
        ok = b;
        good = c;
        if (b == limit) break;
    }
    if (ok == 0) {
        *cell = c;
        return XE_OK;
    }
    while (bad && bad - ok > 1) {
        int64_t mid = ok + (bad - ok) / 2;
        if ((rc = probe(build, ctx, m, o, mid, 0, &c, &fits, probes, err))) return rc;
        if (fits) {
            ok = mid;
            good = c;
        } else {
            bad = mid;
        }
    }
    *batch = ok;
    *cell = good;
    if (m == XE_SWEEP_PLANNER) { /* the full planner for the cost at the batch found */
        if ((rc = probe(build, ctx, m, o, ok, 1, &c, &fits, probes, err))) return rc;
        if (fits) *cell = c;
    }
    return XE_OK;
}

int xe_sweep_batch_upper(xe_sweep_build_fn build, void *ctx, int64_t limit, int64_t *ub, int *probes, xe_err *err)
{
    if (limit < 1) return xe_err_set(err, XE_EINVAL, "sweep: max batch: bad limit %lld", (long long)limit);
    if (probes) *probes = 0;
    *ub = 0;
    int64_t ok = 0, bad = 0;
    for (int64_t b = 1;;) {
        xe_instance *in = NULL;
        int rc = build(ctx, b, &in, err);
        if (rc) return rc;
        if (probes) ++*probes;
        int out = ruled_out(in);
        xe_instance_free(in);
        if (out) bad = b;
        else ok = b;
        if (bad && bad - ok <= 1) break;
        if (!bad && ok == limit) break;
        b = bad ? ok + (bad - ok) / 2 : (b * 2 > limit ? limit : b * 2);
    }
    *ub = ok;
    return XE_OK;
}
