/* The bottleneck bound (include/xengine/solvers.h, xe_bound_bottleneck; docs/lns.md,
 * "Bounds"): a lower bound for every event list on one device, from what must be
 * computed again after a node whose compute leaves little room.
 *
 * For a node v with footprint F(v) (v and its inputs) and slack s = budget - F(v),
 * consider v's first compute, at time tau. Every descendant of v is first computed after
 * tau; every ancestor of v was computed before it. At tau the resident set is v, its
 * inputs and a set H of other tensors with mem(H) <= s. After tau every descendant must
 * be computed with its inputs resident, so each input it needs is in H, free (v or an
 * input of v, resident at tau), or computed after tau, which in turn needs its inputs.
 * A compute after tau of an ancestor of v is a recomputation: an extra cost over
 * computing every node once. Nodes neither ancestors nor descendants may be computed for
 * the first time after tau, so they cost nothing extra here but still need their inputs.
 * Hence extra(v) >= min over H (mem(H) <= s) of the cost of the ancestors that the
 * closure of the descendants' needs must compute, and the objective >= sum of costs +
 * max over v of extra(v).
 *
 * The minimum over H is a budgeted cut; its Lagrangian relaxation with multiplier
 * lambda >= 0 (seconds per byte) on mem(H) <= s is a minimum cut (project selection):
 * vertices r_u (u computed after tau) and a_u (u available after tau), source to r_u
 * for every descendant u (infinite), r_u to a_w for every input w of u (infinite), a_w
 * to r_w of capacity lambda mem(w) (holding w), r_w to the sink of capacity cost(w) for
 * an ancestor w (recomputing it); a free w has no edge out of a_w. Any lambda gives a
 * valid bound min-cut(lambda) - lambda s; the best lambda is found by golden-section
 * search over log(lambda), the function being concave in lambda. The flow value used is
 * that of a feasible flow, at most the minimum cut, so rounding only weakens the bound.
 *
 * The same idea restricted to the stage class (index order as first-compute order) is
 * xe_bound_eviction (bounds.c); this one needs no order, so it also bounds the exact
 * search's schedules outside the stage structure (docs/pebble.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "maxflow.h"

/* Golden-section steps per node: the bracket of log(lambda) shrinks 0.618^40, 5e-9 of
 * its width; every step's lambda gives a valid bound, the search only sharpens it. */
#define BN_ITERS 40

typedef struct bn_ctx {
    const xe_instance *in;
    int n;
    double *c;     /* [n] cost on device 0, seconds */
    char *anc;     /* [n] 1: an ancestor of the current v */
    char *desc;    /* [n] 1: a descendant of the current v */
    char *freed;   /* [n] 1: v or an input of v (resident at tau at no cost) */
    char *mark;    /* [n] scratch: the closure of the descendants' needs */
    char *inb;     /* [n] scratch: the descendants' direct needs */
    int *stack;    /* [n] scratch */
    xe_flow *f;    /* 2n + 2 vertices: r_u = u, a_u = n + u, source 2n, sink 2n + 1 */
} bn_ctx;

/* A node, its slack (bytes) and an upper bound on what it can add (bn_potential), to
 * take the nodes in order. */
typedef struct bn_key {
    double ub, s;
    int v;
} bn_key;

/* Descending ub, then ascending v (a total order: the same result on every libc). */
static int bn_key_cmp(const void *a, const void *b)
{
    const bn_key *p = a, *q = b;
    if (p->ub != q->ub) return p->ub > q->ub ? -1 : 1;
    return (p->v > q->v) - (p->v < q->v);
}

/* anc, desc and freed for node v (the index order is topological: ancestors have
 * smaller indices, descendants larger). */
static void bn_sets(bn_ctx *x, int v)
{
    const xe_graph *g = x->in->g;
    memset(x->anc, 0, (size_t)x->n);
    memset(x->desc, 0, (size_t)x->n);
    memset(x->freed, 0, (size_t)x->n);
    x->anc[v] = x->desc[v] = 1;
    for (int u = v; u >= 0; u--)
        if (x->anc[u])
            for (int k = g->pred_off[u]; k < g->pred_off[u + 1]; k++) x->anc[g->pred[k]] = 1;
    for (int u = v; u < x->n; u++)
        if (x->desc[u])
            for (int k = g->succ_off[u]; k < g->succ_off[u + 1]; k++) x->desc[g->succ[k]] = 1;
    x->anc[v] = x->desc[v] = 0;
    x->freed[v] = 1;
    for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) x->freed[g->pred[k]] = 1;
}

/* The cost of the ancestors in the closure of the descendants' needs when nothing is
 * held (marks the closure, which the cuts are built on): an upper bound on extra(v) for
 * every lambda. */
static double bn_closure(bn_ctx *x)
{
    const xe_graph *g = x->in->g;
    int top = 0;
    double cost = 0.0;
    memset(x->mark, 0, (size_t)x->n);
    for (int u = 0; u < x->n; u++)
        if (x->desc[u]) {
            x->mark[u] = 1;
            x->stack[top++] = u;
        }
    while (top > 0) {
        int u = x->stack[--top];
        for (int k = g->pred_off[u]; k < g->pred_off[u + 1]; k++) {
            int w = g->pred[k];
            if (x->freed[w] || x->mark[w]) continue;
            x->mark[w] = 1;
            x->stack[top++] = w;
            if (x->anc[w]) cost += x->c[w];
        }
    }
    return cost;
}

/* An upper bound on what v (bn_sets done) can add with slack s: min-cut(lambda) <=
 * min(ub, lambda mb), recomputing the closure (ub, bn_closure) or holding the
 * descendants' direct needs (their inputs neither free nor descendants: mb bytes, each
 * counted once), so the Lagrangian never exceeds ub (1 - s / mb); ub itself when one of
 * those needs alone exceeds s (it can never be held). */
static double bn_potential(bn_ctx *x, double s)
{
    const xe_graph *g = x->in->g;
    double ub = bn_closure(x), mb = 0.0;
    memset(x->inb, 0, (size_t)x->n);
    for (int u = 0; u < x->n; u++)
        if (x->desc[u])
            for (int k = g->pred_off[u]; k < g->pred_off[u + 1]; k++) {
                int w = g->pred[k];
                if (x->freed[w] || x->desc[w] || x->inb[w]) continue;
                x->inb[w] = 1;
                if ((double)g->nodes[w].mem > s) return ub;
                mb += (double)g->nodes[w].mem;
            }
    return mb > s ? ub * (1.0 - s / mb) : 0.0;
}

/* min-cut(lambda) - lambda s over the marked closure (nodes outside it never need to be
 * available); -INFINITY when out of memory (no bound from this lambda). */
static double bn_lagrangian(bn_ctx *x, double lambda, double s)
{
    const xe_graph *g = x->in->g;
    int n = x->n, src = 2 * n, snk = 2 * n + 1, bad = 0;
    xe_flow_clear(x->f);
    for (int u = 0; u < n && !bad; u++) {
        if (!x->mark[u]) continue;
        if (x->desc[u]) bad |= xe_flow_add(x->f, src, u, INFINITY);
        for (int k = g->pred_off[u]; k < g->pred_off[u + 1] && !bad; k++)
            if (!x->freed[g->pred[k]]) bad |= xe_flow_add(x->f, u, n + g->pred[k], INFINITY);
        if (x->desc[u]) continue; /* a descendant is computed after tau anyway */
        /* holding u: lambda per byte; never when u alone exceeds the slack (a knapsack
         * item larger than the knapsack: fixing it out is what makes the bound exact on
         * test_bottleneck_hand, where the relaxation would hold a quarter of a) */
        double m = (double)g->nodes[u].mem;
        bad |= xe_flow_add(x->f, n + u, u, m > s ? INFINITY : lambda * m);
        if (x->anc[u] && x->c[u] > 0) bad |= xe_flow_add(x->f, u, snk, x->c[u]);
    }
    if (bad) return -INFINITY;
    double cut = xe_flow_max(x->f, src, snk);
    return isfinite(cut) ? cut - lambda * s : -INFINITY;
}

/* The best Lagrangian bound of node v over lambda, at least 0; ub: bn_closure's cost;
 * mmin: the smallest positive tensor size in the graph. */
static double bn_node(bn_ctx *x, double s, double ub, double mmin)
{
    double best = 0.0;
    /* above hi holding any positive-size tensor costs more than the closure: the
     * function only falls from there on (or stays, when s = 0) */
    double hi = log(ub / mmin) + 1.0, lo = hi - 28.0; /* a factor e^28 (1.4e12) below */
    double e = bn_lagrangian(x, exp(hi), s), z = bn_lagrangian(x, 0.0, s); /* both ends */
    if (e > best) best = e;
    if (z > best) best = z;
    for (int it = 0; it < BN_ITERS; it++) {
        double m1 = lo + (hi - lo) * 0.381966, m2 = lo + (hi - lo) * 0.618034;
        double f1 = bn_lagrangian(x, exp(m1), s), f2 = bn_lagrangian(x, exp(m2), s);
        if (f1 > best) best = f1;
        if (f2 > best) best = f2;
        if (f1 < f2) lo = m1;
        else hi = m2;
    }
    return best;
}

double xe_bound_bottleneck(const xe_instance *in, double deadline, int *node)
{
    double once = xe_bound_cheapest(in);
    if (node) *node = -1;
    int n = in->g->n;
    if (in->ndev != 1 || !isfinite(once) || n < 2 || n > XE_BOTTLENECK_MAX_NODES) return once;
    bn_ctx x = {.in = in, .n = n};
    x.c = malloc(sizeof *x.c * (size_t)n);
    x.anc = malloc((size_t)n);
    x.desc = malloc((size_t)n);
    x.freed = malloc((size_t)n);
    x.mark = malloc((size_t)n);
    x.inb = malloc((size_t)n);
    x.stack = malloc(sizeof *x.stack * (size_t)n);
    x.f = xe_flow_new(2 * n + 2);
    double best = 0.0, mmin = INFINITY;
    if (x.c && x.anc && x.desc && x.freed && x.mark && x.inb && x.stack && x.f) {
        for (int v = 0; v < n; v++) {
            x.c[v] = xe_cost(in, v, 0);
            if (in->g->nodes[v].mem > 0) mmin = fmin(mmin, (double)in->g->nodes[v].mem);
        }
        /* the nodes by what they can add at most, largest first: the bound rises early
         * and the nodes that cannot raise it are skipped (random_layered_n250 at 60%:
         * 0.78 s in index order). Every slack is >= 0: once is finite, so every node
         * fits the budget with its inputs. With no tensor of positive size holding is
         * free and no node adds anything. */
        bn_key *key = isfinite(mmin) ? malloc(sizeof *key * (size_t)n) : NULL;
        for (int v = 0; key && v < n; v++) {
            double s = (double)(in->dev[0].budget - xe_graph_footprint(in->g, v));
            bn_sets(&x, v);
            key[v] = (bn_key){bn_potential(&x, s), s, v};
        }
        if (key) qsort(key, (size_t)n, sizeof *key, bn_key_cmp);
        for (int k = 0; key && k < n && !(deadline > 0 && xe_now() >= deadline); k++) {
            int v = key[k].v;
            if (key[k].ub <= best) break; /* neither this node nor a later one can raise it */
            bn_sets(&x, v);
            double ub = bn_closure(&x); /* marks the closure for the cuts */
            double b = bn_node(&x, key[k].s, ub, mmin);
            if (b > best) {
                best = b;
                if (node) *node = v;
            }
        }
        free(key);
    } /* out of memory: every node once, still a bound */
    free(x.c);
    free(x.anc);
    free(x.desc);
    free(x.freed);
    free(x.mark);
    free(x.inb);
    free(x.stack);
    xe_flow_free(x.f);
    return once + best;
}
