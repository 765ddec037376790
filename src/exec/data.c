/* xengine executor — the values of a training step outside the budget: parameters
 * (from the net or seeded), the data input, labels, and parameter gradients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

uint64_t xe_hash3(uint64_t a, uint64_t b, uint64_t c)
{
    /* splitmix64 finalizer over a simple combination: cheap, well mixed, portable */
    uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL ^
                 (c + 0x85157AF5ULL) * 0x94D049BB133111EBULL;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

void xe_exec_data_clear(xe_exec_data *d)
{
    if (d->val)
        for (int i = 0; i < d->nt; i++) free(d->val[i]);
    if (d->grad)
        for (int i = 0; i < d->nt; i++) free(d->grad[i]);
    free(d->val);
    free(d->grad);
    free(d->labels);
    memset(d, 0, sizeof *d);
}

/* Fill rule of a seeded parameter: 0 uniform, 1 ones, 2 zeros. */
static int fill_rule(const xe_net *net, int t)
{
    for (int k = 0; k < net->nops; k++) {
        const xe_op *op = &net->op[k];
        if (op->kind != XE_OP_BATCHNORM && op->kind != XE_OP_INSTANCENORM) continue;
        for (int j = 1; j < op->nin; j++)
            if (op->in[j] == t) return (j == 1 || j == 4) ? 1 : 2;
    }
    return 0;
}

static const char *dtype_name(xe_dtype dt)
{
    return dt == XE_DT_FLOAT32 ? "float32" : dt == XE_DT_INT64 ? "int64" : dt == XE_DT_FLOAT16 ? "float16" : "unknown";
}

/* XE_EUNSUPPORTED naming the first tensor an operator computes with (an input other than
 * a Reshape's shape or the loss's labels, or an output) that is not float32. */
static int check_float32(const xe_net *net, xe_err *err)
{
    for (int k = 0; k < net->nops; k++) {
        const xe_op *op = &net->op[k];
        if (xe_op_is_view(op->kind)) continue;
        for (int j = 0; j <= op->nin; j++) { /* the inputs, then the output */
            if (op->kind == XE_OP_LOSS && j >= 1) continue; /* the labels (int64), the loss value */
            const xe_tensor *t = &net->t[j == op->nin ? op->out : xe_net_resolve_view(net, op->in[j])];
            if (t->dtype != XE_DT_FLOAT32)
                return xe_err_set(err, XE_EUNSUPPORTED,
                                  "net %s: tensor \"%s\" of op %s is %s: the executor runs float32 models only "
                                  "(planning and simulation take other types' sizes)",
                                  net->name, t->name, op->name, dtype_name(t->dtype));
        }
    }
    return XE_OK;
}

int xe_exec_data_init(const xe_net *net, uint64_t seed, xe_exec_data *d, xe_err *err)
{
    memset(d, 0, sizeof *d);
    d->label_t = -1;
    int rc = check_float32(net, err);
    if (rc) return rc;
    int loss = -1;
    for (int k = 0; k < net->nops; k++)
        if (net->op[k].kind == XE_OP_LOSS) loss = k;
    if (loss < 0) return xe_err_set(err, XE_EINVAL, "net %s: no loss op (build the training graph first)", net->name);
    d->nt = net->nt;
    d->val = calloc((size_t)net->nt, sizeof *d->val);
    d->grad = calloc((size_t)net->nt, sizeof *d->grad);
    if (!d->val || !d->grad) goto oom;
    for (int t = 0; t < net->nt; t++) {
        const xe_tensor *x = &net->t[t];
        if ((x->role != XE_T_PARAM && x->role != XE_T_INPUT) || x->dtype != XE_DT_FLOAT32) continue;
        if (x->rank < 0) return xe_exec_data_clear(d), xe_err_set(err, XE_EINVAL, "net %s: tensor %s has no shape",
                                                                  net->name, x->name);
        int64_t n = xe_tensor_numel(x);
        float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        if (!v) goto oom;
        d->val[t] = v;
        if (x->role == XE_T_PARAM) {
            if (!(d->grad[t] = calloc((size_t)(n ? n : 1), sizeof *d->grad[t]))) goto oom;
        }
        if (x->role == XE_T_PARAM && x->data) {
            memcpy(v, x->data, (size_t)n * sizeof *v);
            continue;
        }
        int rule = x->role == XE_T_PARAM ? fill_rule(net, t) : 0;
        double bound = x->role == XE_T_INPUT ? 1.0
                     : x->rank >= 2      ? 1.0 / sqrt((double)(n / x->dim[0]))
                                         : 0.1;
        for (int64_t i = 0; i < n; i++)
            v[i] = rule == 1 ? 1.0f
                 : rule == 2 ? 0.0f
                             : (float)(bound * (2.0 * xe_hash_unit(xe_hash3(seed, (uint64_t)t, (uint64_t)i)) - 1.0));
    }
    const xe_op *lop = &net->op[loss];
    const xe_tensor *z = &net->t[xe_net_resolve_view(net, lop->in[0])];
    d->label_t = lop->nin > 1 ? lop->in[1] : -1;
    int64_t N = z->rank > 0 ? z->dim[0] : 1;
    d->classes = xe_tensor_numel(z) / N;
    if (!(d->labels = malloc((size_t)N * sizeof *d->labels))) goto oom;
    for (int64_t i = 0; i < N; i++)
        d->labels[i] = (int64_t)(xe_hash3(seed, UINT64_C(0xFFFFFFFF), (uint64_t)i) % (uint64_t)d->classes);
    return XE_OK;
oom:
    xe_exec_data_clear(d);
    return xe_err_set(err, XE_ENOMEM, "net %s: out of memory for parameters and data", net->name);
}
