/* Tests of the training and inference graphs (src/net/train.c, docs/training-graph.md):
 * small nets built with the net.h builders, every node (name, op, role, bytes) and
 * every edge checked against an expectation written out by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/net.h"

/* ---- helpers ------------------------------------------------------------------------ */

static int tensor(xe_net *net, const char *name, xe_tensor_role role, int rank, int64_t d0, int64_t d1, int64_t d2,
                  int64_t d3)
{
    xe_err err = {{0}};
    int64_t dim[4] = {d0, d1, d2, d3};
    int i = xe_net_add_tensor(net, name, role, XE_DT_FLOAT32, rank, dim, &err);
    assert_true(i >= 0);
    return i;
}

static int op(xe_net *net, xe_op_kind kind, const char *name, int nin, int i0, int i1, int i2, const char *out)
{
    xe_err err = {{0}};
    int in[3] = {i0, i1, i2};
    int k = xe_net_add_op(net, kind, name, nin, in, out, &err);
    if (k < 0) fail_msg("add_op %s: %s", name, err.msg);
    return k;
}

/* out tensor index of op k */
static int out_of(const xe_net *net, int k)
{
    return net->op[k].out;
}

static void infer(xe_net *net)
{
    xe_err err = {{0}};
    if (xe_net_infer_shapes(net, &err)) fail_msg("infer: %s", err.msg);
}

typedef struct want_node {
    const char *name, *op;
    int role, opk;
    int64_t mem, param_mem;
} want_node;

static void check_nodes(const xe_graph *g, const xe_train_map *m, const want_node *w, int n)
{
    assert_int_equal(g->n, n);
    assert_int_equal(m->n, n);
    for (int v = 0; v < n; v++) {
        if (strcmp(g->nodes[v].name, w[v].name) || strcmp(g->nodes[v].op, w[v].op))
            fail_msg("node %d: got %s/%s, want %s/%s", v, g->nodes[v].name, g->nodes[v].op, w[v].name, w[v].op);
        assert_int_equal(m->role[v], w[v].role);
        assert_int_equal(g->nodes[v].backward, w[v].role == XE_TN_BACKWARD);
        assert_int_equal(m->op[v], w[v].opk);
        if (g->nodes[v].mem != w[v].mem || g->nodes[v].param_mem != w[v].param_mem)
            fail_msg("node %d (%s): mem %lld param %lld, want %lld %lld", v, w[v].name, (long long)g->nodes[v].mem,
                     (long long)g->nodes[v].param_mem, (long long)w[v].mem, (long long)w[v].param_mem);
        assert_true(g->nodes[v].cost == 0.0);
    }
}

/* The graph's edges are exactly want[0..m) (as a set). */
static void check_edges(const xe_graph *g, const int (*want)[2], int m)
{
    for (int i = 0; i < m; i++) {
        int found = 0;
        for (int e = 0; e < g->m && !found; e++) found = g->esrc[e] == want[i][0] && g->edst[e] == want[i][1];
        if (!found) fail_msg("missing edge %d -> %d", want[i][0], want[i][1]);
    }
    if (g->m != m) {
        for (int e = 0; e < g->m; e++) print_message("edge %d -> %d\n", g->esrc[e], g->edst[e]);
        fail_msg("%d edges, want %d", g->m, m);
    }
}

/* ---- a two-layer MLP: Gemm - Relu - Gemm on [N, 784] -> [N, 10] ---------------------- */

enum { N = 32, IN = 784, HID = 128, OUT = 10 };

/* mid_loss: a loss op on the hidden layer between relu and fc2 (test_loss_not_last). */
static xe_net *mlp_net(int mid_loss)
{
    xe_net *net = xe_net_new(mid_loss ? "mlp_mid_loss" : "mlp");
    assert_non_null(net);
    int x = tensor(net, "x", XE_T_INPUT, 2, N, IN, 0, 0);
    int w1 = tensor(net, "w1", XE_T_PARAM, 2, HID, IN, 0, 0);
    int b1 = tensor(net, "b1", XE_T_PARAM, 1, HID, 0, 0, 0);
    int w2 = tensor(net, "w2", XE_T_PARAM, 2, OUT, HID, 0, 0);
    int b2 = tensor(net, "b2", XE_T_PARAM, 1, OUT, 0, 0, 0);
    int k0 = op(net, XE_OP_GEMM, "fc1", 3, x, w1, b1, "h");
    net->op[k0].trans_b = 1;
    int k1 = op(net, XE_OP_RELU, "relu", 1, out_of(net, k0), 0, 0, "r");
    if (mid_loss) {
        int lab = tensor(net, "labels", XE_T_LABEL, 1, N, 0, 0, 0);
        net->t[lab].dtype = XE_DT_INT64;
        op(net, XE_OP_LOSS, "mid_loss", 2, out_of(net, k1), lab, 0, "mid_loss_y");
    }
    int k2 = op(net, XE_OP_GEMM, "fc2", 3, out_of(net, k1), w2, b2, "logits");
    net->op[k2].trans_b = 1;
    infer(net);
    return net;
}

static xe_net *mlp(void) { return mlp_net(0); }

/* A loss that is not the last operator (here on the hidden layer, with fc2 after it) is
 * refused: it used to be dropped without a word, a new loss appended after fc2. */
static void test_loss_not_last(void **state)
{
    (void)state;
    xe_net *net = mlp_net(1);
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_EUNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(err.msg, "loss op mid_loss is not the last operator (fc2 is)"));
    xe_net_free(net);
}

static void test_mlp_training_graph(void **state)
{
    (void)state;
    xe_net *net = mlp();
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    /* the loss op was appended, reading the logits and a new labels tensor [N] */
    assert_int_equal(net->nops, 4);
    assert_int_equal(net->op[3].kind, XE_OP_LOSS);
    int lab = xe_net_find_tensor(net, "labels");
    assert_true(lab >= 0);
    assert_int_equal(net->t[lab].role, XE_T_LABEL);
    assert_int_equal(net->t[lab].rank, 1);
    assert_int_equal(net->t[lab].dim[0], N);
    assert_int_equal(net->op[3].in[0], xe_net_find_tensor(net, "logits"));

    const int64_t act = N * HID * 4;                    /* 16384 B: h and r */
    const int64_t logits = N * OUT * 4;                 /* 1280 B */
    const int64_t p1 = (HID * IN + HID) * 4;            /* 401920 B: w1, b1 */
    const int64_t p2 = (OUT * HID + OUT) * 4;           /* 5160 B: w2, b2 */
    assert_int_equal(act, 16384);
    assert_int_equal(p1, 401920);
    const want_node w[] = {
        {"fc1", "Gemm", XE_TN_FORWARD, 0, act, p1},
        {"relu", "Relu", XE_TN_FORWARD, 1, act, 0},
        {"fc2", "Gemm", XE_TN_FORWARD, 2, logits, p2},
        {"loss", "SoftmaxCrossEntropyLoss", XE_TN_LOSS, 3, logits, 0}, /* d(loss)/d(logits) */
        {"fc2_grad", "GemmGrad", XE_TN_BACKWARD, 2, act, 0},           /* dr */
        {"relu_grad", "ReluGrad", XE_TN_BACKWARD, 1, act, 0},          /* dh */
        {"fc1_grad", "GemmGrad", XE_TN_BACKWARD, 0, 0, 0},             /* x is no activation */
    };
    check_nodes(g, &m, w, 7);
    const int e[][2] = {
        {0, 1}, {1, 2}, {2, 3}, /* forward chain, loss reads the logits */
        {3, 4}, {1, 4},         /* fc2_grad: d(logits), and its input r for d(w2) */
        {4, 5}, {1, 5},         /* relu_grad: dr, and relu's own output */
        {5, 6},                 /* fc1_grad: dh only (its input x is the data) */
    };
    check_edges(g, e, 8);
    assert_int_equal(m.nops, 4);
    assert_int_equal(m.loss_node, 3);
    const int fwd[] = {0, 1, 2, 3}, bwd[] = {6, 5, 4, -1};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(m.fwd_node[k], fwd[k]);
        assert_int_equal(m.bwd_node[k], bwd[k]);
    }
    /* a second call finds the loss already there and adds nothing */
    xe_graph *g2 = NULL;
    xe_train_map m2;
    assert_int_equal(xe_net_training_graph(net, &g2, &m2, &err), XE_OK);
    assert_int_equal(net->nops, 4);
    check_nodes(g2, &m2, w, 7);
    check_edges(g2, e, 8);
    xe_graph_free(g2);
    xe_train_map_clear(&m2);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    assert_null(m.op);
    assert_int_equal(m.n, 0);
    xe_net_free(net);
}

static void test_mlp_inference_graph(void **state)
{
    (void)state;
    xe_net *net = mlp();
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_inference_graph(net, &g, &m, &err), XE_OK);
    assert_int_equal(net->nops, 3); /* no loss added */
    const want_node w[] = {
        {"fc1", "Gemm", XE_TN_FORWARD, 0, N * HID * 4, (HID * IN + HID) * 4},
        {"relu", "Relu", XE_TN_FORWARD, 1, N * HID * 4, 0},
        {"fc2", "Gemm", XE_TN_FORWARD, 2, N * OUT * 4, (OUT * HID + OUT) * 4},
    };
    check_nodes(g, &m, w, 3);
    const int e[][2] = {{0, 1}, {1, 2}};
    check_edges(g, e, 2);
    assert_int_equal(m.loss_node, -1);
    for (int k = 0; k < 3; k++) assert_int_equal(m.bwd_node[k], -1);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

/* ---- a skip connection (Add), a Concat and a Flatten view ----------------------------
 *
 *   x[B,3,8,8] -> c1 (3x3 conv, pad 1, 4 ch) -> r1 -> c2 (3x3, pad 1, 4 ch) -> add(c2, r1)
 *   -> cat(add, r1) [B,8,8,8] -> gap [B,8,1,1] -> flat (view) [B,8] -> fc [B,10]          */

enum { B = 2 };

static void test_skip_concat_flatten(void **state)
{
    (void)state;
    xe_net *net = xe_net_new("skip");
    assert_non_null(net);
    int x = tensor(net, "x", XE_T_INPUT, 4, B, 3, 8, 8);
    int w1 = tensor(net, "w1", XE_T_PARAM, 4, 4, 3, 3, 3);
    int w2 = tensor(net, "w2", XE_T_PARAM, 4, 4, 4, 3, 3);
    int wf = tensor(net, "wf", XE_T_PARAM, 2, 10, 8, 0, 0);
    int bf = tensor(net, "bf", XE_T_PARAM, 1, 10, 0, 0, 0);
    int c1 = op(net, XE_OP_CONV, "c1", 2, x, w1, 0, "c1_out");
    int c2 = -1;
    for (int k = 0; k < 2; k++) net->op[c1].pad[k] = net->op[c1].pad[k + 2] = 1;
    int r1 = op(net, XE_OP_RELU, "r1", 1, out_of(net, c1), 0, 0, "r1_out");
    c2 = op(net, XE_OP_CONV, "c2", 2, out_of(net, r1), w2, 0, "c2_out");
    for (int k = 0; k < 2; k++) net->op[c2].pad[k] = net->op[c2].pad[k + 2] = 1;
    int add = op(net, XE_OP_ADD, "add", 2, out_of(net, c2), out_of(net, r1), 0, "add_out");
    int cat = op(net, XE_OP_CONCAT, "cat", 2, out_of(net, add), out_of(net, r1), 0, "cat_out");
    int gap = op(net, XE_OP_GLOBAL_AVGPOOL, "gap", 1, out_of(net, cat), 0, 0, "gap_out");
    int flat = op(net, XE_OP_FLATTEN, "flat", 1, out_of(net, gap), 0, 0, "flat_out");
    int fc = op(net, XE_OP_GEMM, "fc", 3, out_of(net, flat), wf, bf, "logits");
    net->op[fc].trans_b = 1;
    infer(net);
    assert_int_equal(net->t[out_of(net, cat)].dim[1], 8);

    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    const int64_t a4 = B * 4 * 8 * 8 * 4; /* 2048 B: c1, r1, c2, add */
    const int64_t a8 = 2 * a4;            /* cat */
    const int64_t g8 = B * 8 * 4;         /* 64 B: gap and its view flat */
    const int64_t lg = B * 10 * 4;        /* 80 B: logits */
    const int loss = 8;                   /* op index of the appended loss */
    const want_node w[] = {
        {"c1", "Conv", XE_TN_FORWARD, c1, a4, 4 * 3 * 9 * 4},
        {"r1", "Relu", XE_TN_FORWARD, r1, a4, 0},
        {"c2", "Conv", XE_TN_FORWARD, c2, a4, 4 * 4 * 9 * 4},
        {"add", "Add", XE_TN_FORWARD, add, a4, 0},
        {"cat", "Concat", XE_TN_FORWARD, cat, a8, 0},
        {"gap", "GlobalAveragePool", XE_TN_FORWARD, gap, g8, 0},
        {"fc", "Gemm", XE_TN_FORWARD, fc, lg, (80 + 10) * 4},
        {"loss", "SoftmaxCrossEntropyLoss", XE_TN_LOSS, loss, lg, 0},
        {"fc_grad", "GemmGrad", XE_TN_BACKWARD, fc, g8, 0},               /* d(flat) */
        {"gap_grad", "GlobalAveragePoolGrad", XE_TN_BACKWARD, gap, a8, 0}, /* d(cat) */
        {"cat_grad", "ConcatGrad", XE_TN_BACKWARD, cat, 2 * a4, 0},       /* d(add), d(r1) */
        {"add_grad", "AddGrad", XE_TN_BACKWARD, add, 2 * a4, 0},          /* d(c2), d(r1) */
        {"c2_grad", "ConvGrad", XE_TN_BACKWARD, c2, a4, 0},               /* d(r1) */
        {"r1_grad", "ReluGrad", XE_TN_BACKWARD, r1, a4, 0},               /* d(c1) */
        {"c1_grad", "ConvGrad", XE_TN_BACKWARD, c1, 0, 0},                /* x is the data */
    };
    check_nodes(g, &m, w, 15);
    const int e[][2] = {
        {0, 1}, {1, 2}, {2, 3}, {1, 3}, {3, 4}, {1, 4}, {4, 5}, /* forward, skip, concat */
        {5, 6},                                                 /* fc reads gap through flat */
        {6, 7},                                                 /* loss */
        {7, 8}, {5, 8},                                         /* fc_grad: d(logits), A = gap */
        {8, 9},                                                 /* gap_grad: through the view */
        {9, 10},                                                /* cat_grad */
        {10, 11},                                               /* add_grad: from cat only */
        {11, 12}, {1, 12},                                      /* c2_grad: d(c2), X = r1 */
        {12, 13}, {11, 13}, {10, 13}, {1, 13},                  /* r1_grad: three consumers, Y */
        {13, 14},                                               /* c1_grad */
    };
    check_edges(g, e, 21);
    assert_int_equal(m.fwd_node[flat], -1); /* the view folded: no node */
    assert_int_equal(m.bwd_node[flat], -1);
    assert_int_equal(m.fwd_node[fc], 6);
    assert_int_equal(m.bwd_node[c1], 14);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

/* ---- saved statistics, masks, and the tensors their gradients read ------------------ */

static void test_batchnorm_dropout(void **state)
{
    (void)state;
    xe_net *net = xe_net_new("bn");
    assert_non_null(net);
    int x = tensor(net, "x", XE_T_INPUT, 4, B, 3, 4, 4);
    int w = tensor(net, "w", XE_T_PARAM, 4, 6, 3, 1, 1);
    int sc = tensor(net, "scale", XE_T_PARAM, 1, 6, 0, 0, 0);
    int bb = tensor(net, "bias", XE_T_PARAM, 1, 6, 0, 0, 0);
    int mu = tensor(net, "mean", XE_T_PARAM, 1, 6, 0, 0, 0);
    int var = tensor(net, "var", XE_T_PARAM, 1, 6, 0, 0, 0);
    int wf = tensor(net, "wf", XE_T_PARAM, 2, 6, 6, 0, 0);
    int conv = op(net, XE_OP_CONV, "conv", 2, x, w, 0, "conv_out");
    int bn_in[5] = {out_of(net, conv), sc, bb, mu, var};
    xe_err err = {{0}};
    int bn = xe_net_add_op(net, XE_OP_BATCHNORM, "bn", 5, bn_in, "bn_out", &err);
    assert_true(bn >= 0);
    int drop = op(net, XE_OP_DROPOUT, "drop", 1, out_of(net, bn), 0, 0, "drop_out");
    int mp = op(net, XE_OP_MAXPOOL, "pool", 1, out_of(net, drop), 0, 0, "pool_out");
    net->op[mp].kernel[0] = net->op[mp].kernel[1] = 4;
    net->op[mp].stride[0] = net->op[mp].stride[1] = 4;
    int flat = op(net, XE_OP_FLATTEN, "flat", 1, out_of(net, mp), 0, 0, "flat_out");
    int fc = op(net, XE_OP_MATMUL, "fc", 2, out_of(net, flat), wf, 0, "logits");
    infer(net);
    const int64_t a = B * 6 * 16 * 4; /* 768 B: conv, bn, drop outputs */
    const int64_t p = B * 6 * 4;      /* 48 B: pool, flat, logits */

    /* inference: outputs only */
    xe_graph *g = NULL;
    xe_train_map m;
    assert_int_equal(xe_net_inference_graph(net, &g, &m, &err), XE_OK);
    const want_node wi[] = {
        {"conv", "Conv", XE_TN_FORWARD, conv, a, 6 * 3 * 4},
        {"bn", "BatchNormalization", XE_TN_FORWARD, bn, a, 4 * 6 * 4},
        {"drop", "Dropout", XE_TN_FORWARD, drop, a, 0},
        {"pool", "MaxPool", XE_TN_FORWARD, mp, p, 0},
        {"fc", "MatMul", XE_TN_FORWARD, fc, p, 36 * 4},
    };
    check_nodes(g, &m, wi, 5);
    const int ei[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
    check_edges(g, ei, 4);
    xe_graph_free(g);
    xe_train_map_clear(&m);

    /* training: BatchNorm keeps mean and inverse std (2 x 6 floats), Dropout a byte mask */
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    const want_node wt[] = {
        {"conv", "Conv", XE_TN_FORWARD, conv, a, 6 * 3 * 4},
        {"bn", "BatchNormalization", XE_TN_FORWARD, bn, a + 2 * 6 * 4, 4 * 6 * 4},
        {"drop", "Dropout", XE_TN_FORWARD, drop, a + B * 6 * 16, 0},
        {"pool", "MaxPool", XE_TN_FORWARD, mp, p, 0},
        {"fc", "MatMul", XE_TN_FORWARD, fc, p, 36 * 4},
        {"loss", "SoftmaxCrossEntropyLoss", XE_TN_LOSS, 6, p, 0},
        {"fc_grad", "MatMulGrad", XE_TN_BACKWARD, fc, p, 0},
        {"pool_grad", "MaxPoolGrad", XE_TN_BACKWARD, mp, a, 0},
        {"drop_grad", "DropoutGrad", XE_TN_BACKWARD, drop, a, 0},
        {"bn_grad", "BatchNormalizationGrad", XE_TN_BACKWARD, bn, a, 0},
        {"conv_grad", "ConvGrad", XE_TN_BACKWARD, conv, 0, 0},
    };
    check_nodes(g, &m, wt, 11);
    const int et[][2] = {
        {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, /* forward and loss */
        {5, 6}, {3, 6},                         /* fc_grad: A = pool (through flat) */
        {6, 7}, {2, 7}, {3, 7},                 /* pool_grad: X = drop and Y = pool */
        {7, 8}, {2, 8},                         /* drop_grad: its output (the mask) */
        {8, 9}, {0, 9}, {1, 9},                 /* bn_grad: X = conv, Y with the statistics */
        {9, 10},                                /* conv_grad: x is the data */
    };
    check_edges(g, et, 16);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

/* An op whose output does not reach the loss (an auxiliary head) gets no backward node. */
static void test_dead_branch(void **state)
{
    (void)state;
    xe_net *net = xe_net_new("aux");
    assert_non_null(net);
    int x = tensor(net, "x", XE_T_INPUT, 2, B, 4, 0, 0);
    int w = tensor(net, "w", XE_T_PARAM, 2, 4, 4, 0, 0);
    int a = op(net, XE_OP_RELU, "a", 1, x, 0, 0, "a_out");
    int aux = op(net, XE_OP_GEMM, "aux", 2, out_of(net, a), w, 0, "aux_out");
    int main_ = op(net, XE_OP_GEMM, "main", 2, out_of(net, a), w, 0, "main_out");
    infer(net);
    xe_graph *g = NULL;
    xe_train_map m;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    const int64_t s = B * 4 * 4;
    const want_node want[] = {
        {"a", "Relu", XE_TN_FORWARD, a, s, 0},
        {"aux", "Gemm", XE_TN_FORWARD, aux, s, 64},
        {"main", "Gemm", XE_TN_FORWARD, main_, s, 64},
        {"loss", "SoftmaxCrossEntropyLoss", XE_TN_LOSS, 3, s, 0},
        {"main_grad", "GemmGrad", XE_TN_BACKWARD, main_, s, 0},
        {"a_grad", "ReluGrad", XE_TN_BACKWARD, a, 0, 0},
    };
    check_nodes(g, &m, want, 6);
    const int e[][2] = {{0, 1}, {0, 2}, {2, 3}, {3, 4}, {0, 4}, {4, 5}, {0, 5}};
    check_edges(g, e, 7);
    assert_int_equal(m.bwd_node[aux], -1);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

static void test_errors(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_graph *g = (xe_graph *)&err; /* must be reset to NULL on failure */
    xe_train_map m;
    /* shapes not inferred */
    xe_net *net = xe_net_new("raw");
    int x = tensor(net, "x", XE_T_INPUT, 2, B, 4, 0, 0);
    op(net, XE_OP_RELU, "r", 1, x, 0, 0, "r_out");
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_EINVAL);
    assert_null(g);
    assert_non_null(strstr(err.msg, "r_out"));
    assert_int_equal(xe_net_inference_graph(net, &g, &m, &err), XE_EINVAL);
    assert_null(g);
    assert_null(m.op);
    xe_net_free(net);
    /* only views */
    net = xe_net_new("views");
    x = tensor(net, "x", XE_T_INPUT, 2, B, 4, 0, 0);
    op(net, XE_OP_FLATTEN, "f", 1, x, 0, 0, "f_out");
    infer(net);
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "no operator"));
    assert_int_equal(xe_net_inference_graph(net, &g, &m, &err), XE_EINVAL);
    xe_net_free(net);
    /* a backward name colliding with an op's name */
    net = xe_net_new("clash");
    x = tensor(net, "x", XE_T_INPUT, 2, B, 4, 0, 0);
    int a = op(net, XE_OP_RELU, "a", 1, x, 0, 0, "a_out");
    op(net, XE_OP_RELU, "a_grad", 1, out_of(net, a), 0, 0, "b_out");
    infer(net);
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_EINVAL);
    assert_non_null(strstr(err.msg, "'a_grad'"));
    assert_null(g);
    xe_net_free(net);
}

/* A float16 model's tensors take 2 bytes an element in every node (activations follow
 * their input's type); before 2026-12-05 every activation was counted as float32, so
 * x [4, 8] fp16 -> Gemm 16 had a forward node of 256 B instead of 128 B. BatchNorm's saved
 * statistics stay float32 (2 x C x 4 B). */
static void test_float16_sizes(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_net *net = xe_net_new("fp16");
    int64_t dx[2] = {4, 8}, dw[2] = {16, 8}, d4[4] = {4, 2, 3, 3}, dk[4] = {2, 2, 1, 1}, dc[1] = {2};
    int x = xe_net_add_tensor(net, "x", XE_T_INPUT, XE_DT_FLOAT16, 2, dx, &err);
    int w = xe_net_add_tensor(net, "w", XE_T_PARAM, XE_DT_FLOAT16, 2, dw, &err);
    int fc = op(net, XE_OP_GEMM, "fc", 2, x, w, 0, "y");
    net->op[fc].trans_b = 1;
    int r = op(net, XE_OP_RELU, "relu", 1, out_of(net, fc), 0, 0, "r");
    int x4 = xe_net_add_tensor(net, "x4", XE_T_INPUT, XE_DT_FLOAT16, 4, d4, &err);
    int k = xe_net_add_tensor(net, "k", XE_T_PARAM, XE_DT_FLOAT16, 4, dk, &err);
    int c = xe_net_add_tensor(net, "c", XE_T_PARAM, XE_DT_FLOAT16, 1, dc, &err);
    assert_true(x >= 0 && w >= 0 && x4 >= 0 && k >= 0 && c >= 0);
    int conv = op(net, XE_OP_CONV, "conv", 2, x4, k, 0, "cv");
    int in[5] = {out_of(net, conv), c, c, c, c};
    int bn = xe_net_add_op(net, XE_OP_BATCHNORM, "bn", 5, in, "bnout", &err);
    assert_true(bn >= 0);
    int fl = op(net, XE_OP_FLATTEN, "flat", 1, out_of(net, bn), 0, 0, "f");
    int cat[2] = {out_of(net, r), out_of(net, fl)}; /* [4, 16] and [4, 18] */
    int cc = xe_net_add_op(net, XE_OP_CONCAT, "cat", 2, cat, "z", &err);
    assert_true(cc >= 0);
    infer(net);
    assert_int_equal(net->t[out_of(net, fc)].dtype, XE_DT_FLOAT16);
    assert_int_equal(xe_tensor_bytes(&net->t[out_of(net, fc)]), 4 * 16 * 2);
    assert_int_equal(net->t[out_of(net, cc)].dtype, XE_DT_FLOAT16);
    xe_graph *g = NULL;
    xe_train_map m;
    assert_int_equal(xe_net_training_graph(net, &g, &m, &err), XE_OK);
    assert_int_equal(g->nodes[m.fwd_node[fc]].mem, 4 * 16 * 2);
    assert_int_equal(g->nodes[m.fwd_node[fc]].param_mem, 16 * 8 * 2);
    assert_int_equal(g->nodes[m.fwd_node[r]].mem, 4 * 16 * 2);
    assert_int_equal(g->nodes[m.fwd_node[bn]].mem, 4 * 2 * 3 * 3 * 2 + 2 * 2 * 4);
    assert_int_equal(g->nodes[m.fwd_node[cc]].mem, 4 * 34 * 2);
    assert_int_equal(g->nodes[m.loss_node].mem, 4 * 34 * 2); /* d loss / d logits */
    assert_int_equal(g->nodes[m.bwd_node[cc]].mem, 4 * 34 * 2);
    assert_int_equal(g->nodes[m.bwd_node[r]].mem, 4 * 16 * 2);
    xe_graph_free(g);
    xe_train_map_clear(&m);
    xe_net_free(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float16_sizes),
        cmocka_unit_test(test_mlp_training_graph),
        cmocka_unit_test(test_loss_not_last),
        cmocka_unit_test(test_mlp_inference_graph),
        cmocka_unit_test(test_skip_concat_flatten),
        cmocka_unit_test(test_batchnorm_dropout),
        cmocka_unit_test(test_dead_branch),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
