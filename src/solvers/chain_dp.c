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
 * Each Opt(s, t, .) is held as its whole step function of m: the Pareto frontier of
 * (bytes needed, cost) pairs, so memory is exact in bytes, with no discretization
 * (Beaumont et al. 2019 discretize m instead). */
#include "chain_dp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"

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

/* ---- reconstruction ------------------------------------------------------------------- */

static int emit_rec(const xe_cdp_model *m, const xe_cdp_table *t, int kind, int s, int tt, int64_t budget,
                    xe_schedule *out)
{
    int L = m->L, at = tidx(L, kind, s, tt);
    const xe_cdp_pt *p = t->pts + t->off[at];
    int k = -1;
    for (int q = 0; q < t->cnt[at] && p[q].req <= budget; q++) k = q;
    if (k < 0) return XE_EINFEASIBLE;
    int ch = p[k].choice;
    if (ch == -3) {
        if (s < 0) return XE_OK;
        if (kind == 1) return s < L && xe_schedule_push(out, XE_EV_FREE, s, m->d, -1) ? XE_ENOMEM : XE_OK;
        int64_t pk;
        double c;
        return group_run(m, s, &pk, &c, out);
    }
    if (ch == -2) return emit_rec(m, t, kind, s, tt - 1, budget, out);
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
    int rc = emit_rec(m, t, np, sp, tt, budget - (hold && !park ? As : 0), out);
    if (rc || !hold) return rc;
    if (park && (xe_schedule_push(out, XE_EV_COPY, s, e, d) || xe_schedule_push(out, XE_EV_FREE, s, e, -1)))
        return XE_ENOMEM;
    return emit_rec(m, t, kind, s, tail_hi, budget, out);
}

int xe_cdp_emit(const xe_cdp_model *m, const xe_cdp_table *t, int64_t budget, xe_schedule *out,
                xe_err *err)
{
    int rc = emit_rec(m, t, 0, -1, m->L, budget, out);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "chain dp: out of memory");
    if (rc == XE_EINFEASIBLE)
        return xe_err_set(err, rc, "chain dp: no schedule of the class fits %lld on %s", (long long)budget,
                          m->in->dev[m->d].name);
    return rc;
}

/* ---- the exact DP --------------------------------------------------------------------- */

/* One DP run on device d, with or without parking checkpoints on other devices. Sets
 * *over_park when the simulator rejects the result only because a parking device
 * overflowed (the DP does not track their memory). */
static int dp_once(const xe_instance *in, const xe_chain *ch, int d, int offload, xe_schedule *out, double *cost,
                   int *over_park, xe_err *err)
{
    xe_cdp_model m;
    xe_cdp_table t;
    int start = out->len;
    *over_park = 0;
    int rc = xe_cdp_model_init(&m, in, ch, d, 0, offload, err);
    if (rc) return rc;
    int64_t B = in->dev[d].budget;
    rc = xe_cdp_solve(&m, B, &t, err);
    if (rc) goto out_model;
    const xe_cdp_pt *top;
    int ntop;
    xe_cdp_top(&t, &top, &ntop);
    double pred = INFINITY;
    for (int q = 0; q < ntop && top[q].req <= B; q++) pred = top[q].cost;
    if (pred == INFINITY) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: %s: no schedule of the DP class fits %lld B on %s",
                        in->g->name, (long long)B, in->dev[d].name);
        goto out_table;
    }
    rc = xe_cdp_emit(&m, &t, B, out, err);
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
out_model:
    xe_cdp_model_clear(&m);
    return rc;
}

int xe_chain_dp(const xe_instance *in, int d, xe_schedule *out, double *cost, xe_err *err)
{
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "chain dp: device %d does not exist (instance has %d)", d, in->ndev);
    xe_chain ch;
    int rc = xe_chain_detect(in->g, &ch, err);
    if (rc) return rc;
    int over = 0;
    rc = dp_once(in, &ch, d, 1, out, cost, &over, err);
    if (over) rc = dp_once(in, &ch, d, 0, out, cost, &over, err); /* without parking */
    xe_chain_clear(&ch);
    return rc;
}
