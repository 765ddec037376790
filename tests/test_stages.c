/* Stage matrices: pruning of what nothing reads (hand-built cases). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "xengine/stages.h"

/* Chain 0 -> 1 -> 2 -> 3 (10 bytes each, cost 1), one device, budget 100. */
static xe_instance *chain4(void)
{
    xe_err err;
    xe_graph *g = xe_graph_new("chain");
    for (int v = 0; v < 4; v++) {
        char nm[8];
        snprintf(nm, sizeof nm, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, 0, 10, 0, 1.0, &err), v);
        if (v) assert_int_equal(xe_graph_add_edge(g, v - 1, v, &err), XE_OK);
    }
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 1);
    for (int v = 0; v < 4; v++) in->cost[v] = 1.0;
    in->dev[0].budget = 100;
    return in;
}

/* Checkpoint-all (stage t computes t, keeps t-1's output for it) plus, in stage 3, the
 * recomputations of 0 and 1: node 2 is checkpointed, so 1's output is read by nothing
 * and 0's only by the useless 1. Pruning removes both (2 entries: the second only once
 * the first is gone), cost 6 -> 4, and the memory of every step does not go up; the
 * needed recomputation of 0 feeding 1 in stage 1 (no checkpoint of 0 there) stays. */
static void test_prune_useless_recomputations(void **state)
{
    (void)state;
    xe_instance *in = chain4();
    xe_stages st;
    assert_int_equal(xe_stages_init(&st, 4, 1), XE_OK);
    for (int t = 0; t < 4; t++) *xe_R(&st, t, t, 0) = 1;
    *xe_R(&st, 1, 0, 0) = 1;                   /* stage 1 recomputes 0 for 1: needed */
    *xe_S(&st, 2, 1, 0) = 1;                   /* 1 kept for 2 */
    *xe_S(&st, 3, 2, 0) = 1;                   /* 2 kept for 3 */
    *xe_R(&st, 3, 0, 0) = *xe_R(&st, 3, 1, 0) = 1; /* useless */
    /* stage 0 computed 0, but stage 1 recomputes it rather than keeping it */
    xe_err err = {{0}};
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &st) - 7.0) < 1e-12);
    double before[16] = {0}, after[16] = {0}; /* eval fills steps k <= t only */
    assert_int_equal(xe_stages_eval(in, &st, before, NULL, &err), XE_OK);
    assert_int_equal(xe_stages_prune(in, &st), 2);
    assert_int_equal(*xe_R(&st, 3, 0, 0), 0);
    assert_int_equal(*xe_R(&st, 3, 1, 0), 0);
    assert_int_equal(*xe_R(&st, 1, 0, 0), 1);
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &st) - 5.0) < 1e-12);
    assert_int_equal(xe_stages_eval(in, &st, after, NULL, &err), XE_OK);
    for (int i = 0; i < 16; i++) assert_true(after[i] <= before[i]);
    assert_int_equal(xe_stages_prune(in, &st), 0); /* a fixpoint */
    xe_stages_clear(&st);
    xe_instance_free(in);
}

/* A checkpoint carried through a stage that never reads it, and dropped after: it and
 * the carry into it go (S[2][0] is read by nothing in stage 2 and not kept for 3, then
 * S[1][0] is read by stage 1's compute of 1 so it stays). */
static void test_prune_unread_checkpoint(void **state)
{
    (void)state;
    xe_instance *in = chain4();
    xe_stages st;
    assert_int_equal(xe_stages_init(&st, 4, 1), XE_OK);
    for (int t = 0; t < 4; t++) *xe_R(&st, t, t, 0) = 1;
    *xe_S(&st, 1, 0, 0) = 1;
    *xe_S(&st, 2, 0, 0) = 1; /* unread in stage 2 */
    *xe_S(&st, 2, 1, 0) = 1;
    *xe_S(&st, 3, 2, 0) = 1;
    xe_err err = {{0}};
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_int_equal(xe_stages_prune(in, &st), 1);
    assert_int_equal(*xe_S(&st, 2, 0, 0), 0);
    assert_int_equal(*xe_S(&st, 1, 0, 0), 1);
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    xe_stages_clear(&st);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prune_useless_recomputations),
        cmocka_unit_test(test_prune_unread_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
