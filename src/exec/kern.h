/* xengine executor — internal: the oneDNN device runtime and the operator kernels.
 *
 * A kernel computes one graph node: the forward of an op, the loss, or the backward of an
 * op, from plain float32 row-major (NCHW / OIHW) buffers the executor resolves. */
#ifndef XE_EXEC_KERN_H
#define XE_EXEC_KERN_H

#include <oneapi/dnnl/dnnl.h>
#include <stdint.h>

#include "xengine/exec.h"
#include "xengine/net.h"

/* One device: a CPU engine, its stream and its thread count. */
typedef struct xe_kdev {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    int threads;
} xe_kdev;

int xe_kdev_init(xe_kdev *k, int threads, xe_err *err);
void xe_kdev_clear(xe_kdev *k);
/* Makes the calling thread's OpenMP regions (oneDNN's) use k->threads threads. */
void xe_kdev_enter(const xe_kdev *k);
/* The calling thread's OpenMP thread count, and setting it back (the executor restores
 * the caller's count when it is done). */
int xe_omp_threads(void);
void xe_omp_set_threads(int n);

/* Primitives a kernel made for one (node, device), kept for later runs. */
#define XE_KSLOT_MAX 4
typedef struct xe_kslot {
    dnnl_primitive_t prim[XE_KSLOT_MAX];
} xe_kslot;
void xe_kslot_clear(xe_kslot *s);

/* Arguments of one kernel call. Sizes follow the net's tensor shapes. */
typedef struct xe_kargs {
    const xe_net *net;
    int k;                          /* op index */
    const xe_kdev *dev;
    xe_kslot *slot;                 /* primitive cache of this (node, device) */
    const float *in[XE_OP_MAX_IN];  /* values of op inputs (NULL when not available) */
    float *out;                     /* forward: the node's output buffer (written);
                                       backward: the forward node's buffer (read) or NULL */
    int64_t out_bytes;              /* bytes of `out` (the forward node's mem) */
    const float *dout;              /* backward: gradient of the op's output */
    float *din[XE_OP_MAX_IN];       /* backward: where d(loss)/d(input j) goes, NULL when
                                       input j is not an activation */
    float *dparam[XE_OP_MAX_IN];    /* backward: d(loss)/d(param input j) (overwritten),
                                       NULL when not wanted */
    const int64_t *labels;          /* loss: [N] */
    uint64_t seed;                  /* dropout */
    double loss;                    /* loss: the value computed */
} xe_kargs;

/* Forward (or loss) and backward of op a->k. XE_EUNSUPPORTED, XE_EINTERNAL, XE_ENOMEM. */
int xe_kern_forward(xe_kargs *a, xe_err *err);
int xe_kern_backward(xe_kargs *a, xe_err *err);

/* ---- per family (kern_*.c) ---- */
int xe_kern_conv_fwd(xe_kargs *a, xe_err *err);
int xe_kern_conv_bwd(xe_kargs *a, xe_err *err);
int xe_kern_pool_fwd(xe_kargs *a, xe_err *err);
int xe_kern_pool_bwd(xe_kargs *a, xe_err *err);
int xe_kern_gemm_fwd(xe_kargs *a, xe_err *err);
int xe_kern_gemm_bwd(xe_kargs *a, xe_err *err);
int xe_kern_elt_fwd(xe_kargs *a, xe_err *err);
int xe_kern_elt_bwd(xe_kargs *a, xe_err *err);
int xe_kern_norm_fwd(xe_kargs *a, xe_err *err);
int xe_kern_norm_bwd(xe_kargs *a, xe_err *err);
int xe_kern_misc_fwd(xe_kargs *a, xe_err *err); /* Add, Concat, Softmax, Dropout, loss */
int xe_kern_misc_bwd(xe_kargs *a, xe_err *err);

/* ---- oneDNN helpers (dnnl_util.c) ---- */
/* Plain row-major descriptor of a tensor's shape (rank 1..6). */
int xe_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dim);
/* Descriptor with explicit strides (elements). */
int xe_md_strided(dnnl_memory_desc_t *md, int rank, const int64_t *dim, const int64_t *strides);
/* Creates (once, into slot->prim[i]) the primitive of op_desc, or returns the cached one.
 * hint: forward op desc for backward primitives (or NULL). */
int xe_prim_get(const xe_kargs *a, int i, const void *op_desc, const void *hint_desc,
                dnnl_primitive_t *out, xe_err *err);
/* Executes prim with nargs (arg, md, ptr) triples, waits. */
typedef struct xe_karg {
    int arg;
    const dnnl_memory_desc_t *md;
    const void *ptr;
} xe_karg;
int xe_prim_exec(const xe_kargs *a, dnnl_primitive_t prim, int nargs, const xe_karg *args,
                 xe_err *err);
/* The node's name for messages: "op NAME". */
const char *xe_kname(const xe_kargs *a);

/* ---- deterministic hashing (data.c) ---- */
uint64_t xe_hash3(uint64_t a, uint64_t b, uint64_t c);
/* Uniform in [0, 1) from a hash. */
static inline double xe_hash_unit(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

/* Tensor helpers. */
static inline const xe_tensor *xe_kt(const xe_kargs *a, int j) { return &a->net->t[a->net->op[a->k].in[j]]; }
static inline const xe_tensor *xe_ky(const xe_kargs *a) { return &a->net->t[a->net->op[a->k].out]; }

#endif
