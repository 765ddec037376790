/* CBC's log parser (src/milp/cbc_log.c): the times of improvements come from CBC's own
 * log lines, because its message callback never sees the branch and bound (it gave
 * 0.65 s for an optimum found at 10.47 s). The lines below are copied from a real CBC
 * 2.10.8 log (U-Net at 60% of the peak, one GPU, from the greedy's start): each line's
 * effect on the incumbent, bound and times is asserted, then the same lines go through
 * the pipe and reader thread as CBC's printf would send them, and stdout must come back
 * to where it was. A whole solve's times are checked for order (first <= best <= total);
 * two threads solving in one process take turns (they hung before the lock). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../src/milp/cbc_log.h"
#include "support/randinst.h"
#include "xengine/milp.h"
#include "xengine/timer.h"

static const char *real_log[] = {
    "Welcome to the CBC MILP Solver ",
    "Continuous objective value is 32.3492 - 0.25 seconds",
    "Cbc0045I MIPStart provided solution with cost 1.495",
    "Cbc0012I Integer solution of 32.5 found by Reduced search after 0 iterations and 0 nodes (0.68 seconds)",
    "Cbc0013I At root node, 4 cuts changed objective from 32.349167 to 32.349167 in 3 passes",
    "Cbc0010I After 0 nodes, 1 on tree, 32.5 best solution, best possible 32.349167 (1.71 seconds)",
    "Cbc0012I Integer solution of 32.435 found by DiveCoefficient after 308 iterations and 5 nodes (3.35 seconds)",
    "Cbc0012I Integer solution of 32.435 found by heuristic after 297 iterations and 4 nodes (3.51 seconds)",
    "Cbc0044I Reduced cost fixing - 2974 rows, 2271 columns - restarting search",
    "Cbc0012I Integer solution of 32.435 found by Previous solution after 0 iterations and 0 nodes (9.06 seconds)",
    "Cbc0010I After 0 nodes, 1 on tree, 32.435 best solution, best possible 32.381386 (9.45 seconds)",
    "Cbc0016I Integer solution of 32.385 found by strong branching after 2764 iterations and 31 nodes (10.47 seconds)",
    "Cbc0012I Integer solution of 32.385 found by heuristic after 2760 iterations and 30 nodes (10.47 seconds)",
    "Cbc0001I Search completed - best objective 32.38500000000001, took 4186 iterations and 46 nodes (11.19 seconds)",
    "Cbc0012I Integer solution of 32.385 found by Reduced search after 7166 iterations and 96 nodes (11.22 seconds)",
};
#define NLINES (sizeof real_log / sizeof *real_log)

static void fresh(xe_cbc_log *lg, double objconst)
{
    memset(lg, 0, sizeof *lg);
    lg->objconst = objconst;
    lg->incumbent = INFINITY;
    lg->bound = -INFINITY;
    lg->tbest = lg->tfirst = -1;
}

static void test_real_log_line_by_line(void **state)
{
    (void)state;
    xe_cbc_log lg;
    fresh(&lg, 0.0);
    /* expected incumbent, tbest, tfirst, bound after each line */
    const double inc[] = {INFINITY, INFINITY, INFINITY, 32.5, 32.5, 32.5, 32.435, 32.435,
                          32.435, 32.435, 32.435, 32.385, 32.385, 32.385, 32.385};
    const double tb[] = {-1, -1, -1, 0.68, 0.68, 0.68, 3.35, 3.35, 3.35, 3.35, 3.35, 10.47, 10.47, 10.47, 10.47};
    const double bd[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 32.349167, 32.349167,
                         32.349167, 32.349167, 32.349167, 32.381386, 32.381386, 32.381386, 32.381386, 32.381386};
    for (size_t k = 0; k < NLINES; k++) {
        xe_cbc_log_line(&lg, real_log[k]);
        if (isinf(inc[k])) assert_true(isinf(lg.incumbent));
        else assert_true(fabs(lg.incumbent - inc[k]) < 1e-12);
        assert_true(fabs(lg.tbest - tb[k]) < 1e-12);
        if (isinf(bd[k])) assert_true(isinf(lg.bound) && lg.bound < 0);
        else assert_true(fabs(lg.bound - bd[k]) < 1e-12);
        assert_true(fabs(lg.tfirst - (k < 3 ? -1 : 0.68)) < 1e-12);
    }
}

static void test_other_forms(void **state)
{
    (void)state;
    xe_cbc_log lg;
    fresh(&lg, 2.0); /* a window's constant is added to every objective of its log */
    xe_cbc_log_line(&lg, "Cbc0010I After 0 nodes, 1 on tree, 1e+50 best solution, best possible 1.25 (0.10 seconds)");
    assert_true(isinf(lg.incumbent)); /* 1e50: no solution yet */
    assert_true(fabs(lg.bound - 3.25) < 1e-12);
    /* the prefix-less form CBC prints through a message callback */
    xe_cbc_log_line(&lg, "Integer solution of 1.5 found by feasibility pump after 0 iterations and 0 nodes (0.31 seconds)");
    assert_true(fabs(lg.incumbent - 3.5) < 1e-12);
    assert_true(fabs(lg.tbest - 0.31) < 1e-12 && fabs(lg.tfirst - 0.31) < 1e-12);
    /* an improvement in a node-log line that no solution line announced */
    xe_cbc_log_line(&lg, "Cbc0010I After 100 nodes, 7 on tree, 1.25 best solution, best possible 1.25 (4.00 seconds)");
    assert_true(fabs(lg.incumbent - 3.25) < 1e-12 && fabs(lg.tbest - 4.0) < 1e-12);
    /* the feasibility pump's mini branch and bound, timed before its Cbc0012I line */
    xe_cbc_log_line(&lg, "Cbc0038I Mini branch and bound improved solution from 1.25 to 1.125 (4.50 seconds)");
    assert_true(fabs(lg.incumbent - 3.125) < 1e-12 && fabs(lg.tbest - 4.5) < 1e-12);
    xe_cbc_log_line(&lg, "Cbc0012I Integer solution of 1.125 found by feasibility pump after 0 iterations and 0 nodes (5.00 seconds)");
    assert_true(fabs(lg.incumbent - 3.125) < 1e-12 && fabs(lg.tbest - 4.5) < 1e-12); /* not again */
    /* an improvement without a time: the time becomes unknown, never an earlier one */
    xe_cbc_log_line(&lg, "Integer solution of 1 found by something new");
    assert_true(fabs(lg.incumbent - 3.0) < 1e-12 && lg.tbest < 0);
    /* lines that are not CBC's solution or status lines change nothing */
    xe_cbc_log_line(&lg, "Clp0000I Optimal - objective value 0.5");
    xe_cbc_log_line(&lg, "Integer solution of found by nothing (1.00 seconds)");
    xe_cbc_log_line(&lg, "");
    assert_true(fabs(lg.incumbent - 3.0) < 1e-12 && fabs(lg.bound - 3.25) < 1e-12 && fabs(lg.tfirst - 0.31) < 1e-12);
}

/* The same lines through stdout, the pipe and the reader thread; stdout is restored. */
static void test_through_the_pipe(void **state)
{
    (void)state;
    struct stat before, after;
    fflush(stdout);
    assert_int_equal(fstat(STDOUT_FILENO, &before), 0);
    xe_cbc_log lg;
    xe_cbc_log_start(&lg, xe_now(), 0.0, 0);
    for (size_t k = 0; k < NLINES; k++) printf("%s\n", real_log[k]);
    printf("Cbc0012I Integer solution of 32 found by a line without its newline (12.5 seconds)");
    xe_cbc_log_stop(&lg);
    assert_int_equal(fstat(STDOUT_FILENO, &after), 0);
    assert_true(before.st_dev == after.st_dev && before.st_ino == after.st_ino);
    assert_true(fabs(lg.incumbent - 32.0) < 1e-12);
    assert_true(fabs(lg.tbest - 12.5) < 1e-12 && fabs(lg.tfirst - 0.68) < 1e-12);
    assert_true(fabs(lg.bound - 32.381386) < 1e-12);
}

/* Whole solves without a start (seeded random 9-node instances, 1-2 devices): the
 * first and best times are CBC's, in order, within the solve. */
static void test_solve_times_ordered(void **state)
{
    (void)state;
    int solved = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        xe_instance *in = xe_test_random_instance(seed, 9, 1 + (int)(seed % 2), 0);
        assert_non_null(in);
        xe_milp_opts o;
        xe_milp_opts_default(&o);
        o.isolate = 1;
        o.time_limit = 30;
        xe_milp_result res;
        xe_err err = {{0}};
        assert_int_equal(xe_milp_solve(in, &o, &res, &err), XE_OK);
        if (res.sol.R) {
            solved++;
            assert_true(res.time_first >= 0 && res.time_first <= res.time_best + 1e-9);
            assert_true(res.time_best <= res.solve_time + 1e-9);
        }
        xe_milp_result_clear(&res);
        xe_instance_free(in);
    }
    assert_true(solved >= 6);
}

/* Two threads solving in this process at once (isolate = 0) share fd 1: they take
 * turns, both finish with their own optimum, and stdout is where it was. */
typedef struct two_arg {
    uint64_t seed;
    int rc;
    double objective;
} two_arg;

static void *two_solve(void *p)
{
    two_arg *a = p;
    xe_instance *in = xe_test_random_instance(a->seed, 7, 1, 0);
    a->rc = -1;
    if (!in) return NULL;
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.rel_gap = 0;
    o.time_limit = 30;
    xe_milp_result res;
    xe_err err = {{0}};
    a->objective = INFINITY;
    a->rc = XE_OK;
    for (int k = 0; k < 8 && a->rc == XE_OK; k++) {
        a->rc = xe_milp_solve(in, &o, &res, &err);
        if (a->rc == XE_OK && k == 0) a->objective = res.objective;
        if (a->rc == XE_OK && res.objective != a->objective) a->rc = -2; /* same optimum each time */
        xe_milp_result_clear(&res);
    }
    xe_instance_free(in);
    return NULL;
}

static void test_threads_take_turns(void **state)
{
    (void)state;
    struct stat before, after;
    fflush(stdout);
    assert_int_equal(fstat(STDOUT_FILENO, &before), 0);
    two_arg a[2] = {{3, 0, 0}, {4, 0, 0}};
    double alone[2];
    for (int k = 0; k < 2; k++) { /* each on its own first */
        two_solve(&a[k]);
        assert_int_equal(a[k].rc, XE_OK);
        alone[k] = a[k].objective;
    }
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, two_solve, &a[k]), 0);
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(a[k].rc, XE_OK);
        assert_true(a[k].objective == alone[k]);
    }
    assert_int_equal(fstat(STDOUT_FILENO, &after), 0);
    assert_true(before.st_dev == after.st_dev && before.st_ino == after.st_ino);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_log_line_by_line),
        cmocka_unit_test(test_other_forms),
        cmocka_unit_test(test_through_the_pipe),
        cmocka_unit_test(test_solve_times_ordered),
        cmocka_unit_test(test_threads_take_turns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
