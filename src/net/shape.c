/* Shape inference for every xe_op_kind (ONNX operator semantics, opset 13).
 *
 * Ops are visited in their (topological) order; every input must have a known shape by
 * then. Errors name the op, its ONNX op_type and the problem. Output sizes are capped at
 * XE_MAX_BYTES so byte counts downstream never overflow. */
#include "xengine/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPFMT "net %s: op \"%s\" (%s): "
#define OPARG(net, o) (net)->name, (o)->name, xe_op_kind_name((o)->kind)

typedef struct {
    int rank;
    int64_t dim[XE_MAX_RANK];
} shp;

/* "[1,3,224,224]" into buf. */
static const char *shape_str(const xe_tensor *t, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "," : "", (long long)t->dim[d]);
    if (n < len) snprintf(buf + n, len - n, "]");
    return buf;
}

static const xe_tensor *in_t(const xe_net *net, const xe_op *o, int j)
{
    return &net->t[o->in[j]];
}

static int need_inputs(const xe_net *net, const xe_op *o, int lo, int hi, xe_err *err)
{
    if (o->nin < lo || o->nin > hi)
        return xe_err_set(err, XE_EINVAL, OPFMT "%d inputs (expects %d..%d)", OPARG(net, o), o->nin, lo, hi);
    return XE_OK;
}

static int need_rank(const xe_net *net, const xe_op *o, int j, int lo, int hi, xe_err *err)
{
    const xe_tensor *t = in_t(net, o, j);
    if (t->rank < lo || t->rank > hi) {
        if (lo == hi)
            return xe_err_set(err, XE_EINVAL, OPFMT "input %d \"%s\" has rank %d (expects %d)", OPARG(net, o), j,
                              t->name, t->rank, lo);
        return xe_err_set(err, XE_EINVAL, OPFMT "input %d \"%s\" has rank %d (expects %d..%d)", OPARG(net, o), j,
                          t->name, t->rank, lo, hi);
    }
    return XE_OK;
}

/* A per-channel vector input j must be [c]. */
static int need_vec(const xe_net *net, const xe_op *o, int j, int64_t c, const char *what, xe_err *err)
{
    const xe_tensor *t = in_t(net, o, j);
    char buf[96];
    if (t->rank != 1 || t->dim[0] != c)
        return xe_err_set(err, XE_EINVAL, OPFMT "%s \"%s\" has shape %s (expects [%lld], one per channel)",
                          OPARG(net, o), what, t->name, shape_str(t, buf, sizeof buf), (long long)c);
    return XE_OK;
}

static void copy_shape(shp *s, const xe_tensor *t)
{
    s->rank = t->rank;
    for (int d = 0; d < t->rank; d++) s->dim[d] = t->dim[d];
}

/* Kernel, stride, dilation, pads and output_padding at most 2^24 each: with dims below
 * 2^50 no intermediate below can overflow int64. */
#define XE_ATTR_MAX (INT64_C(1) << 24)

static int attrs_in_range(const xe_net *net, const xe_op *o, xe_err *err)
{
    for (int i = 0; i < 2; i++)
        if (o->kernel[i] > XE_ATTR_MAX || o->stride[i] > XE_ATTR_MAX || o->dilation[i] > XE_ATTR_MAX ||
            o->pad[i] > XE_ATTR_MAX || o->pad[i + 2] > XE_ATTR_MAX || o->output_padding[i] > XE_ATTR_MAX ||
            o->group > XE_ATTR_MAX)
            return xe_err_set(err, XE_EINVAL, OPFMT "kernel, stride, dilation, pad or group above 2^24", OPARG(net, o));
    return XE_OK;
}

/* Conv / ConvTranspose: X [N, C, H, W], W [M, C/group, kH, kW] (Conv) or
 * [C, M/group, kH, kW] (ConvTranspose), optional bias [M]. */
static int infer_conv(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    int tr = o->kind == XE_OP_CONV_TRANSPOSE;
    if ((rc = need_inputs(net, o, 2, 3, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 0, 4, 4, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 1, 4, 4, err)) < 0) return rc;
    const xe_tensor *x = in_t(net, o, 0), *w = in_t(net, o, 1);
    if (o->group < 1 || o->group > XE_ATTR_MAX)
        return xe_err_set(err, XE_EINVAL, OPFMT "group %lld (must be 1 .. 2^24)", OPARG(net, o), (long long)o->group);
    int64_t c = x->dim[1], m;
    if (!tr) {
        if (w->dim[1] * o->group != c)
            return xe_err_set(err, XE_EINVAL,
                              OPFMT "channel mismatch: input \"%s\" has %lld channels, weight \"%s\" expects %lld x group %lld",
                              OPARG(net, o), x->name, (long long)c, w->name, (long long)w->dim[1], (long long)o->group);
        m = w->dim[0];
        if (m % o->group != 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "%lld output channels not divisible by group %lld", OPARG(net, o),
                              (long long)m, (long long)o->group);
    } else {
        if (w->dim[0] != c)
            return xe_err_set(err, XE_EINVAL,
                              OPFMT "channel mismatch: input \"%s\" has %lld channels, weight \"%s\" expects %lld",
                              OPARG(net, o), x->name, (long long)c, w->name, (long long)w->dim[0]);
        if (c % o->group != 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "%lld input channels not divisible by group %lld", OPARG(net, o),
                              (long long)c, (long long)o->group);
        m = w->dim[1] * o->group;
    }
    for (int i = 0; i < 2; i++) {
        if (o->kernel[i] == 0) o->kernel[i] = w->dim[2 + i];
        if (o->kernel[i] != w->dim[2 + i])
            return xe_err_set(err, XE_EINVAL, OPFMT "kernel_shape %lldx%lld disagrees with weight \"%s\" (%lldx%lld)",
                              OPARG(net, o), (long long)o->kernel[0], (long long)o->kernel[1], w->name,
                              (long long)w->dim[2], (long long)w->dim[3]);
        if (o->stride[i] < 1 || o->dilation[i] < 1 || o->pad[i] < 0 || o->pad[i + 2] < 0 || o->output_padding[i] < 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "strides and dilations must be >= 1, pads >= 0", OPARG(net, o));
    }
    for (int i = 0; tr && i < 2; i++)
        if (o->output_padding[i] >= o->stride[i] && o->output_padding[i] >= o->dilation[i])
            return xe_err_set(err, XE_EINVAL,
                              OPFMT "output_padding %lld not smaller than the stride %lld or the dilation %lld (ONNX "
                              "requires it)",
                              OPARG(net, o), (long long)o->output_padding[i], (long long)o->stride[i],
                              (long long)o->dilation[i]);
    if (o->nin == 3 && (rc = need_vec(net, o, 2, m, "bias", err)) < 0) return rc;
    if ((rc = attrs_in_range(net, o, err)) < 0) return rc;
    y->rank = 4;
    y->dim[0] = x->dim[0];
    y->dim[1] = m;
    for (int i = 0; i < 2; i++) {
        int64_t ek = o->dilation[i] * (o->kernel[i] - 1) + 1; /* effective kernel extent */
        int64_t in = x->dim[2 + i], pads = o->pad[i] + o->pad[i + 2], out;
        if (!tr) {
            if (in + pads < ek)
                return xe_err_set(err, XE_EINVAL, OPFMT "kernel extent %lld larger than padded input %lld",
                                  OPARG(net, o), (long long)ek, (long long)(in + pads));
            out = (in + pads - ek) / o->stride[i] + 1;
        } else {
            if ((double)o->stride[i] * (double)(in - 1) > (double)XE_MAX_BYTES)
                return xe_err_set(err, XE_EINVAL, OPFMT "output above 2^53 elements", OPARG(net, o));
            out = o->stride[i] * (in - 1) + o->output_padding[i] + ek - pads;
        }
        if (out < 1)
            return xe_err_set(err, XE_EINVAL, OPFMT "output spatial dimension %d is %lld", OPARG(net, o), i,
                              (long long)out);
        y->dim[2 + i] = out;
    }
    return XE_OK;
}

/* MaxPool / AveragePool over the two trailing dims of X [N, C, H, W]. ceil_mode rounds
 * the window count up, but (as PyTorch and ONNX from opset 19 on) a last window that
 * would start inside the right padding is dropped. */
static int infer_pool(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 0, 4, 4, err)) < 0) return rc;
    const xe_tensor *x = in_t(net, o, 0);
    if ((rc = attrs_in_range(net, o, err)) < 0) return rc;
    copy_shape(y, x);
    for (int i = 0; i < 2; i++) {
        if (o->kernel[i] < 1)
            return xe_err_set(err, XE_EINVAL, OPFMT "kernel_shape missing or < 1", OPARG(net, o));
        if (o->stride[i] < 1 || o->dilation[i] < 1 || o->pad[i] < 0 || o->pad[i + 2] < 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "strides and dilations must be >= 1, pads >= 0", OPARG(net, o));
        int64_t ek = o->dilation[i] * (o->kernel[i] - 1) + 1;
        if (o->pad[i] >= ek || o->pad[i + 2] >= ek)
            return xe_err_set(err, XE_EINVAL,
                              OPFMT "pads %lld, %lld not smaller than the kernel extent %lld: a window would hold "
                              "only padding",
                              OPARG(net, o), (long long)o->pad[i], (long long)o->pad[i + 2], (long long)ek);
        int64_t in = x->dim[2 + i], span = in + o->pad[i] + o->pad[i + 2] - ek;
        if (span < 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "kernel extent %lld larger than padded input %lld", OPARG(net, o),
                              (long long)ek, (long long)(span + ek));
        int64_t out = (o->ceil_mode ? (span + o->stride[i] - 1) / o->stride[i] : span / o->stride[i]) + 1;
        if (o->ceil_mode && (out - 1) * o->stride[i] >= in + o->pad[i]) out--;
        y->dim[2 + i] = out;
    }
    return XE_OK;
}

/* Multidirectional (numpy) broadcast of a and b into y. */
static int broadcast(const xe_net *net, const xe_op *o, const xe_tensor *a, const xe_tensor *b, shp *y, xe_err *err)
{
    char ba[96], bb[96];
    int r = a->rank > b->rank ? a->rank : b->rank;
    y->rank = r;
    for (int d = 0; d < r; d++) {
        int da = d - (r - a->rank), db = d - (r - b->rank);
        int64_t ea = da >= 0 ? a->dim[da] : 1, eb = db >= 0 ? b->dim[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return xe_err_set(err, XE_EINVAL, OPFMT "shapes %s (\"%s\") and %s (\"%s\") do not broadcast",
                              OPARG(net, o), shape_str(a, ba, sizeof ba), a->name, shape_str(b, bb, sizeof bb),
                              b->name);
        y->dim[d] = ea == 1 ? eb : ea;
    }
    return XE_OK;
}

/* Gemm: A [M, K] (transA: [K, M]), B [K, N] (transB: [N, K]), C broadcast to [M, N]. */
static int infer_gemm(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    if ((rc = need_inputs(net, o, 2, 3, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 0, 2, 2, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 1, 2, 2, err)) < 0) return rc;
    const xe_tensor *a = in_t(net, o, 0), *b = in_t(net, o, 1);
    int64_t m = o->trans_a ? a->dim[1] : a->dim[0], ka = o->trans_a ? a->dim[0] : a->dim[1];
    int64_t kb = o->trans_b ? b->dim[1] : b->dim[0], n = o->trans_b ? b->dim[0] : b->dim[1];
    if (ka != kb)
        return xe_err_set(err, XE_EINVAL, OPFMT "inner dimensions differ: A \"%s\" gives %lld, B \"%s\" gives %lld",
                          OPARG(net, o), a->name, (long long)ka, b->name, (long long)kb);
    y->rank = 2;
    y->dim[0] = m;
    y->dim[1] = n;
    if (o->nin == 3) {
        const xe_tensor *c = in_t(net, o, 2);
        xe_tensor yt = {.rank = 2, .dim = {m, n}, .name = "Y"};
        shp z;
        if ((rc = need_rank(net, o, 2, 0, 2, err)) < 0) return rc;
        if ((rc = broadcast(net, o, &yt, c, &z, err)) < 0) return rc;
        if (z.dim[0] != m || z.dim[1] != n)
            return xe_err_set(err, XE_EINVAL, OPFMT "C \"%s\" does not broadcast to [%lld,%lld]", OPARG(net, o),
                              c->name, (long long)m, (long long)n);
    }
    return XE_OK;
}

/* MatMul with numpy semantics: 1-D operands promoted and the added dim dropped again,
 * leading (batch) dims broadcast. */
static int infer_matmul(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    if ((rc = need_inputs(net, o, 2, 2, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 0, 1, XE_MAX_RANK, err)) < 0) return rc;
    if ((rc = need_rank(net, o, 1, 1, XE_MAX_RANK, err)) < 0) return rc;
    xe_tensor a = *in_t(net, o, 0), b = *in_t(net, o, 1);
    int a1 = a.rank == 1, b1 = b.rank == 1;
    if (a1) { a.rank = 2; a.dim[1] = a.dim[0]; a.dim[0] = 1; }
    if (b1) { b.rank = 2; b.dim[1] = 1; }
    if (a.dim[a.rank - 1] != b.dim[b.rank - 2])
        return xe_err_set(err, XE_EINVAL, OPFMT "inner dimensions differ: \"%s\" has %lld, \"%s\" has %lld",
                          OPARG(net, o), a.name, (long long)a.dim[a.rank - 1], b.name, (long long)b.dim[b.rank - 2]);
    xe_tensor ba = a, bb = b;
    ba.rank -= 2;
    bb.rank -= 2;
    shp batch;
    if ((rc = broadcast(net, o, &ba, &bb, &batch, err)) < 0) return rc;
    y->rank = 0;
    for (int d = 0; d < batch.rank; d++) y->dim[y->rank++] = batch.dim[d];
    if (!a1) y->dim[y->rank++] = a.dim[a.rank - 2];
    if (!b1) y->dim[y->rank++] = b.dim[b.rank - 1];
    return XE_OK;
}

static int norm_axis(const xe_net *net, const xe_op *o, int64_t axis, int rank, int inclusive, int64_t *out,
                     xe_err *err)
{
    int64_t hi = inclusive ? rank : rank - 1;
    if (axis < -rank || axis > hi)
        return xe_err_set(err, XE_EINVAL, OPFMT "axis %lld out of range for rank %d", OPARG(net, o), (long long)axis,
                          rank);
    *out = axis < 0 ? axis + rank : axis;
    return XE_OK;
}

static int infer_concat(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    const xe_tensor *x0 = in_t(net, o, 0);
    int64_t ax = 0;
    if ((rc = norm_axis(net, o, o->axis, x0->rank, 0, &ax, err)) < 0) return rc;
    copy_shape(y, x0);
    for (int j = 1; j < o->nin; j++) {
        const xe_tensor *x = in_t(net, o, j);
        char b0[96], b1[96];
        int ok = x->rank == x0->rank;
        for (int d = 0; ok && d < x->rank; d++)
            if (d != ax && x->dim[d] != x0->dim[d]) ok = 0;
        if (!ok)
            return xe_err_set(err, XE_EINVAL, OPFMT "input %d \"%s\" %s does not match input 0 \"%s\" %s off axis %lld",
                              OPARG(net, o), j, x->name, shape_str(x, b1, sizeof b1), x0->name,
                              shape_str(x0, b0, sizeof b0), (long long)ax);
        y->dim[ax] += x->dim[ax];
    }
    return XE_OK;
}

/* Reshape: the target shape is the int64 constant of input 1; 0 copies the input's
 * dimension at that position (allowzero = 0), one -1 takes what is left. */
static int infer_reshape(const xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    if ((rc = need_inputs(net, o, 2, 2, err)) < 0) return rc;
    const xe_tensor *x = in_t(net, o, 0), *s = in_t(net, o, 1);
    if (s->dtype != XE_DT_INT64 || !s->idata || s->rank != 1)
        return xe_err_set(err, XE_EUNSUPPORTED, OPFMT "shape \"%s\" is not a constant int64 vector", OPARG(net, o),
                          s->name);
    if (s->dim[0] > XE_MAX_RANK)
        return xe_err_set(err, XE_EINVAL, OPFMT "target rank %lld above %d", OPARG(net, o), (long long)s->dim[0],
                          XE_MAX_RANK);
    int64_t total = xe_tensor_numel(x), known = 1;
    int minus = -1;
    y->rank = (int)s->dim[0];
    for (int d = 0; d < y->rank; d++) {
        int64_t v = s->idata[d];
        if (v == 0) {
            if (d >= x->rank)
                return xe_err_set(err, XE_EINVAL, OPFMT "shape[%d] = 0 but the input has rank %d", OPARG(net, o), d,
                                  x->rank);
            v = x->dim[d];
        } else if (v == -1) {
            if (minus >= 0) return xe_err_set(err, XE_EINVAL, OPFMT "more than one -1 in the shape", OPARG(net, o));
            minus = d;
            continue;
        } else if (v < -1) {
            return xe_err_set(err, XE_EINVAL, OPFMT "shape[%d] = %lld", OPARG(net, o), d, (long long)v);
        }
        if (v > total / known) /* more elements than the input has */
            return xe_err_set(err, XE_EINVAL, OPFMT "reshape of %lld elements: shape[%d] = %lld too large",
                              OPARG(net, o), (long long)total, d, (long long)v);
        y->dim[d] = v;
        known *= v;
    }
    if (minus >= 0) {
        if (total % known != 0)
            return xe_err_set(err, XE_EINVAL, OPFMT "%lld elements cannot be reshaped with -1 around %lld",
                              OPARG(net, o), (long long)total, (long long)known);
        y->dim[minus] = total / known;
        known *= y->dim[minus];
    }
    if (known != total)
        return xe_err_set(err, XE_EINVAL, OPFMT "reshape of %lld elements into %lld", OPARG(net, o), (long long)total,
                          (long long)known);
    return XE_OK;
}

static int infer_op(xe_net *net, xe_op *o, shp *y, xe_err *err)
{
    int rc;
    char buf[96];
    const xe_tensor *x = in_t(net, o, 0);
    switch (o->kind) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE: return infer_conv(net, o, y, err);
    case XE_OP_MAXPOOL:
    case XE_OP_AVGPOOL: return infer_pool(net, o, y, err);
    case XE_OP_GLOBAL_AVGPOOL:
        if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
        if ((rc = need_rank(net, o, 0, 3, XE_MAX_RANK, err)) < 0) return rc;
        copy_shape(y, x);
        for (int d = 2; d < y->rank; d++) y->dim[d] = 1;
        return XE_OK;
    case XE_OP_GEMM: return infer_gemm(net, o, y, err);
    case XE_OP_MATMUL: return infer_matmul(net, o, y, err);
    case XE_OP_RELU:
    case XE_OP_LEAKY_RELU:
    case XE_OP_SIGMOID:
        if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_DROPOUT: /* X[, ratio, training_mode] (opset 12+ constant inputs) */
        if ((rc = need_inputs(net, o, 1, 3, err)) < 0) return rc;
        if (!(o->ratio >= 0.0 && o->ratio < 1.0))
            return xe_err_set(err, XE_EINVAL, OPFMT "ratio %g outside [0, 1)", OPARG(net, o), o->ratio);
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_CLIP: /* X[, min, max] */
        if ((rc = need_inputs(net, o, 1, 3, err)) < 0) return rc;
        if (o->clip_min > o->clip_max)
            return xe_err_set(err, XE_EINVAL, OPFMT "min %g > max %g", OPARG(net, o), o->clip_min, o->clip_max);
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_LRN:
        if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
        if ((rc = need_rank(net, o, 0, 3, XE_MAX_RANK, err)) < 0) return rc;
        if (o->size < 1) return xe_err_set(err, XE_EINVAL, OPFMT "size %lld < 1", OPARG(net, o), (long long)o->size);
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_BATCHNORM:
        if ((rc = need_inputs(net, o, 5, 5, err)) < 0) return rc;
        if ((rc = need_rank(net, o, 0, 2, XE_MAX_RANK, err)) < 0) return rc;
        for (int j = 1; j < 5; j++) {
            static const char *const what[5] = {"", "scale", "bias", "mean", "var"};
            if ((rc = need_vec(net, o, j, x->dim[1], what[j], err)) < 0) return rc;
        }
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_INSTANCENORM:
        if ((rc = need_inputs(net, o, 3, 3, err)) < 0) return rc;
        if ((rc = need_rank(net, o, 0, 3, XE_MAX_RANK, err)) < 0) return rc;
        if ((rc = need_vec(net, o, 1, x->dim[1], "scale", err)) < 0) return rc;
        if ((rc = need_vec(net, o, 2, x->dim[1], "bias", err)) < 0) return rc;
        copy_shape(y, x);
        return XE_OK;
    case XE_OP_ADD:
        if ((rc = need_inputs(net, o, 2, 2, err)) < 0) return rc;
        return broadcast(net, o, x, in_t(net, o, 1), y, err);
    case XE_OP_CONCAT: return infer_concat(net, o, y, err);
    case XE_OP_FLATTEN: {
        int64_t ax = 0, a = 1, b = 1;
        if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
        if ((rc = norm_axis(net, o, o->axis, x->rank, 1, &ax, err)) < 0) return rc;
        for (int d = 0; d < x->rank; d++) {
            if (d < ax) a *= x->dim[d];
            else b *= x->dim[d];
        }
        y->rank = 2;
        y->dim[0] = a;
        y->dim[1] = b;
        return XE_OK;
    }
    case XE_OP_RESHAPE: return infer_reshape(net, o, y, err);
    case XE_OP_SOFTMAX: {
        int64_t ax = 0;
        if ((rc = need_inputs(net, o, 1, 1, err)) < 0) return rc;
        if ((rc = norm_axis(net, o, o->axis, x->rank, 0, &ax, err)) < 0) return rc;
        copy_shape(y, x);
        return XE_OK;
    }
    case XE_OP_LOSS: /* logits [N, C], labels [N] -> scalar mean loss */
        if ((rc = need_inputs(net, o, 2, 3, err)) < 0) return rc;
        /* class weights (ONNX's third input) and per-element losses (logits [N, C, d1,
         * ...], labels [N, d1, ...]) are refused: the executor computes neither, and
         * both were accepted and computed wrongly, without a word, before 2026-12-05
         * (the weights ignored; a per-pixel loss taken over C x d1 x ... classes) */
        if (o->nin > 2)
            return xe_err_set(err, XE_EUNSUPPORTED, OPFMT "class weights (input \"%s\") are not supported",
                              OPARG(net, o), net->t[o->in[2]].name);
        if (x->rank != 2)
            return xe_err_set(err, XE_EUNSUPPORTED,
                              OPFMT "logits \"%s\" %s: only logits [N, C] with labels [N] are supported (no "
                              "per-element loss)",
                              OPARG(net, o), x->name, shape_str(x, buf, sizeof buf));
        {
            const xe_tensor *l = in_t(net, o, 1);
            int ok = l->rank == x->rank - 1 && l->dim[0] == x->dim[0];
            for (int d = 1; ok && d < l->rank; d++) ok = l->dim[d] == x->dim[d + 1];
            if (!ok)
                return xe_err_set(err, XE_EINVAL, OPFMT "labels \"%s\" %s do not match logits \"%s\"", OPARG(net, o),
                                  l->name, shape_str(l, buf, sizeof buf), x->name);
        }
        if (o->has_ignore_index && o->ignore_index >= 0 && o->ignore_index < x->dim[1])
            return xe_err_set(err, XE_EUNSUPPORTED,
                              OPFMT "ignore_index %lld is one of the %lld classes: ignoring labels is not supported "
                              "(an ignore_index no label can equal, negative or >= the classes, is accepted)",
                              OPARG(net, o), (long long)o->ignore_index, (long long)x->dim[1]);
        y->rank = 0;
        return XE_OK;
    default: return xe_err_set(err, XE_EUNSUPPORTED, OPFMT "no shape inference for this kind", OPARG(net, o));
    }
}

/* ---- shape computations (xe_shape_fn) ---------------------------------------------- */

#define SFFMT "net %s: shape computation \"%s\" (%s): "
#define SFARG(net, f) (net)->name, (f)->name, xe_shape_fn_kind_name((f)->kind)
#define SF_MAX_VALUES 64 /* elements of a shape value: shapes have at most XE_MAX_RANK */

typedef struct {
    int rank; /* 0 (a scalar) or 1 */
    int n;    /* elements */
    int64_t v[SF_MAX_VALUES];
} sval;

/* Input j of f as an int64 scalar or vector: a shape value already evaluated or an int64
 * constant (values in idata). */
static int sf_in(const xe_net *net, const xe_shape_fn *f, int j, sval *s, xe_err *err)
{
    const xe_tensor *t = &net->t[f->in[j]];
    if (t->dtype != XE_DT_INT64 || !t->idata || t->rank < 0 || t->rank > 1)
        return xe_err_set(err, XE_EUNSUPPORTED,
                          SFFMT "input %d \"%s\" is not an int64 scalar or vector computed from shapes and constants",
                          SFARG(net, f), j, t->name);
    int64_t n = xe_tensor_numel(t);
    if (n < 1 || n > SF_MAX_VALUES)
        return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "input %d \"%s\" has %lld values (1..%d supported)",
                          SFARG(net, f), j, t->name, (long long)n, SF_MAX_VALUES);
    s->rank = t->rank;
    s->n = (int)n;
    memcpy(s->v, t->idata, (size_t)n * sizeof *s->v);
    return XE_OK;
}

static int need_vector(const xe_net *net, const xe_shape_fn *f, int j, const sval *s, xe_err *err)
{
    if (s->rank != 1)
        return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "input %d \"%s\" is a scalar (a 1-D value expected)",
                          SFARG(net, f), j, net->t[f->in[j]].name);
    return XE_OK;
}

/* a op b for Mul / Add / Sub, XE_EINVAL on int64 overflow. */
static int sf_arith(const xe_net *net, const xe_shape_fn *f, int64_t a, int64_t b, int64_t *y, xe_err *err)
{
    int ovf = 0;
    switch (f->kind) {
    case XE_SF_MUL:
        if (a != 0 && b != 0) {
            int64_t ua = a < 0 ? -a : a, ub = b < 0 ? -b : b; /* |a|, |b| <= 2^62 below */
            if (a == INT64_MIN || b == INT64_MIN || ua > INT64_MAX / ub) ovf = 1;
        }
        if (!ovf) *y = a * b;
        break;
    case XE_SF_ADD:
        ovf = (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
        if (!ovf) *y = a + b;
        break;
    default: /* XE_SF_SUB */
        ovf = (b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b);
        if (!ovf) *y = a - b;
        break;
    }
    if (ovf)
        return xe_err_set(err, XE_EINVAL, SFFMT "%lld and %lld overflow int64", SFARG(net, f), (long long)a,
                          (long long)b);
    return XE_OK;
}

/* Evaluates f from its inputs into its output tensor (rank, dim, idata). */
static int eval_shape_fn(xe_net *net, xe_shape_fn *f, xe_err *err)
{
    sval a, b, y = {.rank = 1, .n = 0};
    int rc;
    switch (f->kind) {
    case XE_SF_SHAPE: {
        const xe_tensor *t = &net->t[f->in[0]];
        if (t->rank < 0)
            return xe_err_set(err, XE_EINVAL, SFFMT "input \"%s\" has an unknown shape", SFARG(net, f), t->name);
        for (int d = 0; d < t->rank; d++) y.v[y.n++] = t->dim[d];
        break;
    }
    case XE_SF_GATHER:
        if ((rc = sf_in(net, f, 0, &a, err)) < 0 || (rc = need_vector(net, f, 0, &a, err)) < 0) return rc;
        if (f->nin != 2) return xe_err_set(err, XE_EINVAL, SFFMT "%d inputs (expects 2)", SFARG(net, f), f->nin);
        if ((rc = sf_in(net, f, 1, &b, err)) < 0) return rc;
        y.rank = b.rank;
        for (int i = 0; i < b.n; i++) {
            int64_t ix = b.v[i] < 0 ? b.v[i] + a.n : b.v[i];
            if (ix < 0 || ix >= a.n)
                return xe_err_set(err, XE_EINVAL, SFFMT "index %lld out of range for %d values", SFARG(net, f),
                                  (long long)b.v[i], a.n);
            y.v[y.n++] = a.v[ix];
        }
        break;
    case XE_SF_UNSQUEEZE:
        if ((rc = sf_in(net, f, 0, &a, err)) < 0) return rc;
        if (a.rank != 0)
            return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "unsqueeze of the 1-D \"%s\" (into 2-D) not supported",
                              SFARG(net, f), net->t[f->in[0]].name);
        y = a;
        y.rank = 1;
        break;
    case XE_SF_SQUEEZE:
        if ((rc = sf_in(net, f, 0, &a, err)) < 0) return rc;
        if (a.rank != 1 || a.n != 1)
            return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "squeeze of \"%s\" (%d values): only a [1] is squeezed",
                              SFARG(net, f), net->t[f->in[0]].name, a.n);
        y = a;
        y.rank = 0;
        break;
    case XE_SF_CONCAT:
        for (int j = 0; j < f->nin; j++) {
            if ((rc = sf_in(net, f, j, &a, err)) < 0 || (rc = need_vector(net, f, j, &a, err)) < 0) return rc;
            if (y.n + a.n > SF_MAX_VALUES)
                return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "more than %d values", SFARG(net, f), SF_MAX_VALUES);
            memcpy(y.v + y.n, a.v, (size_t)a.n * sizeof *a.v);
            y.n += a.n;
        }
        break;
    case XE_SF_CAST:
        if ((rc = sf_in(net, f, 0, &y, err)) < 0) return rc;
        break;
    case XE_SF_SLICE: {
        if ((rc = sf_in(net, f, 0, &a, err)) < 0 || (rc = need_vector(net, f, 0, &a, err)) < 0) return rc;
        if (f->step < 1)
            return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "step %lld (only positive steps)", SFARG(net, f),
                              (long long)f->step);
        int64_t s0 = f->start < 0 ? f->start + a.n : f->start, e = f->end < 0 ? f->end + a.n : f->end;
        s0 = s0 < 0 ? 0 : s0 > a.n ? a.n : s0;
        e = e < 0 ? 0 : e > a.n ? a.n : e;
        for (int64_t i = s0; i < e; i += f->step) y.v[y.n++] = a.v[i];
        break;
    }
    case XE_SF_MUL:
    case XE_SF_ADD:
    case XE_SF_SUB:
        if (f->nin != 2) return xe_err_set(err, XE_EINVAL, SFFMT "%d inputs (expects 2)", SFARG(net, f), f->nin);
        if ((rc = sf_in(net, f, 0, &a, err)) < 0 || (rc = sf_in(net, f, 1, &b, err)) < 0) return rc;
        if (a.n != b.n && a.n != 1 && b.n != 1)
            return xe_err_set(err, XE_EINVAL, SFFMT "%d and %d values do not broadcast", SFARG(net, f), a.n, b.n);
        y.rank = a.rank > b.rank ? a.rank : b.rank;
        y.n = a.n > b.n ? a.n : b.n;
        for (int i = 0; i < y.n; i++)
            if ((rc = sf_arith(net, f, a.v[a.n == 1 ? 0 : i], b.v[b.n == 1 ? 0 : i], &y.v[i], err)) < 0) return rc;
        break;
    default: return xe_err_set(err, XE_EINVAL, SFFMT "unknown kind", SFARG(net, f));
    }
    if (y.n < 1)
        return xe_err_set(err, XE_EUNSUPPORTED, SFFMT "an empty value is not supported", SFARG(net, f));
    xe_tensor *out = &net->t[f->out];
    int64_t *p = malloc((size_t)y.n * sizeof *p);
    if (!p) return xe_err_set(err, XE_ENOMEM, SFFMT "out of memory", SFARG(net, f));
    memcpy(p, y.v, (size_t)y.n * sizeof *p);
    free(out->idata);
    out->idata = p;
    out->dtype = XE_DT_INT64;
    out->rank = y.rank;
    for (int d = 0; d < XE_MAX_RANK; d++) out->dim[d] = 0;
    if (y.rank == 1) out->dim[0] = y.n;
    return XE_OK;
}

int xe_net_infer_shapes(xe_net *net, xe_err *err)
{
    for (int f = 0; f < net->nsf; f++) { /* values of an earlier batch are stale */
        xe_tensor *out = &net->t[net->sf[f].out];
        free(out->idata);
        out->idata = NULL;
        out->rank = -1;
    }
    int nextf = 0;
    for (int k = 0; k < net->nops; k++) {
        for (; nextf < net->nsf && net->sf[nextf].after_op <= k; nextf++) {
            int rc = eval_shape_fn(net, &net->sf[nextf], err);
            if (rc < 0) return rc;
        }
        xe_op *o = &net->op[k];
        for (int j = 0; j < o->nin; j++) {
            const xe_tensor *t = in_t(net, o, j);
            if (t->rank < 0)
                return xe_err_set(err, XE_EINVAL, OPFMT "input %d \"%s\" has an unknown shape%s", OPARG(net, o), j,
                                  t->name, t->producer >= k ? " (produced later: not in topological order)" : "");
        }
        shp y = {0};
        int rc = infer_op(net, o, &y, err);
        if (rc < 0) return rc;
        xe_tensor *out = &net->t[o->out];
        int64_t n = 1;
        for (int d = 0; d < y.rank; d++) {
            if (y.dim[d] < 1)
                return xe_err_set(err, XE_EINVAL, OPFMT "output \"%s\" dimension %d is %lld", OPARG(net, o), out->name,
                                  d, (long long)y.dim[d]);
            if (y.dim[d] > XE_MAX_BYTES / 8 / n)
                return xe_err_set(err, XE_EINVAL, OPFMT "output \"%s\" above 2^53 bytes", OPARG(net, o), out->name);
            n *= y.dim[d];
        }
        out->rank = y.rank;
        for (int d = 0; d < XE_MAX_RANK; d++) out->dim[d] = d < y.rank ? y.dim[d] : 0;
        /* every operator keeps its data's element type (ONNX: T -> T), so a float16
         * model's activations take 2 bytes an element (until 2026-12-05, 4) */
        out->dtype = in_t(net, o, 0)->dtype;
    }
    for (; nextf < net->nsf; nextf++) { /* computations no op reads (harmless) */
        int rc = eval_shape_fn(net, &net->sf[nextf], err);
        if (rc < 0) return rc;
    }
    return XE_OK;
}
