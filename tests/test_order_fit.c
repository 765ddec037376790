/* Fitting a topological order to a budget (xe_order_fit, xe_order_anneal,
 * xe_order_fit_within, include/xengine/reorder.h; docs/reorder.md, "Fitting an order to a
 * budget", "Annealing over orders") and the planner's fit-order phase:
 *   - the two-chains hand graph: 12 B is its least peak (found, peak 12), 11 B has no
 *     order (every set searched: XE_FIT_NONE);
 *   - 400 random DAGs of 3-9 nodes against every topological order enumerated
 *     (xe_order_peak of each): at the least peak an order is found, topological, with
 *     its peak reported and within the target, by the search and by the annealing; one
 *     byte below, none exists (the search: NONE; the annealing: cut); at a target drawn
 *     between the two, found;
 *   - the annealing on the hand graph (deterministic per seed, bad starts and negative
 *     targets refused) and with tensors so large that its excess needs coarser units
 *     (test_anneal_huge_tensors);
 *   - 40 random DAGs of 40-120 nodes and 6 of 350-600: at the list scheduling's peak (an
 *     order is known to fit) the search finds one, never NONE, and so do the annealing
 *     and the two together;
 *   - a stop flag already set cuts a large search (XE_FIT_CUT), the same search without
 *     it ends NONE after searching every set;
 *   - xe_plan on a random 300-node DAG, one device, budget at a low-peak order's peak
 *     below the index order's: row and result "fit-order", every node once (the sum of
 *     the costs), optimal, replayed valid by the simulator with no recomputation;
 *   - two devices, the second slower: the phase plans on the first (every node once there
 *     is the bound), and does not run where the second is cheaper for some node. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/arrays.h"
#include "support/randinst.h"
#include "support/valid.h"
#include "xengine/plan.h"
#include "xengine/reorder.h"
#include "xengine/sim.h"
#include "xengine/timer.h"

/* The least xe_order_peak over every topological order, by enumeration. */
static void enum_orders(const xe_graph *g, int *order, int k, int *used, int64_t *best)
{
    int n = g->n;
    if (k == n) {
        int64_t p = xe_order_peak(g, order);
        assert_true(p >= 0);
        if (p < *best) *best = p;
        return;
    }
    for (int v = 0; v < n; v++) {
        if (used[v]) continue;
        int ready = 1;
        for (int j = g->pred_off[v]; j < g->pred_off[v + 1] && ready; j++) ready = used[g->pred[j]];
        if (!ready) continue;
        used[v] = 1;
        order[k] = v;
        enum_orders(g, order, k + 1, used, best);
        used[v] = 0;
    }
}

static xe_order_fit_result fit(const xe_graph *g, int64_t target, int *order)
{
    xe_order_fit_result r;
    xe_err err;
    assert_int_equal(xe_order_fit(g, target, INFINITY, NULL, 0, order, &r, &err), XE_OK);
    if (r.status == XE_FIT_FOUND) {
        assert_true(xe_test_is_topological(g, order));
        assert_int_equal(xe_order_peak(g, order), r.peak);
        assert_true(r.peak <= target);
    }
    return r;
}

/* xe_order_anneal with a deadline `seconds` away (seed 1, no start unless given); a found
 * order is topological, its peak reported and within the target. */
static xe_order_fit_result anneal(const xe_graph *g, int64_t target, const int *start, uint64_t seed,
                                  double seconds, int *order)
{
    xe_order_fit_result r;
    xe_err err;
    assert_int_equal(xe_order_anneal(g, target, start, seed, xe_now() + seconds, NULL, order, &r, &err), XE_OK);
    assert_true(r.status == XE_FIT_FOUND || r.status == XE_FIT_CUT); /* never a proof of none */
    if (r.status == XE_FIT_FOUND) {
        assert_true(xe_test_is_topological(g, order));
        assert_int_equal(xe_order_peak(g, order), r.peak);
        assert_true(r.peak <= target);
    }
    return r;
}

/* a0 (10 B) -> a1 (1 B); b0 (10 B) -> b1 (1 B); j (1 B) reads a1, b1; 1 s each: index
 * order 21 B, chain by chain 12 B (tests/test_reorder.c test_peak_hand); ndev devices as
 * tests/support/arrays.h makes them. */
static xe_instance *two_chains(int ndev)
{
    static const int64_t mem[5] = {10, 10, 1, 1, 1};
    static const double cost[5] = {1, 1, 1, 1, 1};
    static const int edges[] = {0, 2, 1, 3, 2, 4, 3, 4, -1};
    xe_instance *in = xe_test_array_instance(5, mem, cost, edges, ndev);
    assert_non_null(in);
    return in;
}

static void test_hand(void **state)
{
    (void)state;
    xe_instance *in = two_chains(1);
    int order[5];
    xe_order_fit_result r = fit(in->g, 12, order);
    assert_int_equal(r.status, XE_FIT_FOUND);
    assert_int_equal(r.peak, 12);
    r = fit(in->g, 11, order);
    assert_int_equal(r.status, XE_FIT_NONE);
    xe_instance_free(in);
}

/* The random DAG of `seed` (3-9 nodes, three densities) of the enumeration tests, and
 * *least its least peak over every topological order. */
static xe_instance *small_dag(uint64_t seed, int64_t *least)
{
    int n = 3 + (int)(seed % 7);
    double p = seed % 3 == 0 ? 0.5 : seed % 3 == 1 ? 0.25 : 1.5 / n;
    xe_instance *in = xe_test_random_dag(seed, n, p, 1.0);
    assert_non_null(in);
    int order[16], used[16] = {0};
    *least = INT64_MAX;
    enum_orders(in->g, order, 0, used, least);
    return in;
}

static void test_vs_enumeration(void **state)
{
    (void)state;
    int cases = 0, none = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        int64_t least;
        xe_instance *in = small_dag(seed, &least);
        const xe_graph *g = in->g;
        int order[16];
        xe_order_fit_result r = fit(g, least, order);
        assert_int_equal(r.status, XE_FIT_FOUND);
        assert_int_equal(r.peak, least);
        r = fit(g, least - 1, order);
        assert_int_equal(r.status, XE_FIT_NONE);
        int64_t peak = xe_instance_norecompute_peak(g), mid = least + (int64_t)(seed * 7919 % (uint64_t)(peak - least + 1));
        r = fit(g, mid, order);
        assert_int_equal(r.status, XE_FIT_FOUND);
        /* the annealing, from the index order: the least peak too, never a false answer */
        r = anneal(g, least, NULL, seed, 30.0, order);
        assert_int_equal(r.status, XE_FIT_FOUND);
        assert_int_equal(r.peak, least);
        runs += (int)r.sets;
        if (seed % 40 == 0) assert_int_equal(anneal(g, least - 1, NULL, seed, 0.01, order).status, XE_FIT_CUT);
        cases++;
        none += least < peak;
        xe_instance_free(in);
    }
    print_message("fit and anneal vs enumeration: %d DAGs, the least peak below the index order's on %d; "
                  "the annealing's runs %d\n", cases, none, runs);
    assert_true(none > 0);
}

/* 40 random DAGs of 40-120 nodes and 6 of 350-600: at the list scheduling's peak (an
 * order is known to fit) the search finds one, never NONE; so do the annealing alone and
 * the two together (xe_order_fit_within), whose search share is enough there. */
static void test_list_order_fits(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 46; seed++) {
        int n = seed <= 40 ? 40 + (int)(seed * 13 % 81) : 300 + (int)((seed - 40) * 50);
        xe_instance *in = xe_test_random_dag(seed, n, 3.0 / n, 1.0);
        assert_non_null(in);
        int *order = malloc((size_t)n * sizeof *order);
        assert_non_null(order);
        int64_t lp;
        xe_err err;
        assert_int_equal(xe_order_low_peak(in->g, seed, 20, INFINITY, order, &lp, &err), XE_OK);
        xe_order_fit_result r = fit(in->g, lp, order);
        assert_int_equal(r.status, XE_FIT_FOUND);
        r = anneal(in->g, lp, NULL, seed, 60.0, order);
        assert_int_equal(r.status, XE_FIT_FOUND);
        int annealed = -1;
        assert_int_equal(xe_order_fit_within(in->g, lp, 60.0, NULL, order, &r, &annealed, &err), XE_OK);
        assert_int_equal(r.status, XE_FIT_FOUND);
        assert_true(xe_test_is_topological(in->g, order) && xe_order_peak(in->g, order) <= lp);
        assert_int_equal(annealed, 0); /* the search found it within its share */
        free(order);
        xe_instance_free(in);
    }
}

/* k sources of 1 B, all read by one sink of 1 B: the sink needs k + 1 B, so with a target
 * of k every subset of the sources is a set to search (2^k), and none completes. */
static xe_instance *star(int k)
{
    int n = k + 1;
    int64_t *mem = malloc((size_t)n * sizeof *mem);
    double *cost = malloc((size_t)n * sizeof *cost);
    int *edges = malloc(((size_t)2 * k + 1) * sizeof *edges);
    assert_true(mem && cost && edges);
    for (int v = 0; v < n; v++) mem[v] = 1, cost[v] = 1;
    for (int v = 0; v < k; v++) edges[2 * v] = v, edges[2 * v + 1] = k;
    edges[2 * k] = -1;
    xe_instance *in = xe_test_array_instance(n, mem, cost, edges, 1);
    free(mem), free(cost), free(edges);
    assert_non_null(in);
    return in;
}

static void test_stop_flag(void **state)
{
    (void)state;
    xe_instance *in = star(12);
    int order[13];
    xe_order_fit_result r;
    xe_err err;
    volatile sig_atomic_t stop = 1;
    assert_int_equal(xe_order_fit(in->g, 12, INFINITY, &stop, 0, order, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_FIT_CUT);
    assert_true(r.sets < 4096);
    stop = 0;
    assert_int_equal(xe_order_fit(in->g, 12, INFINITY, &stop, 0, order, &r, &err), XE_OK);
    assert_int_equal(r.status, XE_FIT_NONE);
    assert_int_equal(r.sets, 4096); /* every subset of the 12 sources, the full one too (12 B) */
    r = fit(in->g, 13, order);
    assert_int_equal(r.status, XE_FIT_FOUND);
    xe_instance_free(in);
}

/* The two-chains graph: the annealing finds its least peak, 12 B, from the index order
 * (21 B); at 11 B, where no order fits, it runs to its deadline and says CUT; the same
 * seed gives the same order; a start that is not topological, or a negative target (a
 * review's UBSan abort at INT64_MIN), is refused; a start that fits comes back with no
 * move. xe_order_fit_within: NONE at 10 B at once (below a1's
 * footprint), 12 B found by the search alone. */
static void test_anneal_hand(void **state)
{
    (void)state;
    xe_instance *in = two_chains(1);
    int order[5], again[5];
    xe_order_fit_result r = anneal(in->g, 12, NULL, 1, 10.0, order);
    assert_int_equal(r.status, XE_FIT_FOUND);
    assert_int_equal(r.peak, 12);
    assert_true(r.states > 0);
    r = anneal(in->g, 12, NULL, 1, 10.0, again);
    assert_memory_equal(order, again, sizeof order);
    double t0 = xe_now();
    r = anneal(in->g, 11, NULL, 1, 0.05, order);
    assert_int_equal(r.status, XE_FIT_CUT);
    assert_true(xe_now() - t0 >= 0.05 && r.states > 0);
    int bad[5] = {2, 0, 1, 3, 4}; /* a1 before its input a0 */
    xe_err err;
    assert_int_equal(xe_order_anneal(in->g, 12, bad, 1, INFINITY, NULL, order, &r, &err), XE_EINVAL);
    assert_int_equal(xe_order_anneal(in->g, -1, NULL, 1, INFINITY, NULL, order, &r, &err), XE_EINVAL);
    assert_int_equal(xe_order_anneal(in->g, INT64_MIN, NULL, 1, INFINITY, NULL, order, &r, &err), XE_EINVAL);
    int annealed = -1;
    assert_int_equal(xe_order_fit_within(in->g, 10, 10.0, NULL, order, &r, &annealed, &err), XE_OK);
    assert_int_equal(r.status, XE_FIT_NONE); /* a1 with its input a0 needs 11 B in every order */
    assert_true(r.sets == 0 && r.states == 0 && annealed == 0);
    assert_int_equal(xe_order_fit_within(in->g, 12, 10.0, NULL, order, &r, &annealed, &err), XE_OK);
    assert_true(r.status == XE_FIT_FOUND && r.peak == 12 && annealed == 0); /* the search's, in microseconds */
    int good[5] = {0, 2, 1, 3, 4}; /* chain by chain: already fits */
    r = anneal(in->g, 12, good, 1, 10.0, order);
    assert_int_equal(r.status, XE_FIT_FOUND);
    assert_memory_equal(order, good, sizeof good);
    assert_int_equal(r.states, 0); /* no move needed */
    xe_instance_free(in);
}

/* Tensors so large that the excess summed over the positions passes int64: m = 2,500
 * pairs a_i (M bytes) -> b_i (1 B), every b_i read by a last node j, M = 2^53 / (m + 1)
 * (the graph's total near XE_MAX_BYTES). The index order computes every a first, so its
 * k-th compute holds about k M: over a target of M + m + 1 (a_i b_i pair by pair fits
 * it, the b's held to the end) its excess sums to about m^2 M / 2 = 2^63.3. The
 * annealing counts the excess in units of 2^5 bytes there (in bytes the sum overflowed:
 * under UBSan this test aborted) and ends on the count of positions over the target:
 * 0.3 s from the index order end cut (the a's are interchangeable, so most moves change
 * nothing: a plateau this local search does not cross in minutes) with no false
 * answer, and from the pairwise order it is found at once, with no move. */
static void test_anneal_huge_tensors(void **state)
{
    (void)state;
    int m = 2500, n = 2 * m + 1;
    int64_t *mem = malloc((size_t)n * sizeof *mem);
    double *cost = malloc((size_t)n * sizeof *cost);
    int *edges = malloc(((size_t)4 * m + 1) * sizeof *edges);
    int *order = malloc((size_t)n * sizeof *order);
    assert_true(mem && cost && edges && order);
    int64_t M = XE_MAX_BYTES / (m + 1);
    for (int i = 0; i < m; i++) {
        mem[i] = M, mem[m + i] = 1;
        edges[4 * i] = i, edges[4 * i + 1] = m + i;         /* a_i -> b_i */
        edges[4 * i + 2] = m + i, edges[4 * i + 3] = 2 * m; /* b_i -> j */
    }
    mem[2 * m] = 1;
    edges[4 * m] = -1;
    for (int v = 0; v < n; v++) cost[v] = 1;
    xe_instance *in = xe_test_array_instance(n, mem, cost, edges, 1);
    assert_non_null(in);
    int64_t target = M + m + 1;
    assert_true((double)m * m * (double)M / 2 > 9.3e18); /* the index order's excess passes INT64_MAX */
    xe_order_fit_result r = anneal(in->g, target, NULL, 1, 0.3, order); /* checks a found order */
    assert_true(r.states > 0);
    int *pairs = malloc((size_t)n * sizeof *pairs);
    assert_non_null(pairs);
    for (int i = 0; i < m; i++) pairs[2 * i] = i, pairs[2 * i + 1] = m + i;
    pairs[2 * m] = 2 * m;
    r = anneal(in->g, target, pairs, 1, 10.0, order);
    assert_int_equal(r.status, XE_FIT_FOUND);
    assert_int_equal(r.states, 0);
    assert_int_equal(r.peak, M + m); /* at j: the m b's and j; at b_i: a_i, b_i and i earlier b's */
    free(pairs);
    free(mem), free(cost), free(edges), free(order);
    xe_instance_free(in);
}

static void test_plan_fit_order(void **state)
{
    (void)state;
    int found = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        int n = 300;
        xe_instance *in = xe_test_random_dag(seed, n, 3.0 / n, 1.0);
        assert_non_null(in);
        int *order = malloc((size_t)n * sizeof *order);
        assert_non_null(order);
        int64_t lp;
        xe_err err;
        assert_int_equal(xe_order_low_peak(in->g, seed, 20, INFINITY, order, &lp, &err), XE_OK);
        free(order);
        if (lp >= xe_instance_norecompute_peak(in->g)) {
            xe_instance_free(in);
            continue;
        }
        in->dev[0].budget = lp;
        double once = 0;
        for (int v = 0; v < n; v++) once += in->cost[v];
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.mode = XE_PLAN_AUTO;
        o.time_limit = 20;
        xe_plan_result res;
        assert_int_equal(xe_plan(in, &o, &res, &err), XE_OK);
        assert_string_equal(res.name, "fit-order");
        assert_true(res.fit_order);
        assert_true(res.optimal);
        assert_true(fabs(res.objective - once) <= 1e-9 * once);
        assert_true(fabs(res.bound - once) <= 1e-9 * once);
        int row = 0;
        for (int k = 0; k < res.nrows; k++) row |= !strcmp(res.rows[k].method, "fit-order");
        assert_true(row);
        xe_sim_result sr;
        assert_int_equal(xe_sim_run(in, &res.events, &sr, &err), XE_OK);
        assert_int_equal(sr.bad_event, -1);
        assert_int_equal(sr.recomputes, 0);
        assert_true(fabs(sr.total_time - once) <= 1e-9 * once);
        assert_true(sr.dev[0].peak <= lp);
        found++;
        xe_plan_result_clear(&res);
        xe_instance_free(in);
    }
    assert_true(found >= 3);
}

/* Two devices (tests/support/arrays.c: the second runs every node 8x slower, copies 0.5 s):
 * the two-chains graph with 12 B on the first device (its least peak; the index order
 * needs 21 B) and room on the second. Every node once on the first is the bound over every
 * schedule, so the fit-order phase answers: 5 s, optimal, valid in the simulator, nothing
 * on the second device. Where the second device runs one node cheaper, no device runs
 * every node at its cheapest and the phase does not run (no row). */
static void test_plan_fit_two_devices(void **state)
{
    (void)state;
    xe_instance *in = two_chains(2);
    in->dev[0].budget = 12;
    in->dev[1].budget = 100;
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.time_limit = 10;
    xe_plan_result res;
    xe_err err;
    assert_int_equal(xe_plan(in, &o, &res, &err), XE_OK);
    assert_string_equal(res.name, "fit-order");
    assert_true(res.optimal && fabs(res.objective - 5.0) < 1e-12 && fabs(res.bound - 5.0) < 1e-12);
    xe_sim_result sr;
    assert_int_equal(xe_sim_run(in, &res.events, &sr, &err), XE_OK);
    assert_int_equal(sr.recomputes, 0);
    assert_int_equal(sr.copies, 0);
    assert_true(sr.dev[0].peak <= 12 && sr.dev[1].peak == 0);
    xe_plan_result_clear(&res);
    in->cost[1 * 2 + 1] = 0.5; /* node b0 cheaper on the second device */
    assert_int_equal(xe_plan(in, &o, &res, &err), XE_OK);
    for (int k = 0; k < res.nrows; k++) assert_string_not_equal(res.rows[k].method, "fit-order");
    assert_false(res.fit_order);
    xe_plan_result_clear(&res);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_vs_enumeration),
        cmocka_unit_test(test_list_order_fits),
        cmocka_unit_test(test_stop_flag),
        cmocka_unit_test(test_anneal_hand),
        cmocka_unit_test(test_anneal_huge_tensors),
        cmocka_unit_test(test_plan_fit_order),
        cmocka_unit_test(test_plan_fit_two_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
