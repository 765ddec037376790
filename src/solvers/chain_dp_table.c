/* The chain DP bottom-up (docs/chain-dp.md, src/solvers/chain_dp.h): each Opt(s, t, .)
 * as its whole step function of the budget, the Pareto frontier of (bytes needed, cost)
 * pairs (revolve needs every number of slots; the tests cross-check the lazy evaluation). */
#include "chain_dp.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/timer.h"

/* ---- frontiers ------------------------------------------------------------------------ */

typedef struct buf {
    xe_cdp_pt *p;
    int n, cap;
} buf;

static int buf_reserve(buf *b, int need)
{
    if (need <= b->cap) return 0;
    int cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    xe_cdp_pt *q = realloc(b->p, (size_t)cap * sizeof *q);
    if (!q) return -1;
    b->p = q;
    b->cap = cap;
    return 0;
}

/* Costs are sums of non-negative seconds; c improves on best when below bar(best). */
static inline double bar(double best) { return best - 1e-12 * (best > 1.0 ? best : 1.0); }
static inline int better(double c, double best) { return c < bar(best); }

/* out = f1(m - sh) + f2(m), then needing at least floor bytes, plus add; choice ch. */
static int sum_fn(const xe_cdp_pt *f1, int n1, int64_t sh, const xe_cdp_pt *f2, int n2,
                  int64_t floor_req, int64_t cap, double add, int choice, buf *out)
{
    out->n = 0;
    if (n1 == 0 || n2 == 0) return 0;
    if (buf_reserve(out, n1 + n2)) return -1;
    int i = 0, j = 0;
    double thr = INFINITY;
    int64_t mm = f1[0].req + sh > f2[0].req ? f1[0].req + sh : f2[0].req;
    if (mm < floor_req) mm = floor_req;
    while (mm <= cap) {
        while (i + 1 < n1 && f1[i + 1].req + sh <= mm) i++;
        while (j + 1 < n2 && f2[j + 1].req <= mm) j++;
        double c = f1[i].cost + f2[j].cost + add;
        if (c < thr) {
            out->p[out->n++] = (xe_cdp_pt){mm, c, choice};
            thr = bar(c);
        }
        int64_t nx = INT64_MAX;
        if (i + 1 < n1) nx = f1[i + 1].req + sh;
        if (j + 1 < n2 && f2[j + 1].req < nx) nx = f2[j + 1].req;
        if (nx == INT64_MAX) break;
        mm = nx;
    }
    return 0;
}

void xe_cdp_table_clear(xe_cdp_table *t)
{
    free(t->off);
    free(t->cnt);
    free(t->pts);
    memset(t, 0, sizeof *t);
}


static int table_store(xe_cdp_table *t, int at, const buf *b)
{
    if (t->npts + b->n > t->cap) {
        int cap = t->cap ? t->cap : 1024;
        while (cap < t->npts + b->n) cap *= 2;
        xe_cdp_pt *q = realloc(t->pts, (size_t)cap * sizeof *q);
        if (!q) return -1;
        t->pts = q;
        t->cap = cap;
    }
    if (b->n) memcpy(t->pts + t->npts, b->p, (size_t)b->n * sizeof *b->p);
    t->off[at] = t->npts;
    t->cnt[at] = b->n;
    t->npts += b->n;
    return 0;
}

/* acc = min(acc, candidate): the child frontier shifted by sh, plus the tail frontier
 * (absent when tail_at < 0), at least floor_req bytes, plus add seconds. */
static int add_cand(xe_cdp_table *t, int child_at, int64_t sh, int tail_at, int64_t floor_req, int64_t cap,
                    double add, int choice, buf *acc, buf *cand, buf *tmp)
{
    static const xe_cdp_pt zero = {0, 0.0, 0};
    const xe_cdp_pt *f1 = t->pts + t->off[child_at];
    int n1 = t->cnt[child_at];
    const xe_cdp_pt *f2 = tail_at >= 0 ? t->pts + t->off[tail_at] : &zero;
    int n2 = tail_at >= 0 ? t->cnt[tail_at] : 1;
    if (n1 == 0 || n2 == 0) return 0;
    /* skip a candidate that acc already dominates: it needs at least r0 bytes and costs
     * at least c0 anywhere, and acc has a point needing at most r0 that costs at most c0 */
    int64_t r0 = f1[0].req + sh > f2[0].req ? f1[0].req + sh : f2[0].req;
    if (r0 < floor_req) r0 = floor_req;
    if (r0 > cap) return 0;
    double c0 = f1[n1 - 1].cost + f2[n2 - 1].cost + add;
    /* acc is untouched outside [r0, rstar): below r0 the candidate is undefined, and from
     * the first acc point strictly cheaper than c0 on, acc beats every candidate value */
    int i0 = 0, i1 = acc->n;
    {
        int lo = 0, hi = acc->n; /* first point with req >= r0 */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (acc->p[mid].req < r0) lo = mid + 1;
            else hi = mid;
        }
        i0 = lo;
        lo = 0, hi = acc->n; /* first point strictly cheaper than c0 */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (!better(acc->p[mid].cost, c0)) lo = mid + 1;
            else hi = mid;
        }
        i1 = lo;
    }
    if (i0 > 0 && !better(c0, acc->p[i0 - 1].cost)) return 0; /* acc(r0) <= c0 already */
    if (i1 < i0) i1 = i0;
    int64_t rstar = i1 < acc->n ? acc->p[i1].req : INT64_MAX;
    if (r0 >= rstar) return 0;
    if (sum_fn(f1, n1, sh, f2, n2, floor_req, rstar - 1 < cap ? rstar - 1 : cap, add, choice, cand)) return -1;
    if (cand->n == 0) return 0;
    /* tmp = acc[0, i0) + min(acc[i0, i1), cand) + acc[i1, n) */
    if (buf_reserve(tmp, acc->n + cand->n + 1)) return -1;
    memcpy(tmp->p, acc->p, (size_t)i0 * sizeof *tmp->p);
    tmp->n = i0;
    double thr = i0 > 0 ? bar(acc->p[i0 - 1].cost) : INFINITY;
    int i = i0, j = 0;
    while (i < i1 || j < cand->n) {
        xe_cdp_pt q;
        if (j >= cand->n ||
            (i < i1 && (acc->p[i].req < cand->p[j].req ||
                        (acc->p[i].req == cand->p[j].req && acc->p[i].cost <= cand->p[j].cost))))
            q = acc->p[i++];
        else
            q = cand->p[j++];
        if (q.cost < thr) {
            if (tmp->n > 0 && tmp->p[tmp->n - 1].req == q.req)
                tmp->p[tmp->n - 1] = q;
            else
                tmp->p[tmp->n++] = q;
            thr = bar(q.cost);
        }
    }
    memcpy(tmp->p + tmp->n, acc->p + i1, (size_t)(acc->n - i1) * sizeof *tmp->p);
    tmp->n += acc->n - i1;
    buf sw = *acc;
    *acc = *tmp;
    *tmp = sw;
    return 0;
}

int xe_cdp_solve(const xe_cdp_model *m, int64_t cap, xe_cdp_table *t, xe_err *err)
{
    int L = m->L;
    memset(t, 0, sizeof *t);
    t->L = L;
    size_t nn = 2 * (size_t)(L + 2) * (size_t)(L + 2);
    t->off = calloc(nn, sizeof *t->off);
    t->cnt = calloc(nn, sizeof *t->cnt);
    buf acc = {0}, cand = {0}, tmp = {0};
    int rc = XE_OK;
    double *sw_cost = malloc((size_t)(L + 2) * sizeof *sw_cost);
    int64_t *sw_hold = malloc((size_t)(L + 2) * sizeof *sw_hold), *sw_free = malloc((size_t)(L + 2) * sizeof *sw_free);
    if (!t->off || !t->cnt || !sw_cost || !sw_hold || !sw_free) goto oom;
    const int64_t *A = m->A + 1, *D = m->D + 1, *GP = m->GP + 1;
    const double *GC = m->GC + 1;
    for (int len = 0; len <= L + 1; len++) {
        for (int s = -1; s + len <= L; s++) {
            int tt = s + len;
            int64_t As = s >= 0 ? A[s] : 0;
            for (int kind = 0; kind < 2; kind++) {
                acc.n = 0;
                if (len == 0) {
                    if (buf_reserve(&acc, 1)) goto oom;
                    if (s < 0)
                        acc.p[0] = (xe_cdp_pt){0, 0.0, -3};
                    else if (kind == 0)
                        acc.p[0] = (xe_cdp_pt){GP[s], GC[s], -3};
                    else
                        acc.p[0] = (xe_cdp_pt){As + D[s], 0.0, -3};
                    acc.n = acc.p[0].req <= cap;
                } else {
                    if (tt < L && m->gend[tt + 1] == m->gbeg[tt + 1]) {
                        int at = cdp_tidx(L, kind, s, tt - 1);
                        if (buf_reserve(&acc, t->cnt[at])) goto oom;
                        for (int q = 0; q < t->cnt[at]; q++) {
                            acc.p[q] = t->pts[t->off[at] + q];
                            acc.p[q].choice = -2;
                        }
                        acc.n = t->cnt[at];
                    }
                    int park = s >= 0 && m->offload && m->odev[s + 1] >= 0;
                    /* sweep x_{s+1} .. x_sp: cost and peaks holding x_s or not (x_s is
                     * freed, or parked, right after x_{s+1} is computed) */
                    double fcost = 0.0;
                    int64_t req_hold = 0, req_free = 0;
                    for (int sp = s + 1; sp <= tt; sp++) {
                        cdp_sweep_step(m, s, sp, tt, &fcost, &req_hold, &req_free);
                        sw_cost[sp + 1] = fcost;
                        sw_hold[sp + 1] = req_hold;
                        sw_free[sp + 1] = req_free;
                    }
                    for (int sp = s + 1; sp <= tt; sp++) {
                        /* persistent child: x_sp kept through its own group */
                        int hold = kind == 0 || cdp_has_work(m, s + 1, sp - 1);
                        if (add_cand(t, cdp_tidx(L, 0, sp, tt), hold ? As : 0, hold ? cdp_tidx(L, kind, s, sp - 1) : -1,
                                     hold ? sw_hold[sp + 1] : sw_free[sp + 1], cap, sw_cost[sp + 1], sp, &acc,
                                     &cand, &tmp))
                            goto oom;
                        /* the same, x_s parked on another device while the child runs */
                        if (hold && park &&
                            add_cand(t, cdp_tidx(L, 0, sp, tt), 0, cdp_tidx(L, kind, s, sp - 1), sw_free[sp + 1], cap,
                                     sw_cost[sp + 1] + m->OC[s + 1], sp + XE_CDP_OFF, &acc, &cand, &tmp))
                            goto oom;
                        /* non-persistent child: x_sp serves groups tt..sp+1, is freed and
                         * recomputed later for group sp */
                        if (sp < tt) {
                            hold = kind == 0 || cdp_has_work(m, s + 1, sp);
                            if (add_cand(t, cdp_tidx(L, 1, sp, tt), hold ? As : 0, hold ? cdp_tidx(L, kind, s, sp) : -1,
                                         hold ? sw_hold[sp + 1] : sw_free[sp + 1], cap, sw_cost[sp + 1], -10 - sp,
                                         &acc, &cand, &tmp))
                                goto oom;
                            if (hold && park &&
                                add_cand(t, cdp_tidx(L, 1, sp, tt), 0, cdp_tidx(L, kind, s, sp), sw_free[sp + 1], cap,
                                         sw_cost[sp + 1] + m->OC[s + 1], -10 - sp - XE_CDP_OFF, &acc, &cand, &tmp))
                                goto oom;
                        }
                    }
                }
                if (table_store(t, cdp_tidx(L, kind, s, tt), &acc)) goto oom;
            }
        }
    }
    goto done;
oom:
    rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory (L = %d)", L);
    xe_cdp_table_clear(t);
done:
    free(sw_cost);
    free(sw_hold);
    free(sw_free);
    free(acc.p);
    free(cand.p);
    free(tmp.p);
    return rc;
}

void xe_cdp_top(const xe_cdp_table *t, const xe_cdp_pt **pts, int *cnt)
{
    int at = cdp_tidx(t->L, 0, -1, t->L);
    *pts = t->pts + t->off[at];
    *cnt = t->cnt[at];
}

