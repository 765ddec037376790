/* Internal interface of the chain dynamic program (src/solvers/chain_dp.c: recognition,
 * model, driver; chain_dp_table.c: bottom-up frontiers; chain_dp_lazy.c: lazy evaluation
 * and the schedule's read-back), shared with revolve.c. Positions p = -1..L are path
 * nodes; p = -1 is a virtual checkpoint of size 0 (node 0 reads nothing, so it can always
 * be recomputed from scratch). Arrays indexed by p are stored at p + 1. docs/chain-dp.md
 * gives the recursion. */
#ifndef XENGINE_SOLVERS_CHAIN_DP_H
#define XENGINE_SOLVERS_CHAIN_DP_H

#include <stdint.h>

#include "xengine/baselines.h"

typedef struct xe_cdp_model {
    const xe_instance *in;
    const xe_chain *ch;
    int d;        /* device every node runs on */
    int uniform;  /* 1: every tensor 1 unit, every forward step cost 1, backward cost 0 */
    int L;
    int64_t *A;   /* [L+2] size of path node p (0 for p = -1) */
    double *FC;   /* [L+2] cost of computing path node p (0 for p = -1) */
    int64_t *D;   /* [L+2] size of front(t), the gradient resident before group t (0 for t = L) */
    int64_t *GP;  /* [L+2] peak of running group p with x_p and front(p) resident */
    double *GC;   /* [L+2] cost of group p */
    int *gbeg, *gend; /* [L+2] group p is backward nodes gbeg..gend-1 (node ids) */
    int *front;   /* [L+2] node id of front(p) (L for p = L: x_L itself) */
    int offload;  /* 1: a checkpoint may be parked on another device (copy out, copy back) */
    int *odev;    /* [L+2] device where path node p is parked (cheapest round trip), -1 none */
    double *OC;   /* [L+2] round-trip copy seconds of path node p to odev[p] and back */
} xe_cdp_model;

#define XE_CDP_OFF (1 << 24)
#define XE_CDP_DEL (-(1 << 22)) /* choice XE_CDP_DEL - j: delegated to the j-th delegate */

typedef struct xe_cdp_pt {
    int64_t req; /* bytes (or units) the subproblem needs */
    double cost; /* seconds (or units) */
    int choice;  /* -3 base, -2 skip an empty group, s' >= 0 next checkpoint kept through its
                    own group, -10 - s' next checkpoint dropped before it (docs/chain-dp.md);
                    plus XE_CDP_OFF (either sign) when x_s is parked elsewhere meanwhile */
} xe_cdp_pt;

typedef struct xe_cdp_table {
    int L;
    int *off, *cnt;  /* [2][L+2][L+2] frontier of (kind, s, t) at pts[off .. off+cnt);
                        kind 0: Opt (x_s kept through group s), 1: Opt' (groups t..s+1) */
    xe_cdp_pt *pts;
    int npts, cap;
} xe_cdp_table;

/* Builds the model for device d (XE_EINFEASIBLE when d cannot run a node; XE_ENOMEM).
 * Offloading is enabled (m->offload = 1) when offload is 1, the model is not uniform
 * and the instance has another device. */
int xe_cdp_model_init(xe_cdp_model *m, const xe_instance *in, const xe_chain *ch, int d,
                      int uniform, int offload, xe_err *err);
void xe_cdp_model_clear(xe_cdp_model *m);

/* Fills every frontier, keeping only points that need at most cap (units of the model;
 * the budget, or INT64_MAX for all of them). XE_ENOMEM. */
int xe_cdp_solve(const xe_cdp_model *m, int64_t cap, xe_cdp_table *t, xe_err *err);
void xe_cdp_table_clear(xe_cdp_table *t);

/* Frontier of the whole problem, (s, t) = (-1, L): *pts, *cnt. */
void xe_cdp_top(const xe_cdp_table *t, const xe_cdp_pt **pts, int *cnt);

/* Appends the events of the top problem run with budget m (units of the model) to out.
 * XE_EINFEASIBLE when the frontier has no point within m; XE_ENOMEM. */
int xe_cdp_emit(const xe_cdp_model *m, const xe_cdp_table *t, int64_t budget,
                xe_schedule *out, xe_err *err);

/* Lazy evaluation of the same recursion (docs/chain-dp.md, "Speed"): subproblems are
 * evaluated only at the budgets (units of the model) that queries reach, each result
 * cached with the interval of budgets over which it holds. xe_cdp_lazy_new: XE_ENOMEM;
 * the model must outlive the object. xe_cdp_lazy_query: *cost of the top problem at
 * budget (INFINITY when nothing of the class fits); XE_ENOMEM. xe_cdp_lazy_emit: as
 * xe_cdp_emit. xe_cdp_lazy_entries: the number of evaluations so far. */
typedef struct xe_cdp_lazy xe_cdp_lazy;
int xe_cdp_lazy_new(const xe_cdp_model *m, xe_cdp_lazy **out, xe_err *err);
void xe_cdp_lazy_free(xe_cdp_lazy *z);
int xe_cdp_lazy_query(xe_cdp_lazy *z, int64_t budget, double *cost, xe_err *err);
int xe_cdp_lazy_emit(xe_cdp_lazy *z, int64_t budget, xe_schedule *out, xe_err *err);
/* The same for any subproblem (kind, s, t), -1 <= s <= t <= L, instead of the top problem
 * (0, -1, L): its optimum at budget (INFINITY when nothing of the class fits; XE_ENOMEM,
 * XE_ETIMEOUT), and its events appended to out (as xe_cdp_emit; they start with x_s and
 * front(t) resident and end with front(s-1) (kind 0) or front(s) (kind 1) resident). */
int xe_cdp_lazy_sub(xe_cdp_lazy *z, int kind, int s, int t, int64_t budget, double *cost, xe_err *err);
/* A lower bound on (kind, s, t) at every budget, seconds: its groups and the path nodes
 * they need computed once each (at the cheapest device when z delegates). O(1). */
double xe_cdp_lazy_lb(const xe_cdp_lazy *z, int kind, int s, int t);
int xe_cdp_lazy_emit_sub(xe_cdp_lazy *z, int kind, int s, int t, int64_t budget, xe_schedule *out, xe_err *err);
/* Sets the deadline (xe_now() seconds; 0: none) of z's evaluations and of its delegates'. */
void xe_cdp_lazy_set_deadline(xe_cdp_lazy *z, double deadline);
long xe_cdp_lazy_entries(const xe_cdp_lazy *z);
/* Lets z delegate any subproblem but the whole problem to ze, the lazy DP of the same
 * chain on another device (docs/chain-dp.md, "Several devices"); ze is not owned and must
 * outlive z. Neither model may park (ze's budget is all its own). XE_EINVAL; XE_ENOMEM. */
int xe_cdp_lazy_delegate(xe_cdp_lazy *z, xe_cdp_lazy *ze, xe_err *err);

/* The migration DP (chain_dp_migrate.c, docs/chain-dp.md "Several devices"): the chain
 * starts on md's device d with all of its budget and moves for good to me's device e (all
 * of e's budget), d keeping its checkpoints as a store e copies from (a fetched one held
 * to the end of e's subproblem, or freed after the next path node and fetched again for
 * the next tail). ze: the lazy DP of
 * me (not owned; its deadline is the caller's to set). *cost: the optimum of that class
 * in seconds (INFINITY when nothing fits), its events appended to out. XE_ENOMEM,
 * XE_ETIMEOUT when deadline (xe_now() seconds, 0: none) passes (nothing appended). */
int xe_cdp_migrate(const xe_cdp_model *md, const xe_cdp_model *me, xe_cdp_lazy *ze, double deadline,
                   double *cost, xe_schedule *out, xe_err *err);

/* The location DP (chain_dp_loc.c, docs/chain-dp.md "Locations"): two devices, md's
 * device d (where the schedule is measured against its budget; md not uniform, possibly
 * built without the check that d runs every node) and device e. Every checkpoint and
 * gradient has a place (d, e, or both for a checkpoint), each forward sweep runs on one
 * device, each backward node on either, every node only on a device that runs it. Exact
 * over that class in d's bytes; e's memory is not
 * part of the state (the caller replays). *cost: its optimum in seconds (INFINITY, nothing
 * appended, when nothing fits), its events appended to out. XE_ETIMEOUT past deadline
 * (xe_now() seconds, 0: none), past its evaluation limit (2^18; training chains of 50
 * nodes need 0.09-0.17 million) or on chains of over 40 path nodes (not run); XE_ENOMEM;
 * XE_EINVAL for models that do not fit together. */
int xe_cdp_loc(const xe_cdp_model *md, int e, double deadline, double *cost, xe_schedule *out, xe_err *err);

/* One DP run for the chain ch on device d (parking on other devices when offload is 1),
 * lazily (lazy = 1), lazily with delegation of subproblems to every other device able to
 * run the whole chain (lazy = 2; offload must be 0, else XE_EINVAL), with a migration to
 * the cheapest other device (lazy = 3, xe_cdp_migrate; offload 0), the location DP with
 * the other device of a two-device instance (lazy = 4, xe_cdp_loc; offload 0), or by whole
 * frontiers (lazy = 0; it must agree with lazy = 1, tested), its
 * events appended to out, replayed by the simulator and its cost checked against the
 * prediction. *over_park = 1 (with XE_EINFEASIBLE) when the replay fails only because a
 * parking device overflowed. Returns as xe_chain_dp. */
int xe_cdp_run(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, xe_schedule *out,
               double *cost, int *over_park, xe_err *err);
/* xe_cdp_run with a deadline (xe_now() seconds, 0: none) on the lazy DP's evaluations:
 * XE_ETIMEOUT when it passes before the answer is known (nothing appended). */
int xe_cdp_run_within(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, double deadline,
                      xe_schedule *out, double *cost, int *over_park, xe_err *err);

/* Index of (kind, s, t) in the [2][L+2][L+2] arrays (frontier table, lazy cache). */
static inline int cdp_tidx(int L, int kind, int s, int t) { return (kind * (L + 2) + (s + 1)) * (L + 2) + (t + 1); }

/* Size of node v in the model's unit: bytes, or 1 when uniform. */
static inline int64_t cdp_sz(const xe_cdp_model *m, int v) { return m->uniform ? 1 : m->in->g->nodes[v].mem; }

/* 1 when some group among positions a..b has a backward node (backward nodes of groups
 * b..a are gbeg[b] .. gend[a]-1, contiguous). */
static inline int cdp_has_work(const xe_cdp_model *m, int a, int b)
{
    if (a < 0) a = 0;
    return a <= b && m->gend[a + 1] > m->gbeg[b + 1];
}

/* 1 when backward node k of group s reads x_s: as its other input, or as its
 * predecessor (the first node of group L reads x_L). */
static inline int cdp_reads(const xe_chain *ch, int s, int k) { return ch->fread[k - ch->L - 1] == s || k - 1 == s; }

/* One step sp (s < sp <= t) of the forward sweep x_{s+1} .. x_sp from x_s (docs/chain-dp.md),
 * the same in both evaluations (chain_dp_table.c, chain_dp_lazy.c): adds x_sp's compute
 * cost to *cost and raises *hold / *free_, the sweep's peaks so far (bytes or units) when
 * x_s is held through it or freed (or parked) right after x_{s+1}, to this step's need:
 * front(t), x_{sp-1} (while computing x_sp) and x_sp, plus x_s while held. */
static inline void cdp_sweep_step(const xe_cdp_model *m, int s, int sp, int t, double *cost, int64_t *hold,
                                  int64_t *free_)
{
    const int64_t *A = m->A + 1, *D = m->D + 1;
    int64_t As = s >= 0 ? A[s] : 0, prev = sp - 1 > s ? A[sp - 1] : 0;
    int64_t rh = As + D[t] + prev + A[sp], rf = (sp == s + 1 ? As : 0) + D[t] + prev + A[sp];
    *cost += m->FC[sp + 1];
    if (rh > *hold) *hold = rh;
    if (rf > *free_) *free_ = rf;
}

/* Runs group s (0 <= s <= L) from the state {x_s, front(s)} resident: *peak (bytes or
 * units, including x_s and front(s)) and *cost (seconds or units); appends its events to
 * out when not NULL (chain_dp.c). XE_OK or XE_ENOMEM. */
int xe_cdp_group_run(const xe_cdp_model *m, int s, int64_t *peak, double *cost, xe_schedule *out);

#endif
