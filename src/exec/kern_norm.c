/* xengine executor — BatchNormalization and LRN on oneDNN, InstanceNormalization by
 * plain loops (oneDNN 2.x has none).
 *
 * BatchNorm in training: batch statistics; the forward node's output holds Y, then the
 * saved mean[C] and variance[C] (the 2 x C floats of docs/training-graph.md; variance,
 * not its inverse square root, so oneDNN's backward gets exactly what its forward made).
 * InstanceNorm keeps per-instance statistics (N x C), which do not fit in those 2 x C
 * floats, so its backward recomputes them from X. LRN's backward recomputes the forward
 * workspace from X (outside the budget). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

/* ---- BatchNormalization ---- */

typedef struct bn_geom {
    dnnl_memory_desc_t x, c;
    int64_t C;
    float eps;
} bn_geom;

static int bn_geom_of(const xe_kargs *a, bn_geom *g, xe_err *err)
{
    const xe_tensor *x = xe_kt(a, 0);
    if (x->rank < 2) return xe_err_set(err, XE_EUNSUPPORTED, "op %s: BatchNorm of rank < 2", xe_kname(a));
    g->C = x->dim[1];
    g->eps = (float)a->net->op[a->k].epsilon;
    if (xe_md_plain(&g->x, x->rank, x->dim) || xe_md_plain(&g->c, 1, &g->C))
        return xe_err_set(err, XE_EINTERNAL, "op %s: bad descriptor", xe_kname(a));
    return XE_OK;
}

static const unsigned bn_flags = dnnl_use_scale | dnnl_use_shift;

/* Runs the training forward: y, mean, var (all caller buffers). */
static int bn_fwd_run(xe_kargs *a, const bn_geom *g, float *y, float *mean, float *var, xe_err *err)
{
    dnnl_batch_normalization_desc_t d;
    if (dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_training, &g->x, g->eps, bn_flags) !=
        dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the batch norm", xe_kname(a));
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, 0, &d, NULL, &p, err);
    if (rc) return rc;
    xe_karg args[6] = {{DNNL_ARG_SRC, &g->x, a->in[0]},  {DNNL_ARG_DST, &g->x, y},
                       {DNNL_ARG_SCALE, &g->c, a->in[1]}, {DNNL_ARG_SHIFT, &g->c, a->in[2]},
                       {DNNL_ARG_MEAN, &g->c, mean},      {DNNL_ARG_VARIANCE, &g->c, var}};
    return xe_prim_exec(a, p, 6, args, err);
}

static int bn_fwd(xe_kargs *a, xe_err *err)
{
    bn_geom g;
    int rc = bn_geom_of(a, &g, err);
    if (rc) return rc;
    int64_t yb = xe_tensor_bytes(xe_ky(a));
    float *stats = NULL, *own = NULL;
    if (a->out_bytes >= yb + 2 * g.C * 4) stats = (float *)((char *)a->out + yb);
    else if (!(stats = own = malloc((size_t)(2 * g.C) * sizeof *stats)))
        return xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
    rc = bn_fwd_run(a, &g, a->out, stats, stats + g.C, err);
    free(own);
    return rc;
}

static int bn_bwd(xe_kargs *a, xe_err *err)
{
    bn_geom g;
    int rc = bn_geom_of(a, &g, err);
    if (rc) return rc;
    if (!a->in[0]) return xe_err_set(err, XE_EINTERNAL, "op %s: batch norm backward without X", xe_kname(a));
    int64_t yb = xe_tensor_bytes(xe_ky(a));
    const float *stats = NULL;
    float *tmp = NULL, *dx = a->din[0], *ds = a->dparam[1], *db = a->dparam[2];
    int64_t nx = xe_tensor_numel(xe_kt(a, 0));
    /* scratch: recomputed y and stats when the forward buffer lacks them, and outputs
     * nobody wants */
    tmp = malloc((size_t)(nx + 4 * g.C + (dx ? 0 : nx)) * sizeof *tmp + 64);
    if (!tmp) return xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
    float *t = tmp;
    if (a->out && a->out_bytes >= yb + 2 * g.C * 4) {
        stats = (const float *)((const char *)a->out + yb);
    } else {
        float *st = t + nx;
        if ((rc = bn_fwd_run(a, &g, t, st, st + g.C, err))) goto done;
        stats = st;
    }
    t += nx + 2 * g.C;
    if (!ds) ds = t;
    if (!db) db = t + g.C;
    t += 2 * g.C;
    if (!dx) dx = t;
    dnnl_batch_normalization_desc_t f, d;
    if (dnnl_batch_normalization_forward_desc_init(&f, dnnl_forward_training, &g.x, g.eps, bn_flags) !=
            dnnl_success ||
        dnnl_batch_normalization_backward_desc_init(&d, dnnl_backward, &g.x, &g.x, g.eps, bn_flags) != dnnl_success) {
        rc = xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the batch norm backward", xe_kname(a));
        goto done;
    }
    dnnl_primitive_t p;
    if ((rc = xe_prim_get(a, 1, &d, &f, &p, err))) goto done;
    /* oneDNN 2.6 wants SHIFT as an argument of the backward too, though it does not read it */
    xe_karg args[9] = {{DNNL_ARG_SHIFT, &g.c, a->in[2]},         {DNNL_ARG_SRC, &g.x, a->in[0]},
                       {DNNL_ARG_MEAN, &g.c, stats},
                       {DNNL_ARG_VARIANCE, &g.c, stats + g.C},   {DNNL_ARG_DIFF_DST, &g.x, a->dout},
                       {DNNL_ARG_SCALE, &g.c, a->in[1]},         {DNNL_ARG_DIFF_SRC, &g.x, dx},
                       {DNNL_ARG_DIFF_SCALE, &g.c, ds},          {DNNL_ARG_DIFF_SHIFT, &g.c, db}};
    rc = xe_prim_exec(a, p, 9, args, err);
done:
    free(tmp);
    return rc;
}

/* ---- InstanceNormalization (loops, in double) ---- */

static void in_stats(const float *x, int64_t hw, double *mean, double *var)
{
    double s = 0, q = 0;
    for (int64_t i = 0; i < hw; i++) s += x[i];
    *mean = s / (double)hw;
    for (int64_t i = 0; i < hw; i++) q += (x[i] - *mean) * (x[i] - *mean);
    *var = q / (double)hw;
}

static int in_fwd(xe_kargs *a, xe_err *err)
{
    const xe_tensor *x = xe_kt(a, 0);
    if (x->rank < 3) return xe_err_set(err, XE_EUNSUPPORTED, "op %s: InstanceNorm of rank < 3", xe_kname(a));
    int64_t N = x->dim[0], C = x->dim[1], hw = xe_tensor_numel(x) / (N * C);
    double eps = a->net->op[a->k].epsilon;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = a->in[0] + (n * C + c) * hw;
            float *yp = a->out + (n * C + c) * hw;
            double mean, var;
            in_stats(xp, hw, &mean, &var);
            double is = 1.0 / sqrt(var + eps);
            for (int64_t i = 0; i < hw; i++) yp[i] = (float)((xp[i] - mean) * is * a->in[1][c] + a->in[2][c]);
        }
    return XE_OK;
}

static int in_bwd(xe_kargs *a, xe_err *err)
{
    const xe_tensor *x = xe_kt(a, 0);
    if (!a->in[0]) return xe_err_set(err, XE_EINTERNAL, "op %s: instance norm backward without X", xe_kname(a));
    int64_t N = x->dim[0], C = x->dim[1], hw = xe_tensor_numel(x) / (N * C);
    double eps = a->net->op[a->k].epsilon;
    double *dsc = calloc((size_t)(2 * C), sizeof *dsc);
    if (!dsc) return xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
    double *dsh = dsc + C;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = a->in[0] + (n * C + c) * hw, *dy = a->dout + (n * C + c) * hw;
            double mean, var, sdy = 0, sdyx = 0;
            in_stats(xp, hw, &mean, &var);
            double is = 1.0 / sqrt(var + eps);
            for (int64_t i = 0; i < hw; i++) {
                sdy += dy[i];
                sdyx += dy[i] * (xp[i] - mean) * is;
            }
            dsc[c] += sdyx;
            dsh[c] += sdy;
            if (a->din[0]) {
                float *dx = a->din[0] + (n * C + c) * hw;
                double k = a->in[1][c] * is;
                for (int64_t i = 0; i < hw; i++)
                    dx[i] = (float)(k * (dy[i] - sdy / (double)hw - (xp[i] - mean) * is * sdyx / (double)hw));
            }
        }
    for (int64_t c = 0; c < C; c++) {
        if (a->dparam[1]) a->dparam[1][c] = (float)dsc[c];
        if (a->dparam[2]) a->dparam[2][c] = (float)dsh[c];
    }
    free(dsc);
    return XE_OK;
}

/* ---- LRN ---- */

static int lrn_desc(const xe_kargs *a, dnnl_memory_desc_t *md, dnnl_prop_kind_t prop, dnnl_lrn_desc_t *f,
                    dnnl_lrn_desc_t *b)
{
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *x = xe_kt(a, 0);
    if (xe_md_plain(md, x->rank, x->dim)) return 0;
    float al = (float)op->alpha, be = (float)op->beta, k = (float)op->bias;
    if (dnnl_lrn_forward_desc_init(f, prop, dnnl_lrn_across_channels, md, op->size, al, be, k) != dnnl_success)
        return 0;
    return !b || dnnl_lrn_backward_desc_init(b, dnnl_lrn_across_channels, md, md, op->size, al, be, k) ==
                     dnnl_success;
}

static int lrn_fwd(xe_kargs *a, xe_err *err)
{
    dnnl_memory_desc_t md;
    dnnl_lrn_desc_t f;
    if (!lrn_desc(a, &md, dnnl_forward_inference, &f, NULL))
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the LRN", xe_kname(a));
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, 0, &f, NULL, &p, err);
    if (rc) return rc;
    xe_karg args[2] = {{DNNL_ARG_SRC, &md, a->in[0]}, {DNNL_ARG_DST, &md, a->out}};
    return xe_prim_exec(a, p, 2, args, err);
}

static int lrn_bwd(xe_kargs *a, xe_err *err)
{
    if (!a->din[0]) return XE_OK;
    if (!a->in[0]) return xe_err_set(err, XE_EINTERNAL, "op %s: LRN backward without X", xe_kname(a));
    dnnl_memory_desc_t md;
    dnnl_lrn_desc_t f, b;
    if (!lrn_desc(a, &md, dnnl_forward_training, &f, &b))
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the LRN", xe_kname(a));
    dnnl_primitive_t pf, pb;
    int rc = xe_prim_get(a, 0, &f, NULL, &pf, err);
    if (!rc) rc = xe_prim_get(a, 1, &b, &f, &pb, err);
    if (rc) return rc;
    const_dnnl_primitive_desc_t pd;
    dnnl_primitive_get_primitive_desc(pf, &pd);
    dnnl_memory_desc_t wsmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_workspace_md, 0);
    void *ws = malloc(dnnl_memory_desc_get_size(&wsmd) + 1);
    void *y = malloc((size_t)xe_tensor_bytes(xe_kt(a, 0)) + 1);
    if (!ws || !y) rc = xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
    xe_karg fa[3] = {{DNNL_ARG_SRC, &md, a->in[0]}, {DNNL_ARG_DST, &md, y}, {DNNL_ARG_WORKSPACE, &wsmd, ws}};
    if (!rc) rc = xe_prim_exec(a, pf, 3, fa, err);
    xe_karg ba[4] = {{DNNL_ARG_SRC, &md, a->in[0]},
                     {DNNL_ARG_DIFF_DST, &md, a->dout},
                     {DNNL_ARG_WORKSPACE, &wsmd, ws},
                     {DNNL_ARG_DIFF_SRC, &md, a->din[0]}};
    if (!rc) rc = xe_prim_exec(a, pb, 4, ba, err);
    free(ws);
    free(y);
    return rc;
}

int xe_kern_norm_fwd(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_BATCHNORM: return bn_fwd(a, err);
    case XE_OP_INSTANCENORM: return in_fwd(a, err);
    default: return lrn_fwd(a, err);
    }
}

int xe_kern_norm_bwd(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_BATCHNORM: return bn_bwd(a, err);
    case XE_OP_INSTANCENORM: return in_bwd(a, err);
    default: return lrn_bwd(a, err);
    }
}
