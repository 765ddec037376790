/* xengine — the analytic cost model: seconds per node and device from FLOPs and bytes.
 *
 * For every node of a training or inference graph (include/xengine/net.h) the model
 * counts the floating-point operations and the bytes the operator moves to and from
 * memory (docs/cost-model.md gives every formula), and a device's time is the roofline
 * estimate
 *
 *     time = max(flops / peak_flops, bytes / mem_bandwidth) + launch_overhead   [s]
 *
 * (S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009; the paper's
 * cost inputs are profiled times instead, which a costs file supplies: it overrides
 * these estimates node by node). Copies cost latency + bytes / bandwidth over the link.
 * Device specifications come from an xe_recipe (include/xengine/instance.h): its
 * peak_flops / mem_bandwidth / launch_overhead, or, where 0, the preset of the
 * device's kind below. */
#ifndef XENGINE_COST_H
#define XENGINE_COST_H

#include "xengine/instance.h"
#include "xengine/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work of one node: floating-point operations and bytes read plus written. */
typedef struct xe_work {
    double flops; /* FLOP (a multiply-add is 2) */
    double bytes; /* bytes moved between the device's memory and its cores */
} xe_work;

/* What the roofline needs of a device. */
typedef struct xe_device_spec {
    double peak_flops;      /* FLOP/s, fp32, > 0 */
    double mem_bandwidth;   /* bytes/s, > 0 */
    double launch_overhead; /* seconds added to every operator, >= 0 */
} xe_device_spec;

/* Preset specifications (public spec sheets; docs/cost-model.md):
 *   XE_DEV_GPU: NVIDIA Tesla V100 SXM2 — 15.7 TFLOP/s fp32, 900 GB/s HBM2 (NVIDIA V100
 *               datasheet), 5 us per kernel launch;
 *   XE_DEV_CPU: Intel Xeon Gold 6148 — 20 cores x 2.4 GHz x 64 fp32 FLOP/cycle (two
 *               AVX-512 FMA units) = 3.072 TFLOP/s, 6 channels DDR4-2666 = 128 GB/s
 *               (Intel ARK), 2 us per operator. */
void xe_cost_spec_preset(xe_device_kind kind, xe_device_spec *out);

/* Link between the presets' GPU and host: the V100's PCIe 3.0 x16, 15.75 GB/s per
 * direction (PCI-SIG: 8 GT/s x 16 lanes x 128/130), taken as 16e9 B/s like the devices
 * files' default, and 10 us per transfer. */
#define XE_COST_LINK_BANDWIDTH 16e9
#define XE_COST_LINK_LATENCY 10e-6

/* Device spec of recipe device d: its peak_flops, mem_bandwidth and launch_overhead
 * when peak_flops[d] > 0 (the devices reader fills all three, from the preset of the
 * kind where the file gives none), else the preset of its kind. */
void xe_cost_recipe_spec(const xe_recipe *r, int d, xe_device_spec *out);

/* Recipe of a named preset for network graphs: as xe_recipe_preset ("gpu", "cpu",
 * "gpu+cpu"; GPU budget gpu_frac of the no-recomputation peak, the CPU of gpu+cpu 4x
 * the peak), with the preset device specifications above and the PCIe 3.0 link.
 * time_unit and speed are not used by xe_cost_instance. XE_EINVAL for an unknown name
 * or gpu_frac <= 0. */
int xe_cost_recipe_preset(const char *name, double gpu_frac, xe_recipe *out, xe_err *err);

/* FLOPs and bytes of node v of g, a graph built from net by xe_net_training_graph or
 * xe_net_inference_graph with map (docs/cost-model.md has the formulas per operator
 * and role). XE_EINVAL when v or its op is out of range. */
int xe_cost_node_work(const xe_net *net, const xe_graph *g, const xe_train_map *map, int v, xe_work *out,
                      xe_err *err);

/* Roofline time of work w on device s, in seconds (formula above). */
double xe_cost_roofline(const xe_device_spec *s, const xe_work *w);

/* Instance of g (finalized; built from net with map) for the devices of recipe r:
 * budgets as xe_instance_from_recipe (bytes, or a fraction of g's no-recomputation
 * peak), cost[v][d] = roofline time of node v on device d, copy[v][d][e] = r->latency +
 * mem[v] / r->bandwidth. Every device can run every node. On XE_OK the instance owns g;
 * on error g stays the caller's. XE_EINVAL (bad recipe or spec, naming the device),
 * XE_ENOMEM. */
int xe_cost_instance(const xe_net *net, xe_graph *g, const xe_train_map *map, const xe_recipe *r,
                     xe_instance **out, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
