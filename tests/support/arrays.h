/* Small hand-written instances from arrays, shared by the solver tests. */
#ifndef XENGINE_TESTS_ARRAYS_H
#define XENGINE_TESTS_ARRAYS_H

#include <stdint.h>

#include "xengine/instance.h"

/* Builds an instance of n nodes "n0".."n<n-1>" (mem[v] bytes, cost[v] seconds) and
 * ndev devices; edges as (src, dst) pairs terminated by -1. Device d runs v at
 * cost[v] * (1 + 7 d) (a slower second device); every copy between distinct devices
 * costs 0.5 s. Budgets are left as xe_instance_new sets them. Asserts (cmocka) on
 * every failure; free with xe_instance_free. */
xe_instance *xe_test_array_instance(int n, const int64_t *mem, const double *cost, const int *edges, int ndev);

#endif
