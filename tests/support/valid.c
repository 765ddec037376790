#include "support/valid.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "xengine/pebble.h"
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

int xe_test_is_topological(const xe_graph *g, const int *order)
{
    int n = g->n, ok = 1;
    int *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
    assert_non_null(pos);
    for (int v = 0; v < n; v++) pos[v] = -1;
    for (int k = 0; k < n; k++) {
        if (order[k] < 0 || order[k] >= n || pos[order[k]] >= 0) ok = 0;
        else pos[order[k]] = k;
    }
    for (int e = 0; ok && e < g->m; e++) ok = pos[g->esrc[e]] < pos[g->edst[e]];
    free(pos);
    return ok;
}

double xe_test_replay_one(const xe_instance *in, const xe_schedule *s, int64_t *peak)
{
    xe_sim_result r;
    xe_err err = {{0}};
    int rc = xe_sim_run(in, s, &r, &err);
    if (rc != XE_OK) print_error("simulator: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    assert_true(r.dev[0].peak <= in->dev[0].budget);
    if (peak) *peak = r.dev[0].peak;
    return r.total_time;
}

void xe_test_pebble_start(const xe_instance *in, xe_schedule *out)
{
    xe_pebble *p = xe_pebble_new(in->g, 0);
    assert_non_null(p);
    xe_schedule_init(out);
    xe_err err = {{0}};
    xe_pebble_answer a = XE_PEBBLE_NO;
    assert_int_equal(xe_pebble_schedule(p, in, 0, INFINITY, out, &a, NULL, NULL, &err), XE_OK);
    assert_int_equal(a, XE_PEBBLE_YES);
    xe_pebble_free(p);
}
