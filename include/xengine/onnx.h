/* xengine — ONNX import: a model file (protobuf, onnx.proto of Debian's libonnx-dev) into
 * an xe_net (include/xengine/net.h) with every activation's shape inferred.
 *
 * What is read (docs/onnx.md has the details):
 *   - the graph's nodes, in file order (ONNX requires a topological order), one xe_op
 *     each; Constant nodes become constant tensors, not ops;
 *   - graph inputs: a graph input that is not an initializer and that some node other
 *     than Add reads as its FIRST input is the data input (XE_T_INPUT); one read as the
 *     labels of SoftmaxCrossEntropyLoss is XE_T_LABEL; one read only by Add nodes is data
 *     when it has the Add's output shape and the other operand is broadcast into it (or
 *     both have that shape and it is the first operand), whichever position it has
 *     (PyTorch's `self.b + x` is Add(b, x)); every other one is a parameter (XE_T_PARAM,
 *     no data: PyTorch's export_params=False lists parameters as graph inputs);
 *   - initializers: parameters with their float32 data (xe_tensor.data) or int64 values
 *     (xe_tensor.idata); likewise the values of Constant nodes; data stored externally
 *     (data_location EXTERNAL) is read from the file its "location" names, relative to
 *     the model file's directory, at its "offset" ("length" bytes when given);
 *   - attributes of every supported operator, with ONNX's defaults when absent;
 *     Dropout's ratio / training_mode inputs and Clip's min / max inputs, which must be
 *     constants, become op attributes (ratio, clip_min, clip_max), not op inputs;
 *   - extra outputs nobody reads are ignored (BatchNormalization's running mean and
 *     variance in training mode, Dropout's mask, MaxPool's indices).
 * Operators: Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool, Gemm, MatMul,
 * Relu, LeakyRelu, Dropout, LRN, BatchNormalization, InstanceNormalization, Add, Concat,
 * Flatten, Reshape, Softmax, SoftmaxCrossEntropyLoss, Clip (2-D spatial ops only); a
 * Pad whose pads are all 0 is dropped (its output names its input), another Pad is
 * XE_EUNSUPPORTED. */
#ifndef XENGINE_ONNX_H
#define XENGINE_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "xengine/error.h"
#include "xengine/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the ONNX model at `path` into a new net (named after the file, without its
 * directory and ".onnx"), replaces the leading (batch) dimension of the data input (and
 * labels) by `batch` when batch > 0 (0 keeps the file's; a symbolic batch dimension then
 * is an error), and runs xe_net_infer_shapes. On success *out is the caller's
 * (xe_net_free); on error *out is NULL and err holds one line starting with the path:
 *   XE_EIO           the file, or an external data file (named), cannot be opened or read;
 *   XE_EPARSE        not a valid protobuf (random bytes, truncated), no graph, an
 *                    attribute or tensor of the wrong type, data shorter than its dims
 *                    (also in an external data file);
 *   XE_EUNSUPPORTED  `PATH: node "NAME": unsupported operator "OPTYPE"`, an operator
 *                    domain other than ONNX's, an attribute value xengine does not handle
 *                    (auto_pad SAME_*, 3-D kernels, Reshape allowzero = 1, non-constant
 *                    Clip bounds, a MatMul with a 1-D operand), a data type other than
 *                    float32 / int64 / float16,
 *                    an external data location that is absolute or has a ".." component;
 *   XE_EINVAL        a node input or graph output naming no tensor (dangling), no data
 *                    input, a symbolic dimension, batch < 0, inconsistent shapes (the
 *                    message of xe_net_infer_shapes after the path);
 *   XE_ENOMEM. */
int xe_onnx_read(const char *path, int64_t batch, xe_net **out, xe_err *err);

/* The same from `len` bytes in memory; `label` stands for the path in the net's name,
 * in messages, and as the directory external data locations are relative to. */
int xe_onnx_read_buffer(const uint8_t *buf, size_t len, const char *label, int64_t batch, xe_net **out,
                        xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
