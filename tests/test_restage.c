/* Restaging an event list into Checkmate stages (xe_instance_restage, docs/reorder.md
 * "Restaging"):
 *   - a hand list on two chains that computes in an order of its own, recomputes a node
 *     out of index order and a node twice between two first computations: the order
 *     (map), the one empty node it needs, and the stage cost after the prune, worked out
 *     by hand; a list that frees a checkpoint before its stage touches it: no empty
 *     node, the checkpoint dropped from the stage by the prune (held to the stage's end
 *     without it, xe_stages_from_schedule_ex);
 *   - the event-list brute-force optimum (tests/brute, no shared code) of 300 seeded
 *     random instances with 2-8 nodes on one device: restaged, the stage matrices pass
 *     xe_stages_check, cost exactly the optimum (less would beat the optimum, more would
 *     mean the stage form lost what the list did), and mapped back (xe_schedule_unrestage)
 *     replay in the simulator within the budget at that cost;
 *   - 500 random valid event lists (random walks of computes and frees on seeded random
 *     instances with 2-12 nodes, one or two devices, kept where the simulator accepts
 *     them): the same checks, cost at most the list's;
 *   - the exact search's schedules (xe_pebble_schedule) of random 12-30-node DAGs at
 *     budgets between the largest footprint and the no-recomputation peak: the same
 *     checks, cost at most the list's; the planner's refinement of a candidate
 *     (xe_plan_refine_events) no dearer and valid in the simulator;
 *   - a list with a copy: XE_EUNSUPPORTED, nothing returned;
 *   - xe_plan (heuristic mode, 60 s) on random_layered_n100 at 55% of its peak on one GPU
 *     (no stage schedule found; skipped, saying so, where ../shared/graphs is absent):
 *     rows "pebbling" and "restaged", and the result, valid in the simulator, cheaper
 *     than the search's cheapest candidate unrefined (xe_pebble_schedule alone with the
 *     same 6 s: 97.658 s; refined 74.032 s in a Release build);
 *   - at 70% (stage schedules found, the exact search runs as a competitor): the result
 *     is its schedule, cheaper than every stage schedule's row, valid, its bound at most
 *     the bottleneck bound. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/solvers/rng.h"
#include "brute/brute.h"
#include "support/arrays.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "xengine/pebble.h"
#include "xengine/plan.h"
#include "xengine/reorder.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"
#include "../src/solvers/plan_int.h"

/* Restages s on in and checks everything that must hold; returns the stage cost and,
 * in *nodes (may be NULL), the restaged instance's node count. */
static double restage_checked_n(const xe_instance *in, const xe_schedule *s, double list_cost, int *nodes)
{
    xe_instance *ri = NULL;
    int *map = NULL;
    xe_stages st;
    xe_err err;
    int rc = xe_instance_restage(in, s, &ri, &map, &st, &err);
    if (rc) print_error("restage: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    int n = in->g->n, N = ri->g->n;
    assert_true(N >= n);
    if (nodes) *nodes = N;
    /* the map: every node of in once, empty nodes with no edges, 0 bytes, cost 0 */
    int *seen = calloc((size_t)n, sizeof *seen);
    assert_non_null(seen);
    for (int k = 0; k < N; k++) {
        if (map[k] < 0) {
            assert_int_equal(ri->g->nodes[k].mem, 0);
            assert_int_equal(xe_graph_npred(ri->g, k), 0);
            assert_int_equal(xe_graph_nsucc(ri->g, k), 0);
            for (int d = 0; d < in->ndev; d++) assert_true(xe_cost(ri, k, d) == 0.0);
            continue;
        }
        assert_true(map[k] < n);
        seen[map[k]]++;
        assert_int_equal(ri->g->nodes[k].mem, in->g->nodes[map[k]].mem);
        assert_int_equal(xe_graph_npred(ri->g, k), xe_graph_npred(in->g, map[k]));
    }
    for (int v = 0; v < n; v++) assert_int_equal(seen[v], 1);
    free(seen);
    assert_int_equal(xe_stages_check(ri, &st, &err), XE_OK);
    double c = xe_stages_cost(ri, &st);
    assert_true(c <= list_cost + 1e-9 * fmax(1.0, list_cost));
    /* back on in: valid within the budgets, at the stage cost */
    xe_schedule back;
    xe_schedule_init(&back);
    assert_int_equal(xe_stages_to_schedule(ri, &st, &back, &err), XE_OK);
    xe_schedule_unrestage(&back, map);
    for (int k = 0; k < back.len; k++) assert_true(back.ev[k].node >= 0 && back.ev[k].node < n);
    xe_sim_result sr;
    if (xe_sim_run(in, &back, &sr, &err) != XE_OK) print_error("replay: %s\n", err.msg);
    assert_int_equal(sr.bad_event, -1);
    assert_true(fabs(sr.total_time - c) <= 1e-9 * fmax(1.0, c));
    for (int d = 0; d < in->ndev; d++) assert_true(sr.dev[d].peak <= in->dev[d].budget);
    xe_schedule_clear(&back);
    xe_stages_clear(&st);
    free(map);
    xe_instance_free(ri);
    return c;
}

static double restage_checked(const xe_instance *in, const xe_schedule *s, double list_cost)
{
    return restage_checked_n(in, s, list_cost, NULL);
}

/* a0 (10 B) -> a1 (1 B); b0 (10 B) -> b1 (1 B); j (1 B) reads a1 and b1 (nodes n0..n4 in
 * index order a0 b0 a1 b1 j); every node 1 s; one device, budget 100 B. */
static xe_instance *two_chains(void)
{
    static const int64_t mem[5] = {10, 10, 1, 1, 1};
    static const double cost[5] = {1, 1, 1, 1, 1};
    static const int edges[] = {0, 2, 1, 3, 2, 4, 3, 4, -1};
    xe_instance *in = xe_test_array_instance(5, mem, cost, edges, 1);
    in->dev[0].budget = 100;
    return in;
}

/* s = the (kind, node) pairs ev[0..n) on device 0, replayed: valid at cost 8 s */
static void hand_list(const xe_instance *in, xe_schedule *s, const int (*ev)[2], size_t n)
{
    xe_schedule_clear(s);
    for (size_t k = 0; k < n; k++) assert_int_equal(xe_schedule_push(s, (xe_event_kind)ev[k][0], ev[k][1], 0, 0), XE_OK);
    xe_sim_result sr;
    xe_err err;
    assert_int_equal(xe_sim_run(in, s, &sr, &err), XE_OK);
    assert_true(sr.total_time == 8.0);
}

static void test_hand(void **state)
{
    (void)state;
    enum { A0, B0, A1, B1, J };
    xe_instance *in = two_chains();
    xe_schedule s;
    xe_schedule_init(&s);
    /* first computations b0 a0 a1 b1 j (new ids 0 1 2, then 4 and 5); between a1 and b1:
     * b0 again, a0 again (in order: 0 then 1), a0 freed and computed once more (id 1
     * after 1: the stage is cut by an empty node, id 3) */
    const int ev[][2] = {{XE_EV_COMPUTE, B0}, {XE_EV_COMPUTE, A0}, {XE_EV_COMPUTE, A1}, {XE_EV_FREE, A0},
                         {XE_EV_FREE, B0},    {XE_EV_COMPUTE, B0}, {XE_EV_COMPUTE, A0}, {XE_EV_FREE, A0},
                         {XE_EV_COMPUTE, A0}, {XE_EV_COMPUTE, B1}, {XE_EV_FREE, B0},    {XE_EV_FREE, A0},
                         {XE_EV_COMPUTE, J}};
    hand_list(in, &s, ev, sizeof ev / sizeof ev[0]);
    xe_err err;
    xe_instance *ri = NULL;
    int *map = NULL;
    xe_stages st;
    assert_int_equal(xe_instance_restage(in, &s, &ri, &map, &st, &err), XE_OK);
    assert_int_equal(ri->g->n, 6);
    const int want[6] = {B0, A0, A1, -1, B1, J};
    for (int k = 0; k < 6; k++) assert_int_equal(map[k], want[k]);
    /* the prune drops both recomputations of a0 (nothing reads them, nothing keeps
     * them): b0 a0 a1 | b0 | empty | b1 | j = 6 computes of 1 s */
    assert_true(xe_stages_cost(ri, &st) == 6.0);
    assert_int_equal(*xe_R(&st, 3, 0, 0), 1); /* b0 again in the empty node's stage */
    assert_int_equal(*xe_R(&st, 3, 1, 0), 0);
    assert_int_equal(*xe_S(&st, 4, 0, 0), 1); /* and kept for b1 */
    xe_stages_clear(&st);
    free(map);
    xe_instance_free(ri);
    assert_true(restage_checked(in, &s, 8.0) == 6.0);

    /* a checkpoint freed mid-stage before any step touched it: a1 is resident when the
     * stage of b1 begins (with b0's recomputation), freed after b0 and computed again
     * (from a0, recomputed) before j. A stage would hold a1 to its end; the prune drops
     * it from S instead, so no empty node is needed */
    const int ev2[][2] = {{XE_EV_COMPUTE, A0}, {XE_EV_COMPUTE, A1}, {XE_EV_FREE, A0},    {XE_EV_COMPUTE, B0},
                          {XE_EV_FREE, B0},    {XE_EV_COMPUTE, B0}, {XE_EV_FREE, A1},    {XE_EV_COMPUTE, B1},
                          {XE_EV_FREE, B0},    {XE_EV_COMPUTE, A0}, {XE_EV_COMPUTE, A1}, {XE_EV_FREE, A0},
                          {XE_EV_COMPUTE, J}};
    hand_list(in, &s, ev2, sizeof ev2 / sizeof ev2[0]);
    assert_int_equal(xe_instance_restage(in, &s, &ri, &map, &st, &err), XE_OK);
    assert_int_equal(ri->g->n, 5);
    const int want2[5] = {A0, A1, B0, B1, J};
    for (int k = 0; k < 5; k++) assert_int_equal(map[k], want2[k]);
    assert_int_equal(*xe_R(&st, 3, 2, 0), 1); /* b0 again in b1's stage */
    assert_int_equal(*xe_S(&st, 3, 1, 0), 0); /* a1 not held there */
    xe_stages unpruned;
    xe_schedule relabelled;
    xe_schedule_init(&relabelled);
    for (int k = 0; k < s.len; k++) { /* the list in the restaged ids */
        int v = s.ev[k].node, id = 0;
        while (map[id] != v) id++;
        assert_int_equal(xe_schedule_push(&relabelled, s.ev[k].kind, id, 0, 0), XE_OK);
    }
    /* unpruned, the stage holds a1 to its end (beside b0 and b1) */
    assert_int_equal(xe_stages_from_schedule(ri, &relabelled, &unpruned, &err), XE_OK);
    assert_int_equal(*xe_S(&unpruned, 3, 1, 0), 1);
    xe_stages_clear(&unpruned);
    assert_int_equal(xe_stages_from_schedule_ex(ri, &relabelled, 1, &unpruned, &err), XE_OK);
    assert_int_equal(*xe_S(&unpruned, 3, 1, 0), 0);
    xe_stages_clear(&unpruned);
    xe_schedule_clear(&relabelled);
    xe_stages_clear(&st);
    free(map);
    xe_instance_free(ri);
    assert_true(restage_checked(in, &s, 8.0) == 8.0);

    /* a compute without its input resident: not a valid list */
    xe_schedule_clear(&s);
    assert_int_equal(xe_schedule_push(&s, XE_EV_COMPUTE, A1, 0, 0), XE_OK);
    assert_int_equal(xe_instance_restage(in, &s, &ri, &map, &st, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "restage: "));
    assert_null(st.R);

    /* a copy: not restaged, nothing returned */
    xe_schedule_clear(&s);
    assert_int_equal(xe_schedule_push(&s, XE_EV_COMPUTE, A0, 0, 0), XE_OK);
    assert_int_equal(xe_schedule_push(&s, XE_EV_COPY, A0, 0, 0), XE_OK);
    ri = (xe_instance *)&err; /* overwritten with NULL */
    assert_int_equal(xe_instance_restage(in, &s, &ri, &map, &st, &err), XE_EUNSUPPORTED);
    assert_null(ri);
    assert_null(map);
    assert_non_null(strstr(err.msg, "copy"));
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

static void test_brute_optima(void **state)
{
    (void)state;
    int done = 0, cut = 0;
    for (uint64_t seed = 1; done < 300 && seed < 5000; seed++) {
        int n = 2 + (int)(seed % 7);
        xe_instance *in = xe_test_random_instance(seed, n, 1, 0);
        assert_non_null(in);
        double opt;
        xe_schedule s;
        xe_schedule_init(&s);
        xe_err err;
        int rc = xe_bf_event_solve(in, &opt, &s, &err);
        if (rc == XE_OK) {
            int nodes = 0;
            double c = restage_checked_n(in, &s, opt, &nodes);
            cut += nodes > n;
            assert_true(fabs(c - opt) <= 1e-9 * fmax(1.0, opt));
            done++;
        } else {
            assert_int_equal(rc, XE_EINFEASIBLE);
        }
        xe_schedule_clear(&s);
        xe_instance_free(in);
    }
    print_message("%d brute-force optima restaged at their cost, %d of them with empty nodes\n", done, cut);
    assert_int_equal(done, 300);
}

/* Random valid event lists: on seeded random instances (tests/support/randinst.h, 1 or
 * 2 devices, budgets from tight to loose), a random walk of frees and computes (a node
 * on a device that can run it, with its inputs resident there), kept when it computes
 * every node and the simulator accepts it. Every one restages (restage_checked). */
static void test_random_lists(void **state)
{
    (void)state;
    int done = 0, cut = 0;
    for (uint64_t seed = 1; done < 500 && seed < 20000; seed++) {
        uint64_t r = seed * 0x9E3779B97F4A7C15ull;
        int n = 2 + (int)(xe_splitmix64(&r) % 11), D = 1 + (int)(xe_splitmix64(&r) % 2);
        xe_instance *in = xe_test_random_instance(seed, n, D, 0);
        assert_non_null(in);
        const xe_graph *g = in->g;
        uint8_t res[2 * 16] = {0}, computed[16] = {0};
        int ncomputed = 0;
        xe_schedule s;
        xe_schedule_init(&s);
        for (int step = 0; step < 400 && ncomputed < n; step++) {
            int v = (int)(xe_splitmix64(&r) % (uint64_t)n), d = (int)(xe_splitmix64(&r) % (uint64_t)D);
            if (xe_splitmix64(&r) % 10 < 4) { /* free */
                if (res[v * D + d]) {
                    res[v * D + d] = 0;
                    assert_int_equal(xe_schedule_push(&s, XE_EV_FREE, v, d, 0), XE_OK);
                }
                continue;
            }
            int ready = !res[v * D + d] && xe_can_run(in, v, d);
            for (int j = g->pred_off[v]; ready && j < g->pred_off[v + 1]; j++) ready = res[g->pred[j] * D + d];
            if (!ready) continue;
            assert_int_equal(xe_schedule_push(&s, XE_EV_COMPUTE, v, d, 0), XE_OK);
            res[v * D + d] = 1;
            ncomputed += !computed[v];
            computed[v] = 1;
        }
        xe_sim_result sr;
        xe_err err;
        if (ncomputed == n && xe_sim_run(in, &s, &sr, &err) == XE_OK) {
            int nodes = 0;
            restage_checked_n(in, &s, sr.total_time, &nodes);
            cut += nodes > n;
            done++;
        }
        xe_schedule_clear(&s);
        xe_instance_free(in);
    }
    print_message("%d random valid lists restaged, %d of them with empty nodes\n", done, cut);
    assert_int_equal(done, 500);
    assert_true(cut >= 100);
}

static void test_pebble_schedules(void **state)
{
    (void)state;
    int done = 0, cut = 0, refined = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        int n = 12 + (int)(seed % 19);
        xe_instance *in = xe_test_random_dag(seed, n, 0.15, 0.1 * (double)(seed % 8));
        assert_non_null(in);
        xe_pebble *p = xe_pebble_new(in->g, 0);
        assert_non_null(p);
        xe_schedule s;
        xe_schedule_init(&s);
        xe_pebble_answer a;
        xe_pebble_stats ps;
        xe_err err;
        assert_int_equal(xe_pebble_schedule(p, in, 0, xe_now() + 0.2, &s, &a, NULL, &ps, &err), XE_OK);
        if (a == XE_PEBBLE_YES) {
            int nodes = 0;
            restage_checked_n(in, &s, ps.cost, &nodes);
            cut += nodes > n;
            /* the planner's refinement (restage, improve, map back): no dearer, valid */
            double secs = 0.25;
            double rc2 = xe_plan_refine_events(&secs, in, &s, ps.cost);
            assert_true(rc2 >= 0 && rc2 <= ps.cost + 1e-9 * ps.cost);
            xe_sim_result sr;
            assert_int_equal(xe_sim_run(in, &s, &sr, &err), XE_OK);
            assert_true(fabs(sr.total_time - rc2) <= 1e-9 * fmax(1.0, rc2));
            assert_true(sr.dev[0].peak <= in->dev[0].budget);
            refined += rc2 < ps.cost;
            done++;
        }
        xe_schedule_clear(&s);
        xe_pebble_free(p);
        xe_instance_free(in);
    }
    print_message("%d exact-search schedules restaged, %d of them with empty nodes, %d cheaper once refined\n", done,
                  cut, refined);
    assert_true(done >= 40);
    assert_true(cut >= 1);
}

static void test_plan_shared(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n100.json", "gpu", 0.55);
    if (!in) skip();
    xe_err err;
    /* the search's cheapest candidate as it is (no refinement), with the time the plan's
     * search gets below (a tenth of 60 s) */
    xe_pebble *p = xe_pebble_new(in->g, 0);
    assert_non_null(p);
    xe_schedule raw;
    xe_schedule_init(&raw);
    xe_pebble_answer a;
    xe_pebble_stats ps;
    assert_int_equal(xe_pebble_schedule(p, in, 0, xe_now() + 6, &raw, &a, NULL, &ps, &err), XE_OK);
    assert_int_equal(a, XE_PEBBLE_YES);
    xe_pebble_free(p);
    xe_schedule_clear(&raw);

    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.mode = XE_PLAN_HEURISTIC;
    o.time_limit = 60;
    xe_plan_result r;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    int peb = -1, rl = -1;
    for (int k = 0; k < r.nrows; k++) {
        if (!strcmp(r.rows[k].method, "pebbling")) peb = k;
        if (!strcmp(r.rows[k].method, "restaged")) rl = k;
    }
    assert_true(peb >= 0 && isfinite(r.rows[peb].objective));
    assert_true(rl > peb);
    assert_null(r.sol.R);
    assert_true(r.events.len > 0);
    assert_true(r.objective <= r.rows[peb].objective);
    /* every candidate refined in stages: cheaper than the search's cheapest as it is */
    assert_true(r.objective < ps.cost);
    xe_sim_result sr;
    if (xe_sim_run(in, &r.events, &sr, &err) != XE_OK) print_error("%s\n", err.msg);
    assert_int_equal(sr.bad_event, -1);
    assert_true(fabs(sr.total_time - r.objective) <= 1e-9 * r.objective);
    assert_true(sr.dev[0].peak <= in->dev[0].budget);
    print_message("random_layered_n100 at 55%%: the search's cheapest candidate %.3f s; refined, %s %.3f s (%s)\n",
                  ps.cost, r.name, r.objective, r.rows[rl].status);
    xe_plan_result_clear(&r);
    xe_instance_free(in);
}

/* The exact search as a competitor where a stage schedule is in hand (plan.c, 1a'):
 * random_layered_n100 at 70% on one GPU, heuristic mode: the stage schedules (graph
 * order, low-peak orders) cost 50.517-51.184 s, the search's restaged and improved
 * schedule less (48.793 s in a Release build), valid in the simulator, its bound the
 * bottleneck bound (which holds for every schedule). */
static void test_plan_competitor(void **state)
{
    (void)state;
    xe_instance *in = xe_test_shared_instance("random_layered_n100.json", "gpu", 0.70);
    if (!in) skip();
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.mode = XE_PLAN_HEURISTIC;
    o.time_limit = 120; /* the search's share: 12 s, ample under ASan */
    xe_plan_result r;
    xe_err err;
    assert_int_equal(xe_plan(in, &o, &r, &err), XE_OK);
    double stage = INFINITY;
    int peb = -1;
    for (int k = 0; k < r.nrows; k++) {
        if (!strcmp(r.rows[k].method, "pebbling")) peb = k;
        else if (strcmp(r.rows[k].method, "restaged") && strcmp(r.rows[k].method, "anneal")) /* event lists */
            stage = fmin(stage, r.rows[k].objective);
    }
    assert_true(isfinite(stage));
    assert_true(peb >= 0);
    assert_true(r.events.len > 0);
    assert_int_equal(r.reordered, 0);
    assert_true(r.objective < stage);
    assert_true(r.bound <= xe_bound_bottleneck(in, INFINITY, NULL) + 1e-9);
    xe_sim_result sr;
    if (xe_sim_run(in, &r.events, &sr, &err) != XE_OK) print_error("%s\n", err.msg);
    assert_int_equal(sr.bad_event, -1);
    assert_true(fabs(sr.total_time - r.objective) <= 1e-9 * r.objective);
    assert_true(sr.dev[0].peak <= in->dev[0].budget);
    print_message("random_layered_n100 at 70%%: stage schedules from %.3f s, %s %.3f s, bound %.3f s\n", stage, r.name,
                  r.objective, r.bound);
    xe_plan_result_clear(&r);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_brute_optima),
        cmocka_unit_test(test_random_lists),
        cmocka_unit_test(test_pebble_schedules),
        cmocka_unit_test(test_plan_shared),
        cmocka_unit_test(test_plan_competitor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
