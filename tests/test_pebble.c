/* Exact one-device feasibility (src/solvers/pebble*.c, docs/pebble.md) against hand-
 * computed values and the event-list brute force (tests/brute/event_bf.c, which shares
 * no code with it):
 *   - a 4-node graph whose smallest budget (6 B) is above its largest footprint (5 B);
 *   - 400 seeded random tiny instances (n = 2..8, one device): the search says "a
 *     schedule exists" exactly when the brute force finds a valid event list; the
 *     schedule it builds replays in the simulator within the budget, computes every
 *     node, and costs no less than the brute-force optimum; its exact smallest budget
 *     admits an event list and one byte less admits none (brute force at both); and it
 *     never misses a budget the stage brute force can meet (stage schedules are event
 *     lists); the count where it schedules below the stage class's floor is printed and
 *     must be positive (that is the point of it);
 *   - random_layered_n100 from ../shared/graphs (skipped, saying so, when absent): the
 *     exact smallest budget is found, one byte less answers no, and the schedule at it
 *     replays in the simulator;
 *   - a deadline already passed answers "unknown", never "no" (random_layered_n250,
 *     skipped likewise). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "support/valid.h"
#include "xengine/instance.h"
#include "xengine/pebble.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

/* 0 -> 1, 0 -> 2, {1, 2} -> 3; mem 4, 1, 1, 1. Footprints 4, 5, 5, 3. Computing 3 needs
 * 1 and 2 resident; whichever of them is computed last is computed while the other is
 * held, with 0 as its input: 1 + 4 + 1 = 6 bytes. So 6 B is the smallest budget. */
static void test_hand_example(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_graph *g = xe_graph_new("hand");
    assert_non_null(g);
    int64_t mem[4] = {4, 1, 1, 1};
    for (int v = 0; v < 4; v++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, name, NULL, 0, mem[v], 0, 1.0, &err), v);
    }
    assert_int_equal(xe_graph_add_edge(g, 0, 1, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 0, 2, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 1, 3, &err), XE_OK);
    assert_int_equal(xe_graph_add_edge(g, 2, 3, &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    assert_int_equal(xe_instance_min_footprint(g), 5);
    xe_instance *in = xe_instance_new(g, 1);
    assert_non_null(in);
    for (int v = 0; v < 4; v++) in->cost[v] = 1.0;
    xe_pebble *p = xe_pebble_new(g, 0);
    assert_non_null(p);
    int blocker = -2;
    assert_int_equal(xe_pebble_feasible(p, 5, INFINITY, &blocker), XE_PEBBLE_NO);
    assert_int_equal(blocker, 3);
    assert_int_equal(xe_pebble_feasible(p, 6, INFINITY, &blocker), XE_PEBBLE_YES);
    assert_int_equal(blocker, -1);
    int64_t lo = 0, hi = 0;
    int exact = 0;
    assert_int_equal(xe_pebble_min_budget(p, 5, 100, INFINITY, &lo, &hi, &exact, &blocker, &err), XE_OK);
    assert_int_equal(exact, 1);
    assert_int_equal(lo, 6);
    assert_int_equal(hi, 6);
    assert_int_equal(blocker, 3);
    in->dev[0].budget = 6;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_pebble_answer a = XE_PEBBLE_NO;
    assert_int_equal(xe_pebble_schedule(p, in, 0, INFINITY, &s, &a, NULL, NULL, &err), XE_OK);
    assert_int_equal(a, XE_PEBBLE_YES);
    /* from scratch per node, 0 is recomputed three times; 0 can stay resident beside 1
     * and 2 (4 + 1 + 1 = 6 B), so the clean-up keeps it: every node once, 4 s */
    assert_true(fabs(xe_test_replay_one(in, &s, NULL) - 4.0) < 1e-12);
    in->dev[0].budget = 5;
    assert_int_equal(xe_pebble_schedule(p, in, 0, INFINITY, &s, &a, NULL, NULL, &err), XE_OK);
    assert_int_equal(a, XE_PEBBLE_NO);
    assert_int_equal(s.len, 0);
    xe_schedule_clear(&s);
    xe_pebble_free(p);
    xe_instance_free(in);
}

#define N_RANDOM 400

static void test_against_brute_force(void **state)
{
    (void)state;
    int yes = 0, no = 0, below_stage = 0;
    for (int k = 0; k < N_RANDOM; k++) {
        uint64_t seed = 7000 + (uint64_t)k;
        int n = 2 + k % 7;
        xe_instance *in = xe_test_random_instance(seed, n, 1, 0);
        assert_non_null(in);
        xe_err err = {{0}};
        double bf = 0, sbf = 0;
        int rc = xe_bf_event_solve(in, &bf, NULL, &err);
        assert_true(rc == XE_OK || rc == XE_EINFEASIBLE);
        int src = xe_bf_stage_solve(in, &sbf, NULL, &err);
        assert_true(src == XE_OK || src == XE_EINFEASIBLE);
        /* every member order (each one alone, and the two in turn), with and without
         * forced members, answers exactly; the last is the default (turns, forced) */
        static const int orders[] = {XE_PEBBLE_ORDER_INDEX, XE_PEBBLE_ORDER_ALAP, XE_PEBBLE_ORDER_TURNS};
        xe_pebble *p = NULL;
        xe_pebble_answer a = XE_PEBBLE_UNKNOWN;
        for (int o = 0; o < 6; o++) {
            int forced = o >= 3;
            xe_pebble_free(p);
            p = xe_pebble_new(in->g, 0);
            assert_non_null(p);
            xe_pebble_set_order(p, orders[o % 3]);
            xe_pebble_set_forced(p, forced);
            a = xe_pebble_feasible(p, in->dev[0].budget, INFINITY, NULL);
            if (a != (rc == XE_OK ? XE_PEBBLE_YES : XE_PEBBLE_NO)) {
                print_error("seed %llu n=%d budget %lld order %d forced %d: pebbling %d, event brute force %d\n",
                            (unsigned long long)seed, n, (long long)in->dev[0].budget, orders[o % 3], forced,
                            (int)a, rc);
                fail();
            }
            if (a == XE_PEBBLE_YES && o % 3 < 2) { /* each order's schedule is valid */
                xe_schedule s;
                xe_schedule_init(&s);
                xe_pebble_answer a2 = XE_PEBBLE_NO;
                assert_int_equal(xe_pebble_schedule(p, in, 0, INFINITY, &s, &a2, NULL, NULL, &err), XE_OK);
                assert_int_equal(a2, XE_PEBBLE_YES);
                assert_true(xe_test_replay_one(in, &s, NULL) >= bf - 1e-9);
                xe_schedule_clear(&s);
            }
        }
        /* stage schedules are event lists */
        if (src == XE_OK) assert_int_equal(a, XE_PEBBLE_YES);
        if (a == XE_PEBBLE_YES) {
            yes++;
            below_stage += src == XE_EINFEASIBLE;
            xe_schedule s;
            xe_schedule_init(&s);
            assert_int_equal(xe_pebble_schedule(p, in, 0, INFINITY, &s, &a, NULL, NULL, &err), XE_OK);
            assert_int_equal(a, XE_PEBBLE_YES);
            double t = xe_test_replay_one(in, &s, NULL);
            assert_true(t >= bf - 1e-9);
            xe_schedule_clear(&s);
        } else {
            no++;
        }
        /* the exact smallest budget, checked by brute force at it and one byte below */
        int64_t lo = 0, hi = 0, keep = in->dev[0].budget;
        int exact = 0;
        assert_int_equal(xe_pebble_min_budget(p, xe_instance_min_footprint(in->g), xe_graph_total_mem(in->g),
                                              INFINITY, &lo, &hi, &exact, NULL, &err), XE_OK);
        assert_int_equal(exact, 1);
        assert_int_equal(lo, hi);
        in->dev[0].budget = lo;
        assert_int_equal(xe_bf_event_solve(in, &bf, NULL, &err), XE_OK);
        in->dev[0].budget = lo - 1;
        assert_int_equal(xe_bf_event_solve(in, &bf, NULL, &err), XE_EINFEASIBLE);
        in->dev[0].budget = keep;
        xe_pebble_free(p);
        xe_instance_free(in);
    }
    printf("pebbling vs event brute force: %d instances, %d with a schedule (%d of them below the stage "
           "class's floor), %d proven without\n", N_RANDOM, yes, below_stage, no);
    assert_true(yes > 0 && no > 0);
    assert_true(below_stage > 0);
}

static void test_shared_n100(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_instance *in = xe_test_shared_instance("random_layered_n100.json", "gpu", 1.0);
    const xe_graph *g = in->g;
    xe_pebble *p = xe_pebble_new(g, 0);
    assert_non_null(p);
    int64_t lo = 0, hi = 0, peak = xe_instance_norecompute_peak(g), fp = xe_instance_min_footprint(g);
    int exact = 0;
    assert_int_equal(xe_pebble_min_budget(p, fp, peak, xe_now() + 30, &lo, &hi, &exact, NULL, &err), XE_OK);
    assert_int_equal(exact, 1);
    assert_true(lo >= fp && lo <= peak);
    assert_int_equal(xe_pebble_feasible(p, lo - 1, INFINITY, NULL), XE_PEBBLE_NO);
    in->dev[0].budget = lo;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_pebble_answer a = XE_PEBBLE_NO;
    assert_int_equal(xe_pebble_schedule(p, in, 0, xe_now() + 30, &s, &a, NULL, NULL, &err), XE_OK);
    assert_int_equal(a, XE_PEBBLE_YES);
    double t = xe_test_replay_one(in, &s, NULL), once = xe_bound_cheapest(in);
    assert_true(t >= once * (1 - 1e-12)); /* every node at least once */
    printf("random_layered_n100: smallest budget %lld B (%.2f%% of the no-recomputation peak, footprint bound "
           "%.2f%%); schedule there: %d events, %.2fx every node once\n", (long long)lo,
           100.0 * (double)lo / (double)peak, 100.0 * (double)fp / (double)peak, s.len, t / once);
    xe_schedule_clear(&s);
    xe_pebble_free(p);
    xe_instance_free(in);
}

/* random_layered_n250 one GPU at 60% of its no-recomputation peak (0.6 % above the
 * largest footprint): without forced members the highest-index order alone found no
 * answer in 900 s, the ALAP order a witness for every node in about a second; with them
 * (the default) about 0.13 s. Then the smallest budget that admits any schedule: exactly
 * the largest footprint (a schedule exists there), found within the deadline (0.6 s
 * here; 30 s leaves room for the sanitizers), and the schedule there replays within it
 * (built in 5 s, or more where the machine is slow: the first candidate comes after
 * about 0.3 s, and the randomised passes would take what is left of any deadline).
 * (Each order's schedules are replayed in test_against_brute_force.) */
static void test_shared_n250_tight(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n250.json", "gpu", 0.6);
    xe_pebble *p = xe_pebble_new(in->g, 0);
    assert_non_null(p);
    double t0 = xe_now();
    int blocker = -2;
    assert_int_equal(xe_pebble_feasible(p, in->dev[0].budget, t0 + 60, &blocker), XE_PEBBLE_YES);
    assert_int_equal(blocker, -1);
    printf("random_layered_n250 at 60%% (%lld B): every node reachable, shown in %.2f s\n",
           (long long)in->dev[0].budget, xe_now() - t0);
    int64_t lo = 0, hi = 0, fp = xe_instance_min_footprint(in->g), peak = xe_instance_norecompute_peak(in->g);
    int exact = 0;
    xe_err err = {{0}};
    xe_pebble_free(p);
    p = xe_pebble_new(in->g, 0);
    assert_non_null(p);
    t0 = xe_now();
    assert_int_equal(xe_pebble_min_budget(p, fp, peak, t0 + 30, &lo, &hi, &exact, NULL, &err), XE_OK);
    assert_int_equal(exact, 1);
    assert_int_equal(lo, hi);
    assert_int_equal(lo, fp);
    double t_min = xe_now() - t0;
    in->dev[0].budget = hi;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_pebble_answer a = XE_PEBBLE_NO;
    xe_pebble_stats st;
    /* the call takes its whole deadline (the randomised passes fill it), so a short one;
     * on a loaded machine under the sanitizers 5 s once gave no schedule at all (CI,
     * session 31; here the first comes after 0.4-0.9 s), so a longer one then: the
     * answer, not its time, is what this checks */
    double wait = 5;
    for (;;) {
        assert_int_equal(xe_pebble_schedule(p, in, 0, xe_now() + wait, &s, &a, NULL, &st, &err), XE_OK);
        if (a != XE_PEBBLE_UNKNOWN || wait >= 120) break;
        printf("  no schedule within %.0f s (machine loaded?); again with %.0f s\n", wait, 4 * wait);
        wait *= 4;
    }
    assert_int_equal(a, XE_PEBBLE_YES);
    xe_test_replay_one(in, &s, NULL); /* within the budget hi */
    printf("  smallest budget: %lld B = the largest footprint (%.2f%% of the peak), exact in %.2f s; "
           "first schedule there after %.2f s\n",
           (long long)lo, 100.0 * (double)lo / (double)peak, t_min, st.first_time);
    xe_schedule_clear(&s);
    xe_pebble_free(p);
    xe_instance_free(in);
}

static void test_deadline_passed(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n250.json", "gpu", 1.0);
    const xe_graph *g = in->g;
    xe_pebble *p = xe_pebble_new(g, 0);
    assert_non_null(p);
    /* a budget between the footprint bound and the peak: the search needs more than
     * nothing, and a passed deadline must not make it claim "no" */
    int64_t b = (xe_instance_min_footprint(g) + xe_instance_norecompute_peak(g)) / 2;
    int blocker = -2;
    assert_int_equal(xe_pebble_feasible(p, b, xe_now() - 1.0, &blocker), XE_PEBBLE_UNKNOWN);
    assert_true(blocker >= 0);
    xe_pebble_free(p);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_example),
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_shared_n100),
        cmocka_unit_test(test_shared_n250_tight),
        cmocka_unit_test(test_deadline_passed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
