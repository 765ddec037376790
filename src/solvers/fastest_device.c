/* Fastest-device greedy (a multi-device baseline, no recomputation): each node, in
 * topological order, runs on the fastest device where it fits with the inputs it lacks;
 * inputs living elsewhere are copied in and dropped again after the compute. */
#include <stdlib.h>
#include <string.h>

#include "xengine/baselines.h"
#include "xengine/sim.h"

int xe_fastest_device(const xe_instance *in, xe_schedule *out, double *cost, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev, start = out->len;
    uint8_t *res = calloc((size_t)(n ? n : 1) * (size_t)D, 1);
    int *left = malloc((size_t)(n ? n : 1) * sizeof *left);
    if (!res || !left) {
        free(res);
        free(left);
        return xe_err_set(err, XE_ENOMEM, "fastest-device: out of memory");
    }
#define RES(v, d) res[(size_t)(v) * D + (d)]
    int64_t bytes[XE_MAX_DEV] = {0};
    int rc = XE_OK;
    for (int v = 0; v < n; v++) left[v] = xe_graph_nsucc(g, v);
    for (int v = 0; v < n && rc == XE_OK; v++) {
        /* devices by compute cost, fastest first (ties: lower index) */
        int order[XE_MAX_DEV], no = 0;
        for (int d = 0; d < D; d++) {
            if (!xe_can_run(in, v, d)) continue;
            int p = no++;
            while (p > 0 && xe_cost(in, v, order[p - 1]) > xe_cost(in, v, d)) {
                order[p] = order[p - 1];
                p--;
            }
            order[p] = d;
        }
        int dd = -1;
        for (int q = 0; q < no && dd < 0; q++) {
            int d = order[q];
            int64_t need = g->nodes[v].mem;
            for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
                if (!RES(g->pred[k], d)) need += g->nodes[g->pred[k]].mem;
            if (bytes[d] + need <= in->dev[d].budget) dd = d;
        }
        if (dd < 0) {
            rc = xe_err_set(err, XE_EINFEASIBLE,
                            "fastest-device: node %s fits on no device next to what is resident there",
                            g->nodes[v].name);
            break;
        }
        uint8_t copied[64] = {0}; /* per input slot (first 64 inputs); others tracked below */
        int npred = xe_graph_npred(g, v);
        uint8_t *cp = npred <= 64 ? copied : calloc((size_t)npred, 1);
        if (!cp) {
            rc = xe_err_set(err, XE_ENOMEM, "fastest-device: out of memory");
            break;
        }
        for (int k = 0; k < npred && rc == XE_OK; k++) {
            int u = g->pred[g->pred_off[v] + k];
            if (RES(u, dd)) continue;
            int src = -1;
            for (int e = 0; e < D; e++)
                if (RES(u, e) && (src < 0 || xe_copy_cost(in, u, e, dd) < xe_copy_cost(in, u, src, dd))) src = e;
            XE_ASSERT(src >= 0, "an input with users left is resident somewhere");
            if (xe_schedule_push(out, XE_EV_COPY, u, src, dd)) rc = XE_ENOMEM;
            RES(u, dd) = 1;
            bytes[dd] += g->nodes[u].mem;
            cp[k] = 1;
        }
        if (rc == XE_OK && xe_schedule_push(out, XE_EV_COMPUTE, v, dd, -1)) rc = XE_ENOMEM;
        RES(v, dd) = 1;
        bytes[dd] += g->nodes[v].mem;
        for (int k = 0; k < npred && rc == XE_OK; k++) {
            int u = g->pred[g->pred_off[v] + k];
            left[u]--;
            for (int e = 0; e < D && rc == XE_OK; e++) {
                if (!RES(u, e) || (left[u] > 0 && !(cp[k] && e == dd))) continue;
                if (xe_schedule_push(out, XE_EV_FREE, u, e, -1)) rc = XE_ENOMEM;
                RES(u, e) = 0;
                bytes[e] -= g->nodes[u].mem;
            }
        }
        if (rc == XE_OK && left[v] == 0) { /* an output nothing reads */
            if (xe_schedule_push(out, XE_EV_FREE, v, dd, -1)) rc = XE_ENOMEM;
            RES(v, dd) = 0;
            bytes[dd] -= g->nodes[v].mem;
        }
        if (cp != copied) free(cp);
        if (rc == XE_ENOMEM) rc = xe_err_set(err, XE_ENOMEM, "fastest-device: out of memory");
    }
#undef RES
    free(res);
    free(left);
    if (rc == XE_OK) {
        xe_schedule view = {out->ev + start, out->len - start, out->len - start};
        xe_sim_result sr;
        xe_err e2;
        int r = xe_sim_run(in, &view, &sr, &e2);
        if (r == XE_ENOMEM)
            rc = xe_err_set(err, r, "fastest-device: simulator out of memory");
        else if (r)
            rc = xe_err_set(err, XE_EINTERNAL, "fastest-device: the simulator rejects the schedule: %s", e2.msg);
        else
            *cost = sr.total_time;
    }
    if (rc) out->len = start;
    return rc;
}
