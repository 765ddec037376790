/* xengine executor — Relu, LeakyRelu, Clip and Sigmoid on oneDNN eltwise. Relu's and
 * Sigmoid's backward read the forward output (relu_use_dst_for_bwd,
 * logistic_use_dst_for_bwd: dX = dY Y (1 - Y)), LeakyRelu's and Clip's read X
 * (docs/training-graph.md). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kern.h"

static void params(const xe_op *op, dnnl_alg_kind_t *alg, float *alpha, float *beta, int bwd)
{
    *beta = 0;
    switch (op->kind) {
    case XE_OP_RELU:
        *alg = bwd ? dnnl_eltwise_relu_use_dst_for_bwd : dnnl_eltwise_relu;
        *alpha = 0;
        break;
    case XE_OP_LEAKY_RELU:
        *alg = dnnl_eltwise_relu;
        *alpha = (float)op->alpha;
        break;
    case XE_OP_SIGMOID:
        *alg = bwd ? dnnl_eltwise_logistic_use_dst_for_bwd : dnnl_eltwise_logistic;
        *alpha = 0;
        break;
    default: /* Clip */
        *alg = dnnl_eltwise_clip_v2;
        *alpha = isinf(op->clip_min) ? -FLT_MAX : (float)op->clip_min;
        *beta = isinf(op->clip_max) ? FLT_MAX : (float)op->clip_max;
        break;
    }
}

int xe_kern_elt_fwd(xe_kargs *a, xe_err *err)
{
    const xe_tensor *y = xe_ky(a);
    dnnl_memory_desc_t md;
    if (xe_md_plain(&md, y->rank, y->dim)) return xe_err_set(err, XE_EINTERNAL, "op %s: bad descriptor", xe_kname(a));
    dnnl_alg_kind_t alg;
    float al, be;
    params(&a->net->op[a->k], &alg, &al, &be, 0);
    dnnl_eltwise_desc_t d;
    if (dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, alg, &md, al, be) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the eltwise", xe_kname(a));
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, 0, &d, NULL, &p, err);
    if (rc) return rc;
    xe_karg args[2] = {{DNNL_ARG_SRC, &md, a->in[0]}, {DNNL_ARG_DST, &md, a->out}};
    return xe_prim_exec(a, p, 2, args, err);
}

int xe_kern_elt_bwd(xe_kargs *a, xe_err *err)
{
    if (!a->din[0]) return XE_OK;
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *y = xe_ky(a);
    dnnl_memory_desc_t md;
    if (xe_md_plain(&md, y->rank, y->dim)) return xe_err_set(err, XE_EINTERNAL, "op %s: bad descriptor", op->name);
    dnnl_alg_kind_t alg;
    float al, be;
    params(op, &alg, &al, &be, 1);
    dnnl_eltwise_desc_t f, d;
    if (dnnl_eltwise_forward_desc_init(&f, dnnl_forward_training, alg, &md, al, be) != dnnl_success ||
        dnnl_eltwise_backward_desc_init(&d, alg, &md, &md, al, be) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the eltwise backward", op->name);
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, 1, &d, &f, &p, err);
    if (rc) return rc;
    int use_dst = op->kind == XE_OP_RELU || op->kind == XE_OP_SIGMOID;
    const float *data = use_dst ? a->out : a->in[0];
    if (!data)
        return xe_err_set(err, XE_EINTERNAL, "op %s: eltwise backward without its %s", op->name,
                          use_dst ? "forward output" : "input");
    xe_karg args[3] = {{use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, &md, data},
                       {DNNL_ARG_DIFF_DST, &md, a->dout},
                       {DNNL_ARG_DIFF_SRC, &md, a->din[0]}};
    return xe_prim_exec(a, p, 3, args, err);
}
