/* Low-peak topological orders and the instance relabelled in one (docs/reorder.md). */
#include "xengine/reorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "xengine/timer.h"

int64_t xe_order_peak(const xe_graph *g, const int *order)
{
    int n = g->n;
    int *pos = malloc(((size_t)n + 1) * sizeof *pos);
    int64_t *dies = calloc((size_t)n + 1, sizeof *dies); /* bytes freed after step k */
    int64_t peak = -1;
    if (!pos || !dies) goto out;
    for (int v = 0; v < n; v++) pos[v] = -1;
    for (int k = 0; k < n; k++) {
        int v = order[k];
        if (v < 0 || v >= n || pos[v] >= 0) goto out; /* not a permutation */
        pos[v] = k;
    }
    for (int v = 0; v < n; v++) {
        int last = pos[v];
        for (int j = g->succ_off[v]; j < g->succ_off[v + 1]; j++) {
            int p = pos[g->succ[j]];
            if (p < pos[v]) goto out; /* a user before its input: not topological */
            if (p > last) last = p;
        }
        dies[last] += g->nodes[v].mem;
    }
    int64_t live = 0;
    peak = 0;
    for (int k = 0; k < n; k++) {
        live += g->nodes[order[k]].mem;
        if (live > peak) peak = live;
        live -= dies[k];
    }
out:
    free(pos);
    free(dies);
    return peak;
}

/* Scratch of the list scheduling passes. */
typedef struct {
    int *indeg; /* [n] inputs not yet computed */
    int *left;  /* [n] users not yet computed */
    int *ready; /* [n] nodes whose inputs are all computed */
    int *order; /* [n] this pass's order */
} pass_buf;

/* Bytes v's compute adds once it is done: its output (none when nothing reads it, it is
 * freed at once) less the inputs v is the last reader of (pred lists hold each input
 * once: xe_graph_finalize merges duplicate edges). */
static int64_t added_bytes(const xe_graph *g, const pass_buf *b, int v)
{
    int64_t add = xe_graph_nsucc(g, v) > 0 ? g->nodes[v].mem : 0;
    for (int j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
        if (b->left[g->pred[j]] == 1) add -= g->nodes[g->pred[j]].mem;
    return add;
}

/* One pass of list scheduling into b->order; noise = 0: deterministic (lowest added
 * bytes, then lowest index). Returns the order's no-recomputation peak, counted as it
 * goes exactly as xe_order_peak counts it (v's output joins the resident bytes at its
 * compute; after it, v when nothing reads it and each input v read last leave). */
static int64_t one_pass(const xe_graph *g, pass_buf *b, double noise, uint64_t *rs)
{
    int n = g->n, nready = 0;
    int64_t live = 0, peak = 0;
    for (int v = 0; v < n; v++) {
        b->indeg[v] = xe_graph_npred(g, v);
        b->left[v] = xe_graph_nsucc(g, v);
        if (b->indeg[v] == 0) b->ready[nready++] = v;
    }
    for (int k = 0; k < n; k++) {
        int bi = 0;
        double bs = 0;
        for (int r = 0; r < nready; r++) {
            double s = (double)added_bytes(g, b, b->ready[r]);
            if (noise > 0) s += noise * (double)(xe_splitmix64(rs) >> 11) * 0x1.0p-53;
            if (r == 0 || s < bs || (s == bs && b->ready[r] < b->ready[bi])) bi = r, bs = s;
        }
        int v = b->ready[bi];
        b->ready[bi] = b->ready[--nready];
        b->order[k] = v;
        live += g->nodes[v].mem;
        if (live > peak) peak = live;
        if (b->left[v] == 0) live -= g->nodes[v].mem;
        for (int j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
            if (--b->left[g->pred[j]] == 0) live -= g->nodes[g->pred[j]].mem;
        for (int j = g->succ_off[v]; j < g->succ_off[v + 1]; j++)
            if (--b->indeg[g->succ[j]] == 0) b->ready[nready++] = g->succ[j];
    }
    return peak;
}

int xe_order_low_peak(const xe_graph *g, uint64_t seed, int max_passes, double deadline, int *order,
                      int64_t *peak, xe_err *err)
{
    if (!g->finalized || max_passes < 1)
        return xe_err_set(err, XE_EINVAL, "order search: graph not finalized or no pass (%d)", max_passes);
    int n = g->n;
    for (int v = 0; v < n; v++) order[v] = v;
    *peak = xe_instance_norecompute_peak(g);
    if (*peak < 0) return xe_err_set(err, XE_ENOMEM, "order search: out of memory");
    if (n == 0) return XE_OK;
    pass_buf b;
    size_t sz = (size_t)n * sizeof(int);
    b.indeg = malloc(sz), b.left = malloc(sz), b.ready = malloc(sz), b.order = malloc(sz);
    int rc = XE_OK;
    if (!b.indeg || !b.left || !b.ready || !b.order) {
        rc = xe_err_set(err, XE_ENOMEM, "order search: out of memory for %d nodes", n);
        goto out;
    }
    double mean = (double)xe_graph_total_mem(g) / n;
    static const double spread[3] = {0.25, 1.0, 4.0};
    uint64_t rs = seed;
    for (int p = 0; p < max_passes; p++) {
        if (p > 0 && xe_now() >= deadline) break;
        int64_t pk = one_pass(g, &b, p == 0 ? 0.0 : spread[(p - 1) % 3] * mean, &rs);
        if (pk < *peak) {
            *peak = pk;
            memcpy(order, b.order, sz);
        }
    }
out:
    free(b.indeg), free(b.left), free(b.ready), free(b.order);
    return rc;
}

int xe_instance_relabel(const xe_instance *in, const int *map, int N, xe_instance **out, xe_err *err)
{
    *out = NULL;
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    int *id = malloc(((size_t)n + 1) * sizeof *id); /* id[v]: v's new index */
    if (!id) return xe_err_set(err, XE_ENOMEM, "relabel: out of memory");
    for (int v = 0; v < n; v++) id[v] = -1;
    for (int k = 0; k < N; k++) {
        if (map[k] < -1 || map[k] >= n || (map[k] >= 0 && id[map[k]] >= 0)) {
            free(id);
            return xe_err_set(err, XE_EINVAL, "relabel: entry %d of the map names no node, or one named before", k);
        }
        if (map[k] >= 0) id[map[k]] = k;
    }
    xe_graph *h = xe_graph_new(g->name);
    int rc = h ? XE_OK : xe_err_set(err, XE_ENOMEM, "relabel: out of memory");
    for (int k = 0; rc == XE_OK && k < N; k++) {
        int idk;
        if (map[k] >= 0) {
            const xe_node *x = &g->nodes[map[k]];
            idk = xe_graph_add_node(h, x->name, x->op, x->backward, x->mem, x->param_mem, x->cost, err);
        } else {
            char name[48];
            snprintf(name, sizeof name, "restage.empty.%d", k);
            idk = xe_graph_add_node(h, name, "empty", 0, 0, 0, 0.0, err);
        }
        if (idk < 0) rc = idk;
    }
    for (int k = 0; rc == XE_OK && k < N; k++) {
        int v = map[k];
        for (int j = v < 0 ? 0 : g->pred_off[v]; rc == XE_OK && v >= 0 && j < g->pred_off[v + 1]; j++) {
            int u = g->pred[j];
            if (id[u] < 0 || id[u] > k) {
                rc = xe_err_set(err, XE_EINVAL, "relabel: node %s before its input %s", g->nodes[v].name,
                                g->nodes[u].name);
                break;
            }
            rc = xe_graph_add_edge(h, id[u], k, err);
        }
    }
    if (rc == XE_OK) rc = xe_graph_finalize(h, err);
    xe_instance *p = NULL;
    if (rc == XE_OK && !(p = xe_instance_new(h, D))) rc = xe_err_set(err, XE_ENOMEM, "relabel: out of memory");
    if (rc) {
        xe_graph_free(h);
        free(id);
        return rc;
    }
    memcpy(p->dev, in->dev, sizeof p->dev);
    for (int k = 0; k < N; k++) {
        int v = map[k];
        if (v < 0) continue; /* an empty node: costs and copies 0 */
        memcpy(&p->cost[(size_t)k * D], &in->cost[(size_t)v * D], (size_t)D * sizeof *p->cost);
        memcpy(&p->copy[(size_t)k * D * D], &in->copy[(size_t)v * D * D], (size_t)D * D * sizeof *p->copy);
    }
    free(id);
    *out = p;
    return XE_OK;
}

int xe_instance_permute(const xe_instance *in, const int *order, xe_instance **out, xe_err *err)
{
    *out = NULL;
    int n = in->g->n;
    uint8_t *seen = calloc((size_t)n + 1, 1);
    if (!seen) return xe_err_set(err, XE_ENOMEM, "permute: out of memory");
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
        ok = order[k] >= 0 && order[k] < n && !seen[order[k]];
        if (ok) seen[order[k]] = 1;
    }
    free(seen);
    if (!ok) return xe_err_set(err, XE_EINVAL, "permute: not a permutation of the %d nodes", n);
    return xe_instance_relabel(in, order, n, out, err);
}

void xe_schedule_unpermute(xe_schedule *s, const int *order)
{
    for (int k = 0; k < s->len; k++) s->ev[k].node = order[s->ev[k].node];
}
