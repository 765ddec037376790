/* The roofline cost model: device presets, per-node times, and an instance for a
 * network graph (include/xengine/cost.h, docs/cost-model.md). */
#include <math.h>
#include <stdio.h>

#include "xengine/cost.h"

void xe_cost_spec_preset(xe_device_kind kind, xe_device_spec *out)
{
    if (kind == XE_DEV_GPU) {
        out->peak_flops = 15.7e12;   /* NVIDIA Tesla V100 SXM2: 15.7 TFLOP/s single precision */
        out->mem_bandwidth = 900e9;  /* 900 GB/s HBM2 (NVIDIA V100 datasheet) */
        out->launch_overhead = 5e-6; /* a CUDA kernel launch, a few microseconds */
    } else {
        /* Intel Xeon Gold 6148 (Skylake-SP, Intel ARK): 20 cores, 2.4 GHz, two AVX-512
         * FMA units x 16 fp32 lanes x 2 FLOP = 64 FLOP/cycle per core */
        out->peak_flops = 20 * 2.4e9 * 64;     /* 3.072 TFLOP/s */
        out->mem_bandwidth = 6 * 8 * 2.666e9;  /* 6 channels DDR4-2666: 128 GB/s */
        out->launch_overhead = 2e-6;           /* dispatching one oneDNN primitive */
    }
}

void xe_cost_recipe_spec(const xe_recipe *r, int d, xe_device_spec *out)
{
    if (r->peak_flops[d] > 0) {
        out->peak_flops = r->peak_flops[d];
        out->mem_bandwidth = r->mem_bandwidth[d];
        out->launch_overhead = r->launch_overhead[d];
    } else {
        xe_cost_spec_preset(r->kind[d], out);
    }
}

int xe_cost_recipe_preset(const char *name, double gpu_frac, xe_recipe *out, xe_err *err)
{
    int rc = xe_recipe_preset(name, gpu_frac, out, err);
    if (rc) return rc;
    out->bandwidth = XE_COST_LINK_BANDWIDTH;
    out->latency = XE_COST_LINK_LATENCY;
    out->time_unit = 1.0;
    for (int d = 0; d < out->ndev; d++) {
        xe_device_spec s;
        xe_cost_spec_preset(out->kind[d], &s);
        out->peak_flops[d] = s.peak_flops;
        out->mem_bandwidth[d] = s.mem_bandwidth;
        out->launch_overhead[d] = s.launch_overhead;
        out->speed[d] = 1.0;
    }
    return XE_OK;
}

double xe_cost_roofline(const xe_device_spec *s, const xe_work *w)
{
    return fmax(w->flops / s->peak_flops, w->bytes / s->mem_bandwidth) + s->launch_overhead;
}

int xe_cost_instance(const xe_net *net, xe_graph *g, const xe_train_map *map, const xe_recipe *r,
                     xe_instance **out, xe_err *err)
{
    *out = NULL;
    if (!g->finalized || map->n != g->n)
        return xe_err_set(err, XE_EINVAL, "cost model: graph %s does not match its map (%d vs %d nodes)", g->name,
                          g->n, map->n);
    xe_device_spec spec[XE_MAX_DEV];
    for (int d = 0; d < r->ndev && d < XE_MAX_DEV; d++) {
        xe_cost_recipe_spec(r, d, &spec[d]);
        if (!(spec[d].peak_flops > 0) || !isfinite(spec[d].peak_flops) || !(spec[d].mem_bandwidth > 0) ||
            !isfinite(spec[d].mem_bandwidth) || !(spec[d].launch_overhead >= 0) ||
            !isfinite(spec[d].launch_overhead))
            return xe_err_set(err, XE_EINVAL,
                              "device %s: peak_flops and mem_bandwidth must be finite and > 0, launch_overhead >= 0",
                              r->name[d]);
    }
    /* budgets and copies by the recipe rule; its speed and time unit only scale node
     * costs, which are replaced below */
    xe_recipe rr = *r;
    rr.time_unit = 1.0;
    for (int d = 0; d < rr.ndev && d < XE_MAX_DEV; d++) rr.speed[d] = 1.0;
    xe_instance *in = NULL;
    int rc = xe_instance_from_recipe(g, &rr, &in, err);
    if (rc) return rc;
    for (int v = 0; v < g->n; v++) {
        xe_work w;
        if ((rc = xe_cost_node_work(net, g, map, v, &w, err))) {
            in->g = NULL; /* g stays the caller's on error */
            xe_instance_free(in);
            return rc;
        }
        for (int d = 0; d < in->ndev; d++) in->cost[(int64_t)v * in->ndev + d] = xe_cost_roofline(&spec[d], &w);
    }
    *out = in;
    return XE_OK;
}
