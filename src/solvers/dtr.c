/* Dynamic eviction on one device (include/xengine/dtr.h, docs/dtr.md). */
#include "xengine/dtr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/timer.h"

/* Beyond this many computes per node the run is thrashing (on a random 1,000-node DAG at
 * 60% of its peak the index order recomputed without end): it gives up, as soon as the
 * computes pass this many per first compute so far (plus DTR_THRASH_SLACK), not only at
 * the end (a generated 5,000-node DAG at 70% thrashed for 1.2 s before giving up). */
#define DTR_MAX_RECOMPUTE_FACTOR 16
#define DTR_THRASH_SLACK 1024
/* Eviction candidates looked at per eviction, at most: with tens of thousands resident
 * (a 60,000-node chain at 60%), scanning all of them took 2 s. */
#define DTR_SAMPLE 1024
/* Nodes counted at most in the cost of bringing a tensor back (its absent ancestors). */
#define DTR_BACK_NODES 16
/* run()'s own code for that, turned into XE_EINFEASIBLE with its message */
#define DTR_THRASHING 1

/* The state of one run: which tensors are resident, pinned (an input of a compute in
 * progress), still to be read by a first compute, and the stack of computes in progress
 * (a compute whose inputs are being brought back). */
typedef struct {
    const xe_instance *in;
    const xe_graph *g;
    int dev;
    int64_t budget, live; /* bytes */
    char *res;            /* [n] resident on dev */
    int *pin;             /* [n] computes in progress reading it */
    int *pending;         /* [n] users not yet computed for the first time */
    int64_t *last;        /* [n] computes before its last compute or read (its step) */
    int *rl, *rpos, nres; /* resident nodes, and each one's slot in rl (-1: absent) */
    int *garbage, ngarb;  /* tensors nothing will read, freed between first computes */
    char *ingarb;         /* [n] listed in garbage */
    int *fnode, *fbase;   /* the stack: node, and where its pins start in pstack */
    int *pstack;          /* inputs brought back for the computes in progress, pinned */
    int64_t max_now;      /* thrashing: give up beyond it, DTR_MAX_RECOMPUTE_FACTOR per first
                           * compute so far plus DTR_THRASH_SLACK (run() raises it) */
    double deadline;
    double cost;
    int64_t computes;     /* so far: the step, for staleness and sampling */
    int offload;          /* 1: evicted tensors may be parked on the other devices */
    int *dfs;             /* [n] back_cost's stack */
    int64_t *mark, stamp; /* [n] back_cost's visits */
    int *hres;            /* [n] the other device holding a copy of it, -1: none */
    int64_t hlive[XE_MAX_DEV]; /* bytes parked on each device */
    xe_schedule *out;
} dtr_state;

static void res_add(dtr_state *s, int v)
{
    s->res[v] = 1;
    s->rpos[v] = s->nres;
    s->rl[s->nres++] = v;
    s->live += s->g->nodes[v].mem;
}

static int res_free(dtr_state *s, int v)
{
    int k = s->rpos[v], last = s->rl[--s->nres];
    s->rl[k] = last;
    s->rpos[last] = k;
    s->rpos[v] = -1;
    s->res[v] = 0;
    s->live -= s->g->nodes[v].mem;
    return xe_schedule_push(s->out, XE_EV_FREE, v, s->dev, -1);
}

static void to_garbage(dtr_state *s, int u)
{
    if (!s->ingarb[u]) s->ingarb[u] = 1, s->garbage[s->ngarb++] = u;
}

/* What bringing u back would cost: its compute and those of its absent ancestors up to
 * the resident ones (DTR's evicted neighbourhood), at most DTR_BACK_NODES of them counted
 * (depth first; a node counted once). */
static double back_cost(dtr_state *s, int u)
{
    const xe_graph *g = s->g;
    double c = 0;
    int top = 0, seen = 0;
    s->stamp++;
    s->dfs[top++] = u;
    s->mark[u] = s->stamp;
    while (top > 0 && seen < DTR_BACK_NODES) {
        int x = s->dfs[--top];
        c += xe_cost(s->in, x, s->dev);
        seen++;
        for (int j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
            int w = g->pred[j];
            if (s->res[w] || s->mark[w] == s->stamp) continue;
            s->mark[w] = s->stamp;
            s->dfs[top++] = w;
        }
    }
    return c;
}

/* Seconds to park u on another device and copy it back, and that device (*to), or
 * INFINITY where no device other than dev has room for it (or offloading is off). A copy
 * already parked costs only the way back. */
static double park_cost(const dtr_state *s, int u, int *to)
{
    const xe_instance *in = s->in;
    double best = INFINITY;
    *to = -1;
    if (!s->offload) return best;
    if (s->hres[u] >= 0) {
        *to = s->hres[u];
        return xe_copy_cost(in, u, s->hres[u], s->dev);
    }
    int64_t m = s->g->nodes[u].mem;
    for (int e = 0; e < in->ndev; e++) {
        if (e == s->dev || s->hlive[e] + m > in->dev[e].budget) continue;
        double c = xe_copy_cost(in, u, s->dev, e) + xe_copy_cost(in, u, e, s->dev);
        if (c < best) best = c, *to = e;
    }
    return best;
}

/* Evicts unpinned resident tensors, lowest score first (nothing-reads-it first), until
 * `need` more bytes fit: each is freed, parked first on another device where that is
 * cheaper than computing it again (park_cost). XE_OK, XE_EINFEASIBLE when they cannot,
 * XE_ENOMEM. */
static int make_room(dtr_state *s, int64_t need)
{
    while (s->live + need > s->budget) {
        int best = -1, best_to = -1;
        double bs = INFINITY;
        /* at most DTR_SAMPLE candidates, evenly spread over the resident list from an
         * offset that moves with the step (DTR's sampling of candidates) */
        if (s->nres == 0) return XE_EINFEASIBLE;
        int ns = s->nres < DTR_SAMPLE ? s->nres : DTR_SAMPLE;
        int stride = s->nres / ns, off = (int)(s->computes % stride);
        for (int i = 0; i < ns; i++) {
            int u = s->rl[(off + (int64_t)i * stride) % s->nres], to = -1;
            int64_t m = s->g->nodes[u].mem;
            if (s->pin[u] || m == 0) continue;
            double sc = -1.0;
            if (s->pending[u] > 0) {
                double back = back_cost(s, u), park = park_cost(s, u, &to);
                if (!(park < back)) to = -1;
                sc = fmin(back, park) / ((double)m * (double)(s->computes - s->last[u] + 1));
            }
            if (sc < bs || (sc == bs && u < best)) bs = sc, best = u, best_to = to;
        }
        if (best < 0) return XE_EINFEASIBLE;
        if (best_to >= 0 && s->hres[best] < 0) { /* park it */
            if (xe_schedule_push(s->out, XE_EV_COPY, best, s->dev, best_to)) return XE_ENOMEM;
            s->cost += xe_copy_cost(s->in, best, s->dev, best_to);
            s->hres[best] = best_to;
            s->hlive[best_to] += s->g->nodes[best].mem;
        }
        if (res_free(s, best)) return XE_ENOMEM;
    }
    return XE_OK;
}

/* Computes v (absent), bringing its absent inputs back first, depth first on the stack.
 * A compute in progress pins only the inputs brought back for it (pstack), so that the
 * work below it can still evict its other inputs; once none is absent it pins them all
 * and runs. Each brought-back input stays pinned, so a frame is resumed at most
 * indegree times. On return v is resident. XE_OK, XE_EINFEASIBLE, XE_ENOMEM. */
static int materialize(dtr_state *s, int v, int *blocker)
{
    const xe_graph *g = s->g;
    int top = 0, np = 0;
    s->fnode[0] = v;
    s->fbase[0] = 0;
    while (top >= 0) {
        int x = s->fnode[top], absent = -1;
        for (int j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
            int u = g->pred[j];
            if (!s->res[u]) {
                absent = u;
                break;
            }
            s->last[u] = s->computes; /* in use: touched */
        }
        if (absent >= 0 && s->hres[absent] >= 0) { /* parked: copied back, pinned for x */
            int rc = make_room(s, g->nodes[absent].mem);
            if (rc == XE_EINFEASIBLE) *blocker = absent;
            if (rc) return rc;
            int e = s->hres[absent];
            if (xe_schedule_push(s->out, XE_EV_COPY, absent, e, s->dev)) return XE_ENOMEM;
            s->cost += xe_copy_cost(s->in, absent, e, s->dev);
            res_add(s, absent);
            s->last[absent] = s->computes;
            s->pin[absent]++;
            s->pstack[np++] = absent;
            continue;
        }
        if (absent >= 0) { /* bring it back first */
            top++;
            s->fnode[top] = absent;
            s->fbase[top] = np;
            continue;
        }
        for (int i = s->fbase[top]; i < np; i++) s->pin[s->pstack[i]]--; /* now every input instead */
        np = s->fbase[top];
        for (int j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) s->pin[g->pred[j]]++;
        int rc = make_room(s, g->nodes[x].mem);
        if (rc == XE_EINFEASIBLE) *blocker = x;
        if (rc) return rc;
        if (s->computes >= s->max_now) return DTR_THRASHING;
        if ((s->computes & 1023) == 1023 && xe_now() > s->deadline) return XE_ETIMEOUT;
        if (xe_schedule_push(s->out, XE_EV_COMPUTE, x, s->dev, -1)) return XE_ENOMEM;
        s->cost += xe_cost(s->in, x, s->dev);
        s->computes++;
        s->last[x] = s->computes;
        res_add(s, x);
        for (int i = g->pred_off[x]; i < g->pred_off[x + 1]; i++) {
            int u = g->pred[i];
            if (--s->pin[u] == 0 && s->pending[u] == 0) to_garbage(s, u);
        }
        if (--top >= 0) { /* x was brought back for the frame below: pinned for it */
            s->pin[x]++;
            s->pstack[np++] = x;
        }
    }
    return XE_OK;
}

static int run(dtr_state *s, const int *order, int *blocker)
{
    const xe_graph *g = s->g;
    for (int k = 0; k < g->n; k++) {
        int v = order ? order[k] : k;
        if ((k & 63) == 0 && xe_now() > s->deadline) return XE_ETIMEOUT;
        s->max_now = (int64_t)DTR_MAX_RECOMPUTE_FACTOR * (k + 1) + DTR_THRASH_SLACK;
        int rc = materialize(s, v, blocker);
        if (rc) return rc;
        for (int j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
            if (--s->pending[g->pred[j]] == 0) to_garbage(s, g->pred[j]);
        if (s->pending[v] == 0) to_garbage(s, v);
        /* nothing is pinned between first computes: what nothing reads goes */
        for (int i = 0; i < s->ngarb; i++) {
            int u = s->garbage[i];
            s->ingarb[u] = 0;
            if (s->pending[u] > 0) continue;
            if (s->res[u] && res_free(s, u)) return XE_ENOMEM;
            if (s->hres[u] >= 0) { /* its parked copy too */
                if (xe_schedule_push(s->out, XE_EV_FREE, u, s->hres[u], -1)) return XE_ENOMEM;
                s->hlive[s->hres[u]] -= g->nodes[u].mem;
                s->hres[u] = -1;
            }
        }
        s->ngarb = 0;
    }
    return XE_OK;
}

int xe_dtr_schedule(const xe_instance *in, int dev, const int *order, int offload, double deadline, xe_schedule *out,
                    double *cost, int *recomputes, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n;
    xe_schedule_clear(out);
    if (dev < 0 || dev >= in->ndev) return xe_err_set(err, XE_EINVAL, "dtr: no device %d", dev);
    for (int v = 0; v < n; v++)
        if (!xe_can_run(in, v, dev))
            return xe_err_set(err, XE_EINFEASIBLE, "dtr: node %s cannot run on %s", g->nodes[v].name,
                              in->dev[dev].name);
    dtr_state s = {.in = in,
                  .g = g,
                  .dev = dev,
                  .budget = in->dev[dev].budget,
                  .out = out,
                  .deadline = deadline,
                  .offload = offload && in->ndev > 1};
    size_t ni = (size_t)n + 1;
    s.res = calloc(ni, 1);
    s.pin = calloc(ni, sizeof *s.pin);
    s.pending = malloc(ni * sizeof *s.pending);
    s.last = calloc(ni, sizeof *s.last);
    s.rl = malloc(ni * sizeof *s.rl);
    s.rpos = malloc(ni * sizeof *s.rpos);
    s.garbage = malloc(ni * sizeof *s.garbage);
    s.ingarb = calloc(ni, 1);
    s.fnode = malloc(ni * sizeof *s.fnode);
    s.fbase = malloc(ni * sizeof *s.fbase);
    s.hres = malloc(ni * sizeof *s.hres);
    s.dfs = malloc(ni * sizeof *s.dfs);
    s.mark = calloc(ni, sizeof *s.mark);
    s.pstack = malloc(ni * sizeof *s.pstack);
    int *pos = malloc(ni * sizeof *pos);
    int rc = XE_OK, blocker = -1;
    if (!s.res || !s.pin || !s.pending || !s.last || !s.rl || !s.rpos || !s.garbage || !s.ingarb || !s.fnode ||
        !s.fbase || !s.pstack || !s.hres || !s.dfs || !s.mark || !pos) {
        rc = xe_err_set(err, XE_ENOMEM, "dtr: out of memory for %d nodes", n);
        goto out;
    }
    for (int v = 0; v < n; v++) {
        pos[v] = -1;
        s.rpos[v] = -1;
        s.hres[v] = -1;
        s.pending[v] = xe_graph_nsucc(g, v);
    }
    for (int k = 0; k < n; k++) {
        int v = order ? order[k] : k;
        if (v < 0 || v >= n || pos[v] >= 0) {
            rc = xe_err_set(err, XE_EINVAL, "dtr: the order is not a permutation of the %d nodes", n);
            goto out;
        }
        pos[v] = k;
    }
    for (int i = 0; i < g->m; i++)
        if (pos[g->esrc[i]] > pos[g->edst[i]]) {
            rc = xe_err_set(err, XE_EINVAL, "dtr: the order computes %s before its input %s",
                            g->nodes[g->edst[i]].name, g->nodes[g->esrc[i]].name);
            goto out;
        }
    rc = run(&s, order, &blocker);
    if (rc == XE_ENOMEM) {
        xe_err_set(err, rc, "dtr: out of memory for the event list");
    } else if (rc == XE_ETIMEOUT) {
        xe_err_set(err, rc, "dtr: time limit reached");
    } else if (rc == DTR_THRASHING) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "dtr: gave up after %lld computes (thrashing)", (long long)s.computes);
    } else if (rc == XE_EINFEASIBLE) {
        xe_err_set(err, rc, "dtr: %s does not fit %s's budget of %lld B with the inputs of the computes in "
                   "progress resident", g->nodes[blocker].name, in->dev[dev].name, (long long)s.budget);
    } else {
        xe_sim_result sr;
        xe_err e2;
        int sc = xe_sim_run(in, out, &sr, &e2);
        int over = 0; /* the simulator checks the budgets too: a second look */
        for (int e = 0; e < in->ndev; e++) over |= sc == XE_OK && sr.dev[e].peak > in->dev[e].budget;
        if (sc == XE_ENOMEM)
            rc = xe_err_set(err, sc, "dtr: out of memory replaying the schedule");
        else if (sc || over || fabs(sr.total_time - s.cost) > 1e-9 * fmax(1.0, s.cost))
            rc = xe_err_set(err, XE_EINTERNAL, "dtr: the simulator disagrees: %s", sc ? e2.msg : "peak or cost");
    }
    if (rc == XE_OK) {
        *cost = s.cost;
        if (recomputes) *recomputes = (int)(s.computes - n);
    } else {
        xe_schedule_clear(out);
    }
out:
    free(s.res);
    free(s.pin);
    free(s.pending);
    free(s.last);
    free(s.rl);
    free(s.rpos);
    free(s.garbage);
    free(s.ingarb);
    free(s.fnode);
    free(s.fbase);
    free(s.hres);
    free(s.dfs);
    free(s.mark);
    free(s.pstack);
    free(pos);
    return rc;
}
