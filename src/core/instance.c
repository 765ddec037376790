/* Instances: devices, budgets and per-device costs; built-in recipes; the
 * no-recomputation peak that budget fractions refer to. */
#include "xengine/instance.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xe_instance *xe_instance_new(xe_graph *g, int ndev)
{
    if (!g || !g->finalized || ndev < 1 || ndev > XE_MAX_DEV) return NULL;
    xe_instance *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    size_t n = (size_t)(g->n ? g->n : 1);
    in->cost = calloc(n * (size_t)ndev, sizeof *in->cost);
    in->copy = calloc(n * (size_t)ndev * (size_t)ndev, sizeof *in->copy);
    if (!in->cost || !in->copy) {
        free(in->cost);
        free(in->copy);
        free(in);
        return NULL;
    }
    in->g = g;
    in->ndev = ndev;
    for (int d = 0; d < ndev; d++) snprintf(in->dev[d].name, sizeof in->dev[d].name, "dev%d", d);
    return in;
}

void xe_instance_free(xe_instance *in)
{
    if (!in) return;
    xe_graph_free(in->g);
    free(in->cost);
    free(in->copy);
    free(in);
}

int xe_instance_validate(const xe_instance *in, xe_err *err)
{
    const xe_graph *g = in->g;
    for (int v = 0; v < g->n; v++) {
        int runs = 0;
        for (int d = 0; d < in->ndev; d++) {
            double c = xe_cost(in, v, d);
            runs |= c >= 0;
            if (!(c <= XE_MAX_COST))
                return xe_err_set(err, XE_EINVAL, "node %d (%s): cost on %s is not a number <= %g s", v,
                                  g->nodes[v].name, in->dev[d].name, XE_MAX_COST);
            for (int e = 0; e < in->ndev; e++)
                if (e != d && !(xe_copy_cost(in, v, d, e) >= 0 && xe_copy_cost(in, v, d, e) <= XE_MAX_COST))
                    return xe_err_set(err, XE_EINVAL, "node %d (%s): copy cost %s -> %s is not in [0, %g] s", v,
                                      g->nodes[v].name, in->dev[d].name, in->dev[e].name, XE_MAX_COST);
        }
        if (!runs) return xe_err_set(err, XE_EINVAL, "node %d (%s) can run on no device", v, g->nodes[v].name);
    }
    for (int d = 0; d < in->ndev; d++) /* schedule files and the executor refuse 0 B too */
        if (in->dev[d].budget < 1)
            return xe_err_set(err, XE_EINVAL, "device %s: budget %lld B: must be at least 1 byte", in->dev[d].name,
                              (long long)in->dev[d].budget);
    return XE_OK;
}

int64_t xe_instance_norecompute_peak(const xe_graph *g)
{
    /* Node v's output lives from step v to step last_use(v) (or just step v without
     * users). While v runs, resident = every u < v with last_use(u) >= v, plus v. */
    if (!g->finalized) return -2; /* no user lists to read */
    int64_t live = 0, peak = 0;
    int64_t *dies = calloc((size_t)g->n + 1, sizeof *dies); /* bytes freed after step k */
    if (!dies) return -1;
    for (int v = 0; v < g->n; v++) {
        int last = xe_graph_last_use(g, v);
        dies[last < 0 ? v : last] += g->nodes[v].mem;
    }
    for (int v = 0; v < g->n; v++) {
        live += g->nodes[v].mem;
        if (live > peak) peak = live;
        live -= dies[v];
    }
    free(dies);
    return peak;
}

int64_t xe_instance_min_footprint(const xe_graph *g)
{
    int64_t best = 0;
    for (int v = 0; v < g->n; v++) {
        int64_t f = xe_graph_footprint(g, v);
        if (f > best) best = f;
    }
    return best;
}

int xe_recipe_preset(const char *name, double gpu_frac, xe_recipe *r, xe_err *err)
{
    memset(r, 0, sizeof *r);
    r->time_unit = XE_PRESET_TIME_UNIT; /* shared graph costs read as milliseconds */
    r->bandwidth = 16e9;   /* PCIe 3.0 x16, ~15.75 GB/s per direction (PCI-SIG spec) */
    r->latency = 10e-6;
    if (!(gpu_frac > 0.0) || !isfinite(gpu_frac))
        return xe_err_set(err, XE_EINVAL, "budget fraction must be > 0");
    if (strcmp(name, "gpu") == 0 || strcmp(name, "gpu+cpu") == 0) {
        r->ndev = 1;
        snprintf(r->name[0], sizeof r->name[0], "gpu");
        r->kind[0] = XE_DEV_GPU;
        r->speed[0] = 1.0;
        r->budget_frac[0] = gpu_frac;
        if (strcmp(name, "gpu+cpu") == 0) {
            r->ndev = 2;
            snprintf(r->name[1], sizeof r->name[1], "cpu");
            r->kind[1] = XE_DEV_CPU;
            r->speed[1] = XE_PRESET_CPU_SPEED; /* a host CPU ~8x slower than the GPU on these operators */
            r->budget_frac[1] = 4.0;
        }
        return XE_OK;
    }
    if (strcmp(name, "cpu") == 0) {
        r->ndev = 1;
        snprintf(r->name[0], sizeof r->name[0], "cpu");
        r->kind[0] = XE_DEV_CPU;
        r->speed[0] = XE_PRESET_CPU_SPEED;
        r->budget_frac[0] = gpu_frac;
        return XE_OK;
    }
    return xe_err_set(err, XE_EINVAL, "unknown device preset '%s' (known: gpu, cpu, gpu+cpu)", name);
}

int xe_instance_from_recipe(xe_graph *g, const xe_recipe *r, xe_instance **out, xe_err *err)
{
    *out = NULL;
    if (r->ndev < 1 || r->ndev > XE_MAX_DEV)
        return xe_err_set(err, XE_EINVAL, "%d devices: need 1 to %d", r->ndev, XE_MAX_DEV);
    if (!(r->time_unit > 0) || !(r->bandwidth > 0) || !(r->latency >= 0))
        return xe_err_set(err, XE_EINVAL, "time unit and link bandwidth must be > 0, latency >= 0");
    if (!g->finalized) /* its user lists are not built (a crash here before 2026-12-05) */
        return xe_err_set(err, XE_EINVAL, "graph '%s' is not finalized (call xe_graph_finalize first)", g->name);
    int64_t peak = xe_instance_norecompute_peak(g);
    if (peak < 0) return xe_err_set(err, XE_ENOMEM, "out of memory computing the peak");
    xe_instance *in = xe_instance_new(g, r->ndev);
    if (!in) return xe_err_set(err, XE_ENOMEM, "out of memory building the instance");
    for (int d = 0; d < r->ndev; d++) {
        if (!(r->speed[d] > 0)) {
            in->g = NULL;
            xe_instance_free(in);
            return xe_err_set(err, XE_EINVAL, "device %s: speed must be > 0", r->name[d]);
        }
        memcpy(in->dev[d].name, r->name[d], sizeof in->dev[d].name);
        in->dev[d].kind = r->kind[d];
        double b = r->budget_bytes[d] > 0 ? (double)r->budget_bytes[d] : xe_budget_of_frac(r->budget_frac[d], peak);
        if (b > 9e18) { /* NaN goes on to the "at least 1 byte" below */
            in->g = NULL;
            xe_instance_free(in);
            return xe_err_set(err, XE_EINVAL, "device %s: budget above 9e18 bytes", r->name[d]);
        }
        /* a fraction of a 0-B peak (a graph of 0-B tensors): 1 B, the least budget a device
         * may have (schedule files and the executor refuse 0; a new user's 0-B graph at
         * 50% was planned with budget 0, and `simulate` refused the file written) */
        if (!(b >= 1) && peak == 0 && r->budget_bytes[d] <= 0 && r->budget_frac[d] >= 0) b = 1;
        if (!(b >= 1) && peak > 0 && r->budget_bytes[d] <= 0 && r->budget_frac[d] > 0) {
            in->g = NULL;
            xe_instance_free(in);
            return xe_err_set(err, XE_EINVAL,
                              "device %s: budget %.6g%% of the no-recomputation peak (%lld B) is less than 1 byte",
                              r->name[d], 100.0 * r->budget_frac[d], (long long)peak);
        }
        if (!(b >= 1)) { /* a negative or zero fraction or byte count set in the recipe by hand */
            in->g = NULL;
            xe_instance_free(in);
            return xe_err_set(err, XE_EINVAL, "device %s: budget %.6g B: must be at least 1 byte", r->name[d], b);
        }
        in->dev[d].budget = (int64_t)b;
        for (int v = 0; v < g->n; v++)
            in->cost[(int64_t)v * r->ndev + d] = g->nodes[v].cost * r->time_unit / r->speed[d];
    }
    for (int v = 0; v < g->n; v++)
        for (int d = 0; d < r->ndev; d++)
            for (int e = 0; e < r->ndev; e++)
                in->copy[((int64_t)v * r->ndev + d) * r->ndev + e] =
                    d == e ? 0.0 : r->latency + (double)g->nodes[v].mem / r->bandwidth;
    *out = in;
    return XE_OK;
}

double xe_budget_of_frac(double frac, int64_t peak)
{
    double x = frac * (double)peak;
    if (!(frac >= 0) || peak <= 0 || !(x < 9e18)) return floor(x);
    /* frac came from a decimal percentage ("92.8%": strtod, then / 100): recover it as
     * q / 10^k with up to 6 decimals and take floor(q * peak / (100 * 10^k)) in 128-bit
     * integers, exact; a fraction that is no such decimal keeps the plain floor */
    double pct = frac * 100.0, scale = 1;
    for (int k = 0; k <= 6; k++, scale *= 10) {
        double y = pct * scale, q = nearbyint(y);
        if (q > 1e15) break;
        if (fabs(y - q) <= 64 * DBL_EPSILON * fmax(q, 1.0)) {
            unsigned __int128 num = (unsigned __int128)(uint64_t)q * (uint64_t)peak;
            return (double)(uint64_t)(num / ((unsigned __int128)(uint64_t)(100 * scale)));
        }
    }
    return floor(x);
}
