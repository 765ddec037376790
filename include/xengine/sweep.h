/* xengine — budget sweeps and maximum batch: the planner against the baselines.
 *
 * For one instance (one budget of the swept device), xe_sweep_point plans one training
 * step with each of five methods and replays every schedule in the simulator:
 *
 *   planner         the library's strategy, xe_plan in auto mode (include/xengine/plan.h,
 *                   as `xengine solve --method auto`): the heuristic portfolio
 *                   (xe_heur_best) and the four baselines below (extra starts) give the
 *                   cheapest start, then as xe_plan's auto mode (include/xengine/plan.h:
 *                   large-neighbourhood search for 60% of the limit, the MILP from
 *                   the incumbent for the rest); lower bound = max(xe_bound_stage,
 *                   LNS's and the MILP's bounds);
 *   gpu-only        everything on the GPU (xe_one_device);
 *   cpu-only        everything on the CPU (xe_one_device);
 *   checkpoint-all  every node once on the GPU, kept while it has users
 *                   (xe_heur_checkpoint_all; Checkmate's "checkpoint all" baseline);
 *   chen-sqrt       Chen et al.'s sqrt(n) segments on the GPU (xe_chen_sqrt).
 *
 * The planner's start includes the baselines' schedules, so by construction it is never
 * worse than any of them at the same budgets. xe_sweep_max_batch searches the largest
 * batch at which one method finds a schedule, as in Checkmate's maximum-batch table
 * (Jain et al., MLSys 2020, table 2). docs/sweep.md describes the command built on this. */
#ifndef XENGINE_SWEEP_H
#define XENGINE_SWEEP_H

#include <stdint.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XE_SWEEP_PLANNER = 0,
    XE_SWEEP_GPU_ONLY,
    XE_SWEEP_CPU_ONLY,
    XE_SWEEP_CHECKPOINT_ALL,
    XE_SWEEP_CHEN_SQRT,
    XE_SWEEP_NMETHODS
} xe_sweep_method;

/* "planner", "gpu-only", "cpu-only", "checkpoint-all", "chen-sqrt" (static strings);
 * "?" for anything else. */
const char *xe_sweep_method_name(int m);

typedef enum {
    XE_SWEEP_FOUND = 0,    /* a schedule, validated by the simulator */
    XE_SWEEP_NONE = 1,     /* the method found none (for the planner: none within its
                              time, none proven impossible either) */
    XE_SWEEP_PROVEN = 2,   /* planner: no schedule exists (a node fits no device with its
                              inputs, or the MILP proved the stage class infeasible) */
    XE_SWEEP_NA = 3        /* the method needs a device kind the instance lacks */
} xe_sweep_status;

typedef struct xe_sweep_cell {
    int status;          /* xe_sweep_status */
    double cost;         /* seconds: the simulator's total_time; INFINITY without schedule */
    double bound;        /* planner: a lower bound on every stage schedule's cost, seconds
                            (<= cost); NAN for the baselines */
    int64_t peak;        /* bytes: the schedule's peak on the swept device (0 without) */
    int recomputes;      /* compute events of nodes computed before */
    int copies;          /* copy events */
    double time;         /* wall seconds this method took */
    const char *which;   /* planner: where its schedule came from ("lns", "milp",
                            "greedy", "checkpoint-all", "recompute-all", "pebbling" (one
                            device, outside the stage structure: docs/pebble.md), one of
                            these followed by ", low-peak order" (planned in another
                            topological order: docs/reorder.md), a baseline name, or
                            "carried": opts.seed or opts.seed_events); static, "" without
                            schedule */
    int outside_stages;  /* 1: the schedule is not a stage schedule of the graph's order
                            (pebbling, or a low-peak order), so the stage bounds of other
                            budgets do not bound it; bound is its own */
} xe_sweep_cell;

typedef struct xe_sweep_opts {
    double time_limit;   /* planner: wall seconds for LNS + MILP per point, >= 0; 0 keeps
                            the portfolio's and baselines' best (default 10) */
    int threads;         /* CBC threads (default 1) */
    int gpu, cpu;        /* device indices of the GPU and CPU methods, -1: none; set by
                            xe_sweep_opts_default from in (first device of each kind) */
    int swept;           /* device whose peak cells report (default: gpu, else 0) */
    int planner;         /* 0: skip the planner (its cell is XE_SWEEP_NA) (default 1) */
    int only;            /* a baseline's method index: run that baseline alone, the other
                            baselines' cells XE_SWEEP_NA (the largest-batch search probes one
                            method at a time); -1: every method (default -1) */
    int feasibility;     /* 1: the planner stops at its first schedule (no LNS, the MILP
                            only when nothing else found one) (default 0) */
    const xe_stages *seed; /* planner: one more start, e.g. its schedule at a smaller budget
                            of the swept device (valid at a larger one too: the sweep then
                            never gets worse as the budget grows); used only when it passes
                            xe_stages_check here; its cell says "carried" when kept (NULL) */
    xe_stages *keep;     /* planner: receives a copy of its schedule when it finds one
                            and it is a stage schedule of the graph's order (cleared first;
                            zero-initialised by the caller, who frees it with
                            xe_stages_clear); cleared when the kept schedule is an event
                            list; untouched without schedule (NULL) */
    const xe_schedule *seed_events; /* planner: an event list valid here (e.g. its kept
                            schedule outside the stage structure at a smaller budget of the
                            swept device), costing seed_events_cost seconds; kept ("carried",
                            its bound the every-node-once bound or the planner's own bound
                            over every schedule) when the planner finds nothing cheaper; it
                            is replayed by the simulator first, and a rejection (a bug: the
                            budgets only grow) is an error, XE_EINTERNAL (NULL) */
    double seed_events_cost;
    xe_schedule *keep_events; /* planner: receives a copy of its schedule when it finds one
                            outside the stage structure (the exact search's, restaged or
                            not, or another order's, as an event list; cleared first;
                            zero-initialised by the caller, who frees it with
                            xe_schedule_clear), with its cost in *keep_events_cost; cleared
                            when the kept schedule is a stage schedule; untouched without
                            schedule (NULL) */
    double *keep_events_cost;
} xe_sweep_opts;

/* Defaults above, with the devices of in. */
void xe_sweep_opts_default(const xe_instance *in, xe_sweep_opts *o);

/* Plans in (its budgets as they are) with every method; cell[XE_SWEEP_NMETHODS] is
 * filled. Every schedule reported was replayed by xe_sim_run, and its total_time is the
 * cost. Returns XE_OK (infeasible methods are cells, not errors); XE_EINVAL for bad
 * options; XE_ENOMEM (a CBC failure with no schedule found otherwise is a cell without
 * one, XE_SWEEP_NONE); XE_EINTERNAL when a schedule fails the simulator (a bug). */
int xe_sweep_point(const xe_instance *in, const xe_sweep_opts *o, xe_sweep_cell cell[XE_SWEEP_NMETHODS],
                   xe_err *err);

/* Builds the instance of batch b (> 0) into *out (caller frees), with the budgets the
 * search should hold fixed; returns XE_OK or an XE_E* code with err set. */
typedef int (*xe_sweep_build_fn)(void *ctx, int64_t b, xe_instance **out, xe_err *err);

/* Largest batch b in [1, limit] at which method m finds a schedule: doubling from 1
 * until it fails (or limit), then bisection between the last success and the first
 * failure (finding a schedule is assumed monotone in the batch: every tensor grows with
 * it). o's devices and time_limit apply at each probe, with the planner probed in
 * feasibility mode (first schedule found); *batch = the batch found,
 * 0 when none fits even batch 1; *cell = m's cell at that batch (with the full planner,
 * feasibility 0, when m is the planner). *probes (may be NULL) = instances built.
 * Build errors are returned as they are. */
int xe_sweep_max_batch(xe_sweep_build_fn build, void *ctx, int m, const xe_sweep_opts *o, int64_t limit,
                       int64_t *batch, xe_sweep_cell *cell, int *probes, xe_err *err);

/* Largest batch b in [1, limit] that the cheap proofs do not rule out (the planner's
 * "infeasible (proven)" of its cells: a node that fits no device with its inputs, or a
 * device whose budget is below the footprint, mem of a node plus its inputs, of a node
 * no other device can hold). Every method's largest batch is at most *ub; 0 when batch
 * 1 is ruled out already. Same search as xe_sweep_max_batch; *probes (may be NULL) =
 * instances built. Build errors are returned as they are. */
int xe_sweep_batch_upper(xe_sweep_build_fn build, void *ctx, int64_t limit, int64_t *ub, int *probes, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
