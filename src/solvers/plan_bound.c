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
    b->bound = xe_bsearch_run(b->search, b->deadline, &b->stop, &b->st); /* allocates nothing */
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
    *b = (xe_plan_bound){.bound = -INFINITY};
    if (o->no_bound_search || o->feasibility || o->mode == XE_PLAN_HEURISTIC) return;
    b->deadline = o->time_limit > 0 ? t_start + o->time_limit : 0.0;
    b->search = xe_bsearch_new(in, o->bound_search_bytes ? o->bound_search_bytes : bound_bytes());
    if (!b->search) return; /* nothing to search (or no memory): no row */
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
}

double xe_plan_bound_finish(xe_plan_bound *b, const xe_plan_opts *o, xe_plan_result *res)
{
    if (!b->running) return -INFINITY;
    b->stop = 1;
    pthread_join(b->thread, NULL);
    b->running = 0;
    xe_bsearch_free(b->search);
    b->search = NULL;
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
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
    return bound;
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
    if (b->path_asked || !bound_ended(b)) return 0;
    b->path_asked = 1; /* the thread has returned: its search is the caller's to read */
    if (b->st.stop != XE_BOUND_SEARCH_EXACT || !isfinite(b->bound)) return 0;
    int drops = 0, rc = xe_bsearch_path(b->search, order, &drops);
    if (rc == XE_ENOMEM) return XE_ENOMEM;
    return rc != XE_OK ? 0 : drops == 0 ? 1 : 2;
}

double xe_plan_bound_ended(xe_plan_bound *b)
{
    return bound_ended(b) && isfinite(b->bound) ? b->bound : -INFINITY;
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
