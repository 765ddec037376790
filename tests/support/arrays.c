#include "support/arrays.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

xe_instance *xe_test_array_instance(int n, const int64_t *mem, const double *cost, const int *edges, int ndev)
{
    xe_err err;
    xe_graph *g = xe_graph_new("t");
    assert_non_null(g);
    for (int v = 0; v < n; v++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, 0, mem[v], 0, cost[v], &err), v);
    }
    for (int e = 0; edges[e] >= 0; e += 2) assert_int_equal(xe_graph_add_edge(g, edges[e], edges[e + 1], &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, ndev);
    assert_non_null(in);
    for (int v = 0; v < n; v++)
        for (int d = 0; d < ndev; d++) {
            in->cost[v * ndev + d] = cost[v] * (1 + 7 * d);
            for (int e = 0; e < ndev; e++) in->copy[(v * ndev + d) * ndev + e] = d == e ? 0.0 : 0.5;
        }
    return in;
}
