/* xengine executor — the runtime: resolves which buffers a node's kernel reads and
 * writes on a device, gradient sources, parameter-gradient contributions, and the three
 * event primitives (compute, copy, free) on the device pools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double xe_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static int build_layout(xe_rt *rt, xe_err *err)
{
    const xe_net *net = rt->net;
    const xe_train_map *map = rt->map;
    const xe_graph *g = rt->g;
    int nops = net->nops;
    if (map->n != g->n || map->nops != nops)
        return xe_err_set(err, XE_EINVAL, "net %s: the training map (%d nodes, %d ops) does not match the graph "
                          "(%d nodes) and net (%d ops)", net->name, map->n, map->nops, g->n, nops);
    rt->din_off = malloc((size_t)nops * XE_OP_MAX_IN * sizeof *rt->din_off);
    rt->src_off = calloc((size_t)nops + 1, sizeof *rt->src_off);
    rt->contrib = calloc((size_t)nops * XE_OP_MAX_IN, sizeof *rt->contrib);
    if (!rt->din_off || !rt->src_off || !rt->contrib) goto oom;
    for (int k = 0; k < nops; k++) {
        const xe_op *op = &net->op[k];
        int64_t off = 0;
        for (int j = 0; j < XE_OP_MAX_IN; j++) {
            int64_t *o = &rt->din_off[k * XE_OP_MAX_IN + j];
            *o = -1;
            if (j < op->nin && xe_net_act_producer(net, op->in[j]) >= 0) {
                *o = off;
                off += xe_tensor_numel(&net->t[op->in[j]]);
            }
        }
        int b = map->bwd_node[k];
        if (b >= 0 && g->nodes[b].mem != off * 4)
            return xe_err_set(err, XE_EINVAL, "node %s: %lld B in the graph, but the gradients of op %s's "
                              "activation inputs take %lld B", g->nodes[b].name, (long long)g->nodes[b].mem,
                              op->name, (long long)(off * 4));
        int f = map->fwd_node[k];
        if (f >= 0 && !xe_op_is_view(op->kind) && g->nodes[f].mem < xe_tensor_bytes(&net->t[op->out]))
            return xe_err_set(err, XE_EINVAL, "node %s: %lld B in the graph, less than op %s's output (%lld B)",
                              g->nodes[f].name, (long long)g->nodes[f].mem, op->name,
                              (long long)xe_tensor_bytes(&net->t[op->out]));
    }
    for (int v = 0; v < g->n; v++)
        if (map->op[v] < 0 || map->op[v] >= nops || map->role[v] > XE_TN_BACKWARD)
            return xe_err_set(err, XE_EINVAL, "node %s: bad entry in the training map", g->nodes[v].name);
    /* gradient sources of each op's output, in (consumer op, input slot) order */
    for (int pass = 0; pass < 2; pass++) {
        int cnt = 0;
        for (int k = 0; k < nops; k++) {
            if (pass == 1) rt->src_off[k] = cnt;
            if (xe_op_is_view(net->op[k].kind) || map->bwd_node[k] < 0) continue;
            for (int c = 0; c < nops; c++) {
                const xe_op *cop = &net->op[c];
                if (xe_op_is_view(cop->kind)) continue;
                int src = cop->kind == XE_OP_LOSS ? map->loss_node : map->bwd_node[c];
                if (src < 0) continue;
                for (int j = 0; j < cop->nin; j++) {
                    if (xe_net_act_producer(net, cop->in[j]) != k) continue;
                    if (cop->kind == XE_OP_LOSS && j != 0) continue;
                    if (pass == 1) {
                        rt->src_node[cnt] = src;
                        rt->src_elem[cnt] = cop->kind == XE_OP_LOSS ? 0 : rt->din_off[c * XE_OP_MAX_IN + j];
                    }
                    cnt++;
                }
            }
        }
        if (pass == 0) {
            rt->src_node = malloc((size_t)(cnt ? cnt : 1) * sizeof *rt->src_node);
            rt->src_elem = malloc((size_t)(cnt ? cnt : 1) * sizeof *rt->src_elem);
            if (!rt->src_node || !rt->src_elem) goto oom;
        } else {
            rt->src_off[nops] = cnt;
        }
    }
    return XE_OK;
oom:
    return xe_err_set(err, XE_ENOMEM, "net %s: out of memory setting up the executor", net->name);
}

int xe_rt_init(xe_rt *rt, const xe_net *net, const xe_train_map *map, const xe_graph *g, xe_exec_data *data,
               int ndev, const xe_device *devs, const int *threads, uint64_t seed, xe_err *err)
{
    memset(rt, 0, sizeof *rt);
    rt->net = net;
    rt->map = map;
    rt->g = g;
    rt->data = data;
    rt->n = g->n;
    rt->seed = seed;
    rt->caller_threads = xe_omp_threads();
    if (data->nt != net->nt)
        return xe_err_set(err, XE_EINVAL, "net %s: the step data was made for %d tensors, the net has %d",
                          net->name, data->nt, net->nt);
    int rc = build_layout(rt, err);
    if (rc) goto fail;
    size_t nd = (size_t)g->n * (size_t)ndev;
    rt->buf = calloc(nd, sizeof *rt->buf);
    rt->res = calloc(nd, 1);
    rt->slot = calloc(nd, sizeof *rt->slot);
    if (!rt->buf || !rt->res || !rt->slot) {
        rc = xe_err_set(err, XE_ENOMEM, "net %s: out of memory setting up the executor", net->name);
        goto fail;
    }
    for (int d = 0; d < ndev; d++) {
        if ((rc = xe_kdev_init(&rt->dev[d], threads ? threads[d] : 0, err))) goto fail;
        rt->ndev = d + 1;
        snprintf(rt->devname[d], sizeof rt->devname[d], "%s", devs[d].name);
        xe_pool_init(&rt->pool[d], devs[d].name, devs[d].budget);
    }
    return XE_OK;
fail:
    xe_rt_clear(rt);
    return rc;
}

void xe_rt_release_all(xe_rt *rt)
{
    if (!rt->res) return;
    for (int v = 0; v < rt->n; v++)
        for (int d = 0; d < rt->ndev; d++) {
            size_t i = (size_t)v * rt->ndev + d;
            if (!rt->res[i]) continue;
            xe_pool_free(&rt->pool[d], rt->buf[i], rt->g->nodes[v].mem);
            rt->buf[i] = NULL;
            rt->res[i] = 0;
        }
}

void xe_rt_clear(xe_rt *rt)
{
    if (rt->caller_threads > 0) xe_omp_set_threads(rt->caller_threads);
    xe_rt_release_all(rt);
    if (rt->slot)
        for (size_t i = 0; i < (size_t)rt->n * (size_t)rt->ndev; i++) xe_kslot_clear(&rt->slot[i]);
    if (rt->contrib)
        for (int i = 0; i < rt->net->nops * XE_OP_MAX_IN; i++) free(rt->contrib[i]);
    for (int d = 0; d < rt->ndev; d++) {
        xe_pool_clear(&rt->pool[d]);
        xe_kdev_clear(&rt->dev[d]);
    }
    free(rt->buf);
    free(rt->res);
    free(rt->slot);
    free(rt->din_off);
    free(rt->src_off);
    free(rt->src_node);
    free(rt->src_elem);
    free(rt->contrib);
    free(rt->gsum);
    memset(rt, 0, sizeof *rt);
}

/* The resident buffer of node v on d, or NULL with an error naming `what`. */
static const float *need(xe_rt *rt, int node, int v, int d, const char *what, int *rc, xe_err *err)
{
    size_t i = (size_t)v * rt->ndev + d;
    if (rt->res[i]) return rt->buf[i] ? rt->buf[i] : (const float *)rt; /* 0 B: any non-NULL pointer */
    *rc = xe_err_set(err, XE_EINVAL, "compute %s on %s: %s %s is not resident there", rt->g->nodes[node].name,
                     rt->devname[d], what, rt->g->nodes[v].name);
    return NULL;
}

/* Value of input j of op k for node `node` on d: an activation's resident buffer, or
 * the data of an input / parameter. */
static const float *input(xe_rt *rt, int node, int k, int j, int d, int *rc, xe_err *err)
{
    const xe_net *net = rt->net;
    int t = net->op[k].in[j];
    int p = xe_net_act_producer(net, t);
    if (p >= 0) return need(rt, node, rt->map->fwd_node[p], d, "input", rc, err);
    int r = xe_net_resolve_view(net, t);
    if (!rt->data->val[r])
        *rc = xe_err_set(err, XE_EUNSUPPORTED, "compute %s: input %s is not float32 data the executor holds",
                         rt->g->nodes[node].name, net->t[r].name);
    return rt->data->val[r];
}

/* The gradient flowing into op k's output, summed over its sources in fixed order. */
static const float *out_grad(xe_rt *rt, int node, int k, int d, int *rc, xe_err *err)
{
    int64_t n = xe_tensor_numel(&rt->net->t[rt->net->op[k].out]);
    int s0 = rt->src_off[k], s1 = rt->src_off[k + 1];
    const float *first = NULL;
    for (int s = s0; s < s1; s++) {
        const float *b = need(rt, node, rt->src_node[s], d, "gradient source", rc, err);
        if (!b) return NULL;
        if (s == s0) first = b + rt->src_elem[s];
    }
    if (s1 - s0 == 1) return first;
    if (rt->gsum_cap < n) {
        float *p = realloc(rt->gsum, (size_t)n * sizeof *p);
        if (!p) {
            *rc = xe_err_set(err, XE_ENOMEM, "compute %s: out of memory", rt->g->nodes[node].name);
            return NULL;
        }
        rt->gsum = p;
        rt->gsum_cap = n;
    }
    if (s1 == s0) {
        memset(rt->gsum, 0, (size_t)n * sizeof *rt->gsum);
        return rt->gsum;
    }
    memcpy(rt->gsum, first, (size_t)n * sizeof *rt->gsum);
    for (int s = s0 + 1; s < s1; s++) {
        const float *b = rt->buf[(size_t)rt->src_node[s] * rt->ndev + d] + rt->src_elem[s];
        for (int64_t i = 0; i < n; i++) rt->gsum[i] += b[i];
    }
    return rt->gsum;
}

int xe_rt_compute(xe_rt *rt, int v, int d, double *secs, xe_err *err)
{
    const xe_net *net = rt->net;
    const xe_train_map *map = rt->map;
    const xe_node *nd = &rt->g->nodes[v];
    int k = map->op[v], role = map->role[v], rc = XE_OK;
    const xe_op *op = &net->op[k];
    size_t vi = (size_t)v * rt->ndev + d;
    xe_kargs a;
    memset(&a, 0, sizeof a);
    a.net = net;
    a.k = k;
    a.dev = &rt->dev[d];
    a.slot = &rt->slot[vi];
    a.seed = rt->seed;
    a.labels = rt->data->labels;
    *secs = 0;
    /* gather the inputs first: a missing one leaves nothing allocated */
    if (role != XE_TN_BACKWARD) {
        for (int j = 0; j < op->nin; j++) {
            if (net->t[xe_net_resolve_view(net, op->in[j])].role == XE_T_LABEL) continue;
            if (!(a.in[j] = input(rt, v, k, j, d, &rc, err))) return rc ? rc : XE_EINTERNAL;
        }
    } else {
        int reads = xe_op_bwd_reads(op->kind);
        for (int j = 0; j < op->nin; j++) {
            int act = xe_net_act_producer(net, op->in[j]) >= 0;
            int want = !act || (reads & XE_BWD_READS_ALL) || (j == 0 && (reads & XE_BWD_READS_X));
            if (want && !(a.in[j] = input(rt, v, k, j, d, &rc, err))) return rc ? rc : XE_EINTERNAL;
        }
        if (reads & XE_BWD_READS_Y) {
            int f = map->fwd_node[k];
            if (!(a.out = (float *)need(rt, v, f, d, "forward output", &rc, err))) return rc;
            a.out_bytes = rt->g->nodes[f].mem;
        }
        if (!(a.dout = out_grad(rt, v, k, d, &rc, err))) return rc;
    }
    /* the output buffer */
    if (!rt->res[vi]) {
        void *p;
        if ((rc = xe_pool_alloc(&rt->pool[d], nd->name, nd->mem, &p, err))) return rc;
        rt->buf[vi] = p;
        rt->res[vi] = 1;
    }
    if (role != XE_TN_BACKWARD) {
        a.out = rt->buf[vi];
        a.out_bytes = nd->mem;
    } else {
        for (int j = 0; j < op->nin; j++) {
            int64_t off = rt->din_off[k * XE_OP_MAX_IN + j];
            if (off >= 0) {
                a.din[j] = rt->buf[vi] + off;
                continue;
            }
            int t = op->in[j];
            if (!rt->data->grad[t]) continue;
            float **c = &rt->contrib[k * XE_OP_MAX_IN + j];
            if (!*c && !(*c = calloc((size_t)xe_tensor_numel(&net->t[t]), sizeof **c)))
                return xe_err_set(err, XE_ENOMEM, "compute %s: out of memory", nd->name);
            a.dparam[j] = *c;
        }
    }
    xe_kdev_enter(&rt->dev[d]);
    double t0 = xe_now();
    rc = role == XE_TN_BACKWARD ? xe_kern_backward(&a, err) : xe_kern_forward(&a, err);
    *secs = xe_now() - t0;
    if (!rc && role == XE_TN_LOSS) rt->loss = a.loss;
    return rc;
}

int xe_rt_copy(xe_rt *rt, int v, int d, int e, double *secs, xe_err *err)
{
    size_t si = (size_t)v * rt->ndev + d, di = (size_t)v * rt->ndev + e;
    const xe_node *nd = &rt->g->nodes[v];
    *secs = 0;
    if (!rt->res[si])
        return xe_err_set(err, XE_EINVAL, "copy %s from %s to %s: not resident on %s", nd->name, rt->devname[d],
                          rt->devname[e], rt->devname[d]);
    if (!rt->res[di]) {
        void *p;
        int rc = xe_pool_alloc(&rt->pool[e], nd->name, nd->mem, &p, err);
        if (rc) return rc;
        rt->buf[di] = p;
        rt->res[di] = 1;
    }
    double t0 = xe_now();
    if (nd->mem > 0) memcpy(rt->buf[di], rt->buf[si], (size_t)nd->mem);
    *secs = xe_now() - t0;
    return XE_OK;
}

int xe_rt_free(xe_rt *rt, int v, int d, xe_err *err)
{
    size_t i = (size_t)v * rt->ndev + d;
    if (!rt->res[i])
        return xe_err_set(err, XE_EINVAL, "free %s on %s: not resident there", rt->g->nodes[v].name,
                          rt->devname[d]);
    xe_pool_free(&rt->pool[d], rt->buf[i], rt->g->nodes[v].mem);
    rt->buf[i] = NULL;
    rt->res[i] = 0;
    return XE_OK;
}

void xe_rt_collect_grads(xe_rt *rt)
{
    const xe_net *net = rt->net;
    xe_exec_data *data = rt->data;
    for (int t = 0; t < net->nt; t++)
        if (data->grad[t]) memset(data->grad[t], 0, (size_t)xe_tensor_numel(&net->t[t]) * sizeof(float));
    for (int k = 0; k < net->nops; k++)
        for (int j = 0; j < net->op[k].nin; j++) {
            const float *c = rt->contrib[k * XE_OP_MAX_IN + j];
            if (!c) continue;
            int t = net->op[k].in[j];
            int64_t n = xe_tensor_numel(&net->t[t]);
            for (int64_t i = 0; i < n; i++) data->grad[t][i] += c[i];
        }
}
