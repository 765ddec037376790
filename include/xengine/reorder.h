/* xengine — the order of computation: a topological order with a lower
 * no-recomputation peak, and the instance relabelled in it (docs/reorder.md).
 *
 * ../shared/PROBLEM.md fixes the graph's node order 0..n-1, but a schedule is any event
 * list: nodes may be computed in any topological order. Checkmate's stage structure,
 * which the greedy, LNS and the MILP search, computes in index order; its memory floor
 * therefore depends on the order. On the Moccasin random layered graphs the file's
 * order holds far more tensors at once than needed (random_layered_n250: 146,840 B
 * without recomputation in index order, 115,180 B in an order found here), so below its
 * peak the stage solvers recompute what another order would simply keep. This module
 * finds such orders (randomised list scheduling, the memory-greedy rule of
 * "min-peak" operator ordering) and relabels an instance so that the stage solvers
 * plan in them; a schedule found there is mapped back to the original node ids. */
#ifndef XENGINE_REORDER_H
#define XENGINE_REORDER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "xengine/error.h"
#include "xengine/graph.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No-recomputation peak of `order` (order[k] = the node computed k-th; a topological
 * order of g's n nodes): bytes resident at the worst compute when every node is computed
 * once in that order and each output is freed right after its last reader (an output
 * without readers right after it is computed); a compute's inputs and output count
 * together (PROBLEM.md). With order = 0..n-1 it equals xe_instance_norecompute_peak(g).
 * Returns -1 when out of memory or when order is not a topological permutation. O(n + m). */
int64_t xe_order_peak(const xe_graph *g, const int *order);

/* A topological order with a low no-recomputation peak, by randomised list scheduling:
 * each pass computes, among the nodes whose inputs are all computed, the one whose
 * compute adds the fewest bytes (its output, less the inputs it reads last), ties and
 * near-ties broken at random (the first pass deterministic, later ones with noise of
 * 1/4, 1 and 4 times the mean tensor size, in turn; splitmix64 from `seed`). Passes run
 * until max_passes (>= 1) or the wall-clock deadline (xe_now() seconds; the first pass
 * always completes). order[n] (caller-owned) receives the best order found, or 0..n-1
 * when none beats it; *peak its xe_order_peak. Deterministic for a seed when the
 * deadline does not cut the passes. O(passes * n * width * indegree).
 * XE_ENOMEM; XE_EINVAL for a graph not finalized. */
int xe_order_low_peak(const xe_graph *g, uint64_t seed, int max_passes, double deadline, int *order,
                      int64_t *peak, xe_err *err);

/* What xe_order_fit found. */
typedef enum {
    XE_FIT_CUT = -1,  /* stopped (deadline, stop flag or memory cap) before an answer */
    XE_FIT_NONE = 0,  /* every order searched: none has a peak within the target */
    XE_FIT_FOUND = 1  /* order[] holds one */
} xe_fit_status;
typedef struct {
    xe_fit_status status;
    int64_t peak; /* xe_order_peak of the order found, bytes (0 otherwise) */
    long states;  /* search steps taken (states entered, the exchange rule's moves included) */
    long sets;    /* distinct sets of computed nodes branched on (memoised) */
} xe_order_fit_result;
/* A topological order whose no-recomputation peak (xe_order_peak) is at most `target`
 * bytes, by depth-first search over the sets of computed nodes (docs/reorder.md, "Fitting
 * an order to a budget"): children are the nodes whose compute fits, fewest added bytes
 * first, with one step of lookahead (plus the least a node each makes available would add
 * next); a node that fits and adds no bytes is computed at once (an exchange argument shows
 * no order is lost, src/solvers/order_fit.c); sets already searched are skipped (64-bit
 * Zobrist hashes: a collision, odds about states^2 / 2^65, could skip an unsearched set, so
 * XE_FIT_NONE is exact up to that). Stops at the wall-clock deadline (xe_now() seconds),
 * when *stop becomes nonzero (optional, may be NULL) or when the memo table would pass
 * max_bytes (0: 256 MiB): r->status XE_FIT_CUT. order[n] (caller-owned) receives the order
 * when r->status is XE_FIT_FOUND (else its content is unspecified). Worst case exponential;
 * on the shared random layered graphs it answers in milliseconds near their least peaks
 * (docs/reorder.md). XE_EINVAL for a graph not finalized; XE_ENOMEM. */
int xe_order_fit(const xe_graph *g, int64_t target, double deadline, const volatile sig_atomic_t *stop,
                 size_t max_bytes, int *order, xe_order_fit_result *r, xe_err *err);
/* A topological order whose no-recomputation peak (xe_order_peak) is at most `target`
 * bytes, by simulated annealing over orders (docs/reorder.md, "Annealing over orders"):
 * it lowers the bytes by which the order's computes exceed the target, summed over the
 * computes, by moving one node at a time within its inputs and readers, 30 positions at
 * most; runs of 2^17 moves, then twice the previous run's up to 2^20, each cooling from
 * twice the mean tensor size to 1 byte, alternate between `start` (a topological order
 * of g's n nodes, or NULL) and the index order, with splitmix64 bits from `seed`
 * (deterministic for a seed until the deadline cuts). A local search: it never proves
 * that no order fits; it complements xe_order_fit, which does, and which on large graphs
 * near their least peak runs out of time first (a 1,000-node layered DAG at 55% of its
 * graph order's peak: found in under a second here, not by the search in 5 s). Stops at
 * the wall-clock deadline (xe_now() seconds) or when *stop (may be NULL) becomes
 * nonzero, checked every 1,024 moves or 2^18 reader lookups (a move on layers joined all
 * to all can cost 10^6). r->status is XE_FIT_FOUND with order[n] (caller-owned) and
 * r->peak, or XE_FIT_CUT (order unspecified); r->states counts the moves tried, r->sets
 * the runs. XE_EINVAL for a graph not finalized, a negative target or a start that is
 * not a topological order; XE_ENOMEM; XE_EINTERNAL if an order it took for fitting does
 * not (a bug). O(n) memory; O(n + m) to start each run. */
int xe_order_anneal(const xe_graph *g, int64_t target, const int *start, uint64_t seed, double deadline,
                    const volatile sig_atomic_t *stop, int *order, xe_order_fit_result *r, xe_err *err);
/* Graphs of at least this many nodes give xe_order_fit_within's search an eighth of its
 * time and the annealing the rest; smaller ones half and half. */
#define XE_ORDER_FIT_ANNEAL_N 1000
/* xe_order_fit for a share of `seconds` (half, an eighth on graphs of XE_ORDER_FIT_ANNEAL_N
 * nodes or more), then, where it was cut (not where it proved that none fits), xe_order_anneal
 * from the index order (seed 1) until `seconds` have passed since the call. The search
 * answers in milliseconds near the least peak of graphs of hundreds of nodes and alone
 * proves none; the annealing reaches orders the search does not on large graphs (a
 * 1,000-node layered DAG at 55%: 0.2-0.4 s). The xengine planner's fit-order phase and
 * `solve`'s budget messages both call it (the messages' probes with half the phase's
 * time), so a budget the messages name is usually found again by a plan; wall-clock
 * shares make that no guarantee. Below xe_instance_min_footprint (a node with its
 * inputs) no order fits: XE_FIT_NONE at once, no set searched. r as xe_order_fit's,
 * except where the annealing ran: r->sets the search's sets, r->states the annealing's
 * moves; *annealed (may be NULL) 1 when the annealing ran. Errors as the two
 * functions'. */
int xe_order_fit_within(const xe_graph *g, int64_t target, double seconds, const volatile sig_atomic_t *stop,
                        int *order, xe_order_fit_result *r, int *annealed, xe_err *err);
/* The instance relabelled in `order`: node k of *out is node order[k] of in (name, op,
 * sizes, costs and copy costs carried over; edges renumbered), devices and budgets
 * unchanged. order must be a topological order of in's graph (else XE_EINVAL). *out is
 * new, owned by the caller (xe_instance_free). XE_ENOMEM. */
int xe_instance_permute(const xe_instance *in, const int *order, xe_instance **out, xe_err *err);

/* The instance relabelled by map, with empty nodes: node k of *out is node map[k] of in
 * (name, op, sizes, costs and copy costs carried over; edges renumbered), or, where
 * map[k] = -1, an empty node "restage.empty.K" (no edges, 0 bytes, cost 0 on every
 * device, copies 0); devices and budgets unchanged. map[0..N) names each node of in at
 * most once; every named node's inputs must be named at smaller k (else XE_EINVAL, as
 * for a map entry out of range or repeated). *out is new, owned by the caller
 * (xe_instance_free). XE_ENOMEM. xe_instance_permute (N = n, no empty node) and
 * xe_instance_restage build on it. */
int xe_instance_relabel(const xe_instance *in, const int *map, int N, xe_instance **out, xe_err *err);

/* Maps a schedule of the permuted instance back to the original node ids: every event's
 * node k becomes order[k]. In place; the events' order is unchanged, so the schedule is
 * valid for the original instance exactly when it was for the permuted one. */
void xe_schedule_unpermute(xe_schedule *s, const int *order);

/* The stage form of an event list outside the stage structure (docs/reorder.md,
 * "Restaging"), so that the stage solvers (local improvement, LNS, the MILP) can improve
 * it: *out is `in` relabelled in the list's first-computation order, with an empty node
 * (no edges, 0 bytes, cost 0 on every device, name "restage.empty.K") inserted wherever
 * the list recomputes what a Checkmate stage cannot hold (a node a second time, out of
 * index order, or one that was resident when the stage began; on several devices also a
 * node computed on a second device in the stage, which a stage could hold); *st the
 * stage matrices of the list on *out, pruned (xe_stages_prune), passing xe_stages_check:
 * the stage model then frees no later than the list, so they cost at most the list's
 * cost (less where the prune or dropping computes of a resident tensor and computes
 * after the last first computation removes work). (*map)[k] is the node of in behind
 * node k of *out, -1 for an empty node; (*out)->g->n = N >= in's n. s: compute and free
 * events of a schedule of in that computes every node (frees of what is not resident
 * are ignored; budgets are not checked here: a list over a budget may still restage,
 * since the stage form frees earlier). Ownership: *out (xe_instance_free), *map (free),
 * st (xe_stages_clear) go to the caller; on error *out and *map are NULL and st is
 * zeroed. Errors (messages start "restage: "): XE_EUNSUPPORTED (a copy event, or stage
 * matrices that fail the check), XE_EINVAL (an event naming no node or device, a compute
 * without its inputs resident on its device, a node never computed), XE_ENOMEM.
 * O(N^2 D) memory (the matrices). */
int xe_instance_restage(const xe_instance *in, const xe_schedule *s, xe_instance **out, int **map,
                        xe_stages *st, xe_err *err);

/* Maps a schedule of a restaged instance back to in's node ids: drops the events of
 * empty nodes and renames node k to map[k]. In place; what remains is valid for in
 * exactly when s was for the restaged instance (the empty nodes hold no bytes). */
void xe_schedule_unrestage(xe_schedule *s, const int *map);

#ifdef __cplusplus
}
#endif

#endif
