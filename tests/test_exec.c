/* Tests of the executor (include/xengine/exec.h): device pools, oneDNN kernels and
 * schedule execution on small networks built with the net.h builders.
 *
 * For each net (an MLP; a CNN with BatchNorm; a residual block with Add; a net with
 * Concat, LRN, LeakyRelu, AveragePool, Dropout and Clip; one with ConvTranspose,
 * InstanceNorm, MatMul, broadcast Add and Softmax; one with a weight shared by two ops
 * and a tensor read twice by one op; a Gemm with transA, alpha and beta) the parameter
 * gradients of
 *   - a keep-everything schedule,
 *   - a schedule that recomputes every forward tensor before each backward use,
 *   - the keep-everything schedule with every backward node computed twice, and
 *   - the greedy planner's schedule at a tight budget
 * must be equal bit for bit on one device, and a two-device schedule (1 and 2 OpenMP
 * threads, with copies) must agree within 1e-5 relative, and bit for bit with
 * keep-everything computing each node on the device of its first compute there
 * (xe_exec_keep_all_placed) where it computes no node on two devices. A central finite difference of
 * the loss checks the largest gradient entry of every parameter, and the loss of an MLP
 * with a zeroed last layer is checked by hand, so "equal to itself" is not the only
 * check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/exec.h"
#include "xengine/instance.h"
#include "xengine/net.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/stages.h"

/* ---- building nets ---- */

static int tensor(xe_net *net, const char *name, xe_tensor_role role, int rank, int64_t d0, int64_t d1, int64_t d2,
                  int64_t d3)
{
    int64_t dim[4] = {d0, d1, d2, d3};
    xe_err err;
    int t = xe_net_add_tensor(net, name, role, XE_DT_FLOAT32, rank, dim, &err);
    assert_true(t >= 0);
    return t;
}

static int op(xe_net *net, xe_op_kind kind, const char *name, int nin, const int *in)
{
    xe_err err;
    char out[64];
    snprintf(out, sizeof out, "%s_out", name);
    int k = xe_net_add_op(net, kind, name, nin, in, out, &err);
    if (k < 0) fail_msg("add_op %s: %s", name, err.msg);
    return k;
}
static int out_of(const xe_net *net, int k) { return net->op[k].out; }

static int conv(xe_net *net, const char *name, int x, int64_t cin, int64_t cout, int64_t kk, int pad, int stride)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(b, sizeof b, "%s_b", name);
    int in[3] = {x, tensor(net, w, XE_T_PARAM, 4, cout, cin, kk, kk), tensor(net, b, XE_T_PARAM, 1, cout, 0, 0, 0)};
    int k = op(net, XE_OP_CONV, name, 3, in);
    for (int i = 0; i < 4; i++) net->op[k].pad[i] = pad;
    net->op[k].stride[0] = net->op[k].stride[1] = stride;
    return out_of(net, k);
}

static int gemm(xe_net *net, const char *name, int x, int64_t in_f, int64_t out_f)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(b, sizeof b, "%s_b", name);
    int in[3] = {x, tensor(net, w, XE_T_PARAM, 2, out_f, in_f, 0, 0), tensor(net, b, XE_T_PARAM, 1, out_f, 0, 0, 0)};
    int k = op(net, XE_OP_GEMM, name, 3, in);
    net->op[k].trans_b = 1;
    return out_of(net, k);
}

static int bn(xe_net *net, const char *name, int x, int64_t c)
{
    char s[4][64];
    static const char *suf[4] = {"scale", "bias", "mean", "var"};
    int in[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(s[i], sizeof s[i], "%s_%s", name, suf[i]);
        in[i + 1] = tensor(net, s[i], XE_T_PARAM, 1, c, 0, 0, 0);
    }
    return out_of(net, op(net, XE_OP_BATCHNORM, name, 5, in));
}

static int unary(xe_net *net, xe_op_kind kind, const char *name, int x)
{
    return out_of(net, op(net, kind, name, 1, &x));
}

static int pool(xe_net *net, xe_op_kind kind, const char *name, int x, int kk, int stride)
{
    int k = op(net, kind, name, 1, &x);
    net->op[k].kernel[0] = net->op[k].kernel[1] = kk;
    net->op[k].stride[0] = net->op[k].stride[1] = stride;
    return out_of(net, k);
}

/* x [4, 8] -> Gemm 16 -> Relu -> Gemm 5 */
static xe_net *net_mlp(void)
{
    xe_net *net = xe_net_new("mlp");
    int x = tensor(net, "x", XE_T_INPUT, 2, 4, 8, 0, 0);
    x = gemm(net, "fc1", x, 8, 16);
    x = unary(net, XE_OP_RELU, "relu1", x);
    gemm(net, "fc2", x, 16, 5);
    return net;
}

/* x [4, 8] -> Gemm 16 -> Sigmoid -> Gemm 16 -> Sigmoid -> Gemm 5 (Sigmoid's backward reads
 * its output Y: dX = dY Y (1 - Y)) */
static xe_net *net_sigmoid(void)
{
    xe_net *net = xe_net_new("sigmoid");
    int x = tensor(net, "x", XE_T_INPUT, 2, 4, 8, 0, 0);
    x = gemm(net, "fc1", x, 8, 16);
    x = unary(net, XE_OP_SIGMOID, "sig1", x);
    x = gemm(net, "fc2", x, 16, 16);
    x = unary(net, XE_OP_SIGMOID, "sig2", x);
    gemm(net, "fc3", x, 16, 5);
    return net;
}

/* x [2, 3, 8, 8] -> Conv 4 -> BN -> Relu -> MaxPool 2 -> Flatten -> Gemm 5 */
static xe_net *net_cnn(void)
{
    xe_net *net = xe_net_new("cnn");
    int x = tensor(net, "x", XE_T_INPUT, 4, 2, 3, 8, 8);
    x = conv(net, "conv1", x, 3, 4, 3, 1, 1);
    x = bn(net, "bn1", x, 4);
    x = unary(net, XE_OP_RELU, "relu1", x);
    x = pool(net, XE_OP_MAXPOOL, "pool1", x, 2, 2);
    x = unary(net, XE_OP_FLATTEN, "flat", x);
    gemm(net, "fc", x, 64, 5);
    return net;
}

/* x -> Conv -> Relu (r) -> Conv -> BN -> Add(r, .) -> Relu -> GAP -> Flatten -> Gemm */
static xe_net *net_skip(void)
{
    xe_net *net = xe_net_new("skip");
    int x = tensor(net, "x", XE_T_INPUT, 4, 2, 3, 6, 6);
    x = conv(net, "conv1", x, 3, 4, 3, 1, 1);
    int r = unary(net, XE_OP_RELU, "relu1", x);
    x = conv(net, "conv2", r, 4, 4, 3, 1, 1);
    x = bn(net, "bn2", x, 4);
    int in[2] = {r, x};
    x = out_of(net, op(net, XE_OP_ADD, "add", 2, in));
    x = unary(net, XE_OP_RELU, "relu2", x);
    x = unary(net, XE_OP_GLOBAL_AVGPOOL, "gap", x);
    x = unary(net, XE_OP_FLATTEN, "flat", x);
    gemm(net, "fc", x, 4, 3);
    return net;
}

/* x -> Conv a -> Relu;  x -> Conv b -> LeakyRelu;  Concat -> LRN -> AvgPool -> Dropout
 *   -> Flatten -> Gemm -> Clip */
static xe_net *net_concat(void)
{
    xe_net *net = xe_net_new("concat");
    int x = tensor(net, "x", XE_T_INPUT, 4, 2, 2, 6, 6);
    int a = unary(net, XE_OP_RELU, "relu_a", conv(net, "conv_a", x, 2, 3, 3, 1, 1));
    int b = unary(net, XE_OP_LEAKY_RELU, "leaky_b", conv(net, "conv_b", x, 2, 2, 1, 0, 1));
    int in[2] = {a, b};
    int c = out_of(net, op(net, XE_OP_CONCAT, "cat", 2, in));
    int k = op(net, XE_OP_LRN, "lrn", 1, &c);
    net->op[k].size = 3;
    c = pool(net, XE_OP_AVGPOOL, "avg", out_of(net, k), 2, 2);
    c = unary(net, XE_OP_DROPOUT, "drop", c);
    c = unary(net, XE_OP_FLATTEN, "flat", c);
    c = gemm(net, "fc", c, 45, 4);
    k = op(net, XE_OP_CLIP, "clip", 1, &c);
    net->op[k].clip_min = -0.4;
    net->op[k].clip_max = 0.4;
    return net;
}

/* x [2, 2, 5, 5] -> ConvTranspose 3 -> InstanceNorm -> Flatten -> MatMul [147, 6]
 *   -> Add (broadcast bias [6]) -> Softmax */
static xe_net *net_misc(void)
{
    xe_net *net = xe_net_new("misc");
    int x = tensor(net, "x", XE_T_INPUT, 4, 2, 2, 5, 5);
    int in[3] = {x, tensor(net, "up_w", XE_T_PARAM, 4, 2, 3, 3, 3), tensor(net, "up_b", XE_T_PARAM, 1, 3, 0, 0, 0)};
    x = out_of(net, op(net, XE_OP_CONV_TRANSPOSE, "up", 3, in));
    int nin[3] = {x, tensor(net, "in_scale", XE_T_PARAM, 1, 3, 0, 0, 0), tensor(net, "in_bias", XE_T_PARAM, 1, 3, 0, 0, 0)};
    x = out_of(net, op(net, XE_OP_INSTANCENORM, "inorm", 3, nin));
    x = unary(net, XE_OP_FLATTEN, "flat", x);
    int mm[2] = {x, tensor(net, "mm_w", XE_T_PARAM, 2, 147, 6, 0, 0)};
    x = out_of(net, op(net, XE_OP_MATMUL, "mm", 2, mm));
    int add[2] = {x, tensor(net, "add_b", XE_T_PARAM, 1, 6, 0, 0, 0)};
    x = out_of(net, op(net, XE_OP_ADD, "addb", 2, add));
    unary(net, XE_OP_SOFTMAX, "soft", x);
    return net;
}

/* A weight shared by two ops (its gradient is the sum of both contributions) and a
 * tensor read twice by one op: x [4, 6] -> Gemm(W) -> Relu r -> Gemm(same W) -> Add(., r)
 *   -> Add(a, a) -> Gemm 3 */
static xe_net *net_tied(void)
{
    xe_net *net = xe_net_new("tied");
    int x = tensor(net, "x", XE_T_INPUT, 2, 4, 6, 0, 0);
    int w = tensor(net, "w", XE_T_PARAM, 2, 6, 6, 0, 0);
    int in[2] = {x, w};
    int r = unary(net, XE_OP_RELU, "relu1", out_of(net, op(net, XE_OP_MATMUL, "mm1", 2, in)));
    in[0] = r;
    int y = out_of(net, op(net, XE_OP_MATMUL, "mm2", 2, in));
    int add[2] = {y, r};
    int a = out_of(net, op(net, XE_OP_ADD, "add1", 2, add));
    int twice[2] = {a, a};
    a = out_of(net, op(net, XE_OP_ADD, "add2", 2, twice));
    gemm(net, "fc", a, 6, 3);
    return net;
}

/* Gemm with transA, alpha and beta: x [5, 4] -> Gemm h 4 -> Relu r -> Gemm(r, B [5, 6],
 * C [1, 6], transA, alpha 0.7, beta 1.5) -> logits [4, 6] (h's gradient flows through
 * the transposed dA) */
static xe_net *net_gemmt(void)
{
    xe_net *net = xe_net_new("gemmt");
    int x = tensor(net, "x", XE_T_INPUT, 2, 5, 4, 0, 0);
    int r = unary(net, XE_OP_RELU, "relu", gemm(net, "h", x, 4, 4));
    int in[3] = {r, tensor(net, "g_b", XE_T_PARAM, 2, 5, 6, 0, 0), tensor(net, "g_c", XE_T_PARAM, 2, 1, 6, 0, 0)};
    int k = op(net, XE_OP_GEMM, "g", 3, in);
    net->op[k].trans_a = 1;
    net->op[k].alpha = 0.7;
    net->op[k].beta = 1.5;
    return net;
}

/* ---- running ---- */

typedef struct fixture {
    xe_net *net;
    xe_graph *g; /* owned by inst */
    xe_train_map map;
    xe_instance *inst;
} fixture;

/* Training graph and an instance with ndev devices (budgets `budget`, unit costs). */
static void setup_net(fixture *f, xe_net *net, int ndev, int64_t budget)
{
    xe_err err;
    memset(f, 0, sizeof *f);
    f->net = net;
    assert_non_null(net);
    if (xe_net_infer_shapes(net, &err)) fail_msg("shapes: %s", err.msg);
    if (xe_net_training_graph(net, &f->g, &f->map, &err)) fail_msg("training graph: %s", err.msg);
    f->inst = xe_instance_new(f->g, ndev);
    assert_non_null(f->inst);
    for (int d = 0; d < ndev; d++) {
        snprintf(f->inst->dev[d].name, sizeof f->inst->dev[d].name, "cpu%d", d + 1);
        f->inst->dev[d].budget = budget > 0 ? budget : (INT64_C(1) << 40);
    }
    for (int v = 0; v < f->g->n; v++)
        for (int d = 0; d < ndev; d++) {
            f->inst->cost[v * ndev + d] = 1.0;
            for (int e = 0; e < ndev; e++) f->inst->copy[(v * ndev + d) * ndev + e] = d == e ? 0 : 0.5;
        }
}

static void teardown_net(fixture *f)
{
    xe_instance_free(f->inst);
    xe_train_map_clear(&f->map);
    xe_net_free(f->net);
}

/* Runs s; returns the step data (gradients) through *data (caller clears). */
static int run(fixture *f, const xe_schedule *s, const int *threads, xe_exec_data *data, xe_exec_result *res,
               xe_err *err)
{
    if (xe_exec_data_init(f->net, 7, data, err)) fail_msg("data: %s", err->msg);
    xe_exec_opts o;
    xe_exec_opts_default(&o);
    for (int d = 0; d < f->inst->ndev; d++) o.threads[d] = threads ? threads[d] : 1;
    return xe_exec_run(f->net, &f->map, f->inst, s, data, &o, res, err);
}

static void run_ok(fixture *f, const xe_schedule *s, const int *threads, xe_exec_data *data, xe_exec_result *res)
{
    xe_err err = {{0}};
    int rc = run(f, s, threads, data, res, &err);
    if (rc) fail_msg("exec %s: %s", f->net->name, err.msg);
    assert_true(res->sim_valid);
    assert_true(isfinite(res->loss) && res->loss > 0);
    for (int d = 0; d < res->ndev; d++) {
        /* the pool counts exactly what the simulator counts */
        assert_int_equal(res->dev[d].peak, res->dev[d].pred_peak);
        if (res->dev[d].budget > 0) assert_true(res->dev[d].peak <= res->dev[d].budget);
    }
}

static int64_t nparam_floats(const xe_net *net, const xe_exec_data *a)
{
    int64_t n = 0;
    for (int t = 0; t < net->nt; t++)
        if (a->grad[t]) n += xe_tensor_numel(&net->t[t]);
    return n;
}

static void assert_grads_bitwise(const xe_net *net, const xe_exec_data *a, const xe_exec_data *b)
{
    int nz = 0;
    for (int t = 0; t < net->nt; t++) {
        if (!a->grad[t]) continue;
        assert_non_null(b->grad[t]);
        size_t bytes = (size_t)xe_tensor_numel(&net->t[t]) * sizeof(float);
        if (memcmp(a->grad[t], b->grad[t], bytes)) fail_msg("%s: gradient of %s differs", net->name, net->t[t].name);
        for (int64_t i = 0; i < xe_tensor_numel(&net->t[t]); i++) nz += a->grad[t][i] != 0;
    }
    assert_true(nz > nparam_floats(net, a) / 4); /* gradients are not trivially zero */
}

/* |a - b| <= 1e-5 * max |a| over each parameter's gradient. */
static void assert_grads_close(const xe_net *net, const xe_exec_data *a, const xe_exec_data *b)
{
    for (int t = 0; t < net->nt; t++) {
        if (!a->grad[t]) continue;
        int64_t n = xe_tensor_numel(&net->t[t]);
        double mx = 0, diff = 0;
        for (int64_t i = 0; i < n; i++) {
            mx = fmax(mx, fabs(a->grad[t][i]));
            diff = fmax(diff, fabs((double)a->grad[t][i] - b->grad[t][i]));
        }
        if (diff > 1e-5 * mx) fail_msg("%s: gradient of %s differs by %g (scale %g)", net->name, net->t[t].name, diff, mx);
    }
}

/* Greedy planner schedule at the tightest budget fraction (of the no-recomputation peak)
 * it solves, from 50% up; devices get cost 1 on d == v % ndev, 3 elsewhere when two. */
static void planner_schedule(fixture *f, xe_schedule *s, int *recomputes)
{
    xe_err err;
    int64_t peak = xe_instance_norecompute_peak(f->g);
    int ndev = f->inst->ndev;
    if (ndev > 1)
        for (int v = 0; v < f->g->n; v++)
            for (int d = 0; d < ndev; d++) f->inst->cost[v * ndev + d] = d == v % ndev ? 1.0 : 3.0;
    for (int pct = 50; pct <= 100; pct += 5) {
        for (int d = 0; d < ndev; d++) f->inst->dev[d].budget = peak * pct / 100;
        xe_stages st;
        if (xe_heur_greedy(f->inst, &st, &err)) continue;
        int rc = xe_stages_to_schedule(f->inst, &st, s, &err);
        xe_stages_clear(&st);
        if (rc) fail_msg("to_schedule: %s", err.msg);
        xe_sim_result r;
        if (xe_sim_run(f->inst, s, &r, &err)) fail_msg("sim: %s", err.msg);
        *recomputes = r.recomputes;
        return;
    }
    fail_msg("%s: greedy found no schedule up to 100%%", f->net->name);
}

static void check_net(xe_net *(*make)(void))
{
    fixture f;
    setup_net(&f, make(), 1, 0);
    xe_err err;
    xe_schedule keep, remat, plan;
    xe_schedule_init(&keep);
    xe_schedule_init(&remat);
    xe_schedule_init(&plan);
    assert_int_equal(xe_exec_keep_all_schedule(f.g, 0, &keep, &err), XE_OK);
    assert_int_equal(xe_exec_remat_schedule(f.g, &f.map, 0, &remat, &err), XE_OK);
    xe_exec_data d1, d2, d3;
    xe_exec_result r1, r2, r3;
    run_ok(&f, &keep, NULL, &d1, &r1);
    run_ok(&f, &remat, NULL, &d2, &r2);
    xe_sim_result sk, sr;
    assert_int_equal(xe_sim_run(f.inst, &keep, &sk, &err), XE_OK);
    assert_int_equal(xe_sim_run(f.inst, &remat, &sr, &err), XE_OK);
    assert_int_equal(sk.recomputes, 0);
    assert_true(sr.recomputes > 0);        /* it really rematerializes */
    assert_true(r2.dev[0].peak <= r1.dev[0].peak);
    assert_true(r1.loss == r2.loss);
    assert_grads_bitwise(f.net, &d1, &d2);
    xe_exec_data_clear(&d2);

    /* every backward node computed twice (freed and recomputed right away): parameter
     * gradients are overwritten per node, not accumulated, so nothing changes */
    xe_schedule twice;
    xe_schedule_init(&twice);
    for (int i = 0; i < keep.len; i++) {
        const xe_event *e = &keep.ev[i];
        assert_int_equal(xe_schedule_push(&twice, e->kind, e->node, e->dev, e->dst), XE_OK);
        if (e->kind == XE_EV_COMPUTE && f.map.role[e->node] == XE_TN_BACKWARD) {
            assert_int_equal(xe_schedule_push(&twice, XE_EV_FREE, e->node, 0, -1), XE_OK);
            assert_int_equal(xe_schedule_push(&twice, XE_EV_COMPUTE, e->node, 0, -1), XE_OK);
        }
    }
    run_ok(&f, &twice, NULL, &d2, &r2);
    assert_grads_bitwise(f.net, &d1, &d2);
    xe_schedule_clear(&twice);

    /* the planner's schedule at a tight budget */
    int rec = 0;
    planner_schedule(&f, &plan, &rec);
    run_ok(&f, &plan, NULL, &d3, &r3);
    assert_true(r3.dev[0].peak <= r1.dev[0].peak);
    assert_grads_bitwise(f.net, &d1, &d3);
    xe_exec_data_clear(&d2);
    xe_exec_data_clear(&d3);
    xe_schedule_clear(&plan);

    /* two devices with 1 and 2 threads: a heterogeneous planner schedule with copies */
    fixture f2;
    setup_net(&f2, make(), 2, 0);
    xe_schedule_init(&plan);
    planner_schedule(&f2, &plan, &rec);
    int threads[2] = {1, 2};
    xe_exec_data d4;
    xe_exec_result r4;
    int caller_threads = omp_get_max_threads();
    run_ok(&f2, &plan, threads, &d4, &r4);
    assert_int_equal(omp_get_max_threads(), caller_threads); /* the caller's count is restored */
    assert_int_equal(r4.dev[0].threads, 1);
    assert_int_equal(r4.dev[1].threads, 2);
    assert_true(r4.dev[0].computes > 0 && r4.dev[1].computes > 0);
    assert_true(r4.dev[0].copies_in + r4.dev[1].copies_in > 0);
    assert_true(fabs(r4.loss - r1.loss) <= 1e-5 * r1.loss);
    assert_grads_close(f.net, &d1, &d4);
    /* keep-everything with each node on the device of its first compute in the plan
     * (xe_exec_keep_all_placed, `xengine run --check-grads`'s reference): the same
     * kernels and thread counts, so bit for bit where the plan computes no node on two
     * devices, else within 1e-5 */
    int n2 = f2.inst->g->n;
    int *dev_of = malloc((size_t)n2 * sizeof *dev_of);
    assert_non_null(dev_of);
    int split = xe_exec_first_devices(&plan, n2, dev_of);
    xe_schedule placed;
    xe_schedule_init(&placed);
    assert_int_equal(xe_exec_keep_all_placed(f2.inst->g, dev_of, 2, &placed, &err), XE_OK);
    int pcopies = 0, pcomputes = 0;
    for (int i = 0; i < placed.len; i++) {
        pcopies += placed.ev[i].kind == XE_EV_COPY;
        pcomputes += placed.ev[i].kind == XE_EV_COMPUTE;
    }
    assert_int_equal(pcomputes, n2); /* every node once */
    int64_t saved[2] = {f2.inst->dev[0].budget, f2.inst->dev[1].budget};
    int64_t all = 0; /* room for every tensor on each device (run's reference has unbounded pools) */
    for (int v = 0; v < n2; v++) all += f2.inst->g->nodes[v].mem;
    f2.inst->dev[0].budget = f2.inst->dev[1].budget = all;
    xe_exec_data d5;
    xe_exec_result r5;
    run_ok(&f2, &placed, threads, &d5, &r5);
    f2.inst->dev[0].budget = saved[0];
    f2.inst->dev[1].budget = saved[1];
    assert_true(r5.dev[0].computes > 0 && r5.dev[1].computes > 0 && pcopies > 0);
    if (split == 0) assert_grads_bitwise(f.net, &d5, &d4);
    else assert_grads_close(f.net, &d5, &d4);
    print_message("%s: two-device plan against keep-everything on its devices: %s (%d computes on a second "
                  "device)\n", f.net->name, split ? "within 1e-5" : "bit for bit", split);
    xe_exec_data_clear(&d5);
    xe_schedule_clear(&placed);
    free(dev_of);
    xe_exec_data_clear(&d4);
    xe_schedule_clear(&plan);
    teardown_net(&f2);

    xe_exec_data_clear(&d1);
    xe_schedule_clear(&keep);
    xe_schedule_clear(&remat);
    teardown_net(&f);
}

static void test_mlp(void **state) { (void)state; check_net(net_mlp); }
static void test_cnn_bn(void **state) { (void)state; check_net(net_cnn); }
static void test_skip(void **state) { (void)state; check_net(net_skip); }
static void test_concat(void **state) { (void)state; check_net(net_concat); }
static void test_misc(void **state) { (void)state; check_net(net_misc); }
static void test_tied(void **state) { (void)state; check_net(net_tied); }
static void test_gemmt(void **state) { (void)state; check_net(net_gemmt); }
static void test_sigmoid(void **state) { (void)state; check_net(net_sigmoid); }

/* Loss of one step with parameter t's element i shifted by h. */
static double loss_at(fixture *f, const xe_schedule *s, int t, int64_t i, double h)
{
    xe_exec_data d;
    xe_exec_result r;
    xe_err err;
    if (xe_exec_data_init(f->net, 7, &d, &err)) fail_msg("%s", err.msg);
    d.val[t][i] = (float)(d.val[t][i] + h);
    xe_exec_opts o;
    xe_exec_opts_default(&o);
    o.threads[0] = 1;
    if (xe_exec_run(f->net, &f->map, f->inst, s, &d, &o, &r, &err)) fail_msg("%s", err.msg);
    xe_exec_data_clear(&d);
    return r.loss;
}

/* The largest gradient entry of every parameter tensor against a central difference of
 * the loss (h = 1e-3; float32 forward, so a 0.5% + 1e-4 tolerance; the nets are only
 * piecewise smooth, and h is small against the activations so few kinks are crossed).
 * Entries below 1e-3 are skipped: BatchNorm's mean and var (no gradient) and a bias
 * right before a BatchNorm (gradient 0 in exact arithmetic). */
static void fd_check(xe_net *(*make)(void))
{
    fixture f;
    setup_net(&f, make(), 1, 0);
    xe_err err;
    xe_schedule keep;
    xe_schedule_init(&keep);
    assert_int_equal(xe_exec_keep_all_schedule(f.g, 0, &keep, &err), XE_OK);
    xe_exec_data d;
    xe_exec_result r;
    run_ok(&f, &keep, NULL, &d, &r);
    int checked = 0;
    for (int t = 0; t < f.net->nt; t++) {
        if (!d.grad[t]) continue;
        int64_t n = xe_tensor_numel(&f.net->t[t]), best = -1;
        for (int64_t i = 0; i < n; i++)
            if (best < 0 || fabs(d.grad[t][i]) > fabs(d.grad[t][best])) best = i;
        if (fabs(d.grad[t][best]) < 1e-3) continue; /* BN mean / var: no gradient */
        double h = 1e-3;
        double fd = (loss_at(&f, &keep, t, best, h) - loss_at(&f, &keep, t, best, -h)) / (2 * h);
        double an = d.grad[t][best];
        if (fabs(fd - an) > 0.005 * fabs(an) + 1e-4)
            fail_msg("%s: d loss / d %s[%lld]: analytic %g, finite difference %g", f.net->name, f.net->t[t].name,
                     (long long)best, an, fd);
        if (getenv("XE_TEST_VERBOSE")) printf("%s %s[%lld]: analytic %.6g fd %.6g\n", f.net->name, f.net->t[t].name, (long long)best, an, fd);
        checked++;
    }
    assert_true(checked >= 2);
    xe_exec_data_clear(&d);
    xe_schedule_clear(&keep);
    teardown_net(&f);
}

static void test_fd_mlp(void **state) { (void)state; fd_check(net_mlp); }
static void test_fd_cnn(void **state) { (void)state; fd_check(net_cnn); }
static void test_fd_skip(void **state) { (void)state; fd_check(net_skip); }
static void test_fd_concat(void **state) { (void)state; fd_check(net_concat); }
static void test_fd_misc(void **state) { (void)state; fd_check(net_misc); }
static void test_fd_tied(void **state) { (void)state; fd_check(net_tied); }
static void test_fd_gemmt(void **state) { (void)state; fd_check(net_gemmt); }
static void test_fd_sigmoid(void **state) { (void)state; fd_check(net_sigmoid); }

/* Sigmoid's backward by hand: x [4, 8] -> fc1 (zero weights and bias) -> Sigmoid -> fc2,
 * so Y = 0.5 everywhere and dX = dY * 0.5 * (1 - 0.5) = dY / 4 with dY = dlogits W2;
 * d loss / d fc1_b[j] = sum_n dX[n, j], computed here in double from W2, b2 and the
 * labels (logits = b2 + 0.5 rowsum(W2), the same for every n). */
static void test_sigmoid_by_hand(void **state)
{
    (void)state;
    xe_net *net = xe_net_new("sigmoid1");
    int x = tensor(net, "x", XE_T_INPUT, 2, 4, 8, 0, 0);
    x = gemm(net, "fc1", x, 8, 6);
    x = unary(net, XE_OP_SIGMOID, "sig", x);
    gemm(net, "fc2", x, 6, 5);
    fixture f;
    setup_net(&f, net, 1, 0);
    xe_err err;
    xe_schedule keep;
    xe_schedule_init(&keep);
    assert_int_equal(xe_exec_keep_all_schedule(f.g, 0, &keep, &err), XE_OK);
    xe_exec_data d;
    assert_int_equal(xe_exec_data_init(f.net, 5, &d, &err), XE_OK);
    int w1 = xe_net_find_tensor(f.net, "fc1_w"), b1 = xe_net_find_tensor(f.net, "fc1_b");
    int w2 = xe_net_find_tensor(f.net, "fc2_w"), b2 = xe_net_find_tensor(f.net, "fc2_b");
    assert_true(w1 >= 0 && b1 >= 0 && w2 >= 0 && b2 >= 0);
    memset(d.val[w1], 0, 6 * 8 * sizeof(float));
    memset(d.val[b1], 0, 6 * sizeof(float));
    xe_exec_result r;
    xe_exec_opts o;
    xe_exec_opts_default(&o);
    assert_int_equal(xe_exec_run(f.net, &f.map, f.inst, &keep, &d, &o, &r, &err), XE_OK);
    const float *W2 = d.val[w2], *B2 = d.val[b2]; /* fc2_w [5, 6] (transB) */
    double z[5], p[5], zmax = -1e300, sum = 0, loss = 0;
    for (int k = 0; k < 5; k++) {
        z[k] = B2[k];
        for (int j = 0; j < 6; j++) z[k] += 0.5 * W2[k * 6 + j];
        if (z[k] > zmax) zmax = z[k];
    }
    for (int k = 0; k < 5; k++) sum += exp(z[k] - zmax);
    for (int k = 0; k < 5; k++) p[k] = exp(z[k] - zmax) / sum;
    for (int n = 0; n < 4; n++) loss -= log(p[d.labels[n]]) / 4.0;
    assert_true(fabs(r.loss - loss) < 1e-5);
    for (int j = 0; j < 6; j++) {
        double want = 0;
        for (int n = 0; n < 4; n++)
            for (int k = 0; k < 5; k++) want += (p[k] - (d.labels[n] == k)) / 4.0 * W2[k * 6 + j] * 0.25;
        if (fabs(d.grad[b1][j] - want) > 1e-6 + 1e-5 * fabs(want))
            fail_msg("d loss / d fc1_b[%d]: %g, by hand %g", j, d.grad[b1][j], want);
    }
    assert_true(fabs(d.grad[b1][0]) > 1e-6); /* not trivially zero */
    xe_exec_data_clear(&d);
    xe_schedule_clear(&keep);
    teardown_net(&f);
}

/* The loss by hand: MLP whose fc2 has zero weights and bias -> logits all 0 -> softmax
 * uniform over 5 classes -> loss = ln 5; d loss / d fc2_b[j] = mean_n (1/5 - [label_n == j]). */
static void test_loss_by_hand(void **state)
{
    (void)state;
    fixture f;
    setup_net(&f, net_mlp(), 1, 0);
    xe_err err;
    xe_schedule keep;
    xe_schedule_init(&keep);
    assert_int_equal(xe_exec_keep_all_schedule(f.g, 0, &keep, &err), XE_OK);
    xe_exec_data d;
    assert_int_equal(xe_exec_data_init(f.net, 3, &d, &err), XE_OK);
    int w = xe_net_find_tensor(f.net, "fc2_w"), b = xe_net_find_tensor(f.net, "fc2_b");
    memset(d.val[w], 0, 16 * 5 * sizeof(float));
    memset(d.val[b], 0, 5 * sizeof(float));
    xe_exec_result r;
    xe_exec_opts o;
    xe_exec_opts_default(&o);
    o.warmup = 1;
    o.repeat = 3; /* medians of 3 measured runs: counts are of one run, values unchanged */
    assert_int_equal(xe_exec_run(f.net, &f.map, f.inst, &keep, &d, &o, &r, &err), XE_OK);
    assert_int_equal(r.dev[0].computes, f.g->n);
    assert_true(fabs(r.loss - log(5.0)) < 1e-6);
    for (int j = 0; j < 5; j++) {
        double want = 0;
        for (int n = 0; n < 4; n++) want += (0.2 - (d.labels[n] == j)) / 4.0;
        assert_true(fabs(d.grad[b][j] - want) < 1e-6);
    }
    xe_exec_data_clear(&d);
    xe_schedule_clear(&keep);
    teardown_net(&f);
}

/* ---- pools ---- */

static void test_pool_accounting(void **state)
{
    (void)state;
    xe_pool p;
    xe_err err = {{0}};
    void *a, *b, *c;
    xe_pool_init(&p, "cpu1", 100);
    assert_int_equal(xe_pool_alloc(&p, "x", 60, &a, &err), XE_OK);
    assert_non_null(a);
    /* 60 + 50 = 110 > 100: refused, naming device, node and bytes */
    assert_int_equal(xe_pool_alloc(&p, "y", 50, &b, &err), XE_EINFEASIBLE);
    assert_null(b);
    assert_non_null(strstr(err.msg, "cpu1"));
    assert_non_null(strstr(err.msg, "y"));
    assert_non_null(strstr(err.msg, "110 B"));
    assert_int_equal(xe_pool_alloc(&p, "z", 40, &c, &err), XE_OK); /* exactly the budget */
    assert_int_equal(p.used, 100);
    xe_pool_free(&p, a, 60);
    assert_int_equal(xe_pool_alloc(&p, "y", 50, &b, &err), XE_OK);
    assert_int_equal(p.used, 90);
    assert_int_equal(p.peak, 100);
    xe_pool_free(&p, b, 50);
    xe_pool_free(&p, c, 40);
    assert_int_equal(p.used, 0);
    assert_int_equal(p.nalloc, 0);
    assert_true(p.cached <= 100); /* kept blocks never exceed the budget */
    /* a freed block is reused by an allocation of the same size */
    assert_int_equal(xe_pool_alloc(&p, "z2", 40, &a, &err), XE_OK);
    assert_ptr_equal(a, c);
    assert_true(p.used + p.cached <= 100);
    xe_pool_free(&p, a, 40);
    xe_pool_clear(&p);
    assert_int_equal(p.cached, 0);
}

/* A schedule whose peak is one byte over the budget is refused by the pool, not run. */
static void test_pool_refuses_schedule(void **state)
{
    (void)state;
    fixture f;
    setup_net(&f, net_cnn(), 1, 0);
    xe_err err = {{0}};
    xe_schedule keep;
    xe_schedule_init(&keep);
    assert_int_equal(xe_exec_keep_all_schedule(f.g, 0, &keep, &err), XE_OK);
    xe_sim_result sr;
    assert_int_equal(xe_sim_run(f.inst, &keep, &sr, &err), XE_OK);
    f.inst->dev[0].budget = sr.dev[0].peak - 1;
    xe_exec_data d;
    xe_exec_result r;
    int rc = run(&f, &keep, NULL, &d, &r, &err);
    assert_int_equal(rc, XE_EINFEASIBLE);
    assert_false(r.sim_valid); /* the simulator saw it too, but the pool stopped it */
    assert_non_null(strstr(err.msg, "device cpu1"));
    assert_non_null(strstr(err.msg, "over the budget"));
    xe_exec_data_clear(&d);
    /* at exactly the peak it runs */
    f.inst->dev[0].budget = sr.dev[0].peak;
    run_ok(&f, &keep, NULL, &d, &r);
    assert_int_equal(r.dev[0].peak, sr.dev[0].peak);
    xe_exec_data_clear(&d);
    xe_schedule_clear(&keep);
    teardown_net(&f);
}

/* An event whose input is not resident is an error naming it. */
static void test_missing_input(void **state)
{
    (void)state;
    fixture f;
    setup_net(&f, net_mlp(), 1, 0);
    xe_err err = {{0}};
    xe_schedule s;
    xe_schedule_init(&s);
    assert_int_equal(xe_schedule_push(&s, XE_EV_COMPUTE, 1, 0, -1), XE_OK); /* relu1 without fc1 */
    xe_exec_data d;
    xe_exec_result r;
    assert_int_equal(run(&f, &s, NULL, &d, &r, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "fc1"));
    assert_non_null(strstr(err.msg, "not resident"));
    xe_exec_data_clear(&d);
    xe_schedule_clear(&s);
    teardown_net(&f);
}

/* The executor runs float32 models only: a float16 (or int64-data) net is refused by
 * xe_exec_data_init with one line naming the tensor and its type (before 2026-12-05 the
 * refusal came from the first compute: "input x is not float32 data the executor holds"). */
static void test_float32_only(void **state)
{
    (void)state;
    static const xe_dtype types[2] = {XE_DT_FLOAT16, XE_DT_INT64};
    static const char *const want[2] = {
        "net half: tensor \"x\" of op fc1 is float16: the executor runs float32 models only (planning and "
        "simulation take other types' sizes)",
        "net half: tensor \"x\" of op fc1 is int64: the executor runs float32 models only (planning and "
        "simulation take other types' sizes)"};
    for (int i = 0; i < 2; i++) {
        xe_net *net = net_mlp();
        free(net->name);
        net->name = strdup("half");
        assert_non_null(net->name);
        net->t[xe_net_find_tensor(net, "x")].dtype = types[i];
        xe_err err = {{0}};
        assert_int_equal(xe_net_infer_shapes(net, &err), XE_OK);
        xe_graph *g = NULL;
        xe_train_map m;
        assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
        xe_exec_data d;
        assert_int_equal(xe_exec_data_init(net, 1, &d, &err), XE_EUNSUPPORTED);
        assert_string_equal(err.msg, want[i]);
        assert_null(d.val);
        xe_graph_free(g);
        xe_train_map_clear(&m);
        xe_net_free(net);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_accounting), cmocka_unit_test(test_pool_refuses_schedule),
        cmocka_unit_test(test_missing_input),   cmocka_unit_test(test_float32_only),   cmocka_unit_test(test_loss_by_hand),
        cmocka_unit_test(test_mlp),             cmocka_unit_test(test_cnn_bn),
        cmocka_unit_test(test_skip),            cmocka_unit_test(test_concat),
        cmocka_unit_test(test_fd_mlp),          cmocka_unit_test(test_fd_cnn),
        cmocka_unit_test(test_fd_skip),         cmocka_unit_test(test_fd_concat),
        cmocka_unit_test(test_misc),            cmocka_unit_test(test_fd_misc),
        cmocka_unit_test(test_tied),            cmocka_unit_test(test_fd_tied),
        cmocka_unit_test(test_gemmt),           cmocka_unit_test(test_fd_gemmt),
        cmocka_unit_test(test_sigmoid),         cmocka_unit_test(test_fd_sigmoid),
        cmocka_unit_test(test_sigmoid_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
