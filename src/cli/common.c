/* xengine CLI — instance options, loading, error mapping and the summary table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "xengine/cost.h"
#include "xengine/io.h"
#include "xengine/onnx.h"

int xe_cli_inst_arg(int argc, char **argv, int *i, xe_cli_inst_opts *o)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--inference")) {
        o->inference = 1;
        return 1;
    }
    const char **slot = !strcmp(a, "--devices") ? &o->devices
                      : !strcmp(a, "--batch")   ? &o->batch
                      : !strcmp(a, "--budget")  ? &o->budget
                      : !strcmp(a, "--costs")   ? &o->costs
                                                : NULL;
    if (!slot) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "xengine %s: %s needs a value\n", argv[0], a);
        return -1;
    }
    *slot = argv[++*i];
    return 1;
}

int xe_cli_exit_code(int status)
{
    switch (status) {
    case XE_OK: return XE_EXIT_OK;
    case XE_EIO:
    case XE_EPARSE:
    case XE_EINVAL:
    case XE_EUNSUPPORTED: return XE_EXIT_INPUT;
    case XE_EINFEASIBLE: return XE_EXIT_INFEASIBLE;
    case XE_ETIMEOUT: return XE_EXIT_TIMEOUT;
    default: return XE_EXIT_INTERNAL;
    }
}

static int is_preset(const char *s)
{
    return !strcmp(s, "gpu") || !strcmp(s, "cpu") || !strcmp(s, "gpu+cpu");
}

/* JSON starts with '{' or a blank, an ONNX ModelProto with field 1 (ir_version). */
int xe_cli_is_onnx(const char *path)
{
    size_t n = strlen(path);
    if (n >= 5 && strcasecmp(path + n - 5, ".onnx") == 0) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c = fgetc(f);
    fclose(f);
    return c == 0x08;
}

/* ONNX model -> net -> training or inference graph. */
static int load_net(const xe_cli_inst_opts *o, xe_net **net, xe_graph **g, xe_train_map *map, xe_err *err)
{
    int64_t batch = 0;
    if (o->batch) {
        char *end;
        long long b = strtoll(o->batch, &end, 10);
        if (*end || end == o->batch || b < 1 || b > 1000000000)
            return xe_err_set(err, XE_EINVAL, "--batch: '%s' is not a whole number from 1 to 1e9", o->batch);
        batch = b;
    }
    int rc = xe_onnx_read(o->graph, batch, net, err);
    if (rc) return rc;
    rc = o->inference ? xe_net_inference_graph(*net, g, map, err) : xe_net_training_graph(*net, g, map, err);
    if (rc) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        xe_err_set(err, rc, "%s: %s", o->graph, msg);
    }
    return rc;
}

int xe_cli_load_instance(const xe_cli_inst_opts *o, xe_instance **out)
{
    xe_err err = {{0}};
    xe_graph *g = NULL;
    xe_recipe r;
    xe_net *net = NULL;
    xe_train_map map = {0};
    *out = NULL;
    int onnx = xe_cli_is_onnx(o->graph), rc;
    if (!onnx && (o->batch || o->inference)) {
        fprintf(stderr, "xengine: error: %s: --batch and --inference apply to ONNX models only\n", o->graph);
        return XE_EXIT_USAGE;
    }
    rc = onnx ? load_net(o, &net, &g, &map, &err) : xe_io_read_graph(o->graph, &g, &err);
    if (rc) goto fail;
    const char *dev = o->devices ? o->devices : "gpu+cpu";
    if (is_preset(dev))
        rc = onnx ? xe_cost_recipe_preset(dev, 1.0, &r, &err) : xe_recipe_preset(dev, 1.0, &r, &err);
    else
        rc = xe_io_read_devices(dev, &r, &err);
    if (rc) goto fail;
    if (o->budget) {
        int64_t bytes = 0;
        double frac = 0;
        rc = xe_io_parse_budget("--budget", o->budget, &bytes, &frac, &err);
        if (rc) goto fail;
        r.budget_bytes[0] = bytes;
        r.budget_frac[0] = frac;
    }
    rc = onnx ? xe_cost_instance(net, g, &map, &r, out, &err) : xe_instance_from_recipe(g, &r, out, &err);
    if (rc) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        xe_err_set(&err, rc, "%s%s: %s", o->budget ? "--budget " : "", o->budget ? o->budget : dev, msg);
        goto fail;
    }
    g = NULL; /* owned by the instance now */
    if (o->costs && (rc = xe_io_read_costs(o->costs, *out, &err))) goto fail;
    if ((rc = xe_instance_validate(*out, &err))) {
        /* name the file the bad costs came from */
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        xe_err_set(&err, rc, "%s: %s", o->costs ? o->costs : o->graph, msg);
        goto fail;
    }
    xe_net_free(net);
    xe_train_map_clear(&map);
    return XE_OK;
fail:
    fprintf(stderr, "xengine: error: %s\n", err.msg);
    xe_net_free(net);
    xe_train_map_clear(&map);
    xe_graph_free(g);
    xe_instance_free(*out);
    *out = NULL;
    return xe_cli_exit_code(rc);
}

int xe_cli_check_output(const char *out, const char *input)
{
    struct stat so, si;
    xe_err err = {{0}};
    if (xe_io_check_writable(out, &err)) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        return XE_EXIT_USAGE;
    }
    if (stat(out, &so) == 0 && stat(input, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
        fprintf(stderr, "xengine: error: %s: is the input graph; refusing to overwrite it\n", out);
        return XE_EXIT_USAGE;
    }
    return XE_EXIT_OK;
}

const char *xe_cli_bytes(int64_t b, char *buf, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)b;
    int u = 0;
    while (x >= 1024.0 && u < 4) {
        x /= 1024.0;
        u++;
    }
    snprintf(buf, cap, u ? "%.2f %s" : "%.0f %s", x, unit[u]);
    return buf;
}

void xe_cli_print_summary(const xe_instance *in, const xe_sim_result *r)
{
    char b1[32], b2[32];
    printf("%-8s %-4s %12s %12s %6s %11s %11s %9s %11s %7s\n", "device", "kind", "budget", "peak", "use",
           "compute_s", "copy_in_s", "computes", "recomputes", "copies");
    for (int d = 0; d < in->ndev; d++) {
        const xe_sim_device *s = &r->dev[d];
        double use = in->dev[d].budget > 0 ? 100.0 * (double)s->peak / (double)in->dev[d].budget : 0;
        printf("%-8s %-4s %12s %12s %5.1f%% %11.4f %11.4f %9d %11d %7d\n", in->dev[d].name,
               in->dev[d].kind == XE_DEV_GPU ? "gpu" : "cpu", xe_cli_bytes(in->dev[d].budget, b1, sizeof b1),
               xe_cli_bytes(s->peak, b2, sizeof b2), use, s->compute_time, s->copy_in_time, s->computes,
               s->recomputes, s->copies_in);
    }
    printf("total: %.4f s serial (compute + copies), makespan %.4f s with devices and copies overlapped\n",
           r->total_time, r->makespan);
    printf("       %d computes (%d recomputations), %d copies, %d frees\n", r->computes, r->recomputes,
           r->copies, r->frees);
}
