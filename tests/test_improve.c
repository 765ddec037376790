/* Local improvement's moves (xe_heur_improve, src/solvers/improve.c; docs/heuristic.md
 * "Local improvement"):
 *   - a copy moved earlier (move 2) on a hand instance: the exact schedule and cost;
 *   - an equal-cost copy moved earlier that frees the GPU for a keep (the equal round,
 *     then move 1 with its pruning): hand instance, exact cost; without the copy moves
 *     nothing changes;
 *   - tiny random instances, one and two devices, the whole improvement and one round
 *     of keeps: valid, never dearer than the input, never below the brute-force stage
 *     optimum;
 *   - VGG16 on GPU + CPU at 80% (skips without ../shared): the deterministic portfolio's
 *     schedule is the MILP's proven optimum. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "brute/brute.h"
#include "support/arrays.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "support/valid.h"
#include "xengine/milp.h"
#include "xengine/solvers.h"

/* xe_test_array_instance on devices 0 "gpu" and 1 "cpu" (every copy 0.5 s) with the
 * given per-device costs (seconds, XE_NO_COST: cannot run there), edges as (src, dst)
 * pairs terminated by -1; the CPU holds 1,000 B. */
static xe_instance *hand_instance(int n, const int64_t *mem, const double (*cost)[2], const int *edges,
                                  int64_t gpu_budget)
{
    double ones[8];
    assert_true(n <= 8);
    for (int v = 0; v < n; v++) ones[v] = 1.0;
    xe_instance *in = xe_test_array_instance(n, mem, ones, edges, 2);
    for (int v = 0; v < n; v++)
        for (int d = 0; d < 2; d++) in->cost[v * 2 + d] = cost[v][d];
    in->dev[0].budget = gpu_budget;
    in->dev[1].budget = 1000;
    return in;
}

/* A copy of start improved with `moves` (5 s), checked valid; the caller clears it. */
static xe_stages improved(const xe_instance *in, const xe_stages *start, int moves)
{
    xe_err err;
    xe_stages st;
    assert_int_equal(xe_stages_copy(&st, start), XE_OK);
    assert_int_equal(xe_heur_improve_ex(in, &st, 5.0, moves, &err), XE_OK);
    xe_test_assert_stages_valid(in, &st);
    return st;
}

static int recomputations(const xe_stages *st)
{
    int r = 0;
    for (int t = 0; t < st->n; t++)
        for (int i = 0; i < t; i++)
            for (int d = 0; d < st->ndev; d++) r += *xe_R(st, t, i, d);
    return r;
}

/* Nodes (mem B; cost gpu, cpu s): 0 A (4; 3, 30), 1 B = f(A) (4; 1, -), 2 C = g(B)
 * (4; 1, -), 3 X = k(A, C) (1; -, 1). GPU 8 B: stage 2 holds B and C, so A cannot stay
 * on the GPU. The start recomputes A on the GPU in stage 3 and copies A and C to the CPU
 * there: 3 + 1 + 1 + 3 + 0.5 + 0.5 + 1 = 10 s. Keeping A on the GPU overflows stage 2;
 * copying A to the CPU at its computation (stage 0) and keeping it there drops the
 * recomputation: 7 s, every node once plus the two copies X forces, the optimum. */
static void test_copy_earlier(void **state)
{
    (void)state;
    static const int64_t mem[4] = {4, 4, 4, 1};
    static const double cost[4][2] = {{3, 30}, {1, XE_NO_COST}, {1, XE_NO_COST}, {XE_NO_COST, 1}};
    static const int edges[] = {0, 1, 1, 2, 0, 3, 2, 3, -1};
    xe_instance *in = hand_instance(4, mem, cost, edges, 8);
    xe_err err;
    xe_stages start;
    assert_int_equal(xe_stages_init(&start, 4, 2), XE_OK);
    *xe_R(&start, 0, 0, 0) = 1;
    *xe_S(&start, 1, 0, 0) = 1, *xe_R(&start, 1, 1, 0) = 1;
    *xe_S(&start, 2, 1, 0) = 1, *xe_R(&start, 2, 2, 0) = 1;
    *xe_R(&start, 3, 0, 0) = 1, *xe_C(&start, 3, 0, 0, 1) = 1; /* the recomputation, then the copy */
    *xe_S(&start, 3, 2, 0) = 1, *xe_C(&start, 3, 2, 0, 1) = 1;
    *xe_R(&start, 3, 3, 1) = 1;
    assert_int_equal(xe_stages_check(in, &start, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &start) - 10.0) < 1e-12);
    xe_stages st = improved(in, &start, XE_IMPROVE_KEEP | XE_IMPROVE_ROUNDS);
    assert_true(fabs(xe_stages_cost(in, &st) - 10.0) < 1e-12); /* no keep fits */
    xe_stages_clear(&st);
    st = improved(in, &start, XE_IMPROVE_ALL);
    assert_true(fabs(xe_stages_cost(in, &st) - 7.0) < 1e-12);
    assert_int_equal(*xe_C(&st, 0, 0, 0, 1), 1); /* A copied at its computation */
    for (int t = 1; t < 4; t++) assert_int_equal(*xe_S(&st, t, 0, 1), 1);
    assert_int_equal(recomputations(&st), 0);
    double opt;
    assert_int_equal(xe_bf_stage_solve(in, &opt, NULL, &err), XE_OK);
    assert_true(fabs(opt - 7.0) < 1e-9);
    xe_stages_clear(&st);
    xe_stages_clear(&start);
    xe_instance_free(in);
}

/* Nodes (mem B; gpu cost s; all GPU only but X): 0 A (4; 3), 1 B = f(A) (4; 2), 2 M, a
 * source (4; 1), 3 Y = y(B) (1; 1), 4 X = x(A, Y) (1; CPU only, 1). GPU 9 B: stage 2
 * holds M and one of A, B. The start (the greedy's kind of schedule, as on VGG16 at 80%)
 * keeps A on the GPU to the end, recomputes B from it in stage 3 and copies A and Y to
 * the CPU in stage 4: 3 + 2 + 1 + 2 + 1 + 0.5 + 0.5 + 1 = 11 s. No single strict move
 * helps: keeping B overflows stage 2 while A stays for its late copy, and copying A
 * earlier saves nothing by itself. The equal-cost round copies A at stage 0; A then
 * leaves the GPU after stage 4's copy is gone, and the next round keeps B (A's residency
 * for the recomputation pruned): 9 s, the optimum (every node once and the two copies). */
static void test_equal_round(void **state)
{
    (void)state;
    static const int64_t mem[5] = {4, 4, 4, 1, 1};
    static const double cost[5][2] = {{3, XE_NO_COST}, {2, XE_NO_COST}, {1, XE_NO_COST}, {1, XE_NO_COST}, {XE_NO_COST, 1}};
    static const int edges[] = {0, 1, 1, 3, 0, 4, 3, 4, -1};
    xe_instance *in = hand_instance(5, mem, cost, edges, 9);
    xe_err err;
    xe_stages start;
    assert_int_equal(xe_stages_init(&start, 5, 2), XE_OK);
    *xe_R(&start, 0, 0, 0) = 1;
    *xe_S(&start, 1, 0, 0) = 1, *xe_R(&start, 1, 1, 0) = 1;
    *xe_S(&start, 2, 0, 0) = 1, *xe_R(&start, 2, 2, 0) = 1;
    *xe_S(&start, 3, 0, 0) = 1, *xe_R(&start, 3, 1, 0) = 1, *xe_R(&start, 3, 3, 0) = 1;
    *xe_S(&start, 4, 0, 0) = 1, *xe_S(&start, 4, 3, 0) = 1;
    *xe_C(&start, 4, 0, 0, 1) = 1, *xe_C(&start, 4, 3, 0, 1) = 1, *xe_R(&start, 4, 4, 1) = 1;
    assert_int_equal(xe_stages_check(in, &start, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &start) - 11.0) < 1e-12);
    xe_stages st = improved(in, &start, XE_IMPROVE_KEEP | XE_IMPROVE_ROUNDS);
    assert_true(fabs(xe_stages_cost(in, &st) - 11.0) < 1e-12);
    xe_stages_clear(&st);
    st = improved(in, &start, XE_IMPROVE_ALL);
    assert_true(fabs(xe_stages_cost(in, &st) - 9.0) < 1e-12);
    assert_int_equal(recomputations(&st), 0);
    assert_int_equal(*xe_S(&st, 2, 1, 0), 1); /* B kept through stage 2 */
    assert_int_equal(*xe_S(&st, 2, 0, 0), 0); /* A gone from the GPU */
    double opt;
    assert_int_equal(xe_bf_stage_solve(in, &opt, NULL, &err), XE_OK);
    assert_true(fabs(opt - 9.0) < 1e-9);
    xe_stages_clear(&st);
    xe_stages_clear(&start);
    xe_instance_free(in);
}

/* Tiny random instances: from the greedy's schedule (portfolio without improvement), the
 * whole improvement is valid, never dearer, never below the brute-force stage optimum. */
static void test_tiny(void **state)
{
    (void)state;
    int runs = 0, cheaper = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        int ndev = 1 + (int)(seed % 2), n = 5 + (int)(seed % 3);
        if (ndev == 2 && n > 6) n = 6;
        xe_instance *in = xe_test_random_instance(seed, n, ndev, (int)(seed % 3 != 0));
        assert_non_null(in);
        xe_err err;
        xe_stages st;
        if (xe_heur_best_ex(in, &st, NULL, 0, 0.0, &err) == XE_OK) {
            double opt = INFINITY, c0 = xe_stages_cost(in, &st);
            assert_int_equal(xe_bf_stage_solve(in, &opt, NULL, &err), XE_OK);
            xe_stages quick; /* one round of keeps, as the diversification's runs get */
            assert_int_equal(xe_stages_copy(&quick, &st), XE_OK);
            assert_int_equal(xe_heur_improve_ex(in, &quick, 5.0, XE_IMPROVE_KEEP, &err), XE_OK);
            xe_test_assert_stages_valid(in, &quick);
            assert_true(xe_stages_cost(in, &quick) <= c0 * (1 + 1e-12));
            assert_true(xe_stages_cost(in, &quick) >= opt * (1 - 1e-9));
            xe_stages_clear(&quick);
            assert_int_equal(xe_heur_improve(in, &st, 5.0, &err), XE_OK);
            xe_test_assert_stages_valid(in, &st);
            double c = xe_stages_cost(in, &st);
            assert_true(c <= c0 * (1 + 1e-12));
            assert_true(c >= opt * (1 - 1e-9));
            cheaper += c < c0 * (1 - 1e-12);
            runs++;
            xe_stages_clear(&st);
        }
        xe_instance_free(in);
    }
    print_message("improvement: cheaper on %d of %d tiny instances\n", cheaper, runs);
    assert_true(runs > 80);
    assert_true(cheaper > 0);
}

/* VGG16 (Checkmate graph) on GPU + CPU at 80%: the greedy keeps block1_conv1 on the GPU
 * to recompute block1_conv2 at the end; the moves copy it to the CPU early and keep
 * block1_conv2. The deterministic portfolio's schedule is then the MILP's optimum (CBC,
 * started from it, proves it within its gap); without the copy moves it is not. */
static void test_vgg16_two_devices(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("checkmate_vgg16_b256_train.json", "gpu+cpu", 0.8);
    xe_err err;
    xe_stages st;
    assert_int_equal(xe_heur_best_ex(in, &st, NULL, 2, 0.0, &err), XE_OK);
    xe_test_assert_stages_valid(in, &st);
    double c = xe_stages_cost(in, &st);
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.time_limit = 30;
    o.start = &st;
    xe_milp_result r;
    assert_int_equal(xe_milp_solve(in, &o, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_MILP_OPTIMAL);
    assert_true(c <= r.bound * (1 + o.rel_gap) + 1e-9);
    print_message("vgg16 gpu+cpu 80%%: portfolio %.6f s, MILP bound %.6f s\n", c, r.bound);
    xe_milp_result_clear(&r);
    xe_stages_clear(&st);
    /* the greedy's schedule with the keeps alone stays dearer */
    assert_int_equal(xe_heur_best_ex(in, &st, NULL, 0, 0.0, &err), XE_OK);
    assert_int_equal(xe_heur_improve_ex(in, &st, 5.0, XE_IMPROVE_KEEP | XE_IMPROVE_ROUNDS, &err), XE_OK);
    assert_true(xe_stages_cost(in, &st) > c * (1 + 1e-3));
    xe_stages_clear(&st);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_earlier),
        cmocka_unit_test(test_equal_round),
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_vgg16_two_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
