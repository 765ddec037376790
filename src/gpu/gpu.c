/* xengine GPU backend — cuBLAS and cuDNN through their C APIs (include/xengine/gpu.h).
 * Built only with -DXE_CUDA=ON (CMakeLists.txt); not part of the default library. */
#include "xengine/gpu.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdlib.h>
#include <string.h>

struct xe_gpu {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudnnHandle_t dnn;
    cudaEvent_t t0, t1;
};

int xe_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

#define CUDA_OK(call, what)                                                                                   \
    do {                                                                                                      \
        cudaError_t e_ = (call);                                                                              \
        if (e_ != cudaSuccess) {                                                                              \
            rc = xe_err_set(err, XE_EINTERNAL, "gpu: %s: %s", (what), cudaGetErrorString(e_));                \
            goto done;                                                                                        \
        }                                                                                                     \
    } while (0)

void xe_gpu_close(xe_gpu *g)
{
    if (!g) return;
    if (g->dnn) cudnnDestroy(g->dnn);
    if (g->blas) cublasDestroy(g->blas);
    if (g->t0) cudaEventDestroy(g->t0);
    if (g->t1) cudaEventDestroy(g->t1);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

int xe_gpu_open(int device, xe_gpu **out, xe_err *err)
{
    *out = NULL;
    int n = xe_gpu_device_count();
    if (device < 0 || device >= n)
        return xe_err_set(err, XE_EUNSUPPORTED, "gpu: no CUDA device %d (%d found)", device, n);
    xe_gpu *g = calloc(1, sizeof *g);
    if (!g) return xe_err_set(err, XE_ENOMEM, "gpu: out of memory");
    g->device = device;
    cudaError_t e;
    if ((e = cudaSetDevice(device)) != cudaSuccess || (e = cudaStreamCreate(&g->stream)) != cudaSuccess ||
        (e = cudaEventCreate(&g->t0)) != cudaSuccess || (e = cudaEventCreate(&g->t1)) != cudaSuccess) {
        xe_gpu_close(g);
        return xe_err_set(err, XE_EUNSUPPORTED, "gpu: device %d: %s", device, cudaGetErrorString(e));
    }
    if (cublasCreate(&g->blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(g->blas, g->stream) != CUBLAS_STATUS_SUCCESS) {
        xe_gpu_close(g);
        return xe_err_set(err, XE_EUNSUPPORTED, "gpu: device %d: cuBLAS cannot start", device);
    }
    cudnnStatus_t s = cudnnCreate(&g->dnn);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnSetStream(g->dnn, g->stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        xe_gpu_close(g);
        return xe_err_set(err, XE_EUNSUPPORTED, "gpu: device %d: cuDNN cannot start: %s", device,
                          cudnnGetErrorString(s));
    }
    *out = g;
    return XE_OK;
}

static double elapsed(xe_gpu *g)
{
    float ms = 0;
    cudaEventSynchronize(g->t1);
    cudaEventElapsedTime(&ms, g->t0, g->t1);
    return 1e-3 * (double)ms;
}

int xe_gpu_gemm(xe_gpu *g, int64_t M, int64_t K, int64_t N, const float *A, const float *B, float *Y, double *secs,
                xe_err *err)
{
    if (M < 1 || K < 1 || N < 1 || M > INT32_MAX || K > INT32_MAX || N > INT32_MAX)
        return xe_err_set(err, XE_EINVAL, "gpu gemm: bad sizes %lld x %lld x %lld", (long long)M, (long long)K,
                          (long long)N);
    int rc = XE_OK;
    float *dA = NULL, *dB = NULL, *dY = NULL;
    CUDA_OK(cudaMalloc((void **)&dA, (size_t)(M * K) * sizeof(float)), "cudaMalloc A");
    CUDA_OK(cudaMalloc((void **)&dB, (size_t)(K * N) * sizeof(float)), "cudaMalloc B");
    CUDA_OK(cudaMalloc((void **)&dY, (size_t)(M * N) * sizeof(float)), "cudaMalloc Y");
    CUDA_OK(cudaMemcpy(dA, A, (size_t)(M * K) * sizeof(float), cudaMemcpyHostToDevice), "copy A");
    CUDA_OK(cudaMemcpy(dB, B, (size_t)(K * N) * sizeof(float), cudaMemcpyHostToDevice), "copy B");
    /* row-major Y = A B is column-major Y^T = B^T A^T: cuBLAS on the same bytes */
    const float one = 1.0f, zero = 0.0f;
    cudaEventRecord(g->t0, g->stream);
    if (cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, dB, (int)N, dA, (int)K, &zero,
                    dY, (int)N) != CUBLAS_STATUS_SUCCESS) {
        rc = xe_err_set(err, XE_EINTERNAL, "gpu gemm: cublasSgemm failed");
        goto done;
    }
    cudaEventRecord(g->t1, g->stream);
    if (secs) *secs = elapsed(g);
    CUDA_OK(cudaMemcpy(Y, dY, (size_t)(M * N) * sizeof(float), cudaMemcpyDeviceToHost), "copy Y");
done:
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dY);
    return rc;
}

int xe_gpu_conv2d(xe_gpu *g, const int64_t xdim[4], const int64_t wdim[4], const int64_t pad[4],
                  const int64_t stride[2], const float *x, const float *w, float *y, double *secs, xe_err *err)
{
    if (pad[0] != pad[2] || pad[1] != pad[3])
        return xe_err_set(err, XE_EINVAL, "gpu conv: cuDNN needs symmetric padding");
    if (xdim[1] != wdim[1] || stride[0] < 1 || stride[1] < 1)
        return xe_err_set(err, XE_EINVAL, "gpu conv: channels %lld vs %lld or bad stride", (long long)xdim[1],
                          (long long)wdim[1]);
    int rc = XE_OK;
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    float *dx = NULL, *dw = NULL, *dy = NULL;
    void *ws = NULL;
    int n, c, h, wo;
    cudnnStatus_t s = cudnnCreateTensorDescriptor(&xd);
    if (!s) s = cudnnCreateTensorDescriptor(&yd);
    if (!s) s = cudnnCreateFilterDescriptor(&wd);
    if (!s) s = cudnnCreateConvolutionDescriptor(&cd);
    if (!s) s = cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)xdim[0], (int)xdim[1],
                                           (int)xdim[2], (int)xdim[3]);
    if (!s) s = cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)wdim[0], (int)wdim[1],
                                           (int)wdim[2], (int)wdim[3]);
    if (!s) s = cudnnSetConvolution2dDescriptor(cd, (int)pad[0], (int)pad[1], (int)stride[0], (int)stride[1], 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    if (!s) s = cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &h, &wo);
    if (!s) s = cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, wo);
    cudnnConvolutionFwdAlgoPerf_t perf;
    int got = 0;
    if (!s) s = cudnnGetConvolutionForwardAlgorithm_v7(g->dnn, xd, wd, cd, yd, 1, &got, &perf);
    size_t wsb = 0;
    if (!s && got < 1) s = CUDNN_STATUS_NOT_SUPPORTED;
    if (!s) s = cudnnGetConvolutionForwardWorkspaceSize(g->dnn, xd, wd, cd, yd, perf.algo, &wsb);
    if (s) {
        rc = xe_err_set(err, XE_EINTERNAL, "gpu conv: cuDNN: %s", cudnnGetErrorString(s));
        goto done;
    }
    size_t xb = (size_t)(xdim[0] * xdim[1] * xdim[2] * xdim[3]) * sizeof(float);
    size_t wb = (size_t)(wdim[0] * wdim[1] * wdim[2] * wdim[3]) * sizeof(float);
    size_t yb = (size_t)n * c * h * wo * sizeof(float);
    CUDA_OK(cudaMalloc((void **)&dx, xb), "cudaMalloc x");
    CUDA_OK(cudaMalloc((void **)&dw, wb), "cudaMalloc w");
    CUDA_OK(cudaMalloc((void **)&dy, yb), "cudaMalloc y");
    if (wsb) CUDA_OK(cudaMalloc(&ws, wsb), "cudaMalloc workspace");
    CUDA_OK(cudaMemcpy(dx, x, xb, cudaMemcpyHostToDevice), "copy x");
    CUDA_OK(cudaMemcpy(dw, w, wb, cudaMemcpyHostToDevice), "copy w");
    const float one = 1.0f, zero = 0.0f;
    cudaEventRecord(g->t0, g->stream);
    s = cudnnConvolutionForward(g->dnn, &one, xd, dx, wd, dw, cd, perf.algo, ws, wsb, &zero, yd, dy);
    cudaEventRecord(g->t1, g->stream);
    if (s) {
        rc = xe_err_set(err, XE_EINTERNAL, "gpu conv: cudnnConvolutionForward: %s", cudnnGetErrorString(s));
        goto done;
    }
    if (secs) *secs = elapsed(g);
    CUDA_OK(cudaMemcpy(y, dy, yb, cudaMemcpyDeviceToHost), "copy y");
done:
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (wd) cudnnDestroyFilterDescriptor(wd);
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
    cudaFree(ws);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int xe_gpu_copy_time(xe_gpu *g, int64_t bytes, int runs, double *h2d, double *d2h, xe_err *err)
{
    if (bytes < 1 || runs < 1) return xe_err_set(err, XE_EINVAL, "gpu copy: bytes and runs must be >= 1");
    int rc = XE_OK;
    void *host = NULL, *dev = NULL;
    double *t = malloc((size_t)runs * 2 * sizeof *t);
    if (!t) return xe_err_set(err, XE_ENOMEM, "gpu copy: out of memory");
    CUDA_OK(cudaMallocHost(&host, (size_t)bytes), "cudaMallocHost");
    CUDA_OK(cudaMalloc(&dev, (size_t)bytes), "cudaMalloc");
    memset(host, 1, (size_t)bytes);
    for (int dir = 0; dir < 2; dir++)
        for (int r = 0; r < runs; r++) {
            cudaEventRecord(g->t0, g->stream);
            CUDA_OK(cudaMemcpyAsync(dir ? host : dev, dir ? dev : host, (size_t)bytes,
                                    dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, g->stream),
                    "cudaMemcpyAsync");
            cudaEventRecord(g->t1, g->stream);
            t[dir * runs + r] = elapsed(g);
        }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    qsort(t + runs, (size_t)runs, sizeof *t, cmp_double);
    *h2d = t[runs / 2];
    *d2h = t[runs + runs / 2];
done:
    cudaFreeHost(host);
    cudaFree(dev);
    free(t);
    return rc;
}
