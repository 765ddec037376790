/* xengine — the solve strategy as one call (docs/lns.md, "Strategy of `xengine solve
 * --method`"): the heuristic portfolio (xe_heur_best, docs/heuristic.md), then
 * large-neighbourhood search (xe_lns_solve) and/or the whole stage MILP (xe_milp_solve,
 * docs/formulation.md), with the same bounds and the same handling of CBC failures
 * everywhere. Used by `xengine solve`, the sweeps' planner (xe_sweep_point) and
 * bench/xe_bench ("auto"). All times are wall seconds, all costs seconds (serial compute
 * plus copy time, xe_stages_cost). */
#ifndef XENGINE_PLAN_H
#define XENGINE_PLAN_H

#include <signal.h>
#include <stddef.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/milp.h"
#include "xengine/schedule.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most rows one call keeps in res->rows (portfolio, chain-dp, reorder, pebbling,
 * greedy-random, orders, search-order, restaged, descent, lp-bound, lns, milp, anneal,
 * search-bound: 14 kinds, some of which can come twice; room to spare: until 2026-12-05
 * it was 12, and rows past it were dropped from res->rows without a word, though opts.row
 * saw them all). */
#define XE_PLAN_MAX_ROWS 32

typedef enum {
    XE_PLAN_AUTO = 0, /* portfolio (on one-device training chains also the chain DP:
                         no_chain_dp below); LNS for 60% of the time left; the whole MILP from
                         the incumbent for the rest. Above 40,000 binary columns
                         (xe_milp_binary_estimate) LNS gets all the time
                         and no MILP runs; the MILP is also skipped when LNS proved its
                         schedule within rel_gap. Without any start schedule: on one device
                         the exact search over all schedules (pebbling, docs/pebble.md) for
                         a tenth of the time, at least min(2 s, a quarter of the limit)
                         (done when it proves that nothing
                         fits; its schedule stays unless a stage schedule is as cheap), then
                         budget descent
                         (xe_descent_solve) for up to 60% of the time, then the phases
                         above in what it leaves (the MILP alone when it found nothing;
                         nothing more when it proved that no stage schedule fits). */
    XE_PLAN_LNS,      /* portfolio, then LNS for the whole time (without a start schedule:
                         budget descent first as in auto, and the MILP only when that
                         found nothing) */
    XE_PLAN_MILP,     /* portfolio, then the whole MILP from the best start */
    XE_PLAN_HEURISTIC /* portfolio (and the extra starts) only */
} xe_plan_mode;

/* "auto", "lns", "milp", "heuristic" (static strings); "?" otherwise. */
const char *xe_plan_mode_name(int mode);

/* *mode = the mode named s (names above); 0, or -1 when s names none (*mode untouched). */
int xe_plan_mode_parse(const char *s, xe_plan_mode *mode);

/* One more start candidate: st (not owned; n and ndev of the instance) named name (not
 * owned; the result's name points to it when it is kept, so it must outlive the result:
 * a static string suits). */
typedef struct xe_plan_start {
    const xe_stages *st;
    const char *name;
} xe_plan_start;

/* One phase's row, as `xengine solve` prints it; the strings are static or point into the
 * xe_plan_result being filled (valid until it is cleared). */
typedef struct xe_plan_row {
    const char *method;  /* heuristic row: the portfolio's member ("greedy",
                            "checkpoint-all", "recompute-all"; "greedy" when it found
                            none); "greedy-random" (the portfolio's randomised
                            restarts where its greedy found nothing: "valid" or "no
                            schedule found"); "chain-dp" (docs/chain-dp.md, "In the
                            planner"); "pebbling" (status "valid (outside the stage
                            structure)", "no schedule of any form fits (proven)" or
                            "unknown at its time limit"); "descent"; "lp-bound" (the LP
                            relaxation as a bound, auto and lns: no schedule, the bound
                            of the orders planned in and the best schedule's gap to it;
                            status "LP relaxation X s", or once reordered "LP
                            relaxation, low-peak order: X s; graph order: Y s", each
                            value replaced by why that order has none: "not finished in
                            its share of the time", "model too large", "infeasibility
                            claimed (not trusted)", "solver failed", "interrupted", "not
                            started (under 0.5 s left for it)"; bound and gap NAN when
                            no LP was solved);
                            "lns"; "milp"; "search-order" (the search bound's path
                            without drops adopted: every node once in its order,
                            optimal; docs/lns.md, "Bounds" 6); "search-bound" (the search bound, last:
                            no schedule, its bound holds for every schedule; status
                            "optimum of the relaxed game", "stopped with the planner",
                            "stopped at its memory limit", with its state counts) */
    const char *status;  /* heuristic: "valid" or "no schedule found"; lns: its stop reason
                            ("optimal", "bound reached", "time limit"); descent: "fits
                            the budgets", "still N B over at its worst stage" (the
                            least-overflow incumbent's largest excess of one stage on one
                            device), "no stage schedule
                            fits (proven)", "no start found"; milp: "no answer
                            (solver process ended)" after a CBC failure, "infeasible claimed,
                            refuted (ignored)", "stopped at the time limit (CBC overran it)"
                            when killed, "infeasible claimed, not confirmed (below CBC's
                            byte resolution)" when budgets are too large for CBC to resolve
                            single bytes and xe_descent_confirm_infeasible does not confirm
                            the claim, else xe_milp_status_str */
    double objective;    /* seconds; INFINITY when the phase has no schedule */
    double bound;        /* seconds, not capped at the objective: lns = max(xe_bound_stage,
                            LNS bound), milp = CBC's bound (-INFINITY when unknown); NAN for
                            the heuristic row */
    double gap;          /* (objective - min(bound, objective)) / objective, 0 for a zero
                            objective; NAN when unknown (no bound, no schedule, heuristic);
                            lp-bound and lns "not run": the best schedule's so far */
    double time;         /* wall seconds of the phase (the MILP's also when CBC failed) */
    int milp_status;     /* milp rows (so for the fields below): xe_milp_status as reported (XE_MILP_NO_SOLUTION after a
                            failure or a refuted claim); -1 in the other rows */
    int killed;          /* milp row: CBC stopped by the isolation watchdog */
    int nvars, nints, nrows; /* milp row: model size (0 when unknown) */
    int crashed;         /* milp row: CBC failed (XE_ESOLVER) and the schedule `kept` stays */
    int refuted;         /* milp row: CBC claimed the budget infeasible although the `kept`
                            schedule fits it; the claim was ignored */
    const char *kept;    /* with crashed or refuted: name of the schedule kept, else NULL */
    const char *error;   /* with crashed: CBC's error message, else NULL */
} xe_plan_row;

typedef struct xe_plan_opts {
    int mode;            /* xe_plan_mode (default XE_PLAN_AUTO) */
    double time_limit;   /* wall seconds for the whole call, > 0 (default 60); in heuristic
                            mode (where it may be 0: no limit) it only sets the shares of
                            the exact search, the randomised restarts and the low-peak
                            orders (so how many orders are tried depends on it and on the
                            clock); the portfolio's own time counts, but the portfolio is
                            not interrupted (docs/lns.md) */
    double rel_gap;      /* stop at (objective - bound) / objective <= rel_gap, >= 0 (1e-4) */
    int threads;         /* CBC threads, >= 1 (1) */
    int progress;        /* passed to LNS and MILP: 0 quiet, 1 a line per improvement / per
                            second on stderr, 2 also one per LNS neighbourhood (0) */
    double slice;        /* LNS seconds per neighbourhood, 0: its default (xe_lns_opts) */
    int no_start;        /* 1: the MILP starts from nothing (LNS still uses the start) (0) */
    int knapsack;        /* the knapsack rows (xe_milp_opts.knapsack) in the whole-model
                            MILP phases (auto's final, milp mode): 1 on, 0 off, -1 (the
                            default) on in auto where its final MILP has at least 10 s,
                            else off (docs/lns.md) */
    int no_anneal;       /* 1: never run the event-list local search (xe_anneal,
                            docs/anneal.md) as the last phase, which otherwise runs on one
                            device where the graph's order is far from its best or no stage
                            schedule was found, with XE_PLAN_ANNEAL_SHARE of the limit kept
                            back for it (row "anneal"), then the reach windows on what
                            it found (xe_rwindow_improve, row "reach-window") (0) */
    int no_window;       /* 1: the last phase anneals only, without reach windows (0) */
    int no_dtr;          /* 1: never run DTR (xe_dtr_schedule, docs/dtr.md), which
                            otherwise runs first on graphs of n x n x devices >= 10^6 and
                            last where no phase found a schedule (row "dtr") (0) */
    int no_fit;          /* 1: never run the fit-order phase (xe_order_fit, docs/reorder.md),
                            which otherwise runs first on one device whose budget is below
                            the index order's no-recomputation peak: where some order fits
                            the budget, every node once in it is the result, optimal (row
                            "fit-order"); no_reorder turns it off too (0) */
    int no_pebbling;     /* 1: never run the exact one-device search over all schedules
                            (docs/pebble.md), which otherwise runs, on one device, when the
                            portfolio and the extra starts give no schedule: a tenth of the
                            time left (before budget descent), at least min(2 s, a quarter
                            of the limit), at most what is left of it (0) */
    int no_chain_dp;     /* 1: never run the chain DP (docs/chain-dp.md), which otherwise
                            runs right after the portfolio on one-device training chains of
                            up to 256 nodes (xe_chain_detect) for a quarter of the time
                            left (2 s without a limit; not in feasibility mode once a
                            schedule is in hand); its schedule, turned into stage matrices
                            (xe_stages_from_schedule), replaces the portfolio's when cheaper
                            (row "chain-dp") (0) */
    int no_reorder;      /* 1: never plan in another topological order (docs/reorder.md),
                            which otherwise happens right after the portfolio (and the
                            chain DP) where some device's budget is below the index
                            order's no-recomputation peak and xe_order_low_peak finds an
                            order with a lower one: the portfolio runs again in that order
                            (row "reorder") and, when its schedule is cheaper or the only
                            one, every later phase plans in that order; the result is then
                            an event list in the original node ids (events, reordered = 1)
                            (0) */
    int no_bound_search; /* 1: never run the search bound (xe_bound_search, docs/lns.md
                            "Bounds"), which otherwise runs on one device, on a second
                            thread, from the start of the call until its phases end (or
                            its memory limit), its bound raising the result's wherever
                            higher (row "search-bound"); not in feasibility nor
                            heuristic mode (whose output stays deterministic) (0) */
    int no_reach_bound;  /* 1: on that thread, do not run the reach bound first
                            (xe_bound_reach, docs/lns.md "Bounds" 7; row "reach-bound"),
                            which otherwise has XE_PLAN_REACH_SHARE of the time limit
                            before the search bound, and whose cheapest path, where it
                            ends and is a schedule, becomes the result (name "reach",
                            optimal over every schedule); no_bound_search turns off
                            both (0) */
    size_t bound_search_bytes; /* its memory limit in bytes, 0: a quarter of the physical
                            memory, at most 4 GiB (0) */
    size_t memory_bytes; /* the memory the call may count on, bytes (0: the machine's
                            physical memory). The stage checks hold n x n x D doubles, so
                            a graph with 8 n^2 D above 90% of it is refused at once
                            (XE_ENOMEM, "the dense stage matrices need about ...") instead
                            of being killed by the kernel later (0) */
    int feasibility;     /* 1: stop at the first schedule: no LNS, no MILP when the portfolio
                            or an extra start gave one; else the MILP alone (0) */
    const xe_plan_start *starts; /* extra start candidates, [nstarts], or NULL; one is used
                            when it passes xe_stages_check and is cheaper than the best so
                            far (ties keep the earlier: portfolio first) */
    int nstarts;
    void (*phase)(void *ctx, const char *method); /* optional: called just before the
                            pebbling ("pebbling"), restaging ("restaged"),
                            descent ("descent"), LP bound
                            ("lp-bound"), LNS ("lns") and MILP ("milp") phases start,
                            and ("search-bound") when the search bound's thread is
                            stopped, before its row */
    void (*row)(void *ctx, const xe_plan_row *r); /* optional: called when each phase ends:
                            heuristic (also when it found nothing), descent, lp-bound, lns,
                            milp; not
                            called for a
                            phase that failed with an error */
    void *ctx;           /* passed to phase and row */
    const volatile sig_atomic_t *interrupt; /* optional: when it becomes nonzero (Ctrl-C in
                            `xengine solve`), the call ends as at its time limit: the
                            running LNS, descent or MILP stops at its next check (an
                            isolated CBC solve within 50 ms), no later phase starts (rows
                            "not run (interrupted)"), and the best schedule so far is
                            returned as usual (the exact search stops too, with its
                            cheapest candidate so far), and so does a running portfolio, at
                            its next greedy pass (with what it has; xe_heur_best_intr);
                            the order search of a low-peak order runs to its end (NULL) */
} xe_plan_opts;

typedef struct xe_plan_result {
    xe_stages sol;       /* owned: the best schedule (passed xe_stages_check); zeroed
                            (sol.R == NULL) when none was found or when the best is the
                            pebbling schedule (events) */
    xe_schedule events;  /* owned: the exact search's schedule, outside the stage structure
                            (one device, docs/pebble.md), when it is the best: no stage
                            schedule found, or none as cheap; then name is "pebbling" and
                            objective its cost; or, with reordered, the stage schedule of
                            another order as an event list; else empty (len 0) */
    double events_objective; /* seconds: the cost of events while it is set */
    int reordered;       /* 1 when events is a stage schedule planned in another
                            topological order (docs/reorder.md), mapped back to the
                            original node ids; name is then the phase that found it and
                            bound the lesser of the two orders' stage bounds */
    int search_order;    /* with reordered: 1 when that order is the search bound's path
                            order (docs/lns.md "Bounds" 6), 0 for a low-peak order */
    int64_t peak_index;  /* bytes: the no-recomputation peak in index order, and in the */
    int64_t peak_order;  /* low-peak order found (0 when no order search ran) */
    char reorder_status[96]; /* the reorder row's status */
    char orders_status[96];  /* the orders row's status (further low-peak orders) */
    char restage_status[112]; /* the restaged row's status */
    char bound_search_status[96]; /* the search-bound row's status */
    char reach_bound_status[96];  /* the reach-bound row's status */
    char anneal_status[96];  /* the anneal row's status */
    char window_status[112]; /* the reach-window row's status */
    char dtr_status[160];    /* the dtr row's status (docs/dtr.md) */
    char fit_status[112];    /* the fit-order row's status (docs/reorder.md) */
    int fit_order;           /* 1 when events computes every node once in an order the
                                fit search found within the budget (peak_order its peak):
                                optimal, name "fit-order" */
    char dtr_skip[224];      /* the greedy row's status where the stage phases did not
                                run (their matrices do not fit the memory, or they would
                                outlast the time limit: docs/dtr.md) */
    int dtr_alone;           /* 1 when only DTR ran: the stage matrices do not fit the
                                memory (xe_plan_memory_check; dtr_skip says so) */
    int heur_interrupted; /* 1 when the interrupt stopped the portfolio before its first
                            schedule (its row: "interrupted before a schedule was found") */
    int infeasible_any;  /* 1 when the exact search proved that no schedule of any form fits
                            the budget (infeasible is then 1 too) */
    int blocker;         /* with infeasible_any: a node that cannot be computed; else -1 */
    const char *name;    /* where sol came from: the portfolio's member name, "descent",
                            "lns", "milp", "pebbling" (events), "restaged" or
                            "restaged-lns" (events: the pebbling schedule improved in
                            stage form, locally or by LNS; docs/reorder.md), "anneal"
                            (events: the event-list local search's, docs/anneal.md),
                            "dtr" (events: the eviction heuristic's, docs/dtr.md),
                            or an extra start's name; "none" without schedule */
    double objective;    /* seconds, xe_stages_cost(sol); INFINITY without schedule */
    double bound;        /* seconds: max of xe_bound_stage, LNS's and the MILP's bounds,
                            capped at objective; without schedule the uncapped maximum
                            (INFINITY when a node fits no device); for the pebbling
                            schedule the cost of computing every node once (the stage
                            bounds do not bound schedules outside the stage structure) */
    double gap;          /* (objective - bound) / objective, 0 for a zero objective; NAN
                            without schedule or finite bound */
    double bound_any;    /* seconds: a lower bound on every event list of PROBLEM.md, not
                            only stage schedules: the largest of xe_bound_cheapest, the
                            bottleneck bound (where the exact search ran) and the search
                            bound (one device), capped at objective. Below `bound` where
                            that is a stage bound (eviction, LP, MILP): a schedule outside
                            the stage class may then cost less than `bound`, so "optimal"
                            means optimal among stage schedules (docs/lns.md, "Bounds");
                            its gap is (objective - bound_any) / objective, as gap's */
    int optimal;         /* 1 when gap <= rel_gap */
    int infeasible;      /* 1 when the MILP (or budget descent solving the whole model)
                            proved that no stage schedule fits the budgets, or the exact
                            search that no schedule at all does (infeasible_any) (only when
                            no schedule is in hand: a schedule refutes the claim) */
    int milp_status;     /* the exact phase's status as `solve` writes it ("milp_status"):
                            the MILP's (XE_MILP_NO_SOLUTION after a CBC failure or a refuted
                            claim); with the MILP skipped after LNS, XE_MILP_OPTIMAL when LNS
                            proved its schedule within rel_gap, else XE_MILP_FEASIBLE;
                            -1 when neither ran (heuristic mode, feasibility stop); with
                            reordered, XE_MILP_OPTIMAL only when optimal is 1 (a proof in
                            the low-peak order alone is reported as XE_MILP_FEASIBLE) */
    int milp_killed;     /* the MILP was stopped by the watchdog */
    int milp_crashed;    /* the MILP failed (XE_ESOLVER) with a schedule in hand: kept */
    int milp_refuted;    /* the MILP's infeasibility claim was refuted by the schedule */
    double time_heur;    /* wall seconds of the portfolio */
    double time_best;    /* wall seconds from the call until sol's objective was first in
                            hand (the end of the portfolio for a portfolio or extra start; a
                            later phase that only ties keeps the earlier time) */
    double time_total;   /* wall seconds of the call */
    int ntrace;          /* improvements of the best: trace_t[k] seconds from the call,
                            trace_obj[k] its objective then (the start first; the first 63,
                            then the last) */
    double trace_t[64], trace_obj[64];
    int nrows;           /* rows[] of the phases run, as passed to opts.row */
    xe_plan_row rows[XE_PLAN_MAX_ROWS];
    char descent_status[64]; /* the descent row's status when it gives the overflow left */
    char lp_status[160];     /* the lp-bound row's status */
    char lns_error[320];  /* an LNS phase stopped by CBC failures ("solver failed"): why
                             (its row's error points here; "" when none) */
    char milp_error[512]; /* CBC's message after a failure (rows[k].error points here), also
                             where no schedule was in hand ("" when none failed) */
} xe_plan_result;

/* Defaults above. */
void xe_plan_opts_default(xe_plan_opts *o);

/* The memory guard of xe_plan, for callers that plan many instances of one graph
 * (xengine sweep): XE_OK when the dense stage matrices of in (8 B x n x n x devices,
 * xe_stages_check's doubles) fit in 90% of memory_bytes (0: the machine's physical
 * memory), else XE_ENOMEM with the sizes in err ("60000 nodes on 1 device: the dense
 * stage matrices need about 26.82 GiB ..."). */
int xe_plan_memory_check(const xe_instance *in, size_t memory_bytes, xe_err *err);

/* This machine's physical memory in bytes (sysconf: pages x page size); 0 when unknown.
 * The memory guards of xe_plan and `xengine run` compare with 90% of it. */
double xe_plan_physical_bytes(void);

/* Plans in (budgets as they are) with the strategy of o->mode (docs/lns.md, "Strategy of
 * `xengine solve --method`"). res is filled (initialised by the callee; free it with
 * xe_plan_result_clear, also after an error). Returns XE_OK whenever the strategy ran,
 * with or without a schedule (check res->sol.R, res->infeasible); a MILP failure
 * (XE_ESOLVER) or a MILP infeasibility claim while a schedule is in hand is not an error:
 * the schedule is kept (res->milp_crashed, res->milp_refuted); a MILP failure with none in
 * hand ends the plan without a schedule (res->milp_error says why). Errors: XE_EINVAL (bad
 * options, or an instance xe_instance_validate refuses), XE_ENOMEM; a portfolio failure other than finding nothing ("heuristic
 * failed: ..."), and LNS or MILP errors with their own messages. */
int xe_plan(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, xe_err *err);

/* The name of res's schedule for people: res->name, followed by ", low-peak order" when
 * it was planned in another topological order (res->reordered; docs/reorder.md). A
 * static string or res->name (valid as long as that is). */
const char *xe_plan_name(const xe_plan_result *res);

/* The schedule xe_plan found for in, as events (the form xe_sim_run, xe_exec_run and
 * xe_io_write_schedule take), into *out (initialised by the caller, cleared first; the
 * caller owns it): res->events when set, else res->sol converted (xe_stages_to_schedule).
 * res is not changed. Errors: XE_EINFEASIBLE (no schedule: res->infeasible or a limit
 * before any was found; out stays empty), XE_ENOMEM. */
int xe_plan_result_schedule(const xe_instance *in, const xe_plan_result *res, xe_schedule *out, xe_err *err);

/* Frees what res owns (res->sol's matrices and res->events) and zeroes res; safe on a
 * zeroed or already cleared result. */
void xe_plan_result_clear(xe_plan_result *res);

#ifdef __cplusplus
}
#endif

#endif
