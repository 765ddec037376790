/* Hand-computed cases for the two brute-force solvers (tests/brute/): the stage-class
 * optimum (stage_bf) and the all-event-lists optimum (event_bf). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "xengine/graph.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

/* Instance from literal arrays: n nodes with mem[], edges[][2], ndev devices with
 * cost[v * ndev + d] (< 0: cannot run), one copy cost for every (v, d, e), budgets. */
static xe_instance *mk(int n, const int64_t *mem, int m, const int (*edges)[2], int ndev,
                       const double *cost, double copy, const int64_t *budget)
{
    xe_graph *g = xe_graph_new("hand");
    assert_non_null(g);
    for (int v = 0; v < n; v++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", v);
        assert_int_equal(xe_graph_add_node(g, name, NULL, 0, mem[v], 0, 1.0, NULL), v);
    }
    for (int k = 0; k < m; k++) assert_int_equal(xe_graph_add_edge(g, edges[k][0], edges[k][1], NULL), XE_OK);
    assert_int_equal(xe_graph_finalize(g, NULL), XE_OK);
    xe_instance *in = xe_instance_new(g, ndev);
    assert_non_null(in);
    for (int d = 0; d < ndev; d++) in->dev[d].budget = budget[d];
    for (int v = 0; v < n; v++)
        for (int d = 0; d < ndev; d++) {
            in->cost[v * ndev + d] = cost[v * ndev + d];
            for (int e = 0; e < ndev; e++) in->copy[(v * ndev + d) * ndev + e] = d == e ? 0.0 : copy;
        }
    return in;
}

static int count_kind(const xe_schedule *s, xe_event_kind kind)
{
    int c = 0;
    for (int i = 0; i < s->len; i++) c += s->ev[i].kind == kind;
    return c;
}

/* Both solvers: expected optimum (INFINITY: both infeasible). */
static void expect_both(const xe_instance *in, double stage_opt, double event_opt)
{
    double cs = -1, ce = -1;
    xe_err err = {{0}};
    int rs = xe_bf_stage_solve(in, &cs, NULL, &err);
    int re = xe_bf_event_solve(in, &ce, NULL, &err);
    if (isinf(stage_opt)) assert_int_equal(rs, XE_EINFEASIBLE);
    else {
        assert_int_equal(rs, XE_OK);
        assert_true(fabs(cs - stage_opt) < 1e-12);
    }
    if (isinf(event_opt)) assert_int_equal(re, XE_EINFEASIBLE);
    else {
        assert_int_equal(re, XE_OK);
        assert_true(fabs(ce - event_opt) < 1e-12);
    }
}

/* Recompute forced by the budget. Three nodes cannot force one on a single device
 * (node 2 reads a subset of {0, 1}; whatever it reads is live across 1 anyway), so the
 * smallest case is a 4-node chain 0 -> 1 -> 2 -> 3 with a skip edge 0 -> 3:
 *   mem = [2, 4, 3, 1], cost = [1, 2, 4, 8].
 *   Footprints: 0: 2, 1: 2+4 = 6, 2: 4+3 = 7, 3: 2+3+1 = 6.
 *   Budget 9: keep 0 throughout: peak while 2 runs is 2+4+3 = 9, cost 1+2+4+8 = 15.
 *   Budget 7: while 2 runs, 1 and 2 fill all 7 bytes, so 0 is not resident then and must
 *   be computed again before 3 (0 has no inputs: 3+2 = 5 bytes): 15 + 1 = 16, in the
 *   stage class as R[3][0] (stage 3 recomputes 0 at step 0: 3+2 = 5, then 3: 6).
 *   Budget 6: node 2 alone needs 7: infeasible for both. */
static void test_recompute_chain(void **state)
{
    (void)state;
    const int64_t mem[] = {2, 4, 3, 1};
    const int e[][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
    const double cost[] = {1, 2, 4, 8};
    int64_t b9[] = {9}, b7[] = {7}, b6[] = {6};
    xe_instance *in = mk(4, mem, 4, e, 1, cost, 0, b9);
    expect_both(in, 15, 15);
    in->dev[0].budget = b7[0];
    expect_both(in, 16, 16);

    /* the optimal stage schedule computes 5 times, the extra one being 0 in stage 3 */
    xe_bf_stages st;
    double c = 0;
    assert_int_equal(xe_bf_stage_solve(in, &c, &st, NULL), XE_OK);
    int computes = 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i <= t; i++) computes += st.R[t][i][0];
    assert_int_equal(computes, 5);
    assert_int_equal(st.R[3][0][0], 1);
    assert_int_equal(st.S[3][2][0], 1); /* 2 is carried into stage 3 to feed 3 */

    /* the optimal event list also has 5 computes */
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_bf_event_solve(in, &c, &s, NULL), XE_OK);
    assert_int_equal(count_kind(&s, XE_EV_COMPUTE), 5);
    xe_schedule_clear(&s);

    in->dev[0].budget = b6[0];
    expect_both(in, INFINITY, INFINITY);
    xe_instance_free(in);
}

/* Infeasible even though the budget holds the largest footprint: 0 -> 1, 0 -> 2,
 * 1 -> 3, 2 -> 3, mem = [5, 1, 1, 1]. Footprints 5, 6, 6, 3, so budget 6 fits every
 * single node; but 3 needs 1 and 2 resident together, and whichever of them is computed
 * last runs with 0 (its input) and the other one resident: 5+1+1 = 7 > 6. Budget 7:
 * compute 0, 1, 2 (7 bytes), free 0, compute 3: every node once, cost 4 (unit costs). */
static void test_infeasible_above_footprint(void **state)
{
    (void)state;
    const int64_t mem[] = {5, 1, 1, 1};
    const int e[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    const double cost[] = {1, 1, 1, 1};
    int64_t b[] = {6};
    xe_instance *in = mk(4, mem, 4, e, 1, cost, 0, b);
    assert_int_equal(xe_instance_min_footprint(in->g), 6);
    expect_both(in, INFINITY, INFINITY);
    in->dev[0].budget = 7;
    expect_both(in, 4, 4);
    xe_instance_free(in);
}

/* Stage class strictly worse than event lists (one device). A = 0 and B = 1 are two
 * big sources (mem 5), X = 2 reads A, Y = 3 reads B, Z = 4 reads X and Y; mem of X, Y,
 * Z is 1; costs A 3, B 2, X, Y, Z 1; budget 7.
 *   Event list: A, X (5+1), free A, B (1+5), Y (1+5+1 = 7), free B, Z (3): every node
 *   once, 3+2+1+1+1 = 8.
 *   Stage class: stage t first-computes t, in index order. Stage 1 computes B while A
 *   would be a checkpoint untouched by the stage (A's only user X is node 2), so A
 *   would stay resident: 5+5 > 7; A is dropped and recomputed in stage 2 (+3). B is
 *   needed by Y in stage 3; carried through stage 2 it would sit next to A: 5+5 > 7;
 *   so B is recomputed in stage 3 (+2). Optimum 8 + 3 + 2 = 13. */
static void test_stage_worse_than_events(void **state)
{
    (void)state;
    const int64_t mem[] = {5, 5, 1, 1, 1};
    const int e[][2] = {{0, 2}, {1, 3}, {2, 4}, {3, 4}};
    const double cost[] = {3, 2, 1, 1, 1};
    int64_t b[] = {7};
    xe_instance *in = mk(5, mem, 4, e, 1, cost, 0, b);
    expect_both(in, 13, 8);
    xe_instance_free(in);
}

/* Two devices, chain 0 -> 1, mem 1 each, budgets 10. cost[0] = (5 on dev0, 1 on dev1),
 * cost[1] = (1 on dev0, 5 on dev1), every copy costs c.
 *   All on dev0: 5+1 = 6; all on dev1: 1+5 = 6; 0 on dev1, copy to dev0, 1 on dev0:
 *   1+c+1; 0 on dev0, copy, 1 on dev1: 5+c+5.
 *   c = 1: the copy pays, optimum 3. c = 10: it does not, optimum 6. Both classes agree
 *   (the copy happens at step 0, right after 0 is computed). */
static void test_two_devices_copy(void **state)
{
    (void)state;
    const int64_t mem[] = {1, 1};
    const int e[][2] = {{0, 1}};
    const double cost[] = {5, 1, 1, 5};
    int64_t b[] = {10, 10};
    xe_instance *in = mk(2, mem, 1, e, 2, cost, 1.0, b);
    expect_both(in, 3, 3);
    xe_bf_stages st;
    double c = 0;
    assert_int_equal(xe_bf_stage_solve(in, &c, &st, NULL), XE_OK);
    assert_int_equal(st.R[1][1][0], 1); /* 1 runs on dev0 ... */
    assert_int_equal(st.R[0][0][1], 1); /* ... 0 on dev1 ... */
    assert_int_equal(st.C[0][0][1][0] + st.C[1][0][1][0], 1); /* ... and is copied once */
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_bf_event_solve(in, &c, &s, NULL), XE_OK);
    assert_int_equal(count_kind(&s, XE_EV_COPY), 1);
    xe_schedule_clear(&s);
    xe_instance_free(in);

    in = mk(2, mem, 1, e, 2, cost, 10.0, b);
    expect_both(in, 6, 6);
    xe_schedule_init(&s);
    assert_int_equal(xe_bf_event_solve(in, &c, &s, NULL), XE_OK);
    assert_int_equal(count_kind(&s, XE_EV_COPY), 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* Offloading instead of recomputing: the budget-7 chain of test_recompute_chain on dev0,
 * plus dev1 with budget 100 and 10x the costs. Node 0 must be resident on dev0 again
 * for 3 after 2 ran without it. Recomputing it costs 1; parking it on dev1 costs a copy
 * out and a copy back.
 *   Copies 0.25 each: 15 + 0.25 + 0.25 = 15.5 (in the stage class: copy 0 to dev1 at
 *   step 0 of stage 0, 1 or 2, keep it there, copy it back at step 0 of stage 3).
 *   Copies 0.75 each: the round trip 1.5 > 1, so recompute: 16. Computing anything on
 *   dev1 costs at least 10 more and never helps. */
static void test_two_devices_offload(void **state)
{
    (void)state;
    const int64_t mem[] = {2, 4, 3, 1};
    const int e[][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
    const double cost[] = {1, 10, 2, 20, 4, 40, 8, 80};
    int64_t b[] = {7, 100};
    xe_instance *in = mk(4, mem, 4, e, 2, cost, 0.25, b);
    expect_both(in, 15.5, 15.5);
    xe_bf_stages st;
    double c = 0;
    assert_int_equal(xe_bf_stage_solve(in, &c, &st, NULL), XE_OK);
    /* one copy out, at step 0 of stage 0, 1 or 2 (in stage 2 the checkpoint 0 is copied
     * out and freed right after step 0: 2+4 = 6 bytes, before 2 runs with 4+3 = 7), one
     * copy back in stage 3, no recompute */
    assert_int_equal(st.C[0][0][0][1] + st.C[1][0][0][1] + st.C[2][0][0][1], 1);
    assert_int_equal(st.C[3][0][1][0], 1);
    int computes = 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i <= t; i++) computes += st.R[t][i][0] + st.R[t][i][1];
    assert_int_equal(computes, 4);
    xe_instance_free(in);

    in = mk(4, mem, 4, e, 2, cost, 0.75, b);
    expect_both(in, 16, 16);
    xe_instance_free(in);
}

/* A device that cannot run a node: node 0 runs only on dev1 (cost 2), node 1 only on
 * dev0 (cost 3), chain 0 -> 1, copies 4: the only schedule is 2 + 4 + 3 = 9. With
 * dev0's budget 1 (< mem 0 + mem 1 = 2) nothing fits: infeasible. */
static void test_capability(void **state)
{
    (void)state;
    const int64_t mem[] = {1, 1};
    const int e[][2] = {{0, 1}};
    const double cost[] = {XE_NO_COST, 2, 3, XE_NO_COST};
    int64_t b[] = {5, 5};
    xe_instance *in = mk(2, mem, 1, e, 2, cost, 4.0, b);
    expect_both(in, 9, 9);
    in->dev[0].budget = 1;
    expect_both(in, INFINITY, INFINITY);
    xe_instance_free(in);
}

/* Sanity on random instances: event lists include every stage schedule, so the event
 * optimum never exceeds the stage optimum, and stage-feasible implies event-feasible;
 * the generator is deterministic (same seed, same instance and same optimum). */
static void test_random_order(void **state)
{
    (void)state;
    for (int i = 0; i < 60; i++) {
        int ndev = 1 + i % 2, n = 2 + i % (ndev == 1 ? 5 : 4);
        xe_instance *in = xe_test_random_instance(77 + (uint64_t)i, n, ndev, i % 3 == 0);
        xe_instance *in2 = xe_test_random_instance(77 + (uint64_t)i, n, ndev, i % 3 == 0);
        assert_non_null(in);
        assert_non_null(in2);
        assert_int_equal(in->g->m, in2->g->m);
        assert_int_equal(in->dev[0].budget, in2->dev[0].budget);
        double cs = 0, ce = 0, ce2 = 0;
        int rs = xe_bf_stage_solve(in, &cs, NULL, NULL);
        int re = xe_bf_event_solve(in, &ce, NULL, NULL);
        assert_int_equal(xe_bf_event_solve(in2, &ce2, NULL, NULL), re);
        if (rs == XE_OK) {
            assert_int_equal(re, XE_OK);
            assert_true(ce <= cs + 1e-9);
            assert_true(ce == ce2);
        } else {
            assert_int_equal(rs, XE_EINFEASIBLE);
        }
        xe_instance_free(in);
        xe_instance_free(in2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recompute_chain),
        cmocka_unit_test(test_infeasible_above_footprint),
        cmocka_unit_test(test_stage_worse_than_events),
        cmocka_unit_test(test_two_devices_copy),
        cmocka_unit_test(test_two_devices_offload),
        cmocka_unit_test(test_capability),
        cmocka_unit_test(test_random_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
