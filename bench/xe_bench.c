/* xe_bench — every method on every shared graph, one device ("gpu") and two ("gpu+cpu"),
 * at several budgets (percent of the no-recomputation peak): cost relative to the
 * no-recomputation schedule, lower bound, gap, time to the first valid schedule and to
 * the best; the plain MILP (no start) side by side. Writes a CSV (bench/run.sh plots it).
 *
 * usage: xe_bench [--graphs DIR] [--limit S] [--budgets 90,80,70,60,50]
 *                 [--presets gpu,gpu+cpu]
 *                 [--methods baselines,heuristic,pebbling,milp-nostart,milp,lns,auto,descent] [--seed N]
 *                 [--only SUBSTR] [--max-nodes N] [--threads N] [--csv FILE] [--quick]
 *                 [--lns-slice S] [--verbose N]  (LNS progress on stderr: 1 lines, 2 each neighbourhood)
 *                 [--knapsack-rows]  (whole-model MILPs add docs/formulation.md's constraint 9;
 *                                     without it milp-nostart and milp+start leave them out
 *                                     and auto follows xe_plan's default, which adds them)
 *
 * auto is xe_plan (include/xengine/plan.h), the strategy of `xengine solve --method auto`,
 * with --limit as its time limit; its row shows its own bound and gap. descent (not in
 * the default list) is budget descent alone (xe_descent, with all of --limit and
 * --seed), run only where the portfolio finds nothing. pebbling is the exact one-device
 * search over all schedules (docs/pebble.md, with all of --limit), run only on one device
 * where the portfolio finds nothing; its row's bound is the bottleneck bound
 * (xe_bound_bottleneck: every node once, plus what the worst node's slack forces).
 *
 * Every schedule is replayed by the simulator before it is counted. Times are wall
 * seconds on this machine from the start of the method (the heuristic's time is part of
 * the methods it starts). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/io.h"
#include "xengine/milp.h"
#include "xengine/pebble.h"
#include "xengine/plan.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"

#if defined(__has_include)
#if __has_include("xengine/baselines.h")
#include "xengine/baselines.h"
#include "xengine/timer.h"
#define XE_HAVE_BASELINES 1
#endif
#endif

typedef struct bench_opts {
    const char *graphs, *csv, *only;
    double limit;
    int budgets[16], nbudgets;
    const char *presets[4];
    int npresets;
    char methods[256];
    int threads, max_nodes;
    double slice; /* LNS seconds per neighbourhood (0: default) */
    int knapsack; /* 1: whole-model MILPs (milp-nostart, milp, auto's) add the knapsack rows */
    int verbose; /* LNS progress level on stderr (0: none, 2: each neighbourhood) */
    unsigned long long seed; /* the descent's neighbourhood seed (1) */
} bench_opts;

typedef struct row {
    const char *method;
    const char *status;
    double obj, bound, t_first, t_best, t_total, t_reach; /* t_reach: plain MILP's final objective;
                                                             bound: the row's own (NAN: the case's) */
} row;

static int has_method(const bench_opts *o, const char *m)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", o->methods);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        if (!strcmp(s, m)) return 1;
    return 0;
}

/* 1 when st replays in the simulator with the plan's own cost. */
static int valid(const xe_instance *in, const xe_stages *st)
{
    xe_sim_result sr;
    xe_err err = {{0}};
    int ok = xe_stages_replay(in, st, &sr, &err) == XE_OK;
    if (!ok) fprintf(stderr, "xe_bench: schedule fails the simulator: %s\n", err.msg);
    return ok;
}

/* The event list s replays in the simulator at cost `cost` (the pebbling schedule). */
static int valid_events(const xe_instance *in, const xe_schedule *s, double cost)
{
    xe_sim_result sr;
    xe_err err = {{0}};
    int ok = xe_schedule_replay(in, s, cost, &sr, &err) == XE_OK;
    if (!ok) fprintf(stderr, "xe_bench: pebbling schedule fails the simulator: %s\n", err.msg);
    return ok;
}

static void parse_budgets(bench_opts *o, const char *v)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    o->nbudgets = 0;
    for (char *s = strtok(buf, ","); s && o->nbudgets < 16; s = strtok(NULL, ",")) o->budgets[o->nbudgets++] = atoi(s);
}

static void parse_presets(bench_opts *o, const char *v)
{
    o->npresets = 0;
    if (strstr(v, "gpu+cpu")) o->presets[o->npresets++] = "gpu+cpu";
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        if (!strcmp(s, "gpu") && o->npresets < 4) o->presets[o->npresets++] = "gpu";
}

static void print_row(FILE *csv, const char *graph, int n, const char *preset, int pct, double base,
                      double bound, const row *r)
{
    char ob[32] = "-", rel[32] = "-", gap[32] = "-", tf[32] = "-", tb[32] = "-", tr[32] = "-";
    if (isfinite(r->bound)) bound = r->bound; /* auto: its own bound, as solve reports it */
    if (isfinite(r->obj)) {
        snprintf(ob, sizeof ob, "%.4f", r->obj);
        snprintf(rel, sizeof rel, "%.4f", r->obj / base);
        snprintf(tf, sizeof tf, "%.3f", r->t_first);
        snprintf(tb, sizeof tb, "%.3f", r->t_best);
        if (isfinite(bound) && r->obj > 0) snprintf(gap, sizeof gap, "%.2f%%", 100 * (r->obj - bound) / r->obj);
    }
    if (isfinite(r->t_reach)) snprintf(tr, sizeof tr, "%.3f", r->t_reach);
    printf("  %-14s %-24s %12s %8s %8s %8s %8s %8s\n", r->method, r->status, ob, rel, gap, tf, tb, tr);
    if (csv) {
        fprintf(csv, "%s,%d,%s,%d,%s,%s,%.9g,%.6f,%.9g,%.6f,%.4f,%.4f,%.4f,%.4f\n", graph, n, preset, pct, r->method,
                r->status, r->obj, isfinite(r->obj) ? r->obj / base : NAN, bound,
                isfinite(r->obj) && isfinite(bound) && r->obj > 0 ? (r->obj - bound) / r->obj : NAN, r->t_first,
                r->t_best, r->t_total, r->t_reach);
        fflush(csv);
    }
}

/* When the portfolio's schedule, the start of milp+start and lns, had reached target
 * (seconds from the portfolio's start): its first schedule's time if that was already
 * as cheap, else its best's (it returns later: its randomised diversification runs on). */
static double start_reach(const xe_heur_times *ht, double target)
{
    return ht->first_cost <= target * (1 + 1e-6) ? ht->first_at : ht->best_at;
}

static void run_case(const bench_opts *o, FILE *csv, const char *path, const char *gname, const char *preset,
                     int pct)
{
    xe_err err;
    xe_graph *g = NULL;
    if (xe_io_read_graph(path, &g, &err)) {
        printf("skip %s: %s\n", gname, err.msg);
        return;
    }
    int n = g->n;
    xe_recipe r;
    xe_instance *in = NULL;
    if (xe_recipe_preset(preset, pct / 100.0, &r, &err) || xe_instance_from_recipe(g, &r, &in, &err)) {
        printf("skip %s: %s\n", gname, err.msg);
        xe_graph_free(g);
        return;
    }
    double base = 0;
    for (int v = 0; v < n; v++) base += xe_cost(in, v, 0);
    row rows[24];
    int nr = 0;
    double bound = xe_bound_cheapest(in);
    printf("\n%s (%d nodes), %s, budget %d%% of the no-recomputation peak; no-recomputation cost %.4f s\n", gname,
           n, preset, pct, base);
    if (!isfinite(bound)) {
        printf("  infeasible: a node fits no device with its inputs (proven)\n");
        if (csv) fprintf(csv, "%s,%d,%s,%d,all,infeasible,nan,nan,inf,nan,nan,nan,nan,nan\n", gname, n, preset, pct);
        xe_instance_free(in);
        return;
    }
    double t0 = xe_now();
    double lp = -INFINITY;
    int lp_inf = 0;
    int lrc = xe_bound_lp(in, fmin(o->limit, 30.0), 1, &lp, &lp_inf, &err);
    if (lrc) fprintf(stderr, "xe_bench: LP bound: %s\n", err.msg);
    if (lrc == XE_OK && isfinite(lp)) bound = fmax(bound, lp);
    double t_lp = xe_now() - t0;
    double ev = xe_bound_eviction(in);
    if (isfinite(ev)) bound = fmax(bound, ev);
    printf("  bounds: every node once on its cheapest device %.4f; eviction %.4f; LP relaxation %s%.4f (%.2f s)\n",
           xe_bound_cheapest(in), ev, lp_inf ? "infeasible " : "", lp, t_lp);

    /* heuristic portfolio */
    xe_stages heur;
    const char *which = "none";
    t0 = xe_now();
    xe_heur_times ht;
    int hrc = xe_heur_best_timed(in, &heur, &which, 1, XE_PORTFOLIO_RANDOM_S, INFINITY, &ht, &err);
    double t_heur = xe_now() - t0;
    int have_heur = hrc == XE_OK && valid(in, &heur);
    double heur_cost = have_heur ? xe_stages_cost(in, &heur) : INFINITY;
    /* its first schedule and its best were in hand before it returned: its randomised
     * diversification runs on after its last improvement (docs/heuristic.md) */
    if (has_method(o, "heuristic"))
        rows[nr++] = (row){"heuristic", have_heur ? which : "none found", heur_cost, NAN,
                           have_heur ? ht.first_at : t_heur, have_heur ? ht.best_at : t_heur, t_heur, NAN};

    /* the exact one-device search over all schedules (docs/pebble.md) where the
     * portfolio finds nothing; as in xe_plan it follows the portfolio without its
     * randomised restarts, whose time (run again here) its times include */
    if (has_method(o, "pebbling") && in->ndev == 1 && !have_heur) {
        xe_pebble *pb = xe_pebble_new(in->g, 0);
        xe_schedule ps;
        xe_schedule_init(&ps);
        xe_pebble_answer a = XE_PEBBLE_UNKNOWN;
        xe_stages none;
        t0 = xe_now();
        if (xe_heur_best_ex(in, &none, NULL, 1, 0.0, &err) == XE_OK) xe_stages_clear(&none);
        xe_pebble_stats ps_st = {INFINITY, INFINITY, INFINITY};
        double tp = xe_now();
        int rc = pb ? xe_pebble_schedule(pb, in, 0, xe_now() + o->limit, &ps, &a, NULL, &ps_st, &err) : XE_ENOMEM;
        double tt = xe_now() - t0, tf = tp - t0 + ps_st.first_time, pc = ps_st.cost; /* tf: to its first candidate */
        int ok = rc == XE_OK && a == XE_PEBBLE_YES && valid_events(in, &ps, pc);
        if (rc) fprintf(stderr, "xe_bench: pebbling: %s\n", rc == XE_ENOMEM ? "out of memory" : err.msg);
        const char *st = rc ? "error" : ok ? "valid (no stages)" : a == XE_PEBBLE_NO ? "infeasible (proven)" : "unknown";
        /* its bound holds for every schedule (the stage bounds do not bound this one) */
        double lb = ok ? xe_bound_bottleneck(in, xe_now() + 0.25, NULL) : xe_bound_cheapest(in);
        rows[nr++] = (row){"pebbling", st, ok ? pc : INFINITY, lb, ok ? tf : NAN,
                           ok ? (pc < ps_st.first_cost ? tt : tf) : NAN, tt, NAN};
        xe_schedule_clear(&ps);
        xe_pebble_free(pb);
    }

#ifdef XE_HAVE_BASELINES
    /* baselines (include/xengine/baselines.h): each is validated by the simulator there */
    static const char *bl[] = {"checkpoint-all", "chen-sqrt", "chen-greedy", "revolve", "chain-dp", "one-device",
                               "fastest-device"};
    if (has_method(o, "baselines"))
        for (size_t k = 0; k < sizeof bl / sizeof *bl; k++) {
            xe_schedule bs;
            xe_schedule_init(&bs);
            double bc = INFINITY;
            t0 = xe_now();
            int rc = xe_baseline_run(in, bl[k], &bs, &bc, &err);
            double tt = xe_now() - t0;
            xe_schedule_clear(&bs);
            if (rc == XE_EUNSUPPORTED) continue; /* e.g. revolve on a non-chain: no row */
            const char *st = rc == XE_OK ? "valid" : rc == XE_EINFEASIBLE ? "none found" : "error";
            rows[nr++] = (row){bl[k], st, rc == XE_OK ? bc : INFINITY, NAN, tt, tt, tt, NAN};
        }
#endif

    xe_milp_result plain = {0};
    int have_plain = 0;
    if (has_method(o, "milp-nostart")) {
        xe_milp_opts mo;
        xe_milp_opts_default(&mo);
        mo.time_limit = o->limit;
        mo.threads = o->threads;
        mo.isolate = 1;
        mo.knapsack = o->knapsack;
        t0 = xe_now();
        int rc = xe_milp_solve(in, &mo, &plain, &err);
        double tt = xe_now() - t0;
        if (rc) fprintf(stderr, "xe_bench: milp-nostart: %s\n", err.msg);
        have_plain = rc == XE_OK && plain.sol.R && valid(in, &plain.sol);
        if (rc == XE_OK && isfinite(plain.bound) && !plain.killed) bound = fmax(bound, plain.bound);
        rows[nr++] = (row){"milp-nostart",
                           rc ? "error" : plain.killed ? "killed at limit" : xe_milp_status_str(plain.status),
                           have_plain ? plain.objective : INFINITY, NAN, have_plain ? plain.time_first : NAN,
                           have_plain ? plain.time_best : NAN, tt, have_plain ? plain.time_best : NAN};
    }
    double target = have_plain ? plain.objective : NAN; /* NaN: no comparison possible */
    if (has_method(o, "milp") && have_heur) {
        xe_milp_opts mo;
        xe_milp_opts_default(&mo);
        mo.time_limit = fmax(0.1, o->limit - t_heur);
        mo.threads = o->threads;
        mo.isolate = 1;
        mo.knapsack = o->knapsack;
        mo.start = &heur;
        xe_milp_result mr;
        t0 = xe_now();
        int rc = xe_milp_solve(in, &mo, &mr, &err);
        double tt = xe_now() - t0 + t_heur;
        if (rc) fprintf(stderr, "xe_bench: milp+start: %s\n", err.msg);
        int ok = rc == XE_OK && mr.sol.R && valid(in, &mr.sol);
        if (rc == XE_OK && isfinite(mr.bound) && !mr.killed) bound = fmax(bound, mr.bound);
        double obj = ok && mr.objective < heur_cost ? mr.objective : heur_cost;
        double tb = ok && mr.objective < heur_cost ? t_heur + mr.time_best : ht.best_at;
        double reach = obj <= target * (1 + 1e-6) ? (heur_cost <= target * (1 + 1e-6) ? start_reach(&ht, target) : tb)
                                                  : NAN;
        rows[nr++] = (row){"milp+start", rc ? "error" : mr.killed ? "killed at limit" : xe_milp_status_str(mr.status),
                           obj, NAN, ht.first_at, tb, tt, reach};
        xe_milp_result_clear(&mr);
    }
    if (has_method(o, "lns") && have_heur) {
        xe_lns_opts lo;
        xe_lns_opts_default(&lo);
        lo.time_limit = fmax(0.1, o->limit - t_heur);
        lo.threads = o->threads;
        lo.isolate = 1;
        lo.bound = bound;
        lo.progress = o->verbose;
        lo.slice = o->slice;
        xe_lns_result lr;
        t0 = xe_now();
        int rc = xe_lns_solve(in, &heur, &lo, &lr, &err);
        double tt = xe_now() - t0 + t_heur;
        int ok = rc == XE_OK && valid(in, &lr.sol);
        double reach = NAN;
        if (ok && heur_cost <= target * (1 + 1e-6))
            reach = start_reach(&ht, target);
        else if (ok)
            for (int k = 0; k < lr.ntrace; k++)
                if (lr.trace_obj[k] <= target * (1 + 1e-6)) {
                    reach = t_heur + lr.trace_t[k];
                    break;
                }
        if (ok && lr.optimal) bound = fmax(bound, lr.objective);
        const char *st = rc ? "error" : lr.stop;
        /* its start was in hand at the portfolio's best_at (the portfolio returned later) */
        double tb = lr.objective < heur_cost * (1 - 1e-12) ? t_heur + lr.time_best : ht.best_at;
        rows[nr++] = (row){"lns", st, ok ? lr.objective : INFINITY, NAN, ht.first_at, tb, tt, reach};
        if (rc) fprintf(stderr, "xe_bench: lns: %s\n", err.msg);
        if (rc == XE_OK) xe_lns_result_clear(&lr);
    }
    char desc_status[48]; /* the descent row's status, printed below */
    if (has_method(o, "descent") && !have_heur) {
        /* budget descent (docs/lns.md) where the portfolio finds nothing; t_first and
         * t_best: from the start of the descent's own start search */
        xe_descent_opts dopt;
        xe_descent_opts_default(&dopt);
        dopt.time_limit = o->limit;
        dopt.threads = o->threads;
        dopt.isolate = 1;
        dopt.progress = o->verbose;
        dopt.slice = o->slice;
        dopt.seed = o->seed;
        xe_descent_result dr;
        t0 = xe_now();
        int rc = xe_descent(in, &dopt, &dr, &err);
        double tt = xe_now() - t0;
        int ok = rc == XE_OK && valid(in, &dr.sol);
        if (ok) snprintf(desc_status, sizeof desc_status, "fits the budgets");
        else if (rc == XE_EINFEASIBLE && dr.proven) snprintf(desc_status, sizeof desc_status, "infeasible (proven)");
        else if (rc == XE_ETIMEOUT) snprintf(desc_status, sizeof desc_status, "%.6g B over", dr.overflow);
        else snprintf(desc_status, sizeof desc_status, "none found");
        if (rc != XE_OK && rc != XE_ETIMEOUT && rc != XE_EINFEASIBLE) fprintf(stderr, "xe_bench: descent: %s\n", err.msg);
        rows[nr++] = (row){"descent", desc_status, ok ? dr.objective : INFINITY, NAN, ok ? tt : NAN, ok ? tt : NAN, tt, NAN};
        xe_stages_clear(&dr.sol);
    }
    char auto_status[64]; /* the auto row's status, printed below */
    if (has_method(o, "auto")) {
        xe_plan_opts po;
        xe_plan_opts_default(&po);
        po.mode = XE_PLAN_AUTO;
        po.time_limit = o->limit;
        po.threads = o->threads;
        po.progress = o->verbose;
        po.slice = o->slice;
        po.knapsack = o->knapsack ? 1 : -1; /* without the flag: xe_plan's default (on in auto) */
        xe_plan_result pr;
        t0 = xe_now();
        int rc = xe_plan(in, &po, &pr, &err);
        double tt = xe_now() - t0;
        if (rc) fprintf(stderr, "xe_bench: auto: %s\n", err.msg);
        int ok = rc == XE_OK && ((pr.sol.R && valid(in, &pr.sol)) ||
                                 (pr.events.len && valid_events(in, &pr.events, pr.objective)));
        double reach = NAN; /* first improvement at least as good as the plain MILP's final */
        if (ok)
            for (int k = 0; k < pr.ntrace; k++)
                if (pr.trace_obj[k] <= target * (1 + 1e-6)) {
                    reach = pr.trace_t[k];
                    break;
                }
        /* planned in a low-peak order (docs/reorder.md): the other bounds hold for the
         * index order's stage schedules only, auto's for both orders' */
        if (ok && isfinite(pr.bound)) bound = pr.reordered ? fmax(xe_bound_cheapest(in), fmin(bound, pr.bound))
                                                           : fmax(bound, pr.bound);
        if (rc) snprintf(auto_status, sizeof auto_status, "error");
        else if (!ok)
            snprintf(auto_status, sizeof auto_status, "%s",
                     pr.infeasible_any ? "infeasible (proven)" : pr.infeasible ? "infeasible (stages, proven)"
                                                                            : "none found");
        else snprintf(auto_status, sizeof auto_status, "%s (%s%s)", pr.optimal ? "optimal" : "feasible", pr.name,
                      pr.reordered ? " in low-peak order" : "");
        rows[nr++] = (row){"auto", auto_status, ok ? pr.objective : INFINITY, ok ? pr.bound : NAN,
                           ok && pr.ntrace ? pr.trace_t[0] : NAN, ok ? pr.time_best : NAN, tt, reach};
        xe_plan_result_clear(&pr);
    }
    printf("  %-14s %-24s %12s %8s %8s %8s %8s %8s\n", "method", "status", "objective_s", "rel", "gap", "t_first",
           "t_best", "t_plain");
    for (int k = 0; k < nr; k++) print_row(csv, gname, n, preset, pct, base, bound, &rows[k]);
    printf("  bound used for the gaps: %.4f s (best of: cheapest-device sum, eviction, LP relaxation, MILP bounds)\n", bound);
    xe_milp_result_clear(&plain);
    xe_stages_clear(&heur);
    xe_instance_free(in);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    bench_opts o = {.graphs = "../shared/graphs", .csv = NULL, .only = NULL, .limit = 60, .threads = 1, .max_nodes = 100000};
    parse_budgets(&o, "90,80,70,60,50");
    parse_presets(&o, "gpu,gpu+cpu");
    snprintf(o.methods, sizeof o.methods, "baselines,heuristic,pebbling,milp-nostart,milp,lns,auto");
    o.seed = 1;
    int quick = 0, limit_given = 0, budgets_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: xe_bench [--graphs DIR] [--limit S] [--budgets 90,80,70,60,50] [--presets gpu,gpu+cpu]\n"
                   "                [--methods baselines,heuristic,pebbling,milp-nostart,milp,lns,auto,descent]\n"
                   "                [--seed N] [--only SUBSTR] [--max-nodes N] [--threads N] [--csv FILE] [--quick]\n"
                   "                [--lns-slice S] [--verbose N] [--knapsack-rows]\n"
                   "Every method on every graph of DIR (default ../shared/graphs) at each budget (percent of\n"
                   "the no-recomputation peak): a table on stdout, a CSV with --csv. The options are described\n"
                   "at the top of bench/xe_bench.c; bench/run.sh runs it and plots the CSV.\n");
            return 0;
        }
        if (!strcmp(a, "--quick")) { /* applied below, under --limit and --budgets wherever given */
            quick = 1;
            continue;
        }
        if (!strcmp(a, "--knapsack-rows")) {
            o.knapsack = 1;
            continue;
        }
        /* the options with a value: one list, the index picks the field below */
        enum { O_GRAPHS, O_LIMIT, O_BUDGETS, O_PRESETS, O_METHODS, O_ONLY, O_THREADS, O_MAX_NODES, O_CSV,
               O_VERBOSE, O_LNS_SLICE, O_SEED, O_COUNT };
        static const char *const valued[O_COUNT] = {"--graphs",  "--limit",     "--budgets", "--presets",
                                                    "--methods", "--only",      "--threads", "--max-nodes",
                                                    "--csv",     "--verbose",   "--lns-slice", "--seed"};
        int opt = -1;
        for (int k = 0; k < O_COUNT && opt < 0; k++)
            if (!strcmp(a, valued[k])) opt = k;
        if (opt < 0) {
            fprintf(stderr, "xe_bench: unknown option %s (xe_bench --help)\n", a);
            return 1;
        }
        if (!v) {
            fprintf(stderr, "xe_bench: %s needs a value (see the comment at the top of bench/xe_bench.c)\n", a);
            return 1;
        }
        i++;
        switch (opt) {
        case O_GRAPHS: o.graphs = v; break;
        case O_LIMIT: o.limit = atof(v), limit_given = 1; break;
        case O_BUDGETS: parse_budgets(&o, v), budgets_given = 1; break;
        case O_PRESETS: parse_presets(&o, v); break;
        case O_METHODS: snprintf(o.methods, sizeof o.methods, "%s", v); break;
        case O_ONLY: o.only = v; break;
        case O_THREADS: o.threads = atoi(v); break;
        case O_MAX_NODES: o.max_nodes = atoi(v); break;
        case O_CSV: o.csv = v; break;
        case O_VERBOSE: o.verbose = atoi(v); break;
        case O_LNS_SLICE: o.slice = atof(v); break;
        default: o.seed = strtoull(v, NULL, 10); break; /* O_SEED */
        }
    }
    if (quick && !limit_given) o.limit = 10; /* --quick: 10 s and 90,70,50 unless given (it */
    if (quick && !budgets_given) parse_budgets(&o, "90,70,50"); /* overrode them when after them) */
    /* every method named must be one (a misspelt one gave an empty table, exit 0) */
    static const char *const known[] = {"baselines", "heuristic", "pebbling", "milp-nostart", "milp", "lns", "auto",
                                        "descent"};
    char mbuf[256];
    snprintf(mbuf, sizeof mbuf, "%s", o.methods);
    for (char *m = strtok(mbuf, ","); m; m = strtok(NULL, ",")) {
        size_t k = 0;
        while (k < sizeof known / sizeof *known && strcmp(m, known[k])) k++;
        if (k == sizeof known / sizeof *known) {
            fprintf(stderr, "xe_bench: --methods: unknown method '%s' (known: baselines, heuristic, pebbling, "
                            "milp-nostart, milp, lns, auto, descent)\n", m);
            return 1;
        }
    }
    if (!(o.limit > 0) || o.threads < 1 || o.nbudgets == 0 || o.npresets == 0) {
        fprintf(stderr, "xe_bench: --limit > 0, --threads >= 1, at least one budget and preset\n");
        return 1;
    }
    DIR *dir = opendir(o.graphs);
    if (!dir) {
        printf("xe_bench: %s is absent: nothing to run (skipped)\n", o.graphs);
        return 0;
    }
    char *names[256];
    int nn = 0;
    for (struct dirent *de; (de = readdir(dir)) && nn < 256;) {
        size_t L = strlen(de->d_name);
        if (L > 5 && !strcmp(de->d_name + L - 5, ".json") && (!o.only || strstr(de->d_name, o.only)))
            names[nn++] = strdup(de->d_name);
    }
    closedir(dir);
    if (nn == 0 && o.only) { /* a misspelt --only ran nothing, exit 0 */
        fprintf(stderr, "xe_bench: no graph in %s matches --only %s\n", o.graphs, o.only);
        return 1;
    }
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            fprintf(stderr, "xe_bench: cannot write %s\n", o.csv);
            return 1;
        }
        fprintf(csv, "graph,nodes,preset,budget_pct,method,status,objective_s,rel_cost,bound_s,gap,t_first_s,t_best_s,"
                     "t_total_s,t_reach_plain_s\n");
    }
    printf("xe_bench: %d graphs in %s, limit %g s per method, threads %d, methods %s\n", nn, o.graphs, o.limit,
           o.threads, o.methods);
    for (int k = 0; k < nn; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", o.graphs, names[k]);
        char gname[256];
        snprintf(gname, sizeof gname, "%s", names[k]);
        gname[strlen(gname) - 5] = 0;
        xe_graph *g = NULL;
        xe_err err;
        if (xe_io_read_graph(path, &g, &err)) {
            printf("skip %s: %s\n", names[k], err.msg);
            free(names[k]);
            continue;
        }
        int n = g->n;
        xe_graph_free(g);
        if (n > o.max_nodes) {
            printf("skip %s: %d nodes > --max-nodes %d\n", gname, n, o.max_nodes);
            free(names[k]);
            continue;
        }
        for (int p = 0; p < o.npresets; p++)
            for (int b = 0; b < o.nbudgets; b++) run_case(&o, csv, path, gname, o.presets[p], o.budgets[b]);
        free(names[k]);
    }
    if (csv) fclose(csv);
    return 0;
}
