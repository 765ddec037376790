/* xengine simulate — replays any schedule file through the independent simulator. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "xengine/io.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine simulate GRAPH SCHEDULE.json [--devices D] [--budget B] [--costs F]\n"
            "                        [--batch N] [--inference] [--json]\n"
            "\n"
            "Replays every event of SCHEDULE.json on the instance made from GRAPH and the same\n"
            "device options as 'xengine solve' (give the same ones, and for an ONNX model the\n"
            "same --batch and --inference), checks each precondition\n"
            "and each device's memory at every event, and prints the summary table. --json\n"
            "prints instead one JSON object on one line of stdout (status, exit_code,\n"
            "total_time_s, makespan_s, counts, and per device name, budget_bytes, peak_bytes,\n"
            "use, compute_time_s, ...); errors stay on stderr.\n"
            "\n"
            "example:\n"
            "  xengine simulate ../shared/graphs/checkmate_vgg16_b256_train.json vgg16.json \\\n"
            "      --devices gpu+cpu --budget 70%%\n"
            "\n"
            "exit codes: 0 valid, 1 usage, 2 bad input or invalid schedule\n");
}

/* A usage error (its message already on stderr): with --json the JSON object still
 * comes, status "usage". Returns the exit code. */
static int usage_exit(int json, const char *graph, const char *schedule)
{
    return xe_cli_fail_json(json, "simulate", XE_EXIT_USAGE, graph, schedule);
}

int xe_cli_simulate(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    const char *path = NULL;
    int json = xe_cli_has_arg(argc, argv, "--json"); /* usage errors print the JSON object too (README) */
    for (int i = 1; i < argc; i++) {
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return usage_exit(json, io.graph, path);
        if (c) continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            continue; /* seen above */
        } else if (argv[i][0] != '-' && !io.graph) {
            io.graph = argv[i];
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            xe_cli_bad_arg(argv[i]);
            return usage_exit(json, io.graph, path);
        }
    }
    if (!io.graph || !path) {
        fprintf(stderr, "xengine: error: need GRAPH and SCHEDULE.json (try --help)\n");
        return usage_exit(json, io.graph, path);
    }
    xe_instance *in = NULL;
    char bbuf[32];
    int64_t stated = 0;
    int taken = xe_cli_batch_from_schedule(&io, path, bbuf, sizeof bbuf, &stated);
    int code = taken < 0 ? XE_EXIT_INPUT : xe_cli_load_instance(&io, &in);
    xe_cli_json js = {.command = "simulate", .exit_code = code, .graph = io.graph, .schedule = path};
    if (code) return json ? (xe_cli_print_json(stdout, &js), code) : code;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err err = {{0}};
    xe_sim_result r;
    xe_schedule_claims c;
    int rc = xe_io_read_schedule_claims(path, in, &s, &c, &err);
    int read_ok = rc == XE_OK;
    if (rc == XE_OK) {
        rc = xe_sim_run(in, &s, &r, &err);
        if (rc) xe_cli_invalid_schedule(path, in, &c, err.msg);
    } else {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
    }
    if (json) {
        js.exit_code = rc ? XE_EXIT_INPUT : XE_EXIT_OK;
        js.status = rc == XE_OK ? "valid" : read_ok ? "invalid schedule" : "bad input";
        js.in = rc == XE_OK ? in : NULL;
        js.sim = rc == XE_OK ? &r : NULL;
        js.events = s.len;
        if (xe_cli_print_json(stdout, &js) != XE_EXIT_OK) rc = XE_EINTERNAL;
    } else if (rc == XE_OK) {
        printf("xengine simulate: %s: %d events, valid\n", path, s.len);
        xe_cli_claims_notes(&io, in, &c, &r, taken, stated);
        xe_cli_print_summary(in, &r);
    }
    xe_schedule_clear(&s);
    xe_instance_free(in);
    return rc == XE_EINTERNAL ? XE_EXIT_INTERNAL : rc ? XE_EXIT_INPUT : XE_EXIT_OK;
}
