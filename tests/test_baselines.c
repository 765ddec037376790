/* Baselines (include/xengine/baselines.h, docs/baselines.md):
 *   - checkpoint-all, revolve, the chain DP, one-device and fastest-device at the
 *     no-recomputation peak cost exactly the plain sum, Chen's greedy too; below the
 *     peak checkpoint-all is infeasible;
 *   - Chen's sqrt(n) on a 9-forward-node chain: checkpoints 2, 5, 8 computed once, every
 *     other node at most twice (each segment recomputed once), peak below checkpoint-all;
 *     on the uniform chain, exactly the hand-computed recomputations, peak (24 B against
 *     checkpoint-all's 40 B) and cost (21 s against 17 s), fitting at 24 B, not at 23;
 *   - revolve: equal to the chain DP on uniform chains (the setting where Griewank's
 *     schedule is optimal), never cheaper than it on heterogeneous ones;
 *   - one-device and fastest-device on hand-computed two-device instances;
 *   - on seeded random small instances (chains and DAGs, one and two devices): every
 *     baseline result replays in the simulator within the budgets, at the reported cost,
 *     and is never below the event-list brute-force optimum; when no event list fits,
 *     every baseline says XE_EINFEASIBLE;
 *   - bad names and devices. */
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
#include "xengine/baselines.h"
#include "xengine/sim.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

static const char *const METHODS[] = {"checkpoint-all", "chen-sqrt", "chen-greedy", "revolve", "chain-dp",
                                      "one-device",     "one-device:0", "fastest-device"};
#define NMETHODS (int)(sizeof METHODS / sizeof METHODS[0])

/* Checkmate's linear training graph: forward 0..L (backward flag 0), node L+j reads
 * L+j-1 and L-j. mem and cost per node; device d costs (1 + d) times more; copies 0.5 s. */
static xe_instance *chain(int L, const int64_t *mem, const double *cost, int ndev)
{
    xe_err err;
    int n = 2 * L + 1;
    xe_graph *g = xe_graph_new("chain");
    assert_non_null(g);
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "%c%d", v <= L ? 'x' : 'y', v);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, v > L, mem[v], 0, cost[v], &err), v);
    }
    for (int v = 1; v < n; v++) assert_int_equal(xe_graph_add_edge(g, v - 1, v, &err), XE_OK);
    for (int j = 1; j <= L; j++) assert_int_equal(xe_graph_add_edge(g, L - j, L + j, &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, ndev);
    assert_non_null(in);
    for (int v = 0; v < n; v++)
        for (int d = 0; d < ndev; d++) {
            in->cost[v * ndev + d] = cost[v] * (1 + d);
            for (int e = 0; e < ndev; e++) in->copy[(v * ndev + d) * ndev + e] = d == e ? 0.0 : 0.5;
        }
    for (int d = 0; d < ndev; d++) {
        snprintf(in->dev[d].name, sizeof in->dev[d].name, "dev%d", d);
        in->dev[d].budget = xe_instance_norecompute_peak(g);
    }
    return in;
}

static xe_instance *uniform_chain(int L, int ndev)
{
    int64_t mem[64];
    double cost[64];
    for (int v = 0; v < 2 * L + 1; v++) {
        mem[v] = 4;
        cost[v] = 1;
    }
    return chain(L, mem, cost, ndev);
}

/* Runs a method; on XE_OK checks the replay (valid, within budgets, cost) and returns the
 * simulator's result in *res (when non-NULL) and the events in *keep (when non-NULL). */
static int run(const xe_instance *in, const char *name, double *cost, xe_sim_result *res, xe_schedule *keep)
{
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err err = {{0}};
    int rc = xe_baseline_run(in, name, &s, cost, &err);
    if (rc == XE_OK) {
        xe_sim_result r;
        if (xe_sim_run(in, &s, &r, &err) != XE_OK) {
            print_error("%s: schedule rejected: %s\n", name, err.msg);
            fail();
        }
        assert_true(close_to(r.total_time, *cost));
        for (int d = 0; d < in->ndev; d++) assert_true(r.dev[d].peak <= in->dev[d].budget);
        if (res) *res = r;
        if (keep) {
            *keep = s;
            return rc;
        }
    } else if (rc != XE_EINFEASIBLE && rc != XE_EUNSUPPORTED) {
        print_error("%s: unexpected %s: %s\n", name, xe_status_str(rc), err.msg);
        fail();
    } else {
        assert_int_equal(s.len, 0);
        assert_true(strlen(err.msg) > 0);
    }
    xe_schedule_clear(&s);
    return rc;
}

static double plain_sum(const xe_instance *in, int d)
{
    double s = 0;
    for (int v = 0; v < in->g->n; v++) s += xe_cost(in, v, d);
    return s;
}

static void test_at_peak(void **state)
{
    (void)state;
    xe_instance *in = uniform_chain(6, 2); /* device 0 is the cheaper one */
    double c;
    for (int k = 0; k < NMETHODS; k++) {
        assert_int_equal(run(in, METHODS[k], &c, NULL, NULL), XE_OK);
        /* Chen's sqrt(n) segments recompute; Chen's greedy with a segment as large as the
         * whole forward pass has no checkpoint, recomputes nothing and, with each tensor
         * freed after its last reader, fits the peak: the plain sum */
        if (strcmp(METHODS[k], "chen-sqrt") != 0) assert_true(close_to(c, plain_sum(in, 0)));
        assert_true(c >= plain_sum(in, 0) - 1e-9);
    }
    in->dev[0].budget = INT64_C(1) << 40; /* Chen's greedy with no checkpoint: plain sum */
    assert_int_equal(run(in, "chen-greedy", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, plain_sum(in, 0)));
    in->dev[0].budget = in->dev[1].budget;
    /* fastest-device: every node fits on device 0 next to the live set: the plain sum */
    assert_int_equal(run(in, "fastest-device", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, plain_sum(in, 0)));
    /* one byte below the peak: keeping everything no longer fits anywhere */
    in->dev[0].budget--;
    in->dev[1].budget--;
    assert_int_equal(run(in, "checkpoint-all", &c, NULL, NULL), XE_EINFEASIBLE);
    assert_int_equal(run(in, "chain-dp", &c, NULL, NULL), XE_OK);
    assert_true(c > plain_sum(in, 0));
    xe_instance_free(in);
}

/* Chen's sqrt(n): L = 8 gives 9 forward nodes, all articulation points, k = 3, so the
 * checkpoints are the 3rd, 6th and 9th: nodes 2, 5 and 8 (the loss). */
static void test_chen_sqrt_structure(void **state)
{
    (void)state;
    xe_instance *in = uniform_chain(8, 1);
    in->dev[0].budget = INT64_C(1) << 40;
    double c, call;
    xe_sim_result r, rall;
    xe_schedule s;
    assert_int_equal(run(in, "chen-sqrt", &c, &r, &s), XE_OK);
    int count[17] = {0};
    for (int k = 0; k < s.len; k++)
        if (s.ev[k].kind == XE_EV_COMPUTE) count[s.ev[k].node]++;
    xe_schedule_clear(&s);
    assert_int_equal(count[2], 1);
    assert_int_equal(count[5], 1);
    assert_int_equal(count[8], 1);
    for (int v = 0; v < 17; v++) {
        assert_true(count[v] >= 1);
        assert_true(count[v] <= (v <= 8 ? 2 : 1));
    }
    assert_int_equal(run(in, "checkpoint-all", &call, &rall, NULL), XE_OK);
    assert_true(r.dev[0].peak < rall.dev[0].peak);
    assert_true(c > call);
    /* at chen-sqrt's own peak it still fits, one byte less and it does not */
    in->dev[0].budget = r.dev[0].peak;
    assert_int_equal(run(in, "chen-sqrt", &c, NULL, NULL), XE_OK);
    in->dev[0].budget = r.dev[0].peak - 1;
    assert_int_equal(run(in, "chen-sqrt", &c, NULL, NULL), XE_EINFEASIBLE);
    xe_instance_free(in);
}

/* Chen's sqrt(n) on the uniform chain L = 8 (17 nodes of 4 bytes, cost 1; backward y(8+j)
 * reads y(8+j-1) and x(8-j)), by hand. Checkpoints x2, x5, x8 (the loss); segments
 * {x0,x1}, {x3,x4}, {x6,x7}. Forward: x0 and x1 freed once read, x2 kept; x3, x4 likewise;
 * x6, x7 kept (their segment is closed by the loss, its backward follows at once). The
 * largest live set is at y9: x2 x5 x6 x7 x8 + y9 = 6 tensors = 24 bytes. Then y10 frees
 * x6; y12 first reads segment {x3,x4}: stage 12 recomputes x3, x4 (x2 x3 x4 y11 y12 = 20
 * bytes); y15 first reads {x0,x1}: stage 15 recomputes x0, x1 (y14 x0 x1 y15 = 16 bytes).
 * Cost: 17 computes + 4 recomputations = 21 s. Checkpoint-all keeps x0..x8 until y9: 10
 * tensors = 40 bytes, 17 s. */
static void test_chen_sqrt_hand_chain(void **state)
{
    (void)state;
    xe_instance *in = uniform_chain(8, 1);
    in->dev[0].budget = INT64_C(1) << 40;
    double c, call;
    xe_sim_result r, rall;
    xe_schedule s;
    assert_int_equal(run(in, "chen-sqrt", &c, &r, &s), XE_OK); /* replayed by the simulator */
    int count[17] = {0};
    for (int k = 0; k < s.len; k++)
        if (s.ev[k].kind == XE_EV_COMPUTE) count[s.ev[k].node]++;
    xe_schedule_clear(&s);
    for (int v = 0; v < 17; v++) assert_int_equal(count[v], v == 0 || v == 1 || v == 3 || v == 4 ? 2 : 1);
    assert_int_equal(r.dev[0].peak, 24);
    assert_true(close_to(c, 21.0));
    assert_int_equal(run(in, "checkpoint-all", &call, &rall, NULL), XE_OK);
    assert_int_equal(rall.dev[0].peak, 40);
    assert_true(close_to(call, 17.0));
    assert_true(r.dev[0].peak < rall.dev[0].peak);
    /* the stage matrices themselves are structurally valid, at the same cost */
    xe_stages st;
    xe_err err;
    assert_int_equal(xe_chen_sqrt(in, 0, &st, &err), XE_OK);
    assert_int_equal(xe_stages_eval(in, &st, NULL, NULL, &err), XE_OK);
    assert_true(close_to(xe_stages_cost(in, &st), 21.0));
    xe_stages_clear(&st);
    /* exactly its hand-computed peak: fits at 24 bytes, not at 23 */
    in->dev[0].budget = 24;
    assert_int_equal(run(in, "chen-sqrt", &c, NULL, NULL), XE_OK);
    in->dev[0].budget = 23;
    assert_int_equal(run(in, "chen-sqrt", &c, NULL, NULL), XE_EINFEASIBLE);
    xe_instance_free(in);
}

/* Revolve equals the DP on uniform chains at every budget, and never beats it otherwise
 * (its schedules belong to the DP's class). */
static void test_revolve_vs_dp(void **state)
{
    (void)state;
    xe_instance *in = uniform_chain(10, 1);
    int64_t lo = xe_instance_min_footprint(in->g), hi = xe_instance_norecompute_peak(in->g);
    int both = 0;
    for (int64_t b = lo; b <= hi; b++) {
        in->dev[0].budget = b;
        double cr, cd;
        int rr = run(in, "revolve", &cr, NULL, NULL), rd = run(in, "chain-dp", &cd, NULL, NULL);
        assert_int_equal(rr, rd);
        if (rr == XE_OK) {
            assert_true(close_to(cr, cd));
            both++;
        }
    }
    assert_true(both > 0);
    xe_instance_free(in);
    const int64_t mem[] = {3, 9, 2, 7, 4, 8, 1, 6, 5, 2, 9, 3, 4, 7, 2, 6, 8};
    const double cost[] = {2, 1, 4, 3, 5, 1, 2, 6, 1, 3, 2, 2, 1, 4, 1, 2, 3};
    in = chain(8, mem, cost, 1);
    lo = xe_instance_min_footprint(in->g);
    hi = xe_instance_norecompute_peak(in->g);
    int fewer = 0;
    both = 0;
    for (int64_t b = lo; b <= hi; b++) {
        in->dev[0].budget = b;
        double cr, cd;
        int rr = run(in, "revolve", &cr, NULL, NULL), rd = run(in, "chain-dp", &cd, NULL, NULL);
        if (rr == XE_OK) {
            assert_int_equal(rd, XE_OK);
            assert_true(cr >= cd - 1e-9);
            both++;
        }
        fewer += rd == XE_OK && (rr != XE_OK || cr > cd + 1e-9);
    }
    print_message("heterogeneous chain: revolve costlier than the DP at %d of %lld budgets\n", fewer,
                  (long long)(hi - lo + 1));
    assert_true(both > 0); /* the comparison above ran */
    xe_instance_free(in);
}

/* a (10 B) -> b (20 B) -> c (10 B); gpu (dev0) costs 1 per node, cpu (dev1) 8; copies
 * 0.5 s. GPU budget 25: a on gpu; b does not fit there (a + b = 30), so a is copied to
 * the cpu and b runs there; c does not fit on the gpu with b copied in (30): cpu.
 * 1 + 0.5 + 8 + 8 = 17.5. With the gpu at 9 B nothing fits there: 3 * 8 = 24. */
static void test_two_devices(void **state)
{
    (void)state;
    xe_err err;
    xe_graph *g = xe_graph_new("abc");
    assert_int_equal(xe_graph_add_node(g, "a", NULL, 0, 10, 0, 1, &err), 0);
    assert_int_equal(xe_graph_add_node(g, "b", NULL, 0, 20, 0, 1, &err), 1);
    assert_int_equal(xe_graph_add_node(g, "c", NULL, 0, 10, 0, 1, &err), 2);
    xe_graph_add_edge(g, 0, 1, &err);
    xe_graph_add_edge(g, 1, 2, &err);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 2);
    assert_non_null(in);
    for (int v = 0; v < 3; v++) {
        in->cost[v * 2 + 0] = 1;
        in->cost[v * 2 + 1] = 8;
        in->copy[(v * 2 + 0) * 2 + 1] = in->copy[(v * 2 + 1) * 2 + 0] = 0.5;
    }
    in->dev[0].budget = 25;
    in->dev[1].budget = 1000;
    double c;
    xe_schedule s;
    assert_int_equal(run(in, "fastest-device", &c, NULL, &s), XE_OK);
    assert_true(close_to(c, 17.5));
    const xe_event want[] = {{XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_COPY, 0, 0, 1},    {XE_EV_COMPUTE, 1, 1, -1},
                             {XE_EV_FREE, 0, 0, -1},    {XE_EV_FREE, 0, 1, -1},   {XE_EV_COMPUTE, 2, 1, -1},
                             {XE_EV_FREE, 1, 1, -1},    {XE_EV_FREE, 2, 1, -1}};
    assert_int_equal(s.len, 8);
    for (int k = 0; k < 8; k++) {
        assert_int_equal(s.ev[k].kind, want[k].kind);
        assert_int_equal(s.ev[k].node, want[k].node);
        assert_int_equal(s.ev[k].dev, want[k].dev);
        if (want[k].kind == XE_EV_COPY) assert_int_equal(s.ev[k].dst, want[k].dst);
    }
    xe_schedule_clear(&s);
    /* everything on the gpu needs b's footprint a + b = 30 > 25: infeasible there; the
     * cpu alone costs 24; "one-device" picks the cpu */
    assert_int_equal(run(in, "one-device:0", &c, NULL, NULL), XE_EINFEASIBLE);
    assert_int_equal(run(in, "one-device:1", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, 24.0));
    assert_int_equal(run(in, "one-device", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, 24.0));
    in->dev[0].budget = 30; /* now the gpu alone fits: 3 */
    assert_int_equal(run(in, "one-device", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, 3.0));
    assert_int_equal(run(in, "chain-dp", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, 3.0));
    in->dev[0].budget = 9;
    assert_int_equal(run(in, "fastest-device", &c, NULL, NULL), XE_OK);
    assert_true(close_to(c, 24.0));
    in->dev[1].budget = 29; /* b's footprint fits nowhere */
    assert_int_equal(run(in, "fastest-device", &c, NULL, NULL), XE_EINFEASIBLE);
    xe_instance_free(in);
}

static void test_names(void **state)
{
    (void)state;
    xe_instance *in = uniform_chain(2, 2);
    xe_schedule s;
    xe_schedule_init(&s);
    double c;
    xe_err err = {{0}};
    assert_int_equal(xe_baseline_run(in, "simulated-annealing", &s, &c, &err), XE_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "simulated-annealing"));
    assert_int_equal(xe_baseline_run(in, "one-device:2", &s, &c, &err), XE_EINVAL);
    assert_int_equal(xe_baseline_run(in, "one-device:x", &s, &c, &err), XE_EINVAL);
    assert_int_equal(xe_baseline_run(in, NULL, &s, &c, &err), XE_EUNSUPPORTED);
    xe_stages st;
    assert_int_equal(xe_chen_sqrt(in, 5, &st, &err), XE_EINVAL);
    assert_int_equal(xe_one_device(in, -1, &st, &err), XE_EINVAL);
    assert_int_equal(xe_chain_dp(in, 3, &s, &c, &err), XE_EINVAL);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* Every method on random small instances against the event-list optimum. */
static void sweep(xe_instance *in, int *checked)
{
    double cb = 0;
    xe_err err = {{0}};
    int rb = xe_bf_event_solve(in, &cb, NULL, &err);
    assert_true(rb == XE_OK || rb == XE_EINFEASIBLE);
    for (int k = 0; k < NMETHODS; k++) {
        double c;
        int rc = run(in, METHODS[k], &c, NULL, NULL);
        if (rb == XE_EINFEASIBLE) assert_int_not_equal(rc, XE_OK);
        if (rc == XE_OK) {
            assert_true(c >= cb - 1e-9);
            (*checked)++;
        }
    }
}

static void test_random_vs_brute(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        int ndev = 1 + (int)(seed % 2);
        int n = ndev == 1 ? 3 + (int)(seed % 5) : 3 + (int)(seed % 3);
        xe_instance *in = xe_test_random_instance(seed, n, ndev, (int)(seed % 3 == 0));
        assert_non_null(in);
        sweep(in, &checked);
        xe_instance_free(in);
    }
    for (uint64_t seed = 1; seed <= 30; seed++) {
        int64_t mem[8];
        double cost[8];
        uint64_t s = seed * 2654435761u;
        for (int v = 0; v < 7; v++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            mem[v] = 1 + (int64_t)((s >> 33) % 10);
            cost[v] = 1 + (double)((s >> 45) % 10);
        }
        xe_instance *in = chain(3, mem, cost, 1);
        int64_t lo = xe_instance_min_footprint(in->g), hi = xe_instance_norecompute_peak(in->g);
        in->dev[0].budget = lo + (int64_t)(seed % 4) * (hi - lo) / 3;
        sweep(in, &checked);
        xe_instance_free(in);
    }
    print_message("baselines vs event brute force: %d valid results checked\n", checked);
    assert_true(checked > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_peak),         cmocka_unit_test(test_chen_sqrt_structure),
        cmocka_unit_test(test_revolve_vs_dp),   cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_names),           cmocka_unit_test(test_random_vs_brute),
        cmocka_unit_test(test_chen_sqrt_hand_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
