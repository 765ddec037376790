/* xengine — the data-flow graph G = (V, E) of one training (or inference) step.
 *
 * Nodes are operators in a fixed topological order 0..n-1 (../shared/PROBLEM.md):
 * node v produces one output tensor of nodes[v].mem bytes; an edge (u, v) says v reads
 * u's output, and u < v always holds once the graph is finalized. Plain arrays with
 * indices (no pointer web): pred/succ lists are CSR arrays built by xe_graph_finalize.
 * The graph owns every string and array it holds. */
#ifndef XENGINE_GRAPH_H
#define XENGINE_GRAPH_H

#include <stdint.h>

#include "xengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest size of one tensor and of all tensors together, in bytes (2^53, 8 PiB: exact
 * in a double, and sums of sizes cannot overflow int64_t). */
#define XE_MAX_BYTES (INT64_C(1) << 53)

typedef struct xe_node {
    char *name;        /* owned, never NULL */
    char *op;          /* operator type ("Conv", "Relu", ... or "unknown"); owned */
    int backward;      /* 1 for gradient (backward) nodes, 0 for forward and loss */
    int64_t mem;       /* bytes of the output tensor, >= 0 */
    int64_t param_mem; /* bytes of the node's parameters (not part of the budget), >= 0 */
    double cost;       /* single-device compute cost from the file, in the file's unit;
                          per-device costs live in xe_instance */
} xe_node;

typedef struct xe_graph {
    char *name;     /* owned; may be "" */
    int n;          /* number of nodes */
    xe_node *nodes; /* [n] */
    int m;          /* number of distinct edges (after finalize) */
    int *esrc;      /* [m] edge sources, sorted by (dst, src) after finalize */
    int *edst;      /* [m] edge targets */
    int *pred_off;  /* [n+1] CSR: preds of v are pred[pred_off[v] .. pred_off[v+1]) */
    int *pred;      /*        ascending */
    int *succ_off;  /* [n+1] CSR: users of v are succ[succ_off[v] .. succ_off[v+1]) */
    int *succ;      /*        ascending */
    int finalized;
    int cap_nodes, cap_edges; /* private: growth */
} xe_graph;

/* 1 when the NUL-terminated s is valid UTF-8 (no overlong form, no surrogate, nothing
 * above U+10FFFF), else 0. Names read from files are checked with it where they enter. */
int xe_utf8_valid(const char *s);

/* New empty graph named `name` (copied; NULL means ""). Returns NULL when out of memory.
 * Free with xe_graph_free. */
xe_graph *xe_graph_new(const char *name);

/* Frees g and everything it owns. NULL is a no-op. */
void xe_graph_free(xe_graph *g);

/* Appends a node; returns its index (>= 0) or a negative XE_E* code:
 * XE_EINVAL for mem or param_mem < 0 or > XE_MAX_BYTES, cost < 0, NaN or infinite, or a graph already finalized;
 * XE_ENOMEM. name and op are copied (op NULL means "unknown"). */
int xe_graph_add_node(xe_graph *g, const char *name, const char *op, int backward,
                      int64_t mem, int64_t param_mem, double cost, xe_err *err);

/* Records edge u -> v (v reads u's output). Indices must exist (XE_EINVAL otherwise);
 * duplicates are merged and self-loops rejected at finalize. */
int xe_graph_add_edge(xe_graph *g, int u, int v, xe_err *err);

/* Checks and indexes the graph: rejects a graph, node or op name that is not valid UTF-8
 * (XE_EINVAL: "node 3: name is not valid UTF-8"; every output file is JSON, which holds
 * UTF-8 only), self-loops and cycles (XE_EINVAL, naming a node on the cycle), and edges
 * u -> v with u > v that do not form a cycle (XE_EINVAL: "not in topological order"); a
 * total of mem above XE_MAX_BYTES (XE_EINVAL); merges duplicate edges; builds pred/succ
 * CSR. Idempotent. */
int xe_graph_finalize(xe_graph *g, xe_err *err);

/* Number of inputs / users of v (finalized graph). */
static inline int xe_graph_npred(const xe_graph *g, int v) { return g->pred_off[v + 1] - g->pred_off[v]; }
static inline int xe_graph_nsucc(const xe_graph *g, int v) { return g->succ_off[v + 1] - g->succ_off[v]; }

/* Largest index of a user of v, or -1 when v has no user. */
int xe_graph_last_use(const xe_graph *g, int v);

/* reach[i] = the largest index of a descendant of i (-1 without users), for every node
 * of a finalized graph: i is live in the stages i..reach[i] of a stage schedule
 * (docs/formulation.md, "Size and presolve"). Returns a malloc'd array of n ints the
 * caller frees, or NULL when out of memory. O(n + m). */
int *xe_graph_reach(const xe_graph *g);

/* Bytes node v needs resident on the device that computes it: mem[v] plus the mem of
 * each input (PROBLEM.md: while v runs, its inputs and its output count together). */
int64_t xe_graph_footprint(const xe_graph *g, int v);

/* Sum of mem over all nodes, in bytes. */
int64_t xe_graph_total_mem(const xe_graph *g);

#ifdef __cplusplus
}
#endif

#endif
