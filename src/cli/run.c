/* xengine run — executes a schedule for real on oneDNN CPU devices and prints measured
 * vs predicted time and peak per device (include/xengine/exec.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "xengine/io.h"
#include "xengine/plan.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine run MODEL.onnx SCHEDULE.json [--batch N] [--devices D] [--budget B]\n"
            "                   [--costs F] [--threads T1,T2,..] [--warmup N] [--repeat N] [--seed S]\n"
            "                   [--check-grads]\n"
            "\n"
            "Runs one training step of MODEL exactly as SCHEDULE.json says (computes,\n"
            "recomputations, copies, frees) with oneDNN on CPU devices, each device a oneDNN\n"
            "engine with its own thread count and a memory pool that refuses to go over the\n"
            "device's budget (the budgets the schedule file states, else the devices'; --budget\n"
            "sets the first device's). A schedule the simulator rejects for anything but memory\n"
            "(a node never computed, an input not resident, ...) is refused before it runs. Prints\n"
            "per device the measured time and peak next to the simulator's prediction from\n"
            "the instance's costs (give the profiled ones with --costs) and the error.\n"
            "\n"
            "  --devices D      preset or devices file as for solve (default cpu: one device with\n"
            "                   every core); every device runs on this host's CPU (oneDNN)\n"
            "  --threads T1,..  OpenMP threads per device (default: the number a device's name\n"
            "                   ends with, cpu2 -> 2; else all cores)\n"
            "  --warmup N       untimed runs of the schedule before the measured ones (default 1)\n"
            "  --repeat N       measured runs; each event counts with its median (default 3)\n"
            "  --seed S         parameters, data and dropout masks (default 1)\n"
            "  --check-grads    also run the keep-everything schedule, unbounded, each node\n"
            "                   on the device of its first compute in the schedule, and\n"
            "                   compare every parameter gradient: bit for bit, or within\n"
            "                   1e-5 relative where the schedule computes some node on two\n"
            "                   devices (their thread counts round differently)\n"
            "\n"
            "example:\n"
            "  xengine profile tests/data/onnx/resnet18.onnx --batch 2 \\\n"
            "      --devices tests/data/cpu2_devices.json -o costs.json\n"
            "  xengine solve tests/data/onnx/resnet18.onnx --batch 2 --devices tests/data/cpu2_devices.json \\\n"
            "      --budget 60%% --costs costs.json -o plan.json\n"
            "  xengine run tests/data/onnx/resnet18.onnx plan.json --batch 2 \\\n"
            "      --devices tests/data/cpu2_devices.json --costs costs.json --check-grads\n"
            "\n"
            "On a machine shared with other jobs, export OMP_WAIT_POLICY=passive (docs/executor.md).\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input or invalid schedule, 3 a pool refused an\n"
            "allocation over its budget, 5 internal error or failed gradient check\n");
}

/* max over parameters of max|a - b| / max|a|; *bitwise = 1 when every byte is equal. */
static double grad_diff(const xe_net *net, const xe_exec_data *a, const xe_exec_data *b, int *bitwise)
{
    double worst = 0;
    *bitwise = 1;
    for (int t = 0; t < net->nt; t++) {
        if (!a->grad[t]) continue;
        int64_t n = xe_tensor_numel(&net->t[t]);
        if (memcmp(a->grad[t], b->grad[t], (size_t)n * sizeof(float))) *bitwise = 0;
        double mx = 0, diff = 0;
        for (int64_t i = 0; i < n; i++) {
            mx = fmax(mx, fabs(a->grad[t][i]));
            diff = fmax(diff, fabs((double)a->grad[t][i] - b->grad[t][i]));
        }
        if (mx > 0 && diff / mx > worst) worst = diff / mx;
    }
    return worst;
}

/* The simulator's verdict on s with every budget lifted (bytes: INT64_MAX / 4), so that
 * only the event rules count (inputs resident, every node computed, ...): XE_OK, or
 * XE_EINVAL with err set. Over-budget schedules are left to the pools (exit 3). */
static int check_events(xe_instance *in, const xe_schedule *s, xe_sim_result *r, xe_err *err)
{
    int64_t saved[XE_MAX_DEV];
    for (int d = 0; d < in->ndev; d++) {
        saved[d] = in->dev[d].budget;
        in->dev[d].budget = INT64_MAX / 4;
    }
    int rc = xe_sim_run(in, s, r, err);
    for (int d = 0; d < in->ndev; d++) in->dev[d].budget = saved[d];
    return rc;
}

/* The memory guard: the bytes a run holds at once, at most (the parameters, their
 * gradients, the data input and labels of xe_exec_data, twice with the reference run of
 * --check-grads, which adds its keep-everything peak; and on every device the schedule's
 * own peak, r's, or the budget where that is less, since the pool refuses more) against 90% of
 * this machine's physical memory. XE_OK, or XE_ENOMEM with err naming the sizes (before
 * 2026-12-05 a run at --batch 1000000 filled 3-6 GB for its data before the pool refused
 * it, or ran on while memory lasted). */
static int memory_guard(const xe_net *net, const xe_instance *in, const xe_sim_result *r, int check, xe_err *err)
{
    double data = xe_cli_net_data_bytes(net), peaks = 0;
    for (int d = 0; d < in->ndev; d++) /* a pool refuses to hold more than its budget */
        peaks += (double)(r->dev[d].peak < in->dev[d].budget ? r->dev[d].peak : in->dev[d].budget);
    double need = (check ? 2 : 1) * data + peaks + (check ? (double)xe_instance_norecompute_peak(in->g) : 0);
    double phys = xe_plan_physical_bytes();
    if (phys <= 0 || need <= 0.9 * phys) return XE_OK;
    char b1[32], b2[32], b3[32], b4[32];
    return xe_err_set(err, XE_ENOMEM, "running it needs about %s (parameters, gradients and data: %s; the schedule's "
                      "peaks within the budgets: %s%s), more than 90%% of this machine's memory, %s",
                      xe_io_bytes((int64_t)need, b1, sizeof b1), xe_io_bytes((int64_t)((check ? 2 : 1) * data), b2, sizeof b2),
                      xe_io_bytes((int64_t)peaks, b3, sizeof b3), check ? "; and the --check-grads reference run's" : "",
                      xe_io_bytes((int64_t)phys, b4, sizeof b4));
}

/* " (the schedule was planned for batch S, run here at batch B)" where the two differ,
 * else "": a failing run at another batch than planned, its likely cause on the error line
 * itself (a note before it only, until 2026-12-05). */
static const char *batch_hint(int64_t stated, const char *batch, char *buf, size_t cap)
{
    long long at = batch ? atoll(batch) : 0;
    if (stated > 0 && at > 0 && at != stated)
        snprintf(buf, cap, " (the schedule was planned for batch %lld, run here at batch %lld)", (long long)stated, at);
    else buf[0] = '\0';
    return buf;
}

static void print_result(const xe_instance *in, const xe_exec_result *r)
{
    char b1[32], b2[32], b3[32];
    printf("%-8s %7s %11s %11s %11s %11s %11s %8s %9s %7s\n", "device", "threads", "budget", "peak", "pred_peak",
           "time_s", "pred_s", "error", "computes", "copies");
    for (int d = 0; d < r->ndev; d++) {
        const xe_exec_dev_result *x = &r->dev[d];
        char th[16];
        printf("%-8s %7s %11s %11s %11s %11.4f %11.4f %+7.1f%% %9d %7d\n", in->dev[d].name,
               xe_cli_threads_str(x->threads, th, sizeof th),
               xe_io_bytes(x->budget, b1, sizeof b1), xe_io_bytes(x->peak, b2, sizeof b2),
               x->pred_peak >= 0 ? xe_io_bytes(x->pred_peak, b3, sizeof b3) : "-", x->time, x->pred_time,
               100.0 * x->time_err, x->computes, x->copies_in);
    }
    printf("total: measured %.6f s, predicted %.6f s (%+.1f%%); loss %.6f\n", r->time, r->pred_time,
           r->pred_time > 0 ? 100.0 * (r->time - r->pred_time) / r->pred_time : 0.0, r->loss);
}

int xe_cli_run(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    const char *path = NULL, *threads = NULL;
    int warmup = 1, repeat = 3, check = 0;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(a, "--check-grads")) {
            check = 1;
        } else if (!strcmp(a, "--threads") || !strcmp(a, "--warmup") || !strcmp(a, "--repeat") ||
                   !strcmp(a, "--seed")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--threads")) {
                threads = v;
            } else if (!strcmp(a, "--warmup")) {
                if (xe_cli_whole(a, v, 0, 1000, &warmup)) return XE_EXIT_USAGE;
            } else if (!strcmp(a, "--repeat")) {
                if (xe_cli_whole(a, v, 1, 1000, &repeat)) return XE_EXIT_USAGE;
            } else if (xe_cli_seed(v, &seed)) {
                return XE_EXIT_USAGE;
            }
        } else if (a[0] != '-' && !io.graph) {
            io.graph = a;
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            return xe_cli_bad_arg(a);
        }
    }
    if (!io.graph || !path) {
        fprintf(stderr, "xengine: error: need MODEL.onnx and SCHEDULE.json (try --help)\n");
        return XE_EXIT_USAGE;
    }
    xe_cli_model m;
    char bbuf[32];
    int64_t stated = 0;
    int taken = xe_cli_batch_from_schedule(&io, path, bbuf, sizeof bbuf, &stated);
    int code = taken < 0 ? XE_EXIT_INPUT : xe_cli_check_model(io.graph, "run");
    if (!code && threads) code = xe_cli_check_threads(threads);
    if (!code) code = xe_cli_model_load(&io, threads, &m);
    if (code) return code;
    xe_err err = {{0}};
    xe_schedule s, ref;
    xe_schedule_init(&s);
    xe_schedule_init(&ref);
    xe_exec_data data = {0}, refdata = {0};
    xe_exec_result res;
    xe_schedule_claims claims;
    char hint[128];
    int rc = xe_io_read_schedule_claims(path, m.inst, &s, &claims, &err);
    if (rc) goto fail;
    printf("%s: %d nodes, %d events on %d device(s)\n", io.graph, m.inst->g->n, s.len, m.inst->ndev);
    xe_cli_gpu_on_cpu_note(m.inst, "run");
    xe_cli_batch_note(&io, taken, stated);
    xe_sim_result sr;
    if ((rc = check_events(m.inst, &s, &sr, &err))) {
        fprintf(stderr, "xengine: error: %s: invalid schedule: %s\n", path, err.msg);
        goto fail_printed;
    }
    /* planned for other tensor sizes (a schedule from an exported graph file states no
     * batch: before 2026-12-05 it ran at the model's own batch without a word) */
    xe_cli_peak_note(&io, m.inst, &claims, &sr, stated);
    for (int d = 0; d < m.inst->ndev; d++) {
        if (claims.budget[d] <= 0) continue;
        if (d == 0 && io.budget) { /* --budget wins over the file's */
            if (claims.budget[d] != m.inst->dev[d].budget)
                printf("note: the file states a budget of %lld B for %s; the pool uses %lld B (--budget)\n",
                       (long long)claims.budget[d], m.inst->dev[d].name, (long long)m.inst->dev[d].budget);
            continue;
        }
        if (claims.budget[d] != m.inst->dev[d].budget) /* silent before 2026-12-05 (a new user's trial) */
            printf("note: the pool of %s uses the file's budget, %lld B (--devices gives %lld B; --budget "
                   "overrides the first device's)\n",
                   m.inst->dev[d].name, (long long)claims.budget[d], (long long)m.inst->dev[d].budget);
        m.inst->dev[d].budget = claims.budget[d];
    }
    if ((rc = memory_guard(m.net, m.inst, &sr, check, &err))) {
        fprintf(stderr, "xengine: error: %s: %s\n", path, err.msg);
        goto fail_printed;
    }
    xe_exec_opts o;
    xe_exec_opts_default(&o);
    o.seed = seed;
    o.warmup = warmup;
    o.repeat = repeat;
    memcpy(o.threads, m.threads, sizeof o.threads);
    if ((rc = xe_exec_data_init(m.net, seed, &data, &err))) { /* its messages name the net: add the model's path */
        fprintf(stderr, "xengine: error: %s: %s\n", io.graph, err.msg);
        goto fail_printed;
    }
    rc = xe_exec_run(m.net, &m.map, m.inst, &s, &data, &o, &res, &err);
    if (rc && !res.sim_valid) { /* one line: the schedule, the executor's error, the simulator's reason */
        fprintf(stderr, "xengine: error: %s: %s (the simulator rejects the schedule too: %s)%s\n", path, err.msg,
                res.sim_msg, batch_hint(stated, io.batch, hint, sizeof hint));
        goto fail_printed;
    }
    if (!res.sim_valid)
        fprintf(stderr, "xengine: warning: %s: the simulator rejects the schedule: %s\n", path, res.sim_msg);
    if (rc) {
        fprintf(stderr, "xengine: error: %s: %s%s\n", path, err.msg, batch_hint(stated, io.batch, hint, sizeof hint));
        goto fail_printed;
    }
    print_result(m.inst, &res);
    if (!io.costs) /* the error column then measures the model, not this machine's own costs */
        printf("note: predicted from the roofline cost model (no --costs); 'xengine profile' measures this "
               "machine's costs\n");
    if (check) {
        /* reference: keep everything, no budget, each node computed on the device of its
         * first compute in the schedule (the same kernels and thread counts), so where the
         * schedule computes each node on one device only the gradients must agree bit for
         * bit; where it computes some node on two devices of different thread counts,
         * their roundings differ (docs/executor.md), and 1e-5 relative is asked. Until
         * 2026-12-05 the reference ran everything on one device, and two-device schedules
         * of ResNet-50 and GoogLeNet at batch 2 failed at 1.3-3.2e-5 with threads 2,1
         * although every value was right. */
        int n = m.inst->g->n, ndev_used = 0, used[XE_MAX_DEV] = {0};
        int *dev_of = malloc((size_t)(n ? n : 1) * sizeof *dev_of);
        if (!dev_of) {
            rc = xe_err_set(&err, XE_ENOMEM, "out of memory for the gradient check");
            goto fail;
        }
        int split = xe_exec_first_devices(&s, n, dev_of);
        for (int i = 0; i < s.len; i++) used[s.ev[i].dev] = 1;
        for (int d = 0; d < m.inst->ndev; d++) ndev_used += used[d];
        int64_t saved[XE_MAX_DEV];
        for (int d = 0; d < m.inst->ndev; d++) {
            saved[d] = m.inst->dev[d].budget;
            m.inst->dev[d].budget = 0; /* unbounded pools for the reference */
        }
        xe_exec_result rr;
        /* every node is computed (the executor checked the schedule) */
        if (!(rc = xe_exec_keep_all_placed(m.inst->g, dev_of, m.inst->ndev, &ref, &err)) &&
            !(rc = xe_exec_data_init(m.net, seed, &refdata, &err))) {
            o.warmup = 0;
            o.repeat = 1;
            rc = xe_exec_run(m.net, &m.map, m.inst, &ref, &refdata, &o, &rr, &err);
        }
        for (int d = 0; d < m.inst->ndev; d++) m.inst->dev[d].budget = saved[d];
        free(dev_of);
        if (rc) goto fail;
        int bitwise;
        double diff = grad_diff(m.net, &refdata, &data, &bitwise);
        int pass = split == 0 ? bitwise : diff <= 1e-5;
        char where[96];
        if (ndev_used <= 1) snprintf(where, sizeof where, "on %s", m.inst->dev[s.len ? s.ev[0].dev : 0].name);
        else snprintf(where, sizeof where, "with each node on its schedule device");
        char split_note[96] = "";
        if (split && !bitwise)
            snprintf(split_note, sizeof split_note, " (%d compute%s on a second device: within 1e-5 asked)", split,
                     split == 1 ? "" : "s");
        printf("gradient check against keep-everything %s: loss %.6f vs %.6f, largest relative difference "
               "%.3g, %s%s: %s\n",
               where, res.loss, rr.loss, diff, bitwise ? "bit for bit equal" : "not bitwise equal", split_note,
               pass ? "PASS" : "FAIL");
        if (!pass) code = XE_EXIT_INTERNAL;
    }
    xe_exec_data_clear(&data);
    xe_exec_data_clear(&refdata);
    xe_schedule_clear(&s);
    xe_schedule_clear(&ref);
    xe_cli_model_free(&m);
    return code;
fail:
    fprintf(stderr, "xengine: error: %s\n", err.msg);
fail_printed:
    xe_exec_data_clear(&data);
    xe_exec_data_clear(&refdata);
    xe_schedule_clear(&s);
    xe_schedule_clear(&ref);
    xe_cli_model_free(&m);
    return xe_cli_exit_code(rc);
}
