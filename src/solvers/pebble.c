/* Exact feasibility of a budget on one device: the black pebble game with recomputation
 * (include/xengine/pebble.h, docs/pebble.md). Sets of tensors are bitsets of W words;
 * answers are memoised per set as "reachable from yes_at bytes on" and "not reachable at
 * no_at bytes or fewer", so questions at different budgets share their work. */
#include "xengine/pebble.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/timer.h"
#include "rng.h"
#include "stage_mem.h"

#define EMPTY_SLOT INT64_MIN

struct xe_pebble {
    const xe_graph *g;
    int W;             /* 64-bit words per set */
    size_t max_bytes;  /* memo limit */
    /* memo: open addressing, cap a power of two */
    size_t cap, used;
    uint64_t *keys;    /* [cap * W] */
    int64_t *yes_at;   /* [cap]: smallest budget proven reachable, INT64_MAX if none;
                          EMPTY_SLOT marks a free slot */
    int64_t *no_at;    /* [cap]: largest budget proven unreachable, -1 if none */
    int *choice;       /* [cap]: the last-computed tensor of the reachable answer */
    int full;          /* the memo could not grow: new sets are not stored */
    /* search */
    int maxdepth;
    uint64_t **lv;     /* [maxdepth]: the set at each recursion depth, W words each,
                          allocated when first reached */
    int *ch;           /* [maxdepth]: emit_node's chain of choices */
    size_t *fo;        /* [maxdepth + 1]: emit_node's forced members of step k are
                          fz[fo[k] .. fo[k + 1]) */
    int *fz;           /* [fz_cap]: those members, every step's in a row (grown there) */
    size_t fz_cap;
    uint64_t *start;   /* [W]: the set a search in turns starts from, restored each round */
    double deadline;
    long expansions;
    int timed_out;
    const volatile sig_atomic_t *intr; /* xe_pebble_set_interrupt: nonzero acts as the deadline */
    /* member orders (docs/pebble.md, "Two orders"): order 0 tries the highest index
     * first, order 1 the latest position in the as-late-as-possible order (alap_rank,
     * alap_node); the search in progress uses `order` */
    int order;
    int only;          /* -1: the orders in turn (xe_pebble_node); 0 or 1: that one only */
    int mode;          /* xe_pebble_set_order's setting: what `only` returns to */
    int forced;        /* 1: forced members taken without branching (drop_forced); the
                          search and emit_node must agree on it */
    int forced_mode;   /* xe_pebble_set_forced's setting: what `forced` returns to */
    int *alap_rank;    /* [n]: position of v in the ALAP order (a randomised variant of it
                          during xe_pebble_schedule's random passes) */
    int *alap_node;    /* [n]: node at each position */
    uint64_t **rk;     /* [maxdepth]: the set at each depth in ALAP positions, W words,
                          allocated when first needed */
};

/* 1 once the caller's interrupt flag (xe_pebble_set_interrupt) is set. */
static int interrupted(const xe_pebble *p) { return xe_interrupted(p->intr); }

/* Set buffer k (< maxdepth) of sets[] (p->lv or p->rk), W words, allocated when first
 * needed; NULL when out of memory. */
static uint64_t *depth_set(const xe_pebble *p, uint64_t **sets, int k)
{
    if (!sets[k]) sets[k] = malloc((size_t)p->W * sizeof *sets[k]);
    return sets[k];
}

/* The set buffer of recursion depth k. */
static uint64_t *level(xe_pebble *p, int k) { return depth_set(p, p->lv, k); }

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
static int alap_order(xe_pebble *p, uint64_t *seed, double spread)
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
static size_t find_slot(const xe_pebble *p, const uint64_t *s)
{
    size_t mask = p->cap - 1, i = (size_t)hash_set(s, p->W) & mask;
    while (p->yes_at[i] != EMPTY_SLOT && memcmp(p->keys + i * (size_t)p->W, s, (size_t)p->W * sizeof *s) != 0)
        i = (i + 1) & mask;
    return i;
}

static size_t entry_bytes(int W) { return (size_t)W * sizeof(uint64_t) + 2 * sizeof(int64_t) + sizeof(int); }

/* Forgets every answer (the table keeps its size). */
static void memo_reset(xe_pebble *p)
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
    memo_reset(p);
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
        size_t j = find_slot(p, k);
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
    size_t i = find_slot(p, s);
    if (p->yes_at[i] != EMPTY_SLOT) return i;
    if (p->full) return SIZE_MAX;
    if (2 * (p->used + 1) > p->cap) {
        if (memo_grow(p)) {
            p->full = 1;
            return SIZE_MAX;
        }
        i = find_slot(p, s);
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
    if (!p->lv || !p->rk || !p->ch || !p->fo || !p->start || !p->alap_rank || !p->alap_node || alap_order(p, NULL, 0) || !level(p, 0) ||
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

void xe_pebble_set_forced(xe_pebble *p, int on)
{
    p->forced = p->forced_mode = on != 0;
    memo_reset(p); /* the witnesses' steps of the other setting need not be there */
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

static inline int has(const uint64_t *s, int v) { return (int)((s[v >> 6] >> (v & 63)) & 1u); }
static inline void add(uint64_t *s, int v) { s[v >> 6] |= UINT64_C(1) << (v & 63); }
static inline void del(uint64_t *s, int v) { s[v >> 6] &= ~(UINT64_C(1) << (v & 63)); }

static int is_empty(const uint64_t *s, int W)
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
        if (!has(S, g->pred[k])) x += g->nodes[g->pred[k]].mem;
    return x;
}

/* Removes from S, in one descending pass, every member whose inputs are all in S at
 * that moment (a source node has none): such a member s can be computed last at no cost
 * in memory, since reach(S, B) holds exactly when mem(S) <= B and reach(S \ {s}, B) (a
 * schedule reaching S also reaches every subset of it, by freeing; one reaching S \ {s}
 * reaches S by computing s, within mem(S)), so the search takes it without branching
 * (docs/pebble.md, "Forced members"). Removing s can only spoil members it feeds, of
 * higher index, already passed; so the pass ends with none left. The removed members
 * are appended to rec (room for every member of S) in removal order when rec is
 * non-NULL. Returns their bytes. */
static int64_t drop_forced(const xe_graph *g, uint64_t *S, int W, int *rec, size_t *nrec)
{
    int64_t freed = 0;
    for (int w = W - 1; w >= 0; w--) {
        for (uint64_t bits = S[w]; bits;) {
            int b = 63 - __builtin_clzll(bits);
            bits &= ~(UINT64_C(1) << b);
            int s = w * 64 + b, k = g->pred_off[s];
            while (k < g->pred_off[s + 1] && has(S, g->pred[k])) k++;
            if (k < g->pred_off[s + 1]) continue;
            del(S, s);
            freed += g->nodes[s].mem;
            if (rec) rec[(*nrec)++] = s;
        }
    }
    return freed;
}

/* reach(lv[depth], B) with its size msize (header comment of pebble.h). lv[depth] loses
 * its forced members here (drop_forced), before the memo sees it. */
static xe_pebble_answer reach(xe_pebble *p, int depth, int64_t msize, int64_t B)
{
    const xe_graph *g = p->g;
    const int W = p->W;
    uint64_t *S = p->lv[depth];
    if (msize > B) return XE_PEBBLE_NO;
    if (p->forced) msize -= drop_forced(g, S, W, NULL, NULL);
    if (is_empty(S, W)) return XE_PEBBLE_YES;
    size_t slot = memo_slot(p, S);
    if (slot != SIZE_MAX) {
        if (B >= p->yes_at[slot]) return XE_PEBBLE_YES;
        if (B <= p->no_at[slot]) return XE_PEBBLE_NO;
    }
    if ((++p->expansions & 255) == 0 && (xe_now() > p->deadline || interrupted(p))) p->timed_out = 1;
    uint64_t *N = depth + 1 < p->maxdepth ? level(p, depth + 1) : NULL;
    if (p->timed_out || !N) return XE_PEBBLE_UNKNOWN;
    const uint64_t *M = S; /* the members, in the order's positions */
    if (p->order == 1) {
        uint64_t *A = depth_set(p, p->rk, depth);
        if (!A) return XE_PEBBLE_UNKNOWN;
        memset(A, 0, (size_t)W * sizeof *A);
        for (int w = 0; w < W; w++)
            for (uint64_t bits = S[w]; bits; bits &= bits - 1) add(A, p->alap_rank[w * 64 + __builtin_ctzll(bits)]);
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
            del(N, s);
            for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++) add(N, g->pred[k]);
            xe_pebble_answer a = reach(p, depth + 1, msize - g->nodes[s].mem + extra, B);
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

/* Most passes of xe_pebble_schedule with the ALAP order's ties drawn at random. */
#define XE_PEBBLE_RANDOM_PASSES 64
/* Their noise on the longest path to a sink, in nodes, every other pass (the others
 * shuffle ties only): on random_layered_n250 and n100 one GPU at 55-75%, neither kind
 * of pass wins everywhere; a spread of 3 was worse than 1.5 on three of four. */
#define XE_PEBBLE_SPREAD 1.5

/* First slice of the orders' alternation, seconds (doubled after each round). */
#define XE_PEBBLE_SLICE0 0.005

/* reach(p->start, budget) at recursion depth k (lv[k] gets a copy of p->start each
 * round; msize = its bytes) with the two member orders in turn, each for a slice that
 * doubles every round (the memo's answers hold for any order, so each search starts
 * from all the others proved): which order answers sooner depends on the graph and
 * budget, by factors of 100 and more either way, so the turns cost at most about 4
 * times the better order's time instead of hanging on the worse one. With p->only set,
 * that order alone until the deadline. */
static xe_pebble_answer reach_in_turns(xe_pebble *p, int k, int64_t msize, int64_t budget, double deadline)
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
            xe_pebble_answer a = reach(p, k, msize, budget);
            if (a != XE_PEBBLE_UNKNOWN || p->deadline >= deadline) return a;
            if (!p->timed_out) return a; /* the depth limit or an allocation, not the time: as with one order */
        }
        slice *= 2;
    }
}

xe_pebble_answer xe_pebble_node(xe_pebble *p, int v, int64_t budget, double deadline)
{
    memset(p->start, 0, (size_t)p->W * sizeof *p->start);
    add(p->start, v);
    return reach_in_turns(p, 0, p->g->nodes[v].mem, budget, deadline);
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
        if (a == XE_PEBBLE_UNKNOWN && xe_now() > deadline) break;
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

/* ---- the schedule ---------------------------------------------------------------- */

/* Range add, range max over [0, n): the resident bytes after each event. */
typedef struct {
    int n;
    int64_t *mx, *lz; /* [4n]: maximum of a node's range, pending add of the node */
} segtree;

static void seg_build(segtree *t, const int64_t *a, int node, int lo, int hi)
{
    if (lo == hi) {
        t->mx[node] = a[lo];
        return;
    }
    int mid = (lo + hi) / 2;
    seg_build(t, a, 2 * node, lo, mid);
    seg_build(t, a, 2 * node + 1, mid + 1, hi);
    t->mx[node] = t->mx[2 * node] > t->mx[2 * node + 1] ? t->mx[2 * node] : t->mx[2 * node + 1];
}

static int seg_init(segtree *t, const int64_t *a, int n)
{
    t->n = n;
    t->mx = calloc((size_t)4 * (size_t)(n ? n : 1), sizeof *t->mx);
    t->lz = calloc((size_t)4 * (size_t)(n ? n : 1), sizeof *t->lz);
    if (!t->mx || !t->lz) return -1;
    if (n > 0) seg_build(t, a, 1, 0, n - 1);
    return 0;
}

static void seg_free(segtree *t) { free(t->mx), free(t->lz); }

static void seg_add_at(segtree *t, int node, int lo, int hi, int l, int r, int64_t x)
{
    if (r < lo || hi < l) return;
    if (l <= lo && hi <= r) {
        t->mx[node] += x;
        t->lz[node] += x;
        return;
    }
    int mid = (lo + hi) / 2;
    seg_add_at(t, 2 * node, lo, mid, l, r, x);
    seg_add_at(t, 2 * node + 1, mid + 1, hi, l, r, x);
    int64_t m = t->mx[2 * node] > t->mx[2 * node + 1] ? t->mx[2 * node] : t->mx[2 * node + 1];
    t->mx[node] = m + t->lz[node];
}

static int64_t seg_max_at(const segtree *t, int node, int lo, int hi, int l, int r)
{
    if (r < lo || hi < l) return INT64_MIN;
    if (l <= lo && hi <= r) return t->mx[node];
    int mid = (lo + hi) / 2;
    int64_t a = seg_max_at(t, 2 * node, lo, mid, l, r), b = seg_max_at(t, 2 * node + 1, mid + 1, hi, l, r);
    return (a > b ? a : b) + t->lz[node];
}

/* Adds x to every entry of [l, r]; the largest entry of [l, r]. */
static void seg_add(segtree *t, int l, int r, int64_t x) { seg_add_at(t, 1, 0, t->n - 1, l, r, x); }
static int64_t seg_max(const segtree *t, int l, int r) { return seg_max_at(t, 1, 0, t->n - 1, l, r); }

/* 1 when v is among list[0..len). */
static int in_list(const int *list, size_t len, int v)
{
    for (size_t i = 0; i < len; i++)
        if (list[i] == v) return 1;
    return 0;
}

/* Appends the from-scratch computation of v (reach({v}) by the memo's choices, then free
 * v unless keep_v) to out. Each step first takes the set's forced members as the search
 * did (drop_forced: they are computed last, in reverse, with nothing to free; one that
 * is an input of the step's choice is resident already and stays), then the memo's
 * choice for what is left; a step the memo lost (it filled up after proving it) is
 * searched again from an empty memo. Returns XE_OK, XE_ETIMEOUT (that search ran into
 * the deadline), XE_EINFEASIBLE (the depth limit, or no step found), XE_ENOMEM. */
static int emit_node(xe_pebble *p, int v, int64_t B, int d, int keep_v, double deadline, xe_schedule *out)
{
    const xe_graph *g = p->g;
    const int W = p->W, n = g->n;
    int k = 0, *ch = p->ch, rc = XE_OK;
    const size_t *fo = p->fo;
    size_t nfz = 0;
    uint64_t *S = p->lv[0];
    memset(S, 0, (size_t)W * sizeof *S);
    add(S, v);
    for (;; k++) {
        uint64_t *cur = p->lv[k];
        if (p->fz_cap - nfz < (size_t)n) { /* room for every member of a set */
            size_t c = 2 * p->fz_cap + (size_t)n;
            int *t = realloc(p->fz, c * sizeof *t);
            if (!t) return XE_ENOMEM;
            p->fz = t, p->fz_cap = c;
        }
        p->fo[k] = nfz;
        if (p->forced) drop_forced(g, cur, W, p->fz, &nfz);
        p->fo[k + 1] = nfz;
        if (is_empty(cur, W)) break;
        size_t i = find_slot(p, cur);
        if (k + 1 < p->maxdepth && (p->yes_at[i] == EMPTY_SLOT || p->yes_at[i] > B || p->choice[i] < 0)) {
            /* the memo lost this step (it filled up after the step was proven): search
             * this set again from an empty memo, where it is stored first */
            int64_t m = 0;
            for (int w = 0; w < W; w++)
                for (uint64_t bits = cur[w]; bits; bits &= bits - 1) m += g->nodes[w * 64 + __builtin_ctzll(bits)].mem;
            memo_reset(p);
            memcpy(p->start, cur, (size_t)W * sizeof *cur);
            xe_pebble_answer a = reach_in_turns(p, k, m, B, deadline);
            if (a != XE_PEBBLE_YES) return a == XE_PEBBLE_UNKNOWN && p->timed_out ? XE_ETIMEOUT : XE_EINFEASIBLE;
            i = find_slot(p, cur);
        }
        if (k + 1 >= p->maxdepth || p->yes_at[i] == EMPTY_SLOT || p->yes_at[i] > B || p->choice[i] < 0)
            return XE_EINFEASIBLE;
        uint64_t *nx = level(p, k + 1);
        if (!nx) return XE_ENOMEM;
        int s = p->choice[i];
        ch[k] = s;
        memcpy(nx, cur, (size_t)W * sizeof *nx);
        del(nx, s);
        for (int q = g->pred_off[s]; q < g->pred_off[s + 1]; q++) add(nx, g->pred[q]);
    }
    const int *fz = p->fz;
    for (int j = k; j >= 0 && !rc; j--) {
        int s = j < k ? ch[j] : -1;
        if (s >= 0) { /* an input of s stays when the step's set holds it, forced or not */
            const uint64_t *Sj = p->lv[j];
            rc = xe_schedule_push(out, XE_EV_COMPUTE, s, d, -1);
            for (int q = g->pred_off[s]; q < g->pred_off[s + 1] && !rc; q++)
                if (!has(Sj, g->pred[q]) && !in_list(fz + fo[j], fo[j + 1] - fo[j], g->pred[q]))
                    rc = xe_schedule_push(out, XE_EV_FREE, g->pred[q], d, -1);
        }
        for (size_t q = fo[j + 1]; q > fo[j] && !rc; q--) /* forced members not resident already */
            if (s < 0 || !xe_heur_is_input(g, fz[q - 1], s)) rc = xe_schedule_push(out, XE_EV_COMPUTE, fz[q - 1], d, -1);
    }
    if (!rc && !keep_v) rc = xe_schedule_push(out, XE_EV_FREE, v, d, -1);
    return rc;
}

/* Most events a built schedule may have (16 bytes each): beyond, the candidate is given
 * up as if its time were out (n^2/2 events from scratch on a deep graph of thousands of
 * nodes). */
#define XE_PEBBLE_MAX_EVENTS (1 << 25)

/* emit_node, checking the deadline and the size first (XE_ETIMEOUT); where the memo lacks
 * a step of v's witness (it filled up), the memo is cleared and v searched again at wb. */
static int witness(xe_pebble *p, int v, int64_t wb, int d, int keep_v, double deadline, xe_schedule *out)
{
    if (xe_now() > deadline || interrupted(p) || out->len > XE_PEBBLE_MAX_EVENTS) return XE_ETIMEOUT;
    int rc = emit_node(p, v, wb, d, keep_v, deadline, out);
    if (rc != XE_EINFEASIBLE) return rc;
    memo_reset(p);
    xe_pebble_answer a = xe_pebble_node(p, v, wb, deadline);
    if (a != XE_PEBBLE_YES) return XE_ETIMEOUT; /* it was yes: only the time can stop it */
    rc = emit_node(p, v, wb, d, keep_v, deadline, out);
    return rc == XE_EINFEASIBLE ? XE_ETIMEOUT : rc;
}

/* Removes computes whose output nobody reads before it is freed (keeping at least one
 * compute of every node), with their frees; scans backwards so that chains of them go in
 * one pass. Memory only drops. Returns the number removed or XE_ENOMEM. */
static int drop_dead(const xe_graph *g, xe_schedule *s, uint8_t *alive)
{
    int n = g->n, removed = 0;
    uint8_t *live = calloc((size_t)(n ? n : 1), 1);
    int *count = calloc((size_t)(n ? n : 1), sizeof *count);
    int *next_free = malloc((size_t)(n ? n : 1) * sizeof *next_free); /* free after, per node */
    if (!live || !count || !next_free) {
        free(live), free(count), free(next_free);
        return XE_ENOMEM;
    }
    for (int e = 0; e < s->len; e++)
        if (alive[e] && s->ev[e].kind == XE_EV_COMPUTE) count[s->ev[e].node]++;
    for (int v = 0; v < n; v++) next_free[v] = -1;
    for (int e = s->len - 1; e >= 0; e--) {
        if (!alive[e]) continue;
        int z = s->ev[e].node;
        if (s->ev[e].kind == XE_EV_FREE) {
            live[z] = 0;
            next_free[z] = e;
            continue;
        }
        if (!live[z] && count[z] > 1) {
            alive[e] = 0;
            if (next_free[z] >= 0) alive[next_free[z]] = 0;
            next_free[z] = -1;
            count[z]--;
            removed++;
            continue;
        }
        live[z] = 0;
        next_free[z] = -1;
        for (int q = g->pred_off[z]; q < g->pred_off[z + 1]; q++) live[g->pred[q]] = 1;
    }
    free(live), free(count), free(next_free);
    return removed;
}

/* A free of x at event i and its recompute at j, and the key of the keep order. */
typedef struct {
    int i, j;
    double key;
} keep_pair;

/* Which recomputations the keep pass tries first (the largest key first): the dearest
 * (cost), the dearest per byte and event kept (cost / (mem * span)), the dearest per
 * event kept (cost / span). No one order wins on every graph (docs/pebble.md). */
enum { KEEP_COST, KEEP_DENSITY, KEEP_SPAN, KEEP_ORDERS };
#define DTR_MODES 3 /* dtr_evict's scores */

static int cmp_pair(const void *a, const void *b)
{
    const keep_pair *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Keeps tensors instead of recomputing them where the budget allows: for a free of x
 * at i whose next event of x is a recompute at j, both go when the resident bytes over
 * events i .. j-1 plus mem(x) stay within B; in the given order (KEEP_*). Returns the
 * number removed or XE_ENOMEM. */
static int keep_instead(const xe_instance *in, int d, int64_t B, xe_schedule *s, uint8_t *alive, int order,
                        double deadline)
{
    const xe_graph *g = in->g;
    int n = g->n, len = s->len, np = 0, removed = 0;
    int64_t *lvl = malloc((size_t)(len ? len : 1) * sizeof *lvl);
    int *last = malloc((size_t)(n ? n : 1) * sizeof *last);
    keep_pair *pr = malloc((size_t)(len ? len : 1) * sizeof *pr);
    segtree t = {0, NULL, NULL};
    if (!lvl || !last || !pr) goto oom;
    int64_t cur = 0;
    for (int v = 0; v < n; v++) last[v] = -1;
    for (int e = 0; e < len; e++) {
        if (alive[e]) {
            int x = s->ev[e].node;
            cur += s->ev[e].kind == XE_EV_COMPUTE ? g->nodes[x].mem : -g->nodes[x].mem;
            if (s->ev[e].kind == XE_EV_COMPUTE && last[x] >= 0 && s->ev[last[x]].kind == XE_EV_FREE) {
                double c = xe_cost(in, x, d), span = (double)(e - last[x]);
                double m = (double)(g->nodes[x].mem > 0 ? g->nodes[x].mem : 1);
                double key = order == KEEP_COST ? c : order == KEEP_DENSITY ? c / (m * span) : c / span;
                pr[np++] = (keep_pair){last[x], e, key};
            }
            last[x] = e;
        }
        lvl[e] = cur;
    }
    if (seg_init(&t, lvl, len)) goto oom;
    qsort(pr, (size_t)np, sizeof *pr, cmp_pair);
    for (int k = 0; k < np; k++) {
        if ((k & 63) == 0 && xe_now() > deadline) break;
        int i = pr[k].i, j = pr[k].j, x = s->ev[i].node;
        if (!alive[i] || !alive[j]) continue;
        if (seg_max(&t, i, j - 1) + g->nodes[x].mem > B) continue;
        seg_add(&t, i, j - 1, g->nodes[x].mem);
        alive[i] = alive[j] = 0;
        removed++;
    }
    seg_free(&t);
    free(lvl), free(last), free(pr);
    return removed;
oom:
    seg_free(&t);
    free(lvl), free(last), free(pr);
    return XE_ENOMEM;
}

/* ---- dynamic rematerialization with the witnesses as fallback ---------------------- */

/* DTR's state (Kirisame et al., "Dynamic Tensor Rematerialization", ICLR 2021), on one
 * device: what is resident, pins of the inputs of the compute being prepared, the last
 * access of each tensor. */
typedef struct {
    const xe_instance *in;
    int d, mode;
    int64_t B, cur;
    uint8_t *res;
    int *pin;
    double *stamp, clock;
    xe_schedule *out;
} dtr;

/* Frees the resident, unpinned tensor of least h: cost / (mem * staleness) (mode 0, DTR's
 * heuristic), cost / mem (1), cost / (mem * staleness^2) (2). -1 when all are pinned,
 * XE_ENOMEM. */
static int dtr_evict(dtr *t)
{
    const xe_graph *g = t->in->g;
    int best = -1;
    double bh = INFINITY;
    for (int x = 0; x < g->n; x++) {
        if (!t->res[x] || t->pin[x]) continue;
        double c = xe_cost(t->in, x, t->d) + 1e-12, m = (double)(g->nodes[x].mem > 0 ? g->nodes[x].mem : 1);
        double stale = t->clock - t->stamp[x] + 1;
        double h = t->mode == 0 ? c / (m * stale) : t->mode == 1 ? c / m : c / (m * stale * stale);
        if (h < bh) {
            bh = h;
            best = x;
        }
    }
    if (best < 0) return -1;
    t->res[best] = 0;
    t->cur -= g->nodes[best].mem;
    return xe_schedule_push(t->out, XE_EV_FREE, best, t->d, -1);
}

/* Makes u resident: its inputs first (recursively, pinned while u waits), then room by
 * eviction, then compute u. 0, -1 when stuck (everything left is pinned), XE_ENOMEM. */
static int dtr_ensure(dtr *t, int u, int depth)
{
    const xe_graph *g = t->in->g;
    if (t->res[u]) {
        t->stamp[u] = ++t->clock;
        return 0;
    }
    if (depth > g->n) return -1;
    int rc = 0, k;
    for (k = g->pred_off[u]; k < g->pred_off[u + 1] && !rc; k++) {
        rc = dtr_ensure(t, g->pred[k], depth + 1);
        if (!rc) t->pin[g->pred[k]]++;
    }
    if (rc) return rc; /* the caller rolls back, pins included */
    while (!rc && t->cur + g->nodes[u].mem > t->B) rc = dtr_evict(t);
    if (!rc) rc = xe_schedule_push(t->out, XE_EV_COMPUTE, u, t->d, -1);
    if (!rc) {
        t->res[u] = 1;
        t->cur += g->nodes[u].mem;
        t->stamp[u] = ++t->clock;
    }
    for (k = g->pred_off[u]; k < g->pred_off[u + 1]; k++) t->pin[g->pred[k]]--;
    return rc;
}

/* The first-compute order 0..n-1, each node made resident by DTR; where DTR gets stuck,
 * everything resident is freed and the node is computed by its witness at wb (kept
 * resident); after each node, tensors without later readers are freed. Returns XE_OK,
 * XE_ETIMEOUT (deadline or size cap, as witness), XE_ENOMEM. */
static int dtr_pass(xe_pebble *p, const xe_instance *in, int d, int64_t wb, int64_t B, int mode, double deadline,
                    xe_schedule *out)
{
    const xe_graph *g = p->g;
    int n = g->n, rc = XE_OK;
    dtr t = {in, d, mode, B, 0, calloc((size_t)n, 1), calloc((size_t)n, sizeof(int)),
             calloc((size_t)n, sizeof(double)), 0, out};
    uint8_t *res0 = malloc((size_t)n); /* what was resident before v, for the frees */
    int *last = malloc((size_t)n * sizeof *last);
    if (!t.res || !t.pin || !t.stamp || !res0 || !last) rc = XE_ENOMEM;
    for (int v = 0; v < n && !rc; v++) {
        int u = xe_graph_last_use(g, v);
        last[v] = u > v ? u : v;
    }
    for (int v = 0; v < n && !rc; v++) {
        if (xe_now() > deadline || interrupted(p) || out->len > XE_PEBBLE_MAX_EVENTS) {
            rc = XE_ETIMEOUT;
            break;
        }
        int len0 = out->len;
        memcpy(res0, t.res, (size_t)n);
        int r = dtr_ensure(&t, v, 0);
        if (r == XE_ENOMEM) rc = r;
        else if (r) { /* stuck: back to the events before v, everything then resident freed
                       * (so no stamp or clock of before matters: stamps are read only for
                       * resident tensors), then v from scratch */
            out->len = len0;
            memcpy(t.res, res0, (size_t)n);
            memset(t.pin, 0, (size_t)n * sizeof *t.pin);
            for (int x = 0; x < n && !rc; x++)
                if (t.res[x]) {
                    t.res[x] = 0;
                    rc = xe_schedule_push(out, XE_EV_FREE, x, d, -1);
                }
            t.cur = 0;
            if (!rc) rc = witness(p, v, wb, d, 1, deadline, out);
            if (!rc) {
                t.res[v] = 1;
                t.cur = g->nodes[v].mem;
                t.stamp[v] = ++t.clock;
            }
        }
        for (int x = 0; x <= v && !rc; x++)
            if (t.res[x] && last[x] <= v) {
                t.res[x] = 0;
                t.cur -= g->nodes[x].mem;
                rc = xe_schedule_push(out, XE_EV_FREE, x, d, -1);
            }
    }
    free(t.res), free(t.pin), free(t.stamp), free(res0), free(last);
    return rc;
}

/* Builds a schedule into out: from scratch per node by the memo's witnesses at budget wb
 * (dtr_mode < 0), or dtr_pass with that eviction mode; then cleans it up at budget B
 * (>= wb) with the keep pass in the given order and the dead-compute pass. Returns
 * XE_OK, XE_ETIMEOUT (deadline or size cap), XE_ENOMEM. */
static int build(xe_pebble *p, const xe_instance *in, int d, int64_t wb, int64_t B, int dtr_mode, int order,
                 double deadline, xe_schedule *out)
{
    const xe_graph *g = p->g;
    xe_schedule_clear(out);
    int rc = XE_OK;
    if (dtr_mode >= 0) rc = dtr_pass(p, in, d, wb, B, dtr_mode, deadline, out);
    else
        for (int v = 0; v < g->n && !rc; v++) rc = witness(p, v, wb, d, 0, deadline, out);
    if (rc) return rc;
    uint8_t *alive = malloc((size_t)(out->len ? out->len : 1));
    if (!alive) return XE_ENOMEM;
    memset(alive, 1, (size_t)out->len);
    for (int round = 0; round < 8; round++) {
        int k = keep_instead(in, d, B, out, alive, order, deadline);
        int r = k < 0 ? k : drop_dead(g, out, alive);
        if (k < 0 || r < 0) {
            free(alive);
            return XE_ENOMEM;
        }
        if (k + r == 0 || xe_now() > deadline) break;
    }
    int w = 0;
    for (int e = 0; e < out->len; e++)
        if (alive[e]) out->ev[w++] = out->ev[e];
    out->len = w;
    free(alive);
    return XE_OK;
}

static double events_cost(const xe_instance *in, int d, const xe_schedule *s)
{
    double c = 0;
    for (int e = 0; e < s->len; e++)
        if (s->ev[e].kind == XE_EV_COMPUTE) c += xe_cost(in, s->ev[e].node, d);
    return c;
}

int xe_pebble_schedule(xe_pebble *p, const xe_instance *in, int d, double deadline, xe_schedule *out,
                       xe_pebble_answer *answer, int *blocker, xe_pebble_stats *stats, xe_err *err)
{
    const xe_graph *g = p->g;
    xe_schedule_clear(out);
    *answer = XE_PEBBLE_UNKNOWN;
    if (blocker) *blocker = -1;
    if (stats) *stats = (xe_pebble_stats){INFINITY, INFINITY, INFINITY};
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "pebbling: device %d does not exist (instance has %d)", d, in->ndev);
    for (int v = 0; v < g->n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINVAL, "pebbling: %s cannot run node %d (%s)", in->dev[d].name, v,
                              g->nodes[v].name);
    int64_t B = in->dev[d].budget;
    /* start afresh: a full memo may lack the witnesses' steps */
    memo_reset(p);
    double t0 = xe_now();
    xe_pebble_answer a = xe_pebble_feasible(p, B, deadline, blocker);
    if (a != XE_PEBBLE_YES) {
        *answer = a;
        return XE_OK;
    }
    /* Candidates, the cheapest wins: the schedule from scratch by the witnesses found at
     * B, cleaned up at B in each keep order; DTR with those witnesses as its fallback
     * (dtr_pass), in each eviction mode; the witnesses of the ALAP order alone at B
     * (when the orders take turns, which usually answer in the index order); those of a
     * search without forced members; the witnesses found at tighter budgets between the
     * largest footprint and B (each from a fresh memo: another budget's search picks
     * other last-computed members), in each keep order; then, until the deadline, those
     * of randomised ALAP orders at B (XE_PEBBLE_RANDOM_PASSES at most). Which wins varies
     * by graph and budget (docs/pebble.md). A schedule from scratch has up to n^2/2
     * events (XE_PEBBLE_MAX_EVENTS at most); a candidate that runs out of time is
     * dropped, and so are the rest. */
    int64_t fp = xe_instance_min_footprint(g);
    /* witness budgets (fractions of the way from the largest footprint to B), the
     * member order of their search (-1: in turn, as xe_pebble_node) and whether it takes
     * forced members without branching (drop_forced) */
    static const double tighter[] = {1.0, 1.0, 1.0, 0.85, 0.7, 0.5, 0.0};
    static const int pass_order[] = {-1, 1, -1, -1, -1, -1, -1};
    static const int pass_forced[] = {1, 1, 0, 1, 1, 1, 1};
    const size_t nfixed = sizeof tighter / sizeof *tighter;
    xe_schedule cand;
    xe_schedule_init(&cand);
    double best = INFINITY;
    uint64_t seed = 1;
    int rc = XE_OK, have = 0, stop = 0, shuffled = 0;
    /* after the fixed passes, while time is left: the ALAP order with its ties drawn at
     * random (each draw another topological order, so other witnesses) at B */
    /* each later search at most ten times the first's time (at least 1 s), so that a
     * hard budget or order cannot hold the rest up, nor an infinite deadline hang */
    double t_search = xe_now() - t0;
    int memo_forced = p->forced;
    for (size_t k = 0; k < nfixed + XE_PEBBLE_RANDOM_PASSES && !rc && !stop; k++) {
        int fixed = k < nfixed, po = fixed ? pass_order[k] : 1;
        int unforced_pass = fixed && !pass_forced[k];        /* the pass without forced members */
        int pf = unforced_pass ? 0 : p->forced_mode;         /* set_forced(0): every pass without */
        int64_t wb = fixed ? fp + (int64_t)(tighter[k] * (double)(B - fp)) : B;
        if (k > 0) {
            double now = xe_now();
            if (now > deadline || interrupted(p)) break;
            if (wb >= B && po < 0 && fixed && !unforced_pass) continue; /* = the first */
            if (po >= 0 && p->mode != XE_PEBBLE_ORDER_TURNS) continue;  /* a fixed order: no other */
            if (unforced_pass && !p->forced_mode) continue;             /* = the first */
            if (!fixed) { /* ties shuffled and mixed levels in turn (docs/pebble.md) */
                if (alap_order(p, &seed, (k - nfixed) % 2 ? XE_PEBBLE_SPREAD : 0)) break; /* out of memory */
                shuffled = 1;
            }
            memo_reset(p);
            p->only = po >= 0 ? po : p->mode;
            p->forced = memo_forced = pf;
            /* without forced members the search can take far longer (random_layered_n250
             * at 60%: 1.1 s against 0.13 s): also at most a third of the time left, so
             * that the tighter witnesses still get theirs */
            double until = fmin(deadline, now + fmax(1.0, 10 * t_search));
            if (unforced_pass) until = fmin(until, now + (deadline - now) / 3);
            a = xe_pebble_feasible(p, wb, until, NULL);
            if (a != XE_PEBBLE_YES) {
                p->only = p->mode;
                p->forced = p->forced_mode;
                continue;
            }
        }
        /* DTR at B only, and with one keep order: its schedules barely depend on it */
        int ncand = KEEP_ORDERS + (k == 0 ? DTR_MODES : 0);
        for (int cnum = 0; cnum < ncand && !rc && !stop; cnum++) {
            int dtr_mode = cnum < KEEP_ORDERS ? -1 : cnum - KEEP_ORDERS;
            int order = cnum < KEEP_ORDERS ? cnum : KEEP_SPAN;
            rc = build(p, in, d, wb, B, dtr_mode, order, deadline, &cand);
            if (rc == XE_ETIMEOUT) { /* out of time (or too large): no more candidates */
                rc = XE_OK;
                stop = 1;
                break;
            }
            if (rc) break;
            double c = events_cost(in, d, &cand);
            if (!have || c < best) {
                best = c;
                have = 1;
                xe_schedule t = *out;
                *out = cand;
                cand = t;
            }
            if (k + (size_t)cnum == 0 && stats) stats->first_time = xe_now() - t0, stats->first_cost = c;
        }
        p->only = p->mode;
        p->forced = p->forced_mode;
    }
    if (shuffled) alap_order(p, NULL, 0); /* the ALAP order back (should that allocation fail, the
                                          drawn order stays: topological too, same answers) */
    if (memo_forced != p->forced_mode) memo_reset(p); /* its witnesses read back only with the
                                                         setting they were found with */
    xe_schedule_clear(&cand);
    if (rc) {
        xe_schedule_clear(out);
        return xe_err_set(err, XE_ENOMEM, "pebbling: out of memory building the schedule");
    }
    *answer = have ? XE_PEBBLE_YES : XE_PEBBLE_UNKNOWN;
    if (stats && have) stats->cost = best;
    return XE_OK;
}
