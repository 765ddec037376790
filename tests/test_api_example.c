/* The library's main path as docs/api.md shows it, compiled and run so that the page
 * stays true: read a graph, make an instance from a preset with a budget, plan it, take
 * the schedule as events, replay it in the simulator, write it, read it back. On the
 * repo's tiny graph (tests/data/tiny_graph.json: 5 nodes) on one GPU at 3000 B, where
 * the optimum, worked out by hand below, recomputes one node, and at 1 B, where nothing
 * fits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xengine/instance.h"
#include "xengine/io.h"
#include "xengine/plan.h"
#include "xengine/sim.h"

/* docs/api.md, "The main path": returns an XE_* status; *cost = the schedule's seconds */
static int plan_file(const char *graph_path, const char *budget, const char *out_path, double *cost, xe_err *err)
{
    xe_graph *g = NULL;
    int rc = xe_io_read_graph(graph_path, &g, err); /* finalized on success; g is ours */
    if (rc) return rc;
    int64_t bytes = 0;
    double frac = 0;
    rc = xe_io_parse_budget("budget", budget, &bytes, &frac, err); /* "50%" or "3000" */
    xe_recipe r;
    if (!rc) rc = xe_recipe_preset("gpu", frac > 0 ? frac : 1.0, &r, err);
    if (!rc && bytes > 0) r.budget_bytes[0] = bytes; /* a size wins over the fraction */
    xe_instance *in = NULL;
    if (!rc) rc = xe_instance_from_recipe(g, &r, &in, err); /* in owns g from here */
    if (rc) {
        xe_graph_free(g);
        return rc;
    }
    xe_plan_opts o;
    xe_plan_opts_default(&o);
    o.time_limit = 10; /* seconds */
    xe_plan_result res;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_sim_result sim;
    rc = xe_plan(in, &o, &res, err); /* XE_OK also when nothing fits: see res.infeasible */
    if (!rc) rc = xe_plan_result_schedule(in, &res, &s, err); /* XE_EINFEASIBLE: none */
    if (!rc) rc = xe_sim_run(in, &s, &sim, err);             /* the independent check */
    if (!rc) rc = xe_io_write_schedule(out_path, in, &s, &sim, NULL, err); /* atomic */
    if (!rc) *cost = sim.total_time;
    xe_schedule_clear(&s);
    xe_plan_result_clear(&res);
    xe_instance_free(in);
    return rc;
}

static void test_main_path(void **state)
{
    (void)state;
    char out[] = "/tmp/xe_api_example_XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    xe_err err;
    double cost = 0;
    /* tiny_graph at 3000 B on one GPU (costs in ms): every node once is 9.75 ms, with a
     * peak of 3008 B while relu1_grad runs (conv1, relu1, loss and its own output, held
     * for conv1_grad); the cheapest way under 3000 B frees conv1 (1000 B) before that and
     * computes it again for conv1_grad (2.5 ms), 12.25 ms in all, peak 3000 B */
    assert_int_equal(plan_file("tests/data/tiny_graph.json", "3000", out, &cost, &err), XE_OK);
    assert_true(fabs(cost - 0.01225) < 1e-12);
    /* what was written reads back against the same instance and replays to that cost */
    xe_graph *g = NULL;
    assert_int_equal(xe_io_read_graph("tests/data/tiny_graph.json", &g, &err), XE_OK);
    xe_recipe r;
    assert_int_equal(xe_recipe_preset("gpu", 1.0, &r, &err), XE_OK);
    r.budget_bytes[0] = 3000;
    xe_instance *in = NULL;
    assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_OK);
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_io_read_schedule(out, in, &s, &err), XE_OK);
    xe_sim_result sim;
    assert_int_equal(xe_sim_run(in, &s, &sim, &err), XE_OK);
    assert_true(fabs(sim.total_time - cost) < 1e-12);
    assert_int_equal(sim.recomputes, 1);
    assert_int_equal(sim.dev[0].peak, 3000);
    xe_schedule_clear(&s);
    xe_instance_free(in);
    /* at 1 B nothing fits: xe_plan returns XE_OK with res.infeasible, and no schedule */
    assert_int_equal(plan_file("tests/data/tiny_graph.json", "1", out, &cost, &err), XE_EINFEASIBLE);
    unlink(out);
}

/* Budgets and costs a caller sets through the public fields: a negative, zero or NaN
 * fraction, a negative byte count, are refused by xe_instance_from_recipe (XE_EINVAL),
 * and xe_plan refuses an instance edited afterwards (budget below 1 B, a cost of 1e30)
 * with XE_EINVAL instead of an assertion in the chain DP or a CBC abort behind XE_OK
 * (a new user's find, 2026-12-05). */
static void test_bad_fields(void **state)
{
    (void)state;
    xe_err err;
    const double fracs[] = {-0.5, 0.0, NAN};
    for (int i = 0; i < 4; i++) {
        xe_graph *g = NULL;
        assert_int_equal(xe_io_read_graph("tests/data/tiny_graph.json", &g, &err), XE_OK);
        xe_recipe r;
        assert_int_equal(xe_recipe_preset("gpu+cpu", 1.0, &r, &err), XE_OK);
        if (i < 3)
            r.budget_frac[i == 2 ? 0 : 1] = fracs[i];
        else
            r.budget_bytes[0] = -5;
        if (i == 3) r.budget_frac[0] = -1.0; /* bytes <= 0 fall back to the fraction */
        xe_instance *in = NULL;
        assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_EINVAL);
        assert_non_null(strstr(err.msg, "1 byte"));
        assert_null(in);
        xe_graph_free(g);
    }
    for (int i = 0; i < 2; i++) {
        xe_graph *g = NULL;
        assert_int_equal(xe_io_read_graph("tests/data/tiny_graph.json", &g, &err), XE_OK);
        xe_recipe r;
        assert_int_equal(xe_recipe_preset("gpu", 1.0, &r, &err), XE_OK);
        xe_instance *in = NULL;
        assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_OK);
        if (i == 0)
            in->dev[0].budget = -1;
        else
            in->cost[0] = 1e30;
        xe_plan_opts o;
        xe_plan_opts_default(&o);
        o.time_limit = 5;
        xe_plan_result res;
        assert_int_equal(xe_plan(in, &o, &res, &err), XE_EINVAL);
        assert_non_null(strstr(err.msg, i == 0 ? "budget -1 B" : "is not a number"));
        xe_plan_result_clear(&res);
        xe_instance_free(in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_main_path), cmocka_unit_test(test_bad_fields)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
