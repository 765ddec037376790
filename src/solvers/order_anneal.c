/* A topological order that fits a budget, by simulated annealing over orders
 * (include/xengine/reorder.h, docs/reorder.md, "Annealing over orders"): the local search
 * beside xe_order_fit's exact depth-first search, for large graphs near their least peak,
 * where the search's sets run into the millions.
 *
 * State: an order ord[0..n) (topological), pos[v] its inverse, and its profile
 * prof[p] = L[p] + mem(ord[p]): L[p] the bytes of the outputs computed before position p
 * that a node at p or later reads (xe_order_peak's accounting: an output is freed right
 * after its last reader, one nothing reads right after it is computed).
 *
 * Objective: the excess over the target, E = sum over p of max(0, prof[p] - target); an
 * order with E = 0 fits (counted as the number of positions over the target; E is in
 * units of 2^shift bytes, shift 0 unless n times the graph's total bytes could
 * overflow). A move takes a node v at most W positions from a position p drawn in
 * proportion to its excess (a Fenwick tree of the excesses; one move in eight from any
 * position instead) and moves it to another place between its last input and its first
 * reader, at most W positions away, so the order stays topological.
 *
 * Moving v from q to q' changes the profile only on [min(q, q'), max(q, q')]: outside it
 * the same nodes come before each position, and a last reader inside the window stays
 * inside. L at the window's first position is unchanged for the same reason, so the
 * window is recomputed from there, each step adding the output of the node at p (where
 * something reads it) and subtracting the inputs whose last reader sits at p. O(W *
 * indegree * outdegree) per move.
 *
 * Schedule: runs alternate between the caller's start order and the index order 0..n-1
 * (the index order alone without a start), each with its temperature falling linearly
 * from twice the mean tensor size to 1 byte over its moves: 2^17 in the first run, twice
 * the previous run's in each later one up to 2^20 (short runs find the easy targets soon,
 * long ones the hard; counted in moves, not seconds, so a seed gives the same orders on
 * any machine until the deadline cuts); fresh random bits in each, until the deadline or
 * the stop flag. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/reorder.h"
#include "xengine/timer.h"

#include "rng.h"

#define XE_ANNEAL_W 30                      /* positions a node moves at most */
#define XE_ANNEAL_MOVES ((long)1 << 17)     /* moves of the first run; each later run twice */
#define XE_ANNEAL_MOVES_MAX ((long)1 << 20) /* its predecessor's, up to this */
#define XE_ANNEAL_TEMP 2.0                  /* starting temperature, in mean tensor sizes */
#define XE_ANNEAL_WORK ((long)1 << 18)      /* reader lookups between two reads of the clock */

typedef struct {
    const xe_graph *g;
    int n;
    int *ord, *pos;
    int64_t *L, *prof, *save;
    int64_t *fw; /* [n + 1] Fenwick tree of the positions' excesses over the target */
    int fwtop;   /* the largest power of two <= n */
    int shift;   /* excesses are counted in units of 2^shift bytes (0 unless n x the total
                    bytes could pass 2^62: the sums stay within int64) */
    int nover;   /* positions over the target: the order fits when none is */
    long work;   /* reader lookups since the clock was last read */
    int64_t *drop; /* [n] oa_reset's scratch: bytes whose last reader is at each position */
    uint64_t rng;
} oa_ctx;

static void oa_fw_add(oa_ctx *c, int p, int64_t d)
{
    if (d)
        for (int i = p + 1; i <= c->n; i += i & -i) c->fw[i] += d;
}

/* the position p whose excess interval [sum before p, sum through p) holds x, for
 * 0 <= x < E: positions drawn in proportion to their excess */
static int oa_fw_find(const oa_ctx *c, int64_t x)
{
    int p = 0;
    for (int k = c->fwtop; k; k >>= 1)
        if (p + k <= c->n && c->fw[p + k] <= x) {
            p += k;
            x -= c->fw[p];
        }
    return p < c->n ? p : c->n - 1;
}

static int oa_last(oa_ctx *c, int u)
{
    const xe_graph *g = c->g;
    int l = -1;
    c->work += g->succ_off[u + 1] - g->succ_off[u] + 1;
    for (int j = g->succ_off[u]; j < g->succ_off[u + 1]; j++)
        if (c->pos[g->succ[j]] > l) l = c->pos[g->succ[j]];
    return l;
}

/* L[p + 1] - L[p]: the output of ord[p] where something reads it, less the inputs whose
 * last reader is ord[p] */
static int64_t oa_step(oa_ctx *c, int p)
{
    const xe_graph *g = c->g;
    int w = c->ord[p];
    int64_t d = g->succ_off[w + 1] > g->succ_off[w] ? g->nodes[w].mem : 0;
    for (int j = g->pred_off[w]; j < g->pred_off[w + 1]; j++)
        if (oa_last(c, g->pred[j]) == p) d -= g->nodes[g->pred[j]].mem;
    return d;
}

/* a position's excess over the target, in units of 2^shift bytes */
static int64_t oa_over(const oa_ctx *c, int64_t x, int64_t target) { return x > target ? (x - target) >> c->shift : 0; }

/* position p's resident bytes become nw: the tree, the count over the target; returns
 * the change of the excess */
static int64_t oa_set(oa_ctx *c, int p, int64_t nw, int64_t target)
{
    int64_t d = oa_over(c, nw, target) - oa_over(c, c->prof[p], target);
    oa_fw_add(c, p, d);
    c->nover += (nw > target) - (c->prof[p] > target);
    c->prof[p] = nw;
    return d;
}

/* the profile of positions a..b from L[a]; returns the change of the excess */
static int64_t oa_window(oa_ctx *c, int a, int b, int64_t target)
{
    int64_t dE = 0;
    for (int p = a; p <= b; p++) {
        if (p > a) c->L[p] = c->L[p - 1] + oa_step(c, p - 1);
        dE += oa_set(c, p, c->L[p] + c->g->nodes[c->ord[p]].mem, target);
    }
    return dE;
}

static void oa_move(oa_ctx *c, int i, int j)
{
    int v = c->ord[i];
    if (i < j)
        for (int k = i; k < j; k++) c->pos[c->ord[k] = c->ord[k + 1]] = k;
    else
        for (int k = i; k > j; k--) c->pos[c->ord[k] = c->ord[k - 1]] = k;
    c->ord[j] = v;
    c->pos[v] = j;
}

/* the order `from` and its profile from scratch, in O(n + m): each output's last reader
 * found once (a position at a time, as oa_step does, would cost the sum of indegree x
 * outdegree: seconds on layers joined all to all) */
static int64_t oa_reset(oa_ctx *c, const int *from, int64_t target)
{
    const xe_graph *g = c->g;
    int64_t E = 0;
    memcpy(c->ord, from, (size_t)c->n * sizeof *c->ord);
    for (int p = 0; p < c->n; p++) c->pos[c->ord[p]] = p;
    memset(c->drop, 0, (size_t)c->n * sizeof *c->drop);
    for (int u = 0; u < c->n; u++) {
        int l = -1;
        for (int j = g->succ_off[u]; j < g->succ_off[u + 1]; j++)
            if (c->pos[g->succ[j]] > l) l = c->pos[g->succ[j]];
        if (l >= 0) c->drop[l] += g->nodes[u].mem;
    }
    c->L[0] = 0;
    c->nover = 0;
    memset(c->fw, 0, ((size_t)c->n + 1) * sizeof *c->fw);
    for (int p = 0; p < c->n; p++) {
        int w = c->ord[p];
        c->prof[p] = c->L[p] + g->nodes[w].mem;
        E += oa_over(c, c->prof[p], target);
        c->nover += c->prof[p] > target;
        oa_fw_add(c, p, oa_over(c, c->prof[p], target));
        if (p + 1 < c->n)
            c->L[p + 1] = c->L[p] + (g->succ_off[w + 1] > g->succ_off[w] ? g->nodes[w].mem : 0) - c->drop[p];
    }
    return E;
}

static double oa_unit(oa_ctx *c) { return (double)(xe_splitmix64(&c->rng) >> 11) * (1.0 / 9007199254740992.0); }

/* One run from `from`: 1 when an order with no excess is in c->ord, 0 at the end of the
 * run, -1 at the deadline or the stop flag. */
static int oa_run(oa_ctx *c, const int *from, int64_t target, double t0, long len, double deadline,
                  const volatile sig_atomic_t *stop, long *moves)
{
    const xe_graph *g = c->g;
    int n = c->n, W = XE_ANNEAL_W;
    int64_t E = oa_reset(c, from, target);
    for (long it = 0; c->nover > 0; it++) {
        if (it >= len) return 0;
        /* the clock every 1,024 moves, or sooner where moves are dear (a move looks up
         * readers of readers: on layers joined all to all, 10^6 lookups per position) */
        if ((it & 1023) == 0 || c->work > XE_ANNEAL_WORK) {
            c->work = 0;
            if ((stop && *stop) || xe_now() >= deadline) return -1;
        }
        double temp = t0 * (1.0 - (double)it / (double)len);
        if (temp < 1) temp = 1;
        (*moves)++;
        /* around a position drawn in proportion to its excess, one move in eight anywhere */
        int p = xe_splitmix64(&c->rng) % 8 == 0 || E <= 0 ? (int)(xe_splitmix64(&c->rng) % (uint64_t)n)
                                                          : oa_fw_find(c, (int64_t)(xe_splitmix64(&c->rng) % (uint64_t)E));
        int q = p - W + (int)(xe_splitmix64(&c->rng) % (uint64_t)(2 * W + 1));
        if (q < 0 || q >= n) continue;
        int v = c->ord[q], lo = -1, hi = n;
        for (int j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
            if (c->pos[g->pred[j]] > lo) lo = c->pos[g->pred[j]];
        for (int j = g->succ_off[v]; j < g->succ_off[v + 1]; j++)
            if (c->pos[g->succ[j]] < hi) hi = c->pos[g->succ[j]];
        int a = lo + 1 > q - W ? lo + 1 : q - W, b = hi - 1 < q + W ? hi - 1 : q + W;
        if (b <= a) continue;
        int np = a + (int)(xe_splitmix64(&c->rng) % (uint64_t)(b - a + 1));
        if (np == q) continue;
        int wa = q < np ? q : np, wb = q < np ? np : q;
        memcpy(c->save, c->prof + wa, (size_t)(wb - wa + 1) * sizeof *c->save);
        oa_move(c, q, np);
        int64_t dE = oa_window(c, wa, wb, target);
        if (dE <= 0 || oa_unit(c) < exp(-(double)dE / temp)) {
            E += dE;
        } else { /* undo: the order, the saved profile, L from it */
            oa_move(c, np, q);
            for (int k = wa; k <= wb; k++) {
                oa_set(c, k, c->save[k - wa], target);
                c->L[k] = c->prof[k] - g->nodes[c->ord[k]].mem;
            }
        }
    }
    return 1;
}

int xe_order_anneal(const xe_graph *g, int64_t target, const int *start, uint64_t seed, double deadline,
                    const volatile sig_atomic_t *stop, int *order, xe_order_fit_result *r, xe_err *err)
{
    memset(r, 0, sizeof *r);
    r->status = XE_FIT_CUT;
    if (!g->finalized) return xe_err_set(err, XE_EINVAL, "order anneal: graph not finalized");
    if (target < 0) return xe_err_set(err, XE_EINVAL, "order anneal: negative target %lld B", (long long)target);
    int n = g->n;
    if (n == 0) {
        r->status = XE_FIT_FOUND;
        return XE_OK;
    }
    oa_ctx c = {.g = g, .n = n, .rng = seed};
    int *idx = malloc((size_t)n * sizeof *idx);
    c.ord = malloc((size_t)n * sizeof *c.ord);
    c.pos = malloc((size_t)n * sizeof *c.pos);
    c.L = malloc((size_t)n * sizeof *c.L);
    c.prof = malloc((size_t)n * sizeof *c.prof);
    c.save = malloc((size_t)n * sizeof *c.save);
    c.fw = malloc(((size_t)n + 1) * sizeof *c.fw);
    c.drop = malloc((size_t)n * sizeof *c.drop);
    for (c.fwtop = 1; c.fwtop <= n / 2; c.fwtop *= 2) {}
    int rc = XE_OK;
    if (!idx || !c.ord || !c.pos || !c.L || !c.prof || !c.save || !c.fw || !c.drop) {
        rc = xe_err_set(err, XE_ENOMEM, "order anneal: out of memory for %d nodes", n);
        goto out;
    }
    for (int v = 0; v < n; v++) idx[v] = v;
    if (start && xe_order_peak(g, start) < 0) {
        rc = xe_err_set(err, XE_EINVAL, "order anneal: the start is not a topological order of the graph");
        goto out;
    }
    double mean = 0;
    int64_t total = 0; /* at most XE_MAX_BYTES (2^53) in a finalized graph */
    for (int v = 0; v < n; v++) mean += (double)g->nodes[v].mem, total += g->nodes[v].mem;
    while ((total >> c.shift) > (INT64_MAX / 4) / n) c.shift++;
    double t0 = ldexp(XE_ANNEAL_TEMP * mean / n, -c.shift); /* in the excess's units */
    /* runs alternate between the caller's start and the index order */
    long len = XE_ANNEAL_MOVES;
    for (int run = 0;; run++) {
        const int *from = start && (run % 2 == 0) ? start : idx;
        r->sets++;
        int got = oa_run(&c, from, target, t0, len, deadline, stop, &r->states);
        if (len < XE_ANNEAL_MOVES_MAX) len *= 2;
        if (got < 0) break;
        if (got == 1) {
            int64_t pk = xe_order_peak(g, c.ord);
            if (pk < 0 || pk > target) {
                rc = xe_err_set(err, XE_EINTERNAL, "order anneal: an order of peak %lld B taken for %lld B",
                                (long long)pk, (long long)target);
                goto out;
            }
            memcpy(order, c.ord, (size_t)n * sizeof *order);
            r->status = XE_FIT_FOUND;
            r->peak = pk;
            break;
        }
    }
out:
    free(idx);
    free(c.ord);
    free(c.pos);
    free(c.L);
    free(c.prof);
    free(c.save);
    free(c.fw);
    free(c.drop);
    return rc;
}

int xe_order_fit_within(const xe_graph *g, int64_t target, double seconds, const volatile sig_atomic_t *stop,
                        int *order, xe_order_fit_result *r, int *annealed, xe_err *err)
{
    double t0 = xe_now();
    double share = seconds * (g->n < XE_ORDER_FIT_ANNEAL_N ? 0.5 : 0.125);
    if (annealed) *annealed = 0;
    if (g->finalized && target < xe_instance_min_footprint(g)) {
        /* some node and its inputs exceed the target at its compute in every order */
        memset(r, 0, sizeof *r);
        r->status = XE_FIT_NONE;
        return XE_OK;
    }
    int rc = xe_order_fit(g, target, t0 + share, stop, 0, order, r, err);
    if (rc || r->status != XE_FIT_CUT || (stop && *stop) || xe_now() >= t0 + seconds) return rc;
    long sets = r->sets;
    if (annealed) *annealed = 1;
    rc = xe_order_anneal(g, target, NULL, 1, t0 + seconds, stop, order, r, err);
    r->sets = sets;
    return rc;
}
