/* xengine — dynamic eviction on one device: a schedule for any graph in time near
 * linear in its size, without the stage matrices (docs/dtr.md).
 *
 * The idea is Dynamic Tensor Rematerialization (DTR; Kirisame et al., "Dynamic Tensor
 * Rematerialization", ICLR 2021), run offline: the nodes are computed once each in a
 * topological order; when a compute does not fit the budget, resident tensors that are
 * still needed are evicted (freed) by a score, and a tensor that is needed but absent is
 * computed again from its inputs, recursively (a source can always be recomputed). What
 * comes out is an event list of ../shared/PROBLEM.md, outside Checkmate's stage
 * structure, checked by the simulator before it is returned.
 *
 * Score: an evictable tensor u (resident, not an input of a compute in progress, read
 * again later) is scored by what bringing it back would cost per byte it frees and per
 * step it has been idle: the lesser of cost(u, d) + the costs of its absent inputs and,
 * on several devices, the copies out to another device and back, over
 * mem(u) x (steps since its last use + 1) (DTR's h with its one-level neighbourhood);
 * the lowest goes first. Tensors of 0 bytes are never evicted.
 *
 * It gives up (XE_EINFEASIBLE) when a compute does not fit even with every evictable
 * tensor gone: the inputs of the computes in progress stay resident, so the heuristic
 * cannot go as low as the smallest budget (the exact search, docs/pebble.md, can). Its
 * use is the first schedule where the stage heuristics are slow (graphs of thousands of
 * nodes: a greedy pass is O(n^2) per device) or find none; it bounds nothing. */
#ifndef XENGINE_DTR_H
#define XENGINE_DTR_H

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The DTR schedule of `in` computing on device `dev` alone (0 <= dev < in->ndev), every
 * node first computed in the topological order `order` (order[k] = the node first
 * computed k-th; NULL: index order) within in->dev[dev].budget bytes. With offload = 1
 * and several devices, an evicted tensor is parked on another device (copied there,
 * within its budget, and copied back when read) where that round trip costs less than
 * computing it again with its absent inputs; the other devices compute nothing. With
 * offload = 0 they stay idle, which PROBLEM.md allows. out: an initialised schedule
 * (xe_schedule_init), replaced by the event list (caller-owned; left empty on any
 * error); *cost its cost in seconds (the serial sum of its computes on dev and its
 * copies), *recomputes how many computes repeat a node (may be NULL). The list is
 * replayed by xe_sim_run before it is returned (a disagreement is XE_EINTERNAL). Checks
 * the wall clock against deadline (xe_now() seconds; INFINITY: none). Returns XE_OK;
 * XE_EINFEASIBLE when some compute does not fit with everything evictable evicted, when
 * it thrashes (over 16 computes per node), or when a node cannot run on dev (err says
 * which); XE_ETIMEOUT past the deadline; XE_EINVAL for a bad dev or an order that is not
 * a topological permutation; XE_ENOMEM. O(computes x resident tensors x devices). */
int xe_dtr_schedule(const xe_instance *in, int dev, const int *order, int offload, double deadline, xe_schedule *out,
                    double *cost, int *recomputes, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
