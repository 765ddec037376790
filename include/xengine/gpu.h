/* xengine — the GPU backend: cuBLAS and cuDNN through their C APIs (no CUDA C++).
 *
 * Built only with `cmake -DXE_CUDA=ON` where the CUDA toolkit and cuDNN are installed
 * (CMakeLists.txt: find_package(CUDAToolkit) and find_library(cudnn)); the default build
 * neither needs nor compiles it. tools/gpu-check.sh builds it and runs tests/gpu/ on a
 * machine with a GPU. It gives the profiler's GPU side (docs/executor.md): operator
 * kernels on a GPU with their times, and the host <-> GPU copy times. Buffers passed in
 * are host arrays, plain row-major float32; the functions copy them in and out and time
 * only the GPU work (CUDA events). */
#ifndef XENGINE_GPU_H
#define XENGINE_GPU_H

#include <stdint.h>

#include "xengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xe_gpu xe_gpu; /* opaque: the device, a stream, cuBLAS and cuDNN handles */

/* Number of CUDA devices (0 when there is none or no driver). */
int xe_gpu_device_count(void);

/* Opens CUDA device `device` with a stream, a cuBLAS and a cuDNN handle. On XE_OK *out is
 * the caller's (xe_gpu_close). XE_EUNSUPPORTED when there is no such device or the driver
 * fails (message names the CUDA error); XE_ENOMEM. */
int xe_gpu_open(int device, xe_gpu **out, xe_err *err);
void xe_gpu_close(xe_gpu *g);

/* Y[M,N] = A[M,K] x B[K,N] with cublasSgemm; *secs = GPU seconds of the product (may be
 * NULL). XE_EINVAL for sizes < 1, XE_EINTERNAL when CUDA or cuBLAS fails. */
int xe_gpu_gemm(xe_gpu *g, int64_t M, int64_t K, int64_t N, const float *A, const float *B, float *Y, double *secs,
                xe_err *err);

/* 2-D convolution forward (ONNX Conv, group 1, dilation 1): x [N,C,H,W], w [O,C,kh,kw],
 * pad {top, left, bottom, right} (symmetric: top = bottom, left = right), stride {sh, sw};
 * y [N, O, (H+2ph-kh)/sh+1, (W+2pw-kw)/sw+1] with cudnnConvolutionForward (cross-
 * correlation, as ONNX). *secs = GPU seconds (may be NULL). XE_EINVAL for asymmetric pads
 * or bad sizes, XE_EINTERNAL when CUDA or cuDNN fails. */
int xe_gpu_conv2d(xe_gpu *g, const int64_t xdim[4], const int64_t wdim[4], const int64_t pad[4],
                  const int64_t stride[2], const float *x, const float *w, float *y, double *secs, xe_err *err);

/* Seconds to copy `bytes` host -> GPU and GPU -> host (pinned host memory, median of
 * `runs` >= 1 copies each way). XE_EINVAL, XE_EINTERNAL. */
int xe_gpu_copy_time(xe_gpu *g, int64_t bytes, int runs, double *h2d, double *d2h, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
