/* The search bound (include/xengine/solvers.h, xe_bound_search; docs/lns.md, "Bounds"):
 * a lower bound for every event list on one device, from a cheapest-path search over
 * the states of a relaxed pebble game with recomputation costs.
 *
 * A state is (D, P): D the nodes computed at least once (a downset: every input of a
 * node in D is in D), P the pending nodes, computed before but freed while still
 * needed, so to be computed again. A node u of D is needed when it is pending, when a
 * user of u is outside D (rem[u] > 0), or when u is an input of a pending node
 * (pin[u] > 0: its recomputation reads u). The resident bytes of a state are those of
 * the needed nodes that are not pending. Moves:
 *
 *   compute v   v outside D, every input of v resident, resident + mem(v) <= budget;
 *               cost 0 (every node's first compute is in the base cost).
 *   drop u      u needed and resident: u becomes pending, cost c(u) (it must be
 *               computed again). Its inputs that were freed (in D, not needed) become
 *               needed, so resident again, at no cost: a further drop makes any of them
 *               pending, at its own cost.
 *   restore u   u pending, its inputs resident, resident + mem(u) <= budget: u resident
 *               again; cost 0 (its drop paid for it).
 *
 * The bound is the sum of every node's cost plus the cost of the cheapest path from
 * (empty, empty) to D = every node, found by Dijkstra's algorithm (ties: more nodes in D
 * first). Every state popped has the least cost of all states not yet popped, so the
 * cost of the last state popped is a bound on that path at any moment: stopped at its
 * deadline or memory limit the search still returns a bound; reaching the goal, it
 * returns the relaxed game's optimum.
 *
 * Why a bound. Take any valid event list and follow it with D = the nodes computed so
 * far and P = the needed nodes that are not resident. Every first compute is a compute
 * move (its inputs are needed, so resident; its footprint is at most the list's). When
 * the list frees a needed node, that is a drop: the list computes it again before
 * anything reads it, which costs at least c(u). When a drop makes an input q of u needed
 * that the relaxed game had freed, the list either still holds q (the game's state
 * counts it, as the list does from then on) or not (the game drops q right away, paying
 * c(q), which the list pays when it recomputes q for u). Every recomputation of a
 * pending node is a restore move, with at most the list's bytes resident. A
 * recomputation of a node that is not pending (needed by nothing) is not a move. So the
 * relaxed resident bytes never exceed the list's at a compute, and the list maps to a
 * path of the game costing at most its recomputations: the bound holds for the list.
 *
 * Forced computes: a node nothing reads is computed as soon as its inputs are resident
 * and it fits, without branching: moved earlier in a path, it frees the inputs it is the
 * last reader of earlier and holds nothing after, so every state in between has at most
 * the bytes it had and no move needs more, at no more cost. (Forcing every compute that
 * does not raise the resident bytes is not safe: the brute force found a path that frees
 * such a compute's input, dropping it, to make room, cheaper than holding the output.)
 *
 * Drops: a drop of u is branched on only where some compute or restore with its inputs
 * resident does not fit and does not read u. In a cheapest path, a run of drops is
 * followed by a compute or restore m that reads none of them (their readers wait for a
 * restore); a drop before an m that fits without it moves past m (same state after
 * both: a drop enables no compute or restore), so in some cheapest path every drop
 * precedes an m blocked by the budget at that state, which does not read it.
 *
 * test_bounds checks the bound against the brute-force optimum over all event lists
 * (tests/brute/event_bf.c) on random tiny instances, and equality where it is exact. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_DONTFORK, mremap (glibc, Linux) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "mapped.h"

#define BS_NONE UINT32_MAX

/* One heap entry: a stored state and the cost it was pushed with (lazy deletion: an
 * entry whose cost is above the state's stored cost is stale). */
typedef struct bs_item {
    double g;
    int depth;   /* nodes in D: ties go to the deeper state */
    uint32_t id;
} bs_item;

/* A decoded state with the counts its moves need. */
typedef struct bs_work {
    char *inD, *inP;
    int *rem;    /* [n] users outside D */
    int *pin;    /* [n] pending users */
    int64_t cur; /* resident bytes */
    int depth;   /* |D| */
} bs_work;

typedef struct bs_ctx {
    const xe_graph *g;
    int n, W;
    int64_t budget;
    const double *c;
    size_t max_bytes, bytes;
    /* stored states: keys [cap][2W] (D words, then P words), best cost [cap] */
    uint64_t *keys;
    double *gbest;
    uint32_t *parent; /* [cap] the state its cheapest known path comes from (BS_NONE: the start) */
    size_t keys_bytes, gbest_bytes, parent_bytes; /* their mappings' sizes */
    uint32_t goal;    /* the goal state once reached, else BS_NONE */
    uint32_t nstates, cap;  /* stored, room for */
    /* hash slots, hcap a power of two: 0 empty, else the state's id + 1 in the low 32
     * bits and the high 32 bits of its hash above (compared before its key is read) */
    uint64_t *slot;
    size_t hcap;
    /* binary heap */
    bs_item *heap;
    size_t hn, heapcap;
    uint64_t *key; /* [2W] scratch */
    int *reads;    /* [n] scratch: bs_blocked's counts */
    int full;    /* memory limit reached: nothing more can be stored */
} bs_ctx;

/* The large arrays (states, hash, heap) are mapped, not allocated (src/solvers/mapped.h).
 * The hash of a key (xe_hash_words): its high 32 bits are stored in the key's slot and
 * pick the slot (their low bits), so that the table grows without reading a key again. */
/* Room for `extra` more bytes under the limit. */
static int bs_room(bs_ctx *x, size_t extra)
{
    return x->bytes + extra <= x->max_bytes;
}

static int bs_grow_states(bs_ctx *x)
{
    uint32_t ncap = x->cap * 2;
    if (ncap < x->cap || ncap > UINT32_MAX / 2) return -1;
    size_t kb = (size_t)(2 * x->W) * sizeof *x->keys, per = kb + sizeof *x->gbest + sizeof *x->parent;
    if (!bs_room(x, (size_t)x->cap * per)) return -1;
    /* each mapping keeps its own size: if the second cannot grow, the first stays
     * larger than cap states need, and is unmapped at its size */
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

static int bs_push(bs_ctx *x, bs_item it)
{
    if (x->hn == x->heapcap) {
        size_t extra = x->heapcap * sizeof(bs_item);
        if (!bs_room(x, extra)) return -1;
        bs_item *nh = xe_remap(x->heap, x->heapcap * sizeof *nh, 2 * x->heapcap * sizeof *nh);
        if (!nh) return -1;
        x->heap = nh;
        x->heapcap *= 2;
        x->bytes += extra;
    }
    size_t i = x->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        const bs_item *q = &x->heap[p];
        if (q->g < it.g || (q->g == it.g && q->depth >= it.depth)) break;
        x->heap[i] = *q;
        i = p;
    }
    x->heap[i] = it;
    return 0;
}

static bs_item bs_pop(bs_ctx *x)
{
    bs_item top = x->heap[0], last = x->heap[--x->hn];
    size_t i = 0;
    for (;;) {
        size_t a = 2 * i + 1, b = a + 1, m = i;
        const bs_item *best = &last;
        if (a < x->hn && (x->heap[a].g < best->g || (x->heap[a].g == best->g && x->heap[a].depth > best->depth))) {
            m = a;
            best = &x->heap[a];
        }
        if (b < x->hn && (x->heap[b].g < best->g || (x->heap[b].g == best->g && x->heap[b].depth > best->depth)))
            m = b;
        if (m == i) break;
        x->heap[i] = x->heap[m];
        i = m;
    }
    x->heap[i] = last;
    return top;
}

/* Encodes w into x->key. */
static void bs_encode_into(const bs_ctx *x, const bs_work *w, uint64_t *key)
{
    memset(key, 0, sizeof *key * (size_t)(2 * x->W));
    for (int v = 0; v < x->n; v++) {
        if (w->inD[v]) key[v >> 6] |= 1ULL << (v & 63);
        if (w->inP[v]) key[x->W + (v >> 6)] |= 1ULL << (v & 63);
    }
}

static void bs_encode(bs_ctx *x, const bs_work *w)
{
    bs_encode_into(x, w, x->key);
}

/* u in D, not pending: is it resident (needed)? */
static int bs_needed(const bs_work *w, int u)
{
    return w->rem[u] > 0 || w->pin[u] > 0;
}

/* Stores w reached at cost g from state `from` (BS_NONE: the start), pushing it when new
 * or cheaper than before. 0 on success (also when not better), -1 when the memory limit
 * stops it. */
static int bs_add(bs_ctx *x, const bs_work *w, double g, uint32_t from)
{
    int words = 2 * x->W;
    bs_encode(x, w);
    uint64_t hv = xe_hash_words(x->key, words), tag = hv & 0xffffffff00000000ULL;
    size_t j = xe_slot_home(tag, x->hcap);
    for (uint64_t e; (e = x->slot[j]) != 0; j = (j + 1) & (x->hcap - 1)) {
        uint32_t id = (uint32_t)e;
        if ((e & 0xffffffff00000000ULL) != tag) continue;
        if (!memcmp(x->keys + (size_t)(id - 1) * (size_t)words, x->key, sizeof *x->key * (size_t)words)) {
            if (g >= x->gbest[id - 1]) return 0;
            x->gbest[id - 1] = g;
            x->parent[id - 1] = from;
            return bs_push(x, (bs_item){g, w->depth, id - 1});
        }
    }
    if (x->nstates == x->cap && bs_grow_states(x)) return -1;
    uint32_t id = x->nstates++;
    memcpy(x->keys + (size_t)id * (size_t)words, x->key, sizeof *x->key * (size_t)words);
    x->gbest[id] = g;
    x->parent[id] = from;
    x->slot[j] = tag | (uint64_t)(id + 1);
    if (bs_push(x, (bs_item){g, w->depth, id})) return -1;
    if ((size_t)x->nstates * 2 > x->hcap && xe_slots_grow(&x->slot, &x->hcap, &x->bytes, x->max_bytes)) return -1;
    return 0;
}

/* Decodes stored state id into w, with its counts. */
static void bs_decode(const bs_ctx *x, uint32_t id, bs_work *w)
{
    const xe_graph *g = x->g;
    const uint64_t *k = x->keys + (size_t)id * (size_t)(2 * x->W);
    w->depth = 0;
    for (int v = 0; v < x->n; v++) {
        w->inD[v] = (char)((k[v >> 6] >> (v & 63)) & 1);
        w->inP[v] = (char)((k[x->W + (v >> 6)] >> (v & 63)) & 1);
        w->depth += w->inD[v];
        w->rem[v] = w->pin[v] = 0;
    }
    for (int v = 0; v < x->n; v++)
        for (int e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            int u = g->pred[e];
            if (!w->inD[v]) w->rem[u]++;
            if (w->inP[v]) w->pin[u]++;
        }
    w->cur = 0;
    for (int u = 0; u < x->n; u++)
        if (w->inD[u] && !w->inP[u] && (w->rem[u] > 0 || w->pin[u] > 0)) w->cur += g->nodes[u].mem;
}

static void bs_copy(const bs_ctx *x, bs_work *dst, const bs_work *src)
{
    memcpy(dst->inD, src->inD, (size_t)x->n);
    memcpy(dst->inP, src->inP, (size_t)x->n);
    memcpy(dst->rem, src->rem, sizeof *dst->rem * (size_t)x->n);
    memcpy(dst->pin, src->pin, sizeof *dst->pin * (size_t)x->n);
    dst->cur = src->cur;
    dst->depth = src->depth;
}

/* Can v be computed first: outside D, every input resident, and it fits. */
static int bs_ready(const bs_ctx *x, const bs_work *w, int v)
{
    const xe_graph *g = x->g;
    if (w->inD[v] || w->cur + g->nodes[v].mem > x->budget) return 0;
    for (int e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        if (!w->inD[g->pred[e]] || w->inP[g->pred[e]]) return 0;
    return 1;
}

/* Resident bytes v's compute adds (bs_ready(v) holds). */
static int64_t bs_delta(const bs_ctx *x, const bs_work *w, int v)
{
    const xe_graph *g = x->g;
    int64_t d = g->succ_off[v + 1] > g->succ_off[v] ? g->nodes[v].mem : 0;
    for (int e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        int u = g->pred[e];
        if (w->rem[u] == 1 && w->pin[u] == 0) d -= g->nodes[u].mem;
    }
    return d;
}

static void bs_compute(const bs_ctx *x, bs_work *w, int v)
{
    const xe_graph *g = x->g;
    w->cur += bs_delta(x, w, v);
    w->inD[v] = 1;
    w->depth++;
    for (int e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) w->rem[g->pred[e]]--;
}

/* Drops u (needed, resident); returns its cost. Its inputs that were freed (in D, not
 * needed) become needed, so resident, at no cost (file comment, "Why a bound"). */
static double bs_drop(const bs_ctx *x, bs_work *w, int u)
{
    const xe_graph *g = x->g;
    w->inP[u] = 1;
    w->cur -= g->nodes[u].mem;
    for (int e = g->pred_off[u]; e < g->pred_off[u + 1]; e++) {
        int q = g->pred[e];
        if (!w->inP[q] && !bs_needed(w, q)) w->cur += g->nodes[q].mem;
        w->pin[q]++;
    }
    return x->c[u];
}

/* Can pending u be restored: its inputs resident and it fits. */
static int bs_restorable(const bs_ctx *x, const bs_work *w, int u)
{
    const xe_graph *g = x->g;
    if (!w->inP[u] || w->cur + g->nodes[u].mem > x->budget) return 0;
    for (int e = g->pred_off[u]; e < g->pred_off[u + 1]; e++)
        if (w->inP[g->pred[e]]) return 0;
    return 1;
}

static void bs_restore(const bs_ctx *x, bs_work *w, int u)
{
    const xe_graph *g = x->g;
    w->inP[u] = 0;
    if (bs_needed(w, u)) w->cur += g->nodes[u].mem;
    for (int e = g->pred_off[u]; e < g->pred_off[u + 1]; e++) {
        int q = g->pred[e];
        w->pin[q]--;
        if (!w->inP[q] && !bs_needed(w, q)) w->cur -= g->nodes[q].mem;
    }
}

/* The forced computes (file comment): every node nothing reads, once it can be
 * computed, until none is left. */
static void bs_forced_rec(const bs_ctx *x, bs_work *w, int *order, int *k)
{
    const xe_graph *g = x->g;
    for (int any = 1; any;) {
        any = 0;
        for (int v = 0; v < x->n; v++)
            if (g->succ_off[v + 1] == g->succ_off[v] && bs_ready(x, w, v)) {
                bs_compute(x, w, v);
                if (order) order[(*k)++] = v;
                any = 1;
            }
    }
}

static void bs_forced(const bs_ctx *x, bs_work *w)
{
    bs_forced_rec(x, w, NULL, NULL);
}

/* The start state into w: nothing computed, every user outside D; then its forced
 * computes (appended to order[*k] when order is not NULL). */
static void bs_start(const bs_ctx *x, bs_work *w, int *order, int *k)
{
    for (int v = 0; v < x->n; v++) {
        w->inD[v] = w->inP[v] = 0;
        w->pin[v] = 0;
        w->rem[v] = x->g->succ_off[v + 1] - x->g->succ_off[v];
    }
    w->cur = 0;
    w->depth = 0;
    bs_forced_rec(x, w, order, k);
}

/* The moves blocked by the budget alone: computes and restores whose inputs are all
 * resident but that do not fit. Returns how many; reads[u] (zeroed here) = how many of
 * them read u. A drop of u is branched on only when some blocked move does not read u
 * (file comment, "Drops"). */
static int bs_blocked(const bs_ctx *x, const bs_work *w, int *reads)
{
    const xe_graph *g = x->g;
    int nb = 0;
    for (int v = 0; v < x->n; v++) reads[v] = 0;
    for (int v = 0; v < x->n; v++) {
        if (w->inD[v] ? !w->inP[v] : 0) continue;
        if (w->cur + g->nodes[v].mem <= x->budget) continue;
        int ok = 1;
        for (int e = g->pred_off[v]; e < g->pred_off[v + 1] && ok; e++)
            ok = w->inD[g->pred[e]] && !w->inP[g->pred[e]];
        if (!ok) continue;
        nb++;
        for (int e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) reads[g->pred[e]]++;
    }
    return nb;
}

static int bs_work_alloc(bs_work *w, int n)
{
    w->inD = calloc((size_t)n, 1);
    w->inP = calloc((size_t)n, 1);
    w->rem = calloc((size_t)n, sizeof *w->rem);
    w->pin = calloc((size_t)n, sizeof *w->pin);
    return w->inD && w->inP && w->rem && w->pin ? 0 : -1;
}

static void bs_work_free(bs_work *w)
{
    free(w->inD);
    free(w->inP);
    free(w->rem);
    free(w->pin);
}

/* The search from x's empty state; *extra = the bound on the recomputation cost. Returns
 * 1 when the goal was reached (exact), 0 when stopped (deadline, interrupt, memory), -1
 * when no path exists (no schedule fits). */
static int bs_run(bs_ctx *x, bs_work *base, bs_work *next, double deadline, const volatile sig_atomic_t *intr,
                  double *extra, long *expanded)
{
    int res = 0;
    *extra = 0.0;
    bs_start(x, base, NULL, NULL);
    if (bs_add(x, base, 0.0, BS_NONE)) return 0;
    res = -1;
    while (x->hn > 0) {
        bs_item it = bs_pop(x);
        if (it.g > x->gbest[it.id]) continue; /* stale */
        *extra = it.g; /* every open state's cost is at least this: a bound */
        /* the flag at every state (the planner waits for it), the clock every 256 */
        if ((intr && *intr) || ((*expanded)++ % 256 == 0 && deadline > 0 && xe_now() >= deadline)) {
            res = 0;
            break;
        }
        bs_decode(x, it.id, base);
        if (base->depth == x->n) {
            x->goal = it.id;
            res = 1;
            break;
        }
        int stop = 0, nb = bs_blocked(x, base, x->reads);
        for (int v = 0; v < x->n && !stop; v++) {
            if (bs_ready(x, base, v)) {
                bs_copy(x, next, base);
                bs_compute(x, next, v);
                bs_forced(x, next);
                stop = bs_add(x, next, it.g, it.id);
            }
            if (!stop && x->reads[v] < nb && base->inD[v] && !base->inP[v] && bs_needed(base, v)) {
                bs_copy(x, next, base);
                double c = bs_drop(x, next, v);
                bs_forced(x, next);
                stop = bs_add(x, next, it.g + c, it.id);
            }
            if (!stop && bs_restorable(x, base, v)) {
                bs_copy(x, next, base);
                bs_restore(x, next, v);
                bs_forced(x, next);
                stop = bs_add(x, next, it.g, it.id);
            }
        }
        if (stop) { /* memory limit: the popped cost is still a bound */
            x->full = 1;
            res = 0;
            break;
        }
    }
    return res;
}

struct xe_bsearch {
    bs_ctx x;
    double *c;           /* [n] cost on the device, seconds */
    bs_work base, next;  /* bs_run's work states */
    double once;         /* xe_bound_cheapest */
};

void xe_bsearch_free(xe_bsearch *s)
{
    if (!s) return;
    bs_ctx *x = &s->x;
    free(s->c);
    xe_unmap(x->keys, x->keys_bytes);
    xe_unmap(x->gbest, x->gbest_bytes);
    xe_unmap(x->parent, x->parent_bytes);
    xe_unmap(x->slot, x->hcap * sizeof *x->slot);
    xe_unmap(x->heap, x->heapcap * sizeof *x->heap);
    free(x->key);
    free(x->reads);
    bs_work_free(&s->base);
    bs_work_free(&s->next);
    free(s);
}

xe_bsearch *xe_bsearch_new(const xe_instance *in, size_t max_bytes)
{
    int n = in->g->n;
    double once = xe_bound_cheapest(in);
    if (in->ndev != 1 || !isfinite(once) || n < 1 || n > XE_BOUND_SEARCH_MAX_NODES) return NULL;
    xe_bsearch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->once = once;
    bs_ctx *x = &s->x;
    *x = (bs_ctx){.g = in->g, .n = n, .W = (n + 63) / 64, .budget = in->dev[0].budget,
                  .max_bytes = max_bytes ? max_bytes : (size_t)256 << 20};
    x->cap = 1024;
    x->hcap = 4096;
    x->heapcap = 1024;
    x->keys_bytes = (size_t)x->cap * (size_t)(2 * x->W) * sizeof *x->keys;
    x->gbest_bytes = (size_t)x->cap * sizeof *x->gbest;
    x->parent_bytes = (size_t)x->cap * sizeof *x->parent;
    x->goal = BS_NONE;
    x->keys = xe_map(x->keys_bytes);
    x->gbest = xe_map(x->gbest_bytes);
    x->parent = xe_map(x->parent_bytes);
    x->slot = xe_map(x->hcap * sizeof *x->slot);
    x->heap = xe_map(x->heapcap * sizeof *x->heap);
    x->key = malloc(sizeof *x->key * (size_t)(2 * x->W));
    x->reads = malloc(sizeof *x->reads * (size_t)n);
    s->c = malloc(sizeof *s->c * (size_t)n);
    x->bytes = (size_t)x->cap * ((size_t)(2 * x->W) * sizeof(uint64_t) + sizeof(double) + sizeof(uint32_t)) +
               x->hcap * sizeof(uint64_t) + x->heapcap * sizeof(bs_item);
    if (!x->keys || !x->gbest || !x->parent || !x->slot || !x->heap || !x->key || !x->reads || !s->c ||
        bs_work_alloc(&s->base, n) || bs_work_alloc(&s->next, n)) {
        xe_bsearch_free(s);
        return NULL;
    }
    for (int v = 0; v < n; v++) s->c[v] = xe_cost(in, v, 0);
    x->c = s->c;
    return s;
}

double xe_bsearch_run(xe_bsearch *s, double deadline, const volatile sig_atomic_t *intr, xe_bound_search_stats *st)
{
    xe_bound_search_stats dummy;
    if (!st) st = &dummy;
    *st = (xe_bound_search_stats){.bound = s->once, .stop = XE_BOUND_SEARCH_SKIPPED};
    if (s->x.nstates > 0) return s->once; /* searched already: runs once */
    double t0 = xe_now(), extra = 0.0, bound;
    int r = bs_run(&s->x, &s->base, &s->next, deadline, intr, &extra, &st->expanded);
    st->states = s->x.nstates;
    if (r < 0) {
        bound = INFINITY; /* the relaxation has no path: no schedule fits */
        st->exact = 1;
        st->stop = XE_BOUND_SEARCH_EXACT;
    } else {
        bound = s->once + extra; /* at worst every node once: still a bound */
        st->exact = r == 1;
        st->stop = r == 1 ? XE_BOUND_SEARCH_EXACT : s->x.full ? XE_BOUND_SEARCH_MEMORY : XE_BOUND_SEARCH_STOPPED;
    }
    st->bound = bound;
    st->seconds = xe_now() - t0;
    return bound;
}

int xe_bsearch_path(const xe_bsearch *s, int *order, int *drops)
{
    const bs_ctx *x = &s->x;
    const xe_graph *g = x->g;
    if (x->goal == BS_NONE) return XE_EINFEASIBLE;
    int W = x->W, words = 2 * W, k = 0;
    *drops = 0;
    size_t len = 0;
    for (uint32_t id = x->goal; id != BS_NONE; id = x->parent[id]) len++;
    uint32_t *ids = malloc(len * sizeof *ids);
    uint64_t *key = malloc(sizeof *key * (size_t)words);
    bs_work w = {0};
    if (!ids || !key || bs_work_alloc(&w, x->n)) {
        free(ids);
        free(key);
        bs_work_free(&w);
        return XE_ENOMEM;
    }
    size_t i = len;
    for (uint32_t id = x->goal; id != BS_NONE; id = x->parent[id]) ids[--i] = id;
    /* the path replayed move by move, its forced computes in the order bs_forced takes
     * them (a sink that did not fit can fit after another has freed its inputs): the
     * start state's, then each step's move, told by the difference of the two keys */
    bs_start(x, &w, order, &k);
    int ok = 1;
    for (i = 1; i < len && ok; i++) {
        const uint64_t *prev = x->keys + (size_t)ids[i - 1] * (size_t)words;
        const uint64_t *cur = x->keys + (size_t)ids[i] * (size_t)words;
        bs_decode(x, ids[i - 1], &w);
        int moved = 0;
        for (int q = 0; q < W && !moved; q++) {
            uint64_t added = cur[q] & ~prev[q], dropped = cur[W + q] & ~prev[W + q], restored = prev[W + q] & ~cur[W + q];
            for (; added && !moved; added &= added - 1) {
                int v = 64 * q + __builtin_ctzll(added);
                if (g->succ_off[v + 1] == g->succ_off[v]) continue; /* a sink: forced, below */
                bs_compute(x, &w, v);
                order[k++] = v;
                moved = 1;
            }
            if (!moved && dropped) {
                bs_drop(x, &w, 64 * q + __builtin_ctzll(dropped));
                ++*drops;
                moved = 1;
            } else if (!moved && restored) {
                bs_restore(x, &w, 64 * q + __builtin_ctzll(restored));
                moved = 1;
            }
        }
        bs_forced_rec(x, &w, order, &k);
        bs_encode_into(x, &w, key);
        ok = moved && !memcmp(key, cur, sizeof *cur * (size_t)words) && k <= x->n;
    }
    free(ids);
    free(key);
    bs_work_free(&w);
    return ok && k == x->n ? XE_OK : XE_EINVAL; /* every node once: the goal's D */
}

double xe_bound_search(const xe_instance *in, double deadline, size_t max_bytes,
                       const volatile sig_atomic_t *intr, xe_bound_search_stats *st)
{
    xe_bsearch *s = xe_bsearch_new(in, max_bytes);
    if (!s) { /* not searched, or out of memory: every node once, still a bound */
        double once = xe_bound_cheapest(in);
        if (st) *st = (xe_bound_search_stats){.bound = once, .stop = XE_BOUND_SEARCH_SKIPPED};
        return once;
    }
    double b = xe_bsearch_run(s, deadline, intr, st);
    xe_bsearch_free(s);
    return b;
}
