/* xengine — running a schedule for real: device memory pools, oneDNN CPU kernels, the
 * executor and the profiler (docs/executor.md).
 *
 * The executor replays an xe_schedule (include/xengine/schedule.h) on a training graph
 * made by xe_net_training_graph (include/xengine/net.h): a compute event runs the node's
 * operator (forward, loss or backward, as the xe_train_map says) with oneDNN on the
 * event's device, a copy event copies the node's output into the destination device's
 * pool, a free event returns it. Every "device" is a oneDNN CPU engine and stream with
 * its own OpenMP thread count (Debian's libdnnl is built with DNNL_CPU_RUNTIME=OMP; the
 * executor calls omp_set_num_threads before each device's work). This is the
 * measurement side of XEngine (Schuler et al., TACO 2022, sec. 5: operators profiled
 * with oneDNN, schedules executed and compared with the prediction).
 *
 * Memory: a device pool holds exactly the schedule's resident tensors, each exactly
 * g->nodes[v].mem bytes (the graph's accounting, so measured peaks are comparable with
 * the simulator's), and refuses an allocation that would take it over its budget.
 * Parameters, parameter gradients, the data input, labels and kernel scratch live
 * outside the pools, as parameters live outside the planner's budgets. */
#ifndef XENGINE_EXEC_H
#define XENGINE_EXEC_H

#include <stdint.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/net.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device memory pool -------------------------------------------------------------- */

/* One device's pool: bytes in use and the highest use seen, against a budget. Freed
 * blocks are kept for reuse by an allocation of the same size (no page faults in a
 * measured run after a warm-up one), but never so many that in-use plus kept bytes
 * exceed the budget (or, unlimited, the peak): the pool never holds more memory than
 * its budget. */
typedef struct xe_pool {
    char dev[32];    /* device name, for messages */
    int64_t budget;  /* bytes; <= 0 means unlimited */
    int64_t used;    /* bytes currently allocated */
    int64_t peak;    /* highest `used` since xe_pool_init or xe_pool_reset_peak */
    int64_t nalloc;  /* live allocations */
    int64_t cached;  /* bytes of freed blocks kept for reuse */
    int ncache, cap_cache;
    void **cache_ptr;      /* [ncache] kept blocks, oldest first */
    int64_t *cache_bytes;  /* [ncache] their sizes */
} xe_pool;

/* Empty pool for device `dev` with `budget` bytes (<= 0: unlimited). No allocation. */
void xe_pool_init(xe_pool *p, const char *dev, int64_t budget);

/* Releases the kept blocks and the pool's arrays; live allocations must have been freed
 * (XE_ASSERT). The pool can be used again (as after xe_pool_init). */
void xe_pool_clear(xe_pool *p);

/* Starts a new peak: peak = used. */
void xe_pool_reset_peak(xe_pool *p);

/* Allocates `bytes` (>= 0; 64-byte aligned, contents undefined) for node `node` (a name
 * for messages). *out is NULL for 0 bytes (which always succeeds). XE_EINFEASIBLE when
 * used + bytes would exceed the budget, with the message "device D: allocating N B for
 * NODE would hold U B, over the budget of B B" (nothing allocated); XE_ENOMEM. */
int xe_pool_alloc(xe_pool *p, const char *node, int64_t bytes, void **out, xe_err *err);

/* Returns an allocation of `bytes` made by xe_pool_alloc (ptr may be NULL for 0 bytes). */
void xe_pool_free(xe_pool *p, void *ptr, int64_t bytes);

/* ---- values outside the budget: parameters, data, labels, parameter gradients -------- */

/* Values of one training step. Made for a net that already has its loss op (call
 * xe_net_training_graph first); indexed by tensor. */
typedef struct xe_exec_data {
    int nt;            /* tensors of the net when made */
    float **val;       /* [nt] values of each float32 XE_T_PARAM and XE_T_INPUT tensor
                          (owned), NULL for others */
    float **grad;      /* [nt] d(loss)/d(param) of each float32 XE_T_PARAM tensor after
                          xe_exec_run (owned; BatchNorm's mean/var stay 0), NULL for others */
    int64_t *labels;   /* class of each sample, [N] in 0..classes-1 (owned) */
    int label_t;       /* tensor index of the labels */
    int64_t classes;   /* logits per sample */
} xe_exec_data;

/* Fills d for net: a parameter's values are copied from its xe_tensor.data when the net
 * has them, otherwise seeded: BatchNorm / InstanceNorm scales and running variances 1,
 * their biases and running means 0; other parameters of rank >= 2 uniform in
 * +-1/sqrt(numel / dim[0]), of rank < 2 uniform in +-0.1; the data input uniform in
 * [-1, 1); labels uniform over the classes (logits per sample). Every random value is a
 * hash of (seed, tensor index, element index), so equal seeds give equal data.
 * XE_EINVAL when the net has no loss op; XE_EUNSUPPORTED naming the first tensor an
 * operator computes with (input or output; not a Reshape's shape or the labels) that is
 * not float32: the executor runs float32 models only;
 * XE_ENOMEM. On failure d is cleared. */
int xe_exec_data_init(const xe_net *net, uint64_t seed, xe_exec_data *d, xe_err *err);

/* Frees everything d owns and zeroes it. */
void xe_exec_data_clear(xe_exec_data *d);

/* ---- executor ----------------------------------------------------------------------- */

typedef struct xe_exec_opts {
    int threads[XE_MAX_DEV]; /* OpenMP threads per device, >= 1; 0: all the machine's */
    uint64_t seed;           /* dropout masks: hash of (seed, op, element) */
    int warmup;              /* untimed runs of the whole schedule before the measured one
                                (primitive creation, caches), >= 0 */
    int repeat;              /* measured runs, >= 1: each event's time is its median over
                                them (as the profiler's), a device's time their sum */
} xe_exec_opts;

/* Defaults: threads 0 (all), seed 1, warmup 0, repeat 1. */
void xe_exec_opts_default(xe_exec_opts *o);

typedef struct xe_exec_dev_result {
    int threads;         /* OpenMP threads used */
    int64_t budget;      /* bytes (the instance's) */
    int64_t peak;        /* measured: highest pool use, bytes */
    int64_t pred_peak;   /* the simulator's peak, bytes (-1 when it rejected the schedule) */
    double compute_time; /* measured seconds of computes on this device (sum over its
                            compute events of each one's median over the repeats) */
    double copy_in_time; /* measured seconds of copies arriving on this device (same) */
    double time;         /* compute_time + copy_in_time */
    double pred_time;    /* the simulator's compute + copy-in seconds (costs of the instance) */
    double time_err;     /* (time - pred_time) / pred_time; 0 when pred_time is 0 */
    int computes, copies_in;
} xe_exec_dev_result;

typedef struct xe_exec_result {
    int ndev;
    xe_exec_dev_result dev[XE_MAX_DEV];
    double loss;         /* mean softmax cross-entropy of the (last) loss computation */
    double time;         /* measured seconds, all devices serially */
    double pred_time;    /* the simulator's serial total */
    int sim_valid;       /* 1 when the simulator accepted the schedule */
    char sim_msg[512];   /* the simulator's message when it did not */
} xe_exec_result;

/* Runs one training step of net as scheduled by s on the devices of inst (whose graph
 * must be the training graph g of net with map, as made by xe_net_training_graph;
 * costs and budgets from inst; a budget <= 0 makes an unlimited pool). The simulator
 * replays s first for the predictions; a schedule it rejects still runs, so that a
 * budget overflow is caught by the pool. o (NULL: defaults) gives o->warmup untimed
 * passes, then o->repeat measured ones (each starting from nothing resident); the peak
 * is the last pass's (every pass has the same).
 * Kernel outputs: the loss in res->loss, parameter gradients in data->grad (overwritten;
 * a parameter used by several ops gets the sum of their contributions in op order, and
 * a backward node computed twice contributes once, so recomputation changes nothing).
 * The gradient flowing into an op's output is the sum of its sources (the loss node or
 * consumers' backward outputs, sliced to the right input) in a fixed order (consumer op
 * index, then input slot), so on one device results are bit for bit reproducible for
 * any schedule.
 * Errors: XE_EINFEASIBLE from a pool (device, node, bytes in the message); XE_EINVAL for
 * an event whose inputs are not resident on its device (naming event, node, device and
 * the missing tensor), a map that does not match the graph, or a node whose mem differs
 * from the executor's layout; XE_EUNSUPPORTED for an operator configuration the kernels
 * do not handle; XE_EINTERNAL when oneDNN fails. Nothing stays allocated after return. */
int xe_exec_run(const xe_net *net, const xe_train_map *map, const xe_instance *inst,
                const xe_schedule *s, xe_exec_data *data, const xe_exec_opts *o,
                xe_exec_result *res, xe_err *err);

/* The keep-everything schedule on device d: every node computed once in index order,
 * each output freed after its last user (outputs without users right away): the case of
 * xe_exec_keep_all_placed with every node on d. Appended to out. XE_EINVAL (d outside
 * 0..XE_MAX_DEV-1), XE_ENOMEM. */
int xe_exec_keep_all_schedule(const xe_graph *g, int d, xe_schedule *out, xe_err *err);

/* The keep-everything schedule with node v computed on device dev_of[v] (dev_of[n],
 * caller-owned, each in 0..ndev-1): every node once in index order, each input not yet
 * on v's device copied there from its own device first (once per device), every copy
 * and the original freed after the input's last user, outputs without users right
 * away. Budgets are not considered (the caller runs it with unbounded pools). With a
 * schedule's first-compute devices it computes every node with the same kernels and
 * thread counts as that schedule, so where the schedule computes each node on one
 * device only, its gradients are the schedule's bit for bit (`xengine run
 * --check-grads`). Appended to out. XE_EINVAL (a device out of range), XE_ENOMEM. */
int xe_exec_keep_all_placed(const xe_graph *g, const int *dev_of, int ndev, xe_schedule *out, xe_err *err);

/* dev_of[n] (caller's) = the device of each node's first compute in s, -1 for a node s
 * never computes; returns how many of s's later computes run on another device than
 * their node's first (0: xe_exec_keep_all_placed with dev_of reproduces s's gradients bit
 * for bit). Events must name nodes below n. */
int xe_exec_first_devices(const xe_schedule *s, int n, int *dev_of);

/* A maximally rematerializing schedule on device d: forward nodes are freed right after
 * their last forward user, and every forward node a backward (or loss) node reads is
 * recomputed, with the chain of forward inputs it needs, just before that node and freed
 * right after it. Appended to out. XE_ENOMEM. */
int xe_exec_remat_schedule(const xe_graph *g, const xe_train_map *map, int d, xe_schedule *out,
                           xe_err *err);

/* ---- profiler ----------------------------------------------------------------------- */

typedef struct xe_profile_opts {
    int threads[XE_MAX_DEV]; /* as in xe_exec_opts */
    int warmup;              /* untimed runs per node and device, >= 0 (default 2) */
    int runs;                /* timed runs, median taken, >= 1 (default 5) */
    uint64_t seed;
} xe_profile_opts;

void xe_profile_opts_default(xe_profile_opts *o);

/* Measures, for every node of inst's graph (the training graph of net with map) on every
 * device, the median of the node's kernel time in seconds over o->runs whole training
 * steps (every node in index order, every tensor kept, so each node reads what its
 * producers just wrote) after max(o->warmup, 1) untimed steps, and, for every node and
 * ordered device pair, the median time of copying its output (o->warmup untimed
 * copies first); writes them into inst->cost and inst->copy (the instance's budgets are
 * not used: the profiler holds every tensor of a device at once, outside any pool).
 * Inputs are the values of a real step (data from xe_exec_data_init with o->seed).
 * XE_EINVAL (runs < 1, warmup < 0), XE_ENOMEM, XE_EUNSUPPORTED, XE_EINTERNAL as in
 * xe_exec_run. */
int xe_profile_run(const xe_net *net, const xe_train_map *map, xe_instance *inst,
                   const xe_profile_opts *o, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
