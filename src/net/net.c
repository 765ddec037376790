/* The network IR: tensors and operators in topological order (include/xengine/net.h).
 * Shape inference is in shape.c, training/inference graphs in train.c. */
#include "xengine/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t len = strlen(s);
    char *p = malloc(len + 1);
    if (p) memcpy(p, s, len + 1);
    return p;
}

xe_net *xe_net_new(const char *name)
{
    xe_net *net = calloc(1, sizeof *net);
    if (!net) return NULL;
    net->name = dup_str(name ? name : "");
    if (!net->name) {
        free(net);
        return NULL;
    }
    return net;
}

void xe_net_free(xe_net *net)
{
    if (!net) return;
    for (int i = 0; i < net->nt; i++) {
        free(net->t[i].name);
        free(net->t[i].data);
        free(net->t[i].idata);
    }
    for (int k = 0; k < net->nops; k++) free(net->op[k].name);
    for (int f = 0; f < net->nsf; f++) free(net->sf[f].name);
    free(net->sf);
    free(net->t);
    free(net->op);
    free(net->name);
    free(net);
}

int xe_net_find_tensor(const xe_net *net, const char *name)
{
    for (int i = 0; i < net->nt; i++)
        if (strcmp(net->t[i].name, name) == 0) return i;
    return -1;
}

static int find_op(const xe_net *net, const char *name)
{
    for (int k = 0; k < net->nops; k++)
        if (strcmp(net->op[k].name, name) == 0) return k;
    return -1;
}

int xe_net_add_tensor(xe_net *net, const char *name, xe_tensor_role role, xe_dtype dtype,
                      int rank, const int64_t *dim, xe_err *err)
{
    if (!name) return xe_err_set(err, XE_EINVAL, "net %s: tensor without a name", net->name);
    if (xe_net_find_tensor(net, name) >= 0)
        return xe_err_set(err, XE_EINVAL, "net %s: duplicate tensor \"%s\"", net->name, name);
    if (rank < -1 || rank > XE_MAX_RANK)
        return xe_err_set(err, XE_EINVAL, "net %s: tensor \"%s\": rank %d outside -1..%d",
                          net->name, name, rank, XE_MAX_RANK);
    if ((int)role < 0 || role > XE_T_ACT || (int)dtype < 0 || dtype >= XE_DT_COUNT)
        return xe_err_set(err, XE_EINVAL, "net %s: tensor \"%s\": bad role or dtype", net->name, name);
    if (rank > 0 && !dim)
        return xe_err_set(err, XE_EINVAL, "net %s: tensor \"%s\": rank %d without dims", net->name, name, rank);
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (dim[d] <= 0)
            return xe_err_set(err, XE_EINVAL, "net %s: tensor \"%s\": dimension %d is %lld (must be > 0)",
                              net->name, name, d, (long long)dim[d]);
        if (dim[d] > XE_MAX_BYTES / 8 / numel) /* 8: the widest dtype */
            return xe_err_set(err, XE_EINVAL, "net %s: tensor \"%s\": above 2^53 bytes", net->name, name);
        numel *= dim[d];
    }
    if (net->nt == net->cap_t) {
        int cap = net->cap_t ? 2 * net->cap_t : 32;
        xe_tensor *p = realloc(net->t, (size_t)cap * sizeof *p);
        if (!p) return xe_err_set(err, XE_ENOMEM, "out of memory adding tensor %s", name);
        net->t = p;
        net->cap_t = cap;
    }
    xe_tensor *t = &net->t[net->nt];
    memset(t, 0, sizeof *t);
    t->name = dup_str(name);
    if (!t->name) return xe_err_set(err, XE_ENOMEM, "out of memory adding tensor %s", name);
    t->role = role;
    t->dtype = dtype;
    t->rank = rank;
    for (int d = 0; d < rank; d++) t->dim[d] = dim[d];
    t->producer = -1;
    return net->nt++;
}

/* ONNX defaults of every attribute xe_op carries (opset 13). */
static void set_defaults(xe_op *o)
{
    for (int i = 0; i < 2; i++) {
        o->kernel[i] = 0; /* 0: from the weight tensor (Conv) or required (pools) */
        o->stride[i] = 1;
        o->dilation[i] = 1;
        o->output_padding[i] = 0;
    }
    for (int i = 0; i < 4; i++) o->pad[i] = 0;
    o->group = 1;
    o->ceil_mode = 0;
    o->count_include_pad = 0;
    o->trans_a = o->trans_b = 0;
    o->axis = o->kind == XE_OP_SOFTMAX ? -1 : 1;
    o->size = 5;
    switch (o->kind) {
    case XE_OP_LEAKY_RELU: o->alpha = 0.01; o->beta = 0.0; break;
    case XE_OP_LRN: o->alpha = 1e-4; o->beta = 0.75; break;
    default: o->alpha = 1.0; o->beta = 1.0; break;
    }
    o->bias = 1.0;
    o->epsilon = 1e-5;
    o->momentum = 0.9;
    o->ratio = 0.5;
    o->clip_min = -INFINITY;
    o->clip_max = INFINITY;
}

int xe_net_add_op(xe_net *net, xe_op_kind kind, const char *name, int nin, const int *in,
                  const char *out_name, xe_err *err)
{
    if (!name || !out_name) return xe_err_set(err, XE_EINVAL, "net %s: op without a name or output name", net->name);
    if ((int)kind < 0 || kind >= XE_OP_COUNT)
        return xe_err_set(err, XE_EINVAL, "net %s: op \"%s\": bad kind %d", net->name, name, (int)kind);
    if (nin < 1 || nin > XE_OP_MAX_IN || !in)
        return xe_err_set(err, XE_EINVAL, "net %s: op \"%s\": %d inputs (must be 1..%d)", net->name, name, nin,
                          XE_OP_MAX_IN);
    for (int j = 0; j < nin; j++)
        if (in[j] < 0 || in[j] >= net->nt)
            return xe_err_set(err, XE_EINVAL, "net %s: op \"%s\": input %d is tensor %d (of %d)", net->name, name, j,
                              in[j], net->nt);
    if (find_op(net, name) >= 0)
        return xe_err_set(err, XE_EINVAL, "net %s: duplicate op \"%s\"", net->name, name);
    if (net->nops == net->cap_op) {
        int cap = net->cap_op ? 2 * net->cap_op : 32;
        xe_op *p = realloc(net->op, (size_t)cap * sizeof *p);
        if (!p) return xe_err_set(err, XE_ENOMEM, "out of memory adding op %s", name);
        net->op = p;
        net->cap_op = cap;
    }
    char *nm = dup_str(name);
    if (!nm) return xe_err_set(err, XE_ENOMEM, "out of memory adding op %s", name);
    int out = xe_net_add_tensor(net, out_name, XE_T_ACT, XE_DT_FLOAT32, -1, NULL, err);
    if (out < 0) {
        free(nm);
        return out;
    }
    xe_op *o = &net->op[net->nops];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->name = nm;
    o->nin = nin;
    for (int j = 0; j < nin; j++) o->in[j] = in[j];
    o->out = out;
    set_defaults(o);
    net->t[out].producer = net->nops;
    return net->nops++;
}

int xe_net_add_shape_fn(xe_net *net, xe_shape_fn_kind kind, const char *name, int nin, const int *in,
                        const char *out_name, xe_err *err)
{
    if (!name || !out_name)
        return xe_err_set(err, XE_EINVAL, "net %s: shape computation without a name or output name", net->name);
    if ((int)kind < 0 || kind >= XE_SF_COUNT)
        return xe_err_set(err, XE_EINVAL, "net %s: shape computation \"%s\": bad kind %d", net->name, name, (int)kind);
    if (nin < 1 || nin > XE_OP_MAX_IN || !in)
        return xe_err_set(err, XE_EINVAL, "net %s: shape computation \"%s\": %d inputs (must be 1..%d)", net->name,
                          name, nin, XE_OP_MAX_IN);
    for (int j = 0; j < nin; j++)
        if (in[j] < 0 || in[j] >= net->nt)
            return xe_err_set(err, XE_EINVAL, "net %s: shape computation \"%s\": input %d is tensor %d (of %d)",
                              net->name, name, j, in[j], net->nt);
    if (net->nsf == net->cap_sf) {
        int cap = net->cap_sf ? 2 * net->cap_sf : 8;
        xe_shape_fn *p = realloc(net->sf, (size_t)cap * sizeof *p);
        if (!p) return xe_err_set(err, XE_ENOMEM, "out of memory adding shape computation %s", name);
        net->sf = p;
        net->cap_sf = cap;
    }
    char *nm = dup_str(name);
    if (!nm) return xe_err_set(err, XE_ENOMEM, "out of memory adding shape computation %s", name);
    int out = xe_net_add_tensor(net, out_name, XE_T_PARAM, XE_DT_INT64, -1, NULL, err);
    if (out < 0) {
        free(nm);
        return out;
    }
    xe_shape_fn *f = &net->sf[net->nsf];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->name = nm;
    f->nin = nin;
    for (int j = 0; j < nin; j++) f->in[j] = in[j];
    f->out = out;
    f->after_op = net->nops;
    f->start = 0;
    f->end = INT64_MAX;
    f->step = 1;
    return net->nsf++;
}

int xe_net_shape_fn_of(const xe_net *net, int t)
{
    for (int f = 0; f < net->nsf; f++)
        if (net->sf[f].out == t) return f;
    return -1;
}

const char *xe_shape_fn_kind_name(xe_shape_fn_kind k)
{
    static const char *const names[XE_SF_COUNT] = {
        [XE_SF_SHAPE] = "Shape",     [XE_SF_GATHER] = "Gather", [XE_SF_UNSQUEEZE] = "Unsqueeze",
        [XE_SF_SQUEEZE] = "Squeeze", [XE_SF_CONCAT] = "Concat", [XE_SF_CAST] = "Cast",
        [XE_SF_SLICE] = "Slice",     [XE_SF_MUL] = "Mul",       [XE_SF_ADD] = "Add",
        [XE_SF_SUB] = "Sub",
    };
    if ((int)k < 0 || k >= XE_SF_COUNT) return "unknown";
    return names[k];
}

int xe_net_set_batch(xe_net *net, int64_t batch, xe_err *err)
{
    if (batch <= 0) return xe_err_set(err, XE_EINVAL, "net %s: batch %lld (must be > 0)", net->name, (long long)batch);
    for (int i = 0; i < net->nt; i++) {
        xe_tensor *t = &net->t[i];
        if (t->role == XE_T_INPUT || t->role == XE_T_LABEL) {
            if (t->rank < 1)
                return xe_err_set(err, XE_EINVAL, "net %s: %s tensor \"%s\" has no batch dimension", net->name,
                                  t->role == XE_T_INPUT ? "input" : "label", t->name);
            t->dim[0] = batch;
        } else if (t->role == XE_T_ACT) {
            t->rank = -1;
        }
    }
    return XE_OK;
}

int64_t xe_tensor_numel(const xe_tensor *t)
{
    if (t->rank < 0) return 0;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->dim[d];
    return n;
}

static int64_t dtype_size(xe_dtype dt)
{
    switch (dt) {
    case XE_DT_FLOAT32: return 4;
    case XE_DT_INT64: return 8;
    case XE_DT_FLOAT16: return 2;
    default: return 0;
    }
}

int64_t xe_tensor_bytes(const xe_tensor *t)
{
    return xe_tensor_numel(t) * dtype_size(t->dtype);
}

static const char *const kind_names[XE_OP_COUNT] = {
    [XE_OP_CONV] = "Conv",
    [XE_OP_CONV_TRANSPOSE] = "ConvTranspose",
    [XE_OP_MAXPOOL] = "MaxPool",
    [XE_OP_AVGPOOL] = "AveragePool",
    [XE_OP_GLOBAL_AVGPOOL] = "GlobalAveragePool",
    [XE_OP_GEMM] = "Gemm",
    [XE_OP_MATMUL] = "MatMul",
    [XE_OP_RELU] = "Relu",
    [XE_OP_LEAKY_RELU] = "LeakyRelu",
    [XE_OP_DROPOUT] = "Dropout",
    [XE_OP_LRN] = "LRN",
    [XE_OP_BATCHNORM] = "BatchNormalization",
    [XE_OP_INSTANCENORM] = "InstanceNormalization",
    [XE_OP_ADD] = "Add",
    [XE_OP_CONCAT] = "Concat",
    [XE_OP_FLATTEN] = "Flatten",
    [XE_OP_RESHAPE] = "Reshape",
    [XE_OP_SOFTMAX] = "Softmax",
    [XE_OP_LOSS] = "SoftmaxCrossEntropyLoss",
    [XE_OP_CLIP] = "Clip",
    [XE_OP_SIGMOID] = "Sigmoid",
};

const char *xe_op_kind_name(xe_op_kind k)
{
    if ((int)k < 0 || k >= XE_OP_COUNT) return "unknown";
    return kind_names[k];
}

int xe_op_kind_from_onnx(const char *op_type)
{
    if (!op_type) return -1;
    for (int k = 0; k < XE_OP_COUNT; k++)
        if (strcmp(kind_names[k], op_type) == 0) return k;
    return -1;
}

int xe_op_is_view(xe_op_kind k)
{
    return k == XE_OP_FLATTEN || k == XE_OP_RESHAPE;
}

int xe_net_act_producer(const xe_net *net, int i)
{
    int r = xe_net_resolve_view(net, i);
    return r >= 0 && net->t[r].role == XE_T_ACT ? net->t[r].producer : -1;
}

int xe_op_bwd_reads(xe_op_kind k)
{
    switch (k) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE:
    case XE_OP_LEAKY_RELU:
    case XE_OP_CLIP: return XE_BWD_READS_X;
    case XE_OP_GEMM:
    case XE_OP_MATMUL: return XE_BWD_READS_ALL;
    case XE_OP_RELU:
    case XE_OP_SIGMOID:
    case XE_OP_DROPOUT:
    case XE_OP_SOFTMAX: return XE_BWD_READS_Y;
    case XE_OP_MAXPOOL:
    case XE_OP_LRN:
    case XE_OP_BATCHNORM:
    case XE_OP_INSTANCENORM: return XE_BWD_READS_X | XE_BWD_READS_Y;
    default: return 0;
    }
}

int xe_net_resolve_view(const xe_net *net, int i)
{
    /* Each step moves to a tensor produced by an earlier op (topological order), so the
     * walk ends after at most nops steps. */
    for (int steps = 0; i >= 0 && i < net->nt && steps <= net->nops; steps++) {
        int p = net->t[i].producer;
        if (p < 0 || !xe_op_is_view(net->op[p].kind)) return i;
        i = net->op[p].in[0];
    }
    return i;
}
