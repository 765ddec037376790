/* Times the conversion of stage matrices into an event list (xe_stages_to_schedule,
 * which includes xe_stages_eval's validation) and the other whole-matrix passes
 * (xe_stages_check, xe_stages_prune) on large generated graphs.
 *
 *   stages_bench [n ...]      (default: 1000 5000 20000)
 *
 * Graphs, n nodes each, from a fixed seed: "chain", Checkmate's training chain (forward
 * x_0..x_L, backward node L+j reads L+j-1 and L-j; n rounded to 2L+1) and "layered", a
 * DAG of layers 4 wide where each node reads 1..3 random nodes of the previous layer.
 * Tensor sizes 1..64 MiB, costs 1..10 ms; one device with a budget of a third of the
 * total memory (never below the largest single-node footprint). The stage matrices come
 * from the portfolio heuristic without local improvement (xe_heur_best_ex, improve = 0;
 * its time is printed but is not what this bench measures). Prints per case the
 * heuristic's wall time, the number of nonzero R, S and C entries, then the wall seconds
 * of to_schedule, check and prune, and the number of events. The matrices take n*n*3 bytes (1.2 GB at 20,000 nodes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xengine/solvers.h"
#include "xengine/stages.h"
#include "xengine/timer.h"

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* kind 0: training chain, 1: layered DAG. NULL on error (message on stderr). */
static xe_instance *make(int kind, int n, uint64_t seed)
{
    xe_err err = {{0}};
    uint64_t s = seed;
    int L = (n - 1) / 2;
    if (kind == 0) n = 2 * L + 1;
    xe_graph *g = xe_graph_new(kind ? "bench-layered" : "bench-chain");
    if (!g) return NULL;
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "v%d", v);
        int bwd = kind == 0 && v > L;
        if (xe_graph_add_node(g, nm, NULL, bwd, (int64_t)(1 + rnd(&s) % 64) << 20, 0,
                              1 + (double)(rnd(&s) % 10), &err) < 0)
            goto fail;
    }
    if (kind == 0) {
        for (int v = 1; v < n; v++)
            if (xe_graph_add_edge(g, v - 1, v, &err)) goto fail;
        for (int j = 1; j <= L; j++)
            if (xe_graph_add_edge(g, L - j, L + j, &err)) goto fail;
    } else {
        const int W = 4;
        for (int v = W; v < n; v++) {
            int base = (v / W - 1) * W, k = 1 + (int)(rnd(&s) % 3);
            uint8_t used[4] = {0};
            for (int q = 0; q < k; q++) {
                int u = (int)(rnd(&s) % W);
                if (used[u] || base + u >= v) continue;
                used[u] = 1;
                if (xe_graph_add_edge(g, base + u, v, &err)) goto fail;
            }
        }
    }
    if (xe_graph_finalize(g, &err)) goto fail;
    xe_instance *in = xe_instance_new(g, 1);
    if (!in) return NULL;
    int64_t lo = 0;
    for (int v = 0; v < n; v++) {
        in->cost[v] = g->nodes[v].cost * 1e-3;
        int64_t f = g->nodes[v].mem;
        for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) f += g->nodes[g->pred[p]].mem;
        if (f > lo) lo = f;
    }
    int64_t b = xe_graph_total_mem(g) / 3;
    in->dev[0].budget = b > lo ? b : lo;
    return in;
fail:
    fprintf(stderr, "stages_bench: %s\n", err.msg);
    return NULL;
}

int main(int argc, char **argv)
{
    int sizes[16] = {1000, 5000, 20000}, ns = 3;
    if (argc > 1) {
        ns = 0;
        for (int a = 1; a < argc && ns < 16; a++) sizes[ns++] = atoi(argv[a]);
    }
    printf("%-8s %6s %9s %11s %12s %9s %9s %9s\n", "graph", "n", "heur_s", "nonzeros", "to_sched_s", "check_s", "prune_s",
           "events");
    int status = 0;
    for (int c = 0; c < ns; c++)
        for (int kind = 0; kind < 2; kind++) {
            xe_instance *in = make(kind, sizes[c], 42 + (uint64_t)sizes[c]);
            if (!in) return 1;
            xe_err err = {{0}};
            xe_stages st = {0};
            const char *which = NULL;
            double t0 = xe_now();
            int rc = xe_heur_best_ex(in, &st, &which, 0, 0.0, &err);
            double th = xe_now() - t0;
            if (rc) {
                printf("%-8s %6d heuristic failed: %s\n", kind ? "layered" : "chain", in->g->n, err.msg);
                status = 1;
                xe_instance_free(in);
                continue;
            }
            size_t nn = (size_t)st.n * (size_t)st.n * (size_t)st.ndev;
            long long nnz = 0;
            for (size_t q = 0; q < nn; q++) nnz += (st.R[q] != 0) + (st.S[q] != 0);
            for (size_t q = 0; q < nn * (size_t)st.ndev; q++) nnz += st.C[q] != 0;
            xe_schedule sch;
            xe_schedule_init(&sch);
            t0 = xe_now();
            rc = xe_stages_to_schedule(in, &st, &sch, &err);
            double ts = xe_now() - t0;
            t0 = xe_now();
            int rc2 = xe_stages_check(in, &st, &err);
            double tc = xe_now() - t0;
            t0 = xe_now();
            int removed = xe_stages_prune(in, &st);
            double tp = xe_now() - t0;
            if (rc || rc2) {
                printf("%-8s %6d conversion failed: %s\n", kind ? "layered" : "chain", in->g->n, err.msg);
                status = 1;
            } else {
                printf("%-8s %6d %9.2f %11lld %12.3f %9.3f %9.3f %9d%s\n", kind ? "layered" : "chain", in->g->n, th, nnz,
                       ts, tc, tp, sch.len, removed ? " (prune removed entries)" : "");
            }
            fflush(stdout);
            xe_schedule_clear(&sch);
            xe_stages_clear(&st);
            xe_instance_free(in);
        }
    return status;
}
