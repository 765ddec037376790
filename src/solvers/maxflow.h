/* Internal: maximum flow on a small directed network with real capacities, by Dinic's
 * algorithm (E. A. Dinic, "Algorithm for solution of a problem of maximum flow in a
 * network with power estimation", Soviet Math. Doklady 11, 1970): BFS levels, then
 * blocking flows along level-increasing paths; O(V^2 E). Used by the bottleneck bound
 * (bound_cut.c), whose networks have 2n + 2 vertices for an n-node graph. Capacities
 * are seconds or seconds per byte times bytes; INFINITY is allowed (an edge that is
 * never cut). No global state; every allocation checked. */
#ifndef XE_SOLVERS_MAXFLOW_H
#define XE_SOLVERS_MAXFLOW_H

typedef struct xe_flow xe_flow;

/* A network of nv >= 2 vertices (0 .. nv-1) and no edges. NULL when out of memory. */
xe_flow *xe_flow_new(int nv);

void xe_flow_free(xe_flow *f);

/* Removes every edge (the vertices stay): the network is built again for another
 * question without reallocating. */
void xe_flow_clear(xe_flow *f);

/* Adds the edge a -> b of capacity cap >= 0 (INFINITY allowed) and its residual twin.
 * Returns 0, or -1 when out of memory (the network is unchanged then). */
int xe_flow_add(xe_flow *f, int a, int b, double cap);

/* The value of a maximum s-t flow (s != t), which equals the capacity of a minimum s-t
 * cut; pushes it into the network (a second call on the same network returns 0).
 * INFINITY when an s-t path has only infinite edges. A flow is pushed only along
 * residual capacities above 1e-12 times the largest finite capacity, so the value
 * returned is that of a feasible flow: at most the minimum cut, never above it. */
double xe_flow_max(xe_flow *f, int s, int t);

#endif
