/* Internal: the size of the stage MILP per node and per stage before it is built (LNS
 * and budget descent size their neighbourhoods with it; xe_milp_binary_estimate sums
 * it). Node i is live in the stages i..max(reach[i], i) (docs/formulation.md, "Size and
 * presolve"); in each of them it has 2D + D(D-1) binary R, S and C columns. */
#ifndef XE_SOLVERS_COLUMNS_H
#define XE_SOLVERS_COLUMNS_H

#include <stdint.h>

#include "xengine/instance.h"

/* ncols[i] = binary columns of node i over all its live stages ([n], caller's); stage
 * (may be NULL) [n], caller's: stage[t] = binary columns of stage t. reach is
 * xe_graph_reach(in->g). Returns their total. O(n). */
int64_t xe_node_binaries(const xe_instance *in, const int *reach, int64_t *ncols, int64_t *stage);

#endif
