/* xengine profile — measures every operator of a model's training step on every device
 * and every copy between devices, and writes the costs file the planner reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "xengine/io.h"
#include "xengine/plan.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine profile MODEL.onnx [--batch N] [--devices D] [--threads T1,T2,..]\n"
            "                       [--runs N] [--warmup N] [--seed S] -o COSTS.json\n"
            "\n"
            "Runs one training step of MODEL with every tensor kept, then times every forward,\n"
            "loss and backward node on every device (oneDNN CPU engines, each with its own\n"
            "thread count) after --warmup untimed runs, takes the median of --runs runs, and\n"
            "times each tensor's copy for every ordered device pair likewise. Writes them as a\n"
            "costs file (docs/formats.md) for 'xengine solve --costs' and 'xengine run --costs'.\n"
            "\n"
            "  --devices D      preset or devices file as for solve (default cpu: one device with\n"
            "                   every core); every device runs on this host's CPU (oneDNN)\n"
            "  --threads T1,..  OpenMP threads per device (default: the number a device's name\n"
            "                   ends with, cpu2 -> 2; else all cores)\n"
            "  --runs N         timed runs per node, median taken (default 5)\n"
            "  --warmup N       untimed runs per node first (default 2)\n"
            "  -o, --output F   write the costs file here (required)\n"
            "\n"
            "example:\n"
            "  xengine profile tests/data/onnx/resnet18.onnx --batch 2 \\\n"
            "      --devices tests/data/cpu2_devices.json -o costs.json\n"
            "\n"
            "On a machine shared with other jobs, export OMP_WAIT_POLICY=passive (docs/executor.md).\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 5 internal error or the costs file could\n"
            "not be written\n");
}

int xe_cli_profile(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    const char *out = NULL, *threads = NULL;
    xe_profile_opts po;
    xe_profile_opts_default(&po);
    for (int i = 1; i < argc; i++) {
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        }
        int is_out = !strcmp(a, "-o") || !strcmp(a, "--output"); /* as solve and export-graph */
        int takes = is_out || !strcmp(a, "--threads") || !strcmp(a, "--runs") || !strcmp(a, "--warmup") ||
                    !strcmp(a, "--seed");
        if (takes) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            const char *v = argv[++i];
            int x;
            unsigned long long seed;
            if (is_out) out = v;
            else if (!strcmp(a, "--threads")) threads = v;
            else if (!strcmp(a, "--runs")) {
                if (xe_cli_whole(a, v, 1, 100000, &x)) return XE_EXIT_USAGE;
                po.runs = x;
            } else if (!strcmp(a, "--warmup")) {
                if (xe_cli_whole(a, v, 0, 100000, &x)) return XE_EXIT_USAGE;
                po.warmup = x;
            } else {
                if (xe_cli_seed(v, &seed)) return XE_EXIT_USAGE;
                po.seed = seed;
            }
        } else if (a[0] != '-' && !io.graph) {
            io.graph = a;
        } else {
            return xe_cli_bad_arg(a);
        }
    }
    if (!io.graph || !out) {
        fprintf(stderr, "xengine: error: need MODEL.onnx and -o COSTS.json (try --help)\n");
        return XE_EXIT_USAGE;
    }
    if (io.costs) {
        fprintf(stderr, "xengine: error: --costs does not apply (the profiler measures the costs)\n");
        return XE_EXIT_USAGE;
    }
    if (io.budget) { /* accepted and ignored before 2026-12-05 */
        fprintf(stderr, "xengine: error: --budget does not apply (the profiler times each operator alone; budgets "
                        "are for solve and run)\n");
        return XE_EXIT_USAGE;
    }
    int code = xe_cli_check_model(io.graph, "profile");
    if (!code && threads) code = xe_cli_check_threads(threads);
    if (!code) code = xe_cli_check_output_inst(out, &io);
    if (code) return code;
    xe_cli_model m;
    if ((code = xe_cli_model_load(&io, threads, &m))) return code;
    memcpy(po.threads, m.threads, sizeof po.threads);
    xe_err err = {{0}};
    /* the profiler holds every tensor of the step at once, outside any pool, beside the
     * parameters, their gradients and the data, and two copy buffers: refused at once
     * where that passes 90% of the memory, as `run` does (it allocated until the kernel
     * or an allocation failed before 2026-12-05: ResNet-18 at batch 120 under a 3.5-GB
     * limit, 8.5 s and 3.2 GB first) */
    double all = 0, largest = 0;
    for (int v = 0; v < m.inst->g->n; v++) {
        all += (double)m.inst->g->nodes[v].mem;
        if ((double)m.inst->g->nodes[v].mem > largest) largest = (double)m.inst->g->nodes[v].mem;
    }
    double need = xe_cli_net_data_bytes(m.net) + all + 2 * largest, phys = xe_plan_physical_bytes();
    if (phys > 0 && need > 0.9 * phys) {
        char b1[32], b2[32];
        fprintf(stderr, "xengine: error: %s: profiling it needs about %s (every tensor of the step at once, the "
                        "parameters, their gradients and the data), more than 90%% of this machine's memory, %s; "
                        "profile a smaller --batch\n",
                io.graph, xe_io_bytes((int64_t)need, b1, sizeof b1), xe_io_bytes((int64_t)phys, b2, sizeof b2));
        xe_cli_model_free(&m);
        return XE_EXIT_INTERNAL;
    }
    int rc = xe_profile_run(m.net, &m.map, m.inst, &po, &err);
    code = xe_cli_exit_code(rc);
    if (rc && strncmp(err.msg, io.graph, strlen(io.graph)) != 0) { /* the profiler's errors name the net, not the file */
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        xe_err_set(&err, rc, "%s: %s", io.graph, msg);
    }
    if (!rc && (rc = xe_io_write_costs(out, m.inst, xe_cli_net_batch(m.net), &err))) code = xe_cli_write_exit_code(rc);
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        xe_cli_model_free(&m);
        return code;
    }
    /* summary: per device the sum of forward (and loss) and backward medians */
    const xe_instance *in = m.inst;
    printf("%s: %d nodes, median of %d runs after %d warm-up runs\n", io.graph, in->g->n, po.runs, po.warmup);
    xe_cli_gpu_on_cpu_note(in, "measured");
    printf("%-8s %7s %12s %12s %12s\n", "device", "threads", "forward_s", "backward_s", "step_s");
    for (int d = 0; d < in->ndev; d++) {
        double f = 0, b = 0;
        for (int v = 0; v < in->g->n; v++) {
            if (in->g->nodes[v].backward) b += xe_cost(in, v, d);
            else f += xe_cost(in, v, d);
        }
        char th[16];
        printf("%-8s %7s %12.4f %12.4f %12.4f\n", in->dev[d].name, xe_cli_threads_str(m.threads[d], th, sizeof th),
               f, b, f + b);
    }
    for (int d = 0; d < in->ndev; d++)
        for (int e = 0; e < in->ndev; e++) {
            if (d == e) continue;
            double c = 0;
            int64_t bytes = 0;
            for (int v = 0; v < in->g->n; v++) {
                c += xe_copy_cost(in, v, d, e);
                bytes += in->g->nodes[v].mem;
            }
            printf("copies %s->%s: every tensor once %.4f s (%.2f GB/s)\n", in->dev[d].name, in->dev[e].name, c,
                   c > 0 ? (double)bytes / c / 1e9 : 0.0);
        }
    printf("wrote %s\n", out);
    xe_cli_model_free(&m);
    return XE_EXIT_OK;
}
