/* xengine executor — the profiler: the median time of every node's kernel on every
 * device and of every tensor's copy between every device pair (XEngine, sec. 5: each
 * operator measured with oneDNN, median of repeated runs). */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

void xe_profile_opts_default(xe_profile_opts *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = 2;
    o->runs = 5;
    o->seed = 1;
}

int xe_profile_run(const xe_net *net, const xe_train_map *map, xe_instance *inst, const xe_profile_opts *o,
                   xe_err *err)
{
    xe_profile_opts def;
    if (!o) {
        xe_profile_opts_default(&def);
        o = &def;
    }
    if (o->runs < 1 || o->warmup < 0)
        return xe_err_set(err, XE_EINVAL, "profile: runs must be >= 1 and warmup >= 0");
    const xe_graph *g = inst->g;
    xe_device devs[XE_MAX_DEV];
    for (int d = 0; d < inst->ndev; d++) {
        devs[d] = inst->dev[d];
        devs[d].budget = 0; /* the profiler holds every tensor: no budget */
    }
    xe_exec_data data;
    int rc = xe_exec_data_init(net, o->seed, &data, err);
    if (rc) return rc;
    xe_rt rt;
    double *t = malloc((size_t)o->runs * sizeof *t);
    if (!t) {
        xe_exec_data_clear(&data);
        return xe_err_set(err, XE_ENOMEM, "profile: out of memory");
    }
    if ((rc = xe_rt_init(&rt, net, map, g, &data, inst->ndev, devs, o->threads, o->seed, err))) {
        free(t);
        xe_exec_data_clear(&data);
        return rc;
    }
    double secs;
    double *tv = malloc((size_t)g->n * (size_t)o->runs * sizeof *tv);
    if (!tv) rc = xe_err_set(err, XE_ENOMEM, "profile: out of memory");
    for (int d = 0; d < inst->ndev && !rc; d++) {
        /* whole steps in order with every tensor kept, so that each node runs on the
         * inputs its producers just wrote, as in an executed schedule: o->warmup untimed
         * steps, then o->runs timed ones; the median per node */
        for (int w = 0; w < o->warmup + (o->warmup == 0) && !rc; w++) /* >= 1: the first makes the inputs */
            for (int v = 0; v < g->n && !rc; v++) rc = xe_rt_compute(&rt, v, d, &secs, err);
        for (int r = 0; r < o->runs && !rc; r++)
            for (int v = 0; v < g->n && !rc; v++) rc = xe_rt_compute(&rt, v, d, &tv[(size_t)v * o->runs + r], err);
        for (int v = 0; v < g->n && !rc; v++)
            inst->cost[(int64_t)v * inst->ndev + d] = xe_median(&tv[(size_t)v * o->runs], o->runs);
        xe_rt_release_all(&rt);
    }
    free(tv);
    /* copies: a plain memory copy between two buffers of the tensor's size */
    for (int v = 0; v < g->n && !rc; v++) {
        int64_t b = g->nodes[v].mem;
        void *src = b ? malloc((size_t)b) : NULL, *dst = b ? malloc((size_t)b) : NULL;
        if (b && (!src || !dst)) {
            rc = xe_err_set(err, XE_ENOMEM, "profile: out of memory copying %s", g->nodes[v].name);
        } else {
            if (b) memset(src, 1, (size_t)b);
            for (int d = 0; d < inst->ndev; d++)
                for (int e = 0; e < inst->ndev; e++) {
                    if (d == e) continue;
                    for (int w = 0; w < o->warmup; w++)
                        if (b) memcpy(dst, src, (size_t)b);
                    for (int r = 0; r < o->runs; r++) {
                        double t0 = xe_now();
                        if (b) memcpy(dst, src, (size_t)b);
                        t[r] = xe_now() - t0;
                    }
                    inst->copy[((int64_t)v * inst->ndev + d) * inst->ndev + e] = xe_median(t, o->runs);
                }
        }
        free(src);
        free(dst);
    }
    xe_rt_clear(&rt);
    free(t);
    xe_exec_data_clear(&data);
    return rc;
}
