/* Tests of the GPU backend (include/xengine/gpu.h), run by tools/gpu-check.sh on a
 * machine with a CUDA GPU: cuBLAS GEMM and cuDNN convolution against plain loops in
 * double, and copy times. Every test skips (with a message) where no GPU exists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "xengine/gpu.h"

static xe_gpu *open_or_skip(void)
{
    xe_gpu *g = NULL;
    xe_err err = {{0}};
    int n = xe_gpu_device_count();
    if (n < 1) {
        printf("no CUDA device (xe_gpu_device_count: %d): skipped\n", n);
        skip();
    }
    if (xe_gpu_open(0, &g, &err) != XE_OK) {
        printf("CUDA device 0 cannot be opened: skipped (%s)\n", err.msg);
        skip();
    }
    return g;
}

static float val(int64_t i, int salt) { return (float)((double)((i * 2654435761u + (uint64_t)salt * 97) % 1000) / 500.0 - 1.0); }

static void test_gemm(void **state)
{
    (void)state;
    xe_gpu *g = open_or_skip();
    enum { M = 37, K = 53, N = 29 };
    static float A[M * K], B[K * N], Y[M * N];
    for (int i = 0; i < M * K; i++) A[i] = val(i, 1);
    for (int i = 0; i < K * N; i++) B[i] = val(i, 2);
    xe_err err;
    double secs = -1;
    assert_int_equal(xe_gpu_gemm(g, M, K, N, A, B, Y, &secs, &err), XE_OK);
    assert_true(secs >= 0);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double)A[m * K + k] * B[k * N + n];
            assert_true(fabs(Y[m * N + n] - s) <= 1e-4 * (1 + fabs(s)));
        }
    xe_gpu_close(g);
}

static void test_conv(void **state)
{
    (void)state;
    xe_gpu *g = open_or_skip();
    const int64_t xd[4] = {2, 3, 9, 7}, wd[4] = {4, 3, 3, 3}, pad[4] = {1, 1, 1, 1}, st[2] = {2, 1};
    const int64_t oh = (9 + 2 - 3) / 2 + 1, ow = (7 + 2 - 3) / 1 + 1;
    float *x = malloc(2 * 3 * 9 * 7 * sizeof *x), *w = malloc(4 * 3 * 9 * sizeof *w), *y = malloc(2 * 4 * oh * ow * sizeof *y);
    assert_true(x && w && y);
    for (int i = 0; i < 2 * 3 * 9 * 7; i++) x[i] = val(i, 3);
    for (int i = 0; i < 4 * 3 * 9; i++) w[i] = val(i, 4);
    xe_err err;
    assert_int_equal(xe_gpu_conv2d(g, xd, wd, pad, st, x, w, y, NULL, &err), XE_OK);
    for (int n = 0; n < 2; n++)
        for (int o = 0; o < 4; o++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double s = 0;
                    for (int c = 0; c < 3; c++)
                        for (int a = 0; a < 3; a++)
                            for (int b = 0; b < 3; b++) {
                                int64_t r = i * 2 - 1 + a, q = j - 1 + b;
                                if (r < 0 || r >= 9 || q < 0 || q >= 7) continue;
                                s += (double)x[((n * 3 + c) * 9 + r) * 7 + q] * w[((o * 3 + c) * 3 + a) * 3 + b];
                            }
                    assert_true(fabs(y[((n * 4 + o) * oh + i) * ow + j] - s) <= 1e-4 * (1 + fabs(s)));
                }
    free(x);
    free(w);
    free(y);
    xe_gpu_close(g);
}

static void test_copy(void **state)
{
    (void)state;
    xe_gpu *g = open_or_skip();
    double h2d = -1, d2h = -1;
    xe_err err;
    assert_int_equal(xe_gpu_copy_time(g, 64 << 20, 3, &h2d, &d2h, &err), XE_OK);
    /* 64 MiB over any PCIe or NVLink link: between 10 us and 1 s */
    assert_true(h2d > 1e-5 && h2d < 1.0 && d2h > 1e-5 && d2h < 1.0);
    printf("64 MiB: host->gpu %.3f ms (%.1f GB/s), gpu->host %.3f ms\n", 1e3 * h2d, (64 << 20) / h2d / 1e9, 1e3 * d2h);
    xe_gpu_close(g);
}

static void test_no_device_error(void **state)
{
    (void)state;
    xe_gpu *g = NULL;
    xe_err err = {{0}};
    int n = xe_gpu_device_count();
    assert_int_equal(xe_gpu_open(n, &g, &err), XE_EUNSUPPORTED); /* one past the last */
    assert_null(g);
    assert_non_null(err.msg[0] ? err.msg : NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_device_error),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
