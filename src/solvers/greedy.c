/* Greedy stage-by-stage heuristic (docs/heuristic.md).
 *
 * Stages t = 0..n-1 are planned in order; the checkpoints S[t] of the stage being planned
 * are the state. A stage plan puts t on a device, makes every missing input present by
 * the cheapest of copying it from a holder and recomputing it (recursively), and keeps
 * in S[t+1] everything still needed later. When the stage's memory (xe_heur_stage_eval,
 * the MILP's exact accounting) overflows a budget, checkpoints are given up, one at a
 * time, lowest (penalty / (bytes * distance to next use)) first: either a checkpoint
 * of S[t] (which only lowers stage t-1's memory) or a keep of S[t+1]; the penalty is the
 * cheaper of recomputing it later and offloading it to another device with room (copy
 * out now, copy back when needed). The stage is then re-planned.
 *
 * Randomised restarts (xe_heur_greedy_random): the same passes with every eviction
 * score multiplied by an independent factor drawn uniformly from [1, 1 + noise). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "stage_mem.h"
#include "xengine/timer.h"
#include "xengine/solvers.h"

/* Restarts after a failed stage, each with more tensors pinned. */
#define XE_GREEDY_MAX_PASSES 64
/* The deterministic variants' passes (the first pass and its restarts), at most. Where
 * one finds a schedule it needs few (both presets: 677 successful variant runs on the 6
 * shared graphs at 95-20% of the peak, 1-4 passes each; 400 on the 5 ONNX models of
 * tests/data at 90-15%, at most 8); where it fails it keeps learning to the cap, a
 * nearly full pass each time (random_layered_n250 one GPU at 60%: six variants x 64
 * passes failing at stages 184-235 of 250, 0.73 s of the 1-s target's time before the
 * exact search could start). The randomised restarts and the pins keep
 * XE_GREEDY_MAX_PASSES. docs/heuristic.md, "Restarts with lessons". */
#define XE_GREEDY_FIRST_PASSES 16

/* A restart's lesson: `node` must be on `dev` from the end of stage `from` (made
 * present there if needed) through the start of stage `until`. */
typedef struct xe_greedy_keep {
    int node, dev, from, until;
} xe_greedy_keep;

typedef struct gctx {
    const xe_instance *in;
    const xe_graph *g;
    int n, D;
    size_t nD;
    xe_stages *st;
    int64_t *U, *Uprev;    /* [n*D] profiles of stage t and t-1 */
    int *last, *lastprev;  /* [n*D] last touching steps */
    int64_t *sufmax;       /* [n*D] suffix maxima of U over steps */
    double *bestS, *bestK; /* [n*D] reach costs from S[t] and S[t+1] */
    uint8_t *excl;         /* [n*D] keeps of S[t+1] given up in this stage */
    uint8_t *offl;         /* [n*D] offload targets of this stage: copy i to d, keep it */
    uint8_t *zero;         /* [n*D] all zero: S[n] */
    uint8_t *snapS, *snapC;
    xe_greedy_keep keep[XE_GREEDY_MAX_PASSES]; /* set by restarts */
    int nkeep;
    uint8_t *haskeep;      /* [n] 1 when some lesson names the node */
    int *lastuse;          /* [n] */
    int insurance;         /* variant: keep small inputs of kept tensors */
    int use_distance;      /* variant: scores divide by the distance to the next use */
    int cap_bytes;         /* variant: a candidate's bytes count only up to the excess left */
    double noise;          /* randomised restarts: scores times U[1, 1 + noise); 0: none */
    uint64_t rng;          /* their generator's state (xe_splitmix64) */
    const volatile sig_atomic_t *intr; /* nonzero: stop at the next pass (Ctrl-C; NULL: none) */
    double deadline;       /* xe_now() seconds: the deterministic variants stop their restarts
                              there (INFINITY: none) */
    int *stack;
    size_t cap_stack;
} gctx;

static uint8_t *srow(const gctx *c, int t) { return c->st->S + (size_t)t * c->nD; }
static uint8_t *krow(const gctx *c, int t) { return t + 1 < c->n ? srow(c, t + 1) : c->zero; }

static void ctx_free(gctx *c)
{
    free(c->U);
    free(c->Uprev);
    free(c->last);
    free(c->lastprev);
    free(c->sufmax);
    free(c->bestS);
    free(c->bestK);
    free(c->excl);
    free(c->offl);
    free(c->zero);
    free(c->snapS);
    free(c->snapC);
    free(c->haskeep);
    free(c->lastuse);
    free(c->stack);
}

static int ctx_init(gctx *c, const xe_instance *in, xe_stages *st)
{
    memset(c, 0, sizeof *c);
    c->in = in;
    c->g = in->g;
    c->n = in->g->n;
    c->D = in->ndev;
    c->nD = (size_t)c->n * (size_t)c->D;
    c->st = st;
    size_t nD = c->nD;
    c->U = malloc(nD * sizeof *c->U);
    c->Uprev = malloc(nD * sizeof *c->Uprev);
    c->last = malloc(nD * sizeof *c->last);
    c->lastprev = malloc(nD * sizeof *c->lastprev);
    c->sufmax = malloc(nD * sizeof *c->sufmax);
    c->bestS = malloc(nD * sizeof *c->bestS);
    c->bestK = malloc(nD * sizeof *c->bestK);
    c->excl = calloc(nD, 1);
    c->offl = calloc(nD, 1);
    c->zero = calloc(nD, 1);
    c->snapS = malloc(nD);
    c->snapC = malloc(nD * (size_t)c->D);
    c->lastuse = malloc((size_t)c->n * sizeof *c->lastuse);
    c->haskeep = calloc((size_t)c->n, 1);
    /* each (node, device) is expanded at most once per plan and pushes its inputs */
    c->cap_stack = ((size_t)c->g->m + (size_t)c->n + 1) * (size_t)c->D + 1;
    c->stack = malloc(c->cap_stack * sizeof *c->stack);
    if (!c->U || !c->Uprev || !c->last || !c->lastprev || !c->sufmax || !c->bestS || !c->bestK ||
        !c->excl || !c->offl || !c->zero || !c->snapS || !c->snapC || !c->lastuse || !c->haskeep || !c->stack) {
        ctx_free(c);
        return XE_ENOMEM;
    }
    for (int v = 0; v < c->n; v++) c->lastuse[v] = xe_graph_last_use(c->g, v);
    return XE_OK;
}

static int present(const gctx *c, int t, int i, int d) { return xe_heur_present(c->st, t, i, d); }

/* A device holding i as a copy source at step i of stage t (S or R there), the one with
 * the cheapest copy to f (f itself excluded); -1 when none. */
static int copy_source(const gctx *c, int t, int i, int f)
{
    int best = -1;
    for (int s = 0; s < c->D; s++) {
        if (s == f) continue;
        if (!((i < t && *xe_S(c->st, t, i, s)) || *xe_R(c->st, t, i, s))) continue;
        if (best < 0 || xe_copy_cost(c->in, i, s, f) < xe_copy_cost(c->in, i, best, f)) best = s;
    }
    return best;
}

/* Seconds to compute j on d in stage t, inputs not yet present costed by bestS. */
static double recompute_here(const gctx *c, int t, int j, int d)
{
    if (!xe_can_run(c->in, j, d)) return INFINITY;
    double cst = xe_cost(c->in, j, d);
    for (int p = c->g->pred_off[j]; p < c->g->pred_off[j + 1]; p++) {
        int q = c->g->pred[p];
        if (!present(c, t, q, d)) cst += c->bestS[q * c->D + d];
    }
    return cst;
}

/* Makes every (node, device) on the stack present in stage t: copy from a holder,
 * recompute on the device, or recompute elsewhere and copy, whichever is cheapest.
 * Returns 0, or -1 when some node cannot be produced at all. */
static int materialize(gctx *c, int t, size_t sp)
{
    const xe_graph *g = c->g;
    int D = c->D;
    while (sp > 0) {
        int x = c->stack[--sp];
        int j = x / D, d = x % D;
        if (present(c, t, j, d)) continue;
        double bc = INFINITY;
        int kind = -1, src = -1; /* 0 copy from src, 1 recompute on d, 2 recompute on src + copy */
        for (int e = 0; e < D; e++) {
            if (e == d || !((j < t && *xe_S(c->st, t, j, e)) || *xe_R(c->st, t, j, e))) continue;
            double cc = xe_copy_cost(c->in, j, e, d);
            if (cc < bc) {
                bc = cc;
                kind = 0;
                src = e;
            }
        }
        double rc = recompute_here(c, t, j, d);
        if (rc < bc) {
            bc = rc;
            kind = 1;
        }
        for (int e = 0; e < D; e++) {
            if (e == d || present(c, t, j, e)) continue;
            double cc = recompute_here(c, t, j, e) + xe_copy_cost(c->in, j, e, d);
            if (cc < bc) {
                bc = cc;
                kind = 2;
                src = e;
            }
        }
        if (kind < 0) return -1;
        int on = d;
        if (kind == 0) {
            *xe_C(c->st, t, j, src, d) = 1;
            continue;
        }
        if (kind == 2) {
            *xe_C(c->st, t, j, src, d) = 1;
            on = src;
        }
        *xe_R(c->st, t, j, on) = 1;
        for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++) {
            int q = g->pred[p];
            if (present(c, t, q, on)) continue;
            XE_ASSERT(sp < c->cap_stack, "materialize stack within its bound");
            c->stack[sp++] = q * D + on;
        }
    }
    return 0;
}

/* 1 when a restart's lesson requires i on e at the start of stage b. */
static int must_keep(const gctx *c, int i, int e, int b)
{
    for (int q = 0; q < c->nkeep; q++)
        if (c->keep[q].node == i && c->keep[q].dev == e && c->keep[q].from < b && b <= c->keep[q].until) return 1;
    return 0;
}

/* Plans stage t with t on device dt: R and C rows of stage t, then S[t+1]. */
static int plan_stage(gctx *c, int t, int dt)
{
    const xe_graph *g = c->g;
    int D = c->D;
    memset(c->st->R + (size_t)t * c->nD, 0, c->nD);
    memset(c->st->C + (size_t)t * c->nD * (size_t)D, 0, c->nD * (size_t)D);
    xe_heur_reach_cost(c->in, srow(c, t), t, c->bestS);
    *xe_R(c->st, t, t, dt) = 1;
    size_t sp = 0;
    for (int p = g->pred_off[t]; p < g->pred_off[t + 1]; p++)
        if (!present(c, t, g->pred[p], dt)) c->stack[sp++] = g->pred[p] * D + dt;
    for (int q = 0; q < c->nkeep; q++) /* tensors a later stage needs, made present here */
        if (c->keep[q].from == t && !present(c, t, c->keep[q].node, c->keep[q].dev) && sp < c->cap_stack)
            c->stack[sp++] = c->keep[q].node * D + c->keep[q].dev;
    if (materialize(c, t, sp)) return -1;
    /* offloads decided by evictions of this stage: copy i to f at step i, keep it there */
    for (int i = 0; i <= t; i++)
        for (int f = 0; f < D; f++) {
            if (!c->offl[i * D + f] || present(c, t, i, f)) continue;
            int s = copy_source(c, t, i, f);
            if (s >= 0) *xe_C(c->st, t, i, s, f) = 1;
        }
    if (t + 1 >= c->n) return 0;
    uint8_t *K = srow(c, t + 1);
    memset(K, 0, (size_t)(t + 1) * D);
    for (int i = t; i >= 0; i--) {
        /* wanted: read by a later stage, or input of a node a later stage reads that is
         * not kept anywhere (needed to recompute it) */
        int want = c->lastuse[i] > t;
        uint8_t cover[XE_MAX_DEV] = {0}; /* insurance: small input of a kept node */
        for (int p = g->succ_off[i]; !want && p < g->succ_off[i + 1]; p++) {
            int u = g->succ[p];
            if (u > t || c->lastuse[u] <= t) continue;
            int kept = 0;
            for (int e = 0; e < D; e++) kept |= K[u * D + e];
            if (!kept) want = 1;
            if (c->insurance && 2 * g->nodes[i].mem <= g->nodes[u].mem)
                for (int e = 0; e < D; e++) cover[e] |= K[u * D + e];
        }
        for (int e = 0; e < D; e++)
            if ((want || cover[e] || (c->haskeep[i] && must_keep(c, i, e, t + 1))) && !c->excl[i * D + e] &&
                present(c, t, i, e))
                K[i * D + e] = 1;
    }
    return 0;
}

/* First user of i with index >= from; for a tensor no later stage reads (kept to
 * recompute a user cheaply), the first such use of its users; -1 when none. */
static int next_use(const gctx *c, int i, int from)
{
    const xe_graph *g = c->g;
    int best = -1;
    for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) {
        int u = g->succ[p];
        if (u >= from) return u;
        for (int q = g->succ_off[u]; q < g->succ_off[u + 1]; q++)
            if (g->succ[q] >= from) {
                if (best < 0 || g->succ[q] < best) best = g->succ[q];
                break;
            }
    }
    return best;
}

typedef struct cand {
    int i, isB, offload_to;
    double score, weight;
} cand;

/* Scores giving up (i, e): in S[t] (isB) or in S[t+1]; its bytes count up to `need`,
 * the excess still to cover (bytes beyond it free nothing that is needed). */
static cand score(gctx *c, int t, int i, int e, int isB, const int64_t *pending, int64_t need)
{
    int D = c->D;
    int64_t mem = c->g->nodes[i].mem;
    const uint8_t *av = isB ? srow(c, t) : krow(c, t);
    const double *best = isB ? c->bestS : c->bestK;
    cand r = {i, isB, -1, 0.0, 0.0};
    double pen = xe_heur_reach_one(c->in, av, best, i, e);
    for (int f = 0; f < D; f++) {
        if (f == e || av[i * D + f]) continue;
        int at = isB ? t - 1 : t; /* the stage where the copy out would happen */
        if (at < 0) continue;
        double out;
        if (present(c, at, i, f)) {
            out = 0.0;
        } else {
            int s = copy_source(c, at, i, f);
            if (s < 0) continue;
            out = xe_copy_cost(c->in, i, s, f);
        }
        double cst = out + xe_copy_cost(c->in, i, f, e);
        if (!(cst < pen)) continue;
        /* room on f: from step i on (a keep) or all of stage t (a checkpoint) */
        int64_t peak = c->sufmax[(isB ? 0 : i) * D + f];
        if (peak + pending[f] + mem > c->in->dev[f].budget) continue;
        pen = cst;
        r.offload_to = f;
    }
    int nu = next_use(c, i, isB ? t : t + 1);
    double dist = nu < 0 ? 2.0 * c->n : (double)(nu - t + 1);
    if (!c->use_distance) dist = 1.0;
    r.weight = (double)(c->cap_bytes && need < mem ? need : mem) * dist;
    r.score = pen / r.weight;
    if (c->noise > 0) r.score *= 1.0 + c->noise * (double)(xe_splitmix64(&c->rng) >> 11) * 0x1p-53;
    return r;
}

/* Applies an offload of checkpoint (i, e) of S[t] to f in stage t-1; returns 1 when
 * stage t-1 still fits, else undoes it and returns 0. */
static int offload_checkpoint(gctx *c, int t, int i, int f)
{
    int tp = t - 1, s = -1;
    if (!present(c, tp, i, f)) {
        s = copy_source(c, tp, i, f);
        if (s < 0) return 0;
        *xe_C(c->st, tp, i, s, f) = 1;
    }
    *xe_S(c->st, t, i, f) = 1;
    xe_heur_stage_eval(c->in, c->st, tp, c->Uprev, c->lastprev);
    int k, d;
    if (xe_heur_worst_overflow(c->in, tp, c->Uprev, &k, &d) == 0) return 1;
    if (s >= 0) *xe_C(c->st, tp, i, s, f) = 0;
    *xe_S(c->st, t, i, f) = 0;
    return 0;
}

/* 1 when S[t] (row S) holds i on a device other than e. */
static int held_elsewhere(const gctx *c, const uint8_t *S, int i, int e)
{
    for (int f = 0; f < c->D; f++)
        if (f != e && S[i * c->D + f]) return 1;
    return 0;
}

/* Gives up checkpoints resident on e at step k of stage t until `excess` bytes are
 * covered (or no candidate is left). Returns the number given up. */
static int evict(gctx *c, int t, int k, int e, int64_t excess)
{
    int D = c->D;
    uint8_t *S = srow(c, t), *K = krow(c, t);
    int hasK = t + 1 < c->n, done = 0;
    int64_t pending[XE_MAX_DEV] = {0};
    for (int f = 0; f < D; f++) {
        int64_t m = INT64_MIN;
        for (int q = t; q >= 0; q--) {
            if (c->U[q * D + f] > m) m = c->U[q * D + f];
            c->sufmax[q * D + f] = m;
        }
    }
    int fromK = 0, fromS = 0; /* the reach costs' first rows changed since computed */
    while (excess > 0) {
        if (hasK) xe_heur_reach_cost_from(c->in, K, fromK, t + 1, c->bestK);
        xe_heur_reach_cost_from(c->in, S, fromS, t, c->bestS);
        fromK = t + 1;
        fromS = t;
        cand best = {-1, 0, -1, INFINITY, 0.0};
        for (int i = 0; i <= t; i++) {
            if (c->g->nodes[i].mem <= 0) continue;
            int l = c->last[i * D + e];
            cand r;
            if (hasK && K[i * D + e] && l >= 0 && l < k && !must_keep(c, i, e, t + 1))
                r = score(c, t, i, e, 0, pending, excess); /* kept only for later stages */
            else if (i < t && S[i * D + e] && (l < 0 || (k < i && held_elsewhere(c, S, i, e))) && !must_keep(c, i, e, t))
                r = score(c, t, i, e, 1, pending, excess); /* checkpoint resident at step k */
            else
                continue;
            if (best.i < 0 || r.score < best.score || (r.score == best.score && r.weight > best.weight))
                best = r;
        }
        if (best.i < 0) break;
        int i = best.i, f = best.offload_to;
        /* every change below is in row i of S or K (offload_checkpoint's too: S[t][i]
         * on f), so only rows >= i need new reach costs */
        if (i < fromK) fromK = i;
        if (i < fromS) fromS = i;
        if (best.isB) {
            S[i * D + e] = 0;
            if (hasK) K[i * D + e] = 0;
            if (f >= 0 && offload_checkpoint(c, t, i, f)) pending[f] += c->g->nodes[i].mem;
        } else {
            c->excl[i * D + e] = 1;
            K[i * D + e] = 0;
            if (f >= 0) {
                c->offl[i * D + f] = 1;
                K[i * D + f] = 1; /* for the reach costs; the re-plan sets it for real */
                pending[f] += c->g->nodes[i].mem;
            }
        }
        excess -= c->g->nodes[i].mem;
        done++;
    }
    return done;
}

/* Plans stage t on device dt within the budgets. Returns 1 on success; 0 leaves S[t]
 * and stage t-1 as they were. */
static int try_stage(gctx *c, int t, int dt)
{
    int D = c->D;
    memcpy(c->snapS, srow(c, t), c->nD);
    if (t > 0) memcpy(c->snapC, c->st->C + (size_t)(t - 1) * c->nD * D, c->nD * D);
    memset(c->excl, 0, c->nD);
    memset(c->offl, 0, c->nD);
    long cap = 8L * (t + 1) * D + 16;
    for (long it = 0; it < cap; it++) {
        if (plan_stage(c, t, dt)) break;
        xe_heur_stage_eval(c->in, c->st, t, c->U, c->last);
        int k = 0, e = 0;
        int64_t ex = xe_heur_worst_overflow(c->in, t, c->U, &k, &e);
        if (ex == 0) return 1;
        if (!evict(c, t, k, e, ex)) {
            break;
        }
    }
    memcpy(srow(c, t), c->snapS, c->nD);
    if (t > 0) memcpy(c->st->C + (size_t)(t - 1) * c->nD * D, c->snapC, c->nD * D);
    return 0;
}

static int brought_back(const gctx *c, int t, int j)
{
    for (int d = 0; d < c->D; d++)
        if (*xe_R(c->st, t, j, d) || xe_heur_cin(c->st, t, j, d)) return 1;
    return 0;
}

/* Bytes of the other nodes stage t brought back to produce x (x's brought-back
 * ancestors through brought-back nodes). Uses c->stack and c->excl as scratch. */
static int64_t closure_bytes(gctx *c, int t, int x)
{
    const xe_graph *g = c->g;
    uint8_t *seen = c->excl; /* n * D bytes, only [0, t) used here */
    memset(seen, 0, (size_t)t);
    size_t sp = 0;
    int64_t bytes = 0;
    c->stack[sp++] = x;
    while (sp > 0) {
        int j = c->stack[--sp];
        for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++) {
            int q = g->pred[p];
            if (seen[q] || !brought_back(c, t, q)) continue;
            seen[q] = 1;
            bytes += g->nodes[q].mem;
            c->stack[sp++] = q;
        }
    }
    return bytes;
}

/* The latest stage s in [x, t) of the failed pass where x was on d or all its inputs
 * were: x can be made present there cheaply and kept until t. */
static int cheap_stage(const gctx *c, int x, int d, int t)
{
    const xe_graph *g = c->g;
    for (int s = t - 1; s > x; s--) {
        if (present(c, s, x, d)) return s;
        int all = 1;
        for (int p = g->pred_off[x]; all && p < g->pred_off[x + 1]; p++) all = present(c, s, g->pred[p], d);
        if (all) return s;
    }
    return x;
}

/* After stage t failed: learns to keep the one tensor whose earlier loss hurt most, the
 * input of t that its plan brought back with the most bytes of other recomputation
 * (else any brought-back node with the most), from the latest stage where it was cheap
 * to have until stage t. Returns 1 when it learned something new. */
static int learn_keep(gctx *c, int t)
{
    const xe_graph *g = c->g;
    if (c->nkeep >= XE_GREEDY_MAX_PASSES) return 0;
    for (int pass = 0; pass < 2; pass++) {
        int best = -1;
        int64_t bw = -1;
        for (int j = 0; j < t; j++) {
            if (!brought_back(c, t, j)) continue;
            if (pass == 0 && !xe_heur_is_input(g, j, t)) continue;
            int64_t w = closure_bytes(c, t, j);
            if (w > bw || (w == bw && g->nodes[j].mem > g->nodes[best].mem)) {
                bw = w;
                best = j;
            }
        }
        if (best < 0) continue;
        int d = 0;
        while (d < c->D - 1 && !*xe_R(c->st, t, best, d) && !xe_heur_cin(c->st, t, best, d)) d++;
        xe_greedy_keep *k = NULL;
        for (int q = 0; q < c->nkeep; q++)
            if (c->keep[q].node == best && c->keep[q].dev == d) k = &c->keep[q];
        if (k) {
            /* kept before, yet lost before t: keep it from its first computation on */
            if (k->until >= t && k->from == best) return 0;
            if (k->until < t) k->until = t;
            else k->from = best;
        } else {
            k = &c->keep[c->nkeep++];
            c->haskeep[best] = 1;
            k->node = best;
            k->dev = d;
            k->from = cheap_stage(c, best, d, t);
            k->until = t;
        }
        return 1;
    }
    return 0;
}

/* One greedy pass over all stages. Returns -1 on success, else the stage that failed. */
static int greedy_pass(gctx *c)
{
    const xe_instance *in = c->in;
    int n = c->n, D = c->D;
    memset(c->st->R, 0, (size_t)n * c->nD);
    memset(c->st->S, 0, (size_t)n * c->nD);
    memset(c->st->C, 0, (size_t)n * c->nD * (size_t)D);
    for (int t = 0; t < n; t++) {
        /* past the hard deadline, or on Ctrl-C, the pass fails where it is: a pass costs
         * about n^2, tens of seconds at 40,000 nodes (every 256 stages: the clock costs
         * 20 ns; Ctrl-C waited for the pass's end, 29 s on a 10,000-node DAG, before
         * 2026-12-05) */
        if ((t & 255) == 255 && (xe_now() > c->deadline || xe_interrupted(c->intr))) return t;
        /* devices in order of the estimated cost of running t there */
        xe_heur_reach_cost(in, srow(c, t), t, c->bestS);
        int order[XE_MAX_DEV], no = 0;
        double est[XE_MAX_DEV];
        for (int d = 0; d < D; d++) {
            if (!xe_can_run(in, t, d)) continue;
            est[d] = recompute_here(c, t, t, d);
            int p = no++;
            while (p > 0 && est[order[p - 1]] > est[d]) {
                order[p] = order[p - 1];
                p--;
            }
            order[p] = d;
        }
        int ok = 0;
        for (int q = 0; q < no && !ok; q++) ok = try_stage(c, t, order[q]);
        if (!ok) return t;
    }
    return -1;
}

/* Variants tried in order; the later ones only while none has found a schedule. */
static const struct {
    int insurance, use_distance, cap_bytes;
} variants[] = {{0, 1, 0}, {1, 1, 0}, {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 0, 0}};
#define XE_GREEDY_ALWAYS 4 /* variants always tried; the cheapest schedule wins */
static const int random_variants[4] = {0, 1, 4, 5}; /* those the randomised restarts cycle through */
/* Randomised restarts: scores times U[1, 1 + XE_GREEDY_NOISE). Chosen on
 * random_layered_n100 at 60-62% of its peak on one device (docs/heuristic.md): 0.5 and
 * 2 found nothing in 2 s, 8 found schedules at 60-62%, 30 at none, 100 at 60% only. */
#define XE_GREEDY_NOISE 8.0
/* Randomised restarts: at most this many variant runs per call (each with up to
 * XE_GREEDY_MAX_PASSES restart passes), so that small graphs, where a run takes
 * microseconds, do not spend the whole time on a budget no run fits: on
 * random_layered_n100 at 60% the first schedule came after 32-1,028 runs (seeds 1-8). */
#define XE_GREEDY_RANDOM_MAX_RUNS 2000
/* Randomised restarts: max_seconds is a budget of work, not of the clock, so that a seed
 * gives the same answer on any machine and load: the runs stop once their passes,
 * n (n + m) devices each, add up to max_seconds * XE_HEUR_PASS_RATE (a pass, most
 * stopping at the stage that fails, averages 0.15-0.2 us per unit on this 2-core
 * machine: random_layered_n100 at 60% on one GPU, seed 1, finds its schedule after 5,550
 * passes, 1.23 s here, within the nominal 0.8 s = 5,952 passes). The clock still stops
 * them at XE_GREEDY_RANDOM_CLOCK times max_seconds, for machines far slower than this
 * one. Before 2026-12-01 max_seconds was wall clock: that case found nothing in 0.8 s
 * here, where the benchmark's faster machine had found 1.532x. */
#define XE_GREEDY_RANDOM_CLOCK 4.0

/* Runs one variant with restarts, starting from the npre lessons pre[] (pins); returns
 * -1 on success, else the stage that failed. */
static int greedy_variant_pinned(gctx *c, int v, const xe_greedy_keep *pre, int npre, int max_passes, int *passes)
{
    c->insurance = variants[v].insurance;
    c->use_distance = variants[v].use_distance;
    c->cap_bytes = variants[v].cap_bytes;
    c->nkeep = 0;
    memset(c->haskeep, 0, (size_t)c->n);
    for (int q = 0; q < npre && q < XE_GREEDY_MAX_PASSES; q++) {
        c->keep[c->nkeep++] = pre[q];
        c->haskeep[pre[q].node] = 1;
    }
    for (*passes = 1;; ++*passes) {
        int t = greedy_pass(c);
        if (t < 0 || *passes >= max_passes || xe_interrupted(c->intr) || xe_now() > c->deadline || !learn_keep(c, t))
            return t;
    }
}

static int greedy_variant(gctx *c, int v, int max_passes, int *passes)
{
    return greedy_variant_pinned(c, v, NULL, 0, max_passes, passes);
}

/* Pins: at most this many tensors tried, at most XE_GREEDY_MAX_PINS kept. */
#define XE_GREEDY_PIN_TRIES 16
#define XE_GREEDY_MAX_PINS 8
/* The pins' work: at most XE_GREEDY_PIN_WORK / n^2 greedy passes in all (a pass costs
 * about n^2: 0.3 ms at random_layered_n100, 1.5-2.8 ms at n250, on this 2-core machine),
 * so a call does the same work, and returns the same schedule, however loaded the
 * machine: 200 passes at 100 nodes (16 tries of a few passes each, every one), 32 at 250,
 * 2 at 1,000 (none kept). Before 2026-11-30 the pins stopped after 0.05 s of wall
 * clock, so a loaded machine could return another schedule. */
#define XE_GREEDY_PIN_WORK 2.0e6

typedef struct pin_cand {
    int node, dev;
    double gain; /* seconds of its recomputations in the schedule */
} pin_cand;

static int cmp_pin(const void *a, const void *b)
{
    double x = ((const pin_cand *)a)->gain, y = ((const pin_cand *)b)->gain;
    return (x < y) - (x > y);
}

/* Local improvement by pins: the dearest recomputed tensors of *best (a schedule of
 * variant v, costing *best_cost) are tried one by one as a lesson kept from their first
 * computation to their last reader's stage (the greedy must then evict something else,
 * often cheaper tensors recomputed more often); a pin whose run (variant v with the pins
 * kept so far, in the context's own stages c->st) is valid and cheaper is kept, and its
 * schedule is swapped into *best. Stops after XE_GREEDY_PIN_WORK / n^2 greedy passes in
 * all, or at the deadline (xe_now() seconds). Returns the number of pins kept, or
 * XE_ENOMEM. docs/heuristic.md, "Pins". */
static int pin_improve(gctx *c, int v, xe_stages *best, double *best_cost, double deadline)
{
    const xe_instance *in = c->in;
    int n = c->n, D = c->D, nc = 0, npin = 0;
    double work = XE_GREEDY_PIN_WORK / ((double)n * n); /* passes left */
    if (work < 1) return 0; /* no pass to try: not even the candidates (O(n^2 D), 1 s at 10,000 nodes) */
    pin_cand *cand = malloc((size_t)(n ? n : 1) * (size_t)D * sizeof *cand);
    if (!cand) return XE_ENOMEM;
    for (int x = 0; x < n; x++)
        for (int d = 0; d < D; d++) {
            double gain = 0;
            for (int t = x + 1; t < n; t++)
                if (*xe_R(best, t, x, d)) gain += xe_cost(in, x, d);
            if (gain > 0) cand[nc++] = (pin_cand){x, d, gain};
        }
    qsort(cand, (size_t)nc, sizeof *cand, cmp_pin);
    xe_greedy_keep pins[XE_GREEDY_MAX_PINS + 1];
    for (int k = 0; k < nc && k < XE_GREEDY_PIN_TRIES && npin < XE_GREEDY_MAX_PINS && work >= 1; k++) {
        if (xe_now() > deadline || xe_interrupted(c->intr)) break;
        int x = cand[k].node;
        pins[npin] = (xe_greedy_keep){x, cand[k].dev, x, c->lastuse[x]};
        int passes = 0, fail = greedy_variant_pinned(c, v, pins, npin + 1, (int)fmin(work, XE_GREEDY_MAX_PASSES), &passes);
        work -= passes;
        if (fail >= 0) continue;
        double cost = xe_stages_cost(in, c->st);
        if (cost < *best_cost * (1 - 1e-12)) {
            xe_stages t = *best;
            *best = *c->st;
            *c->st = t;
            *best_cost = cost;
            npin++;
        }
    }
    free(cand);
    return npin;
}

/* XE_EINFEASIBLE (a proof) when some node's output and inputs fit no device that can
 * run it; else XE_OK. */
static int check_footprints(const xe_instance *in, xe_err *err)
{
    const xe_graph *g = in->g;
    for (int v = 0; v < g->n; v++) {
        int64_t f = xe_graph_footprint(g, v);
        int fits = 0, best = -1;
        for (int d = 0; d < in->ndev; d++) {
            if (!xe_can_run(in, v, d)) continue;
            if (f <= in->dev[d].budget) fits = 1;
            if (best < 0 || in->dev[d].budget > in->dev[best].budget) best = d;
        }
        if (best < 0)
            return xe_err_set(err, XE_EINFEASIBLE, "greedy: no device can run node %d (%s)", v, g->nodes[v].name);
        if (!fits)
            return xe_err_set(err, XE_EINFEASIBLE,
                              "greedy: infeasible: node %d (%s) needs %lld bytes at once (output and inputs), more than "
                              "the budget of %s (%lld bytes)",
                              v, g->nodes[v].name, (long long)f, in->dev[best].name, (long long)in->dev[best].budget);
    }
    return XE_OK;
}

/* The deterministic variants (noise = 0), their best improved by pins when pins is set,
 * none started after deadline (xe_now() seconds) once a schedule is in hand; or
 * randomised passes cycling through the variants until one finds a schedule or
 * max_seconds of work are done (noise > 0; XE_HEUR_PASS_RATE). */
static int greedy_run(const xe_instance *in, double noise, uint64_t seed, double max_seconds, int pins,
                      double deadline, const volatile sig_atomic_t *intr, xe_stages *out, xe_stages *second,
                      int *tries, long *npasses, xe_err *err)
{
    if (second) memset(second, 0, sizeof *second);
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    double t0 = xe_now();
    memset(out, 0, sizeof *out);
    if (tries) *tries = 0;
    if (npasses) *npasses = 0;
    int frc = check_footprints(in, err);
    if (frc) return frc;
    if (xe_stages_init(out, n, D)) return xe_err_set(err, XE_ENOMEM, "greedy: out of memory for %d stages", n);
    if (n == 0) return XE_OK;
    xe_stages work;
    if (xe_stages_init(&work, n, D)) {
        xe_stages_clear(out);
        return xe_err_set(err, XE_ENOMEM, "greedy: out of memory for %d stages", n);
    }
    gctx c;
    if (ctx_init(&c, in, &work)) {
        xe_stages_clear(&work);
        xe_stages_clear(out);
        return xe_err_set(err, XE_ENOMEM, "greedy: out of memory for %d nodes", n);
    }
    c.noise = noise;
    c.rng = seed;
    c.intr = intr;
    /* the randomised runs have their own clock (XE_GREEDY_RANDOM_CLOCK); the deterministic
     * ones may finish their first schedule past the deadline, but not beyond
     * XE_HEUR_GRACE_S after it (or after the call's start, when it came later): a pass
     * costs about n^2, and on a 40,000-node graph the variants ran on for 100 s past a
     * 5-s limit (a new user's trial, 2026-12-05); on the shared graphs the whole greedy
     * takes under 0.3 s */
    double hard = fmax(deadline, t0) + XE_HEUR_GRACE_S;
    c.deadline = noise > 0 ? INFINITY : hard;
    /* no schedule costs less than every node once on its cheapest device */
    double lower = 0.0;
    for (int v = 0; v < n; v++) {
        double m = INFINITY;
        for (int d = 0; d < D; d++)
            if (xe_can_run(in, v, d) && xe_cost(in, v, d) < m) m = xe_cost(in, v, d);
        lower += m;
    }
    /* the best schedule of each scoring (bytes counted whole, or capped at the excess
     * left: variants[].cap_bytes): out and alt; pins improve each, the cheaper wins (on
     * the shared graphs neither scoring nor its pins win everywhere: docs/heuristic.md) */
    xe_stages alt;
    memset(&alt, 0, sizeof alt);
    double gbest[2] = {INFINITY, INFINITY};
    int fail_t = -1, passes = 0, nv = (int)(sizeof variants / sizeof variants[0]), k = 0, gv[2] = {0, 0};
    /* the randomised runs' work so far (xe_heur_pass_work per pass) */
    double done = 0, unit = xe_heur_pass_work(in);
    /* the longest variant's seconds so far: with a schedule in hand, no variant starts
     * that would not leave time for another as long, the final prune and check (about as
     * long as a variant on large graphs: a 10,000-node chain on gpu+cpu, 2.5-6 s a
     * variant, 3.5-5 s a check); a 20-s deadline ended after 34 s before */
    double t_longest = 0;
    for (;; k++) {
        double best = fmin(gbest[0], gbest[1]);
        if (xe_interrupted(intr)) break; /* Ctrl-C: what is in hand */
        if (noise > 0) {
            if (best < INFINITY || k >= XE_GREEDY_RANDOM_MAX_RUNS ||
                (k > 0 && (done >= max_seconds * XE_HEUR_PASS_RATE ||
                           xe_now() - t0 >= XE_GREEDY_RANDOM_CLOCK * max_seconds || xe_now() >= deadline)))
                break;
        } else if (k >= nv || (k >= XE_GREEDY_ALWAYS && best < INFINITY) || best <= lower * (1 + 1e-12) ||
                   (best < INFINITY && xe_now() + 2 * t_longest > deadline) || (k > 0 && xe_now() > hard)) {
            break;
        }
        /* the randomised restarts cycle through the whole-bytes variants only (with the
         * capped ones among them, random_layered_n100 at 60% found a dearer schedule) */
        int v = noise > 0 ? random_variants[k % 4] : k % nv;
        double tv = xe_now();
        int t = greedy_variant(&c, v, noise > 0 ? XE_GREEDY_MAX_PASSES : XE_GREEDY_FIRST_PASSES, &passes);
        t_longest = fmax(t_longest, xe_now() - tv);
        if (npasses) *npasses += passes;
        done += passes * unit;
        if (t >= 0) {
            if (fail_t < 0) fail_t = t;
            continue;
        }
        double cost = xe_stages_cost(in, &work);
        int grp = variants[v].cap_bytes;
        if (cost < gbest[grp]) {
            xe_stages *dst = grp ? &alt : out;
            if (!dst->R && xe_stages_init(dst, n, D)) goto nomem;
            xe_stages tmp = *dst;
            *dst = work;
            work = tmp;
            gbest[grp] = cost;
            gv[grp] = v;
        }
    }
    /* the deterministic greedy's schedules, improved by pins within a budget of work
     * (and the caller's deadline) */
    for (int grp = 0; grp < 2; grp++) {
        if (!(pins && noise == 0 && gbest[grp] < INFINITY && gbest[grp] > lower * (1 + 1e-12))) continue;
        if (pin_improve(&c, gv[grp], grp ? &alt : out, &gbest[grp], deadline) == XE_ENOMEM)
            goto nomem;
    }
    if (gbest[1] < gbest[0]) { /* the capped scoring's schedule wins */
        xe_stages tmp = *out;
        *out = alt;
        alt = tmp;
    }
    double best = fmin(gbest[0], gbest[1]);
    /* the other scoring's schedule, where its prune and check (about a variant's time) fit
     * before the deadline */
    if (second && fmax(gbest[0], gbest[1]) < INFINITY && xe_now() + 2 * t_longest <= deadline) {
        xe_err e2;
        xe_stages_prune(in, &alt);
        if (xe_stages_check(in, &alt, &e2) == XE_OK) *second = alt;
        else xe_stages_clear(&alt);
        memset(&alt, 0, sizeof alt);
    }
    xe_stages_clear(&alt);
    if (tries) *tries = k;
    ctx_free(&c);
    xe_stages_clear(&work);
    int rc = XE_OK;
    if (best == INFINITY && xe_interrupted(intr)) {
        rc = xe_err_set(err, XE_ETIMEOUT, "greedy: interrupted before a schedule was found");
    } else if (best == INFINITY) {
        if (noise > 0)
            rc = xe_err_set(err, XE_EINFEASIBLE,
                            "greedy: %d randomised runs in %.2f s found no schedule within the budgets (not a "
                            "proof of infeasibility)",
                            k, xe_now() - t0);
        else if (fail_t < 0 || xe_now() > hard)
            rc = xe_err_set(err, XE_EINFEASIBLE, "greedy: the time limit ended before a schedule was found (%d of %d "
                            "variants run; not a proof of infeasibility)", k, nv);
        else
            rc = xe_err_set(err, XE_EINFEASIBLE,
                            "greedy: found no schedule within the budgets: stage %d (node %s) did not fit after %d "
                            "restarts (not a proof of infeasibility)",
                            fail_t, g->nodes[fail_t].name, passes);
    } else {
        xe_err e2;
        xe_stages_prune(in, out); /* drop computes nothing reads */
        int crc = xe_stages_check(in, out, &e2);
        if (crc) rc = xe_err_set(err, XE_EINTERNAL, "greedy: produced an invalid schedule (bug): %s", e2.msg);
    }
    if (rc) xe_stages_clear(out);
    return rc;
nomem:
    ctx_free(&c);
    xe_stages_clear(&work);
    xe_stages_clear(&alt);
    xe_stages_clear(out);
    return xe_err_set(err, XE_ENOMEM, "greedy: out of memory for %d nodes", n);
}

int xe_heur_greedy(const xe_instance *in, xe_stages *out, xe_err *err) { return xe_heur_greedy_ex(in, 1, out, err); }

int xe_heur_greedy_ex(const xe_instance *in, int pins, xe_stages *out, xe_err *err)
{
    return greedy_run(in, 0.0, 0, 0.0, pins, INFINITY, NULL, out, NULL, NULL, NULL, err);
}

int xe_heur_greedy_within(const xe_instance *in, int pins, double deadline, xe_stages *out, xe_err *err)
{
    return greedy_run(in, 0.0, 0, 0.0, pins, deadline, NULL, out, NULL, NULL, NULL, err);
}

int xe_heur_greedy_pair(const xe_instance *in, int pins, double deadline, xe_stages *out, xe_stages *second,
                        xe_err *err)
{
    return xe_heur_greedy_pair_intr(in, pins, deadline, NULL, out, second, err);
}

int xe_heur_greedy_pair_intr(const xe_instance *in, int pins, double deadline, const volatile sig_atomic_t *intr,
                             xe_stages *out, xe_stages *second, xe_err *err)
{
    int rc = greedy_run(in, 0.0, 0, 0.0, pins, deadline, intr, out, second, NULL, NULL, err);
    if (rc) xe_stages_clear(second);
    return rc;
}

double xe_heur_pass_work(const xe_instance *in)
{
    const xe_graph *g = in->g;
    return fmax(1.0, (double)g->n * (double)(g->n + g->m) * in->ndev);
}

double xe_heur_pass_seconds(const xe_instance *in) { return xe_heur_pass_work(in) / XE_HEUR_PASS_RATE; }

int xe_heur_greedy_random(const xe_instance *in, uint64_t seed, double max_seconds, xe_stages *out, int *tries,
                          xe_err *err)
{
    return xe_heur_greedy_random_ex(in, seed, max_seconds, out, tries, NULL, err);
}

/* The randomised restarts with their arguments checked (xe_heur_greedy_random_ex and
 * _within). */
static int greedy_random(const xe_instance *in, uint64_t seed, double max_seconds, double deadline, xe_stages *out,
                         int *tries, long *passes, xe_err *err)
{
    if (!(max_seconds >= 0) || !isfinite(max_seconds) || isnan(deadline)) {
        memset(out, 0, sizeof *out);
        if (passes) *passes = 0;
        return xe_err_set(err, XE_EINVAL, "greedy: randomised restarts need a finite time >= 0 s, not %g", max_seconds);
    }
    return greedy_run(in, XE_GREEDY_NOISE, seed, max_seconds, 0, deadline, NULL, out, NULL, tries, passes, err);
}

int xe_heur_greedy_random_ex(const xe_instance *in, uint64_t seed, double max_seconds, xe_stages *out, int *tries,
                             long *passes, xe_err *err)
{
    return greedy_random(in, seed, max_seconds, INFINITY, out, tries, passes, err);
}

int xe_heur_greedy_random_within(const xe_instance *in, uint64_t seed, double max_seconds, double deadline,
                                 xe_stages *out, int *tries, xe_err *err)
{
    return greedy_random(in, seed, max_seconds, deadline, out, tries, NULL, err);
}
