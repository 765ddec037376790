/* Tests of the analytic cost model (src/cost, docs/cost-model.md) and of the device
 * files that feed it (src/io/devices_read.c): FLOPs and bytes computed by hand for a
 * convolution, a Gemm, a ReLU and the loss, forward and backward; the roofline; the
 * presets' spec-sheet figures; an instance's budgets, costs and copies; the paper's
 * line format and its errors. */
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

#include "xengine/cost.h"
#include "xengine/io.h"

static void near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/*   x [2,3,8,8] -> relu -> conv (w [4,3,3,3], b [4], pad 1) [2,4,8,8] -> flatten [2,256]
 *   -> gemm (W [10,256] transposed, b [10]) [2,10] -> loss                             */
static xe_net *small_net(void)
{
    xe_err err = {{0}};
    xe_net *net = xe_net_new("small");
    assert_non_null(net);
    int64_t dx[4] = {2, 3, 8, 8}, dw[4] = {4, 3, 3, 3}, db[1] = {4}, dW[2] = {10, 256}, dB[1] = {10};
    int x = xe_net_add_tensor(net, "x", XE_T_INPUT, XE_DT_FLOAT32, 4, dx, &err);
    int w = xe_net_add_tensor(net, "w", XE_T_PARAM, XE_DT_FLOAT32, 4, dw, &err);
    int b = xe_net_add_tensor(net, "b", XE_T_PARAM, XE_DT_FLOAT32, 1, db, &err);
    int W = xe_net_add_tensor(net, "W", XE_T_PARAM, XE_DT_FLOAT32, 2, dW, &err);
    int B = xe_net_add_tensor(net, "B", XE_T_PARAM, XE_DT_FLOAT32, 1, dB, &err);
    int k = xe_net_add_op(net, XE_OP_RELU, "relu", 1, &x, "r", &err);
    int in[3] = {net->op[k].out, w, b};
    k = xe_net_add_op(net, XE_OP_CONV, "conv", 3, in, "y", &err);
    assert_true(k >= 0);
    for (int i = 0; i < 4; i++) net->op[k].pad[i] = 1;
    int y = net->op[k].out;
    k = xe_net_add_op(net, XE_OP_FLATTEN, "flat", 1, &y, "f", &err);
    int in2[3] = {net->op[k].out, W, B};
    k = xe_net_add_op(net, XE_OP_GEMM, "fc", 3, in2, "logits", &err);
    assert_true(k >= 0);
    net->op[k].trans_b = 1;
    if (xe_net_infer_shapes(net, &err)) fail_msg("%s", err.msg);
    return net;
}

/* node index by name */
static int node(const xe_graph *g, const char *name)
{
    for (int v = 0; v < g->n; v++)
        if (strcmp(g->nodes[v].name, name) == 0) return v;
    fail_msg("no node %s", name);
    return -1;
}

static void test_work_by_hand(void **state)
{
    (void)state;
    xe_net *net = small_net();
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    assert_int_equal(g->n, 7);
    static const struct {
        const char *node;
        double flops, bytes;
    } want[] = {
        /* relu: 2*3*8*8 = 384 elements; reads x 1536 B, writes 1536 B */
        {"relu", 384, 1536 + 1536},
        /* conv: 2*N*Cout*Hout*Wout*(Cin/g)*kh*kw = 2*2*4*8*8*3*3*3 = 27648, + bias 2*4*8*8 = 512;
         * reads r 1536 + w 432 + b 16, writes y 2048 */
        {"conv", 27648 + 512, 1536 + 432 + 16 + 2048},
        /* gemm: 2*M*N*K = 2*2*10*256 = 10240, + bias 20; reads f 2048 + W 10240 + B 40,
         * writes 80 */
        {"fc", 10240 + 20, 2048 + 10240 + 40 + 80},
        /* loss: 8 FLOP per logit (20); reads logits 80 + labels 2 x 8, writes d(logits) 80 */
        {"loss", 160, 80 + 16 + 80},
        /* gemm backward: dA and dW (two products) + dB; reads d(logits) 80 and A (conv's
         * output, 2048), W and writes dW (2 x 10280), writes dA 2048 */
        {"fc_grad", 2 * 10240 + 20, 80 + 2048 + 2 * 10280 + 2048},
        /* conv backward: data and weight gradients (2 x 27648) + bias gradient 512; reads
         * dy 2048 and X (relu's output, 1536), w+b and their gradients 2 x 448, writes dr */
        {"conv_grad", 2 * 27648 + 512, 2048 + 1536 + 2 * 448 + 1536},
        /* relu backward: 384 selects; reads dr 1536 and relu's output 1536; x needs no
         * gradient (0 B written) */
        {"relu_grad", 384, 1536 + 1536},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        xe_work w;
        int v = node(g, want[i].node);
        assert_int_equal(xe_cost_node_work(net, g, &m, v, &w, &err), XE_OK);
        char what[64];
        snprintf(what, sizeof what, "%s flops", want[i].node);
        near(w.flops, want[i].flops, what);
        snprintf(what, sizeof what, "%s bytes", want[i].node);
        near(w.bytes, want[i].bytes, what);
    }
    xe_work w;
    assert_int_equal(xe_cost_node_work(net, g, &m, 7, &w, &err), XE_EINVAL);

    /* inference: the same forward work; BatchNorm-free, so identical figures */
    xe_graph *gi = NULL;
    xe_train_map mi;
    assert_int_equal(xe_net_inference_graph(net, &gi, &mi, &err), XE_OK);
    assert_int_equal(xe_cost_node_work(net, gi, &mi, node(gi, "conv"), &w, &err), XE_OK);
    near(w.flops, 27648 + 512, "inference conv flops");
    xe_graph_free(gi);
    xe_train_map_clear(&mi);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

/* BatchNorm, pooling, Add and Concat, forward and backward:
 *   x [2,4,4,4] -> conv (1x1) -> bn -> relu r -> maxpool p (2x2, stride 2) [2,4,2,2]
 *   r -> avgpool a (2x2, stride 2); add = p + a; cat = concat(add, p) [2,8,2,2]
 *   -> gap [2,8,1,1] -> flatten -> fc (W [3,8] transposed) [2,3]                       */
static void test_work_norm_pool_add_concat(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_net *net = xe_net_new("pools");
    assert_non_null(net);
    int64_t dx[4] = {2, 4, 4, 4}, dw[4] = {4, 4, 1, 1}, dc[1] = {4}, dW[2] = {3, 8};
    int x = xe_net_add_tensor(net, "x", XE_T_INPUT, XE_DT_FLOAT32, 4, dx, &err);
    int w = xe_net_add_tensor(net, "w", XE_T_PARAM, XE_DT_FLOAT32, 4, dw, &err);
    int bnp[4];
    const char *bnn[4] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++) bnp[i] = xe_net_add_tensor(net, bnn[i], XE_T_PARAM, XE_DT_FLOAT32, 1, dc, &err);
    int W = xe_net_add_tensor(net, "W", XE_T_PARAM, XE_DT_FLOAT32, 2, dW, &err);
    int in[5] = {x, w};
    int conv = xe_net_add_op(net, XE_OP_CONV, "conv", 2, in, "c", &err);
    int bin[5] = {net->op[conv].out, bnp[0], bnp[1], bnp[2], bnp[3]};
    int bn = xe_net_add_op(net, XE_OP_BATCHNORM, "bn", 5, bin, "b", &err);
    int b_out = net->op[bn].out; /* inputs as locals: add_op may move net->op */
    int relu = xe_net_add_op(net, XE_OP_RELU, "relu", 1, &b_out, "r", &err);
    assert_true(relu >= 0);
    int r = net->op[relu].out;
    int mp = xe_net_add_op(net, XE_OP_MAXPOOL, "mp", 1, &r, "p", &err);
    int ap = xe_net_add_op(net, XE_OP_AVGPOOL, "ap", 1, &r, "a", &err);
    for (int k = mp; k <= ap; k++)
        for (int i = 0; i < 2; i++) net->op[k].kernel[i] = net->op[k].stride[i] = 2;
    int ain[2] = {net->op[mp].out, net->op[ap].out};
    int add = xe_net_add_op(net, XE_OP_ADD, "add", 2, ain, "s", &err);
    int cin[2] = {net->op[add].out, net->op[mp].out};
    int cat = xe_net_add_op(net, XE_OP_CONCAT, "cat", 2, cin, "k", &err);
    int k_out = net->op[cat].out;
    int gap = xe_net_add_op(net, XE_OP_GLOBAL_AVGPOOL, "gap", 1, &k_out, "g", &err);
    int g_out = net->op[gap].out;
    int flat = xe_net_add_op(net, XE_OP_FLATTEN, "flat", 1, &g_out, "f", &err);
    int fin[2] = {net->op[flat].out, W};
    int fc = xe_net_add_op(net, XE_OP_GEMM, "fc", 2, fin, "logits", &err);
    assert_true(fc >= 0);
    net->op[fc].trans_b = 1;
    if (xe_net_infer_shapes(net, &err)) fail_msg("%s", err.msg);
    xe_graph *g = NULL;
    xe_train_map m;
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    /* elements: c, b, r 128 (512 B); p, a, s 32 (128 B); k 64 (256 B); g 16 (64 B) */
    static const struct {
        const char *node;
        double flops, bytes;
    } want[] = {
        /* 7 FLOP per element with batch statistics; reads c 512 + 4 x 16 B of
         * parameters, writes b 512 + mean and inverse std 2 x 4 x 4 */
        {"bn", 7 * 128, 512 + 64 + 512 + 32},
        {"mp", 32 * 4, 512 + 128},          /* 4 compares per output */
        {"ap", 32 * 4, 512 + 128},
        {"add", 32, 128 + 128 + 128},
        {"cat", 0, 128 + 128 + 256},        /* a copy */
        {"gap", 64, 256 + 64},              /* numel(X) = 64 adds */
        /* cat_grad: slices of d(cat) 256 from gap_grad, writes d(s) and d(p) 256 */
        {"cat_grad", 0, 256 + 256},
        /* add_grad: d(s) 128 from cat_grad, gradient passed to both inputs */
        {"add_grad", 2 * 32, 128 + 256},
        /* mp_grad: arg max over 4 per output + zero fill of dX (128); reads d(p) from
         * add_grad and cat_grad (2 x 128), X = r 512, Y = p 128; writes d(r) 512 */
        {"mp_grad", 32 * 4 + 128, 2 * 128 + 512 + 128 + 512},
        {"ap_grad", 32 * 4, 128 + 512},     /* d(a) in, d(r) out */
        /* bn_grad: 8 per element; reads d(b) 512, X = c 512, its node 544 (b with the
         * statistics), parameters and their gradients 2 x 64; writes d(c) 512 */
        {"bn_grad", 8 * 128, 512 + 512 + 544 + 128 + 512},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        xe_work wk;
        assert_int_equal(xe_cost_node_work(net, g, &m, node(g, want[i].node), &wk, &err), XE_OK);
        char what[64];
        snprintf(what, sizeof what, "%s flops", want[i].node);
        near(wk.flops, want[i].flops, what);
        snprintf(what, sizeof what, "%s bytes", want[i].node);
        near(wk.bytes, want[i].bytes, what);
    }
    /* inference BatchNorm: running statistics, 2 FLOP per element, no saved statistics */
    xe_graph *gi = NULL;
    xe_train_map mi;
    assert_int_equal(xe_net_inference_graph(net, &gi, &mi, &err), XE_OK);
    xe_work wk;
    assert_int_equal(xe_cost_node_work(net, gi, &mi, node(gi, "bn"), &wk, &err), XE_OK);
    near(wk.flops, 2 * 128, "inference bn flops");
    near(wk.bytes, 512 + 64 + 512, "inference bn bytes");
    xe_graph_free(gi);
    xe_train_map_clear(&mi);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

static void test_roofline_and_presets(void **state)
{
    (void)state;
    xe_device_spec s = {1e9, 1e8, 1e-6};
    xe_work w = {10260, 12408};
    near(xe_cost_roofline(&s, &w), 12408 / 1e8 + 1e-6, "memory-bound"); /* 1.2408e-4 > 1.026e-5 */
    w.bytes = 100;
    near(xe_cost_roofline(&s, &w), 10260 / 1e9 + 1e-6, "compute-bound");
    xe_cost_spec_preset(XE_DEV_GPU, &s);
    near(s.peak_flops, 15.7e12, "V100 fp32");
    near(s.mem_bandwidth, 900e9, "V100 HBM2");
    xe_cost_spec_preset(XE_DEV_CPU, &s);
    near(s.peak_flops, 20 * 2.4e9 * 32 * 2, "Xeon Gold 6148: 20 cores x 2.4 GHz x 2 FMA x 16 lanes x 2");
    near(s.mem_bandwidth, 6 * 8 * 2.666e9, "6 x DDR4-2666");
    xe_recipe r;
    xe_err err = {{0}};
    assert_int_equal(xe_cost_recipe_preset("gpu+cpu", 0.5, &r, &err), XE_OK);
    assert_int_equal(r.ndev, 2);
    assert_int_equal(r.kind[0], XE_DEV_GPU);
    near(r.peak_flops[0], 15.7e12, "preset gpu");
    near(r.peak_flops[1], 3.072e12, "preset cpu");
    near(r.budget_frac[0], 0.5, "gpu frac");
    near(r.budget_frac[1], 4.0, "cpu frac");
    near(r.bandwidth, 16e9, "PCIe 3.0 x16");
    assert_int_equal(xe_cost_recipe_preset("tpu", 0.5, &r, &err), XE_EINVAL);
    /* a recipe without specs (JSON-graph presets) falls back to the kind's preset */
    assert_int_equal(xe_recipe_preset("cpu", 1.0, &r, &err), XE_OK);
    xe_cost_recipe_spec(&r, 0, &s);
    near(s.peak_flops, 3.072e12, "fallback");
}

static void test_instance(void **state)
{
    (void)state;
    xe_net *net = small_net();
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    xe_recipe r;
    memset(&r, 0, sizeof r);
    r.ndev = 2;
    snprintf(r.name[0], sizeof r.name[0], "g");
    snprintf(r.name[1], sizeof r.name[1], "c");
    r.kind[0] = XE_DEV_GPU;
    r.kind[1] = XE_DEV_CPU;
    r.speed[0] = r.speed[1] = 3.0; /* ignored by the cost model */
    r.budget_frac[0] = 0.5;
    r.budget_bytes[1] = 123456;
    r.peak_flops[0] = 1e12, r.mem_bandwidth[0] = 1e11, r.launch_overhead[0] = 1e-5;
    r.peak_flops[1] = 1e9, r.mem_bandwidth[1] = 1e10, r.launch_overhead[1] = 0;
    r.time_unit = 7;
    r.bandwidth = 1e9;
    r.latency = 2e-6;
    int64_t peak = xe_instance_norecompute_peak(g);
    xe_instance *in = NULL;
    assert_int_equal(xe_cost_instance(net, g, &m, &r, &in, &err), XE_OK);
    assert_ptr_equal(in->g, g);
    assert_int_equal(in->dev[0].budget, peak / 2);
    assert_int_equal(in->dev[1].budget, 123456);
    int fc = node(g, "fc"), cg = node(g, "conv_grad");
    /* gemm forward on g: max(10260 / 1e12, 12408 / 1e11) + 1e-5 (memory-bound) */
    near(xe_cost(in, fc, 0), 12408 / 1e11 + 1e-5, "fc on g");
    /* on c: max(10260 / 1e9, 12408 / 1e10) (compute-bound) */
    near(xe_cost(in, fc, 1), 10260 / 1e9, "fc on c");
    near(xe_cost(in, cg, 1), (2 * 27648 + 512) / 1e9, "conv_grad on c");
    /* copies: latency + bytes / bandwidth, both directions */
    near(xe_copy_cost(in, fc, 0, 1), 2e-6 + 80 / 1e9, "copy fc");
    near(xe_copy_cost(in, cg, 1, 0), 2e-6 + 1536 / 1e9, "copy conv_grad");
    assert_int_equal(xe_instance_validate(in, &err), XE_OK);
    xe_instance_free(in);
    xe_train_map_clear(&m);

    /* a bad spec names the device, and the graph stays the caller's */
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    r.mem_bandwidth[1] = -1;
    assert_int_equal(xe_cost_instance(net, g, &m, &r, &in, &err), XE_EINVAL);
    assert_null(in);
    assert_non_null(strstr(err.msg, "device c"));
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

/* ---- devices files ------------------------------------------------------------------ */

static char *write_tmp(const char *text)
{
    char *path = malloc(64);
    assert_non_null(path);
    snprintf(path, 64, "/tmp/xe_test_cost.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int read_text(const char *text, xe_recipe *r, xe_err *err, char **path_out)
{
    char *path = write_tmp(text);
    int rc = xe_io_read_devices(path, r, err);
    unlink(path);
    if (path_out) *path_out = path;
    else free(path);
    return rc;
}

static void test_devices_json_specs(void **state)
{
    (void)state;
    xe_recipe r;
    xe_err err = {{0}};
    assert_int_equal(read_text("{\"devices\": [{\"name\": \"a100\", \"kind\": \"gpu\", \"budget\": \"50%\", "
                               "\"peak_flops\": 19.5e12, \"mem_bandwidth\": 1.555e12, \"launch_overhead\": 0},"
                               "{\"name\": \"host\", \"kind\": \"cpu\", \"budget\": \"64GiB\"}]}",
                               &r, &err, NULL),
                     XE_OK);
    assert_int_equal(r.ndev, 2);
    near(r.peak_flops[0], 19.5e12, "given peak");
    near(r.mem_bandwidth[0], 1.555e12, "given bandwidth");
    near(r.launch_overhead[0], 0, "given overhead");
    near(r.peak_flops[1], 3.072e12, "cpu preset peak");
    near(r.mem_bandwidth[1], 6 * 8 * 2.666e9, "cpu preset bandwidth");
    near(r.launch_overhead[1], 2e-6, "cpu preset overhead");
    xe_device_spec s;
    xe_cost_recipe_spec(&r, 0, &s);
    near(s.launch_overhead, 0, "zero overhead kept");
    r.ndev = 77;
    assert_int_equal(read_text("{\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\", \"budget\": 100, "
                               "\"peak_flops\": 0}]}",
                               &r, &err, NULL),
                     XE_EINVAL);
    assert_non_null(strstr(err.msg, "peak_flops"));
    assert_int_equal(r.ndev, 77); /* left as it was */
    assert_int_equal(read_text("{\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\", \"budget\": 100, "
                               "\"mem_bandwidth\": \"fast\"}]}",
                               &r, &err, NULL),
                     XE_EPARSE);
}

static void test_devices_lines(void **state)
{
    (void)state;
    xe_recipe r;
    xe_err err = {{0}};
    assert_int_equal(read_text("# XEngine device file\n"
                               "\n"
                               "gpu0;GPU;0;2;8000000000\n"
                               "  host ; cpu ; 0 ; 1 ; 12GiB   # the host\r\n"
                               "half;gpu;1;1;50%\n",
                               &r, &err, NULL),
                     XE_OK);
    assert_int_equal(r.ndev, 3);
    assert_string_equal(r.name[0], "gpu0");
    assert_string_equal(r.name[1], "host");
    assert_int_equal(r.kind[0], XE_DEV_GPU);
    assert_int_equal(r.kind[1], XE_DEV_CPU);
    assert_int_equal(r.kind[2], XE_DEV_GPU);
    assert_int_equal(r.budget_bytes[0], 8000000000LL);
    assert_int_equal(r.budget_bytes[1], 12LL << 30);
    near(r.budget_frac[2], 0.5, "percent budget");
    near(r.peak_flops[0], 15.7e12, "gpu preset");
    near(r.peak_flops[1], 3.072e12, "cpu preset");
    near(r.speed[0], 1.0, "gpu preset speed");
    near(r.speed[1], 0.125, "cpu preset speed");
    near(r.speed[2], 1.0, "gpu preset speed");
    near(r.time_unit, 1e-3, "preset time unit");
    near(r.bandwidth, 16e9, "default link");
    near(r.latency, 1e-5, "default latency");

    static const struct {
        const char *text;
        int rc;
        const char *msg; /* after "PATH: " */
    } bad[] = {
        {"gpu0;GPU;0;2\n", XE_EPARSE, "line 1: 4 fields, expected name;type;id;streams;budget_bytes"},
        {"# c\ngpu0;GPU;0;2;100;7\n", XE_EPARSE, "line 2: more than 5 fields"},
        {"gpu0;TPU;0;2;100\n", XE_EPARSE, "line 1: type 'TPU' is neither CPU nor GPU"},
        {"a;GPU;0;1;100\nb;CPU;-1;1;100\n", XE_EPARSE, "line 2: id '-1' is not a whole number >= 0"},
        {"a;GPU;0;0;100\n", XE_EPARSE, "line 1: streams '0' is not a whole number >= 1"},
        {"a;GPU;0;x1;100\n", XE_EPARSE, "line 1: streams 'x1'"},
        {"a;GPU;0;1;lots\n", XE_EPARSE, "line 1: budget"},
        {"a;GPU;0;1;0\n", XE_EINVAL, "line 1: budget"},
        {";GPU;0;1;100\n", XE_EPARSE, "line 1: device name"},
        {"a;GPU;0;1;100\na;CPU;0;1;100\n", XE_EINVAL, "line 2: a second device named 'a'"},
        {"# only a comment\n\n", XE_EPARSE, "no device"},
        {"", XE_EPARSE, "no device"},
        {"a;GPU;0;1;1\nb;GPU;0;1;1\nc;GPU;0;1;1\nd;GPU;0;1;1\ne;GPU;0;1;1\nf;GPU;0;1;1\ng;GPU;0;1;1\n"
         "h;GPU;0;1;1\ni;GPU;0;1;1\n",
         XE_EINVAL, "line 9: more than 8 devices"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = NULL;
        r.ndev = 77;
        int rc = read_text(bad[i].text, &r, &err, &path);
        char want[256];
        snprintf(want, sizeof want, "%s: %s", path, bad[i].msg);
        if (rc != bad[i].rc || strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("case %zu: rc %d, '%s'; want rc %d, '%s...'", i, rc, err.msg, bad[i].rc, want);
        assert_null(strchr(err.msg, '\n'));
        assert_int_equal(r.ndev, 77); /* the recipe is left as it was */
        free(path);
    }
}

/* Sigmoid (2026-12-05): x [4, 8] -> sigmoid -> gemm (W [3, 8]ᵀ) -> loss. Forward 4 FLOP an
 * element (negate, exp, add, divide), backward 3 (dY Y (1 - Y)); the backward reads the
 * forward's output Y, not X (the data input, no node). */
static void test_work_sigmoid(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_net *net = xe_net_new("sig");
    assert_non_null(net);
    int64_t dx[2] = {4, 8}, dW[2] = {3, 8};
    int x = xe_net_add_tensor(net, "x", XE_T_INPUT, XE_DT_FLOAT32, 2, dx, &err);
    int W = xe_net_add_tensor(net, "W", XE_T_PARAM, XE_DT_FLOAT32, 2, dW, &err);
    int k = xe_net_add_op(net, XE_OP_SIGMOID, "sig", 1, &x, "s", &err);
    assert_true(k >= 0);
    int in[2] = {net->op[k].out, W};
    k = xe_net_add_op(net, XE_OP_GEMM, "fc", 2, in, "logits", &err);
    assert_true(k >= 0);
    net->op[k].trans_b = 1;
    if (xe_net_infer_shapes(net, &err)) fail_msg("%s", err.msg);
    xe_graph *g = NULL;
    xe_train_map m;
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    xe_work w;
    /* 32 elements: reads x 128 B, writes Y 128 B */
    assert_int_equal(xe_cost_node_work(net, g, &m, node(g, "sig"), &w, &err), XE_OK);
    near(w.flops, 4 * 32, "sigmoid flops");
    near(w.bytes, 128 + 128, "sigmoid bytes");
    /* reads dY 128 B and Y 128 B; x needs no gradient (0 B written) */
    assert_int_equal(xe_cost_node_work(net, g, &m, node(g, "sig_grad"), &w, &err), XE_OK);
    near(w.flops, 3 * 32, "sigmoid backward flops");
    near(w.bytes, 128 + 128, "sigmoid backward bytes");
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_work_by_hand),
        cmocka_unit_test(test_work_sigmoid),
        cmocka_unit_test(test_work_norm_pool_add_concat),
        cmocka_unit_test(test_roofline_and_presets),
        cmocka_unit_test(test_instance),
        cmocka_unit_test(test_devices_json_specs),
        cmocka_unit_test(test_devices_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
