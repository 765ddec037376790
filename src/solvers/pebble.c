/* Exact feasibility of a budget on one device: the black pebble game with recomputation
 * (include/xengine/pebble.h, docs/pebble.md); the schedules read back from its answers
 * are in pebble_schedule.c (internals shared through pebble_int.h). Sets of tensors are
 * bitsets of W words; answers are memoised per set as "reachable from yes_at bytes on"
 * and "not reachable at no_at bytes or fewer", so questions at different budgets share
 * their work. */
#include "xengine/pebble.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/timer.h"
#include "rng.h"
#include "pebble_int.h"

/* Sift-down of a max-heap of nodes by key[] (h[0..len)), from position k. */
static void heap_down(int *h, int len, int k, const double *key)
{
    for (;;) {
        int c = 2 * k + 1;
        if (c >= len) return;
        if (c + 1 < len && key[h[c + 1]] > key[h[c]]) c++;
        if (key[h[c]] <= key[h[k]]) return;
        int t = h[c];
        h[c] = h[k], h[k] = t;
        k = c;
    }
}

/* Kahn's algorithm taking the ready node of the largest key[] first: a topological order
 * into order[] (every input before its users, whatever the keys). indeg and heap are n
 * ints of scratch. */
static void keyed_topo_order(const xe_graph *g, const double *key, int *indeg, int *heap, int *order)
{
    int n = g->n, len = 0;
    for (int v = 0; v < n; v++) {
        indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!indeg[v]) heap[len++] = v;
    }
    for (int k = len / 2 - 1; k >= 0; k--) heap_down(heap, len, k, key);
    for (int r = 0; r < n; r++) {
        int v = heap[0];
        order[r] = v;
        heap[0] = heap[--len];
        heap_down(heap, len, 0, key);
        for (int q = g->succ_off[v]; q < g->succ_off[v + 1]; q++) {
            int u = g->succ[q];
            if (--indeg[u]) continue;
            int k = len++; /* sift up */
            heap[k] = u;
            while (k > 0 && key[heap[(k - 1) / 2]] < key[u]) {
                heap[k] = heap[(k - 1) / 2];
                k = (k - 1) / 2;
            }
            heap[k] = u;
        }
    }
}

/* The as-late-as-possible topological order into p->alap_node / p->alap_rank: nodes by
 * their longest path to a sink lp (in nodes), longest first (an input's is longer, so
 * the order is topological), ties by index. With seed non-NULL, a random variant drawn
 * from *seed: spread 0, the ties in a random order; spread > 0, the nodes by lp + a
 * uniform draw in [0, spread) as far as the edges allow (Kahn's algorithm, largest
 * first), so nodes of neighbouring lp mix too. -1 when out of memory (the arrays then
 * unchanged). */
int pb_alap_order(xe_pebble *p, uint64_t *seed, double spread)
{
    const xe_graph *g = p->g;
    int n = g->n;
    int *lp = malloc((size_t)(n ? n : 1) * sizeof *lp);
    int *cnt = calloc((size_t)n + 2, sizeof *cnt);
    if (!lp || !cnt) {
        free(lp), free(cnt);
        return -1;
    }
    for (int v = n - 1; v >= 0; v--) { /* users have larger indices */
        int best = -1;
        for (int q = g->succ_off[v]; q < g->succ_off[v + 1]; q++)
            if (lp[g->succ[q]] > best) best = lp[g->succ[q]];
        lp[v] = best + 1;
    }
    if (seed && spread > 0) {
        double *key = malloc((size_t)(n ? n : 1) * sizeof *key);
        int *heap = malloc((size_t)(n ? n : 1) * sizeof *heap);
        int rc = key && heap ? 0 : -1;
        if (!rc) {
            for (int v = 0; v < n; v++) key[v] = lp[v] + spread * (double)(xe_splitmix64(seed) >> 11) * 0x1p-53;
            keyed_topo_order(g, key, cnt, heap, p->alap_node); /* cnt as indeg scratch */
            for (int r = 0; r < n; r++) p->alap_rank[p->alap_node[r]] = r;
        }
        free(key), free(heap), free(lp), free(cnt);
        return rc;
    }
    /* counting sort on lp, descending, stable in v */
    for (int v = 0; v < n; v++) cnt[n - 1 - lp[v] + 1]++;
    for (int k = 1; k <= n; k++) cnt[k] += cnt[k - 1];
    for (int v = 0; v < n; v++) p->alap_node[cnt[n - 1 - lp[v]]++] = v;
    for (int r = 0, r2; seed && r < n; r = r2) { /* Fisher-Yates within each run of equal lp */
        for (r2 = r + 1; r2 < n && lp[p->alap_node[r2]] == lp[p->alap_node[r]]; r2++) {}
        for (int k = r2 - 1; k > r; k--) {
            int j = r + (int)(xe_splitmix64(seed) % (uint64_t)(k - r + 1)), t = p->alap_node[k];
            p->alap_node[k] = p->alap_node[j];
            p->alap_node[j] = t;
        }
    }
    for (int r = 0; r < n; r++) p->alap_rank[p->alap_node[r]] = r;
    free(lp), free(cnt);
    return 0;
}

static uint64_t hash_set(const uint64_t *s, int W)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int w = 0; w < W; w++) {
        h ^= s[w] + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9u;
        h ^= h >> 31;
    }
    return h;
}

/* Slot of set s: where it is, or the empty slot where it would go. */
size_t pb_find_slot(const xe_pebble *p, const uint64_t *s)
{
    size_t mask = p->cap - 1, i = (size_t)hash_set(s, p->W) & mask;
    while (p->yes_at[i] != EMPTY_SLOT && memcmp(p->keys + i * (size_t)p->W, s, (size_t)p->W * sizeof *s) != 0)
        i = (i + 1) & mask;
    return i;
}

static size_t entry_bytes(int W) { return (size_t)W * sizeof(uint64_t) + 2 * sizeof(int64_t) + sizeof(int); }

/* Forgets every answer (the table keeps its size). */
void pb_memo_reset(xe_pebble *p)
{
    for (size_t i = 0; i < p->cap; i++) p->yes_at[i] = EMPTY_SLOT;
    p->used = 0;
    p->full = 0;
}

static int memo_alloc(xe_pebble *p, size_t cap)
{
    p->keys = malloc(cap * (size_t)p->W * sizeof *p->keys);
    p->yes_at = malloc(cap * sizeof *p->yes_at);
    p->no_at = malloc(cap * sizeof *p->no_at);
    p->choice = malloc(cap * sizeof *p->choice);
    if (!p->keys || !p->yes_at || !p->no_at || !p->choice) {
        free(p->keys), free(p->yes_at), free(p->no_at), free(p->choice);
        p->keys = NULL, p->yes_at = p->no_at = NULL, p->choice = NULL;
        return -1;
    }
    p->cap = cap;
    pb_memo_reset(p);
    return 0;
}

/* Doubles the table (rehashing every entry); -1 when the limit or malloc forbids it
 * (the old table stays). */
static int memo_grow(xe_pebble *p)
{
    size_t ncap = p->cap * 2;
    if (ncap * entry_bytes(p->W) > p->max_bytes) return -1;
    xe_pebble old = *p;
    if (memo_alloc(p, ncap)) {
        p->keys = old.keys, p->yes_at = old.yes_at, p->no_at = old.no_at, p->choice = old.choice;
        p->cap = old.cap, p->used = old.used;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++) {
        if (old.yes_at[i] == EMPTY_SLOT) continue;
        const uint64_t *k = old.keys + i * (size_t)p->W;
        size_t j = pb_find_slot(p, k);
        memcpy(p->keys + j * (size_t)p->W, k, (size_t)p->W * sizeof *k);
        p->yes_at[j] = old.yes_at[i];
        p->no_at[j] = old.no_at[i];
        p->choice[j] = old.choice[i];
        p->used++;
    }
    free(old.keys), free(old.yes_at), free(old.no_at), free(old.choice);
    return 0;
}

/* Slot of s, inserted (unknown both ways) if new; SIZE_MAX when the memo is full. */
static size_t memo_slot(xe_pebble *p, const uint64_t *s)
{
    size_t i = pb_find_slot(p, s);
    if (p->yes_at[i] != EMPTY_SLOT) return i;
    if (p->full) return SIZE_MAX;
    if (2 * (p->used + 1) > p->cap) {
        if (memo_grow(p)) {
            p->full = 1;
            return SIZE_MAX;
        }
        i = pb_find_slot(p, s);
    }
    memcpy(p->keys + i * (size_t)p->W, s, (size_t)p->W * sizeof *s);
    p->yes_at[i] = INT64_MAX;
    p->no_at[i] = -1;
    p->choice[i] = -1;
    p->used++;
    return i;
}

xe_pebble *xe_pebble_new(const xe_graph *g, size_t max_bytes)
{
    xe_pebble *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->g = g;
    p->only = p->mode = XE_PEBBLE_ORDER_TURNS;
    p->forced = p->forced_mode = 1;
    p->W = (g->n + 63) / 64;
    if (p->W < 1) p->W = 1;
    p->max_bytes = max_bytes ? max_bytes : (size_t)256 << 20;
    if (p->max_bytes < ((size_t)1 << 20)) p->max_bytes = (size_t)1 << 20;
    p->maxdepth = 4 * g->n + 64;
    p->lv = calloc((size_t)p->maxdepth, sizeof *p->lv);
    p->rk = calloc((size_t)p->maxdepth, sizeof *p->rk);
    p->ch = malloc((size_t)p->maxdepth * sizeof *p->ch);
    p->fo = malloc(((size_t)p->maxdepth + 1) * sizeof *p->fo);
    p->start = malloc((size_t)p->W * sizeof *p->start);
    p->alap_rank = malloc((size_t)(g->n ? g->n : 1) * sizeof *p->alap_rank);
    p->alap_node = malloc((size_t)(g->n ? g->n : 1) * sizeof *p->alap_node);
    size_t cap = 1024;
    while (cap * entry_bytes(p->W) > p->max_bytes) cap /= 2;
    if (!p->lv || !p->rk || !p->ch || !p->fo || !p->start || !p->alap_rank || !p->alap_node ||
        pb_alap_order(p, NULL, 0) || !pb_level(p, 0) ||
        memo_alloc(p, cap)) {
        xe_pebble_free(p);
        return NULL;
    }
    return p;
}

void xe_pebble_set_order(xe_pebble *p, int order)
{
    p->only = p->mode = order == XE_PEBBLE_ORDER_INDEX || order == XE_PEBBLE_ORDER_ALAP ? order : XE_PEBBLE_ORDER_TURNS;
}

void xe_pebble_set_interrupt(xe_pebble *p, const volatile sig_atomic_t *flag) { p->intr = flag; }

void xe_pebble_set_refine(xe_pebble *p, xe_pebble_refine_fn fn, void *ctx)
{
    p->refine = fn;
    p->refine_ctx = ctx;
}

void xe_pebble_set_forced(xe_pebble *p, int on)
{
    p->forced = p->forced_mode = on != 0;
    pb_memo_reset(p); /* the witnesses' steps of the other setting need not be there */
}

void xe_pebble_free(xe_pebble *p)
{
    if (!p) return;
    for (int k = 0; k < p->maxdepth; k++) {
        if (p->lv) free(p->lv[k]);
        if (p->rk) free(p->rk[k]);
    }
    free(p->keys), free(p->yes_at), free(p->no_at), free(p->choice), free(p->lv), free(p->rk), free(p->ch);
    free(p->fo), free(p->fz);
    free(p->alap_rank), free(p->alap_node), free(p->start);
    free(p);
}

int pb_is_empty(const uint64_t *s, int W)
{
    for (int w = 0; w < W; w++)
        if (s[w]) return 0;
    return 1;
}

/* Bytes of inputs of s not in S. */
static int64_t extra_inputs(const xe_graph *g, const uint64_t *S, int s)
{
    int64_t x = 0;
    for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++)
        if (!pb_has(S, g->pred[k])) x += g->nodes[g->pred[k]].mem;
    return x;
}

/* Removes from S, in one descending pass, every member whose inputs are all in S at
 * that moment (a source node has none): such a member s can be computed last at no cost
 * in memory, since pb_reach(S, B) holds exactly when mem(S) <= B and pb_reach(S \ {s}, B) (a
 * schedule reaching S also reaches every subset of it, by freeing; one reaching S \ {s}
 * reaches S by computing s, within mem(S)), so the search takes it without branching
 * (docs/pebble.md, "Forced members"). Removing s can only spoil members it feeds, of
 * higher index, already passed; so the pass ends with none left. The removed members
 * are appended to rec (room for every member of S) in removal order when rec is
 * non-NULL. Returns their bytes. */
int64_t pb_drop_forced(const xe_graph *g, uint64_t *S, int W, int *rec, size_t *nrec)
{
    int64_t freed = 0;
    for (int w = W - 1; w >= 0; w--) {
        for (uint64_t bits = S[w]; bits;) {
            int b = 63 - __builtin_clzll(bits);
            bits &= ~(UINT64_C(1) << b);
            int s = w * 64 + b, k = g->pred_off[s];
            while (k < g->pred_off[s + 1] && pb_has(S, g->pred[k])) k++;
            if (k < g->pred_off[s + 1]) continue;
            pb_del(S, s);
            freed += g->nodes[s].mem;
            if (rec) rec[(*nrec)++] = s;
        }
    }
    return freed;
}

/* pb_reach(lv[depth], B) with its size msize (header comment of pebble.h). lv[depth] loses
 * its forced members here (drop_forced), before the memo sees it. */
xe_pebble_answer pb_reach(xe_pebble *p, int depth, int64_t msize, int64_t B)
{
    const xe_graph *g = p->g;
    const int W = p->W;
    uint64_t *S = p->lv[depth];
    if (msize > B) return XE_PEBBLE_NO;
    if (p->forced) msize -= pb_drop_forced(g, S, W, NULL, NULL);
    if (pb_is_empty(S, W)) return XE_PEBBLE_YES;
    size_t slot = memo_slot(p, S);
    if (slot != SIZE_MAX) {
        if (B >= p->yes_at[slot]) return XE_PEBBLE_YES;
        if (B <= p->no_at[slot]) return XE_PEBBLE_NO;
    }
    if ((++p->expansions & 255) == 0 && (xe_now() > p->deadline || pb_interrupted(p))) p->timed_out = 1;
    uint64_t *N = depth + 1 < p->maxdepth ? pb_level(p, depth + 1) : NULL;
    if (p->timed_out || !N) return XE_PEBBLE_UNKNOWN;
    const uint64_t *M = S; /* the members, in the order's positions */
    if (p->order == 1) {
        uint64_t *A = pb_depth_set(p, p->rk, depth);
        if (!A) return XE_PEBBLE_UNKNOWN;
        memset(A, 0, (size_t)W * sizeof *A);
        for (int w = 0; w < W; w++)
            for (uint64_t bits = S[w]; bits; bits &= bits - 1) pb_add(A, p->alap_rank[w * 64 + __builtin_ctzll(bits)]);
        M = A;
    }
    int unknown = 0;
    /* the latest-computed member, last in the order first: measured on the benchmark
     * graphs, this finds schedules at tight budgets far sooner than trying the member
     * that leaves the smallest set first (Sethi-Ullman's rule), and a path that always
     * takes the last has at most n steps */
    for (int w = W - 1; w >= 0; w--) {
        for (uint64_t bits = M[w]; bits;) {
            int b = 63 - __builtin_clzll(bits);
            bits &= ~(UINT64_C(1) << b);
            int s = p->order == 1 ? p->alap_node[w * 64 + b] : w * 64 + b;
            int64_t extra = extra_inputs(g, S, s);
            if (msize + extra > B) continue; /* s's compute does not fit */
            memcpy(N, S, (size_t)W * sizeof *N);
            pb_del(N, s);
            for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++) pb_add(N, g->pred[k]);
            xe_pebble_answer a = pb_reach(p, depth + 1, msize - g->nodes[s].mem + extra, B);
            if (a == XE_PEBBLE_YES) {
                /* the recursion may have grown the memo: find S's slot again */
                slot = memo_slot(p, S);
                if (slot != SIZE_MAX && B < p->yes_at[slot]) {
                    p->yes_at[slot] = B;
                    p->choice[slot] = s;
                }
                return XE_PEBBLE_YES;
            }
            if (a == XE_PEBBLE_UNKNOWN) {
                unknown = 1;
                if (p->timed_out) return XE_PEBBLE_UNKNOWN;
            }
        }
    }
    if (unknown) return XE_PEBBLE_UNKNOWN;
    slot = memo_slot(p, S);
    if (slot != SIZE_MAX && B > p->no_at[slot]) p->no_at[slot] = B;
    return XE_PEBBLE_NO;
}

/* First slice of the orders' alternation, seconds (doubled after each round). */
#define XE_PEBBLE_SLICE0 0.005

/* pb_reach(p->start, budget) at recursion depth k (lv[k] gets a copy of p->start each
 * round; msize = its bytes) with the two member orders in turn, each for a slice that
 * doubles every round (the memo's answers hold for any order, so each search starts
 * from all the others proved): which order answers sooner depends on the graph and
 * budget, by factors of 100 and more either way, so the turns cost at most about 4
 * times the better order's time instead of hanging on the worse one. With p->only set,
 * that order alone until the deadline. */
xe_pebble_answer pb_reach_in_turns(xe_pebble *p, int k, int64_t msize, int64_t budget, double deadline)
{
    double slice = XE_PEBBLE_SLICE0;
    for (;;) {
        for (int o = 0; o < 2; o++) {
            if (p->only >= 0 && o != p->only) continue;
            double now = xe_now();
            p->order = o;
            p->deadline = p->only >= 0 ? deadline : fmin(deadline, now + slice); /* one order: no turns */
            p->timed_out = 0;
            memcpy(p->lv[k], p->start, (size_t)p->W * sizeof *p->start);
            xe_pebble_answer a = pb_reach(p, k, msize, budget);
            if (a != XE_PEBBLE_UNKNOWN || p->deadline >= deadline) return a;
            if (!p->timed_out) return a; /* the depth limit or an allocation, not the time: as with one order */
        }
        slice *= 2;
    }
}

xe_pebble_answer xe_pebble_node(xe_pebble *p, int v, int64_t budget, double deadline)
{
    memset(p->start, 0, (size_t)p->W * sizeof *p->start);
    pb_add(p->start, v);
    return pb_reach_in_turns(p, 0, p->g->nodes[v].mem, budget, deadline);
}

xe_pebble_answer xe_pebble_feasible(xe_pebble *p, int64_t budget, double deadline, int *blocker)
{
    int first_unknown = -1;
    for (int v = 0; v < p->g->n; v++) {
        xe_pebble_answer a = xe_pebble_node(p, v, budget, deadline);
        if (a == XE_PEBBLE_NO) {
            if (blocker) *blocker = v;
            return XE_PEBBLE_NO;
        }
        if (a == XE_PEBBLE_UNKNOWN && first_unknown < 0) first_unknown = v;
        if (a == XE_PEBBLE_UNKNOWN && (xe_now() > deadline || pb_interrupted(p))) break; /* the rest would be too */
    }
    if (blocker) *blocker = first_unknown;
    return first_unknown < 0 ? XE_PEBBLE_YES : XE_PEBBLE_UNKNOWN;
}

int xe_pebble_min_budget(xe_pebble *p, int64_t lower0, int64_t upper0, double deadline, int64_t *lower,
                         int64_t *upper, int *exact, int *blocker, xe_err *err)
{
    *lower = lower0 > 0 ? lower0 : 0;
    *upper = upper0;
    *exact = 0;
    if (blocker) *blocker = -1;
    if (lower0 > upper0)
        return xe_err_set(err, XE_EINVAL, "minimum budget: lower bound %lld above the upper bound %lld",
                          (long long)lower0, (long long)upper0);
    /* Bisection on the budget. A yes (a schedule exists) lowers hi; a no (some node cannot
     * be computed) is a proof and raises the proven lower bound; an unknown (the probe's
     * share of the time ran out) moves only the bisection's own lo, so that hi still
     * comes down from cheap yes answers. Each probe gets an eighth of the time left.
     * Where unknowns ended a round with time left, the next round bisects again between
     * the proven bound and hi, its probes with twice the share (a quarter, then half,
     * then all of what is left), the memo keeping what the earlier probes proved:
     * random_layered_n250 one GPU, 7 s: 62.47% of the peak instead of the one round's
     * 67.86%. */
    int64_t proven = *lower, lo = *lower, hi = upper0;
    /* is lower0 itself enough? */
    if (lo == hi) {
        *exact = 1;
        return XE_OK;
    }
    if (proven > 0) proven--;
    int arg = -1;
    lo = *lower - 1; /* the bisection asks (lo, hi]; lo is "not shown to admit a schedule" */
    for (double share = 0.125;; share = fmin(1.0, 2 * share), lo = proven) {
        int unknown = 0;
        while (hi - lo > 1) {
            double now = xe_now();
            if (now >= deadline) break;
            int64_t mid = lo + (hi - lo) / 2;
            int blk = -1;
            xe_pebble_answer a = xe_pebble_feasible(p, mid, now + (deadline - now) * share, &blk);
            if (a == XE_PEBBLE_YES) {
                hi = mid;
            } else {
                lo = mid;
                unknown |= a == XE_PEBBLE_UNKNOWN;
                if (a == XE_PEBBLE_NO && mid > proven) {
                    proven = mid;
                    arg = blk;
                }
            }
        }
        if (!unknown || hi - proven <= 1 || xe_now() >= deadline || share >= 1.0) break;
    }
    *lower = proven + 1;
    *upper = hi;
    if (*lower > *upper) *lower = *upper;
    if (*lower == *upper) {
        *exact = 1;
        if (blocker) *blocker = arg;
    }
    return XE_OK;
}
