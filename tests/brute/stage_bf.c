/* Stage-class brute force: exact optimum over the R, S, C, FREE schedules of
 * docs/formulation.md, written from that text alone.
 *
 * Stage t runs steps k = 0..t. The state before step k of stage t is the set of
 * (node, device) pairs resident at that moment (bit d * n + i). Step k, from a state:
 *   - chooses R[t][k][d] for every device: allowed when d can run k (constraint 2), every
 *     input of k is resident on d (3) and k is not already resident on d, i.e. not a
 *     checkpoint there (5); in stage t at least one device computes t (1);
 *   - chooses, for every device e that does not hold k after the computes, at most one
 *     incoming copy C[t][k][d][e] from a device d that holds k by S or R (4, 5);
 *   - checks memory (8): on every device, the resident bytes after the computes and the
 *     incoming copies of step k are at most the budget;
 *   - frees any subset of the pairs the step touched (7): (k, d) when R, Cin or Cout on d,
 *     and (j, d) for every input j of k when R[t][k][d]. A freed pair cannot come back in
 *     the same stage (presence only arises at its own step), so a freed tensor is never
 *     used later on that device in the stage and is never kept, which is exactly what
 *     the bounds of constraint 7 demand; a pair never freed stays until the stage end.
 * After step t, S[t+1] is any subset of what is resident (6): the end-of-stage free of
 * everything not kept. S[n] = 0. Freeing is a free choice here, so this explores the
 * MILP's feasible set itself, not only the "every allowed free" solutions.
 *
 * Layers (t, k), k = 0..t+1, each an array over all 2^(n*ndev) states; layer (t, t+1) is
 * "after step t, before the keep choice", turned into layer (t+1, 0) by a superset-min
 * transform. Back-pointers give one optimal R, S, C. */
#include "brute/brute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BF_MAX_BITS 14

typedef struct bf_entry {
    double cost;     /* seconds to reach this state; INFINITY when unreached */
    uint32_t parent; /* state in the previous layer */
    uint16_t choice; /* bits 0..D-1: R on d; bits D+2e..D+2e+1: 1 + copy source into e */
} bf_entry;

typedef struct bf_ctx {
    const xe_instance *in;
    int n, D, nbits;
    uint32_t nstates;
    int64_t memsum[1u << XE_BF_MAX_N]; /* bytes of a node set */
    uint32_t deps[XE_BF_MAX_N];        /* input mask of each node */
    bf_entry *layers;                  /* [nlayers][nstates] */
    int layer_of[XE_BF_MAX_N + 1];     /* first layer index of stage t */
} bf_ctx;

static bf_entry *layer(bf_ctx *c, int t, int k)
{
    return c->layers + (size_t)(c->layer_of[t] + k) * c->nstates;
}

static uint32_t dev_set(const bf_ctx *c, uint32_t state, int d)
{
    return (state >> (d * c->n)) & ((1u << c->n) - 1u);
}

static void relax(bf_entry *e, double cost, uint32_t parent, uint16_t choice)
{
    if (cost < e->cost) {
        e->cost = cost;
        e->parent = parent;
        e->choice = choice;
    }
}

/* Step k of stage t from state `from` with cost `base`: every R and copy choice, every
 * subset of frees, relaxed into the next layer. */
static void expand(bf_ctx *c, int t, int k, uint32_t from, double base, bf_entry *next)
{
    const int n = c->n, D = c->D;
    const xe_instance *in = c->in;
    const uint32_t kbit = 1u << k;
    for (uint32_t rm = 0; rm < (1u << D); rm++) {
        if (k == t && rm == 0) continue; /* constraint 1 */
        int ok = 1;
        double rcost = 0.0;
        uint32_t have = from;
        for (int d = 0; d < D && ok; d++) {
            if (!(rm & (1u << d))) continue;
            uint32_t res = dev_set(c, from, d);
            if (!xe_can_run(in, k, d) || (res & kbit) || (c->deps[k] & ~res)) ok = 0;
            else {
                rcost += xe_cost(in, k, d);
                have |= kbit << (d * n);
            }
        }
        if (!ok) continue;
        /* copy sources: src[e] = -1 (none) or a device holding k by S or R */
        int src[XE_BF_MAX_DEV];
        for (int e = 0; e < D; e++) src[e] = -1;
        for (;;) {
            /* evaluate the current copy assignment */
            int valid = 1;
            for (int e = 0; e < D && valid; e++) {
                if (src[e] < 0) continue;
                if (src[e] == e || !(dev_set(c, have, src[e]) & kbit) ||
                    (dev_set(c, have, e) & kbit))
                    valid = 0;
            }
            if (valid) {
                uint32_t now = have;
                double cost = base + rcost;
                uint16_t choice = (uint16_t)rm;
                uint32_t cout = 0;
                for (int e = 0; e < D; e++) {
                    if (src[e] < 0) continue;
                    now |= kbit << (e * n);
                    cost += xe_copy_cost(in, k, src[e], e);
                    choice |= (uint16_t)((unsigned)(src[e] + 1) << (D + 2 * e));
                    cout |= 1u << src[e];
                }
                int fits = 1;
                for (int d = 0; d < D; d++)
                    if (c->memsum[dev_set(c, now, d)] > in->dev[d].budget) fits = 0;
                if (fits) {
                    if (k == t) {
                        relax(&next[now], cost, from, choice);
                    } else {
                        uint32_t touched = 0;
                        for (int d = 0; d < D; d++) {
                            uint32_t part = 0;
                            int cin = src[d] >= 0;
                            if ((rm & (1u << d)) || cin || (cout & (1u << d))) part |= kbit;
                            if (rm & (1u << d)) part |= c->deps[k];
                            touched |= part << (d * n);
                        }
                        /* every subset f of touched, including the empty one */
                        uint32_t f = touched;
                        for (;;) {
                            relax(&next[now & ~f], cost, from, choice);
                            if (f == 0) break;
                            f = (f - 1) & touched;
                        }
                    }
                }
            }
            /* next assignment (odometer over -1..D-1 per device) */
            int e = 0;
            while (e < D) {
                if (++src[e] < D) break;
                src[e] = -1;
                e++;
            }
            if (e == D) break;
        }
    }
}

/* Layer (t+1, 0)[s] = min over supersets u of s of layer (t, t+1)[u]. */
static void keep_transform(bf_ctx *c, int t)
{
    bf_entry *end = layer(c, t, t + 1);
    bf_entry *dst = layer(c, t + 1, 0);
    for (uint32_t s = 0; s < c->nstates; s++) {
        dst[s].cost = end[s].cost;
        dst[s].parent = s;
        dst[s].choice = 0;
    }
    for (int b = 0; b < c->nbits; b++) {
        uint32_t bit = 1u << b;
        for (uint32_t s = 0; s < c->nstates; s++) {
            if (s & bit) continue;
            if (dst[s | bit].cost < dst[s].cost) {
                dst[s].cost = dst[s | bit].cost;
                dst[s].parent = dst[s | bit].parent;
            }
        }
    }
}

static void reconstruct(bf_ctx *c, uint32_t final_state, xe_bf_stages *sol)
{
    const int n = c->n, D = c->D;
    memset(sol, 0, sizeof *sol);
    sol->n = n;
    sol->ndev = D;
    uint32_t state = final_state; /* in layer (t, t+1) */
    for (int t = n - 1; t >= 0; t--) {
        for (int k = t; k >= 0; k--) {
            const bf_entry *e = &layer(c, t, k + 1)[state];
            for (int d = 0; d < D; d++) {
                if (e->choice & (1u << d)) sol->R[t][k][d] = 1;
                unsigned code = (e->choice >> (D + 2 * d)) & 3u;
                if (code) sol->C[t][k][code - 1][d] = 1;
            }
            state = e->parent;
        }
        /* state is now in layer (t, 0): the checkpoints S[t] */
        for (int d = 0; d < D; d++)
            for (int i = 0; i < t; i++)
                if (dev_set(c, state, d) & (1u << i)) sol->S[t][i][d] = 1;
        if (t > 0) state = layer(c, t, 0)[state].parent;
    }
}

int xe_bf_stage_solve(const xe_instance *in, double *cost, xe_bf_stages *sol, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    if (n < 1 || n > XE_BF_MAX_N || D < 1 || D > XE_BF_MAX_DEV || n * D > BF_MAX_BITS)
        return xe_err_set(err, XE_EINVAL, "stage_bf: instance too large (n=%d, ndev=%d)", n, D);
    bf_ctx *c = calloc(1, sizeof *c);
    if (!c) return xe_err_set(err, XE_ENOMEM, "stage_bf: out of memory");
    c->in = in;
    c->n = n;
    c->D = D;
    c->nbits = n * D;
    c->nstates = 1u << c->nbits;
    for (uint32_t s = 0; s < (1u << n); s++)
        for (int i = 0; i < n; i++)
            if (s & (1u << i)) c->memsum[s] += g->nodes[i].mem;
    for (int v = 0; v < n; v++)
        for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) c->deps[v] |= 1u << g->pred[p];
    int nl = 0;
    for (int t = 0; t < n; t++) {
        c->layer_of[t] = nl;
        nl += t + 2;
    }
    c->layers = malloc((size_t)nl * c->nstates * sizeof *c->layers);
    if (!c->layers) {
        free(c);
        return xe_err_set(err, XE_ENOMEM, "stage_bf: out of memory");
    }
    for (size_t x = 0; x < (size_t)nl * c->nstates; x++) {
        c->layers[x].cost = INFINITY;
        c->layers[x].parent = 0;
        c->layers[x].choice = 0;
    }
    layer(c, 0, 0)[0].cost = 0.0; /* S[0] = 0 */
    for (int t = 0; t < n; t++) {
        if (t > 0) keep_transform(c, t - 1);
        for (int k = 0; k <= t; k++) {
            bf_entry *cur = layer(c, t, k), *next = layer(c, t, k + 1);
            for (uint32_t s = 0; s < c->nstates; s++)
                if (cur[s].cost < INFINITY) expand(c, t, k, s, cur[s].cost, next);
        }
    }
    /* S[n] = 0: any end state of stage n-1 finishes */
    bf_entry *end = layer(c, n - 1, n);
    double best = INFINITY;
    uint32_t best_s = 0;
    for (uint32_t s = 0; s < c->nstates; s++)
        if (end[s].cost < best) {
            best = end[s].cost;
            best_s = s;
        }
    int rc = XE_OK;
    if (best == INFINITY) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "stage_bf: no stage schedule fits the budgets");
    } else {
        *cost = best;
        if (sol) reconstruct(c, best_s, sol);
    }
    free(c->layers);
    free(c);
    return rc;
}
