/* xengine executor — runs a schedule's events in order on the device pools and compares
 * the measured times and peaks with the simulator's prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "xengine/sim.h"

void xe_exec_opts_default(xe_exec_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->repeat = 1;
}

static const char *kind_name(xe_event_kind k)
{
    return k == XE_EV_COMPUTE ? "compute" : k == XE_EV_COPY ? "copy" : "free";
}

/* One pass over the events; when evt != NULL, evt[i] gets event i's seconds. */
static int run_once(xe_rt *rt, const xe_schedule *s, double *evt, xe_err *err)
{
    for (int d = 0; d < rt->ndev; d++) xe_pool_reset_peak(&rt->pool[d]);
    for (int i = 0; i < s->len; i++) {
        const xe_event *e = &s->ev[i];
        if (e->node < 0 || e->node >= rt->n || e->dev < 0 || e->dev >= rt->ndev ||
            (e->kind == XE_EV_COPY && (e->dst < 0 || e->dst >= rt->ndev || e->dst == e->dev)))
            return xe_err_set(err, XE_EINVAL, "event %d (%s): node or device out of range", i, kind_name(e->kind));
        double secs = 0;
        int rc;
        xe_err inner = {{0}};
        switch (e->kind) {
        case XE_EV_COMPUTE: rc = xe_rt_compute(rt, e->node, e->dev, &secs, &inner); break;
        case XE_EV_COPY: rc = xe_rt_copy(rt, e->node, e->dev, e->dst, &secs, &inner); break;
        default: rc = xe_rt_free(rt, e->node, e->dev, &inner); break;
        }
        if (rc) return xe_err_set(err, rc, "event %d: %s", i, inner.msg);
        if (evt) evt[i] = secs;
    }
    return XE_OK;
}

int xe_exec_run(const xe_net *net, const xe_train_map *map, const xe_instance *inst, const xe_schedule *s,
                xe_exec_data *data, const xe_exec_opts *o, xe_exec_result *res, xe_err *err)
{
    xe_exec_opts def;
    if (!o) {
        xe_exec_opts_default(&def);
        o = &def;
    }
    memset(res, 0, sizeof *res);
    res->ndev = inst->ndev;
    /* the prediction */
    xe_sim_result sr;
    xe_err serr = {{0}};
    res->sim_valid = xe_sim_run(inst, s, &sr, &serr) == XE_OK;
    if (!res->sim_valid) snprintf(res->sim_msg, sizeof res->sim_msg, "%s", serr.msg);
    res->pred_time = res->sim_valid ? sr.total_time : -1;
    for (int d = 0; d < inst->ndev; d++) {
        res->dev[d].budget = inst->dev[d].budget;
        res->dev[d].pred_peak = res->sim_valid ? sr.dev[d].peak : -1;
        res->dev[d].pred_time = res->sim_valid ? sr.dev[d].compute_time + sr.dev[d].copy_in_time : -1;
    }
    xe_rt rt;
    int rc = xe_rt_init(&rt, net, map, inst->g, data, inst->ndev, inst->dev, o->threads, o->seed, err);
    if (rc) return rc;
    /* per-event seconds of every measured pass; a device's time is the sum over its
     * events of each event's median over the passes (the profiler's statistic: a node's
     * cost is the median of its runs), so a pass disturbed by other load counts little */
    int repeat = o->repeat > 0 ? o->repeat : 1;
    size_t len = (size_t)(s->len > 0 ? s->len : 1);
    double *evt = calloc(len * (size_t)repeat, sizeof *evt), *col = malloc((size_t)repeat * sizeof *col);
    if (!evt || !col) rc = xe_err_set(err, XE_ENOMEM, "out of memory for %d x %d event times", repeat, s->len);
    for (int w = 0; w < o->warmup && !rc; w++) {
        rc = run_once(&rt, s, NULL, err);
        xe_rt_release_all(&rt);
    }
    for (int r = 0; r < repeat && !rc; r++) {
        rc = run_once(&rt, s, evt + (size_t)r * len, err);
        if (!rc && r + 1 < repeat) xe_rt_release_all(&rt);
    }
    for (int i = 0; i < s->len && !rc; i++) {
        const xe_event *e = &s->ev[i];
        if (e->kind == XE_EV_FREE) continue;
        for (int r = 0; r < repeat; r++) col[r] = evt[(size_t)r * len + (size_t)i];
        double med = xe_median(col, repeat);
        if (e->kind == XE_EV_COMPUTE) {
            res->dev[e->dev].compute_time += med;
            res->dev[e->dev].computes++;
        } else {
            res->dev[e->dst].copy_in_time += med;
            res->dev[e->dst].copies_in++;
        }
    }
    free(evt);
    free(col);
    if (!rc) {
        res->loss = rt.loss;
        xe_rt_collect_grads(&rt);
        for (int d = 0; d < inst->ndev; d++) {
            xe_exec_dev_result *r = &res->dev[d];
            r->threads = rt.dev[d].threads;
            r->peak = rt.pool[d].peak;
            r->time = r->compute_time + r->copy_in_time;
            r->time_err = r->pred_time > 0 ? (r->time - r->pred_time) / r->pred_time : 0;
            res->time += r->time;
        }
    }
    xe_rt_clear(&rt);
    return rc;
}
