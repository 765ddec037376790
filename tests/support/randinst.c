/* Seeded random tiny instances (see randinst.h). */
#include "support/randinst.h"

#include <stdio.h>

typedef struct rng {
    uint64_t s;
} rng;

/* splitmix64 (Steele, Lea, Flood 2014). */
static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi] (hi >= lo; the modulo bias is irrelevant here). */
static int64_t rng_range(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

xe_instance *xe_test_random_instance(uint64_t seed, int n, int ndev, int with_copy_cost)
{
    if (n < 1 || ndev < 1 || ndev > XE_MAX_DEV) return NULL;
    rng r = {seed ^ ((uint64_t)n << 40) ^ ((uint64_t)ndev << 48) ^
             ((uint64_t)(with_copy_cost != 0) << 56)};
    xe_graph *g = xe_graph_new("random");
    if (!g) return NULL;
    for (int v = 0; v < n; v++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", v);
        if (xe_graph_add_node(g, name, NULL, 0, rng_range(&r, 1, 10), 0, 1.0, NULL) < 0) goto fail;
    }
    for (int i = 1; i < n; i++) {
        int any = 0;
        for (int j = 0; j < i; j++)
            if (rng_next(&r) % 100 < 40) {
                if (xe_graph_add_edge(g, j, i, NULL) != XE_OK) goto fail;
                any = 1;
            }
        if (!any && xe_graph_add_edge(g, (int)rng_range(&r, 0, i - 1), i, NULL) != XE_OK) goto fail;
    }
    if (xe_graph_finalize(g, NULL) != XE_OK) goto fail;
    xe_instance *in = xe_instance_new(g, ndev);
    if (!in) goto fail;
    for (int d = 0; d < ndev; d++) {
        if (d == 0) snprintf(in->dev[d].name, sizeof in->dev[d].name, "gpu");
        else if (d == 1) snprintf(in->dev[d].name, sizeof in->dev[d].name, "cpu");
        else snprintf(in->dev[d].name, sizeof in->dev[d].name, "dev%d", d);
        in->dev[d].kind = d == 1 ? XE_DEV_CPU : XE_DEV_GPU;
    }
    for (int v = 0; v < n; v++) {
        for (int d = 0; d < ndev; d++) in->cost[v * ndev + d] = (double)rng_range(&r, 1, 10);
        if (ndev >= 2 && rng_next(&r) % 8 == 0)
            in->cost[v * ndev + (int)rng_range(&r, 0, ndev - 1)] = XE_NO_COST;
        for (int d = 0; d < ndev; d++)
            for (int e = 0; e < ndev; e++)
                in->copy[(v * ndev + d) * ndev + e] =
                    (with_copy_cost && d != e) ? (double)rng_range(&r, 1, 6) : 0.0;
    }
    int64_t lo = 0, hi = 0;
    for (int v = 0; v < n; v++) {
        int64_t f = g->nodes[v].mem;
        for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) f += g->nodes[g->pred[p]].mem;
        if (f > lo) lo = f;
        hi += g->nodes[v].mem;
    }
    for (int d = 0; d < ndev; d++) {
        switch (rng_next(&r) % 8) {
        case 0: in->dev[d].budget = lo - rng_range(&r, 1, 2); break;
        case 1:
        case 2: in->dev[d].budget = lo; break;
        case 3:
        case 4: in->dev[d].budget = rng_range(&r, lo, lo + (hi - lo) / 3); break;
        case 5:
        case 6: in->dev[d].budget = rng_range(&r, lo, hi); break;
        default: in->dev[d].budget = hi; break;
        }
    }
    return in;
fail:
    xe_graph_free(g);
    return NULL;
}

xe_instance *xe_test_random_dag(uint64_t seed, int n, double p, double budget_frac)
{
    if (n < 1) return NULL;
    rng r = {seed};
    xe_graph *g = xe_graph_new("random");
    if (!g) return NULL;
    for (int v = 0; v < n; v++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", v);
        if (xe_graph_add_node(g, name, NULL, 0, 1 + (int64_t)(rng_next(&r) % 1000), 0, 1.0, NULL) < 0) goto fail;
    }
    for (int i = 1; i < n; i++) {
        int any = 0;
        for (int j = 0; j < i; j++)
            if ((double)(rng_next(&r) >> 11) * 0x1.0p-53 < p) {
                if (xe_graph_add_edge(g, j, i, NULL) != XE_OK) goto fail;
                any = 1;
            }
        if (!any && (rng_next(&r) & 1) && xe_graph_add_edge(g, (int)(rng_next(&r) % (uint64_t)i), i, NULL) != XE_OK)
            goto fail;
    }
    if (xe_graph_finalize(g, NULL) != XE_OK) goto fail;
    xe_instance *in = xe_instance_new(g, 1);
    if (!in) goto fail;
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    in->dev[0].kind = XE_DEV_GPU;
    int64_t lo = xe_instance_min_footprint(g), hi = xe_instance_norecompute_peak(g);
    in->dev[0].budget = lo + (int64_t)(budget_frac * (double)(hi - lo));
    for (int v = 0; v < n; v++) in->cost[v] = 1.0 + (double)(rng_next(&r) % 10);
    return in;
fail:
    xe_graph_free(g);
    return NULL;
}
