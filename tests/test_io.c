/* Tests of the file formats (src/io): graph schemas, devices, costs, schedules, atomic
 * writes and the error for each kind of bad input. Fixtures live in tests/data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/solvers/rng.h"
#include "support/shared_graph.h"
#include "xengine/io.h"

#define DATA "tests/data/"

/* ---- helpers ------------------------------------------------------------------------ */

typedef struct tmpdir {
    char path[64];
} tmpdir;

static int setup_tmp(void **state)
{
    tmpdir *t = calloc(1, sizeof *t);
    if (!t) return -1;
    snprintf(t->path, sizeof t->path, "/tmp/xe_test_io.XXXXXX");
    if (!mkdtemp(t->path)) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown_tmp(void **state)
{
    tmpdir *t = *state;
    DIR *d = opendir(t->path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", t->path, e->d_name);
            struct stat st;
            if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) rmdir(p);
            else unlink(p);
        }
        closedir(d);
    }
    rmdir(t->path);
    free(t);
    return 0;
}

static void tmp_file(const tmpdir *t, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", t->path, name);
}

/* Number of entries in dir other than . and .. (to see that no temp file was left). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static xe_graph *read_graph_ok(const char *path)
{
    xe_graph *g = NULL;
    xe_err err = {{0}};
    int rc = xe_io_read_graph(path, &g, &err);
    if (rc) print_message("unexpected error: %s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    assert_non_null(g);
    assert_true(g->finalized);
    return g;
}

/* Every edge goes forward and the CSR lists agree with the edge arrays. */
static void assert_forward_edges(const xe_graph *g)
{
    for (int e = 0; e < g->m; e++) assert_true(g->esrc[e] < g->edst[e]);
    assert_int_equal(g->pred_off[g->n], g->m);
    assert_int_equal(g->succ_off[g->n], g->m);
}

/* Expects reader-style failure: the given code and a message starting with path. */
static void assert_fails_with(int rc, int code, const xe_err *err, const char *path,
                              const char *needle)
{
    print_message("  -> %s\n", err->msg);
    assert_int_equal(rc, code);
    assert_int_equal(strncmp(err->msg, path, strlen(path)), 0);
    assert_null(strchr(err->msg, '\n'));
    if (needle) assert_non_null(strstr(err->msg, needle));
}

static void assert_graph_fails(const char *path, int code, const char *needle)
{
    xe_graph *g = (xe_graph *)1;
    xe_err err = {{0}};
    int rc = xe_io_read_graph(path, &g, &err);
    assert_null(g); /* *out is cleared on failure */
    assert_fails_with(rc, code, &err, path, needle);
}

/* 2-device instance (gpu, cpu) over tests/data/tiny_graph.json. */
static xe_instance *tiny_instance(void)
{
    xe_graph *g = read_graph_ok(DATA "tiny_graph.json");
    xe_instance *in = xe_instance_new(g, 2);
    assert_non_null(in);
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    in->dev[0].kind = XE_DEV_GPU;
    in->dev[0].budget = 3000;
    snprintf(in->dev[1].name, sizeof in->dev[1].name, "cpu");
    in->dev[1].kind = XE_DEV_CPU;
    in->dev[1].budget = 1 << 20;
    return in;
}

/* ---- graphs ------------------------------------------------------------------------- */

static void test_read_own_graph(void **state)
{
    (void)state;
    xe_graph *g = read_graph_ok(DATA "tiny_graph.json");
    assert_string_equal(g->name, "tiny");
    assert_int_equal(g->n, 5);
    /* 7 edges in the file, [0,1] twice: 6 distinct */
    assert_int_equal(g->m, 6);
    assert_string_equal(g->nodes[0].name, "conv1");
    assert_string_equal(g->nodes[0].op, "Conv");
    assert_int_equal(g->nodes[0].param_mem, 64);
    assert_int_equal(g->nodes[0].backward, 0);
    /* relu1 leaves out backward and param_mem: defaults false and 0 */
    assert_int_equal(g->nodes[1].backward, 0);
    assert_int_equal(g->nodes[1].param_mem, 0);
    assert_int_equal(g->nodes[3].backward, 1);
    assert_int_equal(g->nodes[2].mem, 8);
    assert_true(g->nodes[0].cost == 2.5);
    assert_true(g->nodes[4].cost == 5.0);
    /* relu1_grad (3) reads loss (2) and relu1 (1); conv1_grad (4) reads conv1 and relu1_grad */
    assert_int_equal(xe_graph_npred(g, 3), 2);
    assert_int_equal(g->pred[g->pred_off[3]], 1);
    assert_int_equal(g->pred[g->pred_off[3] + 1], 2);
    assert_int_equal(xe_graph_npred(g, 4), 2);
    assert_int_equal(g->pred[g->pred_off[4]], 0);
    assert_int_equal(g->pred[g->pred_off[4] + 1], 3);
    assert_forward_edges(g);
    xe_graph_free(g);
}

static void test_graph_round_trip(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "tiny_out.json", path, sizeof path);
    xe_graph *g = read_graph_ok(DATA "tiny_graph.json");
    xe_err err = {{0}};
    assert_int_equal(xe_io_write_graph(path, g, &err), XE_OK);
    /* the atomic writer renamed its temp file: only the result is in the folder */
    assert_int_equal(count_entries(t->path), 1);
    xe_graph *h = read_graph_ok(path);
    assert_string_equal(h->name, g->name);
    assert_int_equal(h->n, g->n);
    assert_int_equal(h->m, g->m);
    for (int v = 0; v < g->n; v++) {
        assert_string_equal(h->nodes[v].name, g->nodes[v].name);
        assert_string_equal(h->nodes[v].op, g->nodes[v].op);
        assert_int_equal(h->nodes[v].backward, g->nodes[v].backward);
        assert_int_equal(h->nodes[v].mem, g->nodes[v].mem);
        assert_int_equal(h->nodes[v].param_mem, g->nodes[v].param_mem);
        assert_true(h->nodes[v].cost == g->nodes[v].cost);
    }
    for (int e = 0; e < g->m; e++) {
        assert_int_equal(h->esrc[e], g->esrc[e]);
        assert_int_equal(h->edst[e], g->edst[e]);
    }
    /* overwriting an existing file works the same way and keeps one entry */
    assert_int_equal(xe_io_write_graph(path, h, &err), XE_OK);
    assert_int_equal(count_entries(t->path), 1);
    xe_graph_free(g);
    xe_graph_free(h);
    unlink(path);
}

static void test_read_checkmate_tiny(void **state)
{
    (void)state;
    xe_graph *g = read_graph_ok(DATA "tiny_checkmate.json");
    assert_string_equal(g->name, "tiny checkmate");
    assert_int_equal(g->n, 3);
    assert_int_equal(g->m, 3);
    /* the file lists ids 1, 2, 0; nodes are renumbered by id: a, b, c_grad */
    assert_string_equal(g->nodes[0].name, "a");
    assert_string_equal(g->nodes[1].name, "b");
    assert_string_equal(g->nodes[2].name, "c_grad");
    assert_int_equal(g->nodes[0].mem, 100);   /* cost_ram */
    assert_true(g->nodes[1].cost == 20.0);    /* cost_cpu */
    assert_int_equal(g->nodes[2].backward, 1);
    assert_int_equal(g->nodes[1].backward, 0);
    /* links by id: 0->1, 1->2, 0->2; node 2 reads 0 and 1 */
    assert_int_equal(xe_graph_npred(g, 2), 2);
    assert_forward_edges(g);
    xe_graph_free(g);
}

static void test_read_moccasin_tiny(void **state)
{
    (void)state;
    xe_graph *g = read_graph_ok(DATA "tiny_moccasin.json");
    assert_int_equal(g->n, 3);
    assert_int_equal(g->m, 3);
    /* graph.order is [0, 2, 1]: node named "2" becomes index 1, "1" becomes index 2 */
    assert_string_equal(g->nodes[0].name, "0");
    assert_string_equal(g->nodes[1].name, "2");
    assert_string_equal(g->nodes[2].name, "1");
    assert_int_equal(g->nodes[1].mem, 20);      /* out_cost of "2" */
    assert_int_equal(g->nodes[2].mem, 30);      /* out_cost of "1" */
    assert_int_equal(g->nodes[2].param_mem, 5); /* param_cost of "1" */
    assert_true(g->nodes[2].cost == 7.0);       /* duration of "1" */
    /* links 0->2, 2->1, 0->1 become 0->1, 1->2, 0->2 */
    assert_int_equal(xe_graph_npred(g, 1), 1);
    assert_int_equal(xe_graph_npred(g, 2), 2);
    assert_forward_edges(g);
    xe_graph_free(g);
}

static void test_shared_checkmate_vgg16(void **state)
{
    (void)state;
    const char *path = xe_test_shared_graph("checkmate_vgg16_b256_train.json");
    xe_graph *g = read_graph_ok(path);
    /* README: VGG16 train, 45 nodes / 87 edges */
    assert_int_equal(g->n, 45);
    assert_int_equal(g->m, 87);
    /* id 0: block1_conv1, cost_cpu 385, cost_ram 3288334336 (256 x 224 x 224 x 64 x 4 bytes) */
    assert_string_equal(g->nodes[0].name, "block1_conv1");
    assert_int_equal(g->nodes[0].mem, INT64_C(3288334336));
    assert_true(g->nodes[0].cost == 385.0);
    /* id 22: the loss, marked backward in Checkmate's files; id 44 is the last gradient */
    assert_string_equal(g->nodes[22].name, "Loss");
    assert_int_equal(g->nodes[22].backward, 1);
    assert_int_equal(g->nodes[21].backward, 0);
    assert_string_equal(g->nodes[44].name, "block1_conv1_backward");
    /* node 44 reads 0, 1 and 43 (links with target 44 in the file) */
    assert_int_equal(xe_graph_npred(g, 44), 3);
    assert_int_equal(g->pred[g->pred_off[44] + 2], 43);
    assert_forward_edges(g);
    xe_graph_free(g);
}

static void test_shared_moccasin_n100(void **state)
{
    (void)state;
    const char *path = xe_test_shared_graph("random_layered_n100.json");
    xe_graph *g = read_graph_ok(path);
    /* README: 100 nodes / 236 edges */
    assert_int_equal(g->n, 100);
    assert_int_equal(g->m, 236);
    /* graph.order starts 0, 3, 2 and ends 99, 98, 1 */
    assert_string_equal(g->nodes[0].name, "0");
    assert_string_equal(g->nodes[1].name, "3");
    assert_string_equal(g->nodes[99].name, "1");
    /* node "3": out_cost 1980, duration 896; node "1" (the sink): out_cost 4920 */
    assert_int_equal(g->nodes[1].mem, 1980);
    assert_true(g->nodes[1].cost == 896.0);
    assert_int_equal(g->nodes[99].mem, 4920);
    /* the sink reads positions 97 and 98 of the order */
    assert_int_equal(xe_graph_npred(g, 99), 2);
    assert_int_equal(g->pred[g->pred_off[99]], 97);
    assert_forward_edges(g);
    xe_graph_free(g);
}

/* ---- bad graphs --------------------------------------------------------------------- */

static void test_graph_missing_file(void **state)
{
    (void)state;
    assert_graph_fails(DATA "no_such_file.json", XE_EIO, "cannot open");
}

static void test_graph_malformed(void **state)
{
    (void)state;
    /* the second comma on line 4 is the error: jansson reports line 4 */
    assert_graph_fails(DATA "bad/malformed.json", XE_EPARSE, "line 4");
}

static void test_graph_truncated(void **state)
{
    (void)state;
    assert_graph_fails(DATA "bad/truncated.json", XE_EPARSE, "invalid JSON");
}

static void test_graph_edge_to_missing_node(void **state)
{
    (void)state;
    /* edge 1 is [1, 7] in a 2-node graph */
    assert_graph_fails(DATA "bad/edge_missing_node.json", XE_EINVAL, "edge 1: node 7");
    assert_graph_fails(DATA "bad/checkmate_missing_id.json", XE_EINVAL, "link 1: target 9");
}

static void test_graph_cycle(void **state)
{
    (void)state;
    /* 1 -> 2 -> 1: finalize finds the cycle; the reader prefixes the path */
    assert_graph_fails(DATA "bad/cycle.json", XE_EINVAL, "cycle");
}

static void test_graph_negative_size(void **state)
{
    (void)state;
    assert_graph_fails(DATA "bad/negative_mem.json", XE_EINVAL, "node 1: field \"mem\" is negative");
}

static void test_graph_missing_field(void **state)
{
    (void)state;
    assert_graph_fails(DATA "bad/missing_field.json", XE_EPARSE, "node 1: missing field \"mem\"");
}

static void test_graph_not_a_graph(void **state)
{
    (void)state;
    /* a devices file is valid JSON but no graph */
    assert_graph_fails(DATA "tiny_devices.json", XE_EPARSE, "xengine-graph");
    /* well-formed but empty: nothing to schedule */
    assert_graph_fails(DATA "bad/no_nodes.json", XE_EINVAL, "no nodes");
}

/* A field whose value is null counts as absent (docs/formats.md): "edges": null is a
 * graph without edges, "format": null gives the message of a missing format. */
static void test_graph_null_fields(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "null_edges.json", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": \"xengine-graph\", \"nodes\": [{\"name\": \"a\", \"mem\": 4, \"cost\": 1}, "
          "{\"name\": \"b\", \"mem\": 8, \"cost\": 2}], \"edges\": null}",
          f);
    fclose(f);
    xe_graph *g = read_graph_ok(path);
    assert_int_equal(g->n, 2);
    assert_int_equal(g->m, 0);
    xe_graph_free(g);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": null, \"nodes\": [{\"name\": \"a\", \"mem\": 4, \"cost\": 1}]}", f);
    fclose(f);
    assert_graph_fails(path, XE_EPARSE, "not a graph file");
    unlink(path);
}

/* ---- devices ------------------------------------------------------------------------ */

static void test_read_devices(void **state)
{
    (void)state;
    xe_recipe r;
    xe_err err = {{0}};
    assert_int_equal(xe_io_read_devices(DATA "tiny_devices.json", &r, &err), XE_OK);
    assert_int_equal(r.ndev, 3);
    assert_string_equal(r.name[0], "gpu");
    assert_int_equal(r.kind[0], XE_DEV_GPU);
    assert_int_equal(r.kind[1], XE_DEV_CPU);
    /* "80%" -> fraction 0.8 of the peak, no byte budget */
    assert_true(fabs(r.budget_frac[0] - 0.8) < 1e-12);
    assert_int_equal(r.budget_bytes[0], 0);
    /* "12GiB" = 12 * 2^30 = 12884901888 bytes */
    assert_int_equal(r.budget_bytes[1], INT64_C(12884901888));
    /* plain number: bytes; speed absent: 1 */
    assert_int_equal(r.budget_bytes[2], 4096);
    assert_true(r.speed[1] == 0.125);
    assert_true(r.speed[2] == 1.0);
    assert_true(r.bandwidth == 8e9);
    assert_true(r.latency == 2e-5);
    assert_true(r.time_unit == 1e-3);
}

static void test_devices_defaults(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "dev_defaults.json", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* the kind in any case, as the line format takes it ("GPU"; refused before 2026-12-05) */
    fputs("{\"devices\": [{\"name\": \"g\", \"kind\": \"GPU\", \"budget\": \"500MB\"}]}", f);
    fclose(f);
    xe_recipe r;
    xe_err err = {{0}};
    assert_int_equal(xe_io_read_devices(path, &r, &err), XE_OK);
    assert_int_equal(r.ndev, 1);
    assert_int_equal(r.kind[0], XE_DEV_GPU);
    assert_int_equal(r.budget_bytes[0], 500000000); /* MB is decimal: 500 * 10^6 */
    assert_true(r.speed[0] == 1.0);
    assert_true(r.bandwidth == 16e9);
    assert_true(r.latency == 1e-5);
    assert_true(r.time_unit == 1.0);
    unlink(path);
}

static void test_devices_bad_budget(void **state)
{
    (void)state;
    xe_recipe r;
    memset(&r, 0x5a, sizeof r);
    xe_recipe before = r;
    xe_err err = {{0}};
    const char *path = DATA "bad/bad_budget.json";
    int rc = xe_io_read_devices(path, &r, &err);
    assert_fails_with(rc, XE_EPARSE, &err, path, "\"lots\"");
    /* *out is untouched on failure */
    assert_memory_equal(&r, &before, sizeof r);
}

/* A devices file with a NUL byte is refused, in both formats (the line reader dropped
 * what followed it); a leading UTF-8 byte order mark is skipped, in both formats; a
 * device name holding "->" is refused, in both formats. */
static void test_devices_nul_and_bom(void **state)
{
    const tmpdir *t = *state;
    static const struct {
        const char *name, *text;
        size_t len;
        int rc, ndev;
        const char *needle;
    } cases[] = {
        {"nul.txt", "gpu0;GPU;0;1;80%\n\0cpu;CPU;0;1;400%\n", 35, XE_EPARSE, 0, ": byte 18: a NUL byte"},
        {"nul.json", "{\"devices\": [\0]}", 16, XE_EPARSE, 0, ": byte 14: a NUL byte"},
        {"bom.txt", "\xef\xbb\xbfgpu0;GPU;0;1;80%\ncpu;CPU;0;1;400%\n", 37, XE_OK, 2, NULL},
        {"bom.json", "\xef\xbb\xbf{\"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\", \"budget\": 100}]}", 64,
         XE_OK, 1, NULL},
        {"utf8.txt", "gpu\xce;GPU;0;1;80%\n", 17, XE_EPARSE, 0, "line 1: device name is not valid UTF-8"},
        /* "->" separates the devices of a copy in costs files: a name holding it made
         * the keys ambiguous ("a->b->b") */
        {"arrow.txt", "a->b;GPU;0;1;80%\nb;CPU;0;1;400%\n", 32, XE_EPARSE, 0, "line 1: device name 'a->b' contains '->'"},
        {"arrow.json", "{\"devices\": [{\"name\": \"x->x\", \"kind\": \"gpu\", \"budget\": 100}]}", 61, XE_EINVAL, 0,
         "name 'x->x' contains '->'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[256];
        tmp_file(t, cases[k].name, path, sizeof path);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(cases[k].text, 1, cases[k].len, f), cases[k].len);
        fclose(f);
        xe_recipe r;
        xe_err err = {{0}};
        int rc = xe_io_read_devices(path, &r, &err);
        if (cases[k].rc) {
            assert_fails_with(rc, cases[k].rc, &err, path, cases[k].needle);
        } else {
            assert_int_equal(rc, XE_OK);
            assert_int_equal(r.ndev, cases[k].ndev);
            assert_string_equal(r.name[0], "gpu0"); /* not "\xef\xbb\xbfgpu0" */
        }
        unlink(path);
    }
}

/* An endless input of NUL bytes (/dev/zero) read as text is refused at its first byte,
 * at once (it used to be read to the end of memory first), as a graph, devices file or
 * costs file; read as bytes (an ONNX model) it stops at XE_IO_MAX_FILE_BYTES (not run
 * here: 2 GiB; `xengine solve z.onnx` with z.onnx a link to /dev/zero: exit 2 after 6 s,
 * 2.1 GB resident). */
static void test_endless_input(void **state)
{
    (void)state;
    if (access("/dev/zero", R_OK) != 0) {
        print_message("skipped: no /dev/zero\n");
        return;
    }
    xe_err err = {{0}};
    char *data = (char *)1;
    size_t len = 7;
    int rc = xe_io_read_text("/dev/zero", "a JSON file", &data, &len, &err);
    assert_fails_with(rc, XE_EPARSE, &err, "/dev/zero", ": byte 1: a NUL byte (a JSON file is text)");
    assert_null(data);
    assert_int_equal(len, 0);
    xe_graph *g = NULL;
    assert_int_equal(xe_io_read_graph("/dev/zero", &g, &err), XE_EPARSE);
    assert_null(g);
    xe_recipe r;
    assert_fails_with(xe_io_read_devices("/dev/zero", &r, &err), XE_EPARSE, &err, "/dev/zero",
                      "a devices file is text");
}

/* A regular file above XE_IO_MAX_FILE_BYTES is refused from its size, before a byte is
 * read (a sparse 3 GB file: read to 2 GiB first, 14.6 s and 2.1 GB resident, before
 * 2026-12-05; this test would take that long again if the size check were lost). */
static void test_oversized_file(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "sparse.onnx", path, sizeof path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    int sized = ftruncate(fileno(f), (off_t)XE_IO_MAX_FILE_BYTES + 1) == 0;
    fclose(f);
    if (!sized) {
        print_message("skipped: cannot make a sparse file of 2 GiB here\n");
        unlink(path);
        return;
    }
    xe_err err = {{0}};
    char *data = (char *)1;
    size_t len = 7;
    assert_fails_with(xe_io_read_all(path, &data, &len, &err), XE_EINVAL, &err, path,
                      "larger than 2147483648 bytes (2 GiB)");
    assert_null(data);
    assert_int_equal(len, 0);
    unlink(path);
}

/* Names that are not UTF-8 are refused when the graph is finalized (every graph, whatever
 * reader built it), since every output is JSON. */
static void test_graph_names_utf8(void **state)
{
    (void)state;
    assert_true(xe_utf8_valid("conv0"));
    assert_true(xe_utf8_valid("\xce\xb1-\xe2\x82\xac-\xf0\x9f\x98\x80")); /* alpha, euro, an emoji */
    assert_false(xe_utf8_valid("conv\xce"));         /* cut short by the end */
    assert_false(xe_utf8_valid("\xce" "0"));         /* a lead byte without continuation */
    assert_false(xe_utf8_valid("\x80"));             /* a continuation byte first */
    assert_false(xe_utf8_valid("\xc0\xaf"));         /* overlong */
    assert_false(xe_utf8_valid("\xed\xa0\x80"));     /* a surrogate */
    assert_false(xe_utf8_valid("\xf4\x90\x80\x80")); /* above U+10FFFF */
    assert_false(xe_utf8_valid("\xff"));
    xe_err err = {{0}};
    xe_graph *g = xe_graph_new("g");
    assert_non_null(g);
    assert_int_equal(xe_graph_add_node(g, "a", "op", 0, 8, 0, 1.0, &err), 0);
    assert_int_equal(xe_graph_add_node(g, "b\xce", "op", 0, 8, 0, 1.0, &err), 1);
    assert_int_equal(xe_graph_add_edge(g, 0, 1, &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_EINVAL);
    assert_string_equal(err.msg, "node 1: name is not valid UTF-8");
    xe_graph_free(g);
}

static void test_parse_budget(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int rc;
        int64_t bytes;
        double frac;
    } cases[] = {
        {"80%", XE_OK, 0, 0.8},          /* 80 / 100 */
        {"400 %", XE_OK, 0, 4.0},        /* above 100% is allowed (host memory) */
        {"12345", XE_OK, 12345, 0},      /* plain bytes */
        {"1.5 GB", XE_OK, 1500000000, 0}, /* decimal unit: 1.5 * 10^9 */
        {"2KiB", XE_OK, 2048, 0},        /* binary unit: 2 * 1024 */
        {"10.7b", XE_OK, 10, 0},         /* rounded down, units case-insensitive */
        {"2.5KiB", XE_OK, 2560, 0},      /* a fraction with a unit */
        {"80.5%", XE_OK, 0, 0.805},      /* a fractional percentage */
        {"3000.0", XE_OK, 3000, 0},      /* a whole number written with a point */
        {"1.5", XE_EINVAL, 0, 0},        /* bytes without unit must be whole (was 1 B) */
        {"1e-3", XE_EINVAL, 0, 0},
        {"0%", XE_EINVAL, 0, 0},
        {"-5MB", XE_EINVAL, 0, 0},
        {"0.1", XE_EINVAL, 0, 0},        /* rounds down to 0 bytes */
        {"lots", XE_EPARSE, 0, 0},
        {"", XE_EPARSE, 0, 0},
        {"12 XB", XE_EPARSE, 0, 0},
        {"5%%", XE_EPARSE, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t bytes = 0;
        double frac = 0;
        xe_err err = {{0}};
        int rc = xe_io_parse_budget("--budget", cases[k].s, &bytes, &frac, &err);
        print_message("  '%s' -> %d %s\n", cases[k].s, rc, rc ? err.msg : "");
        assert_int_equal(rc, cases[k].rc);
        if (rc) {
            assert_int_equal(strncmp(err.msg, "--budget: ", 10), 0);
            continue;
        }
        assert_int_equal(bytes, cases[k].bytes);
        assert_true(fabs(frac - cases[k].frac) < 1e-12);
    }
}

/* ---- costs -------------------------------------------------------------------------- */

static void test_costs_round_trip(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "costs.json", path, sizeof path);
    xe_instance *in = tiny_instance();
    int n = in->g->n;
    for (int v = 0; v < n; v++)
        for (int d = 0; d < 2; d++) {
            in->cost[v * 2 + d] = 0.1 * (v + 1) + d / 3.0; /* not exact in decimal */
            in->copy[(v * 2 + d) * 2 + (1 - d)] = 1e-5 + v * 1e-7;
        }
    in->cost[3 * 2 + 1] = XE_NO_COST; /* relu1_grad cannot run on the cpu */
    xe_err err = {{0}};
    assert_int_equal(xe_io_write_costs(path, in, 0, &err), XE_OK);

    xe_instance *back = tiny_instance(); /* all costs 0 */
    assert_int_equal(xe_io_read_costs(path, back, &err), XE_OK);
    for (int i = 0; i < n * 2; i++) assert_true(back->cost[i] == in->cost[i]);
    for (int i = 0; i < n * 4; i++) assert_true(back->copy[i] == in->copy[i]);
    assert_false(xe_can_run(back, 3, 1));
    xe_instance_free(in);
    xe_instance_free(back);
    unlink(path);
}

static void test_costs_partial_ms(void **state)
{
    (void)state;
    xe_instance *in = tiny_instance();
    for (int i = 0; i < in->g->n * 2; i++) in->cost[i] = 9.0;
    xe_err err = {{0}};
    assert_int_equal(xe_io_read_costs(DATA "tiny_costs.json", in, &err), XE_OK);
    /* unit ms: conv1 gpu 2 ms, cpu 16 ms */
    assert_true(fabs(xe_cost(in, 0, 0) - 2e-3) < 1e-15);
    assert_true(fabs(xe_cost(in, 0, 1) - 16e-3) < 1e-15);
    /* relu1: cpu null -> cannot run; gpu not listed -> unchanged */
    assert_false(xe_can_run(in, 1, 1));
    assert_true(xe_cost(in, 1, 0) == 9.0);
    /* loss gpu 0.5 ms; nodes not listed keep 9 */
    assert_true(fabs(xe_cost(in, 2, 0) - 5e-4) < 1e-15);
    assert_true(xe_cost(in, 4, 1) == 9.0);
    assert_true(fabs(xe_copy_cost(in, 0, 0, 1) - 2.5e-4) < 1e-15);
    assert_true(fabs(xe_copy_cost(in, 0, 1, 0) - 5e-4) < 1e-15);
    assert_true(xe_copy_cost(in, 1, 0, 1) == 0.0);
    xe_instance_free(in);
}

static void test_costs_unknown_names(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "costs_bad.json", path, sizeof path);
    static const char *const bodies[] = {
        "{\"compute\": {\"nope\": {\"gpu\": 1}}}",
        "{\"compute\": {\"conv1\": {\"tpu\": 1}}}",
        "{\"copy\": {\"conv1\": {\"gpu->tpu\": 1}}}",
    };
    for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bodies[k], f);
        fclose(f);
        xe_instance *in = tiny_instance();
        in->cost[0] = 4.0;
        xe_err err = {{0}};
        int rc = xe_io_read_costs(path, in, &err);
        assert_fails_with(rc, XE_EINVAL, &err, path, NULL);
        assert_true(in->cost[0] == 4.0); /* untouched on failure */
        xe_instance_free(in);
    }
    unlink(path);
}

/* A file of two devices read for one of them: strict, refused; with skipping, the GPU's
 * entries are read (conv1 2 ms, loss 0.5 ms), the CPU's and the copies skipped, "cpu"
 * reported once; a file of none of the instance's devices refused either way. */
static void test_costs_device_subset(void **state)
{
    const tmpdir *t = *state;
    xe_graph *g = read_graph_ok(DATA "tiny_graph.json");
    xe_instance *in = xe_instance_new(g, 1);
    assert_non_null(in);
    snprintf(in->dev[0].name, sizeof in->dev[0].name, "gpu");
    in->dev[0].kind = XE_DEV_GPU;
    in->dev[0].budget = 3000;
    for (int v = 0; v < g->n; v++) in->cost[v] = 9.0;
    xe_err err = {{0}};
    assert_fails_with(xe_io_read_costs(DATA "tiny_costs.json", in, &err), XE_EINVAL, &err, DATA "tiny_costs.json", "cpu");
    assert_true(in->cost[0] == 9.0);
    xe_costs_read r = {.skip_unknown_devices = 1, .nskipped = 7};
    assert_int_equal(xe_io_read_costs_ex(DATA "tiny_costs.json", in, &r, &err), XE_OK);
    assert_true(fabs(xe_cost(in, 0, 0) - 2e-3) < 1e-15);
    assert_true(xe_cost(in, 1, 0) == 9.0);
    assert_true(fabs(xe_cost(in, 2, 0) - 5e-4) < 1e-15);
    assert_int_equal(r.nskipped, 1);
    assert_string_equal(r.skipped, "cpu");
    assert_int_equal(r.batch, 0);

    char path[256];
    tmp_file(t, "costs_other.json", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"batch\": 8, \"compute\": {\"conv1\": {\"tpu\": 1, \"npu\": 2}}, "
          "\"copy\": {\"conv1\": {\"tpu->npu\": 1, \"npu->tpu\": 1}}}", f);
    fclose(f);
    in->cost[0] = 4.0;
    assert_fails_with(xe_io_read_costs_ex(path, in, &r, &err), XE_EINVAL, &err, path, "only tpu, npu");
    assert_int_equal(r.nskipped, 2);
    assert_true(in->cost[0] == 4.0);
    unlink(path);
    xe_instance_free(in);
}

/* A message prefixed with itself, as callers do ("context: %s", err.msg): before
 * 2026-12-05 vsnprintf wrote into the buffer it read, and the text came out doubled
 * and cut (a new user's CBC failure at 10^11-byte sizes). */
static void test_err_prefix_own_message(void **state)
{
    (void)state;
    xe_err err = {{0}};
    xe_err_set(&err, XE_EINVAL, "t %d", 700);
    assert_int_equal(xe_err_set(&err, XE_ESOLVER, "CBC's solution fails the stage check: %s", err.msg), XE_ESOLVER);
    assert_string_equal(err.msg, "CBC's solution fails the stage check: t 700");
    xe_err_set(&err, XE_EINVAL, "%s", "line\nbreak");
    assert_null(strchr(err.msg, '\n'));
}

/* A percentage budget is floor(p / 100 * peak) exactly: with doubles 29% of 100 B was 28 B
 * (0.29 * 100 = 28.999999999999996), 92.8% of 125 B 115 B (a new user's trial,
 * 2026-12-05). Against integer arithmetic on percentages with one decimal, as --budget
 * and devices files write them ("NN.N%": strtod, then / 100), over peaks of 1 B to 2^50. */
static void test_budget_of_frac_exact(void **state)
{
    (void)state;
    assert_true(xe_budget_of_frac(0.29, 100) == 29);
    assert_true(xe_budget_of_frac(0.928, 125) == 116);
    assert_true(xe_budget_of_frac(0.5, 3) == 1);
    assert_true(xe_budget_of_frac(0.0, 12345) == 0);
    uint64_t rng = 7;
    int checked = 0, was_off = 0;
    for (int i = 0; i < 200000; i++) {
        int64_t peak = (int64_t)(xe_splitmix64(&rng) % ((uint64_t)1 << (1 + i % 50))) + 1;
        int64_t tenths = (int64_t)(xe_splitmix64(&rng) % 20001); /* 0.0% .. 2000.0% */
        char text[32];
        snprintf(text, sizeof text, "%lld.%lld", (long long)(tenths / 10), (long long)(tenths % 10));
        double frac = strtod(text, NULL) / 100.0;
        /* floor(tenths * peak / 1000) in 128-bit integers */
        unsigned __int128 prod = (unsigned __int128)tenths * (unsigned __int128)peak;
        double want = (double)(int64_t)(prod / 1000);
        if (want > 9e15) continue; /* beyond doubles' whole numbers */
        double got = xe_budget_of_frac(frac, peak);
        was_off += floor(frac * (double)peak) != want;
        if (got != want)
            fail_msg("%s%% of %lld B: %.17g, want %.17g", text, (long long)peak, got, want);
        checked++;
    }
    print_message("percent budgets: %d checked, %d of them wrong with a plain floor\n", checked, was_off);
    assert_true(checked > 100000);
    assert_true(was_off > 0); /* the test sees the case it is for */
}

/* ---- schedules ---------------------------------------------------------------------- */

static void fill_schedule(xe_schedule *s)
{
    xe_schedule_init(s);
    assert_int_equal(xe_schedule_push(s, XE_EV_COMPUTE, 0, 0, -1), XE_OK);
    assert_int_equal(xe_schedule_push(s, XE_EV_COPY, 0, 0, 1), XE_OK);
    assert_int_equal(xe_schedule_push(s, XE_EV_COMPUTE, 1, 0, -1), XE_OK);
    assert_int_equal(xe_schedule_push(s, XE_EV_FREE, 0, 0, -1), XE_OK);
    assert_int_equal(xe_schedule_push(s, XE_EV_COMPUTE, 2, 1, -1), XE_OK);
    assert_int_equal(xe_schedule_push(s, XE_EV_COPY, 2, 1, 0), XE_OK);
}

static void test_schedule_round_trip(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "sched.json", path, sizeof path);
    xe_instance *in = tiny_instance();
    xe_schedule s;
    fill_schedule(&s);
    xe_sim_result sum;
    memset(&sum, 0, sizeof sum);
    sum.ndev = 2;
    sum.total_time = 12.5;
    sum.makespan = INFINITY; /* not representable in JSON: written as null */
    sum.computes = 3;
    sum.copies = 2;
    sum.frees = 1;
    sum.dev[0].peak = 2000;
    sum.dev[0].compute_time = 3.0;
    sum.dev[0].computes = 2;
    sum.dev[1].copies_in = 1;
    sum.dev[1].copy_in_time = 0.25;
    sum.bad_event = -1;
    xe_err err = {{0}};
    assert_int_equal(xe_io_write_schedule(path, in, &s, &sum, "{\"solver\": \"milp\", \"gap\": 0.01}",
                                          &err),
                     XE_OK);
    assert_int_equal(count_entries(t->path), 1);

    xe_schedule back;
    xe_schedule_init(&back);
    assert_int_equal(xe_schedule_push(&back, XE_EV_FREE, 4, 1, -1), XE_OK); /* appended after */
    assert_int_equal(xe_io_read_schedule(path, in, &back, &err), XE_OK);
    assert_int_equal(back.len, s.len + 1);
    for (int i = 0; i < s.len; i++) {
        assert_int_equal(back.ev[i + 1].kind, s.ev[i].kind);
        assert_int_equal(back.ev[i + 1].node, s.ev[i].node);
        assert_int_equal(back.ev[i + 1].dev, s.ev[i].dev);
        assert_int_equal(back.ev[i + 1].dst, s.ev[i].dst);
    }

    /* the summary, checked in the raw JSON */
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "format")), "xengine-schedule");
    assert_string_equal(json_string_value(json_object_get(root, "graph")), "tiny");
    json_t *devs = json_object_get(root, "devices");
    assert_int_equal(json_array_size(devs), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(devs, 0), "budget")), 3000);
    json_t *ev1 = json_array_get(json_object_get(root, "events"), 1);
    assert_string_equal(json_string_value(json_object_get(ev1, "op")), "copy");
    assert_string_equal(json_string_value(json_object_get(ev1, "name")), "conv1");
    assert_string_equal(json_string_value(json_object_get(ev1, "from")), "gpu");
    assert_string_equal(json_string_value(json_object_get(ev1, "to")), "cpu");
    json_t *su = json_object_get(root, "summary");
    assert_true(json_real_value(json_object_get(su, "total_time_s")) == 12.5);
    assert_true(json_is_null(json_object_get(su, "makespan_s")));
    assert_int_equal(json_integer_value(json_object_get(su, "copies")), 2);
    assert_string_equal(json_string_value(json_object_get(su, "solver")), "milp");
    assert_true(json_real_value(json_object_get(su, "gap")) == 0.01);
    json_t *sd0 = json_array_get(json_object_get(su, "devices"), 0);
    json_t *sd1 = json_array_get(json_object_get(su, "devices"), 1);
    assert_string_equal(json_string_value(json_object_get(sd0, "name")), "gpu");
    assert_int_equal(json_integer_value(json_object_get(sd0, "peak_bytes")), 2000);
    assert_int_equal(json_integer_value(json_object_get(sd0, "budget_bytes")), 3000);
    assert_true(json_real_value(json_object_get(sd1, "copy_in_time_s")) == 0.25);
    assert_int_equal(json_integer_value(json_object_get(sd1, "copies_in")), 1);
    json_decref(root);

    xe_schedule_clear(&back);
    xe_schedule_clear(&s);
    xe_instance_free(in);
    unlink(path);
}

static void test_schedule_unknown_device(void **state)
{
    (void)state;
    xe_instance *in = tiny_instance();
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err err = {{0}};
    const char *path = DATA "bad/schedule_unknown_device.json";
    int rc = xe_io_read_schedule(path, in, &s, &err);
    assert_fails_with(rc, XE_EINVAL, &err, path, "event 1");
    assert_non_null(strstr(err.msg, "tpu"));
    /* the valid event 0 was rolled back */
    assert_int_equal(s.len, 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

static void test_schedule_name_mismatch(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "sched_bad.json", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* node 1 is relu1, not conv1 */
    fputs("{\"events\": [{\"op\": \"free\", \"node\": 1, \"name\": \"conv1\", \"device\": \"cpu\"}]}", f);
    fclose(f);
    xe_instance *in = tiny_instance();
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err err = {{0}};
    int rc = xe_io_read_schedule(path, in, &s, &err);
    assert_fails_with(rc, XE_EINVAL, &err, path, "relu1");
    xe_schedule_clear(&s);
    xe_instance_free(in);
    unlink(path);
}

static void test_schedule_bad_extra(void **state)
{
    const tmpdir *t = *state;
    char path[256];
    tmp_file(t, "sched_extra.json", path, sizeof path);
    xe_instance *in = tiny_instance();
    xe_schedule s;
    fill_schedule(&s);
    xe_err err = {{0}};
    int rc = xe_io_write_schedule(path, in, &s, NULL, "[1, 2]", &err);
    assert_fails_with(rc, XE_EINVAL, &err, path, "not a JSON object");
    assert_false(file_exists(path)); /* nothing written */
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* ---- atomic writes ------------------------------------------------------------------ */

static void test_atomic_write_failure(void **state)
{
    const tmpdir *t = *state;
    xe_graph *g = read_graph_ok(DATA "tiny_graph.json");
    xe_err err = {{0}};
    /* a folder that does not exist: the temp file cannot be created */
    char path[256];
    tmp_file(t, "no_dir/g.json", path, sizeof path);
    int rc = xe_io_write_graph(path, g, &err);
    assert_fails_with(rc, XE_EIO, &err, path, NULL);
    /* the target is a folder: rename fails; the temp file is removed, the folder stays */
    tmp_file(t, "a_dir", path, sizeof path);
    assert_int_equal(mkdir(path, 0755), 0);
    rc = xe_io_write_graph(path, g, &err);
    assert_fails_with(rc, XE_EIO, &err, path, "a directory");
    assert_int_equal(count_entries(t->path), 1); /* just a_dir */
    assert_int_equal(count_entries(path), 0);
    rmdir(path);
    /* a symbolic link (as /dev/null would be a device) is not replaced either */
    char link[512];
    tmp_file(t, "link.json", link, sizeof link);
    assert_int_equal(symlink("/dev/null", link), 0);
    rc = xe_io_write_graph(link, g, &err);
    assert_fails_with(rc, XE_EIO, &err, link, "a symbolic link");
    struct stat ls;
    assert_int_equal(lstat(link, &ls), 0);
    assert_true(S_ISLNK(ls.st_mode));
    assert_int_equal(count_entries(t->path), 1); /* link.json only: no temporary file */
    unlink(link);
    xe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_own_graph),
        cmocka_unit_test(test_graph_round_trip),
        cmocka_unit_test(test_read_checkmate_tiny),
        cmocka_unit_test(test_read_moccasin_tiny),
        cmocka_unit_test(test_shared_checkmate_vgg16),
        cmocka_unit_test(test_shared_moccasin_n100),
        cmocka_unit_test(test_graph_missing_file),
        cmocka_unit_test(test_graph_malformed),
        cmocka_unit_test(test_graph_truncated),
        cmocka_unit_test(test_graph_edge_to_missing_node),
        cmocka_unit_test(test_graph_cycle),
        cmocka_unit_test(test_graph_negative_size),
        cmocka_unit_test(test_graph_missing_field),
        cmocka_unit_test(test_graph_not_a_graph),
        cmocka_unit_test(test_graph_null_fields),
        cmocka_unit_test(test_read_devices),
        cmocka_unit_test(test_devices_defaults),
        cmocka_unit_test(test_devices_bad_budget),
        cmocka_unit_test_setup_teardown(test_devices_nul_and_bom, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_endless_input),
        cmocka_unit_test(test_oversized_file),
        cmocka_unit_test(test_graph_names_utf8),
        cmocka_unit_test(test_parse_budget),
        cmocka_unit_test(test_budget_of_frac_exact),
        cmocka_unit_test(test_costs_round_trip),
        cmocka_unit_test(test_costs_partial_ms),
        cmocka_unit_test(test_costs_unknown_names),
        cmocka_unit_test(test_costs_device_subset),
        cmocka_unit_test(test_err_prefix_own_message),
        cmocka_unit_test(test_schedule_round_trip),
        cmocka_unit_test(test_schedule_unknown_device),
        cmocka_unit_test(test_schedule_name_mismatch),
        cmocka_unit_test(test_schedule_bad_extra),
        cmocka_unit_test(test_atomic_write_failure),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
