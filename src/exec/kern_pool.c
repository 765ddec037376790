/* xengine executor — MaxPool, AveragePool and GlobalAveragePool on oneDNN pooling.
 * Max pooling's backward needs the argmax workspace of a training forward; the graph does
 * not keep it, so the backward recomputes that forward from X into scratch (outside the
 * budget), then runs the backward with it. */
#include <stdlib.h>
#include <string.h>

#include "kern.h"

typedef struct pool_geom {
    dnnl_memory_desc_t x, y;
    dnnl_dims_t stride, kernel, dil, pl, pr;
    dnnl_alg_kind_t alg;
} pool_geom;

static int geom(const xe_kargs *a, pool_geom *p, xe_err *err)
{
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *x = xe_kt(a, 0), *y = xe_ky(a);
    memset(p, 0, sizeof *p);
    if (x->rank != 4 || y->rank != 4)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: only 2-D pooling (rank-4 tensors) is supported", op->name);
    int global = op->kind == XE_OP_GLOBAL_AVGPOOL;
    for (int i = 0; i < 2; i++) {
        p->kernel[i] = global ? x->dim[2 + i] : op->kernel[i];
        p->stride[i] = global ? 1 : (op->stride[i] > 0 ? op->stride[i] : 1);
        p->dil[i] = global ? 0 : (op->dilation[i] > 0 ? op->dilation[i] : 1) - 1;
        p->pl[i] = global ? 0 : op->pad[i];
        /* the right padding that makes oneDNN's output size equal the net's (ceil_mode) */
        int64_t keff = (p->kernel[i] - 1) * (p->dil[i] + 1) + 1;
        p->pr[i] = (y->dim[2 + i] - 1) * p->stride[i] + keff - x->dim[2 + i] - p->pl[i];
        if (p->pr[i] < 0) p->pr[i] = 0;
    }
    if (p->kernel[0] <= 0 || p->kernel[1] <= 0)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: pooling without a kernel shape", op->name);
    p->alg = op->kind == XE_OP_MAXPOOL ? dnnl_pooling_max
           : (op->count_include_pad && !global) ? dnnl_pooling_avg_include_padding
                                                : dnnl_pooling_avg_exclude_padding;
    if (xe_md_plain(&p->x, 4, x->dim) || xe_md_plain(&p->y, 4, y->dim))
        return xe_err_set(err, XE_EINTERNAL, "op %s: bad memory descriptor", op->name);
    return XE_OK;
}

static int fwd_desc(const pool_geom *p, dnnl_prop_kind_t prop, dnnl_pooling_v2_desc_t *d)
{
    return dnnl_pooling_v2_forward_desc_init(d, prop, p->alg, &p->x, &p->y, p->stride, p->kernel, p->dil, p->pl,
                                             p->pr) == dnnl_success;
}

int xe_kern_pool_fwd(xe_kargs *a, xe_err *err)
{
    pool_geom g;
    int rc = geom(a, &g, err);
    if (rc) return rc;
    dnnl_pooling_v2_desc_t d;
    if (!fwd_desc(&g, dnnl_forward_inference, &d))
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the pooling shape", xe_kname(a));
    dnnl_primitive_t p;
    if ((rc = xe_prim_get(a, 0, &d, NULL, &p, err))) return rc;
    xe_karg args[2] = {{DNNL_ARG_SRC, &g.x, a->in[0]}, {DNNL_ARG_DST, &g.y, a->out}};
    return xe_prim_exec(a, p, 2, args, err);
}

int xe_kern_pool_bwd(xe_kargs *a, xe_err *err)
{
    if (!a->din[0]) return XE_OK; /* X is the data input: no gradient wanted */
    pool_geom g;
    int rc = geom(a, &g, err);
    if (rc) return rc;
    dnnl_pooling_v2_desc_t f, d;
    if (!fwd_desc(&g, dnnl_forward_training, &f) ||
        dnnl_pooling_v2_backward_desc_init(&d, g.alg, &g.x, &g.y, g.stride, g.kernel, g.dil, g.pl, g.pr) !=
            dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the pooling shape", xe_kname(a));
    dnnl_primitive_t pf = NULL, pb;
    if ((rc = xe_prim_get(a, 2, &d, &f, &pb, err))) return rc;
    void *ws = NULL, *y = NULL;
    dnnl_memory_desc_t wsmd;
    memset(&wsmd, 0, sizeof wsmd);
    if (g.alg == dnnl_pooling_max) {
        if (!a->in[0]) return xe_err_set(err, XE_EINTERNAL, "op %s: max-pool backward without X", xe_kname(a));
        if ((rc = xe_prim_get(a, 1, &f, NULL, &pf, err))) return rc;
        const_dnnl_primitive_desc_t pd;
        dnnl_primitive_get_primitive_desc(pf, &pd);
        wsmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_workspace_md, 0);
        ws = malloc(dnnl_memory_desc_get_size(&wsmd) + 1);
        y = malloc((size_t)xe_tensor_bytes(xe_ky(a)) + 1);
        if (!ws || !y) {
            rc = xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
            goto done;
        }
        xe_karg fa[3] = {{DNNL_ARG_SRC, &g.x, a->in[0]}, {DNNL_ARG_DST, &g.y, y}, {DNNL_ARG_WORKSPACE, &wsmd, ws}};
        if ((rc = xe_prim_exec(a, pf, 3, fa, err))) goto done;
    }
    xe_karg ba[3] = {{DNNL_ARG_DIFF_DST, &g.y, a->dout}, {DNNL_ARG_DIFF_SRC, &g.x, a->din[0]},
                     {DNNL_ARG_WORKSPACE, &wsmd, ws}};
    rc = xe_prim_exec(a, pb, ws ? 3 : 2, ba, err);
done:
    free(ws);
    free(y);
    return rc;
}
