/* Event-list brute force: exact optimum over every valid event list of
 * ../shared/PROBLEM.md, written from that text alone.
 *
 * Dijkstra over states (computed-at-least-once mask, resident mask per device). Moves:
 *   compute v on d  d can run v, every input of v resident on d, v not resident on d (a
 *                   recompute of a resident tensor changes nothing), and the bytes
 *                   resident on d plus mem[v] (inputs and output together while v runs)
 *                   at most budget[d]; cost[v][d] seconds;
 *   copy v d -> e   v resident on d and not on e, e's resident bytes + mem[v] at most
 *                   budget[e]; copy[v][d][e] seconds;
 *   free v on d     v resident on d; 0 seconds.
 * Goal: every node computed at least once. State bits: computed mask in bits 0..n-1,
 * then device d's resident mask in bits (d + 1) * n ... */
#include "brute/brute.h"

#include <math.h>
#include <stdlib.h>

#define EV_MAX_BITS 20

typedef struct ev_node {
    double cost;
    uint32_t parent;
    uint8_t kind, node, dev, dst; /* the event that reached this state */
    uint8_t done;
} ev_node;

typedef struct ev_heap {
    double *key;
    uint32_t *val;
    size_t len, cap;
} ev_heap;

static int heap_push(ev_heap *h, double key, uint32_t val)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        double *k = realloc(h->key, cap * sizeof *k);
        if (!k) return XE_ENOMEM;
        h->key = k;
        uint32_t *v = realloc(h->val, cap * sizeof *v);
        if (!v) return XE_ENOMEM;
        h->val = v;
        h->cap = cap;
    }
    size_t i = h->len++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h->key[p] <= key) break;
        h->key[i] = h->key[p];
        h->val[i] = h->val[p];
        i = p;
    }
    h->key[i] = key;
    h->val[i] = val;
    return XE_OK;
}

static void heap_pop(ev_heap *h, double *key, uint32_t *val)
{
    *key = h->key[0];
    *val = h->val[0];
    double lk = h->key[--h->len];
    uint32_t lv = h->val[h->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        double mk = lk;
        if (l < h->len && h->key[l] < mk) {
            m = l;
            mk = h->key[l];
        }
        if (r < h->len && h->key[r] < mk) m = r;
        if (m == i) break;
        h->key[i] = h->key[m];
        h->val[i] = h->val[m];
        i = m;
    }
    if (h->len > 0) {
        h->key[i] = lk;
        h->val[i] = lv;
    }
}

typedef struct ev_ctx {
    const xe_instance *in;
    int n, D;
    uint32_t nmask;
    int64_t memsum[1u << XE_BF_MAX_N];
    uint32_t deps[XE_BF_MAX_N];
    ev_node *st;
    ev_heap heap;
} ev_ctx;

static uint32_t res_of(const ev_ctx *c, uint32_t s, int d) { return (s >> ((d + 1) * c->n)) & c->nmask; }

static int relax(ev_ctx *c, uint32_t from, uint32_t to, double cost, int kind, int v, int d,
                 int e)
{
    ev_node *x = &c->st[to];
    if (x->done || cost >= x->cost) return XE_OK;
    x->cost = cost;
    x->parent = from;
    x->kind = (uint8_t)kind;
    x->node = (uint8_t)v;
    x->dev = (uint8_t)d;
    x->dst = (uint8_t)e;
    return heap_push(&c->heap, cost, to);
}

static int emit(ev_ctx *c, uint32_t goal, xe_schedule *out)
{
    int len = 0;
    for (uint32_t s = goal; s != 0; s = c->st[s].parent) len++;
    uint32_t *path = malloc((size_t)(len > 0 ? len : 1) * sizeof *path);
    if (!path) return XE_ENOMEM;
    int i = len;
    for (uint32_t s = goal; s != 0; s = c->st[s].parent) path[--i] = s;
    int rc = XE_OK;
    for (i = 0; i < len && rc == XE_OK; i++) {
        const ev_node *x = &c->st[path[i]];
        rc = xe_schedule_push(out, (xe_event_kind)x->kind, x->node, x->dev,
                              x->kind == XE_EV_COPY ? x->dst : -1);
    }
    free(path);
    return rc;
}

int xe_bf_event_solve(const xe_instance *in, double *cost, xe_schedule *events, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    if (n < 1 || n > XE_BF_MAX_N || D < 1 || D > XE_BF_MAX_DEV || n * (D + 1) > EV_MAX_BITS)
        return xe_err_set(err, XE_EINVAL, "event_bf: instance too large (n=%d, ndev=%d)", n, D);
    ev_ctx *c = calloc(1, sizeof *c);
    if (!c) return xe_err_set(err, XE_ENOMEM, "event_bf: out of memory");
    c->in = in;
    c->n = n;
    c->D = D;
    c->nmask = (1u << n) - 1u;
    for (uint32_t s = 0; s <= c->nmask; s++)
        for (int i = 0; i < n; i++)
            if (s & (1u << i)) c->memsum[s] += g->nodes[i].mem;
    for (int v = 0; v < n; v++)
        for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) c->deps[v] |= 1u << g->pred[p];
    size_t nstates = (size_t)1 << (n * (D + 1));
    c->st = malloc(nstates * sizeof *c->st);
    if (!c->st) {
        free(c);
        return xe_err_set(err, XE_ENOMEM, "event_bf: out of memory");
    }
    for (size_t s = 0; s < nstates; s++) {
        c->st[s].cost = INFINITY;
        c->st[s].done = 0;
        c->st[s].parent = 0;
    }
    int rc = XE_OK;
    c->st[0].cost = 0.0;
    rc = heap_push(&c->heap, 0.0, 0);
    uint32_t goal = 0;
    int found = 0;
    while (rc == XE_OK && c->heap.len > 0) {
        double k;
        uint32_t s;
        heap_pop(&c->heap, &k, &s);
        ev_node *x = &c->st[s];
        if (x->done || k > x->cost) continue;
        x->done = 1;
        if ((s & c->nmask) == c->nmask) {
            goal = s;
            found = 1;
            break;
        }
        for (int d = 0; d < D && rc == XE_OK; d++) {
            uint32_t res = res_of(c, s, d);
            int64_t used = c->memsum[res];
            int sh = (d + 1) * n;
            for (int v = 0; v < n && rc == XE_OK; v++) {
                uint32_t vb = 1u << v;
                if (res & vb) {
                    /* free v on d */
                    rc = relax(c, s, s & ~(vb << sh), k, XE_EV_FREE, v, d, -1);
                    /* copy v from d to e */
                    for (int e = 0; e < D && rc == XE_OK; e++) {
                        if (e == d) continue;
                        uint32_t re = res_of(c, s, e);
                        if (re & vb) continue;
                        if (c->memsum[re] + g->nodes[v].mem > in->dev[e].budget) continue;
                        rc = relax(c, s, s | (vb << ((e + 1) * n)),
                                   k + xe_copy_cost(in, v, d, e), XE_EV_COPY, v, d, e);
                    }
                } else if (xe_can_run(in, v, d) && !(c->deps[v] & ~res) &&
                           used + g->nodes[v].mem <= in->dev[d].budget) {
                    rc = relax(c, s, s | vb | (vb << sh), k + xe_cost(in, v, d),
                               XE_EV_COMPUTE, v, d, -1);
                }
            }
        }
    }
    if (rc != XE_OK) {
        rc = xe_err_set(err, rc, "event_bf: out of memory");
    } else if (!found) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "event_bf: no valid event list fits the budgets");
    } else {
        *cost = c->st[goal].cost;
        if (events) {
            rc = emit(c, goal, events);
            if (rc != XE_OK) xe_err_set(err, rc, "event_bf: out of memory");
        }
    }
    free(c->heap.key);
    free(c->heap.val);
    free(c->st);
    free(c);
    return rc;
}
