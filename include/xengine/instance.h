/* xengine — a planning instance: graph, devices with memory budgets, and costs.
 *
 * cost[v * ndev + d]   seconds to compute node v on device d; XE_NO_COST (< 0) when d
 *                      cannot run v.
 * copy[(v * ndev + d) * ndev + e]  seconds to copy v's output from d to e (d != e);
 *                      the diagonal is 0 and unused.
 * Budgets are bytes of activations and gradients resident on a device (parameters are
 * not counted, as in Checkmate). The instance owns the graph and every array. */
#ifndef XENGINE_INSTANCE_H
#define XENGINE_INSTANCE_H

#include <stdint.h>

#include "xengine/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XE_MAX_DEV 8
#define XE_NO_COST (-1.0)

typedef enum { XE_DEV_CPU = 0, XE_DEV_GPU = 1 } xe_device_kind;

typedef struct xe_device {
    char name[32];
    xe_device_kind kind;
    int64_t budget; /* bytes */
} xe_device;

typedef struct xe_instance {
    xe_graph *g;      /* owned, finalized */
    int ndev;         /* 1 .. XE_MAX_DEV */
    xe_device dev[XE_MAX_DEV];
    double *cost;     /* [n * ndev] seconds, XE_NO_COST where a device cannot run v */
    double *copy;     /* [n * ndev * ndev] seconds */
} xe_instance;

/* New instance taking ownership of g (finalized) with ndev devices, all costs 0 and
 * copies 0, budgets 0. On failure returns NULL and frees nothing of g. */
xe_instance *xe_instance_new(xe_graph *g, int ndev);

/* Checks what the planners rely on: every node runnable on at least one device, every
 * cost and copy cost finite and at most XE_MAX_COST seconds (CBC rejects objective
 * coefficients near 1e25), and every device's budget at least 1 byte (schedule files
 * refuse 0; xe_instance_new leaves budgets at 0 for the caller to set). XE_EINVAL naming
 * the node or device otherwise. xe_plan calls it first. */
#define XE_MAX_COST 1e12
int xe_instance_validate(const xe_instance *in, xe_err *err);

/* Frees the instance and its graph. NULL is a no-op. */
void xe_instance_free(xe_instance *inst);

static inline double xe_cost(const xe_instance *in, int v, int d) { return in->cost[(int64_t)v * in->ndev + d]; }
static inline double xe_copy_cost(const xe_instance *in, int v, int d, int e)
{
    return in->copy[((int64_t)v * in->ndev + d) * in->ndev + e];
}
static inline int xe_can_run(const xe_instance *in, int v, int d) { return xe_cost(in, v, d) >= 0.0; }

/* Bytes resident on one device at the peak of the no-recomputation schedule: every node
 * computed once in topological order, each output freed right after its last user
 * (outputs without users freed right after they are computed). Counted while a node
 * runs: its inputs and its output together. This is the "100%" of budget fractions.
 * g must be finalized; returns -2 when it is not, -1 when out of memory. */
int64_t xe_instance_norecompute_peak(const xe_graph *g);

/* A budget given as a fraction of the no-recomputation peak, in bytes: floor(frac *
 * peak), exactly for a fraction that is a percentage with up to 6 decimals (frac =
 * strtod("NN.N") / 100, as --budget and devices files make it: taken back as that
 * decimal and multiplied in 128-bit integers), else in doubles. 29% of 100 B is 29 B:
 * with doubles alone 0.29 * 100 = 28.999999999999996 floored to 28 before 2026-12-05,
 * and "92.8%" of 125 B gave 115 B, not 116. A double, so that callers can refuse values
 * beyond int64 (frac * peak above 9e18); frac >= 0, peak >= 0. */
double xe_budget_of_frac(double frac, int64_t peak);

/* Smallest budget (bytes) any schedule on a single device needs: the largest footprint
 * of one node, mem[v] + sum of mem[u] over v's inputs. A lower bound for every device
 * configuration too: some device runs v with its inputs resident. */
int64_t xe_instance_min_footprint(const xe_graph *g);

/* Recipe for a 1- or 2-device instance from a single-cost graph (docs/formats.md).
 * Device d gets cost[v][d] = node.cost * time_unit / speed[d]; every copy costs
 * latency + mem[v] / bandwidth seconds; budget[d] = budget_bytes[d] when > 0, else
 * budget_frac[d] * no-recomputation peak (rounded down). */
typedef struct xe_recipe {
    int ndev;
    char name[XE_MAX_DEV][32];
    xe_device_kind kind[XE_MAX_DEV];
    double speed[XE_MAX_DEV];        /* relative throughput, > 0 */
    int64_t budget_bytes[XE_MAX_DEV];
    double budget_frac[XE_MAX_DEV];
    double time_unit;                /* seconds per unit of node.cost, > 0 */
    double bandwidth;                /* bytes per second between any two devices, > 0 */
    double latency;                  /* seconds per copy, >= 0 */
    /* Device specifications for the analytic cost model of network graphs
     * (include/xengine/cost.h), used when peak_flops[d] > 0; 0 = the preset of the
     * device's kind. Not used for graphs read from files (their nodes carry a cost). */
    double peak_flops[XE_MAX_DEV];      /* FLOP/s, fp32 */
    double mem_bandwidth[XE_MAX_DEV];   /* bytes/s */
    double launch_overhead[XE_MAX_DEV]; /* seconds per operator */
} xe_recipe;

/* The presets' relative speed of a CPU (a GPU's is 1) and their seconds per unit of a
 * graph file's node cost (costs read as milliseconds); the paper's line-format devices
 * files use them too (docs/formats.md). */
#define XE_PRESET_CPU_SPEED 0.125
#define XE_PRESET_TIME_UNIT 1e-3

/* Built-in recipes. "gpu": one GPU. "cpu": one CPU (speed 0.125). "gpu+cpu": the GPU
 * (speed 1) and a host CPU (speed 0.125, budget 4x the no-recomputation peak), PCIe 3.0
 * x16 link (16e9 B/s, 10 us). The first device's budget (the GPU's; the CPU's under
 * "cpu") is gpu_frac of the peak. time_unit is 1e-3 (graph costs read as ms). Returns
 * XE_EINVAL for an unknown name. */
int xe_recipe_preset(const char *name, double gpu_frac, xe_recipe *out, xe_err *err);

/* Builds an instance from g, which must be finalized (xe_graph_finalize; XE_EINVAL
 * otherwise), with r's devices, budgets (bytes, or fractions of g's no-recomputation
 * peak) and speeds: *out owns g on success; on failure g stays the caller's and *out is
 * NULL. Errors: XE_EINVAL (bad recipe or graph), XE_ENOMEM. */
int xe_instance_from_recipe(xe_graph *g, const xe_recipe *r, xe_instance **out, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
