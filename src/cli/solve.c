/* xengine solve — heuristic start, MILP, independent validation, atomic write. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "xengine/io.h"
#include "xengine/milp.h"
#include "xengine/solvers.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine solve GRAPH [options] -o SCHEDULE.json\n"
            "\n"
            "Plans one training step of GRAPH (xengine, Checkmate or Moccasin JSON) under the\n"
            "device budgets: the greedy heuristic gives a first schedule, which starts the\n"
            "exact MILP (CBC). The best schedule is replayed by the independent simulator\n"
            "before it is written (atomically: temporary file, then rename).\n"
            "\n"
            "options:\n"
            "  --devices D      preset gpu | cpu | gpu+cpu (default gpu+cpu), or a devices file\n"
            "  --budget B       budget of the first device: \"80%%\" of the no-recomputation\n"
            "                   peak, bytes, or \"12GiB\"/\"500MB\" (default: the preset's 100%%)\n"
            "  --costs FILE     per-node, per-device costs overriding the recipe\n"
            "  --time-limit S   MILP time limit in seconds (default 60)\n"
            "  --gap G          stop at this relative gap (default 1e-4)\n"
            "  --threads N      CBC threads (default 1)\n"
            "  --no-start       do not hand the heuristic schedule to the MILP\n"
            "  --heuristic-only skip the MILP\n"
            "  -o, --output F   write the schedule here (required)\n"
            "  -q, --quiet      no progress lines on stderr\n"
            "\n"
            "examples:\n"
            "  xengine solve ../shared/graphs/checkmate_vgg16_b256_train.json --devices gpu \\\n"
            "      --budget 80%% -o vgg16.json\n"
            "  xengine solve graph.json --devices devices.json --time-limit 30 -o plan.json\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 3 infeasible budget, proven (the message gives\n"
            "the smallest budget known to work), 4 no schedule found and none proven impossible\n"
            "(time limit, or --heuristic-only), 5 internal error\n");
}

/* A JSON number, or null where it is not finite (no bound known). */
static const char *json_num(double x, char *buf, size_t cap)
{
    if (isfinite(x)) snprintf(buf, cap, "%.17g", x);
    else snprintf(buf, cap, "null");
    return buf;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "12.25 GiB (13153337344 B)": rounded for people, exact for the next attempt. */
static const char *exact(int64_t b, char *buf, size_t cap)
{
    char h[32];
    snprintf(buf, cap, "%s (%lld B)", xe_cli_bytes(b, h, sizeof h), (long long)b);
    return buf;
}

/* Explains an infeasible budget with the smallest budget the tool can vouch for. */
static void report_infeasible(const xe_instance *in, const char *graph, const char *why)
{
    char b1[64], b2[64], b3[64];
    int64_t lo = 0, hi = 0;
    xe_err err = {{0}};
    int rc = xe_budget_range(in, 0, &lo, &hi, &err);
    fprintf(stderr, "xengine: error: %s: budget %s on %s is infeasible (%s); every schedule needs at least %s there",
            graph, exact(in->dev[0].budget, b1, sizeof b1), in->dev[0].name, why, exact(lo, b2, sizeof b2));
    if (rc == XE_OK && hi > 0) fprintf(stderr, "; the greedy heuristic finds a schedule from %s", exact(hi, b3, sizeof b3));
    fprintf(stderr, "\n");
}

int xe_cli_solve(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    xe_milp_opts mo;
    xe_milp_opts_default(&mo);
    mo.progress = 1;
    mo.isolate = 1; /* hold CBC to the wall-clock limit */
    const char *out = NULL;
    int no_start = 0, heur_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(a, "--no-start")) {
            no_start = 1;
        } else if (!strcmp(a, "--heuristic-only")) {
            heur_only = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            mo.progress = 0;
        } else if (!strcmp(a, "--time-limit") || !strcmp(a, "--gap") || !strcmp(a, "--threads") ||
                   !strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine solve: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            const char *v = argv[++i];
            char *end;
            if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
                out = v;
                continue;
            }
            double x = strtod(v, &end);
            if (*end || end == v || !isfinite(x)) {
                fprintf(stderr, "xengine solve: %s: '%s' is not a number\n", a, v);
                return XE_EXIT_USAGE;
            }
            if (!strcmp(a, "--time-limit")) mo.time_limit = x;
            else if (!strcmp(a, "--gap")) mo.rel_gap = x;
            else if (x != floor(x) || x < 1 || x > 64) {
                fprintf(stderr, "xengine solve: --threads: '%s' is not a whole number from 1 to 64\n", v);
                return XE_EXIT_USAGE;
            } else mo.threads = (int)x;
        } else if (a[0] == '-') {
            fprintf(stderr, "xengine solve: unknown option '%s' (try --help)\n", a);
            return XE_EXIT_USAGE;
        } else if (!io.graph) {
            io.graph = a;
        } else {
            fprintf(stderr, "xengine solve: unexpected argument '%s'\n", a);
            return XE_EXIT_USAGE;
        }
    }
    if (!io.graph || !out) {
        fprintf(stderr, "xengine solve: need GRAPH and -o SCHEDULE.json (try --help)\n");
        return XE_EXIT_USAGE;
    }
    if (!(mo.time_limit > 0) || !(mo.rel_gap >= 0) || mo.threads < 1) {
        fprintf(stderr, "xengine solve: --time-limit must be > 0, --gap >= 0, --threads >= 1\n");
        return XE_EXIT_USAGE;
    }
    int code = xe_cli_check_output(out, io.graph);
    if (code) return code;
    xe_instance *in = NULL;
    code = xe_cli_load_instance(&io, &in);
    if (code) return code;

    xe_err err = {{0}};
    xe_stages heur = {0}, *best = NULL;
    xe_milp_result mr;
    memset(&mr, 0, sizeof mr);
    xe_schedule sched;
    xe_schedule_init(&sched);
    const char *best_name = "none";

    /* 1. cheap infeasibility proof: a node no device can hold with its inputs */
    int64_t lo = 0;
    int rc = xe_budget_range(in, 0, &lo, NULL, &err);
    if (rc == XE_OK && in->dev[0].budget < lo) {
        report_infeasible(in, io.graph, "a node does not fit with its inputs");
        code = XE_EXIT_INFEASIBLE;
        goto done;
    }

    printf("xengine solve: %s: %d nodes, %d edges, %d device%s\n", io.graph, in->g->n, in->g->m, in->ndev,
           in->ndev > 1 ? "s" : "");
    /* 2. heuristic */
    double t0 = now_s();
    int hrc = xe_heur_greedy(in, &heur, &err);
    double t_heur = now_s() - t0;
    double heur_cost = hrc == XE_OK ? xe_stages_cost(in, &heur) : INFINITY;
    if (hrc == XE_OK) {
        best = &heur;
        best_name = "greedy";
    } else if (hrc != XE_EINFEASIBLE) {
        fprintf(stderr, "xengine: error: %s: heuristic failed: %s\n", io.graph, err.msg);
        code = xe_cli_exit_code(hrc);
        goto done;
    }
    printf("%-10s %14s %14s %9s %9s  %s\n", "method", "objective_s", "bound_s", "gap", "time_s", "status");
    if (hrc == XE_OK)
        printf("%-10s %14.6f %14s %9s %9.3f  %s\n", "greedy", heur_cost, "-", "-", t_heur, "valid");
    else
        printf("%-10s %14s %14s %9s %9.3f  %s\n", "greedy", "-", "-", "-", t_heur, "no schedule found");
    fflush(stdout);

    /* 3. MILP */
    if (!heur_only) {
        mo.start = (hrc == XE_OK && !no_start) ? &heur : NULL;
        rc = xe_milp_solve(in, &mo, &mr, &err);
        if (rc == XE_ESOLVER && best) {
            fprintf(stderr, "xengine: warning: %s: %s; keeping the greedy schedule\n", io.graph, err.msg);
            mr.status = XE_MILP_NO_SOLUTION;
            rc = XE_OK;
        }
        if (rc) {
            fprintf(stderr, "xengine: error: %s: %s\n", io.graph, err.msg);
            code = xe_cli_exit_code(rc);
            goto done;
        }
        if (mr.status == XE_MILP_OPTIMAL || mr.status == XE_MILP_FEASIBLE)
            printf("%-10s %14.6f %14.6f %8.3f%% %9.3f  %s\n", "milp", mr.objective, mr.bound, 100.0 * mr.gap,
                   mr.solve_time, xe_milp_status_str(mr.status));
        else
            printf("%-10s %14s %14.6g %9s %9.3f  %s\n", "milp", "-", mr.bound, "-", mr.solve_time,
                   mr.killed ? "stopped at the time limit (CBC overran it)" : xe_milp_status_str(mr.status));
        if (mr.killed)
            printf("           (CBC was still in preprocessing or the root LP; the model is too large for the limit)\n");
        else
            printf("           (model: %d variables, %d integer, %d rows)\n", mr.nvars, mr.nints, mr.nrows);
        if (mr.sol.R && mr.objective <= heur_cost) {
            best = &mr.sol;
            best_name = "milp";
        }
        if (mr.status == XE_MILP_INFEASIBLE) {
            report_infeasible(in, io.graph, "proven by the MILP over stage schedules");
            code = XE_EXIT_INFEASIBLE;
            goto done;
        }
    }
    if (!best) {
        if (!heur_only && mr.status == XE_MILP_NO_SOLUTION) {
            fprintf(stderr, "xengine: error: %s: no schedule found within the time limit of %g s (the greedy "
                            "heuristic found none either); raise --time-limit or the budget\n",
                    io.graph, mo.time_limit);
            code = XE_EXIT_TIMEOUT;
        } else {
            fprintf(stderr, "xengine: error: %s: the greedy heuristic found no schedule (this proves nothing: "
                            "run without --heuristic-only for the MILP, or raise the budget)\n", io.graph);
            code = XE_EXIT_TIMEOUT;
        }
        goto done;
    }

    /* 4. events, independent validation, atomic write */
    rc = xe_stages_to_schedule(in, best, &sched, &err);
    xe_sim_result sr;
    if (rc == XE_OK) rc = xe_sim_run(in, &sched, &sr, &err);
    if (rc) {
        fprintf(stderr, "xengine: error: %s: the %s schedule fails validation (a bug): %s\n", io.graph,
                best_name, err.msg);
        code = XE_EXIT_INTERNAL;
        goto done;
    }
    double objective = xe_stages_cost(in, best);
    if (fabs(sr.total_time - objective) > 1e-6 * fmax(1.0, objective)) {
        fprintf(stderr, "xengine: error: %s: simulated time %.9g differs from the plan's %.9g (a bug)\n", io.graph,
                sr.total_time, objective);
        code = XE_EXIT_INTERNAL;
        goto done;
    }
    /* the bound holds for every stage schedule, so it bounds the written one too */
    double bound = heur_only ? NAN : fmin(mr.bound, objective);
    double gap = isfinite(bound) && objective > 0 ? (objective - bound) / objective : NAN;
    char extra[512], jb[32], jg[32];
    snprintf(extra, sizeof extra,
             "{\"method\": \"%s\", \"objective_s\": %.17g, \"bound_s\": %s, \"gap\": %s, "
             "\"solve_time_s\": %.6f, \"milp_status\": \"%s\", \"validated_by\": \"xengine simulator\"}",
             best_name, objective, json_num(bound, jb, sizeof jb), json_num(gap, jg, sizeof jg),
             heur_only ? t_heur : mr.solve_time,
             heur_only ? "skipped" : mr.killed ? "stopped at the time limit" : xe_milp_status_str(mr.status));
    rc = xe_io_write_schedule(out, in, &sched, &sr, extra, &err);
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        code = xe_cli_exit_code(rc);
        goto done;
    }
    printf("\nschedule (%s), validated by the simulator:\n", best_name);
    xe_cli_print_summary(in, &sr);
    printf("wrote %s (%d events)\n", out, sched.len);
    code = XE_EXIT_OK;
done:
    xe_schedule_clear(&sched);
    xe_stages_clear(&heur);
    xe_milp_result_clear(&mr);
    xe_instance_free(in);
    return code;
}
