/* The DTR eviction heuristic (include/xengine/dtr.h) against hand-computed schedules and
 * the event-list brute force (tests/brute/event_bf.c, which shares no code with it):
 *   - a hand graph where one recomputation is forced: cost and recomputations as
 *     computed by hand, and the budget below every schedule refused;
 *   - 600 random instances on one and two devices: every schedule it returns replays in
 *     the simulator within the budget and costs no less than the brute-force optimum;
 *     where the brute force finds no event list on a device, it returns none there;
 *   - bad arguments: a device out of range, an order that is not topological. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "xengine/dtr.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

/* Simulates s on in: valid, every node computed, every device within its budget,
 * computes on device d only, copies only where allowed; returns its total time. */
static double replay(const xe_instance *in, const xe_schedule *s, int d, int copies)
{
    xe_sim_result r;
    xe_err err = {{0}};
    int rc = xe_sim_run(in, s, &r, &err);
    if (rc != XE_OK) print_error("simulator: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    for (int e = 0; e < in->ndev; e++) {
        assert_true(r.dev[e].peak <= in->dev[e].budget);
        if (e != d) assert_int_equal(r.dev[e].computes, 0);
    }
    if (!copies) assert_int_equal(r.copies, 0);
    return r.total_time;
}

/* 0 -> 1 -> 2 -> 3 and 0 -> 3; mem 1, 3, 1, 1; costs 1, 2, 3, 4 s. At budget 4, node 2's
 * compute holds 1 and 2 (4 B), so 0, read again by 3, cannot stay: it is computed twice.
 * Optimum 1 + 2 + 3 + 4 + 1 = 11 s; at 3 B node 1 (with its input 0) does not fit at all. */
static xe_instance *hand_instance(int64_t budget)
{
    xe_err err = {{0}};
    xe_graph *g = xe_graph_new("hand");
    assert_non_null(g);
    int64_t mem[4] = {1, 3, 1, 1};
    for (int v = 0; v < 4; v++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, name, NULL, 0, mem[v], 0, v + 1.0, &err), v);
    }
    assert_int_equal(xe_graph_add_edge(g, 0, 1, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 1, 2, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 2, 3, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 0, 3, &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 1);
    assert_non_null(in);
    for (int v = 0; v < 4; v++) in->cost[v] = v + 1.0;
    in->dev[0].budget = budget;
    return in;
}

/* Runs DTR on device 0 (offload as given) and asserts its cost, its recomputations
 * (want_rec >= 0) and its replay; where bf_too, also that the event-list brute force's
 * optimum equals want_cost. */
static void expect_dtr(const xe_instance *in, int offload, double want_cost, int want_rec, int bf_too)
{
    xe_err err = {{0}};
    xe_schedule s;
    xe_schedule_init(&s);
    double cost = 0;
    int rec = -1;
    assert_int_equal(xe_dtr_schedule(in, 0, NULL, offload, INFINITY, &s, &cost, &rec, &err), XE_OK);
    assert_true(fabs(cost - want_cost) < 1e-12);
    if (want_rec >= 0) assert_int_equal(rec, want_rec);
    assert_true(fabs(replay(in, &s, 0, offload) - want_cost) < 1e-12);
    xe_schedule_clear(&s);
    if (!bf_too) return;
    double bf = 0;
    assert_int_equal(xe_bf_event_solve(in, &bf, NULL, &err), XE_OK);
    assert_true(fabs(bf - want_cost) < 1e-12);
}

static void test_hand_recompute(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_instance *in = hand_instance(4);
    expect_dtr(in, 0, 11.0, 1, 1);
    /* with 5 B, 0 stays: every node once, 10 s */
    in->dev[0].budget = 5;
    expect_dtr(in, 0, 10.0, 0, 1);
    xe_schedule s;
    xe_schedule_init(&s);
    double cost = 0, bf = 0;
    int rec = -1;
    /* 3 B: node 1 and its input need 4 */
    in->dev[0].budget = 3;
    assert_int_equal(xe_dtr_schedule(in, 0, NULL, 0, INFINITY, &s, &cost, &rec, &err), XE_EINFEASIBLE);
    assert_int_equal(s.len, 0);
    assert_int_equal(xe_bf_event_solve(in, &bf, NULL, &err), XE_EINFEASIBLE);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* The hand graph with a CPU beside the GPU: computing there costs 10 s a node, a copy
 * either way 0.25 s. At 4 B on the GPU, parking node 0 on the CPU while 2 is computed
 * and copying it back for 3 costs 0.5 s, less than computing it again (1 s): 10.5 s, the
 * brute-force optimum over every event list of the two devices. Without offloading:
 * 11 s. */
static void test_hand_offload(void **state)
{
    (void)state;
    xe_instance *one = hand_instance(4);
    xe_graph *g = one->g;
    one->g = NULL;
    xe_instance_free(one);
    xe_instance *in = xe_instance_new(g, 2);
    assert_non_null(in);
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    snprintf(in->dev[1].name, sizeof in->dev[1].name, "cpu");
    in->dev[0].budget = 4;
    in->dev[1].budget = 100;
    for (int v = 0; v < 4; v++) {
        in->cost[v * 2 + 0] = v + 1.0;
        in->cost[v * 2 + 1] = 10.0;
        for (int d = 0; d < 2; d++)
            for (int e = 0; e < 2; e++) in->copy[((int64_t)v * 2 + d) * 2 + e] = d == e ? 0.0 : 0.25;
    }
    expect_dtr(in, 1, 10.5, 0, 1);
    expect_dtr(in, 0, 11.0, 1, 0);
    /* a copy dearer than the recomputation: computed again instead */
    for (int v = 0; v < 4; v++) in->copy[((int64_t)v * 2 + 0) * 2 + 1] = 2.0;
    expect_dtr(in, 1, 11.0, 1, 0);
    /* no room on the CPU: likewise */
    for (int v = 0; v < 4; v++) in->copy[((int64_t)v * 2 + 0) * 2 + 1] = 0.25;
    in->dev[1].budget = 0;
    expect_dtr(in, 1, 11.0, 1, 0);
    xe_instance_free(in);
}

/* Two devices with copy costs: every schedule with parking replays within both budgets,
 * computes on its device only and costs no less than the brute-force optimum over every
 * event list of the instance. */
static void test_offload_against_brute_force(void **state)
{
    (void)state;
    int found = 0, only_parked = 0, optimal = 0;
    for (int k = 0; k < 300; k++) {
        uint64_t seed = 97000 + (uint64_t)k;
        int n = 2 + k % 4;
        xe_instance *in = xe_test_random_instance(seed, n, 2, 1);
        assert_non_null(in);
        xe_err err = {{0}};
        double bf = INFINITY;
        int brc = xe_bf_event_solve(in, &bf, NULL, &err);
        assert_true(brc == XE_OK || brc == XE_EINFEASIBLE);
        for (int d = 0; d < 2; d++) {
            xe_schedule s, s0;
            xe_schedule_init(&s);
            xe_schedule_init(&s0);
            double cost = -1, c0 = -1;
            int rc = xe_dtr_schedule(in, d, NULL, 1, INFINITY, &s, &cost, NULL, &err);
            int rc0 = xe_dtr_schedule(in, d, NULL, 0, INFINITY, &s0, &c0, NULL, &err);
            assert_true(rc == XE_OK || rc == XE_EINFEASIBLE);
            if (rc == XE_OK) {
                assert_int_equal(brc, XE_OK);
                double t = replay(in, &s, d, 1);
                assert_true(fabs(t - cost) <= 1e-9 * fmax(1.0, cost));
                assert_true(cost >= bf - 1e-9);
                found++;
                only_parked += rc0 != XE_OK;
                optimal += cost <= bf + 1e-9;
            }
            xe_schedule_clear(&s);
            xe_schedule_clear(&s0);
        }
        xe_instance_free(in);
    }
    printf("dtr with parking vs event brute force (2 devices): %d schedules (%d optimal), %d where no schedule "
           "without parking was found\n", found, optimal, only_parked);
    assert_true(found > 0);
    assert_true(only_parked > 0);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_instance *in = hand_instance(4);
    xe_schedule s;
    xe_schedule_init(&s);
    double cost = 0;
    assert_int_equal(xe_dtr_schedule(in, 1, NULL, 0, INFINITY, &s, &cost, NULL, &err), XE_EINVAL);
    int bad[4] = {0, 2, 1, 3}; /* 2 before its input 1 */
    assert_int_equal(xe_dtr_schedule(in, 0, bad, 0, INFINITY, &s, &cost, NULL, &err), XE_EINVAL);
    int rep[4] = {0, 1, 1, 3};
    assert_int_equal(xe_dtr_schedule(in, 0, rep, 0, INFINITY, &s, &cost, NULL, &err), XE_EINVAL);
    int ok[4] = {0, 1, 2, 3};
    assert_int_equal(xe_dtr_schedule(in, 0, ok, 0, INFINITY, &s, &cost, NULL, &err), XE_OK);
    assert_true(fabs(cost - 11.0) < 1e-12);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

#define N_RANDOM 600

static void test_against_brute_force(void **state)
{
    (void)state;
    int found = 0, optimal = 0, none = 0, runs = 0;
    for (int k = 0; k < N_RANDOM; k++) {
        uint64_t seed = 91000 + (uint64_t)k;
        int ndev = 1 + k % 2, n = ndev == 1 ? 2 + k % 7 : 2 + k % 4; /* the brute force's sizes */
        xe_instance *in = xe_test_random_instance(seed, n, ndev, 0);
        assert_non_null(in);
        xe_err err = {{0}};
        for (int d = 0; d < ndev; d++) {
            int runnable = 1;
            for (int v = 0; v < n; v++) runnable &= xe_can_run(in, v, d);
            /* device d alone: the brute force over its event lists */
            xe_instance *one = xe_test_random_instance(seed, n, ndev, 0);
            assert_non_null(one);
            for (int e = 0; e < ndev; e++)
                if (e != d) {
                    one->dev[e].budget = 0;
                    for (int v = 0; v < n; v++) one->cost[(int64_t)v * ndev + e] = XE_NO_COST;
                }
            double bf = INFINITY;
            int brc = runnable ? xe_bf_event_solve(one, &bf, NULL, &err) : XE_EINFEASIBLE;
            if (brc != XE_OK && brc != XE_EINFEASIBLE) print_error("brute force: %s\n", err.msg);
            assert_true(brc == XE_OK || brc == XE_EINFEASIBLE);
            xe_schedule s;
            xe_schedule_init(&s);
            double cost = -1;
            int rec = -1;
            int rc = xe_dtr_schedule(in, d, NULL, 0, INFINITY, &s, &cost, &rec, &err);
            runs++;
            if (rc == XE_OK) {
                if (brc != XE_OK) {
                    print_error("seed %llu device %d: DTR found a schedule the brute force says cannot exist\n",
                                (unsigned long long)seed, d);
                    fail();
                }
                double t = replay(in, &s, d, 0);
                assert_true(fabs(t - cost) <= 1e-9 * fmax(1.0, cost));
                assert_true(cost >= bf - 1e-9);
                assert_true(rec >= 0);
                found++;
                optimal += cost <= bf + 1e-9;
            } else {
                assert_int_equal(rc, XE_EINFEASIBLE);
                assert_int_equal(s.len, 0);
                none += brc != XE_OK;
            }
            xe_schedule_clear(&s);
            xe_instance_free(one);
        }
        xe_instance_free(in);
    }
    printf("dtr vs event brute force: %d (instance, device) runs, %d schedules (%d optimal), %d refused where no "
           "schedule exists\n",
           runs, found, optimal, none);
    assert_true(found > runs / 2);
    assert_true(none > 0);
    assert_true(optimal > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_recompute),
        cmocka_unit_test(test_hand_offload),
        cmocka_unit_test(test_offload_against_brute_force),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_against_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
