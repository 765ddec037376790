/* The event-list local search (src/solvers/anneal.c, docs/anneal.md) against hand-
 * computed values and the event-list brute force (tests/brute/event_bf.c, which shares
 * no code with it):
 *   - a 4-node graph with a skip edge: from a start that recomputes its first node, at
 *     8 B the recomputation goes (10 s, peak 8 B, both by hand), at 7 B it is needed and
 *     stays (11 s, peak 7 B);
 *   - 200 seeded random tiny instances (n = 3..8, one device) started from the exact
 *     search's schedule: every result replays in the simulator within the budget, costs
 *     no more than its start and no less than the brute-force optimum; how often it
 *     reaches that optimum is printed and asserted (at least 90% of the instances);
 *   - a target cost met stops it in the round it is met; no output keeps a compute that
 *     nothing reads of a node computed elsewhere too;
 *   - the same seed and rounds give the same schedule; options, starts and instances it
 *     cannot take are refused with XE_EINVAL and an empty output;
 *   - in the planner (random_layered_n100 at 60% from ../shared/graphs, skipped, saying
 *     so, when absent): its row follows the exact search's and its schedule, cheaper,
 *     is the result and replays. */
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
#include "xengine/anneal.h"
#include "xengine/instance.h"
#include "xengine/plan.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

/* Computes in s whose output is freed (or never freed) before any compute reads it, of
 * nodes computed more than once: none should be left in the anneal's output. */
static int unread_recomputes(const xe_instance *in, const xe_schedule *s)
{
    const xe_graph *g = in->g;
    int n = g->n, bad = 0;
    int times[64] = {0}; /* the tests' graphs: at most 64 nodes */
    assert_true(n <= 64);
    for (int i = 0; i < s->len; i++)
        if (s->ev[i].kind == XE_EV_COMPUTE) times[s->ev[i].node]++;
    for (int i = 0; i < s->len; i++) {
        if (s->ev[i].kind != XE_EV_COMPUTE || times[s->ev[i].node] < 2) continue;
        int v = s->ev[i].node, read = 0;
        for (int j = i + 1; j < s->len && !read; j++) {
            if (s->ev[j].node == v && s->ev[j].kind != XE_EV_COPY) break; /* freed or computed again */
            if (s->ev[j].kind != XE_EV_COMPUTE) continue;
            for (int p = g->pred_off[s->ev[j].node]; p < g->pred_off[s->ev[j].node + 1]; p++) read |= g->pred[p] == v;
        }
        bad += !read;
    }
    return bad;
}

/* Options that never reach their time limit: a fixed number of rounds of fixed length. */
static void fixed_opts(xe_anneal_opts *o, int rounds)
{
    xe_anneal_opts_default(o);
    o->time_limit = 600;
    o->round_moves = 20000;
    o->max_rounds = rounds;
}

/* 0 -> 1 -> 2 -> 3 and 0 -> 3; mem 4, 2, 2, 1 B; costs 1, 2, 3, 4 s. Holding 0 from
 * its compute to 3's: computing 2 holds 0, 1, 2 = 8 B, computing 3 holds 0, 2, 3 = 7 B.
 * Freeing 0 after 1 and computing it again before 3 costs 11 s and peaks at 7 B (0, 2
 * and 3 while 3 runs). */
static xe_instance *skip_instance(void)
{
    static const int64_t mem[4] = {4, 2, 2, 1};
    static const double cost[4] = {1, 2, 3, 4};
    static const int edges[] = {0, 1, 1, 2, 2, 3, 0, 3, -1};
    return xe_test_array_instance(4, mem, cost, edges, 1);
}

static void push_all(xe_schedule *s, const int (*ev)[2], int k)
{
    for (int i = 0; i < k; i++) assert_int_equal(xe_schedule_push(s, ev[i][0], ev[i][1], 0, -1), XE_OK);
}

/* The start that recomputes 0. */
static const int recompute_start[][2] = {{XE_EV_COMPUTE, 0}, {XE_EV_COMPUTE, 1}, {XE_EV_FREE, 0},
                                         {XE_EV_COMPUTE, 2}, {XE_EV_FREE, 1},    {XE_EV_COMPUTE, 0},
                                         {XE_EV_COMPUTE, 3}, {XE_EV_FREE, 0},    {XE_EV_FREE, 2},
                                         {XE_EV_FREE, 3}};

/* The skip instance with the start that recomputes 0 and an empty output. */
static xe_instance *skip_case(xe_schedule *start, xe_schedule *out)
{
    xe_instance *in = skip_instance();
    xe_schedule_init(start);
    xe_schedule_init(out);
    push_all(start, recompute_start, 10);
    return in;
}

static void test_hand(void **state)
{
    (void)state;
    xe_schedule start, out;
    xe_instance *in = skip_case(&start, &out);
    xe_anneal_opts o;
    fixed_opts(&o, 2);
    xe_anneal_result r;
    xe_err err = {{0}};
    int64_t peak = 0;

    in->dev[0].budget = 8; /* room to keep 0: the recomputation goes */
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_OK);
    assert_true(fabs(r.start_cost - 11.0) < 1e-12);
    assert_true(fabs(r.cost - 10.0) < 1e-12);
    assert_true(fabs(xe_test_replay_one(in, &out, &peak) - 10.0) < 1e-12);
    assert_int_equal(peak, 8);
    assert_int_equal(r.peak, 8);
    assert_int_equal(out.len, 8); /* four computes, each tensor freed once */

    in->dev[0].budget = 7; /* 0 cannot stay while 2 is computed: 11 s is the optimum */
    double bf = 0;
    assert_int_equal(xe_bf_event_solve(in, &bf, NULL, &err), XE_OK);
    assert_true(fabs(bf - 11.0) < 1e-12);
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_OK);
    assert_true(fabs(r.cost - 11.0) < 1e-12);
    assert_true(fabs(xe_test_replay_one(in, &out, &peak) - 11.0) < 1e-12);
    assert_int_equal(peak, 7);
    xe_schedule_clear(&start);
    xe_schedule_clear(&out);
    xe_instance_free(in);
}

/* A target met stops the search at its next check (every 256 moves): the hand case at
 * 8 B with target 10 s, its optimum, ends in the first round, cut short. */
static void test_target(void **state)
{
    (void)state;
    xe_schedule start, out;
    xe_instance *in = skip_case(&start, &out);
    in->dev[0].budget = 8;
    xe_anneal_opts o;
    fixed_opts(&o, 4);
    o.target = 10.0;
    xe_anneal_result r;
    xe_err err = {{0}};
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_OK);
    assert_true(fabs(r.cost - 10.0) < 1e-12);
    assert_int_equal(r.rounds, 0);
    assert_int_equal(r.partial, 1);
    assert_true(r.moves < 20000);
    o.target = 0; /* without it: every round to its end */
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_OK);
    assert_int_equal(r.rounds, 4);
    assert_int_equal(r.partial, 0);
    assert_int_equal(r.moves, 4 * 20000);
    xe_schedule_clear(&start);
    xe_schedule_clear(&out);
    xe_instance_free(in);
}

#define N_RANDOM 200

static void test_against_brute_force(void **state)
{
    (void)state;
    int tried = 0, reached = 0, improved = 0;
    for (int k = 0; k < N_RANDOM; k++) {
        uint64_t seed = 9100 + (uint64_t)k;
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
        xe_anneal_opts o;
        fixed_opts(&o, 4);
        o.seed = seed;
        xe_anneal_result r;
        assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_OK);
        double c = xe_test_replay_one(in, &out, NULL);
        assert_true(fabs(c - r.cost) <= 1e-9 * fmax(1.0, c));
        assert_true(fabs(r.start_cost - c0) <= 1e-9 * fmax(1.0, c0));
        assert_true(c <= c0 + 1e-9);
        assert_true(c >= bf - 1e-9);
        assert_int_equal(unread_recomputes(in, &out), 0);
        tried++;
        reached += c <= bf + 1e-9;
        improved += c < c0 - 1e-9;
        xe_schedule_clear(&start);
        xe_schedule_clear(&out);
        xe_instance_free(in);
    }
    printf("anneal vs event brute force: %d instances with a schedule, the optimum reached on %d, the exact "
           "search's schedule improved on %d\n",
           tried, reached, improved);
    assert_true(tried >= 100);
    assert_true(improved > 0);
    assert_true(reached * 10 >= tried * 9);
}

/* A random 40-node DAG close to its largest footprint: the same seed and rounds give the
 * same events; the result is never dearer than its start. */
static void test_deterministic(void **state)
{
    (void)state;
    xe_instance *in = xe_test_random_dag(77, 40, 0.12, 0.15);
    assert_non_null(in);
    in->cost[0] = 0; /* a free node: its recomputations cost nothing, unread ones must go */
    xe_schedule start, a, b;
    xe_test_pebble_start(in, &start);
    xe_schedule_init(&a);
    xe_schedule_init(&b);
    xe_err err = {{0}};
    xe_anneal_opts o;
    fixed_opts(&o, 3);
    o.seed = 5;
    xe_anneal_result ra, rb;
    assert_int_equal(xe_anneal(in, &start, &o, &a, &ra, &err), XE_OK);
    assert_int_equal(xe_anneal(in, &start, &o, &b, &rb, &err), XE_OK);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.ev, b.ev, (size_t)a.len * sizeof *a.ev);
    assert_int_equal(ra.rounds, 3);
    assert_int_equal(ra.moves, 3 * 20000);
    assert_true(xe_test_replay_one(in, &a, NULL) <= xe_test_replay_one(in, &start, NULL) + 1e-9);
    assert_int_equal(unread_recomputes(in, &a), 0);
    printf("40-node DAG: the exact search's schedule %.3f s, annealed %.3f s\n", ra.start_cost, ra.cost);
    xe_schedule_clear(&start);
    xe_schedule_clear(&a);
    xe_schedule_clear(&b);
    xe_instance_free(in);
}

static void test_refuses(void **state)
{
    (void)state;
    xe_schedule start, out;
    xe_instance *in = skip_case(&start, &out);
    xe_anneal_opts o;
    fixed_opts(&o, 1);
    xe_anneal_result r;
    xe_err err = {{0}};
    in->dev[0].budget = 6; /* the start peaks at 7 B */
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_EINVAL);
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "budget"));
    assert_int_equal(out.len, 0);
    in->dev[0].budget = 8;
    o.time_limit = 0;
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_EINVAL);
    fixed_opts(&o, 1);
    o.max_rounds = -1;
    assert_int_equal(xe_anneal(in, &start, &o, &out, &r, &err), XE_EINVAL);
    fixed_opts(&o, 1);
    xe_schedule bad; /* 1 before its input 0 */
    xe_schedule_init(&bad);
    static const int bad_ev[][2] = {{XE_EV_COMPUTE, 1}, {XE_EV_COMPUTE, 0}};
    push_all(&bad, bad_ev, 2);
    assert_int_equal(xe_anneal(in, &bad, &o, &out, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "not valid"));
    assert_int_equal(out.len, 0);
    xe_schedule_clear(&bad);
    xe_instance_free(in);
    /* two devices: copies are outside its moves */
    xe_instance *two = xe_test_random_instance(3, 5, 2, 0);
    assert_non_null(two);
    assert_int_equal(xe_anneal(two, &start, &o, &out, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "one device"));
    xe_instance_free(two);
    xe_schedule_clear(&start);
}

/* In the planner: random_layered_n100 at 60% of its peak on one GPU, heuristic mode.
 * No stage schedule is found there in either order, so the anneal runs last, from the
 * exact search's (restaged) schedule. */
static void test_plan_shared(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n100.json", "gpu", 0.60);
    if (!in) skip();
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.mode = XE_PLAN_HEURISTIC;
    o.time_limit = 120;
    xe_plan_result r;
    xe_err err;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    int peb = -1, ann = -1;
    for (int k = 0; k < r.nrows; k++) {
        if (!strcmp(r.rows[k].method, "pebbling")) peb = k;
        if (!strcmp(r.rows[k].method, "anneal")) ann = k;
    }
    assert_true(peb >= 0 && ann == r.nrows - 1);
    assert_string_equal(r.name, "anneal");
    assert_true(r.objective < r.rows[peb].objective);
    assert_true(fabs(r.rows[ann].objective - r.objective) <= 1e-12 * r.objective);
    assert_null(r.sol.R);
    int64_t peak = 0;
    assert_true(fabs(xe_test_replay_one(in, &r.events, &peak) - r.objective) <= 1e-9 * r.objective);
    /* xe_plan_result_schedule hands out these events, a copy */
    xe_schedule ev;
    xe_schedule_init(&ev);
    assert_int_equal(xe_plan_result_schedule(in, &r, &ev, &err), XE_OK);
    assert_int_equal(ev.len, r.events.len);
    assert_memory_equal(ev.ev, r.events.ev, (size_t)ev.len * sizeof *ev.ev);
    xe_schedule_clear(&ev);
    /* the stage bounds do not hold for it: only bounds over every schedule */
    assert_true(r.bound <= r.bound_any + 1e-9);
    print_message("random_layered_n100 at 60%%: the exact search's %.3f s, annealed %.3f s (%s)\n",
                  r.rows[peb].objective, r.objective, r.rows[ann].status);
    xe_plan_result_clear(&r);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_plan_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
