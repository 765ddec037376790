/* ONNX reader: the committed fixtures (tests/data/onnx/, made by
 * tools/export_onnx_fixtures.py) read into nets whose inferred shapes equal ONNX's own
 * (NAME.shapes.json), at the exported batch and at batch 4; malformed files. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "onnx.pb-c.h"
#include "xengine/onnx.h"

static const char *src_dir(void)
{
    const char *d = getenv("XE_SOURCE_DIR");
    return d && d[0] ? d : ".";
}

static void fixture_path(char *buf, size_t len, const char *name, const char *ext)
{
    snprintf(buf, len, "%s/tests/data/onnx/%s%s", src_dir(), name, ext);
}

/* What each fixture must read into, from the architecture (torchvision 0.14) and the
 * exporter's conventions, not from the reader:
 *   nt       tensors: 1 data input + parameters (graph inputs) + one output per op
 *            (+ constants read as tensors, initializers);
 *   matched  tensors of the net that have a recorded ONNX shape;
 *   folded   recorded tensors that are not in the net: Constant outputs folded into
 *            Dropout / Clip attributes and unread Dropout masks;
 *   count[k] ops per kind. */
typedef struct fixture {
    const char *name;
    int64_t batch;
    int nt, matched, folded;
    int count[XE_OP_COUNT];
} fixture;

static const fixture fixtures[] = {
    /* resnet18: convs 1 + 4 stages x 2 blocks x 2 + 3 downsample = 20, a BN after each;
     * ReLU 1 + 8 x 2 = 17; 8 residual adds; params 20 + 20 x 4 + 2 = 102; 69 ops */
    {"resnet18", 1, 1 + 102 + 69, 172, 0,
     {[XE_OP_CONV] = 20, [XE_OP_BATCHNORM] = 20, [XE_OP_RELU] = 17, [XE_OP_ADD] = 8, [XE_OP_MAXPOOL] = 1,
      [XE_OP_GLOBAL_AVGPOOL] = 1, [XE_OP_FLATTEN] = 1, [XE_OP_GEMM] = 1}},
    /* resnet50: convs 1 + 16 bottlenecks x 3 + 4 downsample = 53; ReLU 1 + 16 x 3 = 49;
     * 16 adds; params 53 + 53 x 4 + 2 = 267; 175 ops */
    {"resnet50", 2, 1 + 267 + 175, 443, 0,
     {[XE_OP_CONV] = 53, [XE_OP_BATCHNORM] = 53, [XE_OP_RELU] = 49, [XE_OP_ADD] = 16, [XE_OP_MAXPOOL] = 1,
      [XE_OP_GLOBAL_AVGPOOL] = 1, [XE_OP_FLATTEN] = 1, [XE_OP_GEMM] = 1}},
    /* vgg16: 13 convs with bias, 3 linear: params 32; ReLU 13 + 2; 5 max pools; the
     * adaptive 7x7 average pool on 7x7 (an AveragePool 1x1); 2 dropouts, each with 2
     * Constant inputs (ratio, training_mode) and an unread mask: folded 4 + 2 */
    {"vgg16", 1, 1 + 32 + 40, 73, 6,
     {[XE_OP_CONV] = 13, [XE_OP_RELU] = 15, [XE_OP_MAXPOOL] = 5, [XE_OP_AVGPOOL] = 1, [XE_OP_FLATTEN] = 1,
      [XE_OP_GEMM] = 3, [XE_OP_DROPOUT] = 2}},
    /* mobilenet_v2: convs 1 + (2 + 16 x 3) + 1 = 52, each with BN; ReLU6 (Clip, 2
     * Constant bounds each) 1 + 1 + 16 x 2 + 1 = 35; residual adds 1+2+3+2+2 = 10;
     * params 52 + 52 x 4 + 2 = 262; ops 153; folded 35 x 2 + 2 + 1 mask */
    {"mobilenet_v2", 2, 1 + 262 + 153, 416, 73,
     {[XE_OP_CONV] = 52, [XE_OP_BATCHNORM] = 52, [XE_OP_CLIP] = 35, [XE_OP_ADD] = 10, [XE_OP_GLOBAL_AVGPOOL] = 1,
      [XE_OP_FLATTEN] = 1, [XE_OP_DROPOUT] = 1, [XE_OP_GEMM] = 1}},
    /* googlenet: BasicConv2d (conv, BN, ReLU) 3 + 9 inceptions x 6 = 57; max pools 4 + 9
     * pool branches = 13; 9 concats; params 57 x 5 + 2 = 287; ops 197; folded 2 + 1 */
    {"googlenet", 1, 1 + 287 + 197, 485, 3,
     {[XE_OP_CONV] = 57, [XE_OP_BATCHNORM] = 57, [XE_OP_RELU] = 57, [XE_OP_MAXPOOL] = 13, [XE_OP_CONCAT] = 9,
      [XE_OP_GLOBAL_AVGPOOL] = 1, [XE_OP_FLATTEN] = 1, [XE_OP_DROPOUT] = 1, [XE_OP_GEMM] = 1}},
    /* tiny_ops: x, w, labels; conv, reshape (+ its Constant shape), clip, dropout, loss;
     * folded: six, ratio, train (Constants) and mask; "zero" (initializer) never added */
    {"tiny_ops", 2, 3 + 1 + 5, 9, 4,
     {[XE_OP_CONV] = 1, [XE_OP_RESHAPE] = 1, [XE_OP_CLIP] = 1, [XE_OP_DROPOUT] = 1, [XE_OP_LOSS] = 1}},
    /* tiny_misc: x, wt, wm; initializers s, b, bias (not recorded by ONNX); 9 ops */
    {"tiny_misc", 1, 3 + 3 + 9, 12, 0,
     {[XE_OP_CONV_TRANSPOSE] = 1, [XE_OP_INSTANCENORM] = 1, [XE_OP_LRN] = 1, [XE_OP_LEAKY_RELU] = 1,
      [XE_OP_AVGPOOL] = 1, [XE_OP_FLATTEN] = 1, [XE_OP_MATMUL] = 1, [XE_OP_ADD] = 1, [XE_OP_SOFTMAX] = 1}},
};
#define NFIX ((int)(sizeof fixtures / sizeof fixtures[0]))

static json_t *load_shapes(const fixture *fx)
{
    char p[1024];
    fixture_path(p, sizeof p, fx->name, ".shapes.json");
    json_error_t je;
    json_t *root = json_load_file(p, 0, &je);
    if (!root) fprintf(stderr, "%s: %s\n", p, je.text);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "batch")), fx->batch);
    json_t *shapes = json_object_get(root, "shapes");
    assert_true(json_is_object(shapes));
    return root;
}

static xe_net *read_ok(const char *name, int64_t batch)
{
    char p[1024];
    fixture_path(p, sizeof p, name, ".onnx");
    xe_err err = {{0}};
    xe_net *net = NULL;
    int rc = xe_onnx_read(p, batch, &net, &err);
    if (rc != XE_OK) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    assert_non_null(net);
    return net;
}

/* A recorded tensor the reader folds away: a Constant's output or an unread second
 * output (Dropout's mask). */
static int is_foldable(const char *name)
{
    size_t l = strlen(name);
    if (strstr(name, "Constant")) return 1;
    if (l > 9 && strcmp(name + l - 9, "_output_1") == 0) return 1;
    return !strcmp(name, "six") || !strcmp(name, "ratio") || !strcmp(name, "train") || !strcmp(name, "mask");
}

/* Compares every tensor of a fixture read at `batch` (0: as exported) with ONNX's shapes
 * (the batch dimension of the data input and activations replaced when batch > 0). */
static void check_fixture(const fixture *fx, int64_t batch)
{
    json_t *root = load_shapes(fx);
    json_t *shapes = json_object_get(root, "shapes");
    xe_net *net = read_ok(fx->name, batch);
    assert_string_equal(net->name, fx->name);
    int64_t nb = batch > 0 ? batch : fx->batch;
    int matched = 0, folded = 0, ninput = 0;
    const char *key;
    json_t *val;
    json_object_foreach(shapes, key, val) {
        int i = xe_net_find_tensor(net, key);
        if (i < 0) {
            if (!is_foldable(key)) fprintf(stderr, "%s: recorded tensor %s missing from the net\n", fx->name, key);
            assert_true(is_foldable(key));
            folded++;
            continue;
        }
        const xe_tensor *t = &net->t[i];
        int batched = t->role == XE_T_INPUT || t->role == XE_T_LABEL || (t->role == XE_T_ACT && t->rank > 0);
        if ((int)json_array_size(val) != t->rank)
            fprintf(stderr, "%s: %s rank %d, ONNX %zu\n", fx->name, key, t->rank, json_array_size(val));
        assert_int_equal(t->rank, (int)json_array_size(val));
        for (int d = 0; d < t->rank; d++) {
            int64_t want = json_integer_value(json_array_get(val, (size_t)d));
            if (d == 0 && batched) {
                assert_int_equal(want, fx->batch); /* every activation leads with the batch */
                want = nb;
            }
            if (t->dim[d] != want)
                fprintf(stderr, "%s (batch %lld): %s dim %d is %lld, ONNX %lld\n", fx->name, (long long)batch, key, d,
                        (long long)t->dim[d], (long long)want);
            assert_int_equal(t->dim[d], want);
        }
        matched++;
    }
    for (int i = 0; i < net->nt; i++) {
        const xe_tensor *t = &net->t[i];
        if (t->role == XE_T_INPUT) ninput++;
        if (!json_object_get(shapes, t->name)) /* only initializers lack a recorded shape */
            assert_true(t->role == XE_T_PARAM && (t->data || t->idata));
        assert_true(t->rank >= 0);
    }
    assert_true(matched > 0);
    assert_int_equal(matched, fx->matched);
    assert_int_equal(folded, fx->folded);
    assert_int_equal(net->nt, fx->nt);
    assert_int_equal(ninput, 1);
    int count[XE_OP_COUNT] = {0}, nops = 0;
    for (int k = 0; k < net->nops; k++) count[net->op[k].kind]++;
    for (int k = 0; k < XE_OP_COUNT; k++) {
        if (count[k] != fx->count[k])
            fprintf(stderr, "%s: %d %s ops, expected %d\n", fx->name, count[k], xe_op_kind_name(k), fx->count[k]);
        assert_int_equal(count[k], fx->count[k]);
        nops += fx->count[k];
    }
    assert_int_equal(net->nops, nops);
    /* Dropout and Clip keep only their data input */
    for (int k = 0; k < net->nops; k++)
        if (net->op[k].kind == XE_OP_DROPOUT || net->op[k].kind == XE_OP_CLIP) assert_int_equal(net->op[k].nin, 1);
    xe_net_free(net);
    json_decref(root);
}

static void test_fixture_shapes(void **state)
{
    (void)state;
    for (int f = 0; f < NFIX; f++) check_fixture(&fixtures[f], 0);
}

static void test_fixture_batch4(void **state)
{
    (void)state;
    for (int f = 0; f < NFIX; f++) check_fixture(&fixtures[f], 4);
}

static const xe_op *op_named(const xe_net *net, const char *name)
{
    for (int k = 0; k < net->nops; k++)
        if (strcmp(net->op[k].name, name) == 0) return &net->op[k];
    fprintf(stderr, "no op %s\n", name);
    assert_true(0);
    return NULL;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b)); }

/* Attributes and roles as PyTorch exported them. */
static void test_fixture_attributes(void **state)
{
    (void)state;
    xe_net *net = read_ok("resnet18", 0);
    const xe_op *o = op_named(net, "/conv1/Conv");
    assert_int_equal(o->kernel[0], 7);
    assert_int_equal(o->stride[1], 2);
    assert_int_equal(o->pad[0], 3);
    assert_int_equal(o->pad[3], 3);
    assert_int_equal(net->t[o->in[0]].role, XE_T_INPUT);
    assert_string_equal(net->t[o->in[0]].name, "input");
    assert_int_equal(net->t[o->in[1]].role, XE_T_PARAM);
    assert_null(net->t[o->in[1]].data); /* export_params=False */
    o = op_named(net, "/bn1/BatchNormalization");
    assert_int_equal(o->nin, 5);
    assert_true(near(o->epsilon, 1e-5) && near(o->momentum, 0.9));
    o = op_named(net, "/fc/Gemm");
    assert_int_equal(o->trans_b, 1);
    assert_int_equal(o->trans_a, 0);
    assert_string_equal(net->t[o->out].name, "output");
    o = op_named(net, "/maxpool/MaxPool");
    assert_int_equal(o->ceil_mode, 0);
    assert_int_equal(o->kernel[1], 3);
    /* the Flatten is a view of the pooled [1, 512, 1, 1] */
    int fl = xe_net_find_tensor(net, "/Flatten_output_0");
    assert_true(fl >= 0 && xe_op_is_view(net->op[net->t[fl].producer].kind));
    assert_int_equal(xe_net_resolve_view(net, fl), xe_net_find_tensor(net, "/avgpool/GlobalAveragePool_output_0"));
    assert_int_equal(xe_tensor_bytes(&net->t[fl]), 512 * 4);
    xe_net_free(net);

    net = read_ok("googlenet", 0);
    assert_int_equal(op_named(net, "/maxpool1/MaxPool")->ceil_mode, 1);
    assert_true(near(op_named(net, "/dropout/Dropout")->ratio, 0.2));
    assert_true(near(op_named(net, "/conv1/bn/BatchNormalization")->epsilon, 1e-3));
    xe_net_free(net);

    net = read_ok("mobilenet_v2", 0);
    for (int k = 0; k < net->nops; k++)
        if (net->op[k].kind == XE_OP_CLIP) assert_true(net->op[k].clip_min == 0.0 && net->op[k].clip_max == 6.0);
    o = op_named(net, "/features/features.1/conv/conv.0/conv.0.0/Conv"); /* depthwise 3x3 */
    assert_int_equal(o->group, 32);
    xe_net_free(net);

    net = read_ok("vgg16", 0);
    assert_true(near(op_named(net, "/classifier/classifier.2/Dropout")->ratio, 0.5));
    assert_int_equal(op_named(net, "/avgpool/AveragePool")->kernel[0], 1);
    xe_net_free(net);

    net = read_ok("tiny_ops", 0);
    o = op_named(net, "reshape0");
    const xe_tensor *sh = &net->t[o->in[1]];
    assert_int_equal(sh->dtype, XE_DT_INT64);
    assert_non_null(sh->idata);
    assert_int_equal(sh->idata[0], 0);
    assert_int_equal(sh->idata[1], -1);
    o = op_named(net, "clip0");
    assert_true(o->clip_min == 0.0 && o->clip_max == 6.0);
    assert_true(near(op_named(net, "drop0")->ratio, 0.25));
    o = op_named(net, "loss0");
    assert_int_equal(net->t[o->in[1]].role, XE_T_LABEL);
    assert_int_equal(net->t[o->in[1]].dtype, XE_DT_INT64);
    assert_int_equal(xe_net_find_tensor(net, "zero"), -1);
    assert_int_equal(net->t[xe_net_find_tensor(net, "w")].role, XE_T_PARAM);
    xe_net_free(net);

    net = read_ok("tiny_misc", 0);
    const xe_tensor *s = &net->t[op_named(net, "in0")->in[1]];
    assert_non_null(s->data);
    assert_true(s->data[0] == 1.0f && s->data[1] == 2.0f);
    const xe_tensor *bias = &net->t[op_named(net, "add0")->in[1]];
    assert_non_null(bias->data);
    assert_true(bias->data[3] == 3.0f && bias->data[9] == 9.0f);
    assert_true(near(op_named(net, "in0")->epsilon, 1e-3));
    assert_true(near(op_named(net, "lrelu0")->alpha, 0.2));
    assert_int_equal(op_named(net, "lrn0")->size, 3);
    o = op_named(net, "pool0");
    assert_true(o->ceil_mode == 1 && o->count_include_pad == 1);
    assert_int_equal(op_named(net, "softmax0")->axis, -1);
    xe_net_free(net);
}

/* Expects reading `path` to fail with `code` and a message starting with the path. */
static void expect_fail(const char *path, int64_t batch, int code, const char *contains)
{
    xe_err err = {{0}};
    xe_net *net = (xe_net *)&err; /* must come back NULL */
    int rc = xe_onnx_read(path, batch, &net, &err);
    if (rc != code || strncmp(err.msg, path, strlen(path)) != 0 || (contains && !strstr(err.msg, contains)))
        fprintf(stderr, "rc %d: %s\n", rc, err.msg);
    assert_int_equal(rc, code);
    assert_null(net);
    assert_memory_equal(err.msg, path, strlen(path));
    assert_true(err.msg[strlen(path)] == ':');
    if (contains) assert_non_null(strstr(err.msg, contains));
    assert_null(strchr(err.msg, '\n'));
}

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    void *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void test_malformed(void **state)
{
    (void)state;
    char p[1024], tmp[] = "/tmp/xe_test_onnx_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    close(fd);

    /* truncated copies of resnet18: 16 bytes, a third, half, all but the last byte */
    fixture_path(p, sizeof p, "resnet18", ".onnx");
    size_t len;
    unsigned char *buf = read_all(p, &len);
    size_t cuts[] = {16, len / 3, len / 2, len - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        write_file(tmp, buf, cuts[c]);
        expect_fail(tmp, 0, XE_EPARSE, "not a valid ONNX protobuf");
    }
    free(buf);

    /* random bytes (a fixed LCG) */
    unsigned char rnd[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x = x * 1664525u + 1013904223u;
        rnd[i] = (unsigned char)(x >> 24);
    }
    write_file(tmp, rnd, sizeof rnd);
    expect_fail(tmp, 0, XE_EPARSE, NULL);

    /* an empty file is a valid, empty protobuf: no graph */
    write_file(tmp, "", 0);
    expect_fail(tmp, 0, XE_EPARSE, "no graph");
    unlink(tmp);

    /* missing file, a directory */
    expect_fail("/nonexistent/xe_model.onnx", 0, XE_EIO, "cannot open");
    expect_fail("/tmp", 0, XE_EIO, NULL);

    /* an unsupported operator, named with its node */
    fixture_path(p, sizeof p, "bad_unsupported", ".onnx");
    char want[1100];
    snprintf(want, sizeof want, "%s: node \"cos0\": unsupported operator \"Cos\"", p);
    xe_err err = {{0}};
    xe_net *net = NULL;
    assert_int_equal(xe_onnx_read(p, 0, &net, &err), XE_EUNSUPPORTED);
    assert_null(net);
    assert_string_equal(err.msg, want);

    /* a dangling input name */
    fixture_path(p, sizeof p, "bad_dangling", ".onnx");
    expect_fail(p, 0, XE_EINVAL, "node \"add0\": input \"nowhere\"");

    /* a symbolic batch needs a batch size; with one it reads */
    fixture_path(p, sizeof p, "symbolic_batch", ".onnx");
    expect_fail(p, 0, XE_EINVAL, "batch dimension is not a number; give a batch size (--batch N)");
    expect_fail(p, -1, XE_EINVAL, "batch -1");
    assert_int_equal(xe_onnx_read(p, 3, &net, &err), XE_OK);
    int y = xe_net_find_tensor(net, "y");
    assert_true(y >= 0);
    assert_int_equal(net->t[y].rank, 2);
    assert_int_equal(net->t[y].dim[0], 3);
    assert_int_equal(net->t[y].dim[1], 4);
    xe_net_free(net);

    /* the same bytes through the buffer entry point carry its label */
    fixture_path(p, sizeof p, "bad_unsupported", ".onnx");
    buf = read_all(p, &len);
    assert_int_equal(xe_onnx_read_buffer(buf, len, "mem.onnx", 0, &net, &err), XE_EUNSUPPORTED);
    assert_string_equal(err.msg, "mem.onnx: node \"cos0\": unsupported operator \"Cos\"");
    assert_int_equal(xe_onnx_read_buffer(buf, len / 2, "mem.onnx", 0, &net, &err), XE_EPARSE);
    assert_null(net);
    free(buf);
}

/* An unnamed node (names are optional in ONNX) is called OPTYPE_k after its index k; where
 * a named node already has that name, "_2" is added (tiny_ops with one node unnamed and a
 * later one renamed to its generated name was refused as a duplicate op, a new user's
 * find). The model is changed through the generated protobuf-c code and read from memory. */
static void test_unnamed_node_names(void **state)
{
    (void)state;
    char p[1024];
    fixture_path(p, sizeof p, "tiny_ops", ".onnx");
    size_t len;
    unsigned char *buf = read_all(p, &len);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(m);
    assert_non_null(m->graph);
    size_t i1 = 0, i2 = 0; /* the first two nodes that become ops (a Constant is a tensor) */
    for (size_t k = 0; k < m->graph->n_node && !i2; k++)
        if (strcmp(m->graph->node[k]->op_type, "Constant") != 0) {
            if (!i1 && k > 0) i1 = k;
            else if (i1) i2 = k;
        }
    assert_true(i1 > 0 && i2 > i1);
    Onnx__NodeProto *n1 = m->graph->node[i1], *n2 = m->graph->node[i2];
    char gen[96], gen2[104], empty[] = "";
    snprintf(gen, sizeof gen, "%s_%zu", n1->op_type, i1);
    snprintf(gen2, sizeof gen2, "%s_2", gen);
    char *name1 = n1->name, *name2 = n2->name;
    n1->name = empty;
    n2->name = gen;
    size_t plen = onnx__model_proto__get_packed_size(m);
    unsigned char *out = malloc(plen);
    assert_non_null(out);
    assert_int_equal(onnx__model_proto__pack(m, out), plen);
    n1->name = name1; /* the unpacked message owns its strings */
    n2->name = name2;
    onnx__model_proto__free_unpacked(m, NULL);
    xe_net *net = NULL;
    xe_err err = {{0}};
    int rc = xe_onnx_read_buffer(out, plen, "renamed.onnx", 0, &net, &err);
    if (rc) print_error("%s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    assert_non_null(op_named(net, gen));  /* the named node */
    assert_non_null(op_named(net, gen2)); /* the unnamed one, moved aside */
    xe_net_free(net);
    free(out);
}

/* Every single-byte corruption of the small fixtures: no crash, no leak (under the
 * sanitizer build), and either a net or an error whose message starts with the label. */
static void test_corrupted_bytes(void **state)
{
    (void)state;
    static const char *const names[] = {"tiny_ops", "tiny_misc", "bad_dangling"};
    static const unsigned char repl[] = {0x00, 0xff, 0x80};
    int errors = 0, oks = 0;
    for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
        char p[1024];
        fixture_path(p, sizeof p, names[f], ".onnx");
        size_t len;
        unsigned char *buf = read_all(p, &len);
        for (size_t i = 0; i < len; i++) {
            unsigned char orig = buf[i];
            for (size_t v = 0; v < sizeof repl; v++) {
                if (repl[v] == orig) continue;
                buf[i] = repl[v];
                xe_err err = {{0}};
                xe_net *net = NULL;
                int rc = xe_onnx_read_buffer(buf, len, "fuzz.onnx", 0, &net, &err);
                if (rc == XE_OK) {
                    assert_non_null(net);
                    oks++;
                } else {
                    assert_true(rc == XE_EPARSE || rc == XE_EINVAL || rc == XE_EUNSUPPORTED);
                    assert_null(net);
                    assert_memory_equal(err.msg, "fuzz.onnx: ", 11);
                    errors++;
                }
                xe_net_free(net);
            }
            buf[i] = orig;
        }
        free(buf);
    }
    assert_true(errors > 0 && oks > 0); /* both outcomes occur: a name byte changed still reads */
}

/* A copy of fixture `name` with `edit` applied to its unpacked message, packed into *len
 * bytes (the caller frees them). */
static unsigned char *edited_fixture(const char *name, void (*edit)(Onnx__ModelProto *, void *), void *arg,
                                     size_t *len)
{
    char p[1024];
    fixture_path(p, sizeof p, name, ".onnx");
    size_t n;
    unsigned char *buf = read_all(p, &n);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    assert_non_null(m);
    assert_non_null(m->graph);
    edit(m, arg);
    *len = onnx__model_proto__get_packed_size(m);
    unsigned char *out = malloc(*len);
    assert_non_null(out);
    assert_int_equal(onnx__model_proto__pack(m, out), *len);
    edit(m, NULL); /* undo: the unpacked message owns its strings */
    onnx__model_proto__free_unpacked(m, NULL);
    return out;
}

/* Sets the location of the external data of initializer 0 to arg (NULL: back to the
 * original). */
static void set_location(Onnx__ModelProto *m, void *arg)
{
    static char *orig;
    Onnx__TensorProto *t = m->graph->initializer[0];
    for (size_t i = 0; i < t->n_external_data; i++)
        if (strcmp(t->external_data[i]->key, "location") == 0) {
            if (arg) {
                orig = t->external_data[i]->value;
                t->external_data[i]->value = arg;
            } else {
                t->external_data[i]->value = orig;
            }
        }
}

/* Initializers stored as external data (data_location EXTERNAL) are read from the file
 * their location names, relative to the model's directory, at their offset. Before
 * 2026-12-05 they were taken as dims only: `xengine run` trained seeded random weights,
 * even with the data file missing (a new user's trial). */
static void test_external_data(void **state)
{
    (void)state;
    xe_net *net = read_ok("ext_mlp", 0);
    const xe_tensor *w = &net->t[xe_net_find_tensor(net, "w")];
    const xe_tensor *b = &net->t[xe_net_find_tensor(net, "b")];
    const xe_tensor *sh = &net->t[xe_net_find_tensor(net, "shape")];
    assert_non_null(w->data);
    for (int i = 0; i < 12; i++) assert_true(w->data[i] == 0.5f * (float)i);
    assert_non_null(b->data);
    assert_true(b->data[0] == -1.0f && b->data[1] == 0.0f && b->data[2] == 1.0f);
    assert_non_null(sh->idata);
    assert_int_equal(sh->idata[0], 0);
    assert_int_equal(sh->idata[1], -1);
    int z = xe_net_find_tensor(net, "z");
    assert_int_equal(net->t[z].rank, 2);
    assert_int_equal(net->t[z].dim[1], 3);
    xe_net_free(net);

    /* the model copied without its data file, then with a short one */
    char dir[] = "/tmp/xe_test_ext_XXXXXX", model[128], data[128], want[1400], p[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(model, sizeof model, "%s/ext_mlp.onnx", dir);
    snprintf(data, sizeof data, "%s/ext_mlp.data", dir);
    fixture_path(p, sizeof p, "ext_mlp", ".onnx");
    size_t len;
    unsigned char *buf = read_all(p, &len);
    write_file(model, buf, len);
    free(buf);
    snprintf(want, sizeof want, "tensor \"w\": external data file %s cannot be opened: No such file or directory", data);
    expect_fail(model, 0, XE_EIO, want);
    write_file(data, "0123456789", 10);
    snprintf(want, sizeof want, "tensor \"w\": external data file %s is too short (bytes 0..48 wanted)", data);
    expect_fail(model, 0, XE_EPARSE, want);
    unlink(data);
    unlink(model);
    rmdir(dir);

    /* a location outside the model's directory is refused, not read */
    static char *const bad[] = {"../ext_mlp.data", "/etc/passwd", "sub/../../x.data", ".."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf = edited_fixture("ext_mlp", set_location, bad[i], &len);
        xe_err err = {{0}};
        net = NULL;
        assert_int_equal(xe_onnx_read_buffer(buf, len, p, 0, &net, &err), XE_EUNSUPPORTED);
        assert_null(net);
        snprintf(want, sizeof want, "%s: tensor \"w\": external data location \"%s\" is absolute or has a \"..\" "
                 "component (must be under the model's directory)", p, bad[i]);
        assert_string_equal(err.msg, want);
        free(buf);
    }
    /* "sub/./" style locations that stay inside are fine: here the file is missing */
    buf = edited_fixture("ext_mlp", set_location, "sub/ext_mlp.data", &len);
    xe_err err = {{0}};
    assert_int_equal(xe_onnx_read_buffer(buf, len, p, 0, &net, &err), XE_EIO);
    assert_non_null(strstr(err.msg, "tests/data/onnx/sub/ext_mlp.data cannot be opened"));
    free(buf);
    /* a directory (".": the model's own) opens with fopen but is no data file: XE_EIO
     * "cannot be opened", not "too short" (XE_EPARSE) as before 2026-12-05 */
    buf = edited_fixture("ext_mlp", set_location, ".", &len);
    assert_int_equal(xe_onnx_read_buffer(buf, len, p, 0, &net, &err), XE_EIO);
    assert_non_null(strstr(err.msg, "tests/data/onnx/. cannot be opened: Is a directory"));
    free(buf);
}

/* Sets the ignore_index of the loss (the last node) to *(int64_t *)arg; NULL: no-op. */
static void set_ignore_index(Onnx__ModelProto *m, void *arg)
{
    if (!arg) return;
    Onnx__NodeProto *n = m->graph->node[m->graph->n_node - 1];
    for (size_t a = 0; a < n->n_attribute; a++)
        if (strcmp(n->attribute[a]->name, "ignore_index") == 0) n->attribute[a]->i = *(int64_t *)arg;
}

/* PyTorch exports F.cross_entropy as SoftmaxCrossEntropyLoss with ignore_index = -100,
 * which was refused before 2026-12-05. An ignore_index no label can equal (negative, or
 * >= the classes) changes nothing and is accepted; one of the classes is still refused. */
static void test_loss_ignore_index(void **state)
{
    (void)state;
    xe_net *net = read_ok("torch_ce", 0);
    assert_int_equal(net->nops, 2);
    const xe_op *o = &net->op[1];
    assert_int_equal(o->kind, XE_OP_LOSS);
    assert_int_equal(o->has_ignore_index, 1);
    assert_int_equal(o->ignore_index, -100);
    assert_int_equal(net->t[o->in[1]].role, XE_T_LABEL);
    assert_string_equal(net->t[o->in[1]].name, "labels");
    assert_int_equal(net->t[o->in[0]].dim[1], 5); /* 5 classes */
    assert_int_equal(net->t[o->out].rank, 0);
    xe_net_free(net);

    char p[1024], want[1400];
    fixture_path(p, sizeof p, "torch_ce", ".onnx");
    static const int64_t vals[] = {5, 1000, -1, 0, 4};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        int64_t v = vals[i];
        size_t len;
        unsigned char *buf = edited_fixture("torch_ce", set_ignore_index, &v, &len);
        xe_err err = {{0}};
        net = NULL;
        int rc = xe_onnx_read_buffer(buf, len, p, 0, &net, &err);
        free(buf);
        if (v < 0 || v >= 5) {
            assert_int_equal(rc, XE_OK);
            assert_int_equal(net->op[1].ignore_index, v);
            xe_net_free(net);
            continue;
        }
        assert_int_equal(rc, XE_EUNSUPPORTED);
        assert_null(net);
        snprintf(want, sizeof want,
                 "%s: net torch_ce: op \"/SoftmaxCrossEntropyLoss\" (SoftmaxCrossEntropyLoss): ignore_index %lld is "
                 "one of the 5 classes: ignoring labels is not supported (an ignore_index no label can equal, "
                 "negative or >= the classes, is accepted)",
                 p, (long long)v);
        assert_string_equal(err.msg, want);
    }
}

/* A graph input read only by Add nodes is data when it has the Add's output shape and
 * the other operand is broadcast into it, whichever operand it is: PyTorch exports
 * fc(self.b + x) as Add(b, x). Before 2026-12-05 b was taken for the data input (the
 * first input of a node), x for a parameter: --batch resized b, b got no gradient and the
 * Add's param_mem counted x. */
static void test_param_first_add(void **state)
{
    (void)state;
    for (int64_t batch = 0; batch <= 6; batch += 6) {
        xe_net *net = read_ok("param_first_add", batch);
        const xe_tensor *b = &net->t[xe_net_find_tensor(net, "b")], *x = &net->t[xe_net_find_tensor(net, "x")];
        assert_int_equal(b->role, XE_T_PARAM);
        assert_int_equal(x->role, XE_T_INPUT);
        assert_int_equal(b->rank, 1);
        assert_int_equal(b->dim[0], 8); /* a parameter keeps its size */
        assert_int_equal(x->dim[0], batch ? batch : 4);
        assert_int_equal(net->t[xe_net_find_tensor(net, "w")].role, XE_T_PARAM);
        xe_graph *g = NULL;
        xe_train_map map;
        xe_err err = {{0}};
        assert_int_equal(xe_net_training_graph(net, &g, &map, &err), XE_OK);
        int add0 = (int)(op_named(net, "add0") - net->op);
        const xe_node *fwd = &g->nodes[map.fwd_node[add0]];
        assert_int_equal(fwd->param_mem, 8 * 4); /* b, not x */
        assert_int_equal(fwd->mem, (batch ? batch : 4) * 8 * 4);
        assert_true(map.bwd_node[add0] >= 0); /* b gets a gradient */
        assert_int_equal(g->nodes[map.bwd_node[add0]].mem, 0); /* no activation input */
        xe_graph_free(g);
        xe_train_map_clear(&map);
        xe_net_free(net);
    }
}

/* Models that planning took but the executor can never run are refused when read, one
 * line naming the model and the node (2026-12-05; a new user's trial planned all three). */
static void test_unrunnable(void **state)
{
    (void)state;
    /* the last two: losses the executor does not compute, accepted and computed wrongly
     * before 2026-12-05 (class weights ignored; a per-pixel loss over 5 x 8 x 8 = 320
     * classes) */
    static const struct {
        const char *fixture;
        int code;
        const char *msg; /* after "PATH: " */
    } cases[] = {
        {"bad_avgpool_pads", XE_EINVAL,
         "net bad_avgpool_pads: op \"pool0\" (AveragePool): pads 3, 3 not smaller than the kernel extent 2: a window "
         "would hold only padding"},
        {"bad_convt_outpad", XE_EINVAL,
         "net bad_convt_outpad: op \"up0\" (ConvTranspose): output_padding 2 not smaller than the stride 2 or the "
         "dilation 1 (ONNX requires it)"},
        {"bad_matmul1d", XE_EUNSUPPORTED,
         "node \"mm0\": MatMul of the 1-D operand \"x\" is not supported (2-D and batched operands only)"},
        {"bad_loss_weights", XE_EUNSUPPORTED,
         "net bad_loss_weights: op \"loss0\" (SoftmaxCrossEntropyLoss): class weights (input \"cw\") are not "
         "supported"},
        {"bad_loss_4d", XE_EUNSUPPORTED,
         "net bad_loss_4d: op \"loss0\" (SoftmaxCrossEntropyLoss): logits \"z\" [2,5,8,8]: only logits [N, C] with "
         "labels [N] are supported (no per-element loss)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char p[1024], want[1400];
        fixture_path(p, sizeof p, cases[k].fixture, ".onnx");
        snprintf(want, sizeof want, "%s: %s", p, cases[k].msg);
        expect_fail(p, 0, cases[k].code, want);
    }
}

/* A graph output must be written by a node: one naming a graph input was accepted
 * until 2026-12-05, against docs/onnx.md. With several outputs the loss goes on the
 * last operator's (xe_net_loss_logits says which); the other head gets no backward. */
static void test_graph_outputs(void **state)
{
    (void)state;
    char p[1024], want[1400];
    fixture_path(p, sizeof p, "bad_output_is_input", ".onnx");
    snprintf(want, sizeof want, "%s: graph output \"x\" is a graph input or a constant, not produced by any node", p);
    expect_fail(p, 0, XE_EINVAL, want);

    xe_net *net = read_ok("two_outputs", 0);
    assert_int_equal(xe_net_loss_logits(net), -1); /* no loss yet */
    xe_graph *g = NULL;
    xe_train_map map;
    xe_err err = {{0}};
    assert_int_equal(xe_net_training_graph(net, &g, &map, &err), XE_OK);
    int lg = xe_net_loss_logits(net);
    assert_true(lg >= 0);
    assert_string_equal(net->t[lg].name, "y3");
    int f2 = (int)(op_named(net, "f2") - net->op), f3 = (int)(op_named(net, "f3") - net->op);
    assert_true(map.fwd_node[f2] >= 0);
    assert_int_equal(map.bwd_node[f2], -1); /* y2's head: no gradient */
    assert_true(map.bwd_node[f3] >= 0);
    assert_int_equal(g->nodes[map.loss_node].mem, 4 * 5 * 4);
    xe_graph_free(g);
    xe_train_map_clear(&map);
    xe_net_free(net);
}

/* PyTorch exports F.avg_pool2d(x, 2) as a Pad with all-zero pads and an AveragePool:
 * the Pad is dropped (its output stands for its input); Pad was an unsupported operator
 * until 2026-12-05. A Pad that pads is still refused. */
static void test_zero_pad_dropped(void **state)
{
    (void)state;
    xe_net *net = read_ok("torch_avgpool", 0);
    int counts[XE_OP_COUNT] = {0};
    for (int k = 0; k < net->nops; k++) counts[net->op[k].kind]++;
    assert_int_equal(net->nops, 5); /* Conv, Relu, AveragePool, Flatten, Gemm */
    assert_int_equal(counts[XE_OP_AVGPOOL], 1);
    const xe_op *relu = NULL, *pool = NULL;
    for (int k = 0; k < net->nops; k++) {
        if (net->op[k].kind == XE_OP_RELU) relu = &net->op[k];
        if (net->op[k].kind == XE_OP_AVGPOOL) pool = &net->op[k];
    }
    assert_non_null(relu);
    assert_non_null(pool);
    assert_int_equal(pool->in[0], relu->out); /* reads the Relu's output directly */
    const xe_tensor *y = &net->t[pool->out];
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dim[1], 4);
    assert_int_equal(y->dim[2], 3); /* 8 - 3 + 1 = 6, pooled by 2 */
    assert_int_equal(y->dim[3], 3);
    xe_net_free(net);

    char p[1024], want[1400];
    fixture_path(p, sizeof p, "bad_pad_nonzero", ".onnx");
    snprintf(want, sizeof want, "%s: node \"pad0\": Pad with non-zero pads not supported (only an all-zero Pad, "
             "which is dropped)", p);
    expect_fail(p, 0, XE_EUNSUPPORTED, want);
}

/* Identity nodes are dropped, each output standing for its input: on a parameter (what
 * PyTorch's EVAL exports write for merged initializers; squeezenet1_1 has 18) and on an
 * activation. Refused as an unsupported operator before 2026-12-05. */
static void test_identity_dropped(void **state)
{
    (void)state;
    xe_net *net = read_ok("identity_mlp", 0);
    assert_int_equal(net->nops, 3); /* Gemm, Relu, Gemm */
    const xe_op *fc0 = &net->op[0], *relu = &net->op[1], *fc1 = &net->op[2];
    assert_int_equal(fc0->kind, XE_OP_GEMM);
    assert_int_equal(relu->kind, XE_OP_RELU);
    assert_int_equal(fc1->kind, XE_OP_GEMM);
    assert_string_equal(net->t[fc0->in[1]].name, "w"); /* the parameter itself, with its values */
    assert_int_equal(net->t[fc0->in[1]].role, XE_T_PARAM);
    assert_non_null(net->t[fc0->in[1]].data);
    assert_true(fabs(net->t[fc0->in[1]].data[8] - 0.1f) < 1e-7); /* element 8: 0.1 * (8 % 7) */
    assert_int_equal(fc1->in[0], relu->out); /* reads the Relu's output directly */
    assert_int_equal(net->t[fc1->out].dim[1], 3);
    xe_net_free(net);
}

/* PyTorch's x.view(x.size(0), -1) exported with a dynamic batch (torch_view13 / 11:
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Unsqueeze's axes an input at opset
 * 13, an attribute at 11): the shape ops are shape computations evaluated at the batch
 * given, the Reshape's output follows it, and the training graph has no node for them. */
static void test_shape_views(void **state)
{
    (void)state;
    static const char *const names[] = {"torch_view13", "torch_view11"};
    static const int64_t batches[] = {2, 5};
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < 2; b++) {
            xe_net *net = read_ok(names[f], batches[b]);
            assert_int_equal(net->nops, 7); /* Conv, Relu, Conv, Relu, MaxPool, Reshape, Gemm */
            assert_int_equal(net->nsf, 5); /* Shape, Gather, Unsqueeze x2, Concat */
            const char *kinds[5] = {"Shape", "Gather", "Unsqueeze", "Unsqueeze", "Concat"};
            for (int k = 0; k < 5; k++) assert_string_equal(xe_shape_fn_kind_name(net->sf[k].kind), kinds[k]);
            const xe_op *rs = NULL, *pool = NULL;
            for (int k = 0; k < net->nops; k++) {
                if (net->op[k].kind == XE_OP_RESHAPE) rs = &net->op[k];
                if (net->op[k].kind == XE_OP_MAXPOOL) pool = &net->op[k];
            }
            assert_non_null(rs);
            assert_non_null(pool);
            assert_int_equal(rs->in[0], pool->out);
            const xe_tensor *shape = &net->t[rs->in[1]];
            assert_int_equal(shape->rank, 1);
            assert_int_equal(shape->dim[0], 2);
            assert_int_equal(shape->idata[0], batches[b]); /* the batch given, not the file's 2 */
            assert_int_equal(shape->idata[1], -1);
            const xe_tensor *y = &net->t[rs->out];
            assert_int_equal(y->rank, 2);
            assert_int_equal(y->dim[0], batches[b]);
            assert_int_equal(y->dim[1], 36); /* 4 channels x 3 x 3 */
            xe_graph *g = NULL;
            xe_train_map map = {0};
            xe_err err = {{0}};
            assert_int_equal(xe_net_training_graph(net, &g, &map, &err), XE_OK);
            assert_int_equal(g->n, 13); /* 6 forward (the Reshape is a view), the loss, 6 backward */
            for (int v = 0; v < g->n; v++) {
                const char *op = g->nodes[v].op;
                assert_null(strstr(op, "Shape"));
                assert_null(strstr(op, "Gather"));
                assert_null(strstr(op, "Unsqueeze"));
                assert_null(strstr(op, "Concat"));
                assert_null(strstr(op, "Reshape"));
            }
            xe_graph_free(g);
            xe_train_map_clear(&map);
            xe_net_free(net);
        }
    /* the batch is symbolic: a batch size is needed */
    char p[1024], want[1400];
    fixture_path(p, sizeof p, "torch_view13", ".onnx");
    expect_fail(p, 0, XE_EINVAL, "graph input \"input\": batch dimension is not a number");
    /* shape ops on values are refused, one line naming the model and the node */
    fixture_path(p, sizeof p, "bad_gather_data", ".onnx");
    snprintf(want, sizeof want, "%s: node \"embed0\": Gather of \"x\", which is not computed from shapes (a Shape "
             "output or an int64 constant): data-dependent Gather is not supported", p);
    expect_fail(p, 0, XE_EUNSUPPORTED, want);
    fixture_path(p, sizeof p, "bad_shape_as_data", ".onnx");
    snprintf(want, sizeof want, "%s: node \"add0\": Add reads \"s\", a value computed from shapes (by \"shape0\"): "
             "only a Reshape's shape may", p);
    expect_fail(p, 0, XE_EUNSUPPORTED, want);
}

/* torch_sigmoid: PyTorch's nn.Sigmoid and torch.sigmoid are Sigmoid ops, whose backward
 * node reads the forward node (its output Y); the flatten x.view(x.size(0), x.size(1) *
 * x.size(2)) is 3 Shape, 3 Gather, a Mul, 2 Unsqueeze and a Concat, evaluated at the
 * batch given. */
static void test_sigmoid_model(void **state)
{
    (void)state;
    static const int64_t batches[] = {2, 6};
    for (int b = 0; b < 2; b++) {
        int64_t n = batches[b];
        xe_net *net = read_ok("torch_sigmoid", n);
        int counts[XE_OP_COUNT] = {0};
        for (int k = 0; k < net->nops; k++) counts[net->op[k].kind]++;
        assert_int_equal(net->nops, 6);
        assert_int_equal(counts[XE_OP_SIGMOID], 2);
        assert_int_equal(counts[XE_OP_GEMM], 3);
        assert_int_equal(counts[XE_OP_RESHAPE], 1);
        assert_int_equal(net->nsf, 10);
        const xe_op *rs = &net->op[0];
        assert_int_equal(rs->kind, XE_OP_RESHAPE);
        assert_int_equal(net->t[rs->in[1]].idata[0], n);
        assert_int_equal(net->t[rs->in[1]].idata[1], 16); /* 4 x 4, by the Mul */
        assert_int_equal(net->t[rs->out].dim[0], n);
        assert_int_equal(net->t[rs->out].dim[1], 16);
        xe_graph *g = NULL;
        xe_train_map map = {0};
        xe_err err = {{0}};
        assert_int_equal(xe_net_training_graph(net, &g, &map, &err), XE_OK);
        assert_int_equal(g->n, 11); /* 5 forward, the loss, 5 backward */
        int seen = 0;
        for (int k = 0; k < net->nops; k++) {
            if (net->op[k].kind != XE_OP_SIGMOID) continue;
            int f = map.fwd_node[k], bw = map.bwd_node[k];
            assert_true(f >= 0 && bw >= 0);
            assert_string_equal(g->nodes[f].op, "Sigmoid");
            assert_string_equal(g->nodes[bw].op, "SigmoidGrad");
            assert_int_equal(g->nodes[f].mem, n * 32 * 4);  /* Y [n, 32] float32 */
            assert_int_equal(g->nodes[bw].mem, n * 32 * 4); /* dX, the size of X */
            int reads_y = 0;
            for (int e = g->pred_off[bw]; e < g->pred_off[bw + 1]; e++) reads_y |= g->pred[e] == f;
            assert_true(reads_y);
            seen++;
        }
        assert_int_equal(seen, 2);
        xe_graph_free(g);
        xe_train_map_clear(&map);
        xe_net_free(net);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_shapes),
        cmocka_unit_test(test_fixture_batch4),
        cmocka_unit_test(test_fixture_attributes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_unnamed_node_names),
        cmocka_unit_test(test_corrupted_bytes),
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_loss_ignore_index),
        cmocka_unit_test(test_param_first_add),
        cmocka_unit_test(test_unrunnable),
        cmocka_unit_test(test_graph_outputs),
        cmocka_unit_test(test_zero_pad_dropped),
        cmocka_unit_test(test_identity_dropped),
        cmocka_unit_test(test_shape_views),
        cmocka_unit_test(test_sigmoid_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
