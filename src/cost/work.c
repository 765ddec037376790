/* FLOPs and bytes moved per node of a training or inference graph (the formulas and
 * their reasoning are in docs/cost-model.md). */
#include <string.h>

#include "xengine/cost.h"

static double numel(const xe_net *net, int i)
{
    return (double)xe_tensor_numel(&net->t[i]);
}

static double bytes_of(const xe_net *net, int i)
{
    return (double)xe_tensor_bytes(&net->t[i]);
}


/* Whether input i of an op gets a gradient: an activation or a trained parameter. */
static int wants_grad(const xe_net *net, int i)
{
    return xe_net_act_producer(net, i) >= 0 || net->t[i].role == XE_T_PARAM;
}

/* Length of the dot product behind every output element of a convolution: Cin/g x
 * kh x kw, read off the weights W [Cout, Cin/g, kh, kw] (ConvTranspose: W [Cin,
 * Cout/g, kh, kw], per input element). */
static double conv_dot(const xe_net *net, const xe_op *op)
{
    const xe_tensor *w = &net->t[op->in[1]];
    double d = 1;
    for (int a = 1; a < w->rank; a++) d *= (double)w->dim[a];
    return d;
}

static double pool_window(const xe_op *op)
{
    double kh = op->kernel[0] > 0 ? (double)op->kernel[0] : 1;
    double kw = op->kernel[1] > 0 ? (double)op->kernel[1] : 1;
    return kh * kw;
}

/* Inner dimension K of Gemm (A [M,K], or [K,M] transposed) and MatMul (A [..., K]). */
static double inner_dim(const xe_net *net, const xe_op *op)
{
    const xe_tensor *a = &net->t[op->in[0]];
    if (a->rank < 1) return 1;
    if (op->kind == XE_OP_GEMM && a->rank == 2) return (double)(op->trans_a ? a->dim[0] : a->dim[1]);
    return (double)a->dim[a->rank - 1];
}

/* Forward FLOPs of op k (training: BatchNorm computes batch statistics). */
static double fwd_flops(const xe_net *net, int k, int training)
{
    const xe_op *op = &net->op[k];
    double y = numel(net, op->out), x = numel(net, op->in[0]);
    int bias = op->nin >= 3;
    switch (op->kind) {
    case XE_OP_CONV: return 2 * y * conv_dot(net, op) + (bias ? y : 0);
    case XE_OP_CONV_TRANSPOSE: return 2 * x * conv_dot(net, op) + (bias ? y : 0);
    case XE_OP_GEMM: return 2 * y * inner_dim(net, op) + (bias ? y : 0);
    case XE_OP_MATMUL: return 2 * y * inner_dim(net, op);
    case XE_OP_MAXPOOL:
    case XE_OP_AVGPOOL: return y * pool_window(op);
    case XE_OP_GLOBAL_AVGPOOL: return x;
    case XE_OP_LRN: return y * (2.0 * (double)op->size + 4);
    case XE_OP_BATCHNORM: return training ? 7 * y : 2 * y;
    case XE_OP_INSTANCENORM: return 7 * y;
    case XE_OP_SOFTMAX: return 5 * y;
    case XE_OP_SIGMOID: return 4 * y; /* negate, exp, add, divide */
    case XE_OP_CONCAT: return 0;
    case XE_OP_LOSS: return 8 * x; /* softmax, log, mean and the gradient on the logits */
    default: return y;             /* element-wise: Relu, LeakyRelu, Clip, Dropout, Add */
    }
}

/* Backward FLOPs of op k. */
static double bwd_flops(const xe_net *net, int k)
{
    const xe_op *op = &net->op[k];
    double y = numel(net, op->out), x = numel(net, op->in[0]);
    int bias = op->nin >= 3 && wants_grad(net, op->in[2]);
    switch (op->kind) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE: {
        double f = fwd_flops(net, k, 1) - (op->nin >= 3 ? y : 0); /* one convolution */
        /* data gradient (X an activation) and weight gradient (W trained) */
        return f * ((xe_net_act_producer(net, op->in[0]) >= 0) + wants_grad(net, op->in[1])) + (bias ? y : 0);
    }
    case XE_OP_GEMM:
    case XE_OP_MATMUL: {
        double f = 2 * y * inner_dim(net, op); /* one matrix product */
        return f * (wants_grad(net, op->in[0]) + wants_grad(net, op->in[1])) + (bias ? y : 0);
    }
    case XE_OP_MAXPOOL: return y * pool_window(op) + x;  /* find the arg max, scatter into zeros */
    case XE_OP_AVGPOOL: return y * pool_window(op);
    case XE_OP_GLOBAL_AVGPOOL: return x;
    case XE_OP_LRN: return y * (2.0 * (double)op->size + 6);
    case XE_OP_BATCHNORM:
    case XE_OP_INSTANCENORM: return 8 * y; /* d(scale), d(B) reductions and dX */
    case XE_OP_SOFTMAX: return 4 * y;
    case XE_OP_SIGMOID: return 3 * y; /* dY Y (1 - Y) */
    case XE_OP_CONCAT: return 0;
    case XE_OP_ADD: {
        int n = 0;
        for (int a = 0; a < op->nin; a++) n += xe_net_act_producer(net, op->in[a]) >= 0;
        return y * n;
    }
    default: return y; /* Relu, LeakyRelu, Clip, Dropout: one multiply or select each */
    }
}

/* Bytes of every input tensor of op k (activations, inputs and parameters). */
static double input_bytes(const xe_net *net, int k)
{
    const xe_op *op = &net->op[k];
    double b = 0;
    for (int a = 0; a < op->nin; a++) b += bytes_of(net, op->in[a]);
    return b;
}

static double param_bytes(const xe_net *net, int k)
{
    const xe_op *op = &net->op[k];
    double b = 0;
    for (int a = 0; a < op->nin; a++)
        if (net->t[op->in[a]].role == XE_T_PARAM) b += bytes_of(net, op->in[a]);
    return b;
}

int xe_cost_node_work(const xe_net *net, const xe_graph *g, const xe_train_map *map, int v, xe_work *out,
                      xe_err *err)
{
    memset(out, 0, sizeof *out);
    if (v < 0 || v >= g->n || v >= map->n)
        return xe_err_set(err, XE_EINVAL, "cost model: node %d is not in the graph", v);
    int k = map->op[v];
    if (k < 0 || k >= net->nops || k >= map->nops)
        return xe_err_set(err, XE_EINVAL, "cost model: node %d (%s) maps to no operator", v, g->nodes[v].name);
    const xe_op *op = &net->op[k];
    int training = map->loss_node >= 0;
    switch ((xe_train_role)map->role[v]) {
    case XE_TN_FORWARD:
        out->flops = fwd_flops(net, k, training);
        out->bytes = input_bytes(net, k) + (double)g->nodes[v].mem;
        break;
    case XE_TN_LOSS: /* reads logits and labels, writes the gradient */
        out->flops = fwd_flops(net, k, 1);
        out->bytes = input_bytes(net, k) + (double)g->nodes[v].mem;
        break;
    case XE_TN_BACKWARD: {
        out->flops = bwd_flops(net, k);
        /* what the node reads: the slice of each incoming gradient that belongs to op
         * k's output, and the saved forward tensors whole */
        double b = (double)g->nodes[v].mem;
        for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) {
            int u = g->pred[p];
            if (map->role[u] == XE_TN_FORWARD) b += (double)g->nodes[u].mem;
            else b += bytes_of(net, op->out);
        }
        /* parameters: read W for the data gradient, write dW; a network input X read
         * for the weight gradient (it is no node) */
        double pb = param_bytes(net, k);
        b += 2 * pb;
        if (pb > 0)
            for (int a = 0; a < op->nin; a++)
                if (net->t[op->in[a]].role == XE_T_INPUT) b += bytes_of(net, op->in[a]);
        out->bytes = b;
        break;
    }
    default: return xe_err_set(err, XE_EINVAL, "cost model: node %d (%s) has no role", v, g->nodes[v].name);
    }
    return XE_OK;
}
