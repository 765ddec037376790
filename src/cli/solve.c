/* xengine solve — heuristic start, MILP, independent validation, atomic write. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"
#include "xengine/io.h"
#include "xengine/baselines.h"
#include "xengine/dtr.h"
#include "xengine/milp.h"
#include "xengine/pebble.h"
#include "xengine/plan.h"
#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine solve GRAPH [options] -o SCHEDULE.json\n"
            "\n"
            "Plans one training step of GRAPH (xengine, Checkmate or Moccasin JSON, or an ONNX\n"
            "model costed by the roofline model of docs/cost-model.md) under the device\n"
            "budgets (--method, below; docs/lns.md). The best schedule is replayed by the\n"
            "independent simulator before it is written (atomically: temporary file, then\n"
            "rename).\n"
            "\n"
            "options:\n"
            "  --devices D      preset gpu | cpu | gpu+cpu (default gpu+cpu), or a devices file\n"
            "  --budget B       budget of the first device: \"80%%\" of the no-recomputation\n"
            "                   peak, bytes, or \"12GiB\"/\"500MB\" (default: the preset's 100%%)\n"
            "  --costs FILE     per-node, per-device costs overriding the recipe\n"
            "  --batch N        ONNX model: batch size (default: the file's)\n"
            "  --inference      ONNX model: plan the inference graph (default: training)\n"
            "  --time-limit S   wall-clock limit of the whole solve in seconds, > 0 (default 60);\n"
            "                   a greedy pass in progress finishes (0.8 s on a 5,000-node\n"
            "                   chain), at most 1 s past the limit while no schedule is in\n"
            "                   hand; reading, replaying and writing the result are not cut\n"
            "  --gap G          stop at this relative gap, 0 to 1 (default 1e-4)\n"
            "  --threads N      CBC threads (default 1)\n"
            "  --no-start       do not hand the heuristic schedule to the MILP\n"
            "  --no-reorder     plan in the graph's own node order only (see --method)\n"
            "  --no-bound-search  on one device, do not run the search bound on a second\n"
            "                   thread (docs/lns.md, Bounds: rows reach-bound, search-bound)\n"
            "  --no-reach-bound on one device, do not run the reach bound first on that\n"
            "                   thread (docs/lns.md, Bounds 7: rows reach-bound, reach)\n"
            "  --no-anneal      on one device, do not run the event-list local search last\n"
            "                   (docs/anneal.md: rows anneal, reach-window)\n"
            "  --no-window      anneal only, without the reach windows after it (docs/\n"
            "                   lns.md, Reach windows: row reach-window)\n"
            "  --no-fit-order   do not first look for an order that fits, without\n"
            "                   recomputation, the budget of the device that runs every\n"
            "                   node at its cheapest (docs/reorder.md: row fit-order)\n"
            "  --no-dtr         do not run DTR (first on graphs of 1,000+ nodes, last where\n"
            "                   nothing else found a schedule; docs/dtr.md: row dtr)\n"
            "  --knapsack-rows  add the knapsack rows to the whole-model MILP (docs/\n"
            "                   formulation.md, constraint 9): same optimum, stronger CBC\n"
            "                   bounds, sometimes a slower CBC (default: on in auto when\n"
            "                   its final MILP has 10 s or more, off in --method milp)\n"
            "  --no-knapsack-rows  leave them out (also in auto)\n"
            "  --heuristic-only skip the MILP (same as --method heuristic)\n"
            "  --method M       auto (default): the heuristic portfolio, then large-neighbourhood\n"
            "                   search (LNS) for 60%% of what is left, then the MILP started\n"
            "                   from the best schedule for the rest; on a large\n"
            "                   model (over 40,000 binary MILP columns, n_live_stages x\n"
            "                   (2D + D(D-1)) summed over nodes) LNS gets all the time and\n"
            "                   the MILP is skipped, as it is when LNS proves its schedule\n"
            "                   optimal (\"bound reached\"); when the portfolio finds no\n"
            "                   schedule, budget descent first (up to 60%% of the time: a\n"
            "                   larger-budget schedule's overflow removed by MILP\n"
            "                   neighbourhoods); milp: portfolio, then the MILP (not\n"
            "                   where the bounds prove the portfolio's schedule already);\n"
            "                   lns: portfolio, then LNS for the whole time; heuristic: the\n"
            "                   portfolio only (where its greedy finds nothing, randomised\n"
            "                   restarts of it, seed 1, for up to 0.8 s and a quarter of the\n"
            "                   time, half with heuristic; docs/heuristic.md);\n"
            "                   every method, on one device, where the portfolio finds no\n"
            "                   schedule: the exact search over all schedules (row\n"
            "                   pebbling: a schedule outside the stage structure, kept\n"
            "                   unless a stage schedule is as cheap, or a proof that none\n"
            "                   fits), for a tenth of the time left (before budget\n"
            "                   descent), at least min(2 s, a quarter of the limit),\n"
            "                   all of it used to build cheaper candidates once a\n"
            "                   schedule is found, each candidate restaged into stages\n"
            "                   of its own order and improved there (docs/pebble.md);\n"
            "                   where no stage schedule found is as cheap (after the\n"
            "                   restarts below), the winner is improved once more, and\n"
            "                   with auto and lns by LNS for half the time left (row\n"
            "                   restaged, docs/reorder.md); with auto, lns and\n"
            "                   heuristic also as a competitor to an unproven stage\n"
            "                   schedule where an order with a peak below 95%% of the\n"
            "                   graph's exists;\n"
            "                   every method, where a budget is below the graph order's\n"
            "                   no-recomputation peak: the portfolio also in a topological\n"
            "                   order with a lower peak (row reorder); when its schedule\n"
            "                   is 1%% cheaper (any cheaper with heuristic), optimal, or\n"
            "                   the only one, every later phase plans in that order and\n"
            "                   the schedule is named \"..., low-peak order\"\n"
            "                   (docs/reorder.md);\n"
            "                   or a baseline: checkpoint-all, chen-sqrt, chen-greedy, revolve,\n"
            "                   chain-dp, one-device, fastest-device (docs/lns.md)\n"
            "  -o, --output F   write the schedule here (required)\n"
            "  -q, --quiet      no progress lines on stderr (wins over -v)\n"
            "  -v, --verbose    progress lines on stderr, one per report, also when stderr\n"
            "                   is not a terminal (default: one line updated in place on a\n"
            "                   terminal, none otherwise)\n"
            "  --json           print only one JSON object on one line of stdout: status,\n"
            "                   exit_code, method, objective_s, bound_s, gap, bound_scope\n"
            "                   (\"stage schedules\" where bound_s holds for those only: then\n"
            "                   optimal means among them; else \"every schedule\"),\n"
            "                   bound_any_s and gap_any (over every schedule), solve_time_s,\n"
            "                   total_time_s, makespan_s, counts, devices[] with name,\n"
            "                   budget_bytes, peak_bytes, use, compute_time_s, methods[] (each\n"
            "                   method's own row); without a schedule also budget_lower_bytes,\n"
            "                   budget_found_bytes, budget_exact (the first device's\n"
            "                   budgets the message names); status: optimal (proven within --gap),\n"
            "                   feasible (a schedule, not proven: see gap), heuristic only\n"
            "                   (--method heuristic, not proven by its cheap bound),\n"
            "                   baseline, or on failure usage, bad input, infeasible,\n"
            "                   no schedule, internal error; solve_time_s: wall time from\n"
            "                   the graph read to the schedule validated (the span\n"
            "                   --time-limit governs). Printed also when the command fails\n"
            "                   (README)\n"
            "\n"
            "examples:\n"
            "  xengine solve ../shared/graphs/checkmate_vgg16_b256_train.json --devices gpu+cpu \\\n"
            "      --budget 70%% -o vgg16.json\n"
            "  xengine solve graph.json --devices devices.json --time-limit 30 -o plan.json\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 3 infeasible budget, proven for every\n"
            "schedule (the message gives the smallest budget known to work, exact on one device\n"
            "where the search ends in time), 4 no schedule found and none proven impossible (also\n"
            "when only stage schedules are proven impossible)\n"
            "(time limit, or --heuristic-only), 5 internal error, or the schedule could not be\n"
            "written (disk full; an -o that cannot be written at all is exit 1, before the solve)\n");
}

/* Seconds in `width` columns (0: unpadded): six decimals below 10^7 s, else 9
 * significant digits (an objective of 1e10, FCN-8's graph in the file's units, pushed the
 * table's columns aside). */
static const char *secs(char *buf, size_t cap, int width, double x)
{
    snprintf(buf, cap, fabs(x) < 1e7 ? "%*.6f" : "%*.9g", width, x);
    return buf;
}

/* What the plan's bound covers: "stage schedules" where it is a stage bound below which
 * a schedule outside the stage class could still lie (bound_any, every schedule's, is
 * lower or unknown), else "every schedule"; NULL without a bound. */
static const char *bound_scope(double bound, double bound_any)
{
    if (!isfinite(bound)) return NULL;
    return bound_any >= bound - 1e-12 * fabs(bound) ? "every schedule" : "stage schedules";
}

/* The outcome of the whole solve in one line, after the method rows: the schedule written,
 * its cost, the bound of the plan and the gap, and whether that proves it within --gap;
 * no_bound (NULL where there is a bound) says why there is none. */
static void print_result(const char *name, double objective, double bound, double gap, double rel_gap,
                         const char *no_bound, int heur_only, int stage_only, double bound_any, double gap_any)
{
    char o[40], b[40], a[40], scope[160] = "";
    if (no_bound) {
        printf("\nresult: %s s (%s); no lower bound (%s)\n", secs(o, sizeof o, 0, objective), name, no_bound);
        return;
    }
    /* a stage bound (eviction, LP, MILP) holds for stage schedules only: say so, and
     * give the bound of every schedule beside it (docs/lns.md, "Bounds") */
    if (stage_only)
        snprintf(scope, sizeof scope, " among stage schedules; over every schedule the bound is %s s, gap %.3f%%",
                 secs(a, sizeof a, 0, bound_any), 100.0 * gap_any);
    printf("\nresult: %s s (%s), lower bound %s s, gap %.3f%%: %s within --gap %g%s%s\n",
           secs(o, sizeof o, 0, objective), name, secs(b, sizeof b, 0, bound), 100.0 * gap,
           gap <= rel_gap ? "optimal" : "feasible, not proven optimal", rel_gap, scope,
           heur_only ? " (heuristic only: the bound without LP or MILP)" : "");
}

/* Ctrl-C during the plan: set by the handler, read by xe_plan through
 * xe_plan_opts.interrupt, with the time of that first signal (written by the handler
 * only, before the flag). The process-wide state a signal handler needs, as it can reach
 * nothing else; only `xengine solve` installs the handler, around xe_plan. */
static volatile sig_atomic_t interrupted;
/* 1 once the schedule is written: a later SIGINT or SIGTERM changes nothing (under load a
 * second signal of a pair arrived after the write and, the handlers restored, ended the
 * process with 143 although its schedule was on disk) */
static volatile sig_atomic_t written;
static struct timespec first_signal;

/* A second SIGINT or SIGTERM this soon after the first is the same interrupt delivered
 * twice: coreutils' `timeout` without --foreground signals the process, then its process
 * group, microseconds apart (until 2026-12-05 the second ended the process and
 * `timeout -s INT 2 xengine solve ...` lost the schedule on some runs). Seconds. */
#define SOLVE_SAME_SIGNAL_S 0.1

static void on_sigint(int sig)
{
    if (written) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!interrupted) {
        first_signal = now;
        interrupted = 1;
        return;
    }
    double dt = (double)(now.tv_sec - first_signal.tv_sec) + 1e-9 * (double)(now.tv_nsec - first_signal.tv_nsec);
    if (dt < SOLVE_SAME_SIGNAL_S) return;
    /* a second one: the process ends at once, by the signal, as without a handler */
    static const char msg[] = "xengine: second interrupt: exiting without writing a schedule\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig); /* blocked in the handler: delivered, with its default action, on return */
}

/* A JSON number, or null where it is not finite (no bound known). */
static const char *json_num(double x, char *buf, size_t cap)
{
    if (isfinite(x)) snprintf(buf, cap, "%.17g", x);
    else snprintf(buf, cap, "null");
    return buf;
}

/* "12.25 GiB (13153337344 B)": rounded for people, exact for the next attempt. */
static const char *exact(int64_t b, char *buf, size_t cap)
{
    char h[32];
    xe_io_bytes(b, h, sizeof h);
    char plain[32];
    snprintf(plain, sizeof plain, "%lld B", (long long)b);
    if (!strcmp(h, plain)) snprintf(buf, cap, "%s", plain);
    else snprintf(buf, cap, "%s (%.24s)", h, plain);
    return buf;
}

/* Seconds the budget hint may take: what the time limit leaves, or, when that is less
 * or the solve was interrupted (Ctrl-C), 2% of the limit and at most 1 s (its bisection
 * then stops early, vouches for a larger budget and says so; its first check, at the
 * no-recomputation peak, always runs). */
static double hint_s(const xe_plan_opts *po, double t_start)
{
    double least = fmin(1.0, 0.02 * po->time_limit);
    return interrupted ? least : fmax(least, po->time_limit - (xe_now() - t_start));
}

/* b as a percentage of the no-recomputation peak for a "%.1f%%" that gives at least b
 * bytes when typed back as --budget (xe_budget_of_frac(NN / 100, peak)):
 * rounded up to a tenth, so the smallest budget's "83.3%" of a 6-byte peak (5 B) is
 * "83.4%" (83.3% gives 4 B; a new user's find, 2026-12-05). 0 when the peak is 0. */
static double pct(int64_t b, int64_t peak)
{
    if (peak <= 0) return 0.0;
    double k = ceil(1000.0 * (double)b / (double)peak - 1e-9);
    for (int i = 0; i < 3 && xe_budget_of_frac(k / 10.0 / 100.0, peak) < (double)b; i++) k += 1;
    return k / 10.0;
}

/* The budgets the tool can vouch for, appended to buf: "; every schedule needs at least
 * L WHERE" (WHERE: "there" or "on DEV") and, when the portfolio finds a schedule at
 * some budget, "; the heuristic portfolio finds a schedule from H (P% of the
 * no-recomputation peak)", or "at H (P% ...; smaller budgets not tried within the time
 * limit)" when max_seconds cut its bisection (xe_min_budget_within). On one device the
 * exact search over all schedules (xe_pebble_min_budget, docs/pebble.md) then gets what
 * is left of max_seconds, at least 0.25 s and at most 2 s: "; the smallest budget that admits any schedule is X (P% ...;
 * exact)" when it finishes, else a raised L and "a schedule exists from X" when it beats
 * the portfolio. run_s: seconds one portfolio run may take (0: unknown), so that the
 * bisection starts none it cannot finish in max_seconds. infeasible_at: a budget of the
 * first device proven to admit no schedule of any form (report_infeasible's), so L is
 * above it; -1 when none (before 2026-12-02 L could be that very budget: "budget 34980 B
 * is infeasible ...; every schedule needs at least 34980 B" where the search did not
 * finish in its time). "" when unknown. */
/* Graphs this large (n x n x devices stage-matrix cells), or whose stage matrices do not
 * fit the memory, get the budget range of DTR instead of the stage heuristics' (a greedy
 * pass there takes seconds to minutes and cannot be interrupted: an impossible budget on
 * a 60,000-node chain ran 10 min and 10 GB before 2026-12-05). */
#define SOLVE_STAGE_RANGE_MAX_CELLS 2.5e7

/* The smallest budget of device 0 at which DTR (docs/dtr.md) finds a schedule, by
 * bisection between lo (bytes; none below it) and the no-recomputation peak, until the
 * deadline; 0 when it finds none there. */
static int64_t dtr_min_budget(const xe_instance *in, int64_t lo, double deadline)
{
    xe_instance t = *in; /* budgets by value; graph and costs shared, not owned */
    int64_t hi = xe_instance_norecompute_peak(in->g), found = 0;
    if (hi < lo) hi = lo;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err e;
    double c;
    while (lo <= hi && xe_now() < deadline) {
        int64_t mid = found ? lo + (hi - lo) / 2 : hi; /* the peak first */
        t.dev[0].budget = mid;
        int rc = xe_dtr_schedule(&t, 0, NULL, 1, deadline, &s, &c, NULL, &e);
        xe_schedule_clear(&s);
        if (rc == XE_OK) {
            found = mid;
            hi = mid - 1;
        } else if (rc == XE_EINFEASIBLE && found) {
            lo = mid + 1;
        } else {
            break; /* none at the peak, or the time is up */
        }
    }
    return found;
}

/* Seconds each probe of fit_min_budget may take: half of what the planner's fit-order
 * phase gets with any --time-limit of 1 s or more (xe_plan's 0.1 s; at least 0.25 s on
 * graphs of 1,000 nodes or more), so that a solve at the budget reported runs the same
 * search (the same target, xe_order_fit_within's shares, the annealing's seed) for twice
 * as long. Inside the planner, beside the search bound's thread, the search got through
 * 1.3-2.6 times fewer sets per second than alone (a review, on a generated 400-node DAG,
 * where with the probe as long as the phase a budget named at 67% was not found again,
 * the phase cut), so this is a margin, not a guarantee; a third named 78% there where
 * 68% is found in 0.03 s. */
#define SOLVE_FIT_PROBE_S (0.1 / 2)
#define SOLVE_FIT_PROBE_BIG_S (0.25 / 2)
static double fit_probe_s(const xe_graph *g)
{
    return g->n >= XE_ORDER_FIT_ANNEAL_N ? SOLVE_FIT_PROBE_BIG_S : SOLVE_FIT_PROBE_S;
}

/* The smallest target (bytes), by bisection above lo up to the no-recomputation peak
 * `peak`, at which the fit search and the annealing over orders (xe_order_fit_within,
 * docs/reorder.md "Fitting an order to a budget") find a topological order whose
 * every-node-once schedule fits it: a solve of one device at that budget computes every
 * node once, optimal. Each probe gets fit_probe_s and none starts past `deadline`
 * (xe_now() seconds); a probe cut short counts as none found. 0 when none is found below the peak (or out of memory). */
static int64_t fit_min_budget(const xe_graph *g, int64_t lo, int64_t peak, double deadline)
{
    int *order = malloc(((size_t)g->n + 1) * sizeof *order);
    int64_t hi = peak, found = 0;
    xe_err e;
    if (!order) return 0;
    if (lo < 1) lo = 1;
    /* stop within a thousandth of the peak: finer steps only cost probes */
    while (lo < hi && hi - lo > peak / 1000 && xe_now() < deadline) {
        int64_t mid = lo + (hi - lo) / 2;
        xe_order_fit_result fr;
        double secs = fmin(deadline - xe_now(), fit_probe_s(g));
        if (xe_order_fit_within(g, mid, secs, NULL, order, &fr, NULL, &e) != XE_OK) break;
        if (fr.status == XE_FIT_FOUND) {
            found = hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    free(order);
    return found;
}

static const char *budget_range_text(const xe_instance *in, double max_seconds, double run_s, const char *where,
                                     int64_t infeasible_at, int fit_ok, char *buf, size_t cap, xe_cli_json *js)
{
    char b2[64], b3[64];
    int64_t lo = 0, hi = 0, plo = 0, phi = 0;
    int complete = 0, pexact = 0;
    xe_err err = {{0}};
    double t0 = xe_now();
    buf[0] = 0;
    double cells = (double)in->g->n * (double)in->g->n * (double)in->ndev;
    int big = cells >= SOLVE_STAGE_RANGE_MAX_CELLS || xe_plan_memory_check(in, 0, &err) != XE_OK;
    /* who finds schedules at hi: the stage heuristics, or on large graphs DTR */
    const char *finder = big ? "DTR" : "the heuristic portfolio";
    if (big) {
        lo = in->ndev == 1 ? xe_instance_min_footprint(in->g) : 0;
        if (infeasible_at >= lo) lo = infeasible_at + 1;
        hi = dtr_min_budget(in, lo > 0 ? lo : 1, xe_now() + fmin(2.0, fmax(0.25, max_seconds)));
    } else if (xe_min_budget_within(in, 0, max_seconds, run_s, &lo, &hi, &complete, &err) != XE_OK) {
        return buf;
    }
    if (infeasible_at >= lo) lo = infeasible_at + 1; /* proven: that budget admits no schedule */
    int64_t peak = xe_instance_norecompute_peak(in->g), fit = 0;
    double t_fit = xe_now();
    if (in->ndev == 1 && fit_ok) {
        /* every node once in an order the fit search finds: the cheapest schedule there
         * is, and the planner's own first try; half of what max_seconds leaves, at least
         * one probe's time, at most 0.5 s (a 1,000-node layered DAG: 61.7% in 0.2 s) */
        double now = xe_now();
        double dl = now + fmin(0.5, fmax(fit_probe_s(in->g), 0.5 * (t0 + max_seconds - now)));
        fit = fit_min_budget(in->g, lo > in->dev[0].budget ? lo : in->dev[0].budget, peak, dl);
    }
    char fit_text[256] = "";
    if (fit > 0)
        snprintf(fit_text, sizeof fit_text, "; computing every node once fits at %s (%.1f%%; in a topological "
                 "order of the fit search, docs/reorder.md)", exact(fit, b3, sizeof b3), pct(fit, peak));
    if (in->ndev == 1) {
        xe_pebble *pb = xe_pebble_new(in->g, 0);
        int64_t up = hi > 0 && hi < peak ? hi : peak; /* both admit a schedule */
        if (fit > 0 && fit < up) up = fit;         /* and so does the fit search's order */
        /* what max_seconds leaves, at least 0.25 s with the fit search's time before it
         * (its yes answers come fast) and at most 2 s (its unknowns would take all the
         * time a long limit leaves) */
        double now = xe_now();
        double dl = fmax(now + 0.1, t_fit + fmin(2.0, fmax(0.25, t0 + max_seconds - t_fit)));
        int prc = pb ? xe_pebble_min_budget(pb, lo, up, dl, &plo, &phi, &pexact, NULL, &err) : XE_ENOMEM;
        xe_pebble_free(pb);
        if (prc == XE_OK) {
            if (pexact) {
                js->budget_lower = js->budget_found = plo;
                js->budget_exact = 1;
                int len = snprintf(buf, cap, "; the smallest budget that admits any schedule is %s (%.1f%% of "
                                   "the no-recomputation peak; exact, docs/pebble.md)", exact(plo, b2, sizeof b2),
                                   pct(plo, peak));
                if (hi > 0 && hi > plo && len > 0 && (size_t)len < cap)
                    len += snprintf(buf + len, cap - (size_t)len, "; %s finds %s %s %s", finder,
                                    big ? "a schedule" : "stage schedules", complete ? "from" : "at",
                                    exact(hi, b3, sizeof b3));
                if (len > 0 && (size_t)len < cap) snprintf(buf + len, cap - (size_t)len, "%s", fit_text);
                return buf;
            }
            lo = plo > lo ? plo : lo;
        }
    }
    /* the exact search beat the portfolio (and the fit search) */
    int pebble_lower = phi > 0 && (hi <= 0 || phi < hi) && (fit <= 0 || phi < fit);
    js->budget_lower = lo;
    js->budget_found = pebble_lower ? phi : hi;
    if (fit > 0 && (js->budget_found <= 0 || fit < js->budget_found)) js->budget_found = fit;
    js->budget_exact = 0;
    /* no lower end known (lo 0): no clause, rather than "needs at least 0 B" */
    int len = lo > 0 ? snprintf(buf, cap, "; every schedule needs at least %s %s", exact(lo, b2, sizeof b2), where) : 0;
    if (hi > 0 && len >= 0 && (size_t)len < cap)
        len += snprintf(buf + len, cap - (size_t)len, "; %s finds a schedule %s %s (%.1f%% of the no-recomputation "
                        "peak%s)", finder, complete ? "from" : "at", exact(hi, b3, sizeof b3), pct(hi, peak),
                        big        ? "; docs/dtr.md: the stage heuristics' range is not searched on a graph this large"
                        : complete ? ""
                                   : "; smaller budgets not tried within the time limit");
    if (pebble_lower && len >= 0 && (size_t)len < cap)
        len += snprintf(buf + len, cap - (size_t)len, "; a schedule outside the stage structure exists at %s "
                        "(%.1f%%; docs/pebble.md)", exact(phi, b3, sizeof b3), pct(phi, peak));
    if (len >= 0 && (size_t)len < cap) snprintf(buf + len, cap - (size_t)len, "%s", fit_text);
    return buf;
}

/* Whether the budget messages may name the fit search's budget (fit_min_budget): one
 * device that runs every node, where `solve` plans with it (not with --no-reorder,
 * --no-fit-order or in feasibility mode: po NULL for a baseline's message, which names
 * what the default method does). */
static int fit_hint_ok(const xe_instance *in, const xe_plan_opts *po)
{
    if (in->ndev != 1 || in->g->n < 3) return 0;
    if (po && (po->no_reorder || po->no_fit || po->feasibility)) return 0;
    for (int v = 0; v < in->g->n; v++)
        if (!xe_can_run(in, v, 0)) return 0;
    return 1;
}

/* Explains an infeasible budget with the smallest budget the tool can vouch for. */
static void report_infeasible(const xe_instance *in, const char *graph, const char *why, double max_seconds,
                              double run_s, int fit_ok, xe_cli_json *js)
{
    fflush(stdout); /* the table above comes before the error line, also in one pipe */
    char b1[64], range[640];
    fprintf(stderr, "xengine: error: %s: budget %s on %s is infeasible (%s)%s\n", graph,
            exact(in->dev[0].budget, b1, sizeof b1), in->dev[0].name, why,
            budget_range_text(in, max_seconds, run_s, "there", in->dev[0].budget, fit_ok, range, sizeof range, js));
}

/* The budget range the tool can vouch for when nothing was found (not a proof of
 * infeasibility): budget_range_text "on DEV". */
static const char *budget_hint(const xe_instance *in, double max_seconds, double run_s, int fit_ok, char *buf,
                               size_t cap, xe_cli_json *js)
{
    char where[96];
    snprintf(where, sizeof where, "on %s", in->dev[0].name);
    return budget_range_text(in, max_seconds, run_s, where, -1, fit_ok, buf, cap, js);
}

/* A usage error: with --json anywhere on the command line the JSON object still comes,
 * status "usage" (README); the message is already on stderr. */
static int usage_exit(int json, const char *graph, const char *out)
{
    return xe_cli_fail_json(json, "solve", XE_EXIT_USAGE, graph, out);
}

/* (objective - bound) / objective, 0 for a zero objective met by its bound, NAN when
 * unknown (no bound). */
static double rel_gap(double objective, double bound)
{
    if (!isfinite(objective) || !isfinite(bound)) return NAN;
    if (objective <= 0) return 0;
    return (objective - fmin(bound, objective)) / objective;
}

/* "%8.3f%%" of a gap, or "-" when unknown. */
static const char *gap_str(double gap, char *buf, size_t cap)
{
    if (isfinite(gap)) snprintf(buf, cap, "%8.3f%%", 100.0 * gap);
    else snprintf(buf, cap, "%9s", "-");
    return buf;
}

/* 1 when name is one of the baselines of include/xengine/baselines.h. */
static int xe_cli_is_baseline(const char *name)
{
    static const char *names[] = {"checkpoint-all", "chen-sqrt", "chen-greedy", "revolve", "chain-dp",
                                  "one-device", "fastest-device"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(name, names[k])) return 1;
    return !strncmp(name, "one-device:", 11);
}

/* The schedule summary's "batch" and "inference" keys, as text to close its extra keys
 * with: the ONNX model's batch size the plan was made for and whether it was the model's
 * inference graph (batch > 0: an ONNX model; "" otherwise), so that `simulate`, `plot`
 * and `run` can take both from the file (xe_io_schedule_model). */
static const char *batch_key(int64_t batch, int inference, char *buf, size_t cap)
{
    if (batch > 0)
        snprintf(buf, cap, ", \"batch\": %lld, \"inference\": %s", (long long)batch, inference ? "true" : "false");
    else buf[0] = '\0';
    return buf;
}

/* --method <baseline>: run it, replay it in the simulator (into *srp, which the --json
 * summary in js points to: it must outlive js's printing), write it; an exit code. */
static int solve_baseline(const xe_instance *in, const char *graph, const char *name, const char *out,
                          int64_t batch, int inference, double hint_seconds, double deadline, xe_cli_json *js,
                          xe_sim_result *srp)
{
    xe_schedule sched;
    xe_schedule_init(&sched);
    xe_err err = {{0}};
    double cost = 0, t0 = xe_now();
    int rc = xe_baseline_run_within(in, name, deadline, &sched, &cost, &err); /* the chain DP keeps to --time-limit */
    double t = xe_now() - t0;
    if (rc == XE_OK) rc = xe_sim_run(in, &sched, srp, &err);
    if (rc == XE_EUNSUPPORTED) { /* e.g. revolve or chain-dp on a graph that is not a chain */
        fprintf(stderr, "xengine: error: %s: --method %s does not apply to this graph (docs/baselines.md): %s\n",
                graph, name, err.msg);
        xe_schedule_clear(&sched);
        return XE_EXIT_USAGE;
    }
    if (rc) { /* the baselines' messages mostly start with their own name */
        size_t nl = strlen(name);
        int named = 1; /* "chain dp: ..." names "chain-dp" too */
        for (size_t k = 0; k < nl && named; k++)
            named = err.msg[k] == name[k] || (name[k] == '-' && err.msg[k] == ' ');
        named = named && (err.msg[nl] == ':' || err.msg[nl] == ' ');
        /* a baseline that does not fit gets the budgets the tool can vouch for, as the
         * other methods: exit 3 where the exact search proves that no schedule of any
         * form fits (before 2026-12-02 exit 4 and no budget: `--method chen-sqrt` on
         * random_layered_n100 at 50%, which auto proves infeasible) */
        char range[640] = "";
        if (rc == XE_EINFEASIBLE || rc == XE_ETIMEOUT) { /* no schedule: the same budgets (and --json fields) */
            fflush(stdout);
            budget_hint(in, hint_seconds, 0.0, fit_hint_ok(in, NULL), range, sizeof range, js);
        }
        fprintf(stderr, "xengine: error: %s: %s%s%s%s%s\n", graph, named ? "" : name, named ? "" : ": ", err.msg,
                rc == XE_ETIMEOUT ? "; raise --time-limit or the budget" : "", range);
        xe_schedule_clear(&sched);
        if (rc == XE_EINFEASIBLE && js->budget_exact && in->dev[0].budget < js->budget_lower) return XE_EXIT_INFEASIBLE;
        return rc == XE_EINFEASIBLE ? XE_EXIT_TIMEOUT : xe_cli_exit_code(rc);
    }
    printf("%-14s %14s %9s  %s\n", "method", "objective_s", "time_s", "status");
    char ob[32];
    printf("%-14s %s %9.3f  %s\n", name, secs(ob, sizeof ob, 14, srp->total_time), t, "valid");
    char extra[768], bk[64];
    snprintf(extra, sizeof extra,
             "{\"method\": \"%s\", \"objective_s\": %.17g, \"bound_s\": null, \"gap\": null, "
             "\"solve_time_s\": %.6f, \"milp_status\": \"skipped\", \"validated_by\": \"xengine simulator\"%s}",
             name, srp->total_time, t, batch_key(batch, inference, bk, sizeof bk));
    rc = xe_io_write_schedule(out, in, &sched, srp, extra, &err);
    if (rc == XE_OK) written = 1;
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        xe_schedule_clear(&sched);
        return xe_cli_write_exit_code(rc);
    }
    *js = (xe_cli_json){.command = "solve", .graph = graph, .schedule = out, .method = name, .status = "baseline",
                        .objective = srp->total_time, .bound = NAN, .gap = NAN, .solve_time = t, .in = in, .sim = srp,
                        .events = sched.len, .nrows = 1};
    js->rows[0] = (xe_cli_json_row){name, "valid", srp->total_time, NAN, NAN, t};
    print_result(name, srp->total_time, NAN, NAN, 0, "a baseline computes none", 0, 0, NAN, NAN);
    printf("schedule (%s), validated by the simulator:\n", name);
    xe_cli_print_summary(in, srp);
    printf("wrote %s (%d events)\n", out, sched.len);
    xe_schedule_clear(&sched);
    return XE_EXIT_OK;
}

/* xe_plan's callbacks: the progress relay around LNS and the MILP, each table row as its
 * phase ends (the portfolio's before LNS starts), the MILP's warnings. */
typedef struct solve_ctx {
    const char *graph;
    int progress, verbose;
    xe_cli_progress prog;
    xe_cli_json *js;
} solve_ctx;

static void on_phase(void *ctx, const char *method)
{
    solve_ctx *c = ctx;
    (void)method;
    if (c->progress && !c->verbose) xe_cli_progress_begin(&c->prog); /* one updating line on a terminal */
}

/* Appends a row to the JSON summary (its array holds every row xe_plan can emit). */
static void json_row(xe_cli_json *js, xe_cli_json_row row)
{
    if (js->nrows < (int)(sizeof js->rows / sizeof js->rows[0])) js->rows[js->nrows++] = row;
}

static void on_row(void *ctx, const xe_plan_row *r)
{
    solve_ctx *c = ctx;
    xe_cli_json *js = c->js;
    xe_cli_progress_end(&c->prog);
    if (r->crashed) /* e.g. CBC crashed when its time limit stopped it */
        fprintf(stderr, "xengine: warning: %s: the MILP found no schedule within %.3g s (%s); keeping the %s "
                        "schedule\n", c->graph, r->time, r->error, r->kept);
    if (!r->crashed && r->error && r->kept) /* e.g. LNS stopped by CBC failures ("solver failed") */
        fprintf(stderr, "xengine: warning: %s: %s stopped after %.3g s: %s; keeping the %s schedule\n", c->graph,
                r->method, r->time, r->error, r->kept);
    if (r->refuted)
        fprintf(stderr, "xengine: warning: %s: the MILP reported the budget infeasible after %.3g s although "
                        "the %s schedule fits it (a CBC error at its time limit); keeping the %s schedule\n",
                c->graph, r->time, r->kept, r->kept);
    if (js->nrows == 0) /* the portfolio's row starts the table */
        printf("%-15s %14s %14s %9s %9s  %s\n", "method", "objective_s", "bound_s", "gap", "time_s", "status");
    /* every row alike: a number where the phase has one, "-" where not (a MILP row's
     * objective and gap only with a schedule of its own, its status optimal or feasible;
     * a row with a bound and no schedule, lp-bound or a phase not run, gives the best
     * schedule's gap to it) */
    int milp_row = r->milp_status >= 0 || !strncmp(r->method, "milp", 4);
    int have = isfinite(r->objective) &&
               (!milp_row || r->milp_status == XE_MILP_OPTIMAL || r->milp_status == XE_MILP_FEASIBLE);
    char ob[32], bb[32], gb[32];
    if (have) secs(ob, sizeof ob, 14, r->objective);
    else snprintf(ob, sizeof ob, "%14s", "-");
    if (isfinite(r->bound)) secs(bb, sizeof bb, 14, r->bound);
    else snprintf(bb, sizeof bb, "%14s", "-");
    printf("%-15s %s %s %s %9.3f  %s\n", r->method, ob, bb, gap_str(have || !milp_row ? r->gap : NAN, gb, sizeof gb), r->time,
           r->status);
    json_row(js, (xe_cli_json_row){r->method, r->status, r->objective, r->bound, r->gap, r->time});
    if (r->killed)
        printf("                (CBC was still in preprocessing or the root LP; the model is too large for the limit)\n");
    else if (milp_row && r->nvars > 0)
        printf("                (model: %d variables, %d integer, %d rows)\n", r->nvars, r->nints, r->nrows);
    fflush(stdout);
}

int xe_cli_solve(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    xe_plan_opts po;
    xe_plan_opts_default(&po);
    po.progress = 1;
    const char *out = NULL;
    int no_start = 0, heur_only = 0, json = 0, verbose = 0;
    int heur_flag = 0, method_given = 0, ks_on = 0, ks_off = 0; /* for contradictions (-q wins over -v) */
    const char *method = "auto";
    json = xe_cli_has_arg(argc, argv, "--json"); /* usage errors print the JSON object too, */
    for (int i = 1; i + 1 < argc; i++)            /* with -o's path */
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) out = argv[i + 1];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return usage_exit(json, io.graph, out);
        if (c) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(a, "--no-reorder")) {
            po.no_reorder = 1;
        } else if (!strcmp(a, "--no-bound-search")) {
            po.no_bound_search = 1;
        } else if (!strcmp(a, "--no-reach-bound")) {
            po.no_reach_bound = 1;
        } else if (!strcmp(a, "--no-anneal")) {
            po.no_anneal = 1;
        } else if (!strcmp(a, "--no-window")) {
            po.no_window = 1;
        } else if (!strcmp(a, "--no-fit-order")) {
            po.no_fit = 1;
        } else if (!strcmp(a, "--no-dtr")) {
            po.no_dtr = 1;
        } else if (!strcmp(a, "--no-start")) {
            no_start = 1;
        } else if (!strcmp(a, "--knapsack-rows")) {
            po.knapsack = 1;
            ks_on = 1;
        } else if (!strcmp(a, "--no-knapsack-rows")) {
            po.knapsack = 0;
            ks_off = 1;
        } else if (!strcmp(a, "--heuristic-only")) {
            heur_only = heur_flag = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            po.progress = 0;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--method")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return usage_exit(json, io.graph, out);
            }
            method = argv[++i];
            method_given = 1;
            if (strcmp(method, "auto") && strcmp(method, "milp") && strcmp(method, "lns") &&
                strcmp(method, "heuristic") && !xe_cli_is_baseline(method)) {
                fprintf(stderr, "xengine: error: --method: unknown method '%s' (try --help)\n", method);
                return usage_exit(json, io.graph, out);
            }
            if (!strcmp(method, "heuristic")) heur_only = 1;
        } else if (!strcmp(a, "--time-limit") || !strcmp(a, "--gap") || !strcmp(a, "--threads") ||
                   !strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return usage_exit(json, io.graph, out);
            }
            const char *v = argv[++i];
            if (!strcmp(a, "-o") || !strcmp(a, "--output")) { /* given twice: refused by main.c's check_repeats */
                out = v;
                continue;
            }
            double x = 0;
            if (!xe_cli_decimal(v, &x)) {
                fprintf(stderr, "xengine: error: %s: '%s' is not a number\n", a, v);
                return usage_exit(json, io.graph, out);
            }
            if (!strcmp(a, "--time-limit")) po.time_limit = x;
            else if (!strcmp(a, "--gap")) po.rel_gap = x;
            else if (x != floor(x) || x < 1 || x > 64) {
                fprintf(stderr, "xengine: error: --threads: '%s' is not a whole number from 1 to 64\n", v);
                return usage_exit(json, io.graph, out);
            } else po.threads = (int)x;
        } else if (a[0] == '-') {
            fprintf(stderr, "xengine: error: unknown option '%s' (try --help)\n", a);
            return usage_exit(json, io.graph, out);
        } else if (!io.graph) {
            io.graph = a;
        } else {
            fprintf(stderr, "xengine: error: unexpected argument '%s'\n", a);
            return usage_exit(json, io.graph, out);
        }
    }
    if (!io.graph || !out) {
        fprintf(stderr, "xengine: error: need GRAPH and -o SCHEDULE.json (try --help)\n");
        return usage_exit(json, io.graph, out);
    }
    /* options that contradict each other (the last one won without a word before) */
    int heur_clash = heur_flag && method_given && strcmp(method, "heuristic");
    const char *clash = heur_clash                                        ? "--heuristic-only and --method"
                        : ks_on && ks_off                                ? "--knapsack-rows and --no-knapsack-rows"
                                                                         : NULL;
    if (clash) {
        fprintf(stderr, "xengine: error: %s%s%s contradict each other\n", clash, heur_clash ? " " : "",
                heur_clash ? method : "");
        return usage_exit(json, io.graph, out);
    }
    if (!(po.time_limit > 0)) {
        fprintf(stderr, "xengine: error: --time-limit: %g is not a number of seconds > 0\n", po.time_limit);
        return usage_exit(json, io.graph, out);
    }
    if (!(po.rel_gap >= 0 && po.rel_gap <= 1)) { /* a gap is (objective - bound) / objective */
        fprintf(stderr, "xengine: error: --gap: %g is not a relative gap from 0 to 1 (e.g. 1e-4)\n", po.rel_gap);
        return usage_exit(json, io.graph, out);
    }
    /* progress lines: on a terminal, anywhere with --verbose, never with -q */
    if (!verbose && !isatty(STDERR_FILENO)) po.progress = 0;
    xe_cli_json js = {.command = "solve", .graph = io.graph, .schedule = out};
    xe_sim_result bsr; /* a baseline's replay, which js points to until it is printed */
    int code = xe_cli_check_output_inst(out, &io);
    xe_instance *in = NULL;
    xe_net *net = NULL; /* an ONNX model's: only for the batch size it was read at */
    xe_train_map map = {0};
    if (!code) code = xe_cli_load_instance_net(&io, "gpu+cpu", &net, &map, NULL, &in);
    int64_t batch = net ? xe_cli_net_batch(net) : 0;
    xe_net_free(net);
    xe_train_map_clear(&map);
    int saved_stdout = -1;
    if (!code && json) { /* --json: the tables go nowhere, stdout gets the object at the end */
        fflush(stdout);
        int devnull = open("/dev/null", O_WRONLY);
        saved_stdout = devnull >= 0 ? dup(STDOUT_FILENO) : -1;
        if (saved_stdout >= 0) dup2(devnull, STDOUT_FILENO);
        if (devnull >= 0) close(devnull);
    }
    if (code) {
        js.exit_code = code;
        if (json) xe_cli_print_json(stdout, &js);
        return code;
    }

    xe_err err = {{0}};
    xe_plan_result pr;
    memset(&pr, 0, sizeof pr);
    xe_schedule sched;
    xe_schedule_init(&sched);
    const char *best_name = "none";
    /* SIGINT's handler, installed around the plan and kept until the schedule is written
     * (restored at done: a Ctrl-C during the check and the write only sets the flag;
     * before 2026-12-05 it was restored after the plan, and a Ctrl-C during the write
     * killed the process with the temporary file left behind) */
    struct sigaction old_sa, old_term;
    int handler = 0, term_handler = 0;

    double t_start = xe_now(); /* solve_time_s and --time-limit count from here, the instance read */
    const int fit_ok = fit_hint_ok(in, &po); /* the budget messages' every-node-once clause */
    /* 1. cheap infeasibility proof: a node no device can hold with its inputs */
    int64_t lo = 0;
    int rc = xe_budget_range(in, 0, &lo, NULL, &err);
    if (rc == XE_OK && in->dev[0].budget < lo) {
        report_infeasible(in, io.graph, "a node does not fit with its inputs", hint_s(&po, t_start), 0.0, fit_ok,
                          &js);
        code = XE_EXIT_INFEASIBLE;
        goto done;
    }

    printf("xengine solve: %s: %d nodes, %d edges, %d device%s\n", io.graph, in->g->n, in->g->m, in->ndev,
           in->ndev > 1 ? "s" : "");
    if (xe_cli_is_baseline(method)) {
        code = solve_baseline(in, io.graph, method, out, batch, io.inference, fmin(5.0, po.time_limit),
                              t_start + po.time_limit, &js, &bsr);
        goto done;
    }
    /* 2.-3. heuristic portfolio, LNS, the MILP: xe_plan (docs/lns.md, "Strategy of
     * `xengine solve --method`"); the rows are printed as each phase ends */
    po.mode = heur_only ? XE_PLAN_HEURISTIC : !strcmp(method, "lns") ? XE_PLAN_LNS
                                            : !strcmp(method, "milp") ? XE_PLAN_MILP : XE_PLAN_AUTO;
    po.no_start = no_start;
    solve_ctx sc = {.graph = io.graph, .progress = po.progress, .verbose = verbose, .js = &js};
    po.phase = on_phase;
    po.row = on_row;
    po.ctx = &sc;
    /* Ctrl-C (or SIGTERM): the plan ends as at its time limit and the best schedule so
     * far is checked and written as usual; a second one, SOLVE_SAME_SIGNAL_S or more
     * later, ends the process (on_sigint). Each blocks the other while it is handled. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    interrupted = 0;
    /* not where SIGINT is ignored (a background job of a non-interactive shell: the
     * shell's Ctrl-C is not meant for it) */
    handler = sigaction(SIGINT, NULL, &old_sa) == 0 && old_sa.sa_handler != SIG_IGN &&
              sigaction(SIGINT, &sa, NULL) == 0;
    /* SIGTERM (kill, a job runner's timeout, a batch system's notice before SIGKILL) the
     * same way: before 2026-12-05 it ended the process with everything found lost */
    term_handler = sigaction(SIGTERM, NULL, &old_term) == 0 && old_term.sa_handler != SIG_IGN &&
                   sigaction(SIGTERM, &sa, NULL) == 0;
    po.interrupt = &interrupted;
    rc = xe_plan(in, &po, &pr, &err);
    /* the portfolio's seconds (its row comes first): what one run of the budget hint's
     * bisection may take (xe_min_budget_within) */
    double run_s = pr.nrows > 0 ? pr.rows[0].time : 0.0;
    xe_cli_progress_end(&sc.prog); /* when a phase failed */
    if (interrupted) {
        fflush(stdout);
        fprintf(stderr, "xengine: %s: interrupted; stopped after %.1f s: %s\n", io.graph, xe_now() - t_start,
                pr.sol.R || pr.events.len ? "keeping the best schedule found so far" : "no schedule found yet");
    }
    if (rc) {
        fprintf(stderr, "xengine: error: %s: %s\n", io.graph, err.msg);
        code = xe_cli_exit_code(rc);
        goto done;
    }
    if (pr.infeasible_any) { /* the exact one-device search: nothing of any form fits */
        char why[256];
        snprintf(why, sizeof why, "no schedule of any form fits: %.64s cannot be computed within it, proven by "
                 "exhaustive search", pr.blocker >= 0 ? in->g->nodes[pr.blocker].name : "a node");
        report_infeasible(in, io.graph, why, hint_s(&po, t_start), run_s, fit_ok, &js);
        code = XE_EXIT_INFEASIBLE;
        goto done;
    }
    if (pr.infeasible) { /* no stage schedule fits (pebbling's schedule refutes it: plan.h): not a proof for
                             every schedule */
        fflush(stdout);
        char hint[640];
        fprintf(stderr, "xengine: error: %s: no schedule found: no stage schedule fits the budget (proven by "
                        "the MILP over stage schedules), and schedules outside the stage structure %s%s\n",
                io.graph, in->ndev == 1 ? "were not decided within the time limit (docs/pebble.md)"
                                        : "are not searched with several devices",
                budget_hint(in, hint_s(&po, t_start), run_s, fit_ok, hint, sizeof hint, &js));
        code = XE_EXIT_TIMEOUT;
        goto done;
    }
    if (!pr.events.len && !pr.sol.R && pr.dtr_alone) { /* the stage phases cannot run here, DTR found none */
        fflush(stdout);
        char hint[640];
        fprintf(stderr, "xengine: error: %s: no schedule found: the stage phases did not run (%s) and DTR %s; "
                        "raise the budget%s\n",
                io.graph, pr.dtr_skip + (strncmp(pr.dtr_skip, "not run: ", 9) ? 0 : 9),
                !strncmp(pr.dtr_status, "no schedule: ", 13) ? "found none" : pr.dtr_status,
                budget_hint(in, hint_s(&po, t_start), run_s, fit_ok, hint, sizeof hint, &js));
        code = XE_EXIT_TIMEOUT;
        goto done;
    }
    if (!pr.events.len && !pr.sol.R) {
        fflush(stdout); /* the table first, then the error line */
        char hint[640];
        if (!heur_only && pr.milp_status == XE_MILP_NO_SOLUTION) {
            const char *desc = NULL; /* how close budget descent came, when it ran */
            for (int k = 0; k < pr.nrows; k++)
                if (!strcmp(pr.rows[k].method, "descent") && !strncmp(pr.rows[k].status, "still ", 6)) desc = pr.rows[k].status;
            char when[64];
            if (interrupted) snprintf(when, sizeof when, " before the interrupt (stopped after %.1f s)", xe_now() - t_start);
            else if (pr.milp_error[0]) when[0] = '\0'; /* not the limit's doing */
            else snprintf(when, sizeof when, " within the time limit of %g s", po.time_limit);
            /* a MILP that failed (numerical trouble, a crash) names its failure: the
             * time limit was not what stopped it */
            const char *failed = pr.milp_error[0] ? "; the MILP gave no usable answer: " : "";
            fprintf(stderr, "xengine: error: %s: no schedule found%s (the heuristic portfolio %s%s%s%s%s); "
                            "raise %sthe budget%s\n",
                    io.graph, when, pr.heur_interrupted ? "was interrupted before it found one" : "found none either",
                    desc ? "; budget descent ended " : "", desc ? desc + 6 : "", failed,
                    pr.milp_error[0] ? pr.milp_error : "", pr.milp_error[0] ? "" : "--time-limit or ",
                    budget_hint(in, hint_s(&po, t_start), run_s, fit_ok, hint, sizeof hint, &js));
        } else {
            fprintf(stderr, "xengine: error: %s: the heuristic portfolio found no schedule (this proves nothing: "
                            "run with --method auto or lns for budget descent, LNS and the MILP, or raise the "
                            "budget)%s\n", io.graph,
                    budget_hint(in, hint_s(&po, t_start), run_s, fit_ok, hint, sizeof hint, &js));
        }
        code = XE_EXIT_TIMEOUT;
        goto done;
    }
    best_name = xe_plan_name(&pr); /* ", low-peak order" when planned in one (docs/reorder.md) */

    /* 4. events (the pebbling schedule as it is, docs/pebble.md; a stage schedule
     * converted), independent validation, atomic write */
    rc = xe_plan_result_schedule(in, &pr, &sched, &err);
    double objective = pr.objective; /* the stage schedule's cost or pebbling's (plan.h) */
    xe_sim_result sr;
    if (rc == XE_OK) rc = xe_schedule_replay(in, &sched, objective, &sr, &err);
    if (rc) {
        if (rc == XE_EINTERNAL) /* the simulated time differs from the plan's */
            fprintf(stderr, "xengine: error: %s: %s\n", io.graph, err.msg);
        else
            fprintf(stderr, "xengine: error: %s: the %s schedule fails validation (a bug): %s\n", io.graph,
                    best_name, err.msg);
        code = XE_EXIT_INTERNAL;
        goto done;
    }
    /* the plan's bound: over stage schedules for a stage schedule, every node once for
     * the pebbling one (capped at the objective); with --method heuristic the cheap ones
     * only (docs/lns.md "Bounds" 1), no LP or MILP */
    double bound = fmin(pr.bound, objective);
    double gap = rel_gap(objective, bound);
    double bound_any = fmin(pr.bound_any, objective), gap_any = rel_gap(objective, bound_any);
    const char *scope = bound_scope(bound, bound_any);
    int stage_only = scope && !strcmp(scope, "stage schedules");
    char jba[32], jga[32];
    double t_solve = xe_now() - t_start;
    /* the outcome of the whole solve (README, --help): proven within --gap, or not */
    /* proven by the bound in hand, even the cheap one of heuristic mode (as the result line says) */
    const char *status = isfinite(gap) && gap <= po.rel_gap ? "optimal" : heur_only ? "heuristic only" : "feasible";
    char extra[768], jb[32], jg[32], bk[64];
    snprintf(extra, sizeof extra,
             "{\"method\": \"%s\", \"objective_s\": %.17g, \"bound_s\": %s, \"gap\": %s, "
             "\"bound_scope\": \"%s\", \"bound_any_s\": %s, \"gap_any\": %s, "
             "\"solve_time_s\": %.6f, \"milp_status\": \"%s\", \"validated_by\": \"xengine simulator\"%s}",
             best_name, objective, json_num(bound, jb, sizeof jb), json_num(gap, jg, sizeof jg),
             stage_only ? "stage schedules" : "every schedule",
             json_num(bound_any, jba, sizeof jba), json_num(gap_any, jga, sizeof jga), t_solve,
             heur_only ? "skipped" : pr.milp_killed ? "stopped at the time limit" : xe_milp_status_str(pr.milp_status),
             batch_key(batch, io.inference, bk, sizeof bk));
    rc = xe_io_write_schedule(out, in, &sched, &sr, extra, &err);
    if (rc == XE_OK) written = 1;
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        code = xe_cli_write_exit_code(rc);
        goto done;
    }
    js.method = best_name;
    js.status = status;
    js.objective = objective;
    js.bound = bound;
    js.gap = gap;
    js.bound_scope = scope;
    js.bound_any = bound_any;
    js.gap_any = gap_any;
    js.solve_time = t_solve;
    js.in = in;
    js.sim = &sr;
    js.events = sched.len;
    print_result(best_name, objective, bound, gap, po.rel_gap, isfinite(bound) ? NULL : "none known", heur_only,
                 stage_only, bound_any, gap_any);
    printf("schedule (%s), validated by the simulator:\n", best_name);
    xe_cli_print_summary(in, &sr);
    if (pr.reordered || pr.fit_order)
        printf("planned in %s topological order: no-recomputation peak %lld B, %.1f%% of the graph "
               "order's %lld B (%s)\n",
               pr.fit_order ? "the fit search's" : pr.search_order ? "the search bound's" : "a low-peak",
               (long long)pr.peak_order, 100.0 * (double)pr.peak_order / (double)pr.peak_index,
               (long long)pr.peak_index,
               pr.search_order && !pr.fit_order ? "docs/lns.md, \"Bounds\" 6" : "docs/reorder.md");
    printf("wrote %s (%d events)\n", out, sched.len);
    code = XE_EXIT_OK;
done:
    /* the handlers stay where the schedule is written: they ignore what comes now */
    if (handler && !written) sigaction(SIGINT, &old_sa, NULL);
    if (term_handler && !written) sigaction(SIGTERM, &old_term, NULL);
    if (json) {
        fflush(stdout);
        if (saved_stdout >= 0) {
            dup2(saved_stdout, STDOUT_FILENO);
            close(saved_stdout);
        }
        js.exit_code = code;
        if (code) js.status = NULL, js.method = NULL, js.sim = NULL, js.nrows = 0; /* failed: no summary */
        if (xe_cli_print_json(stdout, &js) != XE_EXIT_OK && !code) code = XE_EXIT_INTERNAL;
    }
    xe_schedule_clear(&sched);
    xe_plan_result_clear(&pr);
    xe_instance_free(in);
    return code;
}
