#include "support/valid.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "xengine/sim.h"

void xe_test_assert_stages_valid(const xe_instance *in, const xe_stages *st)
{
    xe_err err = {{0}};
    int rc = xe_stages_check(in, st, &err);
    if (rc) fprintf(stderr, "check: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_stages_to_schedule(in, st, &s, &err), XE_OK);
    xe_sim_result sr;
    rc = xe_sim_run(in, &s, &sr, &err);
    if (rc) fprintf(stderr, "sim: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    double c = xe_stages_cost(in, st);
    assert_true(fabs(sr.total_time - c) <= 1e-9 * fmax(1.0, c));
    for (int d = 0; d < in->ndev; d++) assert_true(sr.dev[d].peak <= in->dev[d].budget);
    xe_schedule_clear(&s);
}
