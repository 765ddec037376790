/* Fitting a topological order to a budget on one graph (docs/reorder.md): the exact
 * depth-first search alone (xe_order_fit), the annealing over orders alone
 * (xe_order_anneal from the index order, seed 1) and the planner's combination
 * (xe_order_fit_within: the search for a share of the time, then the annealing), side by
 * side on the same targets in one run.
 *
 *   order_fit_bench GRAPH.json SECONDS PCT [PCT ...]
 *
 * PCT: targets in percent of the graph order's no-recomputation peak. Prints a markdown
 * row per target: for each method "found" with the seconds it took and the order's peak
 * (% of the graph order's), "none" (the search proved that no order fits) or "-" (nothing
 * within SECONDS). bench/fit_orders.sh runs it on generated graphs. */
#include <stdio.h>
#include <stdlib.h>

#include "xengine/io.h"
#include "xengine/reorder.h"
#include "xengine/timer.h"

static void cell(int rc, const xe_order_fit_result *r, double secs, int64_t peak)
{
    if (rc != XE_OK) printf(" error %d |", rc);
    else if (r->status == XE_FIT_FOUND) printf(" %.3f s (%.2f%%) |", secs, 100.0 * (double)r->peak / (double)peak);
    else if (r->status == XE_FIT_NONE) printf(" none (%.3f s) |", secs);
    else printf(" - |");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: order_fit_bench GRAPH.json SECONDS PCT [PCT ...]\n");
        return 2;
    }
    xe_graph *g;
    xe_err err;
    if (xe_io_read_graph(argv[1], &g, &err) != XE_OK) {
        fprintf(stderr, "order_fit_bench: %s\n", err.msg);
        return 1;
    }
    double secs = atof(argv[2]);
    int64_t peak = xe_instance_norecompute_peak(g);
    int *order = malloc(((size_t)g->n + 1) * sizeof *order);
    if (!order || peak <= 0) {
        fprintf(stderr, "order_fit_bench: out of memory\n");
        return 1;
    }
    for (int a = 3; a < argc; a++) {
        double pct = atof(argv[a]);
        int64_t target = (int64_t)(pct / 100.0 * (double)peak);
        xe_order_fit_result r;
        printf("| %s | %d | %.1f%% |", argv[1], g->n, pct);
        double t0 = xe_now();
        int rc = xe_order_fit(g, target, t0 + secs, NULL, 0, order, &r, &err);
        cell(rc, &r, xe_now() - t0, peak);
        t0 = xe_now();
        rc = xe_order_anneal(g, target, NULL, 1, t0 + secs, NULL, order, &r, &err);
        cell(rc, &r, xe_now() - t0, peak);
        t0 = xe_now();
        rc = xe_order_fit_within(g, target, secs, NULL, order, &r, NULL, &err);
        cell(rc, &r, xe_now() - t0, peak);
        printf("\n");
        fflush(stdout);
    }
    free(order);
    xe_graph_free(g);
    return 0;
}
