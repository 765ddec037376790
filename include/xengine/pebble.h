/* xengine — exact feasibility of a budget on one device, outside the stage structure
 * (docs/pebble.md).
 *
 * ../shared/PROBLEM.md defines a schedule as any event list; Checkmate's stage structure
 * (stage t computes node t first, each node at most once per stage, in index order), which
 * every other solver here searches, is a restriction of it. Below the structure's floor
 * a budget can still admit a schedule. This module answers the question exactly on one
 * device, as the black pebble game with recomputation:
 *
 *   reach(S, B): can the set S of tensors be resident together, starting from empty
 *   memory, with at most B bytes resident at every moment (compute v counting its inputs
 *   and its output)?
 *
 * In any such schedule some s in S was computed last (its final compute); from then on
 * the others of S stayed resident, so just before that compute (S \ {s}) u inputs(s) was
 * resident, and at it S u inputs(s). Hence, exactly:
 *
 *   reach({}, B) = true;  reach(S, B) = mem(S) <= B and there is an s in S with
 *   mem(S u inputs(s)) <= B and reach((S \ {s}) u inputs(s), B).
 *
 * Every node must be computed once, from empty memory at the start, so the smallest
 * budget that admits a schedule on one device is the largest over nodes v of the
 * smallest B with mem(inputs(v) u {v}) <= B and reach(inputs(v), B); the schedule that
 * computes each node v from scratch (reach inputs(v) by the recursion's choices, compute
 * v, free everything) attains it. The search is exponential in the worst case: it
 * memoises sets (a hash table of bitsets) and stops at a time or memory limit with
 * "unknown". */
#ifndef XENGINE_PEBBLE_H
#define XENGINE_PEBBLE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "xengine/error.h"
#include "xengine/graph.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XE_PEBBLE_NO = 0,     /* proven: no schedule (of any form) fits */
    XE_PEBBLE_YES = 1,    /* a schedule exists (and is built where asked) */
    XE_PEBBLE_UNKNOWN = 2 /* the search hit its time or memory limit */
} xe_pebble_answer;

/* Opaque search state: the graph (not owned; must outlive it) and the memo table, kept
 * across calls so that successive questions on the same graph share their work. */
typedef struct xe_pebble xe_pebble;

/* New search over the finalized graph g, using at most max_bytes of memo (bytes, >= 1
 * MiB; 0: 256 MiB; while the table doubles, 1.5 times that for a moment) plus one set of
 * n bits per recursion depth reached (at most 4n + 64 depths). Returns NULL when out of
 * memory. Free with xe_pebble_free. */
xe_pebble *xe_pebble_new(const xe_graph *g, size_t max_bytes);

/* Frees p (NULL: no-op). */
void xe_pebble_free(xe_pebble *p);

/* Member orders of the search (docs/pebble.md, "Two orders"): which member of a set is
 * tried first as the last computed. INDEX: the highest node index first; ALAP: the
 * latest in the as-late-as-possible topological order (longest path to a sink, shortest
 * last; ties by index) first; TURNS (the default): the two in turn, each for a slice of
 * time that doubles every round (from 5 ms), the memo shared, so a question costs at most
 * about four times the faster order's time; xe_pebble_schedule also builds witnesses in
 * the ALAP order. Every order gives the same answers (YES/NO are exact), only their speed
 * and the schedules differ. Other values mean TURNS. */
enum { XE_PEBBLE_ORDER_TURNS = -1, XE_PEBBLE_ORDER_INDEX = 0, XE_PEBBLE_ORDER_ALAP = 1 };
void xe_pebble_set_order(xe_pebble *p, int order);

/* Forced members (docs/pebble.md, "Forced members"): with on (the default) the search
 * takes a member whose inputs are all in the set as computed last, without branching
 * and before the memo sees the set (exact: reach(S) = reach(S minus that member) when S
 * fits); random_layered_n250 at 60%: 0.13 s instead of 1.1 s. off: every member is
 * branched on, as before, in every search (xe_pebble_schedule's too). The answers are
 * the same either way; the witnesses, so the schedules, differ, and with it on
 * xe_pebble_schedule also builds candidates from one search without. Clears the memo. */
void xe_pebble_set_forced(xe_pebble *p, int on);

/* flag (may be NULL; default NULL): once nonzero, searches and schedule builds stop as
 * at their deadline (UNKNOWN, or the best schedule built so far): Ctrl-C in `xengine
 * solve` (xe_plan_opts.interrupt). */
void xe_pebble_set_interrupt(xe_pebble *p, const volatile sig_atomic_t *flag);

/* fn (may be NULL; default NULL) is given each candidate schedule that
 * xe_pebble_schedule builds, with its cost in seconds, before the candidates are
 * compared: it may replace *s by a valid schedule of in on the same device that costs
 * less and returns the cost of what *s holds then (the candidate's own cost when it
 * changed nothing), or a negative XE_E* code (XE_ENOMEM), which ends the call with it.
 * The planner restages each candidate and improves it in stages (docs/reorder.md,
 * "Restaging"), so that the candidates are ranked by what they become (on
 * random_layered_n100 at 55% of its peak the winner, 74.032 s, was the 107.354-s
 * candidate; the cheapest before refinement, 97.658 s, becomes 86.621 s). The time fn
 * takes is added to the candidates' deadline, up to the time the call had, so that the
 * same candidates are built as without it. */
typedef double (*xe_pebble_refine_fn)(void *ctx, const xe_instance *in, xe_schedule *s, double cost);
void xe_pebble_set_refine(xe_pebble *p, xe_pebble_refine_fn fn, void *ctx);

/* Can node v be computed on one device with budget bytes resident at most: its footprint
 * fits and reach(inputs(v), budget)? Stops at the wall-clock deadline (xe_now() seconds;
 * INFINITY: none) with XE_PEBBLE_UNKNOWN. */
xe_pebble_answer xe_pebble_node(xe_pebble *p, int v, int64_t budget, double deadline);

/* Does a schedule computing every node exist within budget on one device (every node
 * answered XE_PEBBLE_YES)? *blocker (may be NULL) = the first node answered NO (or
 * UNKNOWN when none is NO), -1 when the answer is YES. */
xe_pebble_answer xe_pebble_feasible(xe_pebble *p, int64_t budget, double deadline, int *blocker);

/* The smallest budget (bytes) on one device that admits any schedule: *lower <= that
 * budget <= *upper on return, equal (and the return XE_OK with *exact = 1) when the
 * search finished by the deadline. lower0 is a known lower bound (e.g. the largest
 * footprint; 0 if none), upper0 a budget known to admit a schedule (e.g. the
 * no-recomputation peak). *blocker (may be NULL) = a node that cannot be computed one
 * byte below *lower when exact and the search had to prove it; -1 when lower0 itself is
 * the answer or the search did not finish. Errors: XE_EINVAL (lower0 > upper0). */
int xe_pebble_min_budget(xe_pebble *p, int64_t lower0, int64_t upper0, double deadline, int64_t *lower,
                         int64_t *upper, int *exact, int *blocker, xe_err *err);

/* A schedule for device d of in (one device's budget, in->dev[d].budget), the cheapest
 * of several candidates (docs/pebble.md, "The schedule"): every node v in index order
 * computed from scratch by the recursion's choices, or by dynamic rematerialization (DTR)
 * with those as fallback, then cleaned up (recomputations removed where keeping the
 * tensor from its previous use fits the budget, computes nobody reads removed); the
 * witnesses of several searches (orders, with and without forced members, tighter
 * budgets, then randomised ALAP orders until the deadline, 64 at most), so the call
 * takes up to the deadline, later by a refinement's time (random_layered_n250 at 70%, one GPU: 3.5 s, 255.926 s
 * against the first candidate's 838.590 s after 0.02 s). out
 * (initialised by the caller, cleared first) receives compute and free events on d only.
 * Returns XE_OK with *answer YES (out filled), NO (out empty: no schedule of any form
 * exists; *blocker, may be NULL, = a node that cannot be computed) or UNKNOWN (the
 * deadline, xe_now() seconds, came first; also when building the schedule would exceed
 * it or 2^25 events). stats (may be NULL) as below. Errors: XE_EINVAL (d out of range,
 * or a node that d cannot run), XE_ENOMEM. */
typedef struct xe_pebble_stats {
    double cost;       /* seconds: compute time of the schedule in out (INFINITY without) */
    double first_time; /* seconds from the call until the first candidate was in hand */
    double first_cost; /* seconds: that candidate's compute time (INFINITY without) */
} xe_pebble_stats;
int xe_pebble_schedule(xe_pebble *p, const xe_instance *in, int d, double deadline, xe_schedule *out,
                       xe_pebble_answer *answer, int *blocker, xe_pebble_stats *stats, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
