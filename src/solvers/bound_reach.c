/* The reach bound (include/xengine/solvers.h, xe_rsearch_*; docs/lns.md, "Bounds" 7):
 * the least cost of any one-device event list that ends with one target node resident,
 * found backwards over resident sets, as the exact search of docs/pebble.md decides
 * feasibility, with costs.
 *
 * reach(S): the least cost of an event list from empty memory after which the set S is
 * resident. In such a list some member s of S is computed last (its final compute); from
 * then on the other members stay resident (a tensor appears only by a compute), so just
 * before it (S \ {s}) u inputs(s) is resident and during it S u inputs(s). The prefix
 * reaches that set, so
 *
 *     reach({}) = 0,
 *     reach(S)  = min over s in S with mem(S u inputs(s)) <= budget of
 *                 c(s) + reach((S \ {s}) u inputs(s))          (INFINITY: no such s),
 *
 * exactly (conversely, reaching that set, computing s and freeing its inputs outside S
 * reaches S). The search is A* from {target} towards {} over these steps, each state a
 * set S with the cost g of the steps taken so far (the end of the list, backwards).
 *
 * - Estimate h(S): the cost of every node of anc*(S) (the members and their ancestors)
 *   once, each must be computed before S is resident (consistent: a step removes s from
 *   anc* at most, at cost c(s)); plus the largest x->extra of a member, a table built
 *   first of reach({m}) - once(anc*(m)) (rs_estimate: admissible, not consistent). f =
 *   g + h, never below its parent's (pathmax), so the f popped rises and is a lower
 *   bound on reach({target}) at any moment; a state reached more cheaply after it was
 *   expanded is expanded again.
 * - Forced members: a member s whose inputs are all in S and that is no ancestor of
 *   another member is removed without branching, at c(s), exactly: reaching S \ {s} and
 *   computing s reaches S; and any list reaching S, without the computes of s and of its
 *   descendants (none of which an ancestor of S \ {s} reads), reaches S \ {s} for at
 *   least c(s) less. One pass from the highest index down removes them all (a removal
 *   can only free members of lower index).
 * - Completion: where computing anc*(S) once each in index order, freeing every tensor
 *   after its last reader in anc*(S) but keeping the members, fits the budget, reach(S) =
 *   h(S) exactly; the state then goes onto the heap as a completed path of cost g + h(S),
 *   not expanded.
 * - Dominance: reach is monotone in S (a list reaching S reaches every subset), so a
 *   popped S with some S \ {x} already reached at no more cost is not expanded: the
 *   subset's continuation is at least as cheap. (Only one-smaller subsets are looked up.)
 *
 * Any valid event list computes the target at some moment; the list up to then reaches
 * {target}, and without its computes of nodes outside anc*(target) (which no ancestor of
 * the target reads) still does. So every schedule costs at least reach({target}) plus
 * every node outside anc*(target) once. The target is the node whose anc* costs most
 * once (ties: the one with more ancestors, so that a sink of cost 0 is not passed over,
 * then the larger footprint, then the higher index). Where anc*(target) is every
 * node, the cheapest path is itself an optimal schedule (xe_rsearch_schedule).
 *
 * Like the search bound (bound_search.c) it runs on the planner's second thread, so it
 * allocates nothing while it runs: its arrays are mapped (mapped.h) and grow by mremap. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_DONTFORK, mremap (glibc, Linux) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "mapped.h"
#include "reach_int.h"

/* The single nodes' table (xe_rsearch_run): at most this share of the time to the
 * deadline, and this many expansions a node. */
#define RS_TABLE_SHARE 0.25
#define RS_TABLE_EXPANSIONS 2000L


static int rs_room(xe_rsearch *x, size_t extra)
{
    return x->bytes + extra <= x->max_bytes;
}

static int rs_grow_states(xe_rsearch *x)
{
    uint32_t ncap = x->cap * 2;
    if (ncap < x->cap || ncap > UINT32_MAX / 2) return -1;
    size_t kb = (size_t)x->W * sizeof *x->keys, per = kb + sizeof *x->gbest + sizeof *x->parent;
    if (!rs_room(x, (size_t)x->cap * per)) return -1;
    uint64_t *nk = xe_remap(x->keys, x->keys_bytes, (size_t)ncap * kb);
    if (!nk) return -1;
    x->keys = nk;
    x->keys_bytes = (size_t)ncap * kb;
    double *ng = xe_remap(x->gbest, x->gbest_bytes, (size_t)ncap * sizeof *ng);
    if (!ng) return -1;
    x->gbest = ng;
    x->gbest_bytes = (size_t)ncap * sizeof *ng;
    uint32_t *np = xe_remap(x->parent, x->parent_bytes, (size_t)ncap * sizeof *np);
    if (!np) return -1;
    x->parent = np;
    x->parent_bytes = (size_t)ncap * sizeof *np;
    x->bytes += (size_t)x->cap * per;
    x->cap = ncap;
    return 0;
}

/* Heap order: least f first; ties to the larger g (nearer the empty set). */
static int rs_before(const rs_item *a, const rs_item *b)
{
    return a->f < b->f || (a->f == b->f && a->g > b->g);
}

int xe_rs_push(xe_rsearch *x, rs_item it)
{
    if (x->hn == x->heapcap) {
        size_t extra = x->heapcap * sizeof(rs_item);
        if (!rs_room(x, extra)) return -1;
        rs_item *nh = xe_remap(x->heap, x->heapcap * sizeof *nh, 2 * x->heapcap * sizeof *nh);
        if (!nh) return -1;
        x->heap = nh;
        x->heapcap *= 2;
        x->bytes += extra;
    }
    size_t i = x->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!rs_before(&it, &x->heap[p])) break;
        x->heap[i] = x->heap[p];
        i = p;
    }
    x->heap[i] = it;
    return 0;
}

rs_item xe_rs_pop(xe_rsearch *x)
{
    rs_item top = x->heap[0], last = x->heap[--x->hn];
    size_t i = 0;
    for (;;) {
        size_t a = 2 * i + 1, m = a;
        if (a >= x->hn) break;
        if (a + 1 < x->hn && rs_before(&x->heap[a + 1], &x->heap[a])) m = a + 1;
        if (!rs_before(&x->heap[m], &last)) break;
        x->heap[i] = x->heap[m];
        i = m;
    }
    x->heap[i] = last;
    return top;
}

/* The id of the stored set S, or RS_NONE; with `add`, stores it when absent (cost
 * INFINITY, parent RS_NONE); *fail = 1 when the memory limit stops that. */
uint32_t xe_rs_find(xe_rsearch *x, const uint64_t *S, int add, int *fail)
{
    if (add && (size_t)(x->nstates + 1) * 2 > x->hcap && xe_slots_grow(&x->slot, &x->hcap, &x->bytes, x->max_bytes)) {
        *fail = 1;
        return RS_NONE;
    }
    int W = x->W;
    uint64_t tag = xe_hash_words(S, W) & 0xffffffff00000000ULL;
    size_t j = xe_slot_home(tag, x->hcap);
    for (uint64_t e; (e = x->slot[j]) != 0; j = (j + 1) & (x->hcap - 1)) {
        uint32_t id = (uint32_t)e - 1;
        if ((e & 0xffffffff00000000ULL) == tag && !memcmp(x->keys + (size_t)id * (size_t)W, S, sizeof *S * (size_t)W))
            return id;
    }
    if (!add) return RS_NONE;
    if (x->nstates == x->cap && rs_grow_states(x)) {
        *fail = 1;
        return RS_NONE;
    }
    uint32_t id = x->nstates++;
    memcpy(x->keys + (size_t)id * (size_t)W, S, sizeof *S * (size_t)W);
    x->gbest[id] = INFINITY;
    x->parent[id] = RS_NONE;
    x->slot[j] = tag | (uint64_t)(id + 1);
    return id;
}

void xe_rs_reset(xe_rsearch *x)
{
    x->nstates = 0;
    x->hn = 0;
    x->goal = RS_NONE;
    memset(x->slot, 0, x->hcap * sizeof *x->slot);
}

uint32_t xe_rs_improve(xe_rsearch *x, const uint64_t *S, double g, uint32_t from, int *fail)
{
    uint32_t id = xe_rs_find(x, S, 1, fail);
    if (id == RS_NONE || !(g < x->gbest[id])) return RS_NONE;
    x->gbest[id] = g;
    x->parent[id] = from;
    return id;
}

/* Bytes of the set S. */
int64_t xe_rs_mem(const xe_rsearch *x, const uint64_t *S)
{
    int64_t m = 0;
    for (int w = 0; w < x->W; w++)
        for (uint64_t b = S[w]; b; b &= b - 1) m += x->g->nodes[64 * w + __builtin_ctzll(b)].mem;
    return m;
}

/* x->a = anc*(S); returns the cost of its nodes once (h(S)). */
static double rs_closure(xe_rsearch *x, const uint64_t *S)
{
    int W = x->W;
    memset(x->a, 0, sizeof *x->a * (size_t)W);
    for (int w = 0; w < W; w++)
        for (uint64_t b = S[w]; b; b &= b - 1) {
            const uint64_t *av = x->anc + (size_t)(64 * w + __builtin_ctzll(b)) * (size_t)W;
            for (int k = 0; k < W; k++) x->a[k] |= av[k];
        }
    double h = 0.0;
    for (int w = 0; w < W; w++)
        for (uint64_t b = x->a[w]; b; b &= b - 1) h += x->c[64 * w + __builtin_ctzll(b)];
    return h;
}

/* h(S): rs_closure's every node of anc*(S) once, plus the largest extra cost of a
 * member alone (x->extra: reach({m}) - once(anc*(m)), at least; any list reaching S
 * reaches {m}, and without the computes outside anc*(m) still does, so reach(S) >=
 * reach({m}) + once(anc*(S) \ anc*(m))). Leaves x->a = anc*(S). */
static double rs_max_extra(const xe_rsearch *x, const uint64_t *S)
{
    double m = 0.0;
    for (int w = 0; w < x->W; w++)
        for (uint64_t b = S[w]; b; b &= b - 1) m = fmax(m, x->extra[64 * w + __builtin_ctzll(b)]);
    return m;
}

static double rs_estimate(xe_rsearch *x, const uint64_t *S)
{
    return rs_closure(x, S) + rs_max_extra(x, S);
}

/* Removes S's forced members (file comment), highest index first, in one pass, except
 * those in keep (NULL: none); returns their cost. With `log`, appends them there in the
 * order removed (*nlog counts). */
double xe_rs_normalize(const xe_rsearch *x, uint64_t *S, const uint64_t *keep, int *log, int *nlog)
{
    const xe_graph *g = x->g;
    double add = 0.0;
    for (int w = x->W - 1; w >= 0; w--) {
        for (uint64_t b = keep ? S[w] & ~keep[w] : S[w]; b;) {
            int hi = 63 - __builtin_clzll(b), v = 64 * w + hi;
            b &= ~(1ULL << hi);
            int ok = 1;
            for (int k = g->pred_off[v]; k < g->pred_off[v + 1] && ok; k++) ok = HAS(S, g->pred[k]);
            const uint64_t *dv = x->desc + (size_t)v * (size_t)x->W;
            for (int k = 0; k < x->W && ok; k++) ok = !(dv[k] & S[k]);
            if (!ok) continue;
            S[w] &= ~(1ULL << hi);
            add += x->c[v];
            if (log) log[(*nlog)++] = v;
        }
    }
    return add;
}

void xe_rs_step(const xe_rsearch *x, const uint64_t *S, int s, uint64_t *out)
{
    const xe_graph *g = x->g;
    memcpy(out, S, sizeof *S * (size_t)x->W);
    out[s >> 6] &= ~(1ULL << (s & 63));
    for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++) out[g->pred[k] >> 6] |= 1ULL << (g->pred[k] & 63);
}

/* 1 when computing x->a (= anc*(S), rs_closure's) once each in index order, freeing each
 * tensor after its last reader there but keeping S's members, fits the budget. */
static int rs_fits_once(xe_rsearch *x, const uint64_t *S)
{
    const xe_graph *g = x->g;
    int W = x->W;
    for (int w = 0; w < W; w++)
        for (uint64_t b = x->a[w]; b; b &= b - 1) {
            int v = 64 * w + __builtin_ctzll(b);
            x->lastr[v] = HAS(S, v) ? x->n : -1;
        }
    for (int w = 0; w < W; w++)
        for (uint64_t b = x->a[w]; b; b &= b - 1) {
            int v = 64 * w + __builtin_ctzll(b);
            for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
                if (x->lastr[g->pred[k]] < v) x->lastr[g->pred[k]] = v;
        }
    int64_t cur = 0;
    for (int w = 0; w < W; w++)
        for (uint64_t b = x->a[w]; b; b &= b - 1) {
            int v = 64 * w + __builtin_ctzll(b);
            cur += g->nodes[v].mem;
            if (cur > x->budget) return 0;
            for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
                if (x->lastr[g->pred[k]] == v) cur -= g->nodes[g->pred[k]].mem;
        }
    return 1;
}

/* Stores S (normalized) reached at cost g from `from`, pushing it (or its completed path)
 * when new or cheaper; f is at least fmin (pathmax). 0, or -1 at the memory limit. */
static int rs_add(xe_rsearch *x, const uint64_t *S, double g, uint32_t from, double fmin)
{
    int fail = 0;
    uint32_t id = xe_rs_improve(x, S, g, from, &fail);
    if (id == RS_NONE) return fail ? -1 : 0;
    double once = rs_closure(x, S);
    int complete = rs_fits_once(x, S); /* then reach(S) is once exactly */
    double f = g + once + (complete ? 0.0 : rs_max_extra(x, S));
    if (f < fmin) f = fmin;
    return xe_rs_push(x, (rs_item){.f = f, .g = g, .id = id, .complete = complete});
}

/* 1 when some one-smaller subset of S is stored at cost <= g. */
int xe_rs_dominated(xe_rsearch *x, const uint64_t *S, double g)
{
    int W = x->W;
    for (int w = 0; w < W; w++)
        for (uint64_t b = S[w]; b; b &= b - 1) {
            memcpy(x->u, S, sizeof *S * (size_t)W);
            x->u[w] &= ~(b & -b);
            uint32_t id = xe_rs_find(x, x->u, 0, NULL);
            if (id != RS_NONE && x->gbest[id] <= g) return 1;
        }
    return 0;
}

void xe_rsearch_free(xe_rsearch *s)
{
    if (!s) return;
    free(s->c);
    free(s->extra);
    free(s->anc);
    free(s->desc);
    free(s->lastr);
    free(s->a);
    free(s->t);
    free(s->u);
    xe_unmap(s->keys, s->keys_bytes);
    xe_unmap(s->gbest, s->gbest_bytes);
    xe_unmap(s->parent, s->parent_bytes);
    xe_unmap(s->slot, s->hcap * sizeof *s->slot);
    xe_unmap(s->heap, s->heapcap * sizeof *s->heap);
    free(s);
}

xe_rsearch *xe_rsearch_new(const xe_instance *in, size_t max_bytes)
{
    const xe_graph *g = in->g;
    int n = g->n;
    if (in->ndev != 1 || n < 1 || n > XE_BOUND_SEARCH_MAX_NODES || !isfinite(xe_bound_cheapest(in))) return NULL;
    if (xe_instance_min_footprint(g) > in->dev[0].budget) return NULL; /* a node does not fit with its inputs */
    xe_rsearch *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    int W = (n + 63) / 64;
    *x = (xe_rsearch){.in = in, .g = g, .n = n, .W = W, .budget = in->dev[0].budget, .goal = RS_NONE,
                      .max_bytes = max_bytes ? max_bytes : (size_t)256 << 20, .cap = 1024, .hcap = 4096,
                      .heapcap = 1024};
    x->c = malloc(sizeof *x->c * (size_t)n);
    x->extra = calloc((size_t)n, sizeof *x->extra);
    x->anc = calloc((size_t)n * (size_t)W, sizeof *x->anc);
    x->desc = calloc((size_t)n * (size_t)W, sizeof *x->desc);
    x->lastr = malloc(sizeof *x->lastr * (size_t)n);
    x->a = malloc(sizeof *x->a * (size_t)W);
    x->t = malloc(sizeof *x->t * (size_t)W);
    x->u = malloc(sizeof *x->u * (size_t)W);
    x->keys_bytes = (size_t)x->cap * (size_t)W * sizeof *x->keys;
    x->gbest_bytes = (size_t)x->cap * sizeof *x->gbest;
    x->parent_bytes = (size_t)x->cap * sizeof *x->parent;
    x->keys = xe_map(x->keys_bytes);
    x->gbest = xe_map(x->gbest_bytes);
    x->parent = xe_map(x->parent_bytes);
    x->slot = xe_map(x->hcap * sizeof *x->slot);
    x->heap = xe_map(x->heapcap * sizeof *x->heap);
    x->bytes = x->keys_bytes + x->gbest_bytes + x->parent_bytes + x->hcap * sizeof(uint64_t) +
               x->heapcap * sizeof(rs_item);
    if (!x->c || !x->extra || !x->anc || !x->desc || !x->lastr || !x->a || !x->t || !x->u || !x->keys || !x->gbest ||
        !x->parent || !x->slot || !x->heap) {
        xe_rsearch_free(x);
        return NULL;
    }
    for (int v = 0; v < n; v++) { /* inputs have smaller indices (a topological numbering) */
        x->c[v] = xe_cost(in, v, 0);
        uint64_t *av = x->anc + (size_t)v * (size_t)W;
        av[v >> 6] |= 1ULL << (v & 63);
        for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
            const uint64_t *au = x->anc + (size_t)g->pred[k] * (size_t)W;
            for (int q = 0; q < W; q++) av[q] |= au[q];
        }
    }
    double once = 0.0, best = -1.0;
    int64_t best_fp = -1;
    int best_cnt = -1;
    for (int v = 0; v < n; v++) {
        once += x->c[v];
        const uint64_t *av = x->anc + (size_t)v * (size_t)W;
        for (int u = 0; u < v; u++)
            if (HAS(av, u)) x->desc[(size_t)u * (size_t)W + (v >> 6)] |= 1ULL << (v & 63);
    }
    for (int v = 0; v < n; v++) {
        memset(x->t, 0, sizeof *x->t * (size_t)W);
        x->t[v >> 6] |= 1ULL << (v & 63);
        double h = rs_closure(x, x->t);
        int cnt = 0;
        for (int q = 0; q < W; q++) cnt += __builtin_popcountll(x->a[q]);
        int64_t fp = xe_graph_footprint(g, v);
        if (h > best || (h == best && (cnt > best_cnt || (cnt == best_cnt && fp >= best_fp)))) {
            best = h;
            best_cnt = cnt;
            best_fp = fp;
            x->target = v;
        }
    }
    x->rest = fmax(0.0, once - best);
    return x;
}

int xe_rsearch_target(const xe_rsearch *s)
{
    return s->target;
}

/* 1 at the deadline (0: none) or once *intr is set: checked at every state popped and
 * every child stored (a clock read costs tens of nanoseconds, a child at least |S|
 * words; checking every 256 expansions, a 2,000-input fan-in overran a 2-s limit by 18 s). */
int xe_rs_stop(double deadline, const volatile sig_atomic_t *intr)
{
    return xe_interrupted(intr) || (deadline > 0 && xe_now() >= deadline);
}

/* One A* from {v} (the storage reset first): the least f popped in *lb (a bound on
 * reach({v}), exact with XE_BOUND_SEARCH_EXACT, INFINITY when no list reaches v), x->goal
 * the completed state where exact. It stops at `deadline` (0: none), at *intr, after
 * max_expanded expansions (0: no cap), or at the memory limit. Returns XE_BOUND_SEARCH_*;
 * adds its expansions to *expanded. */
static int rs_search(xe_rsearch *x, int v, double deadline, const volatile sig_atomic_t *intr, long max_expanded,
                     double *lb, long *expanded)
{
    int W = x->W, stop = XE_BOUND_SEARCH_STOPPED, cut = 0;
    long own = 0;
    xe_rs_reset(x);
    memset(x->t, 0, sizeof *x->t * (size_t)W);
    x->t[v >> 6] |= 1ULL << (v & 63);
    double g0 = xe_rs_normalize(x, x->t, NULL, NULL, NULL);
    *lb = g0 + rs_estimate(x, x->t); /* the start's f: a bound before anything is popped */
    if (rs_add(x, x->t, g0, RS_NONE, 0.0)) stop = XE_BOUND_SEARCH_MEMORY;
    while (stop == XE_BOUND_SEARCH_STOPPED) {
        if (x->hn == 0) { /* no list reaches v: no schedule fits */
            *lb = INFINITY;
            stop = XE_BOUND_SEARCH_EXACT;
            break;
        }
        if (xe_rs_stop(deadline, intr)) break;
        if (max_expanded > 0 && own >= max_expanded) break;
        rs_item it = xe_rs_pop(x);
        if (it.g > x->gbest[it.id]) continue; /* stale */
        *lb = it.f;
        if (it.complete) {
            x->goal = it.id;
            stop = XE_BOUND_SEARCH_EXACT;
            break;
        }
        own++;
        const uint64_t *key = x->keys + (size_t)it.id * (size_t)W;
        uint64_t S[64];
        memcpy(S, key, sizeof *S * (size_t)W);
        if (xe_rs_dominated(x, S, it.g)) continue;
        int64_t ms = xe_rs_mem(x, S);
        const xe_graph *g = x->g;
        for (int w = 0; w < W && stop == XE_BOUND_SEARCH_STOPPED && !cut; w++)
            for (uint64_t b = S[w]; b; b &= b - 1) {
                int s = 64 * w + __builtin_ctzll(b);
                int64_t extra = 0;
                for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++)
                    if (!HAS(S, g->pred[k])) extra += g->nodes[g->pred[k]].mem;
                if (ms + extra > x->budget) continue;
                xe_rs_step(x, S, s, x->t);
                double ng = it.g + x->c[s] + xe_rs_normalize(x, x->t, NULL, NULL, NULL);
                if (rs_add(x, x->t, ng, it.id, it.f)) {
                    stop = XE_BOUND_SEARCH_MEMORY;
                    break;
                }
                if (xe_rs_stop(deadline, intr)) { /* a state with thousands of members: each
                                                  child costs |S| words and more */
                    cut = 1;
                    break;
                }
            }
        if (cut) break;
    }
    *expanded += own;
    return stop;
}

double xe_rsearch_run(xe_rsearch *x, double deadline, const volatile sig_atomic_t *intr, xe_bound_search_stats *st)
{
    xe_bound_search_stats dummy;
    if (!st) st = &dummy;
    double t0 = xe_now();
    *st = (xe_bound_search_stats){.bound = x->rest, .stop = XE_BOUND_SEARCH_SKIPPED};
    if (x->ran) { /* runs once: the first run's result again */
        st->bound = x->result;
        st->exact = x->exact;
        st->stop = x->exact ? XE_BOUND_SEARCH_EXACT : x->full ? XE_BOUND_SEARCH_MEMORY : XE_BOUND_SEARCH_STOPPED;
        return x->result;
    }
    x->ran = 1;
    long expanded = 0;
    double lb = 0.0;
    /* the table of single nodes' extra costs, ancestors first (each search's sets hold
     * only ancestors of its node, whose entries are final by then), in a quarter of the
     * time at most and RS_TABLE_EXPANSIONS expansions a node */
    double table_end = deadline > 0 ? t0 + RS_TABLE_SHARE * (deadline - t0) : 0.0;
    const uint64_t *at = x->anc + (size_t)x->target * (size_t)x->W;
    for (int v = 0; v < x->n && !xe_interrupted(intr) && !(table_end > 0 && xe_now() >= table_end); v++) {
        if (v == x->target || !HAS(at, v) || x->g->pred_off[v] == x->g->pred_off[v + 1]) continue;
        int r = rs_search(x, v, table_end, intr, RS_TABLE_EXPANSIONS, &lb, &expanded);
        if (r == XE_BOUND_SEARCH_MEMORY || !isfinite(lb)) break; /* the target's search will say */
        memset(x->u, 0, sizeof *x->u * (size_t)x->W);
        x->u[v >> 6] |= 1ULL << (v & 63);
        x->extra[v] = fmax(0.0, lb - rs_closure(x, x->u));
    }
    int stop = rs_search(x, x->target, deadline, intr, 0, &lb, &expanded);
    x->full = stop == XE_BOUND_SEARCH_MEMORY;
    x->exact = stop == XE_BOUND_SEARCH_EXACT;
    x->result = lb + x->rest;
    *st = (xe_bound_search_stats){.bound = x->result, .exact = x->exact, .stop = stop, .expanded = expanded,
                                  .states = x->nstates, .seconds = xe_now() - t0};
    return x->result;
}

/* Appends to out the computes (and frees) that take memory from the set N' (key `from`)
 * to N (key `to`): N's step read back (the member s and the forced members whose
 * removal turns (N \ {s}) u inputs(s) into N', at the stored costs). XE_OK, XE_EINVAL
 * when no step matches, XE_ENOMEM. */
static int rs_emit_step(xe_rsearch *x, const uint64_t *to, double gto, const uint64_t *from, double gfrom, int *log,
                        xe_schedule *out)
{
    const xe_graph *g = x->g;
    int W = x->W;
    for (int w = 0; w < W; w++)
        for (uint64_t b = to[w]; b; b &= b - 1) {
            int s = 64 * w + __builtin_ctzll(b), nlog = 0;
            xe_rs_step(x, to, s, x->t);
            double c = gto + x->c[s] + xe_rs_normalize(x, x->t, NULL, log, &nlog);
            /* the set, at no more than the stored cost (a parent reached more cheaply
             * after its child was stored only makes the path cheaper) */
            if (memcmp(x->t, from, sizeof *from * (size_t)W) || c > gfrom + 1e-9 * fmax(1.0, fabs(gfrom))) continue;
            int rc = XE_OK;
            for (int q = nlog - 1; q >= 0 && !rc; q--) rc = xe_schedule_push(out, XE_EV_COMPUTE, log[q], 0, -1);
            if (!rc) rc = xe_schedule_push(out, XE_EV_COMPUTE, s, 0, -1);
            for (int k = g->pred_off[s]; k < g->pred_off[s + 1] && !rc; k++)
                if (!HAS(to, g->pred[k])) rc = xe_schedule_push(out, XE_EV_FREE, g->pred[k], 0, -1);
            return rc ? XE_ENOMEM : XE_OK;
        }
    return XE_EINVAL;
}

int xe_rsearch_schedule(xe_rsearch *x, xe_schedule *out, double *cost)
{
    const xe_graph *g = x->g;
    int n = x->n, W = x->W;
    xe_schedule_init(out);
    if (!x->exact || x->goal == RS_NONE) return XE_EINFEASIBLE;
    memset(x->t, 0, sizeof *x->t * (size_t)W);
    x->t[x->target >> 6] |= 1ULL << (x->target & 63);
    rs_closure(x, x->t);
    for (int v = 0; v < n; v++)
        if (!HAS(x->a, v)) return XE_EINFEASIBLE; /* nodes outside anc*(target): no schedule here */
    int *log = malloc(sizeof *log * (size_t)n);
    if (!log) return XE_ENOMEM;
    int rc = XE_OK;
    /* the completed state: anc*(N) once in index order, members kept */
    const uint64_t *N = x->keys + (size_t)x->goal * (size_t)W;
    rs_closure(x, N);
    if (!rs_fits_once(x, N)) rc = XE_EINVAL;
    for (int v = 0; v < n && !rc; v++) {
        if (!HAS(x->a, v)) continue;
        rc = xe_schedule_push(out, XE_EV_COMPUTE, v, 0, -1);
        for (int k = g->pred_off[v]; k < g->pred_off[v + 1] && !rc; k++)
            if (x->lastr[g->pred[k]] == v) rc = xe_schedule_push(out, XE_EV_FREE, g->pred[k], 0, -1);
    }
    /* then each step towards the start, forwards in time */
    for (uint32_t id = x->goal; !rc && x->parent[id] != RS_NONE; id = x->parent[id]) {
        uint32_t to = x->parent[id];
        rc = rs_emit_step(x, x->keys + (size_t)to * (size_t)W, x->gbest[to], x->keys + (size_t)id * (size_t)W,
                          x->gbest[id], log, out);
    }
    /* the start: {target} less its forced members, which come last */
    if (!rc) {
        int nlog = 0;
        memset(x->t, 0, sizeof *x->t * (size_t)W);
        x->t[x->target >> 6] |= 1ULL << (x->target & 63);
        xe_rs_normalize(x, x->t, NULL, log, &nlog);
        for (int q = nlog - 1; q >= 0 && !rc; q--) rc = xe_schedule_push(out, XE_EV_COMPUTE, log[q], 0, -1);
        if (!rc) rc = xe_schedule_push(out, XE_EV_FREE, x->target, 0, -1);
    }
    free(log);
    if (rc == XE_OK) { /* replayed before it is returned */
        xe_sim_result sr;
        xe_err e;
        rc = xe_sim_run(x->in, out, &sr, &e);
        if (rc == XE_OK) *cost = sr.total_time;
    }
    if (rc) xe_schedule_clear(out);
    return rc == XE_OK ? XE_OK : rc == XE_ENOMEM ? XE_ENOMEM : XE_EINVAL;
}

double xe_bound_reach(const xe_instance *in, double deadline, size_t max_bytes, const volatile sig_atomic_t *intr,
                      xe_bound_search_stats *st)
{
    xe_rsearch *s = xe_rsearch_new(in, max_bytes);
    if (!s) {
        double once = xe_bound_cheapest(in);
        if (st) *st = (xe_bound_search_stats){.bound = once, .stop = XE_BOUND_SEARCH_SKIPPED};
        return once;
    }
    double b = xe_rsearch_run(s, deadline, intr, st);
    xe_rsearch_free(s);
    return b;
}
