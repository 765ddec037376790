/* The schedules of the exact one-device search (include/xengine/pebble.h,
 * docs/pebble.md, "The schedule"): read back from the search's witnesses, cleaned up
 * (keep instead of recompute, dead computes), dynamic rematerialization with the
 * witnesses as fallback, and xe_pebble_schedule's candidates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stage_mem.h"
#include "pebble_int.h"

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

/* Appends the from-scratch computation of v (pb_reach({v}) by the memo's choices, then free
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
    pb_add(S, v);
    for (;; k++) {
        uint64_t *cur = p->lv[k];
        if (p->fz_cap - nfz < (size_t)n) { /* room for every member of a set */
            size_t c = 2 * p->fz_cap + (size_t)n;
            int *t = realloc(p->fz, c * sizeof *t);
            if (!t) return XE_ENOMEM;
            p->fz = t, p->fz_cap = c;
        }
        p->fo[k] = nfz;
        if (p->forced) pb_drop_forced(g, cur, W, p->fz, &nfz);
        p->fo[k + 1] = nfz;
        if (pb_is_empty(cur, W)) break;
        size_t i = pb_find_slot(p, cur);
        if (k + 1 < p->maxdepth && (p->yes_at[i] == EMPTY_SLOT || p->yes_at[i] > B || p->choice[i] < 0)) {
            /* the memo lost this step (it filled up after the step was proven): search
             * this set again from an empty memo, where it is stored first */
            int64_t m = 0;
            for (int w = 0; w < W; w++)
                for (uint64_t bits = cur[w]; bits; bits &= bits - 1) m += g->nodes[w * 64 + __builtin_ctzll(bits)].mem;
            pb_memo_reset(p);
            memcpy(p->start, cur, (size_t)W * sizeof *cur);
            xe_pebble_answer a = pb_reach_in_turns(p, k, m, B, deadline);
            if (a != XE_PEBBLE_YES) return a == XE_PEBBLE_UNKNOWN && p->timed_out ? XE_ETIMEOUT : XE_EINFEASIBLE;
            i = pb_find_slot(p, cur);
        }
        if (k + 1 >= p->maxdepth || p->yes_at[i] == EMPTY_SLOT || p->yes_at[i] > B || p->choice[i] < 0)
            return XE_EINFEASIBLE;
        uint64_t *nx = pb_level(p, k + 1);
        if (!nx) return XE_ENOMEM;
        int s = p->choice[i];
        ch[k] = s;
        memcpy(nx, cur, (size_t)W * sizeof *nx);
        pb_del(nx, s);
        for (int q = g->pred_off[s]; q < g->pred_off[s + 1]; q++) pb_add(nx, g->pred[q]);
    }
    const int *fz = p->fz;
    for (int j = k; j >= 0 && !rc; j--) {
        int s = j < k ? ch[j] : -1;
        if (s >= 0) { /* an input of s stays when the step's set holds it, forced or not */
            const uint64_t *Sj = p->lv[j];
            rc = xe_schedule_push(out, XE_EV_COMPUTE, s, d, -1);
            for (int q = g->pred_off[s]; q < g->pred_off[s + 1] && !rc; q++)
                if (!pb_has(Sj, g->pred[q]) && !in_list(fz + fo[j], fo[j + 1] - fo[j], g->pred[q]))
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
    if (xe_now() > deadline || pb_interrupted(p) || out->len > XE_PEBBLE_MAX_EVENTS) return XE_ETIMEOUT;
    int rc = emit_node(p, v, wb, d, keep_v, deadline, out);
    if (rc != XE_EINFEASIBLE) return rc;
    pb_memo_reset(p);
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
 * events i .. j-1 plus mem(x) stay within B; in the given order (KEEP_*); stops early
 * (every removal so far keeps the schedule valid) at the deadline or p's interrupt.
 * Returns the number removed or XE_ENOMEM. */
static int keep_instead(const xe_pebble *p, const xe_instance *in, int d, int64_t B, xe_schedule *s, uint8_t *alive,
                        int order, double deadline)
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
        if ((k & 63) == 0 && (xe_now() > deadline || pb_interrupted(p))) break;
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
        if (xe_now() > deadline || pb_interrupted(p) || out->len > XE_PEBBLE_MAX_EVENTS) {
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

/* Drops the events whose alive flag is 0 from s (in order) and sets the flags of the
 * len events left to 1 again when reset (alive holds at least s->len entries). */
static void compact(xe_schedule *s, uint8_t *alive, int reset)
{
    int w = 0;
    for (int e = 0; e < s->len; e++)
        if (alive[e]) s->ev[w++] = s->ev[e];
    s->len = w;
    if (reset) memset(alive, 1, (size_t)w);
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
    /* dead computes first, and the list compacted: they hold memory from their compute to
     * their free, which the keep pass would see as taken (a from-scratch schedule is
     * mostly dead computes: 738,240 events, 2,392 alive after this pass on a generated
     * 1,000-node DAG at 70%); before 2026-12-02 the keep pass ran first, and
     * random_layered_n250 one GPU at 70% gave 166.0 s in 3 s of candidates, now 137.1 s
     * (docs/pebble.md, "The schedule") */
    if (drop_dead(g, out, alive) < 0) {
        free(alive);
        return XE_ENOMEM;
    }
    compact(out, alive, 1);
    for (int round = 0; round < 8; round++) {
        int k = keep_instead(p, in, d, B, out, alive, order, deadline);
        int r = k < 0 ? k : drop_dead(g, out, alive);
        if (k < 0 || r < 0) {
            free(alive);
            return XE_ENOMEM;
        }
        if (k + r == 0 || xe_now() > deadline || pb_interrupted(p)) break;
    }
    compact(out, alive, 0);
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
    pb_memo_reset(p);
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
    double dl = deadline; /* the candidates' deadline: later by the refinements' time */
    int memo_forced = p->forced;
    for (size_t k = 0; k < nfixed + XE_PEBBLE_RANDOM_PASSES && !rc && !stop; k++) {
        int fixed = k < nfixed, po = fixed ? pass_order[k] : 1;
        int unforced_pass = fixed && !pass_forced[k];        /* the pass without forced members */
        int pf = unforced_pass ? 0 : p->forced_mode;         /* set_forced(0): every pass without */
        int64_t wb = fixed ? fp + (int64_t)(tighter[k] * (double)(B - fp)) : B;
        if (k > 0) {
            double now = xe_now();
            if (now > dl || pb_interrupted(p)) break;
            if (wb >= B && po < 0 && fixed && !unforced_pass) continue; /* = the first */
            if (po >= 0 && p->mode != XE_PEBBLE_ORDER_TURNS) continue;  /* a fixed order: no other */
            if (unforced_pass && !p->forced_mode) continue;             /* = the first */
            if (!fixed) { /* ties shuffled and mixed levels in turn (docs/pebble.md) */
                if (pb_alap_order(p, &seed, (k - nfixed) % 2 ? XE_PEBBLE_SPREAD : 0)) break; /* out of memory */
                shuffled = 1;
            }
            pb_memo_reset(p);
            p->only = po >= 0 ? po : p->mode;
            p->forced = memo_forced = pf;
            /* without forced members the search can take far longer (random_layered_n250
             * at 60%: 1.1 s against 0.13 s): also at most a third of the time left, so
             * that the tighter witnesses still get theirs */
            double until = fmin(dl, now + fmax(1.0, 10 * t_search));
            if (unforced_pass) until = fmin(until, now + (dl - now) / 3);
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
            rc = build(p, in, d, wb, B, dtr_mode, order, dl, &cand);
            if (rc == XE_ETIMEOUT) { /* out of time (or too large): no more candidates */
                rc = XE_OK;
                stop = 1;
                break;
            }
            if (rc) break;
            double c = events_cost(in, d, &cand);
            if (p->refine) {
                double tr = xe_now();
                c = p->refine(p->refine_ctx, in, &cand, c);
                if (c < 0) {
                    rc = (int)c;
                    break;
                }
                /* the refinement's time is added to the candidates' deadline, up to
                 * the time the call had: the same candidates are built as without it */
                dl = fmin(dl + (xe_now() - tr), deadline + (deadline - t0));
            }
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
    if (shuffled) pb_alap_order(p, NULL, 0); /* the ALAP order back (should that allocation fail, the
                                          drawn order stays: topological too, same answers) */
    if (memo_forced != p->forced_mode) pb_memo_reset(p); /* its witnesses read back only with the
                                                         setting they were found with */
    xe_schedule_clear(&cand);
    if (rc) {
        xe_schedule_clear(out);
        if (rc != XE_ENOMEM) return xe_err_set(err, rc, "pebbling: a candidate's refinement failed (a bug)");
        return xe_err_set(err, XE_ENOMEM, "pebbling: out of memory building the schedule");
    }
    *answer = have ? XE_PEBBLE_YES : XE_PEBBLE_UNKNOWN;
    if (stats && have) stats->cost = best;
    return XE_OK;
}
