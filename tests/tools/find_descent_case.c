/* Fixture maker for tests/cli/solve_methods.sh: searches the seeded random tiny
 * instances (tests/support/randinst.h, one device) for one where a schedule exists at a
 * budget (brute force, tests/brute) but the heuristic portfolio, randomised greedy
 * restarts included, finds none, and budget descent (auto's path then) finds one.
 * Writes that instance's graph and costs and prints the budget:
 *   build/find_descent_case GRAPH.json COSTS.json
 * The committed tests/data/descent_case_{graph,costs}.json came from it. */
#include <stdio.h>
#include <stdlib.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "xengine/io.h"
#include "xengine/solvers.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: find_descent_case GRAPH.json COSTS.json\n");
        return 1;
    }
    for (uint64_t seed = 1; seed <= 20000; seed++) {
        int n = 6 + (int)(seed % 3);
        xe_instance *in = xe_test_random_instance(seed, n, 1, 0);
        if (!in) return 1;
        xe_err err;
        int64_t total = xe_graph_total_mem(in->g), lo = xe_instance_min_footprint(in->g);
        for (int64_t b = lo; b <= total; b++) {
            in->dev[0].budget = b;
            double opt;
            if (xe_bf_stage_solve(in, &opt, NULL, &err) != XE_OK) continue;
            xe_stages st;
            int rc = xe_heur_best(in, &st, NULL, &err);
            if (rc == XE_OK) {
                xe_stages_clear(&st);
                break; /* the portfolio copes from the minimum on */
            }
            xe_descent_opts o;
            xe_descent_opts_default(&o);
            o.time_limit = 5;
            xe_descent_result res;
            rc = xe_descent(in, &o, &res, &err);
            if (rc == XE_OK) {
                printf("seed %llu, %d nodes, budget %lld B: stage optimum %g s, portfolio none, descent %g s\n",
                       (unsigned long long)seed, n, (long long)b, opt, res.objective);
                xe_stages_clear(&res.sol);
                if (xe_io_write_graph(argv[1], in->g, &err) || xe_io_write_costs(argv[2], in, 0, &err)) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                xe_instance_free(in);
                return 0;
            }
            break;
        }
        xe_instance_free(in);
    }
    fprintf(stderr, "no such instance\n");
    return 1;
}
