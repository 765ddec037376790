/* Times the exact chain DP (xe_chain_dp: chain recognition, the DP, reconstruction and
 * the simulator's replay) on training chains of 100 and more nodes.
 *
 *   bench_chain_dp [reps] [milp]
 *
 * Chains: Checkmate's linear training shape (forward x_0..x_L, backward node L+j reads
 * L+j-1 and L-j), tensor sizes 1..64 MiB and costs 1..10 ms drawn from a fixed seed;
 * budgets at 75%, 50% and 25% of the no-recomputation peak (never below the largest
 * single-node footprint).
 * Prints, per case, the best and median wall and CPU time (ms) over reps runs (a fifth of
 * them for the 201-node chain), the cost relative to no recomputation (every node once)
 * and the number of events. CPU time is the process's own (CLOCK_PROCESS_CPUTIME_ID):
 * on a shared machine the wall time also counts other processes' turns. Rows "/2dev": the
 * same chain with a second device ("cpu": 4x the compute time, copies at 10 GB/s, room
 * for every tensor), where the DP also parks checkpoints on it or delegates subproblems
 * to it (docs/chain-dp.md); cost/ref is relative to every node once on the gpu.
 *
 * With "milp", a second table: the DP against the MILP (xe_milp_solve, no gap, 60 s)
 * on the Checkmate chains of tests/test_chain_dp.c's test_vs_milp (same seeds, mem and
 * cost 1..10) with 7..12 forward nodes (13..23 nodes), the sizes the test leaves out. */
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xengine/baselines.h"
#include "xengine/milp.h"

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static xe_instance *chain(int L, uint64_t seed, int ndev)
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
    xe_instance *in = xe_instance_new(g, ndev);
    if (!in) return NULL;
    for (int v = 0; v < n; v++) {
        in->cost[v * ndev] = g->nodes[v].cost * 1e-3;
        if (ndev > 1) {
            in->cost[v * ndev + 1] = 4 * g->nodes[v].cost * 1e-3;
            double t = (double)g->nodes[v].mem / 10e9;
            in->copy[(v * ndev + 0) * ndev + 1] = in->copy[(v * ndev + 1) * ndev + 0] = t;
        }
    }
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    if (ndev > 1) {
        snprintf(in->dev[1].name, sizeof in->dev[1].name, "cpu");
        in->dev[1].budget = xe_graph_total_mem(g);
    }
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

/* The second table: DP against MILP on the Checkmate chains of test_vs_milp. */
static int milp_table(void)
{
    printf("\n%-3s %-4s %-7s %10s %-24s %10s %8s %s\n", "L", "n", "budget", "dp", "milp", "objective", "milp_s",
           "dp == milp");
    for (int L = 6; L <= 11; L++) {
        uint64_t s = 1000 + (uint64_t)L;
        int n = 2 * L + 1;
        xe_err err;
        xe_graph *g = xe_graph_new("chain");
        if (!g) return 1;
        for (int v = 0; v < n; v++) { /* tests/test_chain_dp.c: checkmate_chain */
            char nm[16];
            snprintf(nm, sizeof nm, "%c%d", v <= L ? 'x' : 'y', v);
            int64_t mem = 1 + (int64_t)(rnd(&s) % 10);
            double c = 1 + (double)(rnd(&s) % 10);
            if (xe_graph_add_node(g, nm, NULL, v > L, mem, 0, c, &err) < 0) return 1;
        }
        for (int v = 1; v < n; v++) xe_graph_add_edge(g, v - 1, v, &err);
        for (int j = 1; j <= L; j++) xe_graph_add_edge(g, L - j, L + j, &err);
        if (xe_graph_finalize(g, &err)) return 1;
        xe_instance *in = xe_instance_new(g, 1);
        if (!in) return 1;
        for (int v = 0; v < n; v++) in->cost[v] = g->nodes[v].cost;
        snprintf(in->dev[0].name, sizeof in->dev[0].name, "dev0");
        int64_t lo = xe_instance_min_footprint(g), hi = xe_instance_norecompute_peak(g);
        int64_t budgets[3] = {lo, lo + (hi - lo) / 3, hi};
        for (int q = 0; q < 3; q++) {
            if (q > 0 && budgets[q] == budgets[q - 1]) continue;
            in->dev[0].budget = budgets[q];
            xe_schedule sch;
            xe_schedule_init(&sch);
            double cd = 0;
            int rd = xe_chain_dp(in, 0, &sch, &cd, &err);
            xe_schedule_clear(&sch);
            xe_milp_opts o;
            xe_milp_opts_default(&o);
            o.rel_gap = 0;
            o.time_limit = 60;
            xe_milp_result r;
            if (xe_milp_solve(in, &o, &r, &err)) {
                printf("milp: %s\n", err.msg);
                return 1;
            }
            const char *eq = r.status != XE_MILP_OPTIMAL ? "-"
                             : rd == XE_OK && fabs(cd - r.objective) <= 1e-6 * (r.objective > 1 ? r.objective : 1)
                                 ? "yes"
                                 : "NO";
            printf("%-3d %-4d %-7lld %10.3f %-24s %10.3f %8.2f %s\n", L, n, (long long)budgets[q],
                   rd == XE_OK ? cd : -1.0, xe_milp_status_str(r.status), r.objective, r.solve_time, eq);
            xe_milp_result_clear(&r);
        }
        xe_instance_free(in);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) reps = 21;
    int milp = argc > 2 && strcmp(argv[2], "milp") == 0;
    const int Ls[] = {49, 50, 100, -49, -50}; /* negative: the two-device variant */
    printf("%-6s %-8s %-7s %9s %9s %9s %9s %8s %7s\n", "nodes", "L", "budget", "wall_best", "wall_med", "cpu_best",
           "cpu_med", "cost/ref", "events");
    for (size_t k = 0; k < sizeof Ls / sizeof Ls[0]; k++) {
        int L = Ls[k] < 0 ? -Ls[k] : Ls[k], ndev = Ls[k] < 0 ? 2 : 1;
        xe_instance *in = chain(L, 42 + (uint64_t)L, ndev);
        if (!in) {
            fprintf(stderr, "bench: cannot build the chain\n");
            return 1;
        }
        double ref = 0;
        for (int v = 0; v < in->g->n; v++) ref += in->cost[v * ndev];
        int64_t peak = xe_instance_norecompute_peak(in->g), lo = xe_instance_min_footprint(in->g);
        const char *names[] = {"75%", "50%", "25%"};
        int64_t budgets[] = {peak / 4 * 3, peak / 2, peak / 4};
        for (int q = 0; q < 3; q++) {
            in->dev[0].budget = budgets[q] > lo ? budgets[q] : lo;
            int nrep = L > 50 ? (reps + 4) / 5 : reps;
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
            char lab[16];
            snprintf(lab, sizeof lab, "%d%s", L, ndev > 1 ? "/2dev" : "");
            if (!t || !u || rc) {
                printf("%-6d %-8s %-7s %s\n", in->g->n, lab, names[q], rc ? err.msg : "out of memory");
                free(t);
                free(u);
                continue;
            }
            qsort(t, (size_t)nrep, sizeof *t, cmpd);
            qsort(u, (size_t)nrep, sizeof *u, cmpd);
            printf("%-6d %-8s %-7s %9.2f %9.2f %9.2f %9.2f %8.4f %7d\n", in->g->n, lab, names[q], 1e3 * t[0],
                   1e3 * t[nrep / 2], 1e3 * u[0], 1e3 * u[nrep / 2], cost / ref, events);
            free(t);
            free(u);
        }
        xe_instance_free(in);
    }
    return milp ? milp_table() : 0;
}
