/* Exact dynamic program for training chains (docs/chain-dp.md).
 *
 * Opt(s, t, m): path node x_s is resident (s = -1: nothing, a virtual checkpoint of size
 * 0), so is front(t), the gradient produced before group t (nothing for t = L); m bytes
 * are available for these and everything the subproblem creates. Run groups t, t-1, ..., s
 * of backward nodes in order, ending with front(s-1) resident and x_s freed. Options:
 *   - base (s = t): run group s (its peak and cost are constants of the model);
 *   - skip (t < L, group t empty): Opt(s, t-1, m);
 *   - checkpoint s' in (s, t]: compute x_{s+1} .. x_{s'} from x_s, freeing each after its
 *     successor, keep x_{s'}; then Opt(s', t, m - |x_s|) and Opt(s, s'-1, m);
 *   - non-persistent checkpoint s' in (s, t): the same sweep, then Opt'(s', t, m - |x_s|)
 *     (x_{s'} serves groups t..s'+1 only and is freed) and Opt(s, s', m).
 * Opt'(s, t, m) is the same problem without group s (x_s only a source of recomputation);
 * it has the same choices with Opt' as the tail, and frees x_s right after computing
 * x_{s+1} when the tail has nothing left to do.
 * With other devices: x_s may be parked there while the child runs, or a whole
 * subproblem delegated to another device (run there by that device's own DP).
 * Two evaluations of the same recursion, both exact in bytes with no discretization
 * (Beaumont et al. 2019 discretize m instead): lazily, top-down at the budgets queries
 * reach, each result cached with the interval of m over which it holds (xe_chain_dp);
 * and bottom-up, each Opt(s, t, .) as its whole step function of m, the Pareto frontier
 * of (bytes needed, cost) pairs (revolve, which needs every number of slots; and the
 * tests' cross-check). */
#include "chain_dp.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/timer.h"

/* ---- chain recognition ---------------------------------------------------------------- */

void xe_chain_clear(xe_chain *ch)
{
    free(ch->fread);
    memset(ch, 0, sizeof *ch);
}

int xe_chain_detect(const xe_graph *g, xe_chain *ch, xe_err *err)
{
    memset(ch, 0, sizeof *ch);
    int n = g->n;
    if (n < 1) return xe_err_set(err, XE_EUNSUPPORTED, "chain: graph %s has no nodes", g->name);
    if (xe_graph_npred(g, 0) != 0)
        return xe_err_set(err, XE_EUNSUPPORTED, "chain: node %s has inputs but comes first", g->nodes[0].name);
    int L = 0;
    while (L + 1 < n && xe_graph_npred(g, L + 1) == 1 && g->pred[g->pred_off[L + 1]] == L) L++;
    int nb = n - L - 1;
    int *fr = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *fr);
    if (!fr) return xe_err_set(err, XE_ENOMEM, "chain: out of memory");
    int last = L, gap = 0; /* gap: a node since the last read of `last` did not read it */
    for (int k = L + 1; k < n; k++) {
        int has_prev = 0, other = -1, nother = 0;
        for (int q = g->pred_off[k]; q < g->pred_off[k + 1]; q++) {
            int p = g->pred[q];
            if (p == k - 1)
                has_prev = 1;
            else {
                other = p;
                nother++;
            }
        }
        const char *why = NULL;
        if (!has_prev)
            why = "does not read its predecessor";
        else if (nother > 1)
            why = "reads more than one earlier node besides its predecessor";
        else if (nother == 1 && other > L)
            why = "reads a backward node other than its predecessor";
        else if (nother == 1 && other > last)
            why = "reads a forward node later than one read before it (reads must go backwards)";
        else if (nother == 1 && other == last && gap)
            why = "reads a forward node again after a backward node that does not read it";
        if (why) {
            free(fr);
            return xe_err_set(err, XE_EUNSUPPORTED, "chain: node %s (%d) %s", g->nodes[k].name, k, why);
        }
        fr[k - L - 1] = nother ? other : -1;
        gap = nother ? 0 : 1;
        if (nother) last = other;
    }
    ch->n = n;
    ch->L = L;
    ch->nb = nb;
    ch->fread = fr;
    return XE_OK;
}

/* ---- the model ------------------------------------------------------------------------ */

static int64_t sz(const xe_cdp_model *m, int v) { return m->uniform ? 1 : m->in->g->nodes[v].mem; }

/* Runs group s (0 <= s <= L) from the state {x_s, front(s)} resident: its peak (bytes or
 * units, including x_s and front(s)) and cost; appends the events when out != NULL.
 * Backward nodes run in order; a predecessor is freed right after its only reader, x_s
 * after its last reader in the group (x_L stays when it is the front and nothing read it). */
static int group_run(const xe_cdp_model *m, int s, int64_t *peak, double *cost, xe_schedule *out)
{
    const xe_chain *ch = m->ch;
    int xs = s, F = m->front[s + 1], d = m->d;
    int b = m->gbeg[s + 1], e = m->gend[s + 1];
    int64_t bytes = sz(m, xs) + (F != xs ? sz(m, F) : 0), pk = bytes;
    double c = 0.0;
    int lastread = -1;
    for (int k = b; k < e; k++)
        if (ch->fread[k - ch->L - 1] == s || k - 1 == s) lastread = k;
    int xs_res = 1, prev = F;
    for (int k = b; k < e; k++) {
        if (bytes + sz(m, k) > pk) pk = bytes + sz(m, k);
        c += m->uniform ? 0.0 : xe_cost(m->in, k, d);
        if (out && xe_schedule_push(out, XE_EV_COMPUTE, k, d, -1)) return XE_ENOMEM;
        bytes += sz(m, k);
        if (prev != xs) {
            if (out && xe_schedule_push(out, XE_EV_FREE, prev, d, -1)) return XE_ENOMEM;
            bytes -= sz(m, prev);
        }
        if (xs_res && k == lastread) {
            if (out && xe_schedule_push(out, XE_EV_FREE, xs, d, -1)) return XE_ENOMEM;
            bytes -= sz(m, xs);
            xs_res = 0;
        }
        prev = k;
    }
    if (xs_res && xs != prev && out && xe_schedule_push(out, XE_EV_FREE, xs, d, -1)) return XE_ENOMEM;
    *peak = pk;
    *cost = c;
    return XE_OK;
}

void xe_cdp_model_clear(xe_cdp_model *m)
{
    free(m->A);
    free(m->FC);
    free(m->D);
    free(m->GP);
    free(m->GC);
    free(m->gbeg);
    free(m->gend);
    free(m->front);
    free(m->odev);
    free(m->OC);
    memset(m, 0, sizeof *m);
}

int xe_cdp_model_init(xe_cdp_model *m, const xe_instance *in, const xe_chain *ch, int d,
                      int uniform, int offload, xe_err *err)
{
    memset(m, 0, sizeof *m);
    const xe_graph *g = in->g;
    for (int v = 0; v < g->n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "chain: device %s cannot run node %s", in->dev[d].name,
                              g->nodes[v].name);
    int L = ch->L;
    size_t np = (size_t)L + 2;
    m->in = in;
    m->ch = ch;
    m->d = d;
    m->uniform = uniform;
    m->L = L;
    m->A = calloc(np, sizeof *m->A);
    m->FC = calloc(np, sizeof *m->FC);
    m->D = calloc(np, sizeof *m->D);
    m->GP = calloc(np, sizeof *m->GP);
    m->GC = calloc(np, sizeof *m->GC);
    m->gbeg = calloc(np, sizeof *m->gbeg);
    m->gend = calloc(np, sizeof *m->gend);
    m->front = calloc(np, sizeof *m->front);
    m->odev = malloc(np * sizeof *m->odev);
    m->OC = calloc(np, sizeof *m->OC);
    if (!m->A || !m->FC || !m->D || !m->GP || !m->GC || !m->gbeg || !m->gend || !m->front || !m->odev || !m->OC) {
        xe_cdp_model_clear(m);
        return xe_err_set(err, XE_ENOMEM, "chain: out of memory");
    }
    m->offload = offload && !uniform && in->ndev > 1;
    m->odev[0] = -1;
    for (int p = 0; p <= L; p++) {
        m->A[p + 1] = sz(m, p);
        m->FC[p + 1] = uniform ? 1.0 : xe_cost(in, p, d);
        m->odev[p + 1] = -1; /* park x_p on the device with the cheapest round trip */
        for (int e = 0; m->offload && e < in->ndev; e++) {
            if (e == d || in->dev[e].budget < sz(m, p)) continue;
            double rt = xe_copy_cost(in, p, d, e) + xe_copy_cost(in, p, e, d);
            if (m->odev[p + 1] < 0 || rt < m->OC[p + 1]) {
                m->odev[p + 1] = e;
                m->OC[p + 1] = rt;
            }
        }
    }
    /* groups: a backward node joins the group of the path node it reads, or, reading
     * none, the group of its predecessor (group L for the first one); contiguous and
     * in decreasing order of p since the reads are non-increasing */
    int k = L + 1;
    int cur_front = L;
    for (int p = L; p >= 0; p--) {
        m->front[p + 1] = cur_front;
        m->gbeg[p + 1] = k;
        while (k < g->n) {
            int f = ch->fread[k - L - 1];
            int grp = f >= 0 ? f : (k == L + 1 ? L : -2);
            if (grp == -2) grp = p; /* no read: stays with the group being filled */
            if (grp != p) break;
            k++;
        }
        m->gend[p + 1] = k;
        if (k > m->gbeg[p + 1]) cur_front = k - 1;
    }
    XE_ASSERT(k == g->n, "chain groups cover every backward node");
    m->front[0] = cur_front;
    m->gbeg[0] = m->gend[0] = g->n;
    for (int p = 0; p <= L; p++) {
        m->D[p + 1] = p == L ? 0 : sz(m, m->front[p + 1]);
        int rc = group_run(m, p, &m->GP[p + 1], &m->GC[p + 1], NULL);
        XE_ASSERT(rc == XE_OK, "group_run without output cannot fail");
    }
    return XE_OK;
}

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

static int tidx(int L, int kind, int s, int t) { return (kind * (L + 2) + (s + 1)) * (L + 2) + (t + 1); }

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

/* 1 when some group among positions a..b has a backward node (backward nodes of groups
 * b..a are gbeg[b] .. gend[a]-1, contiguous). */
static int has_work(const xe_cdp_model *m, int a, int b)
{
    if (a < 0) a = 0;
    return a <= b && m->gend[a + 1] > m->gbeg[b + 1];
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
    const double *FC = m->FC + 1, *GC = m->GC + 1;
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
                        int at = tidx(L, kind, s, tt - 1);
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
                        fcost += FC[sp];
                        int64_t prev = sp - 1 > s ? A[sp - 1] : 0;
                        int64_t rh = As + D[tt] + prev + A[sp];
                        int64_t rf = (sp == s + 1 ? As : 0) + D[tt] + prev + A[sp];
                        if (rh > req_hold) req_hold = rh;
                        if (rf > req_free) req_free = rf;
                        sw_cost[sp + 1] = fcost;
                        sw_hold[sp + 1] = req_hold;
                        sw_free[sp + 1] = req_free;
                    }
                    for (int sp = s + 1; sp <= tt; sp++) {
                        /* persistent child: x_sp kept through its own group */
                        int hold = kind == 0 || has_work(m, s + 1, sp - 1);
                        if (add_cand(t, tidx(L, 0, sp, tt), hold ? As : 0, hold ? tidx(L, kind, s, sp - 1) : -1,
                                     hold ? sw_hold[sp + 1] : sw_free[sp + 1], cap, sw_cost[sp + 1], sp, &acc,
                                     &cand, &tmp))
                            goto oom;
                        /* the same, x_s parked on another device while the child runs */
                        if (hold && park &&
                            add_cand(t, tidx(L, 0, sp, tt), 0, tidx(L, kind, s, sp - 1), sw_free[sp + 1], cap,
                                     sw_cost[sp + 1] + m->OC[s + 1], sp + XE_CDP_OFF, &acc, &cand, &tmp))
                            goto oom;
                        /* non-persistent child: x_sp serves groups tt..sp+1, is freed and
                         * recomputed later for group sp */
                        if (sp < tt) {
                            hold = kind == 0 || has_work(m, s + 1, sp);
                            if (add_cand(t, tidx(L, 1, sp, tt), hold ? As : 0, hold ? tidx(L, kind, s, sp) : -1,
                                         hold ? sw_hold[sp + 1] : sw_free[sp + 1], cap, sw_cost[sp + 1], -10 - sp,
                                         &acc, &cand, &tmp))
                                goto oom;
                            if (hold && park &&
                                add_cand(t, tidx(L, 1, sp, tt), 0, tidx(L, kind, s, sp), sw_free[sp + 1], cap,
                                         sw_cost[sp + 1] + m->OC[s + 1], -10 - sp - XE_CDP_OFF, &acc, &cand, &tmp))
                                goto oom;
                        }
                    }
                }
                if (table_store(t, tidx(L, kind, s, tt), &acc)) goto oom;
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
    int at = tidx(t->L, 0, -1, t->L);
    *pts = t->pts + t->off[at];
    *cnt = t->cnt[at];
}

/* ---- lazy evaluation ------------------------------------------------------------------ */

/* The same recursion evaluated top-down only at the budgets actually queried. A query of
 * (kind, s, t) at m returns the optimum there and an interval [lo, hi] of m over which
 * that value and choice stay optimal; the interval is cached, so a later query inside
 * it costs a binary search. Every function of the recursion is non-increasing in m, so:
 * below m the argmin's value holds down to its own interval's start (every other
 * candidate only grows), and above m it holds until the argmin's interval ends or a
 * candidate that could still beat it (its lower bound, everything computed once, is
 * below the optimum) changes value. */

typedef struct lz_ent {
    int64_t lo, hi; /* bytes: the entry holds for lo <= m <= hi */
    double cost;    /* seconds, INFINITY when infeasible; a lower bound when lbnd */
    int choice;     /* as xe_cdp_pt.choice */
    int lbnd;       /* 1: only "the optimum is at least cost" is known on [lo, hi] (an
                       evaluation cut short by its caller's bound) */
} lz_ent;

typedef struct lz_vec {
    lz_ent *e;
    int n, cap;
} lz_vec;

struct xe_cdp_lazy {
    const xe_cdp_model *m;
    int L;
    lz_vec *v;    /* [2][L+2][L+2] cached intervals, sorted by lo, disjoint */
    double *pfc;  /* [L+2] pfc[p+1] = sum of FC over path nodes 0..p (pfc[0] = 0) */
    double *pgc;  /* [L+2] the same for group costs */
    int64_t *mr;  /* [2][L+2][L+2] the least budget at which (kind, s, t) is feasible */
    int *hw;      /* [L+2] hw[t+1]: the highest path node p <= t whose group has work (L for
                     t = L: x_L is always computed), -1 when none */
    long nent;    /* evaluations done (entries cached) */
    xe_cdp_lazy **dz; /* [ndz] subproblems may be delegated to these (other devices, whole
                         budget each; not owned) */
    int ndz;
    double deadline;     /* xe_now() seconds after which evaluations stop; 0: none */
    unsigned long ticks; /* evaluations since the last clock read */
    int timed_out;       /* the deadline passed during an evaluation */
};

static inline int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* Lower bound on the cost of (kind, s, t): every group of the subproblem, and every path
 * node from s+1 up to the highest one a group of it reads, computed once (an empty group
 * t < L may be skipped, and x_t with it). */
static double lz_min(const xe_cdp_lazy *z, int kind, int s, int t)
{
    if (t < s) return 0.0;
    int top = z->hw[t + 1];
    double f = top > s ? z->pfc[top + 1] - z->pfc[s + 1] : 0.0;
    int g0 = kind == 0 ? s : s + 1;
    if (g0 < 0) g0 = 0;
    return f + (t >= g0 ? z->pgc[t + 1] - z->pgc[g0] : 0.0);
}

/* Delegation (docs/chain-dp.md, "Several devices"): subproblem (kind, s, t), s < t, not
 * the whole problem, run on another device e: x_s and front(t) copied to e and freed on
 * d, the subproblem run on e by e's own DP with all of e's budget, the gradient it ends
 * with copied back and freed on e. */
static int lz_del_ok(const xe_cdp_lazy *z, int kind, int s, int tt)
{
    return z->ndz > 0 && s < tt && !(kind == 0 && s == -1 && tt == z->L);
}

/* Node id of the gradient (kind, s, t) ends with: front(s-1) for Opt, front(s) for Opt'. */
static int lz_del_end(const xe_cdp_model *m, int kind, int s) { return kind == 0 ? m->front[s >= 0 ? s : 0] : m->front[s + 1]; }

/* Bytes on d a delegated (kind, s, t) needs: its boundary before the copies out, the
 * returned gradient after. */
static int64_t lz_del_req(const xe_cdp_model *m, int kind, int s, int tt)
{
    int64_t r = (s >= 0 ? m->A[s + 1] : 0) + m->D[tt + 1], e = sz(m, lz_del_end(m, kind, s));
    return e > r ? e : r;
}

/* Seconds of the copies of a delegation to device e. */
static double lz_del_copies(const xe_cdp_model *m, int kind, int s, int tt, int e)
{
    const xe_instance *in = m->in;
    double c = xe_copy_cost(in, lz_del_end(m, kind, s), e, m->d);
    if (s >= 0) c += xe_copy_cost(in, s, m->d, e);
    if (tt < m->L) c += xe_copy_cost(in, m->front[tt + 1], m->d, e);
    return c;
}

/* mr[tidx(kind, s, t)]: the least budget at which (kind, s, t) has a schedule of the
 * class (INT64_MAX: none), by the recursion on requirements alone:
 * max(sweep floor, child's least + shift, tail's least), minimised over the choices. */
static void lz_minreq(const xe_cdp_lazy *z, int64_t *mr)
{
    const xe_cdp_model *m = z->m;
    int L = m->L;
    const int64_t *A = m->A + 1, *D = m->D + 1, *GP = m->GP + 1;
    for (int len = 0; len <= L + 1; len++)
        for (int s = -1; s + len <= L; s++) {
            int tt = s + len;
            int64_t As = s >= 0 ? A[s] : 0;
            for (int kind = 0; kind < 2; kind++) {
                int64_t best = INT64_MAX;
                if (len == 0) {
                    best = s < 0 ? 0 : kind == 0 ? GP[s] : As + D[s];
                } else {
                    if (tt < L && m->gend[tt + 1] == m->gbeg[tt + 1]) best = mr[tidx(L, kind, s, tt - 1)];
                    int park = s >= 0 && m->offload && m->odev[s + 1] >= 0;
                    int64_t req_hold = 0, req_free = 0;
                    for (int sp = s + 1; sp <= tt; sp++) {
                        int64_t prev = sp - 1 > s ? A[sp - 1] : 0;
                        int64_t rh = As + D[tt] + prev + A[sp];
                        int64_t rf = (sp == s + 1 ? As : 0) + D[tt] + prev + A[sp];
                        if (rh > req_hold) req_hold = rh;
                        if (rf > req_free) req_free = rf;
                        if (req_free >= best) break;
                        for (int np = 0; np < 2; np++) {
                            if (np && sp == tt) break;
                            int tail_hi = np ? sp : sp - 1;
                            int hold = kind == 0 || has_work(m, s + 1, tail_hi);
                            int64_t c = mr[tidx(L, np, sp, tt)], tl = hold ? mr[tidx(L, kind, s, tail_hi)] : 0;
                            if (c == INT64_MAX || tl == INT64_MAX) continue;
                            int64_t r = hold ? req_hold : req_free;
                            if (c + (hold ? As : 0) > r) r = c + (hold ? As : 0);
                            if (tl > r) r = tl;
                            if (r < best) best = r;
                            if (hold && park) { /* parked: the child has all of m */
                                r = req_free > c ? req_free : c;
                                if (tl > r) r = tl;
                                if (r < best) best = r;
                            }
                        }
                    }
                    for (int j = 0; j < z->ndz; j++) { /* delegated: d holds only the boundary */
                        int64_t r = lz_del_req(m, kind, s, tt);
                        const xe_cdp_lazy *ze = z->dz[j];
                        if (lz_del_ok(z, kind, s, tt) &&
                            ze->mr[tidx(L, kind, s, tt)] <= m->in->dev[ze->m->d].budget && r < best)
                            best = r;
                    }
                }
                mr[tidx(L, kind, s, tt)] = best;
            }
        }
}

void xe_cdp_lazy_free(xe_cdp_lazy *z)
{
    if (!z) return;
    if (z->v) {
        size_t nn = 2 * (size_t)(z->L + 2) * (size_t)(z->L + 2);
        for (size_t i = 0; i < nn; i++) free(z->v[i].e);
    }
    free(z->v);
    free(z->pfc);
    free(z->pgc);
    free(z->mr);
    free(z->hw);
    free(z->dz);
    free(z);
}

int xe_cdp_lazy_new(const xe_cdp_model *m, xe_cdp_lazy **out, xe_err *err)
{
    *out = NULL;
    xe_cdp_lazy *z = calloc(1, sizeof *z);
    if (!z) return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    int L = m->L;
    z->m = m;
    z->L = L;
    z->v = calloc(2 * (size_t)(L + 2) * (size_t)(L + 2), sizeof *z->v);
    z->pfc = calloc((size_t)L + 2, sizeof *z->pfc);
    z->pgc = calloc((size_t)L + 2, sizeof *z->pgc);
    z->mr = malloc(2 * (size_t)(L + 2) * (size_t)(L + 2) * sizeof *z->mr);
    z->hw = malloc(((size_t)L + 2) * sizeof *z->hw);
    if (!z->v || !z->pfc || !z->pgc || !z->mr || !z->hw) {
        xe_cdp_lazy_free(z);
        return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory (L = %d)", L);
    }
    for (int p = 0; p <= L; p++) {
        z->pfc[p + 1] = z->pfc[p] + m->FC[p + 1];
        z->pgc[p + 1] = z->pgc[p] + m->GC[p + 1];
    }
    z->hw[0] = -1;
    for (int p = 0; p <= L; p++)
        z->hw[p + 1] = p == L || m->gend[p + 1] > m->gbeg[p + 1] ? p : z->hw[p];
    lz_minreq(z, z->mr);
    *out = z;
    return XE_OK;
}

int xe_cdp_lazy_delegate(xe_cdp_lazy *z, xe_cdp_lazy *ze, xe_err *err)
{
    const xe_cdp_model *m = z->m;
    if (m->offload || ze->m->offload || ze->ndz || ze->L != z->L || ze->m->d == m->d || ze->m->uniform ||
        m->uniform)
        return xe_err_set(err, XE_EINVAL, "chain dp: delegation needs two plain models of the same chain on two "
                                          "devices, without parking");
    xe_cdp_lazy **q = realloc(z->dz, (size_t)(z->ndz + 1) * sizeof *q);
    if (!q) return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    z->dz = q;
    z->dz[z->ndz++] = ze;
    /* lower bounds: each node at its cheapest device among d and the delegates (copies
     * only add); least budgets: with delegation as one more choice */
    double of = 0.0, og = 0.0; /* the old prefix sums at p */
    for (int p = 0; p <= z->L; p++) {
        double f0 = z->pfc[p + 1] - of, g0 = z->pgc[p + 1] - og; /* old per-node bounds */
        of = z->pfc[p + 1];
        og = z->pgc[p + 1];
        double fc = ze->m->FC[p + 1] < f0 ? ze->m->FC[p + 1] : f0;
        double gc = ze->m->GC[p + 1] < g0 ? ze->m->GC[p + 1] : g0;
        z->pfc[p + 1] = z->pfc[p] + fc;
        z->pgc[p + 1] = z->pgc[p] + gc;
    }
    lz_minreq(z, z->mr);
    return XE_OK;
}

long xe_cdp_lazy_entries(const xe_cdp_lazy *z) { return z->nent; }

static int lz_eval(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out);

/* Looks (kind, s, t) up at m without evaluating: 1 with *out the exact entry holding m;
 * else 0 with *lb a lower bound on the value at every budget up to *lbhi (a bound entry
 * holding m, or the cost of the next cached entry above m, which holds up to its end, or
 * the compute-once bound, whichever is largest), and *pos the insertion index. */
static int lz_peek(const xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, lz_ent *out, double *lb,
                   int64_t *lbhi, int *pos)
{
    const lz_vec *v = &z->v[tidx(z->L, kind, s, tt)];
    int lo = 0; /* first entry with lo > mm (branch-free binary search) */
    if (v->n > 0) {
        const lz_ent *b = v->e;
        int n = v->n;
        while (n > 1) {
            int half = n / 2;
            b = b[half].lo <= mm ? b + half : b;
            n -= half;
        }
        lo = (int)(b - v->e) + (b->lo <= mm);
    }
    *pos = lo;
    *lb = lz_min(z, kind, s, tt);
    *lbhi = INT64_MAX;
    if (lo > 0 && v->e[lo - 1].hi >= mm) {
        *out = v->e[lo - 1];
        if (!out->lbnd) return 1;
        if (out->cost > *lb) {
            *lb = out->cost;
            *lbhi = out->hi;
        }
    }
    if (lo < v->n && v->e[lo].cost > *lb) {
        *lb = v->e[lo].cost;
        *lbhi = v->e[lo].hi;
    }
    return 0;
}

/* The entry of (kind, s, t) holding m when its value is below ub (seconds; INFINITY:
 * always): cached, or evaluated and cached; otherwise possibly only a bound entry (lbnd,
 * cost >= ub). -1: no memory. */
static int lz_query(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out)
{
    double lb;
    int64_t lbhi;
    int pos;
    if (lz_peek(z, kind, s, tt, mm, out, &lb, &lbhi, &pos)) return 0;
    if (lb >= ub) {
        *out = (lz_ent){mm, lbhi, lb, -1, 1};
        return 0;
    }
    lz_ent e;
    if (lz_eval(z, kind, s, tt, mm, ub, &e)) return -1;
    XE_ASSERT(e.lo <= mm && mm <= e.hi, "a lazy entry holds the budget it was evaluated at");
    lz_vec *v = &z->v[tidx(z->L, kind, s, tt)];
    lz_ent old;
    int had = lz_peek(z, kind, s, tt, mm, &old, &lb, &lbhi, &pos);
    XE_ASSERT(!had, "no exact entry appears during its own evaluation");
    if (pos > 0 && v->e[pos - 1].hi >= mm) { /* a bound entry holding m: replaced */
        memmove(v->e + pos - 1, v->e + pos, (size_t)(v->n - pos) * sizeof *v->e);
        v->n--;
        pos--;
    }
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 4;
        lz_ent *q = realloc(v->e, (size_t)cap * sizeof *q);
        if (!q) return -1;
        v->e = q;
        v->cap = cap;
    }
    /* entries are disjoint: the new one lies between pos-1 and pos; clip to them */
    if (pos > 0 && e.lo <= v->e[pos - 1].hi) e.lo = v->e[pos - 1].hi + 1;
    if (pos < v->n && e.hi >= v->e[pos].lo) e.hi = v->e[pos].lo - 1;
    memmove(v->e + pos + 1, v->e + pos, (size_t)(v->n - pos) * sizeof *v->e);
    v->e[pos] = e;
    v->n++;
    z->nent++;
    *out = e;
    return 0;
}

/* Running minimum over the candidates of one evaluation. */
typedef struct lz_acc {
    double best;
    int choice;
    int64_t blo, bhi; /* the argmin's own interval */
    int64_t hcap;     /* the smallest end of a stretch over which some other candidate is
                         known not to beat the optimum (beyond it, it might) */
    double lbmin;     /* the least of the lower bounds of the candidates set aside, each
                         valid on [0, hcap]: with no argmin, the value is at least this */
} lz_acc;

static inline void lz_fold(lz_acc *a, int64_t hi)
{
    if (hi < a->hcap) a->hcap = hi;
}

static inline void lz_note(lz_acc *a, double bound)
{
    if (bound < a->lbmin) a->lbmin = bound;
}

/* A candidate set aside: at least bound at every budget up to hi. */
static inline void lz_aside(lz_acc *a, double bound, int64_t hi)
{
    lz_fold(a, hi);
    lz_note(a, bound);
}

/* A candidate of value val on [lo, hi] (its components constant there; INFINITY:
 * infeasible there); lb: its value's lower bound at every budget. */
static void lz_offer(lz_acc *a, double val, double lb, int64_t lo, int64_t hi, int choice)
{
    if (val < a->best) {
        if (a->best < INFINITY) lz_aside(a, a->best, a->bhi); /* the old argmin may drop again */
        a->best = val;
        a->choice = choice;
        a->blo = lo;
        a->bhi = hi;
    } else if (lb < a->best) {
        lz_aside(a, val, hi);
    } else {
        lz_note(a, lb);
    }
}

/* The last tail looked up by one evaluation (the tail (kind, s, j) at m serves the
 * persistent candidate sp = j + 1 and the non-persistent one sp = j). Exact entries stay
 * exact, lower bounds stay valid (the cache only grows). */
typedef struct lz_tail {
    int j, exact;
    lz_ent e;
    double lb;
    int64_t lbhi;
} lz_tail;

/* Candidate: add seconds, then child (ckind, sp, tt) at m - sh, then the tail (kind, s,
 * tail_hi) at m (none when has_tail is 0), feasible from floor_req bytes. A component
 * not yet evaluated is first bounded from below by the cache; when the bound already
 * shows the candidate cannot beat the optimum found, it is not evaluated. */
static int lz_cand(xe_cdp_lazy *z, lz_acc *a, lz_tail *tm, int64_t mm, double add, int ckind, int sp, int tt,
                   int64_t sh, int kind, int s, int tail_hi, int has_tail, int64_t floor_req, int choice)
{
    double lb_tail = has_tail ? lz_min(z, kind, s, tail_hi) : 0.0;
    double lb = add + lz_min(z, ckind, sp, tt) + lb_tail;
    if (!(lb < a->best)) { /* can never beat the optimum found */
        lz_note(a, lb);
        return 0;
    }
    if (mm < floor_req) {
        lz_offer(a, INFINITY, lb, 0, floor_req - 1, choice);
        return 0;
    }
    int64_t cmr = z->mr[tidx(z->L, ckind, sp, tt)];
    if (cmr == INT64_MAX) return 0; /* never feasible */
    if (mm - sh < cmr) {
        lz_offer(a, INFINITY, lb, 0, sat_add(cmr - 1, sh), choice);
        return 0;
    }
    if (has_tail) {
        int64_t tmr = z->mr[tidx(z->L, kind, s, tail_hi)];
        if (tmr == INT64_MAX) return 0;
        if (mm < tmr) {
            lz_offer(a, INFINITY, lb, 0, tmr - 1, choice);
            return 0;
        }
    }
    lz_ent c;
    double clb;
    int64_t clbhi;
    int pos;
    if (!lz_peek(z, ckind, sp, tt, mm - sh, &c, &clb, &clbhi, &pos)) {
        if (!(add + clb + lb_tail < a->best)) { /* not below the optimum up to clbhi */
            lz_aside(a, add + clb + lb_tail, sat_add(clbhi, sh));
            return 0;
        }
        if (lz_query(z, ckind, sp, tt, mm - sh, a->best - add - lb_tail, &c)) return -1;
        if (c.lbnd) { /* at least the bound: not below the optimum up to its end */
            lz_aside(a, add + c.cost + lb_tail, sat_add(c.hi, sh));
            return 0;
        }
    }
    int64_t lo = c.lo + sh > floor_req ? c.lo + sh : floor_req, hi = sat_add(c.hi, sh);
    if (c.cost == INFINITY) {
        lz_offer(a, INFINITY, lb, lo, hi, choice);
        return 0;
    }
    double part = add + c.cost;
    if (!(part + lb_tail < a->best)) { /* cannot beat it while the child stays constant */
        lz_aside(a, part + lb_tail, hi);
        return 0;
    }
    double val = part;
    if (has_tail) {
        if (tm->j != tail_hi) {
            tm->j = tail_hi;
            tm->exact = lz_peek(z, kind, s, tail_hi, mm, &tm->e, &tm->lb, &tm->lbhi, &pos);
        }
        if (!tm->exact) {
            if (!(part + tm->lb < a->best)) {
                lz_aside(a, part + tm->lb, hi < tm->lbhi ? hi : tm->lbhi);
                return 0;
            }
            if (lz_query(z, kind, s, tail_hi, mm, a->best - part, &tm->e)) return -1;
            if (tm->e.lbnd) {
                tm->lb = tm->e.cost;
                tm->lbhi = tm->e.hi;
                lz_aside(a, part + tm->lb, hi < tm->lbhi ? hi : tm->lbhi);
                return 0;
            }
            tm->exact = 1;
        }
        const lz_ent t = tm->e;
        if (t.lo > lo) lo = t.lo;
        if (t.hi < hi) hi = t.hi;
        val = t.cost == INFINITY ? INFINITY : part + t.cost;
    }
    lz_offer(a, val, lb, lo, hi, choice);
    return 0;
}

/* Evaluates the candidates of (kind, s, tt) at m; only choice `only` when only != INT_MIN
 * (a hint tried first), else all. */
static int lz_cands(xe_cdp_lazy *z, lz_acc *a, int kind, int s, int tt, int64_t mm, int only)
{
    const xe_cdp_model *m = z->m;
    int L = m->L;
    const int64_t *A = m->A + 1, *D = m->D + 1;
    const double *FC = m->FC + 1;
    int64_t As = s >= 0 ? A[s] : 0;
    int all = only == INT_MIN;
    if (tt < L && m->gend[tt + 1] == m->gbeg[tt + 1] && (all || only == -2)) {
        lz_ent e;
        if (lz_query(z, kind, s, tt - 1, mm, a->best, &e)) return -1;
        if (e.lbnd)
            lz_aside(a, e.cost, e.hi);
        else
            lz_offer(a, e.cost, lz_min(z, kind, s, tt - 1), e.lo, e.hi, -2);
    }
    int park = s >= 0 && m->offload && m->odev[s + 1] >= 0;
    int osp = -1; /* the checkpoint of the hint */
    if (!all) {
        int c = only;
        if (c >= XE_CDP_OFF) c -= XE_CDP_OFF;
        else if (c <= -10 - XE_CDP_OFF) c += XE_CDP_OFF;
        osp = c <= -10 ? -10 - c : c;
        if (osp <= s || osp > tt) return 0;
    }
    double fcost = 0.0;
    int64_t req_hold = 0, req_free = 0;
    lz_tail tmh = {INT_MIN, 0, {0, 0, 0.0, 0, 0}, 0.0, 0}, *tm = &tmh;
    for (int sp = s + 1; sp <= tt; sp++) {
        fcost += FC[sp];
        int64_t prev = sp - 1 > s ? A[sp - 1] : 0;
        int64_t rh = As + D[tt] + prev + A[sp];
        int64_t rf = (sp == s + 1 ? As : 0) + D[tt] + prev + A[sp];
        if (rh > req_hold) req_hold = rh;
        if (rf > req_free) req_free = rf;
        if (req_free > mm) { /* this and every later sweep needs more than m */
            lz_fold(a, req_free - 1);
            break;
        }
        if (!all && sp != osp) continue;
        /* every candidate from here on costs at least this (the bound grows with sp, the
         * non-persistent and parked variants of sp are not below it): stop when it
         * cannot beat the optimum found */
        double lbp = fcost + lz_min(z, 0, sp, tt) + lz_min(z, kind, s, sp - 1);
        if (all && !(lbp < a->best)) {
            lz_note(a, lbp);
            break;
        }
        int hold = kind == 0 || has_work(m, s + 1, sp - 1);
        if ((all || only == sp) && lz_cand(z, a, tm, mm, fcost, 0, sp, tt, hold ? As : 0, kind, s, sp - 1, hold,
                                           hold ? req_hold : req_free, sp))
            return -1;
        if (hold && park && (all || only == sp + XE_CDP_OFF) &&
            lz_cand(z, a, tm, mm, fcost + m->OC[s + 1], 0, sp, tt, 0, kind, s, sp - 1, 1, req_free, sp + XE_CDP_OFF))
            return -1;
        if (sp < tt) {
            hold = kind == 0 || has_work(m, s + 1, sp);
            if ((all || only == -10 - sp) &&
                lz_cand(z, a, tm, mm, fcost, 1, sp, tt, hold ? As : 0, kind, s, sp, hold, hold ? req_hold : req_free,
                        -10 - sp))
                return -1;
            if (hold && park && (all || only == -10 - sp - XE_CDP_OFF) &&
                lz_cand(z, a, tm, mm, fcost + m->OC[s + 1], 1, sp, tt, 0, kind, s, sp, 1, req_free,
                        -10 - sp - XE_CDP_OFF))
                return -1;
        }
    }
    return 0;
}

/* Evaluates (kind, s, t) at m. With ub < INFINITY, candidates that cannot go below ub
 * are not evaluated, and when none does the result is a bound entry (cost: the least of
 * the candidates' lower bounds, at least ub). */
static int lz_eval(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out)
{
    if (z->deadline > 0 && (++z->ticks & 255) == 0 && xe_now() > z->deadline) {
        z->timed_out = 1; /* unwinds like a failure; xe_cdp_lazy_query tells them apart */
        return -1;
    }
    const xe_cdp_model *m = z->m;
    const int64_t *A = m->A + 1, *D = m->D + 1, *GP = m->GP + 1;
    const double *GC = m->GC + 1;
    int64_t As = s >= 0 ? A[s] : 0;
    if (tt == s) {
        int64_t req = 0;
        double c = 0.0;
        if (s >= 0 && kind == 0) {
            req = GP[s];
            c = GC[s];
        } else if (s >= 0) {
            req = As + D[s];
        }
        *out = mm >= req ? (lz_ent){req, INT64_MAX, c, -3, 0} : (lz_ent){0, req - 1, INFINITY, -3, 0};
        return 0;
    }
    int64_t mr = z->mr[tidx(z->L, kind, s, tt)];
    if (mm < mr) { /* infeasible below its least budget */
        *out = (lz_ent){0, mr - 1, INFINITY, -1, 0};
        return 0;
    }
    lz_acc a = {ub, -1, 0, INT64_MAX, INT64_MAX, INFINITY}; /* ub: a virtual candidate, choice -1 */
    if (lz_del_ok(z, kind, s, tt)) {
        int64_t req = lz_del_req(m, kind, s, tt);
        for (int j = 0; j < z->ndz; j++) {
            xe_cdp_lazy *ze = z->dz[j];
            int e = ze->m->d;
            double cp = lz_del_copies(m, kind, s, tt, e), lb = cp + lz_min(ze, kind, s, tt);
            if (!(lb < a.best)) {
                lz_note(&a, lb);
                continue;
            }
            if (mm < req) {
                lz_offer(&a, INFINITY, lb, 0, req - 1, XE_CDP_DEL - j);
                continue;
            }
            lz_ent r; /* a constant of m: e's whole budget */
            if (lz_query(ze, kind, s, tt, m->in->dev[e].budget, a.best - cp, &r)) return -1;
            if (r.lbnd) /* a constant of m: at least this everywhere */
                lz_note(&a, cp + r.cost);
            else if (r.cost < INFINITY)
                lz_offer(&a, cp + r.cost, lb, req, INT64_MAX, XE_CDP_DEL - j);
        }
    }
    /* hint: the choice of the nearest cached entry of this subproblem */
    const lz_vec *v = &z->v[tidx(z->L, kind, s, tt)];
    int hint = INT_MIN;
    {
        int lo = 0, hi = v->n;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (v->e[mid].lo <= mm) lo = mid + 1;
            else hi = mid;
        }
        if (lo < v->n && !v->e[lo].lbnd && v->e[lo].cost < INFINITY) hint = v->e[lo].choice;
        else if (lo > 0 && !v->e[lo - 1].lbnd && v->e[lo - 1].cost < INFINITY) hint = v->e[lo - 1].choice;
    }
    if (hint != INT_MIN && lz_cands(z, &a, kind, s, tt, mm, hint)) return -1;
    if (lz_cands(z, &a, kind, s, tt, mm, INT_MIN)) return -1;
    if (a.choice == -1) /* nothing below ub: at least lbmin (>= ub) here and below, up to
                           hcap; exactly infeasible when every candidate is */
        *out = (lz_ent){0, a.hcap, a.lbmin, -1, a.lbmin < INFINITY};
    else
        *out = (lz_ent){a.blo, a.bhi < a.hcap ? a.bhi : a.hcap, a.best, a.choice, 0};
    return 0;
}

/* The deadline of z's evaluations and of its delegates' (0: none). */
static void lz_set_deadline(xe_cdp_lazy *z, double deadline)
{
    z->deadline = deadline;
    for (int j = 0; j < z->ndz; j++) z->dz[j]->deadline = deadline;
}

int xe_cdp_lazy_query(xe_cdp_lazy *z, int64_t budget, double *cost, xe_err *err)
{
    lz_ent e;
    if (lz_query(z, 0, -1, z->L, budget, INFINITY, &e)) {
        int late = z->timed_out;
        for (int j = 0; j < z->ndz; j++) late |= z->dz[j]->timed_out;
        return late ? xe_err_set(err, XE_ETIMEOUT, "chain dp: time limit reached")
                    : xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    }
    XE_ASSERT(!e.lbnd, "an unbounded query returns an exact entry");
    *cost = e.cost;
    return XE_OK;
}

/* ---- reconstruction ------------------------------------------------------------------- */

/* The choice of (kind, s, t) at budget m (from the frontier table or the lazy cache):
 * 0, -1 when nothing fits (XE_EINFEASIBLE), -2 out of memory. */
typedef struct pick_ctx {
    const xe_cdp_table *t;
    xe_cdp_lazy *z;
} pick_ctx;

static int pick(const pick_ctx *pc, int kind, int s, int tt, int64_t budget, int *choice)
{
    if (pc->z) {
        lz_ent e;
        if (lz_query(pc->z, kind, s, tt, budget, INFINITY, &e)) return -2;
        if (e.cost == INFINITY) return -1;
        *choice = e.choice;
        return 0;
    }
    const xe_cdp_table *t = pc->t;
    int at = tidx(t->L, kind, s, tt);
    const xe_cdp_pt *p = t->pts + t->off[at];
    int k = -1;
    for (int q = 0; q < t->cnt[at] && p[q].req <= budget; q++) k = q;
    if (k < 0) return -1;
    *choice = p[k].choice;
    return 0;
}

static int emit_rec(const xe_cdp_model *m, const pick_ctx *pc, int kind, int s, int tt, int64_t budget,
                    xe_schedule *out)
{
    int L = m->L, ch = 0;
    int pr = pick(pc, kind, s, tt, budget, &ch);
    if (pr == -2) return XE_ENOMEM;
    if (pr < 0) return XE_EINFEASIBLE;
    if (ch == -3) {
        if (s < 0) return XE_OK;
        if (kind == 1) return s < L && xe_schedule_push(out, XE_EV_FREE, s, m->d, -1) ? XE_ENOMEM : XE_OK;
        int64_t pk;
        double c;
        return group_run(m, s, &pk, &c, out);
    }
    if (ch == -2) return emit_rec(m, pc, kind, s, tt - 1, budget, out);
    if (ch <= XE_CDP_DEL && ch > XE_CDP_DEL - 64) {
        xe_cdp_lazy *ze = pc->z->dz[XE_CDP_DEL - ch];
        int d = m->d, e = ze->m->d, fr = tt < L ? m->front[tt + 1] : -1, en = lz_del_end(m, kind, s);
        if ((s >= 0 && (xe_schedule_push(out, XE_EV_COPY, s, d, e) || xe_schedule_push(out, XE_EV_FREE, s, d, -1))) ||
            (fr >= 0 && (xe_schedule_push(out, XE_EV_COPY, fr, d, e) || xe_schedule_push(out, XE_EV_FREE, fr, d, -1))))
            return XE_ENOMEM;
        pick_ctx pe = {NULL, ze};
        int rc = emit_rec(ze->m, &pe, kind, s, tt, m->in->dev[e].budget, out);
        if (rc) return rc;
        if (xe_schedule_push(out, XE_EV_COPY, en, e, d) || xe_schedule_push(out, XE_EV_FREE, en, e, -1))
            return XE_ENOMEM;
        return XE_OK;
    }
    int park = 0;
    if (ch >= XE_CDP_OFF) {
        park = 1;
        ch -= XE_CDP_OFF;
    } else if (ch <= -10 - XE_CDP_OFF) {
        park = 1;
        ch += XE_CDP_OFF;
    }
    int np = ch <= -10;
    int sp = np ? -10 - ch : ch;
    int tail_hi = np ? sp : sp - 1;
    int hold = kind == 0 || has_work(m, s + 1, tail_hi);
    int d = m->d, e = park ? m->odev[s + 1] : -1;
    for (int j = s + 1; j <= sp; j++) {
        if (xe_schedule_push(out, XE_EV_COMPUTE, j, d, -1)) return XE_ENOMEM;
        if (j - 1 > s && xe_schedule_push(out, XE_EV_FREE, j - 1, d, -1)) return XE_ENOMEM;
        if (j == s + 1 && park &&
            (xe_schedule_push(out, XE_EV_COPY, s, d, e) || xe_schedule_push(out, XE_EV_FREE, s, d, -1)))
            return XE_ENOMEM;
        if (j == s + 1 && !hold && s >= 0 && xe_schedule_push(out, XE_EV_FREE, s, d, -1)) return XE_ENOMEM;
    }
    int64_t As = s >= 0 ? m->A[s + 1] : 0;
    int rc = emit_rec(m, pc, np, sp, tt, budget - (hold && !park ? As : 0), out);
    if (rc || !hold) return rc;
    if (park && (xe_schedule_push(out, XE_EV_COPY, s, e, d) || xe_schedule_push(out, XE_EV_FREE, s, e, -1)))
        return XE_ENOMEM;
    return emit_rec(m, pc, kind, s, tail_hi, budget, out);
}

int xe_cdp_emit(const xe_cdp_model *m, const xe_cdp_table *t, int64_t budget, xe_schedule *out,
                xe_err *err)
{
    pick_ctx pc = {t, NULL};
    int rc = emit_rec(m, &pc, 0, -1, m->L, budget, out);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "chain dp: out of memory");
    if (rc == XE_EINFEASIBLE)
        return xe_err_set(err, rc, "chain dp: no schedule of the class fits %lld on %s", (long long)budget,
                          m->in->dev[m->d].name);
    return rc;
}

int xe_cdp_lazy_emit(xe_cdp_lazy *z, int64_t budget, xe_schedule *out, xe_err *err)
{
    pick_ctx pc = {NULL, z};
    int rc = emit_rec(z->m, &pc, 0, -1, z->m->L, budget, out);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "chain dp: out of memory");
    if (rc == XE_EINFEASIBLE)
        return xe_err_set(err, rc, "chain dp: no schedule of the class fits %lld on %s", (long long)budget,
                          z->m->in->dev[z->m->d].name);
    return rc;
}

/* ---- the exact DP --------------------------------------------------------------------- */

int xe_cdp_run(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, xe_schedule *out,
               double *cost, int *over_park, xe_err *err)
{
    return xe_cdp_run_within(in, ch, d, offload, lazy, 0.0, out, cost, over_park, err);
}

int xe_cdp_run_within(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, double deadline,
                      xe_schedule *out, double *cost, int *over_park, xe_err *err)
{
    xe_cdp_model m;
    xe_cdp_table t;
    xe_cdp_lazy *z = NULL;
    xe_cdp_model *me = NULL; /* [ndev] delegates' models (lazy == 2) */
    xe_cdp_lazy **ze = NULL;
    memset(&t, 0, sizeof t);
    int start = out->len;
    *over_park = 0;
    if (lazy == 2 && offload)
        return xe_err_set(err, XE_EINVAL, "chain dp: delegation and parking are not combined");
    int rc = xe_cdp_model_init(&m, in, ch, d, 0, offload, err);
    if (rc) return rc;
    int64_t B = in->dev[d].budget;
    double pred = INFINITY;
    if (lazy) {
        rc = xe_cdp_lazy_new(&m, &z, err);
        if (rc) goto out_model;
        if (lazy == 2) {
            me = calloc((size_t)in->ndev, sizeof *me);
            ze = calloc((size_t)in->ndev, sizeof *ze);
            if (!me || !ze) {
                rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
                goto out_table;
            }
            for (int e = 0; e < in->ndev; e++) {
                if (e == d) continue;
                xe_err e2;
                int r2 = xe_cdp_model_init(&me[e], in, ch, e, 0, 0, &e2);
                if (r2 == XE_EINFEASIBLE) continue; /* e cannot run every node */
                if (!r2) r2 = xe_cdp_lazy_new(&me[e], &ze[e], &e2);
                if (!r2) r2 = xe_cdp_lazy_delegate(z, ze[e], &e2);
                if (r2) {
                    rc = xe_err_set(err, r2, "%s", e2.msg);
                    goto out_table;
                }
            }
        }
        lz_set_deadline(z, deadline); /* its delegates' too */
        rc = xe_cdp_lazy_query(z, B, &pred, err);
        lz_set_deadline(z, 0.0); /* the answer is in the cache: its reconstruction runs to the end */
    } else {
        rc = xe_cdp_solve(&m, B, &t, err);
        if (rc) goto out_model;
        const xe_cdp_pt *top;
        int ntop;
        xe_cdp_top(&t, &top, &ntop);
        for (int q = 0; q < ntop && top[q].req <= B; q++) pred = top[q].cost;
    }
    if (rc) goto out_table;
    if (pred == INFINITY) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: %s: no schedule of the DP class fits %lld B on %s",
                        in->g->name, (long long)B, in->dev[d].name);
        goto out_table;
    }
    rc = lazy ? xe_cdp_lazy_emit(z, B, out, err) : xe_cdp_emit(&m, &t, B, out, err);
    if (rc) goto out_table;
    /* judge the result: the replay of only the appended events */
    xe_schedule view = {out->ev + start, out->len - start, out->len - start};
    xe_sim_result res;
    xe_err e2;
    rc = xe_sim_run(in, &view, &res, &e2);
    if (rc == XE_ENOMEM) {
        rc = xe_err_set(err, rc, "chain dp: simulator out of memory");
        goto out_table;
    }
    if (rc && m.offload && res.bad_event >= 0 && res.bad_event < view.len &&
        view.ev[res.bad_event].kind == XE_EV_COPY && view.ev[res.bad_event].dst != d) {
        *over_park = 1;
        rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: parked checkpoints overflow: %s", e2.msg);
        goto out_table;
    }
    if (rc) {
        rc = xe_err_set(err, XE_EINTERNAL, "chain dp: the simulator rejects the DP schedule: %s", e2.msg);
        goto out_table;
    }
    if (fabs(res.total_time - pred) > 1e-9 * (fabs(pred) > 1.0 ? fabs(pred) : 1.0)) {
        rc = xe_err_set(err, XE_EINTERNAL, "chain dp: predicted cost %.17g but the simulator counts %.17g", pred,
                        res.total_time);
        goto out_table;
    }
    *cost = res.total_time;
out_table:
    if (rc) out->len = start;
    xe_cdp_table_clear(&t);
    xe_cdp_lazy_free(z);
    for (int e = 0; me && e < in->ndev; e++) {
        if (ze) xe_cdp_lazy_free(ze[e]);
        xe_cdp_model_clear(&me[e]);
    }
    free(ze);
    free(me);
out_model:
    xe_cdp_model_clear(&m);
    return rc;
}

int xe_chain_dp(const xe_instance *in, int d, xe_schedule *out, double *cost, xe_err *err)
{
    return xe_chain_dp_within(in, d, 0.0, out, cost, err);
}

int xe_chain_dp_within(const xe_instance *in, int d, double deadline, xe_schedule *out, double *cost, xe_err *err)
{
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "chain dp: device %d does not exist (instance has %d)", d, in->ndev);
    xe_chain ch;
    int rc = xe_chain_detect(in->g, &ch, err);
    if (rc) return rc;
    int over = 0;
    int start = out->len;
    rc = xe_cdp_run_within(in, &ch, d, 1, 1, deadline, out, cost, &over, err);
    if (over) rc = xe_cdp_run_within(in, &ch, d, 0, 1, deadline, out, cost, &over, err); /* without parking */
    if ((rc == XE_OK || rc == XE_EINFEASIBLE) && in->ndev > 1) {
        /* the same class with delegation of subproblems to the other devices instead of
         * parking; the cheaper of the two is kept */
        xe_schedule alt;
        xe_schedule_init(&alt);
        double c2 = INFINITY;
        xe_err e2;
        int r2 = xe_cdp_run_within(in, &ch, d, 0, 2, deadline, &alt, &c2, &over, &e2);
        if (r2 == XE_OK && (rc != XE_OK || c2 < *cost)) {
            out->len = start;
            r2 = xe_schedule_append(out, &alt);
            if (r2 == XE_OK) {
                rc = XE_OK;
                *cost = c2;
            } else {
                out->len = start;
                rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
            }
        } else if (r2 != XE_OK && r2 != XE_EINFEASIBLE) {
            out->len = start;
            rc = xe_err_set(err, r2, "%s", e2.msg);
        }
        xe_schedule_clear(&alt);
    }
    xe_chain_clear(&ch);
    return rc;
}
