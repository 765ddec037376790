/* The exact planner on hand-computed cases (reasoning in the comments) and on the
 * shared VGG16 training graph. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "support/shared_graph.h"
#include "xengine/io.h"
#include "xengine/milp.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"

/* Builds a graph from arrays; edges as pairs terminated by -1. */
static xe_instance *make(int n, const int64_t *mem, const int *edges, int ndev)
{
    xe_err err;
    xe_graph *g = xe_graph_new("t");
    assert_non_null(g);
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, 0, mem[v], 0, 1.0, &err), v);
    }
    for (int e = 0; edges[e] >= 0; e += 2) assert_int_equal(xe_graph_add_edge(g, edges[e], edges[e + 1], &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, ndev);
    assert_non_null(in);
    for (int v = 0; v < n; v++)
        for (int d = 0; d < ndev; d++) in->cost[v * ndev + d] = 1.0;
    return in;
}

/* Solves to optimality and checks the schedule through the simulator; returns cost. */
static double solve_opt(const xe_instance *in, xe_milp_status expect)
{
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.rel_gap = 0;
    o.time_limit = 30;
    xe_milp_result r;
    xe_err err = {{0}};
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.status, expect);
    double obj = r.objective;
    if (expect == XE_MILP_OPTIMAL) {
        assert_true(fabs(r.bound - r.objective) <= 1e-6 * fmax(1, r.objective));
        assert_true(r.gap <= 1e-9);
        xe_schedule s;
        xe_schedule_init(&s);
        assert_int_equal(xe_stages_to_schedule(in, &r.sol, &s, &err), XE_OK);
        xe_sim_result sr;
        int rc = xe_sim_run(in, &s, &sr, &err);
        if (rc) fprintf(stderr, "sim: %s\n", err.msg);
        assert_int_equal(rc, XE_OK);
        assert_true(fabs(sr.total_time - obj) < 1e-9);
        for (int d = 0; d < in->ndev; d++) assert_true(sr.dev[d].peak <= in->dev[d].budget);
        xe_schedule_clear(&s);
    }
    xe_milp_result_clear(&r);
    return obj;
}

/* Training chain x1 -> x2 -> x3 (loss), g2 = grad(x3, x2), g1 = grad(g2, x1); 10 bytes
 * each, cost 1 each. Keeping everything peaks at step 3 with x1, x2, x3, g2 = 40 bytes.
 * At budget 30, step 3 (inputs x3, x2, output g2 = 30) leaves no room for x1, so x1 must
 * be dropped and recomputed for g1: optimum 5 + 1 = 6. At 40 nothing is recomputed: 5.
 * Below 30, g2's own footprint (30) does not fit: infeasible. */
static void test_chain_tight_budget(void **state)
{
    (void)state;
    const int64_t mem[] = {10, 10, 10, 10, 10};
    const int edges[] = {0, 1, 1, 2, 2, 3, 1, 3, 3, 4, 0, 4, -1};
    xe_instance *in = make(5, mem, edges, 1);
    assert_int_equal(xe_instance_norecompute_peak(in->g), 40);
    in->dev[0].budget = 40;
    assert_true(fabs(solve_opt(in, XE_MILP_OPTIMAL) - 5.0) < 1e-9);
    in->dev[0].budget = 30;
    assert_true(fabs(solve_opt(in, XE_MILP_OPTIMAL) - 6.0) < 1e-9);
    in->dev[0].budget = 29;
    solve_opt(in, XE_MILP_INFEASIBLE);
    xe_instance_free(in);
}

/* a -> b -> c with 10 bytes each fits in 20 (c runs with b; a is gone). Add the skip
 * a -> c and c's footprint is a + b + c = 30: 20 is infeasible, 30 costs 3. */
static void test_skip_connection_needs_more(void **state)
{
    (void)state;
    const int64_t mem[] = {10, 10, 10};
    const int chain[] = {0, 1, 1, 2, -1};
    const int skip[] = {0, 1, 1, 2, 0, 2, -1};
    xe_instance *a = make(3, mem, chain, 1), *b = make(3, mem, skip, 1);
    a->dev[0].budget = b->dev[0].budget = 20;
    assert_true(fabs(solve_opt(a, XE_MILP_OPTIMAL) - 3.0) < 1e-9);
    solve_opt(b, XE_MILP_INFEASIBLE);
    b->dev[0].budget = 30;
    assert_true(fabs(solve_opt(b, XE_MILP_OPTIMAL) - 3.0) < 1e-9);
    xe_instance_free(a);
    xe_instance_free(b);
}

/* GPU (budget 30) runs everything, the CPU (budget 1000) runs nothing but can hold
 * tensors. a (10 B, cost 100) -> b (20 B) -> c (10 B); d reads c and a. During c's step
 * the GPU would hold a + b + c = 40 > 30, so a must leave the GPU and come back for d:
 * either offload (copy a to the CPU and back: 2 copies) or recompute a (100).
 * Copies cost 2: 100 + 1 + 1 + 1 + 2 + 2 = 107 (offloading pays).
 * Copies cost 60: offloading would be 223, recomputing 100+1+1+100+1 = 203 (it does not). */
static void copy_case(double copy_cost, double expect)
{
    const int64_t mem[] = {10, 20, 10, 10};
    const int edges[] = {0, 1, 1, 2, 2, 3, 0, 3, -1};
    xe_instance *in = make(4, mem, edges, 2);
    in->cost[0 * 2 + 0] = 100.0;
    for (int v = 0; v < 4; v++) {
        in->cost[v * 2 + 1] = XE_NO_COST;
        in->copy[(v * 2 + 0) * 2 + 1] = copy_cost;
        in->copy[(v * 2 + 1) * 2 + 0] = copy_cost;
    }
    in->dev[0].budget = 30;
    in->dev[1].budget = 1000;
    assert_true(fabs(solve_opt(in, XE_MILP_OPTIMAL) - expect) < 1e-9);
    xe_instance_free(in);
}

static void test_copy_worth_paying(void **state)
{
    (void)state;
    copy_case(2.0, 107.0);
}

static void test_copy_not_worth_paying(void **state)
{
    (void)state;
    copy_case(60.0, 203.0);
}

/* The same optimum through the child process (result and R/S/C matrices over a pipe). */
static void test_isolated_solve_matches(void **state)
{
    (void)state;
    const int64_t mem[] = {10, 10, 10, 10, 10};
    const int edges[] = {0, 1, 1, 2, 2, 3, 1, 3, 3, 4, 0, 4, -1};
    xe_instance *in = make(5, mem, edges, 1);
    in->dev[0].budget = 30; /* optimum 6, see test_chain_tight_budget */
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.rel_gap = 0;
    o.isolate = 1;
    xe_milp_result r;
    xe_err err = {{0}};
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_MILP_OPTIMAL);
    assert_int_equal(r.killed, 0);
    assert_true(fabs(r.objective - 6.0) < 1e-9);
    assert_non_null(r.sol.R);
    assert_int_equal(xe_stages_check(in, &r.sol, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &r.sol) - 6.0) < 1e-9);
    xe_milp_result_clear(&r);
    in->dev[0].budget = 29; /* infeasible: the proof comes back too */
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_MILP_INFEASIBLE);
    assert_null(r.sol.R);
    xe_instance_free(in);
}

/* A 600-node training chain builds a model of ~10^6 columns, far more than the child
 * can build and solve in 0.05 s + 0.1 s of grace: it is killed, no schedule, no error. */
static void test_isolated_solve_killed(void **state)
{
    (void)state;
    enum { F = 300, N = 2 * F };
    int64_t mem[N];
    int edges[2 * (N - 1) + 2 * F + 1], ne = 0;
    for (int v = 0; v < N; v++) mem[v] = 10;
    for (int v = 1; v < N; v++) edges[ne++] = v - 1, edges[ne++] = v;
    for (int j = 1; j < F; j++) edges[ne++] = F - 1 - j, edges[ne++] = F + j; /* backward j reads forward */
    edges[ne] = -1;
    xe_instance *in = make(N, mem, edges, 1);
    in->dev[0].budget = 300;
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.time_limit = 0.05;
    o.isolate = 1;
    xe_milp_result r;
    xe_err err = {{0}};
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.killed, 1);
    assert_int_equal(r.status, XE_MILP_NO_SOLUTION);
    assert_null(r.sol.R);
    assert_true(r.solve_time >= 0.05 + xe_milp_grace(0.05)); /* it waited for the limit plus the grace (0.1 s) */
    xe_instance_free(in);
}

/* The grace and its inverse: a solve given xe_milp_limit_within(s) ends, grace included,
 * exactly at s (so LNS and xe_plan keep their time limits); limits by hand. */
static void test_limit_within(void **state)
{
    (void)state;
    assert_true(fabs(xe_milp_grace(0.05) - 0.1) < 1e-12);
    assert_true(fabs(xe_milp_grace(5) - 0.5) < 1e-12);
    assert_true(fabs(xe_milp_grace(60) - 1.0) < 1e-12);
    assert_true(fabs(xe_milp_limit_within(0.5) - 0.4) < 1e-12);
    assert_true(fabs(xe_milp_limit_within(5.5) - 5.0) < 1e-12);
    assert_true(fabs(xe_milp_limit_within(61) - 60) < 1e-12);
    assert_true(xe_milp_limit_within(0.08) < 0);
    for (double s = 0.1; s < 30; s *= 1.07) {
        double l = xe_milp_limit_within(s);
        assert_true(fabs(l + xe_milp_grace(l) - s) < 1e-9);
    }
}

/* Six devices with the greedy schedule as MIP start: CBC 2.10 rejects such starts
 * without searching ("Illegal index ... getColumnName"); the planner must still prove the
 * same optimum as without a start. Tight chain of test_chain_tight_budget on six
 * identical devices (budget 30 each, copies cost 1): keeping x1 on the device costs
 * nothing but does not fit; recomputing it costs 1, offloading it 2 copies = 2; so 6. */
static void test_six_devices_with_start(void **state)
{
    (void)state;
    const int64_t mem[] = {10, 10, 10, 10, 10};
    const int edges[] = {0, 1, 1, 2, 2, 3, 1, 3, 3, 4, 0, 4, -1};
    xe_instance *in = make(5, mem, edges, 6);
    for (int d = 0; d < 6; d++) in->dev[d].budget = 30;
    for (int v = 0; v < 5; v++)
        for (int d = 0; d < 6; d++)
            for (int e = 0; e < 6; e++) in->copy[(v * 6 + d) * 6 + e] = d == e ? 0.0 : 1.0;
    xe_err err = {{0}};
    xe_stages start = {0};
    assert_int_equal(xe_heur_greedy(in, &start, &err), XE_OK);
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.rel_gap = 0;
    o.start = &start;
    xe_milp_result r;
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_MILP_OPTIMAL);
    assert_true(fabs(r.objective - 6.0) < 1e-9);
    xe_milp_result_clear(&r);
    xe_stages_clear(&start);
    xe_instance_free(in);
}

/* Checkmate's VGG16 (batch 256) on one device at 100% of the no-recomputation peak:
 * nothing needs recomputing, so the optimum is the plain sum of the node costs, gap 0. */
static void test_vgg16_full_budget(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("checkmate_vgg16_b256_train.json", "gpu", 1.0);
    double sum = 0;
    for (int v = 0; v < in->g->n; v++) sum += xe_cost(in, v, 0);
    assert_int_equal(in->dev[0].budget, xe_instance_norecompute_peak(in->g));
    double obj = solve_opt(in, XE_MILP_OPTIMAL);
    assert_true(fabs(obj - sum) <= 1e-9 * sum);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_tight_budget),
        cmocka_unit_test(test_skip_connection_needs_more),
        cmocka_unit_test(test_copy_worth_paying),
        cmocka_unit_test(test_copy_not_worth_paying),
        cmocka_unit_test(test_isolated_solve_matches),
        cmocka_unit_test(test_isolated_solve_killed),
        cmocka_unit_test(test_limit_within),
        cmocka_unit_test(test_six_devices_with_start),
        cmocka_unit_test(test_vgg16_full_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
