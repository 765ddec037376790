/* xengine CLI — instance options, loading, error mapping and the summary table. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "xengine/cost.h"
#include "xengine/io.h"
#include "xengine/onnx.h"

int xe_cli_decimal(const char *v, double *x)
{
    char *end;
    if (!*v) return 0;
    for (const char *c = v; *c; c++) /* decimal only: strtod also reads "0x10", "inf", " 5" */
        if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c)) return 0;
    *x = strtod(v, &end);
    return !*end && end != v && isfinite(*x);
}

/* --batch: a whole number from 1 to 1e9 into *b; XE_EINVAL with the message otherwise. */
static int parse_batch(const char *v, int64_t *b, xe_err *err)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end || end == v || x < 1 || x > 1000000000)
        return xe_err_set(err, XE_EINVAL, "--batch: '%s' is not a whole number from 1 to 1000000000 (digits only)", v);
    *b = x;
    return XE_OK;
}

/* The long options that take a value, in every command (to keep in step with their
 * parsers; a flag such as --json stays whole, and is refused as an unknown option with
 * "=..." attached). */
static const char *const value_opts[] = {"--batch",  "--batch-limit", "--budget", "--costs",  "--costs-out",
                                         "--csv",    "--devices",     "--format", "--from",   "--gap",
                                         "--method", "--out-dir",     "--output", "--plot",   "--repeat",
                                         "--runs",   "--seed",        "--step",   "--threads", "--time-limit",
                                         "--to",     "--warmup"};

int xe_cli_takes_value(const char *arg, size_t len)
{
    if (len == 2 && !strncmp(arg, "-o", 2)) return 1;
    for (size_t k = 0; k < sizeof value_opts / sizeof *value_opts; k++)
        if (strlen(value_opts[k]) == len && !strncmp(arg, value_opts[k], len)) return 1;
    return 0;
}

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
        fprintf(stderr, "xengine: error: %s needs a value\n", a);
        return -1;
    }
    *slot = argv[++*i];
    /* values given on the command line are usage errors (exit 1), checked here */
    xe_err err = {{0}};
    if (slot == &o->budget) {
        int64_t bytes = 0;
        double frac = 0;
        if (xe_io_parse_budget("--budget", o->budget, &bytes, &frac, &err)) {
            fprintf(stderr, "xengine: error: %s\n", err.msg);
            return -1;
        }
    } else if (slot == &o->batch) {
        int64_t b;
        if (parse_batch(o->batch, &b, &err)) {
            fprintf(stderr, "xengine: error: %s\n", err.msg);
            return -1;
        }
    }
    return 1;
}

int xe_cli_bad_arg(const char *a)
{
    if (a[0] == '-') fprintf(stderr, "xengine: error: unknown option '%s' (try --help)\n", a);
    else fprintf(stderr, "xengine: error: unexpected argument '%s'\n", a);
    return XE_EXIT_USAGE;
}

int xe_cli_whole(const char *opt, const char *v, long lo, long hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || end == v || x < lo || x > hi) {
        fprintf(stderr, "xengine: error: %s must be a whole number from %ld to %ld\n", opt, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int xe_cli_seed(const char *v, unsigned long long *out)
{
    char *end;
    errno = 0;
    /* digits only: strtoull takes "-1" (as 2^64 - 1) and leading blanks (accepted
     * before 2026-12-05) */
    *out = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
    if (!(v[0] >= '0' && v[0] <= '9') || *end || errno == ERANGE) {
        fprintf(stderr, "xengine: error: --seed: '%s' is not a whole number from 0 to 18446744073709551615\n", v);
        return -1;
    }
    return 0;
}

int xe_cli_check_threads(const char *s)
{
    const char *p = s;
    for (;;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 4096 || (*end && *end != ',')) {
            fprintf(stderr, "xengine: error: --threads: '%s' is not a list of whole numbers from 1 to 4096 (one per "
                            "device, comma-separated)\n", s);
            return XE_EXIT_USAGE;
        }
        if (!*end) return XE_EXIT_OK;
        p = end + 1;
    }
}

int xe_cli_check_model(const char *path, const char *command)
{
    if (access(path, R_OK) == 0 && !xe_cli_is_onnx(path)) {
        fprintf(stderr, "xengine: error: %s: %s needs an ONNX model (.onnx); a JSON graph has no operators to run\n",
                path, command);
        return XE_EXIT_USAGE;
    }
    return XE_EXIT_OK;
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

int xe_cli_write_exit_code(int status) { return status == XE_EIO ? XE_EXIT_INTERNAL : xe_cli_exit_code(status); }

static int is_preset(const char *s)
{
    return !strcmp(s, "gpu") || !strcmp(s, "cpu") || !strcmp(s, "gpu+cpu");
}

/* JSON starts with '{' or a blank, an ONNX ModelProto with field 1 (ir_version). */
/* 1 when path is a regular file: one that can be read twice (a pipe, /dev/stdin or
 * <(...), loses what a first look reads). */
static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int xe_cli_is_onnx(const char *path)
{
    size_t n = strlen(path);
    if (n >= 5 && strcasecmp(path + n - 5, ".onnx") == 0) return 1;
    /* the first byte of a regular file only: a pipe would lose it, and its JSON was then
     * read from the second byte on ("'[' or '{' expected") */
    if (!is_regular(path)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c = fgetc(f);
    fclose(f);
    return c == 0x08;
}

int64_t xe_cli_net_batch(const xe_net *net)
{
    for (int i = 0; i < net->nt; i++)
        if (net->t[i].role == XE_T_INPUT && net->t[i].rank > 0) return net->t[i].dim[0];
    return 0;
}

void xe_cli_gpu_on_cpu_note(const xe_instance *in, const char *what)
{
    for (int d = 0; d < in->ndev; d++)
        if (in->dev[d].kind == XE_DEV_GPU) {
            printf("note: device '%s' (kind gpu) is %s on this machine's CPU, as every device: the executor has "
                   "no GPU backend yet (docs/executor.md)\n", in->dev[d].name, what);
            return;
        }
}

double xe_cli_net_data_bytes(const xe_net *net)
{
    double data = 0;
    for (int t = 0; t < net->nt; t++) {
        double b = (double)xe_tensor_bytes(&net->t[t]);
        if (net->t[t].role == XE_T_PARAM) data += 2 * b;
        else if (net->t[t].role == XE_T_INPUT || net->t[t].role == XE_T_LABEL) data += b;
    }
    return data;
}

int xe_cli_batch_from_schedule(xe_cli_inst_opts *o, const char *schedule, char *buf, size_t cap, int64_t *stated)
{
    *stated = 0;
    if (!xe_cli_is_onnx(o->graph)) return 0;
    if (!is_regular(schedule)) return 0; /* a pipe: its batch is not known (give --batch) */
    xe_err err = {{0}};
    int inference = -1;
    if (xe_io_schedule_model(schedule, stated, &inference, &err)) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        return -1;
    }
    /* the graph the file was planned for: its inference graph is taken from the file (as
     * the batch); a training schedule with --inference is refused here, where the events
     * would only fail to match the other graph's nodes (before 2026-12-05: "node 68 does
     * not exist", with no word of --inference) */
    if (inference == 0 && o->inference) {
        fprintf(stderr, "xengine: error: %s: planned for the training graph of %s; drop --inference\n", schedule,
                o->graph);
        return -1;
    }
    if (inference == 1 && !o->inference) o->inference = 2; /* 2: taken from the file (a note says so) */
    if (o->batch || *stated <= 0) return 0;
    snprintf(buf, cap, "%lld", (long long)*stated);
    o->batch = buf;
    return 1;
}

void xe_cli_batch_note(const xe_cli_inst_opts *o, int taken, int64_t stated)
{
    if (o->inference == 2) printf("note: the inference graph, the one the schedule file was planned for\n");
    if (stated <= 0) return;
    if (taken) printf("note: batch %lld, the one the schedule file was planned for (--batch overrides)\n", (long long)stated);
    else if (o->batch && atoll(o->batch) != stated)
        printf("note: the schedule file was planned for batch %lld; it was checked at batch %s (--batch)\n",
               (long long)stated, o->batch);
}

void xe_cli_invalid_schedule(const char *path, const xe_instance *in, const xe_schedule_claims *c, const char *why)
{
    char hint[160] = "";
    for (int d = 0; d < in->ndev; d++)
        if (c->budget[d] >= 0 && c->budget[d] != in->dev[d].budget) {
            snprintf(hint, sizeof hint,
                     " (the file states a budget of %lld B for %s, checked against %lld B: --devices/--budget)",
                     (long long)c->budget[d], in->dev[d].name, (long long)in->dev[d].budget);
            break;
        }
    fprintf(stderr, "xengine: error: %s: invalid schedule: %s%s\n", path, why, hint);
}

void xe_cli_claims_notes(const xe_cli_inst_opts *o, const xe_instance *in, const xe_schedule_claims *c,
                         const xe_sim_result *r, int taken, int64_t stated)
{
    xe_cli_batch_note(o, taken, stated);
    for (int d = 0; d < in->ndev; d++)
        if (c->budget[d] >= 0 && c->budget[d] != in->dev[d].budget)
            printf("note: the file states a budget of %lld B for %s; it was checked against %lld B "
                   "(--devices/--budget)\n",
                   (long long)c->budget[d], in->dev[d].name, (long long)in->dev[d].budget);
    if (c->graph[0] && strcmp(c->graph, in->g->name))
        printf("note: the file was written for graph '%s'; it was checked against '%s' (%s)\n", c->graph,
               in->g->name, o->graph);
    if (r && isfinite(c->total_time) && fabs(c->total_time - r->total_time) > 1e-6 * fmax(1e-9, r->total_time))
        printf("note: the file's summary states a step of %.9g s; the simulator measures %.9g s\n", c->total_time,
               r->total_time);
    if (r) xe_cli_peak_note(o, in, c, r, stated);
}

void xe_cli_peak_note(const xe_cli_inst_opts *o, const xe_instance *in, const xe_schedule_claims *c,
                      const xe_sim_result *r, int64_t stated)
{
    for (int d = 0; d < in->ndev && d < r->ndev; d++) {
        if (c->peak[d] < 0 || c->peak[d] == r->dev[d].peak) continue;
        char b1[32], b2[32];
        int onnx = xe_cli_is_onnx(o->graph);
        printf("note: the file's summary states a peak of %s on %s; the replay here gives %s: it was planned for "
               "other tensor sizes%s\n",
               xe_io_bytes(c->peak[d], b1, sizeof b1), in->dev[d].name, xe_io_bytes(r->dev[d].peak, b2, sizeof b2),
               onnx && stated <= 0 ? " (it states no batch, as a schedule planned from an exported graph file: give "
                                     "the batch it was planned for with --batch)"
               : onnx              ? " (another batch?)"
                                   : "");
        return;
    }
}

/* ONNX model -> net -> training or inference graph. */
static int load_net(const xe_cli_inst_opts *o, xe_net **net, xe_graph **g, xe_train_map *map, xe_err *err)
{
    int64_t batch = 0;
    if (o->batch && parse_batch(o->batch, &batch, err)) return XE_EINVAL; /* xe_cli_inst_arg refuses it first */
    int rc = xe_onnx_read(o->graph, batch, net, err);
    if (rc == XE_EINVAL && batch > 0) { /* a shape that fails only at this batch: say so */
        xe_net *own = NULL;
        xe_err e2 = {{0}};
        if (xe_onnx_read(o->graph, 0, &own, &e2) == XE_OK) {
            int64_t fb = xe_cli_net_batch(own);
            size_t len = strlen(err->msg);
            if (fb > 0 && fb != batch)
                snprintf(err->msg + len, sizeof err->msg - len,
                         " (at --batch %lld; the file's own batch %lld works: a shape fixed in the file does not "
                         "follow --batch)", (long long)batch, (long long)fb);
            xe_net_free(own);
        }
    }
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
    return xe_cli_load_instance_net(o, "gpu+cpu", NULL, NULL, NULL, out);
}

int xe_cli_load_instance_net(const xe_cli_inst_opts *o, const char *dev_default, xe_net **net_out,
                             xe_train_map *map_out, xe_recipe *recipe_out, xe_instance **out)
{
    xe_err err = {{0}};
    xe_graph *g = NULL;
    xe_recipe r;
    xe_net *net = NULL;
    xe_train_map map = {0};
    *out = NULL;
    int onnx = xe_cli_is_onnx(o->graph), rc, usage = 0;
    if (!onnx && (o->batch || o->inference)) {
        fprintf(stderr, "xengine: error: %s: --batch and --inference apply to ONNX models only\n", o->graph);
        return XE_EXIT_USAGE;
    }
    rc = onnx ? load_net(o, &net, &g, &map, &err) : xe_io_read_graph(o->graph, &g, &err);
    if (rc) goto fail;
    const char *dev = o->devices ? o->devices : dev_default;
    if (is_preset(dev)) {
        rc = onnx ? xe_cost_recipe_preset(dev, 1.0, &r, &err) : xe_recipe_preset(dev, 1.0, &r, &err);
    } else if (access(dev, F_OK) != 0) {
        rc = xe_err_set(&err, XE_EIO, "--devices %s: no such file (--devices takes a devices file or a preset: "
                                      "gpu, cpu, gpu+cpu)", dev);
    } else {
        rc = xe_io_read_devices(dev, &r, &err);
    }
    if (rc) goto fail;
    if (recipe_out) *recipe_out = r; /* the devices as given, before --budget */
    if (o->budget) {
        int64_t bytes = 0;
        double frac = 0;
        rc = xe_io_parse_budget("--budget", o->budget, &bytes, &frac, &err);
        if (rc) {
            usage = 1;
            goto fail;
        }
        r.budget_bytes[0] = bytes;
        r.budget_frac[0] = frac;
    }
    rc = onnx ? xe_cost_instance(net, g, &map, &r, out, &err) : xe_instance_from_recipe(g, &r, out, &err);
    if (rc) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        xe_err_set(&err, rc, "%s%s: %s", o->budget ? "--budget " : "", o->budget ? o->budget : dev, msg);
        usage = o->budget != NULL && rc == XE_EINVAL; /* the value on the command line */
        goto fail;
    }
    g = NULL; /* owned by the instance now */
    /* a costs file of more devices than these (profiled for gpu+cpu, planned for the GPU
     * alone) is read for the devices it shares with them, with a warning */
    xe_costs_read cr = {.skip_unknown_devices = 1};
    if (o->costs && (rc = xe_io_read_costs_ex(o->costs, *out, &cr, &err))) goto fail;
    if (cr.nskipped)
        fprintf(stderr, "xengine: warning: %s: the costs for device%s %s skipped: not among the devices of --devices %s\n", o->costs,
                cr.nskipped > 1 ? "s" : "", cr.skipped, dev);
    /* a model's file that times some devices and not others leaves those on the
     * estimates, which the planner then compares with measurements: say so (silent
     * before 2026-12-05: a profile of cpu1 read for cpu1+cpu2 put every node on cpu2's
     * roofline estimate, about 20x below cpu1's measured times) */
    int timed = 0; /* devices the file gives compute costs for */
    for (int d = 0; d < (*out)->ndev; d++) timed += cr.ncompute[d] > 0;
    for (int d = 0; o->costs && onnx && timed && d < (*out)->ndev; d++) {
        if (!cr.ncompute[d])
            fprintf(stderr, "xengine: warning: %s: no compute cost for device %s; its costs are the roofline "
                            "model's estimates, beside the file's for the other device%s\n",
                    o->costs, (*out)->dev[d].name, (*out)->ndev > 2 ? "s" : "");
    }
    if (o->costs && onnx) { /* costs measured at another batch are used as they are: say so */
        int64_t mb = xe_cli_net_batch(net), cb = cr.batch;
        if (cb > 0 && mb > 0 && cb != mb)
            fprintf(stderr, "xengine: warning: %s: the costs were measured at batch %lld; they are used as they "
                            "are for batch %lld\n",
                    o->costs, (long long)cb, (long long)mb);
    }
    if ((rc = xe_instance_validate(*out, &err))) {
        /* name the file the bad costs came from: the costs file, else the graph's costs as
         * a devices file scales them (its time_unit, speeds and links) */
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        if (o->costs || is_preset(dev))
            xe_err_set(&err, rc, "%s: %s", o->costs ? o->costs : o->graph, msg);
        else
            xe_err_set(&err, rc, "%s: %s (the graph's costs scaled by the devices file %s: its time_unit, speed "
                                 "or link)", o->graph, msg, dev);
        goto fail;
    }
    if (net_out && map_out) { /* handed over */
        *net_out = net;
        *map_out = map;
        return XE_OK;
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
    return usage ? XE_EXIT_USAGE : xe_cli_exit_code(rc);
}

/* "DIR/NAME" with DIR resolved (realpath) into buf; 0 when DIR cannot be resolved. */
static int canonical(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    char dir[4096], real[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!realpath(dir, real)) return 0;
    snprintf(buf, cap, "%s/%s", real, slash ? slash + 1 : path);
    return 1;
}

int xe_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[4096 + 256], cb[4096 + 256];
    return canonical(a, ca, sizeof ca) && canonical(b, cb, sizeof cb) && !strcmp(ca, cb);
}

/* Writability, "-", and a probe file in the directory (access() says yes to root
 * on /proc, where nothing can be created). */
static int check_writable(const char *out)
{
    xe_err err = {{0}};
    if (!strcmp(out, "-")) {
        fprintf(stderr, "xengine: error: '-': output to stdout is not supported; give a file path\n");
        return XE_EXIT_USAGE;
    }
    if (!*out) {
        fprintf(stderr, "xengine: error: an output path is empty (-o, --csv, --plot, --out-dir or --costs-out "
                        "was given \"\"); give a file path\n");
        return XE_EXIT_USAGE;
    }
    if (xe_io_check_writable(out, &err)) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        return XE_EXIT_USAGE;
    }
    /* the probe below has a short name where out's is long: out's own must fit too */
    const char *slash = strrchr(out, '/');
    if (strlen(slash ? slash + 1 : out) > 255) {
        fprintf(stderr, "xengine: error: %s: cannot create a file there: %s\n", out, strerror(ENAMETOOLONG));
        return XE_EXIT_USAGE;
    }
    char probe[4096 + 64];
    errno = ENAMETOOLONG; /* what a probe name that does not fit in probe[] means */
    int fd = xe_io_temp_path(out, "probe", probe, sizeof probe) ? -1 : mkstemp(probe);
    if (fd < 0) {
        fprintf(stderr, "xengine: error: %s: cannot create a file there: %s\n", out, strerror(errno));
        return XE_EXIT_USAGE;
    }
    close(fd);
    unlink(probe);
    return XE_EXIT_OK;
}

static int check_not(const char *out, const char *input, const char *what)
{
    if (input && xe_cli_same_file(out, input)) {
        fprintf(stderr, "xengine: error: %s: is the %s; refusing to overwrite it\n", out, what);
        return XE_EXIT_USAGE;
    }
    return XE_EXIT_OK;
}

int xe_cli_check_output(const char *out, const char *input)
{
    int code = check_writable(out);
    return code ? code : check_not(out, input, "input graph");
}

int xe_cli_check_output_inst(const char *out, const xe_cli_inst_opts *o)
{
    int code = xe_cli_check_output(out, o->graph);
    if (!code && o->devices && !is_preset(o->devices)) code = check_not(out, o->devices, "devices file");
    if (!code) code = check_not(out, o->costs, "costs file");
    return code;
}

int xe_cli_check_outputs_differ(const char *a, const char *a_opt, const char *b, const char *b_opt)
{
    if (a && b && xe_cli_same_file(a, b)) {
        fprintf(stderr, "xengine: error: %s: given to both %s and %s; give two different files\n", b, a_opt, b_opt);
        return XE_EXIT_USAGE;
    }
    return XE_EXIT_OK;
}

void xe_cli_print_summary(const xe_instance *in, const xe_sim_result *r)
{
    char b1[32], b2[32];
    printf("%-8s %-4s %12s %12s %6s %11s %11s %9s %11s %7s\n", "device", "kind", "budget", "peak", "use",
           "compute_s", "copy_in_s", "computes", "recomputes", "copies");
    for (int d = 0; d < in->ndev; d++) {
        const xe_sim_device *s = &r->dev[d];
        /* a budget of 0 B (a graph of empty tensors): no ratio, "-" as the JSON's null */
        char use[16];
        if (in->dev[d].budget > 0) snprintf(use, sizeof use, "%5.1f%%", 100.0 * (double)s->peak / (double)in->dev[d].budget);
        else snprintf(use, sizeof use, "-");
        printf("%-8s %-4s %12s %12s %6s %11.4f %11.4f %9d %11d %7d\n", in->dev[d].name,
               in->dev[d].kind == XE_DEV_GPU ? "gpu" : "cpu", xe_io_bytes(in->dev[d].budget, b1, sizeof b1),
               xe_io_bytes(s->peak, b2, sizeof b2), use, s->compute_time, s->copy_in_time, s->computes,
               s->recomputes, s->copies_in);
    }
    printf("total: %.4f s serial (compute + copies), makespan %.4f s with devices and copies overlapped\n",
           r->total_time, r->makespan);
    printf("       %d compute%s (%d recomputation%s), %d cop%s, %d free%s\n", r->computes, r->computes == 1 ? "" : "s",
           r->recomputes, r->recomputes == 1 ? "" : "s", r->copies, r->copies == 1 ? "y" : "ies", r->frees,
           r->frees == 1 ? "" : "s");
}
