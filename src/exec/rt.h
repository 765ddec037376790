/* xengine executor — internal: the runtime state shared by the executor and the
 * profiler (one training graph on a set of devices, resident buffers per device). */
#ifndef XE_EXEC_RT_H
#define XE_EXEC_RT_H

#include "kern.h"
#include "xengine/timer.h"

typedef struct xe_rt {
    const xe_net *net;
    const xe_train_map *map;
    const xe_graph *g;
    xe_exec_data *data;
    int n, ndev;
    char devname[XE_MAX_DEV][32];
    xe_kdev dev[XE_MAX_DEV];
    xe_pool pool[XE_MAX_DEV];
    float **buf;          /* [n * ndev] resident output of node v on device d */
    uint8_t *res;         /* [n * ndev] 1 when resident */
    xe_kslot *slot;       /* [n * ndev] primitives */
    int64_t *din_off;     /* [nops * XE_OP_MAX_IN] float offset of input j's gradient in op
                             k's backward output, -1 when input j is not an activation */
    int *src_off;         /* [nops + 1] CSR: gradient sources of op k's output */
    int *src_node;        /*   source node (loss or a consumer's backward node) */
    int64_t *src_elem;    /*   float offset in the source's output */
    float **contrib;      /* [nops * XE_OP_MAX_IN] parameter gradient of (op, input) */
    float *gsum;          /* scratch for summed output gradients */
    int64_t gsum_cap;
    uint64_t seed;
    double loss;
    int caller_threads;   /* the caller's OpenMP thread count, restored by xe_rt_clear */
} xe_rt;

/* Checks map against g and the layout the kernels write, makes devices (threads[d], 0 =
 * all) and pools (budgets; <= 0 unlimited). */
int xe_rt_init(xe_rt *rt, const xe_net *net, const xe_train_map *map, const xe_graph *g, xe_exec_data *data,
               int ndev, const xe_device *devs, const int *threads, uint64_t seed, xe_err *err);
void xe_rt_clear(xe_rt *rt);

/* Event primitives; *secs gets the measured seconds (kernel or copy only). */
int xe_rt_compute(xe_rt *rt, int v, int d, double *secs, xe_err *err);
int xe_rt_copy(xe_rt *rt, int v, int d, int e, double *secs, xe_err *err);
int xe_rt_free(xe_rt *rt, int v, int d, xe_err *err);
/* Frees every resident buffer (pool peaks are kept). */
void xe_rt_release_all(xe_rt *rt);
/* data->grad = sum of the contributions, in op order. */
void xe_rt_collect_grads(xe_rt *rt);


/* Median of t[0..n-1], n >= 1 (sorts t in place): the middle value, or the mean of the two
 * middle ones for even n; the profiler's and the executor's per-event statistic. */
double xe_median(double *t, int n);

#endif
