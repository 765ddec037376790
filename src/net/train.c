/* Training and inference graphs of a network: the planner's xe_graph and the map from
 * its nodes back to operators (include/xengine/net.h; which tensors each backward node
 * reads, and why, is in docs/training-graph.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/net.h"

void xe_train_map_clear(xe_train_map *map)
{
    if (!map) return;
    free(map->op);
    free(map->role);
    free(map->fwd_node);
    free(map->bwd_node);
    memset(map, 0, sizeof *map);
    map->loss_node = -1;
}

/* Bytes of op k's forward node: its output, plus the saved mean and inverse std of
 * BatchNorm / InstanceNorm (2 x C float32) and Dropout's mask (1 byte per element) in
 * training. */
static int64_t fwd_mem(const xe_net *net, int k, int training)
{
    const xe_op *op = &net->op[k];
    const xe_tensor *y = &net->t[op->out];
    int64_t b = xe_tensor_bytes(y);
    if (!training) return b;
    if ((op->kind == XE_OP_BATCHNORM || op->kind == XE_OP_INSTANCENORM) && y->rank >= 2)
        b += 2 * y->dim[1] * 4;
    if (op->kind == XE_OP_DROPOUT) b += xe_tensor_numel(y);
    return b;
}

/* Bytes of op k's parameters (its XE_T_PARAM inputs). */
static int64_t param_mem(const xe_net *net, int k)
{
    const xe_op *op = &net->op[k];
    int64_t b = 0;
    for (int j = 0; j < op->nin; j++)
        if (net->t[op->in[j]].role == XE_T_PARAM) b += xe_tensor_bytes(&net->t[op->in[j]]);
    return b;
}

/* Bytes of op k's backward node: the gradient of every activation input (an input an
 * op produced, views folded), in input order. */
static int64_t bwd_mem(const xe_net *net, int k)
{
    const xe_op *op = &net->op[k];
    int64_t b = 0;
    for (int j = 0; j < op->nin; j++)
        if (xe_net_act_producer(net, op->in[j]) >= 0) b += xe_tensor_bytes(&net->t[op->in[j]]);
    return b;
}

/* Every tensor a non-view op reads or writes must have a known shape. */
static int check_shapes(const xe_net *net, xe_err *err)
{
    for (int k = 0; k < net->nops; k++) {
        const xe_op *op = &net->op[k];
        if (xe_op_is_view(op->kind)) continue;
        if (op->out < 0 || op->out >= net->nt || op->nin < 1 || op->nin > XE_OP_MAX_IN)
            return xe_err_set(err, XE_EINVAL, "net %s: op %d (%s): bad output tensor or input count", net->name, k,
                              op->name);
        for (int j = -1; j < op->nin; j++) {
            int i = j < 0 ? op->out : op->in[j];
            if (i < 0 || i >= net->nt)
                return xe_err_set(err, XE_EINVAL, "net %s: op %d (%s): input %d is not a tensor", net->name, k,
                                  op->name, j);
            if (net->t[i].rank < 0)
                return xe_err_set(err, XE_EINVAL, "net %s: op %s: tensor %s has no known shape (run shape inference)",
                                  net->name, op->name, net->t[i].name);
        }
    }
    return XE_OK;
}

/* A name not yet used by a tensor (ops == 0) or an op (ops == 1): base, base_1, ... */
static void fresh_name(const xe_net *net, int ops, const char *base, char *buf, size_t cap)
{
    for (int s = 0;; s++) {
        if (s == 0) snprintf(buf, cap, "%s", base);
        else snprintf(buf, cap, "%s_%d", base, s);
        int used = 0;
        if (ops) {
            for (int k = 0; k < net->nops && !used; k++) used = strcmp(net->op[k].name, buf) == 0;
        } else {
            used = xe_net_find_tensor(net, buf) >= 0;
        }
        if (!used) return;
    }
}

/* Index of the loss op: the last non-view op when it is a loss; otherwise a loss op is
 * appended on the last non-view op's output, with a new int64 labels tensor [N]. */
static int ensure_loss(xe_net *net, xe_err *err)
{
    int last = -1;
    for (int k = net->nops - 1; k >= 0 && last < 0; k--)
        if (!xe_op_is_view(net->op[k].kind)) last = k;
    if (last < 0) return xe_err_set(err, XE_EINVAL, "net %s: no operator to train", net->name);
    /* one loss, at the end: a loss elsewhere was dropped without a word (a second one,
     * or one mid-graph with a new loss appended after the last op) */
    for (int k = 0; k < net->nops; k++)
        if (net->op[k].kind == XE_OP_LOSS && k != last)
            return xe_err_set(err, XE_EUNSUPPORTED,
                              "net %s: loss op %s is not the last operator (%s is): xengine trains one loss, "
                              "computed last",
                              net->name, net->op[k].name, net->op[last].name);
    if (net->op[last].kind == XE_OP_LOSS) return last;
    int logits = net->op[last].out;
    if (net->t[logits].rank < 1)
        return xe_err_set(err, XE_EINVAL, "net %s: output %s of op %s has no batch dimension for the loss", net->name,
                          net->t[logits].name, net->op[last].name);
    int64_t n = net->t[logits].dim[0];
    char lname[64], oname[64], tname[64];
    fresh_name(net, 0, "labels", lname, sizeof lname);
    int lab = xe_net_add_tensor(net, lname, XE_T_LABEL, XE_DT_INT64, 1, &n, err);
    if (lab < 0) return lab;
    fresh_name(net, 1, "loss", oname, sizeof oname);
    fresh_name(net, 0, "loss_value", tname, sizeof tname);
    int in[2] = {logits, lab};
    int k = xe_net_add_op(net, XE_OP_LOSS, oname, 2, in, tname, err);
    if (k < 0) return k;
    xe_tensor *y = &net->t[net->op[k].out]; /* the mean loss: a float32 scalar */
    y->dtype = XE_DT_FLOAT32;
    y->rank = 0;
    return k;
}

int xe_net_loss_logits(const xe_net *net)
{
    for (int k = net->nops - 1; k >= 0; k--)
        if (net->op[k].kind == XE_OP_LOSS) return net->op[k].in[0];
    return -1;
}

static int alloc_map(xe_train_map *map, int nmax, int nops)
{
    memset(map, 0, sizeof *map);
    map->loss_node = -1;
    map->nops = nops;
    map->op = malloc((size_t)(nmax ? nmax : 1) * sizeof *map->op);
    map->role = malloc((size_t)(nmax ? nmax : 1));
    map->fwd_node = malloc((size_t)nops * sizeof *map->fwd_node);
    map->bwd_node = malloc((size_t)nops * sizeof *map->bwd_node);
    if (!map->op || !map->role || !map->fwd_node || !map->bwd_node) return -1;
    for (int k = 0; k < nops; k++) map->fwd_node[k] = map->bwd_node[k] = -1;
    return 0;
}

static int add_node(xe_graph *g, xe_train_map *map, int k, xe_train_role role, const char *name, const char *op,
                    int64_t mem, int64_t pmem, xe_err *err)
{
    int v = xe_graph_add_node(g, name, op, role == XE_TN_BACKWARD, mem, pmem, 0.0, err);
    if (v < 0) return v;
    map->op[v] = k;
    map->role[v] = (uint8_t)role;
    map->n = v + 1;
    return v;
}

/* Edges into op k's forward (or loss) node from the forward nodes of its inputs. */
static int fwd_edges(const xe_net *net, xe_graph *g, const xe_train_map *map, int k, xe_err *err)
{
    const xe_op *op = &net->op[k];
    for (int j = 0; j < op->nin; j++) {
        int p = xe_net_act_producer(net, op->in[j]);
        if (p >= 0 && map->fwd_node[p] >= 0) {
            int rc = xe_graph_add_edge(g, map->fwd_node[p], map->fwd_node[k], err);
            if (rc) return rc;
        }
    }
    return XE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Node names must be unique (costs and schedule files refer to them). */
static int check_unique_names(const xe_net *net, const xe_graph *g, xe_err *err)
{
    char **names = malloc((size_t)(g->n ? g->n : 1) * sizeof *names);
    if (!names) return xe_err_set(err, XE_ENOMEM, "net %s: out of memory checking node names", net->name);
    for (int v = 0; v < g->n; v++) names[v] = g->nodes[v].name;
    qsort(names, (size_t)g->n, sizeof *names, cmp_str);
    int rc = XE_OK;
    for (int v = 1; v < g->n && !rc; v++)
        if (strcmp(names[v - 1], names[v]) == 0)
            rc = xe_err_set(err, XE_EINVAL, "net %s: two graph nodes would be named '%s'", net->name, names[v]);
    free(names);
    return rc;
}

/* Forward nodes (views folded; the loss op skipped) with their edges. */
static int build_forward(const xe_net *net, xe_graph *g, xe_train_map *map, int training, xe_err *err)
{
    for (int k = 0; k < net->nops; k++) {
        const xe_op *op = &net->op[k];
        if (xe_op_is_view(op->kind) || op->kind == XE_OP_LOSS) continue;
        int v = add_node(g, map, k, XE_TN_FORWARD, op->name, xe_op_kind_name(op->kind), fwd_mem(net, k, training),
                         param_mem(net, k), err);
        if (v < 0) return v;
        map->fwd_node[k] = v;
        int rc = fwd_edges(net, g, map, k, err);
        if (rc) return rc;
    }
    return XE_OK;
}

int xe_net_training_graph(xe_net *net, xe_graph **gout, xe_train_map *map, xe_err *err)
{
    *gout = NULL;
    memset(map, 0, sizeof *map);
    map->loss_node = -1;
    int rc = check_shapes(net, err);
    if (rc) return rc;
    int loss = ensure_loss(net, err);
    if (loss < 0) return loss;
    if ((rc = check_shapes(net, err))) return rc;
    const int nops = net->nops;

    /* consumers of each op's output (views folded): CSR over ops */
    int *coff = calloc((size_t)nops + 1, sizeof *coff);
    int *cons = NULL, *fill = NULL;
    uint8_t *reach = calloc((size_t)nops, 1);
    xe_graph *g = xe_graph_new(net->name);
    if (!coff || !reach || !g) goto oom;
    for (int pass = 0; pass < 2; pass++) {
        for (int j = 0; j < nops; j++) {
            const xe_op *op = &net->op[j];
            if (xe_op_is_view(op->kind)) continue;
            for (int a = 0; a < op->nin; a++) {
                int p = xe_net_act_producer(net, op->in[a]);
                int dup = 0; /* j reading p's output twice is one consumer */
                for (int b = 0; b < a && !dup; b++) dup = xe_net_act_producer(net, op->in[b]) == p;
                if (p < 0 || dup) continue;
                if (pass == 0) coff[p + 1]++;
                else cons[fill[p]++] = j;
            }
        }
        if (pass == 0) {
            for (int k = 0; k < nops; k++) coff[k + 1] += coff[k];
            cons = malloc((size_t)(coff[nops] ? coff[nops] : 1) * sizeof *cons);
            fill = malloc((size_t)nops * sizeof *fill);
            if (!cons || !fill) goto oom;
            memcpy(fill, coff, (size_t)nops * sizeof *fill);
        }
    }
    /* ops whose output reaches the loss get a backward node */
    int nbwd = 0;
    reach[loss] = 1;
    for (int k = nops - 1; k >= 0; k--) {
        if (xe_op_is_view(net->op[k].kind) || k == loss) continue;
        for (int c = coff[k]; c < coff[k + 1] && !reach[k]; c++) reach[k] = reach[cons[c]];
        nbwd += reach[k];
    }
    if (alloc_map(map, nops + 1 + nbwd, nops)) goto oom;
    if ((rc = build_forward(net, g, map, 1, err))) goto fail;

    /* the loss node */
    const xe_op *lop = &net->op[loss];
    int logits = xe_net_resolve_view(net, lop->in[0]);
    int v = add_node(g, map, loss, XE_TN_LOSS, lop->name, xe_op_kind_name(XE_OP_LOSS),
                     xe_tensor_bytes(&net->t[logits]), 0, err);
    if (v < 0) {
        rc = v;
        goto fail;
    }
    map->loss_node = map->fwd_node[loss] = v;
    if ((rc = fwd_edges(net, g, map, loss, err))) goto fail;

    /* backward nodes in reverse order */
    for (int k = nops - 1; k >= 0; k--) {
        const xe_op *op = &net->op[k];
        if (xe_op_is_view(op->kind) || k == loss || !reach[k]) continue;
        char name[512], opname[64];
        snprintf(name, sizeof name, "%s_grad", op->name);
        snprintf(opname, sizeof opname, "%sGrad", xe_op_kind_name(op->kind));
        if ((v = add_node(g, map, k, XE_TN_BACKWARD, name, opname, bwd_mem(net, k), 0, err)) < 0) {
            rc = v;
            goto fail;
        }
        map->bwd_node[k] = v;
        /* gradient sources: the loss node or the backward node of every consumer */
        for (int c = coff[k]; c < coff[k + 1]; c++) {
            int j = cons[c];
            int src = j == loss ? map->loss_node : map->bwd_node[j];
            if (src >= 0 && (rc = xe_graph_add_edge(g, src, v, err))) goto fail;
        }
        /* the forward tensors the gradient needs */
        int reads = xe_op_bwd_reads(op->kind);
        if (reads & XE_BWD_READS_Y) {
            if ((rc = xe_graph_add_edge(g, map->fwd_node[k], v, err))) goto fail;
        }
        int nx = (reads & XE_BWD_READS_ALL) ? op->nin : (reads & XE_BWD_READS_X) ? 1 : 0;
        for (int a = 0; a < nx; a++) {
            int p = xe_net_act_producer(net, op->in[a]);
            if (p >= 0 && (rc = xe_graph_add_edge(g, map->fwd_node[p], v, err))) goto fail;
        }
    }
    if ((rc = check_unique_names(net, g, err))) goto fail;
    if ((rc = xe_graph_finalize(g, err))) goto fail;
    free(coff);
    free(cons);
    free(fill);
    free(reach);
    *gout = g;
    return XE_OK;
oom:
    rc = xe_err_set(err, XE_ENOMEM, "net %s: out of memory building the training graph", net->name);
fail:
    free(coff);
    free(cons);
    free(fill);
    free(reach);
    xe_graph_free(g);
    xe_train_map_clear(map);
    return rc;
}

int xe_net_inference_graph(const xe_net *net, xe_graph **gout, xe_train_map *map, xe_err *err)
{
    *gout = NULL;
    memset(map, 0, sizeof *map);
    map->loss_node = -1;
    int rc = check_shapes(net, err);
    if (rc) return rc;
    int n = 0;
    for (int k = 0; k < net->nops; k++) n += !xe_op_is_view(net->op[k].kind) && net->op[k].kind != XE_OP_LOSS;
    if (n == 0) return xe_err_set(err, XE_EINVAL, "net %s: no operator to run", net->name);
    xe_graph *g = xe_graph_new(net->name);
    if (!g || alloc_map(map, n, net->nops)) {
        rc = xe_err_set(err, XE_ENOMEM, "net %s: out of memory building the inference graph", net->name);
        goto fail;
    }
    if ((rc = build_forward(net, g, map, 0, err))) goto fail;
    if ((rc = check_unique_names(net, g, err))) goto fail;
    if ((rc = xe_graph_finalize(g, err))) goto fail;
    *gout = g;
    return XE_OK;
fail:
    xe_graph_free(g);
    xe_train_map_clear(map);
    return rc;
}
