/* Seeded random tiny instances for the brute-force comparisons.
 *
 * xe_test_random_instance(seed, n, ndev, with_copy_cost) builds, deterministically from
 * its arguments (own splitmix64 generator, no global state):
 *   - a DAG on n nodes: each edge j -> i (j < i) with probability 0.4, and every node
 *     i > 0 gets at least one input (a random j < i) so the graph is connected;
 *   - mem[v] in [1, 10] bytes; cost[v][d] in [1, 10] seconds, drawn independently per
 *     device; with ndev >= 2, about one node in eight cannot run on one of the devices
 *     (XE_NO_COST), never on all of them;
 *   - copy[v][d][e] in [1, 6] seconds when with_copy_cost, else 0;
 *   - budget[d] drawn around the largest single-node footprint lo (mem of a node plus
 *     its inputs) and the sum of all mem hi: with probability 1/8 just below lo (lo-1
 *     or lo-2: a device too small for that node; with one device an infeasible
 *     instance), 1/4 exactly lo, 1/4 in the lower third of [lo, hi], 1/4 anywhere in
 *     [lo, hi], 1/8 hi; so infeasible, tight and loose budgets all occur.
 * Device 0 is a "gpu", device 1 a "cpu", further ones "devK".
 * Returns NULL on bad arguments (n < 1, ndev < 1 or > XE_MAX_DEV) or out of memory.
 * Free with xe_instance_free. */
#ifndef XENGINE_TESTS_RANDINST_H
#define XENGINE_TESTS_RANDINST_H

#include <stdint.h>

#include "xengine/instance.h"

xe_instance *xe_test_random_instance(uint64_t seed, int n, int ndev, int with_copy_cost);

/* A random DAG of n nodes in index order, deterministic from seed (splitmix64 from
 * seed itself): edges j -> i (j < i) with probability p, and, for a node that got none,
 * with probability 1/2 one from a random earlier node; sizes 1-1000 B, costs 1-10 s;
 * one device "gpu" whose budget is budget_frac of the way from the largest footprint
 * to the index order's no-recomputation peak (1: the peak). NULL on n < 1 or out of
 * memory. */
xe_instance *xe_test_random_dag(uint64_t seed, int n, double p, double budget_frac);

#endif
