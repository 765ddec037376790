/* The search bound on a second thread while the planner's phases run (src/solvers/
 * plan_int.h; xe_bound_search, docs/lns.md "Bounds"). */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

static void *bound_main(void *arg)
{
    xe_plan_bound *b = arg;
    pthread_mutex_lock(&b->lock);
    b->started = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (b->reach) { /* first, for its share (allocates nothing either) */
        double until = b->deadline > 0 ? fmin(b->deadline, b->reach_until) : b->reach_until;
        double r = xe_rsearch_run(b->reach, until, &b->stop, &b->rst);
        int by_planner = b->stop != 0;
        pthread_mutex_lock(&b->lock);
        b->reach_by_planner = by_planner;
        b->reach_bound = r;
        b->reach_done = 1;
        pthread_mutex_unlock(&b->lock);
    }
    if (b->search) b->bound = xe_bsearch_run(b->search, b->deadline, &b->stop, &b->st); /* allocates nothing */
    pthread_mutex_lock(&b->lock);
    b->done = 1;
    pthread_cond_signal(&b->cond); /* xe_plan_bound_start may wait for it */
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The default memory limit: a quarter of the physical memory, at most
 * XE_PLAN_BOUND_SEARCH_BYTES (256 MiB when the size is unknown). */
static size_t bound_bytes(void)
{
    double phys = xe_plan_physical_bytes();
    if (phys <= 0) return (size_t)256 << 20;
    double quarter = phys / 4.0;
    return quarter < (double)XE_PLAN_BOUND_SEARCH_BYTES ? (size_t)quarter : XE_PLAN_BOUND_SEARCH_BYTES;
}

void xe_plan_bound_start(xe_plan_bound *b, const xe_instance *in, const xe_plan_opts *o, double t_start)
{
    *b = (xe_plan_bound){.bound = -INFINITY, .reach_bound = -INFINITY};
    if (o->no_bound_search || o->feasibility || o->mode == XE_PLAN_HEURISTIC) return;
    b->deadline = o->time_limit > 0 ? t_start + o->time_limit : 0.0;
    b->reach_until = o->time_limit > 0 ? t_start + XE_PLAN_REACH_SHARE * o->time_limit
                                       : t_start + XE_PLAN_REACH_DEFAULT_S;
    size_t bytes = o->bound_search_bytes ? o->bound_search_bytes : bound_bytes();
    b->reach = o->no_reach_bound ? NULL : xe_rsearch_new(in, bytes / 2);
    b->search = xe_bsearch_new(in, b->reach ? bytes / 2 : bytes);
    if (!b->search && !b->reach) return; /* nothing to search (or no memory): no row */
    b->search_ran = b->search != NULL;
    int lock = pthread_mutex_init(&b->lock, NULL) == 0;
    int cond = lock && pthread_cond_init(&b->cond, NULL) == 0;
    b->running = cond && pthread_create(&b->thread, NULL, bound_main, b) == 0;
    if (b->running) { /* started before the caller forks anything */
        pthread_mutex_lock(&b->lock);
        while (!b->started) pthread_cond_wait(&b->cond, &b->lock);
        /* and given XE_PLAN_BOUND_WAIT_S to end: a small instance's search ends in
         * microseconds, and without the wait whether the phases saw its bound was a
         * race (a new user's 4-node graph: an lns row "bound reached" on some runs,
         * none on others) */
        struct timespec until;
        if (clock_gettime(CLOCK_REALTIME, &until) == 0) {
            long ns = until.tv_nsec + (long)(XE_PLAN_BOUND_WAIT_S * 1e9);
            until.tv_sec += ns / 1000000000L;
            until.tv_nsec = ns % 1000000000L;
            while (!b->done && pthread_cond_timedwait(&b->cond, &b->lock, &until) == 0) {
            }
        }
        pthread_mutex_unlock(&b->lock);
        return;
    }
    if (cond) pthread_cond_destroy(&b->cond);
    if (lock) pthread_mutex_destroy(&b->lock);
    xe_bsearch_free(b->search);
    b->search = NULL;
    xe_rsearch_free(b->reach);
    b->reach = NULL;
}

double xe_plan_bound_finish(xe_plan_bound *b, const xe_plan_opts *o, xe_plan_result *res)
{
    if (!b->running) return -INFINITY;
    b->stop = 1;
    pthread_join(b->thread, NULL);
    b->running = 0;
    xe_bsearch_free(b->search);
    b->search = NULL;
    xe_rsearch_free(b->reach);
    b->reach = NULL;
    xe_schedule_clear(&b->reach_sched);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
    double reach = -INFINITY;
    if (b->reach_done) { /* its row first: it ran first */
        const xe_bound_search_stats *rt = &b->rst;
        reach = isfinite(b->reach_bound) ? b->reach_bound : -INFINITY;
        const char *why = rt->stop == XE_BOUND_SEARCH_EXACT && isinf(b->reach_bound)
                              ? "exact: no event list reaches the target within the budget"
                          : rt->stop == XE_BOUND_SEARCH_EXACT  ? "exact: the least cost of reaching the target"
                          : rt->stop == XE_BOUND_SEARCH_MEMORY ? "stopped at its memory limit"
                          : b->reach_by_planner                ? "stopped with the planner"
                                                               : "stopped at its share of the time";
        snprintf(res->reach_bound_status, sizeof res->reach_bound_status, "%s (%zu states, %ld expanded)", why,
                 rt->states, rt->expanded);
        if (o->phase) o->phase(o->ctx, "reach-bound");
        xe_plan_row r = {.method = "reach-bound", .status = res->reach_bound_status, .objective = INFINITY,
                         .bound = reach, .gap = NAN, .time = rt->seconds, .milp_status = -1};
        xe_plan_emit(o, res, &r);
    }
    if (!b->search_ran) return reach;
    const xe_bound_search_stats *st = &b->st;
    double bound = isfinite(b->bound) ? b->bound : -INFINITY; /* INFINITY: the exact search's to prove */
    const char *why = st->stop == XE_BOUND_SEARCH_EXACT    ? "optimum of the relaxed game"
                      : st->stop == XE_BOUND_SEARCH_MEMORY ? "stopped at its memory limit"
                                                            : "stopped with the planner";
    snprintf(res->bound_search_status, sizeof res->bound_search_status, "%s (%zu states, %ld expanded)", why,
             st->states, st->expanded);
    if (o->phase) o->phase(o->ctx, "search-bound"); /* its row, like every phase's, after its callback */
    xe_plan_row r = {.method = "search-bound", .status = res->bound_search_status, .objective = INFINITY,
                     .bound = bound, .gap = NAN, .time = st->seconds, .milp_status = -1};
    xe_plan_emit(o, res, &r);
    return fmax(bound, reach);
}

/* 1 when the thread runs and has returned: its search and results are the caller's to
 * read (without waiting; 0 while it searches or where it never ran). */
static int bound_ended(xe_plan_bound *b)
{
    if (!b->running) return 0;
    pthread_mutex_lock(&b->lock);
    int done = b->done;
    pthread_mutex_unlock(&b->lock);
    return done;
}

int xe_plan_bound_order(xe_plan_bound *b, int *order)
{
    if (b->path_asked || !b->search || !bound_ended(b)) return 0;
    b->path_asked = 1; /* the thread has returned: its search is the caller's to read */
    if (b->st.stop != XE_BOUND_SEARCH_EXACT || !isfinite(b->bound)) return 0;
    int drops = 0, rc = xe_bsearch_path(b->search, order, &drops);
    if (rc == XE_ENOMEM) return XE_ENOMEM;
    return rc != XE_OK ? 0 : drops == 0 ? 1 : 2;
}

double xe_plan_bound_ended(xe_plan_bound *b)
{
    if (!b->running) return -INFINITY;
    pthread_mutex_lock(&b->lock);
    double r = b->reach_done && isfinite(b->reach_bound) ? b->reach_bound : -INFINITY;
    double s = b->done && isfinite(b->bound) ? b->bound : -INFINITY;
    pthread_mutex_unlock(&b->lock);
    return fmax(r, s);
}

double xe_plan_bound_fn(void *ctx)
{
    return ctx ? xe_plan_bound_ended(ctx) : -INFINITY;
}

int xe_plan_bound_proves(xe_plan_bound *b, double incumbent, double rel_gap)
{
    double bound = xe_plan_bound_ended(b);
    if (!isfinite(incumbent) || !isfinite(bound)) return 0;
    double gap = xe_plan_rel_gap(incumbent, bound);
    return isfinite(gap) && gap <= rel_gap;
}

int xe_plan_reach_take(const xe_plan_opts *o, xe_plan_result *res, double t_start, xe_plan_bound *b,
                       double incumbent, int take, xe_err *err)
{
    if (!b->running || !b->reach || b->reach_taken) return 0;
    if (!b->reach_asked) { /* once it has ended exact: its schedule, built here once */
        pthread_mutex_lock(&b->lock);
        int done = b->reach_done;
        pthread_mutex_unlock(&b->lock);
        if (!done) return 0;
        b->reach_asked = 1; /* the thread has left the reach search: its path is ours to read */
        if (b->rst.stop != XE_BOUND_SEARCH_EXACT || !isfinite(b->reach_bound)) return 0;
        double t0 = xe_now();
        int rc = xe_rsearch_schedule(b->reach, &b->reach_sched, &b->reach_cost);
        b->reach_build_s = xe_now() - t0;
        if (rc == XE_ENOMEM) return xe_err_set(err, rc, "plan: out of memory reading the reach bound's path");
        if (rc != XE_OK) b->reach_cost = INFINITY; /* no schedule (nodes outside the target's ancestors) */
    }
    if (!b->reach_sched.len || !(b->reach_cost < incumbent * (1 - 1e-12))) return 0;
    if (!take) return 1;
    b->reach_taken = 1;
    double t = xe_now() - t_start, cost = b->reach_cost;
    xe_plan_take_dtr(res, &b->reach_sched, cost, t, "reach"); /* moved: reach_sched left empty */
    xe_plan_trace(res, t, cost);
    if (o->phase) o->phase(o->ctx, "reach");
    xe_plan_row r = {.method = "reach",
                     .status = "the reach bound's cheapest path: optimal over every schedule",
                     .objective = cost,
                     .bound = b->reach_bound,
                     .gap = xe_plan_rel_gap(cost, b->reach_bound),
                     .time = b->reach_build_s,
                     .milp_status = -1};
    xe_plan_emit(o, res, &r);
    return 1;
}

int xe_plan_reach_beats(void *ctx, double incumbent)
{
    xe_err e;
    return ctx && xe_plan_reach_take(NULL, NULL, 0.0, ctx, incumbent, 0, &e) == 1;
}
