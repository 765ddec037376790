/* Tests of the independent simulator (src/sim/): valid schedules with hand-computed
 * peaks, times and makespans, and every kind of invalid event. Graphs are built in code.
 * Only graph.h / instance.h / schedule.h / sim.h are used (no formulation code). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "xengine/graph.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

enum { CPU = 0, GPU = 1 };

/* Builds a finalized graph: node i named names[i] with mem[i] bytes; edges (src[k], dst[k]).
 * Instance with ndev devices: dev 0 "cpu" (or "gpu" when ndev == 1), dev 1 "gpu";
 * cost[v * ndev + d] seconds; budgets given; every copy costs copy_cost[v] seconds. */
static xe_instance *build(int n, const char *const *names, const int64_t *mem, int m,
                          const int *src, const int *dst, int ndev, const double *cost,
                          const int64_t *budget, const double *copy_cost)
{
    xe_err err = {{0}};
    xe_graph *g = xe_graph_new("t");
    assert_non_null(g);
    for (int v = 0; v < n; v++)
        assert_int_equal(xe_graph_add_node(g, names[v], NULL, 0, mem[v], 0, 1.0, &err), v);
    for (int k = 0; k < m; k++) assert_int_equal(xe_graph_add_edge(g, src[k], dst[k], &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, ndev);
    assert_non_null(in);
    for (int d = 0; d < ndev; d++) {
        snprintf(in->dev[d].name, sizeof in->dev[d].name, "%s",
                 ndev == 1 ? "gpu" : (d == CPU ? "cpu" : "gpu"));
        in->dev[d].kind = (ndev == 1 || d == GPU) ? XE_DEV_GPU : XE_DEV_CPU;
        in->dev[d].budget = budget[d];
    }
    for (int v = 0; v < n; v++)
        for (int d = 0; d < ndev; d++) {
            in->cost[v * ndev + d] = cost[v * ndev + d];
            for (int e = 0; e < ndev; e++)
                in->copy[(v * ndev + d) * ndev + e] = d == e ? 0.0 : copy_cost[v];
        }
    return in;
}

static void push(xe_schedule *s, xe_event_kind k, int v, int d, int e)
{
    assert_int_equal(xe_schedule_push(s, k, v, d, e), XE_OK);
}
#define COMPUTE(s, v, d) push((s), XE_EV_COMPUTE, (v), (d), -1)
#define FREE(s, v, d) push((s), XE_EV_FREE, (v), (d), -1)
#define COPY(s, v, d, e) push((s), XE_EV_COPY, (v), (d), (e))

/* Runs the simulator expecting XE_EINVAL at event `bad` with `needle` in the message. */
static void expect_invalid(const xe_instance *in, const xe_schedule *s, int bad,
                           const char *needle, xe_sim_result *res)
{
    xe_err err = {{0}};
    int rc = xe_sim_run(in, s, res, &err);
    if (rc != XE_EINVAL || res->bad_event != bad || !strstr(err.msg, needle))
        print_error("rc %d bad_event %d msg \"%s\"; wanted bad_event %d and \"%s\"\n", rc,
                    res->bad_event, err.msg, bad, needle);
    assert_int_equal(rc, XE_EINVAL);
    assert_int_equal(res->bad_event, bad);
    assert_non_null(strstr(err.msg, needle));
    assert_null(strchr(err.msg, '\n'));
}

/* ---- Chain a -> b -> c on one device ---------------------------------------------- */
/* mem a = 100, b = 200, c = 50 bytes; cost a = 1, b = 2, c = 3 s. */
static const char *const chain_names[] = {"a", "b", "c"};
static const int64_t chain_mem[] = {100, 200, 50};
static const int chain_src[] = {0, 1}, chain_dst[] = {1, 2};
static const double chain_cost[] = {1, 2, 3};
static const double chain_copy[] = {0, 0, 0};

static xe_instance *chain(int64_t budget)
{
    int64_t b[] = {budget};
    return build(3, chain_names, chain_mem, 2, chain_src, chain_dst, 1, chain_cost, b,
                 chain_copy);
}

static void chain_once(xe_schedule *s)
{
    COMPUTE(s, 0, 0); /* a: resident {a} = 100                                    */
    COMPUTE(s, 1, 0); /* b: during the compute a + b = 100 + 200 = 300 (the peak)   */
    FREE(s, 0, 0);    /* {b} = 200                                                  */
    COMPUTE(s, 2, 0); /* c: b + c = 200 + 50 = 250                                  */
    FREE(s, 1, 0);    /* {c} = 50                                                   */
    FREE(s, 2, 0);    /* {} = 0                                                     */
}

static void test_chain_once(void **state)
{
    (void)state;
    xe_instance *in = chain(1000);
    xe_schedule s;
    xe_schedule_init(&s);
    chain_once(&s);
    xe_sim_result res;
    xe_err err = {{0}};
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_OK);
    assert_int_equal(res.bad_event, -1);
    assert_int_equal(res.ndev, 1);
    assert_int_equal(res.dev[0].peak, 300);
    /* 1 + 2 + 3 = 6 s serially; one compute stream, each compute waits for the previous
     * one, so the makespan is also 6. */
    assert_float_equal(res.total_time, 6.0, 1e-12);
    assert_float_equal(res.dev[0].compute_time, 6.0, 1e-12);
    assert_float_equal(res.makespan, 6.0, 1e-12);
    assert_float_equal(res.dev[0].copy_in_time, 0.0, 0);
    assert_int_equal(res.computes, 3);
    assert_int_equal(res.dev[0].computes, 3);
    assert_int_equal(res.recomputes, 0);
    assert_int_equal(res.copies, 0);
    assert_int_equal(res.frees, 3);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* The budget is inclusive: exactly the peak (300) is valid, 299 fails on compute b. */
static void test_chain_budget_boundary(void **state)
{
    (void)state;
    xe_schedule s;
    xe_schedule_init(&s);
    chain_once(&s);
    xe_sim_result res;
    xe_err err = {{0}};
    xe_instance *in = chain(300);
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_OK);
    assert_int_equal(res.dev[0].peak, 300);
    xe_instance_free(in);

    in = chain(299);
    expect_invalid(in, &s, 1, "memory on gpu would be 300 bytes, budget 299", &res);
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_EINVAL);
    assert_string_equal(err.msg,
                        "event 1 (compute b on gpu): memory on gpu would be 300 bytes, budget 299");
    /* Filled as far as the replay got: only compute a (cost 1) was applied. */
    assert_int_equal(res.computes, 1);
    assert_int_equal(res.dev[0].peak, 100);
    assert_float_equal(res.total_time, 1.0, 1e-12);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* ---- Recomputation: a -> b -> c, d reads a and c ------------------------------------ */
/* mem 100 each, budget 300; cost a = 1, b = 2, c = 3, d = 4 s. */
static xe_instance *diamond(void)
{
    static const char *const names[] = {"a", "b", "c", "d"};
    static const int64_t mem[] = {100, 100, 100, 100};
    static const int src[] = {0, 1, 0, 2}, dst[] = {1, 2, 3, 3};
    static const double cost[] = {1, 2, 3, 4};
    static const double copy[] = {0, 0, 0, 0};
    static const int64_t budget[] = {300};
    return build(4, names, mem, 4, src, dst, 1, cost, budget, copy);
}

static void test_recompute(void **state)
{
    (void)state;
    xe_instance *in = diamond();
    xe_schedule s;
    xe_schedule_init(&s);
    COMPUTE(&s, 0, 0); /* a        {a}       100 */
    COMPUTE(&s, 1, 0); /* b        {a,b}     200 */
    FREE(&s, 0, 0);    /*          {b}       100 */
    COMPUTE(&s, 2, 0); /* c        {b,c}     200 */
    FREE(&s, 1, 0);    /*          {c}       100 */
    COMPUTE(&s, 0, 0); /* a again  {c,a}     200 -- the recomputation */
    COMPUTE(&s, 3, 0); /* d        {c,a,d}   300 -- the peak, = budget */
    FREE(&s, 0, 0);
    FREE(&s, 2, 0);
    xe_sim_result res;
    xe_err err = {{0}};
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_OK);
    assert_int_equal(res.dev[0].peak, 300);
    assert_int_equal(res.computes, 5);
    assert_int_equal(res.recomputes, 1);
    assert_int_equal(res.dev[0].recomputes, 1);
    assert_int_equal(res.frees, 4);
    /* a + b + c + a + d = 1 + 2 + 3 + 1 + 4 = 11 s, the recomputation included. */
    assert_float_equal(res.total_time, 11.0, 1e-12);
    assert_float_equal(res.makespan, 11.0, 1e-12);

    /* Recomputing a while it is still resident is an error, not a silent no-op:
     * compute a, compute a. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, 0);
    COMPUTE(&s, 0, 0);
    expect_invalid(in, &s, 1, "a is already resident on gpu", &res);

    /* Freeing a after its last use and then needing it: d's input a is gone. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, 0);
    COMPUTE(&s, 1, 0);
    FREE(&s, 0, 0);
    COMPUTE(&s, 2, 0);
    COMPUTE(&s, 3, 0);
    expect_invalid(in, &s, 4, "event 4 (compute d on gpu): input a is not resident on gpu", &res);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* ---- Two devices: cpu (0) and gpu (1) ---------------------------------------------- */
/* a (100 B) -> b (50 B), a -> c (30 B), b -> d, c -> d (d 10 B).
 * cost[v][cpu], cost[v][gpu]: a 8/2, b 6/3, c 4/2, d -/2 (the cpu cannot run d).
 * copy cost (either direction): a 5, b 5, c 1, d 1. Budgets: cpu 1000, gpu 150. */
static xe_instance *two_dev(int64_t cpu_budget)
{
    static const char *const names[] = {"a", "b", "c", "d"};
    static const int64_t mem[] = {100, 50, 30, 10};
    static const int src[] = {0, 0, 1, 2}, dst[] = {1, 2, 3, 3};
    static const double cost[] = {8, 2, 6, 3, 4, 2, XE_NO_COST, 2};
    static const double copy[] = {5, 5, 1, 1};
    int64_t budget[] = {cpu_budget, 150};
    return build(4, names, mem, 4, src, dst, 2, cost, budget, copy);
}

static void test_two_devices(void **state)
{
    (void)state;
    xe_instance *in = two_dev(1000);
    xe_schedule s;
    xe_schedule_init(&s);
    /* Timing (docs/simulator.md), start = max(stream free, inputs ready):
     * 0 compute a on gpu     gpu stream      0 ..  2   gpu {a} 100
     * 1 copy a gpu -> cpu    gpu->cpu stream 2 ..  7   cpu {a} 100
     * 2 compute b on gpu     gpu stream      2 ..  5   gpu {a,b} 150 (gpu peak, = budget)
     *   (overlaps the copy: the serial order would start it at 7)
     * 3 free a on gpu        after its readers (copy ends 7, b ends 5): at 7; gpu {b} 50
     * 4 compute c on cpu     cpu stream; a ready on cpu at 7:  7 .. 11   cpu {a,c} 130
     * 5 free a on cpu                                            cpu {c} 30
     * 6 copy c cpu -> gpu    cpu->gpu stream; c ready at 11:  11 .. 12   gpu {b,c} 80
     * 7 compute d on gpu     gpu stream free at 5; b ready 5, c ready 12: 12 .. 14
     *                                                            gpu {b,c,d} 90
     * makespan 14; serial total 2 + 5 + 3 + 4 + 1 + 2 = 17. */
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, GPU, CPU);
    COMPUTE(&s, 1, GPU);
    FREE(&s, 0, GPU);
    COMPUTE(&s, 2, CPU);
    FREE(&s, 0, CPU);
    COPY(&s, 2, CPU, GPU);
    COMPUTE(&s, 3, GPU);
    xe_sim_result res;
    xe_err err = {{0}};
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_OK);
    assert_int_equal(res.ndev, 2);
    assert_int_equal(res.dev[GPU].peak, 150);
    assert_int_equal(res.dev[CPU].peak, 130);
    assert_float_equal(res.total_time, 17.0, 1e-12);
    assert_float_equal(res.makespan, 14.0, 1e-12);
    /* gpu computes a, b, d: 2 + 3 + 2 = 7 s; copy in c: 1 s. cpu computes c: 4 s;
     * copy in a: 5 s. */
    assert_float_equal(res.dev[GPU].compute_time, 7.0, 1e-12);
    assert_float_equal(res.dev[GPU].copy_in_time, 1.0, 1e-12);
    assert_float_equal(res.dev[CPU].compute_time, 4.0, 1e-12);
    assert_float_equal(res.dev[CPU].copy_in_time, 5.0, 1e-12);
    assert_int_equal(res.dev[GPU].computes, 3);
    assert_int_equal(res.dev[CPU].computes, 1);
    assert_int_equal(res.dev[GPU].copies_in, 1);
    assert_int_equal(res.dev[CPU].copies_in, 1);
    assert_int_equal(res.copies, 2);
    assert_int_equal(res.frees, 2);
    assert_int_equal(res.recomputes, 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* A tensor slot is not rewritten while a copy still reads it (docs/simulator.md):
 *   compute a on gpu     0 ..  2
 *   copy a gpu -> cpu    2 ..  7
 *   free a on gpu        after its reader, the copy: released at 7
 *   compute a on gpu     gpu stream free at 2, but the slot only at 7:  7 ..  9
 *   compute b on gpu     a ready at 9:                                  9 .. 12
 * Makespan 12 (without the rule: a 2..4, b 4..7, makespan 7). Serial total
 * 2 + 5 + 2 + 3 = 12. c and d are never run, so the schedule is invalid at its end
 * (bad_event = len = 5), but the result is filled as far as the replay got. */
static void test_rewrite_waits_for_readers(void **state)
{
    (void)state;
    xe_instance *in = two_dev(1000);
    xe_schedule s;
    xe_schedule_init(&s);
    xe_sim_result res;
    xe_err err = {{0}};
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, GPU, CPU);
    FREE(&s, 0, GPU);
    COMPUTE(&s, 0, GPU); /* gpu {a} 100 */
    COMPUTE(&s, 1, GPU); /* gpu {a, b} 150 */
    assert_int_equal(xe_sim_run(in, &s, &res, &err), XE_EINVAL);
    assert_int_equal(res.bad_event, 5);
    assert_string_equal(err.msg, "node c was never computed");
    assert_float_equal(res.makespan, 12.0, 1e-12);
    assert_float_equal(res.total_time, 12.0, 1e-12);
    assert_int_equal(res.recomputes, 1);
    assert_int_equal(res.dev[GPU].recomputes, 1);
    assert_int_equal(res.dev[GPU].peak, 150);

    COMPUTE(&s, 2, GPU); /* gpu {a, b, c} would be 180 > budget 150 */
    expect_invalid(in, &s, 5,
                   "event 5 (compute c on gpu): memory on gpu would be 180 bytes, budget 150",
                   &res);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* ---- Invalid schedules on the two-device instance ---------------------------------- */

static void test_copy_arrival_overflow(void **state)
{
    (void)state;
    xe_instance *in = two_dev(99); /* a (100 B) cannot land on the cpu */
    xe_schedule s;
    xe_schedule_init(&s);
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, GPU, CPU);
    xe_sim_result res;
    expect_invalid(in, &s, 1,
                   "event 1 (copy a from gpu to cpu): memory on cpu would be 100 bytes, budget 99",
                   &res);
    assert_int_equal(res.copies, 0);
    assert_int_equal(res.dev[CPU].peak, 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

static void test_precondition_errors(void **state)
{
    (void)state;
    xe_instance *in = two_dev(1000);
    xe_schedule s;
    xe_schedule_init(&s);
    xe_sim_result res;

    /* Free of a tensor that is not there. */
    COMPUTE(&s, 0, GPU);
    FREE(&s, 0, CPU);
    expect_invalid(in, &s, 1, "event 1 (free a on cpu): a is not resident on cpu", &res);

    /* Copy from a device that does not hold the tensor. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, CPU, GPU);
    expect_invalid(in, &s, 1, "event 1 (copy a from cpu to gpu): a is not resident on cpu",
                   &res);

    /* Copy onto a device that already holds it. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COMPUTE(&s, 0, CPU);
    COPY(&s, 0, GPU, CPU);
    expect_invalid(in, &s, 2, "a is already resident on cpu", &res);
    assert_int_equal(res.recomputes, 1); /* the second compute of a, on another device */

    /* Missing input: a lives on the gpu only, b runs on the cpu. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COMPUTE(&s, 1, CPU);
    expect_invalid(in, &s, 1, "event 1 (compute b on cpu): input a is not resident on cpu",
                   &res);

    /* A device that cannot run the node (d has no cpu cost). */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, CPU);
    COMPUTE(&s, 1, CPU);
    COMPUTE(&s, 2, CPU);
    COMPUTE(&s, 3, CPU);
    expect_invalid(in, &s, 3, "event 3 (compute d on cpu): cpu cannot run d", &res);

    /* Never computed: a and b only; the first missing node is c. bad_event = len = 2. */
    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COMPUTE(&s, 1, GPU);
    expect_invalid(in, &s, 2, "node c was never computed", &res);

    /* The empty schedule misses the first node. */
    xe_schedule_clear(&s);
    expect_invalid(in, &s, 0, "node a was never computed", &res);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

static void test_out_of_range(void **state)
{
    (void)state;
    xe_instance *in = two_dev(1000);
    xe_schedule s;
    xe_schedule_init(&s);
    xe_sim_result res;

    COMPUTE(&s, 0, GPU);
    COMPUTE(&s, 7, GPU);
    expect_invalid(in, &s, 1, "event 1 (compute #7 on gpu): node index 7 out of range", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, -1, GPU);
    expect_invalid(in, &s, 0, "node index -1 out of range", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, 0, 5);
    expect_invalid(in, &s, 0, "event 0 (compute a on #5): device index 5 out of range", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    FREE(&s, 0, -2);
    expect_invalid(in, &s, 1, "device index -2 out of range", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, GPU, 9);
    expect_invalid(in, &s, 1, "destination device index 9 out of range", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    COPY(&s, 0, GPU, GPU);
    expect_invalid(in, &s, 1, "source and destination are the same device", &res);

    xe_schedule_clear(&s);
    COMPUTE(&s, 0, GPU);
    s.ev[0].kind = (xe_event_kind)7;
    expect_invalid(in, &s, 0, "unknown event kind 7", &res);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* xe_instance_from_recipe on a graph not finalized: XE_EINVAL naming the call to make,
 * the graph still the caller's (a new user's C program crashed there before 2026-12-05);
 * finalized, the same graph builds, its 100% the hand-computed peak (a 2-node chain of
 * 10 B and 20 B: both resident while node 1 runs, 30 B) */
static void test_recipe_needs_finalized_graph(void **state)
{
    (void)state;
    xe_err err;
    xe_graph *g = xe_graph_new("chain2");
    assert_non_null(g);
    assert_int_equal(xe_graph_add_node(g, "a", NULL, 0, 10, 0, 1.0, &err), 0);
    assert_int_equal(xe_graph_add_node(g, "b", NULL, 0, 20, 0, 1.0, &err), 1);
    assert_int_equal(xe_graph_add_edge(g, 0, 1, &err), XE_OK);
    xe_recipe r;
    assert_int_equal(xe_recipe_preset("gpu", 1.0, &r, &err), XE_OK);
    xe_instance *in = (xe_instance *)1;
    assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_EINVAL);
    assert_null(in);
    assert_non_null(strstr(err.msg, "not finalized (call xe_graph_finalize first)"));
    assert_int_equal(xe_instance_norecompute_peak(g), -2);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    assert_int_equal(xe_instance_norecompute_peak(g), 30);
    assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_OK);
    assert_int_equal(in->dev[0].budget, 30);
    xe_instance_free(in); /* frees g too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_once),
        cmocka_unit_test(test_chain_budget_boundary),
        cmocka_unit_test(test_recompute),
        cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_rewrite_waits_for_readers),
        cmocka_unit_test(test_copy_arrival_overflow),
        cmocka_unit_test(test_precondition_errors),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_recipe_needs_finalized_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
