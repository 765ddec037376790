/* The solver child process (src/milp/isolate.c): a crash in the child is reported as a
 * crash at once, whatever signal handlers the caller has (cmocka's, here, which would
 * longjmp back into the test runner inside the child); a child past its limit is killed;
 * a child's error comes back with its message. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../src/milp/isolate.h"
#include "support/randinst.h"
#include "xengine/milp.h"

static int crash_solve(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err)
{
    (void)in, (void)o, (void)res, (void)err;
    raise(SIGSEGV);
    return XE_OK;
}

static int hang_solve(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err)
{
    (void)in, (void)res, (void)err;
    sleep((unsigned)ceil(o->time_limit) + 5);
    return XE_OK;
}

static int error_solve(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err)
{
    (void)in, (void)o;
    memset(res, 0, sizeof *res);
    return xe_err_set(err, XE_EINVAL, "bad option in the child");
}

static void run(xe_milp_solve_fn fn, double limit, int *rc, xe_milp_result *res, xe_err *err)
{
    xe_instance *in = xe_test_random_instance(3, 6, 1, 0);
    assert_non_null(in);
    xe_milp_opts o;
    xe_milp_opts_default(&o);
    o.time_limit = limit;
    *rc = xe_milp_isolated(in, &o, fn, res, err);
    xe_instance_free(in);
}

/* cmocka's SIGSEGV handler is installed while this runs: without the child's own reset
 * to the default action, the crash would be caught there, the child would go on
 * running the tests, and the parent would wait for the deadline and call it "killed". */
static void test_crash_reported(void **state)
{
    (void)state;
    int rc;
    xe_milp_result res;
    xe_err err = {{0}};
    run(crash_solve, 30.0, &rc, &res, &err);
    assert_int_equal(rc, XE_ESOLVER);
    assert_int_equal(res.killed, 0);
    assert_non_null(strstr(err.msg, "ended without an answer"));
    xe_milp_result_clear(&res);
}

static void test_hang_killed(void **state)
{
    (void)state;
    int rc;
    xe_milp_result res;
    xe_err err = {{0}};
    run(hang_solve, 0.2, &rc, &res, &err);
    assert_int_equal(rc, XE_OK);
    assert_int_equal(res.killed, 1);
    assert_int_equal(res.status, XE_MILP_NO_SOLUTION);
    assert_null(res.sol.R);
    xe_milp_result_clear(&res);
}

static void test_error_passed_back(void **state)
{
    (void)state;
    int rc;
    xe_milp_result res;
    xe_err err = {{0}};
    run(error_solve, 30.0, &rc, &res, &err);
    assert_int_equal(rc, XE_EINVAL);
    assert_int_equal(res.killed, 0);
    assert_string_equal(err.msg, "bad option in the child");
    xe_milp_result_clear(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash_reported),
        cmocka_unit_test(test_hang_killed),
        cmocka_unit_test(test_error_passed_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
