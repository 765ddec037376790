/* xengine simulator — the concurrent timing (makespan) of a valid event list.
 *
 * Model (docs/simulator.md): one compute stream per device, one copy stream per ordered
 * device pair; events keep list order within their stream. An event starts at
 * max(its stream's free time, the ready time of every tensor it reads on that device,
 * the release time of the slot it writes); it lasts its cost. A free takes no time and
 * occupies no stream: it happens once every earlier event that read the tensor on that
 * device has ended, and that moment is the slot's release time. */
#include "clock.h"

#include <stdlib.h>

int xe_sim_clock_init(xe_sim_clock *c, int n, int ndev)
{
    size_t cells = (size_t)n * (size_t)ndev;
    c->n = n;
    c->ndev = ndev;
    c->makespan = 0.0;
    c->last_start = c->last_end = 0.0;
    for (int d = 0; d < XE_MAX_DEV; d++) {
        c->compute_free[d] = 0.0;
        for (int e = 0; e < XE_MAX_DEV; e++) c->copy_free[d][e] = 0.0;
    }
    if (cells == 0) cells = 1; /* calloc(0) may return NULL */
    c->ready = calloc(cells, sizeof *c->ready);
    c->lastread = calloc(cells, sizeof *c->lastread);
    c->release = calloc(cells, sizeof *c->release);
    if (!c->ready || !c->lastread || !c->release) {
        xe_sim_clock_free(c);
        return XE_ENOMEM;
    }
    return XE_OK;
}

void xe_sim_clock_free(xe_sim_clock *c)
{
    free(c->ready);
    free(c->lastread);
    free(c->release);
    c->ready = c->lastread = c->release = NULL;
}

static double max2(double a, double b) { return a > b ? a : b; }

/* v has just become resident on d at time t: ready, and read by nobody yet. */
static void made_resident(xe_sim_clock *c, int v, int d, double t)
{
    size_t k = (size_t)v * (size_t)c->ndev + (size_t)d;
    c->ready[k] = t;
    c->lastread[k] = t;
}

static void compute_event(xe_sim_clock *c, const xe_instance *in, int v, int d)
{
    const xe_graph *g = in->g;
    size_t nd = (size_t)c->ndev;
    double start = max2(c->compute_free[d], c->release[(size_t)v * nd + (size_t)d]);
    for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++)
        start = max2(start, c->ready[(size_t)g->pred[p] * nd + (size_t)d]);
    double end = start + xe_cost(in, v, d);
    for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) {
        size_t k = (size_t)g->pred[p] * nd + (size_t)d;
        c->lastread[k] = max2(c->lastread[k], end);
    }
    c->compute_free[d] = end;
    c->last_start = start;
    c->last_end = end;
    made_resident(c, v, d, end);
    c->makespan = max2(c->makespan, end);
}

static void copy_event(xe_sim_clock *c, const xe_instance *in, int v, int d, int e)
{
    size_t nd = (size_t)c->ndev;
    size_t src = (size_t)v * nd + (size_t)d, dst = (size_t)v * nd + (size_t)e;
    double start = max2(max2(c->copy_free[d][e], c->ready[src]), c->release[dst]);
    double end = start + xe_copy_cost(in, v, d, e);
    c->lastread[src] = max2(c->lastread[src], end);
    c->copy_free[d][e] = end;
    c->last_start = start;
    c->last_end = end;
    made_resident(c, v, e, end);
    c->makespan = max2(c->makespan, end);
}

void xe_sim_clock_event(xe_sim_clock *c, const xe_instance *in, const xe_event *e)
{
    switch (e->kind) {
    case XE_EV_COMPUTE: compute_event(c, in, e->node, e->dev); break;
    case XE_EV_COPY: copy_event(c, in, e->node, e->dev, e->dst); break;
    case XE_EV_FREE: {
        size_t k = (size_t)e->node * (size_t)c->ndev + (size_t)e->dev;
        c->release[k] = c->lastread[k];
        c->last_start = c->last_end = c->release[k];
        break;
    }
    default: XE_ASSERT(0, "event kind was validated by the replay"); break;
    }
}
