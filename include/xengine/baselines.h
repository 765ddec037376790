/* xengine — baselines and the exact dynamic program for training chains.
 *
 * Single-device baselines as Checkmate defines them (Jain et al., MLSys 2020, sec. 6.1;
 * its core/solvers/strategy_chen.py, strategy_griewank.py): checkpoint-all, Chen's sqrt(n)
 * segments and Chen's greedy segmentation (Chen et al. 2016, "Training deep nets with
 * sublinear memory cost", sec. 4), Griewank's binomial checkpointing ("revolve", Griewank
 * and Walther, ACM TOMS 2000) for chains. Multi-device baselines: everything on one device,
 * and a fastest-device greedy. The exact chain dynamic program (docs/chain-dp.md) is the
 * persistent-checkpoint recursion of Beaumont et al. ("Optimal checkpointing for
 * heterogeneous chains", 2019/2021), extended with checkpoints dropped and recomputed,
 * with checkpoints parked on another device, with subproblems delegated to another
 * device and with a migration to another device, carried out with exact byte thresholds (no discretization). docs/baselines.md describes every method.
 *
 * Every function that returns a schedule has replayed it with xe_sim_run first; a method
 * that does not fit the budgets returns XE_EINFEASIBLE, never an overflowing schedule.
 * Costs are seconds (serial sum of compute and copy times, the simulator's total_time). */
#ifndef XENGINE_BASELINES_H
#define XENGINE_BASELINES_H

#include <stdint.h>

#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A training chain (docs/chain-dp.md): nodes 0..L form a path (node i > 0 reads exactly
 * i-1, node 0 reads nothing); every later node k = L+1..n-1 ("backward") reads k-1 and
 * at most one more node, fread[k-L-1], which is a path node (<= L), with the fread values
 * non-increasing in k, and a node reading the same path node as an earlier one only when
 * every node between them reads it too (no "gap"). This covers Checkmate's linear
 * training graphs (backward node L+j reads L+j-1 and the forward node L-j) and the
 * variant where the first gradient reads the loss only. A plain path is a chain with
 * nb = 0. */
typedef struct xe_chain {
    int n;      /* nodes */
    int L;      /* last node of the path (the loss for a training chain) */
    int nb;     /* n - L - 1 backward nodes */
    int *fread; /* [nb] path node read by backward node L+1+k besides its predecessor, or -1;
                   owned, free with xe_chain_clear */
} xe_chain;

/* Recognises g (finalized) as a chain. XE_OK with ch filled; XE_EUNSUPPORTED with the
 * first node that breaks the shape named in err; XE_ENOMEM. */
int xe_chain_detect(const xe_graph *g, xe_chain *ch, xe_err *err);
/* Frees ch->fread and zeroes ch (a zeroed or cleared ch is fine). */
void xe_chain_clear(xe_chain *ch);

/* Exact DP for a chain with main device d (docs/chain-dp.md): the cheapest schedule of
 * the nested-checkpoint class that fits every device's budget, with memory counted
 * exactly as the simulator counts it (bytes, no rounding). The schedule starts on d.
 * With other devices, three extensions (four on two devices) are solved and the cheapest
 * result kept:
 * checkpoints parked on another device (a copy out and a copy back; when the parked
 * tensors overflow a parking device in the replay, rerun without parking); subproblems
 * of the recursion delegated whole to another device that can run every node (boundary
 * tensors copied there, the subproblem run by that device's own DP with all of its
 * budget, the resulting gradient copied back); and a migration: forward sweeps on d,
 * then everything else on another device e for good, e fetching d's checkpoints when it
 * needs them (chain_dp_migrate.c); on two devices, the location class: every
 * checkpoint and gradient on d, on the other device or (a checkpoint) on both, each
 * forward sweep and each backward node on either device that can run it (neither need
 * run every node)
 * (chain_dp_loc.c; e's memory checked by the replay; at most 2^18 evaluations and 40
 * path nodes, else skipped). Evaluated lazily, only
 * at the budgets the recursion reaches (Beaumont et al.'s recursion, 2019, without
 * their memory discretization). Appends the events to out (caller-initialised) and sets
 * *cost (seconds; equal to the simulator's total_time up to rounding of the sum,
 * checked). Time O(L^3 P) at worst, P the number of distinct memory steps of a
 * subproblem; memory O(L^2 P).
 * XE_EUNSUPPORTED: not a chain; XE_EINFEASIBLE: no schedule of the class fits (or d
 * cannot run some node); XE_EINVAL: bad d; XE_ENOMEM; XE_EINTERNAL when the simulator
 * rejects the result (a bug). */
int xe_chain_dp(const xe_instance *in, int d, xe_schedule *out, double *cost, xe_err *err);

/* xe_chain_dp that stops at deadline (xe_now() seconds; 0: none): XE_ETIMEOUT, nothing
 * appended, when the answer is not known by then (its time grows steeply past about 200
 * nodes: 0.4-0.7 s at 200, 16-38 s at 256 on the chains of docs/chain-dp.md, "In the
 * planner"). Checked every 256 evaluations of the recursion; the reconstruction and the
 * replay after it are not interrupted. */
int xe_chain_dp_within(const xe_instance *in, int d, double deadline, xe_schedule *out, double *cost, xe_err *err);

/* Griewank's binomial checkpointing (revolve) on device d for a chain: the schedule that
 * is optimal when every tensor takes one slot and every forward step one unit of time,
 * with the largest number of slots whose schedule, replayed with the real sizes, fits
 * budget[d] (*slots receives it when non-NULL: tensors resident at once, the working
 * ones included). Same returns as xe_chain_dp. */
int xe_revolve(const xe_instance *in, int d, xe_schedule *out, double *cost, int *slots,
               xe_err *err);

/* Chen's sqrt(n) segmentation on device d (Checkmate's solve_chen_sqrtn): with C the
 * articulation points among forward nodes (backward == 0; a forward node v such that no
 * forward edge (u, w) has u < v < w), every k-th of them, k = floor(sqrt(|C|)), is a
 * checkpoint; R follows Checkmate's solve_r_opt; S is a graph-based ladder
 * (a segment is kept from the stage after its first backward reader to its last one),
 * then pruned (docs/baselines.md explains why not gen_s_matrix_fixed_checkpoints).
 * out (initialised by the callee; caller clears) is structurally valid (xe_stages_eval)
 * and its event list (xe_stages_to_schedule) replays in the simulator within budget[d];
 * it may still fail xe_stages_check, whose stage accounting is more conservative (check
 * it before using it as a MILP start). XE_EINFEASIBLE when the replay overflows budget[d]
 * or d cannot run a node; XE_EINVAL: bad d. */
int xe_chen_sqrt(const xe_instance *in, int d, xe_stages *out, xe_err *err);

/* Chen's greedy segmentation with segment size segment_bytes (Checkmate's
 * solve_chen_greedy): walking the forward nodes, a running sum of mem is kept and an
 * articulation point closes a segment (becomes a checkpoint) when the sum exceeds
 * segment_bytes. Same returns as xe_chen_sqrt. */
int xe_chen_greedy(const xe_instance *in, int d, int64_t segment_bytes, xe_stages *out,
                   xe_err *err);

/* Chen's greedy for budget[d], as Checkmate's experiments use it: segment sizes swept
 * over 0 and the 64 multiples of (total forward mem)/64, the cheapest result that fits
 * is kept (*segment_bytes gets its segment size when non-NULL). XE_EINFEASIBLE when
 * none fits. */
int xe_chen_greedy_budget(const xe_instance *in, int d, xe_stages *out,
                          int64_t *segment_bytes, xe_err *err);

/* Everything on device d: the single-device instance (device d alone, its budget) is
 * planned by checkpoint-all and by the greedy heuristic (xe_heur_greedy), the cheaper
 * valid result mapped back to device d of in. out is initialised by the callee.
 * XE_EINFEASIBLE when neither finds a schedule (or d cannot run some node). */
int xe_one_device(const xe_instance *in, int d, xe_stages *out, xe_err *err);

/* Fastest-device greedy: nodes in topological order, each computed once on the fastest
 * device (cost[v][d]) where its output and the inputs it lacks fit next to what is
 * resident, else the next fastest; a missing input is copied from a device that holds it
 * (the cheapest copy) and that copy is freed right after the compute; every tensor is
 * freed everywhere after its last user. No recomputation. Appends to out (caller-
 * initialised), *cost = simulator's total_time. XE_EINFEASIBLE when some node fits
 * nowhere. */
int xe_fastest_device(const xe_instance *in, xe_schedule *out, double *cost, xe_err *err);

/* Single entry point. name: "checkpoint-all", "chen-sqrt", "chen-greedy", "revolve",
 * "chain-dp" (single-device methods: each device able to run every node is tried, the
 * cheapest valid result returned), "one-device:<d>" (device index d), "one-device" (the
 * best device), "fastest-device". out is caller-initialised and receives the events
 * (cleared first); *cost (seconds) the simulator's total_time. XE_EUNSUPPORTED for an
 * unknown name or for revolve / chain-dp on a non-chain; XE_EINFEASIBLE when the method
 * finds nothing within the budgets; XE_EINVAL for a bad device index; XE_ENOMEM. */
int xe_baseline_run(const xe_instance *in, const char *name, xe_schedule *out, double *cost,
                    xe_err *err);

/* xe_baseline_run that stops the chain DP at deadline (xe_now() seconds; INFINITY: none;
 * xe_chain_dp_within): XE_ETIMEOUT then. The other methods take milliseconds to
 * seconds and are not cut. `xengine solve --method chain-dp --time-limit T` uses it
 * (before 2026-12-05 a 1,000-node chain ran past 180 s with T = 20). */
int xe_baseline_run_within(const xe_instance *in, const char *name, double deadline, xe_schedule *out, double *cost,
                           xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
