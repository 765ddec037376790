/* The reach windows (src/solvers/reach_window.c, docs/lns.md "Reach windows") against
 * hand-computed values and the event-list brute force (tests/brute/event_bf.c, which
 * shares no code with it):
 *   - a 4-node graph with a skip edge: from a start that recomputes its first node, at
 *     8 B the recomputation goes (10 s, peak 8 B, both by hand), at 7 B it is needed and
 *     stays (11 s, peak 7 B);
 *   - 300 seeded random tiny instances (n = 3..8, one device) started from the exact
 *     search's schedule, a fixed number of windows: every result replays in the
 *     simulator within the budget, costs no more than its start and no less than the
 *     brute-force optimum, and on every instance with one sink (a window over the whole
 *     sequence is then the whole problem, searched to its end) it is that optimum;
 *   - the same seed and windows give the same schedule on a 40-node DAG; starts, options
 *     and instances it cannot take are refused with XE_EINVAL;
 *   - in the planner (random_layered_n100 at 60% from ../shared/graphs, skipped, saying
 *     so, when absent): its row follows the anneal's, its schedule is the result where
 *     cheaper, and replays. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brute/brute.h"
#include "support/arrays.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "support/valid.h"
#include "xengine/instance.h"
#include "xengine/plan.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"

/* Options whose time limit is never reached: a fixed number of windows. */
static void fixed_opts(xe_rwindow_opts *o, long windows)
{
    xe_rwindow_opts_default(o);
    o->time_limit = 600;
    o->max_windows = windows;
}

/* 0 -> 1 -> 2 -> 3 and 0 -> 3; mem 4, 2, 2, 1 B; costs 1, 2, 3, 4 s. Holding 0 from
 * its compute to 3's: computing 2 holds 0, 1, 2 = 8 B, computing 3 holds 0, 2, 3 = 7 B.
 * Freeing 0 after 1 and computing it again before 3 costs 11 s and peaks at 7 B (0, 2
 * and 3 while 3 runs). */
static xe_instance *skip_instance(int64_t budget)
{
    static const int64_t mem[4] = {4, 2, 2, 1};
    static const double cost[4] = {1, 2, 3, 4};
    static const int edges[] = {0, 1, 1, 2, 2, 3, 0, 3, -1};
    xe_instance *in = xe_test_array_instance(4, mem, cost, edges, 1);
    assert_non_null(in);
    in->dev[0].budget = budget;
    return in;
}

static void recompute_start(xe_schedule *s)
{
    static const int ev[][2] = {{XE_EV_COMPUTE, 0}, {XE_EV_COMPUTE, 1}, {XE_EV_FREE, 0}, {XE_EV_COMPUTE, 2},
                                {XE_EV_FREE, 1},    {XE_EV_COMPUTE, 0}, {XE_EV_COMPUTE, 3}, {XE_EV_FREE, 0},
                                {XE_EV_FREE, 2},    {XE_EV_FREE, 3}};
    xe_schedule_init(s);
    for (int i = 0; i < 10; i++) assert_int_equal(xe_schedule_push(s, ev[i][0], ev[i][1], 0, -1), XE_OK);
}

static void test_hand(void **state)
{
    (void)state;
    const int64_t budgets[2] = {8, 7};
    const double want[2] = {10, 11};
    for (int b = 0; b < 2; b++) {
        xe_instance *in = skip_instance(budgets[b]);
        xe_schedule start, out;
        recompute_start(&start);
        xe_schedule_init(&out);
        xe_rwindow_opts o;
        fixed_opts(&o, 50);
        xe_rwindow_result r;
        xe_err err = {{0}};
        assert_int_equal(xe_rwindow_improve(in, &start, &o, &out, &r, &err), XE_OK);
        int64_t peak = 0;
        double c = xe_test_replay_one(in, &out, &peak);
        assert_true(fabs(r.start_cost - 11) < 1e-12);
        assert_true(fabs(c - want[b]) < 1e-12 && fabs(r.cost - want[b]) < 1e-12);
        assert_int_equal(peak, budgets[b]);
        assert_int_equal(r.windows, 50);
        assert_int_equal(r.improved, b == 0 ? 1 : 0);
        xe_schedule_clear(&start);
        xe_schedule_clear(&out);
        xe_instance_free(in);
    }
}

static int sinks(const xe_instance *in)
{
    int k = 0;
    for (int v = 0; v < in->g->n; v++) k += in->g->succ_off[v] == in->g->succ_off[v + 1];
    return k;
}

static void test_against_brute_force(void **state)
{
    (void)state;
    int tried = 0, single = 0, reached = 0, improved = 0;
    for (int k = 0; k < 300; k++) {
        uint64_t seed = 9400 + (uint64_t)k;
        xe_instance *in = xe_test_random_instance(seed, 3 + k % 6, 1, 0);
        assert_non_null(in);
        xe_err err = {{0}};
        double bf = 0;
        int rc = xe_bf_event_solve(in, &bf, NULL, &err);
        assert_true(rc == XE_OK || rc == XE_EINFEASIBLE);
        if (rc != XE_OK) {
            xe_instance_free(in);
            continue;
        }
        xe_schedule start, out;
        xe_test_pebble_start(in, &start);
        xe_schedule_init(&out);
        double c0 = xe_test_replay_one(in, &start, NULL);
        xe_rwindow_opts o;
        fixed_opts(&o, 200);
        o.seed = seed;
        xe_rwindow_result r;
        int wr = xe_rwindow_improve(in, &start, &o, &out, &r, &err);
        if (wr != XE_OK) print_error("seed %llu: %s\n", (unsigned long long)seed, err.msg);
        assert_int_equal(wr, XE_OK);
        double c = xe_test_replay_one(in, &out, NULL);
        assert_true(fabs(c - r.cost) <= 1e-9 * fmax(1.0, c));
        assert_true(c <= c0 + 1e-9);
        assert_true(c >= bf - 1e-9);
        assert_int_equal(r.capped, 0); /* at most 8 nodes: every window searched to its end */
        tried++;
        improved += c < c0 - 1e-9;
        if (sinks(in) == 1) {
            single++;
            if (c > bf + 1e-9) print_error("seed %llu: %.17g above the optimum %.17g\n", (unsigned long long)seed, c, bf);
            assert_true(c <= bf + 1e-9);
        }
        reached += c <= bf + 1e-9;
        xe_schedule_clear(&start);
        xe_schedule_clear(&out);
        xe_instance_free(in);
    }
    printf("reach windows vs event brute force: %d instances with a schedule (%d with one sink, all at the optimum), "
           "the optimum reached on %d, the exact search's schedule improved on %d\n",
           tried, single, reached, improved);
    assert_true(tried >= 150);
    assert_true(single >= 50);
    assert_true(improved > 0);
}

/* A random 40-node DAG close to its largest footprint: the same seed and windows give
 * the same events, never dearer than the start; bad starts and options are refused. */
static void test_deterministic_and_refusals(void **state)
{
    (void)state;
    xe_instance *in = xe_test_random_dag(77, 40, 0.12, 0.15);
    assert_non_null(in);
    xe_schedule start, out[2];
    xe_test_pebble_start(in, &start);
    xe_err err = {{0}};
    double c0 = xe_test_replay_one(in, &start, NULL);
    xe_rwindow_opts o;
    fixed_opts(&o, 60);
    o.seed = 5;
    xe_rwindow_result r[2];
    for (int k = 0; k < 2; k++) {
        xe_schedule_init(&out[k]);
        assert_int_equal(xe_rwindow_improve(in, &start, &o, &out[k], &r[k], &err), XE_OK);
        assert_true(xe_test_replay_one(in, &out[k], NULL) <= c0 + 1e-9);
    }
    assert_int_equal(out[0].len, out[1].len);
    assert_memory_equal(out[0].ev, out[1].ev, (size_t)out[0].len * sizeof *out[0].ev);
    assert_true(r[0].cost == r[1].cost && r[0].improved == r[1].improved);
    print_message("40-node DAG: %.3f s -> %.3f s in %ld windows (%ld cheaper)\n", c0, r[0].cost, r[0].windows,
                  r[0].improved);
    /* refused: a time limit of 0, a start that is not valid (its first compute dropped) */
    xe_rwindow_opts bad = o;
    bad.time_limit = 0;
    xe_schedule none;
    xe_schedule_init(&none);
    xe_rwindow_result rr;
    assert_int_equal(xe_rwindow_improve(in, &start, &bad, &none, &rr, &err), XE_EINVAL);
    xe_schedule cut = {.ev = start.ev + 1, .len = start.len - 1, .cap = start.len - 1};
    assert_int_equal(xe_rwindow_improve(in, &cut, &o, &none, &rr, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "not valid"));
    assert_int_equal(none.len, 0);
    /* two devices */
    xe_instance *two = xe_test_random_instance(3, 5, 2, 0);
    assert_non_null(two);
    assert_int_equal(xe_rwindow_improve(two, &start, &o, &none, &rr, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "one device"));
    xe_instance_free(two);
    for (int k = 0; k < 2; k++) xe_schedule_clear(&out[k]);
    xe_schedule_clear(&start);
    xe_instance_free(in);
}

/* In the planner: random_layered_n100 at 60% of its peak on one GPU, 12 s. No stage
 * schedule is found in either order there, so the last phase runs: the anneal, then the
 * reach windows from what it found. */
static void test_plan_shared(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n100.json", "gpu", 0.60);
    if (!in) skip();
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.time_limit = 12;
    o.no_bound_search = 1;
    o.no_reach_bound = 1;
    xe_plan_result r;
    xe_err err;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    int ann = -1, win = -1;
    for (int k = 0; k < r.nrows; k++) {
        if (!strcmp(r.rows[k].method, "anneal")) ann = k;
        if (!strcmp(r.rows[k].method, "reach-window")) win = k;
    }
    assert_true(ann >= 0 && win == ann + 1);
    assert_true(r.rows[win].objective <= r.rows[ann].objective + 1e-9);
    assert_true(fabs(r.rows[win].objective - r.objective) <= 1e-9 * r.objective);
    if (r.rows[win].objective < r.rows[ann].objective * (1 - 1e-12)) assert_string_equal(r.name, "reach-window");
    int64_t peak = 0;
    assert_true(fabs(xe_test_replay_one(in, &r.events, &peak) - r.objective) <= 1e-9 * r.objective);
    assert_true(r.bound <= r.bound_any + 1e-9); /* only bounds over every schedule */
    print_message("random_layered_n100 at 60%%: annealed %.3f s, reach windows %.3f s (%s)\n", r.rows[ann].objective,
                  r.rows[win].objective, r.rows[win].status);
    xe_plan_result_clear(&r);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_deterministic_and_refusals),
        cmocka_unit_test(test_plan_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
