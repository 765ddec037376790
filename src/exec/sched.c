/* xengine executor — reference schedules: keep everything (no recomputation) on one
 * device or on given devices, and recompute every forward tensor before each backward
 * use. The executor's tests and `xengine run --check-grads` compare gradients with them. */
#include <stdlib.h>
#include <string.h>

#include "xengine/exec.h"

static int push(xe_schedule *s, xe_event_kind k, int v, int d, xe_err *err)
{
    if (xe_schedule_push(s, k, v, d, -1)) return xe_err_set(err, XE_ENOMEM, "out of memory building a schedule");
    return XE_OK;
}

int xe_exec_keep_all_schedule(const xe_graph *g, int d, xe_schedule *out, xe_err *err)
{
    /* every node on d: xe_exec_keep_all_placed then copies nothing */
    if (d < 0 || d >= XE_MAX_DEV) return xe_err_set(err, XE_EINVAL, "keep-all schedule: device %d", d);
    int *dev_of = malloc((size_t)(g->n ? g->n : 1) * sizeof *dev_of);
    if (!dev_of) return xe_err_set(err, XE_ENOMEM, "out of memory building a schedule");
    for (int v = 0; v < g->n; v++) dev_of[v] = d;
    int rc = xe_exec_keep_all_placed(g, dev_of, d + 1, out, err);
    free(dev_of);
    return rc;
}

int xe_exec_keep_all_placed(const xe_graph *g, const int *dev_of, int ndev, xe_schedule *out, xe_err *err)
{
    int n = g->n, rc = XE_OK;
    if (ndev < 1 || ndev > XE_MAX_DEV) return xe_err_set(err, XE_EINVAL, "keep-all schedule: %d devices", ndev);
    for (int v = 0; v < n; v++)
        if (dev_of[v] < 0 || dev_of[v] >= ndev)
            return xe_err_set(err, XE_EINVAL, "keep-all schedule: node %d on device %d of %d", v, dev_of[v], ndev);
    uint8_t *on = calloc((size_t)(n ? n : 1) * (size_t)ndev, 1); /* on[v * ndev + d]: v resident on d */
    if (!on) return xe_err_set(err, XE_ENOMEM, "out of memory building a schedule");
    for (int v = 0; v < n && !rc; v++) {
        int d = dev_of[v];
        for (int p = g->pred_off[v]; !rc && p < g->pred_off[v + 1]; p++) { /* inputs from their devices */
            int u = g->pred[p];
            if (on[(size_t)u * ndev + d]) continue;
            if (xe_schedule_push(out, XE_EV_COPY, u, dev_of[u], d))
                rc = xe_err_set(err, XE_ENOMEM, "out of memory building a schedule");
            on[(size_t)u * ndev + d] = 1;
        }
        if (!rc) rc = push(out, XE_EV_COMPUTE, v, d, err);
        on[(size_t)v * ndev + d] = 1;
        /* each input after its last user, on every device that holds it */
        for (int p = g->pred_off[v]; !rc && p < g->pred_off[v + 1]; p++) {
            int u = g->pred[p];
            if (xe_graph_last_use(g, u) != v) continue;
            for (int e = 0; e < ndev && !rc; e++)
                if (on[(size_t)u * ndev + e]) {
                    rc = push(out, XE_EV_FREE, u, e, err);
                    on[(size_t)u * ndev + e] = 0;
                }
        }
        if (!rc && xe_graph_nsucc(g, v) == 0) {
            rc = push(out, XE_EV_FREE, v, d, err);
            on[(size_t)v * ndev + d] = 0;
        }
    }
    free(on);
    return rc;
}

int xe_exec_first_devices(const xe_schedule *s, int n, int *dev_of)
{
    int split = 0;
    for (int v = 0; v < n; v++) dev_of[v] = -1;
    for (int i = 0; i < s->len; i++) {
        const xe_event *e = &s->ev[i];
        if (e->kind != XE_EV_COMPUTE) continue;
        if (dev_of[e->node] < 0) dev_of[e->node] = e->dev;
        else split += dev_of[e->node] != e->dev;
    }
    return split;
}

/* Last user of v with index <= limit, or -1. */
static int last_use_upto(const xe_graph *g, int v, int limit)
{
    int last = -1;
    for (int s = g->succ_off[v]; s < g->succ_off[v + 1]; s++)
        if (g->succ[s] <= limit && g->succ[s] > last) last = g->succ[s];
    return last;
}

int xe_exec_remat_schedule(const xe_graph *g, const xe_train_map *map, int d, xe_schedule *out, xe_err *err)
{
    int n = g->n, L = map->loss_node, rc = XE_OK;
    uint8_t *res = calloc((size_t)n, 1), *want = calloc((size_t)n, 1);
    int *left = calloc((size_t)n, sizeof *left); /* chain users still to run */
    if (!res || !want || !left) {
        rc = xe_err_set(err, XE_ENOMEM, "out of memory building a schedule");
        goto done;
    }
    /* forward and loss: each tensor freed after its last user up to the loss; only the
     * loss output survives */
    for (int v = 0; v <= L && !rc; v++) {
        rc = push(out, XE_EV_COMPUTE, v, d, err);
        res[v] = 1;
        for (int p = g->pred_off[v]; !rc && p < g->pred_off[v + 1]; p++) {
            int u = g->pred[p];
            if (res[u] && last_use_upto(g, u, L) == v) {
                rc = push(out, XE_EV_FREE, u, d, err);
                res[u] = 0;
            }
        }
        if (!rc && v != L && last_use_upto(g, v, L) < 0) {
            rc = push(out, XE_EV_FREE, v, d, err);
            res[v] = 0;
        }
    }
    /* backward: before node b, recompute the forward nodes it reads with every forward
     * ancestor they need (not resident), freeing each as soon as the chain is done with it */
    for (int b = L + 1; b < n && !rc; b++) {
        memset(want, 0, (size_t)n);
        for (int p = g->pred_off[b]; p < g->pred_off[b + 1]; p++)
            if (g->pred[p] < L && !res[g->pred[p]]) want[g->pred[p]] = 1;
        for (int v = L - 1; v >= 0; v--) /* ancestors, backwards */
            if (want[v])
                for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++)
                    if (!res[g->pred[p]]) want[g->pred[p]] = 1;
        memset(left, 0, (size_t)n * sizeof *left);
        for (int v = 0; v < L; v++)
            if (want[v])
                for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) left[g->pred[p]]++;
        for (int p = g->pred_off[b]; p < g->pred_off[b + 1]; p++) left[g->pred[p]]++;
        for (int v = 0; v < L && !rc; v++) {
            if (!want[v]) continue;
            rc = push(out, XE_EV_COMPUTE, v, d, err);
            res[v] = 1;
            for (int p = g->pred_off[v]; !rc && p < g->pred_off[v + 1]; p++) {
                int u = g->pred[p];
                if (want[u] && --left[u] == 0) {
                    rc = push(out, XE_EV_FREE, u, d, err);
                    res[u] = 0;
                }
            }
        }
        if (rc) break;
        rc = push(out, XE_EV_COMPUTE, b, d, err);
        res[b] = 1;
        for (int p = g->pred_off[b]; !rc && p < g->pred_off[b + 1]; p++) {
            int u = g->pred[p];
            if (want[u] || xe_graph_last_use(g, u) == b) {
                rc = push(out, XE_EV_FREE, u, d, err);
                res[u] = 0;
            }
        }
        if (!rc && xe_graph_nsucc(g, b) == 0) {
            rc = push(out, XE_EV_FREE, b, d, err);
            res[b] = 0;
        }
    }
    /* whatever is left (the loss output when nothing reads it after the loss) */
    for (int v = 0; v < n && !rc; v++)
        if (res[v]) rc = push(out, XE_EV_FREE, v, d, err);
done:
    free(res);
    free(want);
    free(left);
    return rc;
}
