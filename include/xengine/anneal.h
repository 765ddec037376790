/* xengine — event-list local search on one device: simulated annealing over the
 * sequence of computes (docs/anneal.md).
 *
 * On one device a schedule of ../shared/PROBLEM.md is, up to its frees, the sequence of
 * its computes: given the sequence, freeing every tensor right after its last read
 * (before that node's next compute) is the least memory at every moment, and the cost is
 * the sum of the computes' times. So the search moves over compute sequences only:
 *
 *   delete   drop one compute of a node computed more than once (its readers read the
 *            node's previous compute, which then lives longer);
 *   insert   compute an input u of some event e again, at a random place between u's
 *            compute that e reads and e (e and the reads after it read the new one);
 *   move     take one compute out and put it back up to 20 places away (one move in
 *            four: up to half the sequence away).
 *
 * A sequence is admitted when every compute finds its inputs computed before it and
 * every node is computed; its energy is cost + lambda * overflow, overflow being the
 * bytes above the budget summed over the computes (so an overflowing sequence can be
 * passed through on the way to a cheaper valid one), lambda set from the graph's mean
 * cost per byte. Moves are accepted by the Metropolis rule, the temperature falling
 * geometrically over a round; each round starts again from the cheapest valid sequence
 * found, until the deadline. Nothing here bounds the optimum: it only improves a valid
 * schedule, which the planner then reports against its bounds over every schedule. */
#ifndef XENGINE_ANNEAL_H
#define XENGINE_ANNEAL_H

#include <signal.h>
#include <stdint.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xe_anneal_opts {
    double time_limit;                   /* seconds, > 0: stops at the first check after it */
    uint64_t seed;                       /* seeds round r with seed + r */
    int64_t round_moves;                 /* proposed moves per round; 0: 2,000 per compute
                                            of the start, from 200,000 to 2,000,000 */
    double t_hot, t_cold;                /* the round's first and last temperature, as a
                                            fraction of the mean compute time of a node;
                                            0: 0.6 and 0.004 */
    double penalty;                      /* lambda as a multiple of the mean compute time
                                            per mean byte; 0: 10 */
    int max_rounds;                      /* stop after this many rounds even with time left
                                            (0: none); one round is the same on every run */
    double target;                       /* seconds: stop once the cheapest valid sequence
                                            costs at most this (a bound proves it); 0: none */
    const volatile sig_atomic_t *interrupt; /* once set, acts as the deadline (NULL: none) */
} xe_anneal_opts;

/* Defaults: 1 s, seed 1, the 0s above. */
void xe_anneal_opts_default(xe_anneal_opts *o);

typedef struct xe_anneal_result {
    double start_cost;    /* seconds: the start's sum of compute times */
    double cost;          /* seconds: the result's (<= start_cost) */
    int64_t peak;         /* bytes: the result's peak, <= the budget */
    int64_t moves;        /* moves proposed, all rounds */
    int rounds;           /* rounds run to their end */
    int partial;          /* 1 when a further round was cut short (time limit, interrupt,
                             target reached) */
    double time_best;     /* seconds from the call to the cheapest sequence */
    double time_total;    /* seconds in the call */
} xe_anneal_result;

/* Simulated annealing (Kirkpatrick, Gelatt, Vecchi, "Optimization by simulated
 * annealing", Science 1983; Metropolis acceptance) over the compute sequences above.
 * Improves the valid one-device schedule `start` of `in` (in->ndev must be 1; copies are
 * not allowed there) within o->time_limit seconds, and writes the cheapest valid
 * schedule found to *out (cleared first; owned by the caller; start itself, re-written
 * with its frees at the last reads, when nothing cheaper was found; either way without
 * computes that nothing reads, unless they are their node's only one). Every schedule
 * written has been replayed by the simulator (xe_sim_run) within in->dev[0].budget.
 * Errors: XE_EINVAL (not one device, a start that the simulator rejects or that exceeds
 * the budget, bad options), XE_ENOMEM; *out is then empty. Deterministic for a given seed
 * as far as the rounds that fit in the time limit. */
int xe_anneal(const xe_instance *in, const xe_schedule *start, const xe_anneal_opts *o, xe_schedule *out,
              xe_anneal_result *res, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
