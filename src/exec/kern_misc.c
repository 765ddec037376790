/* xengine executor — Add, Concat, Dropout and the loss by plain loops in a fixed order
 * (so their results do not depend on the thread count), Softmax on oneDNN.
 *
 * Dropout's mask is a hash of (seed, op index, element index): a recomputed forward, and
 * the backward, reproduce it bit for bit without reading it back. The loss is the mean
 * softmax cross-entropy over the batch; its node outputs d(loss)/d(logits) =
 * (softmax(logits) - onehot(label)) / N. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

/* ---- Add with numpy broadcasting ---- */

/* Element strides of tensor t broadcast to y's shape (0 along broadcast dimensions). */
static void bcast_strides(const xe_tensor *t, const xe_tensor *y, int64_t *s)
{
    int64_t acc = 1;
    for (int i = y->rank - 1, j = t->rank - 1; i >= 0; i--, j--) {
        if (j >= 0 && t->dim[j] == y->dim[i] && y->dim[i] > 1) {
            s[i] = acc;
            acc *= t->dim[j];
        } else {
            s[i] = 0;
        }
    }
}

/* Calls f(yi, ai, bi) for every element of y in order, with a's and b's offsets. */
static void add_walk(const xe_tensor *y, const int64_t *sa, const int64_t *sb, const float *A, const float *B,
                     float *Y, float *dA, float *dB, const float *dY)
{
    int64_t idx[XE_MAX_RANK] = {0}, n = xe_tensor_numel(y), oa = 0, ob = 0;
    for (int64_t e = 0; e < n; e++) {
        if (Y) Y[e] = A[oa] + B[ob];
        if (dA) dA[oa] += dY[e];
        if (dB) dB[ob] += dY[e];
        for (int i = y->rank - 1; i >= 0; i--) { /* odometer */
            idx[i]++;
            oa += sa[i];
            ob += sb[i];
            if (idx[i] < y->dim[i]) break;
            oa -= sa[i] * y->dim[i];
            ob -= sb[i] * y->dim[i];
            idx[i] = 0;
        }
    }
}

static int add_fwd(xe_kargs *a)
{
    const xe_tensor *y = xe_ky(a), *ta = xe_kt(a, 0), *tb = xe_kt(a, 1);
    int64_t n = xe_tensor_numel(y);
    if (xe_tensor_numel(ta) == n && xe_tensor_numel(tb) == n) {
        for (int64_t i = 0; i < n; i++) a->out[i] = a->in[0][i] + a->in[1][i];
        return XE_OK;
    }
    int64_t sa[XE_MAX_RANK], sb[XE_MAX_RANK];
    bcast_strides(ta, y, sa);
    bcast_strides(tb, y, sb);
    add_walk(y, sa, sb, a->in[0], a->in[1], a->out, NULL, NULL, NULL);
    return XE_OK;
}

static int add_bwd(xe_kargs *a)
{
    const xe_tensor *y = xe_ky(a);
    int64_t n = xe_tensor_numel(y);
    int64_t sa[XE_MAX_RANK], sb[XE_MAX_RANK];
    float *d[2];
    for (int j = 0; j < 2; j++) {
        d[j] = a->din[j] ? a->din[j] : a->dparam[j];
        if (!d[j]) continue;
        int64_t nj = xe_tensor_numel(xe_kt(a, j));
        if (nj == n) memcpy(d[j], a->dout, (size_t)n * sizeof *d[j]);
        else memset(d[j], 0, (size_t)nj * sizeof *d[j]);
    }
    bcast_strides(xe_kt(a, 0), y, sa);
    bcast_strides(xe_kt(a, 1), y, sb);
    int ra = d[0] && xe_tensor_numel(xe_kt(a, 0)) != n, rb = d[1] && xe_tensor_numel(xe_kt(a, 1)) != n;
    if (ra || rb) add_walk(y, sa, sb, NULL, NULL, NULL, ra ? d[0] : NULL, rb ? d[1] : NULL, a->dout);
    return XE_OK;
}

/* ---- Concat ---- */

static void concat_geom(const xe_kargs *a, int *axis, int64_t *outer, int64_t *inner)
{
    const xe_tensor *y = xe_ky(a);
    int ax = (int)a->net->op[a->k].axis;
    if (ax < 0) ax += y->rank;
    *axis = ax;
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < ax; i++) *outer *= y->dim[i];
    for (int i = ax + 1; i < y->rank; i++) *inner *= y->dim[i];
}

static void concat_run(xe_kargs *a, int bwd)
{
    const xe_op *op = &a->net->op[a->k];
    int ax;
    int64_t outer, inner, yrow = 0;
    concat_geom(a, &ax, &outer, &inner);
    for (int j = 0; j < op->nin; j++) yrow += xe_kt(a, j)->dim[ax] * inner;
    int64_t off = 0;
    for (int j = 0; j < op->nin; j++) {
        int64_t row = xe_kt(a, j)->dim[ax] * inner;
        float *dj = bwd ? (a->din[j] ? a->din[j] : a->dparam[j]) : NULL;
        for (int64_t o = 0; o < outer; o++) {
            if (!bwd) memcpy(a->out + o * yrow + off, a->in[j] + o * row, (size_t)row * sizeof(float));
            else if (dj) memcpy(dj + o * row, a->dout + o * yrow + off, (size_t)row * sizeof(float));
        }
        off += row;
    }
}

/* ---- Dropout ---- */

static int dropout(xe_kargs *a, int bwd)
{
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *y = xe_ky(a);
    int64_t n = xe_tensor_numel(y);
    double r = op->ratio, s = r < 1 ? 1.0 / (1.0 - r) : 0;
    uint8_t *mask = !bwd && a->out_bytes >= n * 5 ? (uint8_t *)(a->out + n) : NULL;
    float *dst = bwd ? a->din[0] : a->out;
    const float *src = bwd ? a->dout : a->in[0];
    if (!dst) return XE_OK;
    for (int64_t i = 0; i < n; i++) {
        int keep = xe_hash_unit(xe_hash3(a->seed, (uint64_t)a->k, (uint64_t)i)) >= r;
        if (mask) mask[i] = (uint8_t)keep;
        dst[i] = keep ? (float)(src[i] * s) : 0.0f;
    }
    return XE_OK;
}

/* ---- Softmax (oneDNN) ---- */

static int softmax(xe_kargs *a, int bwd, xe_err *err)
{
    const xe_tensor *y = xe_ky(a);
    int ax = (int)a->net->op[a->k].axis;
    if (ax < 0) ax += y->rank;
    dnnl_memory_desc_t md;
    if (xe_md_plain(&md, y->rank, y->dim)) return xe_err_set(err, XE_EINTERNAL, "op %s: bad descriptor", xe_kname(a));
    dnnl_softmax_desc_t f, b;
    if (dnnl_softmax_forward_desc_init(&f, dnnl_forward_training, &md, ax) != dnnl_success ||
        dnnl_softmax_backward_desc_init(&b, &md, &md, ax) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the softmax", xe_kname(a));
    dnnl_primitive_t p;
    int rc = xe_prim_get(a, 0, bwd ? (const void *)&b : (const void *)&f, bwd ? &f : NULL, &p, err);
    if (rc) return rc;
    if (!bwd) {
        xe_karg args[2] = {{DNNL_ARG_SRC, &md, a->in[0]}, {DNNL_ARG_DST, &md, a->out}};
        return xe_prim_exec(a, p, 2, args, err);
    }
    if (!a->din[0]) return XE_OK;
    if (!a->out) return xe_err_set(err, XE_EINTERNAL, "op %s: softmax backward without its output", xe_kname(a));
    xe_karg args[3] = {{DNNL_ARG_DST, &md, a->out}, {DNNL_ARG_DIFF_DST, &md, a->dout},
                       {DNNL_ARG_DIFF_SRC, &md, a->din[0]}};
    return xe_prim_exec(a, p, 3, args, err);
}

/* ---- the loss ---- */

static int loss_fwd(xe_kargs *a, xe_err *err)
{
    const xe_tensor *z = &a->net->t[xe_net_resolve_view(a->net, a->net->op[a->k].in[0])];
    int64_t N = z->dim[0], K = xe_tensor_numel(z) / N;
    if (!a->labels) return xe_err_set(err, XE_EINTERNAL, "op %s: loss without labels", xe_kname(a));
    double total = 0;
    for (int64_t n = 0; n < N; n++) {
        const float *x = a->in[0] + n * K;
        float *g = a->out + n * K;
        int64_t c = a->labels[n];
        if (c < 0 || c >= K)
            return xe_err_set(err, XE_EINVAL, "op %s: label %lld of sample %lld outside 0..%lld", xe_kname(a),
                              (long long)c, (long long)n, (long long)(K - 1));
        double mx = x[0], s = 0;
        for (int64_t i = 1; i < K; i++) mx = x[i] > mx ? x[i] : mx;
        for (int64_t i = 0; i < K; i++) s += exp(x[i] - mx);
        total += log(s) - (x[c] - mx);
        for (int64_t i = 0; i < K; i++) g[i] = (float)((exp(x[i] - mx) / s - (i == c)) / (double)N);
    }
    a->loss = total / (double)N;
    return XE_OK;
}

int xe_kern_misc_fwd(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_ADD: return add_fwd(a);
    case XE_OP_CONCAT: concat_run(a, 0); return XE_OK;
    case XE_OP_DROPOUT: return dropout(a, 0);
    case XE_OP_SOFTMAX: return softmax(a, 0, err);
    default: return loss_fwd(a, err);
    }
}

int xe_kern_misc_bwd(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_ADD: return add_bwd(a);
    case XE_OP_CONCAT: concat_run(a, 1); return XE_OK;
    case XE_OP_DROPOUT: return dropout(a, 1);
    case XE_OP_SOFTMAX: return softmax(a, 1, err);
    default: return xe_err_set(err, XE_EINTERNAL, "op %s: the loss has no backward node", xe_kname(a));
    }
}
