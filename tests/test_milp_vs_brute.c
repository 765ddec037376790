/* The MILP planner against the brute-force ground truth on seeded random tiny instances.
 *
 * For 480 instances (160 with one device, n = 2..6; 160 with two devices and free copies,
 * n = 2..5; 160 with two devices and copy costs, n = 2..5), asserts:
 *   - stage_bf infeasible <=> MILP proves infeasibility;
 *   - otherwise the MILP is OPTIMAL (rel_gap 0) with |objective - stage_bf| <=
 *     1e-6 * max(1, stage_bf), and event_bf <= objective + 1e-9 (event lists contain
 *     every stage schedule);
 *   - the MILP's R, S, C pass xe_stages_check, xe_stages_cost equals the objective, and
 *     the event list of xe_stages_to_schedule replays in the simulator with total_time
 *     equal to the objective;
 *   - the brute forces' own answers are valid too: stage_bf's matrices pass
 *     xe_stages_check and the simulator at their cost, event_bf's event list replays in
 *     the simulator with total_time equal to its cost.
 * Prints the stage-class loss against unrestricted event lists (docs quote it). */
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
#include "xengine/milp.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"
#include "xengine/stages.h"

#define N_INSTANCES 480

static int close_to(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b)); }

/* Prints the instance context and fails. */
static void fail_at(uint64_t seed, int n, int ndev, int copy, const char *what, double a, double b)
{
    print_error("seed %llu n=%d ndev=%d copy=%d: %s (%.9g vs %.9g)\n", (unsigned long long)seed,
                n, ndev, copy, what, a, b);
    fail();
}

/* st passes xe_stages_check, costs `cost`, and its event list replays at `cost`. */
static void check_stages(const xe_instance *in, const xe_stages *st, double cost, uint64_t seed,
                         int n, int ndev, int copy, const char *who)
{
    xe_err err = {{0}};
    int rc = xe_stages_check(in, st, &err);
    if (rc != XE_OK) {
        print_error("%s: xe_stages_check: %s\n", who, err.msg);
        fail_at(seed, n, ndev, copy, "stage matrices rejected", rc, XE_OK);
    }
    double sc = xe_stages_cost(in, st);
    if (!close_to(sc, cost)) fail_at(seed, n, ndev, copy, "xe_stages_cost != objective", sc, cost);
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_stages_to_schedule(in, st, &s, &err), XE_OK);
    xe_sim_result res;
    rc = xe_sim_run(in, &s, &res, &err);
    if (rc != XE_OK) {
        print_error("%s: simulator: %s\n", who, err.msg);
        fail_at(seed, n, ndev, copy, "event list of the stages rejected", rc, XE_OK);
    }
    if (!close_to(res.total_time, cost))
        fail_at(seed, n, ndev, copy, "simulated total_time != objective", res.total_time, cost);
    xe_schedule_clear(&s);
}

static void bf_to_stages(const xe_bf_stages *b, xe_stages *st)
{
    assert_int_equal(xe_stages_init(st, b->n, b->ndev), XE_OK);
    for (int t = 0; t < b->n; t++)
        for (int i = 0; i < b->n; i++)
            for (int d = 0; d < b->ndev; d++) {
                *xe_R(st, t, i, d) = b->R[t][i][d];
                *xe_S(st, t, i, d) = b->S[t][i][d];
                for (int e = 0; e < b->ndev; e++) *xe_C(st, t, i, d, e) = b->C[t][i][d][e];
            }
}

typedef struct stats {
    int feasible;       /* stage-class feasible instances */
    int worse;          /* of those, stage optimum > event optimum */
    double loss_sum;    /* sum over feasible instances of (stage - event) / event */
    double loss_max;
    int event_only;     /* event lists feasible, stage class not */
    int infeasible;     /* neither */
    int knapsack;       /* instances also solved with the knapsack rows (same answer) */
} stats;

static void one_instance(uint64_t seed, int n, int ndev, int copy, stats *sts)
{
    xe_instance *in = xe_test_random_instance(seed, n, ndev, copy);
    assert_non_null(in);
    xe_err err = {{0}};

    double cs = 0, ce = 0;
    xe_bf_stages bst;
    int rs = xe_bf_stage_solve(in, &cs, &bst, &err);
    assert_true(rs == XE_OK || rs == XE_EINFEASIBLE);
    xe_schedule evs;
    xe_schedule_init(&evs);
    int re = xe_bf_event_solve(in, &ce, &evs, &err);
    assert_true(re == XE_OK || re == XE_EINFEASIBLE);

    /* the brute forces' own schedules replay at their cost */
    if (re == XE_OK) {
        xe_sim_result res;
        int rc = xe_sim_run(in, &evs, &res, &err);
        if (rc != XE_OK) {
            print_error("event_bf schedule: %s\n", err.msg);
            fail_at(seed, n, ndev, copy, "event_bf schedule rejected by the simulator", rc, 0);
        }
        if (!close_to(res.total_time, ce))
            fail_at(seed, n, ndev, copy, "event_bf cost != simulated total_time", ce, res.total_time);
    }
    xe_schedule_clear(&evs);
    if (rs == XE_OK) {
        if (re != XE_OK) fail_at(seed, n, ndev, copy, "stage-feasible but event-infeasible", cs, 0);
        xe_stages bs;
        bf_to_stages(&bst, &bs);
        check_stages(in, &bs, cs, seed, n, ndev, copy, "stage_bf");
        xe_stages_clear(&bs);
    }

    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.time_limit = 30;
    o.rel_gap = 0;
    xe_milp_result mr;
    memset(&mr, 0, sizeof mr);
    int rc = xe_milp_solve(in, &o, &mr, &err);
    if (rc != XE_OK) {
        print_error("xe_milp_solve: %s\n", err.msg);
        fail_at(seed, n, ndev, copy, "xe_milp_solve failed", rc, XE_OK);
    }
    if (rs == XE_EINFEASIBLE) {
        if (mr.status != XE_MILP_INFEASIBLE)
            fail_at(seed, n, ndev, copy, "stage_bf infeasible, MILP status (2 = infeasible)",
                    mr.status, XE_MILP_INFEASIBLE);
        if (re == XE_OK) sts->event_only++;
        else sts->infeasible++;
        if (seed % 2 == 0) { /* the knapsack rows (constraint 9) keep the proof */
            xe_milp_opts ko = o;
            ko.knapsack = 1;
            xe_milp_result kr;
            rc = xe_milp_solve(in, &ko, &kr, &err);
            if (rc != XE_OK || kr.status != XE_MILP_INFEASIBLE)
                fail_at(seed, n, ndev, copy, "stage_bf infeasible, MILP with knapsack rows status", kr.status,
                        XE_MILP_INFEASIBLE);
            sts->knapsack++;
            xe_milp_result_clear(&kr);
        }
    } else {
        if (mr.status != XE_MILP_OPTIMAL)
            fail_at(seed, n, ndev, copy, "stage_bf feasible, MILP status (0 = optimal)", mr.status,
                    XE_MILP_OPTIMAL);
        if (!close_to(mr.objective, cs))
            fail_at(seed, n, ndev, copy, "MILP objective != stage_bf", mr.objective, cs);
        if (!(ce <= mr.objective + 1e-9))
            fail_at(seed, n, ndev, copy, "event_bf > MILP objective", ce, mr.objective);
        check_stages(in, &mr.sol, mr.objective, seed, n, ndev, copy, "milp");
        sts->feasible++;
        if (seed % 2 == 0) { /* the knapsack rows (constraint 9) keep the optimum */
            xe_milp_opts ko = o;
            ko.knapsack = 1;
            xe_milp_result kr;
            rc = xe_milp_solve(in, &ko, &kr, &err);
            if (rc != XE_OK || kr.status != XE_MILP_OPTIMAL || !close_to(kr.objective, cs))
                fail_at(seed, n, ndev, copy, "MILP with knapsack rows != stage_bf", kr.objective, cs);
            check_stages(in, &kr.sol, kr.objective, seed, n, ndev, copy, "milp+knapsack");
            sts->knapsack++;
            xe_milp_result_clear(&kr);
        }
        if (cs > ce + 1e-9) {
            double loss = (cs - ce) / ce;
            sts->worse++;
            sts->loss_sum += loss;
            if (loss > sts->loss_max) sts->loss_max = loss;
        }
    }
    xe_milp_result_clear(&mr);
    xe_instance_free(in);
}

static void test_milp_matches_brute_force(void **state)
{
    (void)state;
    stats sts;
    memset(&sts, 0, sizeof sts);
    for (int idx = 0; idx < N_INSTANCES; idx++) {
        int kind = idx % 3, j = idx / 3;
        int ndev = kind == 0 ? 1 : 2;
        int n = kind == 0 ? 2 + j % 5 : 2 + j % 4;
        int copy = kind == 2;
        one_instance(1000 + (uint64_t)idx, n, ndev, copy, &sts);
    }
    assert_int_equal(sts.feasible + sts.event_only + sts.infeasible, N_INSTANCES);
    /* the generator must produce a real mix: some infeasible, mostly feasible */
    assert_true(sts.feasible >= N_INSTANCES / 2);
    assert_true(sts.event_only + sts.infeasible > 0);
    assert_true(sts.knapsack >= N_INSTANCES / 3);
    printf("the same answer with the knapsack rows on %d instances\n", sts.knapsack);
    printf("stage class vs event lists: %d feasible instances, %d where stage optimum > event "
           "optimum, mean loss %.2f%%, max loss %.2f%%\n",
           sts.feasible, sts.worse, sts.feasible ? 100.0 * sts.loss_sum / sts.feasible : 0.0,
           100.0 * sts.loss_max);
    printf("  (mean loss over the %d instances with a loss: %.2f%%; %d instances feasible only "
           "as event lists, %d infeasible for both)\n",
           sts.worse, sts.worse ? 100.0 * sts.loss_sum / sts.worse : 0.0, sts.event_only,
           sts.infeasible);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_milp_matches_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
