/* xengine — a neural network as operators on tensors, and its training graph.
 *
 * An xe_net is what the ONNX reader (include/xengine/onnx.h) produces and what tests
 * build by hand: tensors (data input, labels, parameters, activations) and operators in a
 * topological order, each operator writing exactly one output tensor. Shapes are in
 * elements, NCHW for images; sizes in bytes come from dtype and shape.
 *
 * xe_net_training_graph turns it into the planner's xe_graph (one forward node per
 * operator that is not a view, one loss node, one backward node per operator in reverse
 * order) and an xe_train_map that says, for every graph node, which operator it computes
 * and in which role; the executor (include/xengine/exec.h) and the cost model
 * (include/xengine/cost.h) read that map. The semantics of every node, and which
 * tensors each backward node reads, are fixed in docs/training-graph.md; the contract in
 * short:
 *
 *   forward node of op k   computes op k's output tensor from its inputs. For
 *                          BatchNormalization / InstanceNormalization in training the
 *                          output also holds the saved mean and inverse std (2 x C
 *                          floats); for Dropout it also holds the mask (1 byte/element).
 *   views                  Flatten and Reshape make no node: a reader of a view's output
 *                          reads the view's source (xe_net_resolve_view).
 *   loss node              reads the logits, computes the mean softmax cross-entropy over
 *                          the batch and its gradient d(loss)/d(logits); its output is
 *                          that gradient (the size of the logits).
 *   backward node of op k  reads the gradients flowing into op k's output (the loss node
 *                          or the backward nodes of every consumer of op k's output) and
 *                          the forward nodes op k's gradient needs (docs/training-graph.md);
 *                          its output holds d(loss)/d(x) for every activation input x of
 *                          op k, concatenated in input order (0 bytes when op k has none,
 *                          e.g. the first convolution). Parameter gradients are
 *                          accumulated in buffers outside the budget, like parameters. */
#ifndef XENGINE_NET_H
#define XENGINE_NET_H

#include <stdint.h>

#include "xengine/error.h"
#include "xengine/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XE_OP_CONV = 0,          /* X, W[, B] -> Y                     (ONNX Conv) */
    XE_OP_CONV_TRANSPOSE,    /* X, W[, B] -> Y                     (ConvTranspose) */
    XE_OP_MAXPOOL,           /* X -> Y                             (MaxPool) */
    XE_OP_AVGPOOL,           /* X -> Y                             (AveragePool) */
    XE_OP_GLOBAL_AVGPOOL,    /* X -> Y [N, C, 1, 1]                (GlobalAveragePool) */
    XE_OP_GEMM,              /* A, B[, C] -> Y, alpha/beta/transA/transB (Gemm) */
    XE_OP_MATMUL,            /* A, B -> Y                          (MatMul) */
    XE_OP_RELU,              /* X -> Y                             (Relu) */
    XE_OP_LEAKY_RELU,        /* X -> Y, alpha                      (LeakyRelu) */
    XE_OP_DROPOUT,           /* X -> Y, ratio                      (Dropout) */
    XE_OP_LRN,               /* X -> Y, size/alpha/beta/bias       (LRN) */
    XE_OP_BATCHNORM,         /* X, scale, B, mean, var -> Y        (BatchNormalization) */
    XE_OP_INSTANCENORM,      /* X, scale, B -> Y                   (InstanceNormalization) */
    XE_OP_ADD,               /* A, B -> Y (same shape, or B broadcast) (Add) */
    XE_OP_CONCAT,            /* X1..Xk -> Y along axis             (Concat) */
    XE_OP_FLATTEN,           /* X -> Y, axis; a view               (Flatten) */
    XE_OP_RESHAPE,           /* X[, shape] -> Y; a view            (Reshape) */
    XE_OP_SOFTMAX,           /* X -> Y along axis                  (Softmax) */
    XE_OP_LOSS,              /* logits, labels -> mean cross-entropy (added for training) */
    XE_OP_CLIP,              /* X[, min, max] -> Y, clip_min/clip_max (Clip; ReLU6) */
    XE_OP_SIGMOID,           /* X -> Y = 1 / (1 + exp(-X)); backward dX = dY Y (1 - Y)
                                from Y (Sigmoid; 2026-12-05) */
    XE_OP_COUNT
} xe_op_kind;

typedef enum { XE_DT_FLOAT32 = 0, XE_DT_INT64 = 1, XE_DT_FLOAT16 = 2, XE_DT_COUNT } xe_dtype;

typedef enum {
    XE_T_INPUT = 0, /* the network's data input (batch in dim[0]) */
    XE_T_LABEL,     /* class labels of the loss (int64 [N]) */
    XE_T_PARAM,     /* a parameter or constant (ONNX initializer): not in any budget */
    XE_T_ACT        /* an activation: the output of an operator */
} xe_tensor_role;

#define XE_MAX_RANK 6
/* Inputs of one operator at most: a Concat of DenseNet-201 has 49 (16 until 2026-12-05
 * refused DenseNet-121, whose largest has 25). */
#define XE_OP_MAX_IN 64

typedef struct xe_tensor {
    char *name;              /* owned, unique in the net */
    xe_tensor_role role;
    xe_dtype dtype;
    int rank;                /* 0 .. XE_MAX_RANK; -1 while unknown (before inference) */
    int64_t dim[XE_MAX_RANK];/* elements per dimension, > 0 once known */
    int producer;            /* index of the op writing it, -1 for inputs and params */
    float *data;             /* initial values of a float32 param (owned, NULL if none:
                                ONNX files exported with export_params=False) */
    int64_t *idata;          /* values of an int64 constant (Reshape's shape), or NULL */
} xe_tensor;

typedef struct xe_op {
    xe_op_kind kind;
    char *name;              /* owned, unique in the net */
    int nin;                 /* 1 .. XE_OP_MAX_IN */
    int in[XE_OP_MAX_IN];    /* tensor indices, in the ONNX input order */
    int out;                 /* tensor index of the single output */
    /* attributes (ONNX defaults when absent) */
    int64_t kernel[2], stride[2], dilation[2];
    int64_t pad[4];          /* top, left, bottom, right */
    int64_t output_padding[2]; /* ConvTranspose: extra rows/columns at the end (default 0) */
    int64_t group;
    int ceil_mode, count_include_pad;
    int trans_a, trans_b;
    int64_t axis;            /* Concat, Flatten, Softmax */
    int64_t size;            /* LRN */
    double alpha, beta, bias, epsilon, momentum, ratio;
    double clip_min, clip_max; /* Clip bounds (-inf/+inf when absent) */
    int has_ignore_index;    /* loss: 1 when ignore_index was given (0 by default) */
    int64_t ignore_index;    /* loss: the label value to ignore; shape inference refuses
                                one in [0, classes), as no ignoring is implemented */
} xe_op;

/* Shape computations (added 2026-12-05): what PyTorch writes for x.view(x.size(0), -1)
 * with a dynamic batch, Shape -> Gather -> Unsqueeze -> Concat -> Reshape. They are not
 * operators: each computes a small int64 tensor (a "shape value", role XE_T_PARAM, dtype
 * XE_DT_INT64, values in idata) from the shapes of tensors and from int64 constants,
 * evaluated by xe_net_infer_shapes once the shapes it reads are known (so after
 * xe_net_set_batch the value follows the new batch). A shape value may be read only by
 * other shape computations and as a Reshape's shape; it makes no node, no memory and no
 * cost in any graph. Semantics are ONNX's (opset 13; the reader converts opset 11's
 * attribute forms), restricted to what shape arithmetic needs: */
typedef enum {
    XE_SF_SHAPE = 0, /* in[0] any tensor of known shape -> its dims, int64 [rank] */
    XE_SF_GATHER,    /* data (1-D), indices (scalar or 1-D; negative count from the end),
                        axis 0 -> data[indices], rank of indices */
    XE_SF_UNSQUEEZE, /* x (scalar or 1-D), axes = {0} (scalar) -> 1-D */
    XE_SF_SQUEEZE,   /* x [1] (axes absent or {0}) -> scalar */
    XE_SF_CONCAT,    /* 1-D x1..xk along axis 0 -> 1-D */
    XE_SF_CAST,      /* x -> x (a cast to int64 of an int64 value: the identity) */
    XE_SF_SLICE,     /* x (1-D), start, end, step (axis 0; ONNX clamping) -> 1-D */
    XE_SF_MUL,       /* a, b (same shape, or one a single element) -> elementwise product */
    XE_SF_ADD,       /* ... sum */
    XE_SF_SUB,       /* ... difference */
    XE_SF_COUNT
} xe_shape_fn_kind;

typedef struct xe_shape_fn {
    xe_shape_fn_kind kind;
    char *name;              /* owned: the ONNX node's name (messages) */
    int nin;                 /* 1 .. XE_OP_MAX_IN */
    int in[XE_OP_MAX_IN];    /* tensor indices: Shape's reads only the shape; others
                                read shape values or int64 constants */
    int out;                 /* the shape value it computes */
    int after_op;            /* evaluated before op after_op is inferred (the ops that
                                existed when it was added: everything it reads) */
    int64_t start, end, step;/* Slice (ends clamped as ONNX does) */
} xe_shape_fn;

typedef struct xe_net {
    char *name;              /* owned */
    int nt, nops;
    xe_tensor *t;            /* [nt] */
    xe_op *op;               /* [nops], topological order */
    int cap_t, cap_op;       /* private: growth */
    int nsf;                 /* shape computations, in the order they are evaluated */
    xe_shape_fn *sf;         /* [nsf] (owned) */
    int cap_sf;              /* private: growth */
} xe_net;

/* New empty network (name copied; NULL means ""). NULL when out of memory. */
xe_net *xe_net_new(const char *name);

/* Frees the network and everything it owns. NULL is a no-op. */
void xe_net_free(xe_net *net);

/* Adds a tensor; dims may be NULL with rank -1 (unknown, filled by shape inference).
 * Returns its index >= 0, or XE_EINVAL (duplicate name, rank > XE_MAX_RANK, dim <= 0,
 * more than 2^53 / 8 elements), XE_ENOMEM. */
int xe_net_add_tensor(xe_net *net, const char *name, xe_tensor_role role, xe_dtype dtype,
                      int rank, const int64_t *dim, xe_err *err);

/* Index of the tensor named `name`, or -1. */
int xe_net_find_tensor(const xe_net *net, const char *name);

/* Appends an operator reading tensors in[0..nin) and writing a new activation tensor
 * named out_name (shape unknown until xe_net_infer_shapes). Attributes get their ONNX
 * defaults (stride 1, dilation 1, group 1, pads 0, alpha 1 for Gemm / 0.01 for
 * LeakyRelu / 1e-4 for LRN, beta 1 for Gemm / 0.75 for LRN, bias 1, epsilon 1e-5,
 * momentum 0.9, ratio 0.5, axis 1 (-1 for Softmax, as in opset 13), size 5, clip_min
 * -inf, clip_max +inf, kernel 0 = from the weights); set others on the returned op. Returns the op
 * index >= 0 or XE_EINVAL (bad tensor index, nin out of range, duplicate name),
 * XE_ENOMEM. */
int xe_net_add_op(xe_net *net, xe_op_kind kind, const char *name, int nin, const int *in,
                  const char *out_name, xe_err *err);

/* Appends a shape computation (xe_shape_fn above) reading tensors in[0..nin) and writing
 * a new shape value named out_name (role XE_T_PARAM, dtype XE_DT_INT64, rank -1 until
 * xe_net_infer_shapes evaluates it); it is evaluated before op net->nops (the next op
 * added), so everything it reads must exist now. start/end/step are Slice's (ignored by
 * the others). Returns its index in net->sf >= 0, or XE_EINVAL (bad kind or tensor
 * index, nin out of range, duplicate output name), XE_ENOMEM. */
int xe_net_add_shape_fn(xe_net *net, xe_shape_fn_kind kind, const char *name, int nin, const int *in,
                        const char *out_name, xe_err *err);

/* Index in net->sf of the shape computation writing tensor t, or -1 (t is no shape
 * value). */
int xe_net_shape_fn_of(const xe_net *net, int t);

/* ONNX op_type of a shape computation kind ("Shape", "Gather", ...). */
const char *xe_shape_fn_kind_name(xe_shape_fn_kind k);

/* Infers the shape of every activation from the inputs and parameters, operator by
 * operator, and its dtype: that of the op's input 0 (ONNX's T -> T; a float16 model's
 * activations are float16) (ONNX operator semantics, opset 13; a ceil_mode pooling window starting in
 * the right padding is dropped, as in PyTorch: docs/onnx.md). Sets a Conv's kernel[] from
 * its weights when 0. XE_EINVAL naming the op and the problem for inconsistent shapes
 * (channel mismatch, bad kernel, a pooling pad not below the kernel extent, a
 * ConvTranspose output_padding not below its stride or dilation, an input of unknown
 * shape, an output above 2^53 bytes), XE_EUNSUPPORTED for an attribute xengine does not
 * handle (e.g. a Reshape whose shape is not a constant int64 vector, a loss
 * ignore_index that is one of the classes). Shape computations (xe_shape_fn) are
 * evaluated on the way, each before op after_op, from the shapes known then (their
 * previous values are dropped first); their errors name the computation:
 * "net m: shape computation "g0" (Gather): index 4 out of range for 2 values". */
int xe_net_infer_shapes(xe_net *net, xe_err *err);

/* Replaces the leading (batch) dimension of every XE_T_INPUT and XE_T_LABEL tensor
 * with `batch` (> 0) and marks every activation's shape unknown; call
 * xe_net_infer_shapes afterwards. XE_EINVAL for batch <= 0. */
int xe_net_set_batch(xe_net *net, int64_t batch, xe_err *err);

/* Number of elements and bytes of tensor i (shape known). */
int64_t xe_tensor_numel(const xe_tensor *t);
int64_t xe_tensor_bytes(const xe_tensor *t);

/* ONNX op_type of a kind ("Conv", ...; "SoftmaxCrossEntropyLoss" for XE_OP_LOSS), and
 * back: the kind of an ONNX op_type, or -1 when unsupported. */
const char *xe_op_kind_name(xe_op_kind k);
int xe_op_kind_from_onnx(const char *op_type);

/* 1 for Flatten and Reshape (no node, no memory: xe_net_resolve_view). */
int xe_op_is_view(xe_op_kind k);

/* The tensor a view chain ends at: follows producer views back from tensor i. */
int xe_net_resolve_view(const xe_net *net, int i);

/* The op producing the activation that tensor i is, views folded (xe_net_resolve_view);
 * -1 for inputs, labels and parameters. */
int xe_net_act_producer(const xe_net *net, int i);

/* What the backward of an op kind reads besides its output gradient
 * (docs/training-graph.md): XE_BWD_READS_X its activation input 0, XE_BWD_READS_Y its
 * own forward output (Relu, Sigmoid, Dropout, Softmax), XE_BWD_READS_ALL every
 * activation input (Gemm, MatMul); 0 for
 * AveragePool, GlobalAveragePool, Add, Concat. One table for the training graph's edges
 * (src/net/train.c) and the executor's residency checks (src/exec/rt.c). */
enum { XE_BWD_READS_X = 1, XE_BWD_READS_Y = 2, XE_BWD_READS_ALL = 4 };
int xe_op_bwd_reads(xe_op_kind k);

/* ---- training and inference graphs -------------------------------------------------- */

typedef enum { XE_TN_FORWARD = 0, XE_TN_LOSS = 1, XE_TN_BACKWARD = 2 } xe_train_role;

typedef struct xe_train_map {
    int n;             /* graph nodes */
    int nops;          /* ops of the net (the loss op, when added, is the last) */
    int *op;           /* [n] op index computed by node v */
    uint8_t *role;     /* [n] xe_train_role */
    int *fwd_node;     /* [nops] forward node of op k, or -1 (views) */
    int *bwd_node;     /* [nops] backward node of op k, or -1 (views, inference) */
    int loss_node;     /* -1 for an inference graph */
} xe_train_map;

/* Training graph of net: adds the loss op (XE_OP_LOSS on the last non-view op's output
 * with a new XE_T_LABEL tensor "labels" [N]) unless the net ends with one, then builds
 * forward nodes, the loss node and backward nodes in reverse order, edges as in
 * docs/training-graph.md, node mem = output bytes (as above), param_mem = bytes of the
 * op's XE_T_PARAM inputs (on the forward node), cost = 0 (costs come from
 * include/xengine/cost.h). Shapes must be known. On success *g (finalized) and *map are
 * the caller's (xe_graph_free, xe_train_map_clear); the net may gain the loss op and
 * the labels tensor. XE_EINVAL, XE_ENOMEM. */
int xe_net_training_graph(xe_net *net, xe_graph **g, xe_train_map *map, xe_err *err);

/* The tensor the net's loss op reads as its logits (the last loss op's input 0, not
 * followed through views: for a net read from ONNX, the name of the graph output the loss
 * is on), or -1 when the net has no loss op. A model with several outputs is trained on
 * the output of its last non-view operator only (xe_net_training_graph); the other
 * outputs' branches get forward nodes but no backward nodes or parameter gradients
 * unless they also feed that output. */
int xe_net_loss_logits(const xe_net *net);

/* Inference graph: forward nodes only (views folded). Same ownership. */
int xe_net_inference_graph(const xe_net *net, xe_graph **g, xe_train_map *map, xe_err *err);

/* Frees the map's arrays and zeroes it. */
void xe_train_map_clear(xe_train_map *map);

#ifdef __cplusplus
}
#endif

#endif
