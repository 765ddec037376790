/* Times the exact chain DP (xe_chain_dp: chain recognition, the DP, reconstruction and
 * the simulator's replay) on training chains of 100 and more nodes.
 *
 *   bench_chain_dp [reps]
 *
 * Chains: Checkmate's linear training shape (forward x_0..x_L, backward node L+j reads
 * L+j-1 and L-j), tensor sizes 1..64 MiB and costs 1..10 ms drawn from a fixed seed;
 * budgets at 75%, 50% and 25% of the no-recomputation peak (never below the largest
 * single-node footprint).
 * Prints, per case, the best and median wall and CPU time (ms) over reps runs (a fifth of
 * them for the 201-node chain), the cost relative to no recomputation (every node once)
 * and the number of events. CPU time is the process's own (CLOCK_PROCESS_CPUTIME_ID):
 * on a shared machine the wall time also counts other processes' turns. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "xengine/baselines.h"

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static xe_instance *chain(int L, uint64_t seed)
{
    xe_err err;
    uint64_t s = seed;
    int n = 2 * L + 1;
    xe_graph *g = xe_graph_new("bench-chain");
    if (!g) return NULL;
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "%c%d", v <= L ? 'x' : 'y', v);
        if (xe_graph_add_node(g, nm, NULL, v > L, (int64_t)(1 + rnd(&s) % 64) << 20, 0,
                              1 + (double)(rnd(&s) % 10), &err) < 0)
            return NULL;
    }
    for (int v = 1; v < n; v++) xe_graph_add_edge(g, v - 1, v, &err);
    for (int j = 1; j <= L; j++) xe_graph_add_edge(g, L - j, L + j, &err);
    if (xe_graph_finalize(g, &err)) return NULL;
    xe_instance *in = xe_instance_new(g, 1);
    if (!in) return NULL;
    for (int v = 0; v < n; v++) in->cost[v] = g->nodes[v].cost * 1e-3;
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    return in;
}

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) reps = 21;
    const int Ls[] = {49, 50, 100};
    printf("%-6s %-5s %-7s %9s %9s %9s %9s %8s %7s\n", "nodes", "L", "budget", "wall_best", "wall_med", "cpu_best",
           "cpu_med", "cost/ref", "events");
    for (size_t k = 0; k < sizeof Ls / sizeof Ls[0]; k++) {
        xe_instance *in = chain(Ls[k], 42 + (uint64_t)Ls[k]);
        if (!in) {
            fprintf(stderr, "bench: cannot build the chain\n");
            return 1;
        }
        double ref = 0;
        for (int v = 0; v < in->g->n; v++) ref += in->cost[v];
        int64_t peak = xe_instance_norecompute_peak(in->g), lo = xe_instance_min_footprint(in->g);
        const char *names[] = {"75%", "50%", "25%"};
        int64_t budgets[] = {peak / 4 * 3, peak / 2, peak / 4};
        for (int q = 0; q < 3; q++) {
            in->dev[0].budget = budgets[q] > lo ? budgets[q] : lo;
            int nrep = Ls[k] > 50 ? (reps + 4) / 5 : reps;
            double *t = malloc((size_t)nrep * sizeof *t), *u = malloc((size_t)nrep * sizeof *u), cost = 0;
            int events = 0, rc = XE_OK;
            xe_err err = {{0}};
            for (int r = 0; r < nrep && t && u; r++) {
                xe_schedule s;
                xe_schedule_init(&s);
                double t0 = now(CLOCK_MONOTONIC), u0 = now(CLOCK_PROCESS_CPUTIME_ID);
                rc = xe_chain_dp(in, 0, &s, &cost, &err);
                t[r] = now(CLOCK_MONOTONIC) - t0;
                u[r] = now(CLOCK_PROCESS_CPUTIME_ID) - u0;
                events = s.len;
                xe_schedule_clear(&s);
                if (rc) break;
            }
            if (!t || !u || rc) {
                printf("%-6d %-5d %-7s %s\n", in->g->n, Ls[k], names[q], rc ? err.msg : "out of memory");
                free(t);
                free(u);
                continue;
            }
            qsort(t, (size_t)nrep, sizeof *t, cmpd);
            qsort(u, (size_t)nrep, sizeof *u, cmpd);
            printf("%-6d %-5d %-7s %9.2f %9.2f %9.2f %9.2f %8.4f %7d\n", in->g->n, Ls[k], names[q], 1e3 * t[0],
                   1e3 * t[nrep / 2], 1e3 * u[0], 1e3 * u[nrep / 2], cost / ref, events);
            free(t);
            free(u);
        }
        xe_instance_free(in);
    }
    return 0;
}
