/* xengine export-graph — writes the graph of a model (an ONNX model's training or
 * inference graph) in xengine's own JSON format, and optionally its per-device costs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "xengine/io.h"

/* A fresh empty file beside path (PATH.stage.XXXXXX) to write into and rename later: its
 * name in buf (n bytes). XE_EIO naming path when none can be made. */
static int stage_file(const char *path, char *buf, size_t n, xe_err *err)
{
    if (xe_io_temp_path(path, "stage", buf, n)) return xe_err_set(err, XE_EIO, "%s: path too long", path);
    int fd = mkstemp(buf);
    if (fd < 0) return xe_err_set(err, XE_EIO, "%s: cannot write (create): %s", path, strerror(errno));
    /* the writer gives its file the mode of the one it replaces (the staged one's): that
     * of path, as for every other output */
    int bad = fchmod(fd, (mode_t)xe_io_output_mode(path)) != 0;
    int e = errno;
    close(fd);
    if (bad) {
        unlink(buf);
        return xe_err_set(err, XE_EIO, "%s: cannot write (chmod): %s", path, strerror(e));
    }
    return XE_OK;
}

/* Writes the graph to out and, when costs_out is not NULL, the costs to costs_out, all or
 * nothing: the costs go to a staged file first, then the graph to out (atomically), then
 * the staged costs are renamed over costs_out. Where a step fails, out and costs_out are
 * left as they were (until 2026-12-05 a failed costs write removed out, after the new
 * graph had replaced the old one) and the staged file is removed; err names the path the
 * user gave. Only the last rename failing (in one directory: a vanished directory) leaves
 * the new graph beside the old costs, and says so. */
static int write_both(const char *out, const char *costs_out, const xe_instance *in, int64_t batch, xe_err *err)
{
    if (!costs_out) return xe_io_write_graph(out, in->g, err);
    char staged[4096];
    int rc = stage_file(costs_out, staged, sizeof staged, err);
    if (rc) return rc;
    rc = xe_io_write_costs(staged, in, batch, err);
    if (rc) {
        size_t k = strlen(staged);
        if (!strncmp(err->msg, staged, k)) { /* the message names the path given */
            char rest[sizeof err->msg];
            snprintf(rest, sizeof rest, "%s", err->msg + k);
            xe_err_set(err, rc, "%s%s", costs_out, rest);
        }
        unlink(staged);
        return rc;
    }
    rc = xe_io_write_graph(out, in->g, err);
    if (rc) {
        unlink(staged);
        return rc;
    }
    if (rename(staged, costs_out) != 0) {
        int e = errno;
        unlink(staged);
        return xe_err_set(err, XE_EIO, "%s: cannot write (rename): %s; %s holds the new graph", costs_out,
                          strerror(e), out);
    }
    return XE_OK;
}

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine export-graph GRAPH [--batch N] [--inference] [--devices D] -o GRAPH.json\n"
            "                            [--costs-out COSTS.json]\n"
            "\n"
            "Writes GRAPH (an ONNX model, or any graph 'solve' reads) in xengine's JSON graph\n"
            "format (docs/formats.md). For an ONNX model that is its training graph (or, with\n"
            "--inference, its inference graph; docs/training-graph.md), each node's cost the\n"
            "roofline estimate on the first device of --devices in milliseconds (the unit the\n"
            "presets read JSON graph costs in). --costs-out writes the estimate for every\n"
            "device and device pair (a costs file for 'solve --costs').\n"
            "\n"
            "example:\n"
            "  xengine export-graph tests/data/onnx/resnet18.onnx --batch 32 -o resnet18.json \\\n"
            "      --costs-out resnet18_costs.json\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 5 internal error or an output could not\n"
            "be written (a full disk; nothing is left half-written)\n");
}

int xe_cli_export_graph(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    const char *out = NULL, *costs_out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--costs-out")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            if (!strcmp(a, "--costs-out")) costs_out = argv[++i];
            else out = argv[++i];
        } else if (a[0] != '-' && !io.graph) {
            io.graph = a;
        } else {
            return xe_cli_bad_arg(a);
        }
    }
    if (!io.graph || !out) {
        fprintf(stderr, "xengine: error: need GRAPH and -o GRAPH.json (try --help)\n");
        return XE_EXIT_USAGE;
    }
    if (io.budget) { /* accepted and ignored before 2026-12-05 */
        fprintf(stderr, "xengine: error: --budget does not apply: export-graph writes a graph and costs, no "
                        "budgets (give it to solve)\n");
        return XE_EXIT_USAGE;
    }
    int code = xe_cli_check_output_inst(out, &io);
    if (!code && costs_out) code = xe_cli_check_output_inst(costs_out, &io);
    if (!code) code = xe_cli_check_outputs_differ(out, "-o", costs_out, "--costs-out");
    if (code) return code;
    xe_instance *in = NULL;
    xe_net *net = NULL;
    xe_train_map map = {0};
    if ((code = xe_cli_load_instance_net(&io, "gpu+cpu", &net, &map, NULL, &in))) return code;
    int64_t batch = net ? xe_cli_net_batch(net) : 0; /* written into --costs-out */
    xe_net_free(net);
    xe_train_map_clear(&map);
    if (xe_cli_is_onnx(io.graph))
        for (int v = 0; v < in->g->n; v++) in->g->nodes[v].cost = xe_cost(in, v, 0) * 1e3;
    xe_err err = {{0}};
    int rc = write_both(out, costs_out, in, batch, &err);
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        xe_instance_free(in);
        return xe_cli_write_exit_code(rc);
    }
    printf("wrote %s (%d nodes, %d edges)", out, in->g->n, in->g->m);
    if (costs_out) printf(" and %s (%d devices)", costs_out, in->ndev);
    printf("\n");
    xe_instance_free(in);
    return XE_EXIT_OK;
}
