/* The location DP for training chains on two devices (docs/chain-dp.md, "Locations").
 *
 * The one-device recursion (chain_dp.c) with the place of every tensor it hands on in the
 * state: x_s is on the main device d, on the other device e, or on both (LD, LE, LD|LE);
 * the gradient front(t) it starts from is on one of them (lf), and the gradient it ends
 * with must be on lo (0: anywhere, only the whole problem). Each forward sweep runs
 * wholly on one device, the tensors it needs copied there first; after a sweep's first
 * step x_s is kept on d, on e, on both, or (when the tail has nothing left to do)
 * nowhere. So a forward pass on the GPU whose checkpoints go to the CPU, backward
 * groups run on the CPU where those checkpoints are, and a return to the GPU are one
 * schedule of the class, which parking, delegation and migration are not.
 *
 *   F(kind, s, t, lx, lf, lo, m): m bytes of d for x_s (when on d), front(t) (when on d)
 *   and everything the subproblem creates on d; e's memory is not part of the state (the
 *   caller replays the schedule and refuses it when e overflows).
 *
 * Each group is a small DP of its own over its backward nodes (loc_group): each node on
 * either device, so a group may start on one device and end on the other.
 *
 * Exact over that class in d's bytes, evaluated top-down at the budgets reached. Results
 * are kept per state as steps of F (a cost found at m with a schedule needing r bytes
 * holds on [r, m]; "nothing fits" at m holds below it), so most queries are answered
 * without evaluation; candidates are skipped when a lower bound (every node they must
 * compute once, on the cheaper device) cannot beat the best found. It gives up with
 * XE_ETIMEOUT past the deadline or LOC_MAX_EVALS evaluations, and is not run past
 * LOC_MAX_L path nodes (the lazy one-device DP's finer bounds are not carried over). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chain_dp.h"
#include "xengine/timer.h"

enum { LD = 1, LE = 2 };

/* evaluations at most (each O(L) candidates; 2^18 take about 1.2 s at L = 24 here);
 * beyond, XE_ETIMEOUT. A count, not the clock, so that a chain gives the same answer on
 * any machine. Measured (python3 tools/training_chain.py N 1, gpu+cpu, 25% and 50%):
 * 4,190-19,702 evaluations at N = 30 (0.05 s), 87,663-174,449 at N = 50 (0.3-0.8 s). */
#define LOC_MAX_EVALS (1L << 18)
/* path nodes at most (chains of about 80 nodes): beyond, not run (XE_ETIMEOUT) */
#define LOC_MAX_L 40

enum { CH_BASE = 0, CH_SKIP = 1, CH_CKPT = 2 };

/* One result of F at one state: evaluated at m bytes of d, it holds for every budget in
 * [req, m] (the bytes its schedule needs), or, when INFINITY, for every budget up to m
 * (F only falls as m grows). The choice: type; a non-empty group (g = 1) or the device of
 * the sweep (LD or LE); where x_s is kept (ls); the child's output place (loc); the
 * checkpoint sp; non-persistent (np). */
typedef struct {
    int64_t m, req;
    double cost;
    uint8_t type, g, ls, loc, np;
    int16_t sp;
} loc_iv;

/* The results of one state (kind, s, t, lx, lf, lo): nothing fits below inf_below bytes
 * (0: not known), and one result per cost found (F is non-increasing in m, so a cost c
 * met at [r1, m1] and at [r2, m2] holds on [min r, max m], by the schedule needing the
 * lesser r): a few entries, one per step of F. */
typedef struct {
    loc_iv *iv;
    int n, cap;
    int64_t inf_below;
} loc_slot;

static const loc_iv loc_none = {0, 0, INFINITY, 0, 0, 0, 0, 0, 0};

typedef struct {
    const xe_cdp_model *md;      /* the chain's structure and sizes; device d (bit LD) */
    const xe_instance *in;
    int dev[3];                  /* dev[LD], dev[LE] */
    loc_slot *slot;              /* [2][L+2][L+2][4][4][3]: (kind, s, t, lx, lf, lo) */
    double deadline;
    int stop; /* XE_ETIMEOUT or XE_ENOMEM once hit: every later answer is void */
    long evals;
    double *pre; /* [n + 1] prefix sums of each node's cheaper compute cost (lower bounds) */
} loc_dp;

static loc_slot *loc_slot_of(const loc_dp *z, int kind, int s, int t, int lx, int lf, int lo)
{
    size_t w = (size_t)z->md->L + 2;
    return &z->slot[((((size_t)kind * w + (size_t)(s + 1)) * w + (size_t)(t + 1)) * 4 + (size_t)lx) * 12 +
                    (size_t)lf * 3 + (size_t)lo];
}

/* The result that answers F(state) at m, or NULL. */
static const loc_iv *loc_get(const loc_dp *z, int kind, int s, int t, int lx, int lf, int lo, int64_t m)
{
    const loc_slot *sl = loc_slot_of(z, kind, s, t, lx, lf, lo);
    if (m < sl->inf_below) return &loc_none;
    for (int i = 0; i < sl->n; i++) {
        const loc_iv *v = &sl->iv[i];
        if (v->req <= m && m <= v->m) return v;
    }
    return NULL;
}

/* Stores a result (XE_ENOMEM in z->stop). */
static void loc_put(loc_dp *z, int kind, int s, int t, int lx, int lf, int lo, const loc_iv *v)
{
    if (z->stop) return;
    loc_slot *sl = loc_slot_of(z, kind, s, t, lx, lf, lo);
    if (!isfinite(v->cost)) {
        if (v->m + 1 > sl->inf_below) sl->inf_below = v->m + 1;
        return;
    }
    for (int i = 0; i < sl->n; i++)
        if (sl->iv[i].cost == v->cost) { /* the same step of F: one entry */
            int64_t hi = sl->iv[i].m > v->m ? sl->iv[i].m : v->m;
            if (v->req < sl->iv[i].req) sl->iv[i] = *v;
            sl->iv[i].m = hi;
            return;
        }
    if (sl->n == sl->cap) {
        int nc = sl->cap ? 2 * sl->cap : 2;
        loc_iv *p = realloc(sl->iv, (size_t)nc * sizeof *p);
        if (!p) {
            z->stop = XE_ENOMEM;
            return;
        }
        sl->iv = p;
        sl->cap = nc;
    }
    sl->iv[sl->n++] = *v;
}

/* A lower bound on F(kind, s, t, ...) at every m and place: each backward node of its
 * groups and each path node they need (above s) computed once on the cheaper device. */
static double loc_lb(const loc_dp *z, int kind, int s, int t)
{
    const xe_cdp_model *md = z->md;
    int lo = kind == 0 ? s : s + 1, top = t >= md->L ? md->L : s;
    for (int p = t; t < md->L && p > s && p >= lo; p--)
        if (md->gend[p + 1] > md->gbeg[p + 1]) {
            top = p;
            break;
        }
    if (lo < 0) lo = 0;
    double c = top > s ? z->pre[top + 1] - z->pre[s + 1] : 0.0;
    if (lo <= t && md->gend[lo + 1] > md->gbeg[t + 1]) c += z->pre[md->gend[lo + 1]] - z->pre[md->gbeg[t + 1]];
    return c;
}

static int64_t sz(const loc_dp *z, int v) { return v >= 0 ? cdp_sz(z->md, v) : 0; }
static int other(int g) { return g == LD ? LE : LD; }
/* The copy that puts v on `to` (LD or LE) when its places (`from`, a set) lack it: from
 * the other device (0 when v is virtual or already there). */
static double cp(const loc_dp *z, int v, int from, int to)
{
    return v >= 0 && !(from & to) ? xe_copy_cost(z->in, v, z->dev[other(to)], z->dev[to]) : 0.0;
}
/* Seconds of v on the device of bit g; INFINITY where it cannot run there. */
static double cst(const loc_dp *z, int v, int g)
{
    return xe_can_run(z->in, v, z->dev[g]) ? xe_cost(z->in, v, z->dev[g]) : INFINITY;
}

/* Moves v (a real tensor on the one place `from`) to `to` (0 or from: it stays): the
 * copy's seconds; with out, the copy and the free at its source appended (NAN when out
 * of memory). Costing (out NULL) and emitting share it, so they cannot disagree. */
static double loc_move(const loc_dp *z, int v, int from, int to, xe_schedule *out)
{
    if (!to || to == from) return 0.0;
    if (out && (xe_schedule_push(out, XE_EV_COPY, v, z->dev[from], z->dev[to]) ||
                xe_schedule_push(out, XE_EV_FREE, v, z->dev[from], -1)))
        return NAN;
    return xe_copy_cost(z->in, v, z->dev[from], z->dev[to]);
}

/* The copy of v (real, or -1: nothing) to g from its places `from` (a set), when it is
 * not there yet (it stays at the source: cp() is its cost). XE_OK, XE_ENOMEM. */
static int loc_fetch(const loc_dp *z, int v, int from, int g, xe_schedule *out)
{
    if (v >= 0 && !(from & g) && xe_schedule_push(out, XE_EV_COPY, v, z->dev[other(g)], z->dev[g])) return XE_ENOMEM;
    return XE_OK;
}

/* Frees v (real, or -1: nothing) on every place of the set `places`. XE_OK, XE_ENOMEM. */
static int loc_drop(const loc_dp *z, int v, int places, xe_schedule *out)
{
    for (int b = LD; v >= 0 && b <= LE; b++)
        if ((places & b) && xe_schedule_push(out, XE_EV_FREE, v, z->dev[b], -1)) return XE_ENOMEM;
    return XE_OK;
}

/* The gradient a subproblem ends with: front(s-1) (kind 0: the last node of group s, or
 * front(s) when the group is empty) or front(s) (kind 1); for s = L with group L empty,
 * x_L itself. */
static int out_node(const xe_cdp_model *m, int kind, int s)
{
    if (kind == 1) return m->front[s + 1];
    if (s < 0) return m->front[0];
    return m->gend[s + 1] > m->gbeg[s + 1] ? m->gend[s + 1] - 1 : m->front[s + 1];
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Group s (not empty) from x_s on lx and front(s) on lf, its gradient left on lo (0: where
 * its last node ran): each backward node on either device, by a small DP over the group's
 * nodes whose state is where the previous node's output is (one place) and where x_s is
 * (a set; empty after its last read). A node's inputs are copied to its device first (the
 * previous output then freed at its source); after a node, x_s may be dropped from one of
 * its places. Every moment within m bytes of d. Returns the least cost (INFINITY: none),
 * the bytes of d its schedule needs in *req; with out, appends that schedule's events.
 * XE_ENOMEM is returned as NAN. */
static double loc_group(const loc_dp *z, int s, int lx, int lf, int lo, int64_t m, int64_t *req, xe_schedule *out)
{
    const xe_cdp_model *md = z->md;
    const xe_chain *ch = md->ch;
    int b = md->gbeg[s + 1], e = md->gend[s + 1], ng = e - b, fn = md->front[s + 1];
    int64_t As = sz(z, s);
    int lastread = -1;
    for (int k = b; k < e; k++)
        if (cdp_reads(ch, s, k)) lastread = k;
    /* state index: lp (0: d, 1: e) * 4 + x_s's places (bits) */
    size_t nst = (size_t)(ng + 1) * 8;
    double *cost = malloc(nst * sizeof *cost);
    int64_t *pk = malloc(nst * sizeof *pk); /* d's peak on the way to each state */
    int8_t *from = malloc(nst), *dev = malloc(nst);
    if (!cost || !pk || !from || !dev) {
        free(cost), free(pk), free(from), free(dev);
        return NAN;
    }
    for (size_t i = 0; i < nst; i++) cost[i] = INFINITY;
    int x0 = lastread >= 0 ? lx : 0; /* never read: freed at the start */
    int prev_is_x = fn == s;         /* s = L: the first node reads x_L as its predecessor */
    int64_t start_use = (lx & LD ? As : 0) + (!prev_is_x && lf == LD ? sz(z, fn) : 0);
    if (start_use <= m) {
        cost[(size_t)((prev_is_x ? 0 : lf - 1) * 4 + x0)] = 0.0;
        pk[(size_t)((prev_is_x ? 0 : lf - 1) * 4 + x0)] = start_use;
    }
    for (int i = 0; i < ng; i++) {
        int k = b + i, pv = i == 0 ? fn : k - 1, px = i == 0 && prev_is_x;
        int reads = cdp_reads(ch, s, k) && !px; /* x_s as the predecessor: handled as px */
        for (int st = 0; st < 8; st++) {
            double c0 = cost[(size_t)i * 8 + st];
            if (!isfinite(c0)) continue;
            int lp = (st >> 2) + 1, lxs = st & 3;
            for (int g = LD; g <= LE; g++) {
                double c = c0 + cst(z, k, g);
                if (!isfinite(c)) continue;
                int lxs1 = lxs;
                if (px) {
                    if (!(lxs & g)) c += cp(z, s, lxs, g);
                    lxs1 |= g;
                } else
                    c += loc_move(z, pv, lp, g, NULL);
                if (reads && !(lxs1 & g)) {
                    c += cp(z, s, lxs1, g);
                    lxs1 |= g;
                }
                int64_t before = (lxs & LD ? As : 0) + (!px && lp == LD ? sz(z, pv) : 0);
                int64_t during = (lxs1 & LD ? As : 0) + (g == LD ? (px ? 0 : sz(z, pv)) + sz(z, k) : 0);
                if (before > m || during > m) continue;
                /* after k: x_s freed at its last read, else kept on a nonempty subset */
                for (int keep = 0; keep <= 3; keep++) {
                    if (k >= lastread ? keep != 0 : (keep == 0 || (keep & ~lxs1))) continue;
                    size_t to = (size_t)(i + 1) * 8 + (size_t)((g - 1) * 4 + keep);
                    if (c < cost[to]) {
                        cost[to] = c;
                        pk[to] = max64(pk[(size_t)i * 8 + (size_t)st], max64(before, during));
                        from[to] = (int8_t)st;
                        dev[to] = (int8_t)g;
                    }
                }
            }
        }
    }
    /* the gradient moved to lo */
    double best = INFINITY;
    int bst = -1;
    *req = m + 1;
    for (int st = 0; st < 8; st++) {
        double c = cost[(size_t)ng * 8 + st];
        int lp = (st >> 2) + 1, want = lo ? lo : lp;
        int64_t r = pk[(size_t)ng * 8 + (size_t)st];
        if (!isfinite(c) || (st & 3)) continue;
        if (want != lp) {
            c += loc_move(z, e - 1, lp, want, NULL);
            if (want == LD || lp == LD) r = max64(r, sz(z, e - 1));
            if (r > m) continue;
        }
        if (c < best) {
            best = c;
            bst = st;
            *req = r;
        }
    }
    if (out && bst >= 0) { /* read the choices back, then emit them in order */
        int8_t *gs = malloc((size_t)ng), *ks = malloc((size_t)ng + 1);
        if (!gs || !ks) best = NAN;
        for (int i = ng, st = bst; gs && ks && i > 0; i--) {
            size_t at = (size_t)i * 8 + (size_t)st;
            gs[i - 1] = dev[at];
            ks[i] = (int8_t)(st & 3);
            st = from[at];
            if (i == 1) ks[0] = (int8_t)(st & 3);
        }
        int lp = prev_is_x ? 0 : lf, lxs = lx, rc = 0;
        if (lastread < 0) {
            rc = loc_drop(z, s, lxs, out);
            lxs = 0;
        }
        for (int i = 0; gs && ks && i < ng && !rc; i++) {
            int k = b + i, pv = i == 0 ? fn : k - 1, px = i == 0 && prev_is_x, g = gs[i];
            int reads = cdp_reads(ch, s, k) && !px;
            if (px) {
                rc = loc_fetch(z, s, lxs, g, out);
                lxs |= g;
            } else if (isnan(loc_move(z, pv, lp, g, out)))
                rc = XE_ENOMEM;
            if (!rc && reads) {
                rc = loc_fetch(z, s, lxs, g, out);
                lxs |= g;
            }
            if (!rc) rc = xe_schedule_push(out, XE_EV_COMPUTE, k, z->dev[g], -1);
            if (!rc && !px) rc = xe_schedule_push(out, XE_EV_FREE, pv, z->dev[g], -1);
            if (!rc) rc = loc_drop(z, s, lxs & ~ks[i + 1], out);
            lxs = ks[i + 1];
            lp = g;
        }
        if (!rc && isnan(loc_move(z, e - 1, lp, lo ? lo : lp, out))) rc = XE_ENOMEM;
        if (rc) best = NAN;
        free(gs), free(ks);
    }
    free(cost), free(pk), free(from), free(dev);
    return best;
}

/* Base cases (s == t): cost within m bytes of d (INFINITY: none), the bytes it needs in
 * *req; *g 1 for a non-empty group (loc_group), else 0. With out (a case that fits), its
 * events appended (NAN when out of memory). */
static double loc_base(const loc_dp *z, int kind, int s, int lx, int lf, int lo, int64_t m, int *gbest,
                       int64_t *req, xe_schedule *out)
{
    const xe_cdp_model *md = z->md;
    int fn = md->front[s + 1];
    int64_t As = s >= 0 ? sz(z, s) : 0, Df = fn != s ? sz(z, fn) : 0;
    int nonempty = kind == 0 && s >= 0 && md->gend[s + 1] > md->gbeg[s + 1];
    *gbest = 0;
    if (!nonempty) {
        if (kind == 0 && s >= 0 && fn == s) { /* x_L is its own output: keep it where lo says */
            int want = lo ? lo : (lx & LE ? LE : LD);
            int64_t need = max64(lx & LD ? As : 0, want == LD ? As : 0);
            *req = need;
            if (out && (loc_fetch(z, s, lx, want, out) || loc_drop(z, s, lx & other(want), out))) return NAN;
            return need <= m ? cp(z, s, lx, want) : INFINITY;
        }
        /* x_s freed; the front passes through to lo */
        int want = lo ? lo : lf;
        int64_t need = max64((lx & LD ? As : 0) + (lf == LD ? Df : 0), want == LD ? Df : 0);
        *req = need;
        if (out && loc_drop(z, s, lx, out)) return NAN;
        return need <= m ? loc_move(z, fn, lf, want, out) : INFINITY;
    }
    *gbest = 1;
    return loc_group(z, s, lx, lf, lo, m, req, out);
}

static double loc_eval(loc_dp *z, int kind, int s, int t, int lx, int lf, int lo, int64_t m, int64_t *req);

/* x_s's copies and the sweep x_{s+1} .. x_sp on g, x_s kept on ls afterwards: cost, and
 * d's peak in *need; with out, its events appended (NAN when out of memory): x_s fetched
 * to g and to the one place of ls it is not yet, freed where ls does not keep it (on g
 * right after x_{s+1}), each x_j freed after x_{j+1}. */
static double loc_sweep(const loc_dp *z, int s, int sp, int t, int lx, int lf, int g, int ls, int64_t *need,
                        xe_schedule *out)
{
    const xe_cdp_model *md = z->md;
    int64_t As = s >= 0 ? sz(z, s) : 0, Dt = t < md->L ? md->D[t + 1] : 0, fd = lf == LD ? Dt : 0;
    int lx1 = lx | g, og = other(g);
    double c = 0.0;
    if (s >= 0) {
        c += cp(z, s, lx, g);
        if (ls & ~lx1) c += cp(z, s, lx1, og); /* the one place it is not yet */
        if (out && (loc_fetch(z, s, lx, g, out) || ((ls & ~lx1) && loc_fetch(z, s, lx1, og, out)) ||
                    loc_drop(z, s, lx1 & og & ~ls, out)))
            return NAN;
    }
    for (int j = s + 1; j <= sp; j++) {
        c += cst(z, j, g); /* INFINITY where g cannot run one */
        if (out && (xe_schedule_push(out, XE_EV_COMPUTE, j, z->dev[g], -1) ||
                    (j == s + 1 ? loc_drop(z, s, g & ~ls, out) : xe_schedule_push(out, XE_EV_FREE, j - 1, z->dev[g], -1))))
            return NAN;
    }
    int64_t pk = 0;
    if (g == LD) {
        for (int j = s + 1; j <= sp; j++) {
            int64_t xs = j == s + 1 || (ls & LD) ? As : 0;
            pk = max64(pk, xs + fd + (j - 1 > s ? sz(z, j - 1) : 0) + sz(z, j));
        }
    } else {
        pk = max64((lx & LD ? As : 0) + fd, (ls & LD ? As : 0) + fd);
    }
    *need = pk;
    return c;
}

static double loc_eval(loc_dp *z, int kind, int s, int t, int lx, int lf, int lo, int64_t m, int64_t *req)
{
    *req = m + 1;
    if (z->stop || m < 0) return INFINITY;
    const xe_cdp_model *md = z->md;
    if (t >= md->L) lf = LD; /* front(L) does not exist */
    if (s < 0) lx = LD | LE;  /* the virtual x_{-1} is everywhere */
    const loc_iv *hit = loc_get(z, kind, s, t, lx, lf, lo, m);
    if (hit) {
        *req = hit->req;
        return hit->cost;
    }
    if (++z->evals > LOC_MAX_EVALS || ((z->evals & 1023) == 0 && z->deadline > 0 && xe_now() > z->deadline)) {
        z->stop = XE_ETIMEOUT;
        return INFINITY;
    }
    loc_iv best = {m, m + 1, INFINITY, CH_BASE, 0, 0, 0, 0, 0};
    if (s == t) {
        int g;
        int64_t r = m + 1;
        best.cost = loc_base(z, kind, s, lx, lf, lo, m, &g, &r, NULL);
        if (isnan(best.cost)) {
            z->stop = XE_ENOMEM;
            return INFINITY;
        }
        best.g = (uint8_t)g;
        if (isfinite(best.cost)) best.req = r;
        loc_put(z, kind, s, t, lx, lf, lo, &best);
        *req = best.req;
        return best.cost;
    }
    if (t < md->L && md->gend[t + 1] == md->gbeg[t + 1]) { /* skip an empty group */
        int64_t r;
        double c = loc_eval(z, kind, s, t - 1, lx, lf, lo, m, &r);
        if (isfinite(c)) {
            best.cost = c;
            best.req = r;
            best.type = CH_SKIP;
        }
    }
    int64_t As = s >= 0 ? sz(z, s) : 0;
    for (int np = 0; np <= 1; np++)
        for (int sp = s + 1; sp <= (np ? t - 1 : t); sp++) {
            int tt = np ? sp : sp - 1; /* the tail's last group */
            int work = kind == 0 ? cdp_has_work(md, s, tt) : cdp_has_work(md, s + 1, tt);
            for (int g = LD; g <= LE; g++)
                for (int ls = work ? 1 : 0; ls <= 3; ls++) {
                    if (s < 0 && ls != 3) continue; /* x_{-1}: no bytes, no events */
                    int64_t need;
                    double c = loc_sweep(z, s, sp, t, lx, lf, g, ls, &need, NULL);
                    if (need > m || c >= best.cost) continue;
                    int64_t xd = s >= 0 && (ls & LD) ? As : 0, mc = m - xd;
                    double lbt = ls == 0 ? 0.0 : loc_lb(z, kind, s, tt);
                    if (!(c + loc_lb(z, np, sp, t) + lbt < best.cost)) continue;
                    for (int loc = LD; loc <= LE; loc++) {
                        int64_t rc_, rt = 0;
                        double cc = loc_eval(z, np, sp, t, g, lf, loc, mc, &rc_);
                        if (!(c + cc + lbt < best.cost)) continue;
                        double ct;
                        if (ls == 0) { /* nothing left for the tail: the gradient moves to lo */
                            int on = out_node(md, np, sp), want = lo ? lo : loc;
                            rt = want == LD || loc == LD ? sz(z, on) : 0;
                            ct = rt <= m ? loc_move(z, on, loc, want, NULL) : INFINITY;
                        } else
                            ct = loc_eval(z, kind, s, tt, ls, loc, lo, m, &rt);
                        if (c + cc + ct < best.cost) {
                            best.cost = c + cc + ct;
                            best.req = max64(need, max64(rc_ + xd, rt));
                            best.type = CH_CKPT;
                            best.g = (uint8_t)g;
                            best.ls = (uint8_t)ls;
                            best.loc = (uint8_t)loc;
                            best.sp = (int16_t)sp;
                            best.np = (uint8_t)np;
                        }
                    }
                }
        }
    if (!isfinite(best.cost)) best.req = m + 1;
    loc_put(z, kind, s, t, lx, lf, lo, &best);
    *req = best.req;
    return best.cost;
}

static int loc_emit(loc_dp *z, int kind, int s, int t, int lx, int lf, int lo, int64_t m, xe_schedule *out)
{
    const xe_cdp_model *md = z->md;
    if (t >= md->L) lf = LD;
    if (s < 0) lx = LD | LE;
    const loc_iv *e = loc_get(z, kind, s, t, lx, lf, lo, m);
    if (!e || !isfinite(e->cost)) return XE_EINTERNAL;
    loc_iv c = *e;
    if (c.type == CH_SKIP) return loc_emit(z, kind, s, t - 1, lx, lf, lo, m, out);
    if (c.type == CH_BASE) { /* the same code as the costing, now emitting */
        int g;
        int64_t r;
        return isnan(loc_base(z, kind, s, lx, lf, lo, m, &g, &r, out)) ? XE_ENOMEM : XE_OK;
    }
    /* a checkpoint: x_s's copies and frees with the sweep, the child, the tail */
    int g = c.g, ls = c.ls, sp = c.sp;
    int64_t need;
    if (isnan(loc_sweep(z, s, sp, t, lx, lf, g, ls, &need, out))) return XE_ENOMEM;
    int64_t mc = m - (s >= 0 && (ls & LD) ? sz(z, s) : 0);
    int rc = loc_emit(z, c.np, sp, t, g, lf, c.loc, mc, out);
    if (rc) return rc;
    if (ls == 0) /* nothing left for the tail: the gradient moves to lo */
        return isnan(loc_move(z, out_node(md, c.np, sp), c.loc, lo ? lo : c.loc, out)) ? XE_ENOMEM : XE_OK;
    return loc_emit(z, kind, s, c.np ? sp : sp - 1, ls, c.loc, lo, m, out);
}

int xe_cdp_loc(const xe_cdp_model *md, int e, double deadline, double *cost, xe_schedule *out, xe_err *err)
{
    *cost = INFINITY;
    if (md->uniform || e < 0 || e >= md->in->ndev || e == md->d)
        return xe_err_set(err, XE_EINVAL, "chain dp (locations): a byte model and another device are needed");
    if (md->L > LOC_MAX_L)
        return xe_err_set(err, XE_ETIMEOUT, "chain dp (locations): not run on chains of over %d path nodes",
                          LOC_MAX_L);
    const xe_graph *gr = md->in->g;
    size_t w = (size_t)md->L + 2, nslot = 2 * w * w * 48;
    loc_dp z = {md, md->in, {0, md->d, e}, NULL, deadline, 0, 0, NULL};
    z.slot = calloc(nslot, sizeof *z.slot);
    z.pre = malloc((size_t)(gr->n + 1) * sizeof *z.pre);
    if (!z.slot || !z.pre) {
        free(z.slot), free(z.pre);
        return xe_err_set(err, XE_ENOMEM, "chain dp (locations): out of memory");
    }
    z.pre[0] = 0.0;
    for (int v = 0; v < gr->n; v++) {
        double c = fmin(cst(&z, v, LD), cst(&z, v, LE));
        z.pre[v + 1] = z.pre[v] + (isfinite(c) ? c : 0.0); /* a node no device runs: no schedule anyway */
    }
    int64_t B = md->in->dev[md->d].budget;
    int64_t req;
    double c = loc_eval(&z, 0, -1, md->L, LD | LE, LD, 0, B, &req);
    int rc = z.stop;
    if (rc == XE_ETIMEOUT)
        rc = xe_err_set(err, XE_ETIMEOUT, "chain dp (locations): deadline or evaluation limit (%ld) reached",
                        LOC_MAX_EVALS);
    else if (rc) rc = xe_err_set(err, rc, "chain dp (locations): out of memory");
    else if (isfinite(c)) {
        int start = out->len;
        rc = loc_emit(&z, 0, -1, md->L, LD | LE, LD, 0, B, out);
        if (rc) {
            out->len = start;
            rc = xe_err_set(err, rc, rc == XE_ENOMEM ? "chain dp (locations): out of memory"
                                                     : "chain dp (locations): a state of the optimum is missing");
        } else
            *cost = c;
    }
    for (size_t i = 0; i < nslot; i++) free(z.slot[i].iv);
    free(z.slot), free(z.pre);
    return rc;
}
