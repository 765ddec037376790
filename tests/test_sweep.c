/* Budget sweeps and maximum batch (include/xengine/sweep.h), against values worked out
 * by hand:
 *   - tests/data/tiny_graph.json on the gpu+cpu preset at 100% and 99.9% of its
 *     no-recomputation peak (3008 B): every method's cost (the derivation is in
 *     tests/cli/sweep.sh), statuses, peaks within the budget, bound <= cost;
 *   - a planner seed: a schedule from a smaller budget is kept when cheaper ("carried");
 *   - xe_sweep_max_batch on a synthetic five-node training graph whose every tensor is
 *     100 x batch bytes under a fixed budget of 1000 B: checkpoint-all needs 4 tensors
 *     (batch 2), one device at least 3 (batch 3, reached by recomputing the first
 *     node), so the planner's largest batch is 3 too; the probes follow doubling then
 *     bisection: 1, 2, 4 (fails), 3 (fails) for checkpoint-all; with a CPU of 4000 B
 *     CPU-only and the planner reach batch 13 (3 x 1300 B on the CPU). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/io.h"
#include "xengine/sweep.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

static xe_instance *tiny(int64_t gpu_budget)
{
    xe_err err;
    xe_graph *g = NULL;
    char path[4096];
    const char *src = getenv("XE_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/data/tiny_graph.json", src ? src : ".");
    assert_int_equal(xe_io_read_graph(path, &g, &err), XE_OK);
    xe_recipe r;
    assert_int_equal(xe_recipe_preset("gpu+cpu", 1.0, &r, &err), XE_OK);
    r.budget_bytes[0] = gpu_budget;
    xe_instance *in = NULL;
    assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_OK);
    return in;
}

static void test_tiny_points(void **state)
{
    (void)state;
    xe_err err;
    xe_sweep_cell c[XE_SWEEP_NMETHODS];
    xe_instance *in = tiny(3008);
    assert_int_equal(xe_instance_norecompute_peak(in->g), 3008);
    xe_sweep_opts o;
    xe_sweep_opts_default(in, &o);
    assert_int_equal(o.gpu, 0);
    assert_int_equal(o.cpu, 1);
    assert_int_equal(o.swept, 0);
    o.time_limit = 2;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_OK);
    for (int m = 0; m < XE_SWEEP_CHEN_SQRT; m++) assert_int_equal(c[m].status, XE_SWEEP_FOUND);
    assert_true(close_to(c[XE_SWEEP_PLANNER].cost, 0.00975));
    assert_true(close_to(c[XE_SWEEP_GPU_ONLY].cost, 0.00975));
    assert_true(close_to(c[XE_SWEEP_CHECKPOINT_ALL].cost, 0.00975));
    assert_true(close_to(c[XE_SWEEP_CPU_ONLY].cost, 0.078));
    assert_int_equal(c[XE_SWEEP_CHECKPOINT_ALL].peak, 3008);
    assert_int_equal(c[XE_SWEEP_CPU_ONLY].peak, 0); /* nothing on the swept GPU */
    assert_true(c[XE_SWEEP_PLANNER].bound <= c[XE_SWEEP_PLANNER].cost);

    /* 99.9%: copies of conv1 out and back beat recomputing it */
    in->dev[0].budget = 3004;
    xe_stages keep = {0};
    o.keep = &keep;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_OK);
    assert_true(close_to(c[XE_SWEEP_PLANNER].cost, 0.00975 + 2 * (10e-6 + 1000 / 16e9)));
    assert_int_equal(c[XE_SWEEP_PLANNER].copies, 2);
    assert_true(close_to(c[XE_SWEEP_GPU_ONLY].cost, 0.01225));
    assert_int_equal(c[XE_SWEEP_GPU_ONLY].recomputes, 1);
    assert_int_equal(c[XE_SWEEP_CHECKPOINT_ALL].status, XE_SWEEP_NONE);
    for (int m = 0; m < XE_SWEEP_NMETHODS; m++)
        if (c[m].status == XE_SWEEP_FOUND) assert_true(c[m].peak <= 3004);
    assert_non_null(keep.R);

    /* the 3004 B schedule seeds a larger budget where the planner has no time: kept */
    in->dev[0].budget = 3006;
    o.keep = NULL;
    o.seed = &keep;
    o.time_limit = 0;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_OK);
    assert_true(c[XE_SWEEP_PLANNER].cost <= 0.00975 + 2 * (10e-6 + 1000 / 16e9) + 1e-15);

    /* below every single-device footprint (3000 B): GPU methods find nothing */
    in->dev[0].budget = 2707;
    o.seed = NULL;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_OK);
    assert_int_equal(c[XE_SWEEP_GPU_ONLY].status, XE_SWEEP_NONE);
    assert_int_equal(c[XE_SWEEP_CHECKPOINT_ALL].status, XE_SWEEP_NONE);
    assert_true(close_to(c[XE_SWEEP_CPU_ONLY].cost, 0.078));
    xe_stages_clear(&keep);
    xe_instance_free(in);
}

/* f0 -> f1 -> loss -> g1 -> g0, g1 reads f1, g0 reads f0; every node 100 x b bytes and
 * 1 s on the GPU (2 s on a CPU when ndev = 2); budgets fixed: GPU 1000 B, CPU 4000 B. */
typedef struct syn {
    int ndev;
} syn;

static int build_syn(void *ctx, int64_t b, xe_instance **out, xe_err *err)
{
    const syn *s = ctx;
    xe_graph *g = xe_graph_new("syn");
    static const char *name[5] = {"f0", "f1", "loss", "g1", "g0"};
    for (int v = 0; v < 5; v++) assert_int_equal(xe_graph_add_node(g, name[v], "op", v >= 3, 100 * b, 0, 1.0, err), v);
    static const int e[6][2] = {{0, 1}, {1, 2}, {2, 3}, {1, 3}, {3, 4}, {0, 4}};
    for (int k = 0; k < 6; k++) assert_int_equal(xe_graph_add_edge(g, e[k][0], e[k][1], err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, err), XE_OK);
    xe_instance *in = xe_instance_new(g, s->ndev);
    assert_non_null(in);
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    in->dev[0].kind = XE_DEV_GPU;
    in->dev[0].budget = 1000;
    if (s->ndev == 2) {
        snprintf(in->dev[1].name, sizeof in->dev[1].name, "cpu");
        in->dev[1].kind = XE_DEV_CPU;
        in->dev[1].budget = 4000;
    }
    for (int v = 0; v < 5; v++)
        for (int d = 0; d < s->ndev; d++) {
            in->cost[v * s->ndev + d] = 1.0 + d;
            for (int f = 0; f < s->ndev; f++)
                if (f != d) in->copy[(v * s->ndev + d) * s->ndev + f] = 0.01;
        }
    *out = in;
    return XE_OK;
}

static void test_max_batch(void **state)
{
    (void)state;
    xe_err err;
    syn one = {1};
    xe_instance *in = NULL;
    build_syn(&one, 1, &in, &err);
    xe_sweep_opts o;
    xe_sweep_opts_default(in, &o);
    xe_instance_free(in);
    o.time_limit = 1;
    int64_t b;
    xe_sweep_cell c;
    int probes;
    assert_int_equal(xe_sweep_max_batch(build_syn, &one, XE_SWEEP_CHECKPOINT_ALL, &o, 64, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(b, 2);
    assert_int_equal(probes, 4); /* 1, 2, 4 fails, 3 fails */
    assert_int_equal(c.status, XE_SWEEP_FOUND);
    assert_int_equal(c.peak, 800);
    assert_true(close_to(c.cost, 5.0));
    assert_int_equal(xe_sweep_max_batch(build_syn, &one, XE_SWEEP_GPU_ONLY, &o, 64, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(b, 3);
    assert_int_equal(c.peak, 900);
    assert_true(close_to(c.cost, 6.0)); /* f0 recomputed once */
    assert_int_equal(xe_sweep_max_batch(build_syn, &one, XE_SWEEP_PLANNER, &o, 64, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(b, 3);
    assert_true(close_to(c.cost, 6.0));
    /* the footprint bound: g1 or g0 with its inputs is 3 x 100 b bytes > 1000 from b = 4 */
    int64_t ub;
    assert_int_equal(xe_sweep_batch_upper(build_syn, &one, 64, &ub, &probes, &err), XE_OK);
    assert_int_equal(ub, 3);
    assert_int_equal(probes, 4); /* 1, 2, 4 ruled out, 3 */
    /* no CPU: its method is n/a; a limit below the answer is the answer */
    assert_int_equal(xe_sweep_max_batch(build_syn, &one, XE_SWEEP_CPU_ONLY, &o, 64, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(c.status, XE_SWEEP_NA);
    assert_int_equal(b, 0);
    assert_int_equal(xe_sweep_max_batch(build_syn, &one, XE_SWEEP_GPU_ONLY, &o, 2, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(b, 2);

    /* with the CPU (4000 B): CPU-only fits 3 tensors of 100 b up to b = 13, and the
     * planner, which may use both, at least as much */
    syn two = {2};
    build_syn(&two, 1, &in, &err);
    xe_sweep_opts_default(in, &o);
    xe_instance_free(in);
    o.time_limit = 1;
    assert_int_equal(xe_sweep_max_batch(build_syn, &two, XE_SWEEP_CPU_ONLY, &o, 64, &b, &c, &probes, &err), XE_OK);
    assert_int_equal(b, 13);
    int64_t bp;
    assert_int_equal(xe_sweep_max_batch(build_syn, &two, XE_SWEEP_PLANNER, &o, 64, &bp, &c, &probes, &err), XE_OK);
    /* from b = 11 a tensor (1100 B) does not fit the GPU at all and everything runs on
     * the CPU, so 13 is also the planner's largest batch, at 5 x 2 s + f0 again = 12 s */
    assert_int_equal(bp, 13);
    assert_int_equal(xe_sweep_batch_upper(build_syn, &two, 64, &ub, NULL, &err), XE_OK);
    assert_int_equal(ub, 13); /* the CPU holds 3 x 1300 B, not 3 x 1400 B */
    assert_int_equal(c.status, XE_SWEEP_FOUND);
    assert_true(close_to(c.cost, 12.0));
}

static void test_bad_options(void **state)
{
    (void)state;
    xe_err err;
    xe_sweep_cell c[XE_SWEEP_NMETHODS];
    xe_instance *in = tiny(3008);
    xe_sweep_opts o;
    xe_sweep_opts_default(in, &o);
    o.time_limit = -1;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_EINVAL);
    xe_sweep_opts_default(in, &o);
    o.gpu = 5;
    assert_int_equal(xe_sweep_point(in, &o, c, &err), XE_EINVAL);
    assert_string_equal(xe_sweep_method_name(XE_SWEEP_CHEN_SQRT), "chen-sqrt");
    assert_string_equal(xe_sweep_method_name(99), "?");
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_points),
        cmocka_unit_test(test_max_batch),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
