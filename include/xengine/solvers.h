/* xengine — schedule strategies other than the MILP, all producing stage matrices
 * (xe_stages) judged by the same checks and the same simulator. */
#ifndef XENGINE_SOLVERS_H
#define XENGINE_SOLVERS_H

#include <signal.h>
#include <stddef.h>

#include "xengine/instance.h"
#include "xengine/milp.h"
#include "xengine/sim.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Greedy stage-by-stage heuristic (docs/heuristic.md): in stage t, t runs on the fastest
 * device where it fits; missing inputs are copied in or recomputed; checkpoints are kept
 * while the budgets allow and evicted by a cost-per-byte rule when they do not. On XE_OK,
 * out (initialised by the callee; caller clears) passes xe_stages_check.
 * XE_EINFEASIBLE when it finds no schedule (not a proof that none exists). */
int xe_heur_greedy(const xe_instance *in, xe_stages *out, xe_err *err);

/* xe_heur_greedy with its pins (docs/heuristic.md, "Pins": up to XE_GREEDY_PIN_WORK /
 * n^2 greedy passes improving each of the two best schedules found, one per eviction
 * scoring) on (pins = 1, what xe_heur_greedy does) or off (0: where only whether a
 * schedule exists matters, e.g. the budget bisections). Same returns. */
int xe_heur_greedy_ex(const xe_instance *in, int pins, xe_stages *out, xe_err *err);

/* Seconds past its deadline (or past its start, when that is later) that the greedy
 * and the portfolio may take to finish their first schedule. */
#define XE_HEUR_GRACE_S 1.0

/* xe_heur_greedy_ex that, once it holds a schedule, starts no further variant or pin
 * after deadline (xe_now() seconds; INFINITY: none), nor a variant that would not leave
 * time before it for another as long as the last one (the final prune and check take
 * about that much on large graphs). Without one it goes on to at most
 * XE_HEUR_GRACE_S past max(deadline, the call's start), ending even a pass in progress
 * at its next 256th stage there (a pass costs about n^2: 0.4 s at 5,000 nodes, tens of
 * seconds at 40,000). Until 2026-12-05 it had no such end: 100 s past a 5-s limit on a
 * 40,000-node graph. Same returns (XE_EINFEASIBLE, "the time limit ended before a
 * schedule was found", when that end stopped it empty-handed). */
int xe_heur_greedy_within(const xe_instance *in, int pins, double deadline, xe_stages *out, xe_err *err);

/* xe_heur_greedy_within that also hands back the best schedule of the other eviction
 * scoring (docs/heuristic.md, "Variants": bytes counted whole or up to the excess) in
 * *second (initialised here; pruned and checked like out; all zero when that scoring
 * found none, or when its prune and check, about a variant's time, would end past the
 * deadline), so that the caller can improve both: which one improves further is not
 * known before. Same returns; on an error *second is empty. */
int xe_heur_greedy_pair(const xe_instance *in, int pins, double deadline, xe_stages *out, xe_stages *second,
                        xe_err *err);

/* Randomised restarts of the greedy (docs/heuristic.md, "Randomised restarts"), for
 * budgets where xe_heur_greedy finds nothing: runs of its variants in turn (each with
 * its restart passes), each eviction score multiplied by a factor drawn uniformly from
 * [1, 9) (splitmix64 from seed; the same seed gives the same runs), until one run finds
 * a schedule (pruned, xe_stages_check passed, to out), 2,000 runs have failed, or
 * max_seconds of work are done (finite, >= 0: greedy passes of n (n + m) devices, 2.5e8
 * of those per second, about this 2-core machine's rate, so that a seed gives the same
 * answer on any machine; the wall clock stops them only at 4 max_seconds; checked
 * between runs, at least one run). *tries (may be NULL) = runs made. XE_EINFEASIBLE when
 * none found (not a proof), XE_EINVAL, XE_ENOMEM; out is cleared on error. */
int xe_heur_greedy_random(const xe_instance *in, uint64_t seed, double max_seconds, xe_stages *out, int *tries,
                          xe_err *err);
/* xe_heur_greedy_random that also counts the greedy passes it made (*passes, may be
 * NULL; each worth xe_heur_pass_work): the diversification's work budget. */
int xe_heur_greedy_random_ex(const xe_instance *in, uint64_t seed, double max_seconds, xe_stages *out, int *tries,
                             long *passes, xe_err *err);
/* xe_heur_greedy_random that also starts no run after `deadline` (xe_now() seconds;
 * INFINITY: none) once one has run: the work budget keeps the answer the same on any
 * machine and load, the deadline keeps a caller's time limit where the machine is slower
 * than that (xe_plan: a loaded machine took 1.62 s for 0.75 s of work, and a 3-s solve
 * 3.74 s, on 2026-12-05). Same returns. */
int xe_heur_greedy_random_within(const xe_instance *in, uint64_t seed, double max_seconds, double deadline,
                                 xe_stages *out, int *tries, xe_err *err);

/* The work one greedy pass on in counts in the heuristics' budgets (the randomised
 * restarts', the diversification's): n (n + m) devices, n nodes, m edges (at least 1);
 * a pass's time grows with the edges, not with n^2 alone. */
double xe_heur_pass_work(const xe_instance *in);
/* Units of xe_heur_pass_work a second, about this 2-core machine's rate (a pass averages
 * 0.15-0.2 us a unit): the randomised restarts' work budget (greedy.c), and the planner's
 * and the portfolio's estimates of what a pass, a check or a phase's set-up will take on
 * large graphs (src/solvers/plan_int.h). */
#define XE_HEUR_PASS_RATE 2.5e8
/* Seconds one greedy pass on in takes at that rate: xe_heur_pass_work / XE_HEUR_PASS_RATE. */
double xe_heur_pass_seconds(const xe_instance *in);

/* Checkpoint-all on device d: every node computed once on d, kept while it has later
 * users. XE_EINFEASIBLE when it does not fit d's budget or d cannot run some node. */
int xe_heur_checkpoint_all(const xe_instance *in, int d, xe_stages *out, xe_err *err);

/* Budget range of device d with the other devices' budgets fixed: *lower = bytes every
 * schedule needs on d (the largest footprint, mem of a node plus its inputs, among the
 * nodes that no other device can hold with their inputs; 0 when none); *upper = the
 * smallest budget, to 1% by bisection, at which xe_heur_greedy finds a schedule (0 when
 * it finds none even at the no-recomputation peak plus the largest footprint).
 * upper may be NULL to skip the bisection. in is not modified (a copy is used). */
int xe_budget_range(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err);

/* ---- Guaranteed fallbacks and the heuristic portfolio (docs/heuristic.md) ---- */

/* Recompute-all on device d: stage t computes t and every ancestor of t on d, in index
 * order, with no checkpoints at all (S = 0); each tensor is freed after its last use in
 * the stage. Always structurally valid when d runs every node; its peak, *peak (may be
 * NULL), is max over stages of that stage's working set: together with
 * xe_instance_norecompute_peak it gives a budget at which a schedule is guaranteed
 * (docs/heuristic.md, "Minimum budget"). Cost is the sum over stages of their ancestor
 * sets (O(n^2) computes on a chain). XE_EINFEASIBLE when d cannot run a node or the
 * peak exceeds d's budget (out is then cleared); XE_ENOMEM. */
int xe_heur_recompute_all(const xe_instance *in, int d, xe_stages *out, int64_t *peak, xe_err *err);

/* The heuristic portfolio: xe_heur_greedy (its four variants), checkpoint-all and
 * recompute-all on each device; when the greedy finds no schedule (and no node's
 * footprint proves the budgets infeasible), xe_heur_greedy_random until
 * XE_PORTFOLIO_RANDOM_S seconds from the call's start. The cheapest valid result
 * (pruned, then improved by xe_heur_improve for at most 0.25 s, and to at most 0.1 s
 * past XE_PORTFOLIO_RANDOM_S after the restarts; xe_stages_check passed) goes to out.
 * With the improvement on, where the greedy found a schedule that is not as cheap as
 * every node once, on graphs of up to XE_PORTFOLIO_DIVERSE_MAX_N nodes: randomised
 * greedy runs from the start (xe_heur_greedy_random with seeds 2, 3, ...), each with one
 * round of keeps (xe_heur_improve_ex, XE_IMPROVE_KEEP), the cheapest improved fully and
 * kept when cheaper, for at most XE_PORTFOLIO_DIVERSE_RUNS runs and
 * XE_PORTFOLIO_DIVERSE_WORK work (a count, so the result does not depend on the
 * machine's load), cut short only after XE_PORTFOLIO_DIVERSE_S seconds or half of the
 * time left before the deadline (docs/heuristic.md, "Randomised diversification"). *which (may be NULL) names it ("greedy",
 * "checkpoint-all", "recompute-all", "greedy-random", "greedy-diverse"; static strings). On one device it never fails at a
 * budget of at least min(no-recomputation peak, recompute-all peak). XE_EINFEASIBLE
 * when none finds a schedule (not a proof); XE_ENOMEM. */
#define XE_PORTFOLIO_RANDOM_S 0.8
#define XE_PORTFOLIO_RANDOM_SEED 1
#define XE_PORTFOLIO_DIVERSE_RUNS 1000
/* The diversification's work: its runs stop once their greedy passes and their rounds
 * of keeps, (passes + 1) n (n + m) devices each (n nodes, m edges), add up to
 * XE_PORTFOLIO_DIVERSE_WORK, scaled down by deadline / XE_PORTFOLIO_DIVERSE_FULL_S when
 * the call's deadline is nearer than that (a pass takes about 1-2e-8 n (n + m) devices
 * seconds on this 2-core machine, a round of keeps about as long): 149 runs at
 * ResNet-18's 137 nodes and 231 edges on two devices (0.6 s here), 1,000 at VGG16's 45
 * (0.3 s), 2 on a generated 300-node graph with 11,363 edges (where n^2 devices counted
 * 24 runs of 0.17 s). A count, not a clock, so the same call (the same time limit)
 * gives the same schedule however loaded the machine. */
#define XE_PORTFOLIO_DIVERSE_WORK 3.0e7
#define XE_PORTFOLIO_DIVERSE_FULL_S 10.0
/* A cap for machines far slower than this one (the runs and the final improvement stop
 * at it, the runs at four fifths): the work takes 0.3-1.5 s here, 5 s under ASan beside
 * three spinning threads and a parallel CTest (test_diversify), where a cap of 5 s cut
 * it and changed the schedule; and at most half the time left before the deadline */
#define XE_PORTFOLIO_DIVERSE_S 30.0
#define XE_PORTFOLIO_DIVERSE_MAX_N 300
int xe_heur_best(const xe_instance *in, xe_stages *out, const char **which, xe_err *err);

/* xe_heur_best with the local improvement and the randomised diversification on
 * (improve = 1), the improvement only (2: xe_plan's low-peak orders, which compare many
 * portfolios), or neither (0: for feasibility questions such as xe_min_budget's
 * bisection, where only finding a schedule counts) and the randomised restarts, where
 * the greedy finds nothing, for random_seconds of work (xe_heur_greedy_random; 0:
 * none). */
int xe_heur_best_ex(const xe_instance *in, xe_stages *out, const char **which, int improve, double random_seconds,
                    xe_err *err);

/* xe_heur_best_ex that keeps to a deadline (xe_now() seconds; INFINITY: none) once it
 * holds a schedule: the greedy as xe_heur_greedy_within, then no checkpoint-all or
 * recompute-all (without a schedule, none past the greedy's grace), and the local
 * improvement cut to what is left (none past it). The
 * schedule it holds is returned as usual (pruned, checked). Same returns. */
int xe_heur_best_within(const xe_instance *in, xe_stages *out, const char **which, int improve,
                        double random_seconds, double deadline, xe_err *err);

/* When the portfolio's schedules were in hand, wall seconds from the call's start: the
 * deterministic part's schedule (greedy and the others, improved) at first_at with cost
 * first_cost (seconds; INFINITY and NAN without one), the returned one at best_at (its
 * randomised diversification runs on after its last improvement). */
typedef struct xe_heur_times {
    double first_at, first_cost, best_at;
} xe_heur_times;

/* xe_heur_best_within that also says when (times may be NULL). */
int xe_heur_best_timed(const xe_instance *in, xe_stages *out, const char **which, int improve,
                       double random_seconds, double deadline, xe_heur_times *times, xe_err *err);

/* xe_heur_best_timed that stops at its next greedy pass, diversification run or
 * improvement once *intr is nonzero (Ctrl-C in `xengine solve`; intr may be NULL): the
 * best schedule in hand then (XE_OK), or XE_ETIMEOUT when there is none yet. Before
 * 2026-12-01 a running portfolio ran to its end (seconds on graphs of thousands of
 * nodes). */
int xe_heur_best_intr(const xe_instance *in, xe_stages *out, const char **which, int improve, double random_seconds,
                      double deadline, const volatile sig_atomic_t *intr, xe_heur_times *times, xe_err *err);

/* The portfolio's randomised greedy restarts on their own (xe_heur_greedy_random, seed
 * XE_PORTFOLIO_RANDOM_SEED, for max_seconds): their schedule, pruned, replaces *best
 * (may be empty, *best_cost then INFINITY; cost in seconds) when cheaper, and *which
 * (may be NULL) becomes "greedy-random". *found_cost = the restarts' schedule's cost
 * (INFINITY without one), *replaced = 1 when it replaced *best (each may be NULL). No local improvement:
 * the caller decides. XE_OK when they found a schedule, XE_EINFEASIBLE when none (not a
 * proof), XE_EINVAL (max_seconds not finite or < 0), XE_ENOMEM. */
int xe_heur_restarts(const xe_instance *in, double max_seconds, xe_stages *best, double *best_cost,
                     const char **which, double *found_cost, int *replaced, xe_err *err);
/* xe_heur_restarts whose runs start no later than `deadline` (xe_heur_greedy_random_within). */
int xe_heur_restarts_within(const xe_instance *in, double max_seconds, double deadline, xe_stages *best,
                            double *best_cost, const char **which, double *found_cost, int *replaced, xe_err *err);

/* Local improvement of a valid stage schedule (docs/heuristic.md, "Local improvement";
 * src/solvers/improve.c): recomputations and incoming copies of i on d, most expensive
 * first, are replaced by keeping i on d as a checkpoint since the last stage where it
 * was present (giving up what was resident only to recompute or copy it), or, on
 * several devices, by a copy from a device where i was computed or kept in an earlier
 * stage, when every stage concerned still fits (exact stage accounting) and the cost
 * falls; in rounds while one changes something (at most 8), then one round that also
 * takes equal-cost earlier copies, undone unless later rounds gain; xe_stages_prune
 * after each round; then the same again from a copy whose zero-cost sources (no
 * inputs, cost 0) are recomputed in each stage that reads them instead of kept across
 * stages (less memory, same cost), the cheaper of the two kept. The copy moves only on
 * graphs of up to XE_IMPROVE_COPY_MAX_N nodes. Stops after max_seconds (checked between
 * moves). st stays valid and never gets more expensive (it is restored if the final
 * xe_stages_check fails). XE_ENOMEM. */
int xe_heur_improve(const xe_instance *in, xe_stages *st, double max_seconds, xe_err *err);

/* xe_heur_improve with a choice of moves (bits): without XE_IMPROVE_ROUNDS one round of
 * keeps (XE_IMPROVE_KEEP: the quick improvement of the portfolio's diversification runs;
 * the keeps are always tried), once more from the zero-cost-source copy;
 * XE_IMPROVE_ROUNDS repeats rounds while one changes something (at most 8);
 * XE_IMPROVE_COPY adds copies moved earlier, and, on several devices, one round that
 * also keeps equal-cost ones, kept only when later rounds make the schedule cheaper.
 * XE_IMPROVE_ALL (all three) is xe_heur_improve. */
#define XE_IMPROVE_COPY_MAX_N 300 /* xe_heur_improve: copy moves up to this many nodes */
#define XE_IMPROVE_KEEP 1
#define XE_IMPROVE_ROUNDS 2
#define XE_IMPROVE_COPY 4
#define XE_IMPROVE_ALL 7
int xe_heur_improve_ex(const xe_instance *in, xe_stages *st, double max_seconds, int moves, xe_err *err);

/* The portfolio's time for xe_heur_improve, seconds: 0.25, 0.1 above 300 nodes. */
double xe_heur_improve_seconds(const xe_instance *in);

/* Replays a stage schedule with the independent simulator: xe_stages_to_schedule, then
 * xe_sim_run into *res, and checks that the simulated total_time (seconds) equals
 * xe_stages_cost within 1e-6 relative. Returns XE_OK; the errors of those two calls
 * (XE_EINVAL: the simulator rejects it, naming the event); XE_EINTERNAL when the times
 * differ (a bug); XE_ENOMEM. What every planner does before it keeps a schedule. */
int xe_stages_replay(const xe_instance *in, const xe_stages *st, xe_sim_result *res, xe_err *err);

/* The same for an event list s whose planned cost is `cost` seconds (a pebbling
 * schedule, docs/pebble.md): xe_sim_run into *res, then the cost check. */
int xe_schedule_replay(const xe_instance *in, const xe_schedule *s, double cost, xe_sim_result *res, xe_err *err);

/* ---- Lower bounds (docs/lns.md, "Bounds") ---- */

/* Combinatorial lower bound, seconds, valid for every event list of PROBLEM.md (not
 * only stage schedules): every node is computed at least once on a device that can hold
 * it with its inputs, so it costs at least its cheapest such device; a node u with a
 * user v such that no device can hold both u's computation and v's must be copied at
 * least once, at its cheapest copy out of the devices that can compute it.
 * INFINITY when some node fits no device (then no schedule exists). */
double xe_bound_cheapest(const xe_instance *in);

/* Eviction lower bound, seconds, valid for stage schedules (node t first computed in
 * stage t, as in the MILP; docs/lns.md "Bounds"): at t's step, node t, its inputs and
 * every u < t read after stage t (the set S_t) must each be resident on device d or pay
 * an extra cost of at least delta_u of its own: a u read after stage t may be resident
 * nowhere and computed again later (its cheapest cost); or it is resident on another
 * device e, having been copied there or computed there (cost above its cheapest), and
 * then, when read after stage t, its readers need it again: a copy back or a
 * recomputation, or readers moved to e (their cost above their cheapest, shared among
 * their inputs). Either t runs on d (t and its inputs resident) or elsewhere (t pays its
 * cost above its cheapest, its inputs may be absent). So the tensors of S_t absent from d
 * carry at least mem(S_t) - budget[d] bytes, and the objective is at least the sum of
 * cheapest costs plus, for the worst (t, d), the lesser of the two cases' cheapest
 * fractional covers of that excess (knapsack LPs of one row). O(D^2 n (n + m) + D n^2
 * log n): on graphs of more than XE_EVICTION_MAX_NODES nodes only the sum of cheapest
 * costs; INFINITY when some node fits no device or some excess cannot be covered;
 * 0 (a trivial bound) when an allocation fails. */
#define XE_EVICTION_MAX_NODES 8000
double xe_bound_eviction(const xe_instance *in);

/* Bottleneck lower bound, seconds, valid for every event list of PROBLEM.md on one
 * device (not only stage schedules; src/solvers/bound_cut.c, docs/lns.md "Bounds"):
 * the cost of computing every node once, plus, for the worst node v, what must be
 * computed again after v's first compute because only budget - footprint(v) bytes
 * besides v and its inputs can stay resident across it: a Lagrangian relaxation (one
 * minimum cut per multiplier, Dinic's max flow) of "hold a set of at most that many bytes
 * or recompute the ancestors the descendants of v need". About 80 max flows per node
 * of 2n + 2 vertices at worst; nodes are taken by what they can add at most, largest
 * first, until none can raise the bound or `deadline` (xe_now() seconds; 0: none)
 * passes, the best so far being a bound at any point. *node (may
 * be NULL) = the node that gave the extra cost, -1 when none did. Returns
 * xe_bound_cheapest(in) alone with several devices (a copy can stand in for a
 * recomputation there), on graphs of more than XE_BOTTLENECK_MAX_NODES nodes, and when
 * out of memory; INFINITY when some node does not fit the budget. */
#define XE_BOTTLENECK_MAX_NODES 2000
double xe_bound_bottleneck(const xe_instance *in, double deadline, int *node);

/* Search lower bound, seconds, valid for every event list of PROBLEM.md on one device
 * (src/solvers/bound_search.c, docs/lns.md "Bounds"): every node's cost once plus the
 * cheapest recomputation cost of a relaxed pebble game, found by Dijkstra's algorithm
 * over states (nodes computed so far, nodes freed while still needed); a compute first
 * or again is possible only with its inputs resident and within the budget, a needed
 * tensor freed costs its compute. The cost of the last state expanded is a bound at any
 * moment, so the search stops at `deadline` (xe_now() seconds; 0: none), when *intr
 * (may be NULL) becomes nonzero, or at max_bytes of states (0: 256 MiB) and still
 * returns a bound; reaching every node it returns the relaxed game's optimum
 * (st->exact = 1), which is the one-device optimum wherever the relaxation is tight
 * (random_layered_n100 at 78% of its peak: 47.904 s, the planner's schedule). INFINITY
 * when no path exists (no schedule fits, exact) or some node does not fit the budget.
 * Returns xe_bound_cheapest(in) alone with several devices, on graphs of more than
 * XE_BOUND_SEARCH_MAX_NODES nodes, and when out of memory at the start. st (may be
 * NULL) gets the figures of the run. */
#define XE_BOUND_SEARCH_MAX_NODES 4096
enum { XE_BOUND_SEARCH_EXACT, XE_BOUND_SEARCH_STOPPED, XE_BOUND_SEARCH_MEMORY, XE_BOUND_SEARCH_SKIPPED };
typedef struct xe_bound_search_stats {
    double bound;   /* seconds, as returned */
    int exact;      /* 1: the relaxed game's optimum (or INFINITY: no schedule) */
    int stop;       /* XE_BOUND_SEARCH_*: why it ended */
    long expanded;  /* states expanded */
    size_t states;  /* states stored */
    double seconds; /* wall time of the call */
} xe_bound_search_stats;
double xe_bound_search(const xe_instance *in, double deadline, size_t max_bytes,
                       const volatile sig_atomic_t *intr, xe_bound_search_stats *st);
/* The same in three steps, so that a thread can run it without allocating (a process
 * that forks while another thread is inside malloc can leave the child a locked
 * allocator; the planner forks CBC while the search runs): xe_bsearch_new allocates
 * everything but the state arrays' growth, which is mmap (in, which must outlive the
 * search, and max_bytes as above; NULL where the search does not apply, as above: several
 * devices, too many nodes, a node that fits nothing, or when out of memory; then
 * xe_bound_search returns every node once); xe_bsearch_run searches
 * once (a second call returns the every-node-once bound) and returns what
 * xe_bound_search returns; xe_bsearch_free frees (NULL: no-op). */
typedef struct xe_bsearch xe_bsearch;
xe_bsearch *xe_bsearch_new(const xe_instance *in, size_t max_bytes);
double xe_bsearch_run(xe_bsearch *s, double deadline, const volatile sig_atomic_t *intr, xe_bound_search_stats *st);
void xe_bsearch_free(xe_bsearch *s);
/* The cheapest path of the relaxed game, once xe_bsearch_run reached every node (its
 * stats' stop XE_BOUND_SEARCH_EXACT with a finite bound): order[0..n-1] (caller-owned,
 * n = the graph's nodes) receives the nodes in the order the path first computes them, a
 * topological order, and *drops the number of drop moves on the path. With no drops the
 * path is itself a schedule: every node computed once in that order, each output freed
 * after its last reader, within the budget at every compute, so it attains the bound,
 * every node once (the planner takes it: docs/lns.md, "Bounds" 6). Not to be called
 * while xe_bsearch_run runs. XE_OK; XE_EINFEASIBLE when the run did not reach every node;
 * XE_ENOMEM. */
int xe_bsearch_path(const xe_bsearch *s, int *order, int *drops);

/* The reach bound (src/solvers/bound_reach.c, docs/lns.md "Bounds" 7), one device, valid
 * for every event list of ../shared/PROBLEM.md: the least cost of an event list from
 * empty memory that ends with a target node resident, by A* backwards over resident
 * sets (reach(S) = min over the member s computed last of c(s) + reach((S \ {s}) u
 * inputs(s)), within the budget), plus every node outside the target's ancestors once.
 * The target is the node whose ancestors and itself cost most once. Anytime like
 * xe_bound_search: stopped at `deadline` (xe_now() seconds; 0: none), when *intr becomes
 * nonzero, or at max_bytes (0: 256 MiB), it returns the least f popped, still a bound;
 * exact (st->exact) when it reaches the empty set; INFINITY when no list reaches the
 * target (no schedule fits). Returns xe_bound_cheapest(in) where it does not apply (as
 * xe_bound_search: several devices, more than XE_BOUND_SEARCH_MAX_NODES nodes, a node
 * that does not fit with its inputs, out of memory at the start). */
double xe_bound_reach(const xe_instance *in, double deadline, size_t max_bytes, const volatile sig_atomic_t *intr,
                      xe_bound_search_stats *st);
/* The same in steps, for a thread (it allocates nothing while it runs: mapped arrays):
 * xe_rsearch_new (NULL where the search does not apply or out of memory; in must
 * outlive it), xe_rsearch_run (once; a second call returns the first's result),
 * xe_rsearch_free (NULL: no-op). xe_rsearch_target: the target node. */
typedef struct xe_rsearch xe_rsearch;
xe_rsearch *xe_rsearch_new(const xe_instance *in, size_t max_bytes);
double xe_rsearch_run(xe_rsearch *s, double deadline, const volatile sig_atomic_t *intr, xe_bound_search_stats *st);
int xe_rsearch_target(const xe_rsearch *s);
void xe_rsearch_free(xe_rsearch *s);
/* Once xe_rsearch_run was exact with a finite result and every node is an ancestor of
 * the target (or the target): the cheapest path as a schedule, into *out (initialised
 * here, caller-owned: xe_schedule_clear), replayed by the simulator, its cost in *cost
 * (seconds; equal to the bound, so optimal over every schedule). XE_EINFEASIBLE where
 * there is none (not exact, or nodes outside the target's ancestors), XE_EINVAL if the
 * path does not read back or replay (a bug), XE_ENOMEM. Not while xe_rsearch_run runs. */
int xe_rsearch_schedule(xe_rsearch *s, xe_schedule *out, double *cost);

/* Reach windows (src/solvers/reach_window.c, docs/lns.md "Reach windows"): a
 * large-neighbourhood search over one device's event lists. The schedule in hand is a
 * compute sequence (frees right after each last read); a window is a run of its computes
 * [i, j). With R0 the tensors resident before i and T those the rest reads after j (plus
 * the window's last computes of nodes computed nowhere else, so that every node stays
 * computed), the cheapest list of computes that starts from R0 resident and ends with T
 * resident within the budget is searched for by the reach recursion of xe_bound_reach
 * with every subset of R0 reached at no cost (weighted A* backwards, the cost of the
 * nodes that must still be computed, once each, as its estimate, pruned at the window's
 * cost), and replaces the window where it is cheaper. A window searched to its end
 * without one has no cheaper list that ends with T resident. Windows are drawn at
 * random (half of them around a
 * recomputation), their length adapted: longer after windows searched to the end,
 * shorter after those stopped at max_expanded. */
typedef struct xe_rwindow_opts {
    double time_limit;   /* seconds, > 0 */
    uint64_t seed;       /* the windows drawn */
    int max_len;         /* the longest window, computes; 0: 160 */
    long max_expanded;   /* states expanded in one window at most; 0: 100,000 */
    size_t max_bytes;    /* the search's memory, bytes; 0: 256 MiB */
    long max_windows;    /* stop after this many windows searched (0: none); with a time
                            limit never reached, the result is the same on every run */
    double target;       /* seconds: stop once the schedule costs at most this; 0: none */
    const volatile sig_atomic_t *interrupt; /* once set, acts as the deadline (NULL: none) */
} xe_rwindow_opts;

/* Defaults: 1 s, seed 1, the 0s above. */
void xe_rwindow_opts_default(xe_rwindow_opts *o);

typedef struct xe_rwindow_result {
    double start_cost, cost; /* seconds: the start's sum of compute times, the result's */
    long windows;            /* windows searched */
    long improved;           /* of them, replaced by a cheaper list */
    long capped;             /* of them, stopped at max_expanded or the memory limit */
    int max_len;             /* the window length reached at the end (adapted) */
    double time_best;        /* seconds from the call to the last improvement */
    double time_total;       /* seconds */
} xe_rwindow_result;

/* Improves start (a valid schedule of in, one device, computes and frees only) into *out
 * (cleared first; caller-owned): its computes, cheapest first found, each tensor freed
 * after its last read, replayed by the simulator; cost <= start's. Stops at the time
 * limit, at o->target or at *o->interrupt. Where the search does not apply (more than
 * XE_BOUND_SEARCH_MAX_NODES nodes, or no memory for its store), *out is start's computes
 * with those nothing reads dropped and each tensor freed after its last read (no
 * dearer, possibly cheaper). Errors: XE_EINVAL
 * (several devices, copies, a start that is not valid or over the budget, a time limit
 * not > 0), XE_ENOMEM, XE_EINTERNAL (the simulator rejects a sequence found: a bug). */
int xe_rwindow_improve(const xe_instance *in, const xe_schedule *start, const xe_rwindow_opts *o, xe_schedule *out,
                       xe_rwindow_result *res, xe_err *err);

/* The best of the two combinatorial bounds for stage schedules, seconds:
 * max(xe_bound_cheapest, xe_bound_eviction), the latter only where finite (an infinite
 * eviction bound would claim no stage schedule exists; the planners report that
 * themselves). INFINITY when some node fits no device. What solve and sweep report
 * before any MILP bound. */
double xe_bound_stage(const xe_instance *in);

/* LP relaxation of the MILP (xe_milp_solve with relax = 1): *lp = its optimum, a lower
 * bound on the stage-class optimum, or -INFINITY when the LP did not finish within
 * time_limit seconds (solved in a child process killed at the limit when isolate).
 * *infeasible = 1 when the LP is infeasible (then no stage schedule exists).
 * XE_ENOMEM, XE_ESOLVER. */
int xe_bound_lp(const xe_instance *in, double time_limit, int isolate, double *lp, int *infeasible, xe_err *err);

/* Minimum feasible budget of device d, the other budgets fixed: *lower as in
 * xe_budget_range (proven: the largest footprint of a node no other device can hold);
 * *upper = the smallest budget, to 1% by bisection, at which xe_heur_best finds a
 * schedule (so a schedule exists there), 0 when none is found even at the
 * no-recomputation peak plus the largest footprint. *lower == *upper means the minimum
 * is known exactly. in is not modified. */
int xe_min_budget(const xe_instance *in, int d, int64_t *lower, int64_t *upper, xe_err *err);

/* xe_min_budget with its bisection stopped before max_seconds (wall, from the call)
 * pass: no portfolio run starts that would end past them by the last run's time, or
 * before any, by run_s (seconds one run is expected to take, e.g. the planner's
 * portfolio at the budget asked; 0: unknown), since a run is not interrupted. *upper
 * is then the smallest budget where a schedule was found so far (at worst the
 * no-recomputation peak, or that plus the largest footprint: the first check, which
 * always runs), still a budget where a schedule exists; *lower is the same. *complete
 * (may be NULL) = 1 when the bisection ran to its end (the same *upper as
 * xe_min_budget), 0 when it was cut or nothing was found. */
int xe_min_budget_within(const xe_instance *in, int d, double max_seconds, double run_s, int64_t *lower,
                         int64_t *upper, int *complete, xe_err *err);

/* ---- Anytime large-neighbourhood search (docs/lns.md) ---- */

typedef struct xe_lns_opts {
    double time_limit;  /* wall seconds for the whole search, > 0 (default 60) */
    double rel_gap;     /* stop when (incumbent - bound) / incumbent <= rel_gap (1e-4) */
    double bound;       /* a known lower bound in seconds for that test (-INFINITY) */
    int threads;        /* CBC threads (1) */
    int isolate;        /* window solves in a child process (0; see xe_milp_opts) */
    int progress;       /* 1: one line on stderr per improvement, 2: also one per
                           window (0) */
    int window;         /* initial window in stages, 0: chosen from the model size */
    uint64_t seed;      /* window offsets (1) */
    double slice;       /* wall seconds at most per neighbourhood solve, 0: the default
                           max(1, min(time_limit / 30, 5)) */
    const volatile sig_atomic_t *interrupt; /* optional: nonzero stops the search at its
                           next check (between neighbourhoods; an isolated solve within
                           50 ms), keeping the incumbent: stop "interrupted" (NULL) */
    double (*bound_fn)(void *ctx); /* optional: a lower bound in seconds, valid for the
                           instance, that may rise while the search runs (the planner's
                           search bound on another thread; -INFINITY while none), read
                           between neighbourhoods: it raises res->bound, so the search
                           stops "bound reached" once it proves the incumbent (NULL) */
    void *bound_ctx;    /* bound_fn's argument */
    int (*beaten_fn)(void *ctx, double incumbent); /* optional: 1 when the caller holds a
                           schedule cheaper than `incumbent` seconds (the planner's reach
                           bound's path, found on another thread), read with bound_fn:
                           the search then stops "a cheaper schedule in hand" (NULL; its
                           ctx is bound_ctx) */
    /* optional: what solves each neighbourhood, in place of xe_milp_solve (its contract,
       with milp_ctx passed first); for tests that make it fail (NULL) */
    int (*milp_fn)(void *ctx, const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err);
    void *milp_ctx;     /* milp_fn's argument */
} xe_lns_opts;

/* Neighbourhoods in a row on which CBC may fail before LNS stops ("solver failed"). */
#define XE_LNS_MAX_FAILURES 8

typedef struct xe_lns_result {
    double objective;   /* seconds, of sol */
    double time_best;   /* wall seconds from the call until sol was found (0: start) */
    double time_total;  /* wall seconds spent */
    double bound;       /* best lower bound known (opts.bound, or a window that covered
                           all stages and was solved to optimality: then = objective) */
    int iterations, improvements;
    int optimal;        /* 1 when a whole-model window proved sol optimal (stage class) */
    const char *stop;   /* why it stopped: "optimal", "bound reached" (gap <= rel_gap),
                           "time limit", "interrupted", "solver failed" (CBC failed on
                           XE_LNS_MAX_FAILURES neighbourhoods in a row) (static string) */
    int failures;       /* neighbourhoods on which CBC failed (the incumbent stood) */
    char failure[200];  /* the first failure's message ("" when none) */
    int ntrace;         /* improvements recorded: trace_t[k] seconds from the call,
                           trace_obj[k] the objective then (the first 63, then the last) */
    double trace_t[64], trace_obj[64];
    xe_stages sol;      /* owned; passed xe_stages_check and the simulator */
} xe_lns_result;

void xe_lns_opts_default(xe_lns_opts *o);

/* Improves start (must pass xe_stages_check) by re-solving neighbourhoods with the MILP
 * while everything else stays fixed to the incumbent, in rotation: windows of
 * consecutive stages, connected node sets, and the nodes the incumbent recomputes or
 * copies (docs/lns.md, "LNS"); neighbourhoods grow when a sweep finds nothing and shrink
 * when they hit their time slice. The
 * incumbent is always a valid schedule: each improvement passes xe_stages_check and the
 * simulator before it is kept. Returns XE_OK with res filled (res->sol at least as good
 * as start); XE_EINVAL for a bad start or options; XE_ENOMEM; XE_ESOLVER when CBC
 * fails. Free res with xe_lns_result_clear. */
int xe_lns_solve(const xe_instance *in, const xe_stages *start, const xe_lns_opts *o, xe_lns_result *res,
                 xe_err *err);
void xe_lns_result_clear(xe_lns_result *res);

/* ---- Budget descent (docs/lns.md, "Budget descent") ---- */

typedef struct xe_descent_opts {
    double time_limit;  /* wall seconds, > 0 (default 60) */
    int threads;        /* CBC threads (1) */
    int isolate;        /* neighbourhood solves in a child process (0; see xe_milp_opts) */
    int progress;       /* 1: one line on stderr per lower overflow and per restart, 2:
                           also one per neighbourhood (0) */
    uint64_t seed;      /* neighbourhood choice (1) */
    double slice;       /* wall seconds at most per neighbourhood, 0: max(1, min(time_limit
                           / 30, 5)) as LNS */
    const volatile sig_atomic_t *interrupt; /* optional: as xe_lns_opts.interrupt; the
                           descent then ends as at its time limit (NULL) */
} xe_descent_opts;

typedef struct xe_descent_result {
    xe_stages sol;          /* owned: with XE_OK a schedule within in's budgets (passed
                               xe_stages_check and the simulator); with XE_ETIMEOUT the
                               last incumbent (over the budgets by res->overflow);
                               zeroed otherwise. Free with xe_stages_clear */
    double objective;       /* seconds, xe_stages_cost(sol) (with XE_ETIMEOUT that of the
                               incumbent over the budgets; 0 without schedule) */
    double start_overflow;  /* bytes: the start's overflow, summed over stages and devices
                               (each stage counted at its fullest step) */
    double overflow;        /* bytes: the same for the incumbent reported (the least seen;
                               0 on success) */
    double worst;           /* bytes: that incumbent's largest overflow of one stage on one
                               device (0 on success) */
    double time_found;      /* wall seconds until sol fitted (0 without schedule) */
    double time_total;      /* wall seconds spent */
    int iterations, improvements;
    int restarts;           /* fresh starts after 16 neighbourhoods without gain */
    int proven;             /* 1: a neighbourhood covering the whole model was solved to
                               optimality with overflow left: no stage schedule fits */
} xe_descent_result;

void xe_descent_opts_default(xe_descent_opts *o);

/* A start for xe_descent_solve: the greedy (xe_heur_greedy) at every budget of in scaled
 * by the least factor f > 1 it finds (doubling the excess over 1 from 1.05, then up to
 * six bisection steps while under half of max_seconds), no budget raised beyond what
 * holds the no-recomputation schedule; *factor = f when factor is non-NULL. out is
 * initialised here (free with xe_stages_clear). XE_EINFEASIBLE when even those budgets
 * give nothing; XE_ETIMEOUT when max_seconds (wall) pass before any schedule; XE_ENOMEM;
 * the greedy's other errors. */
int xe_descent_start(const xe_instance *in, double max_seconds, xe_stages *out, double *factor, xe_err *err);

/* Budget descent: start (a stage schedule of in's graph and devices that may exceed in's
 * budgets) is made to fit them by re-solving neighbourhoods (a random part of what an
 * overflowing stage holds, free in every stage, grown over inputs and users; every other
 * turn over inputs only) with the soft-budget MILP (xe_milp_opts.soft_budget:
 * the incumbent's own peaks as hard caps, each stage's overflow above in's budgets paid
 * in the objective at a weight per byte above any stage schedule's cost, so that the
 * optimum of a neighbourhood minimises overflow first, cost second). A neighbourhood's
 * answer replaces the incumbent when its total overflow is lower (or equal at a lower
 * cost); after 16 neighbourhoods without a lower overflow the search restarts from the
 * greedy at 1.06x, 1.08x, ... the budgets (the least overflow seen is kept for the
 * report). Returns XE_OK with
 * res->sol within the budgets; XE_EINFEASIBLE (res->proven) when a neighbourhood that
 * frees every node is solved to optimality with overflow left, at least 1 byte and
 * 10^-6 of the largest budget (small graphs: a proof that no stage schedule fits; a
 * smaller least overflow is within CBC's resolution and ends as XE_ETIMEOUT, not a
 * proof); XE_ETIMEOUT ("still over the budgets") when the time runs out first
 * (res->overflow says how far it got: this proves nothing); XE_EINVAL for a start of
 * another shape, a start the MILP refuses, or bad options; XE_ESOLVER when CBC fails on
 * five neighbourhoods in a row; XE_ENOMEM. The start is pruned (xe_stages_prune) first. */
int xe_descent_solve(const xe_instance *in, const xe_stages *start, const xe_descent_opts *o, xe_descent_result *res,
                     xe_err *err);

/* xe_descent_start (within o->time_limit) then xe_descent_solve from its schedule in the
 * time left: the whole budget descent in one call. res is initialised
 * here, as by xe_descent_solve; the start's errors (XE_ETIMEOUT, XE_EINFEASIBLE: no start
 * schedule, res->sol empty, res->iterations 0) or xe_descent_solve's. */
int xe_descent(const xe_instance *in, const xe_descent_opts *o, xe_descent_result *res, xe_err *err);

/* Bytes of overflow below which CBC's answers cannot be told from a fit: 1 byte, or
 * 10^-6 of the largest budget when that is more (LP tolerances are relative, about
 * 10^-9: one byte of a GB budget is below them; tests/test_descent.c shows false
 * infeasibility claims at such scales). */
double xe_descent_margin(const xe_instance *in);

/* Checks a MILP claim that no stage schedule fits in's budgets, where the budgets are too
 * large for CBC to resolve single bytes (xe_descent_margin > 1): the soft-budget model
 * (xe_milp_opts.soft_budget) of the whole instance, from xe_descent_start's schedule, is
 * solved within max_seconds (wall) on `threads` CBC threads; the claim is confirmed when
 * it is solved to optimality and its schedule still overflows by at least the margin.
 * Returns 1 (confirmed), 0 (not: a schedule within the margin exists, or the time ran
 * out), or XE_ENOMEM / another error of the start's greedy; *least (may be NULL) = the
 * optimal schedule's overflow in bytes, NAN when unknown. */
int xe_descent_confirm_infeasible(const xe_instance *in, double max_seconds, int threads, double *least, xe_err *err);

/* Binary R, S and C columns of the whole MILP after its liveness presolve (an estimate
 * of its size before building it: the full model also has U, FREE and, with budgets
 * below footprints, fewer R). Above about 40,000, CBC rarely finishes the root LP in a
 * minute on this machine. */
int64_t xe_milp_binary_estimate(const xe_instance *in);

#ifdef __cplusplus
}
#endif

#endif
