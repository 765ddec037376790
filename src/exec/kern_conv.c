/* xengine executor — Conv and ConvTranspose on oneDNN: forward, backward data, backward
 * weights and bias. Tensors are plain NCHW; ONNX weights are OIHW for Conv (grouped:
 * [g, O/g, I/g, kh, kw] in oneDNN's terms, the same bytes) and [I, O/g, kh, kw] for
 * ConvTranspose, transposed to oneDNN's [g, O/g, I/g, kh, kw] in a scratch buffer. */
#include <stdlib.h>
#include <string.h>

#include "kern.h"

typedef struct conv_geom {
    dnnl_memory_desc_t x, w, b, y; /* plain descriptors */
    dnnl_dims_t stride, dil, pl, pr;
    int deconv, has_b;
    int64_t g, ci, co, kh, kw; /* groups, input / output channels, kernel */
} conv_geom;

static int geom(const xe_kargs *a, conv_geom *c, xe_err *err)
{
    const xe_op *op = &a->net->op[a->k];
    const xe_tensor *x = xe_kt(a, 0), *w = xe_kt(a, 1), *y = xe_ky(a);
    memset(c, 0, sizeof *c);
    c->deconv = op->kind == XE_OP_CONV_TRANSPOSE;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: only 2-D convolutions (rank-4 tensors) are supported",
                          op->name);
    c->g = op->group > 0 ? op->group : 1;
    c->ci = x->dim[1];
    c->co = y->dim[1];
    c->kh = w->dim[2];
    c->kw = w->dim[3];
    c->has_b = op->nin > 2;
    for (int i = 0; i < 2; i++) {
        c->stride[i] = op->stride[i] > 0 ? op->stride[i] : 1;
        c->dil[i] = (op->dilation[i] > 0 ? op->dilation[i] : 1) - 1;
        c->pl[i] = op->pad[i];
        c->pr[i] = op->pad[i + 2];
    }
    if (c->deconv)
        for (int i = 0; i < 2; i++) c->pr[i] -= op->output_padding[i];
    if (xe_md_plain(&c->x, 4, x->dim) || xe_md_plain(&c->y, 4, y->dim)) goto bad;
    int64_t wd[5] = {c->g, c->co / c->g, c->ci / c->g, c->kh, c->kw};
    if (c->g > 1 ? xe_md_plain(&c->w, 5, wd) : xe_md_plain(&c->w, 4, wd + 1)) goto bad;
    if (c->has_b && xe_md_plain(&c->b, 1, &c->co)) goto bad;
    return XE_OK;
bad:
    return xe_err_set(err, XE_EINTERNAL, "op %s: bad memory descriptor", op->name);
}

/* ConvTranspose weights: ONNX [g*Ig, Og, kh, kw] <-> oneDNN [g, Og, Ig, kh, kw]. */
static void deconv_w(const conv_geom *c, const float *src, float *dst, int to_dnnl)
{
    int64_t og = c->co / c->g, ig = c->ci / c->g, kk = c->kh * c->kw;
    for (int64_t g = 0; g < c->g; g++)
        for (int64_t o = 0; o < og; o++)
            for (int64_t i = 0; i < ig; i++) {
                const int64_t on = ((g * ig + i) * og + o) * kk, dn = ((g * og + o) * ig + i) * kk;
                if (to_dnnl) memcpy(dst + dn, src + on, (size_t)kk * sizeof *dst);
                else memcpy(dst + on, src + dn, (size_t)kk * sizeof *dst);
            }
}

static int fwd_desc(const conv_geom *c, dnnl_prop_kind_t prop, void *out)
{
    const dnnl_memory_desc_t *b = c->has_b ? &c->b : NULL;
    if (c->deconv)
        return dnnl_dilated_deconvolution_forward_desc_init(out, prop, dnnl_deconvolution_direct, &c->x, &c->w, b,
                                                            &c->y, c->stride, c->dil, c->pl, c->pr);
    return dnnl_dilated_convolution_forward_desc_init(out, prop, dnnl_convolution_direct, &c->x, &c->w, b, &c->y,
                                                      c->stride, c->dil, c->pl, c->pr);
}

int xe_kern_conv_fwd(xe_kargs *a, xe_err *err)
{
    conv_geom c;
    int rc = geom(a, &c, err);
    if (rc) return rc;
    union {
        dnnl_convolution_desc_t conv;
        dnnl_deconvolution_desc_t deconv;
    } d;
    if (fwd_desc(&c, dnnl_forward_training, &d) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the convolution shape", xe_kname(a));
    dnnl_primitive_t p;
    if ((rc = xe_prim_get(a, 0, &d, NULL, &p, err))) return rc;
    const float *w = a->in[1];
    float *wt = NULL;
    if (c.deconv) {
        wt = malloc((size_t)xe_tensor_numel(xe_kt(a, 1)) * sizeof *wt);
        if (!wt) return xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
        deconv_w(&c, w, wt, 1);
        w = wt;
    }
    xe_karg args[4] = {{DNNL_ARG_SRC, &c.x, a->in[0]}, {DNNL_ARG_WEIGHTS, &c.w, w}, {DNNL_ARG_DST, &c.y, a->out},
                       {DNNL_ARG_BIAS, &c.b, c.has_b ? a->in[2] : NULL}};
    rc = xe_prim_exec(a, p, c.has_b ? 4 : 3, args, err);
    free(wt);
    return rc;
}

int xe_kern_conv_bwd(xe_kargs *a, xe_err *err)
{
    conv_geom c;
    int rc = geom(a, &c, err);
    if (rc) return rc;
    union {
        dnnl_convolution_desc_t conv;
        dnnl_deconvolution_desc_t deconv;
    } f, d;
    if (fwd_desc(&c, dnnl_forward_training, &f) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the convolution shape", xe_kname(a));
    int64_t wn = xe_tensor_numel(xe_kt(a, 1));
    float *wt = NULL, *dwt = NULL;
    if (c.deconv) {
        wt = malloc((size_t)wn * sizeof *wt);
        dwt = malloc((size_t)wn * sizeof *dwt);
        if (!wt || !dwt) {
            rc = xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
            goto done;
        }
        deconv_w(&c, a->in[1], wt, 1);
    }
    dnnl_primitive_t p;
    if (a->din[0]) { /* backward data */
        dnnl_status_t st = c.deconv ? dnnl_dilated_deconvolution_backward_data_desc_init(
                                          &d.deconv, dnnl_deconvolution_direct, &c.x, &c.w, &c.y, c.stride, c.dil,
                                          c.pl, c.pr)
                                    : dnnl_dilated_convolution_backward_data_desc_init(
                                          &d.conv, dnnl_convolution_direct, &c.x, &c.w, &c.y, c.stride, c.dil, c.pl,
                                          c.pr);
        if (st != dnnl_success) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the backward-data shape", xe_kname(a));
            goto done;
        }
        if ((rc = xe_prim_get(a, 1, &d, &f, &p, err))) goto done;
        xe_karg args[3] = {{DNNL_ARG_DIFF_DST, &c.y, a->dout},
                           {DNNL_ARG_WEIGHTS, &c.w, c.deconv ? wt : a->in[1]},
                           {DNNL_ARG_DIFF_SRC, &c.x, a->din[0]}};
        if ((rc = xe_prim_exec(a, p, 3, args, err))) goto done;
    }
    if (a->dparam[1] || (c.has_b && a->dparam[2])) { /* backward weights (and bias) */
        if (!a->in[0]) {
            rc = xe_err_set(err, XE_EINTERNAL, "op %s: weight gradient without the input X", xe_kname(a));
            goto done;
        }
        const dnnl_memory_desc_t *b = c.has_b ? &c.b : NULL;
        dnnl_status_t st = c.deconv ? dnnl_dilated_deconvolution_backward_weights_desc_init(
                                          &d.deconv, dnnl_deconvolution_direct, &c.x, &c.w, b, &c.y, c.stride,
                                          c.dil, c.pl, c.pr)
                                    : dnnl_dilated_convolution_backward_weights_desc_init(
                                          &d.conv, dnnl_convolution_direct, &c.x, &c.w, b, &c.y, c.stride, c.dil,
                                          c.pl, c.pr);
        if (st != dnnl_success) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN rejects the backward-weights shape", xe_kname(a));
            goto done;
        }
        if ((rc = xe_prim_get(a, 2, &d, &f, &p, err))) goto done;
        float *dbias = NULL;
        if (c.has_b) {
            dbias = a->dparam[2] ? a->dparam[2] : malloc((size_t)c.co * sizeof *dbias);
            if (!dbias) {
                rc = xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
                goto done;
            }
        }
        float *dw = c.deconv ? dwt : a->dparam[1];
        float *dwtmp = NULL;
        if (!dw) dw = dwtmp = malloc((size_t)wn * sizeof *dw);
        if (!dw) rc = xe_err_set(err, XE_ENOMEM, "op %s: out of memory", xe_kname(a));
        xe_karg args[4] = {{DNNL_ARG_SRC, &c.x, a->in[0]},
                           {DNNL_ARG_DIFF_DST, &c.y, a->dout},
                           {DNNL_ARG_DIFF_WEIGHTS, &c.w, dw},
                           {DNNL_ARG_DIFF_BIAS, &c.b, dbias}};
        if (!rc) rc = xe_prim_exec(a, p, c.has_b ? 4 : 3, args, err);
        if (!rc && c.deconv && a->dparam[1]) deconv_w(&c, dwt, a->dparam[1], 0);
        if (dbias != a->dparam[2]) free(dbias);
        free(dwtmp);
    }
done:
    free(wt);
    free(dwt);
    return rc;
}
