/* xengine executor — kernel dispatch by operator family. */
#include "kern.h"

int xe_kern_forward(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE: return xe_kern_conv_fwd(a, err);
    case XE_OP_MAXPOOL:
    case XE_OP_AVGPOOL:
    case XE_OP_GLOBAL_AVGPOOL: return xe_kern_pool_fwd(a, err);
    case XE_OP_GEMM:
    case XE_OP_MATMUL: return xe_kern_gemm_fwd(a, err);
    case XE_OP_RELU:
    case XE_OP_LEAKY_RELU:
    case XE_OP_SIGMOID:
    case XE_OP_CLIP: return xe_kern_elt_fwd(a, err);
    case XE_OP_BATCHNORM:
    case XE_OP_INSTANCENORM:
    case XE_OP_LRN: return xe_kern_norm_fwd(a, err);
    case XE_OP_ADD:
    case XE_OP_CONCAT:
    case XE_OP_DROPOUT:
    case XE_OP_SOFTMAX:
    case XE_OP_LOSS: return xe_kern_misc_fwd(a, err);
    default:
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: %s has no kernel", xe_kname(a),
                          xe_op_kind_name(a->net->op[a->k].kind));
    }
}

int xe_kern_backward(xe_kargs *a, xe_err *err)
{
    switch (a->net->op[a->k].kind) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE: return xe_kern_conv_bwd(a, err);
    case XE_OP_MAXPOOL:
    case XE_OP_AVGPOOL:
    case XE_OP_GLOBAL_AVGPOOL: return xe_kern_pool_bwd(a, err);
    case XE_OP_GEMM:
    case XE_OP_MATMUL: return xe_kern_gemm_bwd(a, err);
    case XE_OP_RELU:
    case XE_OP_LEAKY_RELU:
    case XE_OP_SIGMOID:
    case XE_OP_CLIP: return xe_kern_elt_bwd(a, err);
    case XE_OP_BATCHNORM:
    case XE_OP_INSTANCENORM:
    case XE_OP_LRN: return xe_kern_norm_bwd(a, err);
    case XE_OP_ADD:
    case XE_OP_CONCAT:
    case XE_OP_DROPOUT:
    case XE_OP_SOFTMAX: return xe_kern_misc_bwd(a, err);
    default:
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: %s has no backward kernel", xe_kname(a),
                          xe_op_kind_name(a->net->op[a->k].kind));
    }
}
