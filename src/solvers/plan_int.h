/* Internal interface of the planner (src/solvers/plan*.c): the phases of xe_plan
 * (include/xengine/plan.h; docs/lns.md "Strategy of `xengine solve --method`"), their
 * shares of the time limit, and the helpers that record rows and the trace. Not part of
 * the public API. Times are seconds (wall clock, xe_now), costs seconds of one step.
 *
 *   plan.c         xe_plan: the order of the phases and the result
 *   plan_util.c    options, names, rows, trace, time left
 *   plan_milp.c    the whole MILP as a phase; the LP relaxation as a bound
 *   plan_search.c  the exact search (pebbling) and the chain DP as phases
 *   plan_order.c   low-peak topological orders (docs/reorder.md)
 *   plan_restage.c the exact search's schedules restaged and improved (docs/reorder.md)
 *   plan_anneal.c  the event-list local search as the last phase (docs/anneal.md) */
#ifndef XENGINE_SOLVERS_PLAN_INT_H
#define XENGINE_SOLVERS_PLAN_INT_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "xengine/milp.h"
#include "xengine/plan.h"
#include "xengine/solvers.h"

/* Above this many binary MILP columns auto gives LNS all the time (docs/lns.md). */
#define XE_PLAN_MILP_MAX_BINARIES 40000
/* A solver phase whose limit (after its process's grace, xe_milp_limit_within) would be
 * shorter than this is not started: it could do nothing useful in it. */
#define XE_PLAN_MIN_PHASE 0.05

/* The LP relaxation as a bound (docs/lns.md, "Bounds", 2; row `lp-bound`): on models of
 * at most XE_PLAN_LP_MAX_BINARIES binary columns (xe_milp_binary_estimate), where Clp
 * solves it in 0.2-3 s here (random_layered_n100 one GPU 1 s, FCN-8 on two devices 2.7 s;
 * MobileNet one GPU, 34,410 columns, 19 s), each order's with XE_PLAN_LP_SHARE of the
 * time left. */
#define XE_PLAN_LP_MAX_BINARIES 20000
#define XE_PLAN_LP_SHARE 0.1
/* auto's final MILP carries the knapsack rows by default (xe_plan_opts.knapsack -1) only
 * with at least this many seconds: their larger model needs them for its root (VGG16 on
 * two devices at 70%, `--time-limit` 6, 10, 15, 15 again, 20: final MILP 2.3, 3, 5.4,
 * 5.7, 6.4 s; gap with them: killed in the root, 0.600%, 0.530%, killed, 0.360%; without
 * 0.600%, 0.555%, 0.555%, 0.555%, 0.555%). The default 60 s gives it about 23 s. */
#define XE_PLAN_KNAPSACK_MIN_S 10.0

/* An LP with less than this (its process's grace deducted) is not started: on the
 * shared graphs it needs 0.2-3 s, so a shorter share is mostly spent for nothing (a
 * 5-s limit gives random_layered_n100 0.45 s for an LP of 0.8 s). */
#define XE_PLAN_LP_MIN_S 0.5

/* The exact search's share of the time when other phases follow (docs/pebble.md), and
 * its least time where the limit has (nearly) passed. */
#define XE_PLAN_PEBBLE_SHARE 0.1
#define XE_PLAN_PEBBLE_MIN_S 2.0
#define XE_PLAN_PEBBLE_DEFAULT_S 10.0 /* heuristic mode without a time limit */
/* The exact search runs as a competitor to an unproven stage schedule (plan.c, 1a') only
 * where the low-peak order search found a peak below this fraction of the graph order's:
 * random_layered_n100 0.916, n250 0.784, where the file order is far from the best; not
 * GoogLeNet (0.999), where its schedule won by 0.15% but with the bottleneck bound its
 * gap grew (0.24% -> 0.60% with a 2-s limit) and LNS lost its time. */
#define XE_PLAN_COMPETITOR_PEAK 0.95
/* plan_util.c: 1 when the order search found a peak below XE_PLAN_COMPETITOR_PEAK of the
 * graph order's: the file order is far from its best, so schedules outside its stage
 * class matter (the exact search's competitor run, the anneal). */
int xe_plan_order_far(const xe_plan_result *res);
/* The bottleneck bound of the exact search's schedule (xe_bound_bottleneck), after the
 * search: at most this long, or what is left of the limit (at least 0.02 s). Its nodes
 * are taken by what they can add, so the bound is in hand early: random_layered_n250 at
 * 60% has its final value after 0.02 s of the 0.64 s the whole pass takes. */
#define XE_PLAN_BOTTLENECK_S 0.25

/* The chain DP (docs/chain-dp.md) runs on one-device training chains of up to this many
 * nodes, with a quarter of the time left (XE_PLAN_CHAIN_DP_SHARE; its time grows steeply
 * past 200 nodes: 0.4-0.7 s at 200, 16-38 s at 256 on the chains measured there) */
#define XE_PLAN_CHAIN_DP_MAX_NODES 256
#define XE_PLAN_CHAIN_DP_SHARE 0.25
#define XE_PLAN_CHAIN_DP_DEFAULT_S 2.0 /* without a time limit */

/* Low-peak orders (docs/reorder.md): the first orders' share of the time left where the
 * graph order has a schedule (XE_PLAN_REORDER_DEFAULT_S without a limit), and the time
 * of further orders without a limit where no order has one (plan_order.c). */
#define XE_PLAN_REORDER_SHARE 0.05
#define XE_PLAN_REORDER_DEFAULT_S 1.0
#define XE_PLAN_MORE_ORDERS_DEFAULT_S 5.0

/* Why xe_plan_lp_bound has no bound (the words: xe_plan_lp_words). */
enum { LP_SOLVED, LP_TIMEOUT, LP_TOO_LARGE, LP_INFEASIBLE, LP_FAILED, LP_INTERRUPTED, LP_NO_TIME };

/* plan_util.c */
/* (objective - bound) / objective, 0 for a zero objective, NAN when unknown. */
double xe_plan_rel_gap(double objective, double bound);
/* Records a new best (t seconds from the call, objective obj) in res's trace. */
void xe_plan_trace(xe_plan_result *res, double t, double obj);
/* 1 once the call was interrupted (xe_plan_opts.interrupt): no phase starts after. */
int xe_plan_stopped(const xe_plan_opts *o);
/* res->events (set by the caller) is a stage schedule of another topological order as an
 * event list in the original node ids, costing `cost` seconds: its objective, its bound
 * (the lesser of `bound`, which must cover the stage classes of every order involved, and
 * cost), gap and optimality; a proof by LNS or the MILP, valid in one order, no longer
 * makes milp_status optimal (docs/reorder.md). */
void xe_plan_set_reordered(xe_plan_result *res, const xe_plan_opts *o, double cost, double bound);
/* 1 once the time limit has passed or the call was interrupted (no later phase starts). */
int xe_plan_passed(const xe_plan_opts *o, double t_start);
/* Seconds left of the call's time limit (negative once passed; 0 once interrupted). */
double xe_plan_time_left(const xe_plan_opts *o, double t_start);
/* A phase's seconds: frac of the time left (default_s without a limit), at least
 * min(XE_PLAN_PEBBLE_MIN_S, a quarter of the limit), at most what is left, at least
 * least_s: the exact search and further orders (XE_PLAN_PEBBLE_SHARE, 0.01 s), the
 * first low-peak orders (XE_PLAN_REORDER_SHARE, 0: none once the limit has passed). */
double xe_plan_share(const xe_plan_opts *o, double t_start, double frac, double default_s, double least_s);
/* Appends row r to res (up to XE_PLAN_MAX_ROWS) and passes it to o->row. */
void xe_plan_emit(const xe_plan_opts *o, xe_plan_result *res, const xe_plan_row *r);
/* The row of a phase not started (time limit or interrupt), with the bound and gap known. */
void xe_plan_emit_not_run(const xe_plan_opts *o, xe_plan_result *res, const char *method, double bound, double gap);
/* The row of a heuristic phase: no bound or gap; objective INFINITY for none. */
void xe_plan_emit_heur(const xe_plan_opts *o, xe_plan_result *res, const char *method, const char *status,
                       double objective, double seconds);

/* plan_dtr.c: the eviction heuristic (docs/dtr.md) as a phase */
/* Graphs with at least this many stage-matrix cells (n x n x devices) get the eviction
 * schedule first, before the stage portfolio: a greedy pass there takes 0.4 s (1,000
 * nodes, one device) to seconds, the eviction heuristic milliseconds. */
#define XE_PLAN_DTR_MIN_CELLS 1e6
/* The portfolio's length in greedy passes (xe_heur_pass_seconds; its variants, pins and
 * final checks: 10-26 passes measured on 1,000- and 10,000-node chains): with the DTR
 * schedule in hand, no stage phase starts where the portfolio would take longer than the
 * time left. */
#define XE_PLAN_PORTFOLIO_PASSES 10.0
/* LNS's set-up in greedy passes of work (xe_heur_pass_work): 6.5 s on a 10,000-node chain
 * on gpu+cpu, about three 2-s passes, with a margin; LNS does not start with less time
 * left than that. */
#define XE_PLAN_LNS_SETUP_PASSES 4.0
/* The work after the phases (the result's event list, its replay, the final bounds) in
 * greedy passes: kept back from the limit on large graphs (xe_plan). */
#define XE_PLAN_FINISH_PASSES 1.5
/* Passes of the low-peak order search for DTR's second order. */
#define XE_PLAN_DTR_ORDER_PASSES 64
/* Seconds the phase may take at most (it takes milliseconds where it succeeds). */
#define XE_PLAN_DTR_S 1.0
/* 1 when in is that large. */
int xe_plan_dtr_big(const xe_instance *in);
/* The DTR schedule (xe_dtr_schedule, parking on the other devices) on each device that
 * can run every node, in the index order and in the best low-peak list-scheduling order
 * of up to XE_PLAN_DTR_ORDER_PASSES passes (xe_order_low_peak, a quarter of the time), for
 * at most `seconds` (XE_HEUR_GRACE_S more until one is found): the cheapest into *ev
 * (replaced; caller-owned), its cost into *ev_cost (INFINITY for none) and the seconds
 * from t_start into *t_ev, traced. Emits row "dtr" (status in res->dtr_status). Returns
 * XE_OK whether or not it found one; XE_ENOMEM, or XE_EINTERNAL where the simulator
 * disagrees, with err set. */
int xe_plan_dtr_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                      double seconds, xe_schedule *ev, double *ev_cost, double *t_ev, xe_err *err);

/* Where the stage matrices do not fit this machine's memory (err holds
 * xe_plan_memory_check's message): DTR alone for the time limit (XE_PLAN_DTR_ALONE_S
 * without one), a row "greedy" saying why the stage phases did not run, then row "dtr".
 * res->dtr_alone set. XE_OK with res->events, name "dtr", its bound the bound over every
 * schedule that needs no stage matrices (xe_bound_cheapest); where DTR finds none, XE_OK
 * with no schedule (name "none": its reason in res->dtr_status); XE_ENOMEM. */
#define XE_PLAN_DTR_ALONE_S 60.0
int xe_plan_dtr_only(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start, xe_err *err);
/* The DTR schedule *ev (moved out; cost seconds, in hand t_ev seconds after the start)
 * becomes res's result, named `name` ("dtr", or "fit-order" for xe_plan_fit_phase's), in place of any stage schedule or event list; its
 * bound is left -INFINITY and its gap NAN for the caller (the stage bounds do not hold
 * outside the stage class), and the stage-class flags (reordered, search order,
 * infeasible, optimal) are cleared. */
void xe_plan_take_dtr(xe_plan_result *res, xe_schedule *ev, double cost, double t_ev, const char *name);

/* plan_fit.c: the fit-order phase (docs/reorder.md, "Fitting an order to a budget") */
/* Seconds it may take: at most this, and a tenth of the limit (on graphs that get DTR
 * first a quarter, half where DTR found nothing); it answers in milliseconds where an
 * order fits near the shared graphs' least peaks, 0.01-0.02 s on a 1,000-node layered DAG
 * at 60% (0.3 s before its lookahead), 0.3 s at 57%. */
#define XE_PLAN_FIT_S 0.1
#define XE_PLAN_FIT_BIG_S 0.5
/* on those graphs where DTR found nothing, XE_PLAN_FIT_NODTR_PER_1K_S per 1,000 nodes, at
 * most XE_PLAN_FIT_NODTR_S (and half the limit): the order may be the only schedule there
 * (a generated 5,000-node layered DAG at 60% on one GPU: DTR thrashing, the stage phases
 * finding nothing in 10 s, the annealing over orders an order in 0.04 s), while where
 * none is found the exact search's first schedule waits for it (a 1,000-node DAG below
 * its least peak: 1 s later) */
#define XE_PLAN_FIT_NODTR_PER_1K_S 1.0
#define XE_PLAN_FIT_NODTR_S 2.0
/* The device on which every node once costs the bound over every schedule
 * (xe_bound_cheapest: it runs every node at its cheapest), the lowest such index; -1 for
 * none. */
int xe_plan_fit_device(const xe_instance *in);
/* The device the phase plans on, where it applies: xe_plan_fit_device's, whose budget is
 * below the index order's no-recomputation peak, reordering allowed, not in feasibility
 * mode, not stopped; -1 where it does not apply. */
int xe_plan_fit_target(const xe_instance *in, const xe_plan_opts *o);
/* Every node computed once in `order` (a topological order of in's n nodes) on device dev,
 * each output freed after its last reader: xe_dtr_schedule in that order, which evicts
 * nothing where the order's no-recomputation peak fits dev's budget (the simulator
 * replays it). *s (caller-initialised) receives the events, *cost their seconds. XE_OK;
 * XE_EINFEASIBLE where the order does not fit (DTR recomputed, or found nothing within
 * the budget); XE_ENOMEM and DTR's other codes, err set. The fit-order phase's and the
 * search bound's late path's schedule. */
int xe_plan_once_in_order(const xe_instance *in, int dev, const int *order, xe_schedule *s, double *cost, xe_err *err);
/* The second try (plan.c, phase 1f): where the first was cut and the schedule in hand
 * is not within the gap of every node once, the annealing again for 10% of the time
 * left, at most 2 s, not under 0.2 s: a generated 400-node DAG (`python3
 * tools/layered_dag.py 400 --seed 5`) at 65% on one GPU, where the first try's 0.1 s is
 * not enough and the annealing alone finds an order in 0.18 s, ended at 279.7 s (gap
 * 30.8%) after a 10-s solve, every node once being 193.7 s. */
#define XE_PLAN_FIT_LATE_S 2.0
#define XE_PLAN_FIT_LATE_FRAC 0.1
#define XE_PLAN_FIT_LATE_MIN_S 0.2
#define XE_PLAN_FIT_LATE_SEED 2
/* xe_order_fit_within at device dev's budget (xe_plan_fit_target) for `seconds` (the
 * fit search, then annealing over orders): where an order fits, every node computed once
 * in it on dev (xe_plan_once_in_order) replaces the schedule in hand *ev (its old events
 * cleared; caller-owned), its cost *ev_cost and its time from t_start *t_ev, traced;
 * res->peak_order its peak. Where none is found all three are left as they were.
 * Emits row "fit-order" (status in res->fit_status). With `late`, the annealing alone
 * (xe_order_anneal from the index order, seed XE_PLAN_FIT_LATE_SEED): the planner's
 * second try, once a schedule is in hand. Returns 1 when it found one, 0 when no order
 * fits (proven), 2 when none was found in time; XE_ENOMEM, or XE_EINTERNAL where the
 * order does not replay within the budget. */
int xe_plan_fit_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start, int dev,
                      double seconds, int late, xe_schedule *ev, double *ev_cost, double *t_ev, xe_err *err);

/* plan_milp.c (each function's full contract is at its definition) */
int xe_plan_milp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, const char *method,
                       const xe_stages *start, double limit, double t_start, double lb_other, xe_milp_result *mr,
                       double *t0, xe_err *err);
void xe_plan_take_milp(xe_plan_result *res, xe_milp_result *m, const char *name, double t0, const xe_stages **best,
                       double *best_cost);
const char *xe_plan_lp_words(char *buf, size_t cap, double lp, int why);
int xe_plan_lp_bound(const xe_instance *in, int64_t est, const xe_plan_opts *o, double limit, double *lp, int *why,
                     xe_err *err);

/* plan_bound.c: the search bound (xe_bound_search) on a second thread, started when
 * the call starts and stopped when its phases end (one device; not in feasibility or
 * heuristic mode nor with o->no_bound_search): on a machine with a core to spare it
 * costs the phases no time; it checks the stop flag at every state, so the call ends
 * at most a state's expansion later. (At idle priority, SCHED_IDLE, it could not get
 * the CPU to see the flag on a busy machine: `test_plan` overran its 0.15-s slack.) */
#define XE_PLAN_BOUND_SEARCH_BYTES ((size_t)4 << 30) /* its states at most: the default is a quarter
                                                        of the physical memory, at most this */
#define XE_PLAN_BOUND_WAIT_S 0.02 /* seconds xe_plan_bound_start waits for the search to end */
typedef struct xe_plan_bound {
    xe_rsearch *reach;          /* the reach bound (xe_rsearch_new), run first */
    double reach_until;         /* when the thread stops it for the search bound */
    double reach_bound;         /* seconds, once reach_done */
    xe_bound_search_stats rst;
    int reach_done;             /* it has returned (under lock): the caller may read it */
    int reach_by_planner;       /* it was stopped by the planner's flag, not its share */
    int reach_asked;            /* xe_plan_reach_take has looked at its end */
    xe_schedule reach_sched;    /* its path as a schedule (empty: none), reach_cost seconds */
    double reach_cost, reach_build_s;
    int reach_taken;            /* the result took it */
    xe_bsearch *search;         /* allocated by the calling thread (xe_bsearch_new) */
    int search_ran;             /* search was allocated: its row is emitted */
    pthread_t thread;
    int running;
    pthread_mutex_t lock;       /* with started: the thread is running before the call */
    pthread_cond_t cond;        /* goes on (and may fork) */
    int started;
    volatile sig_atomic_t stop; /* set by xe_plan_bound_finish */
    double deadline;            /* the call's time limit (xe_now() seconds; 0: none) */
    double bound;               /* seconds, once joined */
    xe_bound_search_stats st;
    int done;                   /* the thread has returned (under lock) */
    int path_asked;             /* xe_plan_bound_order has looked at its path */
} xe_plan_bound;
/* The reach search's share of the thread's time (the search bound has the rest): half the
 * time limit, XE_PLAN_REACH_DEFAULT_S without one. Memory: each search gets half the
 * thread's limit. */
#define XE_PLAN_REACH_SHARE 0.5
#define XE_PLAN_REACH_DEFAULT_S 30.0
/* Starts the thread where it applies (b->running = 1) and waits until it has ended or
 * XE_PLAN_BOUND_WAIT_S has passed, so that a search that ends at once (small instances)
 * is seen by every phase on every run; b must stay in place until xe_plan_bound_finish.
 * Not started (no row, no bound) when it does not apply or pthread_create fails. */
void xe_plan_bound_start(xe_plan_bound *b, const xe_instance *in, const xe_plan_opts *o, double t_start);
/* Stops and joins the thread, emits row "search-bound" (status in
 * res->bound_search_status) and returns its bound in seconds (a bound on every
 * schedule); -INFINITY when it did not run or found no finite bound. */
double xe_plan_bound_finish(xe_plan_bound *b, const xe_plan_opts *o, xe_plan_result *res);
/* Without waiting: where the reach search has ended exact with a schedule (every node an
 * ancestor of its target) costing less than `incumbent` (seconds), 1; with `take`, that
 * schedule then becomes the result (name "reach", optimal over every schedule, row
 * "reach"), the caller's stage schedule in hand being dropped as any event list's is. 0
 * otherwise (not ended, not exact, no schedule, not cheaper, taken before); XE_ENOMEM
 * (negative). The check points between phases call it without `take` to stop early;
 * after the phases it is called with `take`. */
/* xe_plan_reach_take without taking, for xe_lns_opts.beaten_fn (ctx: the xe_plan_bound,
 * or NULL: 0). */
int xe_plan_reach_beats(void *ctx, double incumbent);
int xe_plan_reach_take(const xe_plan_opts *o, xe_plan_result *res, double t_start,
                       xe_plan_bound *b, double incumbent, int take, xe_err *err);
/* Without waiting: 1 when the thread has returned having reached every node and the
 * relaxed game's cheapest path has no drops (xe_bsearch_path): order[n] (caller-owned)
 * then holds the path's order, in which every node computed once fits the budget (an
 * optimal schedule: it costs the bound); 2 when that path has drops (order[n] its order
 * of first computes, a stage order whose class holds schedules that follow the path). 0
 * otherwise: still running, not exact, not started, or asked before (it answers once).
 * XE_ENOMEM (negative). */
int xe_plan_bound_order(xe_plan_bound *b, int *order);
/* Without waiting: the best bound over every schedule the thread has finished (seconds):
 * the reach bound once it has ended, the search bound once the thread has returned, the
 * larger where both; -INFINITY before either or without a finite one. */
double xe_plan_bound_ended(xe_plan_bound *b);
/* xe_plan_bound_ended for xe_lns_opts.bound_fn (ctx: the xe_plan_bound, or NULL: none). */
double xe_plan_bound_fn(void *ctx);
/* Without waiting: 1 when xe_plan_bound_ended proves a schedule of `incumbent` seconds
 * optimal within rel_gap (xe_plan_rel_gap), so no later phase can gain; 0 otherwise. */
int xe_plan_bound_proves(xe_plan_bound *b, double incumbent, double rel_gap);
/* plan.c's use of it at the phases' boundaries (plan_order.c): where the path has no
 * drops and *best_cost is above every node once, the planner adopts that order
 * (xe_plan_adopt_order) with every node once as its schedule (checkpoint-all of *in2,
 * the instance relabelled in it, which replaces any low-peak order's; perm[n] its
 * order), emits row "search-order" and returns 1: nothing can beat it. Where the path
 * has drops, the portfolio (without diversification) runs in the path's order for at
 * most XE_PLAN_SEARCH_ORDER_S; a schedule cheaper than *best_cost is adopted the same
 * way (the later phases plan in that order) and 0 returned, as when not; row
 * "search-order" either way. Negative XE_E* with err set. */
#define XE_PLAN_SEARCH_ORDER_S 1.0
int xe_plan_search_order(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                         xe_plan_bound *bs, xe_instance **in2, int *perm, xe_stages *heur2, const xe_instance **cur,
                         const xe_stages **best, double *best_cost, double *lb, double *lb_index, xe_err *err);
/* The same path after the phases (plan.c, before the anneal and again before the search
 * bound's row): where the thread has ended since the last boundary, reached every node
 * and its cheapest path has no drops, and the result in hand (res, in in's node ids)
 * costs more than every node once or there is none, every node once in the path's order
 * (xe_plan_once_in_order: the order fits the budget) becomes
 * the result (xe_plan_take_dtr, name "search-order", reordered and search_order set),
 * optimal over every schedule; row "search-order". Before 2026-12-05 a path reached
 * after the last boundary was not used (a 1,000-node DAG with --no-fit-order: the thread
 * ended at 9.1 s of 10 and the dearer schedule was written). Returns 1 when adopted, 0
 * when not (also with o->no_reorder), a negative XE_E* code with err set. */
int xe_plan_search_late(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                        xe_plan_bound *bs, xe_err *err);

/* The event-list local search's share of the limit, kept back from the phases before it
 * (docs/anneal.md, "In the planner"), and its time without a limit (heuristic mode). */
#define XE_PLAN_ANNEAL_SHARE 0.15
/* The same where the reach windows follow the anneal (not in heuristic mode nor with
 * no_window): they need the time (random_layered_n250 one GPU at 60%, 60-s solves: 188.720
 * s with 0.15 and the first version of the windows, plain A*; 145.100 s with 0.5 and the
 * windows as they are). */
#define XE_PLAN_WINDOW_SHARE 0.5
#define XE_PLAN_ANNEAL_DEFAULT_S 2.0
/* Its rounds in heuristic mode (deterministic where they finish within its time). */
#define XE_PLAN_ANNEAL_HEURISTIC_ROUNDS 8
/* The share of that phase's time the reach windows get, after the annealing
 * (docs/lns.md, "Reach windows"; not in heuristic mode, whose result depends on no
 * clock). */
#define XE_PLAN_WINDOW_PART 0.67

/* The share of the memory (xe_plan_opts.memory_bytes, else the physical memory) that the
 * dense stage matrices may take before xe_plan refuses the graph. A 20,000-node chain
 * peaks at 2.9 GB resident on one device, 6.4 GB on two (8 B x n x n x devices: the
 * stage check's doubles; README "Status"). */
#define XE_PLAN_MEMORY_SHARE 0.9

/* plan_anneal.c: the seconds to keep back for the anneal (0: it does not run): one
 * device, not milp nor feasibility, and either a graph whose file order is far from its
 * best (XE_PLAN_COMPETITOR_PEAK) or no stage schedule found (stage_found 0). */
double xe_plan_anneal_share(const xe_instance *in, const xe_plan_opts *o, const xe_plan_result *res, int stage_found);
/* Anneals the schedule in hand (res->events, else res->sol in in's ids) for `seconds`
 * (row "anneal"), given bound_any, the bound over every schedule known so far (seconds):
 * it stops once its schedule meets that within rel_gap, and a cheaper result replaces the
 * one in hand as res->events (name "anneal", bound bound_any: only bounds over every
 * schedule hold for it). Then, for XE_PLAN_WINDOW_PART of the time (not in heuristic
 * mode nor with o->no_window), the reach windows on the cheaper of the two (row
 * "reach-window", name "reach-window" where cheaper). Skipped under XE_PLAN_MIN_PHASE,
 * once interrupted, without a schedule, or where the schedule in hand meets bound_any
 * within rel_gap already. XE_ENOMEM, XE_EINTERNAL. */
int xe_plan_anneal_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                         double seconds, double bound_any, xe_err *err);

/* plan_search.c */
int xe_plan_pebble_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                         double t_start, double *lb_any, double *t_best, xe_err *err);
int xe_plan_chain_dp_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                           xe_stages *dp, const xe_stages **best, double *best_cost, xe_err *err);

/* plan_restage.c: the exact search's schedules restaged and improved (docs/reorder.md,
 * "Restaging") */
/* The exact search's refinement of each candidate (xe_pebble_set_refine; ctx: an
 * xe_plan_refine): restaged, improved locally for ctx->seconds (XE_PLAN_REFINE_S) and,
 * where that is cheaper, mapped back and replayed by the simulator on in, *s replaced; a
 * candidate that does not restage stays as it is. Returns the cost of *s then, or
 * XE_ENOMEM / XE_EINTERNAL (the simulator rejected the mapped-back schedule: a bug) with
 * ctx->err set. */
#define XE_PLAN_REFINE_S 0.25
typedef struct xe_plan_refine {
    double seconds;
    xe_err err;
} xe_plan_refine;
double xe_plan_refine_events(void *ctx, const xe_instance *in, xe_schedule *s, double cost);

/* The row `restaged` (auto and lns: LNS for XE_PLAN_RESTAGE_SHARE of the time left; every
 * mode but feasibility: the local improvement for XE_PLAN_RESTAGE_IMPROVE_SHARE of it, at
 * most XE_PLAN_RESTAGE_IMPROVE_MAX_S, 0.4 s on a 300-node DAG restaged to 660 nodes). */
#define XE_PLAN_RESTAGE_SHARE 0.5
#define XE_PLAN_RESTAGE_IMPROVE_SHARE 0.1
#define XE_PLAN_RESTAGE_IMPROVE_MAX_S 1.0
/* res->events holds the exact search's schedule (one device), cheaper than any stage
 * schedule in hand: restages it (xe_instance_restage), improves the stage form locally
 * (xe_heur_improve, up to improve_s seconds), then, with lns_s > 0, runs LNS from it for
 * lns_s seconds (bound lb_any, which holds for every schedule); each time that is
 * cheaper, the schedule mapped back to in's node ids and replayed by the simulator on in
 * replaces res->events (events_objective, *name = "restaged" or "restaged-lns",
 * *t_events = seconds from t_start until it was found, the trace extended). Emits the
 * row "restaged" (status in res->restage_status: the stage count and what gained, or
 * "not restaged: why" when the restaging failed: the search's schedule then stays).
 * Returns XE_OK, or XE_ENOMEM / XE_EINTERNAL (a restaged schedule the simulator rejects:
 * a bug) with err set. */
int xe_plan_restage_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, xe_plan_bound *bs,
                          double improve_s, double lns_s, double t_start, double lb_any, double *t_events,
                          const char **name, xe_err *err);

/* plan_order.c */
double xe_plan_reorder_margin(const xe_plan_opts *o);
/* A low-peak order's schedule cheaper than the graph order's, but not by the margin that
 * makes the later phases plan in it (xe_plan_reorder_phase): kept aside as an event list
 * in the original node ids, and returned when nothing later beats it. */
typedef struct xe_plan_aside {
    xe_schedule events; /* owned; len 0: none */
    double cost;        /* seconds (INFINITY: none) */
    double bound;       /* seconds: xe_bound_stage of that order's instance */
    const char *which;  /* the portfolio member that found it */
    int64_t peak;       /* bytes: that order's no-recomputation peak */
} xe_plan_aside;
int xe_plan_reorder_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double h_deadline,
                          double seconds, double t_portfolio, double best_cost, xe_instance **in2, int *perm,
                          xe_stages *heur2, const char **which2, xe_plan_aside *aside, xe_err *err);
int xe_plan_more_orders(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                        xe_instance **in2, int *perm, xe_stages *heur2, const char **which2, xe_err *err);
void xe_plan_adopt_order(const xe_instance *in2, const xe_stages *st, const char *name, double t_start,
                         xe_plan_result *res, const xe_instance **cur, const xe_stages **best, double *best_cost,
                         double *lb, double *lb_index);

#endif
