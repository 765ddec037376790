/* xengine executor — Gemm and MatMul on oneDNN matmul. Transposed operands are strided
 * memory descriptors (no copies); alpha, beta and the bias C are applied by plain loops
 * in a fixed order. Backward: d op(A) = alpha dY op(B)^T, d op(B) = alpha op(A)^T dY,
 * dC = beta * dY summed over C's broadcast dimensions. */
#include <stdlib.h>
#include <string.h>

#include "kern.h"

/* A strided matrix operand: batch, rows, cols and their strides (elements). */
typedef struct mat {
    const float *p;
    int64_t b, r, c;    /* batch 1 or the full batch */
    int64_t sb, sr, sc; /* strides */
} mat;

static mat mat_of(const float *p, int64_t b, int64_t r, int64_t c, int64_t sb, int64_t sr, int64_t sc)
{
    mat m = {p, b, r, c, sb, sr, sc};
    return m;
}
static mat mat_t(mat m) /* transpose rows and cols */
{
    return mat_of(m.p, m.b, m.c, m.r, m.sb, m.sc, m.sr);
}

/* out[bt, A.r, B.c] (dense) = A x B, batch broadcast where A.b or B.b is 1. */
static int mm(const xe_kargs *a, int slot, mat A, mat B, int64_t bt, float *out, xe_err *err)
{
    dnnl_memory_desc_t ma, mb, mc;
    int64_t da[3] = {A.b, A.r, A.c}, sa[3] = {A.sb ? A.sb : A.r * A.c, A.sr, A.sc};
    int64_t db[3] = {B.b, B.r, B.c}, sbb[3] = {B.sb ? B.sb : B.r * B.c, B.sr, B.sc};
    int64_t dc[3] = {bt, A.r, B.c};
    if (xe_md_strided(&ma, 3, da, sa) || xe_md_strided(&mb, 3, db, sbb) || xe_md_plain(&mc, 3, dc))
        return xe_err_set(err, XE_EINTERNAL, "op %s: bad matmul descriptor", xe_kname(a));
    dnnl_matmul_desc_t d;
    if (dnnl_matmul_desc_init(&d, &ma, &mb, NULL, &mc) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the matmul shape", xe_kname(a));
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, slot, &d, NULL, &p, err);
    if (rc) return rc;
    xe_karg args[3] = {{DNNL_ARG_SRC, &ma, A.p}, {DNNL_ARG_WEIGHTS, &mb, B.p}, {DNNL_ARG_DST, &mc, out}};
    return xe_prim_exec(a, p, 3, args, err);
}

static void scale(float *x, int64_t n, double s)
{
    if (s == 1.0) return;
    for (int64_t i = 0; i < n; i++) x[i] = (float)(x[i] * s);
}

/* The operands op(A) [bt? M K] and op(B) [K N] of op a->k, with the output dims. */
typedef struct gemm_geom {
    mat A, B;
    int64_t bt, M, K, N;
    double alpha, beta;
    int has_c;
} gemm_geom;

static int geom(const xe_kargs *a, gemm_geom *g, xe_err *err)
{
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *ta = xe_kt(a, 0), *tb = xe_kt(a, 1);
    memset(g, 0, sizeof *g);
    if (op->kind == XE_OP_GEMM) {
        if (ta->rank != 2 || tb->rank != 2)
            return xe_err_set(err, XE_EUNSUPPORTED, "op %s: Gemm needs 2-D A and B", op->name);
        g->bt = 1;
        g->M = op->trans_a ? ta->dim[1] : ta->dim[0];
        g->K = op->trans_a ? ta->dim[0] : ta->dim[1];
        g->N = op->trans_b ? tb->dim[0] : tb->dim[1];
        g->A = mat_of(a->in[0], 1, g->M, g->K, 0, op->trans_a ? 1 : g->K, op->trans_a ? g->M : 1);
        g->B = mat_of(a->in[1], 1, g->K, g->N, 0, op->trans_b ? 1 : g->N, op->trans_b ? g->K : 1);
        g->alpha = op->alpha;
        g->beta = op->beta;
        g->has_c = op->nin > 2;
        return XE_OK;
    }
    if (ta->rank < 2 || tb->rank < 2)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: MatMul of a 1-D operand is not supported", op->name);
    int64_t ba = 1, bb = 1;
    for (int i = 0; i < ta->rank - 2; i++) ba *= ta->dim[i];
    for (int i = 0; i < tb->rank - 2; i++) bb *= tb->dim[i];
    if (ba != bb && ba != 1 && bb != 1)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: MatMul batch dimensions %lld and %lld", op->name,
                          (long long)ba, (long long)bb);
    g->bt = ba > bb ? ba : bb;
    g->M = ta->dim[ta->rank - 2];
    g->K = ta->dim[ta->rank - 1];
    g->N = tb->dim[tb->rank - 1];
    g->A = mat_of(a->in[0], ba, g->M, g->K, g->M * g->K, g->K, 1);
    g->B = mat_of(a->in[1], bb, g->K, g->N, g->K * g->N, g->N, 1);
    g->alpha = 1;
    return XE_OK;
}

int xe_kern_gemm_fwd(xe_kargs *a, xe_err *err)
{
    gemm_geom g;
    int rc = geom(a, &g, err);
    if (rc) return rc;
    if ((rc = mm(a, 0, g.A, g.B, g.bt, a->out, err))) return rc;
    scale(a->out, g.bt * g.M * g.N, g.alpha);
    if (g.has_c) {
        const xe_tensor *tc = xe_kt(a, 2);
        int64_t c0 = tc->rank >= 2 ? tc->dim[tc->rank - 2] : 1, c1 = tc->rank >= 1 ? tc->dim[tc->rank - 1] : 1;
        const float *c = a->in[2];
        for (int64_t m = 0; m < g.M; m++)
            for (int64_t n = 0; n < g.N; n++)
                a->out[m * g.N + n] += (float)(g.beta * c[(c0 == 1 ? 0 : m) * c1 + (c1 == 1 ? 0 : n)]);
    }
    return XE_OK;
}

int xe_kern_gemm_bwd(xe_kargs *a, xe_err *err)
{
    const xe_op *op = &a->net->op[a->k];
    gemm_geom g;
    int rc = geom(a, &g, err);
    if (rc) return rc;
    mat dY = mat_of(a->dout, g.bt, g.M, g.N, g.M * g.N, g.N, 1);
    float *dA = a->din[0] ? a->din[0] : a->dparam[0];
    float *dB = a->din[1] ? a->din[1] : a->dparam[1];
    int ta = op->kind == XE_OP_GEMM && op->trans_a, tb = op->kind == XE_OP_GEMM && op->trans_b;
    if (dA) {
        if (g.A.b == 1 && g.bt > 1)
            return xe_err_set(err, XE_EUNSUPPORTED, "op %s: gradient of a batch-broadcast MatMul A", op->name);
        if (!g.B.p) return xe_err_set(err, XE_EINTERNAL, "op %s: gradient of A without B", op->name);
        /* d op(A) = dY op(B)^T; stored transposed when transA: dA = op(B) dY^T */
        rc = ta ? mm(a, 1, g.B, mat_t(dY), g.bt, dA, err) : mm(a, 1, dY, mat_t(g.B), g.bt, dA, err);
        if (rc) return rc;
        scale(dA, g.bt * g.M * g.K, g.alpha);
    }
    if (dB) {
        if (!g.A.p) return xe_err_set(err, XE_EINTERNAL, "op %s: gradient of B without A", op->name);
        if (g.B.b == 1 && g.bt > 1) {
            /* B shared by the batch: fold the batch into the rows of A and dY */
            if (g.A.b != g.bt) return xe_err_set(err, XE_EUNSUPPORTED, "op %s: MatMul batch shapes", op->name);
            mat A2 = mat_of(g.A.p, 1, g.bt * g.M, g.K, 0, g.K, 1);
            mat dY2 = mat_of(a->dout, 1, g.bt * g.M, g.N, 0, g.N, 1);
            rc = mm(a, 2, mat_t(A2), dY2, 1, dB, err);
        } else {
            rc = tb ? mm(a, 2, mat_t(dY), g.A, g.bt, dB, err) : mm(a, 2, mat_t(g.A), dY, g.bt, dB, err);
        }
        if (rc) return rc;
        scale(dB, (g.B.b == 1 ? 1 : g.bt) * g.K * g.N, g.alpha);
    }
    float *dC = g.has_c ? (a->din[2] ? a->din[2] : a->dparam[2]) : NULL;
    if (dC) {
        const xe_tensor *tc = xe_kt(a, 2);
        int64_t c0 = tc->rank >= 2 ? tc->dim[tc->rank - 2] : 1, c1 = tc->rank >= 1 ? tc->dim[tc->rank - 1] : 1;
        int64_t nc = xe_tensor_numel(tc);
        double *acc = calloc((size_t)nc, sizeof *acc);
        if (!acc) return xe_err_set(err, XE_ENOMEM, "op %s: out of memory", op->name);
        for (int64_t m = 0; m < g.M; m++)
            for (int64_t n = 0; n < g.N; n++)
                acc[(c0 == 1 ? 0 : m) * c1 + (c1 == 1 ? 0 : n)] += a->dout[m * g.N + n];
        for (int64_t i = 0; i < nc; i++) dC[i] = (float)(g.beta * acc[i]);
        free(acc);
    }
    return XE_OK;
}
